"""A client that hangs up mid-request, on a real server over its real Unix socket: the
work of a method that `stops_on_hangup`, or of a request sent with `cancel_on_close`, is
stopped; a client that only finished sending (socat, `nc -N`) is still answered, and
every other request runs to its end."""

from __future__ import annotations

import asyncio
import json
import logging
import socket
import tempfile
from pathlib import Path

from pydantic import BaseModel

from kenning.daemon.server import Method, RpcServer


class _Text(BaseModel):
    text: str


class _Page(_Text):
    cancel_on_close: bool = False


def _request(method: str, text: str, **params: bool) -> bytes:
    request = {"jsonrpc": "2.0", "id": 1, "method": method, "params": {"text": text, **params}}
    return json.dumps(request).encode() + b"\n"


class _Held:
    """A method that waits at a gate the test opens, and notes how its work ended."""

    def __init__(self) -> None:
        self.gate = asyncio.Event()
        self.entered = asyncio.Event()
        self.ended = asyncio.Event()
        self.cancelled = False

    async def __call__(self, params: _Text) -> dict:
        self.entered.set()
        try:
            await self.gate.wait()
        except asyncio.CancelledError:
            self.cancelled = True
            raise
        finally:
            self.ended.set()
        return {"chars": len(params.text)}


async def _server(stopped: _Held, kept: _Held, page: _Held | None = None) -> RpcServer:
    folder = Path(tempfile.mkdtemp(prefix="kb", dir="/tmp"))
    methods = {"stopped": Method(_Text, stopped, stops_on_hangup=True), "kept": Method(_Text, kept)}
    if page is not None:
        methods["page"] = Method(_Page, page)
    server = RpcServer(folder / "s.sock", methods, idle_seconds=120, line_seconds=120)
    await server.start()
    return server


async def _runs_on_after_a_hangup(server: RpcServer, method: str, held: _Held) -> None:
    """A request to `method` whose client hangs up mid-way runs on, and ends when let."""
    _, writer = await asyncio.open_unix_connection(str(server.path))
    writer.write(_request(method, "abc"))
    await asyncio.wait_for(held.entered.wait(), 30)
    writer.close()
    await asyncio.sleep(0.5)
    assert not held.ended.is_set()
    held.gate.set()
    await asyncio.wait_for(held.ended.wait(), 30)
    assert not held.cancelled


async def test_a_client_that_hangs_up_stops_its_request_and_the_server_serves_on(caplog):
    """A request ran to its end after its client had gone (an agent cancelling a slow
    add_url left the page fetched and stored, its fetch worker held meanwhile)."""
    caplog.set_level(logging.INFO, logger="kenning.daemon.server")
    stopped, kept = _Held(), _Held()
    server = await _server(stopped, kept)
    try:
        _, writer = await asyncio.open_unix_connection(str(server.path))
        writer.write(_request("stopped", "abc"))
        await asyncio.wait_for(stopped.entered.wait(), 30)
        writer.close()
        await asyncio.wait_for(stopped.ended.wait(), 30)
        assert stopped.cancelled
        assert "method stopped: its client went before the answer; stopped it" in caplog.text

        # A method not marked runs to its end whoever is left to hear it.
        await _runs_on_after_a_hangup(server, "kept", kept)

        reader, writer = await asyncio.open_unix_connection(str(server.path))
        stopped.gate.set()
        writer.write(_request("stopped", "de"))
        assert json.loads(await asyncio.wait_for(reader.readline(), 30)) == {
            "jsonrpc": "2.0", "id": 1, "result": {"chars": 2}
        }  # fmt: skip
        writer.close()
    finally:
        await server.stop(timeout=30)


async def test_a_client_that_only_finished_sending_is_still_answered():
    """socat shuts down its sending side once stdin ends and reads on: the end of its
    input is not its going."""
    stopped, kept = _Held(), _Held()
    server = await _server(stopped, kept)
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        conn.setblocking(False)
        loop = asyncio.get_running_loop()
        await loop.sock_connect(conn, str(server.path))
        await loop.sock_sendall(conn, _request("stopped", "abcd"))
        conn.shutdown(socket.SHUT_WR)
        await asyncio.wait_for(stopped.entered.wait(), 30)
        await asyncio.sleep(0.5)
        assert not stopped.ended.is_set()
        stopped.gate.set()
        answer = await asyncio.wait_for(loop.sock_recv(conn, 65536), 30)
        assert json.loads(answer) == {"jsonrpc": "2.0", "id": 1, "result": {"chars": 4}}
        assert not stopped.cancelled
    finally:
        conn.close()
        await server.stop(timeout=30)


async def test_a_request_sent_with_cancel_on_close_is_stopped_when_its_client_hangs_up():
    """`ken mcp` asks it of a page (a host cancelling add_url); `ken add-url`, whose page
    still comes after it gives up waiting, does not."""
    stopped, kept, page = _Held(), _Held(), _Held()
    server = await _server(stopped, kept, page)
    try:
        _, writer = await asyncio.open_unix_connection(str(server.path))
        writer.write(_request("page", "abc", cancel_on_close=True))
        await asyncio.wait_for(page.entered.wait(), 30)
        writer.close()
        await asyncio.wait_for(page.ended.wait(), 30)
        assert page.cancelled

        page = _Held()
        server.methods["page"] = Method(_Page, page)
        await _runs_on_after_a_hangup(server, "page", page)
    finally:
        await server.stop(timeout=30)
