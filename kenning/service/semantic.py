"""The embedding side of the library: embedder, vector index and embed job, as one unit.

Changing the embedder swaps all three together. Between the swap and the new index
being loaded the vector leg is off, so a query is never scored against vectors from
another model; keyword search answers meanwhile.

A model pulled anew under the same name with another embedding length keeps the
signature (the length is the server's to say), yet no query of it can be scored against
the vectors already stored. So the unit is brought up again as soon as the embedder
learns a length other than the index's, and bringing up drops the vectors of any other
length: their items are embedded again in the background, as after a change of model.

An embedder that cannot embed yet (its server down, its model missing, or any error its
backend did not foresee) still comes up: the job waits and retries with backoff, and a
search says why its vector leg is skipped. Bringing up that fails anyway (the index
cannot be read) is tried again with backoff too, or at once on `ken reembed` or a
reload; meanwhile status says why, and searches that the vector leg is off.
"""

from __future__ import annotations

import asyncio
import logging

from kenning.api import EmbedderStatus, JobStatus
from kenning.config import EmbedderSettings
from kenning.errors import EmbedderUnavailable, error_line
from kenning.retrieval.search import Vectors
from kenning.service.jobs import job_status
from kenning.store import vectors
from kenning.store.database import Database
from kenning.store.records import Embedder
from kenning.store.vector_index import VectorIndex
from kenning.workers.embed import EmbedJob
from kenning.workers.embedders import make_embedder, signature_for
from kenning.workers.job import BACKOFF_MAX, BACKOFF_START

log = logging.getLogger(__name__)


