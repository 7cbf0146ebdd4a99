"""`ken start|stop|restart` and `ken service` without a service manager, and the daemon's
sd_notify messages under a (test-made) systemd notify socket: real processes, real sockets."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from kenning.cli import lifecycle, main
from kenning.cli.lifecycle import daemon_pid, log_path
from kenning.config.paths import SOCKET_PATH_BYTES, default_data_dir, socket_path_too_long, state_dir
from kenning.daemon.guard import DataDirLock
from kenning.errors import KenningError
from tests.daemon_harness import wait_for
from tests.fake_ollama import fake_ollama


def ken(config: Path, *args: str, timeout: float = 90) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "kenning", "--config", str(config), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )


def starting(config: Path) -> subprocess.Popen:
    """`ken start` under way, its output to be read with communicate()."""
    return subprocess.Popen(
        [sys.executable, "-m", "kenning", "--config", str(config), "start"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True,
    )  # fmt: skip


def in_foreground(config: Path) -> subprocess.Popen:
    """`ken daemon`: the daemon as this test's own child, to signal and wait for."""
    return subprocess.Popen(
        [sys.executable, "-m", "kenning", "--config", str(config), "daemon"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL,
    )  # fmt: skip


@pytest.fixture
def detached(library):
    """Whatever `ken start` leaves running is ended after the test, however it went."""
    yield library
    pid = daemon_pid(library.data_dir)
    if pid:
        os.kill(pid, signal.SIGKILL)
        wait_for(lambda: daemon_pid(library.data_dir) is None, timeout=10, what="daemon to die")


def test_start_stop_restart_without_a_service_manager(detached, tmp_path, isolated_home):
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "a.md").write_text("# A\n\nThe okapi is a forest giraffe.\n")
    config = detached.configure([{"name": "notes", "path": notes}])

    started = ken(config, "start")
    assert started.returncode == 0, started.stderr
    assert "kenning is running" in started.stdout and "in the background" in started.stdout
    first = daemon_pid(detached.data_dir)
    assert first and f"pid {first}" in started.stdout
    # A library with a data_dir of its own logs beside its index, not to the default log.
    log = detached.data_dir / "kenning.log"
    assert f"log: {log})" in started.stdout and "kenning daemon ready" in log.read_text()
    assert not (isolated_home / ".local" / "state" / "kenning" / "kenning.log").exists()
    # `ken start` returned once the daemon answers, so a command right after it works.
    assert ken(config, "status").returncode == 0

    again = ken(config, "start")
    assert again.returncode == 0 and f"already running (pid {first})" in again.stdout

    restarted = ken(config, "restart")
    assert restarted.returncode == 0, restarted.stderr
    second = daemon_pid(detached.data_dir)
    assert second and second != first
    assert f"kenning stopped (pid {first})" in restarted.stdout

    status = ken(config, "service", "status")
    assert "service manager: none found" in status.stdout and f"pid {second}" in status.stdout

    # A daemon left running keeps its log bounded: once past 10 MB it is moved aside and
    # the daemon goes on in a new one.
    filler = (10 << 20) // 12 + 1
    with open(log, "ab") as out:
        out.write(b"an old line\n" * filler)
    moved = "its earlier lines are in kenning.log.1"

    def moved_aside() -> bool:
        try:
            return moved in log.read_text()
        except FileNotFoundError:  # read between the move and the new log's opening
            return False

    wait_for(moved_aside, timeout=30, what="the daemon to move its log aside")
    assert log.stat().st_size < 1 << 20 and "an old line" not in log.read_text()
    # Lines the daemon logged meanwhile may follow them there.
    assert log.with_name("kenning.log.1").read_text().count("an old line\n") == filler
    assert ken(config, "status").returncode == 0

    stopped = ken(config, "stop")
    assert stopped.returncode == 0 and f"kenning stopped (pid {second})" in stopped.stdout
    assert daemon_pid(detached.data_dir) is None
    assert not (detached.data_dir / "kenning.sock").exists()
    assert "kenning is not running" in ken(config, "stop").stdout
    assert ken(config, "status").returncode == 1


