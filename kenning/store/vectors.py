"""Stored embeddings: which items are stale for an embedder, writing and loading vectors.

An item whose text the embedder failed on (EmbedJob leaves it to keyword search) has a
row too, under `left_out(signature)`, of dimension 0 and no bytes: it is not stale, so no
pass asks for it again, and the count survives a restart; it goes with its item, with
`ken reembed` (delete_vectors), and when the model behind the name changes. Kept in this
table, and not one of its own, so that no migration is needed and every rule that drops
an item's vector drops it too. No reader of vectors asks for that signature.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

import numpy as np

from kenning.store.database import Database

SQL_BATCH = 900
LOAD_PAGE = 8192


@dataclass(frozen=True)
class StaleItem:
    id: int
    source_id: int
    title: str
    section: str
    content: str


@dataclass(frozen=True)
class VectorRow:
    item_id: int
    source_id: int
    dim: int
    vector: bytes  # float32, normalised


@dataclass(frozen=True)
class LoadedVectors:
    ids: np.ndarray  # int64
    source_ids: np.ndarray  # int64
    matrix: np.ndarray  # float32, one normalised row per id
    mismatched: int = 0  # rows left out because their dimension differs from the rest


def left_out(signature: str) -> str:
    """The signature of the rows that say the embedder of `signature` failed on an item."""
    return f"{signature}!left-out"


_STALE = """
    SELECT i.id, d.source_id, i.title, i.section, i.content FROM items i
    JOIN documents d ON d.id = i.document_id
    LEFT JOIN vectors v ON v.item_id = i.id AND v.signature IN (?, ?)
    WHERE v.item_id IS NULL AND i.id > ?
    ORDER BY i.id LIMIT ?
"""


async def stale_page(db: Database, signature: str, after_id: int, limit: int) -> list[StaleItem]:
    async with db.reader() as conn:
        rows = await conn.execute_fetchall(_STALE, (signature, left_out(signature), after_id, limit))
    return [StaleItem(*row) for row in rows]


async def count_stale(db: Database, signature: str) -> int:
    async with db.reader() as conn:
        [(total,)] = await conn.execute_fetchall("SELECT count(*) FROM items", ())
        [(fresh,)] = await conn.execute_fetchall(
            "SELECT count(*) FROM vectors WHERE signature IN (?, ?)", (signature, left_out(signature))
        )
    return total - fresh


async def count_left_out(db: Database, signature: str) -> int:
    """Items the embedder of `signature` failed on, left to keyword search."""
    async with db.reader() as conn:
        [(count,)] = await conn.execute_fetchall("SELECT count(*) FROM vectors WHERE signature = ?", (left_out(signature),))
    return count


async def leave_out(db: Database, signature: str, ids: list[int]) -> int:
    """Record that the embedder of `signature` failed on these items; returns how many were
    recorded. An item deleted meanwhile, or given a vector of `signature` meanwhile (a
    capsule embedded as it was written), is left as it is."""
    if not ids:
        return 0
    async with db.transaction() as conn:
        cursor = await conn.execute(
            "INSERT OR REPLACE INTO vectors (item_id, signature, dim, vector)"
            f" SELECT id, ?, 0, x'' FROM items WHERE id IN ({', '.join('?' * len(ids))})"
            " AND NOT EXISTS (SELECT 1 FROM vectors v WHERE v.item_id = items.id AND v.signature = ?)",
            [left_out(signature), *ids, signature],
        )
        return cursor.rowcount


async def write_vectors(db: Database, signature: str, ids: list[int], matrix: np.ndarray) -> int:
    """Store vectors for the items that still exist; returns how many were written.

    An item can be deleted while its text is being embedded; the existence check runs
    under the write lock, so no deletion can slip in between it and the insert.
    """
    dim = int(matrix.shape[1])
    async with db.transaction() as conn:
        placeholders = ", ".join("?" * len(ids))
        existing = {row[0] for row in await conn.execute_fetchall(f"SELECT id FROM items WHERE id IN ({placeholders})", ids)}
        rows = [
            (item_id, signature, dim, matrix[index].astype(np.float32).tobytes())
            for index, item_id in enumerate(ids)
            if item_id in existing
        ]
        await conn.executemany(
            "INSERT OR REPLACE INTO vectors (item_id, signature, dim, vector) VALUES (?, ?, ?, ?)", rows
        )
    return len(rows)


async def load_rows(db: Database, signature: str, item_ids: list[int]) -> list[VectorRow]:
    """These items' vectors of this signature, with each item's owning source."""
    found: list[VectorRow] = []
    async with db.reader() as conn:
        for start in range(0, len(item_ids), SQL_BATCH):
            part = item_ids[start : start + SQL_BATCH]
            rows = await conn.execute_fetchall(
                "SELECT v.item_id, d.source_id, v.dim, v.vector FROM vectors v JOIN items i ON i.id = v.item_id"
                f" JOIN documents d ON d.id = i.document_id WHERE v.signature = ? AND v.item_id IN"
                f" ({', '.join('?' * len(part))})",
                [signature, *part],
            )
            found.extend(VectorRow(*row) for row in rows)
    return found


async def stored_vectors(db: Database, signature: str, dim: int, item_ids: list[int]) -> dict[int, bytes]:
    """These items' float32 vectors of this signature and dimension (those that have one),
    for exact rescoring: read by key alone, without the joins that find each one's source."""
    found: dict[int, bytes] = {}
    async with db.reader() as conn:
        for start in range(0, len(item_ids), SQL_BATCH):
            part = item_ids[start : start + SQL_BATCH]
            rows = await conn.execute_fetchall(
                "SELECT item_id, vector FROM vectors WHERE signature = ? AND dim = ?"
                f" AND item_id IN ({', '.join('?' * len(part))})",
                [signature, dim, *part],
            )
            found.update(rows)
    return found


