"""The background job lifecycle against a real SQLite file another process locks."""

from __future__ import annotations

import asyncio
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from kenning.errors import BackendUnavailable
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
    with closing(sqlite3.connect(path)) as setup, setup:
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
    with closing(sqlite3.connect(path)) as check, check:
        assert check.execute("SELECT text FROM notes").fetchall() == [("written",)]


class Counter(Job):
    """A pass that only counts itself; it polls, as the extraction job does."""

    name = "counter"
    poll_seconds = 60.0

    def __init__(self) -> None:
        super().__init__()
        self.passes = 0

    async def run_pass(self) -> None:
        self.passes += 1


@pytest.mark.parametrize("turns", range(4))
async def test_a_job_woken_as_it_is_stopped_stops(turns: int) -> None:
    """Library.close() right after documents.add: the wake and the stop's cancellation
    meet. Each number of loop turns between them is one ordering; with one, the wake
    had ended but the job not yet resumed, and the cancellation was swallowed (Python
    3.11's wait_for returns the result instead), so stop() waited forever."""
    job = Counter()
    job.start()
    await job.request()  # the first pass is done; the job waits for a wake
    job.wake()
    for _ in range(turns):
        await asyncio.sleep(0)
    async with asyncio.timeout(10):
        await job.stop()
    assert not job.running and job.state is JobState.STOPPED


class Stubborn(Job):
    """A pass that swallows the cancellation stop() sends, as code a pass calls may,
    and then finds its backend down."""

    name = "stubborn"

    def __init__(self) -> None:
        super().__init__()
        self.attempts = 0
        self.begun = asyncio.Event()

    async def run_pass(self) -> None:
        self.attempts += 1
        self.begun.set()
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            pass
        raise BackendUnavailable("the backend is down")


async def test_a_stopped_job_retries_nothing_even_if_its_pass_swallowed_the_stop() -> None:
    job = Stubborn()
    job.start()
    await job.begun.wait()
    async with asyncio.timeout(10):
        await job.stop()
    assert not job.running and job.attempts == 1
