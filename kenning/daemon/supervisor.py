"""The daemon: one object with startup, main loop and shutdown.

Signal handlers only set flags (SIGTERM/SIGINT: exit, a second one: exit now; SIGHUP:
reload); the main loop notices. Shutdown has a deadline: stop accepting, let requests
finish, cancel sweeps (the file in flight rolls back), close the database, remove the
socket, release the data-directory lock.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import time
from collections.abc import Coroutine
from dataclasses import dataclass, field
from pathlib import Path

from kenning.config import Settings, SourceSettings, load_settings
from kenning.daemon.guard import DataDirLock, clear_stale_socket, private_dir
from kenning.daemon.methods import build_methods
from kenning.daemon.server import RpcServer
from kenning.errors import ConfigError
from kenning.ingest.parse_pool import ParsePool
from kenning.ingest.pipeline import IngestOptions
from kenning.ingest.dedup import NearDupJob
from kenning.ingest.scan import FolderScanner, SweepBudget
from kenning.ingest.watch import watch_folder
from kenning.memory import release_free_memory
from kenning.retrieval.search import Retriever
from kenning.store import sources as source_store
from kenning.store.database import Database
from kenning.store.maintenance import merge_fts_segments
from kenning.workers.extract import GraphBuilder
from kenning.workers.semantic import Semantic
from kenning.workers.url_pool import url_pool

log = logging.getLogger(__name__)

SHUTDOWN_GRACE_SECONDS = 10.0


@dataclass
class SourceRuntime:
    """A configured source while the daemon runs: its scanner and its watcher."""

    settings: SourceSettings
    scanner: FolderScanner
    stop_watch: asyncio.Event = field(default_factory=asyncio.Event)
    watch_task: asyncio.Task | None = None
    # When a sweep stopped by its chunk budget goes on (wall clock), if one is due.
    resume_at: float | None = None


class Daemon:
    def __init__(self, settings: Settings, config_path: Path) -> None:
        self.settings = settings
        self.config_path = config_path
        self.db = Database(settings.daemon.db_path)
        self.sources: dict[str, SourceRuntime] = {}
        self.started_at = time.time()
        self.should_exit = asyncio.Event()
        self.force_exit = False
        self._reload_requested = asyncio.Event()
        self._lock = DataDirLock(settings.daemon.data_dir)
        self._server: RpcServer | None = None
        self._tasks: set[asyncio.Task] = set()
        self._sweeps: dict[str, asyncio.Task] = {}
        self._merge_lock = asyncio.Lock()
        self.retriever = Retriever(self.db, settings.retrieval)
        self.semantic = Semantic(self.db, self.retriever, settings.embedder, self._ingesting)
        self.graph = GraphBuilder(self.db, settings.llm, self._ingesting)
        self.url_pool = url_pool(settings.fetch)
        limits = settings.limits
        self.parsers = ParsePool(limits.parse_workers, limits.parse_memory_mb)
        self.budget = SweepBudget(settings.daemon.sweep_chunk_budget)
        self.dedup = NearDupJob(self.db, settings.dedup, lambda: self.retriever.index, self._embedding_idle)
        self.next_sweep_at = time.time() + settings.daemon.sweep_interval
        self._rounds = 0

    async def run(self) -> None:
        try:
            await self.startup()
            await self.main_loop()
        finally:
            await self.shutdown()

    # -- lifecycle -------------------------------------------------------------------

    async def startup(self) -> None:
        daemon = self.settings.daemon
        private_dir(daemon.data_dir)
        private_dir(daemon.socket_path.parent)
        self._lock.acquire()
        clear_stale_socket(daemon.socket_path)
        await self.db.open()
        self._install_signal_handlers()
        # In the background: a large removal must not hold the socket closed; the
        # source is out of search and out of the gate from its first step.
        self._spawn(self._finish_removals(), "finish removals")
        await self.semantic.start()
        await self.graph.start()
        self._spawn(self.dedup.run(self.should_exit), "near-duplicate sweeps")
        await self._apply_sources(self.settings)
        self._server = RpcServer(daemon.socket_path, build_methods(self))
        await self._server.start()
        log.info("kenning daemon ready (pid %d, data %s)", os.getpid(), daemon.data_dir)

    async def main_loop(self) -> None:
        interval = self.settings.daemon.sweep_interval
        next_sweep = time.monotonic() + interval
        while not self.should_exit.is_set():
            timeout = max(0.0, next_sweep - time.monotonic())
            waiters = [asyncio.ensure_future(self.should_exit.wait()), asyncio.ensure_future(self._reload_requested.wait())]
            await asyncio.wait(waiters, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
            for waiter in waiters:
                waiter.cancel()
            if self.should_exit.is_set():
                break
            if self._reload_requested.is_set():
                self._reload_requested.clear()
                try:
                    await self.reload()
                except ConfigError as exc:
                    log.error("reload refused, keeping the previous configuration: %s", exc)
            if time.monotonic() >= next_sweep:
                self._periodic_round()
                interval = self.settings.daemon.sweep_interval
                next_sweep = time.monotonic() + interval
                self.next_sweep_at = time.time() + interval

    async def shutdown(self) -> None:
        log.info("shutting down")
        if self._server is not None:
            await self._server.stop(timeout=0 if self.force_exit else SHUTDOWN_GRACE_SECONDS / 2)
        for runtime in self.sources.values():
            runtime.stop_watch.set()
        await self.semantic.stop()
        await self.graph.stop()
        await self.url_pool.close()
        # A sweep is cancelled, not awaited to the end: the file in flight rolls back
        # and the next start picks it up from its `scanning` row.
        tasks = [task for task in self._tasks if not task.done()]
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.wait(tasks, timeout=SHUTDOWN_GRACE_SECONDS)
        await self.parsers.stop()
        await self.db.close()
        self._lock.release()
        log.info("stopped")

    def _install_signal_handlers(self) -> None:
        loop = asyncio.get_running_loop()
        loop.add_signal_handler(signal.SIGTERM, self._on_exit_signal)
        loop.add_signal_handler(signal.SIGINT, self._on_exit_signal)
        loop.add_signal_handler(signal.SIGHUP, self._reload_requested.set)

    def _on_exit_signal(self) -> None:
        if self.should_exit.is_set():
            self.force_exit = True
        self.should_exit.set()

    # -- sources ---------------------------------------------------------------------

    def request_reload(self) -> None:
        self._reload_requested.set()

    async def reload(self) -> dict:
        """Re-read the config; a bad file raises ConfigError and changes nothing."""
        settings = load_settings(self.config_path)
        if settings.daemon != self.settings.daemon:
            log.warning("[daemon] settings changed; they take effect at the next restart")
            settings = settings.model_copy(update={"daemon": self.settings.daemon})
        before = set(self.sources)
        previous, self.settings = self.settings, settings
        self.retriever.settings = settings.retrieval
        await self.semantic.reconfigure(settings.embedder)
        await self.graph.reconfigure(settings.llm)
        self.dedup.settings = settings.dedup
        if settings.fetch != previous.fetch:
            old_pool, self.url_pool = self.url_pool, url_pool(settings.fetch)
            await old_pool.close()
        await self._apply_sources(settings)
        after = set(self.sources)
        log.info("configuration reloaded: %d sources", len(after))
        return {"sources": sorted(after), "added": sorted(after - before), "removed": sorted(before - after)}

    async def _apply_sources(self, settings: Settings) -> None:
        ids = await source_store.sync_sources(
            self.db, [(s.name, str(s.path), s.namespace) for s in settings.sources]
        )
        wanted = {s.name: s for s in settings.sources}
        options = IngestOptions(
            chunking=settings.chunking,
            limits=settings.limits,
            max_file_bytes=int(settings.daemon.max_file_mb * 1024 * 1024),
            parsers=self.parsers,
        )
        for name in list(self.sources):
            runtime = self.sources[name]
            if wanted.get(name) != runtime.settings or runtime.scanner.options != options:
                await self._stop_source(name)
        for name, source in wanted.items():
            if name in self.sources:
                continue
            if name not in ids:  # an older source of this name is still being removed
                continue
            scanner = FolderScanner(
                self.db,
                ids[name],
                source,
                options,
                exclude=(settings.daemon.data_dir,),
                on_indexed=self.work_arrived,
                default_budget=settings.daemon.folder_chunk_budget,
                shared_budget=self.budget,
            )
            runtime = SourceRuntime(source, scanner)
            self.sources[name] = runtime
            runtime.watch_task = self._spawn(
                watch_folder(
                    source.path,
                    scanner.rules,
                    lambda name=name: self.request_sweep(name),
                    runtime.stop_watch,
                    settings.daemon.debounce_ms,
                ),
                f"watch {name}",
            )
            self.request_sweep(name)

    def work_arrived(self) -> None:
        """New chunks were stored: the embed and extraction jobs have work."""
        self.semantic.wake()
        self.graph.wake()

    async def forget_source(self, name: str) -> None:
        """Stop watching and sweeping a source that is about to be removed."""
        self.settings = self.settings.model_copy(
            update={"sources": tuple(s for s in self.settings.sources if s.name != name)}
        )
        if name in self.sources:
            await self._stop_source(name)

    async def _stop_source(self, name: str) -> None:
        runtime = self.sources.pop(name)
        runtime.stop_watch.set()
        sweep = self._sweeps.pop(name, None)
        for task in (runtime.watch_task, sweep):
            if task is not None and not task.done():
                task.cancel()
                await asyncio.wait([task], timeout=SHUTDOWN_GRACE_SECONDS)

    async def _finish_removals(self) -> None:
        for name in await source_store.resume_removals(self.db):
            log.info("finished removing source %s, which a stop had interrupted", name)

    def _periodic_round(self) -> None:
        """The safety-net sweep of every source, a fresh shared budget, and every N
        rounds a full near-duplicate sweep."""
        self.budget.renew(self.settings.daemon.sweep_chunk_budget)
        for name in self.sources:
            self.request_sweep(name)
        self._rounds += 1
        every = self.settings.dedup.every_n_sweeps
        if every and self._rounds % every == 0:
            self._spawn(self.dedup.sweep(), "near-duplicate sweep")

    def _embedding_idle(self) -> bool:
        worker = self.semantic.worker
        return worker is not None and worker.progress.state in ("idle", "waiting")

    def _ingesting(self) -> bool:
        """True while a sweep is reading files in (not while it only checks mtimes)."""
        return any(
            runtime.scanner.progress.running and runtime.scanner.progress.pending for runtime in self.sources.values()
        )

    def request_sweep(self, name: str) -> asyncio.Task | None:
        """Start a sweep, or tell the running one to go round again."""
        runtime = self.sources.get(name)
        if runtime is None:
            return None
        running = self._sweeps.get(name)
        if running is not None and not running.done():
            runtime.scanner.mark_dirty()
            return running
        task = self._spawn(self._sweep_then_tidy(name, runtime.scanner), f"sweep {name}")
        self._sweeps[name] = task
        return task

    async def _sweep_then_tidy(self, name: str, scanner: FolderScanner) -> dict[str, int]:
        counts = await scanner.sweep()
        self.dedup.note_changed(scanner.take_changed())
        runtime = self.sources.get(name)
        if runtime is not None:
            runtime.resume_at = None
            if scanner.progress.deferred and self.budget.allowance(scanner.source_budget) is not None:
                runtime.resume_at = time.time() + self.settings.daemon.budget_pause
                self._spawn(self._resume(name, self.settings.daemon.budget_pause), f"resume {name}")
        if counts.get("indexed") or counts.get("deleted"):
            # One merge pass at a time; a sweep that ends while one runs leaves it to
            # pick up the new segments as it goes.
            if not self._merge_lock.locked():
                async with self._merge_lock:
                    await merge_fts_segments(self.db)
            await asyncio.to_thread(release_free_memory)
        return counts

    async def _resume(self, name: str, pause: float) -> None:
        """The next budgeted sweep, after a pause that lets embedding and extraction catch up."""
        await asyncio.sleep(pause)
        self.request_sweep(name)

    def _spawn(self, coroutine: Coroutine, name: str) -> asyncio.Task:
        task = asyncio.create_task(coroutine, name=name)
        self._tasks.add(task)
        task.add_done_callback(self._task_done)
        return task

    def _task_done(self, task: asyncio.Task) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("background task %r failed", task.get_name(), exc_info=task.exception())
