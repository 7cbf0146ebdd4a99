"""The counts `status` and `sources.list` show: each source's documents by state, with
their chunks, and the first failures of each source that has any.

Counting them reads an index entry per document (8 ms at 100,000 documents, 25 ms and
more on a loaded machine), and a library being written commits many times a second: an
agent's document is stored, embedded and mined in a commit each. Read afresh after every
commit, each `status` while an agent wrote paid for the count again. So the counts are
read once, on the writer's thread between two writes (`Database.as_written`), and then
follow what each commit published it did to documents rows (store/database.py records
every row written, by trigger, whichever store function wrote it). A commit that touches
no documents row, such as a vector or an extraction written, leaves them as they are.

The failures shown are read from a reader when a source has any and none are kept; a
commit that fails a file, or changes or clears a failed one, drops them. They are dropped
with the counts once the library is idle (store/database.py), and read again on the next
call, so nothing they could have missed outlives a quiet spell.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

from kenning.api import Failure
from kenning.store.database import ChangeSet, Database, on_thread


@dataclass(frozen=True)
class SourceCounts:
    """What one source holds: documents it owns (`done`) and copies it shares (`merged`)."""

    done: int = 0
    merged: int = 0
    failed: int = 0
    skipped: int = 0
    scanning: int = 0
    chunks: int = 0

    @property
    def holds(self) -> int:
        return self.done + self.merged


@dataclass(frozen=True)
class Tallies:
    """What `status` and `sources.list` count: each source's documents by state, and the
    first failures of each source that has any."""

    by_source: dict[int, SourceCounts]
    failures: dict[int, list[Failure]]

    @property
    def library_documents(self) -> int:
        """Documents in the library, each counted once however many sources hold it: a
        shared copy is `merged` in every source but its owner's."""
        return sum(counts.done for counts in self.by_source.values())


async def tallies(db: Database, failures_each: int = 20) -> Tallies:
    """The counts as the last commit published them; at most `failures_each` failures
    a source."""
    if _NAME not in db.caches:
        db.caches[_NAME] = KeptTallies(db)
    return await db.caches[_NAME].get(failures_each)


_NAME = "status tallies"

TALLY_SQL = (
    "SELECT source_id, status, count(*), coalesce(sum(chunk_count), 0) FROM documents GROUP BY source_id, status"
)


class KeptTallies:
    """The counts by (source id, status), kept by following the published changes."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self.counts: dict[tuple[int, str], tuple[int, int]] | None = None
        # failures_each -> source id -> its first failures, for the sources that have any
        self.failures: dict[int, dict[int, list[Failure]]] = {}
        # Moves at each change followed and at each clear: what was read across an await
        # that one came during is used once but not kept.
        self.version = 0
        self.built: dict[int, Tallies] = {}
        db.subscribe(self._follow)

    def _follow(self, changes: ChangeSet) -> None:
        if not changes.counted:
            return
        if self.counts is not None:
            for key, (files, chunks) in changes.counted.items():
                held_files, held_chunks = self.counts.get(key, (0, 0))
                if held_files + files:
                    self.counts[key] = (held_files + files, held_chunks + chunks)
                else:
                    self.counts.pop(key, None)
        if any(status == "failed" for _, status in changes.counted):
            self.failures.clear()
        self.built.clear()
        self.version += 1

    def clear(self) -> None:
        self.counts = None
        self.failures.clear()
        self.built.clear()
        self.version += 1

    async def get(self, failures_each: int) -> Tallies:
        if (built := self.built.get(failures_each)) is not None:
            return built
        if self.counts is None:
            # Read between two writes: every change published before it is in it, and
            # every one published after it follows (`_follow`), none twice or missed.
            self.counts = await self.db.as_written(_counts)
        by_source = _by_source(self.counts)
        seen = self.version
        failures = self.failures.get(failures_each)
        if failures is None:
            failing = [source_id for source_id, counts in by_source.items() if counts.failed]
            failures = {}
            if failing:
                async with self.db.reader() as conn:
                    failures = await on_thread(conn, _failures, failing, failures_each)
            if seen != self.version:
                return Tallies(by_source, failures)
            self.failures[failures_each] = failures
        built = self.built[failures_each] = Tallies(by_source, failures)
        return built


def _counts(conn: sqlite3.Connection) -> dict[tuple[int, str], tuple[int, int]]:
    return {(source_id, status): (files, chunks) for source_id, status, files, chunks in conn.execute(TALLY_SQL)}


def _by_source(counts: dict[tuple[int, str], tuple[int, int]]) -> dict[int, SourceCounts]:
    tally: dict[int, dict[str, int]] = {}
    for (source_id, status), (files, chunks) in counts.items():
        entry = tally.setdefault(source_id, {"chunks": 0})
        entry[status] = files
        entry["chunks"] += chunks
    return {source_id: SourceCounts(**entry) for source_id, entry in sorted(tally.items())}


def _failures(conn: sqlite3.Connection, source_ids: list[int], limit: int) -> dict[int, list[Failure]]:
    """A folder's files by path; agent text and pages by their shown uri, as their key is a hash."""
    return {
        source_id: [
            Failure(path, reason)
            for path, reason in conn.execute(
                "SELECT coalesce(uri, path) AS shown, reason FROM documents WHERE source_id = ? AND status = 'failed'"
                " ORDER BY shown LIMIT ?",
                (source_id, limit),
            )
        ]
        for source_id in source_ids
    }
