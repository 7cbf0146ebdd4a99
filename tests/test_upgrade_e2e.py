"""How a file's text is read: a library stored by an older reading is read again, and a
word is found however its characters were written. A real daemon, a real folder, the
real SQLite file an older kenning would have left."""

from __future__ import annotations

import hashlib
import os
import shutil
import sqlite3
import subprocess
import sys
import unicodedata
from contextlib import closing
from pathlib import Path

import docx
import pytest

from kenning.errors import RpcError
from kenning.ingest import readers
from kenning.ingest.convert import ConvertLimits, convert_file
from kenning.ingest.readers import ReadLimits
from kenning.store.migrations import MIGRATIONS
from kenning.text.redacted import MARK, MARKS
from tests.daemon_harness import wait_for
from tests.helpers import make_pdf
from tests.web_server import Handler, serving


# What each schema from 17 on added, newest first (an index before its column): undone
# in this order, a library is as an older kenning left it. A migration that adds to the
# tables adds its undoing here.
ADDED_BY_SCHEMA = (
    (28, "ALTER TABLE items DROP COLUMN date_first"),
    (27, "DROP INDEX archives_kept"),
    (27, "ALTER TABLE archives DROP COLUMN kept_at"),
    (26, "DROP INDEX documents_namespace"),
    (25, "DROP INDEX capsules_created"),
    (24, "DROP TABLE owed"),
    (22, "ALTER TABLE documents DROP COLUMN date_end"),
    (21, "DROP INDEX extractions_pending"),
    (19, "ALTER TABLE sources DROP COLUMN root_identity"),
    (18, "ALTER TABLE sources DROP COLUMN root_mount"),  # schema 14 held root_mounted instead
    (17, "ALTER TABLE sources DROP COLUMN last_sweep_kept"),
)


def as_schema(conn: sqlite3.Connection, version: int) -> None:
    """The library at `conn` made as schema `version` left it, as far as later schemas
    added to it; what a test needs of the older schema itself, it adds."""
    for added_by, undo in ADDED_BY_SCHEMA:
        if added_by > version:
            conn.execute(undo)
    conn.execute(f"PRAGMA user_version = {version}")


def ken(config: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "kenning", "--config", str(config), *args], capture_output=True, text=True, timeout=60
    )


def item_ids(library, path: str) -> list[int]:
    with closing(sqlite3.connect(library.data_dir / "kenning.db")) as conn, conn:
        rows = conn.execute(
            "SELECT i.id FROM items i JOIN documents d ON d.id = i.document_id WHERE d.path = ? ORDER BY i.ord",
            (path,),
        )
        return [item_id for (item_id,) in rows]


def document_items(library, document_id: int) -> list[int]:
    with closing(sqlite3.connect(library.data_dir / "kenning.db")) as conn, conn:
        rows = conn.execute("SELECT id FROM items WHERE document_id = ? ORDER BY ord", (document_id,))
        return [item_id for (item_id,) in rows]


def on_disk(database: Path) -> bytes:
    """The database file and its WAL as they lie on disk, whatever SQLite would return."""
    wal = database.with_name(database.name + "-wal")
    return database.read_bytes() + (wal.read_bytes() if wal.exists() else b"")


def test_a_secret_an_older_redactor_missed_is_gone_after_the_upgrade(library, tmp_path):
    notes = tmp_path / "notes"
    notes.mkdir()
    raw = "# Ops\n\nThe kakapo database login: PGPASSWORD=hunter2secret psql -h db1\n"
    (notes / "ops.md").write_text(raw)
    (notes / "birds.md").write_text("# Birds\n\nThe quokka is not a bird; the kea is.\n")
    library.configure([{"name": "notes", "path": notes}])
    daemon = library.daemon()
    daemon.wait_idle("notes")
    assert not daemon.search("hunter2secret")
    kept = item_ids(library, "birds.md")
    daemon.stop()

    # What an older kenning, whose redaction missed this form, left behind: the secret
    # stored and indexed, and no record of how the file was read.
    with closing(sqlite3.connect(library.data_dir / "kenning.db")) as conn, conn:
        conn.execute("UPDATE items SET content = ? WHERE id = ?", (raw.split("\n", 2)[2], item_ids(library, "ops.md")[0]))
        conn.execute("UPDATE documents SET reading = NULL")
    daemon = library.daemon()
    daemon.wait_idle("notes")
    assert not daemon.search("hunter2secret"), "the secret stored before the upgrade is still searchable"
    [hit] = daemon.search("kakapo database login")
    assert "hunter2secret" not in hit["snippet"]
    text = "\n".join(daemon.call("documents.read", {"path": hit["path"]})["lines"])
    assert MARK in text and "hunter2secret" not in text
    # A file whose text reads the same keeps its chunks (ids, vectors, extractions).
    assert item_ids(library, "birds.md") == kept
    daemon.stop()


