"""One stored copy per document: who owns a set of items, and where else it is held.

A document reached through two sources is one set of items owned by one state row (the
holder); every other source's row for it is `merged` and names the holder in
`merged_into`. These functions are the only code that moves items between rows, and
each runs inside the caller's write transaction (plain sqlite3 on the writer's thread,
see `Database.write`), so a crash leaves either the old ownership or the new one, never
items that no row names.

The rules, each of which closes a way a design like this lost data:

- Items are never deleted while another row still holds the document: `release` hands
  them to a surviving location (the heir) instead, and re-points the other locations.
- A holder is never a row in the incoming document's own source, and never one that
  already has a location in that source: two files in one source with the same text
  stay two documents.
- A persistent source (a folder) outranks a transient one (agent text, a fetched page):
  arriving second, it takes the items over rather than being refused, so removing the
  transient holder later leaves the folder's copy in place.
- An agent record (a memory capsule, an archive, a ledger entry) is never a holder and
  never a location: it keeps its own items whatever else holds the same text, because
  its identity is its handle, its chunks carry its graph entities, and it has its own
  dedup rules and lifecycle (supersession, retention, merge by identity).
"""

from __future__ import annotations

import sqlite3
from collections import Counter
from dataclasses import dataclass

from kenning.store.database import Database

COLLAPSE_BATCH = 100
# Higher outranks lower; equal rank means the incoming copy becomes a location.
RANKS = {"folder": 2, "url": 1, "agent": 1}
RANK_SQL = "CASE s.kind WHEN 'folder' THEN 2 ELSE 1 END"
# Source kinds whose documents are agent records, outside exact and near-duplicate dedup.
RECORD_KINDS = ("capsule", "archive", "ledger")
_RECORDS_SQL = "('capsule', 'archive', 'ledger')"


def rank(kind: str) -> int:
    return RANKS.get(kind, 1)


@dataclass(frozen=True)
class Holder:
    document_id: int
    source_id: int
    rank: int
    chunk_count: int


def find_holder(conn: sqlite3.Connection, text_hash: str, source_id: int) -> Holder | None:
    """The document another source already stores with this exact text, if any.

    Read inside the write transaction that acts on the answer, so a concurrent source
    removal cannot take the holder away between the check and the write. A row being
    re-read (`scanning`) still holds its old text until its new text replaces it, so it
    counts: otherwise a copy arriving in that window would be stored a second time. So
    does one kenning failed on after indexing it (`documents.mark_broken`), which keeps
    its text searchable.
    """
    row = conn.execute(
        f"SELECT d.id, d.source_id, {RANK_SQL}, d.chunk_count FROM documents d JOIN sources s ON s.id = d.source_id"
        " WHERE d.text_hash = ? AND d.chunk_count > 0 AND d.status IN ('done', 'scanning', 'failed')"
        f" AND d.source_id != ? AND s.removing = 0 AND s.kind NOT IN {_RECORDS_SQL}"
        " AND NOT EXISTS (SELECT 1 FROM documents m WHERE m.merged_into = d.id AND m.source_id = ?)"
        " ORDER BY d.id LIMIT 1",
        (text_hash, source_id, source_id),
    ).fetchone()
    return Holder(*row) if row else None


def has_locations(conn: sqlite3.Connection, document_id: int) -> bool:
    """Whether another row shares this row's items as a location."""
    return conn.execute("SELECT 1 FROM documents WHERE merged_into = ? LIMIT 1", (document_id,)).fetchone() is not None


