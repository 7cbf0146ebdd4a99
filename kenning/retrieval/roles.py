"""Whether the best hits say who holds the role a question asks about.

"Who is the confocal superuser?", "Who is Bramble's vet?", "who's the footpaths
councillor": each names a role, and only a line giving the role names who holds it. The
floor's other measures cannot see that: the lab handbook's "FACS: Aria III, superuser Dr
Omar Haddad" holds both words of the first question, and the dog walker's client list
holds "Bramble" and "vet" (under Otis's heading: "Otis's vet: Moorview Vets"). So for a
question of this form, some line of the best hits must write every word of the role
(or have it in a heading, a title or a table's header above it, or a label on the line
before; "Cllr" and "mgr" as notes shorten them), and every name the question gives
(the thing the role is of: "Bramble", "Christmas" of "the accompanist for the christmas
concert") on that line or above it in its section. A line that says the role is not
filled yet ("Accompanist for Christmas concert still TBC", "Secretary: vacant") says no
name. Words saying which holder or when ("the new treasurer", "this sunday") are no part
of the role.

Not judged, and left to the coverage floor: a role word no chunk holds (the notes may
call the accompanist "pianist"), "who's hosting...", "who is on call...", "who's in
charge..." (a verb or a state, not a role: the rota says it by a date; a role named by
a word in -ing, "the safeguarding lead", is taken for one too), "who is X insured
with?", and a role of something a clause describes ("the manager of the comms lead for
INC-2291", "the harbour master where MV Tern is laid up in winter"), whose answer is on
the page the clause leads to.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from kenning.retrieval.query import CALENDAR, QUESTION_WORDS
from kenning.retrieval.values import stem
from kenning.text.headings import atx_heading
from kenning.text.stopwords import STOPWORDS

# "Who is", "who's", "whos": then the role, maybe after an article or an owner's
# possessive ("the choir's", "Aisha Okafor's", "the kids'").
_WHO_IS = re.compile(r"^\W*who(?:\s+is|\s*['’]s|s)\s+(?P<rest>.+?)\W*$", re.IGNORECASE | re.DOTALL)
_OWNER = re.compile(r"^(?:(?:the|our|my|your|their)\s+)?(?:[\w-]+\s+){0,2}[\w-]+(?:['’]s|s['’])\s+", re.IGNORECASE)
_POSSESSIVE = re.compile(r"['’]s?\s*$")
_ARTICLE = re.compile(r"^(?:the|our|my|your|their|a|an)\s+", re.IGNORECASE)
# Where the role ends and what it is of begins ("the facilities manager in Bristol").
_PREPOSITIONS = frozenset("for in at of on with from to by outside inside during over under about".split())
# Words that open a state or an act rather than a role ("on call", "in charge", "off
# sick", "available", "away").
_NOT_ROLES = frozenset("on in off out away back available free responsible allowed not going coming".split())
# What is of the role, beyond which it is a clause: "the manager of the comms lead for
# INC-2291" asks through another page.
_MOST_OF_WORDS = 3
# A role is named in a few words ("residents association treasurer", "out-of-hours
# escalation contact"); more, or a word opening a clause ("the harbour master where MV
# Tern is laid up in winter"), and the question goes through another thing's page.
_MOST_ROLE_WORDS = 3
_CLAUSE_WORDS = frozenset("where who whom whose which that when is are was were does do did has have".split())
# Words saying which holder of the role, or when, that no note need write beside it.
_PASSING = frozenset(
    "new current acting interim present permanent temporary main usual regular official actual"
    " today tonight tomorrow weekend weekends week month year morning afternoon evening night now".split()
)
# The fewest letters two forms of a word share ("coach", "coaches").
_STEM_LETTERS = 4
# Short forms of roles as notes write them ("Ops mgr: Raj Patel", "Cllr Sue Oduya").
_SHORT_FORMS = {
    "mgr": "manager", "cllr": "councillor", "asst": "assistant", "sec": "secretary", "treas": "treasurer",
    "coord": "coordinator", "rep": "representative", "chmn": "chairman", "supt": "superintendent",
}
# A line saying the role is not filled yet.
_PENDING = re.compile(
    r"\b(?:tbc|tbd|tba|to\s+be\s+(?:confirmed|decided|announced|agreed|arranged|appointed|elected|chosen)"
    r"|not\s+yet\s+(?:known|confirmed|decided|agreed|appointed|elected|chosen)|(?:nobody|no\s+one|none)\s+yet"
    r"|vacant|vacancy|unfilled)\b",
    re.IGNORECASE,
)
_WORD = re.compile(r"[^\W_]+")
# A word with its hyphens: "on-call" is one word of a role, not the preposition "on".
_COMPOUND = re.compile(r"[^\W_]+(?:-[^\W_]+)*")
# A table's row.
_ROW = re.compile(r"^\s*\|")


@dataclass(frozen=True)
class Role:
    """The words naming the role asked about ("confocal", "superuser"), and those naming
    what it is of ("bramble", "christmas concert"): the question's own words, lower case."""

    words: tuple[str, ...]
    of: tuple[str, ...]

    def __str__(self) -> str:
        return " ".join(self.words)


