"""The line budget shared by all connections (kenning/daemon/framing.py), on a real
RpcServer over its real Unix socket, with a budget small enough to fill in a test."""

from __future__ import annotations

import asyncio
import json
import re
import tempfile
from pathlib import Path

import pytest
from pydantic import BaseModel

from kenning.client import AsyncClient, Client
from kenning.daemon import protocol
from kenning.daemon.server import Method, RpcServer
from kenning.errors import KenningError, RpcError

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
        for _ in range(200):
            if method.entered == protocol.LARGE_REQUESTS_AT_ONCE:
                break
            await asyncio.sleep(0.1)
        assert method.entered == protocol.LARGE_REQUESTS_AT_ONCE
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


async def test_a_line_kept_waiting_by_other_requests_is_told_the_daemon_was_busy(monkeypatch):
    """A line whose client sent it in time, but which waited past socket_line_timeout for
    the budget other large requests held, was answered "request line not completed
    within 30 s", as if the client had been slow. It now gets BUSY saying how much the
    daemon was holding, and sent again once the crowd is through, it is answered."""
    monkeypatch.setattr(protocol, "LINE_BUDGET_BYTES", 16 * MIB)
    monkeypatch.setattr(protocol, "MAX_LINE_BYTES", 10 * MIB)
    method = _Gated()
    folder = Path(tempfile.mkdtemp(prefix="kb", dir="/tmp"))
    server = RpcServer(folder / "s.sock", {"length": Method(_Text, method)}, idle_seconds=120, line_seconds=3)
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
        done, _ = await asyncio.wait(answers, timeout=60, return_when=asyncio.FIRST_COMPLETED)
        assert done and method.entered == protocol.LARGE_REQUESTS_AT_ONCE
        method.gate.set()
        results = [json.loads(answer) for answer in await asyncio.wait_for(asyncio.gather(*answers), 60)]
        busy = [result["error"] for result in results if "error" in result]
        assert busy and len(busy) < len(results), results
        assert all(result["result"] == {"chars": chars} for result in results if "result" in result)
        for error in busy:
            assert error["code"] == protocol.BUSY, error
            held = re.fullmatch(
                r"request line not completed within 3 s: the daemon was holding (\d+) MiB of other requests; retry",
                error["message"],
            )
            assert held and int(held[1]) >= 8, error
        reader, writer = await asyncio.open_unix_connection(str(server.path))
        connections.append((reader, writer))
        writer.write(line)
        assert json.loads(await asyncio.wait_for(reader.readline(), 60))["result"] == {"chars": chars}
    finally:
        for _, writer in connections:
            writer.transport.abort()
        await server.stop()


@pytest.mark.parametrize("kind", ["ken", "mcp"])
async def test_kens_clients_read_the_busy_answer_to_a_line_crowded_out(monkeypatch, kind):
    """The daemon answers a line crowded out and closes while the client is still sending
    it: `ken` (Client) and `ken mcp` (AsyncClient) stopped at the broken pipe and said
    "kenning daemon closed the connection without answering", not why."""
    monkeypatch.setattr(protocol, "LINE_BUDGET_BYTES", 16 * MIB)
    monkeypatch.setattr(protocol, "MAX_LINE_BYTES", 10 * MIB)
    method = _Gated()
    folder = Path(tempfile.mkdtemp(prefix="kb", dir="/tmp"))
    server = RpcServer(folder / "s.sock", {"length": Method(_Text, method)}, idle_seconds=120, line_seconds=3)
    await server.start()
    params = {"text": "a" * (9 * MIB)}

    async def call() -> object:
        try:
            if kind == "ken":
                return await asyncio.to_thread(Client(server.path, timeout=60).call, "length", params)
            return await AsyncClient(server.path, timeout=60).call("length", params)
        except KenningError as exc:
            return exc

    try:
        calls = [asyncio.ensure_future(call()) for _ in range(8)]
        done, _ = await asyncio.wait(calls, timeout=60, return_when=asyncio.FIRST_COMPLETED)
        assert done
        method.gate.set()
        outcomes = await asyncio.wait_for(asyncio.gather(*calls), 60)
    finally:
        await server.stop()
    refused = [outcome for outcome in outcomes if isinstance(outcome, KenningError)]
    assert refused, outcomes
    for outcome in refused:
        assert isinstance(outcome, RpcError) and outcome.code == protocol.BUSY, repr(outcome)
        assert "the daemon was holding" in str(outcome)
    assert all(outcome == {"chars": 9 * MIB} for outcome in outcomes if outcome not in refused)
