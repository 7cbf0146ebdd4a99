"""Search entry point: runs the retrieval legs and returns ranked, cited hits.

Only the keyword leg exists so far; the graph and vector legs join it here with
reciprocal rank fusion, and `legs` on each hit names which of them found it.
"""

from __future__ import annotations

from kenning.retrieval.hits import Hit
from kenning.retrieval.keyword import keyword_search
from kenning.store.database import Database


async def search(
    db: Database, query: str, limit: int = 10, source: str | None = None, namespace: str | None = None
) -> list[Hit]:
    return await keyword_search(db, query, limit, source=source, namespace=namespace)
