"""How kenning's ollama clients talk HTTP: to base_url alone, and for a bounded answer.

The ollama client follows redirects, and reads an answer whole, for as long as it keeps
coming. So a server at base_url (a proxy, a port another program took) that redirected
a request had the chunks' text sent on to whatever host it named, though the library's
text goes nowhere but the Ollama the user configured; and one whose answer never ended
held the embed job for good (a byte a second never trips a read timeout), or filled the
daemon's memory. Here no redirect is followed, an answer past `max_bytes` is cut off
as unusable, and one still arriving `seconds` after it began as a timeout. An answer
whose connection closed before all of it came is told apart from a server that never
answered: httpx raises the same RemoteProtocolError for both, and a proxy or a server
that cut its answers short was reported as not reachable, "is it running?".
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

from kenning.workers.http_client import httpx

# An embedding is at most 4,096 numbers of some 25 characters each in JSON.
EMBED_ANSWER_BYTES_PER_TEXT = 128 * 1024
# A chat answer is held to EXTRACTION_SCHEMA (64 entities of short names), with room
# for a thinking model's reasoning.
CHAT_ANSWER_BYTES = 16 * 1024 * 1024


class AnswerTooLarge(ValueError):
    """An answer over its byte limit: like one that is not JSON, the server misbehaving."""


class AnswerCutShort(ValueError):
    """An answer whose connection closed before all of it came: the server is there and
    answered, so it is misbehaving (or something between cut it), not unreachable."""


def unusable_message(base_url: str, exc: Exception) -> str:
    """What a client says of an answer it cannot use (not JSON, too large, cut short)."""
    if isinstance(exc, AnswerCutShort):
        return f"ollama at {base_url} answered, but the answer was cut short ({exc})"
    return f"ollama at {base_url} answered with something unusable ({type(exc).__name__})"


def is_redirect(status_code: int) -> bool:
    return 300 <= status_code < 400


def redirect_message(base_url: str, status_code: int) -> str:
    return (
        f"ollama at {base_url} answered with a redirect (HTTP {status_code}); kenning sends text"
        " to base_url alone and follows none: set base_url to the address Ollama answers at"
    )


def client_options(max_bytes: int, seconds: float | None = None) -> dict[str, Any]:
    """Keyword arguments for `ollama.Client` (`seconds` set) or `ollama.AsyncClient`."""
    transport = _BoundedTransport(max_bytes, seconds) if seconds is not None else _BoundedAsyncTransport(max_bytes)
    return {"follow_redirects": False, "transport": transport}


class _Limit:
    def __init__(self, request: httpx.Request, length: str | None, max_bytes: int, deadline: float | None) -> None:
        self.request = request
        self.max_bytes = max_bytes
        self.deadline = deadline
        # The Content-Length its head announced, if any (a chunked answer has none).
        self.length = length
        self.seen = 0

    def check(self, chunk: bytes) -> bytes:
        self.seen += len(chunk)
        if self.seen > self.max_bytes:
            raise AnswerTooLarge(f"the answer ran past {self.max_bytes:,} bytes")
        if self.deadline is not None and time.monotonic() > self.deadline:
            raise httpx.ReadTimeout("the answer was still arriving at its deadline", request=self.request)
        return chunk

    def cut_short(self) -> AnswerCutShort:
        """Its head came, then the connection closed before the rest of its body."""
        said = f" of the {int(self.length):,} it announced" if self.length and self.length.isdigit() else ""
        return AnswerCutShort(f"{self.seen:,} bytes{said} came before the connection closed")


class _BoundedStream(httpx.SyncByteStream):
    def __init__(self, stream: httpx.SyncByteStream, limit: _Limit) -> None:
        self._stream = stream
        self._limit = limit

    def __iter__(self) -> Iterator[bytes]:
        try:
            for chunk in self._stream:
                yield self._limit.check(chunk)
        except httpx.RemoteProtocolError:
            raise self._limit.cut_short() from None

    def close(self) -> None:
        self._stream.close()


class _BoundedAsyncStream(httpx.AsyncByteStream):
    def __init__(self, stream: httpx.AsyncByteStream, limit: _Limit) -> None:
        self._stream = stream
        self._limit = limit

    async def __aiter__(self) -> AsyncIterator[bytes]:
        try:
            async for chunk in self._stream:
                yield self._limit.check(chunk)
        except httpx.RemoteProtocolError:
            raise self._limit.cut_short() from None

    async def aclose(self) -> None:
        await self._stream.aclose()


class _BoundedTransport(httpx.HTTPTransport):
    def __init__(self, max_bytes: int, seconds: float) -> None:
        super().__init__()
        self._max_bytes = max_bytes
        self._seconds = seconds

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = super().handle_request(request)
        # From its head on: the wait for the head is the read timeout's, and a model that
        # took most of it to compute an answer must still have the time to send it.
        deadline = time.monotonic() + self._seconds
        assert isinstance(response.stream, httpx.SyncByteStream)
        limit = _Limit(request, response.headers.get("Content-Length"), self._max_bytes, deadline)
        response.stream = _BoundedStream(response.stream, limit)
        return response


class _BoundedAsyncTransport(httpx.AsyncHTTPTransport):
    """The extractor's pool already bounds how long an answer may take."""

    def __init__(self, max_bytes: int) -> None:
        super().__init__()
        self._max_bytes = max_bytes

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await super().handle_async_request(request)
        assert isinstance(response.stream, httpx.AsyncByteStream)
        limit = _Limit(request, response.headers.get("Content-Length"), self._max_bytes, None)
        response.stream = _BoundedAsyncStream(response.stream, limit)
        return response
