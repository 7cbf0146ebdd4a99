"""Keeping the log the daemon writes to within bounds while it runs.

`ken start` and the launchd agent send the daemon's stdout and stderr to a file, and
nothing else ever trims it: `ken start` moved a large log aside only when it started a
daemon, and a daemon left running for months never starts again. Every loaded file, sweep,
embedding pass and agent write adds a line (a 35-minute soak wrote 400 kB), so such a log
grew for as long as the daemon ran. Here the daemon moves its own log to `<log>.1` once it
passes LOG_ROTATE_BYTES and goes on in a new file at the same path, as `ken start` does.
Output that is not a regular file (a terminal, a pipe, journald's socket under systemd)
is left alone, and so is a file something else has already moved or replaced.
"""

from __future__ import annotations

import fcntl
import logging
import os
import stat
from pathlib import Path

log = logging.getLogger(__name__)

OUTPUT_FDS = (1, 2)


def _path_of(fd: int) -> Path | None:
    """The path of the file open on `fd`: macOS's F_GETPATH, Linux's /proc."""
    try:
        if hasattr(fcntl, "F_GETPATH"):
            return Path(os.fsdecode(fcntl.fcntl(fd, fcntl.F_GETPATH, bytes(1024)).rstrip(b"\0")))
        return Path(os.readlink(f"/proc/self/fd/{fd}"))
    except OSError:
        return None


def rotate_own_log(limit: int) -> Path | None:
    """Move the log on stderr aside once it is over `limit` bytes, and point stdout and
    stderr (where they share it) at a new file in its place; returns the log's path when
    it was moved."""
    try:
        info = os.fstat(2)
    except OSError:
        return None
    if not stat.S_ISREG(info.st_mode) or info.st_size <= limit:
        return None
    path = _path_of(2)
    try:
        if path is None or not os.path.samestat(os.stat(path), info):
            return None
        os.replace(path, path.with_name(path.name + ".1"))
        fresh = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    except OSError as exc:
        log.warning("cannot move the log %s aside: %s", path, exc)
        return None
    try:
        for fd in OUTPUT_FDS:
            if os.path.samestat(os.fstat(fd), info):
                os.dup2(fresh, fd)
    finally:
        os.close(fresh)
    log.info("the log passed %d MB; its earlier lines are in %s.1", limit >> 20, path.name)
    return path
