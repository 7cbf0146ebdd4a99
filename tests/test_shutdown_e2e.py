"""SIGTERM to exit within one deadline, whatever the daemon is doing at the time.

Each case catches the daemon in the middle of something it cannot finish quickly: an
embedding call to an Ollama that never answers, extraction requests hung in the LLM
pool, a long first sweep. The daemon must be gone within 10 s of the signal, and what
it had indexed must still be there, whole, at the next start.
"""

from __future__ import annotations

import asyncio
import signal
import sqlite3
import time
from contextlib import closing
from pathlib import Path

import pytest

from kenning.daemon.supervisor import within
from tests.daemon_harness import DaemonProcess, wait_for
from tests.fake_ollama import FakeOllama, fake_ollama

DEADLINE_SECONDS = 10.0


def stop_timed(daemon: DaemonProcess) -> float:
    assert daemon.proc is not None
    started = time.monotonic()
    daemon.proc.send_signal(signal.SIGTERM)
    daemon.proc.wait(timeout=30)
    return time.monotonic() - started


def write_notes(folder: Path, count: int, words: int = 300) -> Path:
    folder.mkdir()
    for n in range(count):
        body = " ".join(f"word{(n * 7 + k) % 5000}" for k in range(words))
        (folder / f"note{n:05}.md").write_text(f"# Note {n}\n\nThe heron number {n}. {body}\n")
    return folder


def consistent(db_path: Path) -> None:
    with closing(sqlite3.connect(db_path)) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
        conn.execute("INSERT INTO items_fts(items_fts) VALUES ('integrity-check')")


def ollama_config(ollama: FakeOllama) -> str:
    return (
        f'[embedder]\nbackend = "ollama"\nmodel = "fake-embed"\nbase_url = "{ollama.url}"\ntimeout = 120\n'
        f'[llm]\nbackend = "ollama"\nmodel = "fake-chat"\nbase_url = "{ollama.url}"\ntimeout = 120\n'
        "extraction_pool_size = 2\n"
    )


def test_sigterm_exits_in_time_while_ollama_hangs_on_embedding_and_extraction(library, tmp_path):
    notes = write_notes(tmp_path / "notes", 20, words=40)
    with fake_ollama() as ollama:
        library.configure([{"name": "notes", "path": notes}], extra=ollama_config(ollama))
        ollama.delay = 600.0
        ollama.chat_hang = 1000
        daemon = library.daemon()
        wait_for(lambda: daemon.wait_idle("notes"), timeout=30, what="the folder to be indexed")
        wait_for(lambda: ollama.embed_requests > 0 and ollama.chat_in_flight > 0, timeout=30,
                 what="an embedding call and extraction requests hung in Ollama")
        took = stop_timed(daemon)
    assert took < DEADLINE_SECONDS, f"exit took {took:.1f}s:\n{daemon.log()}"
    assert daemon.proc.returncode == 0
    assert not daemon.socket.exists()
    consistent(library.data_dir / "kenning.db")
    again = library.daemon()
    assert again.source_status("notes")["holds"] == 20
    assert len(again.search("heron", limit=50)) == 20
    again.stop()


def test_sigterm_exits_in_time_in_the_middle_of_a_long_first_sweep(library, tmp_path):
    notes = write_notes(tmp_path / "notes", 400)
    library.configure([{"name": "notes", "path": notes}])
    daemon = library.daemon()
    wait_for(lambda: 0 < daemon.source_status("notes")["holds"] < 300, timeout=60,
             what="the first sweep to be under way")
    took = stop_timed(daemon)
    assert took < DEADLINE_SECONDS, f"exit took {took:.1f}s:\n{daemon.log()}"
    consistent(library.data_dir / "kenning.db")
    again = library.daemon()
    status = again.wait_idle("notes", timeout=120)
    assert status["holds"] == 400 and status["failed"] == 0
    assert len(again.search("heron", limit=200)) == 200
    again.stop()


def test_sigterm_with_clients_mid_request_logs_no_traceback(library, tmp_path):
    """Connections cut off at shutdown, a line half-sent on each, each logged "ERROR
    asyncio: Exception in callback ... CancelledError" with a traceback: a hundred idle
    clients, a hundred tracebacks after an ordinary `ken stop`."""
    import socket

    notes = write_notes(tmp_path / "notes", 3, words=20)
    library.configure([{"name": "notes", "path": notes}])
    daemon = library.daemon()
    clients = []
    try:
        for _ in range(5):
            conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            conn.connect(str(daemon.socket))
            conn.sendall(b'{"jsonrpc": "2.0", "id": 1, "meth')
            clients.append(conn)
        time.sleep(0.5)
        took = stop_timed(daemon)
    finally:
        for conn in clients:
            conn.close()
    assert took < DEADLINE_SECONDS and daemon.proc.returncode == 0
    assert "Traceback" not in daemon.log() and "ERROR" not in daemon.log(), daemon.log()


# A statement that keeps SQLite busy for about a second on the writer's thread.
SLOW_STATEMENT = "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 5000000) SELECT count(*) FROM n"


async def test_the_shutdown_deadline_cuts_short_a_store_write_in_flight(db):
    """A write in flight when the deadline comes is cancelled through the store's own
    cancellation (it carries what the write committed); the deadline still ends the
    wait, where it used to let that cancellation out of the loop and leave the daemon
    waiting on the database's threads for good."""
    assert not await within(time.monotonic() + 0.2, db.write_one(SLOW_STATEMENT))
    # The statement ran to its end on the writer's thread all the same, and the store
    # takes the next write.
    assert await db.write_one("SELECT 1") == [(1,)]


async def test_a_cancellation_from_outside_still_ends_a_wait_the_deadline_had_cut():
    """The work cut by the deadline may take a while to wind down (a store write is seen
    through to its COMMIT); a cancellation of the caller meanwhile was taken for the
    deadline's and swallowed, so the caller went on as if only the deadline had passed."""

    async def write() -> None:
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            await asyncio.sleep(30)  # winding down when the caller is cancelled
            raise

    waiting = asyncio.create_task(within(time.monotonic() + 0.1, write()))
    await asyncio.sleep(0.5)
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting
