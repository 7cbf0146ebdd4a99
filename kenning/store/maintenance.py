"""Index upkeep: FTS segment merging after a sweep, purging removed text from the keyword
indexes, and giving space back after removals.

The FTS table merges segments lazily (automerge 16) so that bulk ingest stays fast;
afterwards the segments are merged in small steps, each its own short write
transaction, so searches and new writes are never held up for long.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from kenning.store.database import Database, on_thread

log = logging.getLogger(__name__)

MERGE_PAGES_PER_STEP = 500
MAX_STEPS = 2000


# Both keyword indexes (store/fts.py INDEXES): every word of a chunk is in one, its CJK
# bigrams in the other.
FTS_TABLES = ("items_fts", "items_cjk")


async def merge_fts_segments(
    db: Database, table: str = "items_fts", pages: int = MERGE_PAGES_PER_STEP, halted: Callable[[], bool] = lambda: False
) -> int | None:
    """Merge until FTS5 reports no more work; returns the number of steps taken, or None
    when `halted()` said to stop before one (the merge state is kept in the index, so the
    next merge goes on from there).

    `pages` negative merges every segment into one (FTS5's 'merge' with a negative
    argument is 'optimize' taken in steps), which is what purges removed words."""
    for step in range(1, MAX_STEPS + 1):
        if halted():
            return None
        before = db.total_changes()
        await db.write_one(f"INSERT INTO {table} ({table}, rank) VALUES ('merge', ?)", (pages,))
        # FTS5's documented signal: a merge step that changed fewer than two rows had
        # nothing left to do.
        if db.total_changes() - before < 2:
            log.debug("fts merge finished after %d steps", step)
            return step
    return MAX_STEPS


# -- removed text ------------------------------------------------------------------------
#
# Deleting a row leaves its words in the keyword index. FTS5 records a delete as a
# tombstone in a new segment, which holds the words itself, and the segment the row was
# written to keeps them too, until one merge takes in every segment that holds them:
# only a merge of the whole index does that for sure. (SQLite 3.44 added a secure-delete
# option that edits the segments in place; the Python kenning runs on here links 3.40.)
# The pages the merge frees are zeroed (secure_delete, store/database.py), and the WAL,
# which still holds the pages the removal and the merge wrote, is then folded into the
# file and truncated.


#
# A purge of a large library takes seconds (0.6 s per 16 MB of index on two cores), and a
# stop must not wait for it: a service manager kills a daemon that does not leave in time.
# So a purge is owed from the moment it is asked for until it has run to its end, and a
# mark in the database says so (the `owed` table, m024): a purge a stop cut short between
# two of its steps is run again by the next start, from where the merge stopped.

PURGE = "purge"


async def owe_purge(db: Database) -> None:
    """Mark a purge as owed, before it starts: a stop or a crash during it leaves the mark."""
    await db.write_one("INSERT OR IGNORE INTO owed (work) VALUES (?)", (PURGE,))


async def purge_owed(db: Database) -> bool:
    return bool(await db.read("SELECT 1 FROM owed WHERE work = ?", (PURGE,)))


async def purge_paid(db: Database) -> None:
    await db.write_one("DELETE FROM owed WHERE work = ?", (PURGE,))


async def purge_removed(db: Database, halted: Callable[[], bool] = lambda: False) -> bool:
    """Take the words of removed rows out of the keyword indexes and out of the WAL;
    returns False when `halted()` cut it short between two steps. (A reader that kept
    the WAL from being truncated is logged, not reported: the next checkpoint, at the
    latest when the library goes idle, finishes that part.)"""
    for table in FTS_TABLES:
        steps = await merge_fts_segments(db, table, -MERGE_PAGES_PER_STEP, halted)
        if steps is None:
            log.info("purge of removed words stopped before %s was merged whole; the next start finishes it", table)
            return False
        log.debug("%s merged into one segment in %d steps", table, steps)
    await checkpoint(db)
    return True


# -- space ---------------------------------------------------------------------------------
#
# Deleted rows leave free pages inside the file; SQLite reuses them but never gives them
# back on its own. A database made by this kenning has auto_vacuum = INCREMENTAL (set in
# `database.prepare` before its first table), so after a large removal the free pages are
# returned in small steps, each a short write, and the WAL the removal grew is truncated.
# An older file needs one full VACUUM (`compact`) to switch it over.

VACUUM_PAGES_PER_STEP = 2048
AUTO_VACUUM_INCREMENTAL = 2


@dataclass(frozen=True)
class Space:
    file_bytes: int
    wal_bytes: int
    free_bytes: int

    @property
    def total(self) -> int:
        return self.file_bytes + self.wal_bytes


def _sizes(path: Path) -> tuple[int, int]:
    wal = path.with_name(path.name + "-wal")
    return (path.stat().st_size if path.exists() else 0, wal.stat().st_size if wal.exists() else 0)


async def space(db: Database) -> Space:
    """In one trip to a reader (`status` asks on every call): the file's sizes are read
    on its thread too, as stat-ing the file a query just read waits on nothing it did not."""
    async with db.reader() as conn:
        return await on_thread(conn, _space, db.path)


def _space(conn: sqlite3.Connection, path: Path) -> Space:
    [(page_size, free_pages)] = conn.execute("SELECT * FROM pragma_page_size(), pragma_freelist_count()").fetchall()
    file_bytes, wal_bytes = _sizes(path)
    return Space(file_bytes, wal_bytes, page_size * free_pages)


async def reclaim(db: Database) -> int:
    """Return free pages to the file system (incremental vacuum) and truncate the WAL;
    returns the bytes the file and WAL shrank by."""
    before = await space(db)
    [(mode,)] = await db.write_one("PRAGMA auto_vacuum")
    if mode == AUTO_VACUUM_INCREMENTAL:
        while True:
            await db.write_one(f"PRAGMA incremental_vacuum({VACUUM_PAGES_PER_STEP})")
            [(left,)] = await db.write_one("PRAGMA freelist_count")
            if not left:
                break
    await checkpoint(db)
    after = await space(db)
    log.info("returned %.1f MB to the file system", (before.total - after.total) / 1e6)
    return max(before.total - after.total, 0)


async def checkpoint(db: Database) -> bool:
    """Fold the WAL back into the file and truncate it; False when a reader still on an
    older snapshot past the busy timeout kept part of it (the next checkpoint gets it)."""
    [(busy, _, _)] = await db.write_one("PRAGMA wal_checkpoint(TRUNCATE)")
    if busy:
        log.warning("the WAL could not be truncated: a reader held an older snapshot")
    return not busy


async def compact(db: Database) -> tuple[Space, Space]:
    """Rewrite the file without its free pages (VACUUM), switching it to incremental
    auto-vacuum on the way; the write lock is held throughout, searches go on."""
    before = await space(db)
    await db.write_one("PRAGMA auto_vacuum = INCREMENTAL")
    await db.write_one("VACUUM")
    await checkpoint(db)
    return before, await space(db)
