"""The Unix-socket JSON-RPC server.

Requests on one connection are answered in order; connections are independent. Any
malformed input gets a JSON-RPC error and the connection stays usable, an oversized
line included: its rest is skipped up to the next newline. Idle connections and lines
left half-sent are closed (kenning/daemon/framing.py), and so are connections whose
client stops reading its answer. At stop() a connection with no request under way is
closed at once; one with a request in flight is given the drain time to answer it. A
method marked `stops_on_hangup`, or a request with `cancel_on_close`, is cancelled when
its client goes before its answer (kenning/daemon/hangup.py).
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import traceback
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import msgspec
from pydantic import BaseModel, ValidationError

from kenning.daemon import protocol
from kenning.daemon.framing import (
    CHUNK_BYTES,
    BadFrame,
    Framing,
    LineBudget,
    LineReader,
    decode,
    oversized_int,
    valid_id,
)
from kenning.daemon.guard import replaced
from kenning.daemon.hangup import HangupReader, gone
from kenning.errors import MAX_ERROR_CHARS, ConfigError, InvalidRequest, KenningError, NotFound, error_line
from kenning.store.database import unwritable

log = logging.getLogger(__name__)

LARGE_LINE_BYTES = 1 << 20
# An invalid-params message names this many errors and counts the rest, and cuts a name
# longer than NAME_CHARS: a list of 100,000 bad items, or an unknown parameter or ledger
# field named with a megabyte, would otherwise come back whole.
DESCRIBED_ERRORS = 10
NAME_CHARS = 64


Notify = Callable[[dict], None]
# Returns once the request's client has gone (hangup.gone).
Gone = Callable[[], Awaitable[None]]


@dataclass(frozen=True)
class Method:
    params: type[BaseModel]
    handler: Callable[..., Awaitable[Any]]
    # The handler also takes a callback that hears each stage the request reaches; a
    # client that sets `progress` in its params is told them (docs/protocol.md).
    reports: bool = False
    # Cancelled when its client goes before it is answered: a method that only reads. A
    # request may ask for it too (`cancel_on_close`: pages, stored in one write after a
    # fetch and a reading, so stopping one anywhere leaves all of it or none).
    stops_on_hangup: bool = False


def _unheard(stage: str) -> None:
    pass


class Unread(Exception):
    """The client did not take its answer within idle_seconds."""


class _ClientGone(Exception):
    """The client went before its request was answered, which was then stopped."""


def _name(part: str | int) -> str:
    text = str(part)
    return text if len(text) <= NAME_CHARS else f"{text[:NAME_CHARS]}..."


def _describe(error: ValidationError) -> str:
    items = error.errors()
    parts = []
    for item in items[:DESCRIBED_ERRORS]:
        where = ".".join(_name(p) for p in item["loc"])
        if item["type"] == "extra_forbidden":
            message = "unknown parameter"
        else:
            # pydantic words a validator's own message "Value error, ...": the message is enough.
            message = item["msg"].removeprefix("Value error, ").removeprefix("Assertion failed, ")
        parts.append(f"{where}: {message}" if where else message)
    if len(items) > DESCRIBED_ERRORS:
        parts.append(f"and {len(items) - DESCRIBED_ERRORS} more")
    return "; ".join(parts)


class RpcServer:
    def __init__(
        self,
        path: Path,
        methods: dict[str, Method],
        idle_seconds: float = protocol.IDLE_SECONDS,
        line_seconds: float = protocol.LINE_SECONDS,
    ) -> None:
        self.path = path
        self.methods = methods
        self.idle_seconds = idle_seconds
        self.line_seconds = line_seconds
        self._server: asyncio.Server | None = None
        self._connections: set[asyncio.Task] = set()
        # The connections with a request read whole and not yet answered: at stop() only
        # these are given time to finish; the rest have nothing to lose and close at once.
        self._handling: set[asyncio.Task] = set()
        self._stopping = False
        # Whether connections are being turned away (MAX_CONNECTIONS), to log it once.
        self._full = False
        # The socket file this server bound (device, inode): only that one is removed.
        self._bound: tuple[int, int] | None = None
        # The stop removes the socket, and shutdown's own last step again in case the stop
        # did not get there: a socket that could not be removed was logged twice.
        self._removal_tried = False
        self._line_budget = LineBudget(protocol.LINE_BUDGET_BYTES, protocol.MAX_LINE_BYTES)
        self._large_requests = asyncio.Semaphore(protocol.LARGE_REQUESTS_AT_ONCE)

    async def start(self) -> None:
        # asyncio accepts up to `backlog` connections per turn of the loop and listens
        # with the same number: a burst is taken ACCEPTS_PER_TURN at a time, so the loop
        # keeps answering, while the kernel queues up to LISTEN_BACKLOG more.
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(str(self.path))
        os.chmod(self.path, 0o600)
        info = os.lstat(self.path)
        self._bound = (info.st_dev, info.st_ino)
        # asyncio.start_unix_server, with a reader that says when its client's input ends.
        self._server = await asyncio.get_running_loop().create_unix_server(
            lambda: asyncio.StreamReaderProtocol(HangupReader(CHUNK_BYTES), self._serve),
            sock=listener,
            backlog=protocol.ACCEPTS_PER_TURN,
        )
        listener.listen(protocol.LISTEN_BACKLOG)
        log.info("listening on %s", self.path)

    async def stop(self, timeout: float = 5.0) -> None:
        """Stop accepting, close connections with no request under way, give open
        requests `timeout` to finish and be answered, then cut them off."""
        if self._server is None:
            return
        self._stopping = True
        self._server.close()
        # An idle client (an editor's MCP server, a `ken` waiting on its terminal) held
        # every stop for the whole drain; a line half-sent is no request yet either.
        for task in self._connections - self._handling:
            task.cancel()
        if self._connections:
            _, pending = await asyncio.wait(self._connections, timeout=timeout)
            for task in pending:
                task.cancel()
            await asyncio.gather(*pending, return_exceptions=True)
        await self._server.wait_closed()
        self._server = None
        self.remove_socket()

    def lost_socket(self) -> bool:
        """Whether the socket path no longer names the socket this server bound: it was
        deleted (with the data directory, say) or another daemon bound one there."""
        return self._bound is None or replaced(self.path, self._bound, "socket")

    def remove_socket(self) -> None:
        # Another daemon's socket at the same path, started after this one's was deleted,
        # is not this one's to remove; nor is one that cannot be checked.
        if self._removal_tried:
            return
        self._removal_tried = True
        try:
            info = os.lstat(self.path)
        except OSError:
            return
        if self._bound == (info.st_dev, info.st_ino):
            try:
                self.path.unlink(missing_ok=True)
            except OSError as exc:
                # Its folder made read-only under the daemon (`chmod 500`): the stop must
                # still close the library; the next start replaces the socket left here.
                log.warning("cannot remove the socket %s: %s", self.path, exc.strerror or exc)

    async def _serve(self, reader: HangupReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        if len(self._connections) >= protocol.MAX_CONNECTIONS:
            await self._turn_away(writer)
            return
        self._full = False
        self._connections.add(task)
        lines = LineReader(reader, protocol.MAX_LINE_BYTES, self.idle_seconds, self.line_seconds, self._line_budget)
        try:
            # Once stop() has begun, a connection leaves after its answer, not reading another.
            while not self._stopping:
                line = await lines.next_line()
                if line is Framing.OVERSIZED:
                    await self._send(writer, protocol.error_response(
                        None, protocol.INVALID_REQUEST, f"request larger than {protocol.MAX_LINE_BYTES} bytes"
                    ))  # fmt: skip
                    continue
                if line is Framing.STALLED:
                    await self._send(writer, protocol.error_response(
                        None, protocol.INVALID_REQUEST, f"request line not completed within {self.line_seconds:g} s"
                    ))  # fmt: skip
                    break
                if line is Framing.IDLE or not line:
                    break
                assert isinstance(line, (bytes, bytearray))
                if line.isspace():  # (strip() would copy a line of megabytes to say so)
                    continue
                self._handling.add(task)
                try:
                    await self._handle(lines, line, writer, partial(gone, reader, writer.get_extra_info("socket")))
                finally:
                    self._handling.discard(task)
        except (ConnectionResetError, BrokenPipeError) as exc:
            _let_go(exc)
        except Unread as exc:
            log.warning("closed a connection whose client did not read its answer within %g s", self.idle_seconds)
            # close() would wait to write the answer out; abort() drops it, and its memory.
            writer.transport.abort()
            _let_go(exc)
        except asyncio.CancelledError:
            writer.transport.abort()
            if not self._stopping:
                # Nothing but stop() means to cancel a connection: whatever did, the client
                # lost its connection without an answer, and the log should say so.
                log.warning("a connection was cancelled outside shutdown; closed it without an answer")
                raise
            # Cut off by stop(). The task ends here rather than cancelled: on Python 3.11
            # asyncio's own callback on a cancelled connection task logs "Exception in
            # callback" with a traceback (fixed in 3.12), one for each client still
            # connected at shutdown.
        finally:
            lines.release()
            self._connections.discard(task)
            writer.close()

    async def _handle(
        self, lines: LineReader, line: bytes | bytearray, writer: asyncio.StreamWriter, client_gone: Gone
    ) -> None:
        """Answer one request line (none for a notification, nor for a client gone)."""
        notify = partial(self._notify, writer)
        if len(line) > protocol.LARGE_REQUEST_BYTES:
            # While it waits its turn the line stays charged to the line budget, so forty
            # 45 MB documents sent at once are read in only as the budget allows, not held
            # whole (1.8 GB) in the queue for a turn.
            async with self._large_requests:
                lines.release_line()
                response = await self.handle_line(line, notify, client_gone)
        else:
            response = await self.handle_line(line, notify, client_gone)
        if response is not None:
            writer.write(_encoded(response))
            # Written, the answer is the transport's copy alone: the result it was made
            # from, held here while a slow client read, doubled what each one held (30
            # clients not reading a 10 MB archive: 594 MB over the daemon's own, 316 MB
            # without it).
            del response
            await self._drained(writer)

    async def _turn_away(self, writer: asyncio.StreamWriter) -> None:
        """Answer BUSY and close: the descriptors the daemon needs for its files stay free."""
        if not self._full:
            self._full = True  # said once per crowd, not once per connection
            log.warning("%d connections are open; turning new ones away until some close", len(self._connections))
        try:
            message = f"busy: {protocol.MAX_CONNECTIONS} connections are open; try again when others close"
            await self._send(writer, protocol.error_response(None, protocol.BUSY, message))
        except (ConnectionResetError, BrokenPipeError, Unread):
            writer.transport.abort()
        finally:
            writer.close()

    async def _send(self, writer: asyncio.StreamWriter, message: dict) -> None:
        writer.write(_encoded(message))
        await self._drained(writer)

    async def _drained(self, writer: asyncio.StreamWriter) -> None:
        # A client that stops reading (hung, stopped, or never meaning to) held its
        # connection, and the whole answer in memory, for good: forty asking for a 10 MB
        # archive held 740 MB. One that has not taken it within idle_seconds is cut off.
        try:
            async with asyncio.timeout(self.idle_seconds):
                await writer.drain()
        except TimeoutError:
            raise Unread from None

    def _notify(self, writer: asyncio.StreamWriter, message: dict) -> None:
        """Written without waiting for the client to take it: a line every few seconds,
        and the answer after them waits (`_send`) as any answer does."""
        if not writer.transport.is_closing():
            writer.write(_encoded(message))

    async def handle_line(
        self, line: bytes | bytearray, notify: Notify | None = None, client_gone: Gone | None = None
    ) -> dict | None:
        """`notify` writes a notification on the request's connection, for a method
        that reports its progress; `client_gone` returns once the request's client has
        gone, which stops a method that `stops_on_hangup` and leaves it unanswered."""
        try:
            if len(line) > LARGE_LINE_BYTES:
                # An agent's whole document: megabytes of JSON are decoded off the loop.
                request = await asyncio.to_thread(decode, line, protocol.PARSE_ERROR)
            else:
                request = decode(line, protocol.PARSE_ERROR)
        except BadFrame as exc:
            return protocol.error_response(None, exc.code, str(exc))
        if not isinstance(request, dict):
            return protocol.error_response(None, protocol.INVALID_REQUEST, "a request must be a JSON object")
        request_id = request.get("id")
        if not valid_id(request_id):
            return protocol.error_response(
                None, protocol.INVALID_REQUEST, "id must be a string, an integer of at most 64 bits, or null"
            )
        if request.get("jsonrpc") != "2.0" or not isinstance(request.get("method"), str):
            return protocol.error_response(
                request_id, protocol.INVALID_REQUEST, 'a request needs "jsonrpc": "2.0" and a string "method"'
            )
        large = len(line) > LARGE_LINE_BYTES
        if "id" not in request:
            # A notification is not answered, nor told how it goes; its client need not stay.
            notify = client_gone = None
        response = await self._dispatch(
            request_id, request["method"], request.get("params", {}), large, notify, client_gone
        )
        # A request without an id is a notification: it runs, and nothing is sent back.
        return response if "id" in request else None

    async def _dispatch(
        self, request_id: Any, name: str, raw_params: Any, large: bool, notify: Notify | None, client_gone: Gone | None
    ) -> dict | None:
        """`large`: params from a line over LARGE_LINE_BYTES, walked and validated off the
        loop as they were decoded: a `kind` named 300,000 times held it 0.12 s."""
        method = self.methods.get(name)
        if method is None:
            known = ", ".join(sorted(self.methods))
            return protocol.error_response(
                request_id, protocol.METHOD_NOT_FOUND, f"unknown method {name[:100]!r}; methods: {known}"
            )
        if raw_params is None:
            raw_params = {}
        if not isinstance(raw_params, dict):
            return protocol.error_response(request_id, protocol.INVALID_PARAMS, "params must be a JSON object")
        try:
            too_big = await asyncio.to_thread(oversized_int, raw_params) if large else oversized_int(raw_params)
        except RecursionError:
            return protocol.error_response(request_id, protocol.INVALID_PARAMS, "params are nested too deeply")
        if too_big is not None:
            return protocol.error_response(
                request_id, protocol.INVALID_PARAMS, f"{too_big}: integers must fit in 64 bits"
            )
        try:
            validate = method.params.model_validate
            params = await asyncio.to_thread(validate, raw_params) if large else validate(raw_params)
        except ValidationError as exc:
            # Listing 100,000 bad items' errors to pick the first few takes 0.4 s: off the loop.
            many = exc.error_count() > DESCRIBED_ERRORS
            message = await asyncio.to_thread(_describe, exc) if many else _describe(exc)
            return protocol.error_response(request_id, protocol.INVALID_PARAMS, message)
        work = self._run(method, params, request_id, notify)
        try:
            if client_gone is not None and (method.stops_on_hangup or getattr(params, "cancel_on_close", False)):
                result = await _unless_gone(work, client_gone)
            else:
                result = await work
        except _ClientGone:
            log.info("method %s: its client went before the answer; stopped it", name)
            return None
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if task is None or task.cancelling():
                raise
            # This request was not cancelled; what it waited on was (`scan --wait` on a
            # sweep that a reload or a source's removal stopped). It dropped the
            # connection without a word: the client is answered and the connection stays.
            log.warning("method %s: the work it waited on was cancelled", name)
            return protocol.error_response(
                request_id, protocol.INTERNAL_ERROR,
                f"{name} was cut short: the work it waited on was stopped (by a reload, a source's removal or shutdown)",
            )  # fmt: skip
        except NotFound as exc:
            return protocol.error_response(request_id, protocol.NOT_FOUND, str(exc))
        except ConfigError as exc:
            return protocol.error_response(request_id, protocol.CONFIG_ERROR, str(exc))
        except InvalidRequest as exc:
            return protocol.error_response(request_id, protocol.INVALID_PARAMS, str(exc))
        except KenningError as exc:
            return protocol.error_response(request_id, protocol.INTERNAL_ERROR, str(exc))
        except Exception as exc:
            if unwritable(exc):
                # Not a bug but the disk, the file's mode or another process's lock: no
                # traceback, and words the user can act on.
                return protocol.error_response(
                    request_id, protocol.INTERNAL_ERROR, f"cannot write the index now ({exc}); try again later"
                )
            log.exception("method %s failed", name)
            return protocol.error_response(
                request_id, protocol.INTERNAL_ERROR, f"internal error: {error_line(exc, MAX_ERROR_CHARS)}"
            )
        return protocol.result_response(request_id, result)

    async def _run(self, method: Method, params: BaseModel, request_id: Any, notify: Notify | None) -> Any:
        if not method.reports:
            return await method.handler(params)
        if notify is not None and getattr(params, "progress", False):
            return await self._reporting(method, params, request_id, notify)
        return await method.handler(params, _unheard)

    async def _reporting(self, method: Method, params: BaseModel, request_id: Any, notify: Notify) -> Any:
        """The handler's answer; meanwhile each stage it reaches is told, and the latest
        told again every PROGRESS_SECONDS, so a client can tell a request waiting its turn
        from a daemon that stopped."""
        latest: list[dict] = []

        def report(stage: str) -> None:
            latest[:] = [protocol.progress_notification(request_id, stage)]
            notify(latest[0])

        async def repeat() -> None:
            while True:
                await asyncio.sleep(protocol.PROGRESS_SECONDS)
                if latest:
                    notify(latest[0])

        ticker = asyncio.create_task(repeat(), name="progress")
        try:
            return await method.handler(params, report)
        finally:
            ticker.cancel()


def _encoded(message: dict) -> bytes:
    # Results are the Library's records, msgspec Structs (kenning/api.py), which it encodes natively.
    return msgspec.json.encode(message) + b"\n"


def _let_go(error: BaseException | None) -> None:
    """Let go of what the frames `error` passed through hold: the answer it cut off.

    The error is held by the future the write waited on, and holds that future through
    its traceback's frames: a cycle only a full collection frees, which an idle daemon
    does not run. Sixty clients that went before taking a 10 MB archive's answer left the
    daemon holding 725 MB from then on."""
    while error is not None:
        traceback.clear_frames(error.__traceback__)
        error = error.__context__


async def _unless_gone(work: Coroutine[Any, Any, Any], client_gone: Gone) -> Any:
    """`work`'s result, or _ClientGone once `work` has been cancelled and has ended because
    its client went first. Cancelled itself (stop()), it cancels `work` and waits for it
    to end, as `work` ran in its place before."""
    task = asyncio.ensure_future(work)
    watch = asyncio.ensure_future(client_gone())
    try:
        await asyncio.wait((task, watch), return_when=asyncio.FIRST_COMPLETED)
        if not task.done():
            raise _ClientGone
        return task.result()
    finally:
        watch.cancel()
        if not task.done():
            task.cancel()
            # Its own unwinding first (a fetch worker replaced, a write seen to its end);
            # what it ends with has no one to go to.
            await asyncio.gather(task, return_exceptions=True)
