"""Semantic retrieval in process: real embedders, real SQLite files, real HTTP to a fake Ollama.

The embedding side runs as the daemon runs it (a `Semantic` with its background job);
only the Ollama server is faked, on 127.0.0.1, and WordLlama runs with the network shut.
"""

from __future__ import annotations

import asyncio
import gc
import contextlib
import socket
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import contextmanager

import numpy as np
import pytest

from kenning.api import EmbedderStatus, SearchResult
from kenning.config import EmbedderSettings, RetrievalSettings
from kenning.errors import EmbedderUnavailable
from kenning.retrieval.fusion import fuse_rrf, fuse_scores, legs_and_ranks
from kenning.retrieval.search import Retriever
from kenning.service.semantic import Semantic
from kenning.store import documents, sources, vectors
from kenning.store.database import Database
from kenning.store.texthash import text_hash
from kenning.store.vector_index import VectorIndex
from kenning.workers.embedders import WordLlamaEmbedder
from kenning.workers.ollama_embed import OllamaEmbedder
from tests.fake_ollama import FakeOllama, fake_ollama, hashed_embedding
from tests.helpers import store_document

PARAPHRASE = "car engine fails in winter"
NONSENSE = "zxqv blorp fnarg"
# No word of the paraphrase (after stopwords and stemming) appears in any of these.
CORPUS = {
    "car.md": "The automobile would not start on cold mornings",
    "budget.md": "Our quarterly budget review covers marketing spending",
    "garden.md": "She planted tomatoes and basil in the garden",
    "music.md": "The orchestra rehearsed a symphony by Beethoven",
    "code.md": "Python functions return values to their callers",
    "nap.md": "The toddler napped after lunch",
    "stocks.md": "Stock prices fell sharply after the announcement",
    "cake.md": "A recipe for chocolate cake with vanilla frosting",
}


# -- fixtures and helpers ---------------------------------------------------------------


@pytest.fixture
def ollama() -> Iterator[FakeOllama]:
    with fake_ollama() as server:
        yield server


