"""Memory capsules: their rows, written with their documents in one transaction.

A capsule is a document in the `memory` source (so search finds it, cited by its uri)
plus a `capsules` row with what a document has no column for. Superseding a capsule
keeps its row, marked, and deletes its document: superseded knowledge is never found
again, yet `show` can still say what replaced it. Forgetting deletes both.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Sequence
from dataclasses import dataclass

import aiosqlite

from kenning.store import documents
from kenning.store.database import Database, on_thread
from kenning.store.records import DocumentMeta, NewItem


@dataclass(frozen=True)
class CapsuleRow:
    id: str
    document_id: int | None
    kind: str
    scope: str
    title: str
    title_key: str
    body: str
    tags: tuple[str, ...]
    confidence: float
    source_ref: str | None
    created_at: float
    updated_at: float
    last_used_at: float | None
    uses: int
    supersedes: str | None
    superseded_by: str | None
    vector: bytes | None
    signature: str | None

    @property
    def touched_at(self) -> float:
        """When it was last written or used: what its freshness decays from."""
        return max(self.updated_at, self.last_used_at or 0.0)


_COLUMNS = (
    "id, document_id, kind, scope, title, title_key, body, tags, confidence, source_ref, created_at,"
    " updated_at, last_used_at, uses, supersedes, superseded_by, vector, signature"
)


def _row(values: tuple) -> CapsuleRow:
    values = list(values)
    values[7] = tuple(json.loads(values[7]))
    return CapsuleRow(*values)


async def get(db: Database, capsule_id: str) -> CapsuleRow | None:
    rows = await db.read(f"SELECT {_COLUMNS} FROM capsules WHERE id = ?", (capsule_id,))
    return _row(rows[0]) if rows else None


async def current_by_title(db: Database, scope: str, title_key: str) -> CapsuleRow | None:
    rows = await db.read(
        f"SELECT {_COLUMNS} FROM capsules WHERE scope = ? AND title_key = ? AND superseded_by IS NULL",
        (scope, title_key),
    )
    return _row(rows[0]) if rows else None


async def current(db: Database, scope: str | None = None, kind: str | None = None) -> list[CapsuleRow]:
    """Capsules not superseded, oldest first, optionally of one scope and kind."""
    clauses, params = ["superseded_by IS NULL"], []
    if scope is not None:
        clauses.append("scope = ?")
        params.append(scope)
    if kind is not None:
        clauses.append("kind = ?")
        params.append(kind)
    sql = f"SELECT {_COLUMNS} FROM capsules WHERE {' AND '.join(clauses)} ORDER BY created_at, id"
    # The rows are built on the reader's thread: curate reads every capsule, 20,000 of
    # them, which the event loop would otherwise turn into records between requests.
    async with db.reader() as conn:
        return await on_thread(conn, _rows, sql, params)


def _rows(conn: sqlite3.Connection, sql: str, params: list) -> list[CapsuleRow]:
    return [_row(row) for row in conn.execute(sql, params)]


async def by_documents(db: Database, document_ids: list[int]) -> dict[int, CapsuleRow]:
    if not document_ids:
        return {}
    marks = ", ".join("?" * len(document_ids))
    rows = await db.read(f"SELECT {_COLUMNS} FROM capsules WHERE document_id IN ({marks})", document_ids)
    return {row.document_id: row for row in map(_row, rows) if row.document_id is not None}


def listing_statements(
    scope: str | None,
    kind: str | None,
    superseded: bool,
    limit: int,
    offset: int = 0,
    after: tuple[float, str] | None = None,
) -> tuple[tuple[str, list], tuple[str, list]]:
    """The count and the page `listing` runs, each with its parameters."""
    clauses, params = ["1"], []
    if not superseded:
        clauses.append("superseded_by IS NULL")
    if scope is not None:
        clauses.append("scope = ?")
        params.append(scope)
    if kind is not None:
        clauses.append("kind = ?")
        params.append(kind)
    where = " AND ".join(clauses)
    page, page_params = where, [*params]
    if after is not None:
        # The bound on created_at alone lets the index seek to the page (m025); written
        # only as the OR, the walk read every newer capsule again.
        page += " AND created_at <= ? AND (created_at < ? OR id > ?)"
        page_params += [after[0], after[0], after[1]]
    return (
        (f"SELECT count(*) FROM capsules WHERE {where}", params),
        (
            f"SELECT {_COLUMNS} FROM capsules WHERE {page} ORDER BY created_at DESC, id LIMIT ? OFFSET ?",
            [*page_params, limit + 1, offset],
        ),
    )


async def listing(
    db: Database,
    scope: str | None,
    kind: str | None,
    superseded: bool,
    limit: int,
    offset: int = 0,
    after: tuple[float, str] | None = None,
) -> tuple[list[CapsuleRow], int, bool]:
    """Newest created first (a key no update changes, so a walk by `after` — the
    (created_at, id) of the last row seen — neither repeats nor skips one); `superseded`
    lists the replaced ones too. Returns the rows, how many match, and whether more follow."""
    (count_sql, count_params), (page_sql, page_params) = listing_statements(
        scope, kind, superseded, limit, offset, after
    )
    async with db.reader() as conn:
        [(total,)] = await conn.execute_fetchall(count_sql, count_params)
        rows = await conn.execute_fetchall(page_sql, page_params)
    return [_row(row) for row in rows[:limit]], total, len(rows) > limit


async def superseded(db: Database) -> list[CapsuleRow]:
    """Replaced capsules: they keep their row (`memory.show`), without a document."""
    rows = await db.read(f"SELECT {_COLUMNS} FROM capsules WHERE superseded_by IS NOT NULL ORDER BY id")
    return [_row(row) for row in rows]


async def rewrite_superseded(db: Database, rows: list[CapsuleRow]) -> None:
    """Store replaced capsules' text again (redacted anew); their likeness vectors go."""
    await db.write(_rewrite_superseded, rows)


