"""An agent saving a web page through `ken mcp`: the SDK's stdio client drives the real
server, which calls a real daemon, which fetches from a small HTTP server on 127.0.0.1
that the test starts. The daemon's fetch policy ([fetch] allowed_hosts, private
addresses, redirects) is the gate; the MCP tools add none of their own but are offered
only when writes are allowed."""

from __future__ import annotations

import json
import signal
import threading
import time
from collections.abc import Iterator

import pytest

from tests.mcp_client import data, error_text, ken_mcp
from tests.web_server import Handler, RouteServer, serving

# A tool call waits 1 s for an ordinary answer: a page's fetch and reading is waited for
# by the stage the daemon reports, not by that.
CONFIG = '[mcp]\nallow_writes = true\ntimeout = 1\n[fetch]\nallowed_hosts = ["127.0.0.1"]\ntimeout = 20\n'
PAGE = "<html><head><title>Tide tables</title></head><body><h1>Tide tables</h1><p>The {word} neap tide.</p></body></html>"


@pytest.fixture
def http_server() -> Iterator[RouteServer]:
    with serving() as server:
        yield server


def page(word: str, seconds: float = 0, etag: str | None = None):
    def answer(handler: Handler) -> None:
        handler.server.stopping.wait(seconds)
        if etag is not None and handler.headers.get("If-None-Match") == etag:
            handler.reply(304, None, b"", ETag=etag)
            return
        headers = {"ETag": etag} if etag else {}
        handler.reply(200, "text/html; charset=utf-8", PAGE.format(word=word).encode(), **headers)

    return answer


async def test_an_agent_saves_a_page_that_search_then_cites_and_is_told_how_the_fetch_goes(library, http_server):
    # Served in 7 s, seven times the call's own timeout: the stages keep it waiting, and
    # the daemon says "fetching" again every 5 s meanwhile.
    http_server.routes["/tides"] = page("quahog", seconds=7, etag='"v1"')
    library.configure([], CONFIG)
    library.daemon()
    url = f"{http_server.base}/tides"
    told: list[tuple[float, float | None, str | None]] = []

    async def progress(value: float, total: float | None, message: str | None) -> None:
        told.append((value, total, message))

    async with ken_mcp(library.config, library.root / "mcp.log") as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert tools["add_url"].annotations.open_world_hint is True
        assert "allowed_hosts" in tools["add_url"].description
        added = data(await client.call_tool("add_url", {"url": url}, progress_callback=progress))
        assert (added["title"], added["uri"], added["url"], added["stored"]) == ("Tide tables", url, url, "indexed")
        # Fetching, then reading (each told again while it lasts), the value only growing.
        stages = [message for _, _, message in told]
        assert sorted(set(stages), key=stages.index) == ["fetching the page", "reading and storing the page"]
        assert [value for value, _, _ in told] == sorted({value for value, _, _ in told})
        assert {total for _, total, _ in told} == {3}
        assert stages.count("fetching the page") >= 2

        [hit] = data(await client.call_tool("search", {"query": "quahog"}))["hits"]
        assert (hit["document_id"], hit["path"], hit["source"]) == (added["document_id"], url, "web")

        # Answered in 2 s, twice the call's own timeout: refresh_url is waited for by stage
        # as add_url is, with no second 7 s fetch to show it.
        http_server.routes["/tides"] = page("quahog", seconds=2, etag='"v1"')
        unchanged = data(await client.call_tool("refresh_url", {"url": url}))
        assert (unchanged["document_id"], unchanged["changed"]) == (added["document_id"], False)


async def test_a_refused_or_failed_fetch_is_a_tool_error_saying_why_and_stores_nothing(library, http_server):
    http_server.routes["/there"] = page("walrus")
    library.configure([], CONFIG)
    daemon = library.daemon()
    port = http_server.server_address[1]

    async with ken_mcp(library.config, library.root / "mcp.log") as client:
        # A host the user did not list, though it is this same loopback server.
        assert "allowed_hosts" in error_text(await client.call_tool("add_url", {"url": f"http://localhost:{port}/there"}))
        assert "404" in error_text(await client.call_tool("add_url", {"url": f"{http_server.base}/missing"}))
        assert "file" in error_text(await client.call_tool("add_url", {"url": "file:///etc/passwd"}))
        assert "has not been added" in error_text(
            await client.call_tool("refresh_url", {"url": f"{http_server.base}/there"})
        )
    assert "/there" not in http_server.paths
    assert daemon.call("status")["library"]["documents"] == 0