def test_starts_at_once_all_report_the_one_daemon_that_runs(detached):
    config = detached.configure([])
    starts = [starting(config) for _ in range(3)]
    outputs = [start.communicate(timeout=90) for start in starts]
    assert [start.returncode for start in starts] == [0, 0, 0], outputs
    running = daemon_pid(detached.data_dir)
    assert running and all(f"pid {running}" in out for out, _ in outputs)


def test_a_start_while_a_daemon_holds_the_library_but_does_not_answer_yet_waits_for_it(detached):
    """A daemon takes its library's lock before it loads its modules and model, and
    listens a second or so later: a `ken start` that came then (a second start at once,
    or one while the service manager's daemon came up) said "it is still starting" and
    exited 1. The daemon is held still just after it takes the lock, so the start meets
    it there every time."""
    config = detached.configure([])
    daemon = in_foreground(config)
    try:
        wait_for(lambda: daemon_pid(detached.data_dir) == daemon.pid, timeout=30, what="the lock", interval=0.005)
        daemon.send_signal(signal.SIGSTOP)
        assert not (detached.data_dir / "kenning.sock").exists(), "the daemon listened before it was held"
        start = starting(config)
        time.sleep(3)
        assert start.poll() is None, start.communicate()
        daemon.send_signal(signal.SIGCONT)
        out, err = start.communicate(timeout=90)
        assert start.returncode == 0 and f"kenning is running (pid {daemon.pid})" in out, out + err
    finally:
        daemon.send_signal(signal.SIGCONT)
        daemon.terminate()
        daemon.wait(timeout=30)


def test_a_daemon_held_while_it_stops_is_named_as_stopping_and_a_start_waits_for_it(detached):
    """Between closing its socket and letting go of its lock a stopping daemon answers no
    one: a command then was told it was "still starting", and `ken start` (a stop and a
    start in quick succession) failed. A search waiting on a hung embedder keeps the
    daemon draining for seconds, and it is held still there, so the commands meet it in
    that state every time."""
    with fake_ollama() as ollama:
        embedder = f'[embedder]\nbackend = "ollama"\nmodel = "fake-embed"\nbase_url = "{ollama.url}"\n'
        config = detached.configure([], extra=embedder + "[retrieval]\nquery_embed_timeout = 30\n")
        daemon = in_foreground(config)
        try:
            sock = detached.data_dir / "kenning.sock"
            # Until the embedder has loaded a search skips the vector leg and asks Ollama nothing.
            wait_for(lambda: _embedder_loaded(config), timeout=60, what="the daemon to answer with its embedder loaded")
            ollama.mode = "hang"
            with socket.socket(socket.AF_UNIX) as waiting:
                waiting.connect(str(sock))
                waiting.sendall(b'{"jsonrpc":"2.0","id":1,"method":"search","params":{"query":"okapi"}}\n')
                wait_for(lambda: ollama.hung_requests >= 1, timeout=30, what="the search to wait on the embedder")
                daemon.send_signal(signal.SIGTERM)
                wait_for(lambda: _refused(sock), timeout=30, what="the daemon to close its socket", interval=0.01)
                daemon.send_signal(signal.SIGSTOP)
            assert b"stopping" in (detached.data_dir / "daemon.lock").read_bytes()
            asked = ken(config, "status")
            assert asked.returncode != 0 and f"the daemon (pid {daemon.pid})" in asked.stderr, asked.stderr
            assert "is stopping" in asked.stderr and "still starting" not in asked.stderr
            ollama.mode = None
            start = starting(config)
            time.sleep(1)
            assert start.poll() is None, start.communicate()
            daemon.send_signal(signal.SIGCONT)
            assert daemon.wait(timeout=30) == 0
            out, err = start.communicate(timeout=90)
            running = daemon_pid(detached.data_dir)
            assert start.returncode == 0 and running not in (None, daemon.pid), out + err
            assert f"kenning is running (pid {running}" in out
        finally:
            daemon.send_signal(signal.SIGCONT)
            daemon.terminate()
            daemon.wait(timeout=30)


def _embedder_loaded(config: Path) -> bool:
    asked = ken(config, "status")
    return asked.returncode == 0 and "· loading ·" not in asked.stdout


def _refused(path: Path) -> bool:
    with socket.socket(socket.AF_UNIX) as probe:
        try:
            probe.connect(str(path))
        except (ConnectionRefusedError, FileNotFoundError):
            return True
    return False