def _rewrite_superseded(conn: sqlite3.Connection, rows: list[CapsuleRow]) -> None:
    conn.executemany(
        "UPDATE capsules SET scope = ?, title = ?, title_key = ?, body = ?, tags = ?, source_ref = ?, vector = NULL,"
        " signature = NULL WHERE id = ? AND superseded_by IS NOT NULL",
        [
            (
                row.scope, row.title, row.title_key, row.body, json.dumps(list(row.tags), ensure_ascii=False),
                row.source_ref, row.id,
            )
            for row in rows
        ],
    )


@dataclass(frozen=True)
class CapsuleDocument:
    """The capsule's document as ingest prepared it (redacted, chunked)."""

    source_id: int
    uri: str
    meta: DocumentMeta
    items: list[NewItem]


def document_key(capsule_id: str) -> str:
    return "capsule:" + capsule_id


async def save(
    db: Database,
    row: CapsuleRow,
    document: CapsuleDocument,
    supersede: str | None = None,
    vectors: Sequence[tuple[str, bytes, str]] = (),
) -> int:
    """Write a capsule (new or updated) and its document; with `supersede`, mark that
    capsule replaced and drop its document; refresh other capsules' stored `vectors`
    (id, vector, signature). All in one transaction; returns the document id."""
    async with db.transaction() as conn:
        # The replaced capsule steps aside first: the new one may keep its title.
        if supersede is not None:
            await _supersede(conn, supersede, row.id, row.updated_at)
        document_id, _ = await documents.write_text(
            conn, document.source_id, document_key(row.id), document.uri, document.meta, document.items
        )
        await conn.execute(
            f"INSERT INTO capsules ({_COLUMNS}) VALUES ({', '.join('?' * 18)})"
            " ON CONFLICT (id) DO UPDATE SET kind = excluded.kind, scope = excluded.scope, title = excluded.title,"
            " title_key = excluded.title_key, body = excluded.body, tags = excluded.tags,"
            " confidence = excluded.confidence, source_ref = excluded.source_ref, updated_at = excluded.updated_at,"
            " vector = excluded.vector, signature = excluded.signature",
            (
                row.id, document_id, row.kind, row.scope, row.title, row.title_key, row.body,
                json.dumps(list(row.tags), ensure_ascii=False), row.confidence, row.source_ref, row.created_at,
                row.updated_at, row.last_used_at, row.uses, row.supersedes, row.superseded_by, row.vector,
                row.signature,
            ),
        )  # fmt: skip
        await conn.executemany(
            "UPDATE capsules SET vector = ?, signature = ? WHERE id = ?",
            [(vector, signature, capsule_id) for capsule_id, vector, signature in vectors],
        )
    return document_id


