"""`ken add-url` fetching against real HTTP servers on loopback.

The internet is out of reach here, so refusals of outside addresses are tested on the
paths that refuse before connecting; every server records the paths it was asked for,
so a test can show a refused hop never reached it.
"""

from __future__ import annotations

import asyncio
import re
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from typing import Any

import pytest

from kenning.config.settings import ChunkingSettings, FetchSettings, LimitsSettings
from kenning.errors import ReaderError
from kenning.ingest.pages import PageLimits, prepare_page
from kenning.ingest.text_prep import PreparedText
from kenning.store.records import FetchedPage
from kenning.workers.fetch import (
    Fetcher,
    FetchError,
    FetchRefused,
    NotModified,
)
from kenning.workers.url_pool import FetchRequest, url_pool
from tests.web_server import Handler, RouteServer, serving

@pytest.fixture
def serve() -> Iterator[Callable[..., RouteServer]]:
    """Start loopback servers on demand; all are stopped and checked for handler errors."""
    with ExitStack() as stack:

        def start(host: str = "127.0.0.1", family: socket.AddressFamily = socket.AF_INET) -> RouteServer:
            return stack.enter_context(serving(host, family))

        yield start


def base(server: RouteServer, host: str = "127.0.0.1") -> str:
    return f"http://{host}:{server.server_address[1]}"


async def fetch(url: str, *allowed: str, **settings: Any) -> FetchedPage | NotModified:
    async with Fetcher(FetchSettings(allowed_hosts=allowed, **settings)) as fetcher:
        return await fetcher.fetch(url)


def read(page: FetchedPage | NotModified) -> PreparedText:
    """The page as it would be stored; the daemon does this in a parse worker."""
    assert isinstance(page, FetchedPage)
    return prepare_page(page, PageLimits.of(ChunkingSettings(), LimitsSettings()))


ARTICLE = b"""<!doctype html><html><head><title>Tide  tables &amp; you</title>
<script>var tracking = 1;</script></head><body><h1>Reading tides</h1>
<p>High water comes <a href="/moon">twice a day</a>.</p></body></html>"""


async def test_allowed_loopback_page_comes_back_as_markdown_with_title(serve) -> None:
    server = serve()
    server.routes["/article"] = lambda h: h.reply(
        200,
        "text/html; charset=utf-8",
        ARTICLE,
        ETag='"a1"',
        Last_Modified="Mon, 01 Jan 2024 00:00:00 GMT",
    )

    page = await fetch(base(server) + "/article#part", "127.0.0.1")

    assert isinstance(page, FetchedPage)
    assert page.format == "html"
    prepared = read(page)
    assert prepared.labels.title == "Tide tables & you"
    assert "# Reading tides" in prepared.text
    assert "[twice a day](/moon)" in prepared.text
    assert "tracking" not in prepared.text
    assert page.url == base(server) + "/article"
    assert page.requested_url == base(server) + "/article#part"
    assert (page.etag, page.last_modified) == ('"a1"', "Mon, 01 Jan 2024 00:00:00 GMT")
    # Only the page itself: no links, robots.txt or assets were fetched.
    assert server.paths == ["/article"]


async def test_requests_identify_kenning_and_no_cookie_is_kept(serve) -> None:
    server = serve()
    server.routes["/login"] = lambda h: h.reply(
        200, "text/plain", b"hi", Set_Cookie="session=s3cret; Path=/"
    )
    server.routes["/next"] = lambda h: h.reply(200, "text/plain", b"again")

    async with Fetcher(FetchSettings(allowed_hosts=("127.0.0.1",))) as fetcher:
        await fetcher.fetch(base(server) + "/login")
        await fetcher.fetch(base(server) + "/next")

    headers = dict(server.seen)["/next"]
    assert headers["User-Agent"].startswith("kenning/")
    assert "Cookie" not in headers