async def test_a_token_in_a_page_url_reaches_its_host_but_is_not_stored_or_shown(library, http_server):
    secret = "ghp_" + "Z" * 36
    http_server.routes[f"/tides?access_token={secret}"] = page("barnacle")
    library.configure([], CONFIG)
    library.daemon()
    url = f"{http_server.base}/tides?access_token={secret}"

    async with ken_mcp(library.config, library.root / "mcp.log") as client:
        added = data(await client.call_tool("add_url", {"url": url}))
        assert secret not in added["uri"]
        [hit] = data(await client.call_tool("search", {"query": "barnacle"}))["hits"]
        assert secret not in hit["path"]
        # The agent that knows the whole URL finds its page by it.
        assert data(await client.call_tool("get", {"uri": url}))["document"]["document_id"] == added["document_id"]


async def test_a_token_a_redirect_hands_out_is_not_shown_to_the_agent(library, http_server):
    """The answer's `url` (where redirects ended) was the only place the daemon showed a
    URL unredacted: a page that redirects to a signed address put its token, one the
    agent never had, in the agent's context. A page refreshed unchanged answered with the
    URL asked for as its `uri`, token and all, where a changed one answers the stored uri."""
    issued = "ghp_" + "R" * 36
    asked = "ghp_" + "S" * 36
    http_server.routes[f"/go?access_token={asked}"] = lambda handler: handler.redirect(
        f"{http_server.base}/signed?access_token={issued}"
    )
    http_server.routes[f"/signed?access_token={issued}"] = page("cockle", etag='"v1"')
    library.configure([], CONFIG)
    library.daemon()
    url = f"{http_server.base}/go?access_token={asked}"

    async with ken_mcp(library.config, library.root / "mcp.log") as client:
        added = data(await client.call_tool("add_url", {"url": url}))
        assert added["url"].startswith(f"{http_server.base}/signed?access_token=")
        refreshed = data(await client.call_tool("refresh_url", {"url": url}))
    assert f"/signed?access_token={issued}" in http_server.paths
    assert issued not in json.dumps(added) and asked not in json.dumps(added)
    assert refreshed["changed"] is False
    assert asked not in json.dumps(refreshed) and refreshed["uri"] == added["uri"]


async def test_fetching_is_not_offered_until_writes_are_allowed(library, http_server):
    http_server.routes["/tides"] = page("limpet")
    library.configure([], '[fetch]\nallowed_hosts = ["127.0.0.1"]\n')
    daemon = library.daemon()

    async with ken_mcp(library.config, library.root / "mcp.log") as client:
        assert not {"add_url", "refresh_url"} & {tool.name for tool in (await client.list_tools()).tools}
        assert "add_url" in client.instructions
        assert "add_url" in error_text(await client.call_tool("add_url", {"url": f"{http_server.base}/tides"}))
    assert http_server.paths == []
    assert daemon.call("status")["library"]["documents"] == 0


async def test_pages_being_fetched_do_not_hold_up_the_other_tools(library, http_server):
    """A session sends at most MAX_CALLS calls to the daemon at once, and a page waits
    for its fetch as long as the daemon says it is working on it: as many slow pages as
    that took every place, and a search or a status call waited behind them, past its
    own timeout, for as long as the pages took."""
    import anyio

    from kenning.mcp.calls import MAX_CALLS

    release = threading.Event()

    def held(handler: Handler) -> None:
        release.wait(120)
        handler.reply(200, "text/html; charset=utf-8", PAGE.format(word=handler.path.strip("/")).encode())

    for n in range(MAX_CALLS):
        http_server.routes[f"/held{n}"] = held
    library.configure([], CONFIG.replace("timeout = 20", "timeout = 120").replace("timeout = 1\n", "timeout = 10\n"))
    library.daemon()

    async with ken_mcp(library.config, library.root / "mcp.log") as client:
        added = []

        async def add(n: int) -> None:
            added.append(await client.call_tool("add_url", {"url": f"{http_server.base}/held{n}"}))

        async with anyio.create_task_group() as fetching:
            for n in range(MAX_CALLS):
                fetching.start_soon(add, n)
            try:
                # The daemon's four fetch workers each hold a page; the rest are queued.
                with anyio.fail_after(30):
                    while sum(path.startswith("/held") for path in http_server.paths) < 4:
                        await anyio.sleep(0.1)
                with anyio.fail_after(60):
                    status = data(await client.call_tool("status", {}))
                    hits = data(await client.call_tool("search", {"query": "anything"}))
            finally:
                release.set()
        assert status["library"]["documents"] == 0 and hits["hits"] == []
        assert [result for result in added if result.is_error] == []


