"""A bounded pool of long-lived processes that turn files into chunks under hard limits.

Parsers are where hostile input does its damage: pdfminer inflates a whole stream with
one `zlib.decompress`, python-docx loads all of document.xml, and neither can be told to
stop. Inside the daemon a 400 KB PDF could take 800 MB and a DOCX of two million empty
paragraphs eighteen minutes (bench/hostile.py measures both ways). So every file is
converted in a worker process that has an address-space limit (RLIMIT_AS: an allocation
past it raises MemoryError instead of growing the daemon) and a per-file time limit (the
worker is killed and replaced). Parsing off the daemon process also keeps its CPU work
from holding the GIL the event loop needs.

pebble's ProcessPool does the process work: long-lived workers, a per-task timeout that
kills only the worker running that task, a replacement when a worker dies, and a
running task that is cancelled takes its worker down with it, so a cancelled sweep never
waits for a parse to finish.

Workers exist only while there is parsing to do: they start with the first file and
exit after `idle_seconds` without one, so an idle daemon does not hold a parser's
worth of memory per worker.

The same workers run other CPU-heavy pure-Python work through `run` (the offline entity
extractor): off the daemon process it neither holds the GIL the event loop needs nor
leaves its heap behind in the daemon once a large library has been mined.

A page someone is waiting for (`ken add-url`) goes before background work (a sweep's
files, extraction). pebble queues tasks first come, first served, so background work is
handed to it no more than `workers` tasks at a time and waits here for the rest; a page
is handed over at once and starts as soon as a worker is free, never behind a backlog of
sweeps of several folders. A task already running is never stopped for it.
"""

from __future__ import annotations

import asyncio
import logging
import os
import resource
import threading
import time
import weakref
from collections.abc import Callable
from concurrent.futures.process import BrokenProcessPool
from multiprocessing.context import SpawnContext, SpawnProcess
from pathlib import Path
from typing import Any, TypeVar

from pebble import ProcessExpired, ProcessPool

from kenning import logs
from kenning.errors import ReaderError, ShutDown, WorkerFailed, WorkerStopped
from kenning.ingest.convert import ConvertLimits, Converted, convert_file

log = logging.getLogger(__name__)

T = TypeVar("T")

# Exit codes of a worker stopped by a signal meant for everyone (a service manager ends
# the whole process group with SIGTERM; pebble's worker exits 15 on it): the file was
# not at fault.
_STOPPED_BY_SIGNAL = frozenset({15, -15, -2, -1})
# How long stop() waits for pebble to end its workers; past this the daemon exits anyway
# and the OS reaps them.
_STOP_WAIT_SECONDS = 5.0
# How long a stopped pool's workers have, all together, to leave on SIGTERM before they
# are killed. A worker busy in a parser's C code runs its SIGTERM handler only once that
# returns; pebble waits 3 s for each in turn, so two such workers outlasted the stop wait.
_TERM_GRACE_SECONDS = 1.0
# Workers left with nothing to parse for this long exit; the next file starts them again.
IDLE_SECONDS = 60.0


class ParseInterrupted(Exception):
    """The worker was stopped from outside; the file is not at fault and is tried again later."""


