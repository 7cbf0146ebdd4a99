"""Records that cross stages: what extractors, fetchers and embedders hand on.

They live below every stage that makes or reads them (workers make extractions and
pages, ingest stores pages, the store writes the graph, retrieval embeds queries), so no
stage imports another to share a type.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal, Protocol

import numpy as np


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
