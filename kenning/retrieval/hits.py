"""The record a search returns: one chunk and where it sits in its source."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

import aiosqlite

from kenning.store.lookup import display_path

# Columns every leg selects for a hit, in Hit's field order after item_id.
HIT_COLUMNS = (
    "i.id, d.id, i.title, s.name, coalesce(d.namespace, s.namespace), s.root, d.path, i.section, i.line_start, i.line_end, d.mtime, d.uri"
)
HIT_JOINS = "items i JOIN documents d ON d.id = i.document_id JOIN sources s ON s.id = d.source_id"
EXCERPT_CHARS = 200


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
    modified: float
    score: float = 0.0
    legs: list[str] = field(default_factory=list)
    ranks: dict[str, int] = field(default_factory=dict)

    def to_dict(self) -> dict:
        return asdict(self)


def hit_from_row(row: tuple, snippet: str = "") -> Hit:
    return Hit(
        item_id=row[0],
        document_id=row[1],
        title=row[2],
        snippet=snippet,
        source=row[3],
        namespace=row[4],
        path=display_path(row[5], row[6], row[11]),
        section=row[7],
        line_start=row[8],
        line_end=row[9],
        modified=row[10],
    )


async def load_hits(conn: aiosqlite.Connection, ids: list[int], where: str, params: list[object]) -> dict[int, Hit]:
    """Hits for item ids still present and in scope, with the chunk's opening as snippet."""
    if not ids:
        return {}
    rows = await conn.execute_fetchall(
        f"SELECT {HIT_COLUMNS}, substr(i.content, 1, {EXCERPT_CHARS}) FROM {HIT_JOINS}"
        f" WHERE i.id IN ({', '.join('?' * len(ids))}) AND {where}",
        [*ids, *params],
    )
    return {row[0]: hit_from_row(row[:-1], " ".join(row[-1].split())) for row in rows}
