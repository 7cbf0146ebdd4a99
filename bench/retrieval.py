"""Retrieval quality of kenning's real ingest and search path on public IR collections.

Each BEIR collection is written out as one markdown file per document, swept and
embedded in-process by the same scanner, embed job and `Retriever.search` the daemon
runs, so the figures belong to the shipped code, not to a reimplementation. bm25s over
the same documents is the same-run baseline: the keyword leg should match it, and the
default hybrid (score fusion, as `RetrievalSettings()` ships) should beat both.

Fusion weights and the similarity floor are swept on NFCorpus dev only; NFCorpus test
and SciFact train are only ever measured, so no reported figure is fitted to its queries.

    .venv/bin/python bench/retrieval.py [--data DIR] [--work DIR] [--reuse] [--keep] [--json]

Progress goes to stderr; the summary (or the JSON object) is the only thing on stdout.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import math
import random
import re
import shutil
import statistics
import string
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import bm25s

from kenning.api import Hit
from kenning.config import ChunkingSettings, EmbedderSettings, LimitsSettings, RetrievalSettings, SourceSettings
from kenning.ingest.parse_pool import ParsePool
from kenning.ingest.pipeline import IngestOptions
from kenning.ingest.scan import FolderScanner
from kenning.retrieval.search import Retriever, Vectors
from kenning.store import sources
from kenning.store.database import Database
from kenning.store.vector_index import VectorIndex
from kenning.workers.embed import EmbedJob
from kenning.workers.embedders import make_embedder
from kenning.workers.extract import OFFLINE_PAGE, ExtractJob
from kenning.workers.offline_extract import OfflineExtractor

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "bench"
# (collection, split reported); the tuning split is never among the reported ones.
REPORTED = (("nfcorpus", "test"), ("scifact-train", "train"))
TUNING = ("nfcorpus", "dev")

DEPTH = 100  # documents ranked per query, for recall@100
# Chunks asked of `search`: abstracts run to 2.3-2.6 chunks each, so 100 chunks collapse
# to about 63 documents, which would cap recall@100 below what bm25s is allowed; 200
# chunks give 120-135 documents.
CHUNK_LIMIT = 200
# Latency is timed as the daemon answers a person: limit 10, snippets made.
LATENCY_LIMIT = 10
LATENCY_QUERIES = 200
INERT_CHECK_QUERIES = 20
METRICS = ("ndcg@10", "recall@10", "recall@100", "mrr@10")
HEADERS = ("nDCG@10", "R@10", "R@100", "MRR@10")

# Score fusion's keyword weight on dev; the vector weight is 1 minus it.
SWEEP_KEYWORD_WEIGHTS = (0.5, 0.6, 0.7, 0.8, 0.9)
NO_FLOOR = -1.0
FLOORS = (0.0, 0.2, 0.3, 0.4)
# The best weighted RRF of the earlier dev sweep (rank fusion, before score fusion).
RRF = {"fusion": "rrf", "keyword_weight": 1.0, "vector_weight": 0.5, "rrf_k": 60}
NONSENSE_QUERIES = 50
# A floor costing less nDCG@10 than this on dev counts as free; smaller differences
# are within what one query more or less in the top ten moves.
FLOOR_TOLERANCE = 0.005
KEYWORD, VECTOR = ("keyword",), ("vector",)
TWO_LEGS, HYBRID = ("keyword", "vector"), ("keyword", "vector", "graph")
SEED = 20240611


def log(message: str) -> None:
    print(f"[bench] {message}", file=sys.stderr, flush=True)


# --- collections -----------------------------------------------------------------------


@dataclass
class Collection:
    name: str
    docs: dict[str, tuple[str, str]]  # id -> (title, text)
    queries: dict[str, str]
    qrels: dict[str, dict[str, dict[str, int]]]  # split -> query id -> doc id -> grade

    def split(self, name: str) -> tuple[dict[str, str], dict[str, dict[str, int]]]:
        """Queries named in a split's qrels, with their judgments; unknown query ids dropped."""
        judged = {qid: grades for qid, grades in self.qrels[name].items() if qid in self.queries}
        return {qid: self.queries[qid] for qid in judged}, judged


