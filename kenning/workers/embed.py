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

from kenning.errors import BackendUnavailable
from kenning.heap import release_free_memory
from kenning.store import vectors
from kenning.store.database import Database
from kenning.store.records import Embedder
from kenning.store.vectors import StaleItem
from kenning.workers.embedders import embedding_text
from kenning.workers.job import Job

log = logging.getLogger(__name__)

PAGE_SIZE = 512
# Embedded after a batch failed, to tell a server that cannot answer from one that cannot
# embed some text of the batch.
PROBE = "kenning"
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
            rows = await asyncio.to_thread(self._embed_all, texts)
            embedded, failed = self._sort_out(page, rows)
            written = await self._write(signature, embedded)
            await vectors.leave_out(self.db, signature, failed)
            # A page answered for says the backend is back; a pass with no page asked nothing.
            self.last_error = None
            # Items deleted while they were embedded count as done: nothing is left of them.
            progress.advance(len(page))
            await progress.recount(lambda: vectors.count_stale(self.db, signature))
            after = page[-1].id
            if written < len(embedded):
                log.debug("%d items went away while being embedded", len(embedded) - written)
        log.info("embedded %d items with %s", progress.done, signature)
        await asyncio.to_thread(release_free_memory)

    async def _write(self, signature: str, embedded: list[tuple[StaleItem, np.ndarray]]) -> int:
        if not embedded:
            return 0
        ids = [item.id for item, _ in embedded]
        return await vectors.write_vectors(self.db, signature, ids, np.stack([row for _, row in embedded]))

    def _embed_all(self, texts: list[str]) -> list[np.ndarray | BackendUnavailable]:
        size = self.embedder.batch_size
        return [row for start in range(0, len(texts), size) for row in self._embed_batch(texts[start : start + size])]

    def _embed_batch(self, texts: list[str]) -> list[np.ndarray | BackendUnavailable]:
        """The batch's rows; a text the model cannot embed gets the error instead.

        Ollama answers a request holding a text its model turns into NaN with a 500 for
        the whole request, as it answers when its runner died. Taken for an outage, that
        text held back every vector from its page on for good: the pass backed off and
        met it again. So a failed batch is followed by a probe; only when the probe is
        answered, the server being up, is each text of the batch asked alone."""
        try:
            return list(self.embedder.embed(texts))
        except BackendUnavailable:
            self.embedder.embed([PROBE])
        return [self._embed_one(text) for text in texts]

    def _embed_one(self, text: str) -> np.ndarray | BackendUnavailable:
        """The text's row, or the error it met twice, the server answering the probe
        after each: once may be the server's moment (busy, a runner that crashed and came
        back), and the text would be left out of this embedder's passes for good."""
        try:
            return self.embedder.embed([text])[0]
        except BackendUnavailable:
            # The server may have gone away since the probe: then no text is to blame.
            self.embedder.embed([PROBE])
        try:
            return self.embedder.embed([text])[0]
        except BackendUnavailable as exc:
            self.embedder.embed([PROBE])
            return exc

    def _sort_out(
        self, items: list[StaleItem], rows: list[np.ndarray | BackendUnavailable]
    ) -> tuple[list[tuple[StaleItem, np.ndarray]], list[int]]:
        """The items embedded, with their rows, and the ids of those the model failed on
        alone: these are left out of this embedder's passes, in the store, so status counts
        them across restarts (they stay keyword-searchable, and are tried again by
        `ken reembed` or by another model)."""
        embedded, failed = [], []
        for item, row in zip(items, rows, strict=True):
            if isinstance(row, BackendUnavailable):
                failed.append(item.id)
                log.warning("item %d (%s) cannot be embedded, left to keyword search: %s", item.id, item.title, row)
            else:
                embedded.append((item, row))
        return embedded, failed