def test_a_log_stored_before_chunks_kept_their_first_dated_line_is_found_until_a_day_among_them(library, tmp_path):
    """Schema 27 kept a chunk's latest dated line alone: the upgrade reads the log again,
    keeps its chunks (the same text) and gives each its first dated line too."""
    notes = tmp_path / "notes"
    notes.mkdir()
    log = "".join(f"2013-03-{day:02d} heron pond water level {400 + day} mm\n" for day in range(1, 29))
    (notes / "heron-log.md").write_text("# Heron pond water log\n\n" + log)
    library.configure([{"name": "notes", "path": notes}])
    daemon = library.daemon()
    daemon.wait_idle("notes")
    kept = item_ids(library, "heron-log.md")
    daemon.stop()

    with closing(sqlite3.connect(library.data_dir / "kenning.db")) as conn, conn:
        as_schema(conn, 27)
        conn.execute("UPDATE documents SET reading = NULL")
    daemon = library.daemon()
    daemon.wait_idle("notes")
    [hit] = daemon.search("heron pond water level", since="2013-03-10", until="2013-03-10")
    assert hit["date"] == "2013-03-28" and item_ids(library, "heron-log.md") == kept
    daemon.stop()


def test_new_chunk_sizes_take_effect_on_files_already_indexed(library, tmp_path):
    notes = tmp_path / "notes"
    notes.mkdir()
    paragraphs = [f"Paragraph {n} about the okapi herd and its keepers at the reserve." * 3 for n in range(20)]
    (notes / "herd.md").write_text("# Herd\n\n" + "\n\n".join(paragraphs) + "\n")
    library.configure([{"name": "notes", "path": notes}])
    daemon = library.daemon()
    assert daemon.wait_idle("notes")["chunks"] == len(item_ids(library, "herd.md"))
    before = len(item_ids(library, "herd.md"))
    daemon.stop()

    library.configure([{"name": "notes", "path": notes}], extra="[chunking]\ntarget_chars = 300\noverlap_chars = 0\n")
    daemon = library.daemon()
    daemon.wait_idle("notes")
    after = len(item_ids(library, "herd.md"))
    assert after > 2 * before, (before, after)
    assert daemon.source_status("notes")["chunks"] == after
    daemon.stop()


def test_a_file_failed_under_a_limit_is_read_again_when_the_limit_is_raised(library, tmp_path):
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "long.md").write_text("# Long\n\n" + "The okapi keepers log. " * 800 + "\n")
    (notes / "short.md").write_text("# Short\n\nThe quokka.\n")
    library.configure([{"name": "notes", "path": notes}], extra="[limits]\nmax_text_chars = 10000\n")
    daemon = library.daemon()
    status = daemon.wait_idle("notes")
    assert status["failed"] == 1 and "character limit" in status["failures"][0]["reason"]
    kept = item_ids(library, "short.md")
    daemon.stop()

    library.configure([{"name": "notes", "path": notes}], extra="[limits]\nmax_text_chars = 40000\n")
    daemon = library.daemon()
    assert daemon.wait_idle("notes")["failed"] == 0
    assert daemon.search("okapi keepers")
    # An indexed file is not read again for a limit: its chunks stay as they were.
    assert item_ids(library, "short.md") == kept
    daemon.stop()


def test_a_file_an_older_kenning_refused_for_want_of_permission_is_read_once_a_chmod_lets_it_in(library, tmp_path):
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "broken.pdf").write_bytes(b"%PDF-1.4 this is not really a pdf")
    locked = notes / "locked.md"
    locked.write_text("# Locked\n\nThe tuatara enclosure rota.\n")
    locked.chmod(0)
    library.configure([{"name": "notes", "path": notes}])
    # File modes hold for this daemon as for any user's, root or not.
    daemon = library.daemon(plain_permissions=True)
    assert daemon.wait_idle("notes")["failed"] == 2
    daemon.stop()

    # What a kenning before schema 13 left: the refusal recorded like any other failure,
    # under the limits the file was tried with, so it was looked at again only once its
    # mtime or size changed, which a chmod does not do.
    with closing(sqlite3.connect(library.data_dir / "kenning.db")) as conn, conn:
        conn.execute(
            "UPDATE documents SET reading = (SELECT reading FROM documents WHERE path = 'broken.pdf')"
            " WHERE path = 'locked.md'"
        )
        as_schema(conn, 12)
    locked.chmod(0o644)
    daemon = library.daemon(plain_permissions=True)
    status = daemon.wait_idle("notes")
    assert [failure["path"] for failure in status["failures"]] == ["broken.pdf"]
    assert [hit["title"] for hit in daemon.search("tuatara")] == ["Locked"]
    daemon.stop()


