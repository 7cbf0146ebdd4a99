"""Context packs on the truth set: does the pack hold the note that answers the task?

A real daemon ingests bench/truth (as bench/truth.py does), and every answerable question
is asked as a task through the socket's `context.pack` at several byte budgets. A
question counts as answered in the pack when a note it names as the answer (`relevant`,
`right`, or one of the contradiction's `sides`) is inlined whole; "reachable" when it is
inlined or listed. `precision` is the share of inlined notes that the question names at
all (answer, wrong note, bridge): the rest is prompt spent on unrelated notes.

Two baselines from the same run: `chunks`, the search's best chunks pasted in rank order
up to the budget (what an agent gets by pasting search hits; "answered" there means a
chunk of the answer note is in it, which is weaker than the whole note), and the
relevance floor swept (0, 0.25, 0.5, 0.75: `RELATIVE_FLOOR` in kenning/service/context.py)
by replaying the pack's rule on the run's search results and note sizes. Choose the
floor on `dev`; the real `context.pack` row is what the daemon does with the shipped one.

    .venv/bin/python bench/context_pack.py [--split dev|test] [--budgets 4000,8000,16000] [--questions N] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import truth  # bench/truth.py: the set, its checks, the daemon's start and readiness

from kenning.client import Client

FLOORS = (0.0, 0.25, 0.5, 0.75)
# Mirrors kenning/service/context.py, for the replay of other floors.
MAX_DOCUMENTS = 12
SEARCH_HITS = 60
LIST_SHARE = 0.5
SKIPPED = ("abstention",)


def answers(q: truth.Question) -> set[str]:
    row = q.row
    return set(row.get("relevant", [])) | set(row.get("sides", [])) | ({row["right"]} if "right" in row else set())


def relpath(path: str, root: str) -> str:
    real = os.path.realpath(path)
    return Path(os.path.relpath(real, root)).as_posix() if real.startswith(root + os.sep) else path


def replay(hits: list[dict], sizes: dict[str, int], floor: float, budget: int) -> list[str]:
    """The pack's rule on one search answer: which notes it would inline."""
    seen: dict[str, float] = {}
    for hit in hits:
        if hit["doc"] not in seen and len(seen) < MAX_DOCUMENTS:
            seen[hit["doc"]] = hit["score"]
    if not seen:
        return []
    top = max(seen.values())
    # A list line is about 110 bytes plus the path; a block's header about 60 plus path and
    # title. Room is kept for the lines of the notes past the floor only, and at most
    # LIST_SHARE of the budget; none by the best note, inlined whenever it fits alone.
    lines = {doc: 110 + len(doc) for doc, score in seen.items() if score >= floor * top}
    used = 200
    inlined = []
    best = next(iter(seen))
    for doc, score in seen.items():
        if score < floor * top:
            continue
        others = sum(size for other, size in lines.items() if other != doc) if doc != best else 0
        block = sizes[doc] + 60 + len(doc) * 2
        if used + block + min(others, int(budget * LIST_SHARE)) <= budget:
            inlined.append(doc)
            used += block
            del lines[doc]
    return inlined


def chunk_pack(client: Client, hits: list[dict], budget: int, cache: dict[int, str]) -> tuple[set[str], str]:
    """The best chunks, pasted in rank order while they fit."""
    text, docs, used = [], set(), 0
    for hit in hits:
        if hit["item_id"] not in cache:
            cache[hit["item_id"]] = client.call("documents.get", {"item_id": hit["item_id"]})["item"]["content"]
        block = f"--- {hit['doc']}:{hit['line_start']}-{hit['line_end']}\n{cache[hit['item_id']]}\n"
        size = len(block.encode())
        if used + size <= budget:
            text.append(block)
            docs.add(hit["doc"])
            used += size
    return docs, "".join(text)


def row(results: list[dict]) -> dict[str, float]:
    n = len(results) or 1
    inlined = sum(len(r["inlined"]) for r in results) or 1
    cited = [r for r in results if r["evidence"] is not None]
    return {
        "answered": round(sum(r["answered"] for r in results) / n, 3),
        "reachable": round(sum(r["reachable"] for r in results) / n, 3),
        "precision": round(sum(r["named_inlined"] for r in results) / inlined, 3),
        "evidence": round(sum(r["evidence"] for r in cited) / len(cited), 3) if cited else None,
        "bytes": round(sum(r["bytes"] for r in results) / n),
    }


