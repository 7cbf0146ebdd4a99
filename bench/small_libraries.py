"""The truth signals on libraries of a few notes, as a person or a checker builds by hand.

The truth sets are one library of a few hundred notes; a library of three to seven notes
is another place: there every word the notes hold is in a good share of them, so a rule
that asks how rare a word is to decide what a correction names has little to go on. Each
scenario in bench/small_libraries/{dev,test}.jsonl is a library of its own: a real
daemon indexes its notes (every file with one mtime, so dates come from the text), its
questions go through the socket `search`, and the daemon stops before the next scenario.

    .venv/bin/python bench/small_libraries.py [--split dev|test|all] [--only ID,...]
                                              [--keep DIR] [--json] [--deadline S]

A question is judged on its documents in order of first appearance: `right` means the
answer is in the top five and above every file stating the outdated, retracted or
hypothetical version (for an abstention: no hits at all; for a contradiction: both sides
in the top five, each with `conflicts_with`). Over the top ten it counts the marks the
scenario expects that a user sees on a shown stale file (`marks`), and every
`superseded_by`/`retracted_by` on a file no question of its library expects one on
(`false_marks`) and every `conflicts_with` outside its contradictions' sides
(`false_conflicts`). Progress goes to
stderr; the tables (or the JSON object) are the only thing on stdout.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from multihop import SetupError, log, start_daemon, stop, wait_ready, workspace, write_config  # noqa: E402

from kenning.client import Client  # noqa: E402

SET = Path(__file__).resolve().parent / "small_libraries"
SPLITS = ("dev", "test")
CLASSES = ("clean", "correction", "retraction", "time", "contradiction", "hypothetical", "abstention")
MARKS = ("superseded_by", "retracted_by")
TOP = 5
LIMIT = 10
# 2026-12-01 00:00 UTC for every note: a note's date comes from its text or no date at all.
FIXED_MTIME = 1796083200.0


@dataclass(frozen=True)
class Scenario:
    id: str
    notes: dict[str, str]
    questions: list[dict[str, Any]]


def load(split: str) -> list[Scenario]:
    splits = SPLITS if split == "all" else (split,)
    scenarios = []
    for name in splits:
        for n, line in enumerate((SET / f"{name}.jsonl").read_text().splitlines(), 1):
            if line.strip():
                row = json.loads(line)
                scenarios.append(Scenario(row["id"], row["notes"], row["questions"]))
    problems = [problem for scenario in scenarios for problem in check(scenario)]
    if problems:
        raise SetupError("the set fails its own checks:\n" + "\n".join(problems))
    return scenarios


def check(scenario: Scenario) -> list[str]:
    problems = []
    for question in scenario.questions:
        where = f"{scenario.id} {question['q']!r}"
        if question["class"] not in CLASSES:
            problems.append(f"{where}: unknown class {question['class']!r}")
        named = [question["answer"], *question.get("below", []), *question.get("marks", {}), *question.get("sides", [])]
        problems += [f"{where}: no note {name!r}" for name in named if name is not None and name not in scenario.notes]
        if (question["answer"] is None) != (question["class"] == "abstention"):
            problems.append(f"{where}: an abstention, and only one, has no answer")
    return problems


def judge(scenario: Scenario, question: dict[str, Any], hits: list[dict[str, Any]], root: Path) -> dict[str, Any]:
    """What a user asking this question would see that is right and wrong. A stale note
    carries its mark whatever is asked, so a mark or a conflict is false only on a file
    no question of the library expects it on."""
    files = [str(Path(hit["path"]).relative_to(root)) for hit in hits]
    docs = list(dict.fromkeys(files))
    top = docs[:TOP]
    sides = set(question.get("sides", []))
    marks = question.get("marks", {})
    stale = {(file, kind) for other in scenario.questions for file, kind in other.get("marks", {}).items()}
    disagreeing = {file for other in scenario.questions for file in other.get("sides", [])}
    if question["class"] == "abstention":
        right = not hits
    elif question["class"] == "contradiction":
        right = all(side in top for side in sides) and all(
            any(hit["conflicts_with"] for hit, file in zip(hits, files) if file == side) for side in sides
        )
    else:
        answer = question["answer"]
        shown = [old for old in question.get("below", []) if old in docs]
        right = answer in top and all(docs.index(answer) < docs.index(old) for old in shown)
    shown_stale = {file: kind for file, kind in marks.items() if file in docs}
    seen = {file for hit, file in zip(hits, files) if file in shown_stale and hit[shown_stale[file]] is not None}
    marked = {(file, kind) for hit, file in zip(hits, files) for kind in MARKS if hit[kind] is not None}
    false_marks = sorted(f"{file} {kind}" for file, kind in marked - stale)
    conflicting = {file for hit, file in zip(hits, files) if hit["conflicts_with"]}
    false_conflicts = sorted(conflicting - disagreeing)
    return {
        "right": right,
        "docs": top,
        "marks_expected": len(shown_stale),
        "marks_seen": len(seen),
        "false_marks": false_marks,
        "false_conflicts": false_conflicts,
    }


def run_scenario(scenario: Scenario, root: Path, deadline: float) -> list[dict[str, Any]]:
    notes = root / "notes"
    for name, text in scenario.notes.items():
        path = notes / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        os.utime(path, (FIXED_MTIME, FIXED_MTIME))
    config, data_dir = write_config(root, notes, "")
    log_path = root / "daemon.log"
    client = Client(data_dir / "kenning.sock", timeout=120.0)
    daemon = start_daemon(config, log_path)
    try:
        wait_ready(daemon, client, len(scenario.notes), True, deadline, log_path)
        answers = [client.call("search", {"query": question["q"], "limit": LIMIT}) for question in scenario.questions]
        stop(daemon)
    finally:
        if daemon.poll() is None:
            daemon.kill()
            daemon.wait()
    return [
        {"id": scenario.id, "q": question["q"], "class": question["class"]}
        | judge(scenario, question, answer["hits"], notes)
        for question, answer in zip(scenario.questions, answers)
    ]


def tally(results: list[dict[str, Any]]) -> dict[str, Any]:
    classes: dict[str, dict[str, int]] = defaultdict(lambda: {"questions": 0, "right": 0})
    for result in results:
        classes[result["class"]]["questions"] += 1
        classes[result["class"]]["right"] += result["right"]
    return {
        "classes": {name: classes[name] for name in CLASSES if name in classes},
        "right": sum(result["right"] for result in results),
        "questions": len(results),
        "marks_seen": sum(result["marks_seen"] for result in results),
        "marks_expected": sum(result["marks_expected"] for result in results),
        "false_marks": sum(len(result["false_marks"]) for result in results),
        "false_conflicts": sum(len(result["false_conflicts"]) for result in results),
    }


def format_summary(result: dict[str, Any]) -> str:
    totals = result["totals"]
    lines = [f"{result['scenarios']} libraries, {totals['questions']} questions ({result['split']} split)", ""]
    lines.append("| class | right |")
    lines.append("|---|---|")
    for name, counts in totals["classes"].items():
        lines.append(f"| {name} | {counts['right']}/{counts['questions']} |")
    lines.append(f"| all | {totals['right']}/{totals['questions']} |")
    lines.append("")
    lines.append(f"expected marks seen on shown stale files: {totals['marks_seen']}/{totals['marks_expected']}")
    lines.append(f"marks on files that should carry none: {totals['false_marks']}")
    lines.append(f"conflicts_with outside a contradiction's sides: {totals['false_conflicts']}")
    return "\n".join(lines)


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--split", choices=(*SPLITS, "all"), default="dev")
    parser.add_argument("--only", help="comma-separated scenario ids (dev only: the test split is read as totals)")
    parser.add_argument("--keep", type=Path, help="keep every library and daemon log in this (empty) directory")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of the tables")
    parser.add_argument("--deadline", type=float, default=120.0, help="seconds each library may take to be ready")
    return parser.parse_args()


def main() -> None:
    args = parse_args()
    with workspace(args.keep, "small-libraries") as root:
        scenarios = load(args.split)
        if args.only:
            wanted = set(args.only.split(","))
            scenarios = [scenario for scenario in scenarios if scenario.id in wanted]
        started = time.monotonic()
        results = []
        for n, scenario in enumerate(scenarios, 1):
            questions = len(scenario.questions)
            log(f"[{n}/{len(scenarios)}] {scenario.id}: {len(scenario.notes)} notes, {questions} questions")
            results += run_scenario(scenario, root / scenario.id, args.deadline)
        result = {
            "split": args.split,
            "scenarios": len(scenarios),
            "seconds": round(time.monotonic() - started, 1),
            "totals": tally(results),
            # The test split's questions stay unread: its run reports totals only.
            "questions": results if args.split == "dev" else [],
        }
    print(json.dumps(result, indent=2) if args.json else format_summary(result))


if __name__ == "__main__":
    main()
