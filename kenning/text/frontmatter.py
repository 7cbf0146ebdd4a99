"""Where a note's front matter ends: the `key: value` block between `---` fences that
opens many markdown notes (`...` may close it too).

A leading `---` is also a markdown rule, so a `key:` line must follow it. One reading
for every stage that treats the block apart from the note's body: the chunker (its
`# comments` are not headings), the document's date, the cue patterns (a note's opening
says what it is), the kinds of value (a note's own date is not a value it states) and
the snippet that opens a hit.
"""

from __future__ import annotations

import re

_KEY = re.compile(r"[\w-]+[ \t]*:")


def front_matter_lines(lines: list[str]) -> int:
    """How many of the first lines are front matter, fences included (0 when none)."""
    if len(lines) < 2 or lines[0].rstrip() != "---" or not _KEY.match(lines[1]):
        return 0
    return next((i + 1 for i in range(2, len(lines)) if lines[i].rstrip() in ("---", "...")), 0)


def body(text: str) -> str:
    """The text after its front matter: all of it when it has none."""
    if not text.startswith("---"):
        return text
    lines = text.split("\n")
    skip = front_matter_lines(lines)
    return "\n".join(lines[skip:]) if skip else text