def test_a_word_is_found_however_its_characters_were_written(library, tmp_path):
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "pdf-text.md").write_text("# Network\n\nThe ﬁrewall conﬁguration for the oﬃce.\n")
    (notes / "wide.md").write_text("# Outage\n\nThe ｓｅｒｖｅｒ named ｐｅｌｉｃａｎ went down.\n")
    (notes / "page.md").write_text("# Rocks\n\nPolished gran\u00adite and a joi\u200bner's bench.\n")
    korean = unicodedata.normalize("NFD", "프로젝트 일정 검토")
    (notes / "plan.md").write_text(f"# Plan\n\n{korean} 회의\n")
    library.configure([{"name": "notes", "path": notes}])
    daemon = library.daemon()
    daemon.wait_idle("notes")

    def found(query: str) -> list[str]:
        return [Path(hit["path"]).name for hit in daemon.search(query)]

    # (Accents composed or not the keyword index already matched.)
    assert found("firewall configuration office") == ["pdf-text.md"]
    assert found("server pelican") == ["wide.md"]
    assert found("granite joiner") == ["page.md"]
    assert found("일정 검토") == ["plan.md"]
    # The lines cited are still the file's lines.
    [hit] = daemon.search("pelican")
    assert (hit["line_start"], hit["line_end"]) == (1, 3)
    daemon.stop()


def test_what_agents_gave_an_older_kenning_is_redacted_and_folded_after_the_upgrade(library, tmp_path):
    library.configure([])
    daemon = library.daemon()
    plan = daemon.call(
        "documents.add",
        {"title": "Kakapo plan", "text": "# Kakapo plan\n\nFeed the kakapo at dawn.\n", "source_uri": "t://plan",
         "date": "2024-05-02"},
    )  # fmt: skip
    quiet = daemon.call("documents.add", {"title": "Kea", "text": "The kea is a parrot.\n", "source_uri": "t://kea"})
    capsule = daemon.call("memory.add", {"title": "Kakapo box", "body": "The kakapo box runs backups nightly."})
    archived = daemon.call("archive.add", {"text": "kakapo backup log: 12 files copied\n", "title": "backup run"})
    entry = daemon.call("ledger.add", {"section": "hosts", "fields": {"hostname": "kakapo01", "notes": "backup box"}})
    kept = document_items(library, quiet["document_id"])
    daemon.stop()

    # What an older kenning, whose redaction missed this form and which folded nothing,
    # left behind: the secret stored and indexed in each kind of record, a word spelled
    # in full-width letters, and no record of how any of it was prepared.
    leak = "PGPASSWORD=hunter2secret psql -h db1"
    with closing(sqlite3.connect(library.data_dir / "kenning.db")) as conn, conn:
        def document(uri: str) -> int:
            return conn.execute("SELECT id FROM documents WHERE uri = ?", (uri,)).fetchone()[0]

        plan_id = document("t://plan")
        conn.execute(
            "UPDATE items SET content = ? WHERE document_id = ?",
            (f"# Kakapo plan\n\nFeed the ｋａｋａｐｏ at dawn. {leak}", plan_id),
        )
        conn.execute("UPDATE capsules SET body = ? WHERE id = ?", (f"The kakapo box: {leak}", capsule["id"]))
        conn.execute(
            "UPDATE items SET content = ? WHERE document_id = ?",
            (f"The kakapo box: {leak}", document("kenning://memory/" + capsule["id"])),
        )
        text = f"kakapo backup log: {leak}\n"
        handle = archived["handle"]
        conn.execute("UPDATE archive_segments SET text = ? WHERE handle = ?", (text, handle))
        conn.execute("UPDATE archives SET chars = ? WHERE handle = ?", (len(text), handle))
        conn.execute("UPDATE items SET content = ? WHERE document_id = ?", (text, archived["document_id"]))
        entry_id = entry["entry"]["id"]
        conn.execute(
            "UPDATE ledger_entries SET fields = json_set(fields, '$.notes', ?) WHERE id = ?", (leak, entry_id)
        )
        conn.execute(
            "UPDATE items SET content = ? WHERE document_id = ?",
            (f"hosts: kakapo01 notes {leak}", entry["entry"]["document_id"]),
        )
        conn.execute("UPDATE documents SET reading = NULL")
    with closing(sqlite3.connect(library.data_dir / "kenning.db")) as conn, conn:
        assert conn.execute("SELECT count(*) FROM items WHERE content LIKE '%hunter2secret%'").fetchone()[0] == 4

    daemon = library.daemon()

    def prepared() -> bool:
        with closing(sqlite3.connect(library.data_dir / "kenning.db")) as conn, conn:
            return not conn.execute("SELECT count(*) FROM documents WHERE reading IS NULL").fetchone()[0]

    wait_for(prepared, timeout=30, what="the agent records prepared again")
    assert not daemon.search("hunter2secret"), "a secret stored before the upgrade is still searchable"
    with closing(sqlite3.connect(library.data_dir / "kenning.db")) as conn, conn:
        assert not conn.execute("SELECT count(*) FROM items WHERE content LIKE '%hunter2secret%'").fetchone()[0]
    lines = daemon.call("documents.read", {"uri": "t://plan"})["lines"]
    assert MARK in "\n".join(lines) and "hunter2secret" not in "\n".join(lines)
    # The full-width word is found by its plain spelling, and the date the agent gave stays.
    [hit] = [hit for hit in daemon.search("feed the kakapo at dawn") if hit["document_id"] == plan_id]
    assert hit["date"] == "2024-05-02"
    shown = daemon.call("memory.show", {"id": capsule["id"]})
    assert "hunter2secret" not in shown["body"] and MARK in shown["body"]
    page = daemon.call("archive.recall", {"handle": handle})
    assert "hunter2secret" not in page["text"] and MARK in page["text"] and page["total_chars"] == len(page["text"])
    [listed] = daemon.call("ledger.list", {"section": "hosts"})["entries"]
    assert listed["id"] == entry_id and "hunter2secret" not in listed["fields"]["notes"]
    # Text that reads the same keeps its chunks (ids, vectors, extractions).
    assert document_items(library, quiet["document_id"]) == kept
    daemon.stop()


