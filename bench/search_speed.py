"""Search latency through the socket: the default hybrid search against its keyword leg alone.

It starts a real daemon on the indexes `bench/retrieval.py --work DIR` built (each
collection's folder and database, already embedded and mined, so the daemon finds
nothing to do), and sends each collection's queries over the socket twice, interleaved
query by query (each mode first every other query): once with `legs: ["keyword"]`,
once with the default legs. The keyword
leg alone is the baseline measured in the same run; the target is that fusing the three
legs costs no more than half again as much:

    default hybrid p50 <= 1.5 x keyword-leg p50, for sentence-long queries

    .venv/bin/python bench/retrieval.py --work /tmp/kr      # builds the indexes (once)
    .venv/bin/python bench/search_speed.py --work /tmp/kr [--queries 300] [--json]

Progress goes to stderr; the summary (or JSON) to stdout.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from kenning.client import Client
from kenning.errors import DaemonNotRunning

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "bench"
COLLECTIONS = (("nfcorpus", "test"), ("scifact-train", "train"))
TARGET_RATIO = 1.5
WARMUP = 20


def log(message: str) -> None:
    print(f"[bench] {message}", file=sys.stderr, flush=True)


def queries(data: Path, name: str, split: str, count: int) -> list[str]:
    wanted = {line.split("\t")[0] for line in (data / name / "qrels" / f"{split}.tsv").read_text().splitlines()[1:]}
    found = []
    for line in (data / name / "queries.jsonl").read_text().splitlines():
        query = json.loads(line)
        if query["_id"] in wanted:
            found.append(query["text"])
    return found[:count]


def start_daemon(index_dir: Path, home: Path) -> tuple[subprocess.Popen, Client]:
    """A daemon whose data dir is a copy of the built index, with the same source."""
    data = home / "data"
    data.mkdir(mode=0o700, parents=True)
    shutil.copyfile(index_dir / "kenning.db", data / "kenning.db")
    config = home / "config.toml"
    config.write_text(
        f'[daemon]\ndata_dir = "{data}"\nsweep_interval = 3600\nlog_level = "warning"\n'
        f'[[sources]]\nname = "bench"\npath = "{index_dir / "docs"}"\nmax_files = 1000000\n'
    )
    with open(home / "daemon.log", "wb") as daemon_log:
        process = subprocess.Popen(
            [sys.executable, "-m", "kenning", "--config", str(config), "daemon"],
            stdout=subprocess.DEVNULL,
            stderr=daemon_log,
        )
    client = Client(data / "kenning.sock", timeout=120)
    deadline = time.monotonic() + 300
    status: dict = {}
    while True:
        try:
            status = client.call("status")
            source = next(s for s in status["sources"] if s["name"] == "bench")
            settled = (
                not source["scanning"]
                and source["last_sweep_at"] is not None
                and status["embedder"]["vectors"] is not None
                and status["embedder"]["job"]["state"] == "idle"
            )
            if settled:
                return process, client
        except (DaemonNotRunning, ConnectionError):
            pass
        if process.poll() is not None or time.monotonic() > deadline:
            log((home / "daemon.log").read_text()[-3000:])
            raise SystemExit(f"the daemon did not settle; last status: {json.dumps(status)[:2000]}")
        time.sleep(0.2)


def percentile(samples: list[float], p: int) -> float:
    return statistics.quantiles(samples, n=100, method="inclusive")[p - 1]


def measure(client: Client, texts: list[str]) -> dict[str, dict[str, float]]:
    for text in texts[:WARMUP]:
        client.call("search", {"query": text})
    timings: dict[str, list[float]] = {"keyword": [], "hybrid": []}
    modes = (("keyword", {"legs": ["keyword"]}), ("hybrid", {}))
    for n, text in enumerate(texts):
        # Each goes first every other query: what one search read (term counts, an
        # entity's mentions) is kept until the next commit, and would favour the second.
        for mode, params in modes if n % 2 == 0 else modes[::-1]:
            started = time.perf_counter()
            client.call("search", {"query": text, "limit": 10, **params})
            timings[mode].append((time.perf_counter() - started) * 1000)
    return {
        mode: {"p50_ms": round(statistics.median(values), 2), "p95_ms": round(percentile(values, 95), 2)}
        for mode, values in timings.items()
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--work", type=Path, required=True, help="the --work folder of bench/retrieval.py")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    results = {}
    for name, split in COLLECTIONS:
        index_dir = args.work / name
        if not (index_dir / "kenning.db").exists():
            raise SystemExit(f"no index in {index_dir}; run bench/retrieval.py --work {args.work} first")
        texts = queries(args.data, name, split, args.queries)
        with tempfile.TemporaryDirectory(prefix="kenning-search-speed-") as tmp:
            log(f"{name}: starting a daemon on {index_dir}")
            process, client = start_daemon(index_dir, Path(tmp))
            try:
                log(f"{name}: {len(texts)} queries, keyword leg and default hybrid interleaved")
                result = measure(client, texts)
            finally:
                process.send_signal(signal.SIGTERM)
                process.wait(timeout=30)
        words = statistics.median(len(text.split()) for text in texts)
        result["ratio_p50"] = round(result["hybrid"]["p50_ms"] / result["keyword"]["p50_ms"], 2)
        result["median_query_words"] = words
        result["queries"] = len(texts)
        results[name] = result
    results["load_average"] = os.getloadavg()
    if args.json:
        print(json.dumps(results, indent=2))
        return
    print("== search latency through the socket: default hybrid vs the keyword leg alone ==")
    for name, _ in COLLECTIONS:
        result = results[name]
        verdict = "PASS" if result["ratio_p50"] <= TARGET_RATIO else "FAIL"
        print(
            f"{name:14s} {result['queries']} queries (median {result['median_query_words']:g} words)"
            f"  keyword p50 {result['keyword']['p50_ms']:6.2f} ms p95 {result['keyword']['p95_ms']:6.2f}"
            f"  hybrid p50 {result['hybrid']['p50_ms']:6.2f} ms p95 {result['hybrid']['p95_ms']:6.2f}"
            f"  ratio {result['ratio_p50']:.2f}  [{verdict}] target <= {TARGET_RATIO}"
        )
    print(f"load average at the end: {' '.join(f'{x:.2f}' for x in results['load_average'])}")


if __name__ == "__main__":
    main()
