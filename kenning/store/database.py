"""Connections to the one SQLite file: a single writer, a small pool of readers, and
the changes each write transaction made.

Every statement runs on a connection's own thread (aiosqlite), so the event loop only
awaits. Writes are serialised through the writer under an asyncio lock: a transaction
is several awaits, and without the lock two coroutines could interleave statements
inside one BEGIN ... COMMIT. The writes a sweep makes for every file run whole on the
writer's thread instead (`write`): each await on a connection is a trip between threads,
and with the parse pool's and the hash threads awake a trip costs 0.4-0.8 ms, so a file's
eight statements held the writer ~5 ms while SQLite worked under 1 ms of it.

What a write did to items and vectors is recorded by temporary triggers on the writer
into a temporary table, read back just before COMMIT and published to subscribers just
after it. Derived in-memory views (the vector index) and the background jobs learn of
every change that way, whichever store function made it, including rows removed by a
foreign-key cascade: no caller has to remember to announce what it did. Documents rows
are recorded the same way, as what they add to or take from the counts `status` shows
(per source and state, with their chunks), so those counts are kept by following the
commits (store/tallies.py) rather than counted again after each one.

Once the library has gone IDLE_RELEASE_S without a read or a write, each connection
hands back its page cache, what store/until_commit.py keeps for searches is emptied,
and the allocator returns free pages: a daemon left running holds what a fresh start
does, not what its last burst of work needed. The WAL is folded back into the file and
truncated then too, and tried again each idle period while another process's read
transaction (an sqlite3 shell, a backup) keeps it. SQLite reuses a WAL from its start once it is checkpointed but keeps
the file at the largest size it ever reached: in a 35-minute soak of edits, searches and
agent writes it stood at 70 MB beside an 18 MB database and never came back down.
JOURNAL_SIZE_LIMIT bounds it while the library stays busy as well.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
import threading
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import aiosqlite

from kenning.errors import KenningError
from kenning.heap import release_free_memory
from kenning.store.damage import damaged, is_damage, read_only_uri
from kenning.store.keys import path_key
from kenning.store.migrations import migrate

log = logging.getLogger(__name__)

BUSY_TIMEOUT_MS = 10_000
READERS = 3
# Prepared statements the writer keeps (Python's default, which the readers keep, is
# 128). Many of its statements are made per call (an IN list as long as its batch), so a
# long cache mostly holds large one-off programs: after ingesting 100,000 chunks it held
# 17 MB, more than all four connections' page caches together. A search's statements
# are reused query after query, and the readers' caches stayed under 2 MB each.
WRITER_STATEMENTS = 32
IDLE_RELEASE_S = 30.0
# SQLite VM steps between two looks, during a read its caller may abandon, at whether it
# has (`read_until_cancelled`): 10,000 steps took 0.3 ms here, and a count to 3 million
# ran as fast with its 5,100 looks as without them.
ABANDON_CHECK_STEPS = 10_000
# What a WAL file is cut back to each time SQLite starts it again from the beginning:
# four automatic checkpoints' worth, so an ordinary burst does not regrow it every time.
JOURNAL_SIZE_LIMIT = 16 << 20

T = TypeVar("T")

# Every connection gets these; journal_mode is a property of the file, set once by the
# writer before the readers open. secure_delete overwrites what a delete frees with
# zeros, so the text of a forgotten capsule or a removed document is not left readable
# in the file (README, "What is removed is gone from the disk"); it is set because the
# default is the SQLite build's (Debian's is on; SQLite's own default is off).
# FAST zeroes only within the pages a delete writes anyway and leaves freed pages as
# they were: a capsule body long enough for overflow pages stayed readable in them.
PRAGMAS = (
    f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}",
    "PRAGMA foreign_keys = ON",
    "PRAGMA synchronous = NORMAL",
    f"PRAGMA journal_size_limit = {JOURNAL_SIZE_LIMIT}",
    "PRAGMA secure_delete = ON",
)

# Kinds of rows in temp.changes.
_ADDED, _REMOVED, _MOVED, _EMBEDDED, _UNEMBEDDED, _COUNTED_IN, _COUNTED_OUT = range(7)

# Temporary objects live only on the writer connection, the only one that writes.
# Trigger bodies may not name a schema, so `changes` resolves to the temp table (no
# main table has that name). REPLACE into vectors fires the insert trigger only, which
# is what a rewritten vector is.
_CHANGE_TRACKING = (
    # For a documents row: item_id is its source, detail its status, amount its chunk_count.
    "CREATE TEMP TABLE changes (kind INTEGER NOT NULL, item_id INTEGER NOT NULL, detail, amount INTEGER)",
    f"""CREATE TEMP TRIGGER track_items_ai AFTER INSERT ON main.items BEGIN
        INSERT INTO changes (kind, item_id, detail) VALUES ({_ADDED}, new.id, NULL); END""",
    f"""CREATE TEMP TRIGGER track_items_ad AFTER DELETE ON main.items BEGIN
        INSERT INTO changes (kind, item_id, detail) VALUES ({_REMOVED}, old.id, NULL); END""",
    f"""CREATE TEMP TRIGGER track_items_moved AFTER UPDATE OF document_id ON main.items
        WHEN new.document_id != old.document_id BEGIN
        INSERT INTO changes (kind, item_id, detail) VALUES ({_MOVED}, new.id,
            (SELECT source_id FROM documents WHERE id = new.document_id)); END""",
    f"""CREATE TEMP TRIGGER track_vectors_ai AFTER INSERT ON main.vectors BEGIN
        INSERT INTO changes (kind, item_id, detail) VALUES ({_EMBEDDED}, new.item_id, new.signature); END""",
    f"""CREATE TEMP TRIGGER track_vectors_au AFTER UPDATE ON main.vectors BEGIN
        INSERT INTO changes (kind, item_id, detail) VALUES ({_EMBEDDED}, new.item_id, new.signature); END""",
    f"""CREATE TEMP TRIGGER track_vectors_ad AFTER DELETE ON main.vectors BEGIN
        INSERT INTO changes (kind, item_id, detail) VALUES ({_UNEMBEDDED}, old.item_id, old.signature); END""",
    f"""CREATE TEMP TRIGGER track_documents_ai AFTER INSERT ON main.documents BEGIN
        INSERT INTO changes VALUES ({_COUNTED_IN}, new.source_id, new.status, new.chunk_count); END""",
    f"""CREATE TEMP TRIGGER track_documents_ad AFTER DELETE ON main.documents BEGIN
        INSERT INTO changes VALUES ({_COUNTED_OUT}, old.source_id, old.status, old.chunk_count); END""",
    # A failed row's path and reason are shown too (status lists the first failures), so
    # a change to them is recorded though no count moves.
    f"""CREATE TEMP TRIGGER track_documents_au AFTER UPDATE ON main.documents
        WHEN new.source_id IS NOT old.source_id OR new.status IS NOT old.status
            OR new.chunk_count IS NOT old.chunk_count
            OR ('failed' IN (new.status, old.status)
                AND (new.reason IS NOT old.reason OR new.path IS NOT old.path OR new.uri IS NOT old.uri)) BEGIN
        INSERT INTO changes VALUES ({_COUNTED_OUT}, old.source_id, old.status, old.chunk_count);
        INSERT INTO changes VALUES ({_COUNTED_IN}, new.source_id, new.status, new.chunk_count); END""",
)


@dataclass(frozen=True)
class ChangeSet:
    """What one committed write transaction did to items and their vectors."""

    added: tuple[int, ...] = ()
    removed: tuple[int, ...] = ()
    # new owning source id -> items handed to it (dedup moves items between documents)
    moved: dict[int, tuple[int, ...]] = field(default_factory=dict)
    # embedder signature -> items whose vector was written / deleted
    embedded: dict[str, tuple[int, ...]] = field(default_factory=dict)
    unembedded: dict[str, tuple[int, ...]] = field(default_factory=dict)
    # (source id, status) -> what the documents rows written add to its (rows, chunks),
    # either negative; a pair whose rows were only rewritten (a failed file's reason) is
    # here with (0, 0).
    counted: dict[tuple[int, str], tuple[int, int]] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.added or self.removed or self.moved or self.embedded or self.unembedded or self.counted)

    @classmethod
    def from_rows(cls, rows: list[tuple[int, int, object, Any]]) -> "ChangeSet":
        added: list[int] = []
        removed: list[int] = []
        moved: dict[int, list[int]] = {}
        embedded: dict[str, list[int]] = {}
        unembedded: dict[str, list[int]] = {}
        counted: dict[tuple[int, str], tuple[int, int]] = {}
        for kind, item_id, detail, amount in rows:
            if kind in (_COUNTED_IN, _COUNTED_OUT):
                sign = 1 if kind == _COUNTED_IN else -1
                key = (item_id, str(detail))
                files, chunks = counted.get(key, (0, 0))
                counted[key] = (files + sign, chunks + sign * (amount or 0))
            elif kind == _ADDED:
                added.append(item_id)
            elif kind == _REMOVED:
                removed.append(item_id)
            elif kind == _MOVED:
                moved.setdefault(int(detail), []).append(item_id)  # type: ignore[arg-type]
            elif kind == _EMBEDDED:
                embedded.setdefault(str(detail), []).append(item_id)
            else:
                unembedded.setdefault(str(detail), []).append(item_id)
        return cls(tuple(added), tuple(removed), _frozen(moved), _frozen(embedded), _frozen(unembedded), counted)


def _frozen(groups: dict) -> dict:
    return {key: tuple(ids) for key, ids in groups.items()}


Subscriber = Callable[[ChangeSet], None]


def prepare(path: Path) -> int:
    """Create or migrate the file on a plain connection before the async ones open.

    Runs in a worker thread; returns the schema version reached.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        for pragma in PRAGMAS:
            conn.execute(pragma)
        # Takes effect only on a file with no tables yet (a new library); an older one is
        # switched by `ken compact`. It lets removals give their space back (maintenance.py).
        conn.execute("PRAGMA auto_vacuum = INCREMENTAL")
        conn.execute("PRAGMA journal_mode = WAL")
        return migrate(conn)
    finally:
        conn.close()