def release(conn: sqlite3.Connection, document_id: int) -> None:
    """Give up a row's items: to its best surviving location if one exists, else delete them.

    Called before a row's items are replaced, before a row is deleted, and before a row
    becomes a location itself. The heir is the highest-ranked location, oldest first.
    """
    heir = conn.execute(
        f"SELECT d.id FROM documents d JOIN sources s ON s.id = d.source_id"
        f" WHERE d.merged_into = ? ORDER BY s.removing, {RANK_SQL} DESC, d.id LIMIT 1",
        (document_id,),
    ).fetchone()
    if heir is None:
        conn.execute("DELETE FROM items WHERE document_id = ?", (document_id,))
        return
    heir_id = heir[0]
    owner_hash, chunk_count, reading = conn.execute(
        "SELECT text_hash, chunk_count, reading FROM documents WHERE id = ?", (document_id,)
    ).fetchone()
    _move_items(conn, document_id, heir_id)
    conn.execute(
        "UPDATE documents SET merged_into = ? WHERE merged_into = ? AND id != ?", (heir_id, document_id, heir_id)
    )
    # A near-duplicate heir now holds text that is not exactly its own: forgetting its
    # file's mtime and hash makes the next sweep read the file again (folders); the held
    # copy serves until then. The heir holds chunks prepared under the owner's reading
    # (an older redactor's, maybe), so it takes that reading: a file is read again, and
    # agent text prepared again (service/rereading.py), when that one is out of date.
    conn.execute(
        "UPDATE documents SET status = 'done', merged_into = NULL, chunk_count = ?,"
        " mtime = CASE WHEN text_hash IS ? THEN mtime ELSE -1 END,"
        " content_hash = CASE WHEN text_hash IS ? THEN content_hash ELSE NULL END,"
        " text_hash = ?, reading = ? WHERE id = ?",
        (chunk_count, owner_hash, owner_hash, owner_hash, reading, heir_id),
    )
    conn.execute("UPDATE documents SET chunk_count = 0 WHERE id = ?", (document_id,))


def adopt(conn: sqlite3.Connection, document_id: int, holder: Holder) -> None:
    """The incoming row outranks the holder: it takes the items, the holder becomes its location."""
    _move_items(conn, holder.document_id, document_id)
    conn.execute("UPDATE documents SET merged_into = ? WHERE merged_into = ?", (document_id, holder.document_id))
    conn.execute(
        "UPDATE documents SET status = 'merged', merged_into = ?, chunk_count = 0 WHERE id = ?",
        (document_id, holder.document_id),
    )


def collapse(conn: sqlite3.Connection, pairs: list[tuple[int, int]]) -> None:
    """Make each loser a location of its winner (the near-duplicate sweep's collapse).

    A loser's own items go (its locations are re-pointed to the winner first, so none is
    stranded), and it keeps its own text hash, so an edit to its file is seen as a change
    and ingested afresh. A loser is never also a winner in the same call. Statements are
    per call, not per pair: a sweep collapses thousands.
    """
    if not pairs:
        return
    conn.executemany("UPDATE documents SET merged_into = ? WHERE merged_into = ?", pairs)
    losers = [loser for _, loser in pairs]
    conn.execute(f"DELETE FROM items WHERE document_id IN ({', '.join('?' * len(losers))})", losers)
    conn.executemany("UPDATE documents SET status = 'merged', merged_into = ?, chunk_count = 0 WHERE id = ?", pairs)


def _move_items(conn: sqlite3.Connection, from_id: int, to_id: int) -> None:
    conn.execute("UPDATE items SET document_id = ? WHERE document_id = ?", (to_id, from_id))


async def dedup_candidates(db: Database) -> tuple[list[tuple], list[tuple[int, int]]]:
    """Every stored document the near-duplicate sweep compares, and (item, document) pairs.

    Documents: (id, source id, path, uri, title, source rank, chunk count).
    """
    async with db.reader() as conn:
        rows = await conn.execute_fetchall(
            f"SELECT d.id, d.source_id, d.path, d.uri, d.title, {RANK_SQL}, d.chunk_count"
            " FROM documents d JOIN sources s ON s.id = d.source_id WHERE d.status = 'done' AND s.removing = 0"
            f" AND s.kind NOT IN {_RECORDS_SQL}"
        )
        items = await conn.execute_fetchall("SELECT id, document_id FROM items ORDER BY document_id, id")
    return list(rows), list(items)


