"""`ken stop|restart|start|status|doctor` after `[daemon] data_dir` or `socket` was edited
under a running daemon: they find it where the config pointed when it started, so one
library never ends up with two daemons indexing its folders. Real daemons, real sockets."""

from __future__ import annotations

import dataclasses
import os
import signal
import subprocess
from pathlib import Path

import pytest

from kenning.cli.lifecycle import daemon_pid
from kenning.config.running import DaemonRecord, record_path, records_of, remove_record, write_record
from tests.daemon_harness import DaemonProcess, wait_for, write_config
from tests.test_lifecycle_e2e import ken


def only_running(config: Path, expected: list[int]) -> None:
    """Until the daemons run with `config` are `expected`: a stopped daemon gives up its
    lock before its process has left, and `ken stop` returns at the lock."""
    wait_for(lambda: daemons_of(config) == expected, timeout=10, what=f"only {expected} to run")


def daemons_of(config: Path) -> list[int]:
    """The pids of every live daemon process run with `config`, however it was started.

    A process a daemon is starting (a parse worker) has its parent's command line from
    the fork until it execs its own: it is the daemon's child, not a second daemon."""
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            words = (entry / "cmdline").read_bytes().split(b"\0")
            status = (entry / "status").read_text()
        except OSError:
            continue  # it ended meanwhile
        if os.fsencode(config) in words and b"daemon" in words and b"kenning" in words:
            found[int(entry.name)] = int(status.split("PPid:", 1)[1].split()[0])
    return sorted(pid for pid, parent in found.items() if parent not in found)


@pytest.fixture
def moved(library):
    """A library with a note to index; every daemon left running on its config is killed after."""
    notes = library.root / "notes"
    notes.mkdir()
    (notes / "okapi.md").write_text("# Okapi\n\nThe okapi is a forest giraffe.\n")
    library.sources = [{"name": "notes", "path": notes}]
    library.configure(library.sources)
    yield library
    for pid in daemons_of(library.config):
        os.kill(pid, signal.SIGKILL)
    wait_for(lambda: not daemons_of(library.config), timeout=10, what="the daemons to die")


def started(config: Path) -> None:
    done = ken(config, "start")
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize("edited", ["data_dir", "socket"])
def test_restart_after_the_config_moved_the_library_leaves_one_daemon_where_it_now_points(moved, edited):
    old_dir, old_socket = moved.data_dir, moved.data_dir / "kenning.sock"
    started(moved.config)
    first = daemon_pid(old_dir)
    if edited == "data_dir":
        new_dir = moved.root / "moved-data"
        new_socket = new_dir / "kenning.sock"
        write_config(moved.config, new_dir, moved.sources)
    else:
        new_dir = old_dir
        new_socket = moved.root / "run" / "k.sock"
        write_config(moved.config, old_dir, moved.sources, extra=f'socket = "{new_socket}"')

    restarted = ken(moved.config, "restart")

    assert restarted.returncode == 0, restarted.stdout + restarted.stderr
    if edited == "data_dir":
        assert f"stopped the daemon on the old data directory {old_dir} (pid {first})" in restarted.stdout
        assert daemon_pid(old_dir) is None
    else:
        assert f"kenning stopped (pid {first}, which listened on {old_socket})" in restarted.stdout
    assert not old_socket.exists()
    second = daemon_pid(new_dir)
    assert second and second != first and f"pid {second}" in restarted.stdout
    only_running(moved.config, [second])
    assert new_socket.exists() and ken(moved.config, "status").returncode == 0


def test_after_the_data_directory_moved_status_doctor_and_start_name_the_old_daemon_and_stop_ends_it(moved):
    old_dir = moved.data_dir
    started(moved.config)
    first = daemon_pid(old_dir)
    new_dir = moved.root / "moved-data"
    write_config(moved.config, new_dir, moved.sources)
    named = f"(pid {first}) still runs on the old data directory {old_dir}"

    status = ken(moved.config, "status")
    assert status.returncode == 1 and named in status.stderr and f"`ken restart` stops it and starts one on {new_dir}" in status.stderr
    doctor = ken(moved.config, "doctor")
    assert doctor.returncode == 1 and named in doctor.stdout and "ken restart" in doctor.stdout
    # A start would put a second daemon on the same folders: it is refused, naming the first.
    refused = ken(moved.config, "start")
    assert refused.returncode == 1 and named in refused.stderr
    assert daemon_pid(new_dir) is None and daemons_of(moved.config) == [first]

    stopped = ken(moved.config, "stop")

    assert stopped.returncode == 0, stopped.stdout + stopped.stderr
    assert stopped.stdout.strip() == f"stopped the daemon on the old data directory {old_dir} (pid {first})"
    assert daemon_pid(old_dir) is None and not (old_dir / "kenning.sock").exists()
    only_running(moved.config, [])
    assert ken(moved.config, "stop").stdout.strip() == "kenning is not running"
    # It removed its record as it stopped: nothing is left to name.
    assert records_of(moved.config) == []
    assert "old data directory" not in ken(moved.config, "status").stderr


