"""Index upkeep that runs when a sweep has changed things: FTS segment merging.

The FTS table merges segments lazily (automerge 16) so that bulk ingest stays fast;
afterwards the segments are merged in small steps, each its own short write
transaction, so searches and new writes are never held up for long.
"""

from __future__ import annotations

import logging

from kenning.store.database import Database

log = logging.getLogger(__name__)

MERGE_PAGES_PER_STEP = 500
MAX_STEPS = 2000


async def merge_fts_segments(db: Database) -> int:
    """Merge until FTS5 reports no more work; returns the number of steps taken."""
    for step in range(1, MAX_STEPS + 1):
        before = db.total_changes()
        await db.write_one("INSERT INTO items_fts (items_fts, rank) VALUES ('merge', ?)", (MERGE_PAGES_PER_STEP,))
        # FTS5's documented signal: a merge step that changed fewer than two rows had
        # nothing left to do.
        if db.total_changes() - before < 2:
            log.debug("fts merge finished after %d steps", step)
            return step
    return MAX_STEPS
