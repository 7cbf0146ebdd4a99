"""Which folders are mount points of the system's own filesystems: the kernel's views of
processes, devices and its own state, which hold no documents.

A folder a user registers may hold one: a chroot or a container's root with /proc, /sys
and /dev mounted in it, a bind mount of /sys. Walked, each of their files fails alone,
but there are hundreds of thousands of them, some block on read, and the watcher would
spend an inotify watch on each directory. The walk asks here only about a directory on
another device than its parent (a mount point), and the mount table is read once per
walk, at the first such directory, so a folder with no mount below it never reads it.
"""

from __future__ import annotations

import logging
import os
import re
import sys

log = logging.getLogger(__name__)

# Linux's (and the BSDs' and macOS's) names for them. autofs is an automounter's trigger:
# entering it mounts whatever its map says, a network share included.
SYSTEM_TYPES = frozenset(
    {
        "proc", "sysfs", "devtmpfs", "devpts", "cgroup", "cgroup2", "debugfs", "tracefs", "securityfs",
        "pstore", "bpf", "configfs", "fusectl", "mqueue", "hugetlbfs", "autofs", "binfmt_misc", "efivarfs",
        "selinuxfs", "nsfs", "rpc_pipefs", "devfs", "procfs", "fdescfs", "linprocfs", "linsysfs",
    }
)  # fmt: skip
# A tmpfs holds the user's files in /tmp or a RAM disk; the system's own are the ones
# mounted here (a container's /dev is a tmpfs, as systemd's /run is), wherever else they
# are bound too (`mount --rbind / /srv/snapshot` shows /run again at /srv/snapshot/run).
SYSTEM_TMPFS = frozenset({"/dev", "/dev/shm", "/run", "/var/run", "/sys/fs/cgroup"})
# Where there is no /proc/self/mountinfo to read (macOS, the BSDs): the places these
# systems mount them, known by place alone.
FIXED = (("/dev", "devfs", None), ("/proc", "procfs", None))
MOUNTINFO = "/proc/self/mountinfo"

_OCTAL = re.compile(rb"\\([0-7]{3})")


class Mounts:
    """The mount table as the walk needs it, read when first asked."""

    def __init__(self) -> None:
        self._by_path: dict[str, str] | None = None
        self._by_device: dict[int, str] = {}
        self._system_tmpfs: set[int] = set()

    def system_type(self, path: str, device: int) -> str | None:
        """The type of the system filesystem mounted at `path`, a directory on another
        device than its parent, or None for any other (a second disk, a share, a tmpfs
        of the user's): what the mount table lists at `path`, else on `device`."""
        if self._by_path is None:
            self._by_path = {}
            for point, kind, on in read_table():
                # Later lines are later mounts: one mounted over another is the one seen.
                self._by_path[point] = kind
                if on is not None:
                    self._by_device[on] = kind
                    if kind == "tmpfs" and point in SYSTEM_TMPFS:
                        self._system_tmpfs.add(on)
        kind = self._by_path.get(path) or self._by_device.get(device)
        if kind in SYSTEM_TYPES or (kind == "tmpfs" and (path in SYSTEM_TMPFS or device in self._system_tmpfs)):
            return kind
        return None


def is_mount_point(path: str) -> bool:
    """Whether `path` (a real path, links resolved) is a mount point: on another device
    than its parent, or listed in the mount table. ismount alone misses a bind mount of
    a folder on the same filesystem (`mount --bind ~/archive ~/notes`), which is one all
    the same, and leaves only a bare folder behind when it is undone."""
    return os.path.ismount(path) or any(point == path for point, _, _ in read_table())


def mount_of(path: str) -> str:
    """The mount point `path` (a real path, links resolved) is on: itself when it is one,
    else the nearest folder above it that is. A source may be a folder on a drive mounted
    above it (/media/usb/notes on /media/usb): that mount going is its drive going."""
    points = {point for point, _, _ in read_table()}
    while not (os.path.ismount(path) or path in points):
        parent = os.path.dirname(path)
        if parent == path:
            break
        path = parent
    return path


def read_table(mountinfo: str = MOUNTINFO) -> list[tuple[str, str, int | None]]:
    """Each mount as (mount point, filesystem type, device), in the order they were made,
    from Linux's mountinfo; where it cannot be read, the fixed places (no device)."""
    try:
        with open(mountinfo, "rb") as handle:
            lines = handle.read().splitlines()
    except OSError as exc:
        if sys.platform.startswith("linux"):
            log.debug("cannot read %s (%s): judging mount points by their place alone", mountinfo, exc)
        return list(FIXED)
    table: list[tuple[str, str, int | None]] = []
    for line in lines:
        # ID PARENT MAJOR:MINOR ROOT MOUNT_POINT OPTIONS [OPTIONAL...] - TYPE SOURCE SUPER_OPTIONS
        fields = line.split()
        try:
            kind = fields[fields.index(b"-", 6) + 1].decode("ascii", "replace")
            major, minor = (int(part) for part in fields[2].split(b":"))
        except (ValueError, IndexError):
            continue
        # Spaces, tabs, newlines and backslashes in a mount point are written as octal.
        point = os.fsdecode(_OCTAL.sub(lambda found: bytes([int(found[1], 8)]), fields[4]))
        table.append((point, kind, os.makedev(major, minor)))
    return table
