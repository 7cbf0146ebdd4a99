"""Telling a client that has gone from one that has only finished sending.

A request's work used to run to its end after its client hung up: an agent host that
cancelled a slow `add_url` (MCP `notifications/cancelled`, which `ken mcp` turns into
closing its connection) left the page fetched, read and stored, its fetch worker held
for the whole fetch, and the next page queued behind it. The end of a client's input
alone does not say it has gone, though: `socat` and `nc -N` shut down their sending side
once the request is sent and still read the answer. Only a client that closed both ways
(POLLHUP) has gone. A client that half-closes first and then closes is not seen going:
its reader heard the end of input once, and nothing tells it of the rest.
"""

from __future__ import annotations

import asyncio
import select
from typing import Protocol


class _Socket(Protocol):
    """A connection's socket as its transport hands it out (asyncio's TransportSocket)."""

    def fileno(self) -> int: ...


class HangupReader(asyncio.StreamReader):
    """A connection's reader that says when its input ended (or broke), which the reader
    hears from the transport even while no one reads it (while a request is handled)."""

    def __init__(self, limit: int) -> None:
        super().__init__(limit=limit)
        self.ended = asyncio.Event()

    def feed_eof(self) -> None:
        super().feed_eof()
        self.ended.set()

    def set_exception(self, exc: BaseException) -> None:
        super().set_exception(exc)
        self.ended.set()


def closed_both_ways(conn: _Socket) -> bool:
    """Whether the peer closed its end (POLLHUP), not only shut down its sending side."""
    poller = select.poll()
    poller.register(conn.fileno(), 0)  # POLLHUP is reported whatever is asked for
    return any(events & (select.POLLHUP | select.POLLERR) for _, events in poller.poll(0))


async def gone(reader: HangupReader, conn: _Socket) -> None:
    """Returns once the client has gone; never, for a client that only finished sending."""
    await reader.ended.wait()
    if reader.exception() is None and not closed_both_ways(conn):
        await asyncio.get_running_loop().create_future()
