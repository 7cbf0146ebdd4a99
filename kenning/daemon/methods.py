"""The socket methods, bound to a running daemon. Documented in docs/protocol.md."""

from __future__ import annotations

import asyncio
import os
import time
from typing import TYPE_CHECKING

from kenning import __version__
from kenning.daemon.protocol import (
    AddTextParams,
    DocumentParams,
    EntitiesParams,
    NoParams,
    ScanParams,
    SearchParams,
    SourceNameParams,
    UrlParams,
)
from kenning.daemon.server import Method, NotFound
from kenning.ingest.text_docs import TextDocument, add_page, add_text, page_key
from kenning.store import graph, lookup
from kenning.store.sources import list_sources, remove_source
from kenning.workers.fetch import FetchError, NotModified
from kenning.workers.pool import PoolTimeout
from kenning.workers.url_pool import FetchRequest

if TYPE_CHECKING:
    from kenning.daemon.supervisor import Daemon


def build_methods(daemon: "Daemon") -> dict[str, Method]:
    async def do_search(params: SearchParams) -> dict:
        if params.source is not None and params.source not in {row.name for row in await list_sources(daemon.db)}:
            raise NotFound(f"unknown source {params.source!r}; see `ken sources list`")
        result = await daemon.retriever.search(
            params.query, params.limit, source=params.source, namespace=params.namespace, legs=params.legs
        )
        return result.to_dict()

    async def do_status(_: NoParams) -> dict:
        counts = await lookup.counts_by_source(daemon.db)
        rows = await list_sources(daemon.db)
        report = []
        for row in rows:
            runtime = daemon.sources.get(row.name)
            tally = counts.get(row.id, lookup.SourceCounts())
            processed = tally.holds + tally.failed + tally.skipped
            entry = {
                "name": row.name,
                "kind": row.kind,
                "path": row.root,
                "namespace": row.namespace,
                "active": row.active,
                "done": tally.done,
                "merged": tally.merged,
                "holds": tally.holds,
                "failed": tally.failed,
                "skipped": tally.skipped,
                "in_progress": tally.scanning,
                "chunks": tally.chunks,
                "last_sweep_at": row.last_sweep_at,
                "last_error": row.last_sweep_error,
                "scanning": False,
                "discovered": None,
                "capped": 0,
                "pending": 0,
                "total": None,
                "processed": processed,
                "percent": None,
                "chunks_per_sweep": None,
                "deferred": 0,
                "next_sweep_at": None,
                "failures": await lookup.failures(daemon.db, row.id) if tally.failed else [],
            }
            if runtime is not None:
                progress = runtime.scanner.progress
                total = progress.discovered - progress.capped
                entry.update(
                    scanning=progress.running,
                    discovered=progress.discovered,
                    capped=progress.capped,
                    pending=progress.pending,
                    total=total,
                    percent=round(100.0 * min(processed, total) / total, 1) if total else 100.0,
                    chunks_per_sweep=daemon.budget.allowance(runtime.scanner.source_budget),
                    deferred=progress.deferred,
                    next_sweep_at=runtime.resume_at or daemon.next_sweep_at,
                )
            report.append(entry)
        db_path = daemon.settings.daemon.db_path
        return {
            "daemon": {
                "pid": os.getpid(),
                "version": __version__,
                "uptime_seconds": round(time.time() - daemon.started_at, 1),
                "config": str(daemon.config_path),
                "data_dir": str(daemon.settings.daemon.data_dir),
                "socket": str(daemon.settings.daemon.socket_path),
                "db_bytes": sum(
                    os.path.getsize(p) for p in (db_path, db_path.with_name(db_path.name + "-wal")) if p.exists()
                ),
            },
            "embedder": daemon.semantic.status(),
            "graph": await daemon.graph.status(),
            "library": {"documents": await lookup.library_documents(daemon.db)},
            "sources": report,
        }

    async def do_sources_list(_: NoParams) -> dict:
        """Configured sources and those only the index knows, with what each holds."""
        rows = {row.name: row for row in await list_sources(daemon.db)}
        counts = await lookup.counts_by_source(daemon.db)
        listed = []
        for source in daemon.settings.sources:
            row = rows.get(source.name)
            tally = counts.get(row.id, lookup.SourceCounts()) if row else lookup.SourceCounts()
            listed.append(
                {**source.model_dump(mode="json"), "kind": "folder", "in_config": True, "documents": tally.holds,
                 "shared": tally.merged, "chunks": tally.chunks}
            )  # fmt: skip
        for name, row in rows.items():
            if daemon.settings.source(name) is None and not row.removing:
                tally = counts.get(row.id, lookup.SourceCounts())
                listed.append(
                    {"name": name, "kind": row.kind, "path": row.root, "namespace": row.namespace,
                     "in_config": False, "documents": tally.holds, "shared": tally.merged,
                     "chunks": tally.chunks}
                )  # fmt: skip
        return {"sources": listed, "library_documents": await lookup.library_documents(daemon.db)}

    async def do_scan(params: ScanParams) -> dict:
        if params.name not in daemon.sources:
            raise NotFound(f"unknown source {params.name!r}; see `ken sources list`")
        task = daemon.request_sweep(params.name)
        if params.wait and task is not None:
            # Shielded: a client that hangs up must not cancel the sweep it waited on.
            await asyncio.shield(task)
            runtime = daemon.sources.get(params.name)
            result = runtime.scanner.progress.last_result if runtime else {}
            return {"name": params.name, "finished": True, "result": result}
        return {"name": params.name, "started": True}

    async def do_get(params: DocumentParams) -> dict:
        if params.item_id is not None:
            item = await lookup.get_item(daemon.db, params.item_id)
            if item is None:
                raise NotFound(f"no item {params.item_id}")
            return {"item": item.to_dict()}
        items = await lookup.get_document_items(daemon.db, params.document_id)
        if not items:
            raise NotFound(f"no document {params.document_id} (or it holds no chunks)")
        first = items[0]
        return {
            "document": {
                "document_id": first.document_id,
                "title": first.title,
                "source": first.source,
                "namespace": first.namespace,
                "path": first.path,
                "format": first.format,
            },
            "items": [item.to_dict() for item in items],
        }

    async def do_add_text(params: AddTextParams) -> dict:
        added = await add_text(
            daemon.db,
            TextDocument(params.title, params.text, params.source_uri, params.tags, params.namespace),
            daemon.settings.chunking,
        )
        daemon.work_arrived()
        return added.to_dict()

    async def fetch(request: FetchRequest):
        try:
            return await daemon.url_pool.send(request)
        except PoolTimeout as exc:
            raise FetchError(f"fetching {request.url} timed out: {exc}") from None

    async def do_add_url(params: UrlParams) -> dict:
        page = await fetch(FetchRequest(params.url))
        assert not isinstance(page, NotModified)
        added = await add_page(daemon.db, params.url, page, daemon.settings.chunking)
        daemon.work_arrived()
        return {**added.to_dict(), "url": page.url}

    async def do_refresh_url(params: UrlParams) -> dict:
        known = await lookup.page_state(daemon.db, page_key(params.url))
        if known is None:
            raise NotFound(f"{params.url} has not been added; `ken add-url {params.url}` adds it")
        page = await fetch(FetchRequest(params.url, known.etag, known.last_modified))
        if isinstance(page, NotModified):
            return {"document_id": known.document_id, "title": known.title, "uri": params.url, "changed": False}
        added = await add_page(daemon.db, params.url, page, daemon.settings.chunking)
        daemon.work_arrived()
        return {**added.to_dict(), "url": page.url, "changed": True}

    async def do_entities(params: EntitiesParams) -> dict:
        return {"entities": await graph.find_entities(daemon.db, params.query, params.limit)}

    async def do_remove_source(params: SourceNameParams) -> dict:
        row = next((row for row in await list_sources(daemon.db) if row.name == params.name), None)
        if row is None:
            raise NotFound(f"unknown source {params.name!r}; see `ken sources list`")
        if daemon.settings.source(params.name) is not None:
            await daemon.forget_source(params.name)
        removed = await remove_source(daemon.db, row.id)
        return {"name": params.name, "documents_removed": removed}

    async def do_dedup(_: NoParams) -> dict:
        run = await daemon.dedup.sweep()
        if run is None:
            raise NotFound("the vector index is still loading; try again in a moment")
        return run.to_dict()

    async def do_reload(_: NoParams) -> dict:
        return await daemon.reload()

    async def do_reembed(_: NoParams) -> dict:
        return {"dropped": await daemon.semantic.reembed()}

    return {
        "search": Method(SearchParams, do_search),
        "status": Method(NoParams, do_status),
        "sources.list": Method(NoParams, do_sources_list),
        "sources.scan": Method(ScanParams, do_scan),
        "documents.get": Method(DocumentParams, do_get),
        "reload": Method(NoParams, do_reload),
        "reembed": Method(NoParams, do_reembed),
        "documents.add": Method(AddTextParams, do_add_text),
        "urls.add": Method(UrlParams, do_add_url),
        "urls.refresh": Method(UrlParams, do_refresh_url),
        "entities": Method(EntitiesParams, do_entities),
        "sources.remove": Method(SourceNameParams, do_remove_source),
        "dedup": Method(NoParams, do_dedup),
    }