def test_an_archive_redacted_again_between_two_pages_refuses_the_next_page(library):
    """An agent reads an archive a page at a time; between two pages the daemon is
    upgraded and stores the archive again without a secret the older redactor missed.
    The next page by offset was cut from the shorter text: the pages joined skipped
    lines, with nothing to say so."""
    library.configure([])
    daemon = library.daemon()
    lines = "".join(f"copied file {n:04d}.tar\n" for n in range(200))
    archived = daemon.call("archive.add", {"text": "kakapo backup log\n" + lines, "title": "backup run"})
    handle = archived["handle"]
    daemon.stop()
    # What an older kenning stored: its redaction missed this form.
    leak = "PGPASSWORD=hunter2secret psql -h db1"
    text = f"kakapo backup log: {leak}\n" + lines
    with closing(sqlite3.connect(library.data_dir / "kenning.db")) as conn, conn:
        conn.execute("UPDATE archive_segments SET text = ? WHERE handle = ?", (text, handle))
        conn.execute("UPDATE archives SET chars = ? WHERE handle = ?", (len(text), handle))
    daemon = library.daemon()
    first = daemon.call("archive.recall", {"handle": handle, "limit": 1000})
    assert leak in first["text"] and first["next_offset"] == 1000
    daemon.stop()

    with closing(sqlite3.connect(library.data_dir / "kenning.db")) as conn, conn:
        conn.execute("UPDATE documents SET reading = NULL WHERE id = ?", (archived["document_id"],))
    daemon = library.daemon()

    def prepared() -> bool:
        with closing(sqlite3.connect(library.data_dir / "kenning.db")) as conn, conn:
            return not conn.execute("SELECT count(*) FROM documents WHERE reading IS NULL").fetchone()[0]

    wait_for(prepared, timeout=30, what="the archive prepared again")
    with pytest.raises(RpcError) as refused:
        daemon.call("archive.recall", {"handle": handle, "offset": 1000, "limit": 1000, "version": first["version"]})
    assert refused.value.code == -32602 and "stored again" in str(refused.value)
    # Read again from the start, the pages are of the text held now, joined exactly.
    pages, offset, version = [], 0, None
    while offset is not None:
        page = daemon.call("archive.recall", {"handle": handle, "offset": offset, "limit": 1000} | (
            {"version": version} if version else {}
        ))  # fmt: skip
        pages.append(page["text"])
        offset, version = page["next_offset"], page["version"]
    joined = "".join(pages)
    assert "hunter2secret" not in joined and MARK in joined and joined.endswith(lines)
    assert len(joined) == page["total_chars"] and version != first["version"]
    daemon.stop()


def test_capsules_an_older_redactor_let_through_lose_their_secrets_even_when_titles_then_clash(library):
    """Two titles told apart only by the secrets in them (they read the same under a bare
    mark; the fingerprints keep them apart), and a replaced capsule, which has no document
    to prepare again: none may keep its secret."""
    from kenning.text.likeness import title_key

    library.configure([])
    daemon = library.daemon()
    first = daemon.call("memory.add", {"title": "Deploy token one", "body": "The kakapo deploy uses token one."})
    second = daemon.call(
        "memory.add", {"title": "Deploy token two", "body": "The weka release job reads token two.", "force": True}
    )
    old = daemon.call("memory.add", {"title": "Backup login", "body": "The backup box login is stored in pass."})
    newer = daemon.call(
        "memory.add",
        {"title": "Backup login, corrected", "body": "The backup box login moved to the vault.", "supersedes": old["id"]},
    )
    daemon.stop()

    leaks = {
        first["id"]: ("Deploy token ghp_" + "a1B2" * 9, "The kakapo deploy uses ghp_" + "a1B2" * 9),
        second["id"]: ("Deploy token ghp_" + "c3D4" * 9, "The weka release job reads ghp_" + "c3D4" * 9),
        old["id"]: ("Backup login", "The backup box login: PGPASSWORD=hunter2secret psql -h db1"),
    }
    with closing(sqlite3.connect(library.data_dir / "kenning.db")) as conn, conn:
        for capsule_id, (title, body) in leaks.items():
            conn.execute(
                "UPDATE capsules SET title = ?, title_key = ?, body = ? WHERE id = ?",
                (title, title_key(title), body, capsule_id),
            )
            conn.execute(
                "UPDATE items SET content = ? WHERE document_id = (SELECT document_id FROM capsules WHERE id = ?)",
                (body, capsule_id),
            )
        conn.execute("UPDATE documents SET reading = NULL")

    daemon = library.daemon()
    # Three documents: the replaced capsule has none.
    wait_for(lambda: " of 3 documents again" in daemon.log(), 30, "the agent records prepared again")
    secrets = ["a1B2a1B2", "c3D4c3D4", "hunter2secret"]
    with closing(sqlite3.connect(library.data_dir / "kenning.db")) as conn, conn:
        for secret in secrets:
            assert not conn.execute("SELECT count(*) FROM capsules WHERE body LIKE ? OR title LIKE ?",
                                    (f"%{secret}%", f"%{secret}%")).fetchone()[0], secret  # fmt: skip
            assert not conn.execute("SELECT count(*) FROM items WHERE content LIKE ?", (f"%{secret}%",)).fetchone()[0]
        assert not conn.execute("SELECT count(*) FROM documents WHERE reading IS NULL").fetchone()[0]
    shown = [daemon.call("memory.show", {"id": capsule_id}) for capsule_id in leaks]
    assert all(MARK in capsule["body"] for capsule in shown)
    # Both deploy capsules are still there, each under a title of its own.
    titles = {capsule["title"] for capsule in shown[:2]}
    assert len(titles) == 2 and all(MARKS.search(title) for title in titles)
    assert shown[2]["superseded_by"] == newer["id"]
    daemon.stop()