@pytest.fixture(autouse=True)
def close_ollama_clients(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Close every OllamaEmbedder a test builds by hand once the test is over.

    A keep-alive socket left for the garbage collector is a ResourceWarning, which this
    suite makes an error. Autouse, so it is torn down after the fixtures that stop the
    embedding sides using them (those close their own).
    """
    made: list[OllamaEmbedder] = []
    original = OllamaEmbedder.__init__

    def recording_init(self: OllamaEmbedder, settings: EmbedderSettings) -> None:
        original(self, settings)
        made.append(self)

    monkeypatch.setattr(OllamaEmbedder, "__init__", recording_init)
    yield
    for embedder in made:
        embedder.close()


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any TCP connection attempt fails the test: proof that a path works offline."""
    real_connect = socket.socket.connect

    def refuse(sock: socket.socket, address):
        if sock.family in (socket.AF_INET, socket.AF_INET6):
            sock.close()
            raise AssertionError(f"network access attempted: {address}")
        return real_connect(sock, address)

    monkeypatch.setattr(socket.socket, "connect", refuse)



class Running:
    """What the daemon runs for the vector leg: the embedding side (a `Semantic`, with its
    background job) and a retriever searching with whatever it has ready."""

    def __init__(self, db: Database, settings: EmbedderSettings, retrieval: RetrievalSettings) -> None:
        quiet = asyncio.Event()
        quiet.set()
        self.semantic = Semantic(db, settings, quiet)
        self.retriever = Retriever(db, retrieval)

    async def search(self, query: str, **options) -> SearchResult:
        return await self.retriever.search(query, vectors=self.semantic.vectors, **options)

    def status(self) -> EmbedderStatus:
        return self.semantic.status()

    @property
    def embedder(self):
        return self.semantic.vectors.embedder

    @property
    def index(self) -> VectorIndex:
        return self.semantic.vectors.index


@pytest.fixture
async def semantics() -> AsyncIterator[list[Running]]:
    """Every embedding side a test starts is stopped before its database closes."""
    started: list[Running] = []
    yield started
    for running in started:
        await running.semantic.stop()


async def start_semantic(
    db: Database,
    started: list[Running],
    settings: EmbedderSettings,
    retrieval: RetrievalSettings | None = None,
    catch_up: bool = True,
) -> Running:
    """Start one as the daemon does; wait until every item is in the index, or (when some
    vectors are refused on purpose) only until the job has gone idle."""
    # A query embed over HTTP can take longer than the default 0.5 s budget on a loaded
    # test machine, and the vector leg would be skipped; that budget has tests of its own
    # (test_backend_faults_e2e.py).
    running = Running(db, settings, retrieval or RetrievalSettings(query_embed_timeout=30.0))
    started.append(running)
    running.semantic.start()
    if catch_up:
        await caught_up(db, running)
    else:
        deadline = time.monotonic() + 20
        while running.status().job.state != "idle":
            assert time.monotonic() < deadline, running.status()
            await asyncio.sleep(0.02)
    return running


async def caught_up(db: Database, running: Running, timeout: float = 30, missing: int = 0) -> EmbedderStatus:
    """Until the job is idle and the in-memory index holds a vector for every item (but
    `missing` of them)."""
    deadline = time.monotonic() + timeout
    while True:
        status = running.status()
        items = await scalar(db, "SELECT count(*) FROM items") - missing
        if status.job.state == "idle" and status.vectors == items:
            return status
        if time.monotonic() > deadline:
            raise AssertionError(f"embedding did not catch up with {items} items: {status}")
        await asyncio.sleep(0.02)


async def scalar(db: Database, sql: str, params: tuple = ()):
    async with db.reader() as conn:
        [(value,)] = await conn.execute_fetchall(sql, params)
    return value


async def add_document(db: Database, source_id: int, path: str, *texts: str, title: str = "") -> list[int]:
    """Index a document's chunks as ingest does; returns the new item ids."""
    await store_document(db, source_id, path, *texts, title=title, mtime=time.time())
    return await item_ids(db, path)


async def item_ids(db: Database, path: str | None = None) -> list[int]:
    async with db.reader() as conn:
        if path is None:
            rows = await conn.execute_fetchall("SELECT id FROM items ORDER BY id", ())
        else:
            rows = await conn.execute_fetchall(
                "SELECT i.id FROM items i JOIN documents d ON d.id = i.document_id WHERE d.path = ? ORDER BY i.id",
                (path,),
            )
    return [row[0] for row in rows]


async def corpus(db: Database) -> dict[str, int]:
    """The CORPUS as one-chunk documents in source "notes"; file name -> item id."""
    source_id = (await sources.sync_sources(db, [("notes", "/n", "default")]))["notes"]
    return {name: (await add_document(db, source_id, name, text))[0] for name, text in CORPUS.items()}


def ollama_settings(server: FakeOllama, model: str = "fake-embed", **overrides) -> EmbedderSettings:
    return EmbedderSettings(backend="ollama", model=model, base_url=server.url, batch_size=3, **overrides)


@contextmanager
def meanwhile(seconds: float, action: Callable[[], None]) -> Iterator[None]:
    """Run `action` on another thread after `seconds`, while the body of the `with` runs."""
    timer = threading.Timer(seconds, action)
    timer.start()
    try:
        yield
    finally:
        timer.join()


def unit_rows(count: int, dim: int, seed: int = 0) -> np.ndarray:
    matrix = np.random.default_rng(seed).standard_normal((count, dim)).astype(np.float32)
    return matrix / np.linalg.norm(matrix, axis=1, keepdims=True)


async def items_in(db: Database, source: str, count: int) -> list[int]:
    """`count` one-chunk documents in a source of that name; their item ids."""
    source_id = (await sources.sync_sources(db, [(source, f"/{source}", "default")]))[source]
    ids = []
    for n in range(count):
        await store_document(db, source_id, f"{source}-{n}.md", f"note {n} of {source}")
    ids = await scalar_list(db, "SELECT i.id FROM items i JOIN documents d ON d.id = i.document_id"
                            " JOIN sources s ON s.id = d.source_id WHERE s.name = ? ORDER BY i.id", (source,))
    return ids


async def scalar_list(db: Database, sql: str, params: tuple = ()) -> list:
    return [row[0] for row in await db.read(sql, params)]


async def embed_rows(db: Database, index: VectorIndex, ids: list[int], rows: np.ndarray, signature: str = "sig") -> None:
    """Store vectors as the embed job does, and wait for the index to take them in."""
    await vectors.write_vectors(db, signature, ids, rows)
    await index.settled()


# -- the Ollama backend against the fake server -------------------------------------------


def test_ollama_embedder_returns_normalised_deterministic_vectors_named_by_backend_and_model(ollama: FakeOllama):
    embedder = OllamaEmbedder(ollama_settings(ollama))
    embedder.check()
    texts = ["otters hold hands while sleeping", "sleeping otters drift apart", "tax forms are due in april"]
    matrix = embedder.embed(texts)
    assert matrix.dtype == np.float32 and matrix.shape == (3, 64)
    assert np.allclose(np.linalg.norm(matrix, axis=1), 1.0, atol=1e-5)
    assert np.array_equal(embedder.embed(texts), matrix)
    # texts sharing words are closer than texts sharing none
    assert matrix[0] @ matrix[1] > matrix[0] @ matrix[2]
    assert (ollama.embed_requests, ollama.texts_embedded) == (2, 6)

    assert embedder.signature.startswith("ollama:fake-embed:")
    other = OllamaEmbedder(ollama_settings(ollama, model="fake-embed-2"))
    assert other.embed(texts[:1]).shape == (1, 32)
    assert other.signature.startswith("ollama:fake-embed-2:") and other.signature != embedder.signature
    # the text recipe's limit changes what is embedded, so it is part of the name
    assert OllamaEmbedder(ollama_settings(ollama, max_chars=500)).signature != embedder.signature


def test_ollama_down_or_missing_model_is_reported_as_unavailable_and_recovers(ollama: FakeOllama):
    embedder = OllamaEmbedder(ollama_settings(ollama, timeout=5))
    embedder.embed(["warm up a keep-alive connection"])

    ollama.down = True
    with pytest.raises(EmbedderUnavailable, match=f"ollama not reachable at {ollama.url}"):
        embedder.check()
    with pytest.raises(EmbedderUnavailable, match=f"ollama not reachable at {ollama.url}"):
        embedder.embed(["anything"])

    ollama.down = False
    embedder.check()
    assert embedder.embed(["back again"]).shape == (1, 64)

    missing = OllamaEmbedder(ollama_settings(ollama, model="nomic-embed-text"))
    with pytest.raises(EmbedderUnavailable, match="run `ollama pull nomic-embed-text`"):
        missing.check()
    with pytest.raises(EmbedderUnavailable, match="run `ollama pull nomic-embed-text`"):
        missing.embed(["anything"])


def test_a_slow_ollama_times_out_as_unavailable(ollama: FakeOllama):
    embedder = OllamaEmbedder(ollama_settings(ollama, timeout=0.3))
    ollama.delay = 2.0
    started = time.monotonic()
    with pytest.raises(EmbedderUnavailable, match="timed out"):
        embedder.embed(["slow"])
    assert time.monotonic() - started < 1.5
    ollama.delay = 0.0
    assert embedder.embed(["fast again"]).shape == (1, 64)


def test_an_answer_that_never_ends_is_given_up_on(ollama: FakeOllama):
    """A byte every 0.1 s never trips a read timeout: the embed job waited on it for good.
    An answer in bulk was read whole into the daemon's memory, however large."""
    embedder = OllamaEmbedder(ollama_settings(ollama, timeout=1))
    ollama.mode = "trickle"
    # The fake would trickle for good: stopped after 8 s, its answer is not JSON.
    give_up = threading.Timer(8, lambda: setattr(ollama, "mode", None))
    give_up.start()
    try:
        with pytest.raises(EmbedderUnavailable, match="timed out"):
            embedder.embed(["a trickle"])
    finally:
        give_up.cancel()
    ollama.mode = "flood"
    with pytest.raises(EmbedderUnavailable, match=r"something unusable \(AnswerTooLarge\)"):
        embedder.embed(["a flood"])
    ollama.mode = None
    assert embedder.embed(["answered again"]).shape == (1, 64)


def test_vectors_of_zeros_are_refused_and_huge_ones_are_normalised(ollama: FakeOllama):
    """A row of zeros matches nothing, and was stored as the text's vector; a row of
    numbers whose squares overflow float32 was normalised into one."""
    embedder = OllamaEmbedder(ollama_settings(ollama, timeout=5))
    expected = embedder.embed(["kestrel over the meadow"])
    ollama.mode = "zeros"
    with pytest.raises(EmbedderUnavailable, match="returned an embedding of zeros"):
        embedder.embed(["kestrel over the meadow"])
    ollama.mode = "huge"
    assert np.allclose(embedder.embed(["kestrel over the meadow"]), expected, atol=1e-6)


def test_an_answer_that_cannot_be_decoded_is_unusable_not_an_error(ollama: FakeOllama):
    """httpx's DecodingError went past every handler: met at start, it turned vector
    search off until the next restart, the embedder 'loading' for good."""
    embedder = OllamaEmbedder(ollama_settings(ollama, timeout=5))
    ollama.mode = "bad_gzip"
    with pytest.raises(EmbedderUnavailable, match=r"something unusable \(DecodingError\)"):
        embedder.check()
    with pytest.raises(EmbedderUnavailable, match=r"something unusable \(DecodingError\)"):
        embedder.embed(["kestrel"])


@pytest.mark.parametrize("stated", ["sixty-four", 0, 10**12])
def test_a_stated_embedding_length_that_is_no_length_is_not_believed(ollama: FakeOllama, stated):
    """`int()` of what /api/show said raised a ValueError or TypeError past every
    handler: met at start, it turned vector search off until a restart."""
    ollama.stated_length = stated
    embedder = OllamaEmbedder(ollama_settings(ollama, timeout=5))
    assert embedder.dimension() == 64
    assert embedder.embed(["kestrel"]).shape == (1, 64)


def test_an_answer_cut_short_says_the_server_answered(ollama: FakeOllama):
    """A 200 whose connection closed before its Content-Length came was reported as
    "not reachable (RemoteProtocolError); is it running?" while the server was running."""
    embedder = OllamaEmbedder(ollama_settings(ollama, timeout=5))
    ollama.mode = "cut_short"
    said = rf"ollama at {ollama.url} answered, but the answer was cut short \(54 bytes of the 109 it announced came"
    with pytest.raises(EmbedderUnavailable, match=said):
        embedder.check()
    with pytest.raises(EmbedderUnavailable, match=said):
        embedder.embed(["kestrel"])


def test_a_redirect_to_another_server_is_not_followed(ollama: FakeOllama):
    """The chunks' text went on to whatever host the answer named."""
    with fake_ollama() as elsewhere:
        ollama.mode, ollama.redirect_to = "redirect", elsewhere.url
        embedder = OllamaEmbedder(ollama_settings(ollama, timeout=5))
        with pytest.raises(EmbedderUnavailable, match=r"answered with a redirect \(HTTP 307\)"):
            embedder.embed(["private notes"])
        assert elsewhere.embed_requests == 0


def test_ollama_going_away_mid_request_is_unavailable_not_an_error(ollama: FakeOllama):
    """Stopped (the connection closes) or killed (the kernel resets it): either way the
    caller must get EmbedderUnavailable, the one error the job and search know to wait out."""
    embedder = OllamaEmbedder(ollama_settings(ollama, timeout=5))
    ollama.delay = 1.0
    with meanwhile(0.3, ollama.stop), pytest.raises(EmbedderUnavailable, match="not reachable"):
        embedder.embed(["in flight when the server stops"])

    ollama.start()
    with meanwhile(0.3, ollama.crash), pytest.raises(EmbedderUnavailable):
        embedder.embed(["in flight when the server is killed"])


async def test_search_answers_from_keywords_when_ollama_is_killed_mid_query(
    db: Database, semantics: list[Running], ollama: FakeOllama
):
    ids = await corpus(db)
    semantic = await start_semantic(db, semantics, ollama_settings(ollama))
    ollama.delay = 1.0
    with meanwhile(0.3, ollama.crash):
        result = await semantic.search("orchestra symphony")
    assert [h.item_id for h in result.hits] == [ids["music.md"]]
    assert result.warnings


async def test_the_embed_job_outlives_ollama_being_killed_mid_page(
    db: Database, semantics: list[Running], ollama: FakeOllama
):
    await corpus(db)
    ollama.delay = 0.4  # three requests of three texts: the crash lands in the second
    semantic = Running(db, ollama_settings(ollama), RetrievalSettings())
    semantics.append(semantic)
    with meanwhile(0.6, ollama.crash):
        semantic.semantic.start()
        deadline = time.monotonic() + 10
        while semantic.status().job.state != "waiting":
            assert time.monotonic() < deadline, f"the job never went to waiting: {semantic.status()}"
            await asyncio.sleep(0.05)
    assert semantic.status().job.last_error

    ollama.delay = 0.0
    ollama.start()
    await caught_up(db, semantic)


async def test_a_text_the_model_cannot_embed_leaves_it_alone_and_the_rest_embedded(
    db: Database, semantics: list[Running], ollama: FakeOllama
):
    """Ollama answers a text its model turns into NaN with a 500, for the whole request:
    the job took that for an outage and retried the same page for good, so that text held
    back the vectors of every item from its page on, those added later included."""
    ids = await corpus(db)
    ollama.poison_word = "tomatoes"
    semantic = await start_semantic(db, semantics, ollama_settings(ollama), catch_up=False)
    status = await caught_up(db, semantic, missing=1)
    assert status.job.last_error is None
    assert (await semantic.semantic.report()).left_out == 1
    assert ids["garden.md"] not in semantic.index.vectors_for([ids["garden.md"]])[0]
    found = await semantic.search("orchestra symphony Beethoven")
    assert "vector" in found.hits[0].legs


async def test_a_text_that_fails_once_alone_is_asked_again_before_it_is_left_out(
    db: Database, semantics: list[Running], ollama: FakeOllama
):
    """One failure of a text asked alone may be the server's moment (busy, a runner that
    crashed and came back): the text was left out of the embedder's passes for good."""
    await corpus(db)
    ollama.poison_word, ollama.poison_failures = "tomatoes", 2  # its batch, then itself once
    semantic = await start_semantic(db, semantics, ollama_settings(ollama), catch_up=False)
    status = await caught_up(db, semantic)
    assert status.job.last_error is None and ollama.poison_failures == 0


# -- WordLlama, offline -------------------------------------------------------------------


def test_wordllama_loads_and_embeds_offline_and_deterministically(no_network):
    settings = EmbedderSettings()
    first = WordLlamaEmbedder(settings)
    first.check()
    texts = ["The automobile would not start", "A recipe for chocolate cake"]
    matrix = first.embed(texts)
    assert matrix.dtype == np.float32 and matrix.shape == (2, 256)
    assert np.allclose(np.linalg.norm(matrix, axis=1), 1.0, atol=1e-5)
    assert np.array_equal(WordLlamaEmbedder(settings).embed(texts), matrix)
    assert first.signature.startswith("wordllama:l2_supercat:256:")
    assert WordLlamaEmbedder(EmbedderSettings(dim=128)).signature != first.signature


async def test_a_paraphrase_is_found_by_the_vector_leg_where_the_keyword_leg_finds_nothing(
    db: Database, semantics: list[Running], no_network
):
    ids = await corpus(db)
    semantic = await start_semantic(db, semantics, EmbedderSettings())
    assert (await semantic.search(PARAPHRASE, legs=("keyword",))).hits == []
    result = await semantic.search(PARAPHRASE)
    assert result.warnings == []
    best = result.hits[0]
    assert best.item_id == ids["car.md"] and best.path == "/n/car.md"
    assert best.legs == ["vector"] and best.ranks == {"vector": 1}
    assert best.snippet == CORPUS["car.md"]  # a vector-only hit shows the chunk's opening
    # by a wide cosine margin, not a coin toss among the distractors
    query = semantic.embedder.embed([PARAPHRASE])[0]
    [(first, best_cosine), (_, runner_up)] = semantic.index.search(query, 2)
    assert first == ids["car.md"] and best_cosine > runner_up + 0.2


async def test_a_hit_no_keyword_matched_opens_its_snippet_after_the_front_matter(
    db: Database, semantics: list[Running], no_network
):
    ids = await corpus(db)
    source_id = (await sources.sync_sources(db, [("notes", "/n", "default")]))["notes"]
    front = "---\ntitle: Winter\ndate: 2026-01-05\n---\nThe engine refused to turn over on icy mornings"
    [winter] = await add_document(db, source_id, "winter.md", front)
    semantic = await start_semantic(db, semantics, EmbedderSettings())
    hits = {hit.item_id: hit for hit in (await semantic.search(PARAPHRASE, legs=("vector",))).hits}
    assert hits[winter].snippet == "The engine refused to turn over on icy mornings"
    assert hits[ids["car.md"]].snippet == CORPUS["car.md"]


async def test_a_long_chunk_no_keyword_matched_shows_whole_words_then_an_ellipsis(
    db: Database, semantics: list[Running], no_network
):
    await corpus(db)
    source_id = (await sources.sync_sources(db, [("notes", "/n", "default")]))["notes"]
    text = " ".join(["The automobile would not start on cold mornings, so the mechanic checked the battery."] * 6)
    [long] = await add_document(db, source_id, "long.md", text)
    semantic = await start_semantic(db, semantics, EmbedderSettings())
    hits = {hit.item_id: hit for hit in (await semantic.search(PARAPHRASE, legs=("vector",))).hits}
    snippet = hits[long].snippet
    assert snippet.endswith("…") and len(snippet) <= 201
    assert set(snippet[:-1].split()) <= set(text.split())


# -- what is stored -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("backend", "dim"), [("wordllama", 128), ("ollama", 64)], ids=["wordllama-128", "ollama-fake-64"]
)
async def test_vectors_are_stored_one_per_item_with_signature_and_dimension(
    db: Database, semantics: list[Running], ollama: FakeOllama, backend: str, dim: int
):
    await corpus(db)
    settings = ollama_settings(ollama) if backend == "ollama" else EmbedderSettings(dim=dim)
    semantic = await start_semantic(db, semantics, settings)
    status = semantic.status()
    signature = semantic.embedder.signature
    assert status.signature == signature and signature.startswith(f"{backend}:")
    assert (status.backend, status.dimension, status.vectors) == (backend, dim, len(CORPUS))
    assert status.job.last_error is None

    async with db.reader() as conn:
        rows = await conn.execute_fetchall(
            "SELECT i.id, v.signature, v.dim, v.vector FROM items i LEFT JOIN vectors v ON v.item_id = i.id", ()
        )
    assert len(rows) == len(CORPUS)
    for item_id, stored_signature, stored_dim, blob in rows:
        assert (stored_signature, stored_dim, len(blob)) == (signature, dim, 4 * dim), item_id
        assert abs(np.linalg.norm(np.frombuffer(blob, dtype=np.float32)) - 1.0) < 1e-5

    # a second start loads them instead of embedding again
    if backend == "ollama":
        ollama.reset_counters()
    await semantic.semantic.stop()
    again = await start_semantic(db, semantics, settings)
    assert again.status().vectors == len(CORPUS)
    if backend == "ollama":
        assert ollama.texts_embedded == 0


