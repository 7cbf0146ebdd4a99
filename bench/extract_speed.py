"""Throughput of the offline entity extractor on real chunks, one core.

Chunks come from kenning's own chunker: NFCorpus and SciFact abstracts (each written as
a markdown document, `# title` then the text, as bench/retrieval.py ingests them),
kenning's own Python source as code, and the repo's markdown docs. Extraction runs in
the background while ingest goes on, so it should keep up with the ingest chunk rate
without taking the second core. The baselines measured in the same run on the same
chunks are the chunker itself and a bare `\\w+` tokenisation: any extractor has to at
least look at every word, so the ratio to them means the same thing on any machine.

    .venv/bin/python bench/extract_speed.py [--data DIR] [--repeat 5] [--ingest-rate 6000] [--json]

Progress goes to stderr; the summary (or the JSON object) is the only thing on stdout.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import textwrap
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from kenning.ingest.chunker import chunk_document
from kenning.ingest.readers import ReadResult
from kenning.workers import offline_extract
from kenning.workers.offline_extract import extract_text

REPO = Path(__file__).resolve().parents[1]
DEFAULT_DATA = REPO.parent / "shared" / "bench"
COLLECTIONS = ("nfcorpus", "scifact-train")
TARGET_CHUNKS_PER_S = 3000.0
TOKEN = re.compile(r"\w+")


def log(message: str) -> None:
    print(f"[bench] {message}", file=sys.stderr, flush=True)


def beir_documents(path: Path) -> list[ReadResult]:
    documents = []
    with path.open(encoding="utf-8") as lines:
        for line in lines:
            row = json.loads(line)
            title, text = row.get("title") or "", row.get("text") or ""
            documents.append(ReadResult(f"# {title}\n\n{text}", title, "markdown", "markdown"))
    return documents


def full_size(documents: list[ReadResult], per_file: int = 20) -> list[ReadResult]:
    """The same abstracts as wrapped lines of longer prose files with no paragraph breaks.

    One abstract alone makes 2-3 chunks averaging ~650 chars (a title, then one long
    line cut where it overflows). With nowhere to cut but line ends, every chunk fills
    the 1,200-char target, the size the throughput target is stated at.
    """
    return [
        ReadResult(
            "\n".join(textwrap.fill(d.text.removeprefix("# "), 80) for d in documents[i : i + per_file]),
            "",
            "prose",
            "text",
        )
        for i in range(0, len(documents), per_file)
    ]


def repo_documents(patterns: tuple[str, ...], kind: str) -> list[ReadResult]:
    paths = sorted({p for pattern in patterns for p in REPO.glob(pattern)})
    return [ReadResult(p.read_text(encoding="utf-8"), p.stem, kind, kind) for p in paths]


def best_seconds(work: Callable[[], object], repeat: int) -> float:
    """Fastest of `repeat` runs: the others measure the machine's noise, not the code.

    The extractor memoises normalised names, which a long-running daemon keeps warm
    across chunks of one library; clearing it per run keeps repeats from measuring a
    cache that already holds every name of the corpus.
    """
    times = []
    for _ in range(repeat):
        offline_extract._key.cache_clear()
        started = time.perf_counter()
        work()
        times.append(time.perf_counter() - started)
    return min(times)


def measure(name: str, documents: list[ReadResult], repeat: int) -> dict[str, Any]:
    chunk = lambda: [c for d in documents for c in chunk_document(d)]
    texts = [c.text for c in chunk()]
    log(f"{name}: {len(documents)} documents, {len(texts)} chunks; timing")
    chunker_s = best_seconds(chunk, repeat)
    tokenise_s = best_seconds(lambda: [TOKEN.findall(t) for t in texts], repeat)
    extract_s = best_seconds(lambda: [extract_text(t) for t in texts], repeat)
    results = [extract_text(t) for t in texts]
    kinds: dict[str, int] = {}
    for result in results:
        for entity in result.entities:
            kinds[entity.kind] = kinds.get(entity.kind, 0) + 1
    rate = len(texts) / extract_s
    return {
        "chunks": len(texts),
        "mean_chunk_chars": round(statistics.fmean(map(len, texts)), 1),
        "extract_chunks_per_s": round(rate, 1),
        "extract_mb_per_s": round(sum(map(len, texts)) / extract_s / 1e6, 2),
        "chunker_chunks_per_s": round(len(texts) / chunker_s, 1),
        "tokenise_chunks_per_s": round(len(texts) / tokenise_s, 1),
        "extract_ratio_vs_chunker": round(chunker_s / extract_s, 3),
        "extract_ratio_vs_tokenise": round(tokenise_s / extract_s, 3),
        "mean_entities": round(statistics.fmean(len(r.entities) for r in results), 2),
        "mean_relations": round(statistics.fmean(len(r.relations) for r in results), 2),
        "entities_by_kind_per_chunk": {k: round(v / len(texts), 2) for k, v in sorted(kinds.items())},
        "max_entities": max(len(r.entities) for r in results),
        "max_relations": max(len(r.relations) for r in results),
    }


def run(args: argparse.Namespace) -> dict[str, Any]:
    corpora: dict[str, list[ReadResult]] = {}
    for collection in COLLECTIONS:
        path = args.data / collection / "corpus.jsonl"
        if path.exists():
            corpora[collection] = beir_documents(path)
            corpora[f"{collection} 1200"] = full_size(corpora[collection])
        else:
            log(f"{path} missing; skipping {collection}")
    corpora["kenning code"] = repo_documents(("kenning/**/*.py",), "code")
    corpora["kenning docs"] = repo_documents(("*.md", "docs/**/*.md", "bench/README.md"), "markdown")
    results = {name: measure(name, documents, args.repeat) for name, documents in corpora.items()}
    overall = combined_rate(results.values())
    # The target is stated for full 1,200-char English chunks; the other rows show how
    # the rate moves with chunk size and with code.
    full = combined_rate(r for name, r in results.items() if name.endswith(" 1200")) or overall
    return {
        "corpora": results,
        "overall_chunks_per_s": round(overall, 1),
        "full_size_chunks_per_s": round(full, 1),
        "ingest_chunks_per_s_assumed": args.ingest_rate,
        "extract_ratio_vs_ingest": round(full / args.ingest_rate, 3),
        "targets": {
            "extract_ge_3000_chunks_per_s": full >= TARGET_CHUNKS_PER_S,
            "extract_ge_ingest_chunk_rate": full >= args.ingest_rate,
        },
    }


def combined_rate(rows: Iterable[dict[str, Any]]) -> float:
    """Chunks per second over several corpora: all their chunks over all their time."""
    rows = list(rows)
    seconds = sum(r["chunks"] / r["extract_chunks_per_s"] for r in rows)
    return sum(r["chunks"] for r in rows) / seconds if seconds else 0.0


def mark(ok: bool) -> str:
    return "[PASS]" if ok else "[FAIL]"


def format_summary(r: dict[str, Any]) -> str:
    lines = ["== kenning offline extraction bench (one core) =="]
    header = f"{'corpus':<22}{'chunks':>7}{'chars':>7}{'extract/s':>11}{'MB/s':>6}{'chunker/s':>11}{'tokens/s':>10}{'x chunker':>10}{'ent':>6}{'rel':>6}"
    lines.append(header)
    for name, c in r["corpora"].items():
        lines.append(
            f"{name:<22}{c['chunks']:>7}{c['mean_chunk_chars']:>7.0f}{c['extract_chunks_per_s']:>11.0f}"
            f"{c['extract_mb_per_s']:>6.2f}{c['chunker_chunks_per_s']:>11.0f}{c['tokenise_chunks_per_s']:>10.0f}"
            f"{c['extract_ratio_vs_chunker']:>10.2f}{c['mean_entities']:>6.1f}{c['mean_relations']:>6.1f}"
        )
    for name, c in r["corpora"].items():
        kinds = ", ".join(f"{k} {v}" for k, v in c["entities_by_kind_per_chunk"].items())
        lines.append(f"{name:<22}per chunk: {kinds}; max {c['max_entities']} entities, {c['max_relations']} relations")
    t = r["targets"]
    lines += [
        f"all corpora            {r['overall_chunks_per_s']:.0f} chunks/s",
        (
            f"1,200-char chunks      {r['full_size_chunks_per_s']:.0f} chunks/s  "
            f"{mark(t['extract_ge_3000_chunks_per_s'])} target >= {TARGET_CHUNKS_PER_S:.0f} chunks/s on one core"
        ),
        (
            f"vs ingest chunk rate   {r['extract_ratio_vs_ingest']} x {r['ingest_chunks_per_s_assumed']:.0f} chunks/s  "
            f"{mark(t['extract_ge_ingest_chunk_rate'])} target: extraction >= ingest chunk rate"
        ),
    ]
    return "\n".join(lines)


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="folder holding the BEIR collections")
    parser.add_argument("--repeat", type=int, default=5, help="timed runs per figure; the fastest is reported")
    parser.add_argument(
        "--ingest-rate",
        type=float,
        default=6000.0,
        help="ingest chunks/s to compare against (bench/ingest.py's 'ingest chunks/s' on this machine)",
    )
    parser.add_argument("--json", action="store_true", help="print the results as one JSON object")
    return parser.parse_args()


def main() -> None:
    args = parse_args()
    result = run(args)
    print(json.dumps(result, indent=2) if args.json else format_summary(result))


if __name__ == "__main__":
    main()
