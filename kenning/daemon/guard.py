"""What keeps two daemons apart and the socket private.

The data directory lock is an flock on a file inside it, so it disappears with the
process however it dies; a socket file can outlive a crash, so at start it is probed
and replaced only when nothing answers on it.
"""

from __future__ import annotations

import errno
import fcntl
import logging
import os
import socket
import stat
from pathlib import Path

from kenning.config.paths import (
    LOCK_NAME,
    cannot_create,
    make_private_dirs,
    not_yours,
    shared_by_all,
    socket_path_too_long,
)
from kenning.config.running import lock_text, read_lock_text
from kenning.errors import DaemonAlreadyRunning, KenningError

log = logging.getLogger(__name__)


def replaced(path: Path, identity: tuple[int, int], what: str) -> bool:
    """Whether `path` no longer names the file whose (device, inode) is `identity`: it was
    deleted, or another file took its place. Any other error reading it (a network file
    system's passing EIO or ESTALE, a parent made unreadable) says nothing of that: it is
    logged, and the file taken as still there."""
    try:
        info = os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return True
    except OSError as exc:
        log.warning("cannot check the %s %s: %s", what, path, exc)
        return False
    return (info.st_dev, info.st_ino) != identity


def check_socket_path(path: Path) -> None:
    """Refuse a socket path no socket can be bound at, before anything is opened."""
    if problem := socket_path_too_long(path):
        raise KenningError(problem)


def private_dir(path: Path) -> None:
    """Create `path` as 0700, or insist that an existing one is not open to others."""
    try:
        info = path.stat()
    except (FileNotFoundError, NotADirectoryError):
        info = None
    except OSError as exc:
        raise KenningError(not_yours(path, exc)) from None
    if info is None:
        try:
            make_private_dirs(path)
        except OSError as exc:
            reason = cannot_create(path) or exc.strerror or str(exc)
            raise KenningError(
                f"cannot create the directory {path}: {reason}; set [daemon] data_dir / socket elsewhere"
            ) from None
        return
    if not stat.S_ISDIR(info.st_mode):
        raise KenningError(f"{path} is not a directory")
    if info.st_mode & 0o077:
        if shared_by_all(info):
            raise KenningError(
                f"{path} is shared with other users; the socket and index must live in a private directory:"
                f" set [daemon] data_dir / socket to a directory of your own (e.g. {path / 'kenning'})"
            )
        raise KenningError(
            f"{path} can be read by other users; the socket and index must live in a private directory"
            f" (chmod 700 {path}, or set [daemon] data_dir / socket elsewhere)"
        )


class DataDirLock:
    def __init__(self, data_dir: Path) -> None:
        self.path = data_dir / LOCK_NAME
        self._fd: int | None = None

    def acquire(self) -> None:
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        except OSError as exc:
            # A data directory on a read-only disk, or one this user may not write in.
            raise KenningError(
                f"cannot open {self.path}: {exc.strerror or exc}; the data directory must be writable"
                " (or set [daemon] data_dir elsewhere)"
            ) from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder, _ = read_lock_text(os.pread(fd, 64, 0))
            os.close(fd)
            raise DaemonAlreadyRunning(
                f"another kenning daemon (pid {holder or 'unknown'}) is already using {self.path.parent}"
            ) from None
        try:
            os.ftruncate(fd, 0)
            os.pwrite(fd, lock_text(os.getpid()), 0)
        except OSError as exc:
            # The first write of a start: on a full disk the lock file, emptied when the
            # last daemon stopped, has no room for its pid, and this was a traceback.
            os.close(fd)
            if exc.errno == errno.ENOSPC:
                raise KenningError(
                    f"the disk holding {self.path.parent} is full: free some space and start again;"
                    " nothing indexed is lost"
                ) from None
            raise KenningError(
                f"cannot write {self.path}: {exc.strerror or exc}; the data directory must be writable"
                " (or set [daemon] data_dir elsewhere)"
            ) from None
        self._fd = fd

    def mark_stopping(self) -> None:
        """Say in the lock file that this daemon is stopping, for the commands that meet
        it not answering meanwhile (config/running.py)."""
        if self._fd is not None:
            try:
                os.pwrite(self._fd, lock_text(os.getpid(), stopping=True), 0)
            except OSError:
                pass  # A full disk costs only the word: the pid stays.

    def held(self) -> bool:
        """Whether the lock file is still the one locked: not once the data directory
        (or the file) was deleted, when another daemon may take the directory anew."""
        if self._fd is None:
            return False
        mine = os.fstat(self._fd)
        return not replaced(self.path, (mine.st_dev, mine.st_ino), "lock file")

    def release(self) -> None:
        if self._fd is not None:
            os.ftruncate(self._fd, 0)
            os.close(self._fd)
            self._fd = None


def clear_stale_socket(path: Path) -> None:
    """Remove a socket left by a crashed daemon; refuse if a live one answers on it."""
    if not os.path.lexists(path):
        return
    if not stat.S_ISSOCK(path.lstat().st_mode):
        raise KenningError(f"{path} exists and is not a socket; refusing to replace it")
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        probe.settimeout(1.0)
        probe.connect(str(path))
    except (ConnectionRefusedError, FileNotFoundError):
        log.warning("removing stale socket %s left by an earlier daemon", path)
        try:
            path.unlink(missing_ok=True)
        except OSError as exc:
            raise KenningError(
                f"cannot remove the socket {path} an earlier daemon left: {exc.strerror or exc};"
                f" check that {path.parent} is writable by this user"
            ) from None
        return
    except OSError as exc:
        raise KenningError(f"cannot probe existing socket {path}: {exc}") from None
    finally:
        probe.close()
    raise DaemonAlreadyRunning(f"a kenning daemon already answers on {path}")


def claim(data_dir: Path, socket_path: Path) -> DataDirLock:
    """The data directory's lock, held, once the paths are checked.

    The first thing a start does, before the daemon's modules load: a second `ken daemon`
    on a library already served imported everything and loaded the embedding model (a
    second of CPU) before it said so.
    """
    check_socket_path(socket_path)
    private_dir(data_dir)
    private_dir(socket_path.parent)
    lock = DataDirLock(data_dir)
    lock.acquire()
    return lock