# -- the in-memory index --------------------------------------------------------------------

# How far `VectorIndex.search` may be from the exact cosine: rows and query are each rounded
# to int8, and at 8 dimensions the roundings do not average out as they do at 256.
INT8_ERROR = 5e-3


async def test_the_vector_leg_ranks_by_exact_cosine_though_the_index_holds_int8(db: Database):
    """The index keeps a byte per dimension; the hits it returns are rescored with the
    stored float32 vectors, so near-ties come out in their true order with true scores."""
    index = await VectorIndex.open(db, "sig")
    try:
        ids = await items_in(db, "notes", 200)
        rows = unit_rows(200, 32, seed=3)
        await embed_rows(db, index, ids, rows)
        for query in unit_rows(20, 32, seed=4):
            exact = rows @ query
            truth = [(ids[n], float(exact[n])) for n in np.argsort(-exact)[:10]]
            nearest = await index.nearest(query, 10)
            assert [item_id for item_id, _ in nearest] == [item_id for item_id, _ in truth]
            assert [score for _, score in nearest] == pytest.approx([score for _, score in truth], abs=1e-6)
            approximate = dict(index.search(query, 200))
            assert all(abs(approximate[item_id] - score) < 0.02 for item_id, score in truth)
        assert await index.nearest(rows[0], 5, min_similarity=1.1) == []
    finally:
        await index.close()


