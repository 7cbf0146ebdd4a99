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

    .venv/bin/python bench/dedup_sweep.py [--sizes 5000 10000 20000 40000] [--changed 100]
                                          [--baseline-max 20000] [--repeat 3] [--json]

Progress goes to stderr; the summary (or the JSON object) is the only thing on stdout.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import random
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from kenning.ingest.near_dups import (
    DocSignal,
    NearDuplicate,
    SweepStats,
    find_near_duplicates,
    name_ratio,
    normalise_name,
)

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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[5_000, 10_000, 20_000, 40_000])
    parser.add_argument("--changed", type=int, default=100, help="k changed documents for the targeted mode")
    parser.add_argument("--baseline-max", type=int, default=20_000, help="largest size the naive baseline runs at")
    parser.add_argument("--repeat", type=int, default=3, help="timings are the best of this many runs")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    results = [measure(size, args.changed, args.baseline_max, args.repeat) for size in args.sizes]
    if args.json:
        print(json.dumps(results, indent=2))
        return
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
