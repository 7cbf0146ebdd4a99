"""Every test runs with HOME, XDG dirs and KENNING_CONFIG pointed at its own tmp dir, so
nothing reads or writes the real user's files."""

from __future__ import annotations

import asyncio
import compileall
import os
import shutil
import subprocess
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

import kenning
from kenning.ingest.parse_pool import ParsePool
from kenning.store.database import Database


def pytest_configure(config: pytest.Config) -> None:
    """Byte-compile kenning once, before any test (and any xdist worker) starts.

    The suite starts hundreds of kenning processes (daemons, their parse workers, `ken`
    and `ken mcp`). Where PYTHONDONTWRITEBYTECODE is set, as it is in the sandbox this
    suite is run in, none of them writes what it compiled, so each compiled kenning's
    modules anew: 0.3 s of CPU a daemon, 12% of tests/test_agent_cli_e2e.py's CPU.
    compileall writes regardless.
    """
    if not hasattr(config, "workerinput"):
        compileall.compile_dir(Path(kenning.__file__).parent, quiet=1)


def _isolate(home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(home / ".local" / "share"))
    # Logs and the records of running daemons (kenning/config/running.py) go here.
    monkeypatch.setenv("XDG_STATE_HOME", str(home / ".local" / "state"))
    monkeypatch.delenv("KENNING_CONFIG", raising=False)
    os.chmod(home, 0o700)
    return home


@pytest.fixture(autouse=True)
def isolated_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    return _isolate(tmp_path_factory.mktemp("home"), monkeypatch)


@pytest.fixture
async def db(tmp_path: Path) -> AsyncIterator[Database]:
    """An opened store on a real SQLite file, closed after the test."""
    database = Database(tmp_path / "kenning.db")
    await database.open()
    yield database
    await database.close()


@pytest.fixture(scope="session")
def parsers() -> Iterator[ParsePool]:
    """One real parse pool (worker processes) for the in-process sweep tests, stopped at the end."""
    pool = ParsePool(workers=2, memory_mb=512)
    yield pool
    asyncio.run(pool.stop())


@contextmanager
def _library_at(folder: Path) -> Iterator[Any]:
    from tests.daemon_harness import DaemonProcess, write_config

    started: list[DaemonProcess] = []

    class Library:
        root = folder
        data_dir = folder / "data"
        config = folder / "config.toml"

        def configure(self, sources: list[dict], extra: str = "") -> Path:
            return write_config(self.config, self.data_dir, sources, extra)

        def daemon(
            self, wait: bool = True, plain_permissions: bool = False, wrapper: tuple[str, ...] = ()
        ) -> DaemonProcess:
            log = folder / f"daemon{len(started)}.log"
            process = DaemonProcess(self.config, self.data_dir, log, plain_permissions, wrapper)
            started.append(process)
            return process.start(wait=wait)

    yield Library()
    for process in started:
        if process.proc is not None and process.proc.poll() is None:
            process.proc.kill()
            process.proc.wait()
    stalls = [line for process in started for line in process.loop_stalls()]
    assert not stalls, "the daemon's event loop was blocked:\n" + "\n".join(stalls)


@pytest.fixture
def library(tmp_path: Path):
    """A fresh data dir and config, and a way to start daemons on them; all stopped after."""
    with _library_at(tmp_path) as made:
        yield made


@pytest.fixture(scope="module")
def module_library(tmp_path_factory: pytest.TempPathFactory):
    """`library`, shared by a module's tests, for those that only ask a daemon things (or
    add what none of the others look at): one daemon started and indexed for them all,
    not one each. Its daemon runs under a home of its own, as each test's runs under
    isolated_home, which is set up after a fixture of this scope."""
    with pytest.MonkeyPatch.context() as monkeypatch:
        _isolate(tmp_path_factory.mktemp("home"), monkeypatch)
        with _library_at(tmp_path_factory.mktemp("library")) as made:
            yield made


@pytest.fixture
def mount() -> Iterator[Callable[..., Path]]:
    """`mount(*options, target)`: a real mount (root in a container may make one), undone
    after the test unless the test unmounted it; where mounting is not allowed, the test
    is skipped, saying why."""
    made: list[Path] = []

    def make(*args: str | Path) -> Path:
        *options, target = args
        if shutil.which("mount") is None:
            pytest.skip("no mount command here")
        done = subprocess.run(["mount", *map(str, options), str(target)], capture_output=True, text=True, timeout=30)
        if done.returncode != 0:
            pytest.skip(f"cannot mount here (mount {' '.join(map(str, args))}): {done.stderr.strip() or done.returncode}")
        made.append(Path(target))
        return Path(target)

    yield make
    for target in reversed(made):
        if not os.path.ismount(target):
            continue
        # Lazily, if something still holds it: a mount left behind would outlive the run.
        if subprocess.run(["umount", str(target)], capture_output=True, timeout=30).returncode != 0:
            subprocess.run(["umount", "-l", str(target)], check=True, timeout=30)
