"""Semantic retrieval in the real daemon: a subprocess embedding through a fake Ollama.

The fake runs in the test process on 127.0.0.1 and the daemon reaches it over real
HTTP, so "Ollama is down" is a refused connection, a slow Ollama (`delay`) holds
a re-embed open long enough to watch it and search through it, and one that stops
answering after a page (`hold_embeds_after`) holds it there to kill -9 it.
"""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path

import numpy as np
import pytest

from kenning.workers.embed import PAGE_SIZE
from tests.daemon_harness import DaemonProcess, wait_for
from tests.fake_ollama import FakeOllama, fake_ollama, hashed_embedding

SIGNATURE = "ollama:fake-embed:r1:c2000"
NEW_SIGNATURE = "ollama:fake-embed-2:r1:c2000"
# Small chunks, so a modest folder holds more than one page of the embed job.
CHUNKING = "[chunking]\ntarget_chars = 200\noverlap_chars = 0\n"


@pytest.fixture
def ollama() -> Iterator[FakeOllama]:
    with fake_ollama() as server:
        yield server


def embedder_config(server: FakeOllama, model: str = "fake-embed", batch_size: int = 16) -> str:
    return (
        "[embedder]\n"
        'backend = "ollama"\n'
        f'model = "{model}"\n'
        f'base_url = "{server.url}"\n'
        f"batch_size = {batch_size}\n"
        "timeout = 10\n"
        # The fake's hashed word vectors are not calibrated like a real model's, so the
        # default similarity floor (set for wordllama) would hide its vector hits.
        "[retrieval]\n"
        "min_similarity = -1.0\n" + CHUNKING
    )


def query(library, sql: str, params: tuple = ()) -> list[tuple]:
    with closing(sqlite3.connect(library.data_dir / "kenning.db", timeout=10)) as conn:
        return conn.execute(sql, params).fetchall()


def item_count(library) -> int:
    return query(library, "SELECT count(*) FROM items")[0][0]


def vector_tally(library) -> dict[tuple[str, int], int]:
    """How many stored vectors there are per (signature, dimension)."""
    rows = query(library, "SELECT signature, dim, count(*) FROM vectors GROUP BY 1, 2")
    return {(signature, dim): count for signature, dim, count in rows}


def embedder_status(daemon: DaemonProcess) -> dict:
    return daemon.call("status")["embedder"]


def wait_embedded(daemon: DaemonProcess, library, signature: str, timeout: float = 30) -> dict:
    """Until the job is idle and every item has a vector from `signature`, in memory and on disk."""

    def done() -> dict | None:
        status = embedder_status(daemon)
        items = item_count(library)
        if (
            status["signature"] == signature
            and status["job"]["state"] == "idle"
            and status["vectors"] == items
            and vector_tally(library).get((signature, status["dimension"])) == items
        ):
            return status
        return None

    return wait_for(done, timeout=timeout, what=f"every item to be embedded with {signature}", interval=0.2)


def write_field_guides(folder: Path, files: int = 70, sections: int = 10) -> None:
    """Markdown files of `sections` small sections each: one chunk per section."""
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(files):
        parts = [f"# Field guide {i}", "", "## Part 0", "", f"The kestrel hovers over meadow {i} before it dives.", ""]
        for k in range(1, sections):
            parts += [f"## Part {k}", "", f"Observation {i}.{k}: token{i}x{k} seen near the old mill at dusk.", ""]
        (folder / f"guide{i:03d}.md").write_text("\n".join(parts))


def start_with_field_guides(library, tmp_path: Path, ollama: FakeOllama) -> tuple[DaemonProcess, int, Path]:
    notes = tmp_path / "notes"
    write_field_guides(notes)
    sources = [{"name": "notes", "path": notes}]
    # 64 texts a request: a request costs the fake and the daemon more than its texts
    # do, and 44 requests of 16 made this first embedding 2 s of each test.
    library.configure(sources, extra=embedder_config(ollama, batch_size=64))
    daemon = library.daemon()
    daemon.wait_idle("notes")
    items = item_count(library)
    assert items > PAGE_SIZE, "the re-embed must span more than one page of the embed job"
    wait_embedded(daemon, library, SIGNATURE)
    assert vector_tally(library) == {(SIGNATURE, 64): items}
    return daemon, items, notes


