"""JSON-RPC clients for the daemon's socket: a blocking one for the CLI, and an asyncio one
for the MCP server, whose event loop must not wait on a socket. Both frame requests and read
answers the same way (docs/protocol.md: one JSON object per line each way).

An answer is decoded into the kenning.api record the method returns (`result_type`), so a
field the daemon renamed fails here, loudly, rather than as a missing key later.
"""

from __future__ import annotations

import itertools
import os
import socket
import struct
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, TypeVar

import msgspec

from kenning.config.paths import not_yours, served_by_another
from kenning.errors import (
    AnswerLost,
    DaemonNotRunning,
    DaemonTimeout,
    DaemonUnreachable,
    KenningError,
    RpcError,
    SocketNotYours,
)

if TYPE_CHECKING:
    from kenning.config import Settings

T = TypeVar("T")

_ids = itertools.count(1)
# One answer is one line, and documents.get returns a whole document's chunks in it.
MAX_ANSWER_BYTES = 256 << 20


def _request(method: str, params: dict[str, Any] | None) -> bytes:
    request = {"jsonrpc": "2.0", "id": next(_ids), "method": method, "params": params or {}}
    return msgspec.json.encode(request) + b"\n"


def _not_running(socket_path: Path) -> DaemonNotRunning:
    return DaemonNotRunning(
        f"kenning daemon is not running (no answer on {socket_path}); start it with `ken start`"
    )


# A daemon whose accept queue is full answers a connect with EAGAIN (Unix sockets do not
# wait), and one that is restarting with ECONNREFUSED: both pass in a moment, so a
# connect is tried again briefly before the user is told.
_BUSY = (BlockingIOError, ConnectionRefusedError, InterruptedError)
CONNECT_ATTEMPTS = 5


def _connect_retrying(connect: Callable[[], T]) -> T:
    """`connect()`, tried again on _BUSY with exponential backoff (under a second in
    all); tenacity is only loaded when the first try fails, so `ken` starts fast."""
    try:
        return connect()
    except _BUSY:
        pass
    from tenacity import Retrying, retry_if_exception_type, stop_after_attempt, wait_exponential

    retrying = Retrying(
        retry=retry_if_exception_type(_BUSY),
        wait=wait_exponential(multiplier=0.05, max=0.5),
        stop=stop_after_attempt(CONNECT_ATTEMPTS),
        reraise=True,
    )
    return retrying(connect)


def _unreachable(socket_path: Path, exc: OSError) -> KenningError:
    # (A path through a file, NotADirectoryError, has no daemon on it either.)
    if isinstance(exc, (FileNotFoundError, NotADirectoryError, ConnectionRefusedError)):
        return _not_running(socket_path)
    if isinstance(exc, PermissionError):
        return SocketNotYours(not_yours(socket_path, exc))
    return DaemonUnreachable(f"kenning daemon at {socket_path} is not accepting connections ({exc.strerror or exc})")


def _check_peer(conn: socket.socket, socket_path: Path) -> None:
    """Nothing is sent to a daemon another user runs: a socket path in a shared folder
    could have been bound by them first, and would then get every question and every text
    an agent saves. Root's daemon is trusted, as root may read all of it anyway."""
    uid = _peer_uid(conn, socket_path)
    if uid not in (os.geteuid(), 0):
        raise SocketNotYours(served_by_another(socket_path, uid))


def _peer_uid(conn: socket.socket, socket_path: Path) -> int:
    if hasattr(socket, "SO_PEERCRED"):
        # Linux: the kernel's record of who listens, which no file's owner can fake.
        credentials = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
        return struct.unpack("3i", credentials)[1]
    # macOS has no SO_PEERCRED in Python: the socket file's owner, who bound it.
    return os.stat(socket_path).st_uid


# The stage a request waiting for a worker is in. The daemon says it again every 5 s
# while the request waits (docs/protocol.md): a client waiting its turn gives up only
# after its timeout passes with no word, and never sooner than QUEUED_SILENCE, so a
# timeout shorter than the daemon's interval does not take its silence for a stall.
QUEUED = "queued"
QUEUED_SILENCE = 15.0
# How long a page's call (`ken add-url`, MCP's add_url) waits from each new stage past the
# daemon's own limits for a fetch and a page's conversion, each spent in full: for a
# parse worker busy with another page, and the store. Time spent queued for a fetch
# worker is not counted (`_wait_after`).
PAGE_WAIT_MARGIN = 30.0


def page_wait(settings: Settings) -> float:
    """What a page's call waits from each new stage the daemon tells, both clients alike."""
    return settings.fetch.timeout + settings.limits.parse_timeout + PAGE_WAIT_MARGIN


def _wait_after(heard: str, last: str | None, timeout: float) -> float | None:
    """How long to wait on from a stage the daemon told (`heard`, after `last`), or None
    to keep the wait running: a new stage starts it again, and so does each word that the
    request is still queued, which never gives up before QUEUED_SILENCE."""
    if heard != QUEUED and heard == last:
        return None
    return max(timeout, QUEUED_SILENCE) if heard == QUEUED else timeout


