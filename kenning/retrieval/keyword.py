"""The keyword leg: FTS5 bm25 over title, section and chunk text.

Ranking runs on the FTS table alone and only the best rows are joined to their
documents and sources: joining every match before sorting cost twice the time of the
ranking itself. The scope (source, namespace, sources removed from the config) applies
to that window; when filtering leaves too few hits the window widens, and past a few
rounds one filtered query over every match gives the exact answer. Snippets are made
only for the hits a search finally returns (`snippets`), not for every candidate.
"""

from __future__ import annotations

import aiosqlite

from kenning.retrieval.hits import HIT_COLUMNS, HIT_JOINS, Hit, hit_from_row
from kenning.retrieval.query import fts_expression
from kenning.retrieval.scope import Scope

# Column weights for bm25(): a term in a title or heading says more about a chunk
# than the same term in its body.
BM25 = "bm25(items_fts, 2.0, 1.5, 1.0)"
SNIPPET_TOKENS = 24
HIGHLIGHT = ("**", "**")
WINDOWS = (40, 320, 2560)


async def keyword_search(conn: aiosqlite.Connection, query: str, limit: int, scope: Scope) -> list[Hit]:
    """Best `limit` hits in scope, best first; `score` is bm25 (higher is better)."""
    expression = fts_expression(query)
    if expression is None:
        return []
    where, params = scope.where()
    rows = await _windowed(conn, expression, limit, where, params)
    if rows is None:
        rows = await conn.execute_fetchall(
            f"SELECT {HIT_COLUMNS}, {BM25} AS rank FROM items_fts JOIN {HIT_JOINS}"
            f" WHERE i.id = items_fts.rowid AND items_fts MATCH ? AND {where} ORDER BY rank LIMIT ?",
            [expression, *params, limit],
        )
    hits = []
    for row in rows:
        hit = hit_from_row(row[:-1])
        hit.score = -row[-1]
        hits.append(hit)
    return hits


async def _windowed(
    conn: aiosqlite.Connection, expression: str, limit: int, where: str, params: list[object]
) -> list[tuple] | None:
    """Best `limit` rows in scope from growing rank windows; None if the windows ran out."""
    for window in WINDOWS:
        window = max(window, 4 * limit)
        ranked = dict(
            await conn.execute_fetchall(
                f"SELECT rowid, {BM25} AS rank FROM items_fts WHERE items_fts MATCH ? ORDER BY rank LIMIT ?",
                (expression, window),
            )
        )
        if not ranked:
            return []
        rows = await conn.execute_fetchall(
            f"SELECT {HIT_COLUMNS} FROM {HIT_JOINS} WHERE i.id IN ({', '.join('?' * len(ranked))}) AND {where}",
            [*ranked, *params],
        )
        rows = sorted((row + (ranked[row[0]],) for row in rows), key=lambda row: row[-1])
        if len(rows) >= limit or len(ranked) < window:
            return rows[:limit]
    return None


async def snippets(conn: aiosqlite.Connection, query: str, ids: list[int]) -> dict[int, str]:
    """Highlighted excerpts for the given items, where the query's terms occur in them."""
    expression = fts_expression(query)
    if expression is None or not ids:
        return {}
    rows = await conn.execute_fetchall(
        f"SELECT rowid, snippet(items_fts, 2, ?, ?, '…', {SNIPPET_TOKENS}) FROM items_fts"
        f" WHERE items_fts MATCH ? AND rowid IN ({', '.join('?' * len(ids))})",
        [*HIGHLIGHT, expression, *ids],
    )
    return dict(rows)
