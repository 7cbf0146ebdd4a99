"""The socket protocol: JSON-RPC 2.0, one JSON object per line, each way.

Params are pydantic models because this is an edge: a client's typo comes back as an
"invalid params" error naming the field, and the daemon goes on serving. They are strict:
JSON has its own types, so "3" or true where a number belongs, or "yes" where a bool
does, is a mistake to name rather than a value to guess at. Every string a client names
is bounded, so an error that echoes one stays short.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, TypeVar

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, model_validator

from kenning.text import dates

from kenning.api import CapsuleKind, DocumentKind
from kenning.errors import error_text

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
# Application errors, in the range JSON-RPC leaves to servers.
NOT_FOUND = -32001
CONFIG_ERROR = -32002
BUSY = -32003

MAX_TEXT_CHARS = 10_000_000
# Large enough for an agent's document in one request: MAX_TEXT_CHARS characters of
# any script, at up to 4 bytes each in UTF-8, and the request around them.
MAX_LINE_BYTES = 48 << 20
# What all connections' lines may hold together, past each one's first MiB, from their
# first byte until their request is handled: a few such documents arriving or waiting
# their turn at once, and no more than that (and the oldest line's overdraw, at most one
# line) held however many connections send one (kenning/daemon/framing.py, LineBudget).
LINE_BUDGET_BYTES = 256 << 20
# Requests over LARGE_REQUEST_BYTES (an agent's long document, most of all) are handled
# LARGE_REQUESTS_AT_ONCE at a time; the rest wait their turn. Decoding, redacting and
# chunking one costs several times its size: thirty 9 MB documents added at once took
# the daemon to 957 MB.
LARGE_REQUEST_BYTES = 1 << 20
LARGE_REQUESTS_AT_ONCE = 2
# A connection with no request under way is closed after IDLE_SECONDS; a request line
# begun and not finished within LINE_SECONDS is dropped with an error and the
# connection closed. Defaults of [daemon] socket_idle_timeout / socket_line_timeout.
IDLE_SECONDS = 60.0
LINE_SECONDS = 30.0
# The kernel's queue of connections not yet accepted, and how many asyncio accepts in
# one turn of the loop (each accept sets up a transport and a task: a turn of 100 held
# the loop over 100 ms on a busy 2-core machine).
LISTEN_BACKLOG = 4096
ACCEPTS_PER_TURN = 32
# Connections open at once; past it a new one gets BUSY and is closed. Each holds a file
# descriptor, and 20,000 idle ones took the daemon past its limit: it could open no
# file, no database page and no log line ("Too many open files").
MAX_CONNECTIONS = 512
# While a request whose client asked for `progress` is under way, the stage it is at is
# said again this often: a client waiting its turn behind a burst of fetches hears the
# daemon is alive and the page still queued, and a daemon that falls silent is stuck.
PROGRESS_SECONDS = 5.0


class _Params(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


T = TypeVar("T")
# A JSON array, kept as a tuple. Strict validation takes only a Python tuple there, and
# JSON decodes to lists; the items stay strict.
Array = Annotated[tuple[T, ...], Field(strict=False)]
# Source names are config names (SOURCE_NAME_PATTERN, up to 64 characters) or reserved ones.
SourceName = Annotated[str, Field(min_length=1, max_length=64)]
# The config does not bound namespaces (agents' are up to 64 characters): 200 is past any real one.
Namespace = Annotated[str, Field(min_length=1, max_length=200)]
Leg = Literal["keyword", "vector", "graph"]


class NoParams(_Params):
    pass


def _iso_date(value: str | None) -> str | None:
    return None if value is None else dates.parse_iso(value)


def _some_legs(legs: tuple[Leg, ...]) -> tuple[Leg, ...]:
    # An empty list ran no leg and found nothing, silently; leaving `legs` out runs all three.
    if not legs:
        raise ValueError("name at least one of keyword, vector and graph, or leave legs out for all three")
    return legs


IsoDate = Annotated[str | None, AfterValidator(_iso_date)]


def _distinct(kinds: tuple[str, ...]) -> tuple[str, ...]:
    # Each kind named became one SQL placeholder: "file" 300,000 times ran past SQLite's
    # limit and came back as an internal error. A kind named twice is named once.
    return tuple(dict.fromkeys(kinds))


Kinds = Annotated[Array[DocumentKind], AfterValidator(_distinct)]


def _no_nul(path: str) -> str:
    # The OS takes no path holding one: resolving it raised ValueError, answered as an
    # internal error with a traceback in the log.
    if "\x00" in path:
        raise ValueError("a path cannot hold a NUL character")
    return path


FilePath = Annotated[str, Field(min_length=1), AfterValidator(_no_nul)]


class SearchParams(_Params):
    query: Annotated[str, Field(min_length=1, max_length=4000)]
    limit: Annotated[int, Field(ge=1, le=200)] = 10
    source: SourceName | None = None
    namespace: Namespace | None = None
    legs: Annotated[Array[Leg], AfterValidator(_some_legs)] = ("keyword", "vector", "graph")
    kind: Kinds = ()
    # Only chunks whose date overlaps this range (YYYY, YYYY-MM or YYYY-MM-DD, inclusive).
    since: IsoDate = None
    until: IsoDate = None

    @model_validator(mode="after")
    def _ordered(self) -> "SearchParams":
        if self.since is not None and self.until is not None and self.until[: len(self.since)] < self.since[: len(self.until)]:
            raise ValueError(f"until {self.until} is before since {self.since}")
        return self


class ScanParams(_Params):
    name: SourceName
    wait: bool = False


class AddTextParams(_Params):
    title: Annotated[str, Field(min_length=1, max_length=500)]
    text: Annotated[str, Field(min_length=1, max_length=MAX_TEXT_CHARS)]
    source_uri: Annotated[str, Field(min_length=1, max_length=4000)]
    tags: Annotated[Array[Annotated[str, Field(max_length=200)]], Field(max_length=64)] = ()
    namespace: Annotated[str, Field(min_length=1, max_length=64)] | None = None
    # The date the text speaks from, when the agent knows it (YYYY, YYYY-MM or YYYY-MM-DD).
    date: IsoDate = None
    # Documents this one replaces, by the uri they were added under, a page URL or a file path.
    supersedes: Annotated[Array[Annotated[str, Field(min_length=1, max_length=4000)]], Field(max_length=32)] = ()


class UrlParams(_Params):
    url: Annotated[str, Field(min_length=1, max_length=4000)]
    # Send `progress` notifications on the connection until the answer (docs/protocol.md).
    progress: bool = False
    # Stop working on the page if the connection closes before the answer (an MCP host
    # cancelling its call); without it a client that gives up leaves the page to come.
    cancel_on_close: bool = False


class UriParams(_Params):
    # The uri an agent document was added under, or the URL a page was fetched from.
    uri: Annotated[str, Field(min_length=1, max_length=4000)]


class EntitiesParams(_Params):
    query: Annotated[str, Field(min_length=1, max_length=500)]
    limit: Annotated[int, Field(ge=1, le=100)] = 10


class SourceNameParams(_Params):
    name: SourceName


class DocumentParams(_Params):
    item_id: int | None = None
    document_id: int | None = None
    uri: Annotated[str, Field(min_length=1, max_length=4000)] | None = None
    path: Annotated[FilePath, Field(max_length=4000)] | None = None
    offset: Annotated[int, Field(ge=0)] | None = None
    limit: Annotated[int, Field(ge=1, le=1000)] | None = None
    line_start: Annotated[int, Field(ge=1)] | None = None
    line_end: Annotated[int, Field(ge=1)] | None = None
    # Cite the copy this source holds: an item id names the one stored text, not a file.
    source: SourceName | None = None
    # An earlier page's `version`: refused if the document changed since.
    version: Annotated[str, Field(min_length=1, max_length=64)] | None = None

    @model_validator(mode="after")
    def _exactly_one(self) -> "DocumentParams":
        named = [self.item_id, self.document_id, self.uri, self.path]
        if sum(value is not None for value in named) != 1:
            raise ValueError("give exactly one of item_id, document_id, uri or path")
        if self.source is not None and self.path is not None:
            raise ValueError("a path names its own copy: give source with item_id, document_id or uri, not path")
        paged = self.offset is not None or self.limit is not None
        if paged and self.item_id is not None:
            raise ValueError("offset and limit page a document: give document_id, uri or path, not item_id")
        lines = self.line_start is not None or self.line_end is not None
        if paged and lines:
            raise ValueError("give offset/limit (a page of chunks) or line_start/line_end (a range of lines), not both")
        if self.version is not None and self.item_id is not None and not lines:
            raise ValueError("version is a document's: give it with a page or a range of lines, not one item")
        return self


class ReadParams(_Params):
    document_id: int | None = None
    path: Annotated[FilePath, Field(max_length=4096)] | None = None
    uri: Annotated[str, Field(min_length=1, max_length=4000)] | None = None
    line_start: Annotated[int, Field(ge=1)] = 1
    line_end: Annotated[int, Field(ge=1)] | None = None
    source: SourceName | None = None  # as in DocumentParams

    @model_validator(mode="after")
    def _one_document(self) -> "ReadParams":
        if sum(value is not None for value in (self.document_id, self.path, self.uri)) != 1:
            raise ValueError("give exactly one of document_id, path or uri")
        if self.source is not None and self.path is not None:
            raise ValueError("a path names its own copy: give source with document_id or uri, not path")
        if self.path is not None and not self.path.startswith("/"):
            raise ValueError("path must be absolute (the daemon does not know the caller's directory)")
        if self.line_end is not None and self.line_end < self.line_start:
            raise ValueError("line_end must not be before line_start")
        return self


# -- agent records ------------------------------------------------------------------------

Scope = Annotated[str, Field(min_length=1, max_length=64)]
Tags = Annotated[Array[Annotated[str, Field(max_length=64)]], Field(max_length=32)]
Handle = Annotated[str, Field(min_length=1, max_length=40)]


class MemoryAddParams(_Params):
    title: Annotated[str, Field(min_length=1, max_length=200)]
    body: Annotated[str, Field(min_length=1, max_length=20_000)]
    kind: CapsuleKind = "fact"
    scope: Scope = "default"
    tags: Tags = ()
    confidence: Annotated[float, Field(ge=0, le=1)] = 1.0
    source: Annotated[str, Field(max_length=500)] | None = None
    supersedes: Handle | None = None
    force: bool = False


class MemoryRecallParams(_Params):
    query: Annotated[str, Field(min_length=1, max_length=4000)]
    limit: Annotated[int, Field(ge=1, le=50)] = 5
    scope: Scope | None = None
    kind: Array[CapsuleKind] = ()


class CapsuleParams(_Params):
    id: Handle


class PageParams(_Params):
    """A page of a list others may write to while it is walked: `cursor` (a page's
    `next_cursor`) continues strictly after that page's last entry; `offset` counts
    entries from the top, so it skips or repeats them when the list changes between pages
    (kept for clients that already send it)."""

    limit: Annotated[int, Field(ge=1, le=500)] = 50
    offset: Annotated[int, Field(ge=0)] = 0
    cursor: Annotated[str, Field(min_length=1, max_length=1000)] | None = None

    @model_validator(mode="after")
    def _one_start(self) -> "PageParams":
        if self.cursor is not None and "offset" in self.model_fields_set:
            raise ValueError("give cursor (continue after a page) or offset (count from the top), not both")
        return self


class MemoryListParams(PageParams):
    scope: Scope | None = None
    kind: CapsuleKind | None = None
    superseded: bool = False


class MemoryCurateParams(_Params):
    scope: Scope | None = None
    limit: Annotated[int, Field(ge=1, le=500)] = 50


class ArchiveAddParams(_Params):
    text: Annotated[str, Field(min_length=1, max_length=MAX_TEXT_CHARS)]
    title: Annotated[str, Field(min_length=1, max_length=500)] | None = None
    tags: Tags = ()


class ArchiveRecallParams(_Params):
    handle: Handle
    offset: Annotated[int, Field(ge=0)] = 0
    limit: Annotated[int, Field(ge=1, le=MAX_TEXT_CHARS)] = 20_000
    # An earlier page's `version`: refused if the archive holds another text since.
    version: Annotated[str, Field(min_length=1, max_length=64)] | None = None


LedgerFields = Annotated[
    dict[Annotated[str, Field(min_length=1, max_length=64)], str | int | float], Field(min_length=1, max_length=32)
]


class LedgerAddParams(_Params):
    section: Annotated[str, Field(min_length=1, max_length=40)]
    fields: LedgerFields
    owner: Annotated[str, Field(min_length=1, max_length=100)] = "agent"
    evidence: Annotated[Array[Annotated[str, Field(min_length=1, max_length=300)]], Field(max_length=20)] = ()


class LedgerRemoveParams(_Params):
    id: Handle | None = None
    section: Annotated[str, Field(min_length=1, max_length=40)] | None = None
    fields: LedgerFields | None = None

    @model_validator(mode="after")
    def _one_way(self) -> "LedgerRemoveParams":
        if (self.id is None) == (self.section is None or self.fields is None):
            raise ValueError("give an entry id, or a section and the entry's identity fields")
        return self


class LedgerRenderParams(_Params):
    budget: Annotated[int, Field(ge=200, le=1_000_000)] | None = None
    # Absent or empty is every section, as an empty `kind` is every kind: agents send
    # `[]` for a filter they leave open, and were refused here alone.
    sections: Array[Annotated[str, Field(max_length=40)]] | None = None


class LedgerListParams(_Params):
    section: Annotated[str, Field(min_length=1, max_length=40)] | None = None


class ContextPackParams(_Params):
    task: Annotated[str, Field(min_length=1, max_length=4000)]
    budget: Annotated[int, Field(ge=500, le=2_000_000)] = 16_000
    source: SourceName | None = None
    namespace: Namespace | None = None
    kind: Kinds = ()


def error_response(request_id: Any, code: int, message: str) -> dict:
    """Every error the socket answers, cut here: the params are bounded, but a message
    may quote what no param holds (a megabyte-long source name in the config that
    `reload` read, a value a bug choked on), and it went to the client whole."""
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": error_text(message)}}


def result_response(request_id: Any, result: Any) -> dict:
    return {"jsonrpc": "2.0", "id": request_id, "result": result}


def progress_notification(request_id: Any, stage: str) -> dict:
    return {"jsonrpc": "2.0", "method": "progress", "params": {"id": request_id, "stage": stage}}
