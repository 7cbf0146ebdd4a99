"""The daemon's lifecycle and folder ingest under hostile conditions: limits lowered under
an indexed folder, socket paths that cannot be bound, sources removed and restarted midway."""

from __future__ import annotations

import os
import resource
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from contextlib import closing
from pathlib import Path

import pytest

from kenning.errors import RpcError
from tests.daemon_harness import DaemonProcess, as_a_user, wait_for


def ken(library, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "kenning", "--config", str(library.config), *args],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip


def test_lowering_max_files_under_an_indexed_folder_never_shows_more_done_than_total(library, tmp_path):
    notes = tmp_path / "notes"
    notes.mkdir()
    for index in range(10):
        (notes / f"n{index}.md").write_text(f"note {index} about zebra{index}\n")
        os.utime(notes / f"n{index}.md", (1e9 + index, 1e9 + index))
    library.configure([{"name": "notes", "path": notes}])
    daemon = library.daemon()
    daemon.wait_idle("notes")

    library.configure([{"name": "notes", "path": notes, "max_files": 3}])
    assert ken(library, "reload").returncode == 0
    status = wait_for(
        lambda: (s := daemon.source_status("notes"))["capped"] == 7 and not s["scanning"] and s,
        timeout=20, what="the capped sweep",
    )  # fmt: skip
    # Lowering the cap deletes nothing: the seven oldest stay searchable, and are counted.
    assert daemon.search("zebra0")
    assert status["holds"] == 10 and status["capped_kept"] == 7
    assert status["processed"] <= status["total"] == 10 and status["percent"] == 100.0
    shown = ken(library, "status").stdout
    assert "files: 10/10 done" in shown and "7 of them indexed before the cap" in shown


def test_a_socket_path_too_long_to_bind_is_refused_in_one_line_before_the_index_is_opened(library, tmp_path):
    deep = tmp_path / ("d" * 60) / ("e" * 60)
    deep.mkdir(parents=True, mode=0o700)
    library.configure([], extra=f'socket = "{deep / "kenning.sock"}"')
    result = _daemon_in_foreground(library)
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert "longer than a unix socket path may be" in result.stderr.splitlines()[-1]
    assert not (library.data_dir / "kenning.db").exists()


def _on_a_small_disk(library, log_path: Path, limit: int) -> DaemonProcess:
    """A daemon whose writes past `limit` bytes of a file fail as on a full disk
    (RLIMIT_FSIZE); raising its limit again is freeing space."""

    def small_disk() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, resource.RLIM_INFINITY))

    daemon = DaemonProcess(library.config, library.data_dir, log_path)
    with open(daemon.log_path, "ab") as log:
        daemon.proc = subprocess.Popen(
            [sys.executable, "-m", "kenning", "--config", str(library.config), "daemon"],
            stdout=log, stderr=subprocess.STDOUT, preexec_fn=small_disk,
        )  # fmt: skip
    return daemon


