"""Records that cross stages: what readers, extractors, fetchers and embedders hand on.

They live below every stage that makes or reads them (readers make items, workers
make extractions and pages, ingest stores pages, the store writes the graph, retrieval
embeds queries), so no stage imports another to share a type. Nothing here imports
more than the standard library: a parse worker needs its records, not the store.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, Protocol

if TYPE_CHECKING:
    # For the Embedder's annotation alone: a parse worker imports this module for its
    # records and never needs numpy's 0.1-0.2 s of import.
    import numpy as np


@dataclass(frozen=True)
class NewItem:
    """One chunk as a reader made it, before the store gives it an id."""

    title: str
    section: str
    content: str
    line_start: int
    line_end: int
    # Set only when dated lines inside the chunk say more than its document's date.
    date: str | None = None
    # The earliest of those dated lines, where `date` is the latest: a search until a day
    # among them finds the chunk (store/scope.py).
    date_first: str | None = None
    # Its CJK runs cut for the CJK index (kenning/text/cjk.py); empty for most text.
    cjk: str = ""


@dataclass(frozen=True)
class DocumentMeta:
    """What a state row records about the text it last stored."""

    title: str
    format: str
    mtime: float
    size: int
    content_hash: str
    text_hash: str
    tags: str = "[]"
    namespace: str | None = None
    etag: str | None = None
    last_modified: str | None = None
    # The date the document speaks from (an ISO prefix) and where it was read.
    date: str | None = None
    date_source: str | None = None
    # Where the period the date names ends when it is wider than the date shows (a
    # quarter's last month, kept as its first; an ISO week's Sunday, kept as its Monday),
    # for `since`; None otherwise.
    date_end: str | None = None
    # How the text was read and chunked (ingest/convert.py `reading_of`): a file stored
    # under another reading is read again, agent text prepared again.
    reading: str | None = None


@dataclass(frozen=True)
class Entity:
    name: str
    kind: str = "concept"
    aliases: tuple[str, ...] = ()


@dataclass(frozen=True)
class Relation:
    source: str
    target: str
    kind: str = "related_to"


@dataclass(frozen=True)
class Extraction:
    """Entities and typed relations found in one chunk, whichever extractor found them."""

    entities: tuple[Entity, ...] = ()
    relations: tuple[Relation, ...] = ()


@dataclass(frozen=True)
class ExtractionFailed:
    """One chunk's extraction went wrong; the chunk stays indexed and is retried later.

    `details["unavailable"]` marks a backend that could not serve at all (down, model
    missing): the job then backs off as a whole instead of marking every chunk failed.
    """

    reason: str
    retryable: bool = True
    details: dict = field(default_factory=dict)


@dataclass(frozen=True)
class FetchedPage:
    """A fetched page as the server sent it; `url` is where the redirects ended, for
    citations. Its bytes become text in a parse worker (kenning.ingest.pages), never in
    the daemon: `charset` is the one the Content-Type header named, if any."""

    url: str
    requested_url: str
    body: bytes
    charset: str | None
    format: Literal["html", "text", "markdown"]
    etag: str | None
    last_modified: str | None


class Embedder(Protocol):
    """A backend that turns texts into L2-normalised float32 rows.

    `signature` names everything that changes a vector; a stored vector with another
    signature is stale. Calls block and run in worker threads. `dim` is the length of
    the vectors it makes, once known; `on_dimension`, when set, is called (from the
    calling thread) with each length it learns, a first one included.
    """

    signature: str
    batch_size: int
    dim: int | None
    on_dimension: Callable[[int], None] | None

    def embed(self, texts: list[str]) -> np.ndarray: ...

    def dimension(self) -> int: ...

    def check(self) -> None: ...

    def close(self) -> None: ...
