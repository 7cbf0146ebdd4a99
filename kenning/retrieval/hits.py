"""The record a search returns: one chunk and where it sits in its source."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field


@dataclass
class Hit:
    item_id: int
    document_id: int
    title: str
    snippet: str
    source: str
    namespace: str
    path: str
    section: str
    line_start: int
    line_end: int
    score: float
    legs: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return asdict(self)
