"""Reading a document back a page at a time while it is replaced (service/reading.py), on
a real store: a page is one version's text, and names that version."""

from __future__ import annotations

import pytest

from kenning.config import ChunkingSettings
from kenning.errors import InvalidRequest
from kenning.ingest.text_docs import TextDocument, add_text
from kenning.service.reading import fetch
from kenning.store import document_text
from kenning.store.database import Database

TEXTS = {mark: "\n".join(f"{mark} line {n} of the tide table" for n in range(400)) for mark in "AB"}


async def test_a_page_read_while_its_document_is_replaced_names_the_version_it_is_of(db: Database, monkeypatch):
    """The version was taken before the page was read, in another query: a document
    replaced in between gave the new text under the old version, so the next page of an
    agent (or the MCP resource) paging with that version was taken as the same text, and
    the pages joined were a text that never existed."""
    chunking = ChunkingSettings()
    await add_text(db, TextDocument("Tides", TEXTS["A"], "test://tides"), chunking)
    first = await fetch(db, uri="test://tides", line_start=1)
    assert first.lines.text.startswith("A line 0") and first.version
    with pytest.raises(InvalidRequest, match="'zz' is no page's version"):
        await fetch(db, uri="test://tides", line_start=1, version="zz")

    read_lines = document_text.read_lines
    replaced: list[str] = []

    async def replaced_first(*args, **kwargs):
        # A save lands between the version and the page: the race, made to happen once.
        if not replaced:
            replaced.append("B")
            await add_text(db, TextDocument("Tides", TEXTS["B"], "test://tides"), chunking)
        return await read_lines(*args, **kwargs)

    monkeypatch.setattr(document_text, "read_lines", replaced_first)
    with pytest.raises(InvalidRequest, match="changed since version"):
        await fetch(db, uri="test://tides", line_start=1, version=first.version)

    replaced.clear()
    await add_text(db, TextDocument("Tides", TEXTS["A"], "test://tides"), chunking)
    page = await fetch(db, uri="test://tides", line_start=1)
    assert page.lines.text.startswith("B line 0")
    assert page.version == await document_text.version(db, page.document.document_id) != first.version