def switch_model(
    library, daemon: DaemonProcess, ollama: FakeOllama, notes: Path, model: str, batch_size: int = 64
) -> None:
    library.configure([{"name": "notes", "path": notes}], extra=embedder_config(ollama, model, batch_size))
    daemon.proc.send_signal(signal.SIGHUP)


def start_embedded(library, tmp_path: Path, ollama: FakeOllama) -> tuple[Path, DaemonProcess]:
    """Two notes, indexed and embedded by the fake Ollama's model."""
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "walrus.md").write_text("# Walrus\n\nThe walrus basks on arctic ice floes.\n")
    (notes / "garden.md").write_text("# Garden\n\nTomatoes and basil grow along the fence.\n")
    library.configure([{"name": "notes", "path": notes}], extra=embedder_config(ollama))
    daemon = library.daemon()
    daemon.wait_idle("notes")
    wait_embedded(daemon, library, SIGNATURE)
    return notes, daemon


def test_embeddings_are_stored_with_the_signature_and_search_uses_the_vector_leg(library, tmp_path, ollama):
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "walrus.md").write_text("# Walrus\n\nThe walrus basks on arctic ice floes.\n")
    (notes / "garden.md").write_text("# Garden\n\nTomatoes and basil grow along the fence.\n")
    (notes / "music.md").write_text("# Music\n\nThe orchestra rehearsed a symphony.\n")
    library.configure([{"name": "notes", "path": notes}], extra=embedder_config(ollama, batch_size=2))
    daemon = library.daemon()
    daemon.wait_idle("notes")
    status = wait_embedded(daemon, library, SIGNATURE)
    items = item_count(library)
    assert status["backend"] == "ollama" and status["model"] == "fake-embed"
    assert (status["dimension"], status["vectors"], status["job"]["last_error"]) == (64, items, None)
    assert vector_tally(library) == {(SIGNATURE, 64): items}
    unembedded = "SELECT count(*) FROM items i LEFT JOIN vectors v ON v.item_id = i.id WHERE v.item_id IS NULL"
    assert query(library, unembedded)[0][0] == 0
    # batch_size bounds what one request carries
    assert ollama.embed_requests >= items / 2

    result = daemon.call("search", {"query": "walrus arctic"})
    assert result["warnings"] == []
    best = result["hits"][0]
    assert best["path"] == str(notes / "walrus.md")
    assert {"keyword", "vector"} <= set(best["legs"]) and {"keyword", "vector"} <= set(best["ranks"])

    vector_only = daemon.call("search", {"query": "walrus arctic", "legs": ["vector"]})["hits"]
    assert vector_only[0]["path"] == str(notes / "walrus.md")
    assert all(hit["legs"] == ["vector"] for hit in vector_only)

    # `reembed` drops this embedder's vectors and the job embeds every item again
    ollama.reset_counters()
    assert daemon.call("reembed") == {"dropped": items}
    wait_embedded(daemon, library, SIGNATURE)
    assert vector_tally(library) == {(SIGNATURE, 64): items}
    assert ollama.texts_embedded == items


def test_a_model_change_reembeds_in_the_background_while_search_keeps_answering(library, tmp_path, ollama):
    daemon, items, notes = start_with_field_guides(library, tmp_path, ollama)
    # 44 requests of 16 texts: the loop below sees the job part-way (after its first
    # page, before its last) 7 or 8 times in 30 on an idle machine, 9 in 35 at 0.12 s.
    ollama.delay = 0.05
    ollama.reset_counters()
    switch_model(library, daemon, ollama, notes, "fake-embed-2", batch_size=16)

    seen: list[dict] = []
    empty: list[tuple[dict, dict]] = []
    deadline = time.monotonic() + 45
    while True:
        result = daemon.call("search", {"query": "kestrel"})
        status = embedder_status(daemon)
        seen.append(status)
        if not result["hits"]:
            empty.append((result, status))
        if status["signature"] == NEW_SIGNATURE and status["job"]["state"] == "idle" and status["vectors"] == items:
            break
        assert time.monotonic() < deadline, f"re-embed did not finish: {status}"
        time.sleep(0.05)

    assert empty == [], f"search came back empty {len(empty)} times during the re-embed, first: {empty[:1]}"
    midway = [
        s for s in seen
        if s["signature"] == NEW_SIGNATURE and s["job"]["state"] == "embedding" and 0 < s["job"]["done"] < items
    ]
    assert midway, f"never saw the job part-way; states seen: {[(s['signature'], s['job']) for s in seen]}"
    job = midway[0]["job"]
    assert job["total"] == items
    assert job["rate_per_second"] > 0 and job["eta_seconds"] is not None

    final = seen[-1]
    assert (final["model"], final["dimension"], final["vectors"]) == ("fake-embed-2", 32, items)
    assert vector_tally(library) == {(NEW_SIGNATURE, 32): items}
    assert ollama.texts_embedded >= items
    hits = daemon.call("search", {"query": "kestrel meadow"})["hits"]
    assert hits and "vector" in hits[0]["legs"]
    assert daemon.stop() == 0
    # Nothing was left running: the threads that embedded the queries end with the daemon.
    assert "still busy" not in daemon.log()


