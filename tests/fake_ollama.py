"""A small Ollama-compatible HTTP server for tests: the outside world, faked at its edge.

It speaks the endpoints kenning's client touches (GET /api/tags, GET /api/version,
POST /api/embed, POST /api/show, POST /api/chat without streaming) over real HTTP/1.1
keep-alive on 127.0.0.1. Embeddings
are a hashed bag of words: each lower-cased word is a fixed pseudo-random direction in
`dim` dimensions (seeded by a hash of the word), and a text is the L2-normalised sum of
its words. Texts sharing words point the same way, so a search for a word finds the
chunks that hold it, while unrelated texts sit near zero cosine; a plain one-coordinate
hashing trick would collide too often in 64 dimensions. Each model has its own
dimension, so changing the model changes the vectors' shape too.

The knobs a test flips at runtime:

- `down = True` stops the server: the listening socket closes and every open
  connection is cut, so the client meets a real refused connection; `down = False`
  listens again on the same port.
- `crash()` goes down like a killed process: requests in flight are reset (RST)
  instead of closed.
- `delay` seconds are slept before answering each embed request (a server that goes
  down cuts a sleeping request without answering).
- `embed_requests` and `texts_embedded` count what was asked of /api/embed.
- `poison_word`: an embed request holding a text with it is answered with the HTTP 500
  Ollama gives when its model turns a text into NaN (bge-m3, qwen3-embedding in fp16
  and nomic-embed-text do, for some texts); with `poison_failures = n`, only the first
  n such requests are (a server's passing failure, not the text's).
- `hold_embeds_after = n`: once `texts_embedded` has reached n, each further embed
  request is held without an answer and not counted, until it is set back to `None`
  (then the held requests are hung up on) or the server stops. A job that commits
  pages stops right after the page that reached n, however slow the machine is.

- `mode` makes the server misbehave until it is set back to `None` (switchable while
  it runs): `"error500"` answers every endpoint with HTTP 500 and `error_text`;
  `"garbage"` answers every endpoint with 200 and a body that is not JSON; `"bad_gzip"`
  with 200 and a body said to be gzip that is not; `"cut_short"` with 200, a
  Content-Length, half of those bytes, and a closed connection; `"json_list"` with 200
  and a JSON list where Ollama answers an object; `"wrong_dim"`
  answers /api/embed with vectors one dimension short; `"wrong_count"` with one vector
  fewer than texts asked; `"zeros"` with vectors of zeros; `"huge"` with its vectors
  scaled by 1e30 (finite in float32, their squares are not); `"hang"` holds /api/embed and /api/chat without an answer
  until the mode changes or the server stops; `"redirect"` answers /api/embed,
  /api/chat and /api/tags with a 307 to the same path at `redirect_to` (another server's URL);
  `"trickle"` answers /api/embed and /api/tags with a 200 whose body is a space every 0.1 s until the
  mode changes or the server stops; `"flood"` with a 200 whose body is `flood_bytes`
  of spaces, sent as fast as the client reads them.

Chat (/api/chat) answers for the models in `chat_models`, a 404 for any other:

- `chat_reply(request_body) -> str` makes the reply's message content; by default an
  empty extraction, `{"entities": [], "relations": []}`.
- `chat_delay` seconds are slept before answering each chat request; `chat_hang = n`
  makes the next n chat requests hang without an answer until the server stops.
- `thinking_refused` holds models that answer a truthy `think` with Ollama's HTTP 400
  `"<model>" does not support thinking`.
- `chat_requests` records every chat request body received (refused ones too);
  `chat_in_flight` and `chat_max_in_flight` count concurrent chat requests being
  answered (a hung request stays in flight until the server stops).
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
import socket
import struct
import sys
import threading
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np

DEFAULT_MODELS = {"fake-embed": 64, "fake-embed-2": 32}
DEFAULT_CHAT_MODELS = frozenset({"fake-chat"})
EMPTY_EXTRACTION = json.dumps({"entities": [], "relations": []})

_WORD = re.compile(r"\w+", re.UNICODE)
# The client going away mid-answer (a timeout, a kill -9 of the daemon) is not a fault
# of the fake; anything else raised in a handler is, and fails the test at teardown.
_HANGUPS = (BrokenPipeError, ConnectionResetError, ConnectionAbortedError, TimeoutError)


@functools.lru_cache(maxsize=65536)
def _word_direction(word: str, dim: int) -> np.ndarray:
    seed = int.from_bytes(hashlib.blake2b(word.encode(), digest_size=8).digest(), "big")
    return np.random.default_rng(seed).standard_normal(dim)


def hashed_embedding(text: str, dim: int) -> list[float]:
    vector = np.zeros(dim)
    for word in _WORD.findall(text.lower()):
        vector += _word_direction(word, dim)
    norm = float(np.linalg.norm(vector))
    return (vector / norm if norm else vector).tolist()


def _tagged(name: str) -> str:
    return name if ":" in name else f"{name}:latest"


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, port: int, fake: "FakeOllama") -> None:
        self.fake = fake
        self.stopping = threading.Event()
        self.crashing = False
        self._connections: set[socket.socket] = set()
        self._connections_lock = threading.Lock()
        super().__init__(("127.0.0.1", port), _Handler)

    def process_request(self, request, client_address) -> None:
        with self._connections_lock:
            self._connections.add(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request) -> None:
        with self._connections_lock:
            self._connections.discard(request)
        super().shutdown_request(request)

    def cut_connections(self) -> None:
        with self._connections_lock:
            connections = list(self._connections)
        for conn in connections:
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def handle_error(self, request, client_address) -> None:
        error = sys.exc_info()[1]
        if isinstance(error, _HANGUPS) or self.stopping.is_set():
            return
        self.fake.errors.append("".join(traceback.format_exception(error)))


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the stdlib's name
        pass

    def do_GET(self) -> None:
        fake = self.server.fake
        if self._misbehaved():
            return
        if self.path == "/api/tags" and fake.tags_reply is not None:
            self._send(200, json.dumps(fake.tags_reply).encode())
        elif self.path == "/api/tags":
            # Every model pulled, embedding and chat alike, as Ollama lists them.
            names = [*fake.models, *sorted(set(fake.chat_models) - set(fake.models))]
            self._reply(200, {"models": [fake.model_entry(name) for name in names]})
        elif self.path == "/api/version":
            self._reply(200, {"version": "0.0.0-fake"})
        else:
            self._reply(404, {"error": f"no route {self.path}"})

    def do_HEAD(self) -> None:
        self._reply(200, None)

    def do_POST(self) -> None:
        body = self._body()
        if body is None or self._misbehaved():
            return
        if self.path == "/api/embed":
            self._embed(body)
        elif self.path == "/api/show":
            self._show(body)
        elif self.path == "/api/chat":
            self._chat(body)
        else:
            self._reply(404, {"error": f"no route {self.path}"})

    def _misbehaved(self) -> bool:
        """Answer as the fake's `mode` says, if it says to; True when that was the answer.
        A request held by `hang` is answered as the mode that follows it says."""
        fake = self.server.fake
        if fake.mode == "hang" and self.path in ("/api/embed", "/api/chat"):
            with fake.lock:
                fake.hung_requests += 1
            while fake.mode == "hang":
                if self.server.stopping.wait(0.05):
                    self.close_connection = True
                    return True
        if fake.mode == "redirect" and self.path in ("/api/embed", "/api/chat", "/api/tags"):
            self.send_response(307)
            self.send_header("Location", f"{fake.redirect_to}{self.path}")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return True
        if fake.mode in ("trickle", "flood") and self.path in ("/api/embed", "/api/tags"):
            self._endless_body()
            return True
        if fake.mode == "error500":
            self._reply(500, {"error": fake.error_text})
            return True
        if fake.mode == "garbage":
            self._send(200, b"<html>Bad Gateway</html>{not json")
            return True
        if fake.mode == "bad_gzip":
            self._send(200, b"not gzip at all", encoding="gzip")
            return True
        if fake.mode == "json_list":
            self._send(200, b"[]")
            return True
        if fake.mode == "cut_short":
            self._send(200, json.dumps({"models": [], "embeddings": [], "error": "x" * 64}).encode(), cut_short=True)
            return True
        return False

    def _endless_body(self) -> None:
        """A 200 whose JSON never comes: spaces, slowly ("trickle") or in bulk ("flood")."""
        fake = self.server.fake
        mode = fake.mode
        self.send_response(200)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        piece = b" " * (1 if mode == "trickle" else 65536)
        sent = 0
        while fake.mode == mode and sent < (fake.flood_bytes if mode == "flood" else float("inf")):
            self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
            self.wfile.flush()
            sent += len(piece)
            if mode == "trickle" and self.server.stopping.wait(0.1):
                break
        self.wfile.write(b"0\r\n\r\n")

    def _embed(self, body: dict) -> None:
        fake = self.server.fake
        model = body.get("model")
        texts = body.get("input", [])
        if isinstance(texts, str):
            texts = [texts]
        if not model:
            return self._reply(400, {"error": "model is required"})
        if not isinstance(texts, list) or not all(isinstance(text, str) for text in texts):
            return self._reply(400, {"error": "invalid input type"})
        dim = fake.dimension(model)
        if dim is None:
            return self._reply(404, {"error": f'model "{model}" not found, try pulling it first'})
        if fake.poison_word and any(fake.poison_word in text for text in texts):
            with fake.lock:
                failing = fake.poison_failures is None or fake.poison_failures > 0
                if fake.poison_failures:
                    fake.poison_failures -= 1
            if failing:
                return self._reply(500, {"error": "failed to encode response: json: unsupported value: NaN"})
        while True:
            with fake.lock:
                if fake.hold_embeds_after is None or fake.texts_embedded < fake.hold_embeds_after:
                    fake.embed_requests += 1
                    fake.texts_embedded += len(texts)
                    break
            if self.server.stopping.wait(0.05) or fake.hold_embeds_after is None:
                self.close_connection = True
                return
        if fake.delay and self.server.stopping.wait(fake.delay):
            # Went down while "computing": hang up without an answer.
            self.close_connection = True
            if self.server.crashing:
                self._reset()
            return
        self._reply(
            200,
            {
                "model": _tagged(model),
                "embeddings": self._shaped([hashed_embedding(text, dim) for text in texts]),
                "total_duration": 1000,
                "load_duration": 10,
                "prompt_eval_count": sum(len(_WORD.findall(text)) for text in texts),
            },
        )

    def _shaped(self, vectors: list[list[float]]) -> list[list[float]]:
        mode = self.server.fake.mode
        if mode == "wrong_dim":
            return [vector[:-1] for vector in vectors]
        if mode == "wrong_count":
            return vectors[:-1]
        if mode == "zeros":
            return [[0.0] * len(vector) for vector in vectors]
        if mode == "huge":
            return [[value * 1e30 for value in vector] for vector in vectors]
        return vectors

    def _show(self, body: dict) -> None:
        fake = self.server.fake
        name = body.get("model") or body.get("name") or ""
        dim = fake.dimension(name)
        if dim is None:
            return self._reply(404, {"error": f'model "{name}" not found'})
        self._reply(
            200,
            {
                "modelfile": f"FROM {name}\n",
                "parameters": "",
                "template": "",
                "details": fake.model_entry(name)["details"],
                "model_info": {
                    "general.architecture": "fake",
                    "fake.embedding_length": dim if fake.stated_length is None else fake.stated_length,
                },
                "capabilities": ["embedding"],
                "modified_at": "2024-01-01T00:00:00Z",
            },
        )

    def _chat(self, body: dict) -> None:
        fake = self.server.fake
        model = str(body.get("model") or "")
        with fake.lock:
            fake.chat_requests.append(body)
        if not fake.is_chat_model(model):
            return self._reply(404, {"error": f'model "{model}" not found, try pulling it first'})
        if body.get("think") not in (None, False) and _tagged(model) in {_tagged(m) for m in fake.thinking_refused}:
            return self._reply(400, {"error": f'"{model}" does not support thinking'})
        with fake.lock:
            fake.chat_in_flight += 1
            fake.chat_max_in_flight = max(fake.chat_max_in_flight, fake.chat_in_flight)
            hang = fake.chat_hang > 0
            if hang:
                fake.chat_hang -= 1
        try:
            if hang:
                self.server.stopping.wait()
            elif fake.chat_delay:
                self.server.stopping.wait(fake.chat_delay)
            if self.server.stopping.is_set():
                self.close_connection = True
                if self.server.crashing:
                    self._reset()
                return None
            content = fake.chat_reply(body)
        finally:
            with fake.lock:
                fake.chat_in_flight -= 1
        message = {"role": "assistant", "content": content}
        if body.get("think") not in (None, False):
            message["thinking"] = "Thinking it over."
        self._reply(
            200,
            {
                "model": _tagged(model),
                "created_at": "2024-01-01T00:00:00Z",
                "message": message,
                "done": True,
                "done_reason": "stop",
                "total_duration": 1000,
                "eval_count": len(content),
            },
        )

    def _reset(self) -> None:
        """Abort the connection as a killed process's kernel does: RST, not FIN."""
        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.wfile.close()
        self.rfile.close()
        self.connection.close()

    def _body(self) -> dict | None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw or b"{}")
        except json.JSONDecodeError:
            self._reply(400, {"error": "invalid JSON body"})
            return None
        if not isinstance(body, dict):
            self._reply(400, {"error": "body must be a JSON object"})
            return None
        return body

    def _reply(self, status: int, payload: dict | None) -> None:
        self._send(status, b"" if payload is None else json.dumps(payload).encode())

    def _send(self, status: int, data: bytes, encoding: str | None = None, cut_short: bool = False) -> None:
        """`cut_short` sends half of `data` under a Content-Length for all of it, then
        closes the connection."""
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        if encoding:
            self.send_header("Content-Encoding", encoding)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data[: len(data) // 2] if cut_short else data)
        if cut_short:
            self.close_connection = True


class FakeOllama:
    """One fake server; `start()` / `stop()` are safe to call twice, and the port sticks."""

    def __init__(self, models: dict[str, int] | None = None) -> None:
        self.models: dict[str, int] = dict(DEFAULT_MODELS if models is None else models)
        self.delay = 0.0
        # None, "error500", "garbage", "bad_gzip", "cut_short", "json_list", "wrong_dim", "wrong_count",
        # "zeros", "huge", "hang", "redirect", "trickle" or "flood" (module docstring).
        self.mode: str | None = None
        # What an "error500" answer says: Ollama passes on what its runner printed.
        self.error_text = "llama runner process has terminated: signal: killed"
        self.redirect_to = ""
        # When set, what GET /api/tags answers instead of the model list (any JSON value).
        self.tags_reply: object = None
        # When set, the embedding length /api/show states instead of the model's (any JSON value).
        self.stated_length: object = None
        # An embed request holding a text with this word is answered as Ollama answers
        # one its model turns into NaN (a 500 naming it); the others are embedded.
        self.poison_word: str | None = None
        self.poison_failures: int | None = None
        self.flood_bytes = 32 * 1024 * 1024
        self.hung_requests = 0
        self.embed_requests = 0
        self.texts_embedded = 0
        self.hold_embeds_after: int | None = None
        self.chat_models: set[str] = set(DEFAULT_CHAT_MODELS)
        self.chat_reply: Callable[[dict], str] = lambda body: EMPTY_EXTRACTION
        self.chat_delay = 0.0
        self.chat_hang = 0
        self.thinking_refused: set[str] = set()
        self.chat_requests: list[dict] = []
        self.chat_in_flight = 0
        self.chat_max_in_flight = 0
        self.errors: list[str] = []
        self.lock = threading.Lock()
        self.port = 0
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def down(self) -> bool:
        return self._server is None

    @down.setter
    def down(self, value: bool) -> None:
        if value:
            self.stop()
        else:
            self.start()

    def start(self) -> "FakeOllama":
        if self._server is not None:
            return self
        # SO_REUSEADDR (HTTPServer's default) lets the same port be bound again while
        # connections cut by stop() linger in TIME_WAIT.
        self._server = _Server(self.port, self)
        self.port = self._server.server_address[1]
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, name="fake-ollama", daemon=True
        )
        self._thread.start()
        return self

    def crash(self) -> None:
        """Go down as a killed server does: requests in flight are reset, not answered."""
        if self._server is not None:
            self._server.crashing = True
        self.stop()

    def stop(self) -> None:
        server, thread = self._server, self._thread
        if server is None:
            return
        self._server = self._thread = None
        server.stopping.set()
        server.shutdown()
        server.server_close()
        server.cut_connections()
        if thread is not None:
            thread.join(timeout=5)

    def reset_counters(self) -> None:
        with self.lock:
            self.embed_requests = 0
            self.texts_embedded = 0
            self.chat_requests = []
            self.chat_max_in_flight = self.chat_in_flight

    def dimension(self, name: str) -> int | None:
        for model, dim in self.models.items():
            if _tagged(model) == _tagged(name):
                return dim
        return None

    def is_chat_model(self, name: str) -> bool:
        return _tagged(name) in {_tagged(model) for model in self.chat_models}

    def model_entry(self, name: str) -> dict:
        tagged = _tagged(name)
        return {
            "name": tagged,
            "model": tagged,
            "modified_at": "2024-01-01T00:00:00Z",
            "size": 1024 * self.models.get(name, 1),
            "digest": hashlib.sha256(tagged.encode()).hexdigest(),
            "details": {
                "parent_model": "",
                "format": "gguf",
                "family": "fake",
                "families": ["fake"],
                "parameter_size": "1M",
                "quantization_level": "F32",
            },
        }

    def __enter__(self) -> "FakeOllama":
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


@contextmanager
def fake_ollama(models: dict[str, int] | None = None) -> Iterator[FakeOllama]:
    """A running fake for the body of a `with`; fails the test if a handler broke."""
    server = FakeOllama(models)
    with server:
        yield server
    assert not server.errors, "the fake Ollama server raised:\n" + "\n".join(server.errors)
