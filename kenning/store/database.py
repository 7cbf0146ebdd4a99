"""Connections to the one SQLite file: a single writer and a small pool of readers.

Every statement runs on a connection's own thread (aiosqlite), so the event loop only
awaits. Writes are serialised through the writer under an asyncio lock: a transaction
is several awaits, and without the lock two coroutines could interleave statements
inside one BEGIN ... COMMIT.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path

import aiosqlite

from kenning.store.migrations import migrate

log = logging.getLogger(__name__)

BUSY_TIMEOUT_MS = 10_000


# Every connection gets these; journal_mode is a property of the file, set once by the
# writer before the readers open.
PRAGMAS = (
    f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}",
    "PRAGMA foreign_keys = ON",
    "PRAGMA synchronous = NORMAL",
)


def prepare(path: Path) -> int:
    """Create or migrate the file on a plain connection before the async ones open.

    Runs in a worker thread; returns the schema version reached.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        for pragma in PRAGMAS:
            conn.execute(pragma)
        conn.execute("PRAGMA journal_mode = WAL")
        return migrate(conn)
    finally:
        conn.close()


async def configure(conn: aiosqlite.Connection) -> None:
    for pragma in PRAGMAS:
        await conn.execute(pragma)


class Database:
    """Owns the writer and the readers; `open()` migrates before anything else runs."""

    def __init__(self, path: Path, readers: int = 2) -> None:
        self.path = path
        self._reader_count = readers
        self._writer: aiosqlite.Connection | None = None
        self._readers: asyncio.Queue[aiosqlite.Connection] = asyncio.Queue()
        self._all_readers: list[aiosqlite.Connection] = []
        self._write_lock = asyncio.Lock()
        self._removal_listeners: list[Callable[[list[int]], None]] = []
        self._move_listeners: list[Callable[[int, list[int]], None]] = []

    async def open(self) -> None:
        await asyncio.to_thread(prepare, self.path)
        self._writer = await aiosqlite.connect(self.path, isolation_level=None)
        await configure(self._writer)
        for _ in range(self._reader_count):
            reader = await aiosqlite.connect(f"file:{self.path}?mode=ro", uri=True, isolation_level=None)
            await configure(reader)
            self._all_readers.append(reader)
            self._readers.put_nowait(reader)

    async def close(self) -> None:
        """Readers first, then a checkpoint so the WAL is folded back into the main file."""
        for reader in self._all_readers:
            await reader.close()
        self._all_readers.clear()
        if self._writer is not None:
            async with self._write_lock:
                try:
                    await self._writer.execute("PRAGMA wal_checkpoint(TRUNCATE)")
                except sqlite3.Error as exc:
                    log.warning("checkpoint at close failed: %s", exc)
                await self._writer.close()
            self._writer = None

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[aiosqlite.Connection]:
        """BEGIN IMMEDIATE on the writer; commit on success, roll back on any exit else.

        Rollback also runs on cancellation, which is how shutdown abandons the file in
        flight without leaving half of it behind.
        """
        writer = self._require_writer()
        async with self._write_lock:
            await writer.execute("BEGIN IMMEDIATE")
            try:
                yield writer
            except BaseException:
                await asyncio.shield(writer.execute("ROLLBACK"))
                raise
            await writer.execute("COMMIT")

    async def write_one(self, sql: str, params: tuple | list = ()) -> list[tuple]:
        """One statement as its own transaction, in a single trip to the writer thread.

        Cheaper than transaction() for the many one-row writes of a sweep: every await
        on the writer is a thread hop, and at thousands of files the hops, not SQLite,
        set the ingest rate.
        """
        writer = self._require_writer()
        async with self._write_lock:
            return list(await writer.execute_fetchall(sql, params))

    def on_items_removed(self, listener: Callable[[list[int]], None]) -> None:
        """Register a callback for item ids deleted by a committed write.

        In-memory views of the items (the vector index) stay in step through this
        rather than by re-reading the table.
        """
        self._removal_listeners.append(listener)

    def on_items_moved(self, listener: Callable[[int, list[int]], None]) -> None:
        """Register a callback for items whose owning source changed (source id, item ids).

        Dedup hands a document's items from one source's row to another's; views that
        filter by source (the vector index) must follow.
        """
        self._move_listeners.append(listener)

    def items_changed(self, removed: list[int], moved: dict[int, list[int]] | None = None) -> None:
        """Tell the listeners what a committed write did to items."""
        if removed:
            for listener in self._removal_listeners:
                listener(removed)
        for source_id, ids in (moved or {}).items():
            if ids:
                for listener in self._move_listeners:
                    listener(source_id, ids)

    def total_changes(self) -> int:
        return self._require_writer().total_changes

    @asynccontextmanager
    async def reader(self) -> AsyncIterator[aiosqlite.Connection]:
        conn = await self._readers.get()
        try:
            yield conn
        finally:
            self._readers.put_nowait(conn)

    def _require_writer(self) -> aiosqlite.Connection:
        if self._writer is None:
            raise RuntimeError("database is not open")
        return self._writer
