"""A bounded pool of long-lived workers, generic over what they are asked and answer.

Every outside service kenning leans on (an LLM server, the URL fetcher) gets a fixed
number of workers, so a burst of chunks can never open a burst of requests. A worker
that dies is replaced before it is handed out again; a request that outlives the pool's
timeout is cancelled and its worker closed and replaced, because a worker cut off
mid-request is in an unknown state.

Pools hold no database writes: a worker only computes, and callers write its answer
after `send` returns. Cancelling a request, timing one out or closing the pool
mid-flight therefore never leaves anything half-written; the work is simply asked for
again later.
"""

from __future__ import annotations

import asyncio
import enum
import logging
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from typing import Generic, Protocol, TypeVar

from kenning.errors import KenningError, ShutDown

log = logging.getLogger(__name__)

RequestT = TypeVar("RequestT")
ResponseT = TypeVar("ResponseT")
_Req_contra = TypeVar("_Req_contra", contravariant=True)
_Resp_co = TypeVar("_Resp_co", covariant=True)


class Worker(Protocol[_Req_contra, _Resp_co]):
    """One long-lived worker. `close()` must also be safe after a failed `start()`."""

    async def start(self) -> None: ...

    async def handle(self, request: _Req_contra) -> _Resp_co: ...

    def alive(self) -> bool: ...

    async def close(self) -> None: ...


class PoolClosed(ShutDown):
    """The pool is closing or closed; the request was not (or not fully) handled."""


class PoolTimeout(KenningError, TimeoutError):
    """A request ran past the pool's per-request timeout; its worker was replaced."""


class PoolState(enum.Enum):
    NEW = "new"
    RUNNING = "running"
    CLOSING = "closing"
    CLOSED = "closed"


