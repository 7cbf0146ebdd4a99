"""The parse pool with real worker processes: memory and time limits, crashes, cancellation."""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from kenning.config import ChunkingSettings, LimitsSettings
from kenning.errors import ReaderError, ShutDown
from kenning.ingest.convert import ConvertLimits
from kenning.ingest.pages import PageLimits, prepare_page
from kenning.ingest.parse_pool import ParseInterrupted, ParsePool
from kenning.ingest.readers import ReadLimits
from kenning.store.records import FetchedPage
from tests.hostile_files import docx_many_paragraphs, pdf_stream_bomb

LIMITS = ConvertLimits(read=ReadLimits(), target_chars=1200, overlap_chars=150, max_chunks=10_000)
TIMEOUT = 60.0


def spawned() -> set[int]:
    """Worker processes this test process has (the spawn start method runs spawn_main)."""
    return {child.pid for child in psutil.Process().children() if "spawn_main" in " ".join(child.cmdline())}


async def started_worker(pool: ParsePool, note: Path) -> psutil.Process:
    """Start a one-worker pool and return its worker (other pools may have workers too)."""
    before = spawned()
    await pool.convert(note, "note", LIMITS, TIMEOUT)
    [pid] = spawned() - before
    return psutil.Process(pid)


@pytest.fixture
async def pool():
    parse = ParsePool(workers=1, memory_mb=300)
    yield parse
    await parse.stop()


