"""The vector leg's index: exact cosine over a float32 matrix held in memory.

At a library's scale (up to about a million chunks) brute force with numpy is fast and
exact, and much faster than scanning vectors stored in SQLite. The matrix grows by
doubling; removed rows are masked and compacted once they are a quarter of it.

Searches run in a worker thread on a snapshot taken under a short lock, while the
event loop adds and removes rows: a search may see a row that was removed an instant
before, which is why vector hits are checked against the database before they are
returned.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

import numpy as np

from kenning.store.vectors import LoadedVectors

COMPACT_FRACTION = 0.25


@dataclass(frozen=True)
class _Snapshot:
    matrix: np.ndarray
    ids: np.ndarray
    sources: np.ndarray
    live: np.ndarray


class VectorIndex:
    def __init__(self, signature: str, loaded: LoadedVectors) -> None:
        self.signature = signature
        self.mismatched = loaded.mismatched
        self._lock = threading.Lock()
        count = len(loaded.ids)
        self.dim: int | None = loaded.matrix.shape[1] if loaded.matrix.ndim == 2 and loaded.matrix.shape[1] else None
        self._matrix = loaded.matrix
        self._ids = loaded.ids
        self._sources = loaded.source_ids
        self._live = np.ones(count, dtype=bool)
        self._count = count
        self._dead = 0
        self._row = {int(item_id): row for row, item_id in enumerate(loaded.ids)}

    def __len__(self) -> int:
        return self._count - self._dead

    def add(self, ids: list[int], source_ids: list[int], matrix: np.ndarray) -> int:
        """Add rows of this index's dimension; returns how many were refused as mismatched."""
        if not ids:
            return 0
        with self._lock:
            if self.dim is None:
                self.dim = int(matrix.shape[1])
                self._matrix = np.zeros((0, self.dim), dtype=np.float32)
            if matrix.shape[1] != self.dim:
                return len(ids)
            self._forget(ids)
            needed = self._count + len(ids)
            if needed > len(self._ids):
                self._grow(max(needed, 2 * len(self._ids), 1024))
            rows = slice(self._count, needed)
            self._matrix[rows] = matrix
            self._ids[rows] = ids
            self._sources[rows] = source_ids
            self._live[rows] = True
            for offset, item_id in enumerate(ids):
                self._row[item_id] = self._count + offset
            self._count = needed
        return 0

    def shrink(self) -> None:
        """Drop the growth slack (up to half the matrix) once a bulk load is over."""
        with self._lock:
            if len(self._ids) > self._count:
                self._matrix = self._matrix[: self._count].copy()
                self._ids = self._ids[: self._count].copy()
                self._sources = self._sources[: self._count].copy()
                self._live = self._live[: self._count].copy()

    def vectors_for(self, ids: list[int]) -> tuple[list[int], np.ndarray]:
        """The vectors held for these items (those that have one), as a copy."""
        with self._lock:
            found = [(item_id, row) for item_id in ids if (row := self._row.get(item_id)) is not None]
            matrix = self._matrix[[row for _, row in found]] if found else np.zeros((0, self.dim or 0), np.float32)
        return [item_id for item_id, _ in found], matrix

    def reassign(self, source_id: int, ids: list[int]) -> None:
        """Items changed owning source (dedup handed them over); source filters must follow."""
        with self._lock:
            rows = [row for item_id in ids if (row := self._row.get(item_id)) is not None]
            self._sources[rows] = source_id

    def remove(self, ids: list[int]) -> None:
        with self._lock:
            self._forget(ids)
            if self._dead > COMPACT_FRACTION * max(self._count, 1) and self._dead > 1000:
                self._compact()

    def search(
        self, query: np.ndarray, k: int, sources: set[int] | None = None, min_similarity: float = -1.0
    ) -> list[tuple[int, float]]:
        """Best k (item id, cosine) pairs, optionally only from the given source ids."""
        with self._lock:
            snap = _Snapshot(
                self._matrix[: self._count], self._ids[: self._count], self._sources[: self._count],
                self._live[: self._count].copy(),
            )
        if not len(snap.ids) or query.shape[0] != snap.matrix.shape[1]:
            return []
        scores = snap.matrix @ query.astype(np.float32)
        keep = snap.live
        if sources is not None:
            keep = keep & np.isin(snap.sources, np.fromiter(sources, dtype=np.int64))
        keep &= scores >= min_similarity
        candidates = np.flatnonzero(keep)
        if not len(candidates):
            return []
        if len(candidates) > k:
            best = np.argpartition(-scores[candidates], k - 1)[:k]
            candidates = candidates[best]
        order = candidates[np.argsort(-scores[candidates], kind="stable")]
        return [(int(snap.ids[row]), float(scores[row])) for row in order]

    def similarities(self, query: np.ndarray, ids: list[int]) -> dict[int, float]:
        """Cosine of the query with each given item that has a vector here."""
        with self._lock:
            found = [(item_id, row) for item_id in ids if (row := self._row.get(item_id)) is not None]
            if not found or query.shape[0] != self._matrix.shape[1]:
                return {}
            rows = self._matrix[[row for _, row in found]]
        scores = rows @ query.astype(np.float32)
        return {item_id: float(score) for (item_id, _), score in zip(found, scores)}

    def _forget(self, ids: list[int]) -> None:
        for item_id in ids:
            row = self._row.pop(item_id, None)
            if row is not None and self._live[row]:
                self._live[row] = False
                self._dead += 1

    def _grow(self, capacity: int) -> None:
        matrix = np.zeros((capacity, self.dim), dtype=np.float32)
        matrix[: self._count] = self._matrix[: self._count]
        self._matrix = matrix
        self._ids = np.resize(self._ids, capacity)
        self._sources = np.resize(self._sources, capacity)
        live = np.zeros(capacity, dtype=bool)
        live[: self._count] = self._live[: self._count]
        self._live = live

    def _compact(self) -> None:
        keep = np.flatnonzero(self._live[: self._count])
        self._matrix = self._matrix[keep].copy()
        self._ids = self._ids[keep].copy()
        self._sources = self._sources[keep].copy()
        self._live = np.ones(len(keep), dtype=bool)
        self._count = len(keep)
        self._dead = 0
        self._row = {int(item_id): row for row, item_id in enumerate(self._ids)}
