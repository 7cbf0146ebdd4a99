"""The MCP server `ken mcp` runs on stdin/stdout, built on the official SDK's MCPServer.

It holds no index and no state of its own: every tool call is a fresh call to the daemon's
socket, so the server starts without a daemon (each tool then answers with an error saying
so) and carries on across daemon restarts. Stdout is the protocol; logs go to stderr.
"""

from __future__ import annotations

import gc
import io
import json
import logging
import os
import re
import signal
import sys
from collections.abc import AsyncIterable, AsyncIterator
from typing import Any, NoReturn

import anyio
import msgspec
from anyio.streams.memory import MemoryObjectSendStream
from mcp import MCPError
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from mcp.types import GetPromptResult, InputRequiredResult
from mcp_types import INVALID_PARAMS, INVALID_REQUEST, PARSE_ERROR, ErrorData, JSONRPCError
from pydantic import ConfigDict, ValidationError

from kenning import __version__, logs
from kenning.client import page_wait
from kenning.config import Settings
from kenning.mcp import agent_tools, library_tools, resources
from kenning.mcp.calls import DaemonCalls

log = logging.getLogger(__name__)

_GUIDE = (
    "kenning is the user's local knowledge library: their notes, documents, code and saved pages, "
    "indexed on this machine. Use `search` first; each hit cites its file as `path` with "
    "`line_start`-`line_end` and names an `item_id`. Read a hit in full with get(item_id=...), or "
    "the lines around it with get(document_id=..., line_start=..., line_end=...). When you use what you "
    "found, cite it as path:line_start-line_end. If a search misses something that should be there, "
    "`status` says whether indexing is still running or a file failed. `context_pack` gives the "
    "documents to read for a task within a byte budget; `recall_memory` the capsules kept for it."
)
_MEMORY_ON = (
    "Keep what you learn with `remember` (a near-identical capsule is refused with its id: supersede "
    "or force), park large outputs with `archive` and read them back with `recall(handle)`, and "
    "record confirmed facts with `ledger_add`; `ledger_render` gives them back as one block."
)
_MEMORY_OFF = "Memory writes are off (`[mcp] memory = false`): capsules, archives and the ledger are read-only."
_WRITES_ON = (
    "`add_document` stores text you give it in the library, under a uri you choose; `remove_document` removes it."
    " `add_url` saves a web page from a host the user allowed; `refresh_url` fetches it again."
)
_WRITES_OFF = (
    "Writing is off: this server offers no add_document, remove_document, add_url or refresh_url tool. The user"
    " can turn it on with `allow_writes = true` under `[mcp]` in kenning's config.toml."
)


class _Server(MCPServer):
    async def get_prompt(
        self, name: str, arguments: dict[str, Any] | None = None, context: Context | None = None
    ) -> GetPromptResult | InputRequiredResult:
        """An unknown prompt is invalid params (-32602), as the MCP spec has it; the SDK
        raises a plain ValueError for it, which its dispatcher answers with code 0, an
        error a host cannot tell from any other failure."""
        offered = sorted(prompt.name for prompt in await self.list_prompts())
        if name not in offered:
            listed = ", ".join(offered) if offered else "none"
            raise MCPError(INVALID_PARAMS, f"Unknown prompt: {name!r}; this server offers {listed}")
        return await super().get_prompt(name, arguments, context)