def test_a_full_disk_stops_the_sweep_says_why_and_it_resumes_by_itself_once_there_is_room(library, tmp_path):
    """The disk filling up is played by RLIMIT_FSIZE on the daemon: a write past it fails
    as it would on a full disk, and raising it again is freeing space."""
    notes = tmp_path / "notes"
    notes.mkdir()
    for index in range(200):
        parts = (f"## Part {part}\nPart {part} of file {index} names term{index}x {os.urandom(200).hex()}.\n" for part in range(8))
        (notes / f"f{index}.md").write_text(f"# File {index}\n\n" + "\n".join(parts))
    library.configure([{"name": "notes", "path": notes}])
    daemon = _on_a_small_disk(library, tmp_path / "full.log", 1_500_000)
    try:
        wait_for(daemon._answers, timeout=20, what="the daemon to answer")
        stuck = wait_for(
            lambda: (s := daemon.source_status("notes"))["last_error"] and s, timeout=30, what="the sweep to stop"
        )
        # It says why, and does not pass the files it could not store off as done or failed.
        assert "cannot write the index" in stuck["last_error"]
        assert stuck["failed"] == 0 and stuck["done"] < 200 and stuck["pending"] > 0
        assert "waiting: cannot write the index" in ken(library, "status").stdout
        assert "could not ingest" not in daemon.log()
        # An agent's write is told why in one line, with no traceback.
        added = ken(library, "memory", "add", "--title", "Full", "--body", "written on a full disk")
        assert added.returncode != 0 and "Traceback" not in added.stderr
        assert "cannot write the index now (" in added.stderr and "try again later" in added.stderr

        resource.prlimit(daemon.proc.pid, resource.RLIMIT_FSIZE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
        done = wait_for(
            lambda: (s := daemon.source_status("notes"))["done"] == 200 and not s["scanning"] and s,
            timeout=90, what="the sweep to resume by itself",
        )  # fmt: skip
        assert done["last_error"] is None and done["in_progress"] == 0
        assert daemon.search("term0x") and daemon.search("term199x")
    finally:
        assert daemon.stop() == 0
    with closing(sqlite3.connect(library.data_dir / "kenning.db")) as conn, conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert conn.execute("SELECT count(*) FROM items").fetchone() == conn.execute("SELECT count(*) FROM items_fts").fetchone()


def test_agent_text_an_upgrade_prepares_again_on_a_full_disk_is_prepared_once_there_is_room(library, tmp_path):
    """The start after an upgrade prepares again what agents gave, so a secret the newer
    redactor masks leaves it. On a full disk each record's write failed and was marked
    failed, and those records were tried again only at the next start: with room again a
    minute later, the secret stayed searchable for as long as the daemon ran. The disk is
    played by RLIMIT_FSIZE, as above."""
    library.configure([])
    daemon = library.daemon()
    for n in range(40):
        text = f"# Kakapo log {n}\n\n" + f"Entry {n} of the kakapo feeding log, {os.urandom(600).hex()}.\n"
        daemon.call("documents.add", {"title": f"Log {n}", "text": text, "source_uri": f"t://log/{n}"})
    daemon.stop()
    database = library.data_dir / "kenning.db"
    # What an older kenning, whose redactor missed this form, left in every record.
    with closing(sqlite3.connect(database)) as conn, conn:
        conn.execute("UPDATE items SET content = content || ' PGPASSWORD=hunter2secret psql -h db1'")
        conn.execute("UPDATE documents SET reading = NULL")

    def leaked() -> int:
        with closing(sqlite3.connect(database)) as conn, conn:
            return conn.execute("SELECT count(*) FROM items WHERE content LIKE '%hunter2secret%'").fetchone()[0]

    daemon = _on_a_small_disk(library, tmp_path / "full.log", database.stat().st_size + 200_000)
    try:
        wait_for(lambda: "preparing agent text again paused" in daemon.log(), timeout=30, what="the disk to fill")
        assert leaked(), "the disk filled only after every record was prepared"
        resource.prlimit(daemon.proc.pid, resource.RLIMIT_FSIZE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
        wait_for(lambda: not leaked(), timeout=40, what="every record prepared again once there is room")
        assert not daemon.search("hunter2secret")
        assert "could not prepare document" not in daemon.log()
    finally:
        assert daemon.stop() == 0


def test_another_process_holding_the_write_lock_pauses_the_sweep_and_it_resumes_once_let_go(library, tmp_path):
    """An sqlite3 shell left inside a transaction holds the lock past the busy timeout
    (10 s): a file written meanwhile was failed after it (and then neither done nor
    pending until the next periodic sweep)."""
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "first.md").write_text("Herons fish at dawn.\n")
    # Saved well before it is indexed, so the sweep has no second look to write for it.
    os.utime(notes / "first.md", (1_700_000_000, 1_700_000_000))
    library.configure([{"name": "notes", "path": notes}])
    daemon = library.daemon()
    try:
        daemon.wait_idle("notes")
        # Every write waits out the busy timeout in turn: none but the sweep's is left.
        wait_for(
            lambda: (s := daemon.call("status"))["graph"]["pending"] == 0 and s["embedder"]["vectors"] == 1,
            timeout=30, what="the first note's vectors and entities",
        )  # fmt: skip
        holder = sqlite3.connect(library.data_dir / "kenning.db", isolation_level=None)
        holder.execute("BEGIN IMMEDIATE")
        try:
            (notes / "later.md").write_text("Egret number termly waded in.\n")
            stuck = wait_for(lambda: (s := daemon.source_status("notes"))["last_error"] and s, timeout=30, what="a pause")
            assert "database is locked" in stuck["last_error"] and stuck["failed"] == 0
            assert "waiting: cannot write the index" in ken(library, "status").stdout
        finally:
            holder.execute("ROLLBACK")
            holder.close()
        # Resumed by itself, well before the periodic sweep (300 s).
        wait_for(lambda: daemon.search("termly"), timeout=30, what="the file")
        assert daemon.source_status("notes")["failed"] == 0
        assert "could not ingest" not in daemon.log()
    finally:
        assert daemon.stop() == 0


@pytest.fixture(scope="module")
def kestrels(module_library) -> Path:
    """A folder indexed and its daemon stopped, once for the tests that take a copy of
    its library to break; each indexed its own."""
    notes = module_library.root / "notes"
    notes.mkdir()
    (notes / "a.md").write_text("Kestrels nest here.\n")
    module_library.configure([{"name": "notes", "path": notes}])
    daemon = module_library.daemon()
    daemon.wait_idle("notes")
    assert daemon.stop() == 0
    return module_library.root


def _kestrels_indexed_and_stopped(library, kestrels: Path) -> None:
    """`library` holding a copy of the kestrels' library, on the same folder."""
    shutil.copytree(kestrels / "data", library.data_dir)
    library.configure([{"name": "notes", "path": kestrels / "notes"}])


def _daemon_in_foreground(library) -> subprocess.CompletedProcess:
    """`ken daemon` run to its end, as a service manager runs it: what it says is its stderr."""
    return subprocess.run(
        [sys.executable, "-m", "kenning", "--config", str(library.config), "daemon"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip


def test_a_start_on_a_full_disk_is_one_line_saying_so_and_the_next_start_on_room_goes_on(library, tmp_path, mount):
    """A daemon stopped, its disk filled, started again: the pid it writes into its lock
    file (emptied at the stop) found no room, and the start was a traceback, which
    `ken start` showed cut short by the full disk. A real tmpfs, as the lock's own write
    is what fails."""
    library.data_dir.mkdir(mode=0o700)
    mount("-t", "tmpfs", "-o", "size=4m,mode=0700", "kenning-test", library.data_dir)
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "a.md").write_text("Kestrels nest here.\n")
    library.configure([{"name": "notes", "path": notes}])
    daemon = library.daemon()
    daemon.wait_idle("notes")
    assert daemon.stop() == 0
    filler = library.data_dir / "filler"
    with open(filler, "wb") as out, pytest.raises(OSError):
        while True:
            out.write(b"\0" * 65536)
            out.flush()
    result = _daemon_in_foreground(library)
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr[-2000:]
    assert f"the disk holding {library.data_dir} is full" in result.stderr.splitlines()[-1]
    filler.unlink()
    assert library.daemon().search("kestrels")  # nothing was lost


def test_a_read_only_database_at_start_is_one_line_naming_it(library, kestrels):
    _kestrels_indexed_and_stopped(library, kestrels)
    database = library.data_dir / "kenning.db"
    # Root writes through file modes: the file is made immutable instead, or, on a file
    # system without chattr, its write-ahead log's place is taken by a directory.
    blocked = library.data_dir / "kenning.db-wal"
    if os.geteuid() != 0:
        database.chmod(0o400)
    elif not shutil.which("chattr") or subprocess.run(["chattr", "+i", str(database)], capture_output=True).returncode:
        blocked.unlink(missing_ok=True)
        blocked.mkdir()
    try:
        result = _daemon_in_foreground(library)
    finally:
        if os.geteuid() == 0 and shutil.which("chattr"):
            subprocess.run(["chattr", "-i", str(database)], capture_output=True)
        if blocked.is_dir():
            blocked.rmdir()
        database.chmod(0o600)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    last = result.stderr.splitlines()[-1]
    assert "cannot write the database" in last and str(database) in last
    assert library.daemon().search("kestrels")  # nothing was lost


def test_a_damaged_database_at_start_is_one_line_naming_it_and_how_to_start_afresh(library, kestrels):
    """A database cut short (a disk that failed mid-copy) or overwritten by something
    else was a traceback from the first PRAGMA, which `ken start` quoted: nothing said
    which file, or that moving it aside with its -wal and -shm starts a new library; and
    `ken doctor`, run while it was stopped, saw nothing wrong but that it was not running."""
    _kestrels_indexed_and_stopped(library, kestrels)
    database = library.data_dir / "kenning.db"
    kept = database.read_bytes()
    for damaged in (b"<html>not a database</html>\n" * 100, kept[: len(kept) // 3]):
        database.write_bytes(damaged)
        result = _daemon_in_foreground(library)
        assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr[-2000:]
        last = result.stderr.splitlines()[-1]
        assert f"the database {database} is damaged" in last and "-wal" in last, last
        assert database.read_bytes() == damaged  # left as it was, for a recovery
    # Doctor, run while it is stopped, says so too rather than only "ken start".
    doctor = ken(library, "doctor")
    assert doctor.returncode == 1 and f"database: {database} is damaged" in doctor.stdout, doctor.stdout
    assert "move it aside with its -wal and -shm files" in doctor.stdout
    database.write_bytes(kept)
    assert library.daemon().search("kestrels")


def test_vectors_a_damaged_page_keeps_from_loading_are_not_called_loading_for_ever(library, kestrels, tmp_path):
    """A page of the vectors table overwritten (a failing disk) while the rest reads: the
    vector index could not load, and status said "loading" for as long as the daemon ran,
    and doctor called the index still loading, though nothing would ever load it. It is
    tried again with backoff, and said to be off, and why, meanwhile; and the
    near-duplicate sweep a new file asks for, which waited for it in silence, says why
    it waits."""
    _kestrels_indexed_and_stopped(library, kestrels)
    more = tmp_path / "more"
    more.mkdir()
    (more / "b.md").write_text("Merlins hunt here.\n")
    library.configure([{"name": "notes", "path": kestrels / "notes"}, {"name": "more", "path": more}])
    database = library.data_dir / "kenning.db"
    with closing(sqlite3.connect(database)) as conn:
        page_size = conn.execute("PRAGMA page_size").fetchone()[0]
        pages = [n for (n,) in conn.execute("SELECT pageno FROM dbstat WHERE name = 'vectors'")]
    with open(database, "r+b") as f:
        for page in pages:
            f.seek((page - 1) * page_size)
            f.write(b"\xff" * page_size)
    daemon = library.daemon()
    embedder = wait_for(
        lambda: (e := daemon.call("status")["embedder"])["job"]["state"] != "loading" and e, timeout=20,
        what="the embedder to come up or fail",
    )  # fmt: skip
    assert embedder["vectors"] is None and embedder["job"]["state"] == "waiting"
    assert "could not start" in embedder["job"]["last_error"] and "malformed" in embedder["job"]["last_error"]
    assert daemon.search("kestrels")  # keyword search goes on
    doctor = subprocess.run(
        [sys.executable, "-m", "kenning", "--config", str(library.config), "doctor"], capture_output=True, text=True
    )
    assert "vector search is off: the embedder could not start:" in doctor.stdout and "still loading" not in doctor.stdout
    daemon.wait_idle("more")
    wait_for(
        lambda: "near-duplicates paused: no vector index to compare documents by: the embedder could not start:"
        in daemon.log(), timeout=10, what="the near-duplicate sweep to say why it waits",
    )  # fmt: skip
    daemon.stop()


def test_a_data_directory_made_read_only_while_running_still_stops_cleanly(library, kestrels):
    """`chmod 500` on the data directory of a running daemon: its open files still take
    writes, but at the stop the socket could not be removed, and that PermissionError
    left the shutdown before the library was closed: a traceback, exit status 1 (a
    service manager restarts it), the database never checkpointed nor its threads ended;
    and a start there was a traceback from removing that socket."""
    _kestrels_indexed_and_stopped(library, kestrels)
    daemon = library.daemon(plain_permissions=True)
    daemon.wait_idle("notes")
    daemon.call("documents.add", {"title": "Egrets", "text": "Egrets wade at the pond.\n", "source_uri": "t://egrets"})
    library.data_dir.chmod(0o500)
    try:
        assert daemon.stop() == 0, daemon.log()[-3000:]
        assert "Traceback" not in daemon.log()
        assert daemon.log().count("cannot remove the socket") == 1, daemon.log()[-3000:]
        wal = library.data_dir / "kenning.db-wal"
        assert not wal.exists() or wal.stat().st_size == 0  # checkpointed at the close
        # A start there meets the socket left behind: one line, not a traceback.
        command = [sys.executable, "-m", "kenning", "--config", str(library.config), "daemon"]
        result = subprocess.run(as_a_user(command), capture_output=True, text=True, timeout=60)
        assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr[-2000:]
        assert "cannot remove the socket" in result.stderr.splitlines()[-1]
    finally:
        library.data_dir.chmod(0o700)
    assert library.daemon().search("egrets")


def test_a_redaction_key_that_cannot_be_made_at_an_upgrade_is_one_line_naming_it(library, kestrels):
    """A library from before redaction.key gets its key at its first start on this
    version, before the database opens: a data directory that cannot be written then
    (made immutable, a full disk) was a traceback, where the database's own refusal
    had been one line naming what to fix."""
    _kestrels_indexed_and_stopped(library, kestrels)
    key = library.data_dir / "redaction.key"
    key.unlink()  # as a kenning of before left it
    # Root writes through a directory's mode: it is made immutable instead, or, on a file
    # system without chattr, the key's place is taken by a directory.
    if os.geteuid() != 0:
        library.data_dir.chmod(0o500)
    elif not shutil.which("chattr") or subprocess.run(["chattr", "+i", str(library.data_dir)], capture_output=True).returncode:
        key.mkdir()
    try:
        result = _daemon_in_foreground(library)
    finally:
        if os.geteuid() == 0 and shutil.which("chattr"):
            subprocess.run(["chattr", "-i", str(library.data_dir)], capture_output=True)
        if key.is_dir():
            key.rmdir()
        library.data_dir.chmod(0o700)
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr[-2000:]
    last = result.stderr.splitlines()[-1]
    assert str(key) in last and "nothing indexed is lost" in last
    assert library.daemon().search("kestrels")  # nothing was lost, and the key is made now
    assert key.stat().st_size == 32


def test_citations_in_files_with_lone_carriage_returns_name_the_lines_sed_shows(library, tmp_path):
    notes = tmp_path / "notes"
    notes.mkdir()
    # A build log redrawing its progress bar with CR, and a note with a stray CR pasted in.
    (notes / "build.log").write_bytes(b"step one\nprogress 10%\rprogress 50%\rprogress 100%\nstep two\nfinal tapir result\n")
    (notes / "note.md").write_bytes(b"# Note\r\n\r\nfirst\rsecond half\r\n\r\n## Later\r\n\r\nokapi sighting\r\n")
    library.configure([{"name": "notes", "path": notes}])
    daemon = library.daemon()
    daemon.wait_idle("notes")
    for word in ("tapir", "okapi"):
        [hit] = daemon.search(word)
        lines = Path(hit["path"]).read_bytes().split(b"\n")
        cited = lines[hit["line_end"] - 1]
        assert word.encode() in cited, (hit["line_start"], hit["line_end"], cited)
        shown = ken(library, "get", hit["path"], "--lines", str(hit["line_end"])).stdout
        assert word in shown


def test_a_daemon_whose_data_directory_is_deleted_leaves_and_never_removes_its_successors_socket(library, tmp_path):
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "a.md").write_text("Capybaras bathe here.\n")
    library.configure([{"name": "notes", "path": notes}])
    orphan = library.daemon()
    orphan.wait_idle("notes")
    shutil.rmtree(library.data_dir)  # "start over": the library is deleted under the daemon

    successor = library.daemon()
    successor.wait_idle("notes")
    # The first daemon can no longer be reached or stopped with `ken stop`: it leaves by
    # itself, saying why, and its going takes nothing of the new daemon's with it.
    assert orphan.proc.wait(timeout=20) == 1
    assert "was deleted or replaced" in orphan.log().splitlines()[-1]
    assert successor.socket.exists()
    assert successor.search("capybaras")
    assert ken(library, "status").returncode == 0


def test_a_daemon_whose_socket_was_replaced_leaves_and_does_not_remove_the_new_one(library):
    library.configure([])
    first = library.daemon()
    first.socket.unlink()
    other = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    other.bind(str(first.socket))  # someone else's socket now sits at the path
    other.listen()
    try:
        assert first.proc.wait(timeout=20) == 1
        assert "the socket" in first.log().splitlines()[-1]
        assert first.socket.exists()
    finally:
        other.close()


def test_scan_wait_on_a_folder_that_was_renamed_or_replaced_by_a_file_says_so_and_fails(library, tmp_path):
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "a.md").write_text("Lemurs leap here.\n")
    library.configure([{"name": "notes", "path": notes}])
    daemon = library.daemon()
    daemon.wait_idle("notes")
    shutil.move(notes, tmp_path / "renamed")
    for _ in range(2):
        result = ken(library, "scan", "notes", "--wait")
        assert result.returncode == 1 and "searchable" not in result.stdout
        assert "cannot read" in result.stderr and "stays searchable" in result.stderr
        assert daemon.search("lemurs")  # the index is kept
        notes.write_text("a file where the folder was\n")
    assert "Not a directory" in result.stderr


def test_a_folder_added_again_while_its_old_removal_is_unfinished_is_indexed_once_that_removal_ends(library, tmp_path):
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "a.md").write_text("# A\n\nThe narwhal migrates north.\n")
    library.configure([{"name": "notes", "path": notes}])
    daemon = library.daemon()
    daemon.wait_idle("notes")
    daemon.stop()
    # `ken sources remove notes` cut short by a kill -9 right after its first commit (the
    # source flagged for removal; its documents still there), then the folder added back
    # under its old name: the next start finishes the removal in the background.
    with closing(sqlite3.connect(library.data_dir / "kenning.db")) as conn, conn:
        conn.execute("UPDATE sources SET removing = 1, active = 0 WHERE name = 'notes'")
    (notes / "b.md").write_text("# B\n\nThe walrus naps on the ice.\n")

    daemon = library.daemon()
    # The start passed the folder over while its namesake was being removed, and nothing
    # started it afterwards: it was in the config and never indexed until a reload.
    wait_for(lambda: daemon.search("walrus") and daemon.search("narwhal"), timeout=60, what="the folder indexed again")
    status = daemon.wait_idle("notes")
    assert (status["done"], status["failed"]) == (2, 0)
    assert "finished removing source notes" in daemon.log()


def test_a_reload_names_the_changed_settings_that_wait_for_a_restart(library, tmp_path):
    notes = tmp_path / "notes"
    notes.mkdir()
    library.configure([{"name": "notes", "path": notes}])
    library.daemon()
    library.configure([{"name": "notes", "path": notes}], extra='socket_idle_timeout = 30\n[limits]\nparse_workers = 3')

    done = ken(library, "reload")

    assert done.returncode == 0, done.stderr
    assert "not applied until `ken restart`: daemon.socket_idle_timeout, limits.parse_workers" in done.stdout
    library.configure([{"name": "notes", "path": notes}])
    again = ken(library, "reload")
    assert again.returncode == 0 and "restart" not in again.stdout


def test_a_daemon_still_on_the_socket_an_earlier_config_named_is_not_called_not_running(library):
    first = library.data_dir / "first.sock"
    library.configure([], extra=f'socket = "{first}"')
    daemon = library.daemon(wait=False)
    wait_for(lambda: first.exists() and ken(library, "status").returncode == 0, timeout=30, what="daemon on first.sock")
    library.configure([])

    for command in ("status", "search", "reload"):
        done = ken(library, command, *(["anything"] if command == "search" else []))
        assert done.returncode == 1
        assert f"a daemon (pid {daemon.proc.pid}) holds {library.data_dir}" in done.stderr
        assert "`ken restart` moves it" in done.stderr and "start it with `ken start`" not in done.stderr


def test_a_reload_while_the_config_file_is_missing_keeps_every_source(library, tmp_path):
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "heron.md").write_text("The heron waded through the estuary.\n")
    real = tmp_path / "dotfiles" / "kenning.toml"
    real.parent.mkdir()
    library.configure([{"name": "notes", "path": notes}]).rename(real)
    library.config.symlink_to(real)
    daemon = library.daemon()
    daemon.wait_idle("notes")
    real.rename(real.with_name("kenning.toml.bak"))  # the link is broken: the file is gone

    daemon.proc.send_signal(signal.SIGHUP)
    wait_for(lambda: "reload refused" in daemon.log(), timeout=30, what="the reload to be refused")
    with pytest.raises(RpcError, match="the config file is gone .* keeps its settings"):
        daemon.call("reload")

    assert daemon.search("heron")
    assert [s["name"] for s in daemon.call("status")["sources"] if s["kind"] == "folder" and s["active"]] == ["notes"]