def _jsonl(path: Path) -> Iterable[dict[str, Any]]:
    with path.open(encoding="utf-8") as lines:
        for line in lines:
            if line.strip():
                yield json.loads(line)


def read_collection(root: Path, splits: Iterable[str]) -> Collection:
    docs = {row["_id"]: (row.get("title") or "", row.get("text") or "") for row in _jsonl(root / "corpus.jsonl")}
    queries = {row["_id"]: row["text"] for row in _jsonl(root / "queries.jsonl")}
    qrels: dict[str, dict[str, dict[str, int]]] = {}
    for split in splits:
        table: dict[str, dict[str, int]] = {}
        with (root / "qrels" / f"{split}.tsv").open(encoding="utf-8") as lines:
            next(lines)  # header
            for line in lines:
                if line.strip():
                    qid, doc_id, grade = line.rstrip("\n").split("\t")
                    table.setdefault(qid, {})[doc_id] = int(grade)
        qrels[split] = table
    return Collection(root.name, docs, queries, qrels)


def file_stems(doc_ids: Iterable[str]) -> dict[str, str]:
    """File stem -> document id; ids are made filename-safe and kept distinct."""
    stems: dict[str, str] = {}
    for doc_id in doc_ids:
        base = re.sub(r"[^A-Za-z0-9_-]+", "_", doc_id).strip("_") or "doc"
        stem, copy = base, 1
        while stem in stems:
            copy += 1
            stem = f"{base}-{copy}"
        stems[stem] = doc_id
    return stems


# --- metrics ---------------------------------------------------------------------------


def score_query(ranking: list[str], grades: dict[str, int]) -> dict[str, float]:
    """nDCG@10 with the grade as gain, recall@10/100 and MRR@10 (relevant = grade > 0)."""
    relevant = {doc for doc, grade in grades.items() if grade > 0}
    dcg = sum(grades.get(doc, 0) / math.log2(rank + 2) for rank, doc in enumerate(ranking[:10]))
    ideal = sorted((grade for grade in grades.values() if grade > 0), reverse=True)[:10]
    idcg = sum(grade / math.log2(rank + 2) for rank, grade in enumerate(ideal))
    first = next((rank for rank, doc in enumerate(ranking[:10], start=1) if doc in relevant), None)
    return {
        "ndcg@10": dcg / idcg if idcg else 0.0,
        "recall@10": len(relevant.intersection(ranking[:10])) / len(relevant) if relevant else 0.0,
        "recall@100": len(relevant.intersection(ranking[:100])) / len(relevant) if relevant else 0.0,
        "mrr@10": 1.0 / first if first else 0.0,
    }


@dataclass
class Run:
    """One mode over one query set: document rankings, and per-query wall times if timed."""

    rankings: dict[str, list[str]] = field(default_factory=dict)
    seconds: list[float] = field(default_factory=list)

    def evaluate(self, judged: dict[str, dict[str, int]]) -> dict[str, float]:
        scores = [score_query(self.rankings.get(qid, []), grades) for qid, grades in judged.items()]
        result = {metric: round(statistics.fmean(s[metric] for s in scores), 4) for metric in METRICS}
        if self.seconds:
            result["mean_ms"] = round(statistics.fmean(self.seconds) * 1000, 2)
        return result


def unique_docs(stems: Iterable[str], doc_of_stem: dict[str, str]) -> list[str]:
    """Chunk ranking -> document ranking: each document at its best chunk's place."""
    return list(dict.fromkeys(doc_of_stem[stem] for stem in stems))[:DEPTH]


# --- kenning ---------------------------------------------------------------------------


def variant(**changes: Any) -> RetrievalSettings:
    """The shipped `RetrievalSettings()` with some values changed (and validated)."""
    return RetrievalSettings(**{**RetrievalSettings().model_dump(), **changes})


