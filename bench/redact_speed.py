"""Redaction speed on ordinary text and on inputs built to make regexes backtrack, and
how many lines of ordinary text it changes (false positives).

Ordinary text is, by default, this interpreter's own standard library (sources, and any
text, JSON or config files in it) plus the reference documentation that ships in
``pydoc_data.topics``, so the figures are reproducible wherever CPython is; ``--sample``
points it at other folders. The baseline is one pass of a trivial regex
(``re.compile("\\n").findall``) over the same text in the same run.
"""

from __future__ import annotations

import argparse
import re
import sys
import sysconfig
import time
from collections.abc import Callable
from pathlib import Path

from kenning.ingest.redact import redact

MB = 1_000_000


SAMPLE_SUFFIXES = {".py", ".txt", ".rst", ".md", ".json", ".toml", ".cfg", ".ini", ".yaml", ".yml", ".html"}


def text_files(roots: list[Path]) -> list[tuple[Path, str]]:
    """Text files under ``roots``, without the third-party packages installed below them."""
    files = []
    for root in roots:
        for path in sorted(root.rglob("*")):
            inside = set(path.relative_to(root).parts)
            if path.suffix not in SAMPLE_SUFFIXES or {"site-packages", "dist-packages"} & inside:
                continue
            try:
                files.append((path, path.read_text(encoding="utf-8")))
            except (OSError, UnicodeDecodeError):
                continue
    return files


def reference_prose() -> str:
    from pydoc_data.topics import topics

    return "\n\n".join(topics[name] for name in sorted(topics))


def sized(text: str, size: int) -> str:
    return (text * (size // max(len(text), 1) + 1))[:size]


def pathological(size: int) -> dict[str, str]:
    return {
        "eyJ repeated, one line": sized("eyJ", size),
        "BEGIN PRIVATE KEY lines, no END": sized("-----BEGIN RSA PRIVATE KEY-----\n", size),
        "AKIA repeated, one line": sized("AKIA", size),
        "password= repeated, one line": sized("password=", size),
        "://user: repeated, no @": sized("://user:", size),
        "password for , no verb": sized("password for ", size),
        "password is \u201c, never closed": sized("password is \u201c", size),
        "one 'a' run, no newline": "a" * size,
    }


def timed(function: Callable[[str], object], text: str) -> float:
    start = time.perf_counter()
    function(text)
    return time.perf_counter() - start


BASELINE = re.compile("\n").findall


def report(name: str, text: str) -> None:
    seconds = timed(redact, text)
    baseline = timed(BASELINE, text)
    mb = len(text.encode()) / MB
    print(
        f"  {name:<36} {mb:6.1f} MB  redact {mb / seconds:7.1f} MB/s ({seconds:6.2f} s)"
        f"  baseline {mb / baseline:8.1f} MB/s  ratio {seconds / baseline:6.0f}x"
    )


def false_positives(files: list[tuple[Path, str]], prose: str, show: int) -> None:
    samples = [*files, (Path("pydoc_data.topics"), prose)]
    lines = changed = 0
    shown: list[str] = []
    for path, text in samples:
        before = text.split("\n")
        after = redact(text).split("\n")
        assert len(before) == len(after), path
        lines += len(before)
        for number, (old, new) in enumerate(zip(before, after), 1):
            if old != new:
                changed += 1
                if len(shown) < show:
                    shown.append(f"    {path.name}:{number}: {old.strip()[:110]}")
    print(f"  {len(samples)} files, {lines:,} lines; lines changed: {changed} ({changed / lines:.4%})")
    print("\n".join(shown))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=float, nargs="+", default=[1, 10], help="MB for each pathological input")
    parser.add_argument("--show", type=int, default=40, help="changed lines to print")
    parser.add_argument(
        "--sample", type=Path, nargs="+", default=[Path(sysconfig.get_paths()["stdlib"])],
        help="folders of ordinary text for the speed and false-positive figures (default: the stdlib)",
    )  # fmt: skip
    args = parser.parse_args()

    files = text_files(args.sample)
    code = "\n".join(text for _, text in files)
    prose = reference_prose()
    print(f"Python {sys.version.split()[0]}; sample: {', '.join(map(str, args.sample))}")
    print("ordinary text")
    report(f"{len(files)} sample files (code, docs)", code)
    report("pydoc_data.topics (prose)", prose)
    for size in args.sizes:
        print(f"pathological inputs, {size:g} MB")
        for name, text in pathological(int(size * MB)).items():
            report(name, text)
    print("false positives: sample lines changed by redaction")
    false_positives(files, prose, args.show)


if __name__ == "__main__":
    main()
