"""The facts ledger's rows: entries, the identity keys they answer to, and their graph.

An entry is a document in the `ledger` source (one line of text, found by search) plus
its row and keys. An add that merges writes, in one transaction: the entries it folds in
removed, the surviving entry's document and row rewritten, its keys replaced, and its
chunks' graph set from its fields (`graph.write_structured`), so a kill at any point
leaves the ledger as it was before the add or as it is after it.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass

from kenning.store import documents, graph
from kenning.store.database import Database, on_thread
from kenning.store.records import DocumentMeta, Extraction, NewItem


@dataclass(frozen=True)
class EntryRow:
    id: str
    document_id: int | None
    section: str
    identity: str
    fields: dict[str, str]
    owner: str
    evidence: list[str]
    created_at: float
    updated_at: float
    keys: list[str]


@dataclass(frozen=True)
class EntryDocument:
    source_id: int
    uri: str
    meta: DocumentMeta
    items: list[NewItem]


_COLUMNS = "e.id, e.document_id, e.section, e.identity, e.fields, e.owner, e.evidence, e.created_at, e.updated_at"
_SELECT = (
    f"SELECT {_COLUMNS}, (SELECT json_group_array(k.key) FROM ledger_keys k WHERE k.entry_id = e.id)"
    " FROM ledger_entries e"
)


def _row(values: tuple) -> EntryRow:
    return EntryRow(
        values[0], values[1], values[2], values[3], json.loads(values[4]), values[5], json.loads(values[6]),
        values[7], values[8], sorted(json.loads(values[9])),
    )  # fmt: skip


async def matching(db: Database, section: str, keys: list[str]) -> list[EntryRow]:
    """Entries of the section answering to any of the keys, oldest first."""
    if not keys:
        return []
    marks = ", ".join("?" * len(keys))
    rows = await db.read(
        f"{_SELECT} WHERE e.id IN (SELECT entry_id FROM ledger_keys WHERE section = ? AND key IN ({marks}))"
        " ORDER BY e.created_at, e.id",
        [section, *keys],
    )
    return [_row(row) for row in rows]


async def by_document(db: Database, document_id: int) -> EntryRow | None:
    rows = await db.read(f"{_SELECT} WHERE e.document_id = ?", (document_id,))
    return _row(rows[0]) if rows else None


async def get(db: Database, entry_id: str) -> EntryRow | None:
    rows = await db.read(f"{_SELECT} WHERE e.id = ?", (entry_id,))
    return _row(rows[0]) if rows else None


async def listing(db: Database, section: str | None = None) -> list[EntryRow]:
    """Entries in creation order (the render's order within a section)."""
    where, params = ("WHERE e.section = ?", [section]) if section else ("", [])
    # Built on the reader's thread: a render reads every entry, and decoding thousands of
    # entries' fields is work the event loop would otherwise do between requests.
    async with db.reader() as conn:
        return await on_thread(conn, _rows, f"{_SELECT} {where} ORDER BY e.created_at, e.id", params)


def _rows(conn: sqlite3.Connection, sql: str, params: list) -> list[EntryRow]:
    return [_row(row) for row in conn.execute(sql, params)]


async def save(db: Database, row: EntryRow, document: EntryDocument, extraction: Extraction, folded: list[str]) -> int:
    """Write an entry (new or merged), folding the `folded` entries into it; returns its document id."""
    async with db.transaction() as conn:
        for entry_id in folded:
            gone = await conn.execute_fetchall("SELECT document_id FROM ledger_entries WHERE id = ?", (entry_id,))
            for (document_id,) in gone:
                await documents.delete_row(conn, document_id)
        document_id, _ = await documents.write_text(
            conn, document.source_id, "ledger:" + row.id, document.uri, document.meta, document.items
        )
        await conn.execute(
            "INSERT INTO ledger_entries (id, document_id, section, identity, fields, owner, evidence, created_at,"
            " updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET"
            " identity = excluded.identity, fields = excluded.fields, owner = excluded.owner,"
            " evidence = excluded.evidence, updated_at = excluded.updated_at",
            (
                row.id, document_id, row.section, row.identity, json.dumps(row.fields, ensure_ascii=False),
                row.owner, json.dumps(row.evidence, ensure_ascii=False), row.created_at, row.updated_at,
            ),
        )  # fmt: skip
        await conn.execute("DELETE FROM ledger_keys WHERE entry_id = ?", (row.id,))
        await conn.executemany(
            "INSERT INTO ledger_keys (section, key, entry_id) VALUES (?, ?, ?)"
            " ON CONFLICT (section, key) DO UPDATE SET entry_id = excluded.entry_id",
            [(row.section, key, row.id) for key in row.keys],
        )
        items = await conn.execute_fetchall("SELECT id FROM items WHERE document_id = ?", (document_id,))
        await graph.write_structured(conn, [(item_id, extraction) for (item_id,) in items])
    return document_id


async def remove(db: Database, entry_id: str) -> EntryRow | None:
    """Delete an entry, its keys, its document and its part of the graph."""
    async with db.transaction() as conn:
        rows = await conn.execute_fetchall(f"{_SELECT} WHERE e.id = ?", (entry_id,))
        if not rows:
            return None
        row = _row(rows[0])
        await documents.delete_row(conn, row.document_id)
    return row


async def count(db: Database) -> int:
    [(entries,)] = await db.read("SELECT count(*) FROM ledger_entries")
    return entries
