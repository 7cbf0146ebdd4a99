"""The background embedding job: gives every item a vector from the current embedder.

Single-flight: one task per daemon, woken when new items land or the embedder changes.
It walks stale items in id order, a page at a time, and commits each page, so a crash
or a shutdown loses at most the page in flight and the next start carries on. When the
backend is unavailable (Ollama down) it waits with backoff and tries again; ingest never
waits on it, and keyword search covers the items it has not reached.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from kenning.memory import release_free_memory
from kenning.retrieval.vector_index import VectorIndex
from kenning.store import vectors
from kenning.store.database import Database
from kenning.workers.embedders import Embedder, EmbedderUnavailable, embedding_text

log = logging.getLogger(__name__)

PAGE_SIZE = 512
INGEST_POLL_SECONDS = 0.5
LARGE_REEMBED = 1000
BACKOFF_START, BACKOFF_MAX = 2.0, 60.0


@dataclass
class EmbedProgress:
    state: str = "starting"  # starting | idle | embedding | deferred (ingest runs) | waiting (backend down)
    total: int = 0
    done: int = 0
    started_at: float | None = None
    last_error: str | None = None

    def rate(self) -> float | None:
        if not self.started_at or not self.done:
            return None
        return self.done / max(time.monotonic() - self.started_at, 1e-6)

    def as_dict(self) -> dict:
        rate = self.rate()
        remaining = max(self.total - self.done, 0)
        return {
            "state": self.state,
            "done": self.done,
            "total": self.total,
            "rate_per_second": round(rate, 1) if rate else None,
            "eta_seconds": round(remaining / rate) if rate and self.state == "embedding" else None,
            "last_error": self.last_error,
        }


class EmbedWorker:
    def __init__(
        self,
        db: Database,
        embedder: Embedder,
        index: VectorIndex,
        max_chars: int,
        ingest_running: Callable[[], bool] = lambda: False,
    ) -> None:
        self.db = db
        self.embedder = embedder
        self.index = index
        self.max_chars = max_chars
        self.ingest_running = ingest_running
        self.progress = EmbedProgress()
        self._wake = asyncio.Event()

    def wake(self) -> None:
        self._wake.set()

    async def run(self, stop: asyncio.Event) -> None:
        self._wake.set()
        backoff = BACKOFF_START
        while not stop.is_set():
            await _first(self._wake.wait(), stop.wait())
            if stop.is_set():
                return
            self._wake.clear()
            try:
                embedded = await self._pass()
                backoff = BACKOFF_START
                self.progress.state = "idle"
                if embedded:
                    # Only a real round trip says the backend is back; an empty pass
                    # asked it nothing.
                    self.progress.last_error = None
            except EmbedderUnavailable as exc:
                if self.progress.last_error != str(exc):
                    log.warning("embedding paused: %s; retrying with backoff", exc)
                self.progress.state = "waiting"
                self.progress.last_error = str(exc)
                await _first(asyncio.sleep(backoff), stop.wait())
                backoff = min(backoff * 2, BACKOFF_MAX)
                self._wake.set()

    async def _pass(self) -> int:
        """Embed every stale item; returns how many were embedded."""
        signature = self.embedder.signature
        total = await vectors.count_stale(self.db, signature)
        if not total:
            return 0
        progress = self.progress
        progress.total, progress.done, progress.started_at = total, 0, time.monotonic()
        progress.state = "embedding"
        if total > LARGE_REEMBED:
            log.warning(
                "embedding %d items with %s in the background; keyword search covers them until then",
                total,
                signature,
            )
        after = 0
        while True:
            # Ingest goes first: on a small machine the two would share the cores, and
            # keyword search covers new chunks the moment they are stored anyway.
            while self.ingest_running():
                progress.state = "deferred"
                await asyncio.sleep(INGEST_POLL_SECONDS)
            progress.state = "embedding"
            page = await vectors.stale_page(self.db, signature, after, PAGE_SIZE)
            if not page:
                break
            texts = [embedding_text(item.title, item.section, item.content, self.max_chars) for item in page]
            matrix = await asyncio.to_thread(self._embed_all, texts)
            ids = [item.id for item in page]
            written = await vectors.write_vectors(self.db, signature, ids, matrix)
            kept = set(written)
            rows = [index for index, item_id in enumerate(ids) if item_id in kept]
            self.index.add(written, [page[row].source_id for row in rows], matrix[rows])
            progress.done += len(written)
            progress.total = max(progress.total, progress.done)
            after = page[-1].id
        log.info("embedded %d items with %s", progress.done, signature)
        await asyncio.to_thread(self.index.shrink)
        await asyncio.to_thread(release_free_memory)
        return progress.done

    def _embed_all(self, texts: list[str]) -> np.ndarray:
        size = self.embedder.batch_size
        parts = [self.embedder.embed(texts[start : start + size]) for start in range(0, len(texts), size)]
        return np.concatenate(parts)


async def _first(*awaitables) -> None:
    """Wait until the first finishes; cancel the rest."""
    tasks = [asyncio.ensure_future(item) for item in awaitables]
    try:
        await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in tasks:
            task.cancel()
