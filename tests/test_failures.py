"""`ken status` lists a source's failed documents; on a real SQLite file."""

from __future__ import annotations

from kenning.store import documents, sources, tallies
from kenning.store.keys import page_key

URLS = ["https://c.example/wind", "https://a.example/tides", "https://b.example/moon"]


async def test_failed_pages_are_listed_in_the_order_of_the_urls_shown(db) -> None:
    """A page's path is a hash of its URL; listed by it, the first twenty of many failures
    would be a random twenty in a random order."""
    source_id = await sources.aggregate_source(db, "url")
    for url in URLS:
        document_id = await documents.mark_scanning(db, source_id, page_key(url), uri=url)
        await documents.mark_unindexed(db, document_id, "failed", f"no text in {url}", 0.0, 0, None)

    shown = (await tallies.tallies(db, failures_each=2)).failures[source_id]

    assert [failure.path for failure in shown] == ["https://a.example/tides", "https://b.example/moon"]