def asked(question: str) -> Role | None:
    """The role a "who is the ..." question asks about; None for another question."""
    match = _WHO_IS.match(question)
    if match is None:
        return None
    rest = match.group("rest")
    owner = _OWNER.match(rest)
    of: list[str] = []
    if owner is not None:
        of += [word for word in _words(_POSSESSIVE.sub("", owner.group())) if word not in STOPWORDS]
        rest = rest[owner.end() :]
    else:
        rest = _ARTICLE.sub("", rest)
    words = [word.lower() for word in _COMPOUND.findall(rest) if word.lower() not in QUESTION_WORDS]
    if not words or words[0] in _NOT_ROLES or words[0].endswith("ing"):
        return None
    cut = next((i for i, word in enumerate(words) if word in _PREPOSITIONS), len(words))
    role, beyond = words[:cut], [word for word in words[cut + 1 :] if word not in STOPWORDS]
    if cut < len(words) and not beyond:
        # "Who is the Golf insured with?": what the question ends on asks the relation.
        return None
    if len(beyond) > _MOST_OF_WORDS or any(word in _PREPOSITIONS for word in words[cut + 1 :]):
        return None
    if any(word.endswith("ed") or word in _CLAUSE_WORDS for word in role) or _capitalised_only(question, role):
        return None
    # "the new treasurer", "the race officer this sunday": what the role is, not when.
    role = [word for word in role if word not in _PASSING and word not in CALENDAR]
    if len(role) > _MOST_ROLE_WORDS:
        return None
    # A name ("the Bristol facilities manager", "the Club treasurer") says whose role it
    # is, and a number which ("the year 3 teacher").
    capitalised = {word for word in role if _capitalised_only(question, (word,))}
    of += [word for word in role if word in capitalised]
    parts = [part for word in role if word not in capitalised for part in word.split("-")]
    role_words = tuple(part for part in parts if part not in STOPWORDS and not part.isdigit())
    of_words = tuple(part for word in beyond for part in word.split("-") if part not in STOPWORDS)
    return Role(role_words, tuple(of) + of_words) if role_words else None


def owners_named(role: Role, texts: list[str]) -> frozenset[str]:
    """The words of what the role is of that the notes write as names, with a capital
    wherever they stand, headings too: "Bramble" of "who is bramble's vet", which the
    client list writes only as its heading "## Bramble (springer spaniel)"."""
    named = set()
    # A month or a weekday is written with a capital and names no one's role.
    for word in (word for word in role.of if word not in CALENDAR and not word.isdigit()):
        written = re.compile(rf"(?<![\w-]){re.escape(word)}(?![\w-])", re.IGNORECASE)
        found = [match.group() for text in texts for match in written.finditer(text)]
        if found and all(spelled[0].isupper() for spelled in found):
            named.add(word)
    return frozenset(named)


