"""Chunks as the store takes them, with what is read off each in the worker thread that
chunked them: the date its dated lines give it, and its CJK pieces for the CJK index."""

from __future__ import annotations

from kenning.ingest.chunker import Chunk
from kenning.store.records import NewItem
from kenning.text import cjk, dates


def new_items(title: str, chunks: list[Chunk], heading: str | None = None, text: str = "") -> list[NewItem]:
    """`heading` is the document's first heading when its date is stated elsewhere
    (`dates.title_heading`), whose own date dates no chunk. `text` is the document's,
    whose lines the chunks' line numbers count: a Debian changelog's chunk speaks from
    the line signing its entry, below its changes, not from the file's time (the
    newest entry's), which put 1996's changes beside 2023's."""
    spans: list[tuple[int, int]] = []
    reached = 0
    for chunk in chunks:
        # The lines it repeats of the chunk before are that chunk's.
        overlapping = chunk.line_start <= reached < chunk.line_end
        spans.append((reached + 1 if overlapping else chunk.line_start, chunk.line_end))
        reached = max(reached, chunk.line_end)
    signed = dates.changelog_dates(text, spans) or [None] * len(chunks)
    return [
        _item(title, chunk, (day, day) if day else dates.chunk_dates(chunk.text, chunk.section, heading))
        for chunk, day in zip(chunks, signed)
    ]


def _item(title: str, chunk: Chunk, dated: tuple[str, str] | None) -> NewItem:
    first, last = dated or (None, None)
    return NewItem(
        title,
        chunk.section,
        chunk.text,
        chunk.line_start,
        chunk.line_end,
        date=last,
        date_first=first,
        cjk=cjk.index_text(title, chunk.section, chunk.text),
    )
