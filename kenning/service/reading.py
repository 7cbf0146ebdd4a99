"""Reading a document back: by item, id, uri or path; a page of its chunks; a range of its lines.

Its lines are rebuilt from its chunks by store/document_text.py, as `documents.read` does.
"""

from __future__ import annotations

from typing import TypeVar

from msgspec.structs import replace

from kenning.api import DocumentInfo, Fetched, ItemView, LineRange, Location
from kenning.errors import InvalidRequest, NotFound
from kenning.ingest.redact import redact
from kenning.ingest.text_docs import stored_keys
from kenning.service.handles import check_version
from kenning.store import document_text, lookup
from kenning.store import sources as source_store
from kenning.store.database import Database
from kenning.text.counts import counted

Cited = TypeVar("Cited", DocumentInfo, ItemView)

# A range of lines is answered up to this many characters; `next_line` continues it.
MAX_LINE_CHARS = 200_000
# Reads of a page of a document that keeps changing before one is of a single version.
READ_TRIES = 3


async def resolve(
    db: Database,
    document_id: int | None = None,
    uri: str | None = None,
    path: str | None = None,
    source: str | None = None,
) -> tuple[int, lookup.AtPath | None]:
    """The document holding the text that an id, a uri or a path names, and the location
    a path names, or with an id or a uri the one `source` holds."""
    assert source is None or path is None, "a path names its own location"
    if document_id is not None:
        found = await lookup.holding_document(db, document_id)
        if found is None:
            raise NotFound(f"no document {document_id}")
        at = None if source is None else await held_by(db, found, source, f"document {document_id}")
        return found, at
    if path is not None:
        at = await lookup.document_at(db, path)
        if at is not None:
            if not at.has_text:
                why = f": {at.reason}" if at.reason else ""
                raise NotFound(f"{path} is not indexed ({at.status}{why})")
            return at.document_id, at
        # Hits show a uri where a file would show its path, so a path no folder holds may be one.
        uri = path
    assert uri is not None
    found = await lookup.find_keyed(db, stored_keys(uri))
    if found is None:
        named = await lookup.find_document(db, uri)
        if named is not None:
            refuse_alike(named, uri)
        found = named.id if named is not None and named.has_text else None
    if found is None:
        raise NotFound(f"no indexed document at {redact(uri)}")
    return found, None if source is None else await held_by(db, found, source, redact(uri))


def refuse_alike(found: lookup.FoundDocument, uri: str) -> None:
    """Two documents added under uris that differ only in a credential are stored under
    one redacted uri, which their hits show: asked for by it, the first one's text was
    the answer for the other's hit as well."""
    if found.alike:
        ids = ", ".join(map(str, found.alike))
        raise InvalidRequest(
            f"{len(found.alike)} documents are stored under {redact(uri)} (their uris differ only in a credential,"
            f" which was redacted): ask by the document_id a hit names ({ids}), or by the uri as it was added"
        )


async def held_by(db: Database, document_id: int, source: str, named: str) -> lookup.AtPath:
    """The location a source holds of a stored document (`named` so in errors), to cite
    that source's file: a file two folders hold is stored once, and a search scoped to
    the second cites the second's file under the item id of the one stored copy."""
    at = await lookup.location_in(db, document_id, source)
    if at is not None:
        return at
    if source not in {row.name for row in await source_store.list_sources(db)}:
        raise NotFound(f"unknown source {source!r}; see `ken sources list`")
    async with db.reader() as conn:
        places = await lookup.locations(conn, document_id)
    holders = ", ".join(dict.fromkeys(place.source for place in places))
    raise NotFound(f"source {source!r} holds no copy of {named}; it is held by {holders}")


def first_at(places: list[Location], at: lookup.AtPath | None) -> list[Location]:
    """The places holding a document, the one asked for first (a source holds one)."""
    return places if at is None else sorted(places, key=lambda place: place.source != at.source)


