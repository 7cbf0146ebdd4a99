"""A keyword index of one search's best hits, in memory: which of them hold each of the
query's terms and word pairs, and the highlighted excerpts of those returned.

Asked of the library's index, a term's whole list is walked however few chunks are
asked about (a common word's list is most of the index), and `snippet()` reads every
term's list again for a handful of rows; asked of an index holding only these chunks,
with the same tokenizers, the answers are the same and cost what indexing a few
kilobytes does. One index serves both questions, so the best hits are tokenized once.

Creating the FTS5 tables cost as much as filling them with a search's 30 best hits (1.1
ms against 1.2), so indexes are kept, a few at a time, and emptied for the next search.
The chunks' text is held in an ordinary table the main index reads its content from,
and the CJK index holds no content at all: emptying both is one 'delete-all' each rather
than tokenizing every chunk again to delete it. A chunk that opens with front matter
also has its text after it indexed, as a column of its own, for its excerpt: a snippet
taken there does not open with "title: ... date: ... ---", and what the chunk holds is
the same either way.

A Scratch is used by one search at a time; its calls take a few milliseconds of CPU and
no I/O.
"""

from __future__ import annotations

import sqlite3
import threading

from kenning.store.fts import CJK_TOKENIZER, INDEXES, TOKENIZER, Probe
from kenning.text import cjk
from kenning.text.frontmatter import body

SNIPPET_TOKENS = 24
HIGHLIGHT = ("**", "**")
# Emptied indexes kept for the next searches: about as many as run at once.
KEPT = 4

_kept: list["Scratch"] = []
_kept_lock = threading.Lock()


def take() -> Scratch:
    """An empty scratch index, its tables named as the library's (store/fts.py INDEXES);
    hand it back with `give_back` once the search is done."""
    with _kept_lock:
        if _kept:
            return _kept.pop()
    return Scratch()


def give_back(scratch: Scratch) -> None:
    """Empty the index and keep it for another search."""
    scratch.clear()
    with _kept_lock:
        if len(_kept) < KEPT:
            _kept.append(scratch)
            return
    scratch.close()


class Scratch:
    def __init__(self) -> None:
        # Kept indexes may next serve a search on another thread's event loop.
        self._conn = sqlite3.connect(":memory:", check_same_thread=False)
        self._conn.executescript(
            "CREATE TABLE chunks (id INTEGER PRIMARY KEY, title TEXT, section TEXT, content TEXT, body TEXT);"
            "CREATE VIRTUAL TABLE items_fts USING fts5 (title, section, content, body,"
            f" content = 'chunks', content_rowid = 'id', tokenize = '{TOKENIZER}');"
            f"CREATE VIRTUAL TABLE items_cjk USING fts5 (text, content = '', tokenize = '{CJK_TOKENIZER}');"
        )
        self._held: set[int] = set()

    def holds(self, item_id: int) -> bool:
        return item_id in self._held

    def add(self, chunks: dict[int, tuple[str, str, str]]) -> None:
        """Index these chunks (title, section, content); those already held are skipped."""
        rows = [
            (item_id, *fields, _after_front_matter(fields[2]))
            for item_id, fields in chunks.items()
            if item_id not in self._held
        ]
        if not rows:
            return
        with self._conn:
            self._conn.executemany("INSERT INTO chunks (id, title, section, content, body) VALUES (?, ?, ?, ?, ?)", rows)
            self._conn.executemany(
                "INSERT INTO items_fts (rowid, title, section, content, body) VALUES (?, ?, ?, ?, ?)", rows
            )
            self._conn.executemany(
                "INSERT INTO items_cjk (rowid, text) VALUES (?, ?)",
                [(row[0], text) for row in rows if (text := cjk.index_text(*row[1:4]))],
            )
        self._held.update(row[0] for row in rows)

    def holders(self, probes: list[Probe]) -> list[set[int]]:
        """For each probe, which of the held chunks match it."""
        found: list[set[int]] = []
        for probe in probes:
            table = INDEXES[probe.index][0]
            rows = self._conn.execute(f"SELECT rowid FROM {table} WHERE {table} MATCH ?", (probe.expression,))
            found.append({row[0] for row in rows})
        return found

    def excerpts(self, expression: str, ids: list[int]) -> dict[int, str]:
        """Highlighted excerpts of these held chunks, where the expression's terms occur in them."""
        if not ids:
            return {}
        rows = self._conn.execute(
            f"SELECT rowid, snippet(items_fts, iif(body != '', 3, 2), ?, ?, '…', {SNIPPET_TOKENS}) FROM items_fts"
            f" WHERE items_fts MATCH ? AND rowid IN ({', '.join('?' * len(ids))})",
            [*HIGHLIGHT, expression, *ids],
        )
        return dict(rows.fetchall())

    def clear(self) -> None:
        with self._conn:
            self._conn.execute("INSERT INTO items_fts (items_fts) VALUES ('delete-all')")
            self._conn.execute("INSERT INTO items_cjk (items_cjk) VALUES ('delete-all')")
            self._conn.execute("DELETE FROM chunks")
        self._held.clear()

    def close(self) -> None:
        self._conn.close()


def _after_front_matter(content: str) -> str:
    """A chunk's text after its front matter, which its excerpt is taken from; empty when
    it has none (the excerpt is then taken from the whole text, not indexed twice)."""
    after = body(content)
    return after if len(after) < len(content) else ""
