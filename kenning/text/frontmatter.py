"""Where a note's front matter ends: the `key: value` block between `---` fences that
opens many markdown notes (`...` may close it too), or the `key = value` (TOML) block
between `+++` fences that Hugo and Zola notes open with.

A leading `---` is also a markdown rule, so the block counts only when every line up to
the closing fence reads as YAML (a `key: value`, a `- item`, an indented continuation, a
`# comment` or a blank) and one of them is a key; a key may hold a few words or stand
in quotes (`Date Created:`, `"title":`). A note that opens with a rule, a heading and
prose is body. One reading for every stage that treats the block apart from the note's
body: the chunker (its `# comments` are not headings), the document's date, the cue
patterns (a note's opening says what it is), the kinds of value (a note's own date is
not a value it states) and the snippets of a hit.
"""

from __future__ import annotations

import re

# How far the closing fence is looked for.
MAX_LINES = 200
# What a text with front matter starts with.
OPENINGS = ("---", "+++")
# A key of one word ("date:", "date:2025-01-01"), or of a few followed by a space as
# YAML has it ("Date Created: ...", not "at 10:30").
_KEY = re.compile(
    r"""\s*["']?[A-Za-z_][\w.-]*["']?[ \t]*:|\s*["']?[A-Za-z_][\w.-]*(?:[ \t][\w.-]+){1,3}["']?[ \t]*:(?:[ \t]|$)"""
)
_OTHER = re.compile(r"\s*$|\s*#|\s+\S|-(?:[ \t]|$)")
# TOML's: `key = value` (a bare, dotted or quoted key), `[table]`, and a blank, a
# comment or an indented continuation of a multi-line array.
_TOML_KEY = re.compile(r"""\s*(?:[A-Za-z_][\w.-]*|"[^"\n]+"|'[^'\n]+')[ \t]*=""")
_TOML_OTHER = re.compile(r"\s*$|\s*#|\s*\[[^\]\n]+\]\s*$|\s+\S|\s*\]")
_FENCES = {"---": (("---", "..."), _KEY, _OTHER), "+++": (("+++",), _TOML_KEY, _TOML_OTHER)}
_TITLE = re.compile(r"""["']?title["']?[ \t]*[:=][ \t]*(?P<title>.*\S)""", re.IGNORECASE)


def front_matter_lines(lines: list[str]) -> int:
    """How many of the first lines are front matter, fences included (0 when none)."""
    if not lines or lines[0].rstrip() not in _FENCES:
        return 0
    closing, key, other = _FENCES[lines[0].rstrip()]
    keyed = False
    for number, line in enumerate(lines[1:MAX_LINES], start=1):
        if line.rstrip() in closing:
            return number + 1 if keyed else 0
        if key.match(line):
            keyed = True
        elif not other.match(line):
            return 0
    return 0


def body(text: str) -> str:
    """The text after its front matter: all of it when it has none."""
    if not text.startswith(OPENINGS):
        return text
    lines = text.split("\n")
    skip = front_matter_lines(lines)
    return "\n".join(lines[skip:]) if skip else text


def title(text: str) -> str | None:
    """The `title:` its front matter gives on its own line, unquoted; None when it gives
    none (a folded `title: >` block among them: the heading is title enough)."""
    if not text.startswith(OPENINGS):
        return None
    lines = text.split("\n", MAX_LINES)
    fenced = front_matter_lines(lines)
    if not fenced:
        return None
    for line in lines[1 : fenced - 1]:
        if match := _TITLE.match(line):
            value = match.group("title").strip()
            if value[0] in ">|":
                return None
            if len(value) > 1 and value[0] == value[-1] and value[0] in "'\"":
                value = value[1:-1].strip()
            return value or None
    return None
