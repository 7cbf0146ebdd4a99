"""A small HTTP server for tests: the web, faked at its edge on loopback.

Each test routes paths to handlers (`server.routes["/page"] = fn`); every request is
recorded in `seen`, so a test can show a refused hop never reached the server, and any
error a handler raises is kept in `errors` for the test to check at teardown.
"""

from __future__ import annotations

import socket
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

# The client hanging up on an oversize or slow answer is behaviour under test, not a fault.
_HANGUPS = (BrokenPipeError, ConnectionResetError, ConnectionAbortedError)
Route = Callable[["Handler"], None]


class RouteServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, host: str = "127.0.0.1", family: socket.AddressFamily = socket.AF_INET) -> None:
        self.address_family = family
        self.routes: dict[str, Route] = {}
        self.seen: list[tuple[str, dict[str, str]]] = []
        self.errors: list[BaseException] = []
        # Set at shutdown, so a handler that stalls on purpose can give up.
        self.stopping = threading.Event()
        super().__init__((host, 0), Handler)

    def handle_error(self, request: Any, client_address: Any) -> None:
        error = sys.exc_info()[1]
        if error is not None and not isinstance(error, _HANGUPS):
            self.errors.append(error)

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    @property
    def paths(self) -> list[str]:
        return [path for path, _ in self.seen]


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: RouteServer

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        self.server.seen.append((self.path, dict(self.headers.items())))
        route = self.server.routes.get(self.path)
        if route is None:
            self.reply(404, "text/plain", b"no such page")
        else:
            route(self)

    def reply(self, status: int, content_type: str | None, body: bytes, **headers: str) -> None:
        """Answer with a body; header names use `_` for `-` (Last_Modified)."""
        self.send_response(status)
        if content_type is not None:
            self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for name, value in headers.items():
            self.send_header(name.replace("_", "-"), value)
        self.end_headers()
        self.wfile.write(body)

    def redirect(self, location: str, status: int = 302) -> None:
        self.send_response(status)
        self.send_header("Location", location)
        self.send_header("Content-Length", "0")
        self.end_headers()


@contextmanager
def serving(host: str = "127.0.0.1", family: socket.AddressFamily = socket.AF_INET) -> Iterator[RouteServer]:
    """A running server, stopped at exit; raises if a handler failed."""
    server = RouteServer(host, family)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    try:
        yield server
    finally:
        server.stopping.set()
        server.shutdown()
        server.server_close()
        thread.join()
    assert server.errors == []