async def _supersede(conn: aiosqlite.Connection, old_id: str, new_id: str, now: float) -> None:
    [(document_id,)] = await conn.execute_fetchall(
        "SELECT document_id FROM capsules WHERE id = ? AND superseded_by IS NULL", (old_id,)
    )
    # The row lets go of its document first: the document's deletion would cascade to it.
    await conn.execute(
        "UPDATE capsules SET superseded_by = ?, superseded_at = ?, document_id = NULL WHERE id = ?",
        (new_id, now, old_id),
    )
    await documents.delete_row(conn, document_id)


async def set_vectors(db: Database, vectors: list[tuple[str, bytes, str]]) -> None:
    if vectors:
        async with db.transaction() as conn:
            await conn.executemany(
                "UPDATE capsules SET vector = ?, signature = ? WHERE id = ?",
                [(vector, signature, capsule_id) for capsule_id, vector, signature in vectors],
            )


async def mark_used(db: Database, capsule_ids: list[str]) -> float:
    """A capsule an agent was shown counts as used: its freshness starts again. Returns
    the time recorded as its last use, for the capsule shown to say so."""
    now = time.time()
    if capsule_ids:
        marks = ", ".join("?" * len(capsule_ids))
        await db.write_one(
            f"UPDATE capsules SET last_used_at = ?, uses = uses + 1 WHERE id IN ({marks})", [now, *capsule_ids]
        )
    return now


async def forget(
    db: Database, capsule_id: str, revived: tuple[CapsuleRow, CapsuleDocument] | None = None
) -> tuple[CapsuleRow, int | None] | None:
    """Delete a capsule and its document, and take it out of its chain of replacements:
    what it replaced is replaced by what replaced it, and what replaced it names what it
    replaced. `revived`: the capsule it replaced, current again (its title as the caller
    gives it), with its document. Returns what was deleted and
    the revived capsule's document id (None: no such capsule)."""
    async with db.transaction() as conn:
        rows = await conn.execute_fetchall(f"SELECT {_COLUMNS} FROM capsules WHERE id = ?", (capsule_id,))
        if not rows:
            return None
        row = _row(rows[0])
        await conn.execute("DELETE FROM capsules WHERE id = ?", (capsule_id,))
        if row.document_id is not None:
            await documents.delete_row(conn, row.document_id)
        await conn.execute("UPDATE capsules SET supersedes = ? WHERE supersedes = ?", (row.supersedes, capsule_id))
        revived_document = None
        if row.superseded_by is not None:
            await conn.execute(
                "UPDATE capsules SET superseded_by = ? WHERE superseded_by = ?", (row.superseded_by, capsule_id)
            )
        elif revived is not None:
            previous, document = revived
            revived_document, _ = await documents.write_text(
                conn, document.source_id, document_key(previous.id), document.uri, document.meta, document.items
            )
            await conn.execute(
                "UPDATE capsules SET superseded_by = NULL, superseded_at = NULL, document_id = ?, title = ?,"
                " title_key = ? WHERE id = ?",
                (revived_document, previous.title, previous.title_key, previous.id),
            )
    return row, revived_document


async def counts(db: Database) -> tuple[int, int]:
    """(current, superseded) capsules."""
    [(current_count, superseded_count)] = await db.read(
        "SELECT count(*) FILTER (WHERE superseded_by IS NULL), count(*) FILTER (WHERE superseded_by IS NOT NULL)"
        " FROM capsules"
    )
    return current_count, superseded_count