class _TimedOut(TimeoutError):
    def __init__(self, stage: str | None, waited: float) -> None:
        super().__init__()
        self.stage = stage
        self.waited = waited


def _progress(line: bytes) -> str | None:
    """The stage a progress notification names; None for any other line (the answer,
    or the end of the connection)."""
    try:
        message = msgspec.json.decode(line)
    except msgspec.DecodeError:
        return None
    if not isinstance(message, dict) or "id" in message or message.get("method") != "progress":
        return None
    params = message.get("params")
    stage = params.get("stage") if isinstance(params, dict) else None
    return stage if isinstance(stage, str) else None


# The methods that change the library (docs/protocol.md). A daemon stopped while it works
# on one may have done it before the connection closed: its client must not be told only
# that there was no answer, which reads as "nothing happened", and send it again blind.
WRITES = frozenset(
    {
        "documents.add", "documents.remove", "urls.add", "urls.refresh", "memory.add", "memory.forget",
        "archive.add", "ledger.add", "ledger.remove", "sources.remove", "sources.scan", "dedup", "reembed",
        "compact", "reload",
    }
)  # fmt: skip


def _timed_out(method: str, waited: float | None, during: str, socket_path: Path, stage: str | None) -> DaemonTimeout:
    """A write given up on is not undone: the daemon goes on with it, so its client is
    not told only that there was no answer, which reads as "nothing happened"."""
    message = f"kenning daemon did not answer {method!r} within {waited:g} s{during} (socket {socket_path})"
    if method in WRITES:
        message += ": it may have done it, or may still do it"
    return DaemonTimeout(message, stage, waited, writes=method in WRITES, method=method)


def _result(line: bytes, method: str) -> Any:
    if not line.endswith(b"\n"):
        if method in WRITES:
            raise AnswerLost(
                f"kenning daemon closed the connection without answering {method!r}: it stopped while"
                " working on it, and may have done it before it stopped",
                method,
                writes=True,
            )
        raise AnswerLost("kenning daemon closed the connection without answering", method, writes=False)
    try:
        response = msgspec.json.decode(line)
    except msgspec.DecodeError:
        response = None
    if isinstance(response, dict) and isinstance(error := response.get("error"), dict):
        raise RpcError(error.get("code", 0), str(error.get("message", "unknown error")))
    if not isinstance(response, dict) or "result" not in response:
        # Another program of this user's on the socket (a stale path in the config):
        # its words are no business of the caller's, and may be anything.
        raise RpcError(
            0,
            f"the answer to {method!r} is not an answer kenning's daemon gives; is another program"
            " listening on its socket?",
        )
    return response["result"]


class Client:
    def __init__(self, socket_path: Path, timeout: float | None = 60.0) -> None:
        self.socket_path = socket_path
        self.timeout = timeout

    def fetch(
        self, method: str, result_type: type[T], params: dict[str, Any] | None = None, *, progress: bool = False
    ) -> T:
        """Call `method` and decode its answer into `result_type` (a kenning.api record)."""
        return decode(self.call(method, params, progress=progress), result_type)

    def call(self, method: str, params: dict[str, Any] | None = None, *, progress: bool = False) -> Any:
        """With `progress` (a method that reports it: `urls.add`, `urls.refresh`), the
        timeout counts from the daemon's latest step on the request, not from sending it:
        each new stage it reports starts the clock again, and so does each word that the
        request is still queued, so a request waiting its turn behind others is waited
        for as long as the daemon says so, and a daemon that falls silent is given up on."""
        if progress:
            params = {**(params or {}), "progress": True}
        try:
            conn = _connect_retrying(self._open)
        except OSError as exc:
            raise _unreachable(self.socket_path, exc) from None
        try:
            try:
                conn.sendall(_request(method, params))
            except ConnectionError:
                # A daemon that will not take the whole request (BUSY: all its
                # connections taken) answers first and closes: the answer is still
                # there to read, where giving up said only "closed without answering".
                pass
            with conn.makefile("rb") as stream:
                if not progress:
                    line = stream.readline()
                else:
                    line = self._read_past_progress(conn, stream)
        except TimeoutError as exc:
            stage, waited = (exc.stage, exc.waited) if isinstance(exc, _TimedOut) else (None, self.timeout)
            raise _timed_out(method, waited, "", self.socket_path, stage) from None
        except ConnectionError:
            # The daemon went away mid-call (reset, broken pipe): the same as no answer.
            line = b""
        finally:
            conn.close()
        return _result(line, method)

    def _read_past_progress(self, conn: socket.socket, stream: BinaryIO) -> bytes:
        """The answer line, past the progress reported before it. The socket's timeout
        bounds each read, and the daemon repeats a stage every few seconds, so the
        deadline is kept here and the socket given what is left of it."""
        if self.timeout is None:
            while (line := stream.readline()) and _progress(line) is not None:
                pass
            return line
        stage: str | None = None
        wait = self.timeout
        deadline = time.monotonic() + wait
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise _TimedOut(stage, wait)
            conn.settimeout(left)
            try:
                line = stream.readline()
            except TimeoutError:
                raise _TimedOut(stage, wait) from None
            heard = _progress(line)
            if heard is None:
                return line
            if (again := _wait_after(heard, stage, self.timeout)) is not None:
                wait = again
                deadline = time.monotonic() + wait
            stage = heard

    def _open(self) -> socket.socket:
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        conn.settimeout(self.timeout)
        try:
            conn.connect(str(self.socket_path))
            _check_peer(conn, self.socket_path)
        except BaseException:
            conn.close()
            raise
        return conn


