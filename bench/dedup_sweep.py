"""Near-duplicate sweep: time and growth over library size, precision and recall.

Generates seeded synthetic libraries (names and whole-document vectors, no text) with
10 % planted near-duplicates in other sources, times `find_near_duplicates` as a full
sweep and in targeted mode (k changed documents), and scores the result against the
planted pairs. The baseline measured in the same run is the naive all-pairs matrix
product with the same three conditions, at the smaller sizes only: it is exact, so it
also shows what name blocking misses.

Vectors are not uniform on the sphere: document vectors (means of chunk vectors) share a
common direction, and documents on one topic share another, so each vector here is 0.72
shared + 0.45 topic (one of 32) + 0.53 own noise. Random pairs then sit at cosine ~0.52,
pairs on one topic at ~0.72. That is more clustered than real wordllama vectors measured
on 3,000 NFCorpus and SciFact abstracts (random pairs at cosine 0.22 mean, 0.40 at the
95th percentile), so LSH buckets here are harder to separate than in a real library.
Near-duplicates are the original plus noise, renormalised, at a cosine drawn from
0.972-0.998.

The store section times the real sweep, `kenning.ingest.dedup.near_dup_sweep`, on a
library written through the store (three folder sources, one transaction per document
as a folder sweep writes them, 1-3 chunks of text each, synthetic chunk vectors stored
under one signature and loaded into a `VectorIndex`); copies have their last chunk
re-spaced so the exact-hash gate at ingest does not take them (a reworded chunk would be
a line of the copy's own, which the sweep never collapses). It times the sweep's parts
one by one (`ownership.dedup_candidates`, `_signals`, `find_near_duplicates`, `ownership.collapse_pairs`), the whole sweep and
the targeted one, each on a fresh copy of the library, then checks the store is sound.

    .venv/bin/python bench/dedup_sweep.py [--sizes 5000 10000 20000 40000] [--changed 100]
                                          [--baseline-max 20000] [--repeat 3]
                                          [--section all|pure|store] [--json]

Progress goes to stderr; the summary (or the JSON object) is the only thing on stdout.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import math
import os
import random
import shutil
import sqlite3
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from kenning.config import DedupSettings
from kenning.ingest import dedup
from kenning.ingest.near_dups import (
    DocSignal,
    NearDuplicate,
    SweepStats,
    find_near_duplicates,
    name_ratio,
    normalise_name,
)
from kenning.store.vector_index import VectorIndex
from kenning.store import documents, ownership
from kenning.store.database import Database
from kenning.store.records import DocumentMeta, NewItem
from kenning.store.sources import sync_sources
from kenning.store.texthash import text_hash
from kenning.store.vectors import write_vectors

SEED = 4242
DIM = 256
TOPICS = 32
SHARED, TOPIC, OWN = 0.72, 0.45, 0.53
DUPLICATE_SHARE = 0.10
# Look-alikes that must NOT be found, each 1 % of the library: same name in another
# source just under the vector threshold; a near-identical copy in the same source; a
# near-identical copy whose name differs by a number (the next invoice, next month).
DECOY_SHARE = 0.01
FOLDER_SOURCES = range(1, 9)  # rank 2: persistent
TRANSIENT_SOURCES = (9, 10)  # rank 1: agent documents, fetched URLs
HOT_NAMES = (
    ("README.md", 0.03), ("index.html", 0.02), ("notes.md", 0.015), ("Meeting Notes.md", 0.01), ("untitled.txt", 0.005)
)
COMMON_WORDS = (
    "notes", "meeting", "report", "draft", "plan", "design", "summary", "guide", "setup", "install", "api",
    "overview", "todo", "roadmap", "review", "spec", "budget", "project", "team", "weekly", "monthly", "status",
    "release", "changelog", "architecture", "proposal", "minutes", "research", "ideas", "reference", "tutorial",
    "config", "deploy",
)
SYLLABLES = [c + v for c in "bcdfghjklmnprstvwz" for v in ("a", "e", "i", "o", "u", "ai", "ou")]
EXTENSIONS = (".md", ".md", ".md", ".txt", ".pdf", ".html", ".docx")
COPY_MARKERS = (" (1)", " (2)", " copy", "-copy", " - Copy", "_v2", " v3", "_final", "(1)")


def log(message: str) -> None:
    print(f"[bench] {message}", file=sys.stderr, flush=True)


@dataclass
class Library:
    docs: list[DocSignal]
    planted: set[frozenset[int]]  # every planted near-duplicate pair
    eligible: set[frozenset[int]]  # those meeting the definition: name ratio >= 0.8 once normalised
    decoys: set[frozenset[int]]


class _Generator:
    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.np_rng = np.random.default_rng(seed)
        self.shared = self._unit(self.np_rng.standard_normal(DIM))
        self.topics = [self._unit(self.np_rng.standard_normal(DIM)) for _ in range(TOPICS)]
        words = dict.fromkeys(COMMON_WORDS)
        while len(words) < 3000:
            words.setdefault("".join(self.rng.choices(SYLLABLES, k=self.rng.choice((2, 2, 3, 3, 4)))))
        self.words = list(words)
        self.word_weights = list(itertools.accumulate(1 / rank for rank in range(1, len(self.words) + 1)))
        self.hot_weights = list(itertools.accumulate(share for _, share in HOT_NAMES))

    @staticmethod
    def _unit(vector: np.ndarray) -> np.ndarray:
        return (vector / np.linalg.norm(vector)).astype(np.float32)

    def vector(self) -> np.ndarray:
        topic = self.topics[self.rng.randrange(TOPICS)]
        own = self._unit(self.np_rng.standard_normal(DIM))
        return self._unit(SHARED * self.shared + TOPIC * topic + OWN * own)

    def near(self, vector: np.ndarray, cosine: float) -> np.ndarray:
        """`vector` plus noise orthogonal-ish to it, scaled so the cosine is about `cosine`."""
        noise = self._unit(self.np_rng.standard_normal(DIM))
        return self._unit(vector + np.sqrt(1 / cosine**2 - 1) * noise)

    def name(self) -> str:
        roll = self.rng.random()
        if roll < self.hot_weights[-1]:
            return HOT_NAMES[next(i for i, w in enumerate(self.hot_weights) if roll < w)][0]
        words = self.rng.choices(self.words, cum_weights=self.word_weights, k=self.rng.choice((1, 2, 2, 3, 3, 4)))
        style = self.rng.random()
        if style < 0.2:
            stem = "".join(w.capitalize() for w in words)
        else:
            stem = self.rng.choice(("-", "_", " ")).join(words)
            if self.rng.random() < 0.15:
                stem += f"-{self.rng.randint(1, 2000)}"
        return stem + self.rng.choice(EXTENSIONS)

    def copy_name(self, name: str) -> str:
        """What a copy of `name` is called somewhere else."""
        stem, _, extension = name.rpartition(".")
        roll = self.rng.random()
        if roll < 0.45:
            return f"{stem}{self.rng.choice(COPY_MARKERS)}.{extension}"
        if roll < 0.55:
            return f"Copy of {name}"
        if roll < 0.65:
            return name.upper() if self.rng.random() < 0.5 else name.lower()
        if roll < 0.72:
            return f"{stem.replace('-', '_').replace(' ', '-')}.{extension}"
        if roll < 0.80:
            return f"{stem}.{self.rng.choice(('txt', 'html', 'pdf'))}"
        if roll < 0.90 and len(stem) > 6:
            at = self.rng.randrange(1, len(stem) - 1)  # a one-letter typo or rename
            return f"{stem[:at]}{self.rng.choice('aeioutr')}{stem[at + 1:]}.{extension}"
        return name

    def other_source(self, source: int) -> int:
        return self.rng.choice([s for s in (*FOLDER_SOURCES, *TRANSIENT_SOURCES) if s != source])

    def source(self) -> int:
        return self.rng.choice(FOLDER_SOURCES) if self.rng.random() < 0.8 else self.rng.choice(TRANSIENT_SOURCES)


def generate(size: int, seed: int = SEED) -> Library:
    gen = _Generator(seed + size)
    duplicates = int(size * DUPLICATE_SHARE)
    decoys = int(size * DECOY_SHARE)
    originals = size - duplicates - 3 * decoys
    docs: list[DocSignal] = []

    def add(source: int, name: str, vector: np.ndarray) -> int:
        doc_id = len(docs) + 1
        rank = 2 if source in FOLDER_SOURCES else 1
        docs.append(DocSignal(doc_id, source, name, vector, rank, gen.rng.randint(1, 40)))
        return doc_id

    for _ in range(originals):
        add(gen.source(), gen.name(), gen.vector())
    library = Library(docs, set(), set(), set())
    picks = gen.rng.sample(range(originals), duplicates + 3 * decoys)
    for index in picks[:duplicates]:
        original = docs[index]
        vector = gen.near(original.vector, gen.rng.uniform(0.972, 0.998))
        copy = add(gen.other_source(original.source_id), gen.copy_name(original.name), vector)
        pair = frozenset((original.document_id, copy))
        library.planted.add(pair)
        if name_ratio(normalise_name(original.name), normalise_name(docs[copy - 1].name)) >= 0.8:
            library.eligible.add(pair)
    for position, index in enumerate(picks[duplicates:]):
        original = docs[index]
        kind = position % 3
        if kind == 0:  # just under the vector threshold
            vector = gen.near(original.vector, gen.rng.uniform(0.90, 0.965))
            copy = add(gen.other_source(original.source_id), gen.copy_name(original.name), vector)
        elif kind == 1:  # same source: two files the user keeps on purpose
            copy = add(original.source_id, gen.copy_name(original.name), gen.near(original.vector, 0.995))
        else:  # the next edition: a number in the name differs
            stem, _, extension = original.name.rpartition(".")
            name = f"{stem} {gen.rng.randint(2020, 2025)}-0{gen.rng.randint(1, 9)}.{extension}"
            copy = add(gen.other_source(original.source_id), name, gen.near(original.vector, 0.995))
        library.decoys.add(frozenset((original.document_id, copy)))
    return library


def naive_all_pairs(
    docs: list[DocSignal], similarity: float = 0.97, name_similarity: float = 0.8
) -> set[frozenset[int]]:
    """Every pair by one tiled matrix product, then the same source and name conditions."""
    vectors = np.array([doc.vector for doc in docs], dtype=np.float32)
    sources = np.array([doc.source_id for doc in docs])
    stems = [normalise_name(doc.name) for doc in docs]
    found: set[frozenset[int]] = set()
    for start in range(0, len(docs), 2048):
        sims = vectors[start : start + 2048] @ vectors.T
        rows, cols = np.nonzero((sims >= similarity) & (sources[start : start + 2048, None] != sources[None, :]))
        for row, col in zip(rows + start, cols):
            if row < col and name_ratio(stems[row], stems[col]) >= name_similarity:
                found.add(frozenset((docs[row].document_id, docs[col].document_id)))
    return found


def best_of(repeat: int, work: Callable[[], object]) -> tuple[float, object]:
    best, result = float("inf"), None
    for _ in range(repeat):
        started = time.perf_counter()
        result = work()
        best = min(best, time.perf_counter() - started)
    return best, result


def as_pairs(collapses: list[NearDuplicate]) -> set[frozenset[int]]:
    return {frozenset((c.winner_id, c.loser_id)) for c in collapses}


def measure(size: int, changed: int, baseline_max: int, repeat: int) -> dict:
    log(f"{size:,} documents: generating")
    library = generate(size)
    stats = SweepStats()
    log(f"{size:,} documents: full sweep x{repeat}")
    sweep_s, collapses = best_of(repeat, lambda: find_near_duplicates(library.docs, stats=SweepStats()))
    find_near_duplicates(library.docs, stats=stats)
    found = as_pairs(collapses)
    true_found = found & library.planted
    rng = random.Random(SEED)
    dup_ids = [min(pair) if rng.random() < 0.5 else max(pair) for pair in library.planted]
    focus = set(rng.sample(dup_ids, changed // 2)) | set(rng.sample(range(1, size + 1), changed - changed // 2))
    log(f"{size:,} documents: targeted, {len(focus)} changed")
    targeted_s, targeted = best_of(repeat, lambda: find_near_duplicates(library.docs, only=focus))
    full_for_focus = {pair for pair in found if pair & focus}
    result = {
        "documents": size,
        "planted": len(library.planted),
        "eligible": len(library.eligible),
        "sweep_s": round(sweep_s, 4),
        "us_per_doc": round(sweep_s / size * 1e6, 2),
        "found": len(found),
        "precision": round(len(true_found) / len(found), 4) if found else 1.0,
        "recall_eligible": round(len(found & library.eligible) / len(library.eligible), 4),
        "recall_planted": round(len(true_found) / len(library.planted), 4),
        "decoys_found": len(found & library.decoys),
        "comparisons": stats.comparisons,
        "all_pairs": size * (size - 1) // 2,
        "blocks": stats.blocks,
        "lsh_blocks": stats.lsh_blocks,
        "targeted_k": len(focus),
        "targeted_s": round(targeted_s, 4),
        "targeted_agrees": as_pairs(targeted) == full_for_focus,
    }
    if size <= baseline_max:
        log(f"{size:,} documents: naive all-pairs baseline")
        naive_s, naive = best_of(1, lambda: naive_all_pairs(library.docs))
        result["naive_s"] = round(naive_s, 4)
        result["naive_recall_eligible"] = round(len(naive & library.eligible) / len(library.eligible), 4)
        result["naive_found"] = len(naive)
    return result


# ---- The sweep against the store -------------------------------------------------------

STORE_SOURCES = ("notes", "archive", "downloads")  # folder sources, all rank 2
# A chunk vector is its document's direction plus this much noise of its own (chunks of
# one document at cosine ~0.89), so the stored mean is what the matcher compares, as in
# the daemon. A copy is every chunk of the original moved to cosine 0.972-0.998.
CHUNK_NOISE = 0.35
SIGNATURE = "bench:synthetic:256"
VECTOR_BATCH = 1000


@dataclass
class StoreDoc:
    source: int  # position in STORE_SOURCES
    name: str
    texts: list[str]
    vectors: np.ndarray  # one row per chunk


@dataclass
class StoreLibrary:
    docs: list[StoreDoc]
    planted: list[tuple[int, int]]  # (original, copy), positions in docs
    eligible: list[bool]  # per planted pair: names and stored means meet the definition
    decoys: list[tuple[int, int]]


def _unit_rows(rows: np.ndarray) -> np.ndarray:
    return (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)


def _mean_cosine(a: np.ndarray, b: np.ndarray) -> float:
    ma, mb = a.mean(axis=0), b.mean(axis=0)
    return float(ma @ mb / (np.linalg.norm(ma) * np.linalg.norm(mb)))


def generate_store(size: int, seed: int = SEED) -> StoreLibrary:
    """Documents with 1-3 chunks of text and vectors in three folder sources; 10 % are
    copies in another source under a copy name, their last chunk re-spaced so the
    exact-hash gate at ingest lets them through. 2 % are decoys: a near-identical copy in
    the same source, and one in another source whose name differs by a number."""
    gen = _Generator(seed + size + 1)
    duplicates, decoys = int(size * DUPLICATE_SHARE), int(size * DECOY_SHARE)
    originals = size - duplicates - 2 * decoys

    def text() -> str:
        return " ".join(gen.rng.choices(gen.words, cum_weights=gen.word_weights, k=gen.rng.randint(40, 90)))

    def noise(count: int) -> np.ndarray:
        return _unit_rows(gen.np_rng.standard_normal((count, DIM)))

    def copy(original: StoreDoc, source: int, name: str, cosine: float) -> StoreDoc:
        # Re-spaced, not reworded: a copy with a line of its own is never collapsed.
        texts = [*original.texts[:-1], original.texts[-1].replace(" ", "  ", 1)]
        moved = original.vectors + math.sqrt(1 / cosine**2 - 1) * noise(len(texts))
        return StoreDoc(source, name, texts, _unit_rows(moved))

    docs = []
    for _ in range(originals):
        count = gen.rng.randint(1, 3)
        vectors = _unit_rows(gen.vector() + CHUNK_NOISE * noise(count))
        docs.append(StoreDoc(gen.rng.randrange(len(STORE_SOURCES)), gen.name(), [text() for _ in range(count)], vectors))
    library = StoreLibrary(docs, [], [], [])
    picks = gen.rng.sample(range(originals), duplicates + 2 * decoys)
    others = {s: [o for o in range(len(STORE_SOURCES)) if o != s] for s in range(len(STORE_SOURCES))}
    for index in picks[:duplicates]:
        original = docs[index]
        docs.append(copy(original, gen.rng.choice(others[original.source]), gen.copy_name(original.name),
                         gen.rng.uniform(0.972, 0.998)))  # fmt: skip
        library.planted.append((index, len(docs) - 1))
        named = name_ratio(normalise_name(original.name), normalise_name(docs[-1].name)) >= 0.8
        library.eligible.append(named and _mean_cosine(original.vectors, docs[-1].vectors) >= 0.97)
    for position, index in enumerate(picks[duplicates:]):
        original = docs[index]
        if position % 2 == 0:  # same source: two files the user keeps on purpose
            docs.append(copy(original, original.source, gen.copy_name(original.name), 0.995))
        else:  # the next edition: a number in the name differs
            stem, _, extension = original.name.rpartition(".")
            name = f"{stem} {gen.rng.randint(2020, 2025)}-0{gen.rng.randint(1, 9)}.{extension}"
            docs.append(copy(original, gen.rng.choice(others[original.source]), name, 0.995))
        library.decoys.append((index, len(docs) - 1))
    return library


async def build_store(library: StoreLibrary, path: Path) -> list[int]:
    """Write the library through the store's own ingest path; returns document ids by position.

    One document per transaction, as a folder sweep writes them: `mark_scanning`, then
    `replace_items` through the exact-duplicate gate. Vectors go in with `write_vectors`.
    """
    db = Database(path)
    await db.open()
    try:
        ids = await sync_sources(db, [(name, f"/bench/{name}", "default") for name in STORE_SOURCES])
        doc_ids = []
        for position, doc in enumerate(library.docs):
            source = STORE_SOURCES[doc.source]
            document_id = await documents.mark_scanning(db, ids[source], f"/bench/{source}/f{position:06d}/{doc.name}")
            items = [NewItem(doc.name, "", text, n + 1, n + 1) for n, text in enumerate(doc.texts)]
            size = sum(len(text) for text in doc.texts)
            meta = DocumentMeta(doc.name, "markdown", 1.0, size, f"bench:{position}", text_hash(doc.texts))
            stored, _ = await documents.replace_items(db, document_id, meta, items)
            if stored != "indexed":
                raise RuntimeError(f"document {position} was {stored} at ingest: the texts are not distinct")
            doc_ids.append(document_id)
        position_of = {document_id: position for position, document_id in enumerate(doc_ids)}
        async with db.reader() as conn:
            rows = await conn.execute_fetchall("SELECT id, document_id, ord FROM items ORDER BY id")
        matrix = np.stack([library.docs[position_of[document_id]].vectors[ord_] for _, document_id, ord_ in rows])
        for start in range(0, len(rows), VECTOR_BATCH):
            batch = [item_id for item_id, _, _ in rows[start : start + VECTOR_BATCH]]
            await write_vectors(db, SIGNATURE, batch, matrix[start : start + VECTOR_BATCH])
    finally:
        await db.close()
    return doc_ids


async def open_copy(pristine: Path, path: Path) -> tuple[Database, VectorIndex]:
    """A fresh copy of the built library, with its index kept in step as the daemon does."""
    shutil.copyfile(pristine, path)
    db = Database(path)
    await db.open()
    return db, await VectorIndex.open(db, SIGNATURE)


def check_store(path: Path, index_rows: int) -> dict:
    """Soundness after a sweep, and the collapsed pairs (loser, winner) read back."""
    conn = sqlite3.connect(path, isolation_level=None)

    def one(sql: str) -> int:
        return conn.execute(sql).fetchone()[0]

    try:
        try:
            conn.execute("INSERT INTO items_fts (items_fts) VALUES ('integrity-check')")
            fts_ok = True
        except sqlite3.DatabaseError:
            fts_ok = False
        checks = {
            "integrity_ok": conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)],
            "foreign_keys_ok": conn.execute("PRAGMA foreign_key_check").fetchall() == [],
            "fts_ok": fts_ok,
            "done_without_items": one(
                "SELECT count(*) FROM documents d WHERE status = 'done'"
                " AND NOT EXISTS (SELECT 1 FROM items i WHERE i.document_id = d.id)"
            ),
            "items": one("SELECT count(*) FROM items"),
            "items_of_done": one(
                "SELECT count(*) FROM items i JOIN documents d ON d.id = i.document_id WHERE d.status = 'done'"
            ),
            "chunk_count_of_done": one("SELECT coalesce(sum(chunk_count), 0) FROM documents WHERE status = 'done'"),
            "merged_without_holder": one(
                "SELECT count(*) FROM documents d WHERE status = 'merged' AND NOT EXISTS"
                " (SELECT 1 FROM documents w WHERE w.id = d.merged_into AND w.status = 'done')"
            ),
            "index_rows": index_rows,
        }
        merged = conn.execute("SELECT id, merged_into FROM documents WHERE status = 'merged'").fetchall()
    finally:
        conn.close()
    checks["ok"] = bool(
        checks["integrity_ok"] and checks["foreign_keys_ok"] and fts_ok and not checks["done_without_items"]
        and not checks["merged_without_holder"]
        and checks["items"] == checks["items_of_done"] == checks["chunk_count_of_done"] == index_rows
    )  # fmt: skip
    return {"checks": checks, "merged": {frozenset(pair) for pair in merged}}


async def measure_store(size: int, changed: int, repeat: int, work: Path) -> dict:
    settings = DedupSettings()
    log(f"store {size:,} documents: generating")
    library = generate_store(size)
    pristine = work / f"library-{size}.db"
    log(f"store {size:,} documents: writing through the store")
    started = time.perf_counter()
    doc_ids = await build_store(library, pristine)
    build_s = time.perf_counter() - started
    planted = [frozenset((doc_ids[a], doc_ids[b])) for a, b in library.planted]
    eligible = {pair for pair, ok in zip(planted, library.eligible) if ok}
    decoys = {frozenset((doc_ids[a], doc_ids[b])) for a, b in library.decoys}
    rng = random.Random(SEED)
    in_pairs = [doc_ids[b] if rng.random() < 0.5 else doc_ids[a] for a, b in library.planted]
    focus = set(rng.sample(in_pairs, changed // 2)) | set(rng.sample(doc_ids, changed - changed // 2))
    copy_path = work / "copy.db"
    best: dict[str, float] = {}

    def keep(part: str, seconds: float) -> None:
        best[part] = min(best.get(part, float("inf")), seconds)

    for attempt in range(repeat):
        log(f"store {size:,} documents: parts, run {attempt + 1} of {repeat}")
        db, index = await open_copy(pristine, copy_path)
        try:
            t0 = time.perf_counter()
            rows, items = await ownership.dedup_candidates(db)
            t1 = time.perf_counter()
            signals, missing = dedup._signals(rows, items, index)  # the sweep runs it in a worker thread
            t2 = time.perf_counter()
            pairs = find_near_duplicates(
                signals, similarity=settings.similarity, name_similarity=settings.name_similarity
            )
            t3 = time.perf_counter()
            parts_collapsed = await ownership.collapse_pairs(db, [(p.winner_id, p.loser_id) for p in pairs])
            t4 = time.perf_counter()
        finally:
            await index.close()
            await db.close()
        for part, seconds in (("read_s", t1 - t0), ("signals_s", t2 - t1), ("match_s", t3 - t2), ("apply_s", t4 - t3)):
            keep(part, seconds)

        log(f"store {size:,} documents: near_dup_sweep, run {attempt + 1} of {repeat}")
        db, index = await open_copy(pristine, copy_path)
        try:
            started = time.perf_counter()
            run = await dedup.near_dup_sweep(db, index, settings)
            keep("sweep_s", time.perf_counter() - started)
            await index.settled()
            index_rows = len(index)
        finally:
            await index.close()
            await db.close()
        after = check_store(copy_path, index_rows)

        log(f"store {size:,} documents: targeted near_dup_sweep, {len(focus)} changed, run {attempt + 1} of {repeat}")
        db, index = await open_copy(pristine, copy_path)
        try:
            started = time.perf_counter()
            targeted = await dedup.near_dup_sweep(db, index, settings, only=focus)
            keep("targeted_s", time.perf_counter() - started)
            await index.settled()
            targeted_rows = len(index)
        finally:
            await index.close()
            await db.close()
        targeted_after = check_store(copy_path, targeted_rows)
    copy_path.unlink()
    pristine.unlink()

    collapsed = after["merged"]
    full_pairs = {frozenset((p.winner_id, p.loser_id)) for p in pairs}
    chunks = sum(len(doc.texts) for doc in library.docs)
    return {
        "documents": size,
        "chunks": chunks,
        "build_s": round(build_s, 2),
        **{part: round(seconds, 4) for part, seconds in best.items()},
        "us_per_doc": round(best["sweep_s"] / size * 1e6, 2),
        "sweep_over_match": round(best["sweep_s"] / best["match_s"], 2),
        "planted": len(planted),
        "eligible": len(eligible),
        "pairs": run.pairs,
        "collapsed": run.collapsed,
        "collapsed_planted": len(collapsed & set(planted)),
        "recall_planted": round(len(collapsed & set(planted)) / len(planted), 4),
        "recall_eligible": round(len(collapsed & eligible) / len(eligible), 4),
        "unplanted_collapsed": len(collapsed - set(planted)),
        "decoys_collapsed": len(collapsed & decoys),
        "without_vectors": len(run.without_vectors) + len(missing),
        "parts_agree": parts_collapsed == run.collapsed and full_pairs == collapsed,
        "checks": after["checks"],
        "targeted_k": len(focus),
        "targeted_collapsed": targeted.collapsed,
        "targeted_agrees": targeted_after["merged"] == {pair for pair in collapsed if pair & focus},
        "targeted_checks_ok": targeted_after["checks"]["ok"],
    }


def print_store(results: list[dict]) -> None:
    print()
    print("== near-duplicate sweep against the store (near_dup_sweep: SQLite + VectorIndex) ==")
    print(
        f"vectors: synthetic, not wordllama ({DIM} dims, shared + topic + own as in the pure section, plus"
        f" {CHUNK_NOISE} noise per chunk); 1-3 chunks per document; {len(STORE_SOURCES)} folder sources;"
        " times are the best of --repeat runs, each on a fresh copy of the built library"
    )
    print(
        f"{'docs':>7} {'chunks':>7} {'read s':>7} {'signals s':>9} {'match s':>8} {'apply s':>8} {'sweep s':>8}"
        f" {'us/doc':>7} {'growth':>8} {'targeted s':>10} {'sweep/match':>11} {'collapsed/planted':>17}"
        f" {'recall':>7} {'checks':>6}"
    )
    previous = None
    for r in results:
        growth = f"x{r['sweep_s'] / previous['sweep_s']:.2f}/{r['documents'] / previous['documents']:.0f}" if previous else "-"
        print(
            f"{r['documents']:>7,} {r['chunks']:>7,} {r['read_s']:7.3f} {r['signals_s']:9.3f} {r['match_s']:8.3f}"
            f" {r['apply_s']:8.3f} {r['sweep_s']:8.3f} {r['us_per_doc']:7.1f} {growth:>8} {r['targeted_s']:10.3f}"
            f" {r['sweep_over_match']:11.1f} {r['collapsed']:>8,}/{r['planted']:<8,} {r['recall_eligible']:7.4f}"
            f" {'ok' if r['checks']['ok'] else 'FAIL':>6}"
        )
        previous = r
    print("read/signals/match/apply: ownership.dedup_candidates, _signals, find_near_duplicates (the pure matcher")
    print("on the same signals: the baseline), ownership.collapse_pairs, one by one; sweep s: near_dup_sweep whole")
    if len(results) > 1:
        first, last = results[0], results[-1]
        span = math.log(last["documents"] / first["documents"])
        exponents = ", ".join(
            f"{part.removesuffix('_s')} ~ N^{math.log(last[part] / first[part]) / span:.2f}"
            for part in ("sweep_s", "read_s", "signals_s", "match_s", "apply_s")
        )
        print(f"fitted: {exponents} (1 = linear, 2 = quadratic)")
    for r in results:
        c = r["checks"]
        print(
            f"{r['documents']:>7,}: built in {r['build_s']:.1f} s ({r['documents'] / r['build_s']:,.0f} docs/s);"
            f" recall of all planted {r['recall_planted']:.4f}, eligible {r['eligible']:,};"
            f" unplanted collapsed {r['unplanted_collapsed']}, decoys {r['decoys_collapsed']};"
            f" parts agree with the sweep: {r['parts_agree']}; targeted k={r['targeted_k']} collapsed"
            f" {r['targeted_collapsed']}, agrees with full: {r['targeted_agrees']}, sound: {r['targeted_checks_ok']}"
        )
        print(
            f"         integrity {c['integrity_ok']}, foreign keys {c['foreign_keys_ok']}, fts {c['fts_ok']},"
            f" done without items {c['done_without_items']}, merged without holder {c['merged_without_holder']},"
            f" items {c['items']:,} = of done {c['items_of_done']:,} = chunk_count {c['chunk_count_of_done']:,}"
            f" = index rows {c['index_rows']:,}"
        )


def load() -> str:
    return "/".join(f"{value:.2f}" for value in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[5_000, 10_000, 20_000, 40_000])
    parser.add_argument("--changed", type=int, default=100, help="k changed documents for the targeted mode")
    parser.add_argument("--baseline-max", type=int, default=20_000, help="largest size the naive baseline runs at")
    parser.add_argument("--repeat", type=int, default=3, help="timings are the best of this many runs")
    parser.add_argument("--section", choices=("all", "pure", "store"), default="all")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    loads = {"start": load()}
    pure, store = [], []
    if args.section in ("all", "pure"):
        pure = [measure(size, args.changed, args.baseline_max, args.repeat) for size in args.sizes]
        loads["after_pure"] = load()
    if args.section in ("all", "store"):
        with tempfile.TemporaryDirectory(prefix="kenning-dedup-") as work:
            for size in args.sizes:
                store.append(asyncio.run(measure_store(size, args.changed, args.repeat, Path(work))))
        loads["after_store"] = load()
    if args.json:
        print(json.dumps({"load_average_1_5_15": loads, "pure": pure, "store": store}, indent=2))
        return
    if pure:
        print_pure(pure)
    if store:
        print_store(store)
    print("load average (1/5/15 min): " + ", ".join(f"{when} {value}" for when, value in loads.items()))


def print_pure(results: list[dict]) -> None:
    print("== kenning near-duplicate sweep bench ==")
    print(
        f"{'docs':>7} {'sweep s':>8} {'us/doc':>7} {'growth':>7} {'targeted s':>10} {'naive s':>8} {'naive/sweep':>11}"
        f" {'precision':>9} {'recall':>7} {'decoys':>6} {'comparisons':>12} {'of all pairs':>12}"
    )
    previous = None
    for r in results:
        growth = f"x{r['sweep_s'] / previous['sweep_s']:.2f}" if previous else "-"
        growth += f"/{r['documents'] / previous['documents']:.0f}" if previous else ""
        naive = f"{r['naive_s']:8.3f}" if "naive_s" in r else f"{'-':>8}"
        ratio = f"{r['naive_s'] / r['sweep_s']:11.1f}" if "naive_s" in r else f"{'-':>11}"
        print(
            f"{r['documents']:>7,} {r['sweep_s']:8.3f} {r['us_per_doc']:7.1f} {growth:>7}"
            f" {r['targeted_s']:10.3f} {naive} {ratio}"
            f" {r['precision']:9.4f} {r['recall_eligible']:7.4f} {r['decoys_found']:>6} {r['comparisons']:>12,}"
            f" {r['comparisons'] / r['all_pairs']:11.2%}"
        )
        previous = r
    print("growth = sweep time ratio / size ratio to the previous row (linear: about x2/2; quadratic: x4/2)")
    if len(results) > 1:
        first, last = results[0], results[-1]
        span = math.log(last["documents"] / first["documents"])
        print(
            f"fitted: sweep time ~ N^{math.log(last['sweep_s'] / first['sweep_s']) / span:.2f},"
            f" comparisons ~ N^{math.log(last['comparisons'] / first['comparisons']) / span:.2f}"
            " (1 = linear, 2 = quadratic)"
        )
        timed = [r for r in results if "naive_s" in r]
        if len(timed) > 1:
            naive_span = math.log(timed[-1]["documents"] / timed[0]["documents"])
            naive_exponent = math.log(timed[-1]["naive_s"] / timed[0]["naive_s"]) / naive_span
            print(f"        naive all-pairs time ~ N^{naive_exponent:.2f}")
    for r in results:
        planted = f"planted {r['planted']}, eligible {r['eligible']} (name ratio >= 0.8)"
        notes = [f"{planted}, recall of all planted {r['recall_planted']:.4f}"]
        if "naive_s" in r:
            notes.append(f"naive recall {r['naive_recall_eligible']:.4f}")
        notes.append(f"targeted k={r['targeted_k']} agrees with full sweep: {r['targeted_agrees']}")
        print(f"{r['documents']:>7,}: " + "; ".join(notes))


if __name__ == "__main__":
    main()
