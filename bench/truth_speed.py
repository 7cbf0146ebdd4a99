"""What the truth stages cost a search: keyword leg alone, hybrid, and hybrid without them.

A library of generated chunks is built straight into SQLite through kenning's schema
(vector_speed.py's builder), every document gets a date, a few hundred chunks hold
Chinese and Japanese text, and the vector index is filled with random unit vectors.
Queries go through the real Retriever, four kinds of them: keywords, questions (some
naming a year), quoted phrases, and CJK questions. Three modes each:

- keyword: `legs=("keyword",)`, the truth stages included;
- hybrid: all three legs and the truth stages, as the daemon answers;
- hybrid, no truth stages (the baseline, measured in the same run): the same legs with
  retrieval/verdict.py replaced by "sort and cut" and the term counts not started, which
  is what a search cost before the stages existed.

The lead's budget: a hybrid search stays within 1.5x of the keyword leg alone.

    .venv/bin/python bench/truth_speed.py [--chunks 100000] [--queries 200] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sqlite3
import statistics
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

from vector_speed import SEED, add_random_vectors, build_library, vocabulary

from kenning.config import EmbedderSettings, RetrievalSettings
from kenning.retrieval import search as search_module
from kenning.retrieval.search import Retriever, Vectors
from kenning.store.database import Database
from kenning.store.vector_index import VectorIndex
from kenning.text import cjk
from kenning.workers.embedders import make_embedder

CJK_CHUNKS = 300
CJK_TEXT = (
    "供应商确认平板的最小订单量是五百台交货期为六周"  # Chinese
    "東京オフィスは平日の夜十時までに退館してください"  # Japanese
)
KINDS = ("keywords", "question", "phrase", "cjk")
WARM_UP = 10


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def add_dates_and_cjk(path: Path) -> None:
    """Every document a date in 2024-2026; some chunks CJK text, in both indexes as ingest writes them."""
    rng = random.Random(SEED + 2)
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("BEGIN")
    ids = [row[0] for row in conn.execute("SELECT id FROM documents")]
    conn.executemany(
        "UPDATE documents SET date = ?, date_source = 'front matter' WHERE id = ?",
        ((f"{rng.randint(2024, 2026)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}", i) for i in ids),
    )
    items = [row[0] for row in conn.execute("SELECT id FROM items ORDER BY random() LIMIT ?", (CJK_CHUNKS,))]
    for item_id in items:
        start = rng.randrange(len(CJK_TEXT) - 12)
        text = CJK_TEXT[start : start + 12]
        conn.execute("UPDATE items SET content = content || ' ' || ? WHERE id = ?", (text, item_id))
        conn.execute("INSERT INTO items_cjk (rowid, text) VALUES (?, ?)", (item_id, cjk.index_text(text)))
    conn.execute("COMMIT")
    conn.close()


def make_queries(words: list[str], count: int) -> dict[str, list[str]]:
    rng = random.Random(SEED + 1)
    head = words[:3000]
    out: dict[str, list[str]] = {kind: [] for kind in KINDS}
    for _ in range(count):
        a, b, c, d = rng.sample(head, 4)
        out["keywords"].append(" ".join(rng.sample(head, rng.randint(2, 6))))
        year = f" in {rng.randint(2024, 2026)}" if rng.random() < 0.3 else ""
        out["question"].append(f"What is the {a} of the {b} {c}{year}?")
        out["phrase"].append(f'Where is the "{a} {b}" {c}?')
        start = rng.randrange(len(CJK_TEXT) - 8)
        out["cjk"].append(CJK_TEXT[start : start + 8] + "是多少？")
    return out


@contextmanager
def without_truth_stages():
    """Search as it was before the truth stages: no term counts, and sort-and-cut after
    fusion. Snippets are made as a search makes them (from the scratch index of the
    returned hits), so both modes pay for them alike."""
    settle, asked = search_module.settle, search_module.Asked

    async def sort_and_cut(db, text, hits, limit, settings, asked, wanted, meaning, scope, follow=None):
        return hits[:limit], None, []

    class NoCounts(asked):
        def __init__(self, db, query, text) -> None:
            self.db, self.query, self.items, self.wanted, self.probes = db, query, [], None, []
            self.counts = asyncio.get_running_loop().create_future()
            self.counts.set_result(None)
            self._scratch = None

    search_module.settle, search_module.Asked = sort_and_cut, NoCounts
    try:
        yield
    finally:
        search_module.settle, search_module.Asked = settle, asked


def percentiles(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {"p50_ms": round(statistics.median(ordered), 2), "p95_ms": round(ordered[int(0.95 * (len(ordered) - 1))], 2)}


MODES = ("keyword_without_truth", "keyword", "hybrid_without_truth", "hybrid")


async def timed(retriever: Retriever, texts: list[str], vectors: Vectors) -> dict[str, dict[str, float]]:
    """Each query in every mode in turn, so that a machine busy with other work slows all
    modes alike rather than whichever ran during the busy spell."""
    samples: dict[str, list[float]] = {mode: [] for mode in MODES}
    for number, text in enumerate(texts):
        for mode in MODES:
            params = {"legs": ("keyword",)} if mode.startswith("keyword") else {"vectors": vectors}
            if mode.endswith("without_truth"):
                with without_truth_stages():
                    started = time.perf_counter()
                    await retriever.search(text, 10, **params)
            else:
                started = time.perf_counter()
                await retriever.search(text, 10, **params)
            if number >= WARM_UP:
                samples[mode].append((time.perf_counter() - started) * 1000)
    return {mode: percentiles(values) for mode, values in samples.items()}


async def measure(workdir: Path, chunks: int, count: int) -> dict:
    words, weights = vocabulary()
    path = workdir / "library.db"
    log(f"building a library of {chunks:,} chunks")
    build_library(path, chunks, words, weights)
    add_dates_and_cjk(path)
    embedder = make_embedder(EmbedderSettings())
    add_random_vectors(path, embedder.signature)
    db = Database(path)
    await db.open()
    index = await VectorIndex.open(db, embedder.signature)
    result: dict = {"chunks": chunks, "queries_per_kind": count, "kinds": {}}
    try:
        retriever = Retriever(db, RetrievalSettings())
        vectors = Vectors(embedder, index)
        for kind, texts in make_queries(words, count + WARM_UP).items():
            log(f"timing {kind} queries")
            row: dict = await timed(retriever, texts, vectors)
            row["hybrid_over_keyword_p50"] = round(row["hybrid"]["p50_ms"] / row["keyword"]["p50_ms"], 2)
            row["hybrid_over_keyword_p50_without_truth"] = round(
                row["hybrid_without_truth"]["p50_ms"] / row["keyword_without_truth"]["p50_ms"], 2
            )
            row["truth_stages_p50_ms"] = round(row["hybrid"]["p50_ms"] - row["hybrid_without_truth"]["p50_ms"], 2)
            result["kinds"][kind] = row
    finally:
        await index.close()
        await db.close()
    return result


def report(result: dict) -> str:
    lines = [f"== truth stages' cost: {result['chunks']:,} chunks, {result['queries_per_kind']} queries per kind =="]
    header = f"{'kind':<10}{'mode':<26}{'p50 ms':>9}{'p95 ms':>9}"
    lines.append(header)
    for kind, row in result["kinds"].items():
        for mode in MODES:
            label = mode.replace("_without_truth", ", no truth stages")
            lines.append(f"{kind:<10}{label:<26}{row[mode]['p50_ms']:>9.2f}{row[mode]['p95_ms']:>9.2f}")
        budget = "PASS" if row["hybrid_over_keyword_p50"] <= 1.5 else "FAIL"
        lines.append(
            f"{'':<10}hybrid / keyword p50 {row['hybrid_over_keyword_p50']:.2f} [{budget} <= 1.5]"
            f" ({row['hybrid_over_keyword_p50_without_truth']:.2f} without the stages);"
            f" truth stages add {row['truth_stages_p50_ms']:.2f} ms at p50"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chunks", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="kenning-truth-speed-") as work:
        result = asyncio.run(measure(Path(work), args.chunks, args.queries))
    print(json.dumps(result, indent=2) if args.json else report(result))


if __name__ == "__main__":
    main()