def decode(result: Any, result_type: type[T]) -> T:
    try:
        return msgspec.convert(result, type=result_type)
    except msgspec.ValidationError as exc:
        raise RpcError(
            0, f"the daemon's answer does not match this ken ({exc}); is it another version? `ken restart`"
        ) from None


class AsyncClient:
    """One connection per call, so a daemon restarted between calls is simply found again;
    `timeout` bounds the whole call (connect, send, answer), not each socket operation."""

    def __init__(self, socket_path: Path, timeout: float) -> None:
        self.socket_path = socket_path
        self.timeout = timeout

    async def call(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        progress: Callable[[str], Awaitable[None]] | None = None,
        stage_timeout: float | None = None,
        deadline: float | None = None,
    ) -> Any:
        """With `progress` (a method that reports it: `urls.add`, `urls.refresh`), each stage
        the daemon reports is handed to it, again each time the daemon repeats it, and the
        wait is bounded as Client.call bounds it: `stage_timeout` (default `timeout`) from
        the latest new stage, or from the latest word that the request is still queued, so
        a fetch longer than `timeout` is not given up on while the daemon works on it. A
        `deadline` (the event loop's time) ends the call then rather than `timeout` from now,
        or with `progress`, unless the daemon tells a stage first: the caller spent part of
        its wait already."""
        # Imported here: asyncio costs every `ken` command a noticeable share of its start-up,
        # and only the MCP server uses this client.
        import asyncio

        if progress is not None:
            params = {**(params or {}), "progress": True}
        wait = self.timeout if progress is None or stage_timeout is None else stage_timeout
        heard: list[str] = []
        try:
            ends = deadline if deadline is not None else asyncio.get_running_loop().time() + wait
            async with asyncio.timeout_at(ends) as clock:

                async def told(stage: str) -> None:
                    if (again := _wait_after(stage, heard[-1] if heard else None, wait)) is not None:
                        clock.reschedule(asyncio.get_running_loop().time() + again)
                    if not heard or heard[-1] != stage:
                        heard.append(stage)
                    if progress is not None:
                        await progress(stage)

                line = await self._exchange(_request(method, params), told if progress is not None else None)
        except TimeoutError:
            stage = heard[-1] if heard else None
            during = f" (last stage: {stage})" if stage else ""
            raise _timed_out(method, wait, during, self.socket_path, stage) from None
        # A whole document's chunks can be megabytes of JSON: parsed off the event loop.
        return await asyncio.to_thread(_result, line, method)

    async def _exchange(self, request: bytes, told: Callable[[str], Awaitable[None]] | None) -> bytes:
        import asyncio

        from tenacity import AsyncRetrying, retry_if_exception_type, stop_after_attempt, wait_exponential

        retrying = AsyncRetrying(
            retry=retry_if_exception_type(_BUSY),
            wait=wait_exponential(multiplier=0.05, max=0.5),
            stop=stop_after_attempt(CONNECT_ATTEMPTS),
            reraise=True,
        )
        try:
            reader, writer = await retrying(asyncio.open_unix_connection, self.socket_path, limit=MAX_ANSWER_BYTES)
        except OSError as exc:
            raise _unreachable(self.socket_path, exc) from None

        async def read_answer() -> bytes:
            while (line := await reader.readline()) and told is not None and (stage := _progress(line)) is not None:
                await told(stage)
            return line

        answer: asyncio.Future[bytes] | None = None
        try:
            _check_peer(writer.get_extra_info("socket"), self.socket_path)
            writer.write(request)
            # Read while the request goes out, as Client.call does after it: a daemon that
            # will not take the whole request answers and closes, and asyncio drops what
            # it has not read once a write fails.
            answer = asyncio.ensure_future(read_answer())
            try:
                await writer.drain()
            except ConnectionError:
                pass
            return await answer
        except ConnectionError:
            # The daemon went away mid-call (reset, broken pipe): the same as no answer.
            return b""
        finally:
            if answer is not None:
                answer.cancel()
            writer.close()