def test_after_the_upgrade_shared_text_stays_one_copy_and_no_label_keeps_a_secret(library, tmp_path):
    notes = tmp_path / "notes"
    notes.mkdir()
    shared = "# Tern colony\n\nThe tern colony nests on the north spit.\n"
    (notes / "terns.md").write_text(shared)
    library.configure([{"name": "notes", "path": notes}])
    daemon = library.daemon()
    daemon.wait_idle("notes")
    copy = daemon.call("documents.add", {"title": "Terns", "text": shared, "source_uri": "t://terns"})
    assert copy["stored"] == "merged"
    capsule = daemon.call("memory.add", {"title": "Gannets", "body": "Gannets dive from thirty metres.", "scope": "birds"})
    entry = daemon.call("ledger.add", {"section": "hosts", "fields": {"hostname": "skua01", "os": "Debian"}})
    daemon.stop()

    # What an older kenning let through: a token in an agent document's uri, a capsule's
    # scope and a ledger field's name, and no record of how any of it was prepared.
    token = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    with closing(sqlite3.connect(library.data_dir / "kenning.db")) as conn, conn:
        conn.execute("UPDATE documents SET uri = ? WHERE uri = 't://terns'", (f"t://terns?token={token}",))
        conn.execute("UPDATE capsules SET scope = ? WHERE id = ?", (f"birds-{token}", capsule["id"]))
        conn.execute(
            "UPDATE ledger_entries SET fields = json_set(fields, ?, 'x') WHERE id = ?",
            (f'$."{token}"', entry["entry"]["id"]),
        )
        conn.execute("UPDATE documents SET reading = NULL")
    daemon = library.daemon()

    def prepared() -> bool:
        with closing(sqlite3.connect(library.data_dir / "kenning.db")) as conn, conn:
            return not conn.execute(
                "SELECT count(*) FROM documents d JOIN sources s ON s.id = d.source_id"
                " WHERE s.kind != 'folder' AND d.reading IS NULL"
            ).fetchone()[0]

    wait_for(prepared, timeout=30, what="the agent records prepared again")
    daemon.wait_idle("notes")
    with closing(sqlite3.connect(library.data_dir / "kenning.db")) as conn, conn:
        dump = "\n".join(line for line in conn.iterdump() if not line.startswith("INSERT INTO \"items_fts"))
        holders = conn.execute("SELECT count(*) FROM documents WHERE text_hash = (SELECT text_hash FROM documents"
                               " WHERE path = 'terns.md') AND status = 'done'").fetchone()[0]  # fmt: skip
    assert token not in dump, "a token an older kenning let through is still stored"
    # The agent's copy of the folder's text is still a location of it, not a second copy.
    assert holders == 1
    [hit] = daemon.search("tern colony north spit")
    assert hit["path"] == str(notes / "terns.md")
    assert daemon.call("memory.show", {"id": capsule["id"]})["scope"].startswith("birds-")
    [listed] = daemon.call("ledger.list", {"section": "hosts"})["entries"]
    assert listed["fields"]["os"] == "Debian" and "redacted_field_1" in listed["fields"]
    daemon.stop()