def test_a_start_from_another_config_on_the_same_library_names_the_socket_the_daemon_listens_on(moved):
    """Two config files naming one data directory and two sockets: `ken start` from the
    second, the first's daemon running (or winning a start at the same moment), waited a
    minute for an answer on its own socket that could never come, then said the daemon
    "is still starting"."""
    started(moved.config)
    first = daemon_pid(moved.data_dir)
    other = write_config(
        moved.root / "other.toml", moved.data_dir, moved.sources, extra=f'socket = "{moved.root / "run" / "o.sock"}"'
    )
    refused = ken(other, "start", timeout=30)
    assert refused.returncode == 1
    assert f"it listens on {moved.data_dir / 'kenning.sock'}" in refused.stderr, refused.stderr
    assert "still starting" not in refused.stderr and daemons_of(moved.config) == [first]
    # Its socket is the first config's, not an old one of this config's.
    stopped = ken(other, "stop")
    assert stopped.stdout.strip() == f"kenning stopped (pid {first}, which listened on {moved.data_dir / 'kenning.sock'})"


def test_a_second_daemon_left_on_the_old_data_directory_is_named_and_restart_leaves_one(moved):
    """Two daemons of one config (one started before the edit, one after, outside `ken`):
    status still answers, but says so, and a restart ends both and starts one."""
    old_dir = moved.data_dir
    first = moved.daemon().proc.pid
    new_dir = moved.root / "moved-data"
    write_config(moved.config, new_dir, moved.sources)
    second = DaemonProcess(moved.config, new_dir, moved.root / "second.log").start()
    try:
        assert daemons_of(moved.config) == sorted([first, second.proc.pid])
        named = f"(pid {first}) still runs on the old data directory {old_dir}"

        status = ken(moved.config, "status")
        assert status.returncode == 0 and named in status.stderr
        doctor = ken(moved.config, "doctor")
        assert doctor.returncode == 1 and f"a second daemon runs: the daemon started from this config {named}" in doctor.stdout

        restarted = ken(moved.config, "restart")

        assert restarted.returncode == 0, restarted.stdout + restarted.stderr
        assert f"stopped the daemon on the old data directory {old_dir} (pid {first})" in restarted.stdout
        assert f"kenning stopped (pid {second.proc.pid})" in restarted.stdout
        third = daemon_pid(new_dir)
        assert daemon_pid(old_dir) is None
        only_running(moved.config, [third])
    finally:
        second.stop()


def test_a_record_left_by_a_killed_daemon_is_passed_over_and_the_next_daemon_replaces_it(moved):
    old_dir = moved.data_dir
    started(moved.config)
    first = daemon_pid(old_dir)
    os.kill(first, signal.SIGKILL)
    wait_for(lambda: daemon_pid(old_dir) is None, timeout=10, what="the killed daemon's lock to go")
    [left] = records_of(moved.config)
    assert left.pid == first
    # The system gives its pid to another program: the record names a live process now.
    sleeper = subprocess.Popen(["sleep", "600"])
    try:
        write_record(dataclasses.replace(left, pid=sleeper.pid))
        new_dir = moved.root / "moved-data"
        write_config(moved.config, new_dir, moved.sources)

        status = ken(moved.config, "status")
        assert status.returncode == 1 and "old data directory" not in status.stderr and "ken start" in status.stderr
        started(moved.config)
        second = daemon_pid(new_dir)
        stopped = ken(moved.config, "stop")
        assert stopped.stdout.strip() == f"kenning stopped (pid {second})"
        assert sleeper.poll() is None
    finally:
        sleeper.kill()
        sleeper.wait()

    # The next daemon on the old directory replaces the record, and is found by it.
    write_config(moved.config, old_dir, moved.sources)
    started(moved.config)
    third = daemon_pid(old_dir)
    write_config(moved.config, new_dir, moved.sources)
    restarted = ken(moved.config, "restart")
    assert f"stopped the daemon on the old data directory {old_dir} (pid {third})" in restarted.stdout
    only_running(moved.config, [daemon_pid(new_dir)])