def test_a_stop_asked_while_a_start_is_under_way_stops_the_daemon_it_starts(detached):
    """`ken start &` then `ken stop` at once: the stop looked before the new daemon held its
    lock, said "not running", and the daemon came up anyway. It now waits for the start."""
    config = detached.configure([])
    start = starting(config)
    wait_for(lambda: log_path(detached.data_dir).exists(), timeout=30, what="the start to launch its daemon")
    stopped = ken(config, "stop")
    start.communicate(timeout=90)
    assert stopped.returncode == 0 and "kenning stopped" in stopped.stdout, stopped.stdout + stopped.stderr
    assert daemon_pid(detached.data_dir) is None


def test_each_library_has_a_log_of_its_own(isolated_home):
    assert log_path(default_data_dir()) == state_dir() / "kenning.log"
    assert log_path(isolated_home / "work-library") == isolated_home / "work-library" / "kenning.log"


def test_start_refuses_a_broken_config_and_reports_a_daemon_that_dies(detached, tmp_path):
    config = detached.configure([], extra="sweep_intervl = 3")
    refused = ken(config, "start")
    assert refused.returncode == 1 and "did you mean sweep_interval?" in refused.stderr
    assert daemon_pid(detached.data_dir) is None

    detached.configure([])
    detached.data_dir.mkdir(mode=0o755)
    os.chmod(detached.data_dir, 0o755)  # the daemon refuses a data directory others can read
    died = ken(config, "start")
    assert died.returncode == 1
    assert "exited with status" in died.stderr and "can be read by other users" in died.stderr
    # A second failed start shows its own lines, not the first one's as well.
    again = ken(config, "start")
    assert again.returncode == 1 and again.stderr.count("can be read by other users") == 1

    # A directory everyone shares, as /tmp is, is not to be chmod-ed: the advice is to
    # move the socket, and doctor says the same.
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o1777)
    os.chmod(detached.data_dir, 0o700)
    config = detached.configure([], extra=f'socket = "{shared}/k.sock"')
    refused = ken(config, "start")
    assert refused.returncode == 1 and f"{shared} is shared with other users" in refused.stderr
    assert "chmod" not in refused.stderr
    doctor = ken(config, "doctor")
    assert f"socket: {shared} is shared with other users" in doctor.stdout and "chmod 700" not in doctor.stdout
    # A socket path too long for one: said once, and no daemon is asked on it.
    config = detached.configure([], extra=f'socket = "{tmp_path / ("x" * 120) / "k.sock"}"')
    doctor = ken(config, "doctor")
    assert doctor.returncode == 1 and "is longer than a unix socket path may be" in doctor.stdout
    assert "daemon:" not in doctor.stdout


def test_a_daemon_that_exits_between_two_looks_of_start_is_reported_in_one_line(detached, monkeypatch):
    """`ken start` asked twice per look whether the daemon it launched had exited: one
    that exited between the two asks ended the start in an UnboundLocalError's
    traceback instead of the daemon's own last words. The exit is made to land there
    (the first ask waits for it and answers as before it)."""
    config = detached.configure([])
    died = [sys.executable, "-c", "import sys; sys.exit('the daemon found no room')"]
    monkeypatch.setattr(lifecycle, "daemon_command", lambda ctx: died)
    poll = subprocess.Popen.poll
    asked: list[int] = []

    def exits_after_the_first_ask(process: subprocess.Popen) -> int | None:
        if process.args is died and not asked:
            asked.append(process.wait())
            return None
        return poll(process)

    monkeypatch.setattr(subprocess.Popen, "poll", exits_after_the_first_ask)
    result = CliRunner().invoke(main, ["--config", str(config), "start"])
    assert isinstance(result.exception, SystemExit) and result.exit_code == 1, result.exception
    assert "the daemon exited with status 1" in result.output and "the daemon found no room" in result.output


# A process whose stdout and stderr append to one log, as `ken start` and launchd leave
# the daemon's: it writes a round of lines, then asks for the log to be moved aside.
_LOGGING_ROUNDS = """
import sys
from kenning.daemon.logfile import rotate_own_log
for n in range(int(sys.argv[1])):
    for k in range(300):
        print(f"round {n} line {k}", file=sys.stderr, flush=True)
    print(f"moved {rotate_own_log(4096)}", flush=True)
"""


