"""Chunks as the store takes them, with what is read off each in the worker thread that
chunked them: the date its dated lines give it, and its CJK pieces for the CJK index."""

from __future__ import annotations

from kenning.ingest.chunker import Chunk
from kenning.store.records import NewItem
from kenning.text import cjk, dates


def new_items(title: str, chunks: list[Chunk], heading: str | None = None) -> list[NewItem]:
    """`heading` is the document's first heading when its date is stated elsewhere
    (`dates.title_heading`), whose own date dates no chunk."""
    found = [dates.chunk_date(chunk.text, chunk.section, heading) for chunk in chunks]
    # A Debian changelog signs each entry below its changes: a chunk of a long entry's
    # changes holding no signed line speaks from the next one, not from the file's time
    # (the newest entry's), which put 1996's changes above 2014's.
    following = None
    for index in reversed(range(len(chunks))):
        if found[index] is None:
            found[index] = following
        following = dates.signed_date(chunks[index].text) or following
    return [
        NewItem(
            title,
            chunk.section,
            chunk.text,
            chunk.line_start,
            chunk.line_end,
            date=day,
            cjk=cjk.index_text(title, chunk.section, chunk.text),
        )
        for chunk, day in zip(chunks, found)
    ]
