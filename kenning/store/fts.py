"""The keyword indexes' queries: bm25 ranking over title, section and chunk text (and over
the CJK index's bigrams), and how many chunks hold each of a query's terms. What the
best hits hold, and their excerpts, are read from a scratch index of just those chunks
(store/scratch.py).

A scope that names a source or a namespace holding few chunks (a memory scope, an
agent's namespace) is ranked among its own chunks: FTS5 walks every match, but weighs
(bm25) only those in scope. Otherwise ranking runs on the FTS table alone and only the
best rows are joined to their documents and sources: joining every match before sorting
cost twice the time of the ranking itself. The scope applies to that window; when
filtering leaves too few hits the window widens, and past a few rounds one filtered
query over every match gives the exact answer. Either way the answer is the best
`limit` chunks in scope by score, ties by id. Expressions come from retrieval/query.py,
which quotes every token.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass

from kenning.store import until_commit
from kenning.store.database import Database, read_until_cancelled
from kenning.store.scope import Scope

# Column weights for bm25(): a term in a title or heading says more about a chunk
# than the same term in its body.
BM25 = "bm25(items_fts, 2.0, 1.5, 1.0)"
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
    """Best `limit` (item id, score) in scope, best first; the score is -bm25 (higher is better).

    Every round runs on the reader's thread in one trip: between two statements the
    thread would otherwise wait for the event loop, which during a hybrid search is
    busy with the other legs' answers. A search whose client hung up stops it part-way."""
    async with db.reader() as conn:
        return await read_until_cancelled(conn, _rank, expression, limit, scope, index)


def _rank(conn: sqlite3.Connection, expression: str, limit: int, scope: Scope, index: str) -> list[tuple[int, float]]:
    chunks = scope.few_chunks_now(conn)
    if chunks is not None:
        return rank_among(conn, expression, limit, index, chunks)
    return rank_by_windows(conn, expression, limit, scope, index)


def rank_among(conn: sqlite3.Connection, expression: str, limit: int, index: str, chunks: list[int]) -> list[tuple[int, float]]:
    """The best `limit` of `chunks` (a scope's, store/scope.py `few_chunks`), as `_rank` answers.

    FTS5 still walks every match, which costs little; weighing one (bm25 reads its
    column sizes) is what costs, and only the listed chunks are weighed. The rowid is
    `+rowid` so the list is not offered to FTS5: as a rowid constraint each chunk became
    a query of its own, which counted every term's matches again to weigh it."""
    if not chunks:
        return []
    table, bm25 = INDEXES[index]
    rows = conn.execute(
        f"SELECT rowid, {bm25} AS rank FROM {table} WHERE {table} MATCH ?"
        " AND +rowid IN (SELECT value FROM json_each(?)) ORDER BY rank, rowid LIMIT ?",
        [expression, json.dumps(chunks), limit],
    ).fetchall()
    return [(item_id, -score) for item_id, score in rows]


def rank_by_windows(
    conn: sqlite3.Connection, expression: str, limit: int, scope: Scope, index: str
) -> list[tuple[int, float]]:
    """The best `limit` in scope, from the best matches of all, in wider windows until
    the scope fills one; past WINDOWS, from every match."""
    table, bm25 = INDEXES[index]
    where, params = scope.where()
    for window in WINDOWS:
        window = max(window, 4 * limit)
        ranked = dict(
            conn.execute(
                f"SELECT rowid, {bm25} AS rank FROM {table} WHERE {table} MATCH ? ORDER BY rank, rowid LIMIT ?",
                (expression, window),
            ).fetchall()
        )
        if not ranked:
            return []
        rows = conn.execute(
            f"SELECT i.id FROM {_IN_SCOPE} WHERE i.id IN ({', '.join('?' * len(ranked))}) AND {where}",
            [*ranked, *params],
        ).fetchall()
        kept = sorted((ranked[item_id], item_id) for (item_id,) in rows)
        if len(kept) >= limit or len(ranked) < window:
            return [(item_id, -score) for score, item_id in kept[:limit]]
    rows = conn.execute(
        f"SELECT i.id, {bm25} AS rank FROM {table} JOIN {_IN_SCOPE}"
        f" WHERE i.id = {table}.rowid AND {table} MATCH ? AND {where} ORDER BY rank, i.id LIMIT ?",
        [expression, *params, limit],
    ).fetchall()
    return [(item_id, -score) for item_id, score in rows]


@dataclass(frozen=True)
class Probe:
    """One thing to ask an index about: an FTS5 expression, and which index (see INDEXES)."""

    expression: str
    index: str = "main"


@dataclass(frozen=True)
class TermCounts:
    """How many chunks (or documents) the library holds, and how many match each probe."""

    total: int
    matching: list[int]


async def term_counts(db: Database, probes: list[Probe], documents: bool = False) -> TermCounts:
    """Each count walks that term's list in the index, as bm25 itself does to weigh it, so
    what was counted is kept until the next commit (store/until_commit.py): queries keep
    asking about the same words. What is not kept is read in one statement.

    `documents`: count the documents holding a chunk that matches, and the documents
    holding any chunk, instead of chunks."""
    held = "count(DISTINCT i.document_id)" if documents else "count(*)"

    async def count(keys: list[Probe | None]) -> dict[Probe | None, int]:
        probed = [key for key in keys if key is not None]
        counts = "".join(
            f", (SELECT {held} FROM {INDEXES[p.index][0]}"
            + (f" JOIN items i ON i.id = {INDEXES[p.index][0]}.rowid" if documents else "")
            + f" WHERE {INDEXES[p.index][0]} MATCH ?)"
            for p in probed
        )
        total = "count(DISTINCT document_id)" if documents else "count(*)"
        [row] = await db.read(f"SELECT (SELECT {total} FROM items){counts}", [p.expression for p in probed])
        return {None: row[0], **dict(zip(probed, row[1:]))}

    # None stands for the library's count, which every idf needs.
    cache = "document counts" if documents else "term counts"
    found = await until_commit.cache(db, cache, COUNTED_TERMS).get([None, *probes], count)
    return TermCounts(found[None], [found[probe] for probe in probes])


async def holders(db: Database, probes: list[Probe], chunks: list[int]) -> list[set[int]]:
    """For each probe of the main index, which of these chunks match it."""

    def read(conn: sqlite3.Connection) -> list[set[int]]:
        listed = json.dumps(chunks)
        return [
            {
                row[0]
                for row in conn.execute(
                    "SELECT rowid FROM items_fts WHERE items_fts MATCH ? AND +rowid IN (SELECT value FROM json_each(?))",
                    [probe.expression, listed],
                )
            }
            for probe in probes
        ]

    async with db.reader() as conn:
        return await read_until_cancelled(conn, read)


async def matching_texts(db: Database, expression: str, limit: int) -> list[str]:
    """The title, section and text of up to `limit` chunks the main index matches: what it
    matched through stemming can then be read as written ("billing export" for
    "billing exporter")."""
    rows = await db.read(
        "SELECT i.title, i.section, i.content FROM items_fts JOIN items i ON i.id = items_fts.rowid"
        " WHERE items_fts MATCH ? LIMIT ?",
        [expression, limit],
    )
    return ["\n".join(row) for row in rows]
