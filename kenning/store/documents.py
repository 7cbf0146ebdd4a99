"""Per-file state and the chunks indexed from each file.

A file's state row is written as `scanning` in its own transaction before the file is
read, and its chunks replace the old ones in a second transaction that also marks it
`done` (or `merged`, when another source already holds the same text). A crash between
the two leaves `scanning`, which the next sweep re-ingests; a crash inside the second
leaves the old chunks untouched. Agent text and fetched pages are documents too, with
the same state rows; their `path` is an identity key and `uri` the label shown.

An edited document keeps the items whose text did not change: their ids, vectors and
extracted entities stay, only their place (order, lines) is updated, and only the new
text is embedded and mined again. A citation saved before the edit still resolves as
long as its text is still there.
"""

from __future__ import annotations

import json
import sqlite3
import time
from dataclasses import dataclass
from typing import Literal

import aiosqlite

from kenning.api import Stored
from kenning.store import links, ownership
from kenning.store.database import Database, on_thread
from kenning.store.records import DocumentMeta, NewItem
from kenning.text import dates

Status = Literal["scanning", "done", "failed", "skipped", "merged"]


@dataclass(frozen=True)
class FileState:
    id: int
    path: str
    status: Status
    mtime: float
    size: int
    content_hash: str | None
    # How the file was read (ingest/convert.py `ConvertLimits.reading_for`); None for rows
    # stored before readings were recorded, or never read.
    reading: str | None
    # When the row was last written (seconds since the epoch).
    updated_at: float
    # The chunks it holds: a failed row keeps its last indexed text when the failure
    # was kenning's own (`mark_broken`), and so does a row a crash left `scanning`.
    chunk_count: int = 0

    @property
    def holds_text(self) -> bool:
        """Whether search finds text of this file's: what a file closed to this user keeps."""
        return self.status in ("done", "merged") or self.chunk_count > 0


async def file_states(db: Database, source_id: int) -> dict[str, FileState]:
    """Every state row of a source, by path, made into states on the reader's thread: made
    on the event loop, a folder of 100,000 files held it 0.2-0.3 s at each sweep."""
    async with db.reader() as conn:
        return await on_thread(conn, _file_states, source_id)


async def state_rows(db: Database, source_id: int) -> int:
    """How many state rows a source has, counted in the index rather than made into states."""
    [(count,)] = await db.read("SELECT count(*) FROM documents WHERE source_id = ?", (source_id,))
    return count


def _file_states(conn: sqlite3.Connection, source_id: int) -> dict[str, FileState]:
    rows = conn.execute(
        "SELECT id, path, status, mtime, size, content_hash, reading, updated_at, chunk_count FROM documents"
        " WHERE source_id = ?",
        (source_id,),
    )
    return {row[1]: FileState(*row) for row in rows}


async def mark_scanning(db: Database, source_id: int, path: str, uri: str | None = None) -> int:
    """Returns the document id. A row that was a location of another document stops being one."""
    return await db.write(_scanning, source_id, path, uri)


def _scanning(conn: sqlite3.Connection, source_id: int, path: str, uri: str | None) -> int:
    """The row for this place, marked `scanning`; a new one only when there is none. An
    upsert would do in one statement, but its insert takes an id from the AUTOINCREMENT
    counter even when it updates, and every read of a file would use one up."""
    now = time.time()
    row = conn.execute(
        "UPDATE documents SET status = 'scanning', merged_into = NULL, reason = NULL, uri = coalesce(?, uri),"
        " updated_at = ? WHERE source_id = ? AND path = ? RETURNING id",
        (uri, now, source_id, path),
    ).fetchone()
    if row is None:
        row = conn.execute(
            "INSERT INTO documents (source_id, path, uri, status, updated_at) VALUES (?, ?, ?, 'scanning', ?)"
            " RETURNING id",
            (source_id, path, uri, now),
        ).fetchone()
    return row[0]