def test_a_running_daemons_log_is_moved_aside_once_past_its_limit_and_stays_bounded(tmp_path):
    """Soak finding: the log `ken start` and launchd give the daemon was trimmed only when a
    daemon started, so one left running grew it by every sweep and agent write, for months."""
    log = tmp_path / "kenning.log"
    with open(log, "ab") as out:
        subprocess.run([sys.executable, "-c", _LOGGING_ROUNDS, "40"], stdout=out, stderr=out, check=True, timeout=60)
    earlier = log.with_name("kenning.log.1")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kenning.log", "kenning.log.1"]
    # Forty rounds of about 5 kB each: two logs of one round, not one of all forty.
    assert log.stat().st_size + earlier.stat().st_size < 2 * 6000
    assert earlier.read_text().splitlines()[-1] == "round 39 line 299"
    assert log.read_text() == f"moved {log}\n"
    assert log.stat().st_mode & 0o777 == 0o600
    # Output that is not a file (a terminal, a pipe, journald under systemd) is left alone.
    piped = subprocess.run([sys.executable, "-c", _LOGGING_ROUNDS, "1"], capture_output=True, text=True, timeout=60)
    assert piped.stdout == "moved None\n" and piped.stderr.count("\n") == 300


def test_a_log_deleted_with_its_folder_while_the_daemon_runs_is_started_anew_where_it_was(tmp_path):
    """Its lines went to the deleted file: `ken status` named a log that did not exist,
    and the file, which no path reached any more, grew without bound."""
    log = tmp_path / "state" / "kenning" / "kenning.log"
    log.parent.mkdir(parents=True)
    deleting = (
        "import shutil, sys; from kenning.daemon.logfile import rotate_own_log;"
        " print('before', file=sys.stderr, flush=True); shutil.rmtree(sys.argv[1]);"
        " print(f'started {rotate_own_log(1 << 20)}', flush=True); print('after', file=sys.stderr, flush=True)"
    )
    with open(log, "ab") as out:
        subprocess.run([sys.executable, "-c", deleting, str(log.parent)], stdout=out, stderr=out, check=True, timeout=60)
    lines = log.read_text().splitlines()
    assert lines[-2:] == [f"started {log}", "after"] and "before" not in lines
    assert log.stat().st_mode & 0o777 == 0o600


@pytest.mark.parametrize("through", ["a-file", "/proc"])
def test_a_data_directory_that_cannot_be_made_is_one_line_naming_it(tmp_path, through):
    (tmp_path / "a-file").write_text("not a folder\n")
    data_dir = tmp_path / "a-file" / "kenning" if through == "a-file" else Path("/proc/kenning-data")
    config = tmp_path / "config.toml"
    config.write_text(f'[daemon]\ndata_dir = "{data_dir}"\n')
    refused = ken(config, "daemon", timeout=30)
    assert refused.returncode == 1
    last = refused.stderr.splitlines()[-1]
    assert last.startswith(f"ken: cannot create the directory {data_dir}: "), refused.stderr
    assert "Traceback" not in refused.stderr
    if through == "a-file":
        assert f"{tmp_path / 'a-file'} is a file, not a directory" in last
        doctor = ken(config, "doctor")
        assert f"PROBLEM data directory: {data_dir} cannot be created: {tmp_path / 'a-file'} is a file" in doctor.stdout


def test_service_install_without_a_manager_runs_the_daemon_detached(detached):
    config = detached.configure([])
    installed = ken(config, "service", "install")
    assert installed.returncode == 0, installed.stderr
    assert "no user service manager here" in installed.stdout and "ken start` after a reboot" in installed.stdout
    first = daemon_pid(detached.data_dir)
    assert first
    if sys.platform.startswith("linux"):
        # It holds no folder busy: the one `ken` ran in could be on a drive to unmount.
        assert os.readlink(f"/proc/{first}/cwd") == "/"
    # Installing again (an upgrade) restarts the daemon onto this code.
    again = ken(config, "service", "install")
    assert again.returncode == 0, again.stderr
    assert daemon_pid(detached.data_dir) not in (None, first)