def cited_at(cited: Cited, at: lookup.AtPath | None) -> Cited:
    """A document or chunk asked for by a path (or a source's copy), cited at that file: a
    file two folders hold is stored once, under the folder that had it first, but the user
    named the other."""
    if at is None:
        return cited
    return replace(cited, source=at.source, namespace=at.namespace, path=at.path)


async def fetch(
    db: Database,
    item_id: int | None = None,
    document_id: int | None = None,
    uri: str | None = None,
    path: str | None = None,
    offset: int | None = None,
    limit: int | None = None,
    line_start: int | None = None,
    line_end: int | None = None,
    source: str | None = None,
    version: str | None = None,
) -> Fetched:
    """`version`, from an earlier page: refused if the document has changed since, so
    the pages an agent joins are all of one text."""
    lines_wanted = line_start is not None or line_end is not None
    if item_id is not None:
        item = await lookup.get_item(db, item_id)
        if item is None:
            raise NotFound(f"no item {item_id}")
        at = None if source is None else await held_by(db, item.document_id, source, f"item {item_id}")
        if not lines_wanted:
            if at is not None:
                item = replace(cited_at(item, at), locations=first_at(item.locations, at))
            return Fetched(item=item)
        holder = item.document_id
    else:
        holder, at = await resolve(db, document_id, uri, path, source)
    check_version(version)
    for _ in range(READ_TRIES):
        current = await document_text.version(db, holder)
        if version is not None and version != current:
            raise InvalidRequest(
                f"document {holder} changed since version {version} (it is version {current} now): pages of the"
                " two are not one text; read it again from the start"
            )
        page = await _page(db, holder, at, offset, limit, line_start, line_end, lines_wanted)
        # The page takes several queries, and a save between them (a watched file, agent
        # text replaced) gave the new text under the old version.
        if await document_text.version(db, holder) == current:
            return replace(page, version=current)
    raise InvalidRequest(f"document {holder} changed {READ_TRIES} times while a page of it was read; ask again")


async def _page(
    db: Database,
    holder: int,
    at: lookup.AtPath | None,
    offset: int | None,
    limit: int | None,
    line_start: int | None,
    line_end: int | None,
    lines_wanted: bool,
) -> Fetched:
    [first], total = await _first_item(db, holder)
    async with db.reader() as conn:
        places = await lookup.locations(conn, holder, at.row if at else None)
    info = DocumentInfo(first.document_id, first.title, first.source, first.namespace, first.path, first.format, places)
    info = cited_at(info, at)
    if lines_wanted:
        lines = await _lines(db, holder, line_start or 1, line_end)
        return Fetched(document=info, total_chunks=total, lines=lines)
    start = offset or 0
    if start >= total:
        raise InvalidRequest(
            f"offset {start} is past the end: document {holder} has {counted(total, 'chunk')} (ord 0-{total - 1})"
        )
    items, _ = await lookup.document_page(db, holder, start, limit)
    items = [cited_at(item, at) for item in items]
    end = start + len(items)
    return Fetched(document=info, items=items, total_chunks=total, next_offset=end if end < total else None)


async def _first_item(db: Database, document_id: int) -> tuple[list, int]:
    items, total = await lookup.document_page(db, document_id, 0, 1)
    if not items:
        raise NotFound(f"document {document_id} holds no chunks")
    return items, total


async def _lines(db: Database, document_id: int, first: int, last: int | None) -> LineRange:
    total = await document_text.last_line(db, document_id)
    if first < 1 or first > total:
        raise InvalidRequest(f"line {first} is out of range: document {document_id} has lines 1-{total}")
    if last is not None and last < first:
        raise InvalidRequest(f"line_end {last} is before line_start {first}")
    stop = min(last or total, total)
    reach = await document_text.line_reach(db, document_id, first, stop, MAX_LINE_CHARS)
    lines = await document_text.read_lines(db, document_id, first, reach)
    taken, size = [], 0
    for line in lines:
        size += len(line) + 1
        if taken and size > MAX_LINE_CHARS:
            break
        taken.append(line)
    end = first + len(taken) - 1
    return LineRange(first, end, "\n".join(taken), total, end + 1 if end < stop else None)
