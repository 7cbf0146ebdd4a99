"""How alike two short texts are without vectors, and what sets two alike texts apart.

Memory capsules are compared when they are written (is this one already kept?) and
when they are curated (which pairs say the same, which say the opposite). Vectors do
that best; these are the fallback when the embedder is not ready, and the cues that turn
"very alike" into "alike but contradicting". Hand-written because both are a few lines
over Python sets: a fuzzy-matching library would add a dependency for one ratio.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from kenning.text.stopwords import STOPWORDS

_NON_WORD = re.compile(r"[^\w]+")
_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)?")
_NUMBER = re.compile(r"\d+(?:[.,:]\d+)*")
NEGATIONS = frozenset(
    "not no never none nothing cannot can't don't doesn't didn't isn't aren't wasn't weren't won't shouldn't"
    " mustn't avoid without instead deprecated disable disabled stop stopped".split()
)
# Words whose swap turns a statement into its opposite.
OPPOSITES = (
    ("before", "after"),
    ("always", "never"),
    ("enable", "disable"),
    ("enabled", "disabled"),
    ("true", "false"),
    ("allow", "deny"),
    ("on", "off"),
    ("increase", "decrease"),
    ("add", "remove"),
    ("include", "exclude"),
    ("required", "optional"),
    ("sync", "async"),
)


def normalized(text: str) -> str:
    """NFKC, case-folded, punctuation and runs of space as one space."""
    return _NON_WORD.sub(" ", unicodedata.normalize("NFKC", text).casefold()).strip()


def title_key(title: str) -> str:
    """What two capsule titles share when they are one title: case and spacing aside,
    but not punctuation, which `normalized` drops ("C++", "C#" and "C" are three titles).

    NFKC, as in `normalized`, folds only other forms of one character (full-width
    letters, ligatures): so two titles with one key also have one `normalized` text."""
    return " ".join(unicodedata.normalize("NFKC", title).casefold().split())


def trigrams(text: str) -> frozenset[str]:
    padded = f"  {normalized(text)} "
    return frozenset(padded[i : i + 3] for i in range(len(padded) - 2))


def jaccard(first: frozenset[str], second: frozenset[str]) -> float:
    if not first and not second:
        return 1.0
    return len(first & second) / len(first | second)


@dataclass(frozen=True)
class Said:
    """What `contrast` and `same_subject` read of one capsule, read once: curate compares
    each capsule with every alike one in its scope, and reading both texts again for each
    pair took 90 ms for a scope of 100 capsules, minutes for a library of 20,000."""

    numbers: frozenset[str]
    words: frozenset[str]
    subject: frozenset[str]


def said(title: str, text: str) -> Said:
    words = frozenset(_WORD.findall(text.casefold()))
    subject = frozenset(word for word in _WORD.findall(title.casefold()) if word not in STOPWORDS)
    return Said(frozenset(_NUMBER.findall(text)), words, subject)


def same_subject(first: Said, second: Said) -> bool:
    """Whether one capsule's title words all occur in the other capsule: two facts built
    the same way about different things ("billing port", "search port") are not about
    one subject, and different numbers in them contradict nothing."""
    # A title's words hold no stop word, so they are in the other's words exactly when
    # they are in its words less the stop words.
    return bool(first.subject and first.subject <= second.words) or bool(
        second.subject and second.subject <= first.words
    )


def contrast(first: Said, second: Said) -> str | None:
    """Why two alike texts may contradict each other, or None: different numbers where
    both state some, a negation only one of them makes, or a pair of opposite words."""
    numbers = first.numbers, second.numbers
    if numbers[0] and numbers[1] and numbers[0] != numbers[1]:
        only = sorted(numbers[0] - numbers[1])[:3], sorted(numbers[1] - numbers[0])[:3]
        if only[0] or only[1]:
            return f"numbers differ: {', '.join(only[0]) or '-'} vs {', '.join(only[1]) or '-'}"
    words = first.words, second.words
    negated = (words[0] & NEGATIONS) ^ (words[1] & NEGATIONS)
    if negated:
        return f"only one says {', '.join(repr(word) for word in sorted(negated)[:3])}"
    for left, right in OPPOSITES:
        if (left in words[0] and right in words[1] and right not in words[0]) or (
            right in words[0] and left in words[1] and left not in words[0]
        ):
            return f"{left!r} vs {right!r}"
    return None
