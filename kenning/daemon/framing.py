"""Request framing on the socket: one line per request, bounded in size and in time.

A connection may hold at most one line of `max_bytes` in memory: a longer one is
dropped up to its newline as it arrives (the request after it is still served), so a
client sending a huge line cannot make the daemon hold more than that. What lines hold
past their first CHUNK_BYTES comes from one LineBudget shared by all connections, so
many connections cannot hold many such lines at once: a line that needs more than is
left waits for it, unless it is the oldest line still being read (then it may pass the
budget, by at most one line in all, so lines arriving together are read in turn). A
line read whole stays charged until its request is handled, waiting its turn among the
large ones included. A connection with no request under way for `idle_seconds` is
closed; a line begun but not finished within `line_seconds` is dropped and the
connection closed, so half-sent lines do not pin memory forever. Time a line spends
waiting for the budget is the daemon's, not the client's, and does not count: a crowd
of large requests is read in as the budget allows, each answered in turn, rather than
the later ones refused for a slowness that was not theirs.

Decoding is msgspec's: it refuses nesting deeper than it can walk, integers beyond 64
bits and the NaN/Infinity literals (not JSON) with an error rather than an exception
that would end the connection.
"""

from __future__ import annotations

import asyncio
import enum
import re
from typing import Any

import msgspec

# What a connection's reader reads at a time; asyncio buffers at most twice this.
CHUNK_BYTES = 1 << 20
INT64_MIN, INT64_MAX = -(1 << 63), (1 << 63) - 1


class Framing(enum.Enum):
    OVERSIZED = "oversized"  # a line over max_bytes was skipped
    IDLE = "idle"  # no request began within idle_seconds
    STALLED = "stalled"  # a line began but did not end within line_seconds


class LineBudget:
    """Bytes that lines may hold beyond their first CHUNK_BYTES, across all connections,
    from their first byte until their request is handled. Each connection could hold a
    48 MiB line, and 512 connections each sending 45 MB without a newline would have held
    23 GB; lines read whole and waiting their turn among the large requests were once let
    go of here, and forty 45 MB documents sent at once held 1.8 GB."""

    def __init__(self, total: int, overdraw: int) -> None:
        self.free = total
        # How far past the budget the oldest line still being read may take it: one line.
        self.overdraw = overdraw
        self._given = asyncio.Event()
        # The lines being read that hold some of it, oldest first. The oldest takes what it
        # needs past the budget (within `overdraw`): each line keeps what it has while it
        # waits for more, so lines that together needed more than the budget each held
        # part, none could finish, and all were dropped at the line timeout.
        self._holders: dict[object, None] = {}

    def _may_take(self, holder: object, count: int) -> bool:
        if self.free >= count:
            return True
        oldest = next(iter(self._holders), holder) is holder
        return oldest and self.free - count >= -self.overdraw

    async def take(self, holder: object, count: int) -> None:
        # A line that needs nothing never waits, not even while the budget is overdrawn:
        # small requests are not held up behind large ones.
        if not count:
            return
        while not self._may_take(holder, count):
            self._given.clear()
            await self._given.wait()
        self.free -= count
        self._holders.setdefault(holder)

    def settle(self, holder: object) -> None:
        """The holder's line has been read whole: it keeps what it holds until its
        request is handled, but no longer reads, so the next oldest may go past the budget."""
        if self._holders.pop(holder, None) is not None:
            self._given.set()

    def give(self, holder: object, count: int) -> None:
        if self._holders.pop(holder, None) is not None or count:
            self.free += count
            self._given.set()