async def configure(conn: aiosqlite.Connection) -> None:
    for pragma in PRAGMAS:
        await conn.execute(pragma)
    # A supersedes link names a file by the hash of its path; the file's row is matched to
    # it in SQL (store/links.py), which has no sha256 of its own.
    await conn.create_function("path_key", 1, path_key, deterministic=True)


async def _finish(operation: Awaitable[T]) -> T:
    """Await a statement to its end even if the caller is cancelled meanwhile, however
    many times.

    A statement handed to the connection thread runs whatever happens to the coroutine
    that sent it; returning before it ends would let the next statement (a ROLLBACK, the
    next transaction's BEGIN) race it, or skip the ROLLBACK of a BEGIN that had not
    returned yet. A second cancellation (a reload stopping a sweep that shutdown is
    stopping too) must not cut that wait short either. The cancellation is re-raised
    once the statement is done.
    """
    future = asyncio.ensure_future(operation)
    cancelled = False
    while not future.done():
        try:
            await asyncio.shield(future)
        except asyncio.CancelledError:
            if future.cancelled():
                raise
            cancelled = True
        except BaseException:
            break
    if cancelled:
        raise _Cut(future)
    return future.result()


class _Cut(asyncio.CancelledError):
    """The cancellation `_finish` re-raises, holding what the statement it waited for
    did: a write that committed before it must still publish its changes, or what
    follows them (status's counts, the vector index) misses that commit for good."""

    def __init__(self, future: asyncio.Future) -> None:
        super().__init__()
        self.future = future

    def committed(self) -> Any:
        """The statement's result when it ran to its end, else None."""
        if self.future.cancelled() or self.future.exception() is not None:
            return None
        return self.future.result()


