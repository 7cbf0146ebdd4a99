"""The sources table: one row per configured folder, plus the two aggregate sources.

Folders are kept in step with config.toml. The aggregates hold documents that arrive
without a folder: `agent` (text handed over by an agent), `web` (fetched pages), and
the agent records `memory` (capsules), `archive` (archived outputs) and `ledger`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from kenning.errors import KenningError
from kenning.store.database import Database
from kenning.store.documents import delete_row


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
    removing: bool = False
    # Why the last sweep kept indexed files it did not find: "unmounted" or "unknown"
    # (see `record_sweep`).
    last_sweep_kept: str | None = None


_COLUMNS = "id, name, kind, root, namespace, active, last_sweep_at, last_sweep_error, removing, last_sweep_kept"
# Aggregate sources by kind: (name, root shown for their documents).
AGGREGATES = {
    "agent": ("agent", "agent://"),
    "url": ("web", ""),
    "capsule": ("memory", ""),
    "archive": ("archive", ""),
    "ledger": ("ledger", ""),
}
# What a search's `kind` filter names, and the source kind that holds such documents.
SOURCE_KIND_OF = {
    "file": "folder",
    "page": "url",
    "agent": "agent",
    "capsule": "capsule",
    "archive": "archive",
    "ledger": "ledger",
}
REMOVE_BATCH = 200
# `root_identity` of a source the config pointed at another folder, until a sweep has
# looked at every file there. Its documents were read in the old folder, whose files may
# have the same names, sizes and mtimes (a copy made with `cp -p`, two sources' paths
# swapped in one edit): the (device, inode) a sweep records says so only when one had
# finished before the edit and only when both folders are on one device.
REPOINTED = "repointed"


def _row(values: tuple) -> SourceRow:
    return SourceRow(*values[:5], bool(values[5]), *values[6:8], bool(values[8]), values[9])


async def sync_sources(db: Database, configured: list[tuple[str, str, str]]) -> dict[str, int]:
    """Upsert (name, root, namespace) for every configured source; mark the rest inactive.

    A source dropped from the config keeps its rows: removing a line from a file must not
    destroy an index the user may want back. Inactive sources are left out of search.
    """
    now = time.time()
    ids: dict[str, int] = {}
    async with db.transaction() as conn:
        await conn.execute("UPDATE sources SET active = 0 WHERE kind = 'folder'")
        for name, root, namespace in configured:
            cursor = await conn.execute(
                # A new source has no mount to wait for until a sweep records one: unknown
                # (NULL) is an upgraded library's, and would hold a first sweep cut short
                # (a reload, a stop) with files left mid-read, none of them as indexed.
                "INSERT INTO sources (name, root, namespace, active, created_at, root_mount) VALUES (?, ?, ?, 1, ?, '')"
                " ON CONFLICT (name) DO UPDATE SET root = excluded.root, namespace = excluded.namespace,"
                " active = 1,"
                # The mount was that of the old folder: a source pointed at an empty one
                # is not a drive that went away (ingest/scan.py), so it has none to wait for.
                " root_mount = CASE WHEN root = excluded.root THEN root_mount ELSE '' END,"
                # Nor is the folder a sweep last looked at whole the one it names now.
                " root_identity = CASE WHEN root = excluded.root THEN root_identity ELSE ? END"
                " WHERE removing = 0 RETURNING id",
                (name, root, namespace, now, REPOINTED),
            )
            row = await cursor.fetchone()
            if row is not None:  # None: an older source of that name is still being removed
                ids[name] = row[0]
    return ids


async def record_sweep(
    db: Database,
    source_id: int,
    root: str,
    error: str | None,
    root_mount: str | None = None,
    kept: str | None = None,
    root_identity: tuple[int, int] | None = None,
) -> None:
    """`root_mount`: the mount point the root was on (the root itself when it is one),
    when the sweep found it holding anything (None leaves what an earlier sweep
    recorded). `kept`: why the sweep kept indexed files it did not find, "unmounted" (the
    mount the root was on is gone: the drive is away) or "unknown" (whether it was on one
    is not known); `status` shows it without reading `error`. `root_identity`: the
    (device, inode) of the folder the root named, when the sweep looked at every file it
    listed (None leaves what an earlier sweep recorded).

    Both are of `root`, the folder swept: a reload may point the source elsewhere while
    a sweep of the old folder ends (service/folders.py `apply` stops it after), and the
    old folder's, recorded for the new one, undid `REPOINTED`."""
    identity = None if root_identity is None else f"{root_identity[0]}:{root_identity[1]}"
    async with db.transaction() as conn:
        await conn.execute(
            "UPDATE sources SET last_sweep_at = ?, last_sweep_error = ?,"
            " root_mount = CASE WHEN root = ? THEN coalesce(?, root_mount) ELSE root_mount END,"
            " last_sweep_kept = ?,"
            " root_identity = CASE WHEN root = ? THEN coalesce(?, root_identity) ELSE root_identity END"
            " WHERE id = ?",
            (time.time(), error, root, root_mount, kept, root, identity, source_id),
        )


