"""The loop-step report the daemon tests judge stalls by: work on the loop shows as CPU
time, a step that only waits does not, and steps under the threshold are not logged."""

from __future__ import annotations

import asyncio
import logging
import os
import re
import signal
import subprocess
import time
from asyncio import events

import pytest

from kenning.daemon.stalls import report_slow_steps

STEP = re.compile(r"loop step took (\d+\.\d+) s, (\d+\.\d+) s of it on the CPU")


def _busy(seconds: float) -> None:
    end = time.thread_time() + seconds
    while time.thread_time() < end:
        pass


def test_a_step_is_reported_with_its_wall_and_cpu_time(monkeypatch: pytest.MonkeyPatch, caplog) -> None:
    monkeypatch.setattr(events.Handle, "_run", events.Handle._run)  # put back after the test
    loop = asyncio.new_event_loop()
    try:
        report_slow_steps(loop, 0.1)

        async def steps() -> None:
            _busy(0.15)  # work on the loop
            await asyncio.sleep(0)
            time.sleep(0.15)  # a blocking call: time passes, the CPU is idle
            await asyncio.sleep(0)
            _busy(0.01)  # under the threshold

        with caplog.at_level(logging.WARNING, logger="kenning.daemon.stalls"):
            loop.run_until_complete(steps())
    finally:
        loop.close()
    # Each step is told by the line its task stopped at. The last one does 10 ms of work,
    # under the threshold, but a core taken by someone else can stretch it past: then it is
    # reported, as it should be, and only the wall clock tells whether it had to be.
    first = steps.__code__.co_firstlineno
    names = {f"test_stalls.py:{first + 2}>": "busy", f"test_stalls.py:{first + 4}>": "blocked"}
    reported = {
        next((name for at, name in names.items() if at in r.getMessage()), "last"): tuple(
            float(v) for v in STEP.search(r.getMessage()).groups()
        )
        for r in caplog.records
    }
    busy_wall, busy_cpu = reported.pop("busy")
    blocked_wall, blocked_cpu = reported.pop("blocked")
    assert busy_wall >= 0.15 and busy_cpu >= 0.14
    assert blocked_wall >= 0.15 and blocked_cpu < 0.05
    assert all(wall >= 0.1 for wall, _ in reported.values()), caplog.text


def test_another_loop_is_not_timed(monkeypatch: pytest.MonkeyPatch, caplog) -> None:
    monkeypatch.setattr(events.Handle, "_run", events.Handle._run)
    watched, other = asyncio.new_event_loop(), asyncio.new_event_loop()
    try:
        report_slow_steps(watched, 0.05)

        async def slow() -> None:
            _busy(0.08)

        with caplog.at_level(logging.WARNING, logger="kenning.daemon.stalls"):
            other.run_until_complete(slow())
    finally:
        watched.close()
        other.close()
    assert not caplog.records


def test_a_step_the_process_was_stopped_in_is_not_reported_as_a_stall(monkeypatch: pytest.MonkeyPatch, caplog) -> None:
    """Tests SIGSTOP a daemon that must stop answering: a step it was stopped in took as
    long as the stop, and failed the test as a loop held for seconds, though nothing held
    it. Here the process stops itself mid-step and a child sends SIGCONT a second later."""
    monkeypatch.setattr(events.Handle, "_run", events.Handle._run)  # put back after the test
    previous = signal.getsignal(signal.SIGCONT)
    # It waits for its standard input to close, the step's word to go on, then sends
    # SIGCONT every second until it is killed: one sent before the stop would leave the
    # test stopped for good.
    waker = subprocess.Popen(
        ["sh", "-c", f"read _; while sleep 1; do kill -CONT {os.getpid()} || exit; done"], stdin=subprocess.PIPE
    )
    loop = asyncio.new_event_loop()
    try:
        report_slow_steps(loop, 0.5)

        async def stopped() -> None:
            assert waker.stdin is not None
            waker.stdin.close()
            os.kill(os.getpid(), signal.SIGSTOP)
            time.sleep(0.01)  # the SIGCONT handler runs at the next bytecode

        with caplog.at_level(logging.INFO, logger="kenning.daemon.stalls"):
            loop.run_until_complete(stopped())
    finally:
        loop.close()
        signal.signal(signal.SIGCONT, previous)
        waker.kill()
        waker.wait(timeout=30)
    [record] = caplog.records
    assert record.levelno == logging.INFO and "the process stopped (SIGSTOP) in it" in record.getMessage()
    assert not STEP.search(record.getMessage())
