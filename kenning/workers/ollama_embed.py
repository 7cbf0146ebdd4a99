"""Embeddings from a local Ollama server, the `ollama` embedding backend.

Its own module so that the ollama client (and the pydantic models it declares) is
imported only by a daemon configured to use it; `embedders.make_embedder` picks it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import numpy as np

from kenning.workers.http_client import httpx  # isort: skip  (before ollama, which imports httpx)
import ollama
from tenacity import (
    retry,
    retry_if_exception_type,
    retry_if_not_exception_type,
    stop_after_attempt,
    wait_exponential,
)

from kenning.config import EmbedderSettings
from kenning.errors import EmbedderUnavailable, error_detail
from kenning.workers.embedders import normalise, signature_for
from kenning.workers.ollama_http import (
    EMBED_ANSWER_BYTES_PER_TEXT,
    client_options,
    is_redirect,
    redirect_message,
    unusable_message,
)

# A server that is down refuses (ConnectError); one killed mid-request resets the
# connection (ReadError / WriteError): all mean "not reachable", none is a bad request.
_CONNECTION_ERRORS = (httpx.NetworkError, httpx.ConnectTimeout, httpx.RemoteProtocolError, ConnectionError)
# An answer that is not Ollama's JSON (ValueError: not JSON, not the shape documented,
# too large), or that httpx cannot read at all (a body said to be gzip that is not: a
# DecodingError, which went past every handler and, met at start, left the daemon
# without vector search until it was restarted).
_UNUSABLE = (ValueError, httpx.HTTPError)
# Longer than any embedding model makes (the largest make 4,096 or 8,192).
MAX_DIMENSION = 65_536
# ollama's client turns a refused connection into the builtin ConnectionError.
_REFUSED = (httpx.ConnectError, ConnectionRefusedError, ConnectionError)


class OllamaEmbedder:
    """Embeddings from a local Ollama server; retried on connection errors only."""

    def __init__(self, settings: EmbedderSettings) -> None:
        self.model = settings.model_name
        self.base_url = settings.base_url
        self.batch_size = settings.batch_size
        self.signature = signature_for(settings)
        self.timeout = settings.timeout
        # One HTTP client per thread: httpcore's sync pool can close a connection that
        # another thread's queued request was just given, leaving that request hung
        # until its read timeout (encode/httpcore#1110). Searches and the embed job
        # run on different threads, so they must not share a pool. For the same reason
        # close() waits for requests in flight: closing a socket under a blocked read
        # does not wake it on Linux.
        self._local = threading.local()
        self._clients: list[ollama.Client] = []
        self._lock = threading.Lock()
        self._in_flight = 0
        self._closed = False
        # The model's embedding length, once known. The signature leaves it out (it is
        # the server's to say, not the config's), so a model pulled anew under the same
        # name with another length keeps the signature: `on_dimension` hears of every
        # length learnt, so the owner can tell its stored vectors are from another model.
        self.dim: int | None = None
        self.on_dimension: Callable[[int], None] | None = None

    def _client(self) -> ollama.Client:
        client = getattr(self._local, "client", None)
        if client is None:
            # `timeout` bounds each read and also the whole of an answer once it begins.
            options = client_options(EMBED_ANSWER_BYTES_PER_TEXT * self.batch_size + (1 << 20), self.timeout)
            client = self._local.client = ollama.Client(host=self.base_url, timeout=self.timeout, **options)
            with self._lock:
                self._clients.append(client)
        return client

    def close(self) -> None:
        with self._lock:
            self._closed = True
            idle = self._in_flight == 0
        if idle:
            self._close_clients()

    def _close_clients(self) -> None:
        with self._lock:
            clients, self._clients = self._clients, []
        for client in clients:
            client.close()

    def _unreachable(self, exc: Exception) -> EmbedderUnavailable:
        return EmbedderUnavailable(f"ollama not reachable at {self.base_url} ({type(exc).__name__}); is it running?")

    def _misbehaving(self, exc: Exception) -> EmbedderUnavailable:
        # A 200 whose body is not JSON, or not the shape Ollama documents (ollama's
        # client raises a JSONDecodeError or a pydantic ValidationError, both ValueErrors):
        # a proxy's error page, a server mid-upgrade; or one cut short. Like a 5xx, it says
        # nothing about the texts, so it is the backend being unusable for now, and retried.
        return EmbedderUnavailable(unusable_message(self.base_url, exc))

    @contextmanager
    def _metadata_call(self) -> Iterator[None]:
        """A call about the model (not an embedding): every failure is the backend being
        unusable for now."""
        try:
            yield
        except _CONNECTION_ERRORS + (httpx.TimeoutException,) as exc:
            raise self._unreachable(exc) from None
        except ollama.ResponseError as exc:
            raise self._refused(exc) from None
        except _UNUSABLE as exc:
            raise self._misbehaving(exc) from None

    def _refused(self, exc: ollama.ResponseError) -> EmbedderUnavailable:
        if is_redirect(exc.status_code):
            return EmbedderUnavailable(redirect_message(self.base_url, exc.status_code))
        return EmbedderUnavailable(f"ollama error {exc.status_code}: {error_detail(str(exc.error))}")

    def check(self) -> None:
        with self._metadata_call():
            listed = self._client().list()
        names = {entry.model for entry in listed.models}
        if self.model not in names and f"{self.model}:latest" not in names:
            raise EmbedderUnavailable(
                f"ollama at {self.base_url} does not have model {self.model!r}; run `ollama pull {self.model}`"
            )

    def embed(self, texts: list[str]) -> np.ndarray:
        with self._lock:
            if self._closed:
                raise EmbedderUnavailable("the embedder is being replaced")
            self._in_flight += 1
        try:
            return self._embed_checked(texts)
        finally:
            with self._lock:
                self._in_flight -= 1
                last = self._closed and self._in_flight == 0
            if last:
                self._close_clients()

    def _embed_checked(self, texts: list[str]) -> np.ndarray:
        try:
            response = self._embed(texts)
        except _CONNECTION_ERRORS as exc:
            raise self._unreachable(exc) from None
        except httpx.TimeoutException:
            raise EmbedderUnavailable(f"ollama at {self.base_url} timed out embedding {len(texts)} texts") from None
        except ollama.ResponseError as exc:
            if exc.status_code == 404:
                raise EmbedderUnavailable(
                    f"ollama at {self.base_url} does not have model {self.model!r}; run `ollama pull {self.model}`"
                ) from None
            raise self._refused(exc) from None
        except _UNUSABLE as exc:
            raise self._misbehaving(exc) from None
        return normalise(self._shaped(response.embeddings, len(texts)))

    def _shaped(self, embeddings: object, count: int) -> np.ndarray:
        """The answer as a (count, dimension) matrix of finite numbers, or
        EmbedderUnavailable: a vector of the wrong shape must never reach the store or
        the index, where it would be scored against vectors it cannot be compared with."""
        try:
            vectors = np.asarray(embeddings, dtype=np.float32)
        except (TypeError, ValueError):
            raise EmbedderUnavailable(f"ollama at {self.base_url} returned embeddings of uneven length") from None
        if vectors.ndim != 2 or vectors.shape[0] != count:
            raise EmbedderUnavailable(
                f"ollama at {self.base_url} returned embeddings shaped {vectors.shape} for {count} texts"
            )
        if not np.isfinite(vectors).all():
            raise EmbedderUnavailable(f"ollama at {self.base_url} returned embeddings that are not finite numbers")
        if not vectors.any(axis=1).all():
            # It points nowhere, so it matches nothing: stored, it would stand for the text.
            raise EmbedderUnavailable(f"ollama at {self.base_url} returned an embedding of zeros")
        expected = self._dimension(vectors.shape[1])
        if vectors.shape[1] != expected:
            raise EmbedderUnavailable(
                f"ollama at {self.base_url} returned {vectors.shape[1]}-dimensional embeddings;"
                f" model {self.model!r} makes {expected}"
            )
        return vectors

    def dimension(self) -> int:
        """The model's embedding length as /api/show states it now, else as an embedding
        shows it; EmbedderUnavailable when the server cannot be asked."""
        stated = self._stated_dimension()
        if stated is None:
            return int(self.embed(["kenning"]).shape[1])
        self._learn(stated)
        return stated

    def _dimension(self, seen: int) -> int:
        """The model's embedding length as /api/show states it (the first answer's when it
        does not say). Asked again when an answer disagrees, so a model pulled anew under
        the same name is believed once the server itself says so."""
        if self.dim is None or self.dim != seen:
            self._learn(self._stated_dimension() or self.dim or seen)
        assert self.dim is not None
        return self.dim

    def _learn(self, dim: int) -> None:
        if dim != self.dim:
            self.dim = dim
            if self.on_dimension is not None:
                self.on_dimension(dim)

    def _stated_dimension(self) -> int | None:
        with self._metadata_call():
            info = self._client().show(self.model).modelinfo or {}
        stated = next((value for key, value in info.items() if key.endswith(".embedding_length")), None)
        # Anything but a plausible length says nothing. int() of a string raised past every
        # handler (met at start, vector search was off until a restart), and a length of 0
        # or -3 was believed: every stored vector dropped, every embedding refused.
        return stated if type(stated) is int and 0 < stated <= MAX_DIMENSION else None

    @retry(
        # A refused connection is not retried here: nothing listens, the embed job backs
        # off as a whole, and a search must learn it within its query_embed_timeout.
        retry=retry_if_exception_type(_CONNECTION_ERRORS) & retry_if_not_exception_type(_REFUSED),
        wait=wait_exponential(multiplier=0.2, max=2.0),
        stop=stop_after_attempt(3),
        reraise=True,
    )
    def _embed(self, texts: list[str]):
        return self._client().embed(model=self.model, input=texts)
