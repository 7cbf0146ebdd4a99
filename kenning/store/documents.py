"""Per-file state and the chunks indexed from each file.

A file's state row is written as `scanning` in its own transaction before the file is
read, and its chunks replace the old ones in a second transaction that also marks it
`done`. A crash between the two leaves `scanning`, which the next sweep re-ingests; a
crash inside the second leaves the old chunks untouched.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Literal

import aiosqlite

from kenning.store.database import Database

Status = Literal["scanning", "done", "failed", "skipped"]


@dataclass(frozen=True)
class FileState:
    id: int
    path: str
    status: Status
    mtime: float
    size: int
    content_hash: str | None


@dataclass(frozen=True)
class NewItem:
    title: str
    section: str
    content: str
    line_start: int
    line_end: int


async def file_states(db: Database, source_id: int) -> dict[str, FileState]:
    async with db.reader() as conn:
        cursor = await conn.execute(
            "SELECT id, path, status, mtime, size, content_hash FROM documents WHERE source_id = ?",
            (source_id,),
        )
        return {row[1]: FileState(*row) for row in await cursor.fetchall()}


async def mark_scanning(db: Database, source_id: int, path: str) -> tuple[int, bool]:
    """Returns the document id and whether it holds chunks from an earlier ingest."""
    [(document_id, chunk_count)] = await db.write_one(
        "INSERT INTO documents (source_id, path, status, updated_at) VALUES (?, ?, 'scanning', ?)"
        " ON CONFLICT (source_id, path) DO UPDATE SET status = 'scanning', reason = NULL,"
        " updated_at = excluded.updated_at RETURNING id, chunk_count",
        (source_id, path, time.time()),
    )
    return document_id, chunk_count > 0


async def replace_items(
    db: Database,
    document_id: int,
    *,
    title: str,
    format: str,
    mtime: float,
    size: int,
    content_hash: str,
    items: list[NewItem],
    had_items: bool = True,
) -> None:
    """Swap a document's chunks for new ones and mark it done, all or nothing."""
    rows = [
        (document_id, ord_, item.title, item.section, item.content, item.line_start, item.line_end)
        for ord_, item in enumerate(items)
    ]
    removed: list[int] = []
    async with db.transaction() as conn:
        if had_items:
            removed = await _delete_items(conn, document_id)
        await conn.executemany(
            "INSERT INTO items (document_id, ord, title, section, content, line_start, line_end)"
            " VALUES (?, ?, ?, ?, ?, ?, ?)",
            rows,
        )
        await conn.execute(
            "UPDATE documents SET status = 'done', reason = NULL, title = ?, format = ?, mtime = ?, size = ?,"
            " content_hash = ?, chunk_count = ?, updated_at = ? WHERE id = ?",
            (title, format, mtime, size, content_hash, len(rows), time.time(), document_id),
        )
    db.items_removed(removed)


async def mark_unindexed(
    db: Database, document_id: int, status: Literal["failed", "skipped"], reason: str, mtime: float, size: int
) -> None:
    """A file that failed or was skipped holds no chunks: stale text must not stay searchable."""
    async with db.transaction() as conn:
        removed = await _delete_items(conn, document_id)
        await conn.execute(
            "UPDATE documents SET status = ?, reason = ?, mtime = ?, size = ?, content_hash = NULL,"
            " chunk_count = 0, updated_at = ? WHERE id = ?",
            (status, reason, mtime, size, time.time(), document_id),
        )
    db.items_removed(removed)


async def touch(db: Database, document_id: int, mtime: float, size: int) -> None:
    """The file was rewritten with the same bytes: remember the new mtime, keep the chunks."""
    await db.write_one(
        "UPDATE documents SET mtime = ?, size = ?, updated_at = ? WHERE id = ?", (mtime, size, time.time(), document_id)
    )


async def delete_documents(db: Database, source_id: int, paths: list[str]) -> int:
    """Drop files that are gone; their chunks and index entries go by cascade."""
    if not paths:
        return 0
    removed: list[int] = []
    async with db.transaction() as conn:
        for path in paths:
            rows = await conn.execute_fetchall(
                "SELECT id FROM documents WHERE source_id = ? AND path = ?", (source_id, path)
            )
            for (document_id,) in rows:
                # Items first, by id, so the in-memory views learn exactly which went.
                removed.extend(await _delete_items(conn, document_id))
                await conn.execute("DELETE FROM documents WHERE id = ?", (document_id,))
    db.items_removed(removed)
    return len(paths)


async def _delete_items(conn: aiosqlite.Connection, document_id: int) -> list[int]:
    rows = await conn.execute_fetchall("DELETE FROM items WHERE document_id = ? RETURNING id", (document_id,))
    return [row[0] for row in rows]
