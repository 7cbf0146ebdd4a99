"""Vector leg and hybrid search latency at 100,000 and 1,000,000 chunks, and the speed
of embedding with the default in-process embedder.

The library is built straight into SQLite (chunks of generated text through the real
schema, FTS triggers included), and the vector index is filled with random unit
vectors: latency depends on the matrix shape, not on what the vectors mean. Queries go
through kenning's real Retriever, query embedding included. The baseline measured in
the same run is a bare numpy matrix-vector product over the same matrix, the floor any
exact vector search pays.

    .venv/bin/python bench/vector_speed.py [--sizes 100000 1000000] [--queries 200] [--reembed 100000]
        [--vectors-from DB] [--json]
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
from pathlib import Path

import numpy as np

from kenning.config import EmbedderSettings, RetrievalSettings
from kenning.retrieval.search import Retriever, Vectors
from kenning.store.database import Database, prepare
from kenning.store import vector_index
from kenning.store.vector_index import VectorIndex
from kenning.workers.embed import EmbedJob
from kenning.workers.embedders import make_embedder

SEED = 7
DIM = 256
CHUNK_WORDS = 60
CHUNKS_PER_DOCUMENT = 50
TARGET_HYBRID_P95_MS = 100.0
TARGET_REEMBED_S = 300.0


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def vocabulary(size: int = 30_000) -> tuple[list[str], list[float]]:
    rng = random.Random(SEED)
    letters = "abcdefghijklmnopqrstuvwxyz"
    words = list(dict.fromkeys("".join(rng.choice(letters) for _ in range(rng.randint(3, 9))) for _ in range(size)))
    weights = [1.0 / (rank + 1) for rank in range(len(words))]
    return words, weights


def build_library(path: Path, chunks: int, words: list[str], weights: list[float]) -> None:
    """Chunks written through the real schema and triggers, in large transactions."""
    prepare(path)
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA synchronous = OFF")
    conn.execute("INSERT INTO sources (name, root, created_at) VALUES ('bench', '/bench', 0)")
    rng = random.Random(SEED)
    pool = rng.choices(words, weights, k=CHUNK_WORDS * 5000)
    started = time.perf_counter()
    for start in range(0, chunks, 20_000):
        conn.execute("BEGIN")
        for document in range(start // CHUNKS_PER_DOCUMENT, min(start + 20_000, chunks) // CHUNKS_PER_DOCUMENT):
            cursor = conn.execute(
                "INSERT INTO documents (source_id, path, status, updated_at) VALUES (1, ?, 'done', 0)",
                (f"doc{document}.md",),
            )
            rows = []
            for ord_ in range(CHUNKS_PER_DOCUMENT):
                offset = rng.randrange(len(pool) - CHUNK_WORDS)
                rows.append((cursor.lastrowid, ord_, f"Document {document}", "", " ".join(pool[offset : offset + CHUNK_WORDS]), ord_ + 1, ord_ + 1))
            conn.executemany(
                "INSERT INTO items (document_id, ord, title, section, content, line_start, line_end) VALUES (?, ?, ?, ?, ?, ?, ?)",
                rows,
            )
        conn.execute("COMMIT")
        log(f"  built {min(start + 20_000, chunks):,} chunks ({time.perf_counter() - started:.0f} s)")
    conn.execute("INSERT INTO items_fts (items_fts) VALUES ('optimize')")
    conn.close()


def add_random_vectors(path: Path, signature: str) -> tuple[np.ndarray, np.ndarray]:
    """A random unit vector for every chunk of the library at `path`, stored under
    `signature`: the vector leg's cost depends on the matrix's size, not its meaning."""
    conn = sqlite3.connect(path, isolation_level=None)
    ids = np.array([row[0] for row in conn.execute("SELECT id FROM items ORDER BY id")], dtype=np.int64)
    matrix = np.random.default_rng(SEED).standard_normal((len(ids), DIM), dtype=np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    conn.execute("BEGIN")
    conn.executemany(
        "INSERT INTO vectors (item_id, signature, dim, vector) VALUES (?, ?, ?, ?)",
        ((int(item_id), signature, DIM, row.tobytes()) for item_id, row in zip(ids, matrix)),
    )
    conn.execute("COMMIT")
    conn.close()
    return ids, matrix


def percentiles(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {
        "p50_ms": round(statistics.median(ordered), 2),
        "p95_ms": round(ordered[int(0.95 * (len(ordered) - 1))], 2),
    }


def queries(words: list[str], count: int) -> list[str]:
    rng = random.Random(SEED + 1)
    head = words[:3000]
    return [" ".join(rng.sample(head, rng.randint(2, 6))) for _ in range(count)]


def storage_alternatives(matrix: np.ndarray, query_vectors: np.ndarray) -> dict:
    """What each way of holding the vectors costs per query, and what it keeps.

    float32 is the exact product. float16 is converted back to float32 a block at a time
    for the product; int8 with one scale per row is how the index holds them, scanned as
    the index does (`vector_index._scan`). recall@30 is against float32's exact top 30.
    """
    block = 16384
    halves = matrix.astype(np.float16)
    rows, scales = vector_index._quantize(matrix)
    scans = {
        "float32": lambda vector: matrix @ vector,
        "float16": lambda vector: np.concatenate(
            [halves[start : start + block].astype(np.float32) @ vector for start in range(0, len(matrix), block)]
        ),
        "int8": lambda vector: vector_index._scan(rows, scales, vector),
    }
    found: dict[str, dict[str, float]] = {}
    for name, scan in scans.items():
        samples, overlap = [], []
        for vector in query_vectors[:50]:
            started = time.perf_counter()
            top = set(np.argpartition(-scan(vector), 30)[:30].tolist())
            samples.append((time.perf_counter() - started) * 1000)
            overlap.append(len(top & set(np.argpartition(-(matrix @ vector), 30)[:30].tolist())) / 30)
        found[name] = {
            "mb": round({"float32": 4, "float16": 2, "int8": 1}[name] * matrix.size / 1e6, 1),
            "p50_ms": round(statistics.median(samples), 2),
            "recall_at_30": round(statistics.fmean(overlap), 4),
        }
    return found


async def measure_size(workdir: Path, chunks: int, query_texts: list[str], words, weights) -> dict:
    path = workdir / f"library-{chunks}.db"
    log(f"building a library of {chunks:,} chunks")
    build_library(path, chunks, words, weights)
    embedder = make_embedder(EmbedderSettings())
    ids, matrix = add_random_vectors(path, embedder.signature)
    db = Database(path)
    await db.open()
    index = await VectorIndex.open(db, embedder.signature)
    try:
        retriever = Retriever(db, RetrievalSettings())
        vectors = Vectors(embedder, index)
        query_vectors = embedder.embed(query_texts)

        bare, leg, vector_search, hybrid, overlap = [], [], [], [], []
        for query, vector in zip(query_texts, query_vectors):
            started = time.perf_counter()
            scores = matrix @ vector
            exact = ids[np.argpartition(-scores, 30)[:30]]
            bare.append((time.perf_counter() - started) * 1000)
            started = time.perf_counter()
            found = await index.nearest(vector, 30, {1})
            leg.append((time.perf_counter() - started) * 1000)
            overlap.append(len(set(exact.tolist()) & {item_id for item_id, _ in found}) / 30)
            started = time.perf_counter()
            await retriever.search(query, 10, legs=("vector",), vectors=vectors)
            vector_search.append((time.perf_counter() - started) * 1000)
            started = time.perf_counter()
            await retriever.search(query, 10, vectors=vectors)
            hybrid.append((time.perf_counter() - started) * 1000)
    finally:
        await index.close()
        await db.close()
    path.unlink()
    return {
        "chunks": chunks,
        "bare_numpy": percentiles(bare),
        "vector_index": percentiles(leg),
        "vector_index_recall_at_30": round(statistics.fmean(overlap), 4),
        "storage": storage_alternatives(matrix, query_vectors),
        "vector_search": percentiles(vector_search),
        "hybrid_search": percentiles(hybrid),
    }


def real_recall(db_path: Path, query_texts: list[str]) -> dict:
    """Recall of the exact top 10 and 30 over a real library's stored vectors (say the one
    `bench/ingest.py --keep DIR` leaves), for the int8 scan alone and with the vector leg's
    exact rescoring of RESCORED times as many candidates."""
    conn = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True)
    # dim 0: an item the embedder failed on, kept as a row with no vector (store/vectors.py).
    blobs = [row[0] for row in conn.execute("SELECT vector FROM vectors WHERE dim > 0")]
    conn.close()
    matrix = np.frombuffer(b"".join(blobs), np.float32).reshape(len(blobs), -1)
    del blobs
    rows, scales = vector_index._quantize(matrix)
    found: dict[str, float] = {"vectors": len(matrix), "queries": len(query_texts)}
    for vector in make_embedder(EmbedderSettings()).embed(query_texts):
        exact, approximate = matrix @ vector, vector_index._scan(rows, scales, vector)
        for k in (10, 30):
            truth = set(np.argpartition(-exact, k)[:k].tolist())
            scanned = np.argpartition(-approximate, k * vector_index.RESCORED)[: k * vector_index.RESCORED]
            rescored = scanned[np.argsort(-exact[scanned])][:k]
            found[f"int8_recall_at_{k}"] = found.get(f"int8_recall_at_{k}", 0.0) + len(truth & set(scanned[np.argsort(-approximate[scanned])][:k].tolist())) / k
            found[f"rescored_recall_at_{k}"] = found.get(f"rescored_recall_at_{k}", 0.0) + len(truth & set(rescored.tolist())) / k
    return {key: round(value / len(query_texts), 4) if "recall" in key else value for key, value in found.items()}


async def measure_reembed(workdir: Path, chunks: int, words, weights) -> dict:
    """The real embed job over a library with no vectors: stale pages, embed, write."""
    path = workdir / "reembed.db"
    log(f"building a library of {chunks:,} chunks to embed")
    build_library(path, chunks, words, weights)
    db = Database(path)
    await db.open()
    try:
        settings = EmbedderSettings()
        embedder = make_embedder(settings)
        async with db.reader() as conn:
            texts = [row[0] for row in await conn.execute_fetchall("SELECT content FROM items LIMIT 20000", ())]
        started = time.perf_counter()
        embedder.embed(texts)
        raw_rate = len(texts) / (time.perf_counter() - started)
        index = await VectorIndex.open(db, embedder.signature)
        log("re-embedding through the embed job")
        started = time.perf_counter()
        await EmbedJob(db, embedder, settings.max_chars).run_pass()
        await index.settled()
        elapsed = time.perf_counter() - started
        await index.close()
    finally:
        await db.close()
    path.unlink()
    return {
        "chunks": chunks,
        "wordllama_chunks_per_s": round(raw_rate),
        "reembed_seconds": round(elapsed, 1),
        "reembed_chunks_per_s": round(chunks / elapsed),
        "vectors_written": len(index),
    }


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--reembed", type=int, default=100_000, help="chunks for the re-embed timing (0 skips it)")
    parser.add_argument("--vectors-from", type=Path, help="a kenning.db whose stored vectors to measure recall on")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    words, weights = vocabulary()
    query_texts = queries(words, args.queries)
    results: dict = {"sizes": []}
    with tempfile.TemporaryDirectory(prefix="kenning-vector-bench-") as tmp:
        workdir = Path(tmp)
        for size in args.sizes:
            results["sizes"].append(await measure_size(workdir, size, query_texts, words, weights))
        if args.reembed:
            results["reembed"] = await measure_reembed(workdir, args.reembed, words, weights)
    if args.vectors_from:
        results["real_recall"] = real_recall(args.vectors_from, query_texts)
    if args.json:
        print(json.dumps(results, indent=2))
        return
    print("== kenning vector speed bench ==")
    for size in results["sizes"]:
        hybrid = size["hybrid_search"]
        verdict = ""
        if size["chunks"] == 100_000:
            verdict = "  [PASS]" if hybrid["p95_ms"] < TARGET_HYBRID_P95_MS else "  [FAIL]"
            verdict += f" target p95 < {TARGET_HYBRID_P95_MS:.0f} ms at 100,000 chunks"
        print(f"{size['chunks']:>9,} chunks")
        print(f"  bare numpy matvec     p50 {size['bare_numpy']['p50_ms']:7.2f} ms  p95 {size['bare_numpy']['p95_ms']:7.2f} ms (baseline)")
        print(
            f"  vector index search   p50 {size['vector_index']['p50_ms']:7.2f} ms  p95 {size['vector_index']['p95_ms']:7.2f} ms"
            f"  (nearest, rescored: recall@30 of the exact top 30: {size['vector_index_recall_at_30']:.4f})"
        )
        for name, figures in size["storage"].items():
            print(
                f"  storage {name:8s}      {figures['mb']:6.1f} MB  scan p50 {figures['p50_ms']:7.2f} ms"
                f"  recall@30 {figures['recall_at_30']:.4f}"
            )
        print(f"  vector leg (Retriever) p50 {size['vector_search']['p50_ms']:6.2f} ms  p95 {size['vector_search']['p95_ms']:7.2f} ms")
        print(f"  hybrid search         p50 {hybrid['p50_ms']:7.2f} ms  p95 {hybrid['p95_ms']:7.2f} ms{verdict}")
    if "real_recall" in results:
        real = results["real_recall"]
        print(f"stored vectors of {args.vectors_from}: {real['vectors']:,}, {real['queries']} queries")
        for k in (10, 30):
            print(f"  recall@{k}: int8 scan {real[f'int8_recall_at_{k}']:.4f}, rescored {real[f'rescored_recall_at_{k}']:.4f}")
    if "reembed" in results:
        reembed = results["reembed"]
        verdict = "[PASS]" if reembed["reembed_seconds"] < TARGET_REEMBED_S else "[FAIL]"
        print(f"wordllama embedding   {reembed['wordllama_chunks_per_s']:,} chunks/s (raw embed calls)")
        print(
            f"re-embed {reembed['chunks']:,} chunks  {reembed['reembed_seconds']} s"
            f" ({reembed['reembed_chunks_per_s']:,} chunks/s)  {verdict} target < {TARGET_REEMBED_S:.0f} s"
        )


if __name__ == "__main__":
    asyncio.run(main())