class ParsePool:
    """`workers` processes, each limited to `memory_mb` of address space."""

    def __init__(self, workers: int, memory_mb: int, idle_seconds: float = IDLE_SECONDS) -> None:
        self.workers = workers
        self.memory_mb = memory_mb
        self.idle_seconds = idle_seconds
        self._pool: ProcessPool | None = None
        self._in_flight = 0
        self._idle_timer: asyncio.TimerHandle | None = None
        # A thread lock, taken in the starting thread: the pool is not tied to one loop.
        self._start_lock = threading.Lock()
        self._stopped = False
        # Each pool's start method, which knows its workers; gone with the pool.
        self._spawners: weakref.WeakKeyDictionary[ProcessPool, _Spawner] = weakref.WeakKeyDictionary()
        # What callers await; pebble never settles a task its stop() abandoned.
        self._waiting: set[asyncio.Future] = set()
        # Background tasks handed to pebble, at most `workers` at once; made per event
        # loop, since an asyncio.Semaphore belongs to the loop that first waits on it.
        self._background: asyncio.Semaphore | None = None
        self._background_loop: asyncio.AbstractEventLoop | None = None

    async def convert(self, path: Path, fallback_title: str, limits: ConvertLimits, timeout: float) -> Converted:
        """Raises ReaderError when the file hit a limit, took over `timeout` s or crashed its worker."""
        return await self.read(convert_file, (path, fallback_title, limits), timeout)

    async def read(self, function: Callable[..., T], args: tuple, timeout: float, urgent: bool = False) -> T:
        """`function(*args)`, a read of one file, in a worker: its failures as `convert`'s.
        `urgent` when someone is waiting for the answer: it goes before background work."""
        try:
            return await self.run(function, args, timeout, urgent)
        except MemoryError:
            raise ReaderError(
                f"ran out of memory: the parse limit is {self.memory_mb} MB ([limits] parse_memory_mb)"
            ) from None
        except TimeoutError:
            raise ReaderError(f"took longer than the {timeout:g}-second parse limit ([limits] parse_timeout)") from None
        except (WorkerStopped, ShutDown) as exc:
            raise ParseInterrupted(str(exc)) from None
        except WorkerFailed as exc:
            raise ReaderError(f"the parser crashed ({exc})") from None

    async def run(self, function: Callable, args: tuple, timeout: float, urgent: bool = False):
        """`function(*args)` in a worker; MemoryError and TimeoutError as they happened
        there, WorkerFailed when the worker died, WorkerStopped when it was stopped from
        outside (new workers start), ShutDown once stop() was called (none will)."""
        # Counted before the pool is fetched, so the idle timer cannot retire the pool
        # this call is about to use.
        self._in_flight += 1
        if self._idle_timer is not None:
            self._idle_timer.cancel()
            self._idle_timer = None
        try:
            if urgent:
                return await self._run(function, args, timeout)
            async with self._background_slots():
                return await self._run(function, args, timeout)
        finally:
            self._in_flight -= 1
            if not self._in_flight and not self._stopped:
                self._idle_timer = asyncio.get_running_loop().call_later(self.idle_seconds, self._retire_idle)

    def _background_slots(self) -> asyncio.Semaphore:
        loop = asyncio.get_running_loop()
        if self._background is None or self._background_loop is not loop:
            self._background, self._background_loop = asyncio.Semaphore(self.workers), loop
        return self._background

    async def _run(self, function: Callable, args: tuple, timeout: float):
        pool = await self._running_pool()
        try:
            future = pool.schedule(function, args=args, timeout=timeout)
        except RuntimeError:
            # The pool broke (all its workers died) between the check and this call.
            self._discard(pool)
            raise WorkerStopped("worker pool broke; it is restarted") from None
        waiting = asyncio.wrap_future(future)
        self._waiting.add(waiting)
        try:
            return await waiting
        except asyncio.CancelledError:
            # stop() cancels what is in flight; a caller that was not cancelled itself
            # learns why, and that no retry can help.
            current = asyncio.current_task()
            if self._stopped and waiting.cancelled() and current is not None and not current.cancelling():
                raise ShutDown("the worker pool was stopped mid-task") from None
            raise
        except ProcessExpired as exc:
            if exc.exitcode in _STOPPED_BY_SIGNAL:
                raise WorkerStopped(f"worker stopped (exit code {exc.exitcode})") from None
            raise WorkerFailed(f"worker exit code {exc.exitcode}") from None
        except BrokenProcessPool:
            # Every worker died at once (killed from outside, or the system is out of
            # processes): start afresh next time and let the work be tried again.
            self._discard(pool)
            raise WorkerStopped("worker pool broke; it is restarted") from None
        finally:
            self._waiting.discard(waiting)

    async def stop(self) -> None:
        """End every worker now; a parse in progress is abandoned, never waited for, and
        whoever awaits it gets ShutDown at once."""
        self._stopped = True
        for waiting in list(self._waiting):
            waiting.cancel()
        if self._idle_timer is not None:
            self._idle_timer.cancel()
            self._idle_timer = None
        pool, self._pool = self._pool, None
        if pool is None:
            return
        loop = asyncio.get_running_loop()
        done = loop.create_future()
        _dispose(pool, self._spawners[pool], lambda: loop.call_soon_threadsafe(_resolve, done))
        try:
            async with asyncio.timeout(_STOP_WAIT_SECONDS):
                await done
        except TimeoutError:
            log.warning("parse workers did not stop within %.0fs; leaving them to the OS", _STOP_WAIT_SECONDS)

    async def _running_pool(self) -> ProcessPool:
        if self._stopped:
            raise ShutDown("the worker pool is stopped")
        pool = self._pool
        if pool is not None and pool.active:
            return pool
        # Starting spawns the workers, which is process creation: off the loop.
        return await asyncio.to_thread(self._start)

    def _start(self) -> ProcessPool:
        with self._start_lock:
            old = self._pool
            if old is not None:
                if old.active:
                    return old
                self._discard(old)
            pool = self._pool = self._new_pool()
            if self._stopped:
                # stop() ran while the workers were starting, and found no pool to end: the
                # daemon is on its way out, and the pool is ended before this thread, which
                # the exit waits for, returns. Left to run on, the exit cut its ending short.
                if self._pool is pool:
                    self._pool = None
                ended = threading.Event()
                _dispose(pool, self._spawners[pool], ended.set)
                ended.wait(_STOP_WAIT_SECONDS)
                raise ShutDown("the worker pool is stopped")
            return pool

    def _new_pool(self) -> ProcessPool:
        spawner = _Spawner()
        pool = ProcessPool(
            max_workers=self.workers,
            initializer=_limit_worker,
            initargs=(self.memory_mb,),
            # spawn, not fork: the daemon has threads (SQLite, watchers), and a forked
            # child of a threaded process can inherit a lock held by one of them.
            context=spawner,
        )
        self._spawners[pool] = spawner
        # pebble starts its workers on the first schedule; a no-op task does it here.
        pool.schedule(_ready).result()
        return pool

    def _retire_idle(self) -> None:
        self._idle_timer = None
        if self._in_flight or self._pool is None:
            return
        log.debug("parse workers idle for %.0fs; stopping them until the next file", self.idle_seconds)
        self._discard(self._pool)

    def _discard(self, pool: ProcessPool) -> None:
        if self._pool is pool:
            self._pool = None
        _dispose(pool, self._spawners[pool], lambda: None)


