"""The bounded pool, with a small in-test worker whose requests say how to behave."""

from __future__ import annotations

import asyncio
import itertools
import time
from contextlib import AsyncExitStack

import pytest

from kenning.workers.pool import BoundedPool, PoolClosed, PoolTimeout


class Workshop:
    """Makes workers and watches them: how many run a request at once, which were closed."""

    def __init__(self, fail_start_at: int | None = None, started: asyncio.Event | None = None) -> None:
        self.workers: list[Worker] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self.fail_start_at = fail_start_at
        # Set, a worker's start waits for it.
        self.started = started
        self._ids = itertools.count()

    def __call__(self) -> Worker:
        worker = Worker(self, next(self._ids))
        self.workers.append(worker)
        return worker


class Worker:
    """Requests: a float sleeps that long; "hang" never returns; "die" answers then dies;
    "boom" raises. The answer names the worker."""

    def __init__(self, shop: Workshop, number: int) -> None:
        self.shop = shop
        self.number = number
        self.started = False
        self.closed = False
        self.dead = False

    async def start(self) -> None:
        if self.number == self.shop.fail_start_at:
            raise OSError(f"worker {self.number} cannot start")
        if self.shop.started is not None:
            await self.shop.started.wait()
        self.started = True

    def alive(self) -> bool:
        return self.started and not self.closed and not self.dead

    async def close(self) -> None:
        self.closed = True

    async def handle(self, request: float | str) -> str:
        self.shop.in_flight += 1
        self.shop.max_in_flight = max(self.shop.max_in_flight, self.shop.in_flight)
        try:
            if request == "hang":
                await asyncio.Event().wait()
            elif request == "die":
                self.dead = True
            elif request == "boom":
                raise ValueError("boom")
            else:
                await asyncio.sleep(float(request))
            return f"worker {self.number}"
        finally:
            self.shop.in_flight -= 1


async def handling(shop: Workshop, count: int) -> None:
    """Until `count` requests are in a worker's hands. A fixed pause was not enough on a
    loaded machine: the pool was still starting when the test went on to close it."""
    async with asyncio.timeout(10):
        while shop.in_flight < count:
            await asyncio.sleep(0.005)


async def test_fifty_requests_never_run_more_than_pool_size_at_once():
    shop = Workshop()
    pool = BoundedPool(shop, 4)
    answers = await asyncio.gather(*(pool.send(0.01) for _ in range(50)))
    assert len(answers) == 50 and all(answer.startswith("worker ") for answer in answers)
    assert shop.max_in_flight == 4
    assert (pool.size, pool.busy, pool.max_busy, pool.replaced) == (4, 0, 4, 0)
    assert len(shop.workers) == 4
    await pool.close()


async def test_acquire_waits_while_every_worker_is_busy():
    shop = Workshop()
    pool = BoundedPool(shop, 2)
    async with AsyncExitStack() as held:
        await held.enter_async_context(pool.acquire())
        await held.enter_async_context(pool.acquire())
        assert pool.busy == 2

        async def third() -> object:
            async with pool.acquire() as worker:
                return worker

        waiting = asyncio.create_task(third())
        await asyncio.sleep(0.05)
        assert not waiting.done()
    assert await asyncio.wait_for(waiting, 1) in shop.workers
    assert len(shop.workers) == 2 and pool.busy == 0
    await pool.close()


async def test_a_hung_request_times_out_and_its_worker_is_replaced():
    shop = Workshop()
    pool = BoundedPool(shop, 1, timeout=0.2)
    started = time.monotonic()
    with pytest.raises(PoolTimeout, match=r"longer than 0\.2 s") as raised:
        await pool.send("hang")
    assert isinstance(raised.value, TimeoutError)
    assert time.monotonic() - started < 1
    hung = shop.workers[0]
    assert hung.closed and pool.replaced == 1
    assert await pool.send(0) == "worker 1"
    assert (pool.busy, shop.in_flight) == (0, 0)
    await pool.close()


async def test_a_worker_that_dies_is_replaced_before_it_is_used_again():
    shop = Workshop()
    pool = BoundedPool(shop, 1)
    assert await pool.send("die") == "worker 0"
    assert await pool.send(0) == "worker 1"
    assert shop.workers[0].closed and pool.replaced == 1
    await pool.close()