@pytest.mark.parametrize(
    ("content_type", "body", "page_format", "title"),
    [
        ("text/markdown", b"intro\n\n# Moon phases\n\ntext", "markdown", "Moon phases"),
        ("text/x-markdown", b"# Neap tides\n", "markdown", "Neap tides"),
        ("text/plain", b"just words\r\nmore", "text", None),
    ],
)
async def test_text_and_markdown_pages_are_kept_as_they_are(
    serve, content_type, body, page_format, title
) -> None:
    server = serve()
    server.routes["/doc"] = lambda h: h.reply(200, content_type, body)

    page = await fetch(base(server) + "/doc", "127.0.0.1")

    assert page.format == page_format
    prepared = read(page)
    assert prepared.text == body.decode().replace("\r\n", "\n")
    assert prepared.labels.title == (title or base(server) + "/doc")


@pytest.mark.parametrize(
    ("body", "limits", "reason"),
    [
        (
            b"# a\n\n" * 11,
            LimitsSettings(max_chunks_per_file=10),
            "makes 11 chunks, over the [limits] max_chunks_per_file limit of 10",
        ),
        (
            b"tern " * 2001,
            LimitsSettings(max_text_chars=10_000),
            "text passes the [limits] max_text_chars limit of 10000 characters",
        ),
        # 1,000 characters as sent; folded, each is eighteen letters ("ﷺ").
        (
            "\ufdfa".encode() * 1000,
            LimitsSettings(max_text_chars=10_000),
            "text passes the [limits] max_text_chars limit of 10000 characters once its letters are folded",
        ),
    ],
)
def test_a_page_is_held_to_the_limits_a_file_is(body: bytes, limits: LimitsSettings, reason: str) -> None:
    """[fetch] max_mb bounds a page's bytes, not what they make: 5 MB of empty headings
    made a million chunks."""
    page = FetchedPage("https://a.example/", "https://a.example/", body, None, "markdown", None, None)
    with pytest.raises(ReaderError) as refused:
        prepare_page(page, PageLimits.of(ChunkingSettings(), limits))
    assert str(refused.value) == reason


@pytest.mark.parametrize(
    ("content_type", "body", "expected"),
    [
        ("text/html; charset=iso-8859-1", "<p>café</p>".encode("latin-1"), "café"),
        (
            "text/html",
            '<meta charset="windows-1252"><p>naïve “quotes”</p>'.encode("cp1252"),
            "naïve “quotes”",
        ),
        # The header wins over a <meta> that disagrees with it.
        ("text/html; charset=utf-8", '<meta charset="latin-1"><p>ünïcode</p>'.encode(), "ünïcode"),
        ("text/plain", b"broken \xff byte", "broken \ufffd byte"),
        # Read as browsers read them (and as a saved page is): a server saying Latin-1
        # over Windows-1252's quotes, a page saying Shift_JIS over cp932's extra signs.
        ("text/html; charset=iso-8859-1", "<p>“quoted” — note</p>".encode("cp1252"), "“quoted” — note"),
        ("text/html", '<meta charset="shift_jis"><p>会議 ①</p>'.encode("cp932"), "会議 ①"),
    ],
)
async def test_charset_comes_from_header_then_meta_then_utf8(
    serve, content_type, body, expected
) -> None:
    server = serve()
    server.routes["/enc"] = lambda h: h.reply(200, content_type, body)

    page = await fetch(base(server) + "/enc", "127.0.0.1")

    assert read(page).text.strip() == expected


@pytest.mark.parametrize("charset", ["base64", "rot13", "undefined", "idna"])
async def test_a_charset_python_knows_only_as_no_text_encoding_reads_the_page_as_utf8(serve, charset) -> None:
    """Python's codecs also name bytes-to-bytes and str-to-str codecs: a server saying
    `charset=base64` (or a page's <meta> saying so) made decoding raise LookupError, and
    `ken add-url` answered "internal error" with a traceback in the daemon's log."""
    server = serve()
    body = f'<meta charset="{charset}"><p>café notes</p>'.encode()
    server.routes["/header"] = lambda h: h.reply(200, f"text/html; charset={charset}", body)
    server.routes["/meta"] = lambda h: h.reply(200, "text/html", body)

    for path in ("/header", "/meta"):
        page = await fetch(base(server) + path, "127.0.0.1")
        assert read(page).text.strip() == "café notes", path


