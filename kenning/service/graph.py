"""The graph side of the library: the configured extractor and its extraction job.

Changing `[llm]` swaps both; chunks the new extractor has not mined are re-extracted in
the background while the graph leg answers from what is there.
"""

from __future__ import annotations

import asyncio
import logging
import time

from kenning.api import GraphStatus, JobStatus
from kenning.config import LlmSettings
from kenning.service.jobs import job_status
from kenning.store import graph
from kenning.store.database import Database
from kenning.workers.extract import ExtractJob, make_extractor, page_size
from kenning.workers.job import JobState
from kenning.workers.offline_extract import Processes

log = logging.getLogger(__name__)

# The counts take a trip to a reader (4 ms at 100,000 chunks): a status poll reuses them
# for a moment, though never past the end of a pass (it would show chunks pending beside
# an idle job) nor past a wake (a write may have added chunks).
STATUS_CACHE_SECONDS = 5.0


class GraphSide:
    def __init__(
        self, db: Database, settings: LlmSettings, quiet: asyncio.Event, processes: Processes | None = None
    ) -> None:
        self.db = db
        self.settings = settings
        self.quiet = quiet
        self.processes = processes
        self.job: ExtractJob | None = None
        # When the counts were taken, the passes the job had ended then, and the counts.
        self._summary: tuple[float, int, dict[str, int | None]] | None = None

    async def start(self) -> None:
        if self.job is not None:
            return
        self._summary = None
        # In a thread: the first Ollama extractor imports ollama's client, 0.1 s of CPU
        # that would hold every request waiting on the loop.
        extractor = await asyncio.to_thread(make_extractor, self.settings, self.processes)
        self.job = ExtractJob(self.db, extractor, page_size(self.settings), self.quiet, self.processes)
        self.job.start()

    async def stop(self) -> None:
        job, self.job = self.job, None
        if job is not None:
            await job.stop()
            await job.extractor.close()

    async def reconfigure(self, settings: LlmSettings) -> None:
        if settings == self.settings:
            return
        log.info("extractor changed to %s; chunks are re-extracted in the background", settings.backend)
        await self.stop()
        self.settings = settings
        await self.start()

    def wake(self, more: int = 0) -> None:
        if self.job is not None:
            self.job.wake(more)
            self._summary = None

    async def status(self) -> GraphStatus:
        job = self.job
        signature = job.extractor.signature if job is not None else None
        now = time.monotonic()
        ended = job.passes_ended if job is not None else 0
        if self._summary is None or now - self._summary[0] > STATUS_CACHE_SECONDS or self._summary[1] != ended:
            counts = await graph.summary(self.db, signature)
            self._summary = (now, ended, counts)
        counts = self._summary[2]
        if job is None:
            report = JobStatus(state="stopped")
        else:
            report = job_status(job, running="extracting")
            report.pending = max(job.progress.total - job.progress.done, 0) if job.state != JobState.IDLE else 0
            report.failed_this_pass = job.failed
        return GraphStatus(
            backend=self.settings.backend,
            extractor=signature,
            model=self.settings.model if self.settings.backend == "ollama" else None,
            entities=counts["entities"] or 0,
            relations=counts["relations"] or 0,
            failed=counts["failed"] or 0,
            pending=counts["pending"],
            job=report,
        )
