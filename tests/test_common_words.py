"""Which words name nothing in particular, counted on a real SQLite file: a word that
few of a library's chunks but many of its documents hold (a manual's long pages each
say "information" somewhere) ties no correction to the text it seems to mean."""

from __future__ import annotations

from kenning.config import RetrievalSettings
from kenning.retrieval.search import Retriever
from kenning.store import sources
from kenning.store.database import Database
from tests.helpers import store_document

MANUAL_PAGES = 12
PAGE_CHUNKS = 12


async def test_a_word_many_documents_hold_ties_no_correction_however_few_chunks_hold_it(db: Database):
    notes = (await sources.sync_sources(db, [("docs", "/docs", "default")]))["docs"]
    for page in range(MANUAL_PAGES):
        # A third of the pages say "information" once, in one chunk of twelve.
        chunks = [f"Manual page {page} part {n} covers fonts, colours and printers." for n in range(PAGE_CHUNKS)]
        if page % 3 == 0:
            chunks[0] = f"Manual page {page} has more information on fonts."
        await store_document(db, notes, f"manual-{page}.md", *chunks, title=f"Manual {page}", date="2024-05-01")
    old, _ = await store_document(
        db, notes, "symbols.md", "Debug symbols are kept in the build tree, information included.",
        title="Symbols", date="2025-01-10",
    )  # fmt: skip
    new, _ = await store_document(
        db, notes, "news.md", "Debug symbols no longer carry information.", title="News", date="2025-06-10"
    )
    result = await Retriever(db, RetrievalSettings()).search("Where are debug symbols kept?")
    hits = {hit.document_id: hit for hit in result.hits}
    assert {old, new} <= set(hits)
    # The only word besides the question's that the news line shares with the page is
    # one six of the fourteen documents hold: it names nothing the page says.
    assert hits[old].superseded_by is None
