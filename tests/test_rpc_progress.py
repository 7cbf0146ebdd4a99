"""Progress notifications on a real RpcServer over its real Unix socket: who is told
(only a request with an id that asked), and how the blocking Client counts its timeout
from them (docs/protocol.md, `urls.add`)."""

from __future__ import annotations

import asyncio
import json
import tempfile
from pathlib import Path

import pytest
from pydantic import BaseModel

from kenning import client as client_module
from kenning.client import Client
from kenning.daemon import protocol
from kenning.daemon.server import Method, RpcServer
from kenning.errors import DaemonTimeout


class _Page(BaseModel):
    url: str
    progress: bool = False


class _Staged:
    """A method that reports `stages` in turn; for the url `held`, it then waits at a
    gate the test opens."""

    def __init__(self, held: str, *stages: str) -> None:
        self.held = held
        self.stages = stages
        self.gate = asyncio.Event()
        self.entered = asyncio.Event()

    async def __call__(self, params: _Page, progress) -> dict:
        for stage in self.stages:
            progress(stage)
        if params.url == self.held:
            self.entered.set()
            await self.gate.wait()
        return {"url": params.url}


async def _server(method: _Staged) -> RpcServer:
    folder = Path(tempfile.mkdtemp(prefix="kb", dir="/tmp"))
    server = RpcServer(folder / "s.sock", {"page": Method(_Page, method, reports=True)}, idle_seconds=120)
    await server.start()
    return server


def _line(request: dict) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "method": "page", **request}).encode() + b"\n"


async def test_only_a_request_that_asks_is_told_its_progress(monkeypatch: pytest.MonkeyPatch) -> None:
    """A client that reads one line per request (socat, any JSON-RPC client written
    before `progress`) must still get its answer as that line; one that asks gets each
    stage as it begins and the latest again until the answer, naming its request."""
    monkeypatch.setattr(protocol, "PROGRESS_SECONDS", 0.05)
    method = _Staged("c", "queued", "fetching")
    server = await _server(method)
    try:
        reader, writer = await asyncio.open_unix_connection(str(server.path))
        writer.write(_line({"id": 1, "params": {"url": "a"}}))
        writer.write(_line({"params": {"url": "b", "progress": True}}))  # no id: no answer, no progress
        writer.write(_line({"id": "c", "params": {"url": "c", "progress": True}}))
        await asyncio.wait_for(method.entered.wait(), 30)
        await asyncio.sleep(0.5)
        method.gate.set()
        lines = []
        while not lines or "id" not in lines[-1] or lines[-1]["id"] != "c":
            lines.append(json.loads(await asyncio.wait_for(reader.readline(), 30)))
        writer.close()
    finally:
        await server.stop()

    assert lines[0] == {"jsonrpc": "2.0", "id": 1, "result": {"url": "a"}}
    told = [line["params"] for line in lines[1:-1]]
    assert [line.get("method") for line in lines[1:-1]] == ["progress"] * len(told)
    assert told[:2] == [{"id": "c", "stage": "queued"}, {"id": "c", "stage": "fetching"}]
    assert len(told) > 2 and all(said == {"id": "c", "stage": "fetching"} for said in told[2:])
    assert lines[-1] == {"jsonrpc": "2.0", "id": "c", "result": {"url": "c"}}


async def test_a_stage_said_again_does_not_hold_the_client_past_its_timeout(monkeypatch: pytest.MonkeyPatch) -> None:
    """The daemon repeats the stage a request is at every few seconds; only a page
    waiting in the queue is waited for while it does. Once the daemon has started on the
    page, the client's timeout counts from there, and a daemon that says "fetching"
    forever is given up on, the error naming the stage."""
    monkeypatch.setattr(protocol, "PROGRESS_SECONDS", 0.05)
    method = _Staged("x", "fetching")
    server = await _server(method)
    try:
        client = Client(server.path, timeout=2)
        with pytest.raises(DaemonTimeout) as raised:
            await asyncio.to_thread(client.call, "page", {"url": "x"}, progress=True)
    finally:
        method.gate.set()
        await server.stop()
    assert raised.value.stage == "fetching"
    assert raised.value.waited == 2


async def test_a_request_kept_queued_is_waited_for_past_the_silence_while_the_daemon_says_so(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A page waiting for a fetch worker is told "queued" once, then again every
    PROGRESS_SECONDS; each word starts the client's wait again, so a client whose own
    timeout is short waits through a queue many times QUEUED_SILENCE long. Were the
    repeats not heard as news (or not sent), the client would give up QUEUED_SILENCE
    after the first word, with the page still to come."""
    monkeypatch.setattr(protocol, "PROGRESS_SECONDS", 0.05)
    monkeypatch.setattr(client_module, "QUEUED_SILENCE", 1.0)
    method = _Staged("q", "queued")
    server = await _server(method)
    try:
        client = Client(server.path, timeout=0.2)
        call = asyncio.ensure_future(asyncio.to_thread(client.call, "page", {"url": "q"}, progress=True))
        await asyncio.wait_for(method.entered.wait(), 30)
        await asyncio.sleep(3 * client_module.QUEUED_SILENCE)
        assert not call.done()
        method.gate.set()
        assert await asyncio.wait_for(call, 30) == {"url": "q"}
    finally:
        method.gate.set()
        await server.stop()
