"""Chunks as the store takes them, with what is read off each in the worker thread that
chunked them: the date its dated lines give it, and its CJK pieces for the CJK index."""

from __future__ import annotations

from kenning.ingest.chunker import Chunk
from kenning.store.records import NewItem
from kenning.text import cjk, dates


def new_items(title: str, chunks: list[Chunk], heading: str | None = None) -> list[NewItem]:
    """`heading` is the document's first heading when its date is stated elsewhere
    (`dates.title_heading`), whose own date dates no chunk."""
    return [
        NewItem(
            title,
            chunk.section,
            chunk.text,
            chunk.line_start,
            chunk.line_end,
            date=dates.chunk_date(chunk.text, chunk.section, heading),
            cjk=cjk.index_text(title, chunk.section, chunk.text),
        )
        for chunk in chunks
    ]