def states(
    role: Role,
    text: str,
    headings: tuple[str, ...],
    names: frozenset[str],
    absent: frozenset[str],
    strict: bool = False,
    document: str = "",
) -> bool:
    """Whether a line of `text` says who holds the role, and that it is filled. The
    role's words (but those no chunk of the library holds, `absent`; "manages" and
    "coaches" say "manager" and "coach") stand on the line, on the line it wraps from
    ("The membership / secretary is Ruth Hale"), in a label ending the line before it
    ("Accompanist:"), in a table's header over its row, or above it: in the headings it
    stands under, else the chunk's title, section (`headings`) and first line, which in a
    note is its title ("Larkfield Road Residents' Association - AGM, 14 Oct 2026" over
    "Treasurer: Femi Adeyemi"). The question's `names` among what the role is of stand
    there too or anywhere above the line since its heading ("Maya started Year 3 at
    Oakfield" over "Class teacher: Mr Bell"), but not under another heading: "Otis's vet"
    under "## Otis" is not Bramble's. Unless `strict`, only the names its document writes
    somewhere (`document`: the text of its chunks at hand, the client list's Bramble
    section beside Otis's): the committee's "Treasurer: Jo Bright" is the club's
    treasurer without naming the club."""
    if all(word in absent for word in role.words):
        # The notes call the role otherwise, or not at all: the coverage floor judges.
        return True
    needed = [stem(word) for word in role.words if word not in absent]
    named = [stem(word) for word in role.of if word in names and word not in absent]
    if not strict:
        written = set().union(_stems(text), _stems(document), *map(_stems, headings))
        named = [word for word in named if word in written]
    return any(
        not pending and _holds(around, needed) and set(named) <= around | section
        for around, section, pending in _lines(text, headings)
    )


def pending(role: Role, text: str, headings: tuple[str, ...], names: frozenset[str]) -> bool:
    """Whether a line of `text` gives the role, with every name of what it is of, as not
    filled yet: "Accompanist for Christmas concert still TBC" says the spring concert's
    accompanist is no answer for the Christmas concert's."""
    named = {stem(word) for word in role.of if word in names}
    return any(
        still and _holds(around, [stem(word) for word in role.words]) and named <= around | section
        for around, section, still in _lines(text, headings)
    )


def _lines(text: str, headings: tuple[str, ...]) -> Iterator[tuple[set[str], set[str], bool]]:
    """For each line but a heading: the words that stand for it (its own, and those
    above it as `states` says), those of its section above it, and whether it says the
    role is not filled yet."""
    lines = text.splitlines()
    titled = set().union(*map(_stems, headings), _stems(lines[0] if lines else ""))
    # The headings the line stands under, by level; and those the chunk's section names
    # above its first ("Welfare officer" over "### Deputy"), until a heading above that.
    under: dict[int, set[str]] = {}
    ancestors = set().union(*map(_stems, headings[1].split(" > ")[:-1])) if len(headings) > 1 else set()
    first_level: int | None = None
    section: set[str] = set()
    label: set[str] = set()
    last: set[str] = set()
    header: set[str] = set()
    for line in lines:
        own = _stems(line)
        heading = atx_heading(line)
        if heading is not None:
            level = heading[0]
            first_level = level if first_level is None else first_level
            if level < first_level:
                ancestors = set()
            under = {depth: words for depth, words in under.items() if depth < level} | {level: own}
            section, label, last = set(), set(), set()
            continue
        header = (header or own) if _ROW.match(line) else set()
        above = (set().union(*under.values(), _stems(headings[0]), ancestors) if under else titled) | header
        # A line opening in lower case goes on from the line before it.
        before = last if line.lstrip()[:1].islower() else label
        if own:
            yield own | before | above, section, _PENDING.search(line) is not None
        section |= own
        label = own if line.rstrip().endswith(":") else set()
        last = own


def _holds(words: set[str], needed: list[str]) -> bool:
    """Whether `words` hold each needed word, or a word it shares all but its ending
    with ("manages" for "manager", "coaches" for "coach", "chairman" for "chair")."""
    return all(word in words or any(_alike(word, other) for other in words) for word in needed)


def _alike(a: str, b: str) -> bool:
    shortest = min(len(a), len(b))
    if shortest < _STEM_LETTERS:
        return False
    shared = next((n for n, (x, y) in enumerate(zip(a, b)) if x != y), shortest)
    return shared >= max(_STEM_LETTERS, shortest - 2)


def _capitalised_only(question: str, words: tuple[str, ...]) -> bool:
    """Whether the question writes every one of these words with a capital: a name
    ("Who is Priya?"), not a role."""
    written = {match.group().lower(): match.group() for match in _WORD.finditer(question)}
    return all(written.get(word, word)[:1].isupper() for word in words)


def _words(text: str) -> list[str]:
    return [word.lower() for word in _WORD.findall(text)]


def _stems(text: str) -> set[str]:
    return {stem(_SHORT_FORMS.get(word, word)) for word in _words(text)}