def test_a_record_is_the_users_alone_and_one_that_cannot_be_read_is_passed_over(tmp_path):
    config = tmp_path / "config.toml"
    record = DaemonRecord(pid=1, config=str(config), data_dir=str(tmp_path / "a"), socket=str(tmp_path / "a" / "s"))
    path = write_record(record)
    assert path == record_path(config, tmp_path / "a") and os.stat(path).st_mode & 0o777 == 0o600
    assert os.stat(path.parent).st_mode & 0o777 == 0o700
    # A link to the config names the same library, so it finds the same records.
    (tmp_path / "link.toml").symlink_to(config)
    assert records_of(tmp_path / "link.toml") == [record]
    # Half a file (a disk that filled as it was written), or one from elsewhere: no record.
    record_path(config, tmp_path / "b").write_text('{"pid": 2, "config"')
    record_path(config, tmp_path / "c").write_text('["not", "a", "record"]')
    assert records_of(config) == [record]


def test_the_last_record_of_a_config_takes_its_folder_with_it(tmp_path):
    config = tmp_path / "config.toml"
    first = DaemonRecord(pid=1, config=str(config), data_dir=str(tmp_path / "a"), socket=str(tmp_path / "a" / "s"))
    second = dataclasses.replace(first, pid=2, data_dir=str(tmp_path / "b"))
    write_record(first)
    folder = write_record(second).parent
    remove_record(first)
    assert records_of(config) == [second]
    remove_record(second)
    assert records_of(config) == [] and not folder.exists()
    assert write_record(first).parent == folder and records_of(config) == [first]


def test_stale_records_are_removed_once_their_lock_is_free_and_a_live_daemons_record_stays(moved):
    """Each daemon killed outright left its record in the state directory for good; the
    `ken` command that finds one stale removes it, but only with the data directory's
    lock free: a live daemon's record stays, and a pid that is alive but holds no lock
    (given to another program) is neither signalled nor kept."""
    old_dir = moved.data_dir
    started(moved.config)
    killed = daemon_pid(old_dir)
    os.kill(killed, signal.SIGKILL)
    wait_for(lambda: daemon_pid(old_dir) is None, timeout=10, what="the killed daemon's lock to go")
    [dead] = records_of(moved.config)
    assert dead.pid == killed
    new_dir = moved.root / "moved-data"
    write_config(moved.config, new_dir, moved.sources)
    started(moved.config)
    live = daemon_pid(new_dir)
    # Beside the killed daemon's (put back: the start found it already), a pid given to
    # another program since, on a data directory no daemon holds, and one whose data
    # directory is gone along with its daemon.
    reused_dir, gone_dir = moved.root / "reused", moved.root / "gone"
    reused_dir.mkdir(mode=0o700)
    (reused_dir / "daemon.lock").write_text("")
    sleeper = subprocess.Popen(["sleep", "600"])
    # And a daemon killed whose parent has not reaped it yet (a container's init may
    # never): its pid still answers kill(pid, 0).
    zombie = subprocess.Popen(["sleep", "600"])
    zombie.kill()
    wait_for(lambda: zombie_state(zombie.pid), timeout=10, what="the killed process to be a zombie")
    try:
        write_record(dead)
        write_record(dataclasses.replace(dead, pid=sleeper.pid, data_dir=str(reused_dir)))
        write_record(dataclasses.replace(dead, data_dir=str(gone_dir)))
        write_record(dataclasses.replace(dead, pid=zombie.pid, data_dir=str(moved.root / "gone-too")))
        assert len(records_of(moved.config)) == 5

        status = ken(moved.config, "status")

        assert status.returncode == 0, status.stdout + status.stderr
        assert [(record.pid, record.data_dir) for record in records_of(moved.config)] == [(live, str(new_dir))]
        assert sleeper.poll() is None
    finally:
        sleeper.kill()
        sleeper.wait()
        zombie.wait()


def zombie_state(pid: int) -> bool:
    return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0] == "Z"
    assert ken(moved.config, "stop").stdout.strip() == f"kenning stopped (pid {live})"
    assert records_of(moved.config) == []