async def collapse_pairs(db: Database, pairs: list[tuple[int, int]]) -> int:
    """Collapse (winner, loser) pairs a batch per transaction; returns how many were applied.

    Each pair is checked again inside the write transaction, since the library may have
    moved on since the sweep read it, and a pair whose loser has a line its winner lacks
    is left as two documents, or turned round when the loser is the fuller copy
    (`_lossless`); a crash mid-way leaves every document either collapsed or untouched,
    and the next sweep finishes the job.
    """
    # Only a winner with no other loser can be turned round: one that gave way to its
    # fuller copy would leave its other losers with nothing to fold into.
    winners = Counter(winner for winner, _ in pairs)
    sole = frozenset(winner for winner, count in winners.items() if count == 1)
    collapsed = 0
    for start in range(0, len(pairs), COLLAPSE_BATCH):
        collapsed += await db.write(_collapse_checked, pairs[start : start + COLLAPSE_BATCH], sole)
    return collapsed


def _collapse_checked(conn: sqlite3.Connection, batch: list[tuple[int, int]], sole: frozenset[int]) -> int:
    involved = [document_id for pair in batch for document_id in pair]
    marks = ", ".join("?" * len(involved))
    rows = conn.execute(
        "SELECT d.id FROM documents d JOIN sources s ON s.id = d.source_id"
        f" WHERE d.id IN ({marks}) AND d.status = 'done' AND s.removing = 0",
        involved,
    ).fetchall()
    current = {row[0] for row in rows}
    # Collapsing must not leave one source holding two of its files as one document:
    # skip a pair when either side already has a location in the other's source.
    crossed = conn.execute(
        f"SELECT a.id, b.id FROM documents a JOIN documents b WHERE a.id IN ({marks}) AND b.id IN ({marks})"
        " AND a.id != b.id AND EXISTS"
        " (SELECT 1 FROM documents m WHERE m.merged_into = a.id AND m.source_id = b.source_id)",
        [*involved, *involved],
    ).fetchall()
    blocked = {frozenset(pair) for pair in crossed}
    valid = [
        (winner, loser)
        for winner, loser in batch
        if winner in current and loser in current and frozenset((winner, loser)) not in blocked
    ]
    valid = _lossless(conn, valid, sole)
    collapse(conn, valid)
    return len(valid)


def _lossless(conn: sqlite3.Connection, pairs: list[tuple[int, int]], sole: frozenset[int]) -> list[tuple[int, int]]:
    """The pairs whose loser has no line its winner lacks, whitespace aside, and turned
    round, the pairs whose winner is the one with no line of its own.

    A collapse deletes the loser's items, so a line only the loser had (the one owner
    line two copies of a plan differ in) would be in no item at all and no search could
    find it. Such a pair stays two documents: the chunks they share still show once in
    search (retrieval's `distinct` folds identical text into one hit's `also_at`), which
    is what the collapse was for, and every line stays cited at its own file.

    The winner is the higher-ranked source's copy, then the one with more chunks, then
    the older (near_dups.py `resolve`), so an excerpt as long in chunks as its fuller copy
    and stored first won and kept both. Where the two rank alike the fuller copy survives
    instead; where they do not, the rank holds (a folder's excerpt is not folded into a
    fetched page) and both stay. `sole`: the winners that may give way (see `collapse_pairs`).
    """
    if not pairs:
        return []
    involved = sorted({document_id for pair in pairs for document_id in pair})
    marks = ", ".join("?" * len(involved))
    lines: dict[int, set[str]] = {document_id: set() for document_id in involved}
    rows = conn.execute(f"SELECT document_id, content FROM items WHERE document_id IN ({marks})", involved)
    for document_id, content in rows:
        lines[document_id].update(" ".join(line.split()) for line in content.splitlines() if line.strip())
    ranks = dict(
        conn.execute(
            f"SELECT d.id, {RANK_SQL} FROM documents d JOIN sources s ON s.id = d.source_id WHERE d.id IN ({marks})",
            involved,
        ).fetchall()
    )
    kept = []
    for winner, loser in pairs:
        if lines[loser] <= lines[winner]:
            kept.append((winner, loser))
        elif winner in sole and ranks[winner] == ranks[loser] and lines[winner] <= lines[loser]:
            kept.append((loser, winner))
    return kept
