"""The Library: everything kenning offers, as typed methods with typed results.

The socket server (and through it `ken` and `ken mcp`) only adapts requests to these
methods; none of them reaches into the store, the jobs or the retrieval legs itself.
The Library owns the running parts (database, jobs, folders, pools) and wires them: a
committed write that added items wakes the embedding and extraction jobs through the
store's change events, a sweep that changed documents feeds the near-duplicate job.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import os
import time
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Literal

from tenacity import AsyncRetrying, RetryCallState, retry_if_exception_type, wait_exponential

from kenning import __version__
from kenning.api import (
    AddedDocument,
    AgentRecords,
    ArchiveList,
    ArchivePage,
    Archived,
    Capsule,
    CapsuleList,
    CompactResult,
    ContextPack,
    Curation,
    DaemonInfo,
    DedupResult,
    DocumentText,
    Entities,
    Fetched,
    Forgotten,
    LedgerAdded,
    LedgerList,
    LedgerRemoved,
    LedgerRender,
    LibraryCounts,
    Recalled,
    ReembedResult,
    Remembered,
    ReloadResult,
    RemovedDocument,
    RemovedSource,
    ScanResult,
    SearchResult,
    SourceEntry,
    SourceList,
    SourceStatus,
    Status,
)
from kenning.config import Settings, load_settings
from kenning.errors import IndexUnwritable, InvalidRequest, NotFound, ReaderError, ShutDown
from kenning.ingest.pages import PageLimits, prepare_page
from kenning.ingest.parse_pool import ParseInterrupted, ParsePool
from kenning.ingest.redact import redact
from kenning.ingest.text_docs import TextDocument, add_page, add_text, stored_keys
from kenning.ingest.text_prep import PreparedText
from kenning.retrieval.search import LEGS, Retriever
from kenning.service import reading, redaction_key, rereading
from kenning.service.archive import Archive
from kenning.service.context import ContextPacker
from kenning.service.curate import curate
from kenning.service.folders import Folders
from kenning.service.graph import GraphSide
from kenning.service.jobs import IngestActivity, NearDupJob
from kenning.service.ledger import Ledger
from kenning.service.memory import Memory, NewCapsule
from kenning.service.scrub import Scrubber
from kenning.service.semantic import Semantic
from kenning.store import archives, capsules, document_text, documents, graph, ledger, lookup, maintenance
from kenning.store import sources as source_store
from kenning.store import tallies as tally_store
from kenning.store.database import ChangeSet, Database
from kenning.store.keys import agent_key, page_key
from kenning.store.records import FetchedPage
from kenning.store.tallies import SourceCounts
from kenning.text.controls import escaped
from kenning.workers.fetch import FetchError, NotModified
from kenning.workers.job import BACKOFF_MAX, BACKOFF_START
from kenning.workers.pool import PoolTimeout
from kenning.workers.url_pool import FetchRequest, url_pool

log = logging.getLogger(__name__)

Leg = Literal["keyword", "vector", "graph"]

# Where a page being added is: waiting for a fetch worker, being fetched, being read and
# stored. Told to whoever asked (docs/protocol.md, `progress`) as it moves on.
PageStage = Literal["queued", "fetching", "reading"]
Progress = Callable[[PageStage], None]


def _unheard(stage: PageStage) -> None:
    pass


# A search for more than LARGE_SEARCH_HITS hits, and a context pack (a search of 60 and
# then whole documents), runs LARGE_SEARCHES_AT_ONCE at a time; the rest wait their turn,
# as large requests do on the socket. Unbounded, a crowd ran interleaved on the readers,
# each holding its candidates until the crowd's end: 300 searches for 200 hits sent at
# once took the daemon from 138 MB to 751 MB, and it still held 471 MB after (the freed
# objects left Python's memory arenas too scattered to hand back; 200 packs of 2 MB took
# it to 1.2 GB), and a search for one hit sent meanwhile waited 24 s. Two at a time, the
# crowd was answered sooner, the daemon peaked at 157 MB, and the search for one hit,
# which never waits here, took 0.1 s (bench/search_crowd.py).
LARGE_SEARCH_HITS = 20
LARGE_SEARCHES_AT_ONCE = 2


# kenning's own sources that keep what agents wrote, of which there is no other copy:
# `sources.remove` would delete every capsule, archive or ledger entry at once, so each
# goes its own way. Fetched pages (the web source) can be fetched again, so it may go.
_KEPT_WHOLE = {
    "agent": ("documents agents added", "remove one with `ken remove URI`"),
    "capsule": ("memory capsules", "forget one with `ken memory forget ID`"),
    "archive": ("archived outputs", "they expire by [archive] max_age_days and max_total_mb"),
    "ledger": ("ledger entries", "remove one with `ken ledger remove ID`"),
}


class Library:
    def __init__(self, settings: Settings, config_path: Path) -> None:
        self.settings = settings
        self.config_path = config_path
        # Whether the settings in force came from the file: if so, its going missing is
        # refused at reload rather than taken as the defaults.
        self._config_read = config_path.exists()
        self.started_at = time.time()
        self.db = Database(settings.daemon.db_path)
        self.activity = IngestActivity()
        self.retriever = Retriever(self.db, settings.retrieval)
        self.semantic = Semantic(self.db, settings.embedder, self.activity.quiet)

        self.dedup = NearDupJob(self.db, settings.dedup, self._index, self.semantic.idle, lambda: self.semantic.off)
        # Files are read and chunked in worker processes with memory and time limits;
        # their number and memory limit take effect at the next start.
        self.parsers = ParsePool(settings.limits.parse_workers, settings.limits.parse_memory_mb)
        # The offline extractor runs in the same worker processes.
        self.graph = GraphSide(self.db, settings.llm, self.activity.quiet, self.parsers)
        # What is forgotten or removed leaves the file, not only the search (service/scrub.py).
        self.scrubber = Scrubber(self.db)
        self.folders = Folders(self.db, settings, self.activity, self.dedup, self.parsers)
        self.url_pool = url_pool(settings.fetch)
        self.memory = Memory(self.db, settings, self.retriever, self.semantic)
        self.archive = Archive(self.db, settings)
        self.ledger = Ledger(self.db, settings)
        self.context = ContextPacker(self.db, self.retriever, self.semantic)
        self._tasks: set[asyncio.Task] = set()
        # A SIGHUP and a `ken reload` may arrive together: one reload at a time, each
        # stopping and starting the parts the one before it left running.
        self._reload_lock = asyncio.Lock()
        # What agents gave, prepared again under a newer reading (service/rereading.py).
        self._rereading = asyncio.Lock()
        self._unprepared: set[int] = set()
        self._large_searches = asyncio.Semaphore(LARGE_SEARCHES_AT_ONCE)

    # -- lifecycle ---------------------------------------------------------------------

    async def open(self) -> None:
        # First: a key file that is no key is refused before anything is opened.
        key = await asyncio.to_thread(redaction_key.load, self.settings.daemon.data_dir)
        self.memory.redaction_key = self.ledger.redaction_key = key
        await self.db.open()
        self.db.subscribe(self._on_change)
        # In the background: a large removal must not hold the socket closed; the
        # source is out of search and out of the gate from its first step.
        self._spawn(self._finish_removals(), "finish removals")
        if await maintenance.purge_owed(self.db):
            # A purge a stop cut short (service/scrub.py): the removal stood, its words
            # are still in the file.
            self._spawn(self.scrubber.scrub(), "finish the purge a stop cut short")
        self._spawn(self.archive.prune(), "archive retention")
        self._spawn(self._prepare_again(), "prepare agent text again")
        self.semantic.start()
        await self.graph.start()
        self.dedup.start()
        # Under the reload lock: a removal finishing in the background may apply the
        # settings too (`_start_namesakes`), and two applies at once could start one
        # folder twice.
        async with self._reload_lock:
            await self.folders.apply(self.settings)

    async def close(self) -> None:
        """Stop everything that runs; whatever is in flight rolls back and resumes at the next start.

        The jobs and background tasks stop before the worker pools they send work to, so
        none is left waiting on a pool that is gone.
        """
        self.stopping()
        await self.folders.stop_all()
        await asyncio.gather(self.semantic.stop(), self.graph.stop(), self.dedup.stop(), self._cancel_tasks())
        await asyncio.gather(self.url_pool.close(), self.parsers.stop(), self.scrubber.stop())
        self.retriever.close()
        await self.db.close()

    def stopping(self) -> None:
        """What stops the moment a stop is asked, before requests are drained: a purge,
        which on a large library outlasts the shutdown deadline (service/scrub.py)."""
        self.scrubber.halt()

    async def _cancel_tasks(self) -> None:
        tasks = [task for task in self._tasks if not task.done()]
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.wait(tasks)

    async def _prepare_again(self) -> None:
        """One run at a time: a run goes round until nothing it has not tried is stale,
        and while the index cannot be written, it is run again with backoff, as a sweep is."""
        if self._rereading.locked():
            return
        async with self._rereading:
            retrying = AsyncRetrying(
                retry=retry_if_exception_type(IndexUnwritable),
                wait=wait_exponential(multiplier=BACKOFF_START, max=BACKOFF_MAX),
                before_sleep=_rereading_paused,
                reraise=True,
            )
            async for attempt in retrying:
                with attempt:
                    await rereading.prepare_again(
                        self.db, lambda: self.settings.chunking, self.memory, self.archive, self.ledger, self._unprepared
                    )

    def periodic_round(self) -> None:
        if self.folders.periodic_round():
            self._spawn(self.dedup.sweep(), "near-duplicate sweep")
        self._spawn(self.archive.prune(), "archive retention")
        # A sweep may have handed agent text a copy prepared under an older reading.
        self._spawn(self._prepare_again(), "prepare agent text again")

    # -- the API -----------------------------------------------------------------------

    async def search(
        self,
        query: str,
        limit: int = 10,
        source: str | None = None,
        namespace: str | None = None,
        legs: tuple[Leg, ...] = LEGS,
        kinds: tuple[str, ...] = (),
        since: str | None = None,
        until: str | None = None,
    ) -> SearchResult:
        await self._check_scope(source, namespace)
        turn = self._large_searches if limit > LARGE_SEARCH_HITS else contextlib.nullcontext()
        async with turn:
            return await self.retriever.search(
                query, limit, source=source, namespace=namespace, legs=legs, vectors=self.semantic.vectors,
                vectors_off=self.semantic.off, kinds=kinds, since=since, until=until,
            )  # fmt: skip

    async def _check_scope(self, source: str | None, namespace: str | None) -> None:
        if source is not None:
            row = next((row for row in await source_store.list_sources(self.db) if row.name == source), None)
            if row is None:
                raise NotFound(f"unknown source {source!r}; see `ken sources list`")
            if row.removing:
                raise NotFound(f"source {source!r} is being removed; nothing of it is searched")
            if not row.active:
                # A folder taken out of the config: its rows wait for it to come back, and
                # a search scoped to it answered "no matches" as if it held nothing.
                raise NotFound(
                    f"source {source!r} is not in the config; its index is kept but not searched"
                    f" (add the folder back, or `ken sources remove {source}` drops its index)"
                )
        if namespace is not None and namespace not in (known := await source_store.namespaces(self.db)):
            # Escaped: a namespace stored before they were checked may hold a control character.
            listed = ", ".join(escaped(name) for name in sorted(known))
            raise NotFound(f"unknown namespace {namespace!r}; namespaces: {listed or 'none yet'}")

    async def status(self) -> Status:
        # The reads side by side, each on a reader of its own: while an agent writes, every
        # trip to a reader waits for the loop behind the embedding and mining threads, and
        # one after another they added up to most of a call.
        tallies, rows, space, graph_status, agent, embedder = await asyncio.gather(
            tally_store.tallies(self.db), source_store.list_sources(self.db), maintenance.space(self.db),
            self.graph.status(), self.agent_records(), self.semantic.report(),
        )  # fmt: skip
        report = []
        for row in rows:
            tally = tallies.by_source.get(row.id, SourceCounts())
            entry = SourceStatus(
                name=row.name,
                kind=row.kind,
                path=row.root,
                namespace=row.namespace,
                active=row.active,
                done=tally.done,
                merged=tally.merged,
                holds=tally.holds,
                failed=tally.failed,
                skipped=tally.skipped,
                in_progress=tally.scanning,
                chunks=tally.chunks,
                last_sweep_at=row.last_sweep_at,
                last_error=row.last_sweep_error,
                kept_unmounted=row.last_sweep_kept,
                processed=tally.holds + tally.failed + tally.skipped,
                failures=list(tallies.failures.get(row.id, ())),
                removing=row.removing,
            )
            folder = self.folders.running.get(row.name)
            if folder is not None:
                progress = folder.scanner.progress
                # The files the sweep would index, and those over the cap the index still
                # holds from before it was lowered: they count in `processed` too.
                total = (
                    progress.discovered - progress.capped + progress.capped_kept + progress.unreadable_kept
                    + progress.links_kept
                )
                entry.scanning = progress.running
                entry.not_watched = folder.not_watched
                if progress.write_error:
                    entry.last_error = progress.write_error
                entry.discovered = progress.discovered
                entry.capped = progress.capped
                entry.capped_kept = progress.capped_kept
                entry.pending = progress.pending
                entry.total = total
                if progress.running:
                    # A changed file keeps its row, "done", until it is read again: while a
                    # sweep runs, what it has still to read is not processed.
                    entry.processed = min(entry.processed, max(total - progress.pending, 0))
                entry.percent = round(100.0 * min(entry.processed, total) / total, 1) if total else 100.0
                entry.chunks_per_sweep = self.folders.budget.allowance(folder.scanner.source_budget)
                entry.deferred = progress.deferred
                entry.passed_over = dict(progress.passed_over)
                entry.unreadable_folders = dict(progress.unreadable_dirs)
                entry.unreadable_kept = progress.unreadable_kept
                entry.unreadable_files = dict(progress.unreadable_files)
                entry.next_sweep_at = folder.resume_at or self.folders.next_sweep_at
                if progress.running and progress.reading_since is not None and progress.checked:
                    rate = progress.checked / max(time.monotonic() - progress.reading_since, 1e-6)
                    entry.rate_per_second = round(rate, 1)
                    entry.eta_seconds = math.ceil(progress.pending / rate)
            report.append(entry)
        daemon = self.settings.daemon
        return Status(
            daemon=DaemonInfo(
                pid=os.getpid(),
                version=__version__,
                uptime_seconds=round(time.time() - self.started_at, 1),
                config=str(self.config_path),
                data_dir=str(daemon.data_dir),
                socket=str(daemon.socket_path),
                db_bytes=space.total,
                wal_bytes=space.wal_bytes,
                free_bytes=space.free_bytes,
            ),
            embedder=embedder,
            graph=graph_status,
            library=LibraryCounts(tallies.library_documents),
            sources=report,
            agent=agent,
        )

    async def sources_list(self) -> SourceList:
        """Configured sources and those only the index knows, with what each holds. A
        source being removed is listed, and says so, until its removal ends: the removal
        takes it out of the daemon's settings and a reload may put it back (the config
        still naming it), so neither says whether it is there."""
        rows = {row.name: row for row in await source_store.list_sources(self.db)}
        tallies = await tally_store.tallies(self.db)
        counts = tallies.by_source
        listed = []
        for source in self.settings.sources:
            row = rows.get(source.name)
            tally = counts.get(row.id, SourceCounts()) if row else SourceCounts()
            listed.append(
                SourceEntry(
                    name=source.name,
                    kind="folder",
                    path=str(source.path),
                    namespace=source.namespace,
                    in_config=True,
                    documents=tally.holds,
                    shared=tally.merged,
                    chunks=tally.chunks,
                    ignore=list(source.ignore),
                    max_files=source.max_files,
                    chunk_budget=source.chunk_budget,
                    confine_to_root=source.confine_to_root,
                    removing=row is not None and row.removing,
                )
            )
        for name, row in rows.items():
            if self.settings.source(name) is None:
                tally = counts.get(row.id, SourceCounts())
                listed.append(
                    SourceEntry(
                        name, row.kind, row.root, row.namespace, False, tally.holds, tally.merged, tally.chunks,
                        removing=row.removing,
                    )  # fmt: skip
                )
        return SourceList(listed, tallies.library_documents)

    async def scan(self, name: str, wait: bool = False) -> ScanResult:
        job = self.folders.request_sweep(name)
        if job is None:
            # kenning's own sources are listed beside the folders; "unknown" sent the user
            # to a list that names them.
            if any(row.name == name and row.kind != "folder" for row in await source_store.list_sources(self.db)):
                raise InvalidRequest(
                    f"{name!r} is not a folder source: only folders are swept; its documents come and go by"
                    " their own commands"
                )
            raise NotFound(f"unknown source {name!r}; see `ken sources list`")
        if not wait:
            return ScanResult(name, started=True)
        await job.request()
        return ScanResult(name, finished=True, result=dict(job.scanner.progress.last_result))

    async def get(
        self,
        item_id: int | None = None,
        document_id: int | None = None,
        uri: str | None = None,
        path: str | None = None,
        offset: int | None = None,
        limit: int | None = None,
        line_start: int | None = None,
        line_end: int | None = None,
        source: str | None = None,
        version: str | None = None,
    ) -> Fetched:
        """One chunk, a page of a document's chunks, or a range of its lines (service/reading.py),
        cited at the file a path names or, with `source`, the copy that source holds."""
        return await reading.fetch(
            self.db, item_id, document_id, uri, path, offset, limit, line_start, line_end, source, version
        )

    async def add_text(self, document: TextDocument) -> AddedDocument:
        return await add_text(self.db, document, self.settings.chunking, self.settings.limits.max_chunks_per_file)

    async def remove_text(self, uri: str) -> RemovedDocument:
        """An agent document by the uri it was added under, or a fetched page by its URL.
        A folder's file goes when it is deleted or ignored, and kenning's own records each
        their own way (`_KEPT_WHOLE`)."""
        await self.scrubber.owe()
        done = await documents.remove_text(self.db, [agent_key(uri), page_key(uri)], uri)
        if done.alike:
            ids = ", ".join(map(str, done.alike))
            raise InvalidRequest(
                f"{len(done.alike)} documents are stored under {redact(uri)} ({ids}): their uris differ only in a"
                " credential, which was redacted; remove one by the uri as it was added"
            )
        if done.removed is None:
            raise NotFound(
                f"no document added by an agent under {redact(uri)!r}, and no page fetched from it; a folder's file"
                " leaves the index when it is deleted or ignored"
            )
        await self.scrubber.scrub()
        return RemovedDocument(*done.removed)

    async def add_url(self, url: str, progress: Progress = _unheard) -> AddedDocument:
        """`progress` hears where the page is (PageStage), so a client can tell a page
        waiting its turn behind a burst of others from a daemon that stopped working."""
        page = await self._fetch(FetchRequest(url), progress)
        assert not isinstance(page, NotModified)
        progress("reading")
        added = await add_page(self.db, url, await self._prepare_page(page))
        # Redacted as the stored uri is: a redirect to a signed address hands out a token
        # the caller never had (an agent's context goes to its model's provider).
        added.url = redact(page.url)
        return added

    async def refresh_url(self, url: str, progress: Progress = _unheard) -> AddedDocument:
        known = await lookup.page_state(self.db, page_key(url))
        if known is None:
            # A command naming "[REDACTED]" would add another page: the URL is the user's to give.
            shown = redact(url)
            command = f"`ken add-url {shown}`" if shown == url else "`ken add-url` with the whole URL"
            raise NotFound(f"{shown} has not been added; {command} adds it")
        page = await self._fetch(FetchRequest(url, known.etag, known.last_modified), progress)
        if isinstance(page, NotModified):
            # The uri as stored, as a changed page answers, not the URL with its token.
            return AddedDocument(known.document_id, known.title, redact(url), "indexed", 0, changed=False)
        progress("reading")
        added = await add_page(self.db, url, await self._prepare_page(page))
        added.url, added.changed = redact(page.url), True
        return added

    async def entities(self, query: str, limit: int = 10) -> Entities:
        return Entities(await graph.find_entities(self.db, query, limit))

    async def remove_source(self, name: str) -> RemovedSource:
        row = next((row for row in await source_store.list_sources(self.db) if row.name == name), None)
        if row is None:
            raise NotFound(f"unknown source {name!r}; see `ken sources list`")
        if row.kind in _KEPT_WHOLE:
            what, instead = _KEPT_WHOLE[row.kind]
            raise InvalidRequest(
                f"{name!r} is kenning's own source of {what}, not one you added; it cannot be removed ({instead})"
            )
        if self.settings.source(name) is not None:
            self.settings = self.settings.model_copy(
                update={"sources": tuple(s for s in self.settings.sources if s.name != name)}
            )
        await self.folders.forget(name)
        await self.scrubber.owe()
        removed = await source_store.remove_source(self.db, row.id)
        await self.scrubber.scrub()
        # A reload while the removal ran may have brought the folder back (`ken sources
        # add` under the old name).
        await self._start_namesakes([name])
        return RemovedSource(name, removed, await maintenance.reclaim(self.db))

    async def dedup_now(self) -> DedupResult:
        run = await self.dedup.sweep()
        if run is None:
            raise NotFound(f"{self.semantic.off}; try again in a moment")
        return DedupResult(run.documents, run.pairs, run.collapsed, round(run.seconds, 3))

    async def reload(self) -> ReloadResult:
        """Re-read the config; a bad file raises ConfigError and changes nothing."""
        async with self._reload_lock:
            return await self._reload()

    async def _reload(self) -> ReloadResult:
        # Read and validated off the loop: a config of a megabyte (a value pasted whole)
        # held it 0.1 s of CPU, every request waiting.
        settings = await asyncio.to_thread(load_settings, self.config_path, missing_ok=not self._config_read)
        self._config_read = self.config_path.exists()
        held = self._held_until_restart(settings)
        if held:
            log.warning("changed in the config, applied at the next restart: %s", ", ".join(held))
        if settings.daemon != self.settings.daemon:
            settings = settings.model_copy(update={"daemon": self.settings.daemon})
        before = set(self.folders.running)
        previous, self.settings = self.settings, settings
        self.retriever.settings = settings.retrieval
        self.memory.settings = self.archive.settings = self.ledger.settings = settings
        await self.semantic.reconfigure(settings.embedder)
        await self.graph.reconfigure(settings.llm)
        if settings.fetch != previous.fetch:
            old_pool, self.url_pool = self.url_pool, url_pool(settings.fetch)
            await old_pool.close()
        await self.folders.apply(settings)
        if settings.chunking != previous.chunking:
            self._spawn(self._prepare_again(), "prepare agent text again")
        after = set(self.folders.running)
        log.info("configuration reloaded: %d sources", len(after))
        return ReloadResult(sorted(after), sorted(after - before), sorted(before - after), held)

    def _held_until_restart(self, settings: Settings) -> list[str]:
        """The settings `settings` changes that this daemon cannot take up while it runs.

        The socket, the data directory and the parse workers are made once, at start; a
        reload that reported only its sources would leave the user believing a new
        sweep_interval or log_level was in force."""
        running = self.settings.daemon
        fields = type(running).model_fields
        held = [f"daemon.{key}" for key in fields if getattr(settings.daemon, key) != getattr(running, key)]
        if settings.limits.parse_workers != self.parsers.workers:
            held.append("limits.parse_workers")
        if settings.limits.parse_memory_mb != self.parsers.memory_mb:
            held.append("limits.parse_memory_mb")
        return held

    async def reembed(self) -> ReembedResult:
        return ReembedResult(await self.semantic.reembed())

    async def read_document(
        self,
        document_id: int | None = None,
        path: str | None = None,
        uri: str | None = None,
        line_start: int = 1,
        line_end: int | None = None,
        source: str | None = None,
    ) -> DocumentText:
        """Lines of a document's extracted text (what citations count in), by id, file
        path or uri, cited at that path or, with `source`, at the copy that source holds.
        `ken get` and `ken show --context` read around a hit with it."""
        at = None
        if document_id is not None:
            found, named = await lookup.find_by_id(self.db, document_id), f"document {document_id}"
        elif path is not None:
            at = await lookup.document_at(self.db, path)
            found, named = at and lookup.FoundDocument(at.document_id, at.status, at.reason, at.has_text), path
        else:
            assert uri is not None
            # By the raw uri it was added under first: the stored one is redacted.
            keyed = await lookup.find_keyed(self.db, stored_keys(uri))
            found = await (lookup.find_by_id(self.db, keyed) if keyed else lookup.find_document(self.db, uri))
            if found is not None:
                reading.refuse_alike(found, uri)
            named = redact(uri)
        if found is None:
            raise NotFound(f"{named} is not in the library; `ken search` finds what is")
        if source is not None:
            at = await reading.held_by(self.db, found.id, source, named)
        last = await document_text.last_line(self.db, found.id)
        # Whatever its state, a row holding text serves it: one being read again, or one
        # kenning failed on after indexing it, is found by search as last indexed, and a
        # hit must open.
        if not last:
            why = f": {found.reason}" if found.reason else ""
            raise NotFound(f"{named} is not indexed ({found.status}{why})")
        first, end = max(line_start, 1), min(line_end or last, last)
        if first > end:
            # The document is there; the lines are not: as documents.get and an offset past the end.
            asked = f"{line_start}-{line_end or ''}"
            raise InvalidRequest(f"{named} has {last} lines of indexed text; lines {asked} are past them")
        lines = await document_text.read_lines(self.db, found.id, first, end)
        info = reading.cited_at(await document_text.describe(self.db, found.id), at)
        async with self.db.reader() as conn:
            locations = await lookup.locations(conn, found.id, at.row if at else None)
        return DocumentText(
            document_id=found.id,
            title=info.title,
            source=info.source,
            namespace=info.namespace,
            path=info.path,
            format=info.format,
            line_start=first,
            line_end=end,
            last_line=last,
            lines=lines,
            locations=locations,
        )

    async def compact(self) -> CompactResult:
        """Rewrite the database without its free pages; see store/maintenance.py."""
        started = time.monotonic()
        before, after = await maintenance.compact(self.db)
        return CompactResult(before.total, after.total, round(time.monotonic() - started, 2))

    # -- agent records: memory capsules, archives, the ledger, context packs -----------

    async def memory_add(self, new: NewCapsule) -> Remembered:
        return await self.memory.remember(new)

    async def memory_recall(
        self, query: str, limit: int = 5, scope: str | None = None, kinds: tuple[str, ...] = ()
    ) -> Recalled:
        return await self.memory.recall(query, limit, scope, kinds)

    async def memory_show(self, capsule_id: str) -> Capsule:
        return await self.memory.show(capsule_id)

    async def memory_list(
        self, scope: str | None = None, kind: str | None = None, superseded: bool = False, limit: int = 50,
        offset: int = 0, cursor: str | None = None,
    ) -> CapsuleList:  # fmt: skip
        return await self.memory.listing(scope, kind, superseded, limit, offset, cursor)

    async def memory_forget(self, capsule_id: str) -> Forgotten:
        await self.scrubber.owe()
        forgotten = await self.memory.forget(capsule_id)
        await self.scrubber.scrub()
        return forgotten

    async def memory_curate(self, scope: str | None = None, limit: int = 50) -> Curation:
        return await curate(self.memory, scope, limit)

    async def archive_add(self, text: str, title: str | None = None, tags: tuple[str, ...] = ()) -> Archived:
        return await self.archive.add(text, title, tags)

    async def archive_recall(
        self, handle: str, offset: int = 0, limit: int = 20_000, version: str | None = None
    ) -> ArchivePage:
        return await self.archive.recall(handle, offset, limit, version)

    async def archive_list(self, limit: int = 50, offset: int = 0, cursor: str | None = None) -> ArchiveList:
        return await self.archive.listing(limit, offset, cursor)

    async def ledger_add(
        self, section: str, fields: dict[str, str], owner: str = "agent", evidence: tuple[str, ...] = ()
    ) -> LedgerAdded:
        return await self.ledger.add(section, fields, owner, evidence)

    async def ledger_remove(
        self, entry_id: str | None = None, section: str | None = None, fields: dict[str, str] | None = None
    ) -> LedgerRemoved:
        await self.scrubber.owe()
        removed = await self.ledger.remove(entry_id, section, fields)
        await self.scrubber.scrub()
        return removed

    async def ledger_render(self, budget: int | None = None, sections: tuple[str, ...] = ()) -> LedgerRender:
        return await self.ledger.render(budget, sections)

    async def ledger_list(self, section: str | None = None) -> LedgerList:
        return await self.ledger.listing(section)

    async def context_pack(
        self, task: str, budget: int, source: str | None = None, namespace: str | None = None,
        kinds: tuple[str, ...] = (),
    ) -> ContextPack:  # fmt: skip
        await self._check_scope(source, namespace)
        async with self._large_searches:
            return await self.context.pack(task, budget, source, namespace, kinds)

    async def agent_records(self) -> AgentRecords:
        # Side by side, on readers of their own: `status` asks on every call, and while an
        # agent writes, each trip to a reader waits for the loop behind the embedding and
        # mining threads.
        (current, superseded), (count, size, pruned, last_pruned), entries = await asyncio.gather(
            capsules.counts(self.db), archives.totals(self.db), ledger.count(self.db)
        )
        retention = self.settings.archive
        return AgentRecords(
            current, superseded, count, size, retention.max_age_days, retention.max_total_mb, pruned, last_pruned,
            entries,
        )  # fmt: skip

    # -- wiring ------------------------------------------------------------------------

    def _on_change(self, changes: ChangeSet) -> None:
        if changes.added:
            self.semantic.wake(len(changes.added))
            self.graph.wake(len(changes.added))

    def _index(self):
        vectors = self.semantic.vectors
        return vectors.index if vectors is not None else None

    async def _fetch(self, request: FetchRequest, progress: Progress):
        if self.url_pool.full():
            progress("queued")
        try:
            return await self.url_pool.send(request, started=lambda: progress("fetching"))
        except PoolTimeout as exc:
            raise FetchError(redact(f"fetching {request.url} timed out: {exc}")) from None
        except FetchError as exc:
            # Worded with the URL as asked (`... answered HTTP 404`), token and all.
            raise type(exc)(redact(str(exc))) from None

    async def _prepare_page(self, page: FetchedPage) -> PreparedText:
        """The page's text and chunks, made in a parse worker under the [limits] a file's
        reading is held to; a page past any fails naming it, and nothing is stored (a
        page refreshed keeps the text it had). The worker is killed at the limit, so no
        conversion of hostile markup keeps a core busy after its request has failed."""
        try:
            return await self.parsers.read(
                prepare_page,
                (page, PageLimits.of(self.settings.chunking, self.settings.limits)),
                self.settings.limits.parse_timeout,
                urgent=True,
            )
        except ReaderError as exc:
            raise ReaderError(redact(f"cannot read the page at {page.url}: {exc}")) from None
        except ParseInterrupted as exc:
            # Its worker was stopped from outside (the daemon stopping, a signal to the
            # group): the page is not at fault, and adding it again may well work.
            raise FetchError(redact(f"reading the page at {page.url} was interrupted ({exc}); try again")) from None

    async def _finish_removals(self) -> None:
        names = await source_store.resume_removals(self.db)
        for name in names:
            log.info("finished removing source %s, which a stop had interrupted", name)
        if names:
            # What `ken sources remove` would have purged had it returned (service/scrub.py).
            await self.scrubber.scrub()
        await self._start_namesakes(names)

    async def _start_namesakes(self, names: list[str]) -> None:
        """Start the folders in the config named like a source whose removal just ended.

        `folders.apply` passes over a folder whose name an unfinished removal still holds
        (store/sources.py `sync_sources`); added back meanwhile, it stayed in the config
        and unindexed until the next reload or start."""
        if any(self.settings.source(name) is not None for name in names):
            async with self._reload_lock:
                await self.folders.apply(self.settings)

    def _spawn(self, coroutine: Coroutine, name: str) -> asyncio.Task:
        task = asyncio.create_task(coroutine, name=name)
        self._tasks.add(task)
        task.add_done_callback(self._task_done)
        return task

    def _task_done(self, task: asyncio.Task) -> None:
        self._tasks.discard(task)
        if task.cancelled() or task.exception() is None:
            return
        if isinstance(task.exception(), ShutDown):
            log.info("background task %r stopped with the library: %s", task.get_name(), task.exception())
        else:
            log.error("background task %r failed", task.get_name(), exc_info=task.exception())


def _rereading_paused(retry_state: RetryCallState) -> None:
    error = retry_state.outcome.exception() if retry_state.outcome else None
    log.warning("preparing agent text again paused: %s; retrying with backoff", error)