async def test_a_worker_that_dies_while_idle_is_replaced_on_acquire():
    shop = Workshop()
    pool = BoundedPool(shop, 1)
    await pool.start()
    shop.workers[0].dead = True
    async with pool.acquire() as worker:
        assert worker is shop.workers[1] and worker.alive()
    assert pool.replaced == 1
    await pool.close()


async def test_a_cancelled_caller_cancels_its_request_and_the_worker_is_replaced():
    shop = Workshop()
    pool = BoundedPool(shop, 1)
    caller = asyncio.create_task(pool.send("hang"))
    await handling(shop, 1)
    caller.cancel()
    with pytest.raises(asyncio.CancelledError):
        await caller
    assert shop.in_flight == 0 and shop.workers[0].closed
    assert await pool.send(0) == "worker 1"
    await pool.close()


async def test_send_batch_is_bounded_and_one_failure_spares_the_others():
    shop = Workshop()
    pool = BoundedPool(shop, 3)
    requests: list[float | str] = [0.01] * 20
    requests[7] = "boom"
    results = await pool.send_batch(requests)
    assert isinstance(results[7], ValueError)
    assert all(isinstance(result, str) for index, result in enumerate(results) if index != 7)
    assert shop.max_in_flight == 3 and pool.max_busy == 3
    assert pool.replaced == 0
    await pool.close()


async def test_close_lets_requests_in_flight_finish_then_closes_workers_and_is_idempotent():
    shop = Workshop()
    pool = BoundedPool(shop, 2)
    in_flight = asyncio.create_task(pool.send(0.2))
    await handling(shop, 1)
    await asyncio.gather(pool.close(), pool.close())
    assert in_flight.done() and in_flight.result().startswith("worker ")
    assert all(worker.closed for worker in shop.workers)
    with pytest.raises(PoolClosed):
        await pool.send(0)
    await pool.close()
    assert pool.state.value == "closed"


async def test_close_cancels_requests_past_its_deadline_and_wakes_waiters():
    shop = Workshop()
    pool = BoundedPool(shop, 1, close_timeout=0.1)
    hung = asyncio.create_task(pool.send("hang"))
    waiter = asyncio.create_task(pool.send(0))
    await handling(shop, 1)
    await asyncio.sleep(0.02)  # the waiter is queued behind it
    started = time.monotonic()
    await pool.close()
    assert time.monotonic() - started < 1
    with pytest.raises(PoolClosed, match="in flight"):
        await hung
    with pytest.raises(PoolClosed):
        await waiter
    assert shop.in_flight == 0
    assert all(worker.closed for worker in shop.workers) and pool.replaced == 0


async def test_close_fails_callers_waiting_for_a_worker_at_once():
    """They learn the pool is gone while the request in flight still has its time to
    finish, instead of waiting for that request to end or be cancelled."""
    shop = Workshop()
    pool = BoundedPool(shop, 1, close_timeout=30)
    busy = asyncio.create_task(pool.send("hang"))
    waiters = [asyncio.create_task(pool.send(0)) for _ in range(3)]
    await handling(shop, 1)
    await asyncio.sleep(0.02)  # the waiters are queued behind it
    closing = asyncio.create_task(pool.close())
    async with asyncio.timeout(10):
        for waiter in waiters:
            with pytest.raises(PoolClosed):
                await waiter
    assert not busy.done() and not closing.done()
    busy.cancel()
    await closing
    assert all(worker.closed for worker in shop.workers)


async def test_a_pool_closed_while_its_workers_start_stays_closed_and_closes_them():
    """close() while the first request's start() waited for its workers found none to
    close and ended; the workers then came up and the pool ran again, the request
    handled by a closed pool whose workers no one would ever close."""
    started = asyncio.Event()
    shop = Workshop(started=started)
    pool = BoundedPool(shop, 2)
    sending = asyncio.create_task(pool.send(0))
    async with asyncio.timeout(10):
        while len(shop.workers) < 2:
            await asyncio.sleep(0.005)
    await pool.close()
    started.set()
    with pytest.raises(PoolClosed, match="closed while it started"):
        await sending
    assert pool.state.value == "closed" and all(worker.closed for worker in shop.workers)


async def test_a_failed_start_closes_the_workers_it_started():
    shop = Workshop(fail_start_at=2)
    pool = BoundedPool(shop, 4)
    with pytest.raises(OSError, match="worker 2 cannot start"):
        await pool.send(0)
    assert len(shop.workers) == 4
    assert all(worker.closed for worker in shop.workers)
    assert pool.state.value == "new"
    await pool.close()
    with pytest.raises(PoolClosed):
        await pool.start()
