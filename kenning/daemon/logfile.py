"""Keeping the log the daemon writes to within bounds while it runs.

`ken start` and the launchd agent send the daemon's stdout and stderr to a file, and
nothing else ever trims it: `ken start` moved a large log aside only when it started a
daemon, and a daemon left running for months never starts again. Every loaded file, sweep,
embedding pass and agent write adds a line (a 35-minute soak wrote 400 kB), so such a log
grew for as long as the daemon ran. Here the daemon moves its own log to `<log>.1` once it
passes LOG_ROTATE_BYTES and goes on in a new file at the same path, as `ken start` does.
Output that is not a regular file (a terminal, a pipe, journald's socket under systemd)
is left alone, and so is a file something else has already moved or replaced. A log
deleted outright (its folder removed, say) is started anew at its path.
"""

from __future__ import annotations

import fcntl
import logging
import os
import stat
from pathlib import Path

from kenning.config.paths import make_private_dirs

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
    """Move the log on stderr aside once it is over `limit` bytes, or start it anew where
    it was once it was deleted, and point stdout and stderr (where they share it) at the
    new file; returns the log's path when it did either."""
    try:
        info = os.fstat(2)
    except OSError:
        return None
    if not stat.S_ISREG(info.st_mode):
        return None
    if info.st_nlink == 0:
        return _start_anew(info)
    if info.st_size <= limit:
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
    _point_output_at(fresh, info)
    log.info("the log passed %d MB; its earlier lines are in %s.1", limit >> 20, path.name)
    return path


def _start_anew(info: os.stat_result) -> Path | None:
    """A new log where the deleted one was (its folder made again if it went too).

    Left on the deleted file, every line went where nobody could read it, `ken status`
    named a log that did not exist, and the file, which no path reaches, was never moved
    aside: it took disk space without bound, which no `du` showed."""
    named = _path_of(2)
    if named is None:
        return None
    # Linux names a deleted file's path with this mark after it.
    path = Path(str(named).removesuffix(" (deleted)"))
    try:
        make_private_dirs(path.parent)
        fresh = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    except OSError:
        return None  # asked again at the next check; nothing is lost that was not already
    _point_output_at(fresh, info)
    log.warning("the log %s was deleted while the daemon ran; it goes on in a new file", path)
    return path


def _point_output_at(fresh: int, info: os.stat_result) -> None:
    """Point stdout and stderr, where they are the file `info` describes, at `fresh`."""
    try:
        for fd in OUTPUT_FDS:
            if os.path.samestat(os.fstat(fd), info):
                os.dup2(fresh, fd)
    finally:
        os.close(fresh)
