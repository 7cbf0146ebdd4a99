"""Embedding backends behind one small interface.

Both are synchronous and are only ever called from worker threads; Ollama's is in
ollama_embed.py, imported only when configured. Vectors come back L2-normalised
float32, so the vector leg's cosine is a plain dot product. The signature names
everything that changes a vector (backend, model, dimension, the text recipe); a
stored vector with another signature is stale.
"""

from __future__ import annotations

import functools
import logging
import threading
from collections.abc import Callable
from pathlib import Path

import numpy as np

from kenning.config import EmbedderSettings
from kenning.errors import BackendUnavailable, EmbedderUnavailable, error_line
from kenning.store.records import Embedder

log = logging.getLogger(__name__)

# Bumped when the way an item becomes embedding text changes (see embedding_text).
TEXT_RECIPE = 1


def signature_for(settings: EmbedderSettings) -> str:
    """Everything that changes a vector. Ollama's dimension is fixed by the model, and is
    recorded per vector; wordllama's is a setting."""
    recipe = f"r{TEXT_RECIPE}:c{settings.max_chars}"
    if settings.backend == "ollama":
        return f"ollama:{settings.model_name}:{recipe}"
    return f"wordllama:{settings.model_name}:{settings.dim}:{recipe}"


def embedding_text(title: str, section: str, content: str, max_chars: int) -> str:
    """What an item is embedded as: its title and heading give the chunk its context."""
    head = " > ".join(part for part in (title, section) if part)
    return (f"{head}\n{content}" if head else content)[:max_chars]


def normalise(matrix: np.ndarray) -> np.ndarray:
    """Rows of unit length, so the vector leg's cosine is a plain dot product. Their
    lengths are taken in float64: a float32 row of values past 1e19 has squares that
    overflow float32, and came out a row of zeros."""
    matrix = np.asarray(matrix, dtype=np.float64)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return (matrix / norms).astype(np.float32)


@functools.lru_cache(maxsize=1)
def load_wordllama(model: str, dim: int):
    """The model's weights, loaded once per process and shared by every embedder made
    for them (a re-embed or a reload makes a new one).

    The daemon calls this before its event loop starts: loading holds the GIL for over
    100 ms at a time, which from a worker thread would stall the loop.
    """
    import wordllama

    # A plain WordLlama.load() looks for the tokenizer outside the package and tries to
    # download it; pointing cache_dir at the installed package finds both files and
    # keeps it offline.
    package = Path(wordllama.__file__).parent
    # Only the 256-d weights ship in the wheel; smaller dims are truncations of them
    # (the model is trained for that), larger ones would need a download.
    return wordllama.WordLlama.load(
        config=model,
        dim=256,
        trunc_dim=None if dim == 256 else dim,
        cache_dir=package,
        disable_download=True,
    )


class WordLlamaEmbedder:
    """In-process static embeddings; the weights ship inside the wheel, so no network."""

    def __init__(self, settings: EmbedderSettings) -> None:
        self.model = settings.model_name
        self.dim = settings.dim
        self.batch_size = settings.batch_size
        self.signature = signature_for(settings)
        # Its dimension is a setting, part of the signature: it never changes under it.
        self.on_dimension: Callable[[int], None] | None = None
        self._loaded = None
        self._lock = threading.Lock()

    def _load(self):
        with self._lock:
            if self._loaded is None:
                self._loaded = load_wordllama(self.model, self.dim)
            return self._loaded

    def check(self) -> None:
        try:
            self._load()
        except Exception as exc:
            raise EmbedderUnavailable(
                f"wordllama model {self.model!r} ({self.dim}-d) cannot load: {error_line(exc)}"
            ) from exc

    def dimension(self) -> int:
        return self.dim

    def embed(self, texts: list[str]) -> np.ndarray:
        model = self._load()
        return normalise(model.embed(texts, norm=False, batch_size=self.batch_size))

    def close(self) -> None:
        self._loaded = None


class Contained:
    """An embedder whose every failure is EmbedderUnavailable.

    The backends turn the failures they foresee (a server down, a model missing, an
    answer that is not Ollama's) into EmbedderUnavailable, which every caller handles:
    the embed job waits and retries with backoff, a search answers from its other legs.
    Any other error went past them all: met as the embedder started, it left vector
    search off, "loading", until a restart; in a pass, the job stopped retrying; in a
    search, the search failed whole. Here it is that same failure, its traceback logged.
    """

    def __init__(self, inner: Embedder, backend: str) -> None:
        self.inner = inner
        self.backend = backend
        self.signature = inner.signature
        self.batch_size = inner.batch_size
        self._last_logged: str | None = None

    @property
    def dim(self) -> int | None:
        return self.inner.dim

    @property
    def on_dimension(self) -> Callable[[int], None] | None:
        return self.inner.on_dimension

    @on_dimension.setter
    def on_dimension(self, heard: Callable[[int], None] | None) -> None:
        self.inner.on_dimension = heard

    def check(self) -> None:
        self._contained(self.inner.check)

    def dimension(self) -> int:
        return self._contained(self.inner.dimension)

    def embed(self, texts: list[str]) -> np.ndarray:
        return self._contained(self.inner.embed, texts)

    def close(self) -> None:
        self.inner.close()

    def _contained(self, call: Callable, *args: object):
        try:
            answer = call(*args)
        except BackendUnavailable:
            raise
        except Exception as exc:
            message = f"the {self.backend} embedder failed: {error_line(exc)}"
            # Once while it repeats: every pass and every search meets it again.
            if message != self._last_logged:
                self._last_logged = message
                log.error("%s", message, exc_info=exc)
            raise EmbedderUnavailable(message) from exc
        # Recovered: the same error coming back later is news again.
        self._last_logged = None
        return answer


def make_embedder(settings: EmbedderSettings) -> Embedder:
    return Contained(_backend(settings), settings.backend)


def _backend(settings: EmbedderSettings) -> Embedder:
    if settings.backend == "ollama":
        # Imported only when configured: ollama's client costs every daemon start
        # 0.05-0.1 s of CPU, and the default backend is wordllama.
        from kenning.workers.ollama_embed import OllamaEmbedder

        return OllamaEmbedder(settings)
    return WordLlamaEmbedder(settings)
