"""End-to-end benchmark: initial ingest, search latency and memory of a real daemon.

Every figure comes with a baseline measured in the same run on the same corpus (raw
file reads, a bare SQLite FTS5 ingest, bare FTS5 queries on the daemon's own database),
so the ratios mean the same thing on a laptop and on a 2-core CI box even though the
absolute numbers do not.

    .venv/bin/python bench/ingest.py [--mb 200] [--files 4000] [--queries 1000] [--keep DIR] [--json]

Progress goes to stderr; the summary (or the JSON object) is the only thing on stdout.
MB means 10**6 bytes throughout, for corpus sizes and RSS alike.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import random
import re
import shutil
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil

from kenning.client import Client
from kenning.errors import DaemonNotRunning
from kenning.retrieval.query import fts_expression

SEED = 20240611
MB = 1_000_000
POLL_S = 0.2
# A slow ingest is a result to report, not a reason to abort; only a hung one is.
INGEST_DEADLINE_S = 3600.0
STOP_DEADLINE_S = 15.0
IDLE_SETTLE_S = 5.0
WARMUP_QUERIES = 20
REMOVALS = 10
BASELINE_PIECE_CHARS = 1200

TARGET_INGEST_MBPS = 5.0
TARGET_P95_MS = 50.0
TARGET_P95_AT_CHUNKS = 100_000
TARGET_IDLE_RSS_MB = 300.0

KEN = Path(sys.executable).with_name("ken")

# The head of the Zipf ranking: real notes are mostly function words, and they are what
# makes FTS posting lists long, so leaving them out would flatter the index.
ENGLISH = """
the of and to a in is it you that he was for on are with as i his they be at one have this
from or had by not word but what some we can out other were all there when up use your how
said an each she which do their time if will way about many then them write would like so
these her long make thing see him two has look more day could go come did number sound no
most people my over know water than call first who may down side been now find any new work
part take get place made live where after back little only round man year came show every
good me give our under name very through just form sentence great think say help low line
differ turn cause much mean before move right boy old too same tell does set three want air
well also play small end put home read hand port large spell add even land here must big high
such follow act why ask men change went light kind off need house picture try us again animal
point mother world near build self earth father config server file error install query index
""".split()
SYLLABLES = [c + v for c in "bcdfghjklmnprstvwz" for v in ("a", "e", "i", "o", "u", "ai", "ou", "ei")]
QUESTION_TEMPLATES = (
    "how do I {0} the {1}?",
    "what is the {0} {1} for?",
    "why does {0} fail when the {1} is {2}?",
    "where can I find the {0} of {1}?",
    "how to set up {0} with {1} and {2}",
    "what happens if the {0} has no {1}?",
)


@dataclass
class Corpus:
    root: Path
    files: list[Path]
    total_bytes: int
    vocabulary: list[str]


@dataclass
class Latencies:
    """Per-query wall times in seconds, plus how many queries found anything at all."""

    seconds: list[float] = field(default_factory=list)
    with_hits: int = 0

    def percentile_ms(self, p: int) -> float:
        cuts = statistics.quantiles(self.seconds, n=100, method="inclusive")
        return cuts[p - 1] * 1000

    def max_ms(self) -> float:
        return max(self.seconds) * 1000


def log(message: str) -> None:
    print(f"[bench] {message}", file=sys.stderr, flush=True)


# --- corpus ---------------------------------------------------------------------------


def build_vocabulary(rng: random.Random, size: int = 20_000) -> list[str]:
    """English function words first, then pseudo-words: list order is Zipf rank."""
    words = dict.fromkeys(ENGLISH)
    while len(words) < len(ENGLISH) + size:
        words.setdefault("".join(rng.choices(SYLLABLES, k=rng.choice((2, 2, 3, 3, 4)))))
    return list(words)


def word_stream(rng: random.Random, vocabulary: list[str], length: int) -> list[str]:
    """One long Zipf-distributed run of words with sentence punctuation baked in.

    Paragraphs are random slices of this stream, so the per-word random draws happen
    once here (in C, via `choices`) and generating 200 MB costs only joins.
    """
    weights = list(itertools.accumulate(1 / rank**1.05 for rank in range(1, len(vocabulary) + 1)))
    stream = rng.choices(vocabulary, cum_weights=weights, k=length)
    position = rng.randint(6, 20)
    while position < length - 1:
        stream[position] += rng.choice(".........,;?")
        if stream[position].endswith((".", "?")):
            stream[position + 1] = stream[position + 1].capitalize()
        position += rng.randint(6, 22)
    return stream


class _Writer:
    """Markdown blocks cut from the word stream."""

    def __init__(self, rng: random.Random, stream: list[str], vocabulary: list[str]) -> None:
        self.rng = rng
        self.stream = stream
        self.identifiers = vocabulary[len(ENGLISH) : len(ENGLISH) + 3000]

    def words(self, low: int, high: int) -> str:
        count = self.rng.randint(low, high)
        start = self.rng.randrange(len(self.stream) - count)
        return " ".join(self.stream[start : start + count])

    def heading(self, level: int) -> str:
        return "#" * level + " " + self.words(2, 6).rstrip(".,;?").capitalize()

    def paragraph(self) -> str:
        text = self.words(30, 150)
        return text[0].upper() + text[1:].rstrip(",;") + ("" if text.endswith((".", "?")) else ".")

    def bullet_list(self) -> str:
        marker = self.rng.choice(("-", "*", "1."))
        return "\n".join(f"{marker} {self.words(3, 14)}" for _ in range(self.rng.randint(3, 8)))

    def code_block(self) -> str:
        pick = self.rng.choice
        lines = [f"def {pick(self.identifiers)}_{pick(self.identifiers)}({pick(self.identifiers)}):"]
        for _ in range(self.rng.randint(2, 10)):
            lines.append(
                f"    {pick(self.identifiers)} = {pick(self.identifiers)}.{pick(self.identifiers)}"
                f"({pick(self.identifiers)}, {self.rng.randint(0, 999)})"
            )
        lines.append(f"    return {pick(self.identifiers)}")
        return "```python\n" + "\n".join(lines) + "\n```"

    def document(self, target_bytes: int) -> str:
        blocks = [self.heading(1), self.paragraph()]
        size = sum(len(block) for block in blocks)
        while size < target_bytes:
            roll = self.rng.random()
            if roll < 0.08:
                block = self.heading(2)
            elif roll < 0.14:
                block = self.heading(3)
            elif roll < 0.22:
                block = self.bullet_list()
            elif roll < 0.27:
                block = self.code_block()
            else:
                block = self.paragraph()
            blocks.append(block)
            size += len(block) + 2
        return "\n\n".join(blocks) + "\n"


def generate_corpus(root: Path, megabytes: float, file_count: int) -> Corpus:
    rng = random.Random(SEED)
    vocabulary = build_vocabulary(rng)
    # ~2M words is ~13 MB of distinct text: enough that paragraph slices rarely repeat.
    writer = _Writer(rng, word_stream(rng, vocabulary, 2_000_000), vocabulary)
    sizes = [rng.uniform(0.3, 1.7) for _ in range(file_count)]
    scale = megabytes * MB / sum(sizes)
    files: list[Path] = []
    total = 0
    for index, size in enumerate(sizes):
        folder = root / f"area{index % 12:02d}" / f"topic{rng.randrange(16):02d}"
        if rng.random() < 0.35:
            folder = folder / rng.choice(("notes", "archive", "drafts"))
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{rng.choice(writer.identifiers)}-{index:05d}.md"
        data = writer.document(int(size * scale)).encode()
        path.write_bytes(data)
        files.append(path)
        total += len(data)
    return Corpus(root, files, total, vocabulary)


# --- baselines ------------------------------------------------------------------------


def read_all(corpus: Corpus) -> float:
    """Seconds to read and decode every file; the page cache is warm, as it is for the daemon."""
    started = time.perf_counter()
    for path in corpus.files:
        path.read_bytes().decode("utf-8")
    return time.perf_counter() - started


def bare_fts_ingest(corpus: Corpus, db_path: Path) -> float:
    """Seconds for the simplest correct FTS5 ingest: fixed-size pieces, a commit per file."""
    conn = sqlite3.connect(db_path, isolation_level=None)
    try:
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute(
            "CREATE VIRTUAL TABLE pieces USING fts5 (content, tokenize = 'porter unicode61 remove_diacritics 2')"
        )
        started = time.perf_counter()
        for path in corpus.files:
            text = path.read_text("utf-8")
            pieces = [(text[i : i + BASELINE_PIECE_CHARS],) for i in range(0, len(text), BASELINE_PIECE_CHARS)]
            conn.execute("BEGIN")
            conn.executemany("INSERT INTO pieces (content) VALUES (?)", pieces)
            conn.execute("COMMIT")
        return time.perf_counter() - started
    finally:
        conn.close()


def naive_fts_expression(query: str) -> str:
    """Every token quoted and OR-joined, stopwords kept: no query understanding at all."""
    tokens = dict.fromkeys(re.findall(r"\w+", query.lower()))
    return " OR ".join(f'"{token}"' for token in tokens)


def bare_fts_queries(db_path: Path, queries: list[str], expression: Callable[[str], str | None]) -> Latencies:
    conn = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True)
    sql = "SELECT rowid, bm25(items_fts) FROM items_fts WHERE items_fts MATCH ? ORDER BY bm25(items_fts) LIMIT 10"
    try:
        return time_queries(queries, lambda q: conn.execute(sql, (expression(q),)).fetchall())
    finally:
        conn.close()


# --- queries --------------------------------------------------------------------------


def build_queries(vocabulary: list[str], count: int) -> list[str]:
    """Keyword queries, plain-language questions, rare terms, and rare terms among common ones."""
    rng = random.Random(SEED + 1)
    pseudo = vocabulary[len(ENGLISH) :]
    common, rare = pseudo[:3000], pseudo[10_000:]
    queries = []
    for index in range(count):
        kind = index % 20
        if kind < 8:
            queries.append(" ".join(rng.sample(common, rng.randint(1, 6))))
        elif kind < 14:
            template = rng.choice(QUESTION_TEMPLATES)
            queries.append(template.format(*rng.sample(common, 3)))
        elif kind < 17:
            queries.append(" ".join(rng.sample(rare, rng.randint(1, 2))))
        else:
            words = rng.sample(common, rng.randint(1, 3)) + rng.sample(rare, rng.randint(1, 2))
            rng.shuffle(words)
            queries.append(" ".join(words))
    return queries


def subset_ms(latencies: Latencies, positions: list[int], p: int) -> float:
    """A percentile over some of the queries (by position), in ms."""
    seconds = [latencies.seconds[n] for n in positions]
    return statistics.quantiles(seconds, n=100, method="inclusive")[p - 1] * 1000


def time_alternating(
    queries: list[str], first: Callable[[str], Any], second: Callable[[str], Any]
) -> tuple[Latencies, Latencies]:
    """Both ways of searching, query by query, each going first every other query.

    The daemon keeps what a search read (a term's chunk count, an entity's mentions)
    until the next commit, so whichever pass ran second over the same queries would find
    its reads done for it: alternating gives each the warm and the cold turn equally.
    """
    for query in queries[:WARMUP_QUERIES]:
        first(query)
    results = (Latencies(), Latencies())
    for n, query in enumerate(queries):
        order = (0, 1) if n % 2 == 0 else (1, 0)
        for side in order:
            run = (first, second)[side]
            started = time.perf_counter()
            hits = run(query)
            results[side].seconds.append(time.perf_counter() - started)
            results[side].with_hits += bool(hits)
    return results


def time_queries(queries: list[str], run: Callable[[str], Any]) -> Latencies:
    """Warm up on the first few queries untimed, so the first timings are not cold-cache outliers."""
    for query in queries[:WARMUP_QUERIES]:
        run(query)
    result = Latencies()
    for query in queries:
        started = time.perf_counter()
        hits = run(query)
        result.seconds.append(time.perf_counter() - started)
        result.with_hits += bool(hits)
    return result


# --- the daemon -----------------------------------------------------------------------


def time_removals(client: Client, corpus: Corpus) -> tuple[Latencies, Latencies]:
    """An agent document added and removed again, REMOVALS times: what a removal costs,
    which purges the removed words from the whole keyword index and the WAL, beside the
    add of the same text (its baseline, in the same run)."""
    added, removed = Latencies(), Latencies()
    text = corpus.files[0].read_text()[:4000]
    for n in range(REMOVALS):
        uri = f"bench://removal/{n}"
        started = time.perf_counter()
        client.call("documents.add", {"title": f"Removal {n}", "text": f"{text}\n\nround {n}", "source_uri": uri})
        added.seconds.append(time.perf_counter() - started)
        started = time.perf_counter()
        client.call("documents.remove", {"uri": uri})
        removed.seconds.append(time.perf_counter() - started)
    return added, removed


def settle(process: psutil.Process, limit_s: float = 120.0) -> float:
    """Seconds until the daemon's worker processes (parsing, offline extraction) have
    exited, which they do after a minute without work; then IDLE_SETTLE_S more."""
    started = time.monotonic()
    while process.children(recursive=True) and time.monotonic() - started < limit_s:
        time.sleep(1.0)
    time.sleep(IDLE_SETTLE_S)
    return time.monotonic() - started


def rss_bytes(process: psutil.Process) -> int:
    """The daemon's resident memory, its worker processes included while they run."""
    total = process.memory_info().rss
    for child in process.children(recursive=True):
        try:
            total += child.memory_info().rss
        except psutil.NoSuchProcess:
            pass
    return total


