"""The near-duplicate sweep against the store: load document signals, collapse pairs.

Matching is `near_dups.find_near_duplicates` (pure, blocked by name, close to linear);
this module feeds it each stored document's mean chunk vector, name, source rank and
size, and applies what it returns. Each collapse is re-checked and applied inside a
write transaction, a batch at a time, so a crash mid-sweep leaves every document either
collapsed or untouched, and the next sweep finishes the job. The re-check also refuses a
pair whose loser has a line its winner lacks (see `near_dups`), so `pairs` can exceed
`collapsed`.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from dataclasses import dataclass

import numpy as np

from kenning.config import DedupSettings
from kenning.ingest.near_dups import DocSignal, find_near_duplicates
from kenning.store import ownership
from kenning.store.database import Database
from kenning.store.vector_index import VectorIndex

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class DedupRun:
    documents: int
    pairs: int
    collapsed: int
    seconds: float
    without_vectors: frozenset[int] = frozenset()


async def near_dup_sweep(
    db: Database, index: VectorIndex, settings: DedupSettings, only: set[int] | None = None
) -> DedupRun:
    """A full sweep, or with `only` the pairs involving those documents."""
    started = time.monotonic()
    rows, items = await ownership.dedup_candidates(db)
    signals, missing = await asyncio.to_thread(_signals, rows, items, index)
    pairs = await asyncio.to_thread(
        find_near_duplicates,
        signals,
        similarity=settings.similarity,
        name_similarity=settings.name_similarity,
        only=only,
    )
    collapsed = await ownership.collapse_pairs(db, [(pair.winner_id, pair.loser_id) for pair in pairs])
    run = DedupRun(len(signals), len(pairs), collapsed, time.monotonic() - started, frozenset(missing))
    if collapsed:
        log.info("near-duplicate sweep collapsed %d of %d documents", collapsed, len(signals))
    return run


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
