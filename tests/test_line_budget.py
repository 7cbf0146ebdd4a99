"""The line budget shared by all connections (kenning/daemon/framing.py), on a real
RpcServer over its real Unix socket, with a budget small enough to fill in a test."""

from __future__ import annotations

import asyncio
import json
import tempfile
from pathlib import Path

from pydantic import BaseModel

from kenning.daemon import protocol
from kenning.daemon.server import Method, RpcServer

MIB = 1 << 20


class _Text(BaseModel):
    text: str


async def _length(params: _Text) -> dict:
    return {"chars": len(params.text)}


async def test_lines_that_together_need_more_than_the_budget_are_read_in_turn_not_all_dropped(monkeypatch):
    """Each line took the budget a chunk at a time as it arrived and kept what it had while
    it waited for more, so lines arriving together that needed more than the budget in
    all each held part of it and waited for the others: none finished, and every one was
    dropped at socket_line_timeout. Six 40 MB documents added at once all failed."""
    monkeypatch.setattr(protocol, "LINE_BUDGET_BYTES", 8 * MIB)
    folder = Path(tempfile.mkdtemp(prefix="kb", dir="/tmp"))
    server = RpcServer(folder / "s.sock", {"length": Method(_Text, _length)}, idle_seconds=30, line_seconds=3)
    await server.start()
    chars = 5 * MIB  # 4 MiB past each line's first: 12 MiB for three, against 8
    line = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "length", "params": {"text": "a" * chars}}).encode()
    line += b"\n"
    half = len(line) * 7 // 10
    try:
        connections = [await asyncio.open_unix_connection(str(server.path)) for _ in range(3)]
        # Each sends most of its line first, so each holds part of the budget...
        for _, writer in connections:
            writer.write(line[:half])
        await asyncio.gather(*(writer.drain() for _, writer in connections))
        await asyncio.sleep(0.3)
        # ...and then the rest, which is more than the budget has left for all of them.
        for _, writer in connections:
            writer.write(line[half:])
        answers = await asyncio.gather(
            *(asyncio.wait_for(reader.readline(), 20) for reader, _ in connections),
            *(writer.drain() for _, writer in connections),
        )
        for answer in answers[:3]:
            assert json.loads(answer).get("result") == {"chars": chars}, answer[:200]
        assert server._line_budget.free == 8 * MIB  # all of it given back
    finally:
        for _, writer in connections:
            writer.close()
        await server.stop()
