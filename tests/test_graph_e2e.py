"""The entity graph in the real daemon: offline by default, Ollama (faked over real HTTP)
when configured, and the offline extractor covering for Ollama while it is down.

The fake model is a tiny one: every capitalised phrase of a chunk is an entity, and so
is "Zanzibar Protocol", which no offline extraction could produce, so finding it proves
the chunk went through the model.
"""

from __future__ import annotations

import json
import re
import signal
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path

import pytest

from tests.daemon_harness import DaemonProcess, wait_for
from tests.fake_ollama import FakeOllama, fake_ollama

OFFLINE = "offline:v3"
LLM = "ollama:fake-chat:v1"
MARKER = "Zanzibar Protocol"
GARBLE = "garblemark"

_BLOCK = re.compile(r"<<<BEGIN_UNTRUSTED_CHUNK_([0-9a-f]{32})>>>\n(.*)\n<<<END_UNTRUSTED_CHUNK_\1>>>", re.DOTALL)
_CAPITALISED = re.compile(r"\b[A-Z][a-zø]+(?: [A-Z][a-zø]+)*")

FILES = {
    "falcon.md": "# Falcon\n\nProject Falcon is led by Maria Chen.\n",
    "office.md": "# Office\n\nMaria Chen works from the Tromsø office.\n",
    "garden.md": "# Garden\n\nTomatoes from Bergen need sun and water.\n",
    "boats.md": "# Boats\n\nThe Nordic Ferry sails to Svalbard.\n",
    "birds.md": "# Birds\n\nThe ptarmigan nests near Lake Inari.\n",
}


def chunk_of(request: dict) -> str:
    user = next(message["content"] for message in request["messages"] if message["role"] == "user")
    match = _BLOCK.search(user)
    assert match, "the chunk is not inside a nonce-fenced block"
    return match.group(2)


def tiny_model(request: dict) -> str:
    """Capitalised phrases and the marker entity; the marker relates to each of them."""
    chunk = chunk_of(request)
    if GARBLE in chunk:
        return '{"entities": [{"name": '  # cut off mid-reply
    names = [name for name in dict.fromkeys(_CAPITALISED.findall(chunk)) if name != "The"]
    return json.dumps(
        {
            "entities": [{"name": MARKER, "type": "protocol", "aliases": ["ZP"]}]
            + [{"name": name, "type": "thing", "aliases": []} for name in names],
            "relations": [{"source": MARKER, "target": name, "type": "governs"} for name in names],
        }
    )


@pytest.fixture
def ollama() -> Iterator[FakeOllama]:
    with fake_ollama() as server:
        server.chat_reply = tiny_model
        yield server


def llm_config(server: FakeOllama, pool: int = 2) -> str:
    return (
        "[llm]\n"
        'backend = "ollama"\n'
        'model = "fake-chat"\n'
        f'base_url = "{server.url}"\n'
        f"extraction_pool_size = {pool}\n"
        "timeout = 10\n"
    )


def write_files(folder: Path, files: dict[str, str]) -> Path:
    folder.mkdir(exist_ok=True)
    for name, text in files.items():
        (folder / name).write_text(text)
    return folder


def query(library, sql: str, params: tuple = ()) -> list[tuple]:
    with closing(sqlite3.connect(library.data_dir / "kenning.db", timeout=10)) as conn:
        return conn.execute(sql, params).fetchall()


def signatures(library) -> dict[str, int]:
    return dict(query(library, "SELECT signature, count(*) FROM extractions GROUP BY 1"))


def graph_status(daemon: DaemonProcess) -> dict:
    return daemon.call("status")["graph"]


def wait_extracted(daemon: DaemonProcess, extractor: str, timeout: float = 30) -> dict:
    """Until the job is idle under `extractor` with nothing left to mine."""

    def done() -> dict | None:
        status = graph_status(daemon)
        if status["extractor"] == extractor and status["pending"] == 0 and status["job"]["state"] == "idle":
            return status
        return None

    return wait_for(done, timeout=timeout, what=f"every chunk extracted by {extractor}")


def entity(daemon: DaemonProcess, name: str) -> dict | None:
    found = daemon.call("entities", {"query": name})["entities"]
    return next((entry for entry in found if entry["name"] == name), None)