async def test_default_settings_fetch_nothing_and_name_the_setting(serve) -> None:
    server = serve()

    with pytest.raises(FetchRefused) as refused:
        await fetch(base(server) + "/")

    assert str(refused.value) == (
        "refused: fetching is off: add the host to [fetch] allowed_hosts in config.toml"
    )
    assert server.paths == []


@pytest.mark.parametrize(
    ("url", "allowed"),
    [
        ("http://localhost:{port}/", ("example.com",)),
        ("http://example.com/", ("*.example.com",)),
        ("http://docs.example.org/", ("example.org",)),
    ],
)
async def test_host_not_in_list_is_refused_before_any_lookup(serve, url, allowed) -> None:
    server = serve()
    url = url.format(port=server.server_address[1])
    host = url.split("//")[1].split(":")[0].split("/")[0]

    with pytest.raises(
        FetchRefused, match=rf"^refused: host {host} is not in \[fetch\] allowed_hosts"
    ):
        await fetch(url, *allowed)

    assert server.paths == []


@pytest.mark.parametrize("allowed", [("example.com",), ("*",)])
async def test_loopback_address_is_refused_unless_listed_itself(serve, allowed) -> None:
    server = serve()

    with pytest.raises(
        FetchRefused, match=r"^refused: 127\.0\.0\.1 is a loopback address; add 127\.0\.0\.1"
    ):
        await fetch(base(server) + "/", *allowed)

    assert server.paths == []


async def test_localhost_resolving_to_loopback_needs_the_name_or_address_listed(serve) -> None:
    server = serve()
    server.routes["/"] = lambda h: h.reply(200, "text/plain", b"local")
    url = base(server, "localhost") + "/"

    with pytest.raises(
        FetchRefused, match=r"^refused: localhost resolves to \S+, which is a loopback address"
    ):
        await fetch(url, "*")
    assert server.paths == []

    assert read(await fetch(url, "localhost")).text == "local"
    # Sent to the checked address, yet still addressed to the name, for virtual hosts.
    assert server.seen[-1][1]["Host"] == f"localhost:{server.server_address[1]}"
    assert read(await fetch(url, "*", "127.0.0.1", "::1")).text == "local"


@pytest.mark.parametrize(
    ("target", "reason"),
    [
        ("http://10.0.0.1/admin", "10.0.0.1 is a private address"),
        ("http://169.254.169.254/latest/meta-data/", "169.254.169.254 is a link-local address"),
        ("http://100.64.0.1/", r"100.64.0.1 is a shared \(CGNAT\) address"),
        ("http://0.0.0.0:{port}/secret", "0.0.0.0 is an unspecified address"),
        ("http://localhost:{port}/secret", r"host localhost is not in \[fetch\] allowed_hosts"),
        ("file:///etc/passwd", "only http and https URLs are fetched, not file:"),
        ("http://user:pw@127.0.0.1:{port}/secret", r"URLs with a user name or password"),
    ],
)
async def test_redirect_to_a_refused_place_is_refused_as_a_redirect(serve, target, reason) -> None:
    server = serve()
    target = target.format(port=server.server_address[1])
    server.routes["/jump"] = lambda h: h.redirect(target)
    server.routes["/secret"] = lambda h: h.reply(200, "text/plain", b"internal")

    with pytest.raises(FetchRefused) as refused:
        await fetch(base(server) + "/jump", "127.0.0.1")

    message = str(refused.value)
    assert message.startswith(f"refused redirect from {base(server)}/jump to {target}: ")
    assert re.search(reason, message)
    assert server.paths == ["/jump"]


async def test_relative_redirect_is_quoted_resolved_when_refused(serve) -> None:
    server = serve()
    server.routes["/jump"] = lambda h: h.redirect("//localhost:1/inside")

    with pytest.raises(FetchRefused) as refused:
        await fetch(base(server) + "/jump", "127.0.0.1")

    assert str(refused.value).startswith(
        f"refused redirect from {base(server)}/jump to http://localhost:1/inside: host localhost"
    )


