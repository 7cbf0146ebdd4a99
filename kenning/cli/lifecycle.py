"""Starting, stopping and installing the daemon: `ken start|stop|restart` and `ken service`.

Where a user service manager runs (systemd --user on Linux, launchd on macOS) and kenning
is installed in it, these commands go through it, so its view of the service stays true
and it restarts a daemon that dies. Elsewhere (containers, WSL without systemd, a
session without a user bus) the daemon runs as a detached process whose output goes to
a log in the state directory (or, for a library with a `data_dir` of its own, beside
its index). Either way, "running" means what the user cares about: something answers
on the socket.

The daemon is run as `python -m kenning` with this `ken`'s own interpreter, so
restarting after an upgrade runs the new code.
"""

from __future__ import annotations

import fcntl
import os
import shlex
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import click

import kenning
from kenning.cli.app import Context, main, pass_context
from kenning.config.paths import (
    LOCK_NAME,
    LOG_ROTATE_BYTES,
    cannot_create,
    default_data_dir,
    make_private_dirs,
    not_yours,
    socket_path_too_long,
    state_dir,
    write_privately,
    xdg_value,
)
from kenning.config.running import DaemonRecord, all_records, read_lock_text, records_of, remove_record
from kenning.errors import DaemonNotRunning, KenningError, error_text

UNIT = "kenning.service"
LABEL = "com.kenning.daemon"
START_TIMEOUT = 60.0
STOP_TIMEOUT = 30.0
# How long the service manager waits for the daemon to leave after SIGTERM before it
# kills it (TimeoutStopSec, launchd's ExitTimeOut): past the daemon's own shutdown
# deadline, which it keeps (kenning/daemon/supervisor.py), and as long as `ken stop` waits.
SERVICE_STOP_SECONDS = int(STOP_TIMEOUT)
# Less free space than this beside the log, and a silent exit is put down to a full disk.
FULL_DISK_BYTES = 1 << 20


# -- is it running ------------------------------------------------------------------------


def daemon_pid(data_dir: Path) -> int | None:
    """The pid of the daemon holding the data directory's lock, or None when none does."""
    holder = lock_holder(data_dir)
    return None if holder is None else holder[0]


def pid_text(pid: int) -> str:
    """A lock holder's pid as messages give it: -1 is one that has written none yet."""
    return f"pid {pid}" if pid > 0 else "its pid not written yet"


def lock_holder(data_dir: Path) -> tuple[int, bool] | None:
    """The pid of the daemon holding the data directory's lock (-1 when it wrote none
    yet) and whether it is stopping; None when none holds it.

    The lock is an flock the kernel drops when the process ends however it ends, so this
    is true even for a daemon that was killed or hangs without answering on its socket.
    """
    try:
        fd = os.open(data_dir / LOCK_NAME, os.O_RDONLY)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except PermissionError as exc:
        raise KenningError(not_yours(data_dir / LOCK_NAME, exc)) from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            pid, stopping = read_lock_text(os.pread(fd, 64, 0))
            return (-1 if pid is None else pid), stopping
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)


def recorded_daemons(ctx: Context) -> list[DaemonRecord]:
    """The daemons started from this config that still run, wherever the config put them
    when each started. A record counts while its pid holds its data directory's lock:
    one left by a daemon killed outright names a pid that holds nothing (or that the
    system has given to another program since), and is passed over, and removed when
    that is sure (`_forget_if_stale`)."""
    running = []
    for record in records_of(ctx.config_path):
        try:
            holder = daemon_pid(Path(record.data_dir))
        except KenningError:
            continue  # a data directory this user can no longer open: nothing to tell there
        if holder == record.pid:
            running.append(record)
        else:
            _forget_if_stale(record)
    return running


