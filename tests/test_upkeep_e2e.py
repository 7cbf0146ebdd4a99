"""Space and health: a removal gives its space back, `ken compact` rewrites an old file,
`ken doctor` names each problem with its fix. Real daemons, real SQLite files."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path

from tests.daemon_harness import wait_for


def ken(config: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "kenning", "--config", str(config), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )


def file_bytes(db: Path) -> int:
    wal = db.with_name(db.name + "-wal")
    return db.stat().st_size + (wal.stat().st_size if wal.exists() else 0)


def big_folder(root: Path, files: int = 60) -> Path:
    root.mkdir()
    for index in range(files):
        body = "\n\n".join(
            f"Paragraph {p} of note {index} about lemur {index * 100 + p} habitats." * 6 for p in range(40)
        )
        (root / f"note{index}.md").write_text(f"# Note {index}\n\n{body}\n")
    return root


def test_removing_a_source_returns_its_space_and_status_shows_the_size(library, tmp_path):
    keep = tmp_path / "keep"
    keep.mkdir()
    (keep / "k.md").write_text("The ibex climbs.\n")
    big = big_folder(tmp_path / "big")
    library.configure([{"name": "keep", "path": keep}, {"name": "big", "path": big}])
    daemon = library.daemon()
    daemon.wait_idle("big")
    daemon.wait_idle("keep")
    # Vectors and the graph are written after the sweep: sized before they were, the file
    # had grown by the time status sized it.
    daemon.wait_derived()
    db = library.data_dir / "kenning.db"
    status = ken(library.config, "status")
    assert "database: " in status.stdout and " MB" in status.stdout
    before = file_bytes(db)
    assert daemon.call("status")["daemon"]["db_bytes"] == before

    removed = ken(library.config, "sources", "remove", "big", "--yes")
    assert removed.returncode == 0, removed.stderr
    assert "removed source 'big': 60 documents" in removed.stdout and "the database shrank by" in removed.stdout
    assert "removing big: 60/60 documents" in removed.stderr
    after = file_bytes(db)
    assert after < before / 2, (before, after)
    assert daemon.call("status")["daemon"]["free_bytes"] == 0
    assert daemon.search("ibex")


def test_compact_switches_an_older_file_to_incremental_vacuum_and_shrinks_it(library, tmp_path):
    big = big_folder(tmp_path / "big", files=30)
    library.configure([{"name": "big", "path": big}])
    db = library.data_dir / "kenning.db"
    # A library made before kenning set auto_vacuum: the file exists with it off.
    library.data_dir.mkdir(mode=0o700)
    sqlite3.connect(db).execute("PRAGMA auto_vacuum = NONE").connection.execute("CREATE TABLE t (x)").connection.close()
    conn = sqlite3.connect(db)
    conn.execute("DROP TABLE t")
    conn.commit()
    conn.close()
    daemon = library.daemon()
    daemon.wait_idle("big")
    for path in list(big.iterdir())[:25]:
        path.unlink()
    ken(library.config, "scan", "big", "--wait")
    with closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as conn:
        assert conn.execute("PRAGMA auto_vacuum").fetchone()[0] == 0
    free = daemon.call("status")["daemon"]["free_bytes"]
    assert free > 0

    compacted = ken(library.config, "compact")
    assert compacted.returncode == 0, compacted.stderr
    assert "database: " in compacted.stdout and "→" in compacted.stdout
    assert daemon.call("status")["daemon"]["free_bytes"] == 0
    reader = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    assert reader.execute("PRAGMA auto_vacuum").fetchone()[0] == 2  # incremental from now on
    reader.close()
    assert len(daemon.search("lemur", limit=50)) > 0


def test_doctor_names_each_problem_with_its_fix(library, tmp_path):
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "a.md").write_text("The tapir naps.\n")
    library.configure([{"name": "notes", "path": notes}])

    down = ken(library.config, "doctor")
    assert down.returncode == 1
    assert "PROBLEM daemon: not running" in down.stdout and "→ ken start" in down.stdout

    daemon = library.daemon()
    daemon.wait_idle("notes")
    healthy = ken(library.config, "doctor")
    assert healthy.returncode == 0, healthy.stdout
    assert "no problems found" in healthy.stdout and "ok      daemon: pid" in healthy.stdout

    gone = tmp_path / "gone"
    gone.mkdir()
    library.configure([{"name": "notes", "path": notes}, {"name": "gone", "path": gone}])
    daemon.call("reload")
    daemon.wait_idle("gone")
    gone.rmdir()
    library.configure([{"name": "gone", "path": gone}])  # notes dropped from the config, its index kept
    os.chmod(library.data_dir, 0o750)
    checks: dict[str, list[dict]] = {}
    for check in json.loads(ken(library.config, "doctor", "--json").stdout):
        checks.setdefault(check["what"], []).append(check)
    [root] = [c for c in checks["source gone"] if "is gone" in c["found"]]
    assert root["level"] == "problem" and "ken sources remove gone" in root["fix"]
    [dropped] = checks["source notes"]
    assert dropped["level"] == "problem" and "removed from the config" in dropped["found"]
    [private] = checks["data directory"]
    assert private["level"] == "problem" and private["fix"] == f"chmod 700 {library.data_dir}"
    os.chmod(library.data_dir, 0o700)

    library.config.write_text(library.config.read_text() + "\n[embeder]\n")
    typo = ken(library.config, "doctor")
    assert typo.returncode == 1 and "did you mean embedder?" in typo.stdout


def test_doctor_run_elsewhere_agrees_with_a_daemon_started_on_a_relative_config(library, monkeypatch):
    library.configure([])
    monkeypatch.chdir(library.root)
    library.config = Path("config.toml")
    library.daemon()
    elsewhere = library.root / "elsewhere"
    elsewhere.mkdir()
    doctor = subprocess.run(
        [sys.executable, "-m", "kenning", "--config", "../config.toml", "doctor"],
        cwd=elsewhere, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
    )
    assert "ok      daemon: pid" in doctor.stdout, doctor.stdout
    assert "daemon config" not in doctor.stdout
    status = json.loads(ken(Path("config.toml"), "status", "--json").stdout)
    assert status["daemon"]["config"] == str(library.root / "config.toml")


def test_a_sweep_that_deletes_many_files_gives_their_space_back(library, tmp_path):
    big = big_folder(tmp_path / "big", files=110)
    library.configure([{"name": "big", "path": big}])
    daemon = library.daemon()
    daemon.wait_idle("big")
    db = library.data_dir / "kenning.db"
    before = file_bytes(db)
    for path in big.iterdir():
        path.unlink()
    # The watcher or this scan (whichever sweeps first) deletes the 110 documents.
    assert ken(library.config, "scan", "big", "--wait").returncode == 0
    wait_for(lambda: daemon.search("lemur") == [], timeout=30, what="the deletions to be swept")
    wait_for(lambda: daemon.call("status")["daemon"]["free_bytes"] == 0, timeout=30, what="space to be returned")
    assert file_bytes(db) < before / 2


def test_doctor_notes_a_drive_that_is_away_and_does_not_call_it_a_problem(library, tmp_path, mount):
    """An unplugged USB disk is everyday life, and its index is kept while it is away,
    yet `ken doctor` listed its source as a problem (and a folder on such a drive twice,
    its folder being gone too) and exited 1. Two real tmpfs drives: one mounted on its
    source's folder, one mounted above it."""
    usb = tmp_path / "usb"
    usb.mkdir()
    mount("-t", "tmpfs", "kenning-test", usb)
    (usb / "a.md").write_text("The aye-aye taps the bark.\n")
    stick = tmp_path / "stick"
    stick.mkdir()
    mount("-t", "tmpfs", "kenning-test", stick)
    notes = stick / "notes"
    notes.mkdir()
    (notes / "b.md").write_text("The fossa climbs head first.\n")
    library.configure([{"name": "usb", "path": usb}, {"name": "notes", "path": notes}])
    daemon = library.daemon()
    daemon.wait_idle("usb")
    daemon.wait_idle("notes")
    assert ken(library.config, "doctor").returncode == 0

    for drive in (usb, stick):
        subprocess.run(["umount", str(drive)], check=True)
    for name in ("usb", "notes"):
        daemon.call("sources.scan", {"name": name, "wait": True})
        assert daemon.source_status(name)["kept_unmounted"] == "unmounted"

    listed = ken(library.config, "doctor", "--json")
    assert listed.returncode == 0, listed.stdout
    checks: dict[str, list[dict]] = {}
    for check in json.loads(listed.stdout):
        checks.setdefault(check["what"], []).append(check)
    for name, path in (("usb", usb), ("notes", notes)):
        [note] = checks[f"source {name}"]
        assert note["level"] == "note", note
        assert note["found"].startswith(f"{path} is on a drive or share that is not mounted; its 1 document stays")
        assert note["fix"] == f"mount it to bring its index up to date, or `ken sources remove {name}` if it is gone for good"
    shown = ken(library.config, "doctor")
    assert shown.returncode == 0 and "no problems found" in shown.stdout
    assert "note    source usb: " in shown.stdout
    daemon.stop()