class LineReader:
    def __init__(
        self,
        reader: asyncio.StreamReader,
        max_bytes: int,
        idle_seconds: float,
        line_seconds: float,
        budget: LineBudget,
    ) -> None:
        self._reader = reader
        self._max = max_bytes
        self._idle = idle_seconds
        self._line = line_seconds
        self._budget = budget
        self._held = 0  # of the budget, for the buffer's bytes past its first CHUNK_BYTES
        self._buffer = bytearray()
        self._scanned = 0  # bytes of the buffer already known to hold no newline
        self._skipping = False

    def release(self) -> None:
        """Give back the budget the buffer holds: when the connection ends, or a line over
        max_bytes is dropped."""
        self._budget.give(self, self._held)
        self._held = 0

    def release_line(self) -> None:
        """Give back what the line returned last held, now that its request is handled.
        Bytes of the next line already read stay charged with it (the buffer keeps its
        first CHUNK_BYTES free of charge, so what it holds is charged as one)."""
        if len(self._buffer) <= CHUNK_BYTES:
            self.release()

    async def next_line(self) -> bytes | bytearray | Framing:
        """The next line (with its newline; without one for a last line cut short by the
        end of input), b"" at the end of input, or what went wrong framing it.

        The line returned stays charged to the budget until release_line() or the next
        call: a large request waiting its turn (LARGE_REQUESTS_AT_ONCE) held its whole
        line where no budget counted it."""
        self.release_line()
        loop = asyncio.get_running_loop()
        deadline: float | None = None
        while True:
            end = self._buffer.find(b"\n", self._scanned)
            if end >= 0:
                oversized = self._skipping or end + 1 > self._max
                if not oversized:
                    # One copy out of the buffer: a slice and then bytes() of it would be
                    # two, which for a line of tens of megabytes held the loop ~100 ms.
                    with memoryview(self._buffer) as view:
                        line = bytes(view[: end + 1])
                del self._buffer[: end + 1]
                self._scanned = 0
                if oversized:
                    self._skipping = False
                    self.release_line()
                    return Framing.OVERSIZED
                self._budget.settle(self)
                return line
            self._scanned = len(self._buffer)
            if len(self._buffer) > self._max:
                self._skipping = True
            if self._skipping:
                self._buffer.clear()
                self._scanned = 0
                self.release()
            if deadline is None and (self._buffer or self._skipping):
                deadline = loop.time() + self._line
            try:
                if deadline is None:
                    async with asyncio.timeout(self._idle):
                        chunk = await self._reader.read(CHUNK_BYTES)
                else:
                    async with asyncio.timeout_at(deadline):
                        chunk = await self._reader.read(CHUNK_BYTES)
            except TimeoutError:
                return Framing.IDLE if deadline is None else Framing.STALLED
            if not chunk:
                if self._skipping:
                    self._skipping = False
                    return Framing.OVERSIZED
                # The buffer itself, not a copy of it: a client that hangs up mid-line can
                # leave tens of megabytes held, and copying them held the loop.
                line, self._buffer = self._buffer, bytearray()
                self._budget.settle(self)
                return line
            needed = 0 if self._skipping else max(0, len(self._buffer) + len(chunk) - CHUNK_BYTES - self._held)
            if needed:
                # The daemon's wait, not the client's: the line's deadline moves on by it.
                # A client that sent in time is read in once others' requests are handled,
                # while its unread bytes wait in its own socket, not in the daemon.
                began = loop.time()
                await self._budget.take(self, needed)
                if deadline is not None:
                    deadline += loop.time() - began
                self._held += needed
            self._buffer += chunk


class BadFrame(Exception):
    """A line that is not a JSON-RPC request; `code` is the JSON-RPC error to answer with."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


# A UTF-16 surrogate escape ("\ud800"): half of a pair, which alone is no character.
_SURROGATE = re.compile(rb"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


def decode(line: bytes | bytearray, parse_error: int) -> Any:
    """The line's JSON value, or BadFrame(parse_error). msgspec calls a lone surrogate
    escape "Input data was truncated", which sends a client looking for a cut line; the
    error names the escape instead."""
    try:
        return msgspec.json.decode(line)
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        if (found := _SURROGATE.search(line)) is not None:
            message = f"parse error: {found.group().decode()} is half of a UTF-16 surrogate pair, not a character"
            raise BadFrame(parse_error, message) from None
        raise BadFrame(parse_error, f"parse error: {exc}") from None
    except RecursionError:
        raise BadFrame(parse_error, "parse error: JSON nested too deeply") from None


def valid_id(value: Any) -> bool:
    """JSON-RPC ids are strings, integers or null; an integer must fit in 64 bits so that
    every client can read it back."""
    if value is None or isinstance(value, str):
        return True
    return isinstance(value, int) and not isinstance(value, bool) and INT64_MIN <= value <= INT64_MAX


def oversized_int(value: Any, path: str = "") -> str | None:
    """Where in `value` an integer beyond 64 bits sits (no field takes one: ids and
    counts are SQLite integers), or None."""
    if isinstance(value, int) and not isinstance(value, bool):
        if INT64_MIN <= value <= INT64_MAX:
            return None
        return path or "params"
    if isinstance(value, dict):
        items = value.items()
    elif isinstance(value, list):
        items = enumerate(value)
    else:
        return None
    for key, item in items:
        found = oversized_int(item, f"{path}.{key}" if path else str(key))
        if found is not None:
            return found
    return None
