"""The library tools: search, get, list_sources, status and (when writes are allowed)
add_document, each a thin pass-through to one daemon method (docs/protocol.md).

A tool's docstring is its description and each parameter's Field description is part of
its input schema: that text is all an agent reads before calling, so it says what to pass
and what comes back.
"""

from __future__ import annotations

from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, ToolAnnotations
from pydantic import Field

from kenning.mcp.calls import DaemonCalls, answer
from kenning.mcp.models import Added, Chunk, Document, Page, SearchResult

READ_ONLY = ToolAnnotations(read_only_hint=True, open_world_hint=False)
# The same uri again replaces that document: not additive, but a repeat changes nothing more.
WRITES = ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=True, open_world_hint=False)
DEFAULT_PAGE = 10


def register(server: MCPServer, daemon: DaemonCalls, allow_writes: bool) -> None:
    @server.tool(annotations=READ_ONLY)
    async def search(
        query: Annotated[str, Field(min_length=1, max_length=4000, description="words or a question")],
        limit: Annotated[int, Field(ge=1, le=200, description="hits to return")] = 10,
        source: Annotated[str | None, Field(description="only this source (names from list_sources)")] = None,
        namespace: Annotated[str | None, Field(description="only sources in this namespace")] = None,
    ) -> Annotated[CallToolResult, SearchResult]:
        """Search the user's local library (notes, documents, code, saved pages) by keyword,
        meaning and entity. Each hit cites its file (`path`, `line_start`-`line_end`,
        `section`) and shows a snippet; cite hits as path:line_start-line_end. Read a hit in
        full with get(item_id), or the text around it with get(document_id, offset)."""
        params: dict[str, Any] = {"query": query, "limit": limit}
        if source is not None:
            params["source"] = source
        if namespace is not None:
            params["namespace"] = namespace
        return answer(SearchResult.model_validate(await daemon("search", params)))

    @server.tool(annotations=READ_ONLY)
    async def get(
        item_id: Annotated[int | None, Field(description="one chunk, from a search hit")] = None,
        document_id: Annotated[int | None, Field(description="a whole document, a page of chunks at a time")] = None,
        offset: Annotated[
            int | None, Field(ge=0, description="with document_id: first chunk to return (a chunk's ord; default 0)")
        ] = None,
        limit: Annotated[
            int | None, Field(ge=1, le=100, description=f"with document_id: chunks to return (default {DEFAULT_PAGE})")
        ] = None,
    ) -> Annotated[CallToolResult, Page]:
        """Read indexed text in full, with citations. Give exactly one of item_id (the chunk
        a search hit names) or document_id (the document, in pages of chunks: offset and
        limit; `next_offset` says where the next page starts). To read around a hit, pass
        its document_id with an offset a little before the chunk's `ord`."""
        if (item_id is None) == (document_id is None):
            raise ToolError("give exactly one of item_id or document_id")
        if item_id is not None:
            if offset is not None or limit is not None:
                raise ToolError("offset and limit page a document: pass them with document_id, not item_id")
            item = (await daemon("documents.get", {"item_id": item_id}))["item"]
            page = Page(
                document=Document.model_validate(item),
                chunks=[Chunk.model_validate(item)],
                total_chunks=None,
                next_offset=None,
            )
            return answer(page)
        found = await daemon("documents.get", {"document_id": document_id})
        chunks = found["items"]
        start = offset or 0
        if start >= len(chunks):
            raise ToolError(
                f"offset {start} is past the end: document {document_id} has {len(chunks)} chunks (ord 0-{len(chunks) - 1})"
            )
        end = start + (limit or DEFAULT_PAGE)
        page = Page(
            document=Document.model_validate(found["document"]),
            chunks=[Chunk.model_validate(chunk) for chunk in chunks[start:end]],
            total_chunks=len(chunks),
            next_offset=end if end < len(chunks) else None,
        )
        return answer(page)

    @server.tool(annotations=READ_ONLY)
    async def list_sources() -> Annotated[CallToolResult, dict[str, Any]]:
        """The library's sources: each folder kenning watches (`name`, `path`, `namespace`)
        and the `agent` and `web` sources, with the documents and chunks each holds. Use a
        name or namespace to scope search."""
        return answer(await daemon("sources.list"))

    @server.tool(annotations=READ_ONLY)
    async def status() -> Annotated[CallToolResult, dict[str, Any]]:
        """Whether the library is up to date: the daemon, embedding and entity-extraction
        progress, and per source the files indexed, failed (with reasons), pending and the
        last sweep. Check it when search misses something that should be there."""
        return answer(await daemon("status"))

    if not allow_writes:
        return

    @server.tool(annotations=WRITES)
    async def add_document(
        title: Annotated[str, Field(min_length=1, max_length=500)],
        text: Annotated[str, Field(min_length=1, max_length=10_000_000, description="the document's text")],
        uri: Annotated[
            str,
            Field(
                min_length=1,
                max_length=4000,
                description="identity label, never opened or fetched; the same uri again replaces that document",
            ),
        ],
        tags: Annotated[tuple[Annotated[str, Field(max_length=200)], ...], Field(max_length=64)] = (),
        namespace: Annotated[str | None, Field(min_length=1, max_length=64)] = None,
    ) -> Annotated[CallToolResult, Added]:
        """Store text in the library (the `agent` source), so that search finds it and cites
        it by its uri. Credentials in the text are redacted before it is stored."""
        params: dict[str, Any] = {"title": title, "text": text, "source_uri": uri, "tags": list(tags)}
        if namespace is not None:
            params["namespace"] = namespace
        return answer(Added.model_validate(await daemon("documents.add", params)))