def test_an_indexed_folder_gets_an_offline_graph_the_entities_method_shows(library, tmp_path):
    notes = write_files(tmp_path / "notes", FILES)
    library.configure([{"name": "notes", "path": notes}])
    daemon = library.daemon()
    daemon.wait_idle("notes")

    status = wait_extracted(daemon, OFFLINE)
    assert status["backend"] == "offline" and status["model"] is None
    assert status["entities"] > 0 and status["relations"] > 0 and status["failed"] == 0

    maria = entity(daemon, "Maria Chen")
    assert maria is not None
    assert maria["mentions"] == 2
    assert {chunk["path"] for chunk in maria["chunks"]} == {str(notes / "falcon.md"), str(notes / "office.md")}
    for chunk in maria["chunks"]:
        assert chunk["source"] == "notes" and chunk["line_start"] <= chunk["line_end"]
        assert {"item_id", "title", "section"} <= chunk.keys()
    others = {relation["other"] for relation in maria["relations"]}
    assert {"Project Falcon", "Tromsø"} <= others
    item_ids = {chunk["item_id"] for chunk in maria["chunks"]}
    assert all(relation["item_id"] in item_ids and relation["kind"] for relation in maria["relations"])

    # Through the graph, a question about Falcon reaches the office note that never names it.
    hits = daemon.call("search", {"query": "Who leads Project Falcon and where is their office?", "legs": ["graph"]})
    assert str(notes / "office.md") in {hit["path"] for hit in hits["hits"]}

    out = subprocess.run(
        [sys.executable, "-m", "kenning", "--config", str(library.config), "entities", "Maria Chen"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert "Maria Chen" in out.stdout and "office.md" in out.stdout and "Tromsø" in out.stdout
    assert daemon.call("entities", {"query": "nobody by this name"})["entities"] == []


def test_switching_to_ollama_re_extracts_the_library_through_a_bounded_pool(library, tmp_path, ollama):
    notes = write_files(tmp_path / "notes", FILES)
    library.configure([{"name": "notes", "path": notes}])
    daemon = library.daemon()
    daemon.wait_idle("notes")
    wait_extracted(daemon, OFFLINE)
    chunks = query(library, "SELECT count(*) FROM items")[0][0]
    assert chunks == len(FILES)
    assert entity(daemon, MARKER) is None

    # Slow enough answers that an unbounded client would have every chunk in flight at once.
    ollama.chat_delay = 0.3
    library.configure([{"name": "notes", "path": notes}], extra=llm_config(ollama, pool=2))
    daemon.proc.send_signal(signal.SIGHUP)

    status = wait_extracted(daemon, LLM)
    assert status["backend"] == "ollama" and status["model"] == "fake-chat"
    assert signatures(library) == {LLM: chunks}
    assert len(ollama.chat_requests) == chunks
    for request in ollama.chat_requests:
        assert request["model"] == "fake-chat"
        assert request["think"] == "high"
        assert isinstance(request["format"], dict)
        assert {"entities", "relations"} <= request["format"]["properties"].keys()
    assert ollama.chat_max_in_flight == 2

    marker = entity(daemon, MARKER)
    assert marker is not None and marker["mentions"] == chunks
    assert marker["kind"] == "protocol" and marker["aliases"] == ["zp"]
    assert {"Maria Chen", "Tromsø", "Project Falcon"} <= {relation["other"] for relation in marker["relations"]}
    assert {relation["kind"] for relation in marker["relations"]} == {"governs"}
    # An alias finds its entity, listed under its own name.
    assert daemon.call("entities", {"query": "ZP"})["entities"][0]["name"] == MARKER


def test_a_malformed_reply_fails_one_chunk_and_leaves_it_searchable(library, tmp_path, ollama):
    files = {**FILES, "odd.md": f"# Odd\n\nThe {GARBLE} ledger of Quentin Harrow.\n"}
    notes = write_files(tmp_path / "notes", files)
    library.configure([{"name": "notes", "path": notes}], extra=llm_config(ollama))
    daemon = library.daemon()
    daemon.wait_idle("notes")

    status = wait_extracted(daemon, LLM)
    assert status["failed"] >= 1
    [(odd,)] = query(library, "SELECT id FROM items WHERE content LIKE ?", (f"%{GARBLE}%",))
    [(state, attempts, error, retry_at)] = query(
        library, "SELECT status, attempts, error, retry_at FROM extractions WHERE item_id = ?", (odd,)
    )
    assert (state, attempts) == ("failed", 1) and "malformed" in error and retry_at is not None

    [hit] = daemon.search(GARBLE)
    assert hit["item_id"] == odd and hit["path"] == str(notes / "odd.md")
    marker = entity(daemon, MARKER)
    assert marker is not None and marker["mentions"] == len(FILES)
    assert odd not in {chunk["item_id"] for chunk in marker["chunks"]}
    assert daemon.proc.poll() is None
    assert daemon.call("status")["daemon"]["pid"] == daemon.proc.pid


def test_a_model_answering_garbage_leaves_offline_entities_and_doctor_says_so(library, tmp_path, ollama):
    ollama.chat_reply = lambda request: "Sure! Here are the entities: Maria Chen, Falcon."
    notes = write_files(tmp_path / "notes", {name: FILES[name] for name in ("falcon.md", "office.md")})
    library.configure([{"name": "notes", "path": notes}], extra=llm_config(ollama))
    daemon = library.daemon()
    daemon.wait_idle("notes")
    chunks = query(library, "SELECT count(*) FROM items")[0][0]

    status = wait_for(
        lambda: (s := wait_extracted(daemon, LLM))["failed"] == chunks and s, timeout=30, what="every chunk to fail"
    )
    assert "malformed" in status["job"]["last_error"]
    assert query(library, "SELECT DISTINCT signature, status FROM extractions") == [(LLM, "failed")]
    # The graph leg still joins the two notes through the person both name.
    maria = entity(daemon, "Maria Chen")
    assert maria is not None and maria["mentions"] == 2
    doctor = subprocess.run(
        [sys.executable, "-m", "kenning", "--config", str(library.config), "doctor"],
        capture_output=True, text=True, timeout=60,
    )
    assert doctor.returncode == 1
    assert f"{chunks} chunks failed with fake-chat, the last with:" in doctor.stdout and "malformed" in doctor.stdout

    # The model behaves again and the retries come due: its answers replace the stand-ins.
    ollama.chat_reply = tiny_model
    with closing(sqlite3.connect(library.data_dir / "kenning.db", timeout=10)) as conn, conn:
        conn.execute("UPDATE extractions SET retry_at = 0")
    (notes / "boats.md").write_text(FILES["boats.md"])
    status = wait_for(
        lambda: (s := wait_extracted(daemon, LLM))["failed"] == 0 and s, timeout=30, what="the retries to succeed"
    )
    assert status["job"]["last_error"] is None
    marker = entity(daemon, MARKER)
    assert marker is not None and marker["mentions"] == chunks + 1


def test_while_ollama_is_down_new_chunks_get_an_offline_graph_until_it_returns(library, tmp_path, ollama):
    notes = write_files(tmp_path / "notes", {name: FILES[name] for name in ("falcon.md", "office.md")})
    library.configure([{"name": "notes", "path": notes}], extra=llm_config(ollama))
    daemon = library.daemon()
    daemon.wait_idle("notes")
    wait_extracted(daemon, LLM)

    ollama.down = True
    (notes / "harbour.md").write_text("# Harbour\n\nQuillon Vestergaard founded the Brisk Harbour cooperative.\n")
    wait_for(lambda: daemon.search("Vestergaard"), timeout=20, what="the new file to be indexed")
    wait_for(lambda: entity(daemon, "Quillon Vestergaard"), timeout=20, what="offline entities for the new file")

    def waiting() -> dict | None:
        job = graph_status(daemon)["job"]
        return job if job["state"] == "waiting" else None

    job = wait_for(waiting, timeout=20, what="the extraction job to wait for ollama")
    assert "ollama" in job["last_error"]
    [(harbour,)] = query(library, "SELECT id FROM items WHERE content LIKE '%Vestergaard%'")
    assert query(library, "SELECT signature, status FROM extractions WHERE item_id = ?", (harbour,)) == [
        (OFFLINE, "ok")
    ]
    assert graph_status(daemon)["pending"] == 1
    assert daemon.proc.poll() is None

    ollama.down = False
    wait_extracted(daemon, LLM, timeout=30)
    assert query(library, "SELECT signature, status FROM extractions WHERE item_id = ?", (harbour,)) == [(LLM, "ok")]
    marker = entity(daemon, MARKER)
    assert marker is not None and harbour in {chunk["item_id"] for chunk in marker["chunks"]}
    assert graph_status(daemon)["job"]["last_error"] is None


def test_status_shows_no_chunk_pending_beside_an_idle_job_once_a_pass_has_mined_them(library, tmp_path, ollama):
    """Status kept its count of pending chunks for 5 s, even past the end of the pass that
    mined them: `ken status` said the job was idle with chunks still to mine."""
    ollama.chat_delay = 0.3  # a pass long enough for status to count its chunks pending
    notes = write_files(tmp_path / "notes", FILES)
    library.configure([{"name": "notes", "path": notes}], extra=llm_config(ollama))
    daemon = library.daemon()
    seen_pending = False

    def idle_after_pending() -> dict | None:
        nonlocal seen_pending
        status = graph_status(daemon)
        if status["job"]["state"] == "idle" and seen_pending:
            return status
        seen_pending = seen_pending or bool(status["pending"])
        return None

    status = wait_for(idle_after_pending, timeout=30, what="a pass to mine the chunks", interval=0.02)
    assert status["pending"] == 0
    assert signatures(library) == {LLM: len(FILES)}
