"""A misbehaving Ollama (issue 12, items 5 and 6), through the real daemon and a fake
Ollama over real HTTP: errors, answers that are not JSON, embeddings of the wrong shape
and a hung embed call. Embedding and extraction must back off and recover by
themselves, no wrong-shaped vector may reach the index, and searches must answer from
the other legs within their budget."""

from __future__ import annotations

import socket
import sqlite3
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import closing

import pytest

from click.testing import CliRunner

from kenning.cli import main
from tests.daemon_harness import wait_for
from tests.fake_ollama import FakeOllama, fake_ollama


@pytest.fixture
def ollama() -> Iterator[FakeOllama]:
    with fake_ollama() as server:
        yield server


def _config(server: FakeOllama) -> str:
    return (
        "[embedder]\n"
        'backend = "ollama"\n'
        'model = "fake-embed"\n'
        f'base_url = "{server.url}"\n'
        "timeout = 30\n"
        "[llm]\n"
        'backend = "ollama"\n'
        'model = "fake-chat"\n'
        f'base_url = "{server.url}"\n'
        "[retrieval]\n"
        "min_similarity = -1.0\n"
    )


def _dimensions(library) -> set[int]:
    with closing(sqlite3.connect(library.data_dir / "kenning.db", timeout=10)) as conn:
        return {dim for (dim,) in conn.execute("SELECT DISTINCT dim FROM vectors")}


def _vectors(daemon) -> int:
    return daemon.call("status")["embedder"]["vectors"] or 0


@pytest.mark.parametrize("mode", ["error500", "garbage", "wrong_dim"])
def test_embedding_and_extraction_recover_after_ollama_misbehaves(library, ollama, mode):
    notes = library.root / "notes"
    notes.mkdir()
    (notes / "wombat.md").write_text("# Wombats\n\nWombats dig burrows with strong claws.\n")
    library.configure([{"name": "notes", "path": str(notes)}], extra=_config(ollama))
    daemon = library.daemon()
    wait_for(lambda: _vectors(daemon) >= 1, timeout=30, what="the first vector")
    ollama.mode = mode
    for n in range(3):
        daemon.call("documents.add", {"title": f"quoll {n}", "text": f"Quolls hunt at night {n}.", "source_uri": f"t://{n}"})
    embedder = wait_for(
        lambda: (e := daemon.call("status")["embedder"])["job"]["last_error"] and e, timeout=30, what="a backend error"
    )
    assert embedder["vectors"] == 1
    # A default search (all legs) still answers while the backend misbehaves.
    answer = daemon.call("search", {"query": "quolls at night"})
    assert answer["hits"] and answer["warnings"]
    ollama.mode = None
    wait_for(lambda: _vectors(daemon) >= 4, timeout=60, what="embedding to resume by itself")
    wait_for(lambda: daemon.call("status")["graph"]["pending"] == 0, timeout=60, what="extraction to resume")
    assert daemon.call("status")["embedder"]["job"]["last_error"] is None
    assert _dimensions(library) == {64}
    answer = daemon.call("search", {"query": "quolls at night"})
    assert answer["warnings"] == [] and "vector" in answer["hits"][0]["legs"]
    assert daemon.stop() == 0


def test_an_embedder_failing_to_start_as_nobody_foresaw_says_why_and_recovers_by_itself(library, ollama):
    """An error no handler knew (ollama's client meeting a JSON list where Ollama answers an
    object: a TypeError) ended the embedder's start: vector search stayed off for good,
    "loading" in status and a note in doctor, however soon Ollama was fixed; only a
    restart brought it back."""
    notes = library.root / "notes"
    notes.mkdir()
    (notes / "wombat.md").write_text("# Wombats\n\nWombats dig burrows with strong claws.\n")
    ollama.mode = "json_list"
    library.configure([{"name": "notes", "path": str(notes)}], extra=_config(ollama).split("[llm]")[0])
    daemon = library.daemon()
    daemon.wait_idle("notes")
    job = wait_for(
        lambda: (job := daemon.call("status")["embedder"]["job"])["state"] == "waiting" and job,
        timeout=20,
        what="the embedder to wait for its backend",
    )
    said = "the ollama embedder failed: TypeError: ollama._types.EmbedResponse() argument after ** must be a mapping"
    assert job["last_error"].startswith(said), job
    answer = daemon.call("search", {"query": "wombats burrows"})
    assert answer["hits"] and answer["warnings"] == [f"vector leg skipped: {job['last_error']}"]
    doctor = CliRunner().invoke(main, ["--config", str(library.config), "doctor"])
    assert f"PROBLEM embedder: ollama cannot embed: {said}" in doctor.output
    ollama.mode = None
    wait_for(lambda: _vectors(daemon) >= 1, timeout=60, what="embedding to start by itself")
    answer = daemon.call("search", {"query": "wombats burrows"})
    assert answer["warnings"] == [] and "vector" in answer["hits"][0]["legs"]
    assert daemon.stop() == 0


