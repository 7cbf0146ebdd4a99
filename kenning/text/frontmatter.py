"""Where a note's front matter ends: the `key: value` block between `---` fences that
opens many markdown notes (`...` may close it too).

A leading `---` is also a markdown rule, so a `key:` line must follow it, after any
blank or `# comment` lines; a key may hold spaces or stand in quotes (`Date Created:`,
`"title":`). One reading for every stage that treats the block apart from the note's
body: the chunker (its `# comments` are not headings), the document's date, the cue
patterns (a note's opening says what it is), the kinds of value (a note's own date is
not a value it states) and the snippet that opens a hit.
"""

from __future__ import annotations

import re

_KEY = re.compile(r"""\s*["']?[\w][\w \t.-]*["']?[ \t]*:""")
_SKIPPED = re.compile(r"\s*(?:#.*)?$")


def front_matter_lines(lines: list[str]) -> int:
    """How many of the first lines are front matter, fences included (0 when none, or
    when the block does not close within them)."""
    if not lines or lines[0].rstrip() != "---":
        return 0
    first = next((line for line in lines[1:] if not _SKIPPED.match(line)), "")
    if not _KEY.match(first):
        return 0
    return next((i + 1 for i in range(1, len(lines)) if lines[i].rstrip() in ("---", "...")), 0)


def body(text: str) -> str:
    """The text after its front matter: all of it when it has none."""
    if not text.startswith("---"):
        return text
    lines = text.split("\n")
    skip = front_matter_lines(lines)
    return "\n".join(lines[skip:]) if skip else text
