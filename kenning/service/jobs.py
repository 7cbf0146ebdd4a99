"""The jobs the service runs on top of ingest: source sweeps and near-duplicate sweeps,
plus how any job reports itself and how ingest tells the other jobs to yield.

They use the one lifecycle in workers/job.py; ingest provides what a pass does (a
folder sweep, a near-duplicate sweep) and stays free of scheduling.
"""

from __future__ import annotations

import asyncio
import logging
import math
from collections.abc import Awaitable, Callable

from kenning.api import JobStatus
from kenning.config import DedupSettings
from kenning.errors import BackendUnavailable
from kenning.ingest.dedup import DedupRun, near_dup_sweep
from kenning.ingest.scan import FolderScanner
from kenning.store.database import Database
from kenning.store.vector_index import VectorIndex
from kenning.workers.job import Job, JobState

log = logging.getLogger(__name__)


def job_status(job: Job, running: str) -> JobStatus:
    """A job as `status` shows it; `running` names what it does while it runs, and
    `queued` is an idle job that has been woken and is about to run a pass."""
    if job.state == JobState.RUNNING:
        state = running
    elif job.state == JobState.IDLE and job.due:
        state = "queued"
    else:
        state = str(job.state)
    rate = job.progress.rate()
    eta = job.progress.eta()
    return JobStatus(
        state=state,
        done=job.progress.done,
        total=job.progress.total,
        rate_per_second=round(rate, 1) if rate else None,
        # Rounded up: "0s left" while anything is left is what issue 13 found false.
        eta_seconds=math.ceil(eta) if eta is not None and job.state == JobState.RUNNING else None,
        last_error=job.last_error,
    )


class IngestActivity:
    """Which sources are reading files in; `quiet` is set while none is.

    Embedding and extraction yield to ingest between pages: on a small machine they
    would share the cores, and keyword search covers new chunks the moment they are
    stored anyway.
    """

    def __init__(self) -> None:
        self.quiet = asyncio.Event()
        self.quiet.set()
        self._busy: set[str] = set()

    def report(self, source: str, busy: bool) -> None:
        if busy:
            self._busy.add(source)
            self.quiet.clear()
        else:
            self._busy.discard(source)
            if not self._busy:
                self.quiet.set()


class SweepJob(Job):
    """Sweeps of one folder source; `after` runs once each sweep's changes are stored."""

    def __init__(self, scanner: FolderScanner, after: Callable[[FolderScanner, dict[str, int]], Awaitable[None]]) -> None:
        super().__init__()
        self.name = f"sweep {scanner.settings.name}"
        self.scanner = scanner
        self._after = after

    async def run_pass(self) -> None:
        counts = await self.scanner.sweep()
        await self._after(self.scanner, counts)


class NearDupJob(Job):
    """Near-duplicate sweeps, one at a time: targeted ones for the documents each scan
    changed, run once embedding has nothing left to do (a document without vectors
    cannot be compared), and full ones on schedule or on request."""

    name = "near-duplicates"

    def __init__(
        self,
        db: Database,
        settings: DedupSettings,
        index: Callable[[], VectorIndex | None],
        embedding_idle: asyncio.Event,
        why_no_index: Callable[[], str],
    ) -> None:
        super().__init__()
        self.db = db
        self.settings = settings
        self._index = index
        self._embedding_idle = embedding_idle
        self._why_no_index = why_no_index
        self._pending: set[int] = set()
        self._lock = asyncio.Lock()
        self.last_run: DedupRun | None = None

    def note_changed(self, document_ids: set[int]) -> None:
        if document_ids:
            self._pending |= document_ids
            self.wake()

    async def run_pass(self) -> None:
        if not self._pending:
            return
        await self._embedding_idle.wait()
        only, self._pending = self._pending, set()
        run = await self.sweep(only)
        if run is None:
            self._pending |= only
            raise BackendUnavailable(f"no vector index to compare documents by: {self._why_no_index()}")
        if waiting := only & run.without_vectors:
            # Embedding went idle while these had no vectors yet (a backend outage):
            # they are looked at again after the next scan.
            self._pending |= waiting

    async def sweep(self, only: set[int] | None = None) -> DedupRun | None:
        """A full sweep (or one for `only`); None when there is no vector index yet."""
        index = self._index()
        if index is None:
            return None
        async with self._lock:
            run = await near_dup_sweep(self.db, index, self.settings, only)
        self.last_run = run
        return run