def write_config(root: Path, corpus: Corpus) -> tuple[Path, Path]:
    data_dir = root / "data"
    config = root / "kenning.toml"
    config.write_text(
        "[daemon]\n"
        f'data_dir = "{data_dir}"\n'
        "sweep_interval = 3600\n"
        'log_level = "warning"\n'
        "[[sources]]\n"
        'name = "corpus"\n'
        f'path = "{corpus.root}"\n'
        # The default cap (5000) would quietly leave files out of a bigger corpus.
        f"max_files = {max(len(corpus.files) * 2, 1000)}\n"
    )
    return config, data_dir


def tail(path: Path, lines: int = 20) -> str:
    return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])


def wait_for_ingest(
    daemon: subprocess.Popen, process: psutil.Process, client: Client, expected_files: int, log_path: Path
) -> tuple[dict, int]:
    """Poll status and RSS until every discovered file is settled; returns last status and peak RSS."""
    started = time.monotonic()
    peak = 0
    last_report = started
    while True:
        if daemon.poll() is not None:
            raise RuntimeError(f"daemon exited with {daemon.returncode} during ingest:\n{tail(log_path)}")
        peak = max(peak, rss_bytes(process))
        try:
            status = client.call("status")
        except DaemonNotRunning:
            status = None  # socket not bound yet: the daemon is still starting up
        if status is not None:
            source = status["sources"][0]
            settled = source["done"] + source["failed"] + source["skipped"]
            # discovered stays 0 until the first sweep has walked the tree, so 0 == 0
            # would look finished before anything started.
            if not source["scanning"] and source["discovered"] >= expected_files and settled == source["discovered"]:
                return status, peak
            if time.monotonic() - last_report >= 10:
                log(f"  {settled}/{source['discovered']} files, {source['chunks']} chunks, RSS {peak / MB:.0f} MB")
                last_report = time.monotonic()
        if time.monotonic() - started > INGEST_DEADLINE_S:
            raise RuntimeError(f"ingest did not finish within {INGEST_DEADLINE_S:.0f} s")
        time.sleep(POLL_S)


