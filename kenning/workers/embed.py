"""The background embedding job: gives every item a vector from the current embedder.

It walks stale items in id order, a page at a time, and commits each page, so a crash
or a shutdown loses at most the page in flight and the next start carries on. It is
woken when items are added and yields to ingest between pages (see workers/job.py);
keyword search covers the items it has not reached. The vector index follows the
vectors it writes through the store's change events.
"""

from __future__ import annotations

import asyncio
import logging

import numpy as np

from kenning.heap import release_free_memory
from kenning.store import vectors
from kenning.store.database import Database
from kenning.store.records import Embedder
from kenning.workers.embedders import embedding_text
from kenning.workers.job import Job

log = logging.getLogger(__name__)

PAGE_SIZE = 512
LARGE_REEMBED = 1000


class EmbedJob(Job):
    name = "embedding"

    def __init__(
        self,
        db: Database,
        embedder: Embedder,
        max_chars: int,
        quiet: asyncio.Event | None = None,
        idle: asyncio.Event | None = None,
    ) -> None:
        super().__init__(quiet, idle=idle)
        self.db = db
        self.embedder = embedder
        self.max_chars = max_chars

    async def run_pass(self) -> None:
        signature = self.embedder.signature
        total = await vectors.count_stale(self.db, signature)
        if not total:
            return
        progress = self.progress
        progress.begin(total)
        if total > LARGE_REEMBED:
            log.warning(
                "embedding %d items with %s in the background; keyword search covers them until then", total, signature
            )
        after = 0
        while True:
            await self.pace()
            page = await vectors.stale_page(self.db, signature, after, PAGE_SIZE)
            if not page:
                break
            texts = [embedding_text(item.title, item.section, item.content, self.max_chars) for item in page]
            matrix = await asyncio.to_thread(self._embed_all, texts)
            written = await vectors.write_vectors(self.db, signature, [item.id for item in page], matrix)
            # Only a real round trip says the backend is back; an empty pass asked nothing.
            self.last_error = None
            # Items deleted while they were embedded count as done: nothing is left of them.
            progress.advance(len(page))
            await progress.recount(lambda: vectors.count_stale(self.db, signature))
            after = page[-1].id
            if written < len(page):
                log.debug("%d items went away while being embedded", len(page) - written)
        log.info("embedded %d items with %s", progress.done, signature)
        await asyncio.to_thread(release_free_memory)

    def _embed_all(self, texts: list[str]) -> np.ndarray:
        size = self.embedder.batch_size
        parts = [self.embedder.embed(texts[start : start + size]) for start in range(0, len(texts), size)]
        return np.concatenate(parts)
