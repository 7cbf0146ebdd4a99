"""`ken add-url` in a burst, through a real daemon and the real CLI: a page waiting its
turn for a fetch worker is waited for, and a daemon that stops answering is still given
up on, saying where the page was.

The daemon fetches four pages at a time. The client's --timeout used to count from the
moment it asked, so the later calls of a burst spent it in the queue and reported "no
answer from the daemon" while the daemon went on to add their pages.
"""

from __future__ import annotations

import itertools
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator

import psutil
import pytest

from tests.daemon_harness import wait_for
from tests.web_server import Handler, RouteServer, serving

FETCH_LOOPBACK = '[fetch]\nallowed_hosts = ["127.0.0.1"]\ntimeout = 20\n'
PAGE = "<html><head><title>Tides {n}</title></head><body><h1>Tides {n}</h1><p>Neap tide number {n}.</p></body></html>"


@pytest.fixture
def http_server() -> Iterator[RouteServer]:
    with serving() as server:
        yield server


def slow_page(seconds: float):
    def answer(handler: Handler) -> None:
        handler.server.stopping.wait(seconds)
        n = handler.path.strip("/")
        handler.reply(200, "text/html; charset=utf-8", PAGE.format(n=n).encode())

    return answer


def add_url(library, url: str, timeout: float) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "kenning", "--config", str(library.config), "add-url", "--timeout", str(timeout), url],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip


def accepted(daemon) -> int:
    """Connections the daemon has taken on its socket (the one it listens on aside)."""
    assert daemon.proc is not None
    connections = psutil.Process(daemon.proc.pid).net_connections(kind="unix")
    return sum(connection.laddr == str(daemon.socket) for connection in connections) - 1


def web_documents(daemon) -> int:
    sources = daemon.call("status")["sources"]
    return next((s["holds"] for s in sources if s["name"] == "web"), 0)


def test_a_burst_of_add_urls_is_waited_for_in_the_queue_and_every_page_is_added(library, http_server):
    """Sixteen pages at once, four fetched at a time, the first twelve taking 3 s each to
    serve: the last four calls wait 9 s for a worker, past the 8 s each call allows its
    own fetch. Each call's own fetch and reading fit in it with 5 s to spare for a loaded
    machine, so every call answers with its page. The last four are served at once: the
    wait before them is what is tested, and their own 3 s added nothing to it."""
    served = itertools.count()
    slow, prompt = slow_page(3), slow_page(0)

    def page(handler: Handler) -> None:
        # In the order the daemon asks, which is the order its queue hands out pages.
        (slow if next(served) < 12 else prompt)(handler)

    for n in range(16):
        http_server.routes[f"/{n}"] = page
    http_server.routes["/first"] = slow_page(0)
    library.configure([], extra=FETCH_LOOPBACK)
    daemon = library.daemon()
    # The fetch workers are started by the first page, not under the load of the burst.
    daemon.call("urls.add", {"url": f"{http_server.base}/first"})

    calls = [add_url(library, f"{http_server.base}/{n}", timeout=8) for n in range(16)]
    answers = [call.communicate(timeout=120) for call in calls]

    failed = [(call.args[-1], err) for call, (_, err) in zip(calls, answers) if call.returncode != 0]
    assert not failed, failed
    assert all(out.startswith("document ") and "indexed" in out for out, _ in answers), answers
    assert web_documents(daemon) == 17


def test_a_daemon_that_stops_answering_while_a_page_is_queued_is_given_up_on(library, http_server):
    """Four pages that do not answer hold every fetch worker, so a fifth waits its turn,
    and the daemon says so. Once the daemon is stopped (SIGSTOP) and says nothing more,
    the call is waited for past its --timeout, then gives up and says the page was
    waiting for a fetch worker: after no word for --timeout, or 15 s when that is
    shorter, since the daemon repeats itself only every 5 s.

    The daemon is stopped within 5 s of taking the call, before its first repeat, so the
    15 s count from its first word. Stopped 12 s in, after two repeats, the call gave up
    10 s later with the same message; the burst test shows a call kept waiting past its
    --timeout by a daemon that goes on answering."""
    release = threading.Event()

    def held(handler: Handler) -> None:
        release.wait(90)
        handler.reply(200, "text/html; charset=utf-8", PAGE.format(n=handler.path.strip("/")).encode())

    for n in range(4):
        http_server.routes[f"/held-{n}"] = held
    http_server.routes["/queued"] = slow_page(0)
    library.configure([], extra=FETCH_LOOPBACK.replace("timeout = 20", "timeout = 60"))
    daemon = library.daemon()
    assert daemon.proc is not None

    try:
        holding = [add_url(library, f"{http_server.base}/held-{n}", timeout=90) for n in range(4)]
        wait_for(lambda: sum(p.startswith("/held-") for p in http_server.paths) == 4, 30, "four fetches held")
        queued = add_url(library, f"{http_server.base}/queued", timeout=5)
        wait_for(lambda: accepted(daemon) == 5, 30, "the daemon to take the queued call")
        # Time to read the call and say it is queued: each step of the daemon's loop
        # takes under a second, or the test fails (tests/daemon_harness.py).
        time.sleep(3)
        daemon.proc.send_signal(signal.SIGSTOP)
        try:
            # Past its --timeout, still waiting its turn; it gives up 15 s after the word.
            with pytest.raises(subprocess.TimeoutExpired):
                queued.wait(timeout=6)
            _, err = queued.communicate(timeout=40)
        finally:
            daemon.proc.send_signal(signal.SIGCONT)
    finally:
        release.set()

    assert queued.returncode == 1
    assert "no word from the daemon for 15 s while the page waited for a fetch worker" in err, err
    assert f"it may still be fetching and adding {http_server.base}/queued" in err, err
    for call in holding:
        _, err = call.communicate(timeout=60)
        assert call.returncode == 0, err
    # Only its client gave up on it: the daemon goes on and adds it.
    wait_for(lambda: web_documents(daemon) == 5, 30, "the queued page to be added after all")
