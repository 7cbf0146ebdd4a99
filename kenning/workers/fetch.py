"""Fetch one web page a user asked for (`ken add-url`), under the [fetch] policy, as bytes.

The bytes are turned into text in a parse worker (kenning.ingest.pages), under the
[limits] that hold a file's reading, not here: the conversion of hostile markup can run
for minutes, and in the daemon nothing could stop it.

A daemon that fetches URLs on request is a way into the user's network for anyone who can
get a URL in front of it, so every hop, the first request and each redirect, passes the
same checks before a byte is sent:

- only http and https, and no user:pass@ in the URL (it would send credentials on);
- the host must be in [fetch] allowed_hosts; an empty list means fetching is off. An
  entry is a host name or address, `*.example.com` for its subdomains, or `*` for any;
- every address the host resolves to must be public. Loopback, private, link-local,
  CGNAT, multicast, reserved and unspecified addresses (also inside IPv4-mapped IPv6)
  are refused unless the host name itself, or that address, is listed exactly: listing
  "nas.home" is an explicit choice, matching it through `*` is not.

DNS rebinding defence: the name is resolved once (off the event loop) and the request is
sent to a checked address literally: the URL's host becomes the IP, the Host header keeps
the name and TLS gets it as `sni_hostname`, so certificates are still verified against
the name. A second lookup by the HTTP stack, which a rebinding DNS server could answer
differently, never happens. Keep-alive is off so a TLS connection verified for one name
is never reused for another name at the same address.

The client ignores the environment (trust_env=False): a proxy from HTTP(S)_PROXY would
resolve names itself, out of reach of the address check, and a daemon started from a
login shell must not silently route the user's fetches through it; .netrc credentials
are not sent either. No cookie is ever stored, so one fetch cannot influence the next.
Nothing is fetched beyond the page itself: no links, robots.txt, images or styles.
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import socket
from dataclasses import dataclass
from http.cookiejar import CookieJar, DefaultCookiePolicy
from types import TracebackType
from typing import Literal, Self

from kenning import __version__
from kenning.config.settings import FetchSettings
from kenning.errors import KenningError, error_line
from kenning.store.records import FetchedPage
from kenning.workers.http_client import httpx

logger = logging.getLogger(__name__)

USER_AGENT = f"kenning/{__version__} (local knowledge library; fetches only URLs its user adds)"
_ACCEPT = "text/html,application/xhtml+xml,text/markdown,text/plain;q=0.9"
_FORMATS: dict[str, Literal["html", "text", "markdown"]] = {
    "text/html": "html",
    "application/xhtml+xml": "html",
    "text/plain": "text",
    "text/markdown": "markdown",
    "text/x-markdown": "markdown",
}
_REDIRECTS = frozenset({301, 302, 303, 307, 308})
_CGNAT = ipaddress.ip_network("100.64.0.0/10")
# Most specific first: 127.0.0.1 is also "private", and the message should say loopback.
_SPECIAL_KINDS = (
    ("an unspecified", lambda a: a.is_unspecified),
    ("a loopback", lambda a: a.is_loopback),
    ("a link-local", lambda a: a.is_link_local),
    ("a multicast", lambda a: a.is_multicast),
    ("a private", lambda a: a.is_private),
    ("a shared (CGNAT)", lambda a: a in _CGNAT),
    ("a reserved", lambda a: a.is_reserved),
    ("a non-public", lambda a: not a.is_global),
)
_OFF = "fetching is off: add the host to [fetch] allowed_hosts in config.toml"

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


class FetchError(KenningError):
    """The page could not be fetched (network, HTTP status, timeout); a retry may work."""


class FetchRefused(FetchError):
    """The [fetch] policy said no; retrying is pointless until the URL or config changes."""


@dataclass(frozen=True)
class NotModified:
    """The server answered 304 to a conditional GET: the stored copy is still current."""

    url: str
    requested_url: str
    etag: str | None
    last_modified: str | None


class _Refusal(Exception):
    """A policy reason, worded once and prefixed by the caller with where it happened."""


class Fetcher:
    """Holds the policy and one HTTP client; the caller runs fetches through its pool."""

    def __init__(self, settings: FetchSettings) -> None:
        self._settings = settings
        self._allowed = frozenset(_normal_host(entry) for entry in settings.allowed_hosts)
        self._client = httpx.AsyncClient(
            headers={"User-Agent": USER_AGENT, "Accept": _ACCEPT},
            timeout=settings.timeout,
            follow_redirects=False,
            trust_env=False,
            limits=httpx.Limits(max_keepalive_connections=0),
            cookies=CookieJar(policy=DefaultCookiePolicy(allowed_domains=[])),
        )

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    async def close(self) -> None:
        """Safe to call twice: closing an httpx client that is closed is a no-op."""
        await self._client.aclose()

    async def fetch(
        self, url: str, etag: str | None = None, last_modified: str | None = None
    ) -> FetchedPage | NotModified:
        """Fetch `url`, following redirects by hand so each hop is checked like the first.

        `etag` and `last_modified` are the values stored from the last fetch; with either,
        an unchanged page costs a 304 and comes back as NotModified.
        """
        headers = {}
        if etag:
            headers["If-None-Match"] = etag
        if last_modified:
            headers["If-Modified-Since"] = last_modified
        timeout = self._settings.timeout
        try:
            async with asyncio.timeout(timeout):
                return await self._follow(url, headers)
        except (TimeoutError, httpx.TimeoutException):
            raise FetchError(
                f"fetching {url} took longer than the [fetch] timeout of {timeout:g} s"
            ) from None
        except httpx.HTTPError as exc:
            raise FetchError(f"cannot fetch {url}: {error_line(exc)}") from None

    async def _follow(self, requested: str, headers: dict[str, str]) -> FetchedPage | NotModified:
        previous: httpx.URL | None = None
        target = requested
        for _ in range(self._settings.max_redirects + 1):
            try:
                url = _parse(target)
                addresses = await self._admit(url)
            except _Refusal as refusal:
                where = f"refused redirect from {previous} to {target}" if previous else "refused"
                raise FetchRefused(f"{where}: {refusal}") from None
            response = await self._send(url, addresses, headers)
            try:
                if response.status_code in _REDIRECTS:
                    location = response.headers.get("location", "")
                    if not location:
                        raise FetchError(
                            f"{url} redirected (HTTP {response.status_code}) to nowhere"
                        )
                    target = _absolute(url, location)
                    logger.debug("%s redirects to %s", url, target)
                    previous = url
                    continue
                if response.status_code == 304:
                    return NotModified(
                        str(url),
                        requested,
                        response.headers.get("etag"),
                        response.headers.get("last-modified"),
                    )
                if not response.is_success:
                    raise FetchError(
                        f"{url} answered HTTP {response.status_code} {response.reason_phrase}".rstrip()
                    )
                return await self._read(response, url, requested)
            finally:
                await response.aclose()
        raise FetchRefused(
            f"refused: {requested} redirected more than {self._settings.max_redirects} times"
            " (the [fetch] max_redirects setting)"
        )

    async def _admit(self, url: httpx.URL) -> tuple[str, ...]:
        """The addresses `url` may be fetched at, or a _Refusal saying which rule said no."""
        if not self._allowed:
            raise _Refusal(_OFF)
        host = url.host.lower()
        names = {_normal_host(host), _normal_host(url.raw_host.decode("ascii"))}
        literal = _ip(host)
        if literal is not None:
            # Before the list check, so http://127.0.0.1/ under `*` is called loopback,
            # which tells the user what to list, rather than "not allowed".
            self._check_address(host, literal, names)
        if not any(_host_matches(name, entry) for name in names for entry in self._allowed):
            raise _Refusal(f"host {host} is not in [fetch] allowed_hosts in config.toml")
        if literal is not None:
            return (host,)
        port = url.port or (443 if url.scheme == "https" else 80)
        try:
            infos = await asyncio.get_running_loop().getaddrinfo(
                url.raw_host.decode("ascii"), port, type=socket.SOCK_STREAM
            )
        except socket.gaierror as exc:
            raise FetchError(f"cannot resolve {host}: {exc.strerror or exc}") from None
        addresses = tuple(dict.fromkeys(str(info[4][0]) for info in infos))
        # Every address, not just the first: a DNS answer mixing a public and a private
        # address would otherwise let the connection fall through to the private one.
        for address in addresses:
            self._check_address(host, ipaddress.ip_address(address), names)
        return addresses

    def _check_address(self, host: str, address: IPAddress, names: set[str]) -> None:
        kind = _special_kind(address)
        if kind is None or names & self._allowed or str(address) in self._allowed:
            return
        subject = host if _ip(host) == address else f"{host} resolves to {address}, which"
        raise _Refusal(
            f"{subject} is {kind} address; add {host} to [fetch] allowed_hosts in"
            " config.toml to fetch it"
        )

    async def _send(
        self, url: httpx.URL, addresses: tuple[str, ...], headers: dict[str, str]
    ) -> httpx.Response:
        """Connect to a checked address; the next one is tried only if connecting fails."""
        error: httpx.ConnectError | None = None
        for address in addresses:
            request = self._client.build_request(
                "GET",
                url.copy_with(host=address),
                headers={**headers, "Host": url.netloc.decode("ascii")},
                extensions={"sni_hostname": url.raw_host.decode("ascii").rstrip(".")},
            )
            try:
                return await self._client.send(request, stream=True)
            except httpx.ConnectError as exc:
                error = exc
        raise FetchError(f"cannot connect to {url.host}: {error_line(error)}")

    async def _read(self, response: httpx.Response, url: httpx.URL, requested: str) -> FetchedPage:
        media_type, charset = _content_type(response.headers.get("content-type", ""))
        page_format = _FORMATS.get(media_type)
        if page_format is None:
            raise FetchRefused(f"refused: content type {media_type or '(none)'} is not text")
        limit = int(self._settings.max_mb * 1024 * 1024)
        too_big = (
            f"refused: {url} is larger than the [fetch] max_mb limit"
            f" of {self._settings.max_mb:g} MB"
        )
        declared = response.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > limit:
            raise FetchRefused(too_big)
        body = bytearray()
        async for chunk in response.aiter_bytes():
            body += chunk
            if len(body) > limit:
                raise FetchRefused(too_big)
        return FetchedPage(
            url=str(url),
            requested_url=requested,
            body=bytes(body),
            charset=charset,
            format=page_format,
            etag=response.headers.get("etag"),
            last_modified=response.headers.get("last-modified"),
        )


def _absolute(base: httpx.URL, location: str) -> str:
    """A relative Location resolved against the page it came from; an absolute or
    unparseable one is kept as sent, so a refusal quotes what the server said."""
    try:
        return location if httpx.URL(location).scheme else str(base.join(location))
    except httpx.InvalidURL:
        return location


def _parse(target: str) -> httpx.URL:
    try:
        url = httpx.URL(target)
    except httpx.InvalidURL as exc:
        raise _Refusal(f"{target!r} is not a valid URL ({exc})") from None
    if url.scheme not in ("http", "https"):
        scheme = f"{url.scheme}:" if url.scheme else "a URL without http:// or https://"
        raise _Refusal(f"only http and https URLs are fetched, not {scheme}")
    if url.userinfo:
        raise _Refusal("URLs with a user name or password (user:pass@host) are not fetched")
    if not url.host:
        raise _Refusal(f"{target!r} has no host")
    # The fragment never reaches the server; dropping it keeps the stored URL canonical.
    return url.copy_with(fragment=None)


def _normal_host(host: str) -> str:
    """One spelling per host, so `[::1]`, `0::1` and `LocalHost.` each match their entry."""
    host = host.strip().lower().removeprefix("[").removesuffix("]").rstrip(".")
    address = _ip(host)
    return str(address) if address is not None else host


def _ip(host: str) -> IPAddress | None:
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        return None


def _host_matches(host: str, entry: str) -> bool:
    if entry == "*":
        return True
    if entry.startswith("*."):
        return host.endswith(entry[1:])
    return host == entry


def _special_kind(address: IPAddress) -> str | None:
    """Why an address is not public, or None; ::ffff:a.b.c.d reaches a.b.c.d, so unwrap it."""
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return next((kind for kind, test in _SPECIAL_KINDS if test(address)), None)


def _content_type(header: str) -> tuple[str, str | None]:
    media_type, _, params = header.partition(";")
    charset = None
    for param in params.split(";"):
        name, _, value = param.partition("=")
        if name.strip().lower() == "charset":
            charset = value.strip().strip("\"'")
    return media_type.strip().lower(), charset