@dataclass(frozen=True)
class TextRecord:
    """What a document that arrived as text (agent text, a fetched page) was stored
    with, to prepare it again under a newer reading."""

    id: int
    # A location of another document's copy of the same text, holding no chunks itself.
    merged: bool
    kind: str  # its source's: agent or url
    uri: str
    title: str
    format: str
    tags: tuple[str, ...]
    namespace: str | None
    mtime: float
    size: int
    etag: str | None
    last_modified: str | None
    date: str | None
    date_source: str | None
    text_hash: str | None
    # Moved by every write of the row: what tells a re-preparation the row changed since.
    updated_at: float


async def stale_texts(db: Database, reading: str, kinds: tuple[str, ...]) -> list[tuple[int, str]]:
    """Documents of these source kinds, and each one's kind, stored under another
    reading than `reading` (or before readings were recorded), oldest first."""
    marks = ", ".join("?" * len(kinds))
    rows = await db.read(
        "SELECT d.id, s.kind FROM documents d JOIN sources s ON s.id = d.source_id"
        f" WHERE s.kind IN ({marks}) AND s.removing = 0 AND d.status IN ('done', 'merged')"
        " AND d.reading IS NOT ? ORDER BY d.id",
        (*kinds, reading),
    )
    return [(document_id, kind) for document_id, kind in rows]


async def text_record(db: Database, document_id: int) -> TextRecord | None:
    rows = await db.read(
        "SELECT d.id, d.status = 'merged', s.kind, coalesce(d.uri, ''), d.title, d.format, d.tags,"
        " d.namespace, d.mtime, d.size, d.etag, d.last_modified, d.date, d.date_source, d.text_hash, d.updated_at"
        " FROM documents d JOIN sources s ON s.id = d.source_id WHERE d.id = ? AND d.status IN ('done', 'merged')",
        (document_id,),
    )
    if not rows:
        return None
    row = rows[0]
    return TextRecord(row[0], bool(row[1]), *row[2:6], tuple(json.loads(row[6] or "[]")), *row[7:])


async def restore_text(
    db: Database, read: TextRecord, uri: str, meta: DocumentMeta, items: list[NewItem]
) -> bool:
    """Store a document's text and labels prepared again, unless the row changed since
    it was `read`: an agent adding it anew meanwhile (its text, or only its title, tags
    or date), or a page refreshed, wins. Whether it was stored.

    A row that is a location of another's copy takes only its labels and the reading:
    the text is the holder's, prepared again by its own owner (or read again by a
    sweep), and storing it here would make a second copy of it."""
    return await db.write(_restore_text, read, uri, meta, items)


def _restore_text(
    conn: sqlite3.Connection, read: TextRecord, uri: str, meta: DocumentMeta, items: list[NewItem]
) -> bool:
    row = conn.execute(
        "SELECT status, text_hash, updated_at FROM documents WHERE id = ? AND status IN ('done', 'merged')", (read.id,)
    ).fetchone()
    if row is None or (row[1], row[2]) != (read.text_hash, read.updated_at):
        return False
    conn.execute("UPDATE documents SET uri = ? WHERE id = ?", (uri, read.id))
    if row[0] == "merged":
        conn.execute(
            "UPDATE documents SET title = ?, tags = ?, namespace = ?, reading = ?, updated_at = ? WHERE id = ?",
            (meta.title, meta.tags, meta.namespace, meta.reading, time.time(), read.id),
        )
    else:
        _store(conn, read.id, meta, items)
    return True


async def replace_items(
    db: Database, document_id: int, meta: DocumentMeta, items: list[NewItem]
) -> tuple[Stored, int]:
    """Store a file's new chunks, all or nothing, through the exact-duplicate gate; with
    how many of them are new (a file read again whose chunks come out the same has none
    to embed, and spends no sweep's chunk budget)."""
    return await db.write(_store, document_id, meta, items)


async def store_text(
    db: Database,
    source_id: int,
    key: str,
    uri: str,
    meta: DocumentMeta,
    items: list[NewItem],
    supersedes: list[str] | None = None,
) -> tuple[int, Stored]:
    """Create or replace a document that arrived as text (agent text, a fetched page).

    Its row and its chunks are written in one transaction, unlike a file's: nothing
    would come back to finish a row left half-done, so there must never be one.
    `supersedes` (agent text) replaces the keys of the documents it states it supersedes.
    """
    return await db.write(_store_text, source_id, key, uri, meta, items, supersedes)


