"""The sources table: one row per configured folder, kept in step with config.toml."""

from __future__ import annotations

import time
from dataclasses import dataclass

from kenning.store.database import Database


@dataclass(frozen=True)
class SourceRow:
    id: int
    name: str
    kind: str
    root: str
    namespace: str
    active: bool
    last_sweep_at: float | None
    last_sweep_error: str | None


_COLUMNS = "id, name, kind, root, namespace, active, last_sweep_at, last_sweep_error"


def _row(values: tuple) -> SourceRow:
    return SourceRow(*values[:5], bool(values[5]), *values[6:])


async def sync_sources(db: Database, configured: list[tuple[str, str, str]]) -> dict[str, int]:
    """Upsert (name, root, namespace) for every configured source; mark the rest inactive.

    A source dropped from the config keeps its rows: removing a line from a file must not
    destroy an index the user may want back. Inactive sources are left out of search.
    """
    now = time.time()
    ids: dict[str, int] = {}
    async with db.transaction() as conn:
        await conn.execute("UPDATE sources SET active = 0")
        for name, root, namespace in configured:
            cursor = await conn.execute(
                "INSERT INTO sources (name, root, namespace, active, created_at) VALUES (?, ?, ?, 1, ?)"
                " ON CONFLICT (name) DO UPDATE SET root = excluded.root, namespace = excluded.namespace,"
                " active = 1 RETURNING id",
                (name, root, namespace, now),
            )
            ids[name] = (await cursor.fetchone())[0]
    return ids


async def record_sweep(db: Database, source_id: int, error: str | None) -> None:
    async with db.transaction() as conn:
        await conn.execute(
            "UPDATE sources SET last_sweep_at = ?, last_sweep_error = ? WHERE id = ?",
            (time.time(), error, source_id),
        )


async def list_sources(db: Database) -> list[SourceRow]:
    async with db.reader() as conn:
        cursor = await conn.execute(f"SELECT {_COLUMNS} FROM sources ORDER BY name")
        return [_row(values) for values in await cursor.fetchall()]
