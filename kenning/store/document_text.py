"""A document's extracted text, rebuilt from its chunks: `documents.read` (`ken get`,
`ken show --context`), `documents.get` with a line range (the MCP `get` tool) and context
packs all read it here.

kenning stores no second copy of a document's text: its chunks are slices of the
extracted text (folded and redacted, text/unicode.py and ingest/redact.py, line for
line the original), each with the line range it covers, so the lines a citation
names can be put back together from the chunks that cover them. What cannot come back
exactly: a line no chunk covers (blank or white space between chunks) comes back empty,
and a line longer than a chunk, which the chunker cut into pieces, loses its indentation
and trailing white space, and white space at a cut comes back as one space (`_join`). Archives keep their exact text besides
(`archive.recall`).
"""

from __future__ import annotations

import asyncio
import hashlib
import itertools
from dataclasses import dataclass

from kenning.api import DocumentInfo
from kenning.store.database import Database
from kenning.store.lookup import display_path


@dataclass(frozen=True)
class Chunk:
    line_start: int
    line_end: int
    content: str


async def describe(db: Database, document_id: int) -> DocumentInfo:
    [(title, source, namespace, root, path, uri, fmt)] = await db.read(
        "SELECT d.title, s.name, coalesce(d.namespace, s.namespace), s.root, d.path, d.uri, d.format"
        " FROM documents d JOIN sources s ON s.id = d.source_id WHERE d.id = ?",
        (document_id,),
    )
    return DocumentInfo(document_id, title, source, namespace, display_path(root, path, uri), fmt)


async def read_lines(db: Database, document_id: int, first: int, last: int) -> list[str]:
    """Lines first..last (1-based, inclusive) of the document's text."""
    rows = await db.read(
        "SELECT line_start, line_end, content FROM items WHERE document_id = ? AND line_end >= ? AND line_start <= ?"
        " ORDER BY line_start, ord",
        (document_id, first, last),
    )
    # A whole large document is megabytes of text to split and join: not on the event loop.
    return await asyncio.to_thread(assemble, [Chunk(*row) for row in rows], first, last)


async def line_reach(db: Database, document_id: int, first: int, last: int, chars: int) -> int:
    """The last line from `first` (at most `last`) that a read of about `chars` characters
    needs: where the chunks covering `first` onwards first add up to `chars`. A page of a
    long range reads only that far, not to the end of the document: the MCP resource
    reads a 10 MB archive a page at a time, and each page rebuilt every line after it,
    48 s for the whole. Overlapping chunks count twice, so the line may fall short of
    `chars`, never past it by more than one chunk; it is never before `first`."""
    rows = await db.read(
        "SELECT line_end FROM (SELECT line_end, sum(length(content)) OVER (ORDER BY ord) AS running"
        " FROM items WHERE document_id = ? AND line_end >= ? AND line_start <= ?) WHERE running >= ? LIMIT 1",
        (document_id, first, last, chars),
    )
    return max(first, min(rows[0][0], last)) if rows else last


async def version(db: Database, document_id: int) -> str:
    """What a document's pages are cut from: its chunks, each by id (which changes with
    its text) and line range (which moves when lines are added above it, blank ones
    too), in order. A reader paging through a document compares it from page to page:
    the next offset or line of a page means another text once the document has changed
    (a watched file saved again, agent text replaced), and the pages joined would be a
    text that never existed."""
    rows = await db.read(
        "SELECT id, line_start, line_end FROM items WHERE document_id = ? ORDER BY ord", (document_id,)
    )
    return await asyncio.to_thread(_digest, rows)


def _digest(rows: list[tuple]) -> str:
    digest = hashlib.sha256()
    for row in rows:
        digest.update(b"%d:%d:%d;" % row)
    return digest.hexdigest()[:16]


async def last_line(db: Database, document_id: int) -> int:
    [(value,)] = await db.read("SELECT coalesce(max(line_end), 0) FROM items WHERE document_id = ?", (document_id,))
    return value


async def whole_text(db: Database, document_id: int) -> str:
    """The document's text, as a context pack inlines it and as agent text is prepared
    again under a newer reading (ingest/text_docs.py)."""
    last = await last_line(db, document_id)
    return "\n".join(await read_lines(db, document_id, 1, last))


def assemble(chunks: list[Chunk], first: int, last: int) -> list[str]:
    """Lines first..last from the chunks that cover them, given in line order, then `ord`.

    A chunk is a run of whole lines, except a line longer than the chunk target: the
    chunker cuts it into one-line chunks, its pieces in order. Overlapping chunks hold the
    same text for the lines they share, so the first that covers a line gives it.
    """
    lines: list[str | None] = [None] * (last - first + 1)
    pieces: dict[int, list[str]] = {}
    for chunk in chunks:
        parts = chunk.content.split("\n")
        if chunk.line_start == chunk.line_end and len(parts) == 1:
            # A short line alone in a chunk, or one piece of a line cut up.
            pieces.setdefault(chunk.line_start, []).append(chunk.content)
            continue
        for number, text in enumerate(parts[: chunk.line_end - chunk.line_start + 1], start=chunk.line_start):
            if first <= number <= last and lines[number - first] is None:
                lines[number - first] = text
    for number, cut in pieces.items():
        if first <= number <= last and lines[number - first] is None:
            lines[number - first] = _join(cut)
    return [line if line is not None else "" for line in lines]


def _join(pieces: list[str]) -> str:
    """A line the chunker cut (ingest/chunker.py `_split_line`), put back together.

    It cut at the last space in the second half of its target, dropping the spaces there,
    or, with no space there, right at the target. So a piece with no space in its second
    half was cut the second way and joins the next piece directly; any other joins it
    with one space. This misjudges a cut only between two words each longer than about a
    quarter of the target.
    """
    joined = [pieces[0]]
    for before, piece in itertools.pairwise(pieces):
        joined.append("" if " " not in before[len(before) // 2 :] else " ")
        joined.append(piece)
    return "".join(joined)