async def root_identity(db: Database, source_id: int) -> tuple[int, int] | str | None:
    """The (device, inode) of the folder the root named when a sweep last looked at every
    file it listed; `REPOINTED` when the config named another folder since; None when no
    sweep has since the library was upgraded (migrations.py m019), or ever. Kept as text:
    an inode number may not fit SQLite's signed integers."""
    rows = await db.read("SELECT root_identity FROM sources WHERE id = ?", (source_id,))
    if not rows or rows[0][0] is None:
        return None
    if rows[0][0] == REPOINTED:
        return REPOINTED
    device, inode = rows[0][0].split(":")
    return int(device), int(inode)


async def root_mount(db: Database, source_id: int) -> str | None:
    """The mount point the root was on the last time a sweep found it holding anything;
    '' when there is none to wait for (no sweep has recorded one since the source was
    added, or pointed at another folder), None when no sweep has recorded it since the
    library was upgraded (migrations.py m015, m018)."""
    rows = await db.read("SELECT root_mount FROM sources WHERE id = ?", (source_id,))
    return rows[0][0] if rows else None


async def list_sources(db: Database) -> list[SourceRow]:
    return [_row(values) for values in await db.read(f"SELECT {_COLUMNS} FROM sources ORDER BY name")]


async def aggregate_source(db: Database, kind: str) -> int:
    """The id of the agent or web source, created on first use."""
    name, root = AGGREGATES[kind]
    [(source_id, found)] = await db.write_one(
        "INSERT INTO sources (name, kind, root, active, created_at) VALUES (?, ?, ?, 1, ?)"
        " ON CONFLICT (name) DO UPDATE SET active = active OR kind = excluded.kind RETURNING id, kind",
        (name, kind, root, time.time()),
    )
    if found != kind:
        # A folder indexed under this name before the name was reserved: its documents
        # must not be taken for records.
        raise KenningError(
            f"a {found} source named {name!r} is in the index; `ken sources remove {name}` frees the name"
        )
    return source_id


async def remove_source(db: Database, source_id: int) -> int:
    """Delete a source and what only it holds; returns how many of its documents went.

    The source is flagged `removing` first, in its own commit: from then on it is out of
    search and no gate picks its documents as a holder, and a daemon killed midway
    finishes the job at its next start (`resume_removals`). Its documents then go in
    batches, each in one transaction, each handing what another source still holds to
    that source, so no crash point loses a shared document or leaves two copies.
    """
    await db.write_one("UPDATE sources SET removing = 1, active = 0 WHERE id = ?", (source_id,))
    removed = 0
    while True:
        async with db.transaction() as conn:
            rows = await conn.execute_fetchall(
                # Locations first: a row merged into another of this source's rows
                # must not be chosen as the heir of a row that is about to go too.
                "SELECT id FROM documents WHERE source_id = ? ORDER BY merged_into IS NULL, id LIMIT ?",
                (source_id, REMOVE_BATCH),
            )
            for (document_id,) in rows:
                await delete_row(conn, document_id)
            if not rows:
                await conn.execute("DELETE FROM sources WHERE id = ?", (source_id,))
        if not rows:
            return removed
        removed += len(rows)


async def resume_removals(db: Database) -> list[str]:
    """Finish removals a stop interrupted; returns the names of the sources removed."""
    async with db.reader() as conn:
        rows = await conn.execute_fetchall("SELECT id, name FROM sources WHERE removing = 1")
    for source_id, _ in rows:
        await remove_source(db, source_id)
    return [name for _, name in rows]


async def namespaces(db: Database) -> set[str]:
    """Every namespace a search can be scoped to: the sources' and the documents' own."""
    rows = await db.read(
        "SELECT namespace FROM sources WHERE removing = 0"
        " UNION SELECT namespace FROM documents WHERE namespace IS NOT NULL"
    )
    return {namespace for (namespace,) in rows}