class Semantic:
    def __init__(self, db: Database, settings: EmbedderSettings, quiet: asyncio.Event) -> None:
        self.db = db
        self.settings = settings
        self.quiet = quiet
        self.job: EmbedJob | None = None
        self.vectors: Vectors | None = None
        self.check_error: str | None = None
        # Why the last try to bring the unit up failed, while it is tried again.
        self.start_error: str | None = None
        self._bring_up: asyncio.Task | None = None
        self._restart: asyncio.Task | None = None
        # Set whenever embedding has nothing it can do now; the near-duplicate sweep waits on it.
        self.idle = asyncio.Event()

    def start(self) -> None:
        """Bring up embedder, index and job in the background; returns at once."""
        if self._bring_up is not None and not self._bring_up.done():
            return
        self.idle.clear()
        self._bring_up = asyncio.create_task(self._start_until_up(self.settings), name="embedder start")
        self._bring_up.add_done_callback(_log_failure)

    async def stop(self) -> None:
        for task in (self._bring_up, self._restart):
            if task is not None and task is not asyncio.current_task():
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)
        self._bring_up = None
        self.start_error = None
        if self.job is not None:
            await self.job.stop()
            self.job = None
        current, self.vectors = self.vectors, None
        if current is not None:
            await current.index.close()
            await asyncio.to_thread(current.embedder.close)

    async def reconfigure(self, settings: EmbedderSettings) -> None:
        """Swap the unit for one of `settings`; the same settings again retry a unit that
        failed to come up, as a user fixing what broke it then reloads."""
        if settings == self.settings and self.start_error is None:
            return
        log.info("embedder changed to %s %s; re-embedding in the background", settings.backend, settings.model_name)
        await self.stop()
        self.settings = settings
        self.start()

    async def reembed(self) -> int:
        """Drop the current embedder's vectors so every item is embedded again.

        The index starts afresh too: vectors of another dimension it refused were
        dropped with the rest, and the new ones may have a dimension of their own.
        """
        dropped = await vectors.delete_vectors(self.db, signature_for(self.settings))
        await self.stop()
        self.start()
        return dropped

    def wake(self, more: int = 0) -> None:
        if self.job is not None:
            self.job.wake(more)

    def status(self) -> EmbedderStatus:
        index = self.vectors.index if self.vectors is not None else None
        if self.job is not None:
            job = job_status(self.job, running="embedding")
        elif self.start_error is not None:
            job = JobStatus(state="waiting", last_error=self.start_error)
        else:
            job = JobStatus(state="loading", last_error=self.check_error)
        return EmbedderStatus(
            backend=self.settings.backend,
            model=self.settings.model_name,
            signature=signature_for(self.settings),
            vectors=len(index) if index is not None else None,
            dimension=index.dim if index is not None else None,
            model_dimension=self.vectors.embedder.dim if self.vectors is not None else None,
            mismatched=index.mismatched if index is not None else 0,
            job=job,
        )

    async def report(self) -> EmbedderStatus:
        """`status()` with the count the store keeps of texts the embedder failed on."""
        report = self.status()
        report.left_out = await vectors.count_left_out(self.db, report.signature)
        return report

    @property
    def off(self) -> str:
        """Why there is no index to search: it is loading, or the unit failed to come up."""
        return self.start_error or "the embedding index is loading"

    async def _start_until_up(self, settings: EmbedderSettings) -> None:
        """Bring the unit up, trying again with backoff while that fails. A failure no
        handler foresaw ended the task here: vector search stayed off, "loading" in status
        and doctor, until the daemon was restarted."""
        delay = BACKOFF_START
        while True:
            try:
                await self._start(settings)
            except Exception as exc:
                error = f"the embedder could not start: {error_line(exc)}; tried again with backoff"
                # The traceback once; a damaged database fails the same way every minute.
                if error != self.start_error:
                    log.error("the embedder could not start; vector search is off, tried again in %g s", delay, exc_info=exc)
                else:
                    log.warning("%s (in %g s)", error, delay)
                self.start_error = error
                # Embedding can do nothing until the unit is up: the near-duplicate sweep,
                # which waits for it to be idle, waited in silence for as long as this
                # failed, where it can say why it cannot go on (service/jobs.py).
                self.idle.set()
            else:
                self.start_error = None
                return
            await asyncio.sleep(delay)
            delay = min(delay * 2, BACKOFF_MAX)

    async def _start(self, settings: EmbedderSettings) -> None:
        # In a thread: the first Ollama embedder imports ollama's client (see GraphSide.start).
        embedder = await asyncio.to_thread(make_embedder, settings)
        try:
            await self._start_with(embedder, settings)
        except BaseException:
            await asyncio.to_thread(embedder.close)
            raise

    async def _start_with(self, embedder: Embedder, settings: EmbedderSettings) -> None:
        dim = None
        try:
            await asyncio.to_thread(embedder.check)
            dim = await asyncio.to_thread(embedder.dimension)
            self.check_error = None
        except EmbedderUnavailable as exc:
            # Not fatal: ingest and keyword search go on, and the job retries.
            self.check_error = str(exc)
            log.warning("embedder not ready: %s", exc)
        index = await VectorIndex.open(self.db, embedder.signature)
        if dim is not None and (index.mismatched or index.dim not in (None, dim)):
            await index.close()
            dropped = await vectors.drop_other_dimensions(self.db, embedder.signature, dim)
            log.warning(
                "%s makes %d-dimensional vectors now; %d stored vectors of another dimension are dropped"
                " and embedded again in the background",
                settings.model_name, dim, dropped,
            )
            index = await VectorIndex.open(self.db, embedder.signature)
        loop = asyncio.get_running_loop()
        embedder.on_dimension = lambda learnt: loop.call_soon_threadsafe(self._dimension_learnt, learnt)
        self.vectors = Vectors(embedder, index)
        self.job = EmbedJob(self.db, embedder, settings.max_chars, self.quiet, self.idle)
        self.job.last_error = self.check_error
        self.job.start()
        log.info("vector index ready: %d vectors for %s", len(index), embedder.signature)

    def _dimension_learnt(self, dim: int) -> None:
        index = self.vectors.index if self.vectors is not None else None
        if index is None or index.dim in (None, dim) or (self._restart is not None and not self._restart.done()):
            return
        log.warning(
            "%s now makes %d-dimensional vectors, the index holds %d; re-embedding in the background",
            self.settings.model_name, dim, index.dim,
        )
        self._restart = asyncio.create_task(self._bring_up_again(), name="embedder restart")
        self._restart.add_done_callback(_log_failure)

    async def _bring_up_again(self) -> None:
        await self.stop()
        self.start()


def _log_failure(task: asyncio.Task) -> None:
    if not task.cancelled() and task.exception() is not None:
        log.error("the embedder could not start; vector search is off", exc_info=task.exception())
