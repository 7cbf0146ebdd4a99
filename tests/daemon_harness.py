"""Runs the real daemon as a subprocess and talks to it over its real socket."""

from __future__ import annotations

import os
import pty
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from kenning.client import Client
from kenning.errors import DaemonNotRunning

# Every daemon the tests start logs each loop step that held its event loop longer than
# SLOW_STEP_CPU_MS, with the CPU time the step spent (kenning/daemon/stalls.py); a test
# whose daemon logged a step over SLOW_STEP_CPU_MS of CPU, or over SLOW_STEP_WALL_MS of
# wall time, fails. Wall time alone counts waiting for a core or the GIL: on two cores
# shared with pytest and the daemon's parse workers, CI failed on a sweep step of 284 ms,
# and in a full local run the three steps over 100 ms of wall time had 1, 6 and 67 ms of
# CPU. CPU time is the work done on the loop; the wall limit still catches a call that
# blocks (a sleep, a read of a FIFO). KENNING_TEST_SLOW_CPU_MS and
# KENNING_TEST_SLOW_WALL_MS set them per run.
SLOW_STEP_CPU_MS = int(os.environ.get("KENNING_TEST_SLOW_CPU_MS", "100"))
SLOW_STEP_WALL_MS = int(os.environ.get("KENNING_TEST_SLOW_WALL_MS", "1000"))
_STEP = re.compile(r"loop step took (\d+\.\d+) s, (\d+\.\d+) s of it on the CPU")


def as_a_user(command: list[str]) -> list[str]:
    """`command` run with file permissions checked as for an ordinary user. Tests run as
    root in CI, and root reads through any mode: without CAP_DAC_OVERRIDE and
    CAP_DAC_READ_SEARCH (setpriv drops them from the bounding set, so the exec'd root
    process never has them) a chmod 000 stops it as it stops anyone. An ordinary user
    needs nothing dropped."""
    if os.geteuid() != 0:
        return command
    return ["setpriv", "--bounding-set=-dac_override,-dac_read_search", *command]


def inotify_limited(limit: str, value: int) -> tuple[str, ...] | None:
    """A command prefix that runs a command in a user namespace of its own whose inotify
    `limit` (`max_inotify_watches` or `max_inotify_instances`) is `value`: its watches
    count against that and against the machine's (which it leaves alone, shared as it is
    by every process), so the daemon meets the limit while nothing else does. None where
    user namespaces cannot be made."""
    script = f'echo {value} > /proc/sys/user/{limit} && exec "$@"'
    wrapper = ("unshare", "--user", "--map-root-user", "sh", "-c", script, "sh")
    try:
        done = subprocess.run([*wrapper, "true"], capture_output=True, timeout=30)
    except OSError:
        return None
    return wrapper if done.returncode == 0 else None


def write_config(path: Path, data_dir: Path, sources: list[dict[str, Any]], extra: str = "") -> Path:
    lines = [
        "[daemon]",
        f'data_dir = "{data_dir}"',
        "sweep_interval = 3600",
        "debounce_ms = 200",
        'log_level = "info"',
        extra,
    ]
    for source in sources:
        lines.append("[[sources]]")
        for key, value in source.items():
            if isinstance(value, bool):
                lines.append(f"{key} = {'true' if value else 'false'}")
            elif isinstance(value, (int, float)):
                lines.append(f"{key} = {value}")
            elif isinstance(value, (list, tuple)):
                lines.append(f"{key} = [{', '.join(repr(str(v)) for v in value)}]")
            else:
                lines.append(f'{key} = "{value}"')
    path.write_text("\n".join(lines) + "\n")
    return path


