"""The record of each daemon a config started: its pid, data directory and socket.

`ken stop` and `ken restart` find a daemon through the data directory and socket the
config names *now*. Once `[daemon] data_dir` or `socket` is edited under a running
daemon, that finds nothing, and the daemon started from the old values would keep
indexing the same folders beside a second one. So each daemon records where it runs,
and the CLI looks there too.

A record lives in the state directory (where `ken start` logs), under
`daemons/<config key>/<data directory key>.json`: one folder per config (by its real
path, so a link to it names the same library), one file per data directory, since a
data directory holds one daemon at a time (its lock). The daemon writes its record once
it holds the lock and its socket path is free, and removes it as it stops. A daemon
killed outright leaves its record behind; the next daemon on that directory replaces
it, and until then a reader tells it is stale by the data directory's lock, which the
kernel drops with the process: a record counts only while its pid holds that lock
(`kenning.cli.lifecycle.recorded_daemons`), never on the pid alone, which another
program may have been given since. The reader that finds a stale record removes it,
holding the lock meanwhile so that no daemon can be writing its own.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path

from kenning.config.paths import state_dir, write_privately


@dataclass(frozen=True)
class DaemonRecord:
    pid: int
    config: str
    data_dir: str
    socket: str


# The data directory's lock file holds its daemon's pid on its first line, and this word
# on the next once the daemon has begun to stop: between closing its socket and letting
# go of the lock it answers no one, and a command that met it then was told it was
# "still starting".
STOPPING = "stopping"


def lock_text(pid: int, stopping: bool = False) -> bytes:
    return f"{pid}\n{STOPPING}\n".encode() if stopping else f"{pid}\n".encode()


def read_lock_text(raw: bytes) -> tuple[int | None, bool]:
    """The pid a lock file names (None for none that can be read) and whether its daemon
    is stopping."""
    lines = raw.decode(errors="replace").split()
    pid = int(lines[0]) if lines and lines[0].isdigit() else None
    return pid, STOPPING in lines[1:]


def records_dir() -> Path:
    return state_dir() / "daemons"


def _key(path: str | os.PathLike[str]) -> str:
    return hashlib.sha256(os.fsencode(os.path.realpath(path))).hexdigest()[:16]


def record_path(config: Path, data_dir: Path) -> Path:
    return records_dir() / _key(config) / f"{_key(data_dir)}.json"


def write_record(record: DaemonRecord) -> Path:
    """Put `record` in place whole (a reader never sees half of one), the user's alone."""
    path = record_path(Path(record.config), Path(record.data_dir))
    try:
        write_privately(path, json.dumps(asdict(record)))
    except FileNotFoundError:
        # Another daemon of this config removed the folder as its last record left it,
        # between this one making it and writing into it.
        write_privately(path, json.dumps(asdict(record)))
    return path


def remove_record(record: DaemonRecord) -> None:
    """Remove `record` if it is still the one in place: a daemon that took the directory
    over since (after this one lost it) has written its own, which stays."""
    path = record_path(Path(record.config), Path(record.data_dir))
    if read_record(path) == record:
        path.unlink(missing_ok=True)
        # The config's folder goes with its last record: every config ever started
        # (each test's, each project's) left one behind for good.
        try:
            path.parent.rmdir()
        except OSError:
            pass


def read_record(path: Path) -> DaemonRecord | None:
    """The record at `path`; None for none, or one that cannot be read or made sense of
    (a record is a hint where to look, never a reason to fail)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return DaemonRecord(
            pid=int(data["pid"]), config=str(data["config"]), data_dir=str(data["data_dir"]), socket=str(data["socket"])
        )
    except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError):
        return None


def all_records() -> list[DaemonRecord]:
    """Every record any config's daemons left, live or stale."""
    try:
        paths = sorted(records_dir().glob("*/*.json"))
    except OSError:
        return []
    return [record for path in paths if (record := read_record(path)) is not None]


def records_of(config: Path) -> list[DaemonRecord]:
    """Every record the daemons started from `config` left, live or stale."""
    try:
        paths = sorted((records_dir() / _key(config)).glob("*.json"))
    except OSError:
        return []
    return [record for path in paths if (record := read_record(path)) is not None]