async def test_vector_index_follows_written_replaced_and_removed_vectors_and_searches_in_scope(db: Database):
    index = await VectorIndex.open(db, "sig")
    try:
        assert len(index) == 0 and index.dim is None
        assert index.search(unit_rows(1, 8)[0], 5) == []

        ids = await items_in(db, "ten", 3) + await items_in(db, "twenty", 3)
        rows = unit_rows(6, 8)
        await embed_rows(db, index, ids, rows)
        assert (len(index), index.dim) == (6, 8)
        found = index.search(rows[3], 6)
        assert found[0] == (ids[3], pytest.approx(1.0, abs=INT8_ERROR))
        assert [score for _, score in found] == sorted((score for _, score in found), reverse=True)
        assert len(index.search(rows[3], 2)) == 2
        twenty = (await sources.sync_sources(db, [("ten", "/ten", "default"), ("twenty", "/twenty", "default")]))["twenty"]
        assert {item_id for item_id, _ in index.search(rows[0], 6, sources={twenty})} == set(ids[3:])
        assert index.search(rows[0], 6, sources={99}) == []
        assert all(score >= 0.5 for _, score in index.search(rows[0], 6, min_similarity=0.5))

        # a re-embedded item replaces its row: never two rows, never the old vector
        await embed_rows(db, index, ids[:1], rows[5:6])
        assert len(index) == 6
        assert [item_id for item_id, _ in index.search(rows[5], 6)].count(ids[0]) == 1
        assert dict(index.search(rows[5], 6))[ids[0]] == pytest.approx(1.0, abs=INT8_ERROR)

        # vectors of another embedder are not this index's business
        await embed_rows(db, index, ids[:1], unit_rows(1, 8, seed=9), signature="other")
        assert dict(index.search(rows[5], 6))[ids[0]] == pytest.approx(1.0, abs=INT8_ERROR)

        async with db.transaction() as conn:
            await conn.execute(f"DELETE FROM items WHERE id IN ({ids[3]}, {ids[4]})")
        await index.settled()
        assert len(index) == 4
        assert {item_id for item_id, _ in index.search(rows[4], 6)} == set(ids) - {ids[3], ids[4]}
    finally:
        await index.close()