def wait_for_vectors(client: Client, chunks: int, limit_s: float = 1800.0) -> float:
    """Seconds until the background embed job has a vector for every chunk.

    Searches are timed on a settled daemon: while the job runs it shares the cores.
    """
    started = time.monotonic()
    while time.monotonic() - started < limit_s:
        embedder = client.call("status")["embedder"]
        if embedder["job"].get("state") == "idle" and embedder["vectors"] == chunks:
            break
        time.sleep(POLL_S)
    return time.monotonic() - started


def wait_for_graph(client: Client, limit_s: float = 1800.0) -> float:
    """Seconds until the extraction job has mined every chunk (it also defers to ingest)."""
    started = time.monotonic()
    while time.monotonic() - started < limit_s:
        graph = client.call("status")["graph"]
        if graph["job"].get("state") == "idle" and graph["pending"] == 0:
            break
        time.sleep(POLL_S)
    return time.monotonic() - started


def wait_until_idle(process: psutil.Process, limit_s: float = 60.0) -> float:
    """Seconds until the daemon's CPU use drops below 5 % of a core (WAL checkpoint, merges)."""
    started = time.monotonic()
    quiet = 0
    while quiet < 2 and time.monotonic() - started < limit_s:
        quiet = quiet + 1 if process.cpu_percent(interval=0.5) < 5.0 else 0
    return time.monotonic() - started