def test_kill_9_mid_reembed_then_restart_finishes_it_without_redoing_committed_pages(library, tmp_path, ollama):
    daemon, items, notes = start_with_field_guides(library, tmp_path, ollama)
    # The fake answers the first page and holds the next: the kill lands mid-re-embed
    # with one page committed, on a loaded machine as on an idle one.
    ollama.reset_counters()
    ollama.hold_embeds_after = PAGE_SIZE
    switch_model(library, daemon, ollama, notes, "fake-embed-2")

    def first_page_committed() -> dict | None:
        status = embedder_status(daemon)
        job = status["job"]
        if status["signature"] == NEW_SIGNATURE and job.get("state") == "embedding" and job["done"] >= PAGE_SIZE:
            return status
        if status["signature"] == NEW_SIGNATURE and job.get("state") == "idle":
            raise AssertionError("the re-embed finished before the kill; the fake's hold let it through")
        return None

    wait_for(first_page_committed, timeout=30, what="the re-embed to commit its first page", interval=0.05)
    daemon.proc.send_signal(signal.SIGKILL)
    daemon.proc.wait()
    ollama.hold_embeds_after = None

    tally = vector_tally(library)
    committed = tally.get((NEW_SIGNATURE, 32), 0)
    assert PAGE_SIZE <= committed < items
    assert sum(tally.values()) == items  # old vectors are overwritten in place, never doubled
    assert tally.get((SIGNATURE, 64), 0) == items - committed

    ollama.reset_counters()
    restarted = library.daemon()
    wait_embedded(restarted, library, NEW_SIGNATURE)
    assert vector_tally(library) == {(NEW_SIGNATURE, 32): items}
    assert query(library, "SELECT count(*) FROM vectors")[0][0] == item_count(library) == items
    # only what the killed run had not committed went to Ollama again
    assert ollama.texts_embedded == items - committed


def test_ollama_down_at_start_then_back_vectors_catch_up(library, tmp_path, ollama):
    ollama.down = True
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "walrus.md").write_text("# Walrus\n\nThe walrus basks on arctic ice floes.\n")
    (notes / "garden.md").write_text("# Garden\n\nTomatoes and basil grow along the fence.\n")
    library.configure([{"name": "notes", "path": notes}], extra=embedder_config(ollama))
    daemon = library.daemon()
    status = daemon.wait_idle("notes")
    assert (status["done"], status["failed"]) == (2, 0)
    items = item_count(library)

    [hit] = daemon.search("walrus")
    assert hit["path"] == str(notes / "walrus.md")
    result = daemon.call("search", {"query": "walrus"})
    assert [h["path"] for h in result["hits"]] == [str(notes / "walrus.md")]
    assert any(f"ollama not reachable at {ollama.url}" in w for w in result["warnings"])

    waiting = wait_for(
        lambda: (s := embedder_status(daemon))["job"]["state"] == "waiting" and s,
        timeout=15, what="the embed job to wait for Ollama",
    )
    assert "ollama not reachable at" in waiting["job"]["last_error"]
    assert f"ollama not reachable at {ollama.url}" in waiting["job"]["last_error"]
    assert vector_tally(library) == {}

    ollama.down = False
    status = wait_embedded(daemon, library, SIGNATURE, timeout=40)
    assert vector_tally(library) == {(SIGNATURE, 64): items}
    assert status["job"]["last_error"] is None
    result = daemon.call("search", {"query": "walrus"})
    assert result["warnings"] == []
    assert {"keyword", "vector"} <= set(result["hits"][0]["legs"])
    # status must not keep reporting a backend problem that has cleared
    assert status["job"]["last_error"] is None


