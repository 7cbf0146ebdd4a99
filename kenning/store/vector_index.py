"""The vector leg's index: exact cosine over an in-memory matrix of one embedder's vectors.

At a library's scale (up to about a million chunks) brute force with numpy is fast and
exact, and much faster than scanning vectors stored in SQLite. The index is derived
state: it subscribes to the store's change events and follows every committed write
(vectors written or deleted, items removed or handed to another source), so no writer
has to remember to tell it anything.

Changes are applied by one updater task, in a worker thread: growing the matrix and
compacting it after removals build the new arrays aside and swap them in under a short
lock, so the event loop never waits on a copy. Rows are appended past the end that
searches see, and a search works on a snapshot taken under the lock, so it may see a
row removed an instant before: vector hits are checked against the database before
they are returned.

Vectors are held as int8 with one float32 scale per row: a quarter of float32's memory,
26 MB instead of 102 at 100,000 chunks of 256 dimensions. A search rounds the query to
int8 too and takes the integer dot products with simsimd's SIMD kernels (AVX2, AVX-512
VNNI, NEON), which numpy lacks: its integer matmul has no BLAS and took 31 ms at 100,000
rows, and converting the rows to float32 a block at a time for BLAS took 5.4 ms where
simsimd takes 1.1. Its scores are off by up to about 0.003 of cosine (both roundings
together), enough to swap near-ties (1-2 % of the exact top 10 on bench/ingest.py's
library), so `nearest` takes RESCORED times as many candidates from the scan and scores
those exactly with their stored float32 vectors: one indexed read of a few dozen rows.
simsimd holds the GIL while it works, so the scan goes SCAN_ROWS rows at a time and
another thread waits for at most one block.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Iterable

import numpy as np
import simsimd

from kenning.heap import release_free_memory
from kenning.store import vectors
from kenning.store.database import ChangeSet, Database

log = logging.getLogger(__name__)

STORAGE = np.int8
LEVELS = 127
# Candidates the int8 scan hands to exact rescoring, per hit asked for, and how far
# below the floor a candidate's int8 score may be and still be rescored.
RESCORED = 2
SCORE_ERROR = 0.01
# Rows one simsimd call scores: about 0.35 ms of holding the GIL.
SCAN_ROWS = 32768
# Rows per group whose maxima bound the k-th best score (see _best).
GROUP = 64
COMPACT_FRACTION = 0.25
# Growth slack is handed back once changes have been quiet this long.
SHRINK_AFTER_SECONDS = 10.0
MIN_CAPACITY = 1024


class VectorIndex:
    def __init__(self, db: Database, signature: str) -> None:
        self.db = db
        self.signature = signature
        self.mismatched = 0
        self.dim: int | None = None
        self._lock = threading.Lock()
        self._empty()
        self._pending: list[ChangeSet] = []
        self._wake = asyncio.Event()
        self._idle = asyncio.Event()
        self._unsubscribe = db.subscribe(self._on_change)
        self._task: asyncio.Task | None = None

    @classmethod
    async def open(cls, db: Database, signature: str) -> "VectorIndex":
        """Load every stored vector of this signature and follow changes from then on.

        The subscription starts before the load, so a write committed while loading is
        applied after it (applying a change twice is harmless).
        """
        index = cls(db, signature)
        try:
            loaded = await vectors.load_vectors(db, signature)
            await asyncio.to_thread(index._load, loaded)
            await asyncio.to_thread(release_free_memory)
        except BaseException:
            index._unsubscribe()
            raise
        if loaded.mismatched:
            log.warning("%d vectors have another dimension and are ignored; `ken reembed` rebuilds them", loaded.mismatched)
        index._task = asyncio.create_task(index._run(), name=f"vector index {signature}")
        index._task.add_done_callback(_log_failure)
        return index

    async def close(self) -> None:
        """Stop following the store and let go of the vectors.

        A closed index is part of reference cycles (its updater task, its subscription)
        that only a full garbage collection frees, and those are rare: after a re-embed
        the old index's matrix (100 MB at 100,000 chunks) stayed in memory beside the new
        one. So its arrays are dropped here, whenever the object itself goes.
        """
        self._unsubscribe()
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None
        with self._lock:
            self._empty()
        self._pending = []

    def _empty(self) -> None:
        self._matrix = np.zeros((0, 0), dtype=STORAGE)
        self._scales = np.zeros(0, dtype=np.float32)
        self._ids = np.zeros(0, dtype=np.int64)
        self._sources = np.zeros(0, dtype=np.int64)
        self._live = np.zeros(0, dtype=bool)
        self._count, self._dead = 0, 0
        self._row: dict[int, int] = {}

    async def settled(self) -> None:
        """Return once every change published so far is applied."""
        if self._pending or not self._idle.is_set():
            await self._idle.wait()

    def __len__(self) -> int:
        return self._count - self._dead

    # -- reading (any thread) ----------------------------------------------------------

    def search(
        self, query: np.ndarray, k: int, sources: set[int] | None = None, min_similarity: float = -1.0
    ) -> list[tuple[int, float]]:
        """Best k (item id, int8 cosine) pairs, optionally only from the given source ids."""
        with self._lock:
            count = self._count
            matrix, scales = self._matrix[:count], self._scales[:count]
            ids, row_sources = self._ids[:count], self._sources[:count]
            excluded = ~self._live[:count]
        if not count or query.shape[0] != matrix.shape[1]:
            return []
        scores = _scan(matrix, scales, query.astype(np.float32))
        if sources is not None:
            excluded |= ~_among(row_sources, sources)
        excluded |= scores < min_similarity
        kept = count - int(np.count_nonzero(excluded))
        if not kept:
            return []
        scores[excluded] = -np.inf
        return [(int(ids[row]), float(scores[row])) for row in _best(scores, min(k, kept))]

    def search_among(
        self, query: np.ndarray, k: int, item_ids: Iterable[int], min_similarity: float = -1.0
    ) -> list[tuple[int, float]]:
        """`search` over the given items alone (a narrow scope's): their rows are scored,
        not the whole matrix scanned and then filtered."""
        found, rows = self.vectors_for(item_ids)
        if not found or query.shape[0] != rows.shape[1]:
            return []
        scores = rows @ query.astype(np.float32)
        kept = np.flatnonzero(scores >= min_similarity)
        best = kept[np.argsort(-scores[kept], kind="stable")[:k]]
        return [(found[row], float(scores[row])) for row in best]

    async def nearest(
        self,
        query: np.ndarray,
        k: int,
        sources: set[int] | None = None,
        min_similarity: float = -1.0,
        among: list[int] | None = None,
    ) -> list[tuple[int, float]]:
        """Best k (item id, cosine) pairs by exact cosine, optionally only from the given
        source ids, or only `among` the given items; items removed meanwhile are left out."""
        query = query.astype(np.float32)
        if among is not None:
            found = await asyncio.to_thread(self.search_among, query, k * RESCORED, among, min_similarity - SCORE_ERROR)
        else:
            found = await asyncio.to_thread(self.search, query, k * RESCORED, sources, min_similarity - SCORE_ERROR)
        if not found:
            return []
        stored = await vectors.stored_vectors(self.db, self.signature, len(query), [item_id for item_id, _ in found])
        exact = {item_id: float(np.frombuffer(vector, np.float32) @ query) for item_id, vector in stored.items()}
        ranked = sorted(
            ((item_id, score) for item_id, score in exact.items() if score >= min_similarity), key=lambda pair: -pair[1]
        )
        return ranked[:k]

    def similarities(self, query: np.ndarray, item_ids: Iterable[int]) -> dict[int, float]:
        """Cosine of the query with each given item that has a vector here, from the int8 rows
        (within about 0.003): for comparing hits, not for ranking the library."""
        found, rows = self.vectors_for(item_ids)
        if not found or query.shape[0] != rows.shape[1]:
            return {}
        scores = rows @ query.astype(np.float32)
        return {item_id: float(score) for item_id, score in zip(found, scores)}

    def vectors_for(self, item_ids: Iterable[int]) -> tuple[list[int], np.ndarray]:
        """The vectors held for these items (those that have one), as a copy."""
        with self._lock:
            found = [(item_id, row) for item_id in item_ids if (row := self._row.get(item_id)) is not None]
            rows = [row for _, row in found]
            matrix, scales = self._matrix[rows], self._scales[rows]
        return [item_id for item_id, _ in found], (matrix.astype(np.float32) * scales[:, None]).reshape(
            len(found), self.dim or 0
        )

    # -- following the store -----------------------------------------------------------

    def _on_change(self, changes: ChangeSet) -> None:
        if (
            changes.removed
            or changes.moved
            or self.signature in changes.embedded
            or self.signature in changes.unembedded
        ):
            self._pending.append(changes)
            self._idle.clear()
            self._wake.set()

    async def _run(self) -> None:
        self._idle.set()
        while True:
            # Not asyncio.wait_for: on 3.11 it swallows a close() that meets a wake-up.
            try:
                async with asyncio.timeout(SHRINK_AFTER_SECONDS if self._has_slack() else None):
                    await self._wake.wait()
            except TimeoutError:
                await asyncio.to_thread(self._shrink)
                continue
            self._wake.clear()
            batch, self._pending = self._pending, []
            await self._follow(batch)
            if not self._pending:
                self._idle.set()

    async def _follow(self, batch: list[ChangeSet]) -> None:
        """Apply one batch of changes. A method of its own so that what it loaded (a
        re-embed's batch is every vector of the library as bytes) is let go when it
        returns, not held by the loop's locals while it waits for the next batch."""
        try:
            removed, moved, embedded = await asyncio.to_thread(_fold, batch, self.signature)
            loaded = await vectors.load_rows(self.db, self.signature, sorted(embedded)) if embedded else []
            await asyncio.to_thread(self._apply, removed, moved, loaded)
        except Exception:
            # Whatever went wrong, the table is the truth: start again from it.
            log.exception("applying changes to the vector index failed; reloading it")
            await asyncio.to_thread(self._load, await vectors.load_vectors(self.db, self.signature))

    # -- writing (the updater's worker thread only) ------------------------------------

    def _load(self, loaded: vectors.LoadedVectors) -> None:
        self.mismatched = loaded.mismatched
        count = len(loaded.ids)
        if loaded.matrix.ndim == 2 and loaded.matrix.shape[1]:
            self.dim = int(loaded.matrix.shape[1])
        row = {int(item_id): n for n, item_id in enumerate(loaded.ids)}
        matrix, scales = _quantize(loaded.matrix)
        with self._lock:
            self._matrix, self._scales = matrix, scales
            self._ids, self._sources = loaded.ids, loaded.source_ids
            self._live = np.ones(count, dtype=bool)
            self._count, self._dead, self._row = count, 0, row

    def _apply(self, removed: set[int], moved: dict[int, int], loaded: list[vectors.VectorRow]) -> None:
        with self._lock:
            self._forget(removed)
        self._append([row for row in loaded if self._fits(row)])
        with self._lock:
            for item_id, source_id in moved.items():
                row = self._row.get(item_id)
                if row is not None:
                    self._sources[row] = source_id
        if self._dead > COMPACT_FRACTION * max(self._count, 1) and self._dead > 1000:
            self._compact()

    def _fits(self, row: vectors.VectorRow) -> bool:
        if self.dim is None:
            self.dim = row.dim
        if row.dim != self.dim:
            self.mismatched += 1
            return False
        return True

    def _append(self, rows: list[vectors.VectorRow]) -> None:
        if not rows:
            return
        with self._lock:
            self._forget([row.item_id for row in rows])
            needed = self._count + len(rows)
        if needed > len(self._ids):
            self._grow(max(needed, 2 * len(self._ids), MIN_CAPACITY))
        start = self._count
        block = np.frombuffer(b"".join(row.vector for row in rows), dtype=np.float32).reshape(len(rows), -1)
        # Rows past the end are invisible to searches until the count moves past them.
        self._matrix[start:needed], self._scales[start:needed] = _quantize(block)
        self._ids[start:needed] = [row.item_id for row in rows]
        self._sources[start:needed] = [row.source_id for row in rows]
        self._live[start:needed] = True
        with self._lock:
            for offset, row in enumerate(rows):
                self._row[row.item_id] = start + offset
            self._count = needed

    def _forget(self, item_ids: Iterable[int]) -> None:
        for item_id in item_ids:
            row = self._row.pop(item_id, None)
            if row is not None and self._live[row]:
                self._live[row] = False
                self._dead += 1

    def _grow(self, capacity: int) -> None:
        count = self._count
        matrix = np.zeros((capacity, self.dim or 0), dtype=STORAGE)
        if count:
            matrix[:count] = self._matrix[:count]
        scales = np.zeros(capacity, dtype=np.float32)
        scales[:count] = self._scales[:count]
        ids = np.zeros(capacity, dtype=np.int64)
        ids[:count] = self._ids[:count]
        sources = np.zeros(capacity, dtype=np.int64)
        sources[:count] = self._sources[:count]
        with self._lock:
            live = np.zeros(capacity, dtype=bool)
            live[:count] = self._live[:count]
            self._matrix, self._scales, self._ids, self._sources, self._live = matrix, scales, ids, sources, live

    def _has_slack(self) -> bool:
        return len(self._ids) > self._count

    def _shrink(self) -> None:
        """Drop the growth slack (up to half the matrix) once a burst of writes is over."""
        count = self._count
        matrix, scales = self._matrix[:count].copy(), self._scales[:count].copy()
        ids, sources = self._ids[:count].copy(), self._sources[:count].copy()
        with self._lock:
            live = self._live[:count].copy()
            self._matrix, self._scales, self._ids, self._sources, self._live = matrix, scales, ids, sources, live

    def _compact(self) -> None:
        with self._lock:
            keep = np.flatnonzero(self._live[: self._count])
        matrix, scales, ids, sources = self._matrix[keep], self._scales[keep], self._ids[keep], self._sources[keep]
        row = {int(item_id): n for n, item_id in enumerate(ids)}
        with self._lock:
            # Removals that arrived since `keep` was taken are this updater's own, and it
            # is busy here: there are none.
            self._matrix, self._scales, self._ids, self._sources = matrix, scales, ids, sources
            self._live = np.ones(len(keep), dtype=bool)
            self._count, self._dead, self._row = len(keep), 0, row


def _quantize(vectors: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """int8 rows and the scale that brings each back to float32 (row = int8 * scale).

    The scale gives the row back its own length, so what quantizing changes is only its
    direction, by a fraction of a degree: a vector's similarity to itself stays 1.
    """
    if vectors.ndim != 2 or not vectors.shape[1]:
        return np.zeros((len(vectors), 0), STORAGE), np.zeros(len(vectors), np.float32)
    steps = np.abs(vectors).max(axis=1) / LEVELS
    steps[steps == 0] = 1.0
    rows = np.rint(vectors / steps[:, None]).astype(STORAGE)
    held = np.linalg.norm(rows.astype(np.float32), axis=1)
    scales = np.linalg.norm(vectors, axis=1) / np.where(held == 0, 1.0, held)
    return rows, scales.astype(np.float32)


_buffers = threading.local()


def _buffer(name: str, shape: tuple[int, ...]) -> np.ndarray:
    """This thread's float32 scratch array of at least `shape`, viewed at `shape`.

    A search's whole-library arrays (a score per row) are past the heap's mmap
    threshold (kenning/heap.py): allocated afresh, each would be mapped, faulted in page
    by page and unmapped again on every query. Searches run in worker threads, so each
    thread keeps its own."""
    buffer = getattr(_buffers, name, None)
    if buffer is None or buffer.shape[1:] != shape[1:] or len(buffer) < shape[0]:
        buffer = np.empty(shape, np.float32)
        setattr(_buffers, name, buffer)
    return buffer[: shape[0]]


def _scan(matrix: np.ndarray, scales: np.ndarray, query: np.ndarray) -> np.ndarray:
    """Every row's dot product with the query, from integer products of the int8 rows and
    the query rounded to int8. The scores are in this thread's buffer, until its next
    scan."""
    scores = _buffer("scores", (len(matrix),))
    step = float(np.abs(query).max()) / LEVELS
    if step == 0:
        scores.fill(0)
        return scores
    rounded = np.rint(query / step).astype(STORAGE)[None, :]
    for start in range(0, len(matrix), SCAN_ROWS):
        part = matrix[start : start + SCAN_ROWS]
        simsimd.cdist(rounded, part, metric="dot", out=scores[None, start : start + len(part)], out_dtype="float32")
    np.multiply(scores, scales, out=scores)
    scores *= step
    return scores


def _among(row_sources: np.ndarray, sources: set[int]) -> np.ndarray:
    """Which rows belong to one of the sources: a lookup in a table indexed by source id,
    where np.isin sorted or compared the whole column (4 ms at 100,000 rows, against 0.5)."""
    top = int(row_sources.max()) if len(row_sources) else 0
    allowed = np.zeros(top + 1, dtype=bool)
    allowed[np.fromiter((source for source in sources if 0 <= source <= top), dtype=np.int64)] = True
    return allowed[row_sources]


def _best(scores: np.ndarray, k: int) -> np.ndarray:
    """The rows of the k highest scores, best first (ties by row).

    Every one of them scores at least the k-th best of the maxima of GROUP-row groups
    (k groups reach that, each with one row at least as good), so only the rows at or
    above it are sorted: 0.15 ms at 100,000 rows, where partitioning a copy of the
    scores took 0.7. When fewer than k groups hold a row in scope, the copy is
    partitioned instead."""
    threshold = _group_bound(scores, k)
    if threshold == -np.inf:
        work = _buffer("best", (len(scores),))
        np.negative(scores, out=work)
        work.partition(k - 1)
        threshold = -work[k - 1]
    rows = np.flatnonzero(scores >= threshold)
    return rows[np.argsort(-scores[rows], kind="stable")[:k]]


def _group_bound(scores: np.ndarray, k: int) -> float:
    """The k-th best maximum of the GROUP-row groups; -inf when fewer than k groups hold
    a row in scope."""
    groups = len(scores) // GROUP
    if groups < k:
        return -np.inf
    maxima = scores[: groups * GROUP].reshape(groups, GROUP).max(axis=1)
    if len(scores) > groups * GROUP:
        maxima = np.append(maxima, scores[groups * GROUP :].max())
    return float(np.partition(maxima, len(maxima) - k)[len(maxima) - k])


def _log_failure(task: asyncio.Task) -> None:
    if not task.cancelled() and task.exception() is not None:
        log.error("the vector index stopped following changes; restart the daemon", exc_info=task.exception())


def _fold(batch: list[ChangeSet], signature: str) -> tuple[set[int], dict[int, int], set[int]]:
    """Removed items, item -> new source, and items to (re)load, in commit order."""
    removed: set[int] = set()
    moved: dict[int, int] = {}
    embedded: set[int] = set()
    for changes in batch:
        for item_id in (*changes.removed, *changes.unembedded.get(signature, ())):
            removed.add(item_id)
            embedded.discard(item_id)
        for item_id in changes.embedded.get(signature, ()):
            embedded.add(item_id)
            removed.discard(item_id)
        for source_id, item_ids in changes.moved.items():
            moved.update(dict.fromkeys(item_ids, source_id))
    return removed, moved, embedded
