"""Hostile text on what a search reads off its best hits: what each reader costs.

A search reads the text of its best hits (a chunk: 1,200 characters by default, up to
20,000 with [chunking] target_chars) and the query itself (up to 4,000 characters)
synchronously, on the daemon's event loop: nothing it reads may take longer than the
text is long. Each input of bench/hostile_text.py, and the ones a fuzzing review found
slow, is built at the given sizes and given to each reader on its own, timed with one
clock:

| reader | what runs |
|---|---|
| values | `values.states`, plain and `surely`, for a question of every kind it tells (a price, a fee, a size, a depth, a speed, a weight, a capacity, an email address, a street address, a count, a time, a date, a version, a port...) |
| truth | `truth.read` on two hits holding the text (the second titled as a correction, the text reversed), then `resolve` and what it reads of each side (`answers`, `naming`, `names_in`), for four questions |
| query | the text's first 4,000 characters as a query: `TimeIntent.of`, `values.wanted`, `query.parse` |
| sentences | `statements.sentences`, which hop.py reads a hit's statements with |

Times are CPU seconds of the process. The ratio column is the input's total over plain
prose of the same size in the same run: how much worse than ordinary text an input is,
on any machine. A reader that is linear shows about the same ratio at every size.

    .venv/bin/python bench/hostile_search.py                           # sizes 1,200 to 20,000 (~4 min on 2 cores)
    .venv/bin/python bench/hostile_search.py --sizes 20000 --top 10    # the ten worst at the largest chunk
    .venv/bin/python bench/hostile_search.py --only fuzzed             # the fuzzing review's inputs

Progress goes to stderr.
"""

from __future__ import annotations

import argparse
import random
import sys
from collections.abc import Callable
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from hostile_text import INPUTS, repeat, timed  # noqa: E402

from kenning.api import Hit  # noqa: E402
from kenning.retrieval import query, truth, values  # noqa: E402
from kenning.retrieval.dates import TimeIntent  # noqa: E402
from kenning.store.hits import ChunkText  # noqa: E402
from kenning.text import statements  # noqa: E402

READERS = ("values", "truth", "query", "sentences")
TODAY = date(2026, 12, 1)
QUERY_CHARS = 4000
# A question of each kind values.wanted tells, so every form of value is looked for.
QUESTIONS = (
    "What year did Noor join?", "What time does the coach leave?", "What are the opening hours?",
    "What colour is the cat?", "Which port does redis use?", "What version of Postgres do we run?",
    "What did we decide about Postgres versions?", "What is the fee?", "How much does the ferry cost?",
    "What is the price of the pass?", "What is Alice's phone number?", "What is Bob's email address?",
    "What is the office street address?", "What is the account number?", "What is the depth of the pool?",
    "How fast is the boat?", "How heavy is it?", "What is the capacity?", "What size is the disk?",
    "How long is the walk?", "How many vans does the depot have?", "How much grant was awarded?",
    "What date is the fair?", "When is the migration?",
)  # fmt: skip
TRUTH_QUESTIONS = (
    "What time does the coach leave?", "How much does it cost?", "Who runs billing?", "When is the migration?",
)  # fmt: skip


