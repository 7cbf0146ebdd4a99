"""`ken service install|uninstall`, `ken start|stop` under systemd --user and launchd: the
unit and plist `ken` writes are checked as their managers read them (systemd-analyze,
plistlib), and the daemon is started from them. The managers themselves are stand-ins
(tests/fake_service_manager.py) on PATH: this machine has no user bus and no launchd,
and they are not kenning's to test; the commands `ken` gives them are asserted.

The user's XDG directories are set to places other than their defaults, as a user's
shell may export them and a service manager does not: the daemon the unit starts must
still serve the library `ken` looks at."""

from __future__ import annotations

import json
import os
import plistlib
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from kenning.cli.lifecycle import STOP_TIMEOUT, daemon_pid
from kenning.config.running import records_of
from kenning.daemon.run import THREAD_GRACE_SECONDS
from kenning.daemon.supervisor import SHUTDOWN_DEADLINE_SECONDS
from tests.daemon_harness import wait_for
from tests.fake_service_manager import from_unit, running

FAKE = Path(__file__).with_name("fake_service_manager.py")
# `ken` as it runs on macOS, where it looks for launchctl (the daemon runs as it would here).
AS_ON_MACOS = (
    # (sysconfig reads a file named by the platform: read before the platform is changed.)
    "import sys, sysconfig; sysconfig.get_config_vars(); from kenning.cli import main;"
    " sys.platform = 'darwin'; main()"
)


class Managed:
    def __init__(self, root: Path, manager: str) -> None:
        self.root = root
        self.manager = manager
        self.state = root / "manager"
        self.state.mkdir()
        bin_dir = root / "bin"
        bin_dir.mkdir()
        stand_in = bin_dir / manager
        stand_in.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{FAKE}" {manager} "$@"\n')
        stand_in.chmod(0o755)
        self.config_home = root / "xdg-config"
        self.data_dir = root / "xdg-data" / "kenning"
        self.state_home = root / "xdg-state"
        self.env = {
            **os.environ,
            "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
            "XDG_CONFIG_HOME": str(self.config_home),
            "XDG_DATA_HOME": str(root / "xdg-data"),
            "XDG_STATE_HOME": str(self.state_home),
            "FAKE_MANAGER_STATE": str(self.state),
            # A manager whose environment has the shell's XDG_CONFIG_HOME (environment.d).
            "FAKE_MANAGER_CONFIG_HOME": str(self.config_home),
        }
        # The default config: the unit names none, and the daemon must find this one.
        self.config = self.config_home / "kenning" / "config.toml"
        self.config.parent.mkdir(parents=True)
        self.config.write_text('[daemon]\nsweep_interval = 3600\nlog_level = "info"\n')

    def ken(self, *args: str) -> subprocess.CompletedProcess:
        program = ["-c", AS_ON_MACOS] if self.manager == "launchctl" else ["-m", "kenning"]
        return subprocess.run(
            [sys.executable, *program, *args], capture_output=True, text=True, timeout=120, env=self.env,
            stdin=subprocess.DEVNULL,
        )

    def commands(self) -> list[list[str]]:
        """What `ken` told the manager to do (its questions left out), and forget them."""
        log = self.state / "commands.log"
        lines = log.read_text().splitlines() if log.exists() else []
        log.unlink(missing_ok=True)
        asked = {"show-environment", "is-active", "show", "print"}
        return [words for words in map(json.loads, lines) if not asked & set(words)]

    def pid(self) -> int | None:
        path = self.state / "pid"
        return int(path.read_text()) if path.exists() else None

    def log(self) -> str:
        out = self.state / "daemon.out"
        return out.read_text(errors="replace") if out.exists() else ""


@pytest.fixture
def managed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    made: list[Managed] = []

    def make(manager: str) -> Managed:
        made.append(Managed(tmp_path, manager))
        # This process reads the daemons' records where `ken` does.
        monkeypatch.setenv("XDG_STATE_HOME", str(made[-1].state_home))
        return made[-1]

    yield make
    # Whatever the manager started, wherever it went (a unit with the wrong paths starts
    # a daemon on another data directory).
    for each in made:
        for pid in {daemon_pid(each.data_dir), running(each.state)}:
            if pid and pid > 0:
                os.kill(pid, signal.SIGKILL)