def on_thread(conn: aiosqlite.Connection, body: Callable[..., T], *args: Any) -> Awaitable[T]:
    """`body(sqlite3_connection, *args)` on the connection's own thread, in one trip.

    aiosqlite has no public call for this; `_execute` is what each of its own methods
    queues its work through, and `_conn` the sqlite3 connection it owns. The tests that
    store a file exercise both, so an aiosqlite that changes them fails there.
    """
    return conn._execute(body, conn._conn, *args)


class _Abandoned(Exception):
    """A read whose caller was cancelled before its turn on the connection came."""


async def read_until_cancelled(conn: aiosqlite.Connection, body: Callable[..., T], *args: Any) -> T:
    """`on_thread` for a read that is worth nothing once its caller is cancelled.

    Cancelling the caller does not reach the connection's thread: a read already queued
    there behind another caller's ran when its turn came, and one under way ran to its
    end, each holding a reader for no one (a search whose client hung up read its scope
    ahead of the searches still waited for). Cancelled, this one is skipped if it has not
    begun, and interrupted within ABANDON_CHECK_STEPS if it has. Only for reads: a write
    stopped part-way is what `_finish` exists to prevent.
    """
    abandoned = threading.Event()

    def run(raw: sqlite3.Connection, *args: Any) -> T:
        if abandoned.is_set():
            raise _Abandoned
        raw.set_progress_handler(abandoned.is_set, ABANDON_CHECK_STEPS)
        try:
            return body(raw, *args)
        finally:
            raw.set_progress_handler(None, 0)

    try:
        return await on_thread(conn, run, *args)
    except asyncio.CancelledError:
        abandoned.set()
        raise


