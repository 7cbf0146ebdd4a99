"""Characters that break a line of text, or reorder how it shows: C0 and C1 controls,
the Unicode line and paragraph separators, and the bidirectional overrides and isolates
(U+202A-U+202E, U+2066-U+2069), with which "txt.exe" can show as "exe.txt". A title, a
path or a snippet shown on one line must hold none of them as they are: the CLI escapes
them, and `documents.add` and `memory.add` refuse a title or a uri with one."""

from __future__ import annotations

import re

CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def escaped(text: str) -> str:
    """`text` with each of those characters as its escape (`\\n`, `\\x1b`, `\\u202e`),
    for a title or a path that must stay on its one line."""
    return CONTROL.sub(lambda found: found[0].encode("unicode_escape").decode(), text)
