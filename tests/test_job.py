"""The background job lifecycle against a real SQLite file another process locks."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from kenning.workers.job import Job, JobState


class Writer(Job):
    """A pass that writes once to the database, as embedding and extraction passes do."""

    name = "writer"

    def __init__(self, path: Path, holder: sqlite3.Connection) -> None:
        super().__init__()
        self.path = path
        self.holder = holder
        self.attempts = 0
        self.seen: list[tuple[JobState, str | None]] = []

    async def run_pass(self) -> None:
        self.attempts += 1
        conn = sqlite3.connect(self.path, timeout=0, isolation_level=None)
        try:
            conn.execute("BEGIN IMMEDIATE")
            conn.execute("INSERT INTO notes VALUES ('written')")
            conn.execute("COMMIT")
        except sqlite3.OperationalError:
            # Let go once the first attempt has met the lock, as the other process would.
            self.holder.rollback()
            raise
        finally:
            conn.close()
        self.seen.append((self.state, self.last_error))


async def test_a_pass_that_meets_another_process_s_write_lock_waits_and_is_tried_again(tmp_path: Path) -> None:
    path = tmp_path / "kenning.db"
    with sqlite3.connect(path) as setup:
        setup.execute("CREATE TABLE notes (text TEXT)")
    holder = sqlite3.connect(path)
    holder.execute("BEGIN IMMEDIATE")
    job = Writer(path, holder)
    job.start()
    try:
        await job.request()
    finally:
        await job.stop()
        holder.close()
    # Waited with the reason, then written on the next try, not failed.
    assert job.attempts == 2
    assert job.seen == [(JobState.RUNNING, "database is locked")]
    with sqlite3.connect(path) as check:
        assert check.execute("SELECT text FROM notes").fetchall() == [("written",)]