def test_the_daemon_tells_systemd_it_is_ready_pings_the_watchdog_and_says_when_it_stops(library, tmp_path, monkeypatch):
    path = tmp_path / "notify.sock"
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    listener.bind(str(path))
    listener.settimeout(20)
    monkeypatch.setenv("NOTIFY_SOCKET", str(path))
    monkeypatch.setenv("WATCHDOG_USEC", "400000")  # pings every 0.1 s
    library.configure([])
    daemon = library.daemon(wait=False)
    try:
        messages = []
        while "READY=1" not in messages:
            messages.extend(listener.recv(4096).decode().split())
        # READY comes once the socket answers: a status call right away succeeds.
        assert daemon.call("status")["daemon"]["pid"] == daemon.proc.pid
        pings = 0
        deadline = time.monotonic() + 10
        while pings < 3 and time.monotonic() < deadline:
            pings += listener.recv(4096).decode().split().count("WATCHDOG=1")
        assert pings >= 3
        daemon.proc.send_signal(signal.SIGTERM)
        while "STATUS=stopping" not in messages:
            messages.extend(listener.recv(4096).decode().split())
        assert daemon.proc.wait(20) == 0
    finally:
        listener.close()


def test_the_service_files_ken_writes_are_valid_for_their_managers(tmp_path):
    import plistlib

    from kenning.cli.lifecycle import launchd_plist, systemd_unit

    command = [sys.executable, "-m", "kenning", "--config", str(tmp_path / "my 100% config.toml"), "daemon"]
    unit = tmp_path / "kenning.service"
    unit.write_text(systemd_unit(command, {"PYTHONUNBUFFERED": "1"}))
    checked = subprocess.run(["systemd-analyze", "verify", str(unit)], capture_output=True, text=True)
    assert checked.returncode == 0, checked.stderr
    assert "Type=notify" in unit.read_text() and "WatchdogSec=" in unit.read_text()
    plist = plistlib.loads(launchd_plist(command, tmp_path / "a&b" / "kenning.log", {"PYTHONUNBUFFERED": "1"}).encode())
    assert plist["ProgramArguments"] == command
    assert plist["StandardErrorPath"] == str(tmp_path / "a&b" / "kenning.log")


def test_restart_with_a_broken_config_keeps_the_running_daemon(detached):
    config = detached.configure([])
    assert ken(config, "start").returncode == 0
    running = daemon_pid(detached.data_dir)
    detached.configure([], extra="sweep_intervl = 3")
    refused = ken(config, "restart")
    assert refused.returncode == 1 and "did you mean sweep_interval?" in refused.stderr
    # The daemon that ran on the good config still runs and answers.
    assert daemon_pid(detached.data_dir) == running
    assert ken(config, "status").returncode == 0


@pytest.mark.parametrize("through", ["a-file", "/proc"])
def test_start_on_a_data_directory_that_cannot_be_made_says_so_without_a_traceback(tmp_path, through):
    (tmp_path / "a-file").write_text("not a folder\n")
    data_dir = tmp_path / "a-file" / "kenning" if through == "a-file" else Path("/proc/kenning-data")
    config = tmp_path / "config.toml"
    config.write_text(f'[daemon]\ndata_dir = "{data_dir}"\n')
    refused = ken(config, "start", timeout=30)
    assert refused.returncode == 1
    assert "Traceback" not in refused.stderr, refused.stderr
    assert refused.stderr.startswith(f"ken: cannot write the daemon's log {data_dir / 'kenning.log'}: ")
    assert "set [daemon] data_dir elsewhere" in refused.stderr
    if through == "a-file":
        assert f"{tmp_path / 'a-file'} is a file, not a directory" in refused.stderr


def test_a_data_directory_whose_lock_cannot_be_opened_is_one_line_naming_it(tmp_path):
    """The daemon's lock is the first file it opens in its data directory: on a read-only
    disk, or through a file, that is one line naming it, not a traceback. (A directory
    made unwritable by its mode would do too, but root writes in it whatever the mode.)"""
    (tmp_path / "a-file").write_text("")
    lock = DataDirLock(tmp_path / "a-file")
    with pytest.raises(KenningError) as refused:
        lock.acquire()
    assert str(refused.value).startswith(f"cannot open {tmp_path / 'a-file' / 'daemon.lock'}: Not a directory")
    assert "data_dir" in str(refused.value)


