"""Reporting loop steps that hold the event loop, for the test suite.

asyncio's debug mode times each callback by the wall clock. On two cores shared with the
test runner and the daemon's own worker processes, a step that needs 20 ms of CPU can
take 300 ms of wall time waiting for a core, and such a report says nothing about the
code. So each step is timed twice: by the wall clock and by the CPU time of the loop's
thread. A step that spends its time on the CPU is work done on the loop (a query, a
parse, a copy of a large buffer); a step that waits a long time without it is a
blocking call or a core taken by someone else. Both figures are logged for every step
over the threshold, and the test harness judges them (tests/daemon_harness.py).

asyncio times steps in `BaseEventLoop._run_once` around `Handle._run` and offers no
hook for it, so `Handle._run` is wrapped: this runs only when `KENNING_SLOW_CALLBACK_MS`
is set, never in a user's daemon.

A step the process was stopped in (SIGSTOP, as tests do to a daemon that must stop
answering) takes as long as the stop, without the CPU: it is logged apart, since
nothing held the loop. A SIGCONT during the step tells them apart; its handler only
counts, and the process resumes whatever handler it has.
"""

from __future__ import annotations

import asyncio
import logging
import signal
import time
from asyncio import events

log = logging.getLogger(__name__)


def report_slow_steps(loop: asyncio.AbstractEventLoop, threshold_seconds: float) -> None:
    """Log each loop step over `threshold_seconds` of wall time, with its CPU time.

    asyncio's debug mode stays on for its other checks (coroutines never awaited, calls
    from the wrong thread); its own wall-clock report is left to this one.
    """
    loop.set_debug(True)
    loop.slow_callback_duration = float("inf")
    run = events.Handle._run
    continued = [0]

    def count_continue(_signum: int, _frame: object) -> None:
        continued[0] += 1

    signal.signal(signal.SIGCONT, count_continue)

    def timed_run(handle: events.Handle) -> None:
        if handle._loop is not loop:
            run(handle)
            return
        wall, cpu, before = time.monotonic(), time.thread_time(), continued[0]
        run(handle)
        wall, cpu = time.monotonic() - wall, time.thread_time() - cpu
        if wall < threshold_seconds:
            return
        if continued[0] != before:
            log.info("loop step took %.3f s, the process stopped (SIGSTOP) in it: %s", wall, _describe(handle))
        else:
            log.warning("loop step took %.3f s, %.3f s of it on the CPU: %s", wall, cpu, _describe(handle))

    events.Handle._run = timed_run  # type: ignore[method-assign]


def _describe(handle: events.Handle) -> str:
    """The task a step belongs to, as asyncio's own report names it, else the callback."""
    owner = getattr(handle._callback, "__self__", None)
    return repr(owner) if isinstance(owner, asyncio.Task) else repr(handle)