def describe(settings: RetrievalSettings) -> str:
    weights = f"kw {settings.keyword_weight:g}, vec {settings.vector_weight:g}, graph {settings.graph_weight:g}"
    k = f", k {settings.rrf_k}" if settings.fusion == "rrf" else ""
    floor = "none" if settings.min_similarity <= NO_FLOOR else f"{settings.min_similarity:g}"
    return f"{settings.fusion}: {weights}{k}, floor {floor}"


@dataclass(frozen=True)
class Mode:
    key: str
    label: str
    settings: RetrievalSettings
    legs: tuple[str, ...]


def kenning_modes() -> tuple[Mode, ...]:
    """The kenning rows of each collection's table; only `hybrid default` is the target."""
    shipped = RetrievalSettings()
    floor = f"floor {shipped.min_similarity:g}"
    return (
        Mode("kenning keyword", "kenning keyword only", shipped, KEYWORD),
        Mode("kenning vector", f"kenning vector only ({floor})", shipped, VECTOR),
        Mode("kenning hybrid default", f"kenning hybrid DEFAULT ({describe(shipped)})", shipped, HYBRID),
        Mode("kenning hybrid no graph", "kenning hybrid default without the graph leg", shipped, TWO_LEGS),
        Mode(
            "kenning hybrid default no floor",
            "kenning hybrid default, no floor (floor -1)",
            variant(min_similarity=NO_FLOOR),
            HYBRID,
        ),
        Mode("kenning hybrid rrf", f"kenning hybrid rrf ({describe(variant(**RRF))})", variant(**RRF), HYBRID),
    )


@dataclass
class KenningIndex:
    db: Database
    vectors: Vectors
    doc_of_stem: dict[str, str]
    build: dict[str, Any]
    # (query ids, settings, legs) -> Run: the sweeps share rows with the reported modes.
    runs: dict[tuple[Any, ...], Run] = field(default_factory=dict)

    async def hits(
        self, query: str, settings: RetrievalSettings, legs: tuple[str, ...], limit: int, snippets: bool = True
    ) -> list[Hit]:
        retriever = Retriever(self.db, settings)
        return (await retriever.search(query, limit=limit, legs=legs, vectors=self.vectors, snippets=snippets)).hits

    async def search(
        self, query: str, settings: RetrievalSettings, legs: tuple[str, ...], limit: int, snippets: bool = True
    ) -> list[str]:
        """Document ranking from the daemon's own `Retriever.search`.

        A hit whose exact text other files hold too lists them in `also_at` (the
        collections have duplicate documents): each ranks where the hit does.
        """
        hits = await self.hits(query, settings, legs, limit, snippets)
        paths = (path for hit in hits for path in (hit.path, *(other.path for other in hit.also_at)))
        return unique_docs((Path(path).stem for path in paths), self.doc_of_stem)

    async def run(self, queries: dict[str, str], settings: RetrievalSettings, legs: tuple[str, ...]) -> Run:
        """Rankings CHUNK_LIMIT deep, snippets skipped (see `check_snippets_inert`); untimed."""
        key = (tuple(queries), settings, legs)
        if key not in self.runs:
            run = Run()
            for qid, text in queries.items():
                run.rankings[qid] = await self.search(text, settings, legs, CHUNK_LIMIT, snippets=False)
            self.runs[key] = run
        return self.runs[key]

    async def latency_ms(self, queries: Iterable[str], settings: RetrievalSettings, legs: tuple[str, ...]) -> float:
        return await mean_ms(queries, lambda text: self.search(text, settings, legs, LATENCY_LIMIT))


async def check_snippets_inert(indexes: dict[str, KenningIndex], collections: dict[str, Collection]) -> None:
    """Same hits, scores and order with and without snippets, for the default hybrid.

    Quality is ranked 200 chunks deep, and highlighting 200 hits costs about 100 ms of a
    140 ms SciFact query: about ten minutes a run instead of three and a half. Snippets
    are display text made after the ranking is final, so the ranking cannot change; this
    proves it at the start of every run.
    """
    settings = RetrievalSettings()
    for name, split in REPORTED:
        queries, _ = collections[name].split(split)
        for text in list(queries.values())[:INERT_CHECK_QUERIES]:
            with_snippets = await indexes[name].hits(text, settings, HYBRID, CHUNK_LIMIT)
            bare = await indexes[name].hits(text, settings, HYBRID, CHUNK_LIMIT, snippets=False)
            if [(h.item_id, h.score) for h in with_snippets] != [(h.item_id, h.score) for h in bare]:
                raise RuntimeError(f"skipping snippets changed a {name} ranking; snippets=False is unsafe")