def test_start_under_a_home_too_long_for_a_socket_names_the_socket_path(tmp_path):
    # The default socket is ~/.local/share/kenning/kenning.sock: a long HOME (a deep
    # checkout, a CI workspace) makes it longer than a unix socket path may be.
    home = tmp_path / ("h" * 100)
    home.mkdir(mode=0o700)
    env = {**os.environ, "HOME": str(home), "XDG_CONFIG_HOME": "", "XDG_DATA_HOME": "", "XDG_STATE_HOME": ""}
    env.pop("KENNING_CONFIG", None)
    started = subprocess.run(
        [sys.executable, "-m", "kenning", "start"], capture_output=True, text=True, timeout=60, env=env,
        stdin=subprocess.DEVNULL,
    )
    assert started.returncode == 1
    assert "not accepting connections" not in started.stderr
    assert "longer than a unix socket path may be" in started.stderr and "set [daemon] socket" in started.stderr


def test_a_relative_xdg_data_home_is_ignored_so_stop_in_another_folder_stops_the_daemon(isolated_home):
    # XDG_DATA_HOME=rel made the library `rel/kenning` under whatever folder `ken` ran
    # in: `ken stop` from another folder said "not running" beside the daemon it left.
    # (The test's home, not a folder named after the test: the socket's path must fit.)
    home = isolated_home
    started_in, stopped_in = home / "a", home / "b"
    for folder in (started_in, stopped_in):
        folder.mkdir(parents=True)
    env = {**os.environ, "HOME": str(home), "XDG_CONFIG_HOME": "", "XDG_DATA_HOME": "rel", "XDG_STATE_HOME": "st"}
    env.pop("KENNING_CONFIG", None)

    def ken(command: str, cwd: Path) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "kenning", command], capture_output=True, text=True, timeout=90, env=env,
            cwd=cwd, stdin=subprocess.DEVNULL,
        )

    try:
        assert ken("start", started_in).returncode == 0
        stopped = ken("stop", stopped_in)
        assert stopped.stdout.startswith("kenning stopped"), stopped.stdout + stopped.stderr
    finally:
        ken("stop", started_in)
    assert not (started_in / "rel").exists()


def test_the_systemd_unit_keeps_paths_with_newlines_backslashes_quotes_and_dollars(tmp_path):
    from kenning.cli.lifecycle import systemd_unit

    # A config path as a user may name it: systemd must read back one word, unchanged.
    config = tmp_path / 'my "100%" $HOME it\'s a\\tb\nnotes.toml'
    unit = tmp_path / "kenning.service"
    unit.write_text(systemd_unit([sys.executable, "-m", "kenning", "--config", str(config), "daemon"], {}))
    [exec_start] = [line for line in unit.read_text().splitlines() if line.startswith("ExecStart=")]
    # Each word double-quoted with C escapes, % doubled (a specifier), and $ doubled in an
    # argument (systemd would expand a lone $HOME even inside quotes).
    quoted = str(config).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    quoted = quoted.replace("%", "%%").replace("$", "$$")
    assert exec_start == f'ExecStart="{sys.executable}" "-m" "kenning" "--config" "{quoted}" "daemon"'
    if shutil.which("systemd-analyze") is None:
        return
    # Where systemd is at hand, it parses the unit, and names the executable as it read it.
    checked = subprocess.run(["systemd-analyze", "verify", str(unit)], capture_output=True, text=True)
    assert checked.returncode == 0, checked.stderr
    missing = tmp_path / "a venv $HOME 100%" / "python"
    unit.write_text(systemd_unit([str(missing), "-m", "kenning", "daemon"], {}))
    checked = subprocess.run(["systemd-analyze", "verify", str(unit)], capture_output=True, text=True)
    assert f"Command {missing} is not executable" in checked.stderr, checked.stderr


