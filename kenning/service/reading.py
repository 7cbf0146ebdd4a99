"""Reading a document back: by item, id, uri or path; a page of its chunks; a range of its lines.

A document's text is not stored apart from its chunks, and need not be: the chunker cuts
every chunk as a run of whole source lines and records which, so the lines come back
from the chunks. What does not: blank lines between chunks (they come back empty, as
they were blank or white space), and a line longer than a chunk, which the chunker cut
at spaces (its pieces come back joined by one space). Archives keep their exact text
besides (`archive.recall`).
"""

from __future__ import annotations

import asyncio

from kenning.api import DocumentInfo, Fetched, LineRange
from kenning.errors import InvalidRequest, NotFound
from kenning.store import lookup
from kenning.store.database import Database

# A range of lines is answered up to this many characters; `next_line` continues it.
MAX_LINE_CHARS = 200_000


def rebuild_lines(chunks: list[tuple[int, int, str]]) -> list[str]:
    """The document's lines (index 0 is line 1) from its chunks' (start, end, content)."""
    total = max((end for _, end, _ in chunks), default=0)
    lines: list[str | None] = [None] * total
    pieces: dict[int, list[str]] = {}
    for start, end, content in chunks:
        parts = content.split("\n")
        if start == end and len(parts) == 1 and (start in pieces or lines[start - 1] is None):
            # One line alone in a chunk: the whole line, or one piece of a line cut up.
            pieces.setdefault(start, []).append(content)
            continue
        for offset, text in enumerate(parts[: end - start + 1]):
            if lines[start - 1 + offset] is None:
                lines[start - 1 + offset] = text
    for number, parts in pieces.items():
        if lines[number - 1] is None:
            lines[number - 1] = " ".join(parts)
    return [line if line is not None else "" for line in lines]


async def document_text(db: Database, document_id: int) -> str:
    chunks = await lookup.document_lines(db, document_id)
    return "\n".join(await asyncio.to_thread(rebuild_lines, chunks))


async def resolve(
    db: Database, document_id: int | None = None, uri: str | None = None, path: str | None = None
) -> int:
    """The document holding the text that an id, a uri or a path names."""
    if document_id is not None:
        found = await lookup.holding_document(db, document_id)
        if found is None:
            raise NotFound(f"no document {document_id}")
        return found
    found = await lookup.find_document(db, uri=uri, path=path)
    if found is None:
        raise NotFound(f"no indexed document at {uri or path}")
    return found


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
) -> Fetched:
    lines_wanted = line_start is not None or line_end is not None
    if item_id is not None:
        item = await lookup.get_item(db, item_id)
        if item is None:
            raise NotFound(f"no item {item_id}")
        if not lines_wanted:
            return Fetched(item=item)
        document_id = item.document_id
    holder = await resolve(db, document_id, uri, path)
    [first], total = await _first_item(db, holder)
    info = DocumentInfo(first.document_id, first.title, first.source, first.namespace, first.path, first.format)
    if lines_wanted:
        return Fetched(document=info, total_chunks=total, lines=await _lines(db, holder, line_start or 1, line_end))
    start = offset or 0
    if start >= total:
        raise InvalidRequest(
            f"offset {start} is past the end: document {holder} has {total} chunks (ord 0-{total - 1})"
        )
    items, _ = await lookup.document_page(db, holder, start, limit)
    end = start + len(items)
    return Fetched(document=info, items=items, total_chunks=total, next_offset=end if end < total else None)


async def _first_item(db: Database, document_id: int) -> tuple[list, int]:
    items, total = await lookup.document_page(db, document_id, 0, 1)
    if not items:
        raise NotFound(f"document {document_id} holds no chunks")
    return items, total


async def _lines(db: Database, document_id: int, first: int, last: int | None) -> LineRange:
    lines = await asyncio.to_thread(rebuild_lines, await lookup.document_lines(db, document_id))
    if first < 1 or first > len(lines):
        raise InvalidRequest(f"line {first} is out of range: document {document_id} has lines 1-{len(lines)}")
    if last is not None and last < first:
        raise InvalidRequest(f"line_end {last} is before line_start {first}")
    stop = min(last or len(lines), len(lines))
    taken, size = [], 0
    for number in range(first, stop + 1):
        size += len(lines[number - 1]) + 1
        if taken and size > MAX_LINE_CHARS:
            break
        taken.append(lines[number - 1])
    end = first + len(taken) - 1
    return LineRange(first, end, "\n".join(taken), len(lines), end + 1 if end < stop else None)
