"""Reads that answer `documents.get` and find what a path or uri names: one chunk, one file."""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass, replace

import aiosqlite

from kenning.api import ItemView, Location
from kenning.store.database import Database


_ITEM_SQL = """
    SELECT i.id, i.document_id, i.ord, i.title, i.section, i.content, i.line_start, i.line_end,
           s.name, coalesce(d.namespace, s.namespace), s.root, d.path, d.uri, d.format
    FROM items i JOIN documents d ON d.id = i.document_id JOIN sources s ON s.id = d.source_id
"""


def display_path(root: str, path: str, uri: str | None) -> str:
    """Files show as root/path; agent text and fetched pages by their uri."""
    return uri if uri else os.path.join(root, path)


def _item(row: tuple) -> ItemView:
    return ItemView(*row[:10], path=display_path(row[10], row[11], row[12]), format=row[13])


async def get_item(db: Database, item_id: int) -> ItemView | None:
    async with db.reader() as conn:
        cursor = await conn.execute(_ITEM_SQL + " WHERE i.id = ?", (item_id,))
        row = await cursor.fetchone()
        if row is None:
            return None
        item = _item(row)
        item.locations.extend(await locations(conn, item.document_id))
    return item


async def locations(conn: aiosqlite.Connection, document_id: int, asked: int | None = None) -> list[Location]:
    """Every source holding a document: the location asked for by path (`asked`, a
    documents row) first, then its owner, then the rows merged into it."""
    rows = await conn.execute_fetchall(
        "SELECT s.name, s.root, d.path, d.uri FROM documents d JOIN sources s ON s.id = d.source_id"
        " WHERE d.id = ? OR d.merged_into = ? ORDER BY d.id IS NOT ?, d.merged_into IS NOT NULL, s.name, d.path",
        (document_id, document_id, asked),
    )
    return [Location(name, display_path(root, path, uri)) for name, root, path, uri in rows]


async def document_page(db: Database, document_id: int, offset: int, limit: int | None) -> tuple[list[ItemView], int]:
    """A document's chunks from `ord` offset on (all of them when limit is None), and how many it has."""
    async with db.reader() as conn:
        [(total,)] = await conn.execute_fetchall("SELECT count(*) FROM items WHERE document_id = ?", (document_id,))
        rows = await conn.execute_fetchall(
            _ITEM_SQL + " WHERE i.document_id = ? AND i.ord >= ? ORDER BY i.ord LIMIT ?",
            (document_id, offset, -1 if limit is None else limit),
        )
    return [_item(row) for row in rows], total


async def text_sizes(db: Database, document_ids: list[int]) -> dict[int, int]:
    """Bytes of each document's chunks together: its text's size, give or take overlaps."""
    if not document_ids:
        return {}
    marks = ", ".join("?" * len(document_ids))
    rows = await db.read(
        f"SELECT document_id, sum(length(CAST(content AS BLOB))) FROM items WHERE document_id IN ({marks})"
        " GROUP BY document_id",
        document_ids,
    )
    return dict(rows)


async def holding_document(db: Database, document_id: int) -> int | None:
    """The document whose items hold this one's text: itself, or the copy it is a location of."""
    rows = await db.read("SELECT coalesce(merged_into, id) FROM documents WHERE id = ?", (document_id,))
    return rows[0][0] if rows else None


@dataclass(frozen=True)
class AtPath:
    """The document a file path (or a source holding it) names: the copy holding its text
    (`document_id`, with that copy's `status` and `reason`) and the location asked for
    (`row`, `source`, `namespace`, `path`), which a citation names even when another
    folder's copy holds the text: the text is the same, and the file is the one the user
    named."""

    document_id: int
    status: str
    reason: str | None
    row: int
    source: str
    namespace: str
    path: str
    # Holds indexed text: indexed, or being read again, or failed by kenning's own fault
    # after it was indexed (`documents.mark_broken`), which search still finds.
    has_text: bool


async def document_at(db: Database, path: str) -> AtPath | None:
    """The document at an absolute file path, in whichever folder source holds it.

    The path is tried as given and with its links resolved, under each root as configured
    and resolved, so a file reached through a symlinked folder is found; a folder source
    inside another is tried first, so the innermost holder is the one cited. A row holding
    text (its own, or another's copy) is preferred over a failed or skipped one, which is
    returned only to say why the file is not indexed. The sources the config names come
    before those dropped from it, whose rows are the file as it was when last configured:
    of a source renamed in the config, the old name's row of a file edited since held the
    text from before the edit, and was what `ken get` read.
    """
    roots = await db.read("SELECT id, root, active FROM sources WHERE kind = 'folder' AND removing = 0")
    # Resolving links reads the disk (a stalled mount would stall it): not on the event
    # loop, and not while holding one of the pool's readers.
    candidates = await asyncio.to_thread(_under_roots, path, roots)
    unindexed = None
    async with db.reader() as conn:
        for source_id, rel, active in candidates:
            if not active and unindexed is not None:
                break  # a configured source's row says why it is not indexed; a dropped one's text is older
            rows = await conn.execute_fetchall(_AT_SQL + " WHERE d.source_id = ? AND d.path = ?", (source_id, rel))
            if not rows:
                continue
            found = _at(rows[0])
            if found.has_text:
                return found
            unindexed = unindexed or found
    return unindexed