def test_ollama_down_mid_run_new_files_still_indexed_and_vectors_catch_up(library, tmp_path, ollama):
    notes, daemon = start_embedded(library, tmp_path, ollama)
    before = item_count(library)

    ollama.down = True
    (notes / "heron.md").write_text("# Heron\n\nA grey heron stalks the shallows for frogs.\n")
    (notes / "lichen.md").write_text("# Lichen\n\nLichen crusts the north face of the boulder.\n")
    for word, name in (("heron", "heron.md"), ("lichen", "lichen.md")):
        hits = wait_for(lambda: daemon.search(word), timeout=15, what=f"{name} to be indexed while Ollama is down")
        assert hits[0]["path"] == str(notes / name)
    daemon.wait_idle("notes")
    items = item_count(library)
    assert items > before

    waiting = wait_for(
        lambda: (s := embedder_status(daemon))["job"]["state"] == "waiting" and s,
        timeout=15, what="the embed job to wait for Ollama",
    )
    assert f"ollama not reachable at {ollama.url}" in waiting["job"]["last_error"]
    assert vector_tally(library) == {(SIGNATURE, 64): before}
    result = daemon.call("search", {"query": "heron"})
    assert result["hits"][0]["path"] == str(notes / "heron.md") and "vector" not in result["hits"][0]["legs"]
    assert any("not reachable" in w for w in result["warnings"])

    ollama.down = False
    status = wait_embedded(daemon, library, SIGNATURE, timeout=40)
    assert status["job"]["last_error"] is None and status["vectors"] == items
    assert vector_tally(library) == {(SIGNATURE, 64): items}
    result = daemon.call("search", {"query": "heron shallows"})
    assert result["warnings"] == []
    assert result["hits"][0]["path"] == str(notes / "heron.md")
    assert {"keyword", "vector"} <= set(result["hits"][0]["legs"])


def ken(library, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "kenning", "--config", str(library.config), *args],
        capture_output=True, text=True, timeout=60,
    )


def test_a_model_pulled_anew_with_another_dimension_is_reported_and_embedded_again(library, tmp_path, ollama):
    _, daemon = start_embedded(library, tmp_path, ollama)
    items = item_count(library)

    # `ollama pull` of a model of the same name that makes 24-dimensional vectors
    ollama.models["fake-embed"] = 24
    result = daemon.call("search", {"query": "walrus"})
    assert any("the query embeds to 24 dimensions but the index holds 64" in w for w in result["warnings"])
    status = wait_embedded(daemon, library, SIGNATURE)
    assert (status["dimension"], status["model_dimension"], status["mismatched"]) == (24, 24, 0)
    assert vector_tally(library) == {(SIGNATURE, 24): items}
    result = daemon.call("search", {"query": "walrus"})
    assert result["warnings"] == [] and "vector" in result["hits"][0]["legs"]
    assert ken(library, "doctor").returncode == 0

    # A library left with vectors of the old dimension (by a kenning that did not rebuild
    # them), started while Ollama is down: nothing can rebuild them yet, so it is said.
    daemon.stop()
    [(item_id,)] = query(library, "SELECT min(item_id) FROM vectors")
    with closing(sqlite3.connect(library.data_dir / "kenning.db")) as conn, conn:
        conn.execute(
            "UPDATE vectors SET dim = 64, vector = ? WHERE item_id = ?",
            (np.asarray(hashed_embedding("walrus", 64), dtype=np.float32).tobytes(), item_id),
        )
    ollama.down = True
    daemon = library.daemon()
    # The count is known once the index has loaded (`vectors` is null until then).
    loaded = wait_for(
        lambda: (s := embedder_status(daemon))["vectors"] is not None and s, timeout=15, what="the vector index to load"
    )
    assert loaded["mismatched"] == 1
    shown = ken(library, "status")
    assert "1 stored vector of another dimension are left out of the vector leg" in shown.stdout
    doctor = ken(library, "doctor")
    assert doctor.returncode == 1
    assert "1 stored vector of another dimension" in doctor.stdout and "ken reembed" in doctor.stdout

    ollama.down = False
    daemon.call("search", {"query": "walrus"})
    status = wait_embedded(daemon, library, SIGNATURE)
    assert (status["dimension"], status["mismatched"]) == (24, 0)
    assert ken(library, "doctor").returncode == 0