async def mean_ms(queries: Iterable[str], search: Callable[[str], Awaitable[object]]) -> float:
    seconds = []
    for text in queries:
        started = time.perf_counter()
        await search(text)
        seconds.append(time.perf_counter() - started)
    return round(statistics.fmean(seconds) * 1000, 2)


def write_documents(collection: Collection, folder: Path) -> dict[str, str]:
    stems = file_stems(collection.docs)
    folder.mkdir(parents=True)
    for stem, doc_id in stems.items():
        title, text = collection.docs[doc_id]
        body = f"# {title}\n\n{text}\n" if title.strip() else f"{text}\n"
        (folder / f"{stem}.md").write_text(body, encoding="utf-8")
    return stems


async def build_index(collection: Collection, root: Path, reuse: bool) -> KenningIndex:
    """Sweep and embed the collection, or pick up the index a previous run left in `root`.

    A reused folder keeps its files' mtimes, so the sweep finds them unchanged and the
    embed pass finds nothing stale: both run anyway, and cost next to nothing.
    """
    folder, db_path = root / "docs", root / "kenning.db"
    reused = reuse and db_path.exists() and folder.is_dir()
    reused = reused and sum(1 for _ in folder.glob("*.md")) == len(collection.docs)
    started = time.perf_counter()
    if reused:
        stems = file_stems(collection.docs)
    else:
        shutil.rmtree(root, ignore_errors=True)
        stems = write_documents(collection, folder)
    write_s = time.perf_counter() - started

    db = Database(db_path)
    await db.open()
    ids = await sources.sync_sources(db, [("bench", str(folder), "default")])
    settings = SourceSettings(name="bench", path=folder, max_files=10**6)
    limits = LimitsSettings()
    parsers = ParsePool(limits.parse_workers, limits.parse_memory_mb)
    options = IngestOptions(ChunkingSettings(), limits, 1 << 26, parsers)
    scanner = FolderScanner(db, ids["bench"], settings, options)
    started = time.perf_counter()
    try:
        counts = await scanner.sweep()
    finally:
        await parsers.stop()
    sweep_s = time.perf_counter() - started

    embedder_settings = EmbedderSettings()
    embedder = make_embedder(embedder_settings)
    started = time.perf_counter()
    await EmbedJob(db, embedder, embedder_settings.max_chars).run_pass()
    embed_s = time.perf_counter() - started
    index = await VectorIndex.open(db, embedder.signature)
    started = time.perf_counter()
    await ExtractJob(db, OfflineExtractor(), OFFLINE_PAGE).run_pass()
    extract_s = time.perf_counter() - started

    async with db.reader() as conn:
        [(chunks,)] = await conn.execute_fetchall("SELECT count(*) FROM items")
    build = {
        "reused": reused,
        "documents": len(collection.docs),
        "files_failed": counts.get("failed", 0),
        "chunks": chunks,
        "embedder": embedder.signature,
        "write_s": round(write_s, 2),
        "ingest_s": round(sweep_s, 2),
        "embed_s": round(embed_s, 2),
        "extract_s": round(extract_s, 2),
    }
    return KenningIndex(db, Vectors(embedder, index), stems, build)


# --- bm25s baseline --------------------------------------------------------------------


