"""The socket methods: each validates its params and calls one Library method.

Documented in docs/protocol.md. Nothing here decides anything; what a method does is
the Library's (kenning/service/library.py), so the MCP server and `ken` see the same.
"""

from __future__ import annotations

from dataclasses import replace

from kenning.daemon.protocol import (
    AddTextParams,
    ArchiveAddParams,
    ArchiveRecallParams,
    CapsuleParams,
    ContextPackParams,
    DocumentParams,
    EntitiesParams,
    LedgerAddParams,
    LedgerListParams,
    LedgerRemoveParams,
    LedgerRenderParams,
    MemoryAddParams,
    MemoryCurateParams,
    MemoryListParams,
    MemoryRecallParams,
    NoParams,
    ReadParams,
    PageParams,
    ScanParams,
    SearchParams,
    SourceNameParams,
    UrlParams,
    UriParams,
)
from kenning.daemon.server import Method
from kenning.ingest.text_docs import TextDocument
from kenning.service.library import Library
from kenning.service.memory import NewCapsule


# Stopped when their client goes before the answer (hangup.py): the reads, whose answer
# no one else will read. A page is stopped so only when its request asks (`cancel_on_close`);
# other writes run to their end.
STOPPED_ON_HANGUP = frozenset(
    {
        "search", "status", "sources.list", "documents.get", "documents.read", "entities", "memory.recall",
        "memory.show", "memory.list", "archive.recall", "archive.list", "ledger.render", "ledger.list",
        "context.pack",
    }
)  # fmt: skip


def _text_fields(fields: dict[str, str | int | float] | None) -> dict[str, str] | None:
    return None if fields is None else {name: str(value) for name, value in fields.items()}


def build_methods(library: Library) -> dict[str, Method]:
    async def search(params: SearchParams):
        return await library.search(
            params.query, params.limit, params.source, params.namespace, params.legs, params.kind,
            params.since, params.until,
        )

    async def get(p: DocumentParams):
        return await library.get(
            p.item_id, p.document_id, p.uri, p.path, p.offset, p.limit, p.line_start, p.line_end, p.source, p.version
        )

    async def memory_add(p: MemoryAddParams):
        capsule = NewCapsule(p.title, p.body, p.kind, p.scope, p.tags, p.confidence, p.source, p.supersedes, p.force)
        return await library.memory_add(capsule)

    async def add_text(params: AddTextParams):
        document = TextDocument(
            params.title, params.text, params.source_uri, params.tags, params.namespace, params.date, params.supersedes
        )
        return await library.add_text(document)

    methods = {
        "search": Method(SearchParams, search),
        "status": Method(NoParams, lambda _: library.status()),
        "sources.list": Method(NoParams, lambda _: library.sources_list()),
        "sources.scan": Method(ScanParams, lambda p: library.scan(p.name, p.wait)),
        "sources.remove": Method(SourceNameParams, lambda p: library.remove_source(p.name)),
        "documents.get": Method(DocumentParams, get),
        "documents.add": Method(AddTextParams, add_text),
        "documents.remove": Method(UriParams, lambda p: library.remove_text(p.uri)),
        "urls.add": Method(UrlParams, lambda p, progress: library.add_url(p.url, progress), reports=True),
        "urls.refresh": Method(UrlParams, lambda p, progress: library.refresh_url(p.url, progress), reports=True),
        "entities": Method(EntitiesParams, lambda p: library.entities(p.query, p.limit)),
        "dedup": Method(NoParams, lambda _: library.dedup_now()),
        "reload": Method(NoParams, lambda _: library.reload()),
        "reembed": Method(NoParams, lambda _: library.reembed()),
        "documents.read": Method(
            ReadParams,
            lambda p: library.read_document(p.document_id, p.path, p.uri, p.line_start, p.line_end, p.source),
        ),
        "compact": Method(NoParams, lambda _: library.compact()),
        "memory.add": Method(MemoryAddParams, memory_add),
        "memory.recall": Method(MemoryRecallParams, lambda p: library.memory_recall(p.query, p.limit, p.scope, p.kind)),
        "memory.show": Method(CapsuleParams, lambda p: library.memory_show(p.id)),
        "memory.list": Method(
            MemoryListParams, lambda p: library.memory_list(p.scope, p.kind, p.superseded, p.limit, p.offset, p.cursor)
        ),
        "memory.forget": Method(CapsuleParams, lambda p: library.memory_forget(p.id)),
        "memory.curate": Method(MemoryCurateParams, lambda p: library.memory_curate(p.scope, p.limit)),
        "archive.add": Method(ArchiveAddParams, lambda p: library.archive_add(p.text, p.title, p.tags)),
        "archive.recall": Method(
            ArchiveRecallParams, lambda p: library.archive_recall(p.handle, p.offset, p.limit, p.version)
        ),
        "archive.list": Method(PageParams, lambda p: library.archive_list(p.limit, p.offset, p.cursor)),
        "ledger.add": Method(
            LedgerAddParams, lambda p: library.ledger_add(p.section, _text_fields(p.fields), p.owner, p.evidence)
        ),
        "ledger.remove": Method(
            LedgerRemoveParams, lambda p: library.ledger_remove(p.id, p.section, _text_fields(p.fields))
        ),
        "ledger.render": Method(LedgerRenderParams, lambda p: library.ledger_render(p.budget, p.sections or ())),
        "ledger.list": Method(LedgerListParams, lambda p: library.ledger_list(p.section)),
        "context.pack": Method(
            ContextPackParams, lambda p: library.context_pack(p.task, p.budget, p.source, p.namespace, p.kind)
        ),
    }
    return {name: replace(method, stops_on_hangup=name in STOPPED_ON_HANGUP) for name, method in methods.items()}
