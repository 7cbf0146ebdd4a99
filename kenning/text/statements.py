"""A chunk read as statements, and words taken as one: what the hop, the period rule and
the value check read line by line.

A sentence says its link or its period whole, but notes hard-wrap paragraphs: "moves
billing from the invoicing module to" / "the ledger service" says where billing moves
only when read as one line.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache

import Stemmer

_WORDS = re.compile(r"\w+")
# Snowball English, the Porter stemmer's successor; the keyword index stems with Porter
# itself, which differs on a few words ("news", "skies").
_STEMMER = Stemmer.Stemmer("english")
# The same words recur from line to line and query to query.
_stem = lru_cache(maxsize=1 << 16)(_STEMMER.stemWord)

# A line that starts a new unit of text rather than continuing the one above: a list
# item, a heading or its underline, a table row, a quote, a fence, a "Key: value" line
# (front matter, a note's fields), a dated log line or a chat message; and a line after
# a blank.
_STARTS = re.compile(r"\s*(?:[-*+>#|=\[]|\d{1,3}[.)]\s|\d{4}-\d\d-\d\d|```|~~~|[A-Za-z][\w ()/-]{0,40}:\s)")
# Words that share this much of their start are taken as one ("maintainer", "maintains").
STEM = 5


def statements(content: str) -> list[str]:
    """The chunk's lines, with a paragraph's hard-wrapped lines joined back into one."""
    units: list[str] = []
    joinable = False
    for line in content.splitlines():
        if not line.strip():
            joinable = False
            continue
        if joinable and not _STARTS.match(line):
            units[-1] += " " + line.strip()
        else:
            units.append(line)
        joinable = not line.lstrip().startswith(("#", "|", "```", "~~~", "---", "==="))
    return units


# Where one sentence ends and the next begins: end punctuation, then space and a
# capital, a digit or an opening quote.
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"“(])")
# A word ending in a full stop that does not end a sentence ("Dr. Obi", "e.g. Kafka").
_ABBREVIATION = re.compile(
    r"(?:\b(?:Dr|Mr|Mrs|Ms|Mx|St|Prof|Capt|Rev|No|Nos|vs|approx|e\.g|i\.e|etc|cf|incl|ca)|\b[A-Z])\.$"
)
# How far from a piece's end an abbreviation can start: "approx." and a line break. Only
# that tail is searched, or a sentence joined from many ("A. A. A. ...") is read again
# whole at every piece.
_ABBREVIATION_REACH = len("approx.\n")


def sentences(statement: str) -> list[str]:
    """A statement's sentences: a paragraph names several things, and its sentence that
    holds the question's words says which one the question links to ("Malik's manager
    is Ayla Kaur. Previously Malik worked at Bluewater Institute.")."""
    out: list[str] = []
    for piece in _SENTENCE_END.split(statement):
        if out and _ABBREVIATION.search(out[-1], max(0, len(out[-1]) - _ABBREVIATION_REACH)):
            out[-1] += " " + piece
        else:
            out.append(piece)
    return out


def framed(content: str) -> list[tuple[str, str]]:
    """Each statement, with what frames it in the chunk: the nearest heading above it, a
    table row's header row, a list item's lead-in line ("Ports:"). "### Q1 2025" over
    "- Margin: 71 %" says Q1's margin; "| Depot | Vans |" over "| Leeds | 12 |" counts
    Leeds's vans."""
    out: list[tuple[str, str]] = []
    heading = header = lead = ""
    for unit in statements(content):
        line = unit.lstrip()
        if line.startswith("#"):
            heading, header, lead = line, "", ""
            out.append(("", unit))
            continue
        if line.startswith("|"):
            header = header or line
            frame = (heading, header) if header != line else (heading,)
        elif line.startswith(("-", "*", "+")) or line[:1].isdigit():
            header = ""
            frame = (heading, lead)
        else:
            header = ""
            lead = line if line.endswith(":") else ""
            frame = (heading,)
        out.append(("\n".join(part for part in frame if part), unit))
    return out


def holder(text: str) -> Callable[[str], bool]:
    """Whether the text holds a lower-cased term, told apart by an ending at most (`word_among`)."""
    return word_among([word.casefold() for word in _WORDS.findall(text)])


def holds_any(text: str, terms: list[str] | tuple[str, ...]) -> bool:
    """The text holds one of the terms (`holder`); any text does when there are none."""
    return not terms or any(map(holder(text), terms))


def word_among(words: list[str]) -> Callable[[str], bool]:
    """Whether a lower-cased term is one of these lower-cased words, told apart by an
    ending at most: both at least STEM letters sharing the first STEM ("maintainer",
    "maintains"), or the same stem ("leading" and "lead", "running" and "run", too short
    to share five letters). A few set lookups per term, where comparing it with every
    word of a line cost a call per pair."""
    exact = set(words)
    prefixes = {word[:STEM] for word in exact if len(word) >= STEM}
    stems = {_stem(word) for word in exact}
    return lambda term: term in exact or (len(term) >= STEM and term[:STEM] in prefixes) or _stem(term) in stems

