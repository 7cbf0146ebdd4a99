"""The background extraction job: mines every chunk for entities and relations.

Shaped like the embed job: single-flight, pages in id order, each page's results
committed in one transaction, deferring to a sweep that is ingesting. A chunk whose
extraction fails keeps its indexed text and any graph it had; the failure is recorded
and retried later with backoff. When the configured LLM cannot serve at all (Ollama
down, model not pulled) the job backs off as a whole, and chunks that have no graph yet
get one from the offline extractor meanwhile, so the graph leg works in any case; they
stay queued for the LLM, which replaces that graph when it is back.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from kenning.config import LlmSettings
from kenning.memory import release_free_memory
from kenning.store import graph
from kenning.store.database import Database
from kenning.workers.extraction import ExtractionFailed, Extractor
from kenning.workers.llm_extract import OllamaExtractor
from kenning.workers.offline_extract import OfflineExtractor

log = logging.getLogger(__name__)

OFFLINE_PAGE = 256
INGEST_POLL_SECONDS = 0.5
BACKOFF_START, BACKOFF_MAX = 2.0, 60.0
# Failed chunks come due again on their own schedule; nothing else wakes the job for them.
RETRY_POLL_SECONDS = 60.0
STATUS_CACHE_SECONDS = 5.0


class BackendUnavailable(Exception):
    pass


def make_extractor(settings: LlmSettings) -> Extractor:
    if settings.backend == "ollama":
        return OllamaExtractor(settings)
    return OfflineExtractor()


def chunk_text(item: graph.PendingItem) -> str:
    """The chunk under a heading naming its document and section.

    A chunk's subject is often named only in its document's title: as a heading, it is
    what the offline extractor links the chunk's other entities to.
    """
    parts = [part for part in (item.title, item.section) if part]
    if len(parts) == 2 and parts[0] == parts[1]:
        parts.pop()
    return f"# {' / '.join(parts)}\n\n{item.content}" if parts else item.content


@dataclass
class ExtractProgress:
    state: str = "starting"  # starting | idle | extracting | deferred | waiting (backend down)
    total: int = 0
    done: int = 0
    failed: int = 0
    started_at: float | None = None
    last_error: str | None = None

    def as_dict(self) -> dict:
        elapsed = time.monotonic() - self.started_at if self.started_at else 0.0
        rate = self.done / elapsed if elapsed and self.done else None
        remaining = max(self.total - self.done, 0)
        return {
            "state": self.state,
            "done": self.done,
            "total": self.total,
            "pending": remaining if self.state != "idle" else 0,
            "failed_this_pass": self.failed,
            "rate_per_second": round(rate, 1) if rate else None,
            "eta_seconds": round(remaining / rate) if rate and self.state == "extracting" else None,
            "last_error": self.last_error,
        }


@dataclass
class GraphBuilder:
    db: Database
    settings: LlmSettings
    ingest_running: Callable[[], bool] = lambda: False
    progress: ExtractProgress = field(default_factory=ExtractProgress)
    extractor: Extractor | None = None
    _offline: OfflineExtractor = field(default_factory=OfflineExtractor)
    _wake: asyncio.Event = field(default_factory=asyncio.Event)
    _stop: asyncio.Event = field(default_factory=asyncio.Event)
    _task: asyncio.Task | None = None
    _summary: tuple[float, dict] | None = None

    async def start(self) -> None:
        self.extractor = make_extractor(self.settings)
        self._summary = None
        self.progress = ExtractProgress()
        self._stop = asyncio.Event()
        self._task = asyncio.create_task(self._run(), name="extraction")
        self._task.add_done_callback(_log_failure)

    async def stop(self) -> None:
        """Stop between pages: a page in flight is abandoned before it is written."""
        self._stop.set()
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None
        if self.extractor is not None:
            await self.extractor.close()
            self.extractor = None

    async def reconfigure(self, settings: LlmSettings) -> None:
        if settings == self.settings:
            return
        log.info("extractor changed to %s; chunks are re-extracted in the background", settings.backend)
        await self.stop()
        self.settings = settings
        await self.start()

    def wake(self) -> None:
        self._wake.set()

    async def status(self) -> dict:
        signature = self.extractor.signature if self.extractor else None
        report = {"backend": self.settings.backend, "extractor": signature, "job": self.progress.as_dict()}
        if self.settings.backend == "ollama":
            report["model"] = self.settings.model
        # Counting scans every chunk: a status poll reuses a count for a moment.
        now = time.monotonic()
        if self._summary is None or now - self._summary[0] > STATUS_CACHE_SECONDS:
            counts = await graph.summary(self.db)
            counts["pending"] = await graph.count_pending(self.db, signature) if signature else None
            self._summary = (now, counts)
        report.update(self._summary[1])
        return report

    async def _run(self) -> None:
        self._wake.set()
        backoff = BACKOFF_START
        while not self._stop.is_set():
            try:
                await asyncio.wait_for(self._wake.wait(), RETRY_POLL_SECONDS)
            except TimeoutError:
                pass
            self._wake.clear()
            try:
                await self._pass()
                backoff = BACKOFF_START
                self.progress.state = "idle"
            except BackendUnavailable as exc:
                if self.progress.last_error != str(exc):
                    log.warning("extraction paused: %s; the offline extractor covers new chunks meanwhile", exc)
                self.progress.state, self.progress.last_error = "waiting", str(exc)
                self._summary = None
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, BACKOFF_MAX)
                self._wake.set()

    async def _pass(self) -> None:
        extractor = self.extractor
        assert extractor is not None
        signature = extractor.signature
        total = await graph.count_pending(self.db, signature)
        if not total:
            return
        progress = self.progress
        progress.total, progress.done, progress.failed = total, 0, 0
        progress.started_at = time.monotonic()
        page_size = OFFLINE_PAGE if isinstance(extractor, OfflineExtractor) else self.settings.extraction_pool_size * 4
        after = 0
        while True:
            while self.ingest_running():
                progress.state = "deferred"
                await asyncio.sleep(INGEST_POLL_SECONDS)
            progress.state = "extracting"
            page = await graph.pending_page(self.db, signature, after, page_size)
            if not page:
                break
            results = await extractor.extract([chunk_text(item) for item in page])
            unavailable = [r for r in results if isinstance(r, ExtractionFailed) and r.details.get("unavailable")]
            if unavailable and len(unavailable) == len(results):
                await self._cover_offline()
                raise BackendUnavailable(unavailable[0].reason)
            await graph.write_results(self.db, signature, [(item.id, r) for item, r in zip(page, results)])
            failures = [r for r in results if isinstance(r, ExtractionFailed)]
            progress.failed += len(failures)
            if failures:
                progress.last_error = failures[-1].reason
            elif results:
                progress.last_error = None
            progress.done += len(page)
            self._summary = None
            progress.total = max(progress.total, progress.done)
            after = page[-1].id
        log.info("extracted %d chunks with %s (%d failed)", progress.done, signature, progress.failed)
        await asyncio.to_thread(release_free_memory)

    async def _cover_offline(self) -> None:
        """Give every chunk that has no graph at all one from the offline extractor."""
        after = 0
        while page := await graph.unmined_page(self.db, after, OFFLINE_PAGE):
            results = await self._offline.extract([chunk_text(item) for item in page])
            await graph.write_results(self.db, self._offline.signature, list(zip([i.id for i in page], results)))
            after = page[-1].id


def _log_failure(task: asyncio.Task) -> None:
    if not task.cancelled() and task.exception() is not None:
        log.error("extraction stopped after an error; the graph is not updated", exc_info=task.exception())