def _store_text(
    conn: sqlite3.Connection, source_id: int, key: str, uri: str, meta: DocumentMeta, items: list[NewItem],
    supersedes: list[str] | None,
) -> tuple[int, Stored]:  # fmt: skip
    document_id, stored = _write_text(conn, source_id, key, uri, meta, items)
    if supersedes is not None:
        links.replace_links(conn, document_id, links.SUPERSEDES, supersedes)
    return document_id, stored


async def write_text(
    conn: aiosqlite.Connection, source_id: int, key: str, uri: str, meta: DocumentMeta, items: list[NewItem]
) -> tuple[int, Stored]:
    """`store_text` inside the caller's transaction: an agent record (a capsule, an
    archive, a ledger entry) commits its own rows with its document, or neither."""
    return await on_thread(conn, _write_text, source_id, key, uri, meta, items)


def _write_text(
    conn: sqlite3.Connection, source_id: int, key: str, uri: str, meta: DocumentMeta, items: list[NewItem]
) -> tuple[int, Stored]:
    document_id = _scanning(conn, source_id, key, uri)
    stored, _ = _store(conn, document_id, meta, items)
    return document_id, stored


def _store(conn: sqlite3.Connection, document_id: int, meta: DocumentMeta, items: list[NewItem]) -> tuple[Stored, int]:
    """The exact-duplicate gate and the write, inside the caller's transaction.

    If another source already holds this exact text, the row becomes a location of that
    copy (or, when it outranks the holder, takes the copy over) instead of storing a
    second one. A row whose old text another source still shares hands that copy over
    first (`release`), so superseded text never stays searchable and the other source
    keeps what it holds; a row that holds its text alone is updated in place.
    """
    source_id, kind, held, held_hash = conn.execute(
        "SELECT d.source_id, s.kind, d.chunk_count, d.text_hash FROM documents d"
        " JOIN sources s ON s.id = d.source_id WHERE d.id = ?",
        (document_id,),
    ).fetchone()
    if held and held_hash == meta.text_hash:
        # The row already holds exactly this text (a file rewritten with other bytes, an
        # agent re-adding what it added): its chunks, and every location that shares
        # them, stay as they are. Only under a new title (an agent re-adding it renamed)
        # are they written again: a chunk's title is part of what finds and embeds it.
        fresh = _update_items(conn, document_id, items)
        _record(conn, document_id, meta, "done", None, held)
        return "indexed", fresh
    holder = None if kind in ownership.RECORD_KINDS else ownership.find_holder(conn, meta.text_hash, source_id)
    fresh = 0
    if holder is None and held and not ownership.has_locations(conn, document_id):
        fresh = _update_items(conn, document_id, items)
        status, merged_into, chunk_count, stored = "done", None, len(items), "indexed"
    else:
        # A row holding no chunks has nothing to release and no locations (only a row
        # with chunks is ever a holder): a first ingest skips the trip.
        if held:
            ownership.release(conn, document_id)
        if holder is None:
            _insert_items(conn, document_id, list(enumerate(items)))
            status, merged_into, chunk_count, stored, fresh = "done", None, len(items), "indexed", len(items)
        elif ownership.rank(kind) > holder.rank:
            ownership.adopt(conn, document_id, holder)
            status, merged_into, chunk_count, stored = "done", None, holder.chunk_count, "adopted"
        else:
            status, merged_into, chunk_count, stored = "merged", holder.document_id, 0, "merged"
    _record(conn, document_id, meta, status, merged_into, chunk_count)
    return stored, fresh


def _insert_items(conn: sqlite3.Connection, document_id: int, items: list[tuple[int, NewItem]]) -> None:
    conn.executemany(
        "INSERT INTO items (document_id, ord, title, section, content, line_start, line_end, date, date_first)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
            (
                document_id,
                ord_,
                item.title,
                item.section,
                item.content,
                item.line_start,
                item.line_end,
                item.date,
                item.date_first,
            )
            for ord_, item in items
        ],
    )
    with_cjk = [(ord_, item.cjk) for ord_, item in items if item.cjk]
    if with_cjk:
        # The items' ids are known only now; the delete trigger takes these rows away
        # with their items.
        conn.executemany(
            "INSERT INTO items_cjk (rowid, text) SELECT id, ? FROM items WHERE document_id = ? AND ord = ?",
            [(text, document_id, ord_) for ord_, text in with_cjk],
        )


