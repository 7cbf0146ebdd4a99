"""What the hop and the truth signals do on documentation no one wrote for kenning.

The truth sets are notes written to hold corrections, retractions and links; a Debian
system's documentation tree (READMEs, NEWS files, changelogs, manuals in HTML and
Markdown) holds none on purpose, so nearly every page a hop puts second there, and every
`superseded_by`, `retracted_by` or `conflicts_with` a hit carries, is something a user
would have to see through. A real daemon indexes a copy of the tree's text files; then
the questions in bench/doc_marks/questions.txt (questions a user of such a machine
might ask: how to do things, what a default is, what changed) go through its socket,
and the run counts what moved and what was marked.

    .venv/bin/python bench/doc_marks.py [--docs /usr/share/doc] [--questions FILE]
                                        [--keep DIR] [--json] [--deadline S]

Progress goes to stderr; the summary (or the JSON object) is the only thing on stdout.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from multihop import SetupError, log, start_daemon, stop, wait_ready, workspace, write_config  # noqa: E402

from kenning.client import Client  # noqa: E402

QUESTIONS = Path(__file__).resolve().parent / "doc_marks" / "questions.txt"
# The files copied: a package's text documentation; its NEWS, changelog and README
# compressed or not.
KEPT = re.compile(r"\.(md|txt|html|rst)$|^(NEWS|changelog|README)")
MAX_BYTES = 400_000
TOP = 5
LIMIT = 10
# A question asking how the asker does something (retrieval/query.py `_PROCEDURE`).
PROCEDURE = re.compile(r"\s*how\s+(?:do|does|did|can|could|should|would|must|may|might)\s+(?:i|we|you|one)\b", re.I)


def copy_docs(source: Path, target: Path) -> int:
    copied = 0
    for path in sorted(source.rglob("*")):
        if path.is_file() and not path.is_symlink() and KEPT.search(path.name) and path.stat().st_size < MAX_BYTES:
            destination = target / path.relative_to(source)
            destination.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, destination)  # with its mtime, which dates it
            copied += 1
    return copied


def tally(results: dict[str, dict]) -> dict[str, Any]:
    """What the hits say, over every question: pages a hop put in the top five (for
    questions asking how to do something, and for the rest), hits of the top ten marked
    superseded or retracted (distinct pairs), and hits of the top five that disagree."""
    counts = {"hop_pages_top5": {"procedure": 0, "other": 0}, "marked_pairs": 0, "conflicting_top5": 0}
    pairs: set[tuple[int, int]] = set()
    for question, result in results.items():
        hits = result["hits"]
        kind = "procedure" if PROCEDURE.match(question) else "other"
        counts["hop_pages_top5"][kind] += sum(
            any("hit above it" in reason for reason in hit["reasons"]) for hit in hits[:TOP]
        )
        counts["conflicting_top5"] += sum(bool(hit["conflicts_with"]) for hit in hits[:TOP])
        for hit in hits[:LIMIT]:
            for by in (hit["superseded_by"], hit["retracted_by"]):
                if by is not None:
                    pairs.add((hit["item_id"], by))
    counts["marked_pairs"] = len(pairs)
    counts["abstained"] = sum(bool(result.get("abstained")) for result in results.values())
    return counts


def measure(args: argparse.Namespace, root: Path) -> dict[str, Any]:
    questions = [line.strip() for line in args.questions.read_text().splitlines() if line.strip()]
    docs = root / "docs"
    docs.mkdir()
    files = copy_docs(args.docs, docs)
    if not files:
        raise SetupError(f"no text documentation under {args.docs}")
    config, data_dir = write_config(root, docs, "")
    log_path = root / "daemon.log"
    client = Client(data_dir / "kenning.sock", timeout=600.0)
    log(f"{files} files, {len(questions)} questions; starting the daemon in {root}")
    daemon = start_daemon(config, log_path)
    try:
        status, stages = wait_ready(daemon, client, 1, True, args.deadline, log_path)
        # As a library is after its first near-duplicate sweep: a package's copies of
        # another's changelog are one text.
        swept = client.call("dedup")
        log(f"near-duplicate sweep: {swept['collapsed']} documents collapsed; asking {len(questions)} questions")
        results = {question: client.call("search", {"query": question, "limit": LIMIT}) for question in questions}
        exit_code = stop(daemon)
    finally:
        if daemon.poll() is None:
            daemon.kill()
            daemon.wait()
    source = status["sources"][0]
    return {
        "files": files,
        "documents": source["done"],
        "chunks": source["chunks"],
        "questions": len(questions),
        "procedure_questions": sum(bool(PROCEDURE.match(question)) for question in questions),
        "ready_seconds": {stage: round(seconds, 1) for stage, seconds in stages.items()},
        **tally(results),
        "exit_code": exit_code,
    }


def format_summary(result: dict[str, Any]) -> str:
    hops = result["hop_pages_top5"]
    return "\n".join(
        [
            f"{result['documents']} documents ({result['chunks']} chunks) from {result['files']} files;"
            f" {result['questions']} questions, {result['procedure_questions']} asking how to do something",
            f"pages a hop put in the top {TOP}: {hops['procedure']} for how-to questions, {hops['other']} for the rest",
            f"hits of the top {LIMIT} marked superseded or retracted (distinct pairs): {result['marked_pairs']}",
            f"hits of the top {TOP} carrying conflicts_with: {result['conflicting_top5']}",
            f"questions refused: {result['abstained']}",
        ]
    )


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--docs", type=Path, default=Path("/usr/share/doc"), help="the tree (default /usr/share/doc)")
    parser.add_argument("--questions", type=Path, default=QUESTIONS, help=f"one per line (default {QUESTIONS})")
    parser.add_argument("--keep", type=Path, metavar="DIR", help="work in DIR (must be empty or absent) and keep it")
    parser.add_argument("--json", action="store_true", help="print the results as one JSON object")
    parser.add_argument("--deadline", type=float, default=1800.0, help="seconds to wait for the daemon to be ready")
    return parser.parse_args()


def main() -> None:
    args = parse_args()
    started = time.monotonic()
    with workspace(args.keep, "doc_marks") as root:
        result = measure(args, root)
    result["run_seconds"] = round(time.monotonic() - started, 1)
    print(json.dumps(result, indent=2) if args.json else format_summary(result))


if __name__ == "__main__":
    main()