def vans(size: int, rng: random.Random) -> str:
    """Numbers, then the word counted: each number within reach of none but the last."""
    return ("1 " * size)[: size // 2] + " " + ("vans " * size)[: size - size // 2 - 1]


# What the fuzzing review found slow, each named for the reader it stalled.
FUZZED: dict[str, Callable[[int, random.Random], str]] = {
    "fuzzed: '1' (price)": repeat("1"),
    "fuzzed: '0.' (price)": repeat("0."),
    "fuzzed: '1.1.' (price)": repeat("1.1."),
    "fuzzed: '1,' (size, depth)": repeat("1,"),
    "fuzzed: '1,,,,' (size, price)": repeat("1,,,,"),
    "fuzzed: 'a_1' (email)": repeat("a_1"),
    "fuzzed: 'A1-' (street)": repeat("A1-"),
    "fuzzed: '[' (speaker)": repeat("["),
    "fuzzed: newlines (speaker)": repeat("\n"),
    "fuzzed: '.\\n' (speaker)": repeat(".\n"),
    "fuzzed: '2024 ' (query periods)": repeat("2024 "),
    "fuzzed: 'A. ' (sentences)": repeat("A. "),
    "fuzzed: numbers then vans (count)": vans,
}


def hit(item: int, title: str, text: str, day: str) -> Hit:
    return Hit(item, item, title, text[:200], "s", "default", "a.md", "Section", 1, 2, 1.0, date=day, date_source="front matter")


def reading_truth(text: str) -> None:
    """What a search's truth signals read of two hits holding the text."""
    chunks = {1: ChunkText(text, text[:300]), 2: ChunkText(text[::-1], "")}
    for question in TRUTH_QUESTIONS:
        wanted = values.wanted(question)
        keys = list(dict.fromkeys(query.parse(question).probes))[:8] or ["coach"]
        hits = [hit(1, "Note one", text, "2025-01-01"), hit(2, "Correction", text[::-1], "2025-06-01")]
        sides = truth.read(hits, chunks, keys, values.answers_at(question, wanted), frozenset({"alice"}), wanted is not None)
        # Properties computed when first read, as resolve and the verdict read them.
        [(side.answers, side.naming(text), side.names_in(text)) for side in sides]
        truth.resolve(sides, TimeIntent.of(question, TODAY), None, None)


def reader_times(text: str, readers: tuple[str, ...]) -> dict[str, float]:
    asked = [values.wanted(question) for question in QUESTIONS]
    work: dict[str, Callable[[], object]] = {
        "values": lambda: [values.states(wanted, text, surely) for wanted in asked if wanted for surely in (False, True)],
        "truth": lambda: reading_truth(text),
        "query": lambda: (
            TimeIntent.of(text[:QUERY_CHARS], TODAY), values.wanted(text[:QUERY_CHARS]), query.parse(text[:QUERY_CHARS])
        ),
        "sentences": lambda: statements.sentences(text),
    }
    return {reader: timed(work[reader]) for reader in readers}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1200, 2400, 5000, 10000, 20000], help="characters")
    parser.add_argument("--readers", nargs="+", choices=READERS, default=list(READERS))
    parser.add_argument("--only", nargs="+", default=[], help="inputs whose name holds one of these")
    parser.add_argument("--top", type=int, default=0, help="print only the N worst inputs by total")
    args = parser.parse_args()
    readers = tuple(reader for reader in READERS if reader in args.readers)
    inputs = {**INPUTS, **FUZZED}
    names = [name for name in inputs if name == "prose" or not args.only or any(word in name for word in args.only)]
    for size in args.sizes:
        rows: list[tuple[str, dict[str, float]]] = []
        for name in names:
            print(f"{size:,} chars: {name} ...", file=sys.stderr, flush=True)
            rows.append((name, reader_times(inputs[name](size, random.Random(7)), readers)))
        base = sum(rows[0][1].values())
        shown = rows if not args.top else [rows[0], *sorted(rows[1:], key=lambda r: -sum(r[1].values()))[: args.top]]
        print(f"\n{size:,} characters; seconds per reader, ratio = total / prose's total")
        print(f"{'input':<36}" + "".join(f"{reader:>10}" for reader in readers) + f"{'total':>9}{'ratio':>8}")
        for name, times in shown:
            total = sum(times.values())
            cells = "".join(f"{times[reader]:>10.3f}" for reader in readers)
            print(f"{name[:36]:<36}{cells}{total:>9.3f}{total / base:>8.1f}")
        worst = {reader: max(rows, key=lambda r: r[1][reader]) for reader in readers}
        print("worst per reader: " + "; ".join(f"{reader} {row[1][reader]:.3f} s ({row[0]})" for reader, row in worst.items()))


if __name__ == "__main__":
    main()
