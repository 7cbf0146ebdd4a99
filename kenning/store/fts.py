"""The keyword indexes' queries: bm25 ranking over title, section and chunk text (and over
the CJK index's bigrams), highlighted snippets, and what the truth signals ask of the
index about a query's terms.

Ranking runs on the FTS table alone and only the best rows are joined to their
documents and sources: joining every match before sorting cost twice the time of the
ranking itself. The scope applies to that window; when filtering leaves too few hits
the window widens, and past a few rounds one filtered query over every match gives the
exact answer. Expressions come from retrieval/query.py, which quotes every token.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

from kenning.store import until_commit
from kenning.store.database import Database, on_thread
from kenning.store.scope import Scope
from kenning.text import cjk

# Column weights for bm25(): a term in a title or heading says more about a chunk
# than the same term in its body.
BM25 = "bm25(items_fts, 2.0, 1.5, 1.0)"
SNIPPET_TOKENS = 24
HIGHLIGHT = ("**", "**")
WINDOWS = (40, 320, 2560)
_IN_SCOPE = "items i JOIN documents d ON d.id = i.document_id JOIN sources s ON s.id = d.source_id"
# The tokenizers the migrations gave the two indexes (m001, m006).
TOKENIZER = "porter unicode61 remove_diacritics 2"
CJK_TOKENIZER = "unicode61"
# The main index, and the CJK index (one column of bigrams; see kenning/text/cjk.py).
INDEXES = {"main": ("items_fts", BM25), "cjk": ("items_cjk", "bm25(items_cjk)")}
# Terms and phrases whose chunk counts are kept until the next commit.
COUNTED_TERMS = 5_000


async def rank(db: Database, expression: str, limit: int, scope: Scope, index: str = "main") -> list[tuple[int, float]]:
    """Best `limit` (item id, score) in scope, best first; the score is -bm25 (higher is better)."""
    table, bm25 = INDEXES[index]
    where, params = scope.where()
    async with db.reader() as conn:
        for window in WINDOWS:
            window = max(window, 4 * limit)
            ranked = dict(
                await conn.execute_fetchall(
                    f"SELECT rowid, {bm25} AS rank FROM {table} WHERE {table} MATCH ? ORDER BY rank LIMIT ?",
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
            f"SELECT i.id, {bm25} AS rank FROM {table} JOIN {_IN_SCOPE}"
            f" WHERE i.id = {table}.rowid AND {table} MATCH ? AND {where} ORDER BY rank LIMIT ?",
            [expression, *params, limit],
        )
    return [(item_id, -score) for item_id, score in rows]


@dataclass(frozen=True)
class Probe:
    """One thing to ask an index about: an FTS5 expression, and which index (see INDEXES)."""

    expression: str
    index: str = "main"


@dataclass(frozen=True)
class TermCounts:
    """How many chunks the library holds, and how many match each probe."""

    chunks: int
    matching: list[int]


async def term_counts(db: Database, probes: list[Probe]) -> TermCounts:
    """Each count walks that term's list in the index, as bm25 itself does to weigh it, so
    what was counted is kept until the next commit (store/until_commit.py): queries keep
    asking about the same words. What is not kept is read in one statement."""

    async def count(keys: list[Probe | None]) -> dict[Probe | None, int]:
        probed = [key for key in keys if key is not None]
        counts = "".join(
            f", (SELECT count(*) FROM {INDEXES[p.index][0]} WHERE {INDEXES[p.index][0]} MATCH ?)" for p in probed
        )
        [row] = await db.read(f"SELECT (SELECT count(*) FROM items){counts}", [p.expression for p in probed])
        return {None: row[0], **dict(zip(probed, row[1:]))}

    # None stands for the library's chunk count, which every idf needs.
    found = await until_commit.cache(db, "term counts", COUNTED_TERMS).get([None, *probes], count)
    return TermCounts(found[None], [found[probe] for probe in probes])


def holders_among(chunks: dict[int, tuple[str, str, str]], probes: list[Probe]) -> list[set[int]]:
    """For each probe, which of the given chunks (title, section, content) match it.

    Asked of the library's index, a term's whole list is walked for every probe however
    few chunks are asked about (a common word's list is most of the index); asked of a
    scratch index in memory holding only these chunks, with the same tokenizers, the
    answer is the same and costs what indexing a few kilobytes does. Blocking: call it in
    a worker thread.
    """
    found: list[set[int]] = [set() for _ in probes]
    if not probes or not chunks:
        return found
    conn = sqlite3.connect(":memory:")
    try:
        conn.execute(f"CREATE VIRTUAL TABLE items_fts USING fts5 (title, section, content, tokenize = '{TOKENIZER}')")
        conn.execute(f"CREATE VIRTUAL TABLE items_cjk USING fts5 (text, tokenize = '{CJK_TOKENIZER}')")
        conn.executemany("INSERT INTO items_fts (rowid, title, section, content) VALUES (?, ?, ?, ?)",
                         [(item_id, *fields) for item_id, fields in chunks.items()])  # fmt: skip
        conn.executemany(
            "INSERT INTO items_cjk (rowid, text) VALUES (?, ?)",
            [(item_id, text) for item_id, fields in chunks.items() if (text := cjk.index_text(*fields))],
        )
        for n, probe in enumerate(probes):
            table = INDEXES[probe.index][0]
            rows = conn.execute(f"SELECT rowid FROM {table} WHERE {table} MATCH ?", (probe.expression,))
            found[n].update(row[0] for row in rows)
    finally:
        conn.close()
    return found


async def snippets(db: Database, expression: str, ids: list[int]) -> dict[int, str]:
    """Highlighted excerpts for the given items, where the expression's terms occur in them.

    The excerpts are made in a small temporary FTS5 table holding only these chunks, with
    the index's own tokenizer, so they are exactly what `snippet()` on the index gives.
    On the index itself every term's whole posting list would be read again for a
    handful of rows: for a sentence-long query that cost as much as ranking it. The four
    statements run in one trip to the reader's thread.
    """
    if not ids:
        return {}
    async with db.reader() as conn:
        return await on_thread(conn, _excerpts, expression, ids)


def _excerpts(conn: sqlite3.Connection, expression: str, ids: list[int]) -> dict[int, str]:
    conn.execute(
        f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.excerpts USING fts5 (title, section, content, tokenize = '{TOKENIZER}')"
    )
    try:
        conn.execute(
            "INSERT INTO temp.excerpts (rowid, title, section, content)"
            f" SELECT id, title, section, content FROM main.items WHERE id IN ({', '.join('?' * len(ids))})",
            ids,
        )
        rows = conn.execute(
            f"SELECT rowid, snippet(excerpts, 2, ?, ?, '…', {SNIPPET_TOKENS}) FROM temp.excerpts WHERE excerpts MATCH ?",
            [*HIGHLIGHT, expression],
        ).fetchall()
    finally:
        conn.execute("DELETE FROM temp.excerpts")
    return dict(rows)