class OneQuery:
    """An embedder every query embeds to one given direction."""

    signature, batch_size, dim, on_dimension = "sig", 16, 8, None

    def __init__(self, vector: np.ndarray) -> None:
        self.vector = vector

    def embed(self, texts: list[str]) -> np.ndarray:
        return np.tile(self.vector, (len(texts), 1))

    def dimension(self) -> int:
        return 8

    def check(self) -> None:
        pass

    def close(self) -> None:
        pass


async def test_a_memory_scope_finds_its_nearest_capsules_though_thousands_elsewhere_are_nearer(db: Database):
    """A scope's vector leg searched the whole memory source and kept what was in scope:
    with thousands of other scopes' capsules nearer the query, none of the scope's own
    came among the nearest 2,000, and three searches each deeper found nothing. Searched
    among the scope's own chunks, its nearest are found, nearest first."""
    from kenning.retrieval.search import Vectors
    from kenning.store.records import DocumentMeta, NewItem
    from kenning.store.scope import Scope

    memory = await sources.aggregate_source(db, "capsule")
    rng = np.random.default_rng(11)
    query = np.eye(8, dtype=np.float32)[0]

    def at_cosine(cosine: float) -> np.ndarray:
        other = rng.standard_normal(8).astype(np.float32)
        other[0] = 0.0
        return cosine * query + np.sqrt(1 - cosine**2) * other / np.linalg.norm(other)

    scopes = ["alpha"] * 40 + [f"other-{n % 10}" for n in range(2500)]
    cosines = [0.5 + 0.3 * n / 40 for n in range(40)] + [0.9] * 2500
    async with db.transaction() as conn:
        for n, scope in enumerate(scopes):
            text = f"capsule {n} of {scope}"
            meta = DocumentMeta(text, "markdown", 1.0, 1, text, text_hash([text]), namespace=scope)
            await documents.write_text(conn, memory, f"capsule:{n}", f"memory://{n}", meta, [NewItem(text, "", text, 1, 1)])
    ids = await scalar_list(db, "SELECT id FROM items ORDER BY id")
    index = await VectorIndex.open(db, "sig")
    try:
        await embed_rows(db, index, ids, np.stack([at_cosine(cosine) for cosine in cosines]))
        scope = Scope(namespace="alpha", kinds=("capsule",))
        assert await scope.few_chunks(db) == ids[:40]
        nearest = await index.nearest(query, 10, among=ids[:40])
        assert [item_id for item_id, _ in nearest] == ids[30:40][::-1]

        result = await Retriever(db, RetrievalSettings(query_embed_timeout=30.0)).search(
            "which capsule", 10, namespace="alpha", kinds=("capsule",), legs=("vector",),
            vectors=Vectors(OneQuery(query), index),
        )  # fmt: skip
        assert [hit.item_id for hit in result.hits] == ids[30:40][::-1]
    finally:
        await index.close()