def test_the_socket_path_limit_is_the_longest_path_a_socket_binds_at(tmp_path):
    base = str(tmp_path / "s")
    at_limit = Path(base + "x" * (SOCKET_PATH_BYTES - len(os.fsencode(base))))
    assert socket_path_too_long(at_limit) is None
    with socket.socket(socket.AF_UNIX) as listener:
        listener.bind(str(at_limit))
    past = Path(f"{at_limit}y")
    assert "set [daemon] socket to a shorter path" in (socket_path_too_long(past) or "")
    with socket.socket(socket.AF_UNIX) as listener, pytest.raises(OSError):
        listener.bind(str(past))


def _mode(path: Path) -> int:
    return path.stat().st_mode & 0o777


def test_what_ken_makes_under_umask_000_is_the_users_alone(tmp_path, isolated_home):
    """A user with umask 000 gets no folder or file of kenning's that another user could
    read or swap: the config, its folders, the log and its folders, the service file."""
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "a.md").write_text("# A\n\nThe okapi is a forest giraffe.\n")
    home = isolated_home
    env = {**os.environ, "XDG_STATE_HOME": str(home / ".local" / "state")}
    ken_here = [sys.executable, "-m", "kenning"]
    previous = os.umask(0)
    try:
        added = subprocess.run([*ken_here, "sources", "add", str(notes), "--yes"], capture_output=True, text=True, env=env)
        assert added.returncode == 0, added.stderr
        started = subprocess.run([*ken_here, "start"], capture_output=True, text=True, env=env, timeout=90)
        assert started.returncode == 0, started.stderr
        try:
            made = {
                ".config": 0o755, ".config/kenning": 0o700, ".config/kenning/config.toml": 0o600,
                ".local": 0o755, ".local/state": 0o755, ".local/state/kenning": 0o700,
                ".local/state/kenning/kenning.log": 0o600, ".local/share": 0o700,
                ".local/share/kenning": 0o700, ".local/share/kenning/kenning.db": 0o600,
                ".local/share/kenning/kenning.sock": 0o600, ".local/share/kenning/daemon.lock": 0o600,
            }  # fmt: skip
            assert {name: _mode(home / name) for name in made} == made
            assert all((home / name).stat().st_uid == os.geteuid() for name in made)
        finally:
            assert subprocess.run([*ken_here, "stop"], capture_output=True, env=env, timeout=60).returncode == 0

        from kenning.cli.lifecycle import write_unit

        unit = home / ".config" / "systemd" / "user" / "kenning.service"
        write_unit(unit, "[Unit]\n")
        assert [_mode(unit.parent.parent), _mode(unit.parent), _mode(unit)] == [0o755, 0o700, 0o600]
        # An older unit another user could write is replaced, not rewritten in place.
        unit.chmod(0o666)
        write_unit(unit, "[Unit]\nDescription=kenning\n")
        assert _mode(unit) == 0o600 and unit.read_text() == "[Unit]\nDescription=kenning\n"
    finally:
        os.umask(previous)


def test_a_library_this_user_may_not_open_is_one_line_from_every_command(tmp_path):
    """Another user's data directory named by a shared config, and a config in a folder
    this user may not write: each command says so in one line, never a traceback."""
    from tests.daemon_harness import as_a_user, write_config

    theirs = tmp_path / "theirs"
    data_dir = theirs / "data"
    data_dir.mkdir(parents=True, mode=0o700)
    (data_dir / "daemon.lock").write_text("")
    shared = tmp_path / "shared"
    shared.mkdir()
    config = write_config(shared / "config.toml", data_dir, [])
    notes = tmp_path / "notes"
    notes.mkdir()
    theirs.chmod(0)
    shared.chmod(0o500)
    try:

        def ken_as_a_user(*args: str) -> subprocess.CompletedProcess:
            command = [sys.executable, "-m", "kenning", "--config", str(config), *args]
            return subprocess.run(as_a_user(command), capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)

        not_yours = f"Permission denied: {theirs} is yours but mode 000; run ken as its owner"
        for args in (["stop"], ["restart"], ["daemon"], ["start"], ["status"]):
            done = ken_as_a_user(*args)
            assert done.returncode == 1, done.stderr
            assert "Traceback" not in done.stderr and not_yours in done.stderr.splitlines()[-1]
        # No daemon runs there: the socket's folder is what is in the way, and it is named.
        status = ken_as_a_user("status").stderr.splitlines()[-1]
        assert status.startswith(f"ken: cannot open {data_dir / 'kenning.sock'}: {not_yours}")
        doctor = ken_as_a_user("doctor")
        assert doctor.returncode == 1 and "Traceback" not in doctor.stderr
        assert f"PROBLEM data directory: cannot open {data_dir}: {not_yours}" in doctor.stdout
        added = ken_as_a_user("sources", "add", str(notes), "--yes")
        assert added.returncode == 1 and "Traceback" not in added.stderr
        assert added.stderr.splitlines()[-1] == (
            f"ken: cannot write {config}: Permission denied in {shared};"
            " keep a config where you can write, named by `ken --config FILE` or KENNING_CONFIG=FILE"
        )
    finally:
        theirs.chmod(0o700)
        shared.chmod(0o700)
    assert "notes" not in config.read_text()


