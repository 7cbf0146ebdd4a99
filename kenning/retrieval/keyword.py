"""The keyword leg: FTS5 bm25 over title, section and chunk text."""

from __future__ import annotations

import os

from kenning.retrieval.hits import Hit
from kenning.retrieval.query import fts_expression
from kenning.store.database import Database

# Column weights for bm25(): a term in a title or heading says more about a chunk
# than the same term in its body.
TITLE_WEIGHT, SECTION_WEIGHT, CONTENT_WEIGHT = 2.0, 1.5, 1.0
SNIPPET_TOKENS = 24
HIGHLIGHT = ("**", "**")


async def keyword_search(
    db: Database, query: str, limit: int, source: str | None = None, namespace: str | None = None
) -> list[Hit]:
    expression = fts_expression(query)
    if expression is None:
        return []
    where = ["items_fts MATCH ?", "s.active = 1"]
    params: list[object] = [expression]
    if source is not None:
        where.append("s.name = ?")
        params.append(source)
    if namespace is not None:
        where.append("s.namespace = ?")
        params.append(namespace)
    params.append(limit)
    sql = f"""
        SELECT i.id, d.id, i.title,
               snippet(items_fts, 2, ?, ?, '…', {SNIPPET_TOKENS}),
               s.name, s.namespace, s.root, d.path, i.section, i.line_start, i.line_end,
               bm25(items_fts, {TITLE_WEIGHT}, {SECTION_WEIGHT}, {CONTENT_WEIGHT}) AS rank
        FROM items_fts
        JOIN items i ON i.id = items_fts.rowid
        JOIN documents d ON d.id = i.document_id
        JOIN sources s ON s.id = d.source_id
        WHERE {" AND ".join(where)}
        ORDER BY rank
        LIMIT ?
    """
    async with db.reader() as conn:
        cursor = await conn.execute(sql, [*HIGHLIGHT, *params])
        rows = await cursor.fetchall()
    return [
        Hit(
            item_id=row[0],
            document_id=row[1],
            title=row[2],
            snippet=row[3],
            source=row[4],
            namespace=row[5],
            path=os.path.join(row[6], row[7]),
            section=row[8],
            line_start=row[9],
            line_end=row[10],
            score=round(-row[11], 6),
            legs=["keyword"],
        )
        for row in rows
    ]
