"""The URL-fetch pool: a few long-lived workers, the provider's default policy.

Fetches are rare and user-initiated, but they come in bursts (an agent or a script adding
a list of links), and a fetch mostly waits on a slow server. With one worker the tenth
of ten `ken add-url` calls waited out nine fetches in the queue, and the client, whose
deadline counts one fetch and one parse, gave up on it while the daemon went on to add
it. Four run side by side: fewer than the six connections a browser opens to one host,
each holding at most [fetch] max_mb of page, and still a bound on how many connections a
burst can open.

The pool's timeout sits a little above the fetcher's own deadline, so the fetcher's
clearer message normally wins and the pool only steps in (replacing the worker) if
something hangs past it.
"""

from __future__ import annotations

import asyncio

from dataclasses import dataclass

from kenning.config import FetchSettings
from kenning.store.records import FetchedPage
from kenning.workers.fetch import Fetcher, NotModified
from kenning.workers.pool import BoundedPool

POOL_GRACE_SECONDS = 5.0
URL_FETCH_WORKERS = 4


@dataclass(frozen=True)
class FetchRequest:
    url: str
    etag: str | None = None
    last_modified: str | None = None


class FetchWorker:
    def __init__(self, settings: FetchSettings) -> None:
        self._settings = settings
        self._fetcher: Fetcher | None = None

    async def start(self) -> None:
        # In a thread, as OllamaChatWorker.start makes its client: the fetcher's httpx
        # client builds an SSL context from the CA bundle, 20-45 ms of CPU and more of
        # reading, which held requests waiting on the loop for up to 0.4 s under load.
        self._fetcher = await asyncio.to_thread(Fetcher, self._settings)

    def alive(self) -> bool:
        return self._fetcher is not None

    async def handle(self, request: FetchRequest) -> FetchedPage | NotModified:
        assert self._fetcher is not None
        return await self._fetcher.fetch(request.url, etag=request.etag, last_modified=request.last_modified)

    async def close(self) -> None:
        if self._fetcher is not None:
            await self._fetcher.close()
            self._fetcher = None


def url_pool(settings: FetchSettings) -> BoundedPool[FetchRequest, FetchedPage | NotModified]:
    return BoundedPool(
        lambda: FetchWorker(settings),
        URL_FETCH_WORKERS,
        timeout=settings.timeout + POOL_GRACE_SECONDS,
        name="url fetch",
    )