class HeldQuery(OneQuery):
    """An embedder whose query embedding waits until the test lets it answer."""

    def __init__(self, vector: np.ndarray) -> None:
        super().__init__(vector)
        self.asked = threading.Event()
        self.answer = threading.Event()

    def embed(self, texts: list[str]) -> np.ndarray:
        self.asked.set()
        self.answer.wait(60)
        return super().embed(texts)


async def test_a_cancelled_search_stops_its_scope_lookup(db: Database, caplog: pytest.LogCaptureFixture):
    """A search cancelled while its query embedded (its client hung up) left the vector
    leg's scope lookup running: the part queued on a busy reader's thread ran when its
    turn came, and the part waiting for a free reader took one once the readers freed,
    each reading the scope for no one ahead of the searches still waited for. Every
    statement the readers run is traced here. The lookup stopped, nothing of it is
    logged: asyncio logged its gather, never awaited, as an ERROR with a traceback
    ("_GatheringFuture exception was never retrieved"), one for each client that hung
    up on a search while the readers were busy."""
    from kenning.retrieval.search import Vectors
    from kenning.store.database import READERS, on_thread

    await sources.sync_sources(db, [("notes", "/n", "default")])
    index = await VectorIndex.open(db, "sig")
    embedder = HeldQuery(unit_rows(1, 8)[0])
    retriever = Retriever(db, RetrievalSettings(query_embed_timeout=60.0))
    traced: list[str] = []
    busy = threading.Event()
    try:
        async with contextlib.AsyncExitStack() as held:
            # Two readers are taken; the third is free, its thread busy with a long read.
            for _ in range(READERS - 1):
                conn = await held.enter_async_context(db.reader())
                await on_thread(conn, lambda raw: raw.set_trace_callback(traced.append))
            async with db.reader() as conn:
                await on_thread(conn, lambda raw: raw.set_trace_callback(traced.append))
                long_read = asyncio.ensure_future(on_thread(conn, lambda raw: busy.wait(60)))
            search = asyncio.ensure_future(
                retriever.search("which note", source="notes", legs=("vector",), vectors=Vectors(embedder, index))
            )
            # The lookup's two reads started the turn of the loop after the leg asked for
            # the embedding, before this task hears that it did: one is now queued on the
            # busy thread, the other waits for a reader.
            await asyncio.to_thread(embedder.asked.wait, 60)
            search.cancel()
            with pytest.raises(asyncio.CancelledError):
                await search
            waiting = asyncio.Event()

            async def after_the_rest() -> None:
                """Every reader, once all those waiting before have had theirs, and each
                reader's thread once the reads queued on it are done."""
                async with contextlib.AsyncExitStack() as every:
                    waiting.set()
                    conns = [await every.enter_async_context(db.reader()) for _ in range(READERS)]
                    for conn in conns:
                        await on_thread(conn, lambda raw: None)

            barrier = asyncio.ensure_future(after_the_rest())
            await waiting.wait()
            busy.set()
            await long_read
        await asyncio.wait_for(barrier, 60)
        assert traced == []
        # asyncio says so as the ended lookup is collected: its error's traceback holds it
        # in a cycle until a collection runs.
        gc.collect()
        assert "never retrieved" not in caplog.text
    finally:
        busy.set()
        embedder.answer.set()
        retriever.close()
        await index.close()


async def test_vector_index_refuses_another_dimension(db: Database):
    ids = await items_in(db, "notes", 5)
    await vectors.write_vectors(db, "sig", ids[:3], unit_rows(3, 8))
    await vectors.write_vectors(db, "sig", ids[3:], unit_rows(2, 4))
    index = await VectorIndex.open(db, "sig")
    try:
        assert (len(index), index.dim, index.mismatched) == (3, 8, 2)
        [extra] = await items_in(db, "more", 1)
        await embed_rows(db, index, [extra], unit_rows(1, 4, seed=3))
        assert (len(index), index.mismatched) == (3, 3)
        assert index.search(unit_rows(1, 4)[0], 10) == []
        assert [item_id for item_id, _ in index.search(unit_rows(3, 8)[0], 1)] == [ids[0]]
    finally:
        await index.close()


async def test_a_closed_index_lets_go_of_its_vectors_while_something_still_holds_it(db: Database):
    """A re-embed or a model change closes the old index; its matrix must not stay in
    memory beside the new one until a full garbage collection happens to run."""
    ids = await items_in(db, "notes", 50)
    await vectors.write_vectors(db, "sig", ids, unit_rows(50, 64))
    index = await VectorIndex.open(db, "sig")
    assert len(index) == 50
    await index.close()
    assert len(index) == 0
    assert index.search(unit_rows(1, 64)[0], 10) == []
    assert index.vectors_for(ids)[0] == []