class DaemonProcess:
    def __init__(
        self,
        config: Path,
        data_dir: Path,
        log_path: Path,
        plain_permissions: bool = False,
        wrapper: tuple[str, ...] = (),
    ) -> None:
        self.config = config
        self.data_dir = data_dir
        self.log_path = log_path
        # Run it with file modes enforced even when the tests run as root (as_a_user).
        self.plain_permissions = plain_permissions
        # A command it runs under (`inotify_limited`), exec'ing it in the same process.
        self.wrapper = wrapper
        self.socket = data_dir / "kenning.sock"
        self.proc: subprocess.Popen | None = None

    def start(self, wait: bool = True) -> "DaemonProcess":
        log = open(self.log_path, "ab")
        command = [*self.wrapper, sys.executable, "-m", "kenning", "--config", str(self.config), "daemon"]
        self.proc = subprocess.Popen(
            as_a_user(command) if self.plain_permissions else command,
            stdout=log,
            stderr=subprocess.STDOUT,
            env={**os.environ, "PYTHONUNBUFFERED": "1", "KENNING_SLOW_CALLBACK_MS": str(SLOW_STEP_CPU_MS)},
        )
        log.close()
        if wait:
            # Polled often: until the socket is bound each try is one failed connect, and
            # every test that starts a daemon waits here.
            wait_for(self._answers, timeout=20, what="daemon to answer on its socket", interval=0.02)
        return self

    def _answers(self) -> bool:
        assert self.proc is not None
        if self.proc.poll() is not None:
            raise AssertionError(f"daemon exited with {self.proc.returncode}:\n{self.log()}")
        try:
            self.call("status")
            return True
        except (DaemonNotRunning, ConnectionError):
            return False

    def call(self, method: str, params: dict[str, Any] | None = None) -> Any:
        return Client(self.socket, timeout=60).call(method, params)

    def search(self, query: str, **params: Any) -> list[dict]:
        """Keyword hits only: the tests that use this are about what got indexed, and a
        vector leg would add semantic neighbours to every answer."""
        return self.call("search", {"query": query, "legs": ["keyword"], **params})["hits"]

    def source_status(self, name: str) -> dict:
        return next(s for s in self.call("status")["sources"] if s["name"] == name)

    def wait_idle(self, name: str, timeout: float = 60) -> dict:
        """Until the source's sweep has finished and every discovered file is settled."""

        def settled() -> dict | None:
            status = self.source_status(name)
            if status["scanning"] or status["discovered"] is None or status["last_sweep_at"] is None:
                return None
            if status["holds"] + status["failed"] + status["skipped"] + status["capped"] < status["discovered"]:
                return None
            return status

        return wait_for(settled, timeout=timeout, what=f"source {name} to settle")

    def wait_derived(self, timeout: float = 60) -> dict:
        """Until every chunk has its vector and nothing waits for the graph: from then on
        the same query ranks the same way, scores and all."""

        def settled() -> dict | None:
            status = self.call("status")
            chunks = sum(source["chunks"] for source in status["sources"])
            if (status["embedder"]["vectors"] or 0) < chunks or status["graph"]["pending"] != 0:
                return None
            return status

        return wait_for(settled, timeout=timeout, what="every chunk to be embedded and mined")

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def loop_stalls(self) -> list[str]:
        """Lines where the daemon reported a step holding its event loop too long."""
        stalls = []
        for line in self.log().splitlines():
            if (step := _STEP.search(line)) is None:
                continue
            wall, cpu = (float(value) * 1000 for value in step.groups())
            if cpu >= SLOW_STEP_CPU_MS or wall >= SLOW_STEP_WALL_MS:
                stalls.append(line)
        return stalls

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 20) -> int:
        assert self.proc is not None
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                raise AssertionError(f"daemon did not stop on signal {sig}:\n{self.log()}")
        return self.proc.returncode


def library_of(library: Any, notes: dict[str, str], derived: bool = False) -> DaemonProcess:
    """A daemon on a folder holding `notes` (the `library` fixture's), once every chunk is
    embedded; with `derived`, mined for entities too, so the same query ranks the same."""
    root = library.root / "notes"
    for name, text in notes.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    library.configure([{"name": "notes", "path": root}])
    daemon = library.daemon()
    status = daemon.wait_idle("notes")
    if derived:
        daemon.wait_derived()
    else:
        wait_for(lambda: daemon.call("status")["embedder"]["vectors"] == status["chunks"], timeout=60, what="embedding")
    return daemon


def wait_for(check: Callable[[], Any], timeout: float, what: str, interval: float = 0.1) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(interval)


def on_a_terminal(config: Path, *args: str, env: dict[str, str] | None = None) -> tuple[int, bytes]:
    """`ken ARGS` with its standard output and error on one terminal (a pseudo-terminal):
    its exit status and what the terminal was sent, read as it comes, so a long answer
    never fills the terminal's buffer and stalls the command."""
    leader, follower = pty.openpty()
    try:
        process = subprocess.Popen(
            [sys.executable, "-m", "kenning", "--config", str(config), *args],
            stdout=follower, stderr=follower, stdin=subprocess.DEVNULL, env={**os.environ, **(env or {})},
        )  # fmt: skip
    finally:
        os.close(follower)
    out = b""
    try:
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # EIO: the command has ended and everything it wrote was read
                break
            if not chunk:
                break
            out += chunk
        return process.wait(timeout=60), out
    finally:
        os.close(leader)
