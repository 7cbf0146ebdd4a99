"""An error's text is cut wherever a person or an agent sees it, against the real daemon
over its real socket: the daemon's replies, what `ken` prints, the daemon's log. Each
once came whole, holding whatever value the error quoted: a source named with a megabyte
in the config came back from `ken reload` as a megabyte on the terminal."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys

from kenning.errors import MAX_ERROR_CHARS
from tests.daemon_harness import wait_for
from tests.fake_ollama import fake_ollama

HUGE = "x" * (1 << 20)


def _ken(library, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "kenning", "--config", str(library.config), *args],
        capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=60,
    )  # fmt: skip


def _reply(path, method: str) -> dict:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.connect(str(path))
        conn.settimeout(30)
        conn.sendall(json.dumps({"jsonrpc": "2.0", "id": 1, "method": method}).encode() + b"\n")
        data = b""
        while not data.endswith(b"\n"):
            chunk = conn.recv(1 << 16)
            if not chunk:
                break
            data += chunk
    return json.loads(data)


def _notes(library):
    notes = library.root / "notes"
    notes.mkdir(exist_ok=True)
    (notes / "a.md").write_text("# Hedgehogs\n\nHedgehogs hibernate in winter.\n")
    return notes


def test_a_megabyte_source_name_in_the_config_is_a_short_reload_error_and_the_daemon_goes_on(library):
    notes = _notes(library)
    library.configure([{"name": "notes", "path": str(notes)}])
    daemon = library.daemon()
    daemon.wait_idle("notes")
    library.configure([{"name": "notes", "path": str(notes)}, {"name": HUGE, "path": str(notes)}])

    # The name is cut where the error names it, so what is wrong with it is still said:
    # quoted whole, it filled the message, which was cut before saying.
    error = _reply(daemon.socket, "reload")["error"]
    assert error["message"].startswith(f"{library.config}: sources['xxxx")
    assert "… [cut from 1,048,576 characters]'].name: String should match pattern" in error["message"]
    assert len(error["message"]) < len(str(library.config)) + 200

    done = _ken(library, "reload")
    assert done.returncode == 1 and done.stdout == ""
    [line] = done.stderr.splitlines()
    assert line == f"ken: {error['message']}"

    # Nothing changed: the previous configuration is kept, and the daemon answers.
    assert [source["name"] for source in daemon.call("status")["sources"]] == ["notes"]
    assert daemon.search("hedgehogs")


def test_a_usage_error_quoting_a_long_path_is_cut(library):
    library.configure([])
    path = "/tmp/" + "p" * 100_000  # about as long as one argument may be
    done = _ken(library, "sources", "add", path)
    assert done.returncode == 1
    assert done.stderr.startswith("ken: /tmp/ppp") and "is 100,005 bytes long; this system opens paths" in done.stderr
    assert "cut from" in done.stderr and len(done.stderr) < MAX_ERROR_CHARS + 500


def test_each_record_of_the_daemons_log_is_one_line_and_bounded(library):
    """A file name may hold a line break, which wrote a line that read as a record of its
    own; a config refused at SIGHUP was logged whole, a megabyte a line."""
    notes = _notes(library)
    forged = "broken\n2026-01-01 00:00:00,000 ERROR kenning.forged: not the daemon's.docx"
    (notes / forged).write_bytes(b"PK\x03\x04 not a zip")
    library.configure([{"name": "notes", "path": str(notes)}])
    daemon = library.daemon()
    daemon.wait_idle("notes")
    library.configure([{"name": "notes", "path": str(notes)}, {"name": HUGE, "path": str(notes)}])
    daemon.proc.send_signal(signal.SIGHUP)
    wait_for(lambda: "reload refused" in daemon.log(), timeout=30, what="the refused reload in the log")

    lines = daemon.log().splitlines()
    [refused] = [line for line in lines if "reload refused" in line]
    assert "sources['xxxx" in refused and "cut from" in refused
    assert max(len(line) for line in lines) < MAX_ERROR_CHARS + 100
    [failed] = [line for line in lines if "broken" in line]
    assert "broken\\n2026-01-01 00:00:00,000 ERROR kenning.forged" in failed
    assert not any(line.startswith("2026-01-01") for line in lines)
    assert daemon.search("hedgehogs")


def test_a_megabyte_error_from_ollama_is_cut_in_status_searches_and_the_log(library):
    """Ollama passes on what its runner printed, and a proxy in front of it its own error
    page: the backend's words reach `ken status`, each search's warnings and the log."""
    notes = _notes(library)
    with fake_ollama() as ollama:
        extra = "".join(
            f'[{part}]\nbackend = "ollama"\nmodel = "{model}"\nbase_url = "{ollama.url}"\n'
            for part, model in (("embedder", "fake-embed"), ("llm", "fake-chat"))
        )
        library.configure([{"name": "notes", "path": str(notes)}], extra=extra)
        ollama.error_text = "runner crashed: " + HUGE
        ollama.mode = "error500"
        daemon = library.daemon()
        daemon.wait_idle("notes")
        job = wait_for(
            lambda: daemon.call("status")["embedder"]["job"]["last_error"], timeout=30, what="the backend's error"
        )
        assert job.startswith("ollama error 500: runner crashed: xxx") and job.endswith(" characters]")
        assert len(job) <= MAX_ERROR_CHARS
        graph = wait_for(lambda: daemon.call("status")["graph"]["job"]["last_error"], timeout=30, what="extraction")
        assert graph.startswith("ollama error 500: runner crashed: xxx") and len(graph) <= MAX_ERROR_CHARS
        warnings = daemon.call("search", {"query": "hedgehogs"})["warnings"]
        assert warnings and max(len(warning) for warning in warnings) <= MAX_ERROR_CHARS
        status = _ken(library, "status")
        assert status.returncode == 0 and max(len(line) for line in status.stdout.splitlines()) <= MAX_ERROR_CHARS + 100
        assert max(len(line) for line in daemon.log().splitlines()) < MAX_ERROR_CHARS + 100


def test_ken_doctor_shows_a_megabyte_config_error_cut(library):
    notes = _notes(library)
    library.configure([{"name": HUGE, "path": str(notes)}])
    done = _ken(library, "doctor")
    assert done.returncode == 1
    [found] = [line for line in done.stdout.splitlines() if "config:" in line]
    assert "sources['xxxx" in found and "characters]'].name: String should match pattern" in found
    assert len(done.stdout) < 2 * MAX_ERROR_CHARS
    checks = json.loads(_ken(library, "doctor", "--json").stdout)
    assert max(len(check["found"]) for check in checks) <= MAX_ERROR_CHARS


def test_removing_a_source_by_a_name_no_source_can_have_is_refused_before_asking(library):
    library.configure([])
    done = _ken(library, "sources", "remove", "y" * 100_000)
    assert done.returncode == 1 and "Remove source" not in done.stderr
    [line] = done.stderr.splitlines()
    assert line.startswith("ken: no source is named 'yyy") and "cut from 100,000 characters" in line
    assert len(line) < 400
