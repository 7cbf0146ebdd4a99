"""One lifecycle for every background job: embedding, extraction, near-duplicate and
source sweeps.

A job is a single-flight loop that runs a *pass* whenever it is woken (or every
`poll_seconds` when it has work that comes due on its own) until it is stopped. What a
pass does is the job's own; what every job shares lives here:

- `start()` and `stop()` are safe to call twice; `stop()` cancels a pass in flight,
  which every pass is written to survive (each page commits on its own). A stopped
  loop also ends at its next turn and retries nothing, so a cancellation lost on the
  way (Python 3.11's `asyncio.wait_for` returns the result instead when the two meet)
  cannot keep it running, and `stop()` waiting for it.
- `wake()` during a pass makes the loop run another one afterwards, so a burst of
  wake-ups costs one extra pass, not one each.
- A backend that cannot serve (`BackendUnavailable`), or a store that refuses every write
  for now (a full disk, another process holding the write lock), puts the job in
  `waiting` and the pass is retried with exponential backoff (tenacity) until it
  succeeds or the job stops. What a pass works through that was stopped on purpose
  (`ShutDown`: the library is closing) ends the job: no retry could help, and the work
  left is still there at the next start.
- `pace()` is how a pass yields to ingest: between pages it waits for the `quiet`
  event (no sweep is reading files in), but never longer than `max_defer` at a time, so
  a slow file cannot hold the whole library's embedding back for long.
- `progress` is done/total/rate/ETA of the pass in flight, reported as it is: a pass
  that picks up work arriving while it runs recounts what is left (`recount`), so the
  total grows with it instead of trailing the done count.
- `request()` wakes the job and waits for a pass that started after the call to end.
"""

from __future__ import annotations

import asyncio
import enum
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from tenacity import AsyncRetrying, RetryCallState, retry_if_exception, wait_exponential

from kenning.errors import MAX_ERROR_CHARS, BackendUnavailable, ShutDown, error_line, error_text
from kenning.store.database import unwritable

log = logging.getLogger(__name__)

BACKOFF_START, BACKOFF_MAX = 2.0, 60.0
MAX_DEFER_SECONDS = 30.0
# How often a pass asks the store how much is left; the count is cheap, not free.
RECOUNT_SECONDS = 2.0


class JobState(enum.StrEnum):
    STOPPED = "stopped"
    STARTING = "starting"
    IDLE = "idle"
    RUNNING = "running"
    DEFERRED = "deferred"  # yielding to a sweep that is reading files in
    WAITING = "waiting"  # the backend cannot serve; retrying with backoff


@dataclass
class Progress:
    """How far the pass in flight has come. `total` may grow as work arrives mid-pass."""

    done: int = 0
    total: int = 0
    started_at: float | None = None
    counted_at: float = 0.0

    def begin(self, total: int) -> None:
        self.done, self.total, self.started_at = 0, total, time.monotonic()
        self.counted_at = self.started_at

    def advance(self, count: int) -> None:
        self.done += count
        self.total = max(self.total, self.done)

    async def recount(self, remaining: Callable[[], Awaitable[int]]) -> None:
        """Set total to done plus what the store says is still to do (at most every
        RECOUNT_SECONDS): work added mid-pass is done in the same pass, and without this
        the done count would overtake the total and the ETA would read zero."""
        now = time.monotonic()
        if now - self.counted_at < RECOUNT_SECONDS:
            return
        self.counted_at = now
        self.total = self.done + await remaining()

    def rate(self) -> float | None:
        if not self.started_at or not self.done:
            return None
        return self.done / max(time.monotonic() - self.started_at, 1e-6)

    def eta(self) -> float | None:
        rate = self.rate()
        return max(self.total - self.done, 0) / rate if rate else None


@dataclass
class _Waiter:
    pass_number: int
    future: asyncio.Future = field(default_factory=lambda: asyncio.get_running_loop().create_future())