def test_a_library_upgraded_while_its_drive_is_unmounted_keeps_the_drives_index(library, tmp_path, mount):
    """Schema 14 remembered whether a source's folder was a mount point, and gave every
    source it found "not a mount point": a library upgraded to it while a drive was
    unmounted read the drive's empty mount point as every file deleted at its first
    sweep, and dropped the drive's whole index. A real tmpfs is the drive."""
    drive = tmp_path / "drive"
    drive.mkdir()

    def plug_in() -> None:
        mount("-t", "tmpfs", "kenning-test", drive)
        for index in range(3):
            (drive / f"n{index}.md").write_text(f"# Note {index}\n\nNote {index} about the wombat burrows.\n")

    plug_in()
    library.configure([{"name": "drive", "path": drive}])
    daemon = library.daemon()
    assert daemon.wait_idle("drive")["done"] == 3
    daemon.stop()

    # What schema 14 left behind for a library it upgraded and that no sweep found the
    # drive mounted in since: m014's column, with its default, and none of m017's.
    with closing(sqlite3.connect(library.data_dir / "kenning.db")) as conn, conn:
        as_schema(conn, 14)
        conn.execute("ALTER TABLE sources ADD COLUMN root_mounted INTEGER NOT NULL DEFAULT 0")
    subprocess.run(["umount", str(drive)], check=True)

    daemon = library.daemon()
    # A sweep asked for and waited on runs after the one the start began.
    assert daemon.call("sources.scan", {"name": "drive", "wait": True})["result"]["deleted"] == 0
    status = daemon.source_status("drive")
    assert status["done"] == 3 and len(daemon.search("wombat burrows")) == 3
    assert "mount point is not known" in status["last_error"] and status["kept_unmounted"] == "unknown"
    shown = ken(library.config, "status").stdout
    assert "(maybe not mounted: kept as last indexed)" in shown
    assert "kept until the drive is mounted there again" in shown

    # Once the drive is seen mounted again, its state is known: unmounted again, it is
    # a drive that is away, and says so.
    plug_in()
    assert daemon.call("sources.scan", {"name": "drive", "wait": True})["result"]["deleted"] == 0
    status = daemon.source_status("drive")
    assert status["last_error"] is None and status["kept_unmounted"] is None
    subprocess.run(["umount", str(drive)], check=True)
    assert daemon.call("sources.scan", {"name": "drive", "wait": True})["result"]["deleted"] == 0
    status = daemon.source_status("drive")
    assert "no longer a mount point" in status["last_error"] and status["kept_unmounted"] == "unmounted"
    assert "(not mounted: kept as last indexed)" in ken(library.config, "status").stdout
    assert len(daemon.search("wombat burrows")) == 3
    daemon.stop()


def test_a_token_an_older_kenning_kept_in_page_keys_and_links_is_gone_after_the_upgrade(library, tmp_path):
    """Schema 15 keyed a fetched page by its raw URL and stored supersedes links as the raw
    URL or path named, so a token in them lay in the database. After the upgrade each is
    a hash, the file holds the token nowhere (not in freed space either), and the page is
    still found and superseded by its URL."""
    token = "ghp_" + "Wq3" * 12
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "gull-census.md").write_text("# Gull census\n\nThe herring gull census counts nests.\n")
    rota = str(notes / "gull-census.md")
    library.configure([{"name": "notes", "path": notes}], extra='[fetch]\nallowed_hosts = ["127.0.0.1"]\n')
    with serving() as server:

        def page(handler: Handler) -> None:
            body = b"<html><head><title>Terns</title></head><body><p>The arctic tern colony nests early.</p></body></html>"
            handler.reply(200, "text/html; charset=utf-8", body)

        server.routes[f"/terns.html?access_token={token}"] = page
        url = f"{server.base}/terns.html?access_token={token}"
        daemon = library.daemon()
        daemon.wait_idle("notes")
        fetched = daemon.call("urls.add", {"url": url})
        newer = daemon.call(
            "documents.add",
            {"title": "Colonies", "source_uri": "notes://colonies", "text": "The arctic tern colony moved.\n",
             "supersedes": [url, rota]},
        )  # fmt: skip
        daemon.stop()

    # What schema 15 left behind: the page keyed and both links held by the raw name.
    def digest(text: str) -> str:
        return hashlib.sha256(text.encode()).hexdigest()

    database = library.data_dir / "kenning.db"
    with closing(sqlite3.connect(database)) as conn, conn:
        conn.execute("UPDATE documents SET path = ? WHERE id = ?", ("url:" + url, fetched["document_id"]))
        for raw, hashed in (("url:" + url, "url:" + digest(url)), (rota, "path:" + digest(rota))):
            conn.execute("UPDATE document_links SET target = ? WHERE target = ?", (raw, hashed))
        as_schema(conn, 15)
        # Schema 18 holds the mount a root is on; 15 held whether it was one.
        conn.execute("ALTER TABLE sources ADD COLUMN root_mounted INTEGER CHECK (root_mounted IN (0, 1))")
    wal = database.with_name(database.name + "-wal")

    def on_disk() -> bytes:
        return database.read_bytes() + (wal.read_bytes() if wal.exists() else b"")

    assert token.encode() in on_disk()

    daemon = library.daemon()
    daemon.wait_idle("notes")
    got = daemon.call("documents.get", {"uri": url, "limit": 1})["document"]
    assert got["document_id"] == fetched["document_id"] and token not in got["path"]
    hits = {hit["document_id"]: hit for hit in daemon.search("arctic tern colony")}
    [census] = daemon.search("herring gull census")
    superseded_by = hits[newer["document_id"]]["item_id"]
    assert hits[fetched["document_id"]]["superseded_by"] == census["superseded_by"] == superseded_by
    daemon.stop()
    with closing(sqlite3.connect(database)) as conn, conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS)
    assert token.encode() not in on_disk()


