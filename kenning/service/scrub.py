"""Removed text out of the database file: the purge that follows a removal.

A capsule forgotten, a document removed, a source removed or a file deleted leaves its
words in the keyword indexes and its pages in the WAL until the whole index is merged
and the WAL truncated (store/maintenance.py `purge_removed`). That costs a rewrite of
the keyword index (0.6 s per 16 MB of index on two cores, bench/README.md), so removals
that come together share one purge: a caller waits for a purge that started after it
asked, and the purge runs as a task of its own, so a client that hangs up mid-way does
not leave the removed words behind.
"""

from __future__ import annotations

import asyncio
import logging

from kenning.store.database import Database
from kenning.store.maintenance import purge_removed

log = logging.getLogger(__name__)


class Scrubber:
    def __init__(self, db: Database) -> None:
        self.db = db
        self._asked = 0
        self._done = 0
        self._running: asyncio.Task | None = None

    async def scrub(self) -> None:
        """Return once a purge that started after this call has finished (or failed,
        which is logged: the removal itself stands, and the next purge takes its words)."""
        self._asked += 1
        asked = self._asked
        while self._done < asked:
            if self._running is None:
                self._running = asyncio.create_task(self._run(), name="purge removed text")
            await asyncio.shield(self._running)

    async def _run(self) -> None:
        started = self._asked
        try:
            await purge_removed(self.db)
        except Exception:
            log.exception("purging removed text from the index failed; the next removal tries again")
        finally:
            self._done = max(self._done, started)
            self._running = None

    async def stop(self) -> None:
        """Let a purge in flight finish: each of its steps is a short write, and the
        database closes after it."""
        if self._running is not None:
            await asyncio.gather(self._running, return_exceptions=True)
