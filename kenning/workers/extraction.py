"""What an extractor hands the graph: entities and typed relations found in one chunk.

Both extractors (the offline one and the Ollama one) produce these records, so the
graph store and the extraction job never know which made them.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from typing import Protocol

_SPACES = re.compile(r"\s+")
_EDGE_PUNCTUATION = " \t\n\"'`.,;:!?()[]{}<>*_#|"


def normalize_name(name: str) -> str:
    """The key two spellings of one entity share: NFKC, case-folded, spaces collapsed.

    Punctuation inside a name is kept (`C++`, `node.js`, `foo_bar`); quotes, brackets
    and sentence punctuation at its edges are not part of it.
    """
    text = unicodedata.normalize("NFKC", name)
    return _SPACES.sub(" ", text).strip(_EDGE_PUNCTUATION).casefold()


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


class Extractor(Protocol):
    """`signature` names the extractor and its recipe; a change re-queues every chunk."""

    signature: str

    async def extract(self, texts: list[str]) -> list[Extraction | ExtractionFailed]: ...

    async def close(self) -> None: ...