def test_an_upgrade_whose_redactor_changed_reads_every_file_and_agent_text_again(library, tmp_path):
    """What the last release stored, under the reading it recorded ("v11"), holds what its
    redactor let through, a password of plain words before a private host written without
    a scheme, and lost what followed a token in a path. The redactor changed, so every file
    is read again, a PDF too, and every document agents gave is prepared again; the
    password is left nowhere on disk, and the path is whole again."""
    password = "letmein"
    leak = f"wiki svc:{password}@intranet.local"
    token = "ghp_" + "a1B2" * 9
    notes = tmp_path / "notes"
    notes.mkdir()
    birds_text = f"# Birds\n\nThe quokka is not a bird; the kea is.\nRoster: /srv/birds/{token}/roster.md\n"
    (notes / "birds.md").write_text(birds_text)
    make_pdf(notes / "report.pdf", [["The okapi census of the reserve."]])
    document = docx.Document()
    document.add_paragraph("The tuatara enclosure rota.")
    document.save(notes / "rota.docx")
    for path in notes.iterdir():
        os.utime(path, (1_000_000, 1_000_000))
    library.configure([{"name": "notes", "path": notes}])
    daemon = library.daemon()
    daemon.wait_idle("notes")
    kea = daemon.call("documents.add", {"title": "Kea", "text": "The kea is a parrot.\n", "source_uri": "t://kea"})
    daemon.call("documents.add", {"title": "Kaka", "text": "The kaka is a parrot.\n", "source_uri": "t://kaka"})
    daemon.stop()

    database = library.data_dir / "kenning.db"
    last_release = {"Birds": "v11", "rota": "v11", "report": "v11", "Kea": "v11", "Kaka": "v11"}
    with closing(sqlite3.connect(database)) as conn, conn:
        for title, marks in last_release.items():
            conn.execute("UPDATE documents SET reading = ? WHERE title = ?", (f"{marks}:1200/150", title))
        [birds] = item_ids(library, "birds.md")
        stored = f"# Birds\n\n{leak}\nRoster: /srv/birds/{MARK}\n"
        conn.execute("UPDATE items SET content = ? WHERE id = ?", (stored, birds))
        kea_text = f"The kea is a parrot. {leak}\n"
        conn.execute("UPDATE items SET content = ? WHERE document_id = ?", (kea_text, kea["document_id"]))
        before = dict(conn.execute("SELECT id, updated_at FROM documents"))
    assert password.encode() in on_disk(database)
    daemon = library.daemon()

    # While the daemon runs, the test reads as the daemon's own readers do: read-only.
    # A connection item_ids() left open once made this poll see the daemon's writes 30 s
    # late (at its idle checkpoint), and twice "database disk image is malformed": reading
    # the files for on_disk() closed descriptors on them, which drops every POSIX lock
    # the process holds there (SQLite's documented caveat), so the daemon took the WAL
    # index as its own while this process still read through it. Every connection a test
    # opens is now closed.
    def read_again() -> bool:
        with closing(sqlite3.connect(f"file:{database}?mode=ro", uri=True)) as conn:
            return not conn.execute("SELECT count(*) FROM documents WHERE reading LIKE 'v11:%'").fetchone()[0]

    wait_for(read_again, timeout=60, what="every file and agent document read again")
    daemon.wait_idle("notes")
    # Logged once the pass is over, a moment after its last document is stored.
    wait_for(lambda: "prepared 2 of 2 documents again" in daemon.log(), timeout=30, what="the agent texts' pass to end")
    with closing(sqlite3.connect(f"file:{database}?mode=ro", uri=True)) as conn:
        after = dict(conn.execute("SELECT id, updated_at FROM documents"))
        titles = dict(conn.execute("SELECT id, title FROM documents"))
    assert {titles[id_] for id_ in after if after[id_] != before[id_]} == set(last_release)
    assert "reading 3 files again" in daemon.log()
    assert not daemon.search(password)
    assert [hit["title"] for hit in daemon.search("okapi census")] == ["report"]
    lines = daemon.call("documents.read", {"path": str(notes / "birds.md")})["lines"]
    assert f"Roster: /srv/birds/{MARK}/roster.md" in lines
    daemon.stop()
    assert password.encode() not in on_disk(database)


