"""The keyword leg: FTS5 bm25 over title, section and chunk text.

Ranking runs on the FTS table alone and only the best rows are joined to their
documents and sources: joining every match before sorting cost twice the time of the
ranking itself. Scope filters (source, namespace, sources removed from the config)
apply to that window; when filtering leaves too few hits the window widens, and past a
few rounds one filtered query over every match gives the exact answer. Snippets are
made last, for the hits actually returned.
"""

from __future__ import annotations

import os

import aiosqlite

from kenning.retrieval.hits import Hit
from kenning.retrieval.query import fts_expression
from kenning.store.database import Database

# Column weights for bm25(): a term in a title or heading says more about a chunk
# than the same term in its body.
BM25 = "bm25(items_fts, 2.0, 1.5, 1.0)"
SNIPPET_TOKENS = 24
HIGHLIGHT = ("**", "**")
WINDOWS = (40, 320, 2560)

_COLUMNS = "i.id, d.id, i.title, s.name, s.namespace, s.root, d.path, i.section, i.line_start, i.line_end"
_JOINS = "items i JOIN documents d ON d.id = i.document_id JOIN sources s ON s.id = d.source_id"


async def keyword_search(
    db: Database, query: str, limit: int, source: str | None = None, namespace: str | None = None
) -> list[Hit]:
    expression = fts_expression(query)
    if expression is None:
        return []
    scope, scope_params = ["s.active = 1"], []
    if source is not None:
        scope.append("s.name = ?")
        scope_params.append(source)
    if namespace is not None:
        scope.append("s.namespace = ?")
        scope_params.append(namespace)
    where = " AND ".join(scope)

    async with db.reader() as conn:
        rows = await _windowed(conn, expression, limit, where, scope_params)
        if rows is None:
            cursor = await conn.execute(
                f"SELECT {_COLUMNS}, {BM25} AS rank FROM items_fts JOIN {_JOINS}"
                f" WHERE i.id = items_fts.rowid AND items_fts MATCH ? AND {where} ORDER BY rank LIMIT ?",
                [expression, *scope_params, limit],
            )
            rows = await cursor.fetchall()
        snippets = await _snippets(conn, expression, [row[0] for row in rows])
    return [
        Hit(
            item_id=row[0],
            document_id=row[1],
            title=row[2],
            snippet=snippets.get(row[0], ""),
            source=row[3],
            namespace=row[4],
            path=os.path.join(row[5], row[6]),
            section=row[7],
            line_start=row[8],
            line_end=row[9],
            score=round(-row[10], 6),
            legs=["keyword"],
        )
        for row in rows
    ]


async def _windowed(
    conn: aiosqlite.Connection, expression: str, limit: int, where: str, scope_params: list[object]
) -> list[tuple] | None:
    """Best `limit` rows in scope from growing rank windows; None if the windows ran out."""
    for window in WINDOWS:
        window = max(window, 4 * limit)
        cursor = await conn.execute(
            f"SELECT rowid, {BM25} AS rank FROM items_fts WHERE items_fts MATCH ? ORDER BY rank LIMIT ?",
            (expression, window),
        )
        ranked = dict(await cursor.fetchall())
        if not ranked:
            return []
        cursor = await conn.execute(
            f"SELECT {_COLUMNS} FROM {_JOINS} WHERE i.id IN ({', '.join('?' * len(ranked))}) AND {where}",
            [*ranked, *scope_params],
        )
        rows = sorted((row + (ranked[row[0]],) for row in await cursor.fetchall()), key=lambda row: row[-1])
        if len(rows) >= limit or len(ranked) < window:
            return rows[:limit]
    return None


async def _snippets(conn: aiosqlite.Connection, expression: str, ids: list[int]) -> dict[int, str]:
    if not ids:
        return {}
    cursor = await conn.execute(
        f"SELECT rowid, snippet(items_fts, 2, ?, ?, '…', {SNIPPET_TOKENS}) FROM items_fts"
        f" WHERE items_fts MATCH ? AND rowid IN ({', '.join('?' * len(ids))})",
        [*HIGHLIGHT, expression, *ids],
    )
    return dict(await cursor.fetchall())