def measure(args: argparse.Namespace, root: Path) -> dict[str, Any]:
    questions, files = truth.load_set(truth.SET)
    chosen = [q for q in questions if q.split == args.split and q.kind.name not in SKIPPED][: args.questions]
    docs = root / "docs"
    truth.copy_corpus(truth.SET / "corpus", docs)
    sizes = {doc: len((docs / doc).read_bytes()) for doc in files}
    config, data_dir = truth.write_config(root, docs, "")
    log_path = root / "daemon.log"
    client = Client(data_dir / "kenning.sock", timeout=120)
    with open(log_path, "wb") as daemon_log:
        daemon = subprocess.Popen(
            [sys.executable, "-m", "kenning", "--config", str(config), "daemon"], stdout=daemon_log,
            stderr=subprocess.STDOUT,
        )  # fmt: skip
    try:
        truth.wait_ready(daemon, client, len(files), 600, log_path)
        real_root = os.path.realpath(docs)
        rules: dict[str, dict[int, list[dict]]] = {}
        cache: dict[int, str] = {}
        started = time.monotonic()
        for q in chosen:
            right, named = answers(q), q.documents()
            evidence = q.row.get("evidence")
            hits = client.call("search", {"query": q.text, "limit": SEARCH_HITS})["hits"]
            for hit in hits:
                hit["doc"] = relpath(hit["path"], real_root)
            for budget in args.budgets:
                outcomes: dict[str, tuple[list[str], list[str], str | None]] = {}
                pack = client.call("context.pack", {"task": q.text, "budget": budget})
                inlined = [relpath(d["path"], real_root) for d in pack["inlined"]]
                listed = [relpath(d["path"], real_root) for d in pack["listed"]]
                outcomes["context.pack"] = (inlined, listed, pack["text"])
                for floor in FLOORS:
                    outcomes[f"floor {floor:g}"] = (replay(hits, sizes, floor, budget), [], None)
                chunk_docs, chunk_text = chunk_pack(client, hits, budget, cache)
                outcomes["chunks"] = (sorted(chunk_docs), [], chunk_text)
                for name, (inlined, listed, text) in outcomes.items():
                    pack_bytes = len(text.encode()) if text is not None else 0
                    rules.setdefault(name, {}).setdefault(budget, []).append(
                        {
                            "answered": bool(right & set(inlined)),
                            "reachable": bool(right & (set(inlined) | set(listed))),
                            "inlined": inlined,
                            "named_inlined": len(named & set(inlined)),
                            "evidence": None if evidence is None or text is None else evidence in text,
                            "bytes": pack_bytes,
                        }
                    )
        seconds = time.monotonic() - started
    finally:
        truth.stop(daemon)
    return {
        "split": args.split,
        "questions": len(chosen),
        "budgets": args.budgets,
        "seconds": round(seconds, 1),
        "rules": {name: {str(b): row(results) for b, results in by_budget.items()} for name, by_budget in rules.items()},
    }


def report(result: dict[str, Any]) -> str:
    lines = [
        f"== context packs on the truth set, split {result['split']}: {result['questions']} questions"
        f" ({result['seconds']} s) ==",
        "answered: an answer note inlined whole (chunks: a chunk of it pasted); reachable: inlined or listed;",
        "precision: inlined notes the question names / inlined notes; evidence: citation questions whose",
        "evidence line is in the pack text; bytes: mean pack size",
    ]
    for budget in result["budgets"]:
        lines += ["", f"-- budget {budget} bytes --"]
        lines.append(f"{'rule':<14}{'answered':>9}{'reachable':>10}{'precision':>10}{'evidence':>9}{'bytes':>8}")
        for name, by_budget in result["rules"].items():
            cells = by_budget[str(budget)]
            evidence = "-" if cells["evidence"] is None else f"{cells['evidence']:.2f}"
            reachable = f"{cells['reachable']:.2f}" if name == "context.pack" else "-"
            bytes_ = str(cells["bytes"]) if name in ("context.pack", "chunks") else "-"
            lines.append(
                f"{name:<14}{cells['answered']:>9.2f}{reachable:>10}{cells['precision']:>10.2f}{evidence:>9}{bytes_:>8}"
            )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--split", choices=("dev", "test"), default="dev")
    parser.add_argument("--budgets", default="4000,8000,16000", help="comma-separated byte budgets")
    parser.add_argument("--questions", type=int, help="ask only the split's first N questions (default: all)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    args.budgets = [int(b) for b in args.budgets.split(",")]
    root = Path(tempfile.mkdtemp(prefix="kenning-context-"))
    try:
        result = measure(args, root)
    except truth.SetupError as exc:
        sys.exit(f"context bench: {exc}")
    finally:
        shutil.rmtree(root, ignore_errors=True)
    print(json.dumps(result, indent=2) if args.json else report(result))


if __name__ == "__main__":
    main()
