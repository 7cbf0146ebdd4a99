"""The URL-fetch pool: one long-lived worker, the provider's default policy.

Fetches are rare and user-initiated, so one worker is enough, and it keeps a burst of
`ken add-url` calls from opening many connections at once. The pool's timeout sits a
little above the fetcher's own deadline, so the fetcher's clearer message normally wins
and the pool only steps in (replacing the worker) if something hangs past it.
"""

from __future__ import annotations

from dataclasses import dataclass

from kenning.config import FetchSettings
from kenning.store.records import FetchedPage
from kenning.workers.fetch import Fetcher, NotModified
from kenning.workers.pool import BoundedPool

POOL_GRACE_SECONDS = 5.0


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
        self._fetcher = Fetcher(self._settings)

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
        lambda: FetchWorker(settings), 1, timeout=settings.timeout + POOL_GRACE_SECONDS, name="url fetch"
    )