async def _explain_uninitialized(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
    """A request before the initialize handshake gets the SDK's "Invalid request
    parameters" with nothing else, which sends a host looking for a fault in its
    arguments. Said here what it is, with the same code: the SDK pins it for hosts
    that key off it."""
    try:
        return await call_next(ctx)
    except MCPError as exc:
        gate = (exc.code, exc.message, exc.data) == (INVALID_PARAMS, "Invalid request parameters", "")
        if not gate or ctx.method == "initialize" or ctx.session.client_params is not None:
            raise
        raise MCPError(
            INVALID_PARAMS,
            f"{ctx.method} before the session is initialized: send `initialize`, then"
            " `notifications/initialized`, and then requests",
        ) from None


def build_server(settings: Settings) -> MCPServer:
    allow_writes = settings.mcp.allow_writes
    memory = settings.mcp.memory
    server = _Server(
        "kenning",
        version=__version__,
        instructions=(
            f"{_GUIDE} {_MEMORY_ON if memory else _MEMORY_OFF} {_WRITES_ON if allow_writes else _WRITES_OFF}"
        ),
        middleware=[_explain_uninitialized],
    )
    # A page's fetch and its reading may each take their whole limit; a stage the daemon
    # reports starts the wait again (AsyncClient.call), as `ken add-url` waits.
    stage_timeout = max(settings.mcp.timeout, page_wait(settings))
    daemon = DaemonCalls(settings.daemon.socket_path, settings.mcp.timeout, stage_timeout)
    library_tools.register(server, daemon, allow_writes)
    agent_tools.register(server, daemon, memory)
    resources.register(server, daemon)
    _strict_arguments(server)
    return server


def _strict_arguments(server: MCPServer) -> None:
    """Tool arguments are taken as the socket takes params: an argument a tool does not
    take is an error (an agent's misspelt `namespaces` would otherwise search the whole
    library without a word), and so is a value of the wrong JSON type (`"5"` for a
    limit, `"true"` for a flag), which the SDK's models would convert, so an agent never
    learns its call was not what the schema says. The SDK offers no setting for either,
    so each tool's model is replaced by a strict subclass that forbids extra keys
    (FuncMetadata reads its model anew on each call), and its published schema says so
    (`additionalProperties: false`). The SDK lists its Tool objects only through the
    server's private tool manager; `mcp` is pinned below 3 and tests/test_mcp_e2e.py
    fails if that changes.

    A strict model is built at its tool's first call, and its schema is the SDK's with
    that one key added, which is what it generates: built here and its schema generated
    again, every tool's arguments were worked through twice before `initialize` was
    answered."""
    for tool in server._tool_manager.list_tools():
        model = tool.fn_metadata.arg_model
        config = ConfigDict({**model.model_config, "extra": "forbid", "strict": True, "defer_build": True})
        tool.fn_metadata.arg_model = type(model.__name__, (model,), {"model_config": config})
        tool.parameters = {**tool.parameters, "additionalProperties": False}


# A UTF-16 surrogate escape ("\ud83d"): half of a pair, which alone is no character.
_SURROGATE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


def _lenient_id(line: Any) -> Any:
    """The id of a line the SDK's parser refuses and Python's reads: one holding half of a
    surrogate pair (a host cutting an emoji in two), which Python decodes as it is."""
    if not isinstance(line, str):
        return None
    try:
        message = json.loads(line)
    except (ValueError, RecursionError):
        return None
    return message["id"] if isinstance(message, dict) and type(message.get("id")) in (int, str) else None


def _refusal(exc: Exception) -> JSONRPCError:
    """The JSON-RPC error for a line of stdin that is no MCP message: -32700 for one that
    is not JSON, else -32600, answering the request's `id` when the line names one (so
    the host's call ends now rather than at its timeout), else null."""
    errors = exc.errors() if isinstance(exc, ValidationError) else []
    if not errors or any(error["type"] == "json_invalid" for error in errors):
        line = next((error.get("input") for error in errors if error["type"] == "json_invalid"), None)
        request_id = _lenient_id(line)
        found = _SURROGATE.search(line) if request_id is not None else None
        if found is not None:
            message = f"Parse error: {found.group()} is half of a UTF-16 surrogate pair, not a character"
        else:
            message = "Parse error: the line is not JSON"
        return JSONRPCError(jsonrpc="2.0", id=request_id, error=ErrorData(code=PARSE_ERROR, message=message))
    request_id: Any = None
    for error in errors:
        given = error.get("input")
        if isinstance(given, dict) and type(given.get("id")) in (int, str):
            request_id = given["id"]
            break
    message = "Invalid request: the line is JSON but no JSON-RPC 2.0 message"
    return JSONRPCError(jsonrpc="2.0", id=request_id, error=ErrorData(code=INVALID_REQUEST, message=message))


class _Envelope(msgspec.Struct):
    """The two members of a line that say whether it is a request; the rest is skipped
    unread (a line may hold a 10 MB document)."""

    id: Any = msgspec.UNSET
    method: Any = msgspec.UNSET


def _id_refusal(line: str) -> JSONRPCError | None:
    """The error for a request whose `id` is neither a string nor an integer (1.5, an
    object, true, null), which MCP does not allow. The SDK's parser reads such a line as
    a notification and drops it, so the host that sent it waited for ever; JSON-RPC
    answers an invalid request with id null. None for any other line, left to the SDK."""
    try:
        envelope = msgspec.json.decode(line, type=_Envelope)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None
    given = envelope.id
    if envelope.method is msgspec.UNSET or given is msgspec.UNSET or type(given) in (int, str):
        return None
    if type(given) is float:
        what = f"the number {given!r}"
    else:
        what = {dict: "an object", list: "an array", bool: json.dumps(given), type(None): "null"}.get(
            type(given), "no string or integer"
        )
    message = f"Invalid request: its id is {what}; a request's id must be a string or an integer"
    return JSONRPCError(jsonrpc="2.0", id=None, error=ErrorData(code=INVALID_REQUEST, message=message))


async def _requests(
    lines: AsyncIterable[str], refused: MemoryObjectSendStream[JSONRPCError]
) -> AsyncIterator[str]:
    """stdin's lines for the SDK's transport, less the two kinds it mishandles: a blank
    line, which it answered with a parse error where the daemon's socket skips it, and a
    request with an id it cannot take (_id_refusal), whose refusal goes to `refused`."""
    async for line in lines:
        if line.isspace():
            continue
        if (refusal := _id_refusal(line)) is not None:
            await refused.send(refusal)
            continue
        yield line


async def _serve_stdio(server: MCPServer) -> None:
    """The SDK's stdio transport and server loop, with one thing added: the transport
    hands a line it cannot parse to the server as an exception, which the server drops
    with a debug log, so a host that sent one never hears back and its call hangs until
    its own timeout. Here such a line is answered with the JSON-RPC error for it and
    logged, and so is a request the SDK would take for a notification (_id_refusal); a
    blank line is skipped; every other message passes through untouched."""
    lowlevel = server._lowlevel_server  # the SDK's own run_stdio_async does the same
    refused_in, refused = anyio.create_memory_object_stream[JSONRPCError](0)
    # Read as the SDK reads stdin by default (UTF-8, a bad byte replaced), but through
    # _requests; an explicit stdin is not diverted from fd 0, which nothing here reads.
    wire = anyio.wrap_file(io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8", errors="replace"))
    # The SDK only iterates its stdin (`async for line in stdin`), which _requests does.
    async with stdio_server(stdin=_requests(wire, refused_in)) as (read_stream, write_stream):  # type: ignore[arg-type]
        messages_in, messages = anyio.create_memory_object_stream[SessionMessage | Exception](0)

        async def answer_refused() -> None:
            async with refused:
                try:
                    async for refusal in refused:
                        log.warning("stdin line refused: %s", refusal.error.message)
                        await write_stream.send(SessionMessage(refusal))
                except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                    return

        async def relay() -> None:
            async with messages_in:
                try:
                    async for item in read_stream:
                        if isinstance(item, Exception):
                            refusal = _refusal(item)
                            log.warning("stdin line refused: %s", refusal.error.message)
                            await write_stream.send(SessionMessage(refusal))
                            continue
                        await messages_in.send(item)
                except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                    # The server loop ended first: the session is over, as it is when
                    # stdin closes.
                    return

        async with anyio.create_task_group() as tasks:
            tasks.start_soon(relay)
            tasks.start_soon(answer_refused)
            try:
                await lowlevel.run(messages, write_stream, lowlevel.create_initialization_options())
            except anyio.get_cancelled_exc_class():
                # Not cancelled here (the relay failing): by the transport.
                if not tasks.cancel_scope.cancel_called:
                    _stopped_reading()
                raise
            tasks.cancel_scope.cancel()


def _stopped_reading() -> NoReturn:
    """The transport cancels the server when a write to stdout fails: the client closed
    its end (SIGINT ends the process without coming here, and the end of stdin ends the
    loop without a cancellation). The transport then waits for its stdin reader, a thread
    blocked reading a line that no cancellation reaches, so the server would live on,
    answering no one, until the client closed stdin too, and end with a traceback of the
    broken pipe. Nothing is lost by leaving now: every call's work is the daemon's."""
    log.warning("the client stopped reading stdout (it closed its end); exiting")
    logging.shutdown()
    os._exit(0)


def serve(settings: Settings) -> None:
    """Blocks until the client closes stdin, stops reading stdout, or sends SIGINT or
    SIGTERM (which end the process)."""
    # Configured before the SDK's own logging setup, which then leaves it alone.
    logs.configure(settings.daemon.log_level)
    # SIGINT ends the process as SIGTERM does. Raised as KeyboardInterrupt, it cancelled
    # the loop, which then waited for the SDK's stdin reader, a worker thread blocked in a
    # read no cancellation reaches: Ctrl-C did nothing until the next line or the end of
    # stdin. There is nothing to save: every call's work is the daemon's.
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    server = build_server(settings)
    # What start-up made (the SDK's models, the tools) lives as long as the process: frozen,
    # no collection goes over it again. `ken mcp` turned the collector off while it was made.
    gc.freeze()
    gc.enable()
    anyio.run(_serve_stdio, server)
