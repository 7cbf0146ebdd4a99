"""Documents as MCP resources: `kenning://document/{document_id}` reads one whole.

A host that shows resources (attach a file to the conversation) can offer the documents a
search found without a tool call. There is one template rather than a list of every
document: a library holds tens of thousands, and the ids come from search hits. The text
is the document's lines as `get` rebuilds them, read a page at a time until the end.
"""

from __future__ import annotations

from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError

from kenning.mcp.calls import NOT_FOUND, DaemonCalls, DaemonError

TEMPLATE = "kenning://document/{document_id}"
# Reads of a document that keeps changing before one is whole.
READ_TRIES = 3


def register(server: MCPServer, daemon: DaemonCalls) -> None:
    @server.resource(
        TEMPLATE,
        name="document",
        title="A document of the library",
        description="The whole text of a document, by the document_id a search hit or get names.",
        mime_type="text/plain",
    )
    async def document(document_id: str) -> str:
        # Taken as text and checked here: declared an int, an id that is no number
        # ("abc") or one past 64 bits failed inside the SDK or the daemon's params as an
        # internal error (-32603), where a host is told to fix the uri (-32602).
        number = document_id.isascii() and document_id.isdigit() and len(document_id) <= 19
        if not number or int(document_id) >= 2**63:
            raise ResourceNotFoundError(f"no document {document_id}: a document id is a number a search hit names")
        for _ in range(READ_TRIES):
            text = await _whole(daemon, int(document_id))
            if text is not None:
                return text
        raise ResourceError(f"document {document_id} changed {READ_TRIES} times while it was read; read it again")


async def _whole(daemon: DaemonCalls, document_id: int) -> str | None:
    """The document's lines, a page at a time, or None if it changed between two pages: a
    file saved again while it is read (a log written to) gave the first pages of one text
    and the rest of another, joined as a text that never existed."""
    pages: list[str] = []
    line: int | None = 1
    first: str | None = None
    while line is not None:
        params: dict[str, Any] = {"document_id": document_id, "line_start": line}
        try:
            found = await daemon("documents.get", params)
        except DaemonError as exc:
            # No such document is the caller's to fix (-32602, as MCP has it); a
            # daemon that is not running is the server's failure (-32603).
            raise (ResourceNotFoundError if exc.code == NOT_FOUND else ResourceError)(str(exc)) from None
        first = first or found["version"]
        if found["version"] != first:
            return None
        lines = found["lines"]
        pages.append(lines["text"])
        line = lines["next_line"]
    return "\n".join(pages)
