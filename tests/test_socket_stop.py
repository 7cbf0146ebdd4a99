"""RpcServer.stop() and the cancelling of connections, on a real server over its real
Unix socket: what a client sees when the daemon shuts down around it."""

from __future__ import annotations

import asyncio
import json
import tempfile
from pathlib import Path

from pydantic import BaseModel

from kenning.daemon.server import Method, RpcServer


class _Text(BaseModel):
    text: str


def _request(request_id: int, text: str) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "length", "params": {"text": text}}).encode() + b"\n"


class _Gated:
    """A `length` method that waits at a gate the test opens: a request in flight."""

    def __init__(self) -> None:
        self.gate = asyncio.Event()
        self.entered = asyncio.Event()

    async def __call__(self, params: _Text) -> dict:
        self.entered.set()
        await self.gate.wait()
        return {"chars": len(params.text)}


async def _server(method) -> RpcServer:
    folder = Path(tempfile.mkdtemp(prefix="kb", dir="/tmp"))
    server = RpcServer(folder / "s.sock", {"length": Method(_Text, method)}, idle_seconds=120, line_seconds=120)
    await server.start()
    return server


async def test_stop_closes_idle_connections_at_once_and_lets_a_request_in_flight_finish():
    """stop() gave every open connection its whole drain time, so one idle client (an
    editor's MCP server, say) made each `ken stop` wait it out. Idle and half-sent
    connections are closed at once; a request in flight is still answered, and its
    connection closed after the answer rather than read on."""
    method = _Gated()
    server = await _server(method)
    busy_reader, busy = await asyncio.open_unix_connection(str(server.path))
    idle_reader, idle = await asyncio.open_unix_connection(str(server.path))
    half_reader, half = await asyncio.open_unix_connection(str(server.path))
    try:
        busy.write(_request(1, "abc") + _request(2, "de"))
        half.write(b'{"jsonrpc": "2.0", "id": 1, "meth')
        await asyncio.wait_for(method.entered.wait(), 30)
        stopping = asyncio.ensure_future(server.stop(timeout=120))
        # Closed while the other client's request is still being handled.
        assert await asyncio.wait_for(idle_reader.read(), 30) == b""
        assert await asyncio.wait_for(half_reader.read(), 30) == b""
        assert not stopping.done()
        method.gate.set()
        answer = json.loads(await asyncio.wait_for(busy_reader.readline(), 30))
        assert answer == {"jsonrpc": "2.0", "id": 1, "result": {"chars": 3}}
        assert await asyncio.wait_for(busy_reader.read(), 30) == b""  # the second request is not begun
        await asyncio.wait_for(stopping, 30)
        assert not server.path.exists()
    finally:
        for writer in (busy, idle, half):
            writer.transport.abort()


async def test_a_connection_cancelled_outside_shutdown_is_logged_and_stays_cancelled(caplog):
    """The server took every cancellation of a connection for stop()'s and ended the task
    quietly, as if it had finished: one cancelled for any other reason dropped its client
    without a word in the log, and whoever cancelled it saw it complete."""
    server = await _server(_Gated())
    reader, writer = await asyncio.open_unix_connection(str(server.path))
    try:
        writer.write(b'{"jsonrpc": "2.0", "id": 1, "method": "nothing"}\n')
        assert json.loads(await asyncio.wait_for(reader.readline(), 30))["error"]["code"] == -32601
        [connection] = server._connections
        connection.cancel()
        await asyncio.wait([connection], timeout=30)
        assert connection.cancelled()
        assert await asyncio.wait_for(reader.read(), 30) == b""
        assert "a connection was cancelled outside shutdown; closed it without an answer" in caplog.text
    finally:
        writer.transport.abort()
        await server.stop()


async def test_connections_cut_off_at_shutdown_are_not_logged(caplog):
    """At stop() the cancellation is the server's own: a client left mid-request at the
    deadline is closed without a warning (or a traceback) per client."""
    method = _Gated()
    server = await _server(method)
    reader, writer = await asyncio.open_unix_connection(str(server.path))
    try:
        writer.write(_request(1, "abc"))
        await asyncio.wait_for(method.entered.wait(), 30)
        await server.stop(timeout=0.1)
        assert await asyncio.wait_for(reader.read(), 30) == b""
        assert "cancelled" not in caplog.text
    finally:
        writer.transport.abort()