_DRAIN = "DELETE FROM changes RETURNING kind, item_id, detail, amount"


def _in_transaction(conn: sqlite3.Connection, body: Callable[..., T], args: tuple) -> tuple[T, list]:
    conn.execute("BEGIN IMMEDIATE")
    try:
        result = body(conn, *args)
        rows = conn.execute(_DRAIN).fetchall()
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    return result, rows


def _one_statement(conn: sqlite3.Connection, sql: str, params: tuple | list) -> tuple[list[tuple], list]:
    result = conn.execute(sql, params).fetchall()
    # In autocommit the statement has committed: what its triggers recorded is published.
    return result, conn.execute(_DRAIN).fetchall()


# Errors that say the database cannot be written at all now, whatever is written: the
# disk is full, the file or its directory was made read-only, the disk gives I/O errors,
# another process has held the write lock past the busy timeout (an sqlite3 shell left
# inside a transaction, a backup tool).
_UNWRITABLE = {
    sqlite3.SQLITE_FULL,
    sqlite3.SQLITE_READONLY,
    sqlite3.SQLITE_IOERR,
    sqlite3.SQLITE_CANTOPEN,
    sqlite3.SQLITE_BUSY,
    sqlite3.SQLITE_LOCKED,
}


def unwritable(exc: BaseException) -> bool:
    """Whether `exc` is the store refusing every write for now, not this write alone."""
    code = getattr(exc, "sqlite_errorcode", None)
    return isinstance(exc, sqlite3.Error) and code is not None and (code & 0xFF) in _UNWRITABLE