def stop(daemon: subprocess.Popen) -> tuple[float | None, int | None]:
    """SIGTERM, then seconds to exit and the exit code; (None, None) if it had to be killed."""
    started = time.monotonic()
    daemon.send_signal(signal.SIGTERM)
    try:
        code = daemon.wait(timeout=STOP_DEADLINE_S)
    except subprocess.TimeoutExpired:
        daemon.kill()
        daemon.wait()
        return None, None
    return time.monotonic() - started, code


# --- run ------------------------------------------------------------------------------


def run(args: argparse.Namespace, root: Path) -> dict[str, Any]:
    log(f"generating {args.mb:g} MB over {args.files} files in {root / 'corpus'}")
    started = time.perf_counter()
    corpus = generate_corpus(root / "corpus", args.mb, args.files)
    log(f"  {corpus.total_bytes / MB:.1f} MB in {time.perf_counter() - started:.1f} s")
    corpus_mb = corpus.total_bytes / MB

    read_s = read_all(corpus)
    log(f"raw read: {corpus_mb / read_s:.0f} MB/s")
    baseline_s = bare_fts_ingest(corpus, root / "baseline.db")
    log(f"bare FTS5 ingest: {corpus_mb / baseline_s:.1f} MB/s")

    config, data_dir = write_config(root, corpus)
    log_path = root / "daemon.log"
    client = Client(data_dir / "kenning.sock")
    log("starting daemon; timing the initial ingest")
    started = time.monotonic()
    with open(log_path, "wb") as daemon_log:
        daemon = subprocess.Popen(
            [str(KEN), "daemon"],
            env={**os.environ, "KENNING_CONFIG": str(config)},
            stdout=daemon_log,
            stderr=subprocess.STDOUT,
        )
    try:
        process = psutil.Process(daemon.pid)
        status, peak_rss = wait_for_ingest(daemon, process, client, len(corpus.files), log_path)
        ingest_s = time.monotonic() - started
        source = status["sources"][0]
        chunks = source["chunks"]
        log(f"  ingest done in {ingest_s:.1f} s: {chunks} chunks")

        embed_s = wait_for_vectors(client, chunks)
        log(f"  every chunk embedded {embed_s:.1f} s after ingest")
        graph_s = embed_s + wait_for_graph(client)
        graph = client.call("status")["graph"]
        log(f"  every chunk mined for entities {graph_s:.1f} s after ingest: {graph['entities']} entities")
        log(f"  idle after {wait_until_idle(process):.1f} s; running {args.queries} queries")
        queries = build_queries(corpus.vocabulary, args.queries)
        kenning, keyword_leg = time_alternating(
            queries,
            lambda q: client.call("search", {"query": q, "limit": 10})["hits"],
            lambda q: client.call("search", {"query": q, "limit": 10, "legs": ["keyword"]})["hits"],
        )
        db_path = data_dir / "kenning.db"
        bare = bare_fts_queries(db_path, queries, naive_fts_expression)
        # The naive baseline keeps stopwords, which match nearly every row, so it can be
        # slower than kenning; the same query on kenning's own terms isolates kenning's
        # overhead (socket, JSON, joins, snippets).
        same_terms = bare_fts_queries(db_path, queries, fts_expression)

        log(f"  settled (worker processes gone) after {settle(process):.0f} s more")
        idle_rss = rss_bytes(process)
        db_bytes = client.call("status")["daemon"]["db_bytes"]
        stop_s, exit_code = stop(daemon)
    finally:
        if daemon.poll() is None:
            daemon.kill()
            daemon.wait()
    log("restarting the daemon on the same library: idle RSS of a fresh start")
    with open(log_path, "ab") as daemon_log:
        daemon = subprocess.Popen(
            [str(KEN), "daemon"],
            env={**os.environ, "KENNING_CONFIG": str(config)},
            stdout=daemon_log,
            stderr=subprocess.STDOUT,
        )
    try:
        process = psutil.Process(daemon.pid)
        wait_for_ingest(daemon, process, client, len(corpus.files), log_path)
        wait_for_vectors(client, chunks)
        wait_until_idle(process)
        for query in queries[:WARMUP_QUERIES]:
            client.call("search", {"query": query, "limit": 10})
        settle(process)
        restart_rss = rss_bytes(process)
        added, removed = time_removals(client, corpus)
        stop(daemon)
    finally:
        if daemon.poll() is None:
            daemon.kill()
            daemon.wait()
    sentences = [n for n, query in enumerate(queries) if n % 20 in range(8, 14)]
    short = [n for n, query in enumerate(queries) if 2 <= len(query.split()) <= 5 and n % 20 < 8]

    ingest_mbps = corpus_mb / ingest_s
    baseline_mbps = corpus_mb / baseline_s
    p95 = kenning.percentile_ms(95)
    return {
        "corpus_mb": round(corpus_mb, 1),
        "files": len(corpus.files),
        "files_done": source["done"],
        "files_failed": source["failed"],
        "files_skipped": source["skipped"],
        "chunks": chunks,
        "ingest_seconds": round(ingest_s, 2),
        "ingest_mb_per_s": round(ingest_mbps, 2),
        "ingest_files_per_s": round(len(corpus.files) / ingest_s, 1),
        "ingest_chunks_per_s": round(chunks / ingest_s, 1),
        "peak_rss_mb": round(peak_rss / MB, 1),
        "db_mb": round(db_bytes / MB, 1),
        "raw_read_mb_per_s": round(corpus_mb / read_s, 1),
        "bare_fts_ingest_mb_per_s": round(baseline_mbps, 2),
        "ingest_ratio_vs_bare_fts": round(ingest_mbps / baseline_mbps, 3),
        "queries": len(queries),
        "queries_with_hits": kenning.with_hits,
        "search_p50_ms": round(kenning.percentile_ms(50), 2),
        "search_p95_ms": round(p95, 2),
        "search_p99_ms": round(kenning.percentile_ms(99), 2),
        "search_max_ms": round(kenning.max_ms(), 2),
        "bare_fts_p50_ms": round(bare.percentile_ms(50), 2),
        "bare_fts_p95_ms": round(bare.percentile_ms(95), 2),
        "search_p50_ratio_vs_bare_fts": round(kenning.percentile_ms(50) / bare.percentile_ms(50), 2),
        "search_p95_ratio_vs_bare_fts": round(p95 / bare.percentile_ms(95), 2),
        "bare_fts_same_terms_p50_ms": round(same_terms.percentile_ms(50), 2),
        "bare_fts_same_terms_p95_ms": round(same_terms.percentile_ms(95), 2),
        "search_p50_ratio_vs_same_terms": round(kenning.percentile_ms(50) / same_terms.percentile_ms(50), 2),
        "search_p95_ratio_vs_same_terms": round(p95 / same_terms.percentile_ms(95), 2),
        "keyword_leg_p50_ms": round(keyword_leg.percentile_ms(50), 2),
        "keyword_leg_p95_ms": round(keyword_leg.percentile_ms(95), 2),
        "sentence_queries": len(sentences),
        "sentence_hybrid_p50_ms": round(subset_ms(kenning, sentences, 50), 2),
        "sentence_keyword_p50_ms": round(subset_ms(keyword_leg, sentences, 50), 2),
        "sentence_ratio_p50": round(subset_ms(kenning, sentences, 50) / subset_ms(keyword_leg, sentences, 50), 2),
        "short_queries": len(short),
        "short_hybrid_p95_ms": round(subset_ms(kenning, short, 95), 2),
        "idle_rss_mb": round(idle_rss / MB, 1),
        "restart_idle_rss_mb": round(restart_rss / MB, 1),
        "add_document_p50_ms": round(added.percentile_ms(50), 1),
        "remove_document_p50_ms": round(removed.percentile_ms(50), 1),
        "remove_document_max_ms": round(removed.max_ms(), 1),
        "embed_after_ingest_s": round(embed_s, 1),
        "graph_after_ingest_s": round(graph_s, 1),
        "entities": graph["entities"],
        "relations": graph["relations"],
        "stop_seconds": None if stop_s is None else round(stop_s, 2),
        "exit_code": exit_code,
        "targets": {
            "ingest_mb_per_s_ge_5": ingest_mbps >= TARGET_INGEST_MBPS,
            "search_p95_lt_50ms": p95 < TARGET_P95_MS,
            # A p95 measured on a small index says nothing about the target, which is
            # stated at 100k chunks; the reader needs to see which case this was.
            "search_p95_measured_at_100k_chunks": chunks >= TARGET_P95_AT_CHUNKS,
            "idle_rss_lt_300mb": idle_rss / MB < TARGET_IDLE_RSS_MB,
            "restart_idle_rss_lt_300mb": restart_rss / MB < TARGET_IDLE_RSS_MB,
            "sentence_ratio_le_1_5": subset_ms(kenning, sentences, 50) <= 1.5 * subset_ms(keyword_leg, sentences, 50),
            "short_p95_lt_50ms": subset_ms(kenning, short, 95) < TARGET_P95_MS,
            "stops_within_15s": stop_s is not None,
        },
    }


