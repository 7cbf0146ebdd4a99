"""ATX headings (`## Install ##`): their level and title, found in time linear in the line.

They were matched with one regex, ` {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$`,
whose lazy title and optional closing run backtrack over each other: a heading line
holding a long run of spaces took time quadratic in its length (50,000 spaces: 45 s).
A note with one failed at the parse time limit, and agent text, chunked in a daemon
thread that holds the GIL while a regex runs, stalled every request. So only the
opening is a regex; the closing hashes are taken off with `rstrip`, which reads the
title that regex read.
"""

from __future__ import annotations

import re

# Up to three spaces, one to six hashes, then spaces or the end of the line: seven
# hashes, four spaces of indent or `#hashtag` make no heading.
_OPENING = re.compile(r" {0,3}(#{1,6})(?:[ \t]+|$)")


def atx_heading(line: str) -> tuple[int, str] | None:
    """The level and title of a heading line, or None when the line is no heading."""
    opening = _OPENING.match(line)
    if opening is None:
        return None
    return len(opening.group(1)), heading_title(line[opening.end() :])


def heading_title(rest: str) -> str:
    """A heading's title from what follows its opening hashes and spaces: without a
    closing run of hashes, which counts only after a space or a tab ("C#" keeps its
    hash), and stripped."""
    text = rest.rstrip(" \t")
    opened = text.rstrip("#")
    if opened != text and opened[-1:] in (" ", "\t"):
        text = opened
    return text.strip()


# A title is shown with each hit on one line and stored with each of its document's
# chunks, as is the heading path a chunk sits under: a note whose first heading ran to
# 500 KB stored 400 copies of it (209 MB for one file). As long as an agent's title may
# be (daemon/protocol.py).
MAX_TITLE_CHARS = 500
# One heading of a chunk's section; a path of six of them stays under 1,300 characters.
MAX_HEADING_CHARS = 200


def cut(text: str, limit: int) -> str:
    """`text` of at most `limit` characters, an ellipsis marking where it was cut."""
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"