def _update_items(conn: sqlite3.Connection, document_id: int, items: list[NewItem]) -> int:
    """Replace a document's chunks, keeping every old item whose text reappears; returns
    how many are new.

    An item is kept when title, section and text are all the same, since all three go
    into its vector and its extraction. Kept items whose position moved are parked at
    negative `ord`s first, so no two rows ever share an `ord` mid-way (the table's
    UNIQUE constraint is checked per statement). A kept item takes the date it is read
    with now (a newer reading may date its lines otherwise); its CJK index rows stay.
    """
    old = conn.execute(
        "SELECT id, ord, title, section, content, date, date_first, line_start, line_end FROM items"
        " WHERE document_id = ? ORDER BY ord",
        (document_id,),
    ).fetchall()
    reusable: dict[tuple[str, str, str], list[tuple]] = {}
    for row in old:
        reusable.setdefault((row[2], row[3], row[4]), []).append(row)
    moved: list[tuple[int, int, int, int]] = []
    redated: list[tuple[str | None, str | None, int]] = []
    fresh: list[tuple[int, NewItem]] = []
    for ord_, item in enumerate(items):
        candidates = reusable.get((item.title, item.section, item.content))
        if not candidates:
            fresh.append((ord_, item))
            continue
        item_id, old_ord, *_, date, date_first, line_start, line_end = candidates.pop(0)
        if (old_ord, line_start, line_end) != (ord_, item.line_start, item.line_end):
            moved.append((-1 - ord_, item.line_start, item.line_end, item_id))
        if (date, date_first) != (item.date, item.date_first):
            redated.append((item.date, item.date_first, item_id))
    gone = [(row[0],) for rows in reusable.values() for row in rows]
    conn.executemany("DELETE FROM items WHERE id = ?", gone)
    conn.executemany("UPDATE items SET ord = ?, line_start = ?, line_end = ? WHERE id = ?", moved)
    conn.executemany("UPDATE items SET date = ?, date_first = ? WHERE id = ?", redated)
    _insert_items(conn, document_id, fresh)
    if moved:
        conn.execute("UPDATE items SET ord = -1 - ord WHERE document_id = ? AND ord < 0", (document_id,))
    return len(fresh)


def _record(
    conn: sqlite3.Connection, document_id: int, meta: DocumentMeta, status: str, merged_into: int | None,
    chunk_count: int,
) -> None:  # fmt: skip
    conn.execute(
        "UPDATE documents SET status = ?, merged_into = ?, reason = NULL, title = ?, format = ?, mtime = ?,"
        " size = ?, content_hash = ?, text_hash = ?, chunk_count = ?, tags = ?, namespace = ?, etag = ?,"
        " last_modified = ?, date = ?, date_source = ?, date_end = ?, reading = ?, updated_at = ? WHERE id = ?",
        (
            status, merged_into, meta.title, meta.format, meta.mtime, meta.size, meta.content_hash,
            meta.text_hash, chunk_count, meta.tags, meta.namespace, meta.etag, meta.last_modified, meta.date,
            meta.date_source, meta.date_end, meta.reading, time.time(), document_id,
        ),
    )


async def mark_unindexed(
    db: Database,
    document_id: int,
    status: Literal["failed", "skipped"],
    reason: str,
    mtime: float,
    size: int,
    reading: str | None,
) -> None:
    """A file that failed or was skipped holds no chunks: stale text must not stay
    searchable. `reading` is how it was read: another may take what this one refused."""
    await db.write(_unindexed, document_id, status, reason, mtime, size, reading)


def _unindexed(
    conn: sqlite3.Connection, document_id: int, status: str, reason: str, mtime: float, size: int, reading: str | None
) -> None:
    ownership.release(conn, document_id)
    conn.execute(
        "UPDATE documents SET status = ?, merged_into = NULL, reason = ?, mtime = ?, size = ?,"
        " content_hash = NULL, text_hash = NULL, chunk_count = 0, reading = ?, updated_at = ? WHERE id = ?",
        (status, reason, mtime, size, reading, time.time(), document_id),
    )