async def test_redirects_are_followed_to_the_final_url(serve) -> None:
    server = serve()
    server.routes["/old"] = lambda h: h.redirect(base(server) + "/moved", 301)
    server.routes["/moved"] = lambda h: h.redirect("new?x=1", 307)
    server.routes["/new?x=1"] = lambda h: h.reply(
        200, "text/html", b"<title>Arrived</title><p>ok</p>"
    )

    page = await fetch(base(server) + "/old", "127.0.0.1", max_redirects=2)

    assert (page.url, read(page).labels.title) == (base(server) + "/new?x=1", "Arrived")
    assert server.paths == ["/old", "/moved", "/new?x=1"]


async def test_too_many_redirects_stops_at_the_setting(serve) -> None:
    server = serve()
    server.routes["/loop"] = lambda h: h.redirect("/loop")

    with pytest.raises(
        FetchRefused, match=r"redirected more than 2 times \(the \[fetch\] max_redirects setting\)"
    ):
        await fetch(base(server) + "/loop", "127.0.0.1", max_redirects=2)

    assert server.paths == ["/loop"] * 3


def _declared_too_big(handler: Handler) -> None:
    handler.send_response(200)
    handler.send_header("Content-Type", "text/plain")
    handler.send_header("Content-Length", str(50 * 1024 * 1024))
    handler.end_headers()
    handler.wfile.flush()
    # Sends no body at all: a fetcher that waited for it would hit the timeout instead.
    handler.server.stopping.wait(10)


def _endless_chunks(handler: Handler) -> None:
    handler.send_response(200)
    handler.send_header("Content-Type", "text/plain")
    handler.send_header("Transfer-Encoding", "chunked")
    handler.end_headers()
    chunk = b"x" * 65536
    while not handler.server.stopping.is_set():
        handler.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))


def _close_delimited(handler: Handler) -> None:
    handler.close_connection = True
    handler.send_response(200)
    handler.send_header("Content-Type", "text/plain")
    handler.send_header("Connection", "close")
    handler.end_headers()
    handler.wfile.write(b"y" * (2 * 1024 * 1024))


@pytest.mark.parametrize("route", [_declared_too_big, _endless_chunks, _close_delimited])
async def test_body_over_max_mb_is_refused(serve, route) -> None:
    server = serve()
    server.routes["/big"] = route
    started = time.monotonic()

    with pytest.raises(FetchRefused, match=r"larger than the \[fetch\] max_mb limit of 1 MB"):
        await fetch(base(server) + "/big", "127.0.0.1", max_mb=1, timeout=20)

    assert time.monotonic() - started < 10


async def test_slow_server_is_cut_off_at_the_timeout(serve) -> None:
    server = serve()

    def slow(handler: Handler) -> None:
        if not handler.server.stopping.wait(10):
            handler.reply(200, "text/plain", b"too late")

    server.routes["/slow"] = slow
    started = time.monotonic()

    with pytest.raises(FetchError, match=r"took longer than the \[fetch\] timeout of 0\.5 s"):
        await fetch(base(server) + "/slow", "127.0.0.1", timeout=0.5)

    assert time.monotonic() - started < 3


async def test_redirect_hops_share_one_time_budget(serve) -> None:
    server = serve()

    def dawdle_then_redirect(handler: Handler) -> None:
        handler.server.stopping.wait(0.3)
        handler.redirect(f"/hop{int(handler.path.removeprefix('/hop')) + 1}")

    for index in range(20):
        server.routes[f"/hop{index}"] = dawdle_then_redirect

    with pytest.raises(FetchError, match="took longer than the"):
        await fetch(base(server) + "/hop0", "127.0.0.1", timeout=1, max_redirects=20)

    # Each hop alone is well inside the second; only their sum runs out of it.
    assert 2 <= len(server.paths) <= 5


async def test_non_text_content_type_is_refused_by_name(serve) -> None:
    server = serve()
    server.routes["/paper.pdf"] = lambda h: h.reply(200, "application/pdf", b"%PDF-1.7")

    with pytest.raises(FetchRefused, match=r"^refused: content type application/pdf is not text$"):
        await fetch(base(server) + "/paper.pdf", "127.0.0.1")


async def test_error_status_is_reported(serve) -> None:
    server = serve()

    with pytest.raises(FetchError, match=r"/missing answered HTTP 404 Not Found$") as failed:
        await fetch(base(server) + "/missing", "127.0.0.1")

    assert not isinstance(failed.value, FetchRefused)


