"""A stand-in for `systemctl --user` and `launchctl`, for the `ken service` tests on a
machine with no user bus and no launchd (the managers are not kenning's to test).

It does what kenning needs of the real one and no more: it logs every command it is
given (one JSON list a line), and starts the daemon from the file `ken service install`
wrote, the way the manager would: the unit's ExecStart and Environment= lines, or the
plist's ProgramArguments and EnvironmentVariables, in an environment of the manager's
own (HOME and PATH), not the caller's. So the daemon the test talks to is the one the
written file starts, and a file naming the wrong program, config or paths shows.

Run as `fake_service_manager.py systemctl|launchctl ARGS...`, with FAKE_MANAGER_STATE
naming a folder for its log, the daemon's pid and output. PYTHONPATH is handed on too:
it is the test run's own checkout, which an installed kenning would not need.
"""

from __future__ import annotations

import json
import os
import plistlib
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

UNIT = "kenning.service"
LABEL = "com.kenning.daemon"
_WORD = re.compile(r'"((?:[^"\\]|\\.)*)"')


def _unquote(word: str, argument: bool) -> str:
    """One double-quoted word of a unit as systemd reads it (only the escapes kenning writes)."""
    text = re.sub(r"\\(.)", lambda m: {"n": "\n", "r": "\r"}.get(m.group(1), m.group(1)), word)
    text = text.replace("%%", "%")
    return text.replace("$$", "$") if argument else text


def from_unit(path: Path) -> tuple[list[str], dict[str, str]]:
    command: list[str] = []
    environment: dict[str, str] = {}
    for line in path.read_text().splitlines():
        if line.startswith("ExecStart="):
            words = _WORD.findall(line.removeprefix("ExecStart="))
            command = [_unquote(word, argument=i > 0) for i, word in enumerate(words)]
        elif line.startswith("Environment="):
            for word in _WORD.findall(line.removeprefix("Environment=")):
                name, _, value = _unquote(word, argument=False).partition("=")
                environment[name] = value
    return command, environment


def _state() -> Path:
    return Path(os.environ["FAKE_MANAGER_STATE"])


def running(state: Path | None = None) -> int | None:
    """The pid of the daemon this manager started, while it runs."""
    try:
        pid = int(((state or _state()) / "pid").read_text())
        os.kill(pid, 0)
    except (OSError, ValueError):
        return None
    # A zombie (exited, not yet reaped by its parent, which is gone) counts as ended.
    try:
        zombie = Path(f"/proc/{pid}/stat").read_text().rsplit(") ", 1)[1].startswith("Z")
    except OSError:
        return None
    return None if zombie else pid


def _start(command: list[str], environment: dict[str, str]) -> None:
    if running():
        return
    base = {name: os.environ[name] for name in ("HOME", "PATH", "PYTHONPATH") if name in os.environ}
    with open(_state() / "daemon.out", "ab") as out:
        process = subprocess.Popen(
            command, env={**base, **environment}, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    (_state() / "pid").write_text(str(process.pid))


def _stop() -> None:
    pid = running()
    if pid is None:
        return
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + 60
    while running() and time.monotonic() < deadline:
        time.sleep(0.05)
    (_state() / "pid").unlink(missing_ok=True)


def _config_home() -> Path:
    """Where the user manager reads units from: its own XDG_CONFIG_HOME (set by the test
    as FAKE_MANAGER_CONFIG_HOME, as environment.d would set it), else ~/.config; what the
    shell `ken` runs in exports is not the manager's."""
    return Path(os.environ.get("FAKE_MANAGER_CONFIG_HOME") or Path(os.environ["HOME"]) / ".config")


def systemctl(args: list[str]) -> int:
    assert args[0] == "--user", args
    unit_file = _config_home() / "systemd" / "user" / UNIT
    verb, rest = args[1], args[2:]
    if verb == "show-environment":
        print(f"HOME={os.environ['HOME']}")
        if os.environ.get("FAKE_MANAGER_CONFIG_HOME"):
            print(f"XDG_CONFIG_HOME={_config_home()}")
    if verb in ("start", "restart", "enable") and not unit_file.exists():
        print(f"Unit {UNIT} not found.", file=sys.stderr)
        return 5
    if verb == "restart":
        _stop()
    if verb in ("start", "restart"):
        _start(*from_unit(unit_file))
    elif verb == "stop" or (verb == "disable" and "--now" in rest):
        _stop()
    elif verb == "is-active":
        print("active" if running() else "inactive")
        return 0 if running() else 3
    elif verb == "show":
        print(running() or 0)
    return 0


def launchctl(args: list[str]) -> int:
    verb, rest = args[0], args[1:]
    loaded = _state() / "loaded"
    if verb == "bootstrap":
        plist = plistlib.loads(Path(rest[1]).read_bytes())
        loaded.write_text(rest[1])
        _start(plist["ProgramArguments"], plist.get("EnvironmentVariables", {}))
    elif verb == "bootout":
        if not loaded.exists():
            return 3
        _stop()
        loaded.unlink()
    elif verb == "print":
        return 0 if loaded.exists() else 113
    elif verb == "kickstart":
        if not loaded.exists():
            return 113
        plist = plistlib.loads(Path(loaded.read_text()).read_bytes())
        _start(plist["ProgramArguments"], plist.get("EnvironmentVariables", {}))
    return 0


def main() -> int:
    name, args = sys.argv[1], sys.argv[2:]
    with open(_state() / "commands.log", "a") as log:
        log.write(json.dumps([name, *args]) + "\n")
    return systemctl(args) if name == "systemctl" else launchctl(args)


if __name__ == "__main__":
    sys.exit(main())