@pytest.fixture(scope="module")
def slow(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A DOCX that takes seconds to read: 400,000 one-word paragraphs."""
    return docx_many_paragraphs(tmp_path_factory.mktemp("slow") / "slow.docx", 400_000)


@pytest.fixture
def note(tmp_path: Path) -> Path:
    path = tmp_path / "note.md"
    path.write_text("# Kestrels\n\nKestrels hover over fields.\n")
    return path


async def test_a_file_converts_to_chunks(pool: ParsePool, note: Path) -> None:
    converted = await pool.convert(note, "note", LIMITS, TIMEOUT)
    assert converted.title == "Kestrels"
    assert [item.content for item in converted.items] == ["# Kestrels\n\nKestrels hover over fields."]


# Asked of a worker: which of the modules it has no use for it holds. Each costs a worker
# 0.1-0.4 s of CPU as it starts (bench/worker_start.py), paid again whenever the pool
# starts after a minute idle; eval, so that asking imports nothing itself.
HEAVY_HELD = (
    "sorted(set(__import__('sys').modules)"
    " & {'pydantic', 'aiosqlite', 'sqlite3', 'numpy', 'kenning.config', 'kenning.store.database', 'kenning.api'})"
)


async def test_a_worker_that_read_a_page_and_a_file_holds_neither_the_store_nor_the_settings(
    pool: ParsePool, note: Path
) -> None:
    """`ken add-url` on a daemon's idle pool: its worker starts for the page."""
    body = b"<html><head><title>Terns</title></head><body><p>Terns nest on the spit.</p></body></html>"
    page = FetchedPage("https://birds.example/terns", "https://birds.example/terns", body, None, "html", None, None)
    limits = PageLimits.of(ChunkingSettings(), LimitsSettings())
    prepared = await pool.read(prepare_page, (page, limits), TIMEOUT, urgent=True)
    assert (prepared.labels.title, [item.content for item in prepared.items]) == ("Terns", ["Terns nest on the spit."])
    await pool.convert(note, "note", LIMITS, TIMEOUT)
    assert await pool.run(eval, (HEAVY_HELD,), TIMEOUT) == []


async def test_a_pdf_that_inflates_past_the_memory_limit_fails_and_the_pool_goes_on(
    pool: ParsePool, tmp_path: Path, note: Path
) -> None:
    bomb = pdf_stream_bomb(tmp_path / "bomb.pdf", 400 * 1024 * 1024)
    with pytest.raises(ReaderError, match="memory: the parse limit is 300 MB"):
        await pool.convert(bomb, "bomb", LIMITS, TIMEOUT)
    assert (await pool.convert(note, "note", LIMITS, TIMEOUT)).items


async def test_a_parse_over_the_time_limit_is_killed_and_the_pool_goes_on(slow: Path, note: Path) -> None:
    pool = ParsePool(workers=1, memory_mb=1024)
    try:
        with pytest.raises(ReaderError, match="0.5-second parse limit"):
            await pool.convert(slow, "slow", LIMITS, 0.5)
        assert (await pool.convert(note, "note", LIMITS, TIMEOUT)).items
    finally:
        await pool.stop()


async def test_more_chunks_than_the_cap_fail_the_file(pool: ParsePool, tmp_path: Path) -> None:
    path = tmp_path / "long.txt"
    path.write_text("\n\n".join(f"paragraph {i} " + "w" * 1100 for i in range(30)))
    limits = ConvertLimits(read=ReadLimits(), target_chars=1200, overlap_chars=150, max_chunks=20)
    with pytest.raises(ReaderError, match="30 chunks, over the 20-chunk limit"):
        await pool.convert(path, "long", limits, TIMEOUT)


async def test_a_worker_killed_mid_parse_fails_that_file_only(slow: Path, note: Path) -> None:
    pool = ParsePool(workers=1, memory_mb=1024)
    try:
        worker = await started_worker(pool, note)
        parse = asyncio.create_task(pool.convert(slow, "slow", LIMITS, TIMEOUT))
        await asyncio.sleep(0.5)
        os.kill(worker.pid, signal.SIGKILL)
        with pytest.raises(ReaderError, match="crashed"):
            await parse
        assert (await pool.convert(note, "note", LIMITS, TIMEOUT)).items
    finally:
        await pool.stop()


async def test_a_worker_stopped_by_sigterm_is_not_the_file_s_fault(slow: Path, note: Path) -> None:
    pool = ParsePool(workers=1, memory_mb=1024)
    try:
        worker = await started_worker(pool, note)
        parse = asyncio.create_task(pool.convert(slow, "slow", LIMITS, TIMEOUT))
        await asyncio.sleep(0.5)
        os.kill(worker.pid, signal.SIGTERM)
        with pytest.raises(ParseInterrupted):
            await parse
    finally:
        await pool.stop()


async def test_cancelling_a_parse_kills_its_worker_and_stop_does_not_wait(slow: Path, note: Path) -> None:
    pool = ParsePool(workers=1, memory_mb=1024)
    worker = await started_worker(pool, note)
    parse = asyncio.create_task(pool.convert(slow, "slow", LIMITS, TIMEOUT))
    await asyncio.sleep(0.5)
    parse.cancel()
    with pytest.raises(asyncio.CancelledError):
        await parse
    started = time.monotonic()
    await pool.stop()
    assert time.monotonic() - started < 5
    assert not worker.is_running() or worker.status() == psutil.STATUS_ZOMBIE
    with pytest.raises(ParseInterrupted):
        await pool.convert(note, "note", LIMITS, TIMEOUT)


async def test_idle_workers_exit_and_the_next_file_starts_them_again(note: Path) -> None:
    pool = ParsePool(workers=1, memory_mb=300, idle_seconds=0.5)
    try:
        worker = await started_worker(pool, note)
        await asyncio.sleep(2)
        assert not worker.is_running() or worker.status() == psutil.STATUS_ZOMBIE
        assert (await pool.convert(note, "note", LIMITS, TIMEOUT)).items
    finally:
        await pool.stop()


async def test_stopping_the_pool_fails_what_is_in_flight_or_queued_at_once(slow: Path, note: Path) -> None:
    """pebble never settles a task its stop() abandons: whoever awaited one waited for
    ever (a sweep's parse, the extraction job's batch) instead of learning it was shut down."""
    pool = ParsePool(workers=1, memory_mb=1024)
    await started_worker(pool, note)
    parse = asyncio.create_task(pool.convert(slow, "slow", LIMITS, TIMEOUT))
    queued = asyncio.create_task(pool.run(time.sleep, (30,), TIMEOUT))
    await asyncio.sleep(0.5)
    await pool.stop()
    async with asyncio.timeout(10):
        with pytest.raises(ParseInterrupted, match="stopped"):
            await parse
        with pytest.raises(ShutDown, match="stopped"):
            await queued


def nap(seconds: float, name: str) -> str:
    """Work of a known length, run in a worker."""
    time.sleep(seconds)
    return name


async def test_an_urgent_task_goes_before_background_work_already_queued() -> None:
    """`ken add-url` converts its page in the pool a sweep's files use: it must not wait
    for every file queued ahead of it (sweeps of several folders queue many), only for
    the one a worker is busy with."""
    pool = ParsePool(workers=1, memory_mb=300)
    finished: list[str] = []

    async def task(name: str, urgent: bool = False) -> None:
        finished.append(await pool.run(nap, (1.0, name), TIMEOUT, urgent))

    try:
        await pool.run(nap, (0, "start"), TIMEOUT)
        background = [asyncio.create_task(task(f"file {n}")) for n in range(4)]
        await asyncio.sleep(0.3)  # the first file is running, the rest wait
        await task("page", urgent=True)
        await asyncio.gather(*background)
    finally:
        await pool.stop()
    assert finished == ["file 0", "page", "file 1", "file 2", "file 3"]


STOPPED_WHILE_A_WORKER_STARTS = '''
import asyncio, os, sys, time
from pathlib import Path

if __name__ == "__mp_main__":
    # Each worker imports this script as it starts. The one pebble started second (the
    # higher pid) is slow, as a worker spawned on a loaded machine is: pebble ends its
    # workers in the order it started them, so it is still starting while the first,
    # busy, is waited on. Which went on first was left to chance, and half the time
    # pebble ended the slow one first, before it could fail.
    workers = Path(os.environ["WORKERS"])
    (workers / str(os.getpid())).touch()
    deadline = time.monotonic() + 30
    while len(list(workers.iterdir())) < 2 and time.monotonic() < deadline:
        time.sleep(0.01)
    if os.getpid() == max(int(worker.name) for worker in workers.iterdir()):
        time.sleep(1.5)

def busy():
    return sum(range(10**10))  # in C: the SIGTERM handler waits for it

def quick():
    return 1

async def main():
    from kenning.ingest.parse_pool import ParsePool
    pool = ParsePool(2, 1024)
    await pool.run(quick, (), 60, urgent=True)
    parse = asyncio.ensure_future(pool.run(busy, (), 60, urgent=True))
    await asyncio.sleep(0.3)
    await pool.stop()
    try:
        await parse
    except Exception:
        pass

if __name__ == "__main__":
    asyncio.run(main())
'''


def test_a_stop_while_a_worker_is_still_starting_leaves_no_traceback(tmp_path: Path) -> None:
    """pebble unlinks its semaphores, then ends its workers one at a time, waiting for each:
    the second worker of a new pool, still starting, found them gone and printed a
    traceback to the daemon's log at an ordinary `ken stop` (seen in CI) while the first,
    busy in a parser's C code, took its time to die."""
    script = tmp_path / "stopped_while_starting.py"
    script.write_text(STOPPED_WHILE_A_WORKER_STARTS)
    (tmp_path / "workers").mkdir()
    env = {**os.environ, "WORKERS": str(tmp_path / "workers"), "PYTHONPATH": os.environ.get("PYTHONPATH", "")}
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr


def marked_nap(marker: str, seconds: float) -> str:
    """A parse that says it has started, then takes `seconds`."""
    Path(marker).touch()
    time.sleep(seconds)
    return "read"


async def test_stopping_one_pool_leaves_another_pools_parse_in_flight_alone(tmp_path: Path) -> None:
    """A stop sent SIGTERM to every worker process its process had, so another pool there
    lost its parse in flight (WorkerStopped) and its workers. The daemon has one pool;
    this suite's process has several: the session's pool for in-process sweeps, each
    test's own, and the estimate's of a `ken sources add` run through CliRunner."""
    busy, other = ParsePool(workers=1, memory_mb=300), ParsePool(workers=1, memory_mb=300)
    marker = tmp_path / "started"
    try:
        await other.run(os.getpid, (), TIMEOUT)
        parse = asyncio.create_task(busy.run(marked_nap, (str(marker), 3.0), TIMEOUT))
        async with asyncio.timeout(30):
            while not marker.exists():
                await asyncio.sleep(0.05)
        await other.stop()
        assert await parse == "read"
    finally:
        await busy.stop()
        await other.stop()


def busy_in_c() -> int:
    """A parser's C code, as far as a signal can tell: its SIGTERM handler waits for it."""
    return sum(range(10**10))


async def test_a_stop_with_every_worker_busy_in_c_ends_them_within_the_stop_wait(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """pebble waited 3 s for each worker before it killed it: two busy in a parser's C code
    outlasted the 5 s stop wait, and the daemon logged that its workers did not stop."""
    pool = ParsePool(workers=2, memory_mb=1024)
    await pool.run(nap, (0, "start"), TIMEOUT)
    busy = [asyncio.ensure_future(pool.run(busy_in_c, (), TIMEOUT, urgent=True)) for _ in range(2)]
    await asyncio.sleep(0.5)
    with caplog.at_level(logging.WARNING, logger="kenning.ingest.parse_pool"):
        await pool.stop()
    assert "did not stop" not in caplog.text
    for parse in busy:
        with pytest.raises(ShutDown):
            await parse
