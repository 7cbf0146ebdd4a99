"""A database file SQLite cannot read (cut short, overwritten), told the same way by the
daemon refusing to start on it and by `ken doctor` while the daemon is stopped.

This module imports little beyond sqlite3, so the `ken` command can look at the file
without loading the daemon's store.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

_DAMAGE = {sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB}


def is_damage(exc: sqlite3.Error) -> bool:
    """Whether SQLite failed because the file's own bytes are wrong, not its access."""
    code = getattr(exc, "sqlite_errorcode", None)
    return code is not None and (code & 0xFF) in _DAMAGE


def what_to_do() -> str:
    """The file is left as it is, since what agents gave is kept nowhere else. Its -wal
    and -shm must go with it: a new database beside the old WAL would take the old one's
    frames as its own."""
    return (
        "move it aside with its -wal and -shm files and start again for a new one (folders are read"
        " again; what agents gave is only in the old file: `sqlite3 FILE .recover` may save it)"
    )


def damaged(path: Path, exc: sqlite3.Error) -> str:
    return f"the database {path} is damaged ({exc}): {what_to_do()}"


def read_only_uri(path: Path) -> str:
    """The URI SQLite opens `path` read-only by. Percent-encoded: written as it stands, a
    '#' in the path began the URI's fragment and a '?' its query, and SQLite opened (and
    made, empty, and writable) the file named by the part before it: "C" for "C#lib"."""
    return Path(os.path.abspath(path)).as_uri() + "?mode=ro"


def damage_in(path: Path) -> sqlite3.Error | None:
    """The error that keeps the daemon from opening `path`, read without writing to it.

    The daemon fails on the header and the schema (its PRAGMAs and its migrations' look
    at the version), so those are what is read here; a page deeper in the file is the
    daemon's to report once it runs. Any other error (no permission, a lock) is not
    damage, and the daemon's start says what it is.
    """
    try:
        conn = sqlite3.connect(read_only_uri(path), uri=True)
    except sqlite3.Error:
        return None
    try:
        conn.execute("PRAGMA user_version").fetchone()
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except sqlite3.Error as exc:
        return exc if is_damage(exc) else None
    finally:
        conn.close()
    return None