def bm25s_run(collection: Collection, queries: dict[str, str]) -> tuple[Run, bool]:
    """bm25s over title + text, stopwords dropped, Snowball-stemmed when PyStemmer is there."""
    try:
        import Stemmer

        stemmer = Stemmer.Stemmer("english").stemWords
    except ImportError:
        stemmer = None
    doc_ids = list(collection.docs)
    corpus = [f"{title} {text}" for title, text in collection.docs.values()]
    model = bm25s.BM25()
    model.index(bm25s.tokenize(corpus, stopwords="en", stemmer=stemmer, show_progress=False), show_progress=False)
    run = Run()
    for qid, text in queries.items():
        started = time.perf_counter()
        tokens = bm25s.tokenize([text], stopwords="en", stemmer=stemmer, return_ids=False, show_progress=False)
        found, scores = model.retrieve(tokens, k=DEPTH, show_progress=False)
        # bm25s pads with zero-score documents; those matched no term, so they are no hits.
        run.rankings[qid] = [doc_ids[int(doc)] for doc, score in zip(found[0], scores[0]) if score > 0]
        run.seconds.append(time.perf_counter() - started)
    return run, stemmer is not None


# --- tuning ----------------------------------------------------------------------------


def choose(rows: list[dict[str, Any]], keyword_recall: float) -> dict[str, Any] | None:
    """Best nDCG@10 among rows that keep recall@100 at least the keyword leg's."""
    eligible = [row for row in rows if row["recall@100"] >= keyword_recall]
    return max(eligible, key=lambda row: row["ndcg@10"]) if eligible else None


def nonsense_queries(count: int) -> list[str]:
    """Seeded strings of random letters: no document can be about them."""
    rng = random.Random(SEED)
    return [
        " ".join("".join(rng.choices(string.ascii_lowercase, k=rng.randint(5, 10))) for _ in range(rng.randint(1, 4)))
        for _ in range(count)
    ]


async def abstention(kenning: KenningIndex, settings: RetrievalSettings, queries: list[str]) -> float:
    """Fraction of queries answered with no hit at all, as the daemon answers a person."""
    empty = 0
    for text in queries:
        empty += not await kenning.search(text, settings, HYBRID, LATENCY_LIMIT)
    return round(empty / len(queries), 3)


async def timed(label: str, work: Callable[[], Awaitable[Run]]) -> Run:
    started = time.perf_counter()
    run = await work()
    log(f"  {label}: {time.perf_counter() - started:.1f} s")
    return run


async def _sweep(collections: dict[str, Collection], indexes: dict[str, KenningIndex]) -> dict[str, Any]:
    """Score fusion's keyword weight (vector weight 1 minus it) on dev, at the shipped floor."""
    name, split = TUNING
    tuner = indexes[name]
    queries, judged = collections[name].split(split)
    log(f"weight sweep on {name} {split} ({len(queries)} queries)")
    baseline, _ = bm25s_run(collections[name], queries)
    baseline.seconds.clear()  # the sweep table has no latency column
    keyword = (await timed("keyword only", lambda: tuner.run(queries, RetrievalSettings(), KEYWORD))).evaluate(judged)
    rows = []
    for weight in SWEEP_KEYWORD_WEIGHTS:
        settings = variant(fusion="score", keyword_weight=weight, vector_weight=round(1 - weight, 6))
        run = await timed(describe(settings), lambda: tuner.run(queries, settings, HYBRID))
        rows.append({"keyword_weight": weight, "vector_weight": settings.vector_weight, **run.evaluate(judged)})
    best = choose(rows, keyword["recall@100"])
    return {
        "collection": name, "split": split, "queries": len(queries), "bm25s": baseline.evaluate(judged),
        "keyword": keyword, "sweep": rows, "min_similarity": RetrievalSettings().min_similarity,
        # No weight keeping recall: the best nDCG@10 stands in, and the report says so.
        "best": best or max(rows, key=lambda row: row["ndcg@10"]), "recall_constraint_met": best is not None,
    }


