"""The line budget shared by all connections (kenning/daemon/framing.py), on a real
RpcServer over its real Unix socket, with a budget small enough to fill in a test."""

from __future__ import annotations

import asyncio
import json
import tempfile
from pathlib import Path

import pytest
from pydantic import BaseModel

from kenning.client import AsyncClient, Client
from kenning.daemon import protocol
from kenning.daemon.server import Method, RpcServer
from kenning.errors import RpcError

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


class _Gated:
    """A `length` method whose large requests wait at a gate the test opens, so requests
    can be caught waiting their turn for LARGE_REQUESTS_AT_ONCE."""

    def __init__(self) -> None:
        self.gate = asyncio.Event()
        self.entered = 0

    async def full(self) -> None:
        """Until LARGE_REQUESTS_AT_ONCE requests wait at the gate (20 s at most)."""
        for _ in range(200):
            if self.entered == protocol.LARGE_REQUESTS_AT_ONCE:
                break
            await asyncio.sleep(0.1)
        assert self.entered == protocol.LARGE_REQUESTS_AT_ONCE

    async def __call__(self, params: _Text) -> dict:
        if len(params.text) > 1000:
            self.entered += 1
            await self.gate.wait()
        return {"chars": len(params.text)}


async def _settled(writers: list[asyncio.StreamWriter]) -> list[int]:
    """The bytes each client has not yet got out to the daemon, once that stops changing."""
    sizes, steady = None, 0
    for _ in range(200):
        now = [writer.transport.get_write_buffer_size() for writer in writers]
        steady = steady + 1 if now == sizes else 0
        if steady >= 5:
            break
        sizes = now
        await asyncio.sleep(0.2)
    assert sizes is not None
    return sizes


async def test_large_requests_waiting_their_turn_count_against_the_budget(monkeypatch):
    """Requests over LARGE_REQUEST_BYTES are handled two at a time; the ones waiting for a
    turn held their whole line outside the budget, so the daemon read in every line sent
    to it however many there were: forty 45 MB documents at once held 1.8 GB. Now a line
    stays charged until it is answered, new lines wait for the budget, and every one is
    still answered in the end. A small request is answered meanwhile."""
    monkeypatch.setattr(protocol, "LINE_BUDGET_BYTES", 16 * MIB)
    monkeypatch.setattr(protocol, "MAX_LINE_BYTES", 10 * MIB)  # and so the overdraw: 26 MiB in all
    method = _Gated()
    folder = Path(tempfile.mkdtemp(prefix="kb", dir="/tmp"))
    server = RpcServer(folder / "s.sock", {"length": Method(_Text, method)}, idle_seconds=120, line_seconds=120)
    await server.start()
    chars = 9 * MIB  # 8 MiB past each line's first: three whole lines fit in 26 MiB, not four
    line = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "length", "params": {"text": "a" * chars}}).encode()
    line += b"\n"
    connections = []
    try:
        for _ in range(12):
            connections.append(await asyncio.open_unix_connection(str(server.path)))
            connections[-1][1].write(line)
        writers = [writer for _, writer in connections]
        await method.full()
        unsent = await _settled(writers)
        taken_whole = sum(size == 0 for size in unsent)
        # Three whole lines and parts of others (the last few MiB of a part sit in the
        # daemon's read buffers); before, all twelve were read in.
        assert taken_whole <= 6, unsent
        small = await asyncio.open_unix_connection(str(server.path))
        connections.append(small)
        small[1].write(b'{"jsonrpc": "2.0", "id": 2, "method": "length", "params": {"text": "abc"}}\n')
        assert json.loads(await asyncio.wait_for(small[0].readline(), 30))["result"] == {"chars": 3}
        method.gate.set()
        answers = await asyncio.gather(
            *(asyncio.wait_for(reader.readline(), 60) for reader, _ in connections[:12]),
            *(writer.drain() for writer in writers),
        )
        for answer in answers[:12]:
            assert json.loads(answer).get("result") == {"chars": chars}, answer[:200]
    finally:
        for _, writer in connections:
            writer.close()
        await server.stop()
    assert server._line_budget.free == 16 * MIB  # all of it given back


async def test_a_line_kept_waiting_for_the_budget_past_the_line_timeout_is_still_answered(monkeypatch):
    """The line timeout is for clients that send too slowly. Time a line spends waiting
    for the budget other large requests hold is the daemon's: lines counted it, and of
    eight documents sent at once to a daemon busy with two, the later ones were dropped
    (or told BUSY) though their clients had sent in time. All eight are answered now."""
    monkeypatch.setattr(protocol, "LINE_BUDGET_BYTES", 16 * MIB)
    monkeypatch.setattr(protocol, "MAX_LINE_BYTES", 10 * MIB)
    method = _Gated()
    folder = Path(tempfile.mkdtemp(prefix="kb", dir="/tmp"))
    server = RpcServer(folder / "s.sock", {"length": Method(_Text, method)}, idle_seconds=120, line_seconds=2)
    await server.start()
    chars = 9 * MIB
    line = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "length", "params": {"text": "a" * chars}}).encode()
    line += b"\n"
    connections = []
    try:
        for _ in range(8):
            connections.append(await asyncio.open_unix_connection(str(server.path)))
            connections[-1][1].write(line)
        answers = [asyncio.ensure_future(reader.readline()) for reader, _ in connections]
        await method.full()
        # The rest wait for the budget twice as long as a line may take to arrive.
        await asyncio.sleep(4)
        assert not any(answer.done() for answer in answers)
        method.gate.set()
        results = [json.loads(answer) for answer in await asyncio.wait_for(asyncio.gather(*answers), 60)]
        assert all(result.get("result") == {"chars": chars} for result in results), results
        assert server._line_budget.free == 16 * MIB
    finally:
        for _, writer in connections:
            writer.transport.abort()
        await server.stop()


@pytest.mark.parametrize("kind", ["ken", "mcp"])
async def test_kens_clients_read_the_answer_of_a_daemon_that_refuses_a_request_mid_send(monkeypatch, kind):
    """A daemon with all its connections taken answers BUSY and closes while the client is
    still sending a long request: `ken` (Client) and `ken mcp` (AsyncClient) stopped at
    the broken pipe and said "kenning daemon closed the connection without answering",
    not why."""
    monkeypatch.setattr(protocol, "MAX_CONNECTIONS", 2)
    folder = Path(tempfile.mkdtemp(prefix="kb", dir="/tmp"))
    server = RpcServer(folder / "s.sock", {"length": Method(_Text, _length)}, idle_seconds=120, line_seconds=30)
    await server.start()
    params = {"text": "a" * (9 * MIB)}
    held = [await asyncio.open_unix_connection(str(server.path)) for _ in range(2)]
    try:
        if kind == "ken":
            call = asyncio.to_thread(Client(server.path, timeout=60).call, "length", params)
        else:
            call = AsyncClient(server.path, timeout=60).call("length", params)
        with pytest.raises(RpcError) as refused:
            await call
    finally:
        for _, writer in held:
            writer.transport.abort()
        await server.stop()
    assert refused.value.code == protocol.BUSY
    assert "connections are open" in str(refused.value)