def mark(ok: bool) -> str:
    return "[PASS]" if ok else "[FAIL]"


def format_summary(r: dict[str, Any]) -> str:
    t = r["targets"]
    at_scale = "" if t["search_p95_measured_at_100k_chunks"] else " (below 100,000 chunks: target not really tested)"
    stopped = f"{r['stop_seconds']} s, exit code {r['exit_code']}" if r["stop_seconds"] is not None else "killed"
    lines = [
        "== kenning ingest bench ==",
        f"corpus                 {r['corpus_mb']} MB markdown, {r['files']} files",
        f"files done/failed/skip {r['files_done']} / {r['files_failed']} / {r['files_skipped']}",
        f"chunks                 {r['chunks']}",
        f"ingest time            {r['ingest_seconds']} s (process start to last file settled)",
        f"ingest throughput      {r['ingest_mb_per_s']} MB/s  {mark(t['ingest_mb_per_s_ge_5'])} target >= 5 MB/s",
        f"ingest files/s         {r['ingest_files_per_s']}",
        f"ingest chunks/s        {r['ingest_chunks_per_s']}",
        f"peak RSS during ingest {r['peak_rss_mb']} MB",
        f"DB size (db + wal)     {r['db_mb']} MB",
        f"baseline raw read      {r['raw_read_mb_per_s']} MB/s",
        f"baseline bare FTS5     {r['bare_fts_ingest_mb_per_s']} MB/s",
        f"ingest ratio vs bare   {r['ingest_ratio_vs_bare_fts']}",
        f"queries                {r['queries']} ({r['queries_with_hits']} with hits)",
        f"search p50             {r['search_p50_ms']} ms",
        f"search p95             {r['search_p95_ms']} ms  {mark(t['search_p95_lt_50ms'])} target < 50 ms"
        f" at >= 100,000 chunks; measured at {r['chunks']} chunks{at_scale}",
        f"search p99             {r['search_p99_ms']} ms",
        f"search max             {r['search_max_ms']} ms",
        f"bare FTS5 p50          {r['bare_fts_p50_ms']} ms (every token OR-joined)",
        f"bare FTS5 p95          {r['bare_fts_p95_ms']} ms",
        f"search p50 ratio       {r['search_p50_ratio_vs_bare_fts']} x bare",
        f"search p95 ratio       {r['search_p95_ratio_vs_bare_fts']} x bare",
        f"bare FTS5 kenning p50  {r['bare_fts_same_terms_p50_ms']} ms (kenning's terms: stopwords dropped)",
        f"bare FTS5 kenning p95  {r['bare_fts_same_terms_p95_ms']} ms",
        f"search p50 overhead    {r['search_p50_ratio_vs_same_terms']} x bare on the same terms",
        f"search p95 overhead    {r['search_p95_ratio_vs_same_terms']} x bare on the same terms",
        f"vectors ready          {r['embed_after_ingest_s']} s after ingest (background embed job)",
        f"graph ready            {r['graph_after_ingest_s']} s after ingest (offline extraction job;"
        f" {r['entities']} entities, {r['relations']} relations)",
        f"keyword leg alone      p50 {r['keyword_leg_p50_ms']} ms, p95 {r['keyword_leg_p95_ms']} ms (same queries, legs=keyword)",
        f"sentence-long queries  {r['sentence_queries']}: hybrid p50 {r['sentence_hybrid_p50_ms']} ms vs keyword leg"
        f" {r['sentence_keyword_p50_ms']} ms = {r['sentence_ratio_p50']} x  {mark(t['sentence_ratio_le_1_5'])} target <= 1.5 x",
        f"2-5 word queries       {r['short_queries']}: hybrid p95 {r['short_hybrid_p95_ms']} ms"
        f"  {mark(t['short_p95_lt_50ms'])} target < 50 ms at >= 100,000 chunks{at_scale}",
        f"idle RSS               {r['idle_rss_mb']} MB  {mark(t['idle_rss_lt_300mb'])} target < 300 MB",
        f"idle RSS after restart {r['restart_idle_rss_mb']} MB  {mark(t['restart_idle_rss_lt_300mb'])} target < 300 MB",
        f"remove a document      p50 {r['remove_document_p50_ms']} ms, max {r['remove_document_max_ms']} ms"
        f" (add of the same text p50 {r['add_document_p50_ms']} ms; {REMOVALS} of each, after the restart)",
        f"SIGTERM to exit        {stopped}  {mark(t['stops_within_15s'])} target < 15 s",
    ]
    return "\n".join(lines)


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=float, default=200.0, help="corpus size in MB (10**6 bytes)")
    parser.add_argument("--files", type=int, default=4000, help="number of markdown files")
    parser.add_argument("--queries", type=int, default=1000, help="search queries to time")
    parser.add_argument("--keep", type=Path, metavar="DIR", help="work in DIR (must be empty or absent) and keep it")
    parser.add_argument("--json", action="store_true", help="print the results as one JSON object")
    return parser.parse_args()


def main() -> None:
    args = parse_args()
    if args.keep is not None:
        if args.keep.exists() and any(args.keep.iterdir()):
            sys.exit(f"--keep {args.keep}: directory is not empty")
        args.keep.mkdir(mode=0o700, parents=True, exist_ok=True)
        root = args.keep.absolute()
    else:
        root = Path(tempfile.mkdtemp(prefix="kenning-bench-"))
    try:
        result = run(args, root)
    finally:
        if args.keep is None:
            shutil.rmtree(root, ignore_errors=True)
        else:
            log(f"kept {root}")
    print(json.dumps(result, indent=2) if args.json else format_summary(result))


if __name__ == "__main__":
    main()