class Database:
    """Owns the writer and the readers; `open()` migrates before anything else runs."""

    def __init__(self, path: Path, readers: int = READERS) -> None:
        self.path = path
        self._reader_count = readers
        self._writer: aiosqlite.Connection | None = None
        self._readers: asyncio.Queue[aiosqlite.Connection] = asyncio.Queue()
        self._all_readers: list[aiosqlite.Connection] = []
        self._write_lock = asyncio.Lock()
        self._subscribers: list[Subscriber] = []
        # Writes seen to their end, committed or not: what store/until_commit.py keys on.
        self.commits = 0
        # What store/until_commit.py keeps for this database, by name; emptied when idle.
        self.caches: dict[str, Any] = {}
        self._quiet_at = 0.0
        self._idle_timer: asyncio.TimerHandle | None = None
        self._releasing: asyncio.Future | None = None

    async def open(self) -> None:
        try:
            await asyncio.to_thread(prepare, self.path)
        except sqlite3.OperationalError as exc:
            if exc.sqlite_errorcode == sqlite3.SQLITE_FULL:
                raise KenningError(
                    f"the disk holding {self.path.parent} is full ({exc}): free some space and start again;"
                    " nothing indexed is lost"
                ) from exc
            if exc.sqlite_errorcode & 0xFF in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED):
                raise KenningError(
                    f"another process holds the write lock on {self.path} ({exc}): close it (an sqlite3"
                    " shell inside a transaction, a backup) and start again; nothing indexed is lost"
                ) from exc
            if unwritable(exc):
                raise KenningError(
                    f"cannot write the database {self.path} ({exc}): check that it and {self.path.parent}"
                    " are writable by this user and not made read-only or immutable; nothing indexed is lost"
                ) from exc
            raise
        except sqlite3.DatabaseError as exc:
            if is_damage(exc):
                raise KenningError(damaged(self.path, exc)) from exc
            raise
        self._writer = await aiosqlite.connect(self.path, isolation_level=None, cached_statements=WRITER_STATEMENTS)
        await configure(self._writer)
        for statement in _CHANGE_TRACKING:
            await self._writer.execute(statement)
        for _ in range(self._reader_count):
            reader = await aiosqlite.connect(read_only_uri(self.path), uri=True, isolation_level=None)
            await configure(reader)
            self._all_readers.append(reader)
            self._readers.put_nowait(reader)

    async def close(self) -> None:
        """Readers first, then a checkpoint so the WAL is folded back into the main file."""
        if self._idle_timer is not None:
            self._idle_timer.cancel()
            self._idle_timer = None
        if self._releasing is not None:
            await asyncio.gather(self._releasing, return_exceptions=True)
        for reader in self._all_readers:
            await reader.close()
        self._all_readers.clear()
        if self._writer is not None:
            async with self._write_lock:
                try:
                    # Not waiting out another process's lock: that took a stop past its
                    # deadline. What the WAL holds, the next open reads.
                    if not await self._truncate_wal():
                        log.info("the WAL is left for the next start: another process holds the database")
                except sqlite3.Error as exc:
                    log.warning("checkpoint at close failed: %s", exc)
                await self._writer.close()
            self._writer = None

    def subscribe(self, subscriber: Subscriber) -> Callable[[], None]:
        """Call `subscriber` on the event loop after every commit that changed items or
        vectors; returns the function that unsubscribes it. Subscribers must be quick:
        heavy work belongs in a task they wake."""
        self._subscribers.append(subscriber)
        return lambda: self._subscribers.remove(subscriber) if subscriber in self._subscribers else None

    def _touch(self) -> None:
        loop = asyncio.get_running_loop()
        self._quiet_at = loop.time() + IDLE_RELEASE_S
        if self._idle_timer is None:
            self._idle_timer = loop.call_at(self._quiet_at, self._check_idle)

    def _check_idle(self) -> None:
        loop = asyncio.get_running_loop()
        if loop.time() < self._quiet_at:
            self._idle_timer = loop.call_at(self._quiet_at, self._check_idle)
            return
        self._idle_timer = None
        if self._releasing is None or self._releasing.done():
            self._releasing = asyncio.ensure_future(self._release_memory())

    async def _release_memory(self) -> None:
        for cache in self.caches.values():
            cache.clear()
        truncated = True
        try:
            for reader in self._all_readers:
                await reader.execute("PRAGMA shrink_memory")
            if self._writer is not None:
                async with self._write_lock:
                    truncated = await self._truncate_wal()
                    await self._writer.execute("PRAGMA shrink_memory")
        except (sqlite3.Error, ValueError) as exc:
            log.debug("releasing the connections' caches failed: %s", exc)
        await asyncio.to_thread(release_free_memory)
        if not truncated:
            # Another process (an sqlite3 shell left in a transaction, a backup) reads an
            # older snapshot: with no write to come, nothing else would try again, and the
            # WAL would keep the size that reader let it grow to.
            self._touch()

    async def _truncate_wal(self) -> bool:
        """Fold the WAL back into the file and cut it to nothing; False when another
        process's read transaction keeps it. None of this daemon's readers is in the
        middle of a search now, so only another process can; the checkpoint does not wait
        for it (the busy timeout), which would hold every write that long."""
        writer = self._require_writer()
        await writer.execute("PRAGMA busy_timeout = 0")
        try:
            [(busy, _, _)] = await writer.execute_fetchall("PRAGMA wal_checkpoint(TRUNCATE)")
        finally:
            await writer.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        return not busy

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[aiosqlite.Connection]:
        """BEGIN IMMEDIATE on the writer; commit on success, roll back on any exit else.

        Rollback also runs on cancellation, which is how shutdown abandons the file in
        flight without leaving half of it behind. BEGIN, COMMIT and ROLLBACK are each
        seen through to their end even when the caller is cancelled, so the writer is
        never left inside a transaction nobody will finish.
        """
        writer = self._require_writer()
        self._touch()
        async with self._write_lock:
            try:
                await _finish(writer.execute("BEGIN IMMEDIATE"))
                yield writer
                rows = await _finish(writer.execute_fetchall(_DRAIN))
                try:
                    await _finish(writer.execute("COMMIT"))
                except _Cut as cut:
                    if cut.committed() is not None:
                        self._publish(ChangeSet.from_rows(list(rows)))
                    raise
            except BaseException:
                if writer.in_transaction:
                    await _finish(writer.execute("ROLLBACK"))
                raise
            finally:
                self.commits += 1
        self._publish(ChangeSet.from_rows(list(rows)))

    async def write(self, body: Callable[..., T], *args: Any) -> T:
        """`body(conn, *args)` as one transaction, run whole on the writer's thread.

        `body` is plain sqlite3 code. It is seen through to COMMIT or ROLLBACK even when
        the caller is cancelled (the cancellation is re-raised after), so, like
        transaction(), it leaves all of its writes or none; its changes are published
        after COMMIT the same way.
        """
        writer = self._require_writer()
        self._touch()
        async with self._write_lock:
            try:
                result, rows = await _finish(on_thread(writer, _in_transaction, body, args))
            except _Cut as cut:
                self._publish_committed(cut)
                raise
            finally:
                self.commits += 1
        self._publish(ChangeSet.from_rows(rows))
        return result

    async def write_one(self, sql: str, params: tuple | list = ()) -> list[tuple]:
        """One statement as its own transaction, in a single trip to the writer thread.

        Cheaper than transaction() for the many one-row writes of a sweep: every await
        on the writer is a thread hop, and at thousands of files the hops, not SQLite,
        set the ingest rate. What it changes is published after it as a transaction's
        is (a documents row's counts); it is meant for statements on state rows
        (documents, sources), never on items or vectors.
        """
        writer = self._require_writer()
        self._touch()
        async with self._write_lock:
            try:
                result, rows = await _finish(on_thread(writer, _one_statement, sql, params))
            except _Cut as cut:
                self._publish_committed(cut)
                raise
            finally:
                self.commits += 1
        self._publish(ChangeSet.from_rows(rows))
        return result

    async def as_written(self, body: Callable[..., T], *args: Any) -> T:
        """`body(conn, *args)`, a read, on the writer's thread between two writes.

        It reads the library as every write published so far left it, and no later one:
        a view kept by following the published changes (store/tallies.py) reads here
        what it starts from, and follows each change published after.
        """
        writer = self._require_writer()
        self._touch()
        async with self._write_lock:
            return await _finish(on_thread(writer, body, *args))

    def total_changes(self) -> int:
        """Rows the writer has changed since it opened (counted as statements run, before
        their transaction commits)."""
        return self._require_writer().total_changes

    @asynccontextmanager
    async def reader(self) -> AsyncIterator[aiosqlite.Connection]:
        self._touch()
        conn = await self._readers.get()
        try:
            yield conn
        finally:
            self._readers.put_nowait(conn)

    async def read(self, sql: str, params: tuple | list = ()) -> list[tuple]:
        """One query on a pooled reader."""
        async with self.reader() as conn:
            return list(await conn.execute_fetchall(sql, params))

    def _publish_committed(self, cut: _Cut) -> None:
        """A write whose caller was cancelled while it ran on the writer's thread: what
        it committed is published all the same."""
        if (done := cut.committed()) is not None:
            self._publish(ChangeSet.from_rows(done[1]))

    def _publish(self, changes: ChangeSet) -> None:
        if not changes:
            return
        for subscriber in list(self._subscribers):
            try:
                subscriber(changes)
            except Exception:
                log.exception("a change subscriber failed")

    def _require_writer(self) -> aiosqlite.Connection:
        if self._writer is None:
            raise RuntimeError("database is not open")
        return self._writer
