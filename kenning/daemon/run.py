"""Running the daemon as a process: logging, file mode, the event loop, and the exit.

The exit is where the shutdown deadline is kept. Work that runs in threads (a parse, an
embedding call to a hung Ollama, a FIFO someone swapped in) cannot be cancelled, and
both `asyncio.run` and the interpreter's exit wait for such threads forever. So the loop
is run by hand, its executor is shut down without waiting, and if threads are still
busy once the daemon has closed what it owns, the process leaves with `os._exit`: every
write was committed or rolled back by then, and SQLite rolls back any transaction a
stuck thread still holds at the next open.

`KENNING_SLOW_CALLBACK_MS` (set by the test suite) runs the loop in asyncio's debug mode
and logs every step that holds the loop longer than that many milliseconds, with the
CPU time it took (kenning/daemon/stalls.py).

numpy's BLAS is limited to one thread, before anything imports numpy: a vector search
is one matrix-vector product, and OpenBLAS's spinning helper threads made the search
use three times the CPU and slowed the keyword and graph legs running beside it
(measured with bench/search_speed.py).
"""

from __future__ import annotations

import os

for _variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")

import asyncio
import gc
import logging
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from kenning import logs
from kenning.config import Settings
from kenning.daemon.guard import claim
from kenning.daemon.stalls import report_slow_steps
from kenning.errors import KenningError
from kenning.heap import limit_arenas

log = logging.getLogger(__name__)

SLOW_CALLBACK_ENV = "KENNING_SLOW_CALLBACK_MS"
# How long finished threads get to wind down after the loop stops before the process
# leaves without them.
THREAD_GRACE_SECONDS = 0.5


def serve(settings: Settings, config_path: Path) -> None:
    limit_arenas()
    configure_logging(settings.daemon.log_level)
    # Files and folders the daemon creates (data directory, lock, database, WAL, socket)
    # are the user's alone.
    os.umask(0o077)
    lock = claim(settings.daemon.data_dir, settings.daemon.socket_path)
    # Only with the library to itself does the daemon load its modules (all of kenning,
    # numpy, SQLite, the model): a second start on the same library is told so at once.
    from kenning.daemon.supervisor import Daemon

    _load_before_the_loop(settings)
    loop = asyncio.new_event_loop()
    executor = ThreadPoolExecutor(thread_name_prefix="kenning-worker")
    loop.set_default_executor(executor)
    slow_ms = os.environ.get(SLOW_CALLBACK_ENV)
    if slow_ms:
        report_slow_steps(loop, float(slow_ms) / 1000)
    daemon = Daemon(settings, config_path, lock)
    try:
        loop.run_until_complete(daemon.run())
        loop.run_until_complete(loop.shutdown_asyncgens())
    finally:
        executor.shutdown(wait=False, cancel_futures=True)
        loop.close()
        # Out of the loop on an error too: the threads must not keep the process then
        # either.
        _leave_if_threads_hang(sys.exc_info()[1])


def _load_before_the_loop(settings: Settings) -> None:
    """What would otherwise first load in a worker thread while the loop runs, holding
    the GIL (and so the loop) for 100 ms and more: the embedding model, and the modules
    the worker processes are started with. And what would load on the loop itself: the
    asyncio backend httpx connects through, imported at the first page fetch or Ollama
    call, 33 ms of the loop's CPU (50 on a busy machine).

    Then what is loaded is frozen out of the cyclic garbage collector. A full collection
    walks every tracked object, and it runs in whatever code allocates when the counts
    say so, the loop included: with the modules and the model in the heap one took 91 ms
    in the middle of a request (a burst of 500 connections). Nothing loaded here is ever
    freed, so there is nothing for a collection to find in it.
    """
    import multiprocessing.popen_spawn_posix  # noqa: F401

    import anyio._backends._asyncio  # noqa: F401

    from kenning.workers.embedders import load_wordllama

    if settings.embedder.backend == "wordllama":
        try:
            load_wordllama(settings.embedder.model_name, settings.embedder.dim)
        except Exception as exc:  # the embedder reports it properly once it starts
            log.warning("the wordllama model did not load: %s", exc)
    gc.collect()
    gc.freeze()


def configure_logging(level: str) -> None:
    logs.configure(level)
    # aiosqlite logs every statement at debug level, httpx every request, watchfiles
    # every batch of events (at debug those it filters out, such as the log's own writes
    # when the data directory is inside a watched folder: a line that makes another, ten
    # a second; at info each batch kept, a fifth of a busy daemon's log in a soak, saying
    # less than the sweep's own line), and pdfminer warns about every damaged PDF object;
    # they drown kenning's own lines (a bad file is reported once, as its failure reason).
    logging.getLogger("aiosqlite").setLevel(logging.INFO)
    logging.getLogger("watchfiles").setLevel(logging.WARNING)
    logging.getLogger("pdfminer").setLevel(logging.ERROR)
    logging.getLogger("httpx").setLevel(logging.WARNING)


def _leave_if_threads_hang(error: BaseException | None) -> None:
    """Leave with `os._exit` when threads are still busy; `error` is what ended the loop,
    told here since no caller gets to tell it then."""
    deadline = time.monotonic() + THREAD_GRACE_SECONDS
    while (busy := _busy_threads()) and time.monotonic() < deadline:
        time.sleep(0.05)
    if busy:
        log.warning("leaving %d worker threads still busy: %s", len(busy), ", ".join(t.name for t in busy))
        if error is not None:
            log.error("the daemon stopped on an error: %s", error, exc_info=not isinstance(error, KenningError))
        logging.shutdown()
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0 if error is None else 1)


def _busy_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t is not threading.main_thread() and not t.daemon and t.is_alive()]