class Job:
    """Subclasses implement `run_pass()`; see the module docstring for what they get."""

    name = "job"
    poll_seconds: float | None = None

    def __init__(
        self,
        quiet: asyncio.Event | None = None,
        max_defer: float = MAX_DEFER_SECONDS,
        idle: asyncio.Event | None = None,
    ) -> None:
        self.state = JobState.STOPPED
        self.progress = Progress()
        self.last_error: str | None = None
        # Set while the job has nothing it can do now (idle, or waiting on its backend).
        # A caller may pass an event of its own that outlives this job (a successor job
        # then sets the same one).
        self.idle = idle if idle is not None else asyncio.Event()
        self._quiet = quiet
        self._max_defer = max_defer
        self._wake = asyncio.Event()
        self._task: asyncio.Task | None = None
        self._started = 0
        self._finished = 0
        self._waiters: list[_Waiter] = []

    # -- lifecycle ---------------------------------------------------------------------

    def start(self) -> None:
        if self._task is not None and not self._task.done():
            return
        self.state = JobState.STARTING
        self.idle.clear()
        self._wake.set()
        self._task = asyncio.create_task(self._loop(), name=self.name)
        self._task.add_done_callback(self._ended)

    async def stop(self, timeout: float | None = None) -> None:
        """Cancel the loop and whatever pass is in flight; wait up to `timeout` for it."""
        task, self._task = self._task, None
        if task is not None and not task.done():
            task.cancel()
            await asyncio.wait([task], timeout=timeout)
        self.state = JobState.STOPPED
        self._fail_waiters(asyncio.CancelledError())

    @property
    def running(self) -> bool:
        return self._task is not None and not self._task.done()

    @property
    def passes_ended(self) -> int:
        """How many passes have ended: a count of the work left that was taken before
        the last one ended is out of date."""
        return self._finished

    @property
    def due(self) -> bool:
        """Woken, with the pass that answers it not begun yet: not idle in any sense a
        caller waiting for the work to be done cares about."""
        return self._wake.is_set()

    def wake(self, more: int = 0) -> None:
        """Run another pass; `more` is work that just arrived, counted into a pass in flight."""
        if more and self.state in (JobState.RUNNING, JobState.DEFERRED):
            self.progress.total += more
        self._wake.set()

    async def request(self) -> None:
        """Wake the job and return when a pass that started after this call has ended."""
        waiter = _Waiter(self._started + 1)
        self._waiters.append(waiter)
        self.wake()
        await asyncio.shield(waiter.future)

    # -- for passes ----------------------------------------------------------------------

    async def run_pass(self) -> None:
        raise NotImplementedError

    async def pace(self) -> None:
        """Between pages: yield to a sweep that is reading files in, for a bounded time."""
        if self._quiet is None or self._quiet.is_set():
            return
        self.state = JobState.DEFERRED
        try:
            async with asyncio.timeout(self._max_defer):
                await self._quiet.wait()
        except TimeoutError:
            log.debug("%s: ingest still busy after %.0fs; doing a page anyway", self.name, self._max_defer)
        self.state = JobState.RUNNING

    # -- the loop ------------------------------------------------------------------------

    def _stopped(self) -> bool:
        """Whether the loop asking has been stopped: stop() lets go of its task first."""
        return asyncio.current_task() is not self._task

    async def _loop(self) -> None:
        while not self._stopped():
            self.state = JobState.IDLE
            self.idle.set()
            # Not asyncio.wait_for: on 3.11 it swallows a stop() that meets a wake-up.
            try:
                async with asyncio.timeout(self.poll_seconds):
                    await self._wake.wait()
            except TimeoutError:
                pass
            self._wake.clear()
            self.idle.clear()
            self._started += 1
            number = self._started
            try:
                await self._pass_with_backoff()
            except asyncio.CancelledError:
                raise
            except ShutDown as exc:
                log.info("%s: %s; the job stops", self.name, exc)
                self.last_error = str(exc)
                self._settle(number, exc)
                self.state = JobState.STOPPED
                return
            except Exception as exc:
                log.exception("%s: pass failed", self.name)
                self.last_error = error_line(exc, MAX_ERROR_CHARS)
                self._settle(number, exc)
            else:
                self._settle(number, None)

    async def _pass_with_backoff(self) -> None:
        retrying = AsyncRetrying(
            stop=lambda _: self._stopped(),
            retry=retry_if_exception(_for_now),
            wait=wait_exponential(multiplier=BACKOFF_START, max=BACKOFF_MAX),
            before_sleep=self._waiting,
            reraise=True,
        )
        async for attempt in retrying:
            with attempt:
                self.state = JobState.RUNNING
                await self.run_pass()

    def _waiting(self, retry_state: RetryCallState) -> None:
        error = retry_state.outcome.exception() if retry_state.outcome else None
        # A backend's error may quote what it was answered: a proxy's whole error page.
        message = error_text(str(error))
        if self.last_error != message:
            log.warning("%s paused: %s; retrying with backoff", self.name, message)
        self.last_error = message
        self.state = JobState.WAITING
        # Nothing to do until the backend returns: jobs that wait for this one may go on.
        self.idle.set()

    def _settle(self, number: int, error: Exception | None) -> None:
        self._finished = number
        still = []
        for waiter in self._waiters:
            if waiter.pass_number > number:
                still.append(waiter)
            elif not waiter.future.done():
                if error is None:
                    waiter.future.set_result(None)
                else:
                    waiter.future.set_exception(error)
        self._waiters = still

    def _fail_waiters(self, error: BaseException) -> None:
        for waiter in self._waiters:
            if not waiter.future.done():
                waiter.future.set_exception(error)
                waiter.future.exception()  # retrieved: a stopped job's waiters may be gone
        self._waiters = []

    def _ended(self, task: asyncio.Task) -> None:
        if not task.cancelled() and task.exception() is not None:
            log.error("%s stopped after an error", self.name, exc_info=task.exception())
            self.state = JobState.STOPPED


def _for_now(exc: BaseException) -> bool:
    """A failure that passes by itself: the pass is tried again later, not failed."""
    return isinstance(exc, BackendUnavailable) or unwritable(exc)
