"""The daemon: one object with startup, main loop and shutdown, around the Library.

Signal handlers only set flags (SIGTERM/SIGINT: exit, a second one: exit now; SIGHUP:
reload); the main loop notices. Shutdown has one deadline, counted from the signal:
stop accepting, let requests finish for part of it, stop the jobs (a page or file in
flight rolls back), close the database; whatever is still running when the deadline
comes is abandoned (kenning/daemon/run.py makes the process leave without it). The
socket is removed and the data-directory lock released in any case.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import time
from collections.abc import Awaitable
from pathlib import Path

from kenning.config import Settings
from kenning.config.paths import LOG_ROTATE_BYTES
from kenning.config.running import DaemonRecord, remove_record, write_record
from kenning.daemon.guard import DataDirLock, clear_stale_socket
from kenning.daemon.logfile import rotate_own_log
from kenning.daemon.methods import build_methods
from kenning.daemon.notify import ServiceNotifier
from kenning.daemon.server import RpcServer
from kenning.errors import ConfigError, KenningError
from kenning.service.library import Library

log = logging.getLogger(__name__)

# From SIGTERM to exit; service managers kill after 10 s or more.
SHUTDOWN_DEADLINE_SECONDS = 9.0
# Of which open requests may take this much to finish.
REQUEST_DRAIN_SECONDS = 3.0
# How often the daemon checks that its socket and data-directory lock are still there,
# and whether its log file has grown past LOG_ROTATE_BYTES.
HOME_CHECK_SECONDS = 5.0


class Daemon:
    def __init__(self, settings: Settings, config_path: Path, lock: DataDirLock) -> None:
        """`lock`: the data directory's, already held (guard.claim); released at shutdown."""
        self.settings = settings
        self.library = Library(settings, config_path)
        self.should_exit = asyncio.Event()
        self.force_exit = False
        self._reload_requested = asyncio.Event()
        self._lock = lock
        self._server: RpcServer | None = None
        self._exit_requested_at: float | None = None
        self._notifier = ServiceNotifier()
        self._record = DaemonRecord(
            pid=os.getpid(),
            config=str(config_path),
            data_dir=str(settings.daemon.data_dir),
            socket=str(settings.daemon.socket_path),
        )
        self._recorded = False
        # Why the daemon left on its own: its socket or data directory was taken away.
        self.lost: str | None = None

    async def run(self) -> None:
        try:
            await self.startup()
            await self.main_loop()
        finally:
            await self.shutdown()
        if self.lost:
            raise KenningError(self.lost)

    async def startup(self) -> None:
        daemon = self.settings.daemon
        clear_stale_socket(daemon.socket_path)
        # Before anything slow (a migration): a `ken restart` after the config moved the
        # library finds this daemon by it from here on.
        await asyncio.to_thread(self._write_record)
        self._install_signal_handlers()
        await self.library.open()
        self._server = RpcServer(
            daemon.socket_path, build_methods(self.library), daemon.socket_idle_timeout, daemon.socket_line_timeout
        )
        await self._server.start()
        log.info("kenning daemon ready (pid %d, data %s)", os.getpid(), daemon.data_dir)
        self._notifier.ready()

    async def main_loop(self) -> None:
        next_sweep = time.monotonic() + self.library.settings.daemon.sweep_interval
        while not self.should_exit.is_set():
            timeout = min(max(0.0, next_sweep - time.monotonic()), HOME_CHECK_SECONDS)
            waiters = [asyncio.ensure_future(self.should_exit.wait()), asyncio.ensure_future(self._reload_requested.wait())]
            await asyncio.wait(waiters, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
            for waiter in waiters:
                waiter.cancel()
            if self.should_exit.is_set():
                break
            # Off the loop: a stat on a hung network mount would hold every request.
            self.lost = await asyncio.to_thread(self._home_lost)
            if self.lost is not None:
                # Nobody can reach or stop this daemon any more, and a new one may already
                # serve the same folders: it leaves (with an error, so a service manager
                # starts it again on a fresh data directory).
                log.error("%s; stopping", self.lost)
                break
            await asyncio.to_thread(rotate_own_log, LOG_ROTATE_BYTES)
            if self._reload_requested.is_set():
                self._reload_requested.clear()
                try:
                    await self.library.reload()
                except ConfigError as exc:
                    log.error("reload refused, keeping the previous configuration: %s", exc)
                except Exception:
                    # A reload that failed midway must not take the daemon down with it:
                    # the parts it did not reach keep their previous settings.
                    log.exception("reload failed; the daemon goes on")
            if time.monotonic() >= next_sweep:
                self.library.periodic_round()
                next_sweep = time.monotonic() + self.library.settings.daemon.sweep_interval

    async def shutdown(self) -> None:
        log.info("shutting down")
        self._lock.mark_stopping()
        self.library.stopping()
        await self._notifier.stop()
        started = self._exit_requested_at or time.monotonic()
        deadline = started + SHUTDOWN_DEADLINE_SECONDS
        try:
            if not await within(deadline, self._close(deadline)):
                log.warning(
                    "shutdown deadline of %.0fs passed; leaving with work in flight (it rolls back)",
                    SHUTDOWN_DEADLINE_SECONDS,
                )
        finally:
            if self._server is not None:
                self._server.remove_socket()
            if self._recorded:
                # (On the loop: a shutdown past its deadline must still get here.)
                self._remove_record()
            self._lock.release()
        log.info("stopped after %.1fs", time.monotonic() - started)

    async def _close(self, deadline: float) -> None:
        if self._server is not None:
            drain = 0 if self.force_exit else min(REQUEST_DRAIN_SECONDS, deadline - time.monotonic())
            await self._server.stop(timeout=max(drain, 0))
        await self.library.close()

    def _write_record(self) -> None:
        # A record is how `ken stop` finds this daemon once the config names another
        # place; a state directory that cannot be written costs only that.
        try:
            path = write_record(self._record)
        except OSError as exc:
            log.warning("cannot record this daemon where `ken stop` looks for it: %s", exc)
            return
        self._recorded = True
        log.info("recorded this daemon in %s", path)

    def _remove_record(self) -> None:
        try:
            remove_record(self._record)
        except OSError as exc:
            log.warning("cannot remove this daemon's record: %s", exc)

    def _home_lost(self) -> str | None:
        daemon = self.settings.daemon
        if not self._lock.held():
            return f"the data directory {daemon.data_dir} or its lock file was deleted or replaced"
        if self._server is not None and self._server.lost_socket():
            return f"the socket {daemon.socket_path} was deleted or replaced"
        return None

    def _install_signal_handlers(self) -> None:
        loop = asyncio.get_running_loop()
        loop.add_signal_handler(signal.SIGTERM, self._on_exit_signal)
        loop.add_signal_handler(signal.SIGINT, self._on_exit_signal)
        loop.add_signal_handler(signal.SIGHUP, self._reload_requested.set)

    def _on_exit_signal(self) -> None:
        if self.should_exit.is_set():
            self.force_exit = True
        else:
            self._exit_requested_at = time.monotonic()
        self.should_exit.set()


async def within(deadline: float, work: Awaitable[None]) -> bool:
    """Await `work` until the `time.monotonic()` deadline; False when the deadline cut it short.

    asyncio.timeout turns the cancellation it caused into TimeoutError only when that
    comes back as a plain CancelledError (Python 3.11 checks the exact type). A store write
    in flight re-raises its cancellation as a subclass that carries what it committed
    (store/database.py `_Cut`); that went past the deadline's handling and out of the
    loop, and the process then waited for the database's threads for good. A cancellation
    of the caller's own, come while the cut work wound down, is passed on, not taken for
    the deadline's.
    """
    timeout = asyncio.timeout_at(asyncio.get_running_loop().time() + (deadline - time.monotonic()))
    try:
        async with timeout:
            await work
    except TimeoutError:
        return False
    except asyncio.CancelledError:
        running = asyncio.current_task()
        if not timeout.expired() or (running is not None and running.cancelling()):
            raise
        return False
    return True
