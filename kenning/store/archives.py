"""Archived outputs: the whole stored text by handle, beside the document that indexes it.

The text is kept in runs of `SEGMENT_CHARS` characters, so recalling a page reads only
the runs it spans, however large the archive. An archive, its runs and its document
are written in one transaction and pruned in one; a pruned archive leaves a tombstone
(handle, title, when, why), so recalling it says what happened.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from kenning.store import documents
from kenning.store.database import Database
from kenning.store.records import DocumentMeta, NewItem

SEGMENT_CHARS = 1 << 16
# Tombstones kept; the oldest go first.
MAX_TOMBSTONES = 10_000
PRUNE_BATCH = 20


@dataclass(frozen=True)
class ArchiveRow:
    handle: str
    document_id: int
    title: str
    chars: int
    bytes: int
    digest: str
    created_at: float
    # When the text was last given to `archive`: retention's clock (service/archive.py).
    kept_at: float


@dataclass(frozen=True)
class Tombstone:
    handle: str
    digest: str
    title: str
    bytes: int
    created_at: float
    pruned_at: float
    reason: str


_COLUMNS = "handle, document_id, title, chars, bytes, digest, created_at, kept_at"


async def by_handle(db: Database, handle: str) -> ArchiveRow | None:
    rows = await db.read(f"SELECT {_COLUMNS} FROM archives WHERE handle = ?", (handle,))
    return ArchiveRow(*rows[0]) if rows else None


async def by_document(db: Database, document_id: int) -> ArchiveRow | None:
    rows = await db.read(f"SELECT {_COLUMNS} FROM archives WHERE document_id = ?", (document_id,))
    return ArchiveRow(*rows[0]) if rows else None


async def by_digest(db: Database, digest: str) -> ArchiveRow | None:
    rows = await db.read(f"SELECT {_COLUMNS} FROM archives WHERE digest = ?", (digest,))
    return ArchiveRow(*rows[0]) if rows else None


async def tombstone(db: Database, handle: str) -> Tombstone | None:
    rows = await db.read(
        "SELECT handle, digest, title, bytes, created_at, pruned_at, reason FROM archive_pruned WHERE handle = ?",
        (handle,),
    )
    return Tombstone(*rows[0]) if rows else None


def segments(text: str) -> list[str]:
    """The runs a text is stored in (CPU on a large text: callers use a worker thread)."""
    return [text[start : start + SEGMENT_CHARS] for start in range(0, len(text), SEGMENT_CHARS)]


async def save(
    db: Database,
    row: ArchiveRow,
    runs: list[str],
    source_id: int,
    uri: str,
    meta: DocumentMeta,
    items: list[NewItem],
) -> tuple[int, int]:
    """Store an archive, or store one's text again under its handle (its `document_id` is
    assigned here); returns (document id, chunks)."""
    async with db.transaction() as conn:
        document_id, _ = await documents.write_text(conn, source_id, "archive:" + row.handle, uri, meta, items)
        await conn.execute(
            f"INSERT INTO archives ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (handle) DO UPDATE SET"
            " title = excluded.title, chars = excluded.chars, bytes = excluded.bytes, digest = excluded.digest,"
            " kept_at = excluded.kept_at",
            (row.handle, document_id, row.title, row.chars, row.bytes, row.digest, row.created_at, row.kept_at),
        )
        await conn.execute("DELETE FROM archive_segments WHERE handle = ?", (row.handle,))
        await conn.executemany(
            "INSERT INTO archive_segments (handle, seq, text) VALUES (?, ?, ?)",
            [(row.handle, seq, run) for seq, run in enumerate(runs)],
        )
        # Archived again after it was pruned: it is live, not a tombstone.
        await conn.execute("DELETE FROM archive_pruned WHERE handle = ?", (row.handle,))
    return document_id, len(items)


_RUNS = "SELECT text FROM archive_segments WHERE handle = ? AND seq BETWEEN ? AND ? ORDER BY seq"


def _cut(rows: list[tuple], offset: int, limit: int) -> str:
    joined = "".join(text for (text,) in rows)
    start = offset % SEGMENT_CHARS
    return joined[start : start + limit]


async def read(db: Database, handle: str, offset: int, limit: int) -> str:
    """Characters [offset, offset + limit) of the stored text."""
    first, last = offset // SEGMENT_CHARS, (offset + limit - 1) // SEGMENT_CHARS
    rows = await db.read(_RUNS, (handle, first, last))
    return _cut(rows, offset, limit)


@dataclass(frozen=True)
class Page:
    row: ArchiveRow
    # The stored text's digest: an archive prepared again (a newer redactor) under the
    # same handle holds another text, whose offsets are not the old one's.
    version: str
    text: str


async def page(db: Database, handle: str, offset: int, limit: int) -> Page | None:
    """The archive's row, version and characters [offset, offset + limit), read by one
    statement, so from one snapshot: read apart, a store of it again in between gave a
    page of the new text under the old one's length, and a prune an empty page short
    of the end."""
    first, last = offset // SEGMENT_CHARS, (offset + limit - 1) // SEGMENT_CHARS
    columns = ", ".join("a." + name for name in _COLUMNS.split(", "))
    rows = await db.read(
        f"SELECT {columns}, coalesce(d.content_hash, a.digest), s.text FROM archives a"
        " JOIN documents d ON d.id = a.document_id"
        " LEFT JOIN archive_segments s ON s.handle = a.handle AND s.seq BETWEEN ? AND ?"
        " WHERE a.handle = ? ORDER BY s.seq",
        (first, last, handle),
    )
    if not rows:
        return None
    *stored, digest, _ = rows[0]
    runs = [(text,) for *_, text in rows if text is not None]
    return Page(ArchiveRow(*stored), digest[:16], _cut(runs, offset, limit))


async def listing(
    db: Database, limit: int, offset: int = 0, after: tuple[float, str] | None = None
) -> tuple[list[ArchiveRow], int, int, bool]:
    """Newest first, from after `after` (the (created_at, handle) of the last row seen),
    with the count and the bytes of every archive, and whether more rows follow."""
    page, params = "", []
    if after is not None:
        page, params = " WHERE created_at < ? OR (created_at = ? AND handle > ?)", [after[0], after[0], after[1]]
    async with db.reader() as conn:
        [(total, total_bytes)] = await conn.execute_fetchall("SELECT count(*), coalesce(sum(bytes), 0) FROM archives")
        rows = await conn.execute_fetchall(
            f"SELECT {_COLUMNS} FROM archives{page} ORDER BY created_at DESC, handle LIMIT ? OFFSET ?",
            [*params, limit + 1, offset],
        )
    return [ArchiveRow(*row) for row in rows[:limit]], total, total_bytes, len(rows) > limit


async def keep_again(db: Database, handle: str, when: float) -> None:
    """The archive's text was given again at `when`: retention counts from then."""
    await db.write_one("UPDATE archives SET kept_at = max(kept_at, ?) WHERE handle = ?", (when, handle))