class BoundedPool(Generic[RequestT, ResponseT]):
    """`size` workers from `factory`; at most `size` requests are ever handled at once.

    The pool starts on first use (or an explicit `start()`). `timeout` bounds each
    request (None: no bound); `close_timeout` bounds how long `close()` waits for
    requests in flight, and how long closing any one worker may take.
    """

    def __init__(
        self,
        factory: Callable[[], Worker[RequestT, ResponseT]],
        size: int,
        *,
        timeout: float | None = None,
        close_timeout: float = 5.0,
        name: str = "pool",
    ) -> None:
        if size < 1:
            raise ValueError("a pool needs at least one worker")
        self.size = size
        self.timeout = timeout
        self.close_timeout = close_timeout
        self.name = name
        self.state = PoolState.NEW
        self.busy = 0
        self.max_busy = 0
        self.replaced = 0
        self._factory = factory
        # Keyed by id(): workers need not be hashable, and a worker the pool closed is
        # recognised by its absence here, whatever its own alive() says.
        self._workers: dict[int, Worker[RequestT, ResponseT]] = {}
        self._idle: list[Worker[RequestT, ResponseT]] = []
        self._permits = asyncio.Semaphore(size)
        self._requests: set[asyncio.Task[ResponseT]] = set()
        self._start_lock = asyncio.Lock()
        self._closed = asyncio.Event()

    async def start(self) -> None:
        async with self._start_lock:
            if self.state is PoolState.RUNNING:
                return
            self._check_open()
            workers = [self._factory() for _ in range(self.size)]
            results = await asyncio.gather(*(worker.start() for worker in workers), return_exceptions=True)
            failure = next((result for result in results if isinstance(result, BaseException)), None)
            if failure is None and self.state is not PoolState.NEW:
                # close() came while the workers started and found none to close: kept,
                # they would make a closed pool run again, its workers never closed.
                failure = PoolClosed(f"{self.name} was closed while it started")
            if failure is not None:
                await asyncio.gather(*(self._close_quietly(worker) for worker in workers))
                raise failure
            self._workers = {id(worker): worker for worker in workers}
            self._idle = workers
            self.state = PoolState.RUNNING

    @asynccontextmanager
    async def acquire(self) -> AsyncIterator[Worker[RequestT, ResponseT]]:
        """A worker of one's own until the block ends; waits while all are busy."""
        worker = await self._checkout()
        try:
            yield worker
        finally:
            await self._checkin(worker, discard=False)

    def full(self) -> bool:
        """Whether a request sent now would wait for a worker."""
        return self._permits.locked()

    async def send(self, request: RequestT, started: Callable[[], None] | None = None) -> ResponseT:
        """`started` is called once a worker has taken the request: up to then it waited
        its turn, which a caller timing its own work leaves out."""
        worker = await self._checkout()
        discard = False
        try:
            if started is not None:
                started()
            return await self._handle(worker, request)
        except (PoolTimeout, PoolClosed, asyncio.CancelledError):
            discard = True
            raise
        finally:
            await self._checkin(worker, discard=discard)

    async def send_batch(self, requests: Sequence[RequestT]) -> list[ResponseT | BaseException]:
        """Answers in request order; a request that failed has its exception instead."""
        return await asyncio.gather(*(self.send(request) for request in requests), return_exceptions=True)

    async def close(self) -> None:
        """Stop taking requests, let those in flight finish by the deadline, close workers."""
        if self.state is PoolState.CLOSED:
            return
        if self.state is PoolState.CLOSING:
            await self._closed.wait()
            return
        self.state = PoolState.CLOSING
        # Callers waiting for a worker learn at once that none is coming: one permit
        # more wakes the first, and each passes it on (_checkout).
        self._permits.release()
        try:
            await self._drain()
            await asyncio.gather(*(self._close_worker(worker) for worker in list(self._workers.values())))
        finally:
            self.state = PoolState.CLOSED
            self._closed.set()

    async def _drain(self) -> None:
        if not self._requests:
            return
        _, pending = await asyncio.wait(set(self._requests), timeout=self.close_timeout)
        if not pending:
            return
        log.warning("%s: cancelling %d request(s) still running at close", self.name, len(pending))
        for task in pending:
            task.cancel()
        _, stuck = await asyncio.wait(pending, timeout=self.close_timeout)
        if stuck:
            log.warning("%s: %d request(s) ignored cancellation; closing their workers anyway", self.name, len(stuck))

    def _check_open(self) -> None:
        if self.state in (PoolState.CLOSING, PoolState.CLOSED):
            raise PoolClosed(f"{self.name} is closed")

    async def _checkout(self) -> Worker[RequestT, ResponseT]:
        if self.state is PoolState.NEW:
            await self.start()
        self._check_open()
        await self._permits.acquire()
        if self.state is not PoolState.RUNNING:
            # Woken during close() (by its own permit, or a request finishing): pass the
            # wake-up on, so every waiter learns the pool is gone.
            self._permits.release()
            raise PoolClosed(f"{self.name} is closed")
        worker = self._idle.pop()
        if id(worker) not in self._workers or not worker.alive():
            try:
                worker = await self._replace(worker)
            except BaseException:
                self._idle.append(worker)
                self._permits.release()
                raise
        self.busy += 1
        self.max_busy = max(self.max_busy, self.busy)
        return worker

    async def _checkin(self, worker: Worker[RequestT, ResponseT], *, discard: bool) -> None:
        self.busy -= 1
        try:
            if discard:
                await self._close_worker(worker)
            if self.state is PoolState.RUNNING and (id(worker) not in self._workers or not worker.alive()):
                worker = await self._replace(worker)
        except Exception as exc:
            # The dead worker goes back; the next checkout tries the replacement again
            # and hands its error to a caller that can report it.
            log.warning("%s: could not replace a worker: %s", self.name, exc)
        finally:
            self._idle.append(worker)
            self._permits.release()

    async def _handle(self, worker: Worker[RequestT, ResponseT], request: RequestT) -> ResponseT:
        # The request runs as its own task so close() can wait for it and, past the
        # deadline, cancel it without cancelling the caller.
        task = asyncio.create_task(worker.handle(request), name=f"{self.name}-request")
        self._requests.add(task)
        task.add_done_callback(self._requests.discard)
        deadline = asyncio.timeout(self.timeout)
        try:
            async with deadline:
                return await task
        except TimeoutError:
            if deadline.expired():
                raise PoolTimeout(
                    f"{self.name}: request took longer than {self.timeout:g} s; its worker was replaced"
                ) from None
            raise
        except asyncio.CancelledError:
            # Only close() cancels the request without cancelling its caller; a caller
            # that was itself cancelled must see its own cancellation.
            current = asyncio.current_task()
            caller_cancelled = current is not None and current.cancelling() > 0
            if task.cancelled() and not caller_cancelled and self.state is not PoolState.RUNNING:
                raise PoolClosed(f"{self.name} closed while the request was in flight") from None
            raise

    async def _replace(self, worker: Worker[RequestT, ResponseT]) -> Worker[RequestT, ResponseT]:
        await self._close_worker(worker)
        fresh = self._factory()
        try:
            await fresh.start()
        except BaseException:
            await self._close_quietly(fresh)
            raise
        if self.state is not PoolState.RUNNING:
            await self._close_quietly(fresh)
            raise PoolClosed(f"{self.name} closed while a worker was being replaced")
        self._workers[id(fresh)] = fresh
        self.replaced += 1
        return fresh

    async def _close_worker(self, worker: Worker[RequestT, ResponseT]) -> None:
        if self._workers.pop(id(worker), None) is not None:
            await self._close_quietly(worker)

    async def _close_quietly(self, worker: Worker[RequestT, ResponseT]) -> None:
        """A worker that fails to close is already being discarded; say so and go on."""
        try:
            async with asyncio.timeout(self.close_timeout):
                await worker.close()
        except Exception as exc:
            log.warning("%s: closing a worker failed: %s", self.name, exc)
