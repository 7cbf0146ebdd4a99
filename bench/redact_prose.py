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

The lines are a measure, not unit-test fixtures: tests/test_redact.py holds its own
cases, so a rule fitted to these lines would not show up here as a test passing.
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
    secrets = [row for row in rows if row["set"] == "secret"]
    clean = [row for row in rows if row["set"] == "clean"]
    missed = [row for row in secrets if row["secret"] in redact(row["text"])]
    changed = [(row, out) for row in clean if (out := redact(row["text"])) != normalized(row["text"])]

    caught = len(secrets) - len(missed)
    print(f"secret lines: {len(secrets)}; recall {caught}/{len(secrets)} = {caught / len(secrets):.1%}")
    print(f"clean lines:  {len(clean)}; false positives {len(changed)}/{len(clean)} = {len(changed) / len(clean):.1%}")
    if args.show:
        print("missed:")
        for row in missed:
            print(f"  [{row['kind']}] {row['text']!r}")
        print("false positives:")
        for row, out in changed:
            print(f"  [{row['kind']}] {row['text']!r}\n      -> {out!r}")


if __name__ == "__main__":
    main()