def test_service_install_under_systemd_runs_this_library_and_uninstall_removes_what_it_wrote(managed):
    service = managed("systemctl")
    installed = service.ken("service", "install")
    assert installed.returncode == 0, installed.stdout + installed.stderr + service.log()

    unit = service.config_home / "systemd" / "user" / "kenning.service"
    assert f"installed {unit}; kenning is running (pid {service.pid()})" in installed.stdout
    assert service.commands() == [
        ["systemctl", "--user", "daemon-reload"],
        ["systemctl", "--user", "enable", "kenning.service"],
        ["systemctl", "--user", "restart", "kenning.service"],
    ]
    text = unit.read_text()
    assert unit.stat().st_mode & 0o777 == 0o600
    if shutil.which("systemd-analyze"):
        checked = subprocess.run(["systemd-analyze", "verify", str(unit)], capture_output=True, text=True)
        assert checked.returncode == 0, checked.stderr
    command, environment = from_unit(unit)
    assert command == [sys.executable, "-m", "kenning", "daemon"] and os.access(command[0], os.X_OK)
    assert environment == {
        "XDG_CONFIG_HOME": str(service.config_home),
        "XDG_DATA_HOME": str(service.data_dir.parent),
        "XDG_STATE_HOME": str(service.state_home),
        "PYTHONUNBUFFERED": "1",
    }
    assert "Restart=on-failure" in text and "Type=notify" in text
    # The manager kills a daemon still there after TimeoutStopSec: it must be past the
    # deadline the daemon keeps after SIGTERM, and `ken stop` waits as long.
    [stop_seconds] = re.findall(r"^TimeoutStopSec=(\d+)$", text, re.M)
    assert int(stop_seconds) > SHUTDOWN_DEADLINE_SECONDS + THREAD_GRACE_SECONDS
    assert int(stop_seconds) == STOP_TIMEOUT

    # The daemon the unit started serves the library `ken` looks at, and records itself
    # where `ken` looks for it.
    pid = service.pid()
    assert daemon_pid(service.data_dir) == pid
    assert [record.pid for record in records_of(service.config)] == [pid]
    status = service.ken("status")
    assert status.returncode == 0, status.stderr
    assert "service manager: systemd" in service.ken("service", "status").stdout

    stopped = service.ken("stop")
    assert stopped.stdout.strip() == f"kenning stopped (pid {pid})"
    assert service.commands() == [["systemctl", "--user", "stop", "kenning.service"]]
    started = service.ken("start")
    assert started.returncode == 0 and f"pid {service.pid()}, systemd user service" in started.stdout
    assert service.commands() == [["systemctl", "--user", "start", "kenning.service"]]

    removed = service.ken("service", "uninstall")
    assert removed.returncode == 0, removed.stderr
    assert service.commands() == [
        ["systemctl", "--user", "disable", "--now", "kenning.service"],
        ["systemctl", "--user", "daemon-reload"],
    ]
    assert not unit.exists() and list(unit.parent.iterdir()) == []
    assert daemon_pid(service.data_dir) is None


def test_service_install_puts_the_unit_where_a_manager_without_the_shells_xdg_config_home_reads_it(managed):
    # XDG_CONFIG_HOME exported by ~/.bashrc alone: systemd reads units from ~/.config, and
    # the unit written under the shell's XDG_CONFIG_HOME failed `systemctl --user enable`
    # with "Unit file kenning.service does not exist" beside the file just written.
    service = managed("systemctl")
    del service.env["FAKE_MANAGER_CONFIG_HOME"]
    installed = service.ken("service", "install")
    assert installed.returncode == 0, installed.stdout + installed.stderr + service.log()
    unit = Path(os.environ["HOME"]) / ".config" / "systemd" / "user" / "kenning.service"
    assert f"installed {unit}; kenning is running" in installed.stdout
    # The daemon still reads the config and serves the library the shell's `ken` looks at.
    assert daemon_pid(service.data_dir) == service.pid()
    assert "active" in service.ken("service", "status").stdout
    removed = service.ken("service", "uninstall")
    assert removed.returncode == 0 and not unit.exists(), removed.stdout + removed.stderr


