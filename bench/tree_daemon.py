"""A daemon run from one checkout of kenning, for the benches that measure a tree against
a baseline tree in the same run (`--baseline DIR`): each tree's daemon imports its own
code (PYTHONPATH), reads its own config and logs to its work folder."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def daemon_from(tree: Path, config: Path, work: Path, socket: Path) -> Iterator[subprocess.Popen]:
    """The daemon of `tree` on `config`, listening on `socket` (a minute at most), until the
    block ends; then stopped as `ken stop` does, with SIGTERM."""
    with open(work / "daemon.log", "ab") as log:
        daemon = subprocess.Popen(
            [sys.executable, "-m", "kenning", "--config", str(config), "daemon"],
            stdout=log, stderr=subprocess.STDOUT, cwd=tree, env={**os.environ, "PYTHONPATH": str(tree)},
        )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while not socket.exists():
            if time.monotonic() > deadline or daemon.poll() is not None:
                raise SystemExit(f"the daemon from {tree} did not start; see {work / 'daemon.log'}")
            time.sleep(0.05)
        yield daemon
    finally:
        daemon.terminate()
        daemon.wait(60)
