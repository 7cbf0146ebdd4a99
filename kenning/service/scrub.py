"""Removed text out of the database file: the purge that follows a removal.

A capsule forgotten, a document removed, a source removed or a file deleted leaves its
words in the keyword indexes and its pages in the WAL until the whole index is merged
and the WAL truncated (store/maintenance.py `purge_removed`). That costs a rewrite of
the keyword index (0.6 s per 16 MB of index on two cores, bench/README.md), so removals
that come together share one purge: a caller waits for a purge that started after it
asked, and the purge runs as a task of its own, so a client that hangs up mid-way does
not leave the removed words behind.

A stop does not wait for a purge: on a large library one takes longer than a service
manager waits before it kills. The purge is marked owed in the database before it
starts and the mark cleared once it has run to its end, so a stop cuts it short
between two of its steps (each a short write, so nothing is half done) and the next
start runs it again (`Library.open`).
"""

from __future__ import annotations

import asyncio
import logging

from kenning.store.database import Database
from kenning.store.maintenance import owe_purge, purge_paid, purge_removed

log = logging.getLogger(__name__)


class Scrubber:
    def __init__(self, db: Database) -> None:
        self.db = db
        self._asked = 0
        self._done = 0
        self._running: asyncio.Task | None = None
        self._halted = False
        # Removals marked owed since this daemon started: a purge clears the mark only
        # when none was marked while it ran, since that one's rows may be behind it.
        self._owing = 0

    async def owe(self) -> None:
        """Mark a purge owed, before a removal: the mark is in the file before the rows
        go, so a crash at any point after leaves it, and the next start purges. (A
        removal that then finds nothing to remove costs the next start a purge with
        nothing to take out.)"""
        self._owing += 1
        await owe_purge(self.db)

    async def scrub(self) -> None:
        """After a removal that `owe` marked: return once a purge that started after this
        call has finished (or failed, which is logged: the removal itself stands, and the
        purge stays owed to the next start), or once the library is stopping: the removal
        stands then too, and it is done as far as the caller can tell, so it is told so,
        not given an error; the next start purges its words."""
        self._asked += 1
        asked = self._asked
        while self._done < asked:
            if self._halted:
                log.info("the daemon is stopping: a removal's words leave the database file at the next start")
                return
            if self._running is None:
                self._running = asyncio.create_task(self._run(), name="purge removed text")
            await asyncio.shield(self._running)

    async def _run(self) -> None:
        started = self._asked
        owing = self._owing
        ended = True
        try:
            ended = await purge_removed(self.db, lambda: self._halted)
            # A removal marked after this purge started may have removed rows it had
            # merged past already: its own purge clears the mark.
            if ended and self._owing == owing:
                await purge_paid(self.db)
        except Exception:
            log.exception("purging removed text from the index failed; the next removal or start tries again")
        finally:
            if ended:
                self._done = max(self._done, started)
            self._running = None

    def halt(self) -> None:
        """Cut a purge short at its next step, and start none: the library is stopping.
        Safe to call twice."""
        self._halted = True

    async def stop(self) -> None:
        """Halt, and wait for the step in flight: the database closes after it."""
        self.halt()
        if self._running is not None:
            await asyncio.gather(self._running, return_exceptions=True)