def test_service_install_under_launchd_runs_this_library_and_uninstall_removes_what_it_wrote(managed):
    service = managed("launchctl")
    installed = service.ken("service", "install")
    assert installed.returncode == 0, installed.stdout + installed.stderr + service.log()

    plist_path = Path(os.environ["HOME"]) / "Library" / "LaunchAgents" / "com.kenning.daemon.plist"
    log = service.state_home / "kenning" / "kenning.log"
    assert f"installed {plist_path}; kenning is running (pid {service.pid()}); log: {log}" in installed.stdout
    domain = f"gui/{os.getuid()}"
    assert service.commands() == [
        ["launchctl", "bootout", f"{domain}/com.kenning.daemon"],
        ["launchctl", "bootstrap", domain, str(plist_path)],
    ]
    assert plist_path.stat().st_mode & 0o777 == 0o600
    plist = plistlib.loads(plist_path.read_bytes())
    assert plistlib.loads(plistlib.dumps(plist)) == plist
    assert plist["Label"] == "com.kenning.daemon"
    assert plist["ProgramArguments"] == [sys.executable, "-m", "kenning", "daemon"]
    assert os.access(plist["ProgramArguments"][0], os.X_OK)
    assert plist["EnvironmentVariables"] == {
        "XDG_CONFIG_HOME": str(service.config_home),
        "XDG_DATA_HOME": str(service.data_dir.parent),
        "XDG_STATE_HOME": str(service.state_home),
        "PYTHONUNBUFFERED": "1",
    }
    assert plist["KeepAlive"] == {"SuccessfulExit": False} and plist["RunAtLoad"] is True
    assert plist["StandardOutPath"] == plist["StandardErrorPath"] == str(log)
    # launchd kills a daemon still there after ExitTimeOut (20 s unless set).
    assert plist["ExitTimeOut"] > SHUTDOWN_DEADLINE_SECONDS + THREAD_GRACE_SECONDS

    pid = service.pid()
    assert daemon_pid(service.data_dir) == pid
    assert [record.pid for record in records_of(service.config)] == [pid]
    stopped = service.ken("stop")
    assert stopped.stdout.strip() == f"kenning stopped (pid {pid})"
    started = service.ken("start")
    assert started.returncode == 0 and "launchd agent" in started.stdout, started.stderr
    assert service.commands() == [["launchctl", "kickstart", f"{domain}/com.kenning.daemon"]]

    removed = service.ken("service", "uninstall")
    assert removed.returncode == 0, removed.stderr
    assert service.commands() == [["launchctl", "bootout", f"{domain}/com.kenning.daemon"]]
    assert not plist_path.exists()
    wait_for(lambda: daemon_pid(service.data_dir) is None, timeout=20, what="the daemon to stop")


INSTALL_SH = Path(__file__).parents[1] / "install.sh"


def _stub(path: Path, body: str) -> None:
    path.write_text(f'#!/bin/sh\necho "{path.name} $*" >> "$STUB_LOG"\n{body}\nexit 0\n')
    path.chmod(0o755)


def test_install_sh_makes_anew_a_half_made_venv_and_names_an_older_ken_first_on_the_path(tmp_path):
    # python3 -m venv without python3-venv (Debian, Ubuntu) leaves a venv with no pip in
    # it; every later ./install.sh, python3-venv installed meanwhile, failed on it with
    # "pip: No such file or directory" until the user found and deleted the folder.
    # Python and kenning are stand-ins here: what is checked is the script's own steps.
    prefix, bin_dir, stubs, made = tmp_path / "prefix", tmp_path / "bin", tmp_path / "stubs", tmp_path / "made"
    for folder in (prefix / "bin", stubs, made):
        folder.mkdir(parents=True)
    (prefix / "pyvenv.cfg").write_text("home = /usr/bin\n")
    _stub(prefix / "bin" / "python", "exit 1")  # no pip in it
    _stub(made / "python", "")
    _stub(made / "ken", '[ "$1" = --version ] && echo "kenning, version test"')
    _stub(stubs / "python3", f'for last; do :; done\n[ "$1" = -m ] && cp "{made}/python" "{made}/ken" "$last/bin/"')
    # And an older ken of its own install earlier on the PATH than this one's.
    _stub(stubs / "ken", "")
    path = os.pathsep.join([str(stubs), str(bin_dir), "/usr/bin", "/bin"])
    env = {
        "HOME": str(tmp_path), "PATH": path, "STUB_LOG": str(tmp_path / "log"),
        "KENNING_PREFIX": str(prefix), "KENNING_BIN": str(bin_dir),
    }
    ran = subprocess.run(["bash", str(INSTALL_SH)], capture_output=True, text=True, timeout=60, env=env)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    steps = (tmp_path / "log").read_text().splitlines()
    assert f"python3 -m venv --clear {prefix}" in steps
    assert f"python -m pip install --quiet --upgrade {INSTALL_SH.parent}" in steps
    assert steps[-1] == "ken service install"
    assert f"another ken comes first on your PATH: {stubs / 'ken'}" in ran.stdout
