"""How well redaction catches secrets said in prose, and how often it masks prose that
holds none.

The lines are in bench/redact_prose.jsonl, written by hand to read like what people keep
in notes (meeting notes, runbooks, chat exports, onboarding docs, emails pasted in, a
few in German, French and Spanish). Two sets:

- ``secret``: each line states one real secret (a password, passphrase, API key, token,
  PIN or door code, recovery code, wifi key). Recall is the share of lines whose secret
  no longer appears in the redacted text.
- ``clean``: lines that talk about secrets without holding one (policies, instructions,
  version strings, hashes, commit ids, code review). The false-positive rate is the share
  of lines that redaction changed at all.

Each line is in one split, written in this order: ``dev``, which the first rules were
written against; ``heldout``, written after them and measured before any rule looked at
it, then used to fix what it showed; ``heldout2``, the same a round later; ``heldout3``,
written after the last round and not used since, so the only honest estimate. A split
that has been used to fix rules flatters them from then on: add new lines as a new
split, measure it once, and say so. No split is a unit-test fixture:
tests/test_redact.py holds its own cases.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from kenning.ingest.redact import redact
from kenning.text.unicode import normalized

DATA = Path(__file__).with_name("redact_prose.jsonl")


def load(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8") as lines:
        return [json.loads(line) for line in lines if line.strip()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DATA, help="the JSONL file of lines")
    parser.add_argument("--show", action="store_true", help="list the misses and the false positives")
    args = parser.parse_args()

    rows = load(args.data)
    results = []
    for split in ("dev", "heldout", "heldout2", "heldout3", "all"):
        part = [row for row in rows if split in ("all", row["split"])]
        secrets = [row for row in part if row["set"] == "secret"]
        clean = [row for row in part if row["set"] == "clean"]
        missed = [row for row in secrets if row["secret"] in redact(row["text"])]
        changed = [(row, out) for row in clean if (out := redact(row["text"])) != normalized(row["text"])]
        caught = len(secrets) - len(missed)
        print(
            f"{split:<8} recall {caught}/{len(secrets)} = {caught / len(secrets):5.1%}"
            f"   false positives {len(changed)}/{len(clean)} = {len(changed) / len(clean):5.1%}"
        )
        results.append((split, missed, changed))
    if args.show:
        for split, missed, changed in results[:-1]:
            print(f"{split}, missed:")
            for row in missed:
                print(f"  [{row['kind']}] {row['text']!r}")
            print(f"{split}, false positives:")
            for row, out in changed:
                print(f"  [{row['kind']}] {row['text']!r}\n      -> {out!r}")

if __name__ == "__main__":
    main()
