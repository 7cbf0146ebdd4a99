"""The embedding side of the daemon: embedder, vector index and embed job, as one unit.

Changing the embedder swaps all three together. Between the swap and the new index
being loaded the vector leg is off, so a query is never scored against vectors from
another model; keyword search answers meanwhile.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass, field

from kenning.config import EmbedderSettings
from kenning.retrieval.search import Retriever
from kenning.retrieval.vector_index import VectorIndex
from kenning.store import vectors
from kenning.store.database import Database
from kenning.workers.embed import EmbedWorker
from kenning.workers.embedders import EmbedderUnavailable, make_embedder, signature_for

log = logging.getLogger(__name__)


@dataclass
class Semantic:
    db: Database
    retriever: Retriever
    settings: EmbedderSettings
    ingest_running: Callable[[], bool] = lambda: False
    worker: EmbedWorker | None = None
    check_error: str | None = None
    _stop: asyncio.Event = field(default_factory=asyncio.Event)
    _task: asyncio.Task | None = None

    def __post_init__(self) -> None:
        self.db.on_items_removed(self._forget)
        self.db.on_items_moved(self._reassign)

    async def start(self) -> None:
        """Bring up embedder, index and job in the background; returns at once."""
        self._stop = asyncio.Event()
        self._task = asyncio.create_task(self._run(self.settings), name="embedding")
        self._task.add_done_callback(_log_failure)

    async def stop(self) -> None:
        self._stop.set()
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None
        self.worker = None
        self.retriever.index = None
        if self.retriever.embedder is not None:
            self.retriever.embedder.close()
            self.retriever.embedder = None

    async def reconfigure(self, settings: EmbedderSettings) -> None:
        if settings == self.settings:
            return
        log.info("embedder changed to %s %s; re-embedding in the background", settings.backend, settings.model_name)
        await self.stop()
        self.settings = settings
        await self.start()

    async def reembed(self) -> int:
        """Drop the current embedder's vectors so every item is embedded again."""
        signature = signature_for(self.settings)
        async with self.db.transaction() as conn:
            cursor = await conn.execute("DELETE FROM vectors WHERE signature = ?", (signature,))
            dropped = cursor.rowcount
        await self.stop()
        await self.start()
        return dropped

    def wake(self) -> None:
        if self.worker is not None:
            self.worker.wake()

    def status(self) -> dict:
        index = self.retriever.index
        report = {
            "backend": self.settings.backend,
            "model": self.settings.model_name,
            "signature": signature_for(self.settings),
            "vectors": len(index) if index is not None else None,
            "dimension": index.dim if index is not None else None,
        }
        if self.worker is not None:
            report["job"] = self.worker.progress.as_dict()
        else:
            report["job"] = {"state": "loading", "last_error": self.check_error}
        return report

    async def _run(self, settings: EmbedderSettings) -> None:
        embedder = make_embedder(settings)
        try:
            await asyncio.to_thread(embedder.check)
            self.check_error = None
        except EmbedderUnavailable as exc:
            # Not fatal: ingest and keyword search go on, and the job retries.
            self.check_error = str(exc)
            log.warning("embedder not ready: %s", exc)
        loaded = await vectors.load_vectors(self.db, embedder.signature)
        # Building the id map of a large index takes a while: not on the event loop.
        index = await asyncio.to_thread(VectorIndex, embedder.signature, loaded)
        if loaded.mismatched:
            log.warning("%d vectors have another dimension and are ignored; `ken reembed` rebuilds them", loaded.mismatched)
        self.retriever.embedder = embedder
        self.retriever.index = index
        self.worker = EmbedWorker(self.db, embedder, index, settings.max_chars, self.ingest_running)
        self.worker.progress.last_error = self.check_error
        log.info("vector index ready: %d vectors for %s", len(index), embedder.signature)
        await self.worker.run(self._stop)

    def _forget(self, item_ids: list[int]) -> None:
        if self.retriever.index is not None:
            self.retriever.index.remove(item_ids)

    def _reassign(self, source_id: int, item_ids: list[int]) -> None:
        if self.retriever.index is not None:
            self.retriever.index.reassign(source_id, item_ids)


def _log_failure(task: asyncio.Task) -> None:
    if not task.cancelled() and task.exception() is not None:
        log.error("embedding stopped after an error; vector search is off", exc_info=task.exception())