def test_a_reload_that_lands_on_an_emptied_config_keeps_every_source(library, tmp_path):
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "heron.md").write_text("The heron waded through the estuary.\n")
    library.configure([{"name": "notes", "path": notes}])
    daemon = library.daemon()
    daemon.wait_idle("notes")
    saved = library.config.read_text()
    library.config.write_text("")  # an editor that truncates, then writes

    with pytest.raises(RpcError, match="the config file is empty .* keeps its settings"):
        daemon.call("reload")
    assert daemon.search("heron")
    library.config.write_text(saved)
    assert daemon.call("reload")["sources"] == ["notes"]
    assert [s["name"] for s in daemon.call("status")["sources"] if s["kind"] == "folder" and s["active"]] == ["notes"]


def test_ken_sources_remove_whose_daemon_goes_midway_says_how_the_removal_ended(library, tmp_path):
    """`ken sources remove` shows a bar from `status` asked twice a second while the
    removal runs. A daemon that went midway (stopped, its library wiped) failed that
    question, and that failure was the answer: 'a daemon holds the library but does not
    answer: it is still starting', or 'not running: start it', where the removal itself
    had been answered (done) or cut short (which `ken status` shows once it runs again)."""
    from tests.test_removed_text import grow_index

    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "a.md").write_text("Tapirs wallow here.\n")
    library.configure([{"name": "notes", "path": notes}])
    daemon = library.daemon()
    daemon.wait_idle("notes")
    daemon.call("documents.add", {"title": "Filler", "text": "Wombatry notes.", "source_uri": "filler://1"})
    daemon.wait_derived()
    # A keyword index whose purge, after the folder's rows go, takes a few seconds (its
    # rows written beside the idle daemon).
    grow_index(library.data_dir / "kenning.db", "filler://1", 5_000)

    remover = subprocess.Popen(
        [sys.executable, "-m", "kenning", "--config", str(library.config), "sources", "remove", "notes", "--yes"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    rows = "SELECT count(*) FROM sources WHERE name = 'notes'"
    wait_for(lambda: _rows(library, rows) == [(0,)], timeout=30, what="the folder's rows to go", interval=0.005)
    assert remover.poll() is None, "the removal ended before its purge"
    # No `status` reaches the daemon now, as once it is stopped, while the removal's own
    # connection stays open: a second is two of the bar's questions.
    daemon.socket.unlink()
    time.sleep(1)
    daemon.stop()
    out, err = remover.communicate(timeout=60)
    assert "start it" not in err and "still starting" not in err, err
    assert "removed source 'notes'" in out or "may have done it" in err, (out, err)


def _rows(library, sql: str) -> list[tuple]:
    with closing(sqlite3.connect(f"file:{library.data_dir / 'kenning.db'}?mode=ro", uri=True)) as conn:
        return conn.execute(sql).fetchall()