async def _floors(
    collections: dict[str, Collection], indexes: dict[str, KenningIndex], dev_keyword: dict[str, float]
) -> dict[str, Any]:
    """Abstention on nonsense and dev quality for each vector floor at the shipped weights."""
    name, split = TUNING
    tuner = indexes[name]
    queries, judged = collections[name].split(split)
    nonsense = nonsense_queries(NONSENSE_QUERIES)
    log(f"floors: abstention on {NONSENSE_QUERIES} nonsense queries and dev quality")
    rows = []
    for floor in (NO_FLOOR, *FLOORS):
        settings = variant(min_similarity=floor)
        row: dict[str, Any] = {"min_similarity": floor}
        for collection, kenning in indexes.items():
            row[f"zero_hit_{collection}"] = await abstention(kenning, settings, nonsense)
        run = await timed(f"floor {floor:g}", lambda: tuner.run(queries, settings, HYBRID))
        row.update(run.evaluate(judged))
        rows.append(row)
    # A free floor costs at most FLOOR_TOLERANCE of nDCG@10 and keeps recall@100 at or
    # above the keyword leg's, the same bar the weights had to clear.
    free = [
        row for row in rows[1:]
        if rows[0]["ndcg@10"] - row["ndcg@10"] <= FLOOR_TOLERANCE and row["recall@100"] >= dev_keyword["recall@100"]
    ]
    # Of the free floors the one that abstains most; at equal abstention the lowest,
    # which keeps the most vector hits.
    best = max(free, key=lambda row: (row[f"zero_hit_{name}"], -row["min_similarity"]), default=None)
    return {"rows": rows, "tolerance": FLOOR_TOLERANCE, "recommended": best["min_similarity"] if best else None}


# --- the benchmark ---------------------------------------------------------------------


async def bench(data: Path, work: Path, reuse: bool) -> dict[str, Any]:
    started = time.perf_counter()
    splits = {name: {split for c, split in (*REPORTED, TUNING) if c == name} for name, _ in REPORTED}
    collections = {name: read_collection(data / name, splits[name]) for name, _ in REPORTED}
    indexes: dict[str, KenningIndex] = {}
    try:
        for name, collection in collections.items():
            log(f"{name}: building kenning's index over {len(collection.docs)} documents in {work / name}")
            indexes[name] = await build_index(collection, work / name, reuse)
            log(f"{name}: {indexes[name].build}")
        result = await _measure(collections, indexes)
    finally:
        for kenning in indexes.values():
            await kenning.vectors.index.close()
            await kenning.db.close()
    result["run_s"] = round(time.perf_counter() - started, 1)
    return result


async def _measure(collections: dict[str, Collection], indexes: dict[str, KenningIndex]) -> dict[str, Any]:
    await check_snippets_inert(indexes, collections)
    modes = kenning_modes()
    result: dict[str, Any] = {
        "default_settings": RetrievalSettings().model_dump(),
        "labels": {"bm25s": "bm25s (baseline)", **{mode.key: mode.label for mode in modes}},
        "collections": {},
    }
    result["tuning"] = await _sweep(collections, indexes)
    result["floors"] = await _floors(collections, indexes, result["tuning"]["keyword"])

    for name, split in REPORTED:
        kenning, collection = indexes[name], collections[name]
        queries, judged = collection.split(split)
        timed_queries = list(queries.values())[:LATENCY_QUERIES]
        log(f"{name} {split}: {len(queries)} queries")
        baseline, stemmed = bm25s_run(collection, queries)
        rows = {"bm25s": baseline.evaluate(judged)}
        for mode in modes:
            run = await timed(mode.key, lambda: kenning.run(queries, mode.settings, mode.legs))
            rows[mode.key] = run.evaluate(judged)
            rows[mode.key]["mean_ms"] = await kenning.latency_ms(timed_queries, mode.settings, mode.legs)
        result["collections"][name] = {
            "split": split,
            "queries": len(queries),
            "build": kenning.build,
            "bm25s_stemmed": stemmed,
            "modes": rows,
            "target": {mode.key: target(rows, mode.key) for mode in modes if mode.legs == HYBRID},
        }
    return result


def target(modes: dict[str, dict[str, float]], hybrid_mode: str) -> dict[str, bool]:
    """The target: the hybrid beats bm25s and its keyword leg on nDCG@10 and keeps its recall@100."""
    hybrid, keyword, baseline = modes[hybrid_mode], modes["kenning keyword"], modes["bm25s"]
    checks = {
        "beats_bm25s": hybrid["ndcg@10"] > baseline["ndcg@10"],
        "beats_keyword": hybrid["ndcg@10"] > keyword["ndcg@10"],
        "recall_kept": hybrid["recall@100"] >= keyword["recall@100"],
    }
    return {**checks, "pass": all(checks.values())}


