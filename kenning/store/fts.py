"""The keyword index's queries: bm25 ranking over title, section and chunk text, and
highlighted snippets.

Ranking runs on the FTS table alone and only the best rows are joined to their
documents and sources: joining every match before sorting cost twice the time of the
ranking itself. The scope applies to that window; when filtering leaves too few hits
the window widens, and past a few rounds one filtered query over every match gives the
exact answer. Expressions come from retrieval/query.py, which quotes every token.
"""

from __future__ import annotations

from kenning.store.database import Database
from kenning.store.scope import Scope

# Column weights for bm25(): a term in a title or heading says more about a chunk
# than the same term in its body.
BM25 = "bm25(items_fts, 2.0, 1.5, 1.0)"
SNIPPET_TOKENS = 24
HIGHLIGHT = ("**", "**")
WINDOWS = (40, 320, 2560)
# The index's tokenizer (store/migrations.py, m001), for the excerpt table to match it.
TOKENIZER = "porter unicode61 remove_diacritics 2"
_IN_SCOPE = "items i JOIN documents d ON d.id = i.document_id JOIN sources s ON s.id = d.source_id"


async def rank(db: Database, expression: str, limit: int, scope: Scope) -> list[tuple[int, float]]:
    """Best `limit` (item id, score) in scope, best first; the score is -bm25 (higher is better)."""
    where, params = scope.where()
    async with db.reader() as conn:
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
                f"SELECT i.id FROM {_IN_SCOPE} WHERE i.id IN ({', '.join('?' * len(ranked))}) AND {where}",
                [*ranked, *params],
            )
            kept = sorted((ranked[item_id], item_id) for (item_id,) in rows)
            if len(kept) >= limit or len(ranked) < window:
                return [(item_id, -score) for score, item_id in kept[:limit]]
        rows = await conn.execute_fetchall(
            f"SELECT i.id, {BM25} AS rank FROM items_fts JOIN {_IN_SCOPE}"
            f" WHERE i.id = items_fts.rowid AND items_fts MATCH ? AND {where} ORDER BY rank LIMIT ?",
            [expression, *params, limit],
        )
    return [(item_id, -score) for item_id, score in rows]


async def snippets(db: Database, expression: str, ids: list[int]) -> dict[int, str]:
    """Highlighted excerpts for the given items, where the expression's terms occur in them.

    The excerpts are made in a small temporary FTS5 table holding only these chunks, with
    the index's own tokenizer, so they are exactly what `snippet()` on the index gives.
    On the index itself every term's whole posting list would be read again for a
    handful of rows: for a sentence-long query that cost as much as ranking it.
    """
    if not ids:
        return {}
    marks = ", ".join("?" * len(ids))
    async with db.reader() as conn:
        await conn.execute(
            "CREATE VIRTUAL TABLE IF NOT EXISTS temp.excerpts USING fts5"
            f" (title, section, content, tokenize = '{TOKENIZER}')"
        )
        try:
            await conn.execute(
                "INSERT INTO temp.excerpts (rowid, title, section, content)"
                f" SELECT id, title, section, content FROM main.items WHERE id IN ({marks})",
                ids,
            )
            rows = await conn.execute_fetchall(
                f"SELECT rowid, snippet(excerpts, 2, ?, ?, '…', {SNIPPET_TOKENS}) FROM temp.excerpts"
                " WHERE excerpts MATCH ?",
                [*HIGHLIGHT, expression],
            )
        finally:
            await conn.execute("DELETE FROM temp.excerpts")
    return dict(rows)