async def delete_vectors(db: Database, signature: str) -> int:
    """Forget every vector of this signature (a re-embed makes them again), and which items
    it failed on (a re-embed asks for them again); returns how many vectors went."""
    async with db.transaction() as conn:
        await conn.execute("DELETE FROM vectors WHERE signature = ?", (left_out(signature),))
        cursor = await conn.execute("DELETE FROM vectors WHERE signature = ?", (signature,))
        return cursor.rowcount


async def drop_other_dimensions(db: Database, signature: str, dim: int) -> int:
    """Forget this signature's vectors that are not `dim` long; returns how many items lost one.

    They were made by another model behind the same name (an Ollama model pulled anew),
    so no query of the current one can be scored against them: dropped, their items are
    stale and embedded again. Capsules' vectors of that length go too, which memory
    dedup would otherwise try to compare with the current model's. What the old model
    failed on is asked of the new one."""
    async with db.transaction() as conn:
        await conn.execute("DELETE FROM vectors WHERE signature = ?", (left_out(signature),))
        cursor = await conn.execute("DELETE FROM vectors WHERE signature = ? AND dim != ?", (signature, dim))
        await conn.execute(
            "UPDATE capsules SET vector = NULL, signature = NULL WHERE signature = ? AND length(vector) != ?",
            (signature, 4 * dim),
        )
        return cursor.rowcount


async def load_vectors(db: Database, signature: str) -> LoadedVectors:
    """Every current vector with its item's source, for the in-memory index.

    Should vectors of two dimensions share a signature (a server swapped the model
    behind a name), the most common dimension wins and the rest are counted, never
    padded or scored. Rows are read a page at a time into arrays sized up front: read
    whole, 100,000 vectors left 140 MB of freed row objects in the heap.
    """
    async with db.reader() as conn:
        dims = await conn.execute_fetchall(
            "SELECT dim, count(*) FROM vectors WHERE signature = ? GROUP BY dim ORDER BY 2 DESC", (signature,)
        )
        if not dims:
            empty = np.zeros(0, dtype=np.int64)
            return LoadedVectors(empty, empty.copy(), np.zeros((0, 0), dtype=np.float32))
        dim, count = dims[0]
        ids = np.zeros(count, dtype=np.int64)
        sources = np.zeros(count, dtype=np.int64)
        matrix = np.zeros((count, dim), dtype=np.float32)
        filled, after = 0, -1
        while filled < count:
            rows = await conn.execute_fetchall(
                "SELECT v.item_id, d.source_id, v.vector FROM vectors v JOIN items i ON i.id = v.item_id"
                " JOIN documents d ON d.id = i.document_id WHERE v.signature = ? AND v.dim = ? AND v.item_id > ?"
                " ORDER BY v.item_id LIMIT ?",
                (signature, dim, after, min(LOAD_PAGE, count - filled)),
            )
            if not rows:
                break  # rows of items deleted mid-way (a vector without its item is never read)
            await asyncio.to_thread(_fill, rows, dim, filled, ids, sources, matrix)
            filled += len(rows)
            after = rows[-1][0]
    return LoadedVectors(ids[:filled], sources[:filled], matrix[:filled], sum(n for _, n in dims[1:]))


def _fill(
    rows: list[tuple], dim: int, at: int, ids: np.ndarray, sources: np.ndarray, matrix: np.ndarray
) -> None:
    end = at + len(rows)
    ids[at:end] = [row[0] for row in rows]
    sources[at:end] = [row[1] for row in rows]
    matrix[at:end] = np.frombuffer(b"".join(row[2] for row in rows), dtype=np.float32).reshape(len(rows), dim)