# --- report ----------------------------------------------------------------------------


def _row(label: str, metrics: dict[str, Any], width: int, extra: str = "") -> str:
    cells = "".join(f"{metrics[m]:>9.3f}" for m in METRICS)
    ms = f"{metrics['mean_ms']:>10.1f}" if "mean_ms" in metrics else ""
    return f"{label:<{width}}{cells}{ms}{extra}"


def _header(first: str, width: int, extra: str = "", timed: bool = False) -> str:
    return f"{first:<{width}}" + "".join(f"{h:>9}" for h in HEADERS) + (f"{'ms/query':>10}" if timed else "") + extra


def _verdict_on_defaults(shipped: RetrievalSettings, tuning: dict[str, Any], floor: float | None) -> list[str]:
    """Whether the shipped weights and floor are what the dev sweep would pick."""
    best = tuning["best"]
    rows = {row["keyword_weight"]: row for row in tuning["sweep"]}
    here = rows.get(shipped.keyword_weight)
    figures = f" (dev nDCG@10 {here['ndcg@10']:.3f}, R@100 {here['recall@100']:.3f})" if here else " (not swept)"
    weights = f"shipped weights kw {shipped.keyword_weight:g}, vec {shipped.vector_weight:g}{figures}: "
    if best["keyword_weight"] == shipped.keyword_weight:
        weights += "the dev-sweep best"
    else:
        weights += (
            f"NOT the dev-sweep best, kw {best['keyword_weight']:g}, vec {best['vector_weight']:g}"
            f" (dev nDCG@10 {best['ndcg@10']:.3f}, R@100 {best['recall@100']:.3f})"
        )
    recommended = "no floor" if floor is None else f"{floor:g}"
    floors = f"shipped min_similarity {shipped.min_similarity:g}: " + (
        "the dev-recommended floor" if floor == shipped.min_similarity else f"dev recommends {recommended} instead"
    )
    return [weights, floors]