def test_utf16_text_an_older_kenning_read_as_windows_1252_is_read_right_after_the_upgrade(
    library, tmp_path, monkeypatch
):
    """A line of kana in UTF-16 has no NUL, and the kenning before this one read it as
    Windows-1252: "«0¿0í0°0", found by no search, kept until the file changed. The sweep
    after the upgrade reads again the text formats' files, that one with them, and no PDF
    or DOCX: their readers did not change, and they cost seconds a file to parse."""
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "birds.md").write_text("# Birds\n\nThe quokka is not a bird; the kea is.\n")
    make_pdf(notes / "report.pdf", [["The okapi census of the reserve."]])
    document = docx.Document()
    document.add_paragraph("The tuatara enclosure rota.")
    document.save(notes / "rota.docx")
    line = "カタログのサンプルをメールでおくります"
    katalog = notes / "katalog.txt"
    katalog.write_bytes(line.encode("utf-16-le"))
    for path in notes.iterdir():
        os.utime(path, (1_000_000, 1_000_000))
    library.configure([{"name": "notes", "path": notes}])
    daemon = library.daemon()
    assert daemon.wait_idle("notes")["holds"] == 4
    kept = item_ids(library, "birds.md")
    daemon.stop()

    # What that kenning stored: the same file read under the rule it had, which took
    # bytes of UTF-16 with no NUL for Windows-1252, and the text formats' common reading.
    monkeypatch.setattr(readers, "_utf16_without_nuls", lambda data: None)
    limits = ConvertLimits(ReadLimits(), target_chars=1200, overlap_chars=150, max_chunks=10_000)
    garbled = convert_file(katalog, "katalog", limits)
    [old_chunk] = [item.content for item in garbled.items]
    assert "«0¿0" in old_chunk and not old_chunk.isascii()
    database = library.data_dir / "kenning.db"
    with closing(sqlite3.connect(database)) as conn, conn:
        [item_id] = item_ids(library, "katalog.txt")
        conn.execute("UPDATE items SET content = ? WHERE id = ?", (old_chunk, item_id))
        conn.execute("DELETE FROM items_cjk WHERE rowid = ?", (item_id,))
        conn.execute("UPDATE documents SET text_hash = ? WHERE path = 'katalog.txt'", (garbled.text_digest,))
        conn.execute("UPDATE documents SET reading = 'v9:1200/150' WHERE path IN ('birds.md', 'katalog.txt')")
        before = dict(conn.execute("SELECT path, updated_at FROM documents"))
        readings = dict(conn.execute("SELECT path, reading FROM documents"))

    daemon = library.daemon()
    daemon.wait_idle("notes")
    assert daemon.call("documents.read", {"path": str(katalog)})["lines"] == [line]
    assert [hit["title"] for hit in daemon.search("カタログのサンプル")] == ["katalog"]
    with closing(sqlite3.connect(database)) as conn, conn:
        after = dict(conn.execute("SELECT path, updated_at FROM documents"))
        now = dict(conn.execute("SELECT path, reading FROM documents"))
    assert {path for path in after if after[path] != before[path]} == {"birds.md", "katalog.txt"}, now
    assert now["report.pdf"] == readings["report.pdf"] and now["rota.docx"] == readings["rota.docx"]
    assert "reading 2 files again" in daemon.log()
    # Read again and come out the same: the note keeps its chunks, and their vectors.
    assert item_ids(library, "birds.md") == kept
    # Once: the next sweep reads nothing again.
    daemon.call("sources.scan", {"name": "notes", "wait": True})
    with closing(sqlite3.connect(database)) as conn, conn:
        assert dict(conn.execute("SELECT path, updated_at FROM documents")) == after
    daemon.stop()


def test_an_upgrade_reads_no_folder_again_for_want_of_its_roots_identity_and_records_it(library, tmp_path):
    # Schema 19 records which folder the root named at the last full sweep. Not known
    # after the upgrade, it judges no swap: a library is not read again whole for it.
    notes = tmp_path / "notes"
    (notes / "docs").mkdir(parents=True)
    for name in ("plan.md", "log.md"):
        (notes / "docs" / name).write_text(f"# {name}\n\nThe ferry leaves at nine.\n")
        os.utime(notes / "docs" / name, (1_700_000_000, 1_700_000_000))
    library.configure([{"name": "notes", "path": str(notes)}])
    daemon = library.daemon()
    daemon.wait_idle("notes")
    daemon.stop()
    with closing(sqlite3.connect(library.data_dir / "kenning.db")) as conn, conn:
        as_schema(conn, 18)

    daemon = library.daemon()
    counts = daemon.call("sources.scan", {"name": "notes", "wait": True})["result"]
    assert counts["unchanged"] == 2 and counts["indexed"] == 0
    daemon.stop()

    # The sweep after the upgrade recorded it: a folder swapped in while the daemon is
    # stopped is read again at the next start.
    os.rename(notes, tmp_path / "notes.old")
    shutil.copytree(tmp_path / "notes.old", notes)
    (notes / "docs" / "plan.md").write_text("# plan.md\n\nThe barge leaves at nine.\n")
    os.utime(notes / "docs" / "plan.md", (1_700_000_000, 1_700_000_000))
    daemon = library.daemon()
    daemon.call("sources.scan", {"name": "notes", "wait": True})
    assert [hit["path"] for hit in daemon.search("barge")] == [str(notes / "docs" / "plan.md")]
    with closing(sqlite3.connect(library.data_dir / "kenning.db")) as conn, conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS)