async def test_vector_index_grows_past_what_it_loaded_and_compacts_removed_rows(db: Database):
    rows = unit_rows(4000, 16, seed=1)
    source_id = (await sources.sync_sources(db, [("notes", "/n", "default")]))["notes"]
    await store_document(db, source_id, "big.md", *(f"chunk {n}" for n in range(4000)))
    ids = await scalar_list(db, "SELECT id FROM items ORDER BY id")
    await vectors.write_vectors(db, "sig", ids[:3], rows[:3])
    index = await VectorIndex.open(db, "sig")
    try:
        await embed_rows(db, index, ids[3:], rows[3:])
        assert len(index) == 4000
        assert index.search(rows[3999], 1)[0][0] == ids[3999]

        async def remove(first: int, last: int) -> None:
            async with db.transaction() as conn:
                await conn.execute("DELETE FROM vectors WHERE item_id BETWEEN ? AND ?", (ids[first], ids[last]))
            await index.settled()

        # a quarter dead but not past the absolute floor: masked, not yet compacted
        await remove(0, 999)
        assert len(index) == 3000 and index._count == 4000
        # past both: compacted, and every survivor still answers for itself
        await remove(1000, 1500)
        assert len(index) == 2499 and index._count == 2499
        for n in (1501, 2749, 3999):
            assert index.search(rows[n], 1) == [(ids[n], pytest.approx(1.0, abs=INT8_ERROR))]
        assert not {item_id for item_id, _ in index.search(rows[0], 4000, min_similarity=-1.0)} & set(ids[:1501])
        await embed_rows(db, index, ids[:1], rows[:1])
        assert len(index) == 2500 and index.search(rows[0], 1)[0][0] == ids[0]
    finally:
        await index.close()


# -- fusion ---------------------------------------------------------------------------------


def test_rrf_an_item_found_by_both_legs_outranks_one_found_by_one_leg_at_the_same_rank():
    ranked = {"keyword": [1, 2], "vector": [3, 2]}
    fused = fuse_rrf(ranked, {"keyword": 1.0, "vector": 1.0}, 60)
    assert max(fused, key=fused.get) == 2
    assert fused[2] == pytest.approx(2 / 62, abs=1e-6)
    found_by = legs_and_ranks(ranked)
    assert found_by[2] == (["keyword", "vector"], {"keyword": 2, "vector": 2})
    assert found_by[1] == (["keyword"], {"keyword": 1}) and found_by[3] == (["vector"], {"vector": 1})

    # two items found at the same rank, one leg each: the weight decides
    weighted = fuse_rrf({"keyword": [1], "vector": [3]}, {"keyword": 1.0, "vector": 2.0}, 60)
    assert weighted == {3: pytest.approx(2 / 61, abs=1e-6), 1: pytest.approx(1 / 61, abs=1e-6)}


def test_score_fusion_lets_meaning_reorder_keyword_hits_and_add_unmatched_ones():
    ranked = {"keyword": [1, 2, 3], "vector": [4, 2]}
    raw = {
        "keyword": {1: 9.0, 2: 8.0, 3: 1.0},
        # every keyword candidate is scored on meaning too; 4 matched no term
        "vector": {4: 0.9, 2: 0.8, 1: 0.1, 3: 0.5},
    }
    fused = fuse_scores(ranked, raw, {"keyword": 0.7, "vector": 0.3})
    # 2 is nearly the best keyword hit and close in meaning: it overtakes 1
    assert sorted(fused, key=fused.get, reverse=True)[:2] == [2, 1]
    assert fused[2] == pytest.approx(0.7 * 7 / 8 + 0.3 * 0.7 / 0.8, abs=1e-6)
    assert fused[4] == pytest.approx(0.3, abs=1e-6)
    # a single keyword match is that leg's best, not its worst
    only = fuse_scores({"keyword": [7]}, {"keyword": {7: 3.2}}, {"keyword": 0.7, "vector": 0.3})
    assert only == {7: pytest.approx(1.0)}


def proximity(hit) -> float:
    """The bonus a hit got for holding the query's words near each other, as `reasons` says."""
    [near] = [reason for reason in hit.reasons if "near each other" in reason]
    return float(near.split("+")[1].rstrip(")"))


async def test_fused_search_records_legs_and_applies_the_score_and_similarity_floors(
    db: Database, semantics: list[Running], no_network
):
    ids = await corpus(db)
    semantic = await start_semantic(db, semantics, EmbedderSettings())
    retriever = semantic.retriever

    # the car note shares words with this query and means the same: both legs, rank 1
    # in each, and the best score on both, so the default score fusion gives it 1.0; it
    # holds "cold mornings" side by side, which adds the proximity bonus on top
    best = (await semantic.search("automobile cold mornings")).hits[0]
    assert best.item_id == ids["car.md"]
    assert best.legs == ["keyword", "vector"] and best.ranks == {"keyword": 1, "vector": 1}
    assert best.score == pytest.approx(1.0 + proximity(best), abs=1e-3)

    rrf = RetrievalSettings(fusion="rrf", keyword_weight=1.0, vector_weight=2.0, min_similarity=-1.0)
    retriever.settings = rrf
    everything = (await semantic.search("automobile cold mornings")).hits
    assert everything[0].item_id == ids["car.md"]
    # rank fusion's score, with the proximity bonus in proportion to it
    assert everything[0].score == pytest.approx((1 / 61 + 2 / 61) * (1 + proximity(best)), abs=1e-4)
    assert len(everything) > 1 and all(h.legs == ["vector"] for h in everything[1:])

    # a floor above any one-leg score keeps only what both legs found
    retriever.settings = rrf.model_copy(update={"min_score": 0.04})
    assert [h.item_id for h in (await semantic.search("automobile cold mornings")).hits] == [ids["car.md"]]

    # with no similarity floor a nonsense query still gets nearest neighbours; with the
    # default floor, nothing
    retriever.settings = RetrievalSettings(min_similarity=-1.0)
    assert (await semantic.search(NONSENSE)).hits
    retriever.settings = RetrievalSettings()
    assert (await semantic.search(NONSENSE)).hits == []
    [paraphrase] = (await semantic.search(PARAPHRASE)).hits
    assert paraphrase.item_id == ids["car.md"]


# -- removals reach the in-memory index -------------------------------------------------------