async def location_in(db: Database, document_id: int, source: str) -> AtPath | None:
    """Where a source (by name) holds a stored document (`document_id`, the holder): the
    holder's own row when that source owns it, else the copy merged into it. A source
    holds at most one (store/ownership.py: two files in one source stay two documents)."""
    rows = await db.read(
        _AT_SQL + " WHERE (d.id = ? OR d.merged_into = ?) AND s.name = ? ORDER BY d.id LIMIT 1",
        (document_id, document_id, source),
    )
    return _at(rows[0]) if rows else None


# A documents row `d` as a location, with the state of the row holding its text (`h`
# when `d` is another's copy).
_AT_SQL = """
    SELECT coalesce(d.merged_into, d.id), coalesce(h.status, d.status), coalesce(h.reason, d.reason),
           d.id, s.name, coalesce(d.namespace, s.namespace), s.root, d.path, d.uri,
           coalesce(h.chunk_count, d.chunk_count) > 0
    FROM documents d JOIN sources s ON s.id = d.source_id LEFT JOIN documents h ON h.id = d.merged_into
"""


def _at(row: tuple) -> AtPath:
    holder, status, reason, location, source, namespace, root, stored, uri, has_text = row
    return AtPath(holder, status, reason, location, source, namespace, display_path(root, stored, uri), bool(has_text))


def _under_roots(path: str, roots: list[tuple[int, str, int]]) -> list[tuple[int, str, bool]]:
    """(source id, relative path, whether the source is active) for each folder root the
    path lies under, those of active sources first, innermost first among them."""
    candidates = dict.fromkeys((os.path.abspath(path), os.path.realpath(path)))
    matches = sorted(
        (
            (not active, -len(base), source_id, os.path.relpath(candidate, base).replace(os.sep, "/"))
            for source_id, root, active in roots
            for base in dict.fromkeys((root, os.path.realpath(root)))
            for candidate in candidates
            if candidate.startswith(base.rstrip(os.sep) + os.sep)
        ),
        key=lambda match: match[:2],
    )
    return list(dict.fromkeys((source_id, rel, not inactive) for inactive, _, source_id, rel in matches))


@dataclass(frozen=True)
class FoundDocument:
    id: int  # the stored copy's id: a location merged into another document names its owner
    status: str  # the stored copy's
    reason: str | None
    has_text: bool  # as AtPath.has_text
    # Every stored copy holding text under the uri asked for, when there are several.
    alike: tuple[int, ...] = ()


# A row holding text is found whatever its state: one being read again, or one kenning
# failed on after indexing it, is what search cites it by.
_HAS_TEXT = "(status IN ('done', 'merged') OR chunk_count > 0)"


async def find_document(db: Database, uri: str) -> FoundDocument | None:
    """The document an exact uri (agent text, pages, records; as stored, so redacted)
    names, followed to the copy that holds its text. Of several rows under one uri (two
    uris that redact alike), one holding text comes first, an indexed one before one being
    read again; a row without text is still found, its status and reason saying why.
    `alike` names every one holding text when there are several: the uri alone cannot
    say which the caller means."""
    found = await _find(db, "uri = ?", (uri,))
    if found is not None:
        rows = await db.read(
            f"SELECT DISTINCT coalesce(merged_into, id) FROM documents WHERE uri = ? AND {_HAS_TEXT} ORDER BY 1",
            (uri,),
        )
        if len(rows) > 1:
            return replace(found, alike=tuple(row[0] for row in rows))
    return found


async def find_by_id(db: Database, document_id: int) -> FoundDocument | None:
    return await _find(db, "id = ?", (document_id,))


async def _find(db: Database, where: str, params: tuple) -> FoundDocument | None:
    rows = await db.read(
        f"SELECT coalesce(merged_into, id), status, reason, {_HAS_TEXT} FROM documents WHERE {where}"
        f" ORDER BY {_HAS_TEXT} DESC, status = 'done' DESC, id LIMIT 1",
        params,
    )
    if not rows:
        return None
    document_id, status, reason, has_text = rows[0]
    if status == "merged":
        [(status, reason)] = await db.read("SELECT status, reason FROM documents WHERE id = ?", (document_id,))
    return FoundDocument(document_id, status, reason, bool(has_text))


async def find_keyed(db: Database, keys: list[str]) -> int | None:
    """The document an agent's text or a fetched page is stored under by one of these
    identity keys (a hash of the raw uri it was added with or the URL asked for): the
    uri a hit shows is redacted, so an agent holding the raw one finds its document by
    that, and two uris that redact alike are still two documents."""
    async with db.reader() as conn:
        for key in keys:
            where = "path = ? AND source_id IN (SELECT id FROM sources WHERE kind != 'folder')"
            if (found := await _named(conn, where, (key,))) is not None:
                return found
    return None


async def _named(conn: aiosqlite.Connection, where: str, params: tuple) -> int | None:
    rows = await conn.execute_fetchall(
        f"SELECT coalesce(merged_into, id) FROM documents WHERE {where} AND {_HAS_TEXT}"
        " ORDER BY status = 'done' DESC, id LIMIT 1",
        params,
    )
    return rows[0][0] if rows else None


@dataclass(frozen=True)
class PageState:
    document_id: int
    title: str
    etag: str | None
    last_modified: str | None


async def page_state(db: Database, key: str) -> PageState | None:
    """What a conditional re-fetch of an added page needs to send."""
    async with db.reader() as conn:
        rows = await conn.execute_fetchall(
            "SELECT d.id, d.title, d.etag, d.last_modified FROM documents d JOIN sources s ON s.id = d.source_id"
            " WHERE s.kind = 'url' AND d.path = ?",
            (key,),
        )
    return PageState(*rows[0]) if rows else None
