"""The background extraction job: mines every chunk for entities and relations.

Pages in id order, each page's results committed in one transaction, yielding to a
sweep that is ingesting (the lifecycle is workers/job.py). A chunk whose
extraction fails keeps its indexed text and any graph it had; the failure is recorded
and retried later with backoff; one that has no graph yet gets the offline extractor's
meanwhile (a model that keeps answering malformed JSON must not leave chunks out of the
graph leg). When the configured LLM cannot serve at all (Ollama down, model not pulled)
the job backs off as a whole, and chunks that have no graph yet get one from the offline
extractor meanwhile, so the graph leg works in any case; they stay queued for the LLM,
which replaces that graph when it is back.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Protocol

from kenning.config import LlmSettings
from kenning.errors import BackendUnavailable
from kenning.heap import release_free_memory
from kenning.store import graph
from kenning.store.database import Database
from kenning.store.records import Extraction, ExtractionFailed
from kenning.text.redacted import MARKS
from kenning.workers.job import Job
from kenning.workers.offline_extract import OfflineExtractor, Processes

log = logging.getLogger(__name__)

OFFLINE_PAGE = 256
# Chunks per page per LLM worker: enough to keep the pool busy between commits.
LLM_PAGE_PER_WORKER = 4
RETRY_POLL_SECONDS = 60.0


class Extractor(Protocol):
    """`signature` names the extractor and its recipe; a change re-queues every chunk."""

    signature: str

    async def extract(self, texts: list[str]) -> list[Extraction | ExtractionFailed]: ...

    async def close(self) -> None: ...


def make_extractor(settings: LlmSettings, processes: Processes | None = None) -> Extractor:
    if settings.backend == "ollama":
        # Imported only when configured: ollama's client costs every daemon start
        # 0.05-0.1 s of CPU, and the default extractor is the offline one.
        from kenning.workers.llm_extract import OllamaExtractor

        return OllamaExtractor(settings)
    return OfflineExtractor(processes)


def page_size(settings: LlmSettings) -> int:
    return OFFLINE_PAGE if settings.backend == "offline" else settings.extraction_pool_size * LLM_PAGE_PER_WORKER


def chunk_text(item: graph.PendingItem) -> str:
    """The chunk under a heading naming its document and section.

    A chunk's subject is often named only in its document's title: as a heading, it is
    what the offline extractor links the chunk's other entities to.
    """
    parts = [part for part in (item.title, item.section) if part]
    if len(parts) == 2 and parts[0] == parts[1]:
        parts.pop()
    # Where redaction hid a secret there is nothing to name (kenning/text/redacted.py).
    content = MARKS.sub(" ", item.content)
    return f"# {' / '.join(parts)}\n\n{content}" if parts else content


class ExtractJob(Job):
    """Mines chunks with one extractor; `failed` counts this pass's chunk failures."""

    name = "extraction"
    # Failed chunks come due again on their own schedule; nothing else wakes the job for them.
    poll_seconds = RETRY_POLL_SECONDS

    def __init__(
        self,
        db: Database,
        extractor: Extractor,
        page_size: int,
        quiet: asyncio.Event | None = None,
        processes: Processes | None = None,
    ) -> None:
        super().__init__(quiet)
        self.db = db
        self.extractor = extractor
        self.page_size = page_size
        self.failed = 0
        self._offline = OfflineExtractor(processes)

    async def run_pass(self) -> None:
        extractor = self.extractor
        signature = extractor.signature
        total = await graph.count_pending(self.db, signature)
        if not total:
            return
        progress = self.progress
        progress.begin(total)
        self.failed = 0
        after = 0
        while True:
            await self.pace()
            page = await graph.pending_page(self.db, signature, after, self.page_size)
            if not page:
                break
            results = await extractor.extract([chunk_text(item) for item in page])
            unavailable = [r for r in results if isinstance(r, ExtractionFailed) and r.details.get("unavailable")]
            if unavailable and len(unavailable) == len(results):
                await self._cover_offline()
                raise BackendUnavailable(unavailable[0].reason)
            failed_items = [item for item, r in zip(page, results) if isinstance(r, ExtractionFailed)]
            await graph.write_results(
                self.db, signature, [(item.id, r) for item, r in zip(page, results)],
                await self._stand_ins(failed_items, signature),
            )  # fmt: skip
            failures = [r for r in results if isinstance(r, ExtractionFailed)]
            self.failed += len(failures)
            if failures:
                self.last_error = failures[-1].reason
            elif results:
                self.last_error = None
            progress.advance(len(page))
            await progress.recount(lambda: graph.count_pending(self.db, signature))
            after = page[-1].id
        log.info("extracted %d chunks with %s (%d failed)", progress.done, signature, self.failed)
        await asyncio.to_thread(release_free_memory)

    async def _stand_ins(self, items: list[graph.PendingItem], signature: str) -> dict[int, Extraction]:
        """The offline extractor's entities for chunks the LLM failed on (write_results
        gives them only to chunks with no graph)."""
        if not items or signature == self._offline.signature:
            return {}
        results = await self._offline.extract([chunk_text(item) for item in items])
        return {item.id: r for item, r in zip(items, results) if isinstance(r, Extraction)}

    async def _cover_offline(self) -> None:
        """Give every chunk that has no graph at all one from the offline extractor."""
        after = 0
        while page := await graph.unmined_page(self.db, after, OFFLINE_PAGE):
            results = await self._offline.extract([chunk_text(item) for item in page])
            await graph.write_results(self.db, self._offline.signature, list(zip([i.id for i in page], results)))
            after = page[-1].id