async def total_bytes(db: Database) -> int:
    [(size,)] = await db.read("SELECT coalesce(sum(bytes), 0) FROM archives")
    return size


async def oldest_first(
    db: Database, after: tuple[float, str] | None = None, before: float | None = None, limit: int = -1
) -> list[ArchiveRow]:
    """Least recently archived first, from after `after` (the (kept_at, handle) of the last
    row seen), only those last archived before `before`: retention reads the rows it may
    prune, not every row."""
    clauses, params = ["1"], []
    if after is not None:
        clauses.append("(kept_at > ? OR (kept_at = ? AND handle > ?))")
        params += [after[0], after[0], after[1]]
    if before is not None:
        clauses.append("kept_at < ?")
        params.append(before)
    rows = await db.read(
        f"SELECT {_COLUMNS} FROM archives WHERE {' AND '.join(clauses)} ORDER BY kept_at, handle LIMIT ?",
        [*params, limit],
    )
    return [ArchiveRow(*row) for row in rows]


async def prune(db: Database, doomed: list[tuple[ArchiveRow, str]]) -> None:
    """Delete archives with their reason, a batch per transaction, each leaving a tombstone."""
    for start in range(0, len(doomed), PRUNE_BATCH):
        batch = doomed[start : start + PRUNE_BATCH]
        now = time.time()
        async with db.transaction() as conn:
            for row, reason in batch:
                await conn.execute(
                    "INSERT OR REPLACE INTO archive_pruned"
                    " (handle, digest, title, bytes, created_at, pruned_at, reason) VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (row.handle, row.digest, row.title, row.bytes, row.created_at, now, reason),
                )
                # The archive row and its runs go with the document, by cascade.
                await documents.delete_row(conn, row.document_id)
            await conn.execute(
                "DELETE FROM archive_pruned WHERE handle IN (SELECT handle FROM archive_pruned"
                " ORDER BY pruned_at DESC, handle LIMIT -1 OFFSET ?)",
                (MAX_TOMBSTONES,),
            )


async def tombstone_titles(db: Database) -> dict[str, str]:
    """Each pruned archive's title, by handle: `recall` of a pruned handle still shows it."""
    return dict(await db.read("SELECT handle, title FROM archive_pruned"))


async def retitle_tombstones(db: Database, titles: dict[str, str]) -> None:
    async with db.transaction() as conn:
        await conn.executemany(
            "UPDATE archive_pruned SET title = ? WHERE handle = ?", [(title, handle) for handle, title in titles.items()]
        )


async def totals(db: Database) -> tuple[int, int, int, float | None]:
    """(archives, their bytes, archives pruned (tombstones kept), when the last was pruned)."""
    [(count, size, pruned, last)] = await db.read(
        "SELECT count(*), coalesce(sum(bytes), 0), (SELECT count(*) FROM archive_pruned),"
        " (SELECT max(pruned_at) FROM archive_pruned) FROM archives"
    )
    return count, size, pruned, last
