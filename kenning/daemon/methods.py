"""The socket methods: each validates its params and calls one Library method.

Documented in docs/protocol.md. Nothing here decides anything; what a method does is
the Library's (kenning/service/library.py), so the MCP server and `ken` see the same.
"""

from __future__ import annotations

from kenning.daemon.protocol import (
    AddTextParams,
    DocumentParams,
    EntitiesParams,
    NoParams,
    ReadParams,
    ScanParams,
    SearchParams,
    SourceNameParams,
    UrlParams,
)
from kenning.daemon.server import Method
from kenning.ingest.text_docs import TextDocument
from kenning.service.library import Library


def build_methods(library: Library) -> dict[str, Method]:
    async def search(params: SearchParams):
        return await library.search(params.query, params.limit, params.source, params.namespace, params.legs)

    async def add_text(params: AddTextParams):
        document = TextDocument(params.title, params.text, params.source_uri, params.tags, params.namespace)
        return await library.add_text(document)

    return {
        "search": Method(SearchParams, search),
        "status": Method(NoParams, lambda _: library.status()),
        "sources.list": Method(NoParams, lambda _: library.sources_list()),
        "sources.scan": Method(ScanParams, lambda p: library.scan(p.name, p.wait)),
        "sources.remove": Method(SourceNameParams, lambda p: library.remove_source(p.name)),
        "documents.get": Method(DocumentParams, lambda p: library.get(p.item_id, p.document_id)),
        "documents.add": Method(AddTextParams, add_text),
        "urls.add": Method(UrlParams, lambda p: library.add_url(p.url)),
        "urls.refresh": Method(UrlParams, lambda p: library.refresh_url(p.url)),
        "entities": Method(EntitiesParams, lambda p: library.entities(p.query, p.limit)),
        "dedup": Method(NoParams, lambda _: library.dedup_now()),
        "reload": Method(NoParams, lambda _: library.reload()),
        "reembed": Method(NoParams, lambda _: library.reembed()),
        "documents.read": Method(
            ReadParams, lambda p: library.read_document(p.document_id, p.path, p.uri, p.line_start, p.line_end)
        ),
        "compact": Method(NoParams, lambda _: library.compact()),
    }