def test_a_config_this_user_may_not_read_is_named_once_with_its_fix(library, isolated_home):
    from tests.daemon_harness import as_a_user

    config = isolated_home / ".config" / "kenning" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text(f'[daemon]\ndata_dir = "{library.data_dir}"\n')
    config.chmod(0)
    try:
        for args in (["status"], ["doctor"], ["sources", "add", str(isolated_home), "--yes"]):
            done = subprocess.run(
                as_a_user([sys.executable, "-m", "kenning", *args]), capture_output=True, text=True, timeout=60
            )
            assert done.returncode == 1 and "Traceback" not in done.stderr
            assert f"{config}: cannot read: Permission denied" in done.stdout + done.stderr
            assert (done.stdout + done.stderr).replace(f"chmod u+r {config}", "").count(str(config)) == 1
    finally:
        config.chmod(0o600)


def test_doctor_names_a_config_other_users_can_change(tmp_path):
    from tests.daemon_harness import write_config

    folder = tmp_path / "config"
    folder.mkdir()
    config = write_config(folder / "config.toml", tmp_path / "data", [])
    folder.chmod(0o777)
    config.chmod(0o666)
    loose = ken(config, "doctor").stdout
    assert f"PROBLEM config: {config} can be changed by other users\n        → chmod o-w {config}" in loose
    assert f"PROBLEM config: {folder} can be changed by other users" in loose
    folder.chmod(0o775)
    config.chmod(0o664)
    assert "can be changed by other users" not in ken(config, "doctor").stdout


def test_start_writes_no_log_through_a_link(tmp_path):
    """A log path that is a link (planted in a data_dir others can write) is refused in
    one line, and the file it points at is neither written nor chmod'ed."""
    from tests.daemon_harness import write_config

    data_dir = tmp_path / "data"
    data_dir.mkdir(mode=0o700)
    victim = tmp_path / "bashrc"
    victim.write_text("export PATH\n")
    victim.chmod(0o644)
    (data_dir / "kenning.log").symlink_to(victim)
    config = write_config(tmp_path / "config.toml", data_dir, [])
    started = ken(config, "start")
    assert started.returncode == 1 and "Traceback" not in started.stderr
    assert started.stderr.startswith(f"ken: cannot write the daemon's log {data_dir / 'kenning.log'}:")
    assert victim.read_text() == "export PATH\n" and _mode(victim) == 0o644
    assert daemon_pid(data_dir) is None


def test_a_lock_held_with_no_pid_written_is_never_told_to_kill_9_minus_1(tmp_path, monkeypatch):
    """A process holding the library's lock that had written no pid in it (a daemon still
    starting, or another program taking the lock) was read as pid -1: a stop that waited
    it out ended with "`kill -9 -1` ends it", which ends every process of the user."""
    import fcntl

    data_dir = tmp_path / "data"
    data_dir.mkdir()
    fd = os.open(data_dir / "daemon.lock", os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        assert daemon_pid(data_dir) == -1
        monkeypatch.setattr(lifecycle, "STOP_TIMEOUT", 0.2)
        with pytest.raises(KenningError) as stopped:
            lifecycle._end(-1, data_dir)
    finally:
        os.close(fd)
    message = str(stopped.value)
    assert "`kill" not in message and "pid -1" not in message
    assert f"`fuser -v {data_dir / 'daemon.lock'}` names it" in message