async def test_a_page_call_waiting_for_a_place_gives_up_when_a_page_call_would(library):
    """A session has at most MAX_PAGE_CALLS page calls at the daemon at once, and the next
    waited for a place with no deadline: against a daemon that had stopped answering
    (SIGSTOP), it waited for the sixteen to give up, then as long again itself (2 x 180 s
    with the default config). Here a page's wait is [fetch] timeout 4 + [limits]
    parse_timeout 1 + a margin of 1 s = 6 s, so the seventeenth was answered after 12 s;
    the calls are given 5 s past their 6 s for a loaded machine, and that wait, done
    twice, is past it. (Its place may come free just before its deadline, when the
    sixteen give up: then its call, not its wait for a place, is what ends at it.)"""
    import anyio

    from kenning.mcp.calls import MAX_PAGE_CALLS

    library.configure([], "[mcp]\nallow_writes = true\ntimeout = 1\n[fetch]\ntimeout = 4\n[limits]\nparse_timeout = 1\n")
    daemon = library.daemon()
    assert daemon.proc is not None
    results: list[str] = []
    async with ken_mcp(library.config, library.root / "mcp.log", page_wait_margin=1.0) as client:
        # (A host the daemon refuses at once, were it to read the calls after all.)
        assert "allowed_hosts" in error_text(await client.call_tool("add_url", {"url": "http://example.invalid/0"}))

        async def add(n: int) -> None:
            results.append(error_text(await client.call_tool("add_url", {"url": f"http://example.invalid/{n}"})))

        daemon.proc.send_signal(signal.SIGSTOP)
        try:
            started = time.monotonic()
            async with anyio.create_task_group() as calls:
                for n in range(MAX_PAGE_CALLS + 1):
                    calls.start_soon(add, n)
            took = time.monotonic() - started
        finally:
            daemon.proc.send_signal(signal.SIGCONT)
    assert len(results) == MAX_PAGE_CALLS + 1
    assert all("kenning daemon did not answer 'urls.add' within 6 s" in text for text in results), results
    assert took < 11, took


async def test_a_daemon_stopped_while_it_saves_a_page_says_the_page_may_be_saved_and_how_to_check(library, http_server):
    """The agent was told only that the daemon "closed the connection without answering",
    which reads as nothing done, though a write may have been done before it stopped."""
    import anyio

    release = threading.Event()

    def held(handler: Handler) -> None:
        release.wait(60)
        handler.reply(200, "text/html; charset=utf-8", PAGE.format(word="sculpin").encode())

    http_server.routes["/held"] = held
    library.configure([], CONFIG)
    daemon = library.daemon()
    url = f"{http_server.base}/held"
    told: list[str] = []
    try:
        async with ken_mcp(library.config, library.root / "mcp.log") as client:

            async def add() -> None:
                told.append(error_text(await client.call_tool("add_url", {"url": url})))

            async with anyio.create_task_group() as calls:
                calls.start_soon(add)
                with anyio.fail_after(30):
                    while "/held" not in http_server.paths:
                        await anyio.sleep(0.1)
                await anyio.to_thread.run_sync(daemon.stop)
    finally:
        release.set()
    [text] = told
    assert "closed the connection without answering 'urls.add'" in text, text
    assert "may have done it before it stopped: get(uri=...) with the url shows the page once it is stored" in text


async def test_an_agent_that_cancels_its_page_calls_stops_the_daemon_fetching_them(library, http_server):
    """A host's `notifications/cancelled` closed `ken mcp`'s connection to the daemon, but
    the daemon fetched, read and stored the page all the same: four cancelled slow pages
    held the daemon's four fetch workers until their hosts answered, the next page
    waited behind them, and the pages the agent had given up on were stored."""
    import anyio

    release = threading.Event()

    def held(handler: Handler) -> None:
        release.wait(120)
        handler.reply(200, "text/html; charset=utf-8", PAGE.format(word="grunion").encode())

    for n in range(4):
        http_server.routes[f"/held{n}"] = held
    http_server.routes["/ready"] = page("sculpin")
    library.configure([], CONFIG.replace("timeout = 20", "timeout = 120"))
    daemon = library.daemon()
    try:
        async with ken_mcp(library.config, library.root / "mcp.log") as client:
            async with anyio.create_task_group() as calls:
                for n in range(4):
                    calls.start_soon(client.call_tool, "add_url", {"url": f"{http_server.base}/held{n}"})
                # The daemon's four fetch workers each hold a page.
                with anyio.fail_after(30):
                    while sum(path.startswith("/held") for path in http_server.paths) < 4:
                        await anyio.sleep(0.1)
                calls.cancel_scope.cancel()
            with anyio.fail_after(30):
                added = data(await client.call_tool("add_url", {"url": f"{http_server.base}/ready"}))
    finally:
        release.set()
    assert added["title"] == "Tide tables"
    assert daemon.log().count("method urls.add: its client went before the answer; stopped it") == 4
    assert daemon.search("grunion") == []
    assert daemon.call("status")["library"]["documents"] == 1