async def mark_broken(
    db: Database, source_id: int, path: str, reason: str, mtime: float, size: int, reading: str | None
) -> None:
    """A file kenning failed on through its own fault (a bug, a store error), not the
    file's, or could not open to finish a read a stop cut short: it is `failed` with the
    reason, but any text it holds from before stays searchable, since nothing says that
    text is wrong. A location of another's copy stops being one (as `mark_scanning`
    makes it); the copy stays with its holder."""
    await db.write_one(
        "UPDATE documents SET status = 'failed', merged_into = NULL, reason = ?, mtime = ?, size = ?, reading = ?,"
        " updated_at = ? WHERE source_id = ? AND path = ?",
        (reason, mtime, size, reading, time.time(), source_id, path),
    )


async def touch(db: Database, document_id: int, mtime: float, size: int, dated: float | None = None) -> None:
    """The file was rewritten with the same bytes: remember the new mtime, keep the chunks.

    `dated`: the file time a document dated by its file time speaks from, when that is
    not `mtime` (a link's target's, where `mtime` may be the link's own).
    """
    # A document dated by its file time speaks from the new time.
    await db.write_one(
        "UPDATE documents SET mtime = ?, size = ?, updated_at = ?,"
        " date = CASE WHEN date_source = 'modified' THEN ? ELSE date END WHERE id = ?",
        (mtime, size, time.time(), dates.from_timestamp(mtime if dated is None else dated), document_id),
    )


@dataclass(frozen=True)
class TextRemoval:
    """What `remove_text` did: the document that went (id, title, uri), or the ids of the
    documents shown under the uri asked for, of which none went."""

    removed: tuple[int, str, str] | None
    alike: tuple[int, ...] = ()


_AGENT_TEXT = "source_id IN (SELECT id FROM sources WHERE kind IN ('agent', 'url') AND removing = 0)"


async def remove_text(db: Database, keys: list[str], shown: str) -> TextRemoval:
    """Delete the agent document or fetched page stored under one of these identity keys
    (ingest/text_docs.py `stored_keys`), as a deleted file's row goes: what another source
    also holds is handed to it.

    Under none of them, the one whose uri as hits show it (redacted) is `shown`: the raw
    uri is kept only as a hash, so a document added under one holding a credential could
    be removed only by whoever still held the credential, and not by the user who found
    it in search. Two or more shown alike (uris apart only in their secrets) are left:
    the uri cannot say which is meant."""
    return await db.write(_remove_text, keys, shown)


def _remove_text(conn: sqlite3.Connection, keys: list[str], shown: str) -> TextRemoval:
    for key in keys:
        row = conn.execute(
            f"SELECT id, title, coalesce(uri, '') FROM documents WHERE path = ? AND {_AGENT_TEXT}", (key,)
        ).fetchone()
        if row is not None:
            _delete_row(conn, row[0])
            return TextRemoval(row)
    rows = conn.execute(
        f"SELECT id, title, uri FROM documents WHERE uri = ? AND {_AGENT_TEXT} ORDER BY id", (shown,)
    ).fetchall()
    if len(rows) == 1:
        _delete_row(conn, rows[0][0])
        return TextRemoval(rows[0])
    return TextRemoval(None, tuple(row[0] for row in rows))


async def delete_documents(db: Database, source_id: int, paths: list[str]) -> int:
    """Drop files that are gone; what another source still holds is handed to it."""
    if not paths:
        return 0
    await db.write(_delete_paths, source_id, paths)
    return len(paths)


def _delete_paths(conn: sqlite3.Connection, source_id: int, paths: list[str]) -> None:
    for path in paths:
        rows = conn.execute("SELECT id FROM documents WHERE source_id = ? AND path = ?", (source_id, path)).fetchall()
        for (document_id,) in rows:
            _delete_row(conn, document_id)


async def delete_row(conn: aiosqlite.Connection, document_id: int) -> None:
    """Release a row's items (to an heir, or by deleting them), then the row itself."""
    await on_thread(conn, _delete_row, document_id)


def _delete_row(conn: sqlite3.Connection, document_id: int) -> None:
    ownership.release(conn, document_id)
    conn.execute("DELETE FROM documents WHERE id = ?", (document_id,))