def _dispose(pool: ProcessPool, spawner: _Spawner, then: Callable[[], None]) -> None:
    """Stop a pool and reap its workers in a daemon thread, then call `then`.

    Not the loop's executor: asyncio.run() waits for executor threads at exit, and a
    worker stuck in the kernel could hold pebble's join forever.

    The pool's own workers are sent SIGTERM first, once the pool is marked stopped (its
    manager then starts no more, but for one it may be starting at that moment). pebble
    (5.2.3) unlinks its channels' semaphores and then ends the workers one by one, waiting
    up to 3 s for each: a worker still starting meanwhile (a pool's second, or the
    replacement for one a parse limit killed) found the semaphores gone and left a
    traceback in the daemon's log, while the worker before it, busy in a parser's C code,
    took its time to die. Only this pool's: the daemon has one, but a process may hold
    more (the test suite's does), and another's parse in flight is none of this stop's.
    """

    def join() -> None:
        pool.stop()
        workers = spawner.unreaped()
        for worker in workers:
            worker.terminate()
        deadline = time.monotonic() + _TERM_GRACE_SECONDS
        for worker in workers:
            worker.join(max(0.0, deadline - time.monotonic()))
        for worker in spawner.unreaped():
            worker.kill()
        pool.join()
        then()

    threading.Thread(target=join, name="parse-pool-stop", daemon=True).start()


class _Spawner(SpawnContext):
    """The spawn start method for one pool, keeping the processes it started: pebble
    names every pool's workers alike, and a stop must end its own and no other's.
    pebble asks a context for `Process`, so that is what is answered here."""

    def __init__(self) -> None:
        # pebble's manager thread starts replacements while a stop may be reading these.
        self._lock = threading.Lock()
        self._started: weakref.WeakSet[SpawnProcess] = weakref.WeakSet()

    def Process(self, *args: Any, **kwargs: Any) -> SpawnProcess:
        process = SpawnProcess(*args, **kwargs)
        with self._lock:
            self._started.add(process)
        return process

    def unreaped(self) -> list[SpawnProcess]:
        """Started (a pid) and not yet waited for: a signal to one reaped could reach a
        process that took its pid since."""
        with self._lock:
            started = list(self._started)
        return [process for process in started if process.pid is not None and process.exitcode is None]


def _resolve(future: asyncio.Future) -> None:
    if not future.done():
        future.set_result(None)


def _ready() -> None:
    """The first task of a new pool, so its workers are up before files are queued."""


# Workers do background work: the daemon (its event loop, a search) goes first for the CPU.
WORKER_NICENESS = 10


def _limit_worker(memory_mb: int) -> None:
    """Runs in each worker as it starts: lower its priority, cap its address space.

    A spawned worker starts with no logging set up, so a library's warning went to the
    daemon's log bare, without time or source, and whole, however long a value it quoted:
    it logs as the daemon does (kenning/logs.py). pdfminer's warnings, about every odd
    object of a PDF, as the daemon quiets them in its own process (daemon/run.py), are
    quieted here."""
    logs.configure("warning")
    logging.getLogger("pdfminer").setLevel(logging.ERROR)
    os.nice(WORKER_NICENESS)
    limit = memory_mb * 1024 * 1024
    try:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    except (ValueError, OSError) as exc:
        # Some systems (macOS) do not enforce RLIMIT_AS; the time limit and the text and
        # chunk caps still hold there.
        logging.getLogger(__name__).warning("cannot limit parse worker memory: %s", exc)