async def test_replaced_and_deleted_documents_leave_no_ghost_vectors(
    db: Database, semantics: list[Running], no_network
):
    ids = await corpus(db)
    semantic = await start_semantic(db, semantics, EmbedderSettings())
    embedder, index = semantic.embedder, semantic.index
    query = embedder.embed([PARAPHRASE])[0]
    source_id = (await sources.sync_sources(db, [("notes", "/n", "default")]))["notes"]

    def indexed_ids() -> set[int]:
        return {item_id for item_id, _ in index.search(query, 1000, min_similarity=-1.0)}

    assert indexed_ids() == set(ids.values())

    # replace: the old chunk leaves the index, before any re-embedding
    [new_id] = await add_document(db, source_id, "car.md", "Bananas ripen quickly on a warm kitchen counter")
    await index.settled()
    assert len(index) == len(CORPUS) - 1
    assert ids["car.md"] not in indexed_ids() and new_id not in indexed_ids()
    assert ids["car.md"] not in {h.item_id for h in (await semantic.search(PARAPHRASE)).hits}
    semantic.semantic.wake()
    await caught_up(db, semantic)
    await index.settled()
    assert indexed_ids() == (set(ids.values()) - {ids["car.md"]}) | {new_id}
    assert (await semantic.search("bananas ripening", legs=("vector",))).hits[0].item_id == new_id

    # delete: its vectors go from the table by cascade, and from the index by the change event
    await documents.delete_documents(db, source_id, ["cake.md", "nap.md"])
    await index.settled()
    assert len(index) == len(CORPUS) - 2
    assert not indexed_ids() & {ids["cake.md"], ids["nap.md"]}
    assert indexed_ids() == set(await item_ids(db))
    assert await scalar(db, "SELECT count(*) FROM vectors") == len(CORPUS) - 2

    # a file that now fails to read holds no chunks, and no vectors either
    document_id = await scalar(db, "SELECT id FROM documents WHERE path = 'stocks.md'")
    await documents.mark_unindexed(db, document_id, "failed", "unreadable", 1.0, 1, None)
    await index.settled()
    assert ids["stocks.md"] not in indexed_ids()
    assert indexed_ids() == set(await item_ids(db))
    assert len(index) == len(CORPUS) - 3


# -- an embedder that changes under the same name ---------------------------------------------


async def test_a_model_pulled_anew_with_another_dimension_is_embedded_again_by_itself(
    db: Database, semantics: list[Running], ollama: FakeOllama
):
    """A server that swaps the model behind a name: same signature, new dimension. The old
    vectors can never be scored against a query again, so they are rebuilt unasked."""
    ids = await corpus(db)
    settings = ollama_settings(ollama)
    semantic = await start_semantic(db, semantics, settings)
    assert (semantic.status().dimension, semantic.status().model_dimension) == (64, 64)

    ollama.models["fake-embed"] = 32
    result = await semantic.search("orchestra symphony")
    assert [h.item_id for h in result.hits] == [ids["music.md"]]
    assert result.hits[0].legs == ["keyword"]
    assert any("query embeds to 32 dimensions but the index holds 64" in w for w in result.warnings)

    status = await caught_up(db, semantic)
    assert (status.dimension, status.model_dimension, status.vectors, status.mismatched) == (32, 32, len(CORPUS), 0)
    result = await semantic.search("orchestra symphony")
    assert result.warnings == []
    assert result.hits[0].item_id == ids["music.md"] and result.hits[0].legs == ["keyword", "vector"]
    assert await scalar(db, "SELECT count(DISTINCT dim) FROM vectors") == 1

    # pulled anew while nothing ran: the next start rebuilds before anything is asked
    await semantic.semantic.stop()
    ollama.models["fake-embed"] = 48
    semantic = await start_semantic(db, semantics, settings)
    assert (semantic.status().dimension, semantic.index.mismatched) == (48, 0)
    assert (await semantic.search("orchestra symphony")).warnings == []


async def test_vectors_of_two_dimensions_are_reported_until_the_model_can_be_asked(
    db: Database, semantics: list[Running], ollama: FakeOllama
):
    """A library left with vectors of two dimensions under one signature (by a kenning that
    did not rebuild them) and Ollama down at start: the most common dimension is loaded,
    the rest counted, and once the model answers again they are all embedded anew."""
    ids = await corpus(db)
    settings = ollama_settings(ollama)
    semantic = await start_semantic(db, semantics, settings)
    await semantic.semantic.stop()
    async with db.transaction() as conn:
        for name in ("car.md", "garden.md"):
            vector = np.asarray(hashed_embedding(CORPUS[name], 32), dtype=np.float32).tobytes()
            await conn.execute("UPDATE vectors SET dim = 32, vector = ? WHERE item_id = ?", (vector, ids[name]))
    ollama.down = True
    semantic = await start_semantic(db, semantics, settings, catch_up=False)
    status = semantic.status()
    assert (status.dimension, status.model_dimension, status.mismatched) == (64, None, 2)

    ollama.down = False
    ollama.models["fake-embed"] = 32
    await semantic.search("orchestra symphony")
    status = await caught_up(db, semantic)
    assert (status.dimension, status.model_dimension, status.mismatched) == (32, 32, 0)
    result = await semantic.search("orchestra symphony")
    assert result.warnings == [] and result.hits[0].legs == ["keyword", "vector"]


@pytest.mark.parametrize("turns", range(4))
async def test_closing_the_index_as_a_write_wakes_it_closes(db: Database, turns: int):
    """A write landing as the library closes: the wake-up and close()'s cancellation
    meet. With growth slack left the updater waited under Python 3.11's wait_for, which
    swallowed the cancellation when the two met, and close() waited forever."""
    ids = await items_in(db, "notes", 40)
    rows = unit_rows(40, 16)
    await vectors.write_vectors(db, "sig", ids[:2], rows[:2])
    index = await VectorIndex.open(db, "sig")
    await embed_rows(db, index, ids[2:39], rows[2:39])
    assert index._has_slack()
    await vectors.write_vectors(db, "sig", ids[39:], rows[39:])
    for _ in range(turns):
        await asyncio.sleep(0)
    async with asyncio.timeout(10):
        await index.close()
    assert len(index) == 0