@pytest.mark.parametrize(
    ("validator", "request_header"),
    [("ETag", "If-None-Match"), ("Last-Modified", "If-Modified-Since")],
)
async def test_conditional_get_returns_not_modified(serve, validator, request_header) -> None:
    server = serve()
    value = '"v7"' if validator == "ETag" else "Tue, 02 Jan 2024 03:04:05 GMT"

    def page(handler: Handler) -> None:
        if handler.headers.get(request_header) == value:
            handler.send_response(304)
            handler.send_header(validator, value)
            handler.end_headers()
        else:
            handler.reply(200, "text/plain", b"tide table", **{validator: value})

    server.routes["/page"] = page
    url = base(server) + "/page"

    async with Fetcher(FetchSettings(allowed_hosts=("127.0.0.1",))) as fetcher:
        first = await fetcher.fetch(url)
        assert isinstance(first, FetchedPage)
        stored = {"etag": first.etag, "last_modified": first.last_modified}
        again = await fetcher.fetch(url, **stored)

    assert isinstance(again, NotModified)
    assert again.url == url
    assert value in (again.etag, again.last_modified)


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("file:///etc/passwd", "file:"),
        ("ftp://127.0.0.1/pub", "ftp:"),
        ("gopher://127.0.0.1/", "gopher:"),
    ],
)
async def test_only_http_and_https_are_fetched(url, shown) -> None:
    with pytest.raises(
        FetchRefused, match=rf"^refused: only http and https URLs are fetched, not {shown}$"
    ):
        await fetch(url, "*", "127.0.0.1")


async def test_url_with_credentials_is_refused(serve) -> None:
    server = serve()
    url = f"http://user:pass@127.0.0.1:{server.server_address[1]}/"

    with pytest.raises(FetchRefused, match=r"user name or password"):
        await fetch(url, "127.0.0.1")

    assert server.paths == []


async def test_ipv6_loopback_literal_is_refused_unless_listed() -> None:
    # Refused before any connection is tried, so no IPv6 server is needed to show it.
    with pytest.raises(FetchRefused, match=r"^refused: ::1 is a loopback address"):
        await fetch("http://[::1]:9/", "127.0.0.1", "*")


async def test_a_listed_ipv6_loopback_is_fetched(serve) -> None:
    ipv6_server = serve("::1", socket.AF_INET6)
    ipv6_server.routes["/"] = lambda h: h.reply(200, "text/plain", b"over v6")
    assert read(await fetch(f"http://[::1]:{ipv6_server.server_address[1]}/", "::1")).text == "over v6"


async def test_ipv4_mapped_ipv6_loopback_is_refused(serve) -> None:
    server = serve()

    with pytest.raises(FetchRefused, match=r"^refused: ::ffff:127\.0\.0\.1 is a loopback address"):
        await fetch(f"http://[::ffff:127.0.0.1]:{server.server_address[1]}/", "127.0.0.1", "*")

    assert server.paths == []


async def test_a_burst_of_adds_is_fetched_side_by_side(serve) -> None:
    """Ten `ken add-url` calls at once against slow pages: with one fetch worker the later
    ones sat queued past the client's deadline. Here each page answers only once four
    requests are waiting on it together, so a pool that fetches fewer than four at a
    time never sees it and runs into the [fetch] timeout instead."""
    server = serve()
    pool = url_pool(FetchSettings(allowed_hosts=("127.0.0.1",), timeout=15))
    together = threading.Barrier(4)

    def meet(handler: Handler) -> None:
        try:
            together.wait(timeout=12)
        except threading.BrokenBarrierError:
            handler.reply(503, "text/plain", b"fetched alone")
            return
        handler.reply(200, "text/plain", handler.path.encode())

    paths = [f"/page{index}" for index in range(4)]
    for path in paths:
        server.routes[path] = meet
    try:
        pages = await asyncio.gather(*(pool.send(FetchRequest(server.base + path)) for path in paths))
    finally:
        await pool.close()

    assert sorted(page.body for page in pages if isinstance(page, FetchedPage)) == [p.encode() for p in paths]
