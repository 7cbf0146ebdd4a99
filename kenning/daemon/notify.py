"""Telling systemd how the daemon is doing (sd_notify), through systemd-watchdog.

Under a `Type=notify` unit, `ready()` is sent once the socket answers, so `systemctl
start` (and `ken start`) return when `ken` can use the daemon rather than when the
process exists. With `WatchdogSec=` set, a task on the event loop pings at a quarter of
the interval: a loop that blocks stops the pings, and systemd restarts the daemon. Outside
systemd (no NOTIFY_SOCKET) every call does nothing.
"""

from __future__ import annotations

import asyncio
import logging
import os

from systemd_watchdog import WatchDog

log = logging.getLogger(__name__)


class ServiceNotifier:
    def __init__(self) -> None:
        self._dog = WatchDog()
        self._task: asyncio.Task | None = None

    def ready(self) -> None:
        self._send(self._dog.ready)
        if self._dog.is_enabled and os.environ.get("WATCHDOG_USEC"):
            interval = self._dog.timeout / 4e6
            self._task = asyncio.create_task(self._pings(interval), name="watchdog")
            log.info("systemd watchdog: pinging every %.1fs", interval)

    def status(self, text: str) -> None:
        self._send(lambda: self._dog.status(text))

    async def stop(self) -> None:
        self.status("stopping")
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)

    async def _pings(self, interval: float) -> None:
        while True:
            self._send(self._dog.notify)
            await asyncio.sleep(interval)

    def _send(self, send) -> None:
        if not self._dog.is_enabled:
            return
        try:
            send()
        except OSError as exc:
            # A manager that went away is no reason to stop serving.
            log.warning("cannot notify the service manager at %s: %s", os.environ.get("NOTIFY_SOCKET"), exc)
