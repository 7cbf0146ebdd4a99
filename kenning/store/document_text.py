"""A document's extracted text, rebuilt from its chunks, for reading around a hit.

kenning stores no second copy of a document's text: its chunks are slices of the
(redacted) extracted text, each with the line range it covers, so the lines a citation
names can be put back together from the chunks that cover them. A line no chunk covers
(a blank line between sections) comes back empty.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from kenning.api import DocumentInfo
from kenning.store.database import Database
from kenning.store.lookup import display_path


@dataclass(frozen=True)
class FoundDocument:
    id: int  # the stored copy's id: a location merged into another document names its owner
    status: str
    reason: str | None


@dataclass(frozen=True)
class Chunk:
    line_start: int
    line_end: int
    content: str


async def find_by_path(db: Database, path: str) -> FoundDocument | None:
    """The document at an absolute file path, in whichever folder source holds it."""
    candidates = {os.path.abspath(path), os.path.realpath(path)}
    rows = await db.read("SELECT id, root FROM sources WHERE kind = 'folder' AND removing = 0")
    for source_id, root in rows:
        for candidate in candidates:
            for base in {root, os.path.realpath(root)}:
                if candidate.startswith(base.rstrip("/") + "/"):
                    rel = os.path.relpath(candidate, base).replace(os.sep, "/")
                    found = await _find(db, "source_id = ? AND path = ?", (source_id, rel))
                    if found is not None:
                        return found
    return None


async def find_by_uri(db: Database, uri: str) -> FoundDocument | None:
    """An agent document or fetched page by its uri (as stored, i.e. redacted)."""
    return await _find(db, "uri = ?", (uri,))


async def find_by_id(db: Database, document_id: int) -> FoundDocument | None:
    return await _find(db, "id = ?", (document_id,))


async def _find(db: Database, where: str, params: tuple) -> FoundDocument | None:
    rows = await db.read(
        f"SELECT coalesce(merged_into, id), status, reason FROM documents WHERE {where} ORDER BY id LIMIT 1", params
    )
    if not rows:
        return None
    document_id, status, reason = rows[0]
    if status == "merged":
        [(status, reason)] = await db.read("SELECT status, reason FROM documents WHERE id = ?", (document_id,))
    return FoundDocument(document_id, status, reason)


async def describe(db: Database, document_id: int) -> DocumentInfo:
    [(title, source, namespace, root, path, uri, fmt)] = await db.read(
        "SELECT d.title, s.name, coalesce(d.namespace, s.namespace), s.root, d.path, d.uri, d.format"
        " FROM documents d JOIN sources s ON s.id = d.source_id WHERE d.id = ?",
        (document_id,),
    )
    return DocumentInfo(document_id, title, source, namespace, display_path(root, path, uri), fmt)


async def chunks_between(db: Database, document_id: int, first: int, last: int) -> list[Chunk]:
    """The document's chunks that overlap lines first..last, in line order."""
    rows = await db.read(
        "SELECT line_start, line_end, content FROM items WHERE document_id = ? AND line_end >= ? AND line_start <= ?"
        " ORDER BY line_start, ord",
        (document_id, first, last),
    )
    return [Chunk(*row) for row in rows]


async def last_line(db: Database, document_id: int) -> int:
    [(value,)] = await db.read("SELECT coalesce(max(line_end), 0) FROM items WHERE document_id = ?", (document_id,))
    return value


def assemble(chunks: list[Chunk], first: int, last: int) -> list[str]:
    """Lines first..last from the chunks that cover them; a line no chunk covers is empty."""
    lines = [""] * (last - first + 1)
    seen = [False] * len(lines)
    for chunk in chunks:
        for offset, text in enumerate(chunk.content.split("\n")):
            number = chunk.line_start + offset
            if number > chunk.line_end:
                break
            if first <= number <= last and not seen[number - first]:
                lines[number - first] = text
                seen[number - first] = True
    return lines
