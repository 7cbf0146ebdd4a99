"""The daemon as a user meets it: a real process, a real folder, the real socket."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from contextlib import closing
from pathlib import Path

import docx
import pytest
from fpdf import FPDF

from kenning.daemon.protocol import MAX_LINE_BYTES
from kenning.errors import RpcError
from tests.daemon_harness import wait_for
from tests.helpers import add_note_reference, add_notes, add_text_box, wrap_docx


def ken(config: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "kenning", "--config", str(config), *args], capture_output=True, text=True, timeout=60
    )


def make_pdf(path: Path, pages: list[str]) -> None:
    pdf = FPDF()
    pdf.set_font("Helvetica", size=12)
    for text in pages:
        pdf.add_page()
        pdf.multi_cell(0, 10, text)
    pdf.output(str(path))


def make_docx(path: Path) -> None:
    document = docx.Document()
    document.add_heading("Quarterly Report", level=1)
    document.add_paragraph("Opening remarks on the fiscal year.")
    document.add_heading("Revenue", level=2)
    growth = document.add_paragraph("Revenue grew because of the xylophone product line.")
    add_note_reference(growth, "footnote", 1)
    add_notes(document, "footnote", {1: "Figures audited by the okapi committee."})
    add_text_box(growth, "Pull quote: the ocelot range sold out.")
    wrap_docx([document.add_paragraph("Prepared with the narwhal template.")._p], "sdt")
    change = 'w:id="{}" w:author="Ada Okafor" w:date="2026-03-01T09:00:00Z"'
    edited = document.add_paragraph("Margins held ")
    wrap_docx([edited.add_run("despite the wombat recall")._r], "del", change.format(1))
    wrap_docx([edited.add_run("thanks to the pangolin launch")._r], "ins", change.format(2))
    document.add_comment(growth.runs, "Check the axolotl figures.", author="Ada Okafor")
    document.sections[0].footer.paragraphs[0].text = "Issued by the gazelle office"
    document.save(str(path))


def lines_of(path: Path, start: int, end: int) -> str:
    return "\n".join(path.read_text().splitlines()[start - 1 : end])


def test_mixed_folder_is_searchable_with_citations(library, tmp_path):
    notes = tmp_path / "notes"
    (notes / "code").mkdir(parents=True)
    guide = notes / "guide.md"
    guide.write_text(
        "# Setup Guide\n\nIntro paragraph.\n\n## Linux\n\nInstall with the zanzibar package manager.\n\n"
        "## macOS\n\nUse launchd for the quokka service.\n"
    )
    make_pdf(notes / "paper.pdf", ["First page about nothing much.", "Second page mentions the marmoset study."])
    make_docx(notes / "report.docx")
    (notes / "page.html").write_text(
        "<html><head><title>Field Notes</title></head><body><h1>Birds</h1><p>The ptarmigan nests on tundra.</p>"
        "<script>var hidden = 'scriptword';</script></body></html>"
    )
    tool = notes / "code" / "tool.py"
    tool.write_text("import os\n\n\ndef frobnicate(value):\n    return value * 2\n\n\nclass Gadget:\n    pass\n")
    library.configure([{"name": "notes", "path": notes}])
    daemon = library.daemon()
    status = daemon.wait_idle("notes")
    assert (status["done"], status["failed"]) == (5, 0)

    [hit] = daemon.search("zanzibar")
    assert hit["path"] == str(guide)
    assert hit["section"] == "Setup Guide > Linux"
    assert hit["title"] == "Setup Guide"
    assert "zanzibar" in lines_of(guide, hit["line_start"], hit["line_end"])
    assert "**zanzibar**" in hit["snippet"]
    assert hit["legs"] == ["keyword"] and hit["source"] == "notes" and hit["score"] > 0

    [hit] = daemon.search("marmoset")
    assert hit["path"] == str(notes / "paper.pdf")
    assert hit["section"] == "page 2"

    [hit] = daemon.search("xylophone")
    assert hit["path"] == str(notes / "report.docx")
    assert hit["section"] == "Quarterly Report > Revenue"
    # A DOCX's text box, content control, tracked insertion, footnote, comment and footer
    # are found too, each once, and a citation's lines are the extracted text's lines that
    # hold the word; a tracked deletion is not found.
    report = str(notes / "report.docx")
    for word, section in (
        ("ocelot", "Revenue"), ("narwhal", "Revenue"), ("pangolin", "Revenue"),
        ("okapi", "Footnotes"), ("axolotl", "Comments"), ("gazelle", "Footer"),
    ):  # fmt: skip
        [hit] = daemon.search(word)
        assert (hit["path"], hit["section"]) == (report, f"Quarterly Report > {section}")
        lines = {"line_start": hit["line_start"], "line_end": hit["line_end"]}
        cited = daemon.call("documents.read", {"path": report, **lines})
        assert sum(word in line for line in cited["lines"]) == 1
    assert daemon.search("wombat") == []

    [hit] = daemon.search("ptarmigan")
    assert hit["title"] == "Field Notes"
    assert daemon.search("scriptword") == []

    [hit] = daemon.search("frobnicate")
    assert hit["path"] == str(tool)
    assert "def frobnicate" in hit["section"]
    assert "def frobnicate" in lines_of(tool, hit["line_start"], hit["line_end"])

    item = daemon.call("documents.get", {"item_id": hit["item_id"]})["item"]
    assert item["content"] == lines_of(tool, item["line_start"], item["line_end"])

    # the CLI's --json prints the same object the socket returns
    out = subprocess.run(
        [sys.executable, "-m", "kenning", "--config", str(library.config), "search", "quokka", "--json"],
        capture_output=True, text=True, check=True,
    )
    cli_hit = json.loads(out.stdout)["hits"][0]
    assert cli_hit["section"] == "Setup Guide > macOS"
    assert {"item_id", "title", "snippet", "source", "path", "section", "line_start", "line_end", "score", "legs"} <= set(cli_hit)


def test_edits_renames_and_deletions_are_followed(library, tmp_path):
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "a.md").write_text("# Alpha\n\nThe walrus sleeps.\n")
    (notes / "sub").mkdir()
    (notes / "sub" / "b.txt").write_text("A note about gondolas.\n")
    library.configure([{"name": "notes", "path": notes}])
    daemon = library.daemon()
    daemon.wait_idle("notes")
    assert len(daemon.search("walrus")) == 1

    (notes / "a.md").write_text("# Alpha\n\nThe narwhal swims.\n")
    wait_for(lambda: daemon.search("narwhal"), timeout=10, what="edit to be indexed")
    assert daemon.search("walrus") == []

    (notes / "c.md").write_text("Brand new file on pelicans.\n")
    wait_for(lambda: daemon.search("pelicans"), timeout=10, what="new file to be indexed")

    (notes / "sub" / "b.txt").rename(notes / "sub" / "renamed.txt")
    wait_for(
        lambda: [h for h in daemon.search("gondolas") if h["path"].endswith("renamed.txt")],
        timeout=10, what="rename to be followed",
    )
    assert [h["path"] for h in daemon.search("gondolas")] == [str(notes / "sub" / "renamed.txt")]

    (notes / "c.md").unlink()
    wait_for(lambda: daemon.search("pelicans") == [], timeout=10, what="deletion to be followed")

    (notes / "sub").rename(tmp_path / "moved-away")
    wait_for(lambda: daemon.search("gondolas") == [], timeout=10, what="moved-out directory to be dropped")


def test_a_deleted_files_document_id_is_never_given_to_another_file(library, tmp_path):
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "a.md").write_text("# Alpha\n\nThe walrus sleeps.\n")
    (notes / "b.md").write_text("# Beta\n\nThe pelican dives.\n")
    library.configure([{"name": "notes", "path": notes}])
    daemon = library.daemon()
    daemon.wait_idle("notes")
    # The newest id is the one SQLite would hand out again.
    last = max((daemon.search(word)[0] for word in ("walrus", "pelican")), key=lambda hit: hit["document_id"])

    Path(last["path"]).unlink()
    wait_for(lambda: daemon.search(last["title"]) == [], timeout=10, what="deletion to be followed")
    (notes / "c.md").write_text("# Gamma\n\nThe heron waits.\n")
    [heron] = wait_for(lambda: daemon.search("heron"), timeout=10, what="new file to be indexed")

    assert heron["document_id"] != last["document_id"]
    with pytest.raises(RpcError, match="no document") as gone:
        daemon.call("documents.get", {"document_id": last["document_id"]})
    assert gone.value.code == -32001


def test_a_watched_folder_holding_the_daemons_own_log_does_not_index_it_or_sweep_forever(library, tmp_path):
    # The folder the daemon's output goes to (tmp_path/daemon0.log) is the source itself,
    # as when someone runs `ken daemon >> ~/notes/kenning.log` or watches their home.
    (tmp_path / "walrus.md").write_text("# Walrus\n\nThe walrus sleeps on the ice.\n")
    # A hard link to the log is the same file under another name.
    (tmp_path / "daemon0.log").touch()
    os.link(tmp_path / "daemon0.log", tmp_path / "mirror.log")
    library.configure([{"name": "home", "path": tmp_path}])
    daemon = library.daemon()
    state = daemon.wait_idle("home")
    assert state["passed_over"] == {"kenning's own file": 2}
    assert len(daemon.search("walrus")) == 1
    # Every sweep logs a line, which is a change under the folder: had the log been read,
    # each line would ask for another sweep.
    swept = daemon.log().count("source home: swept")
    time.sleep(2)
    assert daemon.log().count("source home: swept") == swept
    assert daemon.search("swept") == []


def test_sensitive_files_and_escaping_symlinks_are_never_read(library, tmp_path):
    notes = tmp_path / "notes"
    (notes / "keys").mkdir(parents=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("The vault combination is okapi.\n")
    (notes / "escape.md").symlink_to(outside / "secret.md")
    (notes / "keys" / "id_rsa").write_text("private key material dugong\n")
    (notes / ".env").write_text("TOKEN=dugong\n")
    (notes / "credentials.json").write_text('{"dugong": 1}\n')
    (notes / "ok.md").write_text("An ordinary note about lemurs.\n")
    library.configure([{"name": "notes", "path": notes}])
    daemon = library.daemon()
    status = daemon.wait_idle("notes")
    assert status["done"] == 1 and status["discovered"] == 1
    assert daemon.search("okapi") == []
    assert daemon.search("dugong") == []
    assert len(daemon.search("lemurs")) == 1
    with closing(sqlite3.connect(library.data_dir / "kenning.db")) as conn, conn:
        stored = "\n".join(row[0] for row in conn.execute("SELECT content FROM items"))
    assert "okapi" not in stored and "dugong" not in stored


def test_a_bad_file_fails_alone_and_an_unreadable_folder_keeps_what_it_held(library, tmp_path):
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "broken.pdf").write_bytes(b"%PDF-1.4 this is not really a pdf")
    (notes / "broken.docx").write_bytes(b"PK\x03\x04 not a zip at all")
    for index in range(5):
        (notes / f"good{index}.md").write_text(f"# Note {index}\n\nHealthy note number {index} about capybaras.\n")
    unreadable = notes / "locked.md"
    unreadable.write_text("locked away\n")
    unreadable.chmod(0)
    folder = notes / "trips"
    folder.mkdir()
    (folder / "iceland.md").write_text("# Iceland\n\nPuffins nest on the cliffs at Latrabjarg.\n")
    library.configure([{"name": "notes", "path": notes}])
    # File modes hold for this daemon as for any user's, root or not.
    daemon = library.daemon(plain_permissions=True)
    status = daemon.wait_idle("notes")
    assert status["done"] == 6
    assert {f["path"]: f["reason"] for f in status["failures"]}.keys() == {"broken.pdf", "broken.docx", "locked.md"}
    assert next(f["reason"] for f in status["failures"] if f["path"] == "locked.md") == "permission denied"
    assert all(f["reason"] for f in status["failures"])
    assert len(daemon.search("capybaras", limit=20)) == 5
    # Asked for by its path, a file that failed is there but unread: the answer says why.
    for method in ("documents.get", "documents.read"):
        with pytest.raises(RpcError, match=r"locked\.md is not indexed \(failed: permission denied\)"):
            daemon.call(method, {"path": str(unreadable)})

    # A folder made unreadable is not a folder emptied: what it held stays searchable,
    # and status and doctor name it.
    folder.chmod(0)
    try:
        assert daemon.call("sources.scan", {"name": "notes", "wait": True})["result"]["deleted"] == 0
        assert [hit["title"] for hit in daemon.search("puffins")] == ["Iceland"]
        # (The folder's change of mode may start a sweep of its own: read once it is done.)
        status = daemon.wait_idle("notes")
        assert status["unreadable_folders"] == {"trips": "Permission denied"}
        assert status["unreadable_kept"] == 1 and status["done"] == 6 and status["percent"] == 100.0
        waited = ken(library.config, "scan", "notes", "--wait")
        assert "notes: searchable (cannot read trips/: kept as last indexed; see `ken status`)" in waited.stdout
        shown = ken(library.config, "status")
        assert "cannot read folder trips/: Permission denied" in shown.stdout
        assert "1 file from unreadable folders kept as last indexed" in shown.stdout
        doctor = ken(library.config, "doctor")
        assert f"cannot read folder {folder}: Permission denied" in doctor.stdout
    finally:
        folder.chmod(0o755)
    daemon.call("sources.scan", {"name": "notes", "wait": True})
    assert daemon.source_status("notes")["unreadable_folders"] == {}

    # So is an indexed file edited and then closed to this user: it is kept as last read
    # and named, until it can be read again. The edit lands already closed (written
    # aside, then renamed over the note), so no sweep the watcher starts can read it
    # between the write and the chmod.
    note = notes / "good0.md"
    edited = tmp_path / "good0.md.new"
    edited.write_text("# Note 0\n\nHealthy note number 0 about capybaras, now with tapirs.\n")
    edited.chmod(0)
    edited.rename(note)
    try:
        swept = daemon.call("sources.scan", {"name": "notes", "wait": True})["result"]
        assert swept["unreadable"] == 1
        assert len(daemon.search("capybaras", limit=20)) == 5 and daemon.search("tapirs") == []
        status = daemon.source_status("notes")
        assert status["unreadable_files"] == {"good0.md": "permission denied"} and status["done"] == 6
        assert "cannot read good0.md: permission denied; kept as last indexed" in ken(library.config, "status").stdout
    finally:
        note.chmod(0o644)
    daemon.call("sources.scan", {"name": "notes", "wait": True})
    assert [hit["title"] for hit in daemon.search("tapirs")] == ["Note 0"]
    assert daemon.source_status("notes")["unreadable_files"] == {}

    # The file that failed for want of permission is read once a chmod lets it in, though
    # a chmod changes no mtime.
    unreadable.chmod(0o644)
    daemon.call("sources.scan", {"name": "notes", "wait": True})
    assert len(daemon.search("locked")) == 1
    assert {f["path"] for f in daemon.source_status("notes")["failures"]} == {"broken.pdf", "broken.docx"}


def test_an_indexed_file_closed_to_this_user_without_an_edit_is_kept_and_named(library, tmp_path):
    notes = tmp_path / "notes"
    notes.mkdir()
    note = notes / "otters.md"
    note.write_text("# Otters\n\nSea otters hold hands while they sleep.\n")
    (notes / "seals.md").write_text("# Seals\n\nGrey seals haul out on the sandbanks.\n")
    library.configure([{"name": "notes", "path": notes}])
    # File modes hold for this daemon as for any user's, root or not.
    daemon = library.daemon(plain_permissions=True)
    assert daemon.wait_idle("notes")["done"] == 2

    # A chmod changes neither mtime nor size, so nothing about the file looks changed.
    note.chmod(0)
    try:
        swept = daemon.call("sources.scan", {"name": "notes", "wait": True})["result"]
        assert (swept["unreadable"], swept["unchanged"]) == (1, 1)
        assert [hit["title"] for hit in daemon.search("otters")] == ["Otters"]
        status = daemon.source_status("notes")
        assert status["unreadable_files"] == {"otters.md": "permission denied"} and status["done"] == 2
        assert "cannot read otters.md: permission denied; kept as last indexed" in ken(library.config, "status").stdout
        assert f"cannot read {note}: permission denied" in ken(library.config, "doctor").stdout
    finally:
        note.chmod(0o644)
    daemon.call("sources.scan", {"name": "notes", "wait": True})
    assert daemon.source_status("notes")["unreadable_files"] == {}
    assert f"cannot read {note}" not in ken(library.config, "doctor").stdout


def test_sigterm_and_kill_9_mid_ingest_then_restart_is_complete_and_consistent(library, tmp_path):
    notes = tmp_path / "notes"
    notes.mkdir()
    filler = " ".join(f"word{n}" for n in range(300))
    count = 300
    for index in range(count):
        body = "\n\n".join(f"Paragraph {p} token{index}x {filler}" for p in range(6))
        (notes / f"doc{index:04d}.md").write_text(f"# Document {index}\n\n{body}\n")
    library.configure([{"name": "notes", "path": notes}])
    daemon = library.daemon()
    wait_for(lambda: daemon.source_status("notes")["done"] >= 30, timeout=60, what="some files to be indexed")
    # SIGTERM mid-ingest: a prompt, clean exit that rolls back the file in flight
    assert daemon.stop(signal.SIGTERM, timeout=15) == 0
    assert not daemon.socket.exists()

    daemon = library.daemon()
    wait_for(lambda: daemon.source_status("notes")["done"] >= 100, timeout=60, what="more files to be indexed")
    before = daemon.source_status("notes")["done"]
    assert before < count, "ingest finished before the kill; make the corpus larger"
    daemon.proc.send_signal(signal.SIGKILL)
    daemon.proc.wait()

    restarted = library.daemon()
    status = restarted.wait_idle("notes", timeout=120)
    assert status["done"] == count and status["failed"] == 0 and status["in_progress"] == 0
    for index in (0, before - 1, before, before + 1, count - 1):
        hits = restarted.search(f"token{index}x", limit=50)
        assert hits and {h["path"] for h in hits} == {str(notes / f"doc{index:04d}.md")}
    restarted.stop()

    with closing(sqlite3.connect(library.data_dir / "kenning.db")) as conn, conn:
        conn.execute("INSERT INTO items_fts(items_fts) VALUES ('integrity-check')")
        assert conn.execute("SELECT count(*) FROM documents").fetchone()[0] == count
        per_doc = conn.execute(
            "SELECT d.chunk_count, count(i.id) FROM documents d LEFT JOIN items i ON i.document_id = d.id"
            " GROUP BY d.id"
        ).fetchall()
        assert all(declared == actual for declared, actual in per_doc)
        duplicates = conn.execute(
            "SELECT count(*) FROM (SELECT document_id, line_start, line_end, content FROM items"
            " GROUP BY 1, 2, 3, 4 HAVING count(*) > 1)"
        ).fetchone()[0]
        assert duplicates == 0
        fts_rows = conn.execute("SELECT count(*) FROM items_fts WHERE items_fts MATCH 'paragraph'").fetchone()[0]
        assert fts_rows == conn.execute("SELECT count(*) FROM items WHERE content LIKE '%Paragraph%'").fetchone()[0]


def _raw_exchange(path: Path, payload: bytes) -> list[dict]:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.settimeout(10)
        conn.connect(str(path))
        conn.sendall(payload)
        conn.shutdown(socket.SHUT_WR)
        data = b""
        while chunk := conn.recv(65536):
            data += chunk
    return [json.loads(line) for line in data.splitlines() if line.strip()]


def test_malformed_socket_input_gets_errors_and_the_daemon_keeps_serving(library, tmp_path):
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "a.md").write_text("Hello about hedgehogs.\n")
    library.configure([{"name": "notes", "path": notes}])
    daemon = library.daemon()
    daemon.wait_idle("notes")
    assert oct(daemon.socket.stat().st_mode & 0o777) == "0o600"

    requests = [
        b"this is not json",
        b"[1, 2, 3]",
        b'{"jsonrpc": "2.0", "id": 1}',
        b'{"jsonrpc": "2.0", "id": 2, "method": "no.such.method"}',
        b'{"jsonrpc": "2.0", "id": 3, "method": "search", "params": {"query": "x", "limit": 0}}',
        b'{"jsonrpc": "2.0", "id": 4, "method": "search", "params": {"query": "x", "colour": "red"}}',
        b'{"jsonrpc": "2.0", "id": 5, "method": "search", "params": "not an object"}',
        b'{"jsonrpc": "2.0", "id": 6, "method": "documents.get", "params": {}}',
        b'{"jsonrpc": "2.0", "id": 7, "method": "search", "params": {"query": "\\" OR NEAR(a b) * -x col:1", "legs": ["keyword"]}}',
        b'{"jsonrpc": "2.0", "id": 8, "method": "search", "params": {"query": "hedgehogs", "source": "nope"}}',
        b'{"jsonrpc": "2.0", "id": 9, "method": "search", "params": {"query": "hedgehogs"}}',
    ]
    responses = _raw_exchange(daemon.socket, b"\n".join(requests) + b"\n")
    codes = [r.get("error", {}).get("code") for r in responses]
    assert codes == [-32700, -32600, -32600, -32601, -32602, -32602, -32602, -32602, None, -32001, None]
    assert "colour" in responses[5]["error"]["message"]
    assert responses[8]["result"]["hits"] == []
    assert responses[10]["result"]["hits"][0]["path"] == str(notes / "a.md")

    oversized = _raw_exchange(
        daemon.socket,
        b'{"jsonrpc": "2.0", "id": 1, "method": "' + b"x" * (MAX_LINE_BYTES + 1) + b'"}\n'
        b'{"jsonrpc": "2.0", "id": 2, "method": "search", "params": {"query": "hedgehogs"}}\n',
    )
    assert oversized[0]["error"]["code"] == -32600
    assert oversized[1]["id"] == 2 and oversized[1]["result"]["hits"]
    assert daemon.search("hedgehogs")[0]["path"] == str(notes / "a.md")
    assert daemon.proc.poll() is None


def test_lifecycle_second_daemon_stale_socket_sigterm_and_reload(library, tmp_path):
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "a.md").write_text("Alpacas graze here.\n")
    other = tmp_path / "other"
    other.mkdir()
    (other / "b.md").write_text("Bonobos live there.\n")
    library.configure([{"name": "notes", "path": notes}])

    # a socket file left behind by a crash: bound, never unlinked, nobody listening
    library.data_dir.mkdir(mode=0o700)
    stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stale.bind(str(library.data_dir / "kenning.sock"))
    stale.close()

    daemon = library.daemon()
    daemon.wait_idle("notes")

    second = subprocess.run(
        [sys.executable, "-m", "kenning", "--config", str(library.config), "daemon"],
        capture_output=True, text=True, timeout=30,
    )
    assert second.returncode != 0
    assert "already" in second.stderr.splitlines()[-1]
    assert daemon.search("alpacas")  # the first daemon still serves

    library.configure([{"name": "notes", "path": notes}, {"name": "other", "path": other}])
    daemon.proc.send_signal(signal.SIGHUP)
    wait_for(lambda: daemon.search("bonobos"), timeout=15, what="SIGHUP to add a source")

    library.configure([{"name": "other", "path": other}])
    out = subprocess.run(
        [sys.executable, "-m", "kenning", "--config", str(library.config), "reload"],
        capture_output=True, text=True, check=True,
    )
    assert "removed: notes" in out.stdout
    assert daemon.search("alpacas") == []

    library.config.write_text(library.config.read_text() + "\n[[sources]]\nnmae = 'typo'\n")
    refused = subprocess.run(
        [sys.executable, "-m", "kenning", "--config", str(library.config), "reload"],
        capture_output=True, text=True,
    )
    assert refused.returncode == 1 and "nmae" in refused.stderr
    assert daemon.search("bonobos")
    library.configure([{"name": "other", "path": other}])

    assert daemon.stop(signal.SIGTERM) == 0
    assert not daemon.socket.exists()
    with closing(sqlite3.connect(library.data_dir / "kenning.db")) as conn, conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"

    for command in (["status"], ["search", "alpacas"], ["sources", "list"], ["scan", "notes"], ["reload"]):
        result = subprocess.run(
            [sys.executable, "-m", "kenning", "--config", str(library.config), *command],
            capture_output=True, text=True,
        )
        assert result.returncode != 0
        assert result.stderr.count("\n") == 1 and "not running" in result.stderr


def test_a_chroots_proc_inside_a_source_is_neither_walked_nor_watched_and_status_says_so(library, tmp_path, mount):
    chroot = tmp_path / "chroot"
    (chroot / "proc").mkdir(parents=True)
    (chroot / "notes.md").write_text("# Notes\n\nThe heron fishes at dawn.\n")
    mount("-t", "proc", "proc", chroot / "proc")
    library.configure([{"name": "chroot", "path": chroot}])
    daemon = library.daemon()
    status = daemon.wait_idle("chroot")
    assert status["holds"] == 1 and status["failed"] == 0 and status["discovered"] == 1
    assert status["passed_over"] == {"system filesystem not entered (proc, sysfs, /dev, /run...)": 1}
    assert "  passed over: 1 system filesystem not entered (proc, sysfs, /dev, /run...)" in ken(
        library.config, "status"
    ).stdout.splitlines()
    # A note written after the watch is up is seen by the watcher, which watches the chroot
    # and nothing under its /proc.
    (chroot / "later.md").write_text("# Later\n\nThe heron sleeps at noon.\n")
    wait_for(lambda: daemon.search("noon"), timeout=30, what="the watcher to index later.md")
    assert "/proc/" not in daemon.log()


def test_a_drive_whose_files_are_all_passed_over_is_known_for_a_drive_once_unmounted(library, tmp_path, mount):
    """The mount was recorded only by a sweep whose walk listed files: a drive holding
    only what the walk passes over (photos, and the folder of notes it can no longer
    list) stayed "not a mount point", as the plain folder at the same place had been,
    and once the drive was unmounted the notes it was keeping went as every file
    deleted. A real tmpfs is the drive."""
    place = tmp_path / "usb"
    (place / "trips").mkdir(parents=True)
    note = "# Iceland\n\nPuffins nest on the cliffs at Latrabjarg.\n"
    (place / "trips" / "iceland.md").write_text(note)
    library.configure([{"name": "usb", "path": place}])
    daemon = library.daemon(plain_permissions=True)
    assert daemon.wait_idle("usb")["done"] == 1
    daemon.stop()

    # The notes move onto a drive mounted there, which holds photos too, and whose
    # trips folder this user may not list.
    shutil.rmtree(place / "trips")
    mount("-t", "tmpfs", "kenning-test", place)
    (place / "trips").mkdir()
    (place / "trips" / "iceland.md").write_text(note)
    (place / "trips").chmod(0)
    (place / "cliffs.jpg").write_bytes(b"\xff\xd8\xff\xe0 not much of a photo")
    daemon = library.daemon(plain_permissions=True)
    assert daemon.call("sources.scan", {"name": "usb", "wait": True})["result"]["deleted"] == 0
    assert daemon.source_status("usb")["unreadable_folders"] == {"trips": "Permission denied"}

    subprocess.run(["umount", str(place)], check=True)
    assert daemon.call("sources.scan", {"name": "usb", "wait": True})["result"]["deleted"] == 0
    assert [hit["title"] for hit in daemon.search("puffins")] == ["Iceland"]
    assert "no longer a mount point" in daemon.source_status("usb")["last_error"]
    daemon.stop()


def test_a_drive_that_is_away_deletes_nothing_though_its_bare_mount_point_holds_files(library, tmp_path, mount):
    """Only an empty mount point was taken for a drive away: a stray file in it (a
    .DS_Store, a note saved there by mistake) made it the truth, and the drive's whole
    index was deleted. Now its files are kept while it is away, what is written there is
    indexed, and files deleted on the drive go once it is back. A real tmpfs is the drive."""
    place = tmp_path / "usb"
    place.mkdir()
    mount("-t", "tmpfs", "kenning-test", place)
    animals = {"lynx": "lynxes hunt hares", "otter": "otters crack shells", "heron": "herons stand still"}
    for name, text in animals.items():
        (place / f"{name}.md").write_text(f"# {name.title()}\n\nThe {text} at dusk.\n")
    library.configure([{"name": "usb", "path": place}])
    daemon = library.daemon()
    assert daemon.wait_idle("usb")["done"] == 3
    # What the drive holds once it is away: the tmpfs is gone with its files.
    saved = {name: (place / f"{name}.md").read_text() for name in animals}

    subprocess.run(["umount", str(place)], check=True)
    (place / ".DS_Store").write_bytes(b"Bud1\x00\x00\x10\x00")
    (place / "note.md").write_text("# Note\n\nSaved here by mistake: the puffins nest in May.\n")
    assert daemon.call("sources.scan", {"name": "usb", "wait": True})["result"]["deleted"] == 0
    for word in ("lynxes", "otters", "herons", "puffins"):
        assert daemon.search(word), word
    assert "no longer a mount point" in daemon.source_status("usb")["last_error"]
    assert "usb" in (shown := ken(library.config, "status").stdout) and "(not mounted: kept as last indexed)" in shown

    # The drive comes back without the otter's note, deleted on it meanwhile.
    mount("-t", "tmpfs", "kenning-test", place)
    for name in ("lynx", "heron"):
        (place / f"{name}.md").write_text(saved[name])
    daemon.call("sources.scan", {"name": "usb", "wait": True})
    assert daemon.search("otters") == [] and daemon.search("puffins") == []
    assert daemon.search("lynxes") and daemon.search("herons")
    assert daemon.source_status("usb")["last_error"] is None
    daemon.stop()


# The rows that keep a file's last indexed text though its status is neither done nor
# merged: what a reader's bug leaves (ingest/pipeline.py `ingest`: failed, its reason,
# its chunks, the limits it was tried with, here the PDF's), and what a daemon killed
# while it read the file leaves (`scanning`, its chunks). Each is written into the
# library: no real input is known to make a reader fail so, nor can a kill be timed.
KEPT_TEXT_ROWS = {
    "failed": "UPDATE documents SET status = 'failed', reason = 'internal error: KeyError: a reader bug',"
    " reading = (SELECT reading FROM documents WHERE path = 'broken.pdf') WHERE path = 'otters.md'",
    "scanning": "UPDATE documents SET status = 'scanning' WHERE path = 'otters.md'",
}


@pytest.mark.parametrize("row", sorted(KEPT_TEXT_ROWS))
def test_text_kept_for_a_file_that_then_is_closed_to_this_user_and_edited_stays_until_it_can_be_read(
    library, tmp_path, row
):
    """A row that kept a file's last indexed text (see KEPT_TEXT_ROWS), whose file was
    then closed to this user and edited, was marked failed for want of permission, and
    that text went from search though nothing said it was wrong."""
    notes = tmp_path / "notes"
    notes.mkdir()
    note = notes / "otters.md"
    note.write_text("# Otters\n\nThe river otters den under the willow roots.\n")
    (notes / "broken.pdf").write_bytes(b"%PDF-1.4 this is not really a pdf")
    library.configure([{"name": "notes", "path": notes}])
    daemon = library.daemon(plain_permissions=True)
    assert daemon.wait_idle("notes")["done"] == 1
    daemon.stop()
    with closing(sqlite3.connect(library.data_dir / "kenning.db")) as conn, conn:
        conn.execute(KEPT_TEXT_ROWS[row])
    note.chmod(0)
    try:
        with open(note, "a") as handle:  # the tests run as root: an edit another user might make
            handle.write("\nThey fish at dusk.\n")
        daemon = library.daemon(plain_permissions=True)
        swept = daemon.call("sources.scan", {"name": "notes", "wait": True})["result"]
        assert swept["unreadable"] == 1 and swept["failed"] == 0
        assert [hit["title"] for hit in daemon.search("willow roots")] == ["Otters"]
        # Settled, so `ken scan --wait` does not wait on it.
        status = daemon.wait_idle("notes")
        assert status["unreadable_files"] == {"otters.md": "permission denied"} and status["in_progress"] == 0
        assert "cannot read otters.md: permission denied; kept as last indexed" in ken(library.config, "status").stdout
        assert daemon.call("sources.scan", {"name": "notes", "wait": True})["result"]["unreadable"] == 1
        assert [hit["title"] for hit in daemon.search("willow roots")] == ["Otters"]
    finally:
        note.chmod(0o644)
    swept = daemon.call("sources.scan", {"name": "notes", "wait": True})["result"]
    assert swept["indexed"] == 1 and [hit["title"] for hit in daemon.search("fish at dusk")] == ["Otters"]
    assert [failure["path"] for failure in daemon.source_status("notes")["failures"]] == ["broken.pdf"]
    daemon.stop()


def test_a_folder_that_may_be_listed_but_not_searched_keeps_what_it_held(library, tmp_path):
    """`chmod -R 644` on a tree takes the search (x) bit off its folders: their names can
    still be listed, but no file in them can be looked at, and the walk passed each over
    as "unreadable or vanished", so every one of them was deleted from the index."""
    notes = tmp_path / "notes"
    trips = notes / "trips"
    trips.mkdir(parents=True)
    (trips / "iceland.md").write_text("# Iceland\n\nPuffins nest on the cliffs at Latrabjarg.\n")
    (notes / "home.md").write_text("# Home\n\nThe quokka pen needs a new gate.\n")
    library.configure([{"name": "notes", "path": notes}])
    daemon = library.daemon(plain_permissions=True)
    assert daemon.wait_idle("notes")["done"] == 2

    trips.chmod(0o644)
    try:
        assert daemon.call("sources.scan", {"name": "notes", "wait": True})["result"]["deleted"] == 0
        assert [hit["title"] for hit in daemon.search("puffins")] == ["Iceland"]
        status = daemon.source_status("notes")
        assert status["unreadable_folders"] == {"trips": "Permission denied"} and status["unreadable_kept"] == 1
        assert status["passed_over"] == {}
        # The source's own folder so: the sweep says it cannot read it, and keeps all.
        notes.chmod(0o644)
        try:
            assert daemon.call("sources.scan", {"name": "notes", "wait": True})["result"]["deleted"] == 0
            assert daemon.source_status("notes")["last_error"] == f"cannot read {notes}: Permission denied"
            assert len(daemon.search("puffins")) == len(daemon.search("quokka")) == 1
        finally:
            notes.chmod(0o755)
    finally:
        trips.chmod(0o755)
    assert daemon.call("sources.scan", {"name": "notes", "wait": True})["result"]["deleted"] == 0
    assert daemon.source_status("notes")["unreadable_folders"] == {}
    daemon.stop()
