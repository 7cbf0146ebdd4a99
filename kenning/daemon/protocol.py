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

# Large enough for an agent's document (MAX_TEXT_CHARS) in one request.
MAX_LINE_BYTES = 16 << 20
MAX_TEXT_CHARS = 10_000_000


class _Params(BaseModel):
    model_config = ConfigDict(extra="forbid")


class NoParams(_Params):
    pass


class SearchParams(_Params):
    query: Annotated[str, Field(min_length=1, max_length=4000)]
    limit: Annotated[int, Field(ge=1, le=200)] = 10
    source: str | None = None
    namespace: str | None = None
    legs: tuple[Literal["keyword", "vector", "graph"], ...] = ("keyword", "vector", "graph")


class ScanParams(_Params):
    name: str
    wait: bool = False


class AddTextParams(_Params):
    title: Annotated[str, Field(min_length=1, max_length=500)]
    text: Annotated[str, Field(min_length=1, max_length=MAX_TEXT_CHARS)]
    source_uri: Annotated[str, Field(min_length=1, max_length=4000)]
    tags: Annotated[tuple[Annotated[str, Field(max_length=200)], ...], Field(max_length=64)] = ()
    namespace: Annotated[str, Field(min_length=1, max_length=64)] | None = None


class UrlParams(_Params):
    url: Annotated[str, Field(min_length=1, max_length=4000)]


class EntitiesParams(_Params):
    query: Annotated[str, Field(min_length=1, max_length=500)]
    limit: Annotated[int, Field(ge=1, le=100)] = 10


class SourceNameParams(_Params):
    name: str


class DocumentParams(_Params):
    item_id: int | None = None
    document_id: int | None = None

    @model_validator(mode="after")
    def _exactly_one(self) -> "DocumentParams":
        if (self.item_id is None) == (self.document_id is None):
            raise ValueError("give exactly one of item_id or document_id")
        return self


class ReadParams(_Params):
    document_id: int | None = None
    path: Annotated[str, Field(min_length=1, max_length=4096)] | None = None
    uri: Annotated[str, Field(min_length=1, max_length=4000)] | None = None
    line_start: Annotated[int, Field(ge=1)] = 1
    line_end: Annotated[int, Field(ge=1)] | None = None

    @model_validator(mode="after")
    def _one_document(self) -> "ReadParams":
        if sum(value is not None for value in (self.document_id, self.path, self.uri)) != 1:
            raise ValueError("give exactly one of document_id, path or uri")
        if self.path is not None and not self.path.startswith("/"):
            raise ValueError("path must be absolute (the daemon does not know the caller's directory)")
        if self.line_end is not None and self.line_end < self.line_start:
            raise ValueError("line_end must not be before line_start")
        return self


def error_response(request_id: Any, code: int, message: str) -> dict:
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}


def result_response(request_id: Any, result: Any) -> dict:
    return {"jsonrpc": "2.0", "id": request_id, "result": result}