def _forget_if_stale(record: DaemonRecord) -> None:
    """Remove the record of a daemon that no longer runs, which would otherwise stay in the
    state directory for good: each daemon killed outright leaves one.

    Only while this holds its data directory's lock (a shared flock, taken without
    waiting): no daemon holds the directory then, and none can take it and write its own
    record in place of this one until it is let go, so the record removed is never a
    live daemon's. A daemon holding the lock (another one, or one starting) leaves the
    record be: it replaces it with its own. A data directory that is gone holds no lock
    to take; its record goes once its pid has ended too (a daemon whose directory was
    deleted under it notices and leaves within seconds, removing its own)."""
    data_dir = Path(record.data_dir)
    try:
        fd = os.open(data_dir / LOCK_NAME, os.O_RDONLY | os.O_NOFOLLOW)
    except FileNotFoundError:
        if not data_dir.exists() and not _alive(record.pid):
            _remove_quietly(record)
        return
    except OSError:
        return  # a lock that cannot be opened proves nothing
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return
        _remove_quietly(record)
    finally:
        os.close(fd)


def _alive(pid: int) -> bool:
    if pid <= 0:
        return False  # os.kill would ask about a process group
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return not _zombie(pid)


def _zombie(pid: int) -> bool:
    """A process killed but not yet reaped still answers kill(pid, 0): a daemon killed
    outright, whose parent (`ken start` left it to init, and a container's init may reap
    late or never) has not collected it. Linux tells it in /proc; elsewhere it counts as
    alive, which only keeps a record longer."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    # The state follows the command's name in parentheses, which may hold anything.
    return stat.rpartition(")")[2].split()[:1] == ["Z"]


def _remove_quietly(record: DaemonRecord) -> None:
    # A state directory that cannot be written costs only the tidying.
    try:
        remove_record(record)
    except OSError:
        pass


def _same_place(one: str | Path, other: str | Path) -> bool:
    return os.path.realpath(one) == os.path.realpath(other)


def moved_away(ctx: Context) -> list[DaemonRecord]:
    """Daemons started from this config that run on a data directory it no longer names:
    `[daemon] data_dir` was edited under them."""
    return [record for record in recorded_daemons(ctx) if not _same_place(record.data_dir, ctx.locations.data_dir)]


def old_socket(ctx: Context, pid: int) -> str | None:
    """The socket the daemon `pid`, which holds this config's data directory, listens on,
    when the config names another one now: `[daemon] socket` was edited under it, or it
    was started from another config naming the same data directory. (That one's `ken
    start` waited a minute for it to answer where it never would.) The pid holding the
    lock is what makes a record of it current."""
    for record in all_records():
        if record.pid == pid and _same_place(record.data_dir, ctx.locations.data_dir):
            if not _same_place(record.socket, ctx.locations.socket):
                return record.socket
    return None


def still_runs(record: DaemonRecord) -> str:
    return (
        f"the daemon started from this config (pid {record.pid}) still runs on the old data directory"
        f" {record.data_dir}, and indexes the same folders"
    )


def not_answering(ctx: Context) -> str | None:
    """Why no daemon answers on the socket the config names although one started from it
    runs: "start it with `ken start`" would send the user to a second daemon. None when
    none runs."""
    held = lock_holder(ctx.locations.data_dir)
    if held is not None:
        holder, stopping = held
        if stopping:
            return (
                f"the daemon ({pid_text(holder)}) holding {ctx.locations.data_dir} is stopping: once it has exited,"
                " `ken start` starts it again"
            )
        where = old_socket(ctx, holder)
        # Still starting, it needs only a moment: "`ken restart` moves it" sent a search
        # made during a restart to restart it again.
        listens = (
            f"it listens on {where}, where the config it was started from said (`ken restart` moves it)"
            if where
            else "it is still starting (try again in a moment), or it listens where the config said when it"
            " started (then `ken restart` moves it)"
        )
        return (
            f"a daemon ({pid_text(holder)}) holds {ctx.locations.data_dir}"
            f" but does not answer on {ctx.locations.socket}: {listens}"
        )
    if moved := moved_away(ctx):
        return (
            f"no daemon answers on {ctx.locations.socket}, but {still_runs(moved[0])}:"
            f" `ken restart` stops it and starts one on {ctx.locations.data_dir}, `ken stop` just stops it"
        )
    return None


def answering(ctx: Context) -> dict | None:
    """The `daemon` part of the status of whatever answers on the socket. Read loosely, not
    decoded into this version's records: a daemon of another version (the one an upgrade
    is replacing) must count as running."""
    try:
        return ctx.client(timeout=5).call("status")["daemon"]
    except (DaemonNotRunning, OSError):
        return None


# -- service managers ---------------------------------------------------------------------


@dataclass(frozen=True)
class Manager:
    name: str  # systemd | launchd | none
    unit_path: Path | None

    @property
    def installed(self) -> bool:
        return self.unit_path is not None and self.unit_path.exists()


def manager() -> Manager:
    if sys.platform == "darwin" and shutil.which("launchctl"):
        return Manager("launchd", Path.home() / "Library" / "LaunchAgents" / f"{LABEL}.plist")
    if shutil.which("systemctl"):
        shown = _run(["systemctl", "--user", "show-environment"], check=False)
        if shown.returncode == 0:
            return Manager("systemd", _units_home(shown.stdout) / "systemd" / "user" / UNIT)
    return Manager("none", None)


def _units_home(manager_environment: str) -> Path:
    """The folder the user manager reads units under: its own XDG_CONFIG_HOME, else
    ~/.config. Not the shell's: one exported by ~/.bashrc alone put the unit where systemd
    never looks, and `systemctl --user enable` said the file just written did not exist."""
    environment = dict(line.partition("=")[::2] for line in manager_environment.splitlines())
    value = xdg_value("XDG_CONFIG_HOME", environment)
    return Path(value) if value else Path.home() / ".config"


def _run(command: list[str], check: bool = True) -> subprocess.CompletedProcess:
    done = subprocess.run(command, capture_output=True, text=True)
    if check and done.returncode:
        raise KenningError(f"`{shlex.join(command)}` failed: {(done.stderr or done.stdout).strip()}")
    return done


def daemon_command(ctx: Context) -> list[str]:
    """How the service runs the daemon: this interpreter, this config."""
    config = ["--config", str(ctx.config_path.absolute())] if ctx.explicit else []
    return [sys.executable, "-m", "kenning", *config, "daemon"]


# The variables kenning's paths follow (config/paths.py). A service manager starts the
# daemon in an environment of its own, without what the user's shell exports: a daemon
# that did not get the values `ken service install` ran with would read another config
# and serve another data directory and socket than `ken` looks at.
PATH_VARIABLES = ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME")


def service_environment() -> dict[str, str]:
    """What the service runs the daemon with: the path variables `ken` sees, set."""
    environment = {name: value for name in PATH_VARIABLES if (value := xdg_value(name))}
    environment["PYTHONUNBUFFERED"] = "1"
    return environment


def _systemd_word(word: str, executable: bool) -> str:
    """One ExecStart word as systemd reads it back: double-quoted with C escapes (a
    backslash or newline in a shell-quoted word would be unescaped or end the line),
    % doubled (specifiers), and $ doubled in arguments (systemd expands $VAR in them,
    quoted or not; never in the executable's path)."""
    text = word.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "\\r")
    text = text.replace("%", "%%")
    if not executable:
        text = text.replace("$", "$$")
    return f'"{text}"'


def systemd_unit(command: list[str], environment: dict[str, str]) -> str:
    exec_start = " ".join(_systemd_word(word, executable=i == 0) for i, word in enumerate(command))
    # (systemd expands no $VAR in an Environment= value, so only % is doubled.)
    assignments = "\n".join(
        f"Environment={_systemd_word(f'{name}={value}', executable=True)}" for name, value in environment.items()
    )
    return f"""# Written by `ken service install`; `ken service uninstall` removes it.
[Unit]
Description=kenning local knowledge library

[Service]
# The daemon says when its socket answers (READY=1) and pings the watchdog from its event
# loop; a loop that stops answering for WatchdogSec is restarted.
Type=notify
NotifyAccess=main
ExecStart={exec_start}
ExecReload=/bin/kill -HUP $MAINPID
WatchdogSec=120
# Ready is sent once the socket answers, after any schema migration, which on a large
# library can take minutes.
TimeoutStartSec=600
Restart=on-failure
RestartSec=5
# SIGTERM lets the daemon roll back the file in flight and close the index cleanly.
KillSignal=SIGTERM
TimeoutStopSec={SERVICE_STOP_SECONDS}
{assignments}

[Install]
WantedBy=default.target
"""


def launchd_plist(command: list[str], log: Path, environment: dict[str, str]) -> str:
    arguments = "\n".join(f"        <string>{_xml(part)}</string>" for part in command)
    variables = "\n".join(
        f"        <key>{_xml(name)}</key>\n        <string>{_xml(value)}</string>"
        for name, value in environment.items()
    )
    return f"""<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<!-- Written by `ken service install`; `ken service uninstall` removes it. -->
<plist version="1.0">
<dict>
    <key>Label</key>
    <string>{LABEL}</string>
    <key>ProgramArguments</key>
    <array>
{arguments}
    </array>
    <key>RunAtLoad</key>
    <true/>
    <key>KeepAlive</key>
    <dict>
        <key>SuccessfulExit</key>
        <false/>
    </dict>
    <key>StandardOutPath</key>
    <string>{_xml(str(log))}</string>
    <key>StandardErrorPath</key>
    <string>{_xml(str(log))}</string>
    <key>EnvironmentVariables</key>
    <dict>
{variables}
    </dict>
    <key>ExitTimeOut</key>
    <integer>{SERVICE_STOP_SECONDS}</integer>
    <key>ProcessType</key>
    <string>Background</string>
</dict>
</plist>
"""


def _xml(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _launchd_domain() -> str:
    return f"gui/{os.getuid()}"


# -- start and stop -----------------------------------------------------------------------


def log_path(data_dir: Path) -> Path:
    """The default library logs to the state directory; a library kept elsewhere (another
    config's `data_dir`) logs beside its index, so two libraries never share a log."""
    if data_dir.resolve() == default_data_dir().resolve():
        return state_dir() / "kenning.log"
    return data_dir / "kenning.log"


def start_detached(ctx: Context) -> int:
    """Run the daemon as a process of its own session, its output appended to the log."""
    log = log_path(ctx.locations.data_dir)
    try:
        make_private_dirs(log.parent)
    except OSError as exc:
        reason = (cannot_create(log.parent) if not log.parent.exists() else None) or exc.strerror or str(exc)
        raise KenningError(f"cannot write the daemon's log {log}: {reason}; set [daemon] data_dir elsewhere") from None
    with _starting(log.parent):
        # Another start held the folder meanwhile: its daemon is the one.
        if (status := answering(ctx)) is not None:
            return int(status["pid"])
        return _launch(ctx, log)


def _launch(ctx: Context, log: Path) -> int:
    try:
        if log.exists() and log.stat().st_size > LOG_ROTATE_BYTES:
            log.replace(log.with_name(log.name + ".1"))
        # Made 0600 from the start: never, even for a moment, open to others under a loose
        # umask. Not through a link: in a folder others can write (a data_dir in a shared
        # place, which the daemon then refuses) one could point it at ~/.bashrc.
        out = open(os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o600), "ab")
    except OSError as exc:
        # A data_dir through a file, or on a read-only disk: the daemon could not run there
        # either, and a traceback does not say what to change.
        reason = (cannot_create(log.parent) if not log.parent.exists() else None) or exc.strerror or str(exc)
        raise KenningError(
            f"cannot write the daemon's log {log}: {reason}; set [daemon] data_dir elsewhere"
        ) from None
    with out:
        os.fchmod(out.fileno(), 0o600)
        # What this start wrote is what explains its failure; earlier runs' lines are not.
        ours = out.tell()
        process = subprocess.Popen(
            daemon_command(ctx),
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            # Not the folder `ken start` ran in: a daemon left in it kept it busy, and the
            # drive holding it could not be unmounted until `ken stop`.
            cwd="/",
            env=_daemon_environment(),
        )
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if (status := answering(ctx)) is not None:
            # Two starts at once: one daemon takes the lock and the others leave. The pid
            # is the one that answers; one started here that is not it, and may still be
            # starting, is stopped, lest it take the lock over later.
            pid = int(status.get("pid", process.pid))
            if pid != process.pid and process.poll() is None:
                process.terminate()
                process.wait(timeout=STOP_TIMEOUT)
            return pid
        # Asked once: a daemon that exited between two asks left `holder` unset, and the
        # start ended in an UnboundLocalError's traceback.
        if process.poll() is not None:
            if (holder := daemon_pid(ctx.locations.data_dir)) is None:
                # (While another daemon holds the lock, it is the one to wait for.)
                told = _tail(log, ours) or _silent(log)
                raise KenningError(f"the daemon exited with status {process.returncode}:\n{told}")
            if old_socket(ctx, holder) is not None:
                # Another start's daemon, started at the same moment from a config naming
                # another socket, took the library: it will never answer here.
                raise KenningError(
                    not_answering(ctx) or f"another daemon ({pid_text(holder)}) holds {ctx.locations.data_dir}"
                )
        time.sleep(0.2)
    raise KenningError(f"the daemon did not answer within {START_TIMEOUT:.0f}s; its log ({log}):\n{_tail(log, ours)}")


def _daemon_environment() -> dict[str, str]:
    """The detached daemon's environment. A kenning `python -m` found in the folder `ken`
    ran in (a checkout, not an install) is handed on by PYTHONPATH: the daemon runs in /,
    and would otherwise import another copy, or none."""
    environment = {**os.environ, "PYTHONUNBUFFERED": "1"}
    source = os.path.dirname(os.path.dirname(os.path.realpath(kenning.__file__)))
    try:
        here = os.path.realpath(os.getcwd())
    except OSError:
        here = None  # a folder deleted under `ken`: nothing was imported from it
    if source == here:
        environment["PYTHONPATH"] = os.pathsep.join(filter(None, (source, environment.get("PYTHONPATH"))))
    return environment


def _silent(log: Path) -> str:
    """Why a daemon that exited left nothing in its log: most often a full disk, which
    takes the log's lines along with the database's."""
    try:
        full = shutil.disk_usage(log.parent).free < FULL_DISK_BYTES
    except OSError:
        full = False
    if full:
        return f"  the disk holding {log.parent} is full: free some space and start again (nothing indexed is lost)"
    return f"  nothing reached its log ({log}); `ken daemon` runs it in this terminal to show why"


# What `ken start` quotes of the log of a daemon that would not start: `ken` cuts an
# error past MAX_ERROR_CHARS, keeping its start, and the log's last lines say why.
TAIL_CHARS = 1500
TAIL_LINE_CHARS = 300


def _tail(log: Path, start: int, lines: int = 15) -> str:
    """The last lines the log gained from byte `start` on (all of it if another start
    rotated it meanwhile): as many as fit in TAIL_CHARS, the latest first, each cut to
    TAIL_LINE_CHARS, since a line may quote a value of any length."""
    try:
        with open(log, "rb") as f:
            f.seek(start if start <= os.fstat(f.fileno()).st_size else 0)
            text = f.read().decode(errors="replace")
    except OSError:
        return ""
    shown: list[str] = []
    size = 0
    for line in reversed(text.splitlines()[-lines:]):
        line = "  " + error_text(line, TAIL_LINE_CHARS)
        size += len(line) + 1
        if shown and size > TAIL_CHARS:
            break
        shown.append(line)
    return "\n".join(reversed(shown))


def _answering_within(ctx: Context, still: Callable[[], bool] = lambda: True) -> dict | None:
    """The status of the daemon that answers on the socket within START_TIMEOUT, asked
    again every 0.2 s while `still()` holds; None if none answered."""
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline and still():
        if (status := answering(ctx)) is not None:
            return status
        time.sleep(0.2)
    return answering(ctx)


def _once_up(ctx: Context, pid: int) -> dict | None:
    """The status of the daemon `pid`, which holds the library but does not answer yet,
    once it does: another start's, most likely, which takes the lock before it loads its
    modules and model and listens a second or so later. Two starts at once told the
    second "it is still starting". None when it lets go of the lock or is still silent
    after START_TIMEOUT (a daemon that is stuck: the caller says so)."""
    return _answering_within(ctx, lambda: daemon_pid(ctx.locations.data_dir) == pid)


def wait_answering(ctx: Context, what: str) -> dict:
    if (status := _answering_within(ctx)) is not None:
        return status
    raise KenningError(
        f"{what} did not bring up a daemon that answers on {ctx.locations.socket}; see `ken service status`"
    )


# Held by `ken start` from before it launches a daemon until that daemon answers or dies.
STARTING_NAME = "starting.lock"


@contextmanager
def _starting(folder: Path) -> Iterator[None]:
    """The start under way, for a `ken stop` asked meanwhile to wait for (`_after_starts`):
    it found no daemon holding the library yet, said "not running", and the daemon came up
    anyway. An flock, so a start killed halfway holds nothing."""
    lock = folder / STARTING_NAME
    try:
        fd = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    except OSError as exc:
        # A read-only disk, a folder of someone else's: the daemon could not run there either.
        raise KenningError(f"cannot write {lock}: {exc.strerror or exc}; set [daemon] data_dir elsewhere") from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _after_starts(data_dir: Path) -> None:
    """Wait, up to START_TIMEOUT, for a `ken start` launching a daemon on `data_dir`."""
    try:
        fd = os.open(log_path(data_dir).parent / STARTING_NAME, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return  # no start was ever made there, or it cannot be asked: nothing to wait for
    deadline = time.monotonic() + START_TIMEOUT
    try:
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
                return
            except BlockingIOError:
                if time.monotonic() > deadline:
                    return
                time.sleep(0.1)
    finally:
        os.close(fd)


def start(ctx: Context) -> str:
    # No daemon answers, or can listen, on a path too long for a socket: say that, not
    # that the one there "is not accepting connections".
    if problem := socket_path_too_long(ctx.locations.socket):
        raise KenningError(problem)
    status = answering(ctx)
    if status is not None:
        return f"kenning is already running (pid {status['pid']})"
    if reason := not_answering(ctx):
        held = lock_holder(ctx.locations.data_dir)
        if held is None or not held[1]:
            if held is not None and old_socket(ctx, held[0]) is None and (status := _once_up(ctx, held[0])):
                return f"kenning is running (pid {status['pid']})"
            # A daemon of this library runs where the config no longer points: a second
            # one would index the same folders beside it.
            raise KenningError(reason)
        # A daemon on its way out (a `ken stop` or a service restart a moment ago): the
        # new one starts once it has let go of the library.
        if not _freed_within(ctx.locations.data_dir, STOP_TIMEOUT):
            raise KenningError(reason)
    _ = ctx.settings  # a config with a typo is reported here, not in the daemon's log
    found = manager()
    if found.installed and found.name == "systemd":
        _run(["systemctl", "--user", "start", UNIT])
        status = wait_answering(ctx, "systemctl --user start kenning")
        return f"kenning is running (pid {status['pid']}, systemd user service; logs: journalctl --user -u kenning)"
    if found.installed and found.name == "launchd":
        _run(["launchctl", "kickstart", f"{_launchd_domain()}/{LABEL}"])
        status = wait_answering(ctx, "launchctl kickstart")
        return f"kenning is running (pid {status['pid']}, launchd agent; log: {log_path(ctx.locations.data_dir)})"
    pid = start_detached(ctx)
    return f"kenning is running (pid {pid}, in the background; log: {log_path(ctx.locations.data_dir)})"


def stop(ctx: Context) -> str:
    """Stop the daemon on this config's data directory, and any started from this config
    that still runs where the config pointed before it was edited."""
    said = stop_moved(ctx)
    data_dir = ctx.locations.data_dir
    _after_starts(data_dir)
    pid = daemon_pid(data_dir)
    if pid is None:
        return "\n".join(said) or "kenning is not running"
    where = old_socket(ctx, pid)
    _end(pid, data_dir)
    # (`where` is not always old: the daemon may have been started from another config.)
    listened = f", which listened on {where}" if where else ""
    said.append(f"kenning stopped ({pid_text(pid)}{listened})")
    return "\n".join(said)


def stop_moved(ctx: Context) -> list[str]:
    """Stop the daemons started from this config on a data directory it no longer names,
    each on its own lock: what `ken stop` and `ken restart` say they stopped."""
    said = []
    for record in moved_away(ctx):
        _end(record.pid, Path(record.data_dir))
        said.append(f"stopped the daemon on the old data directory {record.data_dir} (pid {record.pid})")
    return said


def _end(pid: int, data_dir: Path) -> None:
    """Stop the daemon `pid` holding `data_dir` and wait until its lock is free."""
    if _service_runs(pid):
        # Through the manager, so it does not take the stop for a crash and start it again.
        _run(["systemctl", "--user", "stop", UNIT])
    elif pid > 0:
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        except PermissionError:
            raise KenningError(
                f"pid {pid} holds {data_dir} but is another user's process; it is not this user's daemon to stop"
            ) from None
    if not _freed_within(data_dir, STOP_TIMEOUT):
        # No pid written (a daemon still starting, or another program holding the lock):
        # `kill -9 -1` would have ended every process of the user.
        ends = f"`kill -9 {pid}` ends it" if pid > 0 else f"`fuser -v {data_dir / LOCK_NAME}` names it"
        raise KenningError(
            f"the daemon ({pid_text(pid)}) did not stop within {STOP_TIMEOUT:.0f}s; {ends}"
            " (nothing indexed is lost: the file in flight is redone at the next start)"
        )


def _freed_within(data_dir: Path, seconds: float) -> bool:
    """Whether no daemon holds `data_dir`'s lock, or its holder lets go within `seconds`."""
    deadline = time.monotonic() + seconds
    while daemon_pid(data_dir) is not None:
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)
    return True


def _service_runs(pid: int) -> bool:
    """Whether the systemd user service runs the daemon `pid` (-1: a daemon whose pid is not
    known, taken to be the service's while it is active). A daemon started otherwise, on
    a data directory the config has moved from, is not the service's to stop."""
    found = manager()
    if not (found.installed and found.name == "systemd"):
        return False
    if _run(["systemctl", "--user", "is-active", UNIT], check=False).stdout.strip() != "active":
        return False
    if pid < 0:
        return True
    main_pid = _run(["systemctl", "--user", "show", "--property=MainPID", "--value", UNIT], check=False)
    return main_pid.stdout.strip() == str(pid)


@main.command("start")
@pass_context
def start_command(ctx: Context) -> None:
    """Start the daemon in the background and wait until it answers.

    Uses the systemd user service or launchd agent when `ken service install` set one
    up; otherwise runs it as a detached process logging to ~/.local/state/kenning/kenning.log
    (a library with a data_dir of its own logs to kenning.log there). Refused while a
    daemon this config started still runs where the config pointed before an edit of
    [daemon] data_dir or socket: `ken restart` moves it.

    \b
    Examples:
      ken start
      ken --config ~/work/kenning.toml start
    """
    click.echo(start(ctx))


@main.command("stop")
@pass_context
def stop_command(ctx: Context) -> None:
    """Stop the daemon (SIGTERM: the file in flight rolls back and is redone next start).

    A daemon this config started before its [daemon] data_dir or socket was edited is
    stopped too, where it runs.

    \b
    Examples:
      ken stop
    """
    click.echo(stop(ctx))


@main.command("restart")
@pass_context
def restart_command(ctx: Context) -> None:
    """Stop the daemon if it runs, then start it: how an upgrade gets onto the new code.

    Also how an edit of [daemon] data_dir or socket takes effect: the daemon running
    where the config pointed before is stopped, and one starts where it points now.

    \b
    Examples:
      ken restart
    """
    # A config with a typo is refused while the running daemon still runs: stopping it
    # first would leave the user with no daemon and an error.
    _ = ctx.settings
    click.echo(stop(ctx))
    click.echo(start(ctx))


@main.group()
def service() -> None:
    """Run kenning as a user service that starts at login (systemd --user, launchd).

    \b
    Examples:
      ken service install
      ken service status
      ken service uninstall
    """


@service.command("install")
@pass_context
def service_install(ctx: Context) -> None:
    """Install (or update) the user service and (re)start the daemon under it.

    Without systemd --user or launchd the daemon is (re)started as a detached process,
    which does not come back after a reboot by itself: run `ken start` then.

    \b
    Examples:
      ken service install
      ken --config ~/work/kenning.toml service install
    """
    _ = ctx.settings  # refuse a broken config before anything is installed
    found = manager()
    command = daemon_command(ctx)
    if found.name == "none":
        click.echo(stop(ctx))
        click.echo(start(ctx))
        click.echo(
            "no user service manager here (systemd --user or launchd): the daemon runs as a detached process"
            " and does not start at login; run `ken start` after a reboot"
        )
        return
    # One the config moved from is stopped whoever runs it: the service then starts the
    # one daemon, where the config says now.
    for line in stop_moved(ctx):
        click.echo(line)
    running_outside = daemon_pid(ctx.locations.data_dir) is not None and not (
        found.installed and _service_active(found)
    )
    if running_outside:
        click.echo(stop(ctx))
    assert found.unit_path is not None
    if found.name == "systemd":
        write_unit(found.unit_path, systemd_unit(command, service_environment()))
        _run(["systemctl", "--user", "daemon-reload"])
        _run(["systemctl", "--user", "enable", UNIT])
        # restart: starts a stopped unit, and moves a running one onto the new code.
        _run(["systemctl", "--user", "restart", UNIT])
        status = wait_answering(ctx, "systemctl --user restart kenning")
        click.echo(f"installed {found.unit_path}; kenning is running (pid {status['pid']})")
        click.echo("logs: journalctl --user -u kenning · to keep it running after you log out: loginctl enable-linger")
        return
    log = log_path(ctx.locations.data_dir)
    make_private_dirs(log.parent)
    write_unit(found.unit_path, launchd_plist(command, log, service_environment()))
    _run(["launchctl", "bootout", f"{_launchd_domain()}/{LABEL}"], check=False)
    _run(["launchctl", "bootstrap", _launchd_domain(), str(found.unit_path)])
    status = wait_answering(ctx, "launchctl bootstrap")
    click.echo(f"installed {found.unit_path}; kenning is running (pid {status['pid']}); log: {log}")


def write_unit(path: Path, text: str) -> None:
    """Put a unit file or plist in place, the user's alone (0600, in folders made 0700).

    The manager runs whatever the file says as this user: one another user can write
    (written by the umask, 0666 under umask 000, or an older file rewritten in place with
    its old mode) would run their program in this user's name."""
    write_privately(path, text)


def _service_active(found: Manager) -> bool:
    if found.name == "systemd":
        return _run(["systemctl", "--user", "is-active", UNIT], check=False).stdout.strip() == "active"
    if found.name == "launchd":
        return _run(["launchctl", "print", f"{_launchd_domain()}/{LABEL}"], check=False).returncode == 0
    return False


@service.command("uninstall")
@pass_context
def service_uninstall(ctx: Context) -> None:
    """Stop the user service and remove it (the index and config stay).

    \b
    Examples:
      ken service uninstall
    """
    found = manager()
    if not found.installed:
        click.echo("no kenning user service is installed")
        if daemon_pid(ctx.locations.data_dir) is not None:
            click.echo("a daemon runs outside any service manager; `ken stop` ends it")
        return
    assert found.unit_path is not None
    if found.name == "systemd":
        _run(["systemctl", "--user", "disable", "--now", UNIT])
        found.unit_path.unlink()
        _run(["systemctl", "--user", "daemon-reload"])
    else:
        _run(["launchctl", "bootout", f"{_launchd_domain()}/{LABEL}"], check=False)
        found.unit_path.unlink()
    click.echo(f"removed {found.unit_path}; the daemon is stopped (your index and config are kept)")


@service.command("status")
@pass_context
def service_status(ctx: Context) -> None:
    """Say how the daemon is run here and whether it runs.

    \b
    Examples:
      ken service status
    """
    found = manager()
    if found.name == "none":
        click.echo("service manager: none found (systemd --user, launchd); `ken start` runs the daemon detached")
    elif found.installed:
        state = "active" if _service_active(found) else "inactive"
        click.echo(f"service manager: {found.name} · {found.unit_path} · {state}")
    else:
        click.echo(f"service manager: {found.name} · kenning is not installed in it (`ken service install`)")
    status = answering(ctx)
    if status is not None:
        click.echo(f"daemon: running, pid {status['pid']}, version {status['version']}, socket {status['socket']}")
        for record in moved_away(ctx):
            click.echo(f"daemon: and {still_runs(record)} (`ken restart` stops it)")
    else:
        click.echo(f"daemon: {not_answering(ctx) or 'not running'}")
    journal = found.name == "systemd" and found.installed
    click.echo(f"log: {'journalctl --user -u kenning' if journal else log_path(ctx.locations.data_dir)}")