def report(result: dict[str, Any]) -> str:
    lines: list[str] = []
    labels = result["labels"]
    width = max(len(label) for label in labels.values()) + 2
    for name, data in result["collections"].items():
        build = data["build"]
        stem = "Snowball-stemmed" if data["bm25s_stemmed"] else "UNSTEMMED (PyStemmer missing)"
        lines += [
            f"== {name} {data['split']}: {data['queries']} queries, {build['documents']} documents ->"
            f" {build['chunks']} chunks{' (index reused)' if build['reused'] else ''}",
            f"   write {build['write_s']:.1f} s, ingest {build['ingest_s']:.1f} s, embed {build['embed_s']:.1f} s"
            f" ({build['embedder']}); bm25s {stem}; ms/query over {LATENCY_QUERIES} queries at limit {LATENCY_LIMIT}",
            _header("mode", width, timed=True),
        ]
        lines += [_row(labels[mode], metrics, width) for mode, metrics in data["modes"].items()]
        lines.append("")

    shipped = RetrievalSettings(**result["default_settings"])
    tuning = result["tuning"]
    kept = tuning["keyword"]["recall@100"]
    lines += [
        f"== score fusion weight sweep on {tuning['collection']} {tuning['split']} ({tuning['queries']} queries;"
        f" vector weight = 1 - keyword weight, floor {tuning['min_similarity']:g})",
        _header("config", 26, "  R@100>=kw"),
        _row("bm25s (baseline)", tuning["bm25s"], 26),
        _row("keyword only", tuning["keyword"], 26),
    ]
    for row in tuning["sweep"]:
        label = f"kw {row['keyword_weight']:g}, vec {row['vector_weight']:g}"
        if (row["keyword_weight"], row["vector_weight"]) == (shipped.keyword_weight, shipped.vector_weight):
            label += " (shipped)"
        lines.append(_row(label, row, 26, f"{'yes' if row['recall@100'] >= kept else 'no':>11}"))
    best = tuning["best"]
    lines.append(
        f"dev best: kw {best['keyword_weight']:g}, vec {best['vector_weight']:g}"
        + ("" if tuning["recall_constraint_met"] else "  (NO weight kept keyword recall@100; best nDCG@10 shown)")
    )

    floors = result["floors"]
    names = list(result["collections"])
    lines += [
        "",
        f"== min_similarity floor at the shipped weights (kw {shipped.keyword_weight:g},"
        f" vec {shipped.vector_weight:g}): zero-hit fraction of {NONSENSE_QUERIES} nonsense queries,"
        f" and {tuning['collection']} {tuning['split']} quality",
        f"{'floor':<14}" + "".join(f"{'zero-hit ' + n:>24}" for n in names) + f"{'nDCG@10':>9}{'delta':>8}{'R@100':>8}",
    ]
    base = floors["rows"][0]["ndcg@10"]
    for row in floors["rows"]:
        floor = "none (-1)" if row["min_similarity"] == NO_FLOOR else f"{row['min_similarity']:g}"
        floor += " (shipped)" if row["min_similarity"] == shipped.min_similarity else ""
        zero = "".join(f"{row[f'zero_hit_{n}']:>24.2f}" for n in names)
        lines.append(f"{floor:<14}{zero}{row['ndcg@10']:>9.3f}{row['ndcg@10'] - base:>+8.3f}{row['recall@100']:>8.3f}")
    recommended = floors["recommended"]
    bar = f"within {FLOOR_TOLERANCE} nDCG@10 of no floor and R@100 >= keyword only's"
    lines.append(
        f"dev-recommended min_similarity: {recommended:g} (the most abstention {bar})"
        if recommended is not None
        else f"dev-recommended min_similarity: none; no floor stays {bar}"
    )

    lines += ["", *_verdict_on_defaults(shipped, tuning, recommended)]

    lines.append("")
    for name, data in result["collections"].items():
        modes = data["modes"]
        keyword, baseline = modes["kenning keyword"], modes["bm25s"]
        for mode, checks in data["target"].items():
            hybrid = modes[mode]
            verdict = "PASS" if checks["pass"] else "FAIL"
            # Only the default is the target; the other lines say what another setting would do.
            prefix = f"[{verdict}]" if mode == "kenning hybrid default" else f"  ({verdict} if it were the default)"
            lines.append(
                f"{prefix} {name}: {labels[mode]} nDCG@10 {hybrid['ndcg@10']:.3f} vs bm25s"
                f" {baseline['ndcg@10']:.3f}, keyword {keyword['ndcg@10']:.3f}; R@100 {hybrid['recall@100']:.3f}"
                f" vs keyword {keyword['recall@100']:.3f}"
            )
    lines += ["", f"run took {result['run_s']:.0f} s"]
    return "\n".join(lines)


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="folder holding the BEIR collections")
    parser.add_argument("--work", type=Path, help="folder for the built indexes (kept); default a temp dir")
    parser.add_argument("--reuse", action="store_true", help="reuse indexes a previous run left in --work")
    parser.add_argument("--keep", action="store_true", help="keep the temp work dir")
    parser.add_argument("--json", action="store_true", help="print the results as one JSON object")
    args = parser.parse_args()
    if args.reuse and args.work is None:
        parser.error("--reuse needs --work DIR: a fresh temp dir holds nothing to reuse")
    return args


def main() -> None:
    args = parse_args()
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr, format="[%(name)s] %(message)s")
    work = args.work or Path(tempfile.mkdtemp(prefix="kenning-retrieval-"))
    try:
        result = asyncio.run(bench(args.data.resolve(), work.resolve(), args.reuse))
    finally:
        if args.work is None and not args.keep:
            shutil.rmtree(work, ignore_errors=True)
        else:
            log(f"indexes kept in {work}")
    print(json.dumps(result, indent=2) if args.json else report(result))


if __name__ == "__main__":
    main()
