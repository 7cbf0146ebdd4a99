"""Driving `ken mcp` as an agent's host does: the MCP SDK's own stdio client starts
`python -m kenning mcp` as a child process and speaks MCP to it over its stdin/stdout."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from mcp import Client, StdioServerParameters, stdio_client
from mcp.types import CallToolResult


@asynccontextmanager
async def ken_mcp(
    config: Path, log: Path, mode: str = "auto", page_wait_margin: float | None = None
) -> AsyncIterator[Client]:
    """The server's stderr goes to `log`; the host's environment is the SDK's minimal
    one, plus PYTHONPATH so the child imports this checkout. `mode="legacy"` connects with
    the initialize handshake, as hosts built on earlier SDKs do. `page_wait_margin` sets
    kenning.client.PAGE_WAIT_MARGIN in the child (30 s, which no config sets), so a test
    of a page's wait does not take half a minute."""
    env = {"PYTHONPATH": os.environ["PYTHONPATH"]} if "PYTHONPATH" in os.environ else None
    start = ["-m", "kenning"]
    if page_wait_margin is not None:
        start = ["-c", f"import kenning.client; kenning.client.PAGE_WAIT_MARGIN = {page_wait_margin!r}\n"
                 "from kenning.cli import main; main()"]  # fmt: skip
    params = StdioServerParameters(command=sys.executable, args=[*start, "--config", str(config), "mcp"], env=env)
    with open(log, "w") as errlog:
        async with Client(stdio_client(params, errlog=errlog), mode=mode) as client:
            yield client


def data(result: CallToolResult) -> Any:
    """The structured answer, checked to be what the text content says."""
    assert not result.is_error, result.content
    assert json.loads(result.content[0].text) == result.structured_content
    return result.structured_content


def error_text(result: CallToolResult) -> str:
    assert result.is_error
    assert result.structured_content is None
    return result.content[0].text
