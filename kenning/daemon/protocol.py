"""The socket protocol: JSON-RPC 2.0, one JSON object per line, each way.

Params are pydantic models because this is an edge: a client's typo comes back as an
"invalid params" error naming the field, and the daemon goes on serving.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
# Application errors, in the range JSON-RPC leaves to servers.
NOT_FOUND = -32001
CONFIG_ERROR = -32002

MAX_LINE_BYTES = 1 << 20


class _Params(BaseModel):
    model_config = ConfigDict(extra="forbid")


class NoParams(_Params):
    pass


class SearchParams(_Params):
    query: Annotated[str, Field(min_length=1, max_length=4000)]
    limit: Annotated[int, Field(ge=1, le=200)] = 10
    source: str | None = None
    namespace: str | None = None
    legs: tuple[Literal["keyword", "vector"], ...] = ("keyword", "vector")


class ScanParams(_Params):
    name: str
    wait: bool = False


class DocumentParams(_Params):
    item_id: int | None = None
    document_id: int | None = None

    @model_validator(mode="after")
    def _exactly_one(self) -> "DocumentParams":
        if (self.item_id is None) == (self.document_id is None):
            raise ValueError("give exactly one of item_id or document_id")
        return self


def error_response(request_id: Any, code: int, message: str) -> dict:
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}


def result_response(request_id: Any, result: Any) -> dict:
    return {"jsonrpc": "2.0", "id": request_id, "result": result}