def test_texts_the_model_cannot_embed_are_counted_in_status_and_doctor_across_a_restart(library, ollama):
    """Named only in the log: status and doctor said nothing of them, and a restart forgot
    them (and asked the model for them again)."""
    notes = library.root / "notes"
    notes.mkdir()
    (notes / "garden.md").write_text("# Garden\n\nShe planted tomatoes and basil.\n")
    (notes / "wombat.md").write_text("# Wombats\n\nWombats dig burrows with strong claws.\n")
    ollama.poison_word = "tomatoes"
    library.configure([{"name": "notes", "path": str(notes)}], extra=_config(ollama).split("[llm]")[0])
    daemon = library.daemon()
    daemon.wait_idle("notes")
    wait_for(lambda: daemon.call("status")["embedder"]["left_out"] == 1, timeout=30, what="the text to be left out")
    said = "1 text left to keyword search: the embedder failed on it; `ken reembed` tries again"
    assert said in CliRunner().invoke(main, ["--config", str(library.config), "status"]).output
    assert daemon.stop() == 0
    daemon = library.daemon()
    assert daemon.call("status")["embedder"]["left_out"] == 1
    assert f"note    embedder: {said}" in CliRunner().invoke(main, ["--config", str(library.config), "doctor"]).output
    ollama.poison_word = None
    daemon.call("reembed")
    wait_for(
        lambda: (e := daemon.call("status")["embedder"])["left_out"] == 0 and e["vectors"] == 2,
        timeout=30,
        what="`ken reembed` to embed the text",
    )
    assert daemon.stop() == 0


def test_a_hung_embed_call_does_not_hold_searches(library, ollama):
    notes = library.root / "notes"
    notes.mkdir()
    for n in range(20):
        (notes / f"n{n}.md").write_text(f"# Numbat {n}\n\nNumbats eat termites, note {n}.\n")
    library.configure([{"name": "notes", "path": str(notes)}], extra=_config(ollama))
    daemon = library.daemon()
    daemon.wait_idle("notes")
    wait_for(lambda: _vectors(daemon) >= 20, timeout=30, what="the notes to be embedded")
    ollama.mode = "hang"
    # Two searches whose clients hang up before the embedder's budget (0.5 s) is out:
    # their calls still hold both query-embedding threads past it, so the next search
    # skips the leg at once instead of waiting its budget out in the queue behind them.
    for asked in (1, 2):
        with socket.socket(socket.AF_UNIX) as hasty:
            hasty.connect(str(daemon.socket))
            hasty.sendall(b'{"jsonrpc":"2.0","id":1,"method":"search","params":{"query":"numbats"}}\n')
            wait_for(lambda: ollama.hung_requests >= asked, timeout=10, what="the search to ask the embedder", interval=0.01)
    time.sleep(1.0)
    skipped = daemon.call("search", {"query": "numbats termites"})
    assert skipped["hits"] and any("has not answered the last 2" in w for w in skipped["warnings"]), skipped

    def timed_search(_: int) -> tuple[float, dict]:
        started = time.monotonic()
        answer = daemon.call("search", {"query": "numbats termites"})
        return time.monotonic() - started, answer

    # A search held by the hung call would wait out the embedder's 30 s timeout; one that
    # gives up on it at query_embed_timeout (0.5 s) answers in a moment, though a loaded
    # machine can stretch that moment to seconds.
    for seconds, answer in [timed_search(0), *ThreadPoolExecutor(5).map(timed_search, range(5))]:
        assert seconds < 10.0
        assert answer["hits"]
        assert any("did not answer" in w or "has not answered" in w for w in answer["warnings"]), answer["warnings"]
    ollama.mode = None
    wait_for(
        lambda: not daemon.call("search", {"query": "numbats termites"})["warnings"],
        timeout=60,
        what="searches to use the vector leg again",
    )
    assert daemon.stop() == 0


def test_vectors_the_index_cannot_read_are_named_by_doctor_with_the_fix(library, ollama):
    """A stored vector cut short keeps the index from coming up: vector search stays off
    and the daemon tries again with backoff. Doctor said the embedder "cannot embed" and
    sent the user to [embedder] in the config, which was fine; `ken reembed` is the fix."""
    notes = library.root / "notes"
    notes.mkdir()
    (notes / "wombat.md").write_text("# Wombats\n\nWombats dig burrows with strong claws.\n")
    library.configure([{"name": "notes", "path": str(notes)}], extra=_config(ollama).split("[llm]")[0])
    daemon = library.daemon()
    wait_for(lambda: _vectors(daemon) == 1, timeout=30, what="the note to be embedded")
    assert daemon.stop() == 0
    with closing(sqlite3.connect(library.data_dir / "kenning.db", timeout=10)) as conn, conn:
        conn.execute("UPDATE vectors SET vector = x'00010203'")
    daemon = library.daemon()
    wait_for(lambda: daemon.call("status")["embedder"]["job"]["state"] == "waiting", timeout=30, what="the bring-up to fail")
    doctor = CliRunner().invoke(main, ["--config", str(library.config), "doctor"]).output
    assert "PROBLEM embedder: vector search is off: the embedder could not start: ValueError" in doctor, doctor
    assert "`ken reembed` drops them" in doctor and "see [embedder] in the config" not in doctor
    daemon.call("reembed")
    wait_for(lambda: _vectors(daemon) == 1, timeout=30, what="`ken reembed` to bring vector search back")
    assert daemon.stop() == 0
