"""How a tool reaches the daemon and how its answer reaches the agent.

A tool that cannot get an answer raises ToolError: the SDK turns it into a result with
`is_error` set and the message as its text, which the agent reads and can act on (start
the daemon, fix an id). Anything else a tool raises is a bug, logged with its traceback.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, TextContent
from pydantic import BaseModel

from kenning.client import AsyncClient
from kenning.errors import AnswerLost, DaemonTimeout, KenningError, RpcError, error_text
from kenning.text.controls import escaped


# Calls one session has at the daemon at once. Each is a connection of its own, and a
# host sending 700 tool calls together took all 512 the daemon allows: 188 of its calls,
# and any `ken` command meanwhile, were told "busy". The rest wait their turn here.
# Pages being fetched take places of their own: each may be waited for minutes while the
# daemon works through them, and sixteen slow pages held every place, so that a search
# waited behind them far past its timeout.
MAX_CALLS = 16
MAX_PAGE_CALLS = 16
# The daemon's code for a name that names nothing (docs/protocol.md).
NOT_FOUND = -32001
# How an agent tells whether a write the daemon stopped on was done (AnswerLost), and
# whether sending it again is safe, in this server's tools.
_CHECK = {
    "documents.add": "get(uri=...) with its uri shows whether it was stored; adding it again under that uri replaces"
    " it, never adds a copy",
    "documents.remove": "get(uri=...) with its uri shows whether it is still there",
    "urls.add": "get(uri=...) with the url shows the page once it is stored",
    "urls.refresh": "get(uri=...) with the url shows the page as it is stored",
    "memory.add": "recall_memory shows whether it was kept; remembering it again with the same title and scope"
    " updates that capsule, never adds a copy",
    "memory.forget": "recall_memory shows whether it is still kept",
    "archive.add": "archiving the same text again is safe: it gives back the same handle, once stored",
    "ledger.add": "ledger_render shows whether it was recorded; adding it again merges into the same entry",
    "ledger.remove": "ledger_render shows whether it is still there",
}


class DaemonError(ToolError):
    """The daemon's refusal, keeping its JSON-RPC code (None when it was not reached), so
    a resource read can tell a document that does not exist from a daemon that is down.

    Its message is plain text, not JSON, and many of the daemon's quote the value asked
    for as it came (`no capsule ...`, `no indexed document at ...`): an id or uri a
    hostile document talked the agent into sending with ESC or BEL in it came back whole
    in the host's view of the call, where a terminal acts on them (retitle the window,
    write the clipboard). Control characters in it are shown as escapes (`\\x1b`), as the
    CLI shows them on a terminal, and it is cut as `ken` cuts an error: each reply lands
    in the agent's context."""

    def __init__(self, message: str, code: int | None) -> None:
        super().__init__(error_text(escaped(message)))
        self.code = code


class DaemonCalls:
    def __init__(self, socket_path: Path, timeout: float, stage_timeout: float | None = None) -> None:
        """`stage_timeout`: how long a call that reports progress waits from each new stage
        (`urls.add`: a fetch, then a page's reading, each may take longer than `timeout`)."""
        self._client = AsyncClient(socket_path, timeout)
        self._timeout = timeout
        self._slots = asyncio.Semaphore(MAX_CALLS)
        self._page_slots = asyncio.Semaphore(MAX_PAGE_CALLS)
        self._stage_timeout = stage_timeout

    async def __call__(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        progress: Callable[[str], Awaitable[None]] | None = None,
    ) -> Any:
        """`progress` hears each stage a method that reports it reaches (docs/protocol.md)."""
        try:
            if progress is None:
                # One deadline for the wait for a place and the call: behind sixteen calls
                # to a daemon that had stopped answering, a call answered after twice the
                # timeout, the forty-eighth after three times.
                deadline = await self._place(self._slots, self._timeout, method, f"{MAX_CALLS} calls", "")
                try:
                    return await self._client.call(method, params, deadline=deadline)
                finally:
                    self._slots.release()
            # A page's wait for a place has the deadline its call has until the daemon tells
            # a stage: behind sixteen pages at a daemon that had stopped answering, the
            # seventeenth waited for them to give up, and then as long again itself.
            wait = self._stage_timeout if self._stage_timeout is not None else self._timeout
            deadline = await self._place(
                self._page_slots, wait, method, f"{MAX_PAGE_CALLS} page calls", ", so this one was not sent"
            )
            try:
                return await self._client.call(
                    method, params, progress=progress, stage_timeout=self._stage_timeout, deadline=deadline
                )
            finally:
                self._page_slots.release()
        except RpcError as exc:
            raise DaemonError(str(exc), exc.code) from None
        except (AnswerLost, DaemonTimeout) as exc:
            check = _CHECK.get(method) if exc.writes else None
            raise DaemonError(f"{exc}: {check}" if check else str(exc), None) from None
        except KenningError as exc:
            raise DaemonError(str(exc), None) from None

    @staticmethod
    async def _place(slots: asyncio.Semaphore, wait: float, method: str, places: str, after: str) -> float:
        """Take one of `slots` within `wait` seconds; the deadline (the event loop's time),
        which the call that follows keeps. Released by the caller."""
        deadline = asyncio.get_running_loop().time() + wait
        try:
            async with asyncio.timeout_at(deadline):
                await slots.acquire()
        except TimeoutError:
            raise DaemonError(
                f"kenning daemon did not answer {method!r} within {wait:g} s: the {places} this session may have at"
                f" the daemon at once were all still waiting for it{after}",
                None,
            ) from None
        return deadline


def answer(value: BaseModel | dict[str, Any]) -> CallToolResult:
    """The same answer twice: compact JSON text for the model (the SDK's own rendering is
    indented, which costs an agent tokens for nothing) and structured content for the host,
    which the SDK checks against the tool's output schema before it is sent."""
    data = value.model_dump(mode="json") if isinstance(value, BaseModel) else value
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=data)
