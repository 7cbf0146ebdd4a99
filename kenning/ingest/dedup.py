"""The near-duplicate sweep against the store: load document signals, collapse pairs.

Matching is `near_dups.find_near_duplicates` (pure, blocked by name, close to linear);
this module feeds it each stored document's mean chunk vector, name, source rank and
size, and applies what it returns. Each collapse is re-checked and applied inside a
write transaction, a batch at a time, so a crash mid-sweep leaves every document either
collapsed or untouched, and the next sweep finishes the job.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from kenning.config import DedupSettings
from kenning.ingest.near_dups import DocSignal, NearDuplicate, find_near_duplicates
from kenning.retrieval.vector_index import VectorIndex
from kenning.store import ownership
from kenning.store.database import Database

log = logging.getLogger(__name__)

APPLY_BATCH = 100
IDLE_POLL_SECONDS = 1.0


@dataclass(frozen=True)
class DedupRun:
    documents: int
    pairs: int
    collapsed: int
    seconds: float
    without_vectors: frozenset[int] = frozenset()

    def to_dict(self) -> dict:
        return {
            "documents": self.documents,
            "pairs": self.pairs,
            "collapsed": self.collapsed,
            "seconds": round(self.seconds, 3),
        }


async def near_dup_sweep(
    db: Database, index: VectorIndex, settings: DedupSettings, only: set[int] | None = None
) -> DedupRun:
    """A full sweep, or with `only` the pairs involving those documents."""
    started = time.monotonic()
    rows, items = await _read(db)
    signals, missing = await asyncio.to_thread(_signals, rows, items, index)
    pairs = await asyncio.to_thread(
        find_near_duplicates,
        signals,
        similarity=settings.similarity,
        name_similarity=settings.name_similarity,
        only=only,
    )
    collapsed = await _apply(db, pairs)
    run = DedupRun(len(signals), len(pairs), collapsed, time.monotonic() - started, frozenset(missing))
    if collapsed:
        log.info("near-duplicate sweep collapsed %d of %d documents", collapsed, len(signals))
    return run


async def _read(db: Database) -> tuple[list[tuple], list[tuple[int, int]]]:
    async with db.reader() as conn:
        rows = await conn.execute_fetchall(
            f"SELECT d.id, d.source_id, d.path, d.uri, d.title, {ownership.RANK_SQL}, d.chunk_count"
            " FROM documents d JOIN sources s ON s.id = d.source_id WHERE d.status = 'done' AND s.removing = 0"
        )
        items = await conn.execute_fetchall("SELECT id, document_id FROM items ORDER BY document_id, id")
    return list(rows), list(items)


def _signals(rows: list[tuple], items: list[tuple[int, int]], index: VectorIndex) -> tuple[list[DocSignal], set[int]]:
    """One signal per document: the normalised mean of its chunk vectors."""
    item_ids = [item_id for item_id, _ in items]
    document_of = dict(items)
    found, matrix = index.vectors_for(item_ids)
    means: dict[int, np.ndarray] = {}
    if found:
        owners = np.fromiter((document_of[item_id] for item_id in found), dtype=np.int64, count=len(found))
        documents, slot = np.unique(owners, return_inverse=True)
        sums = np.zeros((len(documents), matrix.shape[1]), dtype=np.float32)
        np.add.at(sums, slot, matrix)
        norms = np.linalg.norm(sums, axis=1, keepdims=True)
        sums /= np.where(norms > 0, norms, 1)
        means = {int(document_id): sums[n] for n, document_id in enumerate(documents)}
    signals, missing = [], set()
    for document_id, source_id, path, uri, title, rank, chunk_count in rows:
        vector = means.get(document_id)
        if vector is None:
            missing.add(document_id)
        # Files are named by their file name; agent text and pages by their title.
        name = os.path.basename(path) if not uri else title
        signals.append(DocSignal(document_id, source_id, name, vector, rank, chunk_count))
    return signals, missing


async def _apply(db: Database, pairs: list[NearDuplicate]) -> int:
    collapsed = 0
    for start in range(0, len(pairs), APPLY_BATCH):
        batch = pairs[start : start + APPLY_BATCH]
        involved = [document_id for pair in batch for document_id in (pair.winner_id, pair.loser_id)]
        async with db.transaction() as conn:
            # The library may have moved on since the signals were read.
            rows = await conn.execute_fetchall(
                "SELECT d.id FROM documents d JOIN sources s ON s.id = d.source_id"
                f" WHERE d.id IN ({', '.join('?' * len(involved))}) AND d.status = 'done' AND s.removing = 0",
                involved,
            )
            current = {row[0] for row in rows}
            # Collapsing must not leave one source holding two of its files as one
            # document: skip a pair when either side already has a location in the
            # other's source.
            crossed = await conn.execute_fetchall(
                "SELECT a.id, b.id FROM documents a JOIN documents b"
                " WHERE a.id IN ({0}) AND b.id IN ({0}) AND a.id != b.id AND EXISTS"
                " (SELECT 1 FROM documents m WHERE m.merged_into = a.id AND m.source_id = b.source_id)".format(
                    ", ".join("?" * len(involved))
                ),
                [*involved, *involved],
            )
            blocked = {frozenset(pair) for pair in crossed}
            valid = [
                (p.winner_id, p.loser_id)
                for p in batch
                if p.winner_id in current and p.loser_id in current
                and frozenset((p.winner_id, p.loser_id)) not in blocked
            ]
            changes = await ownership.collapse(conn, valid)
        db.items_changed(changes.removed, changes.moved)
        collapsed += len(valid)
    return collapsed


class NearDupJob:
    """Runs near-duplicate sweeps one at a time: full ones on schedule or on request,
    targeted ones for the documents each scan changed.

    A targeted pass waits until the embed job is idle, since a document without
    vectors cannot be compared; documents still without one stay queued.
    """

    def __init__(
        self,
        db: Database,
        settings: DedupSettings,
        index: Callable[[], VectorIndex | None],
        embedding_idle: Callable[[], bool],
    ) -> None:
        self.db = db
        self.settings = settings
        self._index = index
        self._embedding_idle = embedding_idle
        self._pending: set[int] = set()
        self._wake = asyncio.Event()
        self._lock = asyncio.Lock()
        self.last_run: DedupRun | None = None

    def note_changed(self, document_ids: set[int]) -> None:
        if document_ids:
            self._pending |= document_ids
            self._wake.set()

    async def sweep(self, only: set[int] | None = None) -> DedupRun | None:
        """None when there is no vector index yet (it is loading)."""
        index = self._index()
        if index is None:
            return None
        async with self._lock:
            run = await near_dup_sweep(self.db, index, self.settings, only)
        self.last_run = run
        return run

    async def run(self, stop: asyncio.Event) -> None:
        while not stop.is_set():
            await self._wake.wait()
            self._wake.clear()
            while not self._embedding_idle() and not stop.is_set():
                await asyncio.sleep(IDLE_POLL_SECONDS)
            only, self._pending = self._pending, set()
            run = await self.sweep(only)
            if run is None:
                self._pending |= only
                await asyncio.sleep(IDLE_POLL_SECONDS)
                self._wake.set()
            elif waiting := only & run.without_vectors:
                # Embedding reported idle while these had no vectors yet (a backend
                # outage): they are looked at again after the next scan.
                self._pending |= waiting
