"""The extractor that needs nothing: regular expressions over one chunk, no model.

The graph leg resolves the words of a query, and pairs of adjacent words, to entities
by normalised name, so what this extracts is what a query would contain: proper names,
acronyms, code identifiers, a few lowercase concept phrases, and short CJK runs. Two
entities stated in one sentence are linked (`co_occurs`), which is what lets a
question about X reach a chunk about Y when some other chunk states X and Y together.

Person, organisation and place cannot be told apart without a model, so kinds say
only how a name was found: "name", "acronym", "code", "phrase".

It runs beside ingest on small machines, so the work per chunk is a handful of
precompiled regex passes (possessive and atomic, so no input backtracks badly) and
short loops over their matches, never a Python loop over every character.
"""

from __future__ import annotations

import asyncio
import logging
import re
import unicodedata
from bisect import bisect_right
from collections import Counter
from functools import lru_cache

from kenning.retrieval.query import STOPWORDS
from kenning.workers.extraction import Entity, Extraction, ExtractionFailed, Relation, normalize_name

log = logging.getLogger(__name__)

SIGNATURE = "offline:v1"
MAX_ENTITIES = 40
MAX_PHRASES = 5
MAX_CJK = 10
MAX_RELATIONS = 20
MAX_NAME_CHARS = 100
# A longer run of capitalised words is a title-cased heading or shouting, not a name.
MAX_NAME_WORDS = 6

# Capitalised words that are not names: sentence openers and discourse words, all-caps
# section labels of abstracts, literals and SQL keywords of code. Inside a run of
# capitalised words they split it ("The Bank of England" -> "Bank of England").
_COMMON = STOPWORDS | set(
    """
    also although another because besides both each either every few first following
    further furthermore hence however here i instead last likewise many meanwhile
    moreover most much neither nevertheless next nonetheless now often once one only
    other otherwise overall perhaps rather second several since so some still such
    then thereby therefore third though thus today together unlike unless upon we
    whereas whether yes yet
    abstract aim aims background conclusion conclusions design discussion example
    examples fig figure importance introduction limitations main method methods
    note objective objectives outcome outcomes purpose result results review section
    see setting settings summary table tip todo fixme warning chapter appendix step
    id ok etc
    none true false null nil self
    select from where insert update delete create drop table index values join inner
    outer left right order group limit primary key foreign references integer text
    """.split()
)
_COMMON_CAPITALISED = frozenset(f(w) for w in _COMMON for f in (str.capitalize, str.upper))

# Words between which a lowercase concept phrase cannot run (RAKE's stop list).
_PHRASE_STOP = STOPWORDS | _COMMON | set(
    """
    able across al already always among based can cannot could e eg et g get gets
    given go going got ie include included includes including less like made make
    makes may might must new per shall shown shows show showed found find finds us use
    used uses using versus via vs well within without would will without could likely
    def return class import self elif else lambda async await const let var function
    public private static void int str bool string try except finally raise pass yield
    assert print len
    """.split()
)

_CALL_STOP = frozenset(
    """
    if elif while for switch return print len str int float bool list dict set tuple
    range super isinstance type not and or in catch function sizeof assert typeof
    """.split()
)
_RECEIVERS = frozenset({"self", "cls", "this"})
_CONNECTORS = "of|for|the|de|du|da|di|del|della|des|van|von|der|den|la|le|&"


def _upper_class() -> str:
    """Every uppercase and titlecase letter in the BMP, as a regex character class."""
    ranges: list[str] = []
    start = previous = -2
    for cp in range(0x10000):
        if unicodedata.category(chr(cp)) in ("Lu", "Lt"):
            if cp != previous + 1:
                if start >= 0:
                    ranges.append(_range(start, previous))
                start = cp
            previous = cp
    ranges.append(_range(start, previous))
    return "[" + "".join(ranges) + "]"


def _range(first: int, last: int) -> str:
    return re.escape(chr(first)) if first == last else f"{re.escape(chr(first))}-{re.escape(chr(last))}"


_UP = _upper_class()
# A capitalised word; not the tail of `os.Path` or `fooBar`, not a call, not `Path.home`.
_WORD = rf"(?<![\w.])(?>{_UP}\w*+(?:[-/&'’]\w++)*+)(?!\(|\.\w)"
_NAME_RUN = re.compile(rf"{_WORD}(?: ++(?:(?:{_CONNECTORS}) ++){{0,2}}{_WORD})*+")
_POSSESSIVE = re.compile(r"['’]s$")
_INNER_CAPITAL = re.compile(r"[a-z][A-Z]")

# Where a sentence, heading, list item or clause starts: a capital there proves nothing.
_STARTS = re.compile(r"(?:\A|[.!?:;。！？]\s++|\n)[\s\"'“‘(\[*_#>`~|+-]*+(?:\d++[.)]\s++)?")
# What separates two sentences, for co-occurrence; one newline inside a paragraph doesn't.
_BOUNDARY = re.compile(r"[.!?](?=\s)|[。！？]|\n[ \t]*(?:\n|(?=[-*+>#]|\d+[.)]\s))")

_CODE = re.compile(
    r"`(?P<tick>[^`\n]{1,100})`"
    r"|(?<![\w.])(?P<dotted>[A-Za-z_]\w*+(?:\.[A-Za-z_]\w*+)++)"
    r"|(?<![\w.])(?P<call>[A-Za-z_]\w*+)(?=\((?!s\)))"
    r"|(?<![\w.])(?P<snake>_*+[A-Za-z][A-Za-z0-9]*+(?:_++[A-Za-z0-9]++)++_*+)(?!\w|\.\w)"
    r"|\b(?P<camel>[a-z][a-z0-9]*+[A-Z]\w*+)"
)
_DUNDER = re.compile(r"__\w+__")

# Words for concept phrases: letters with inner hyphens or apostrophes; anything else
# (digits, punctuation) is returned as its own token and ends a phrase.
_PHRASE_TOKEN = re.compile(r"[^\W\d_]+(?:['’-][^\W\d_]+)*|[^\w\s]|\d+|_")

_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]{2,}|[\u30a0-\u30ff\u31f0-\u31ff]{2,}|[\uac00-\ud7af]{2,}")
# Chinese function characters that are rarely inside a word: they end a run, as
# stopwords end an English phrase.
_HAN_STOP = str.maketrans(dict.fromkeys("的了是和与及或也都并被把这那着过", " "))
_CJK_SENTENCE = re.compile(r"[。！？]")

# "Food and Drug Administration (FDA)": the long form becomes the acronym's alias.
_DEFINED_ACRONYM = re.compile(r"\((?P<acronym>[A-Z][A-Za-z]{0,8}[A-Z])s?\)")
_EXPANSION_WORD = re.compile(r"[^\W\d_]+")
_EXPANSION_SKIP = frozenset({"and", "of", "the", "for", "in", "on", "to", "with", "a", "an"})

_RANK = {"code": 3, "acronym": 2, "name": 1, "phrase": 0}


class OfflineExtractor:
    """The Extractor protocol over extract_text; a batch is one thread hop."""

    signature = SIGNATURE

    async def extract(self, texts: list[str]) -> list[Extraction | ExtractionFailed]:
        return await asyncio.to_thread(_extract_all, texts)

    async def close(self) -> None:
        """Nothing to release: there is no model and no connection."""


def _extract_all(texts: list[str]) -> list[Extraction | ExtractionFailed]:
    results: list[Extraction | ExtractionFailed] = []
    for text in texts:
        try:
            results.append(extract_text(text))
        except Exception as error:  # one odd chunk must not fail the whole batch
            log.warning("offline extraction failed on a %d-char chunk", len(text), exc_info=True)
            # The same text fails the same way every time, so a retry would not help.
            results.append(ExtractionFailed(f"offline extractor: {error!r}", retryable=False))
    return results


@lru_cache(maxsize=65536)
def _key(name: str) -> str:
    return normalize_name(name)


def extract_text(text: str) -> Extraction:
    """Entities and relations of one chunk; the same text always gives the same result."""
    if not text or text.isspace():
        return Extraction()
    found: list[tuple[int, str, str]] = []  # (position, surface, kind), in any order
    members: list[tuple[str, str]] = []  # (dotted name, its owner)
    aliases = _defined_acronyms(text) if "(" in text else {}
    _names(text, found)
    _code(text, found, members)
    if not text.isascii():
        _cjk(text, found)
    _phrases(text, found)
    return _assemble(text, found, members, aliases)


def _names(text: str, found: list[tuple[int, str, str]]) -> None:
    """Capitalised runs; a lone capitalised word at a sentence start is held back.

    "However", "Recent", "Patients" open sentences all the time and no compact word
    list can name them all, so a single capitalised word where a sentence starts counts
    only if the chunk also names it somewhere a capital means something (mid-sentence,
    in backticks, as code). Multi-word runs are kept wherever they are: "Maria Chen
    leads" is a name even at the start.
    """
    starts = {m.end() for m in _STARTS.finditer(text)}
    for match in _NAME_RUN.finditer(text):
        run, position = match.group(), match.start()
        if " " not in run:
            if run in _COMMON_CAPITALISED or len(run) < 2:
                continue
            if run[-1] == "s" and len(run) > 2 and run[:-1].isupper():
                run = run[:-1]  # "RCTs" is the plural of the acronym a query names: "RCT"
            kind = "acronym" if run.isupper() else "code" if _INNER_CAPITAL.search(run) else "name"
            found.append((position, _POSSESSIVE.sub("", run), kind if position not in starts else "?" + kind))
            continue
        _split_run(run, position, position in starts, found)


def _split_run(run: str, position: int, at_start: bool, found: list[tuple[int, str, str]]) -> None:
    """Common words break a run: "However Maria Chen" holds the name "Maria Chen"."""
    words = run.split(" ")
    piece: list[str] = []
    offset = first = position
    for word in words:
        if word and word in _COMMON_CAPITALISED:
            _add_run(piece, first, at_start and first == position, found)
            piece, first = [], offset + len(word) + 1
        elif word or piece:
            piece.append(word)
        offset += len(word) + 1
    _add_run(piece, first, at_start and first == position, found)


def _add_run(words: list[str], position: int, at_start: bool, found: list[tuple[int, str, str]]) -> None:
    while words and not words[-1][:1].isupper():
        words.pop()  # a connector left at the end by a split ("Bank of")
    while words and not words[0][:1].isupper():
        position += len(words.pop(0)) + 1
    if not words or len(words) > MAX_NAME_WORDS:
        return
    name = _POSSESSIVE.sub("", " ".join(w for w in words if w))
    if len(name) < 2 or len(name) > MAX_NAME_CHARS:
        return
    if len(words) > 1:
        found.append((position, name, "name"))
    else:
        kind = "acronym" if name.isupper() else "name"
        found.append((position, name, "?" + kind if at_start else kind))


def _code(text: str, found: list[tuple[int, str, str]], members: list[tuple[str, str]]) -> None:
    for match in _CODE.finditer(text):
        kind = match.lastgroup
        name = match.group(kind)
        position = match.start()
        if kind == "tick":
            name = " ".join(name.split()).removesuffix("()")
        elif kind == "dotted":
            parts = name.split(".")
            if parts[0] in _RECEIVERS:
                # `self.lines` is a local detail; `self._pack(...)` is a method worth naming.
                if text.startswith("(", match.end()):
                    found.append((position, parts[-1], "code"))
                continue
            if max(map(len, parts)) < 2:
                continue  # "e.g", "i.e", "U.S"
            owner = ".".join(parts[:-1])
            members.append((name, owner))
            if len(parts) > 2:
                # "os.path" is named by "os.path.join"; a bare "items" of "items.append"
                # is a local variable, and becomes an entity only if named on its own.
                found.append((position, owner, "code"))
        elif kind == "call" and name in _CALL_STOP:
            continue
        elif kind == "snake" and _DUNDER.fullmatch(name):
            continue  # `__init__` is in every Python chunk; it would join them all
        if 2 <= len(name) <= MAX_NAME_CHARS:
            found.append((position, name, "code"))


def _cjk(text: str, found: list[tuple[int, str, str]]) -> None:
    """Whole runs of one CJK script, 2-8 characters, as phrases a CJK query can name.

    With no segmenter, a run between punctuation, script changes (kana between kanji)
    or Chinese function characters is the best available guess at a term; longer runs
    are left out rather than cut at arbitrary places.
    """
    counts: Counter[str] = Counter()
    first: dict[str, int] = {}
    for match in _HAN.finditer(text):
        run = match.group()
        pieces = run.translate(_HAN_STOP).split() if len(run) > 8 else (run,)
        for piece in pieces:
            if 2 <= len(piece) <= 8:
                counts[piece] += 1
                first.setdefault(piece, match.start() + run.find(piece))
    for piece, _ in counts.most_common(MAX_CJK):
        found.append((first[piece], piece, "phrase"))


def _phrases(text: str, found: list[tuple[int, str, str]]) -> None:
    """RAKE-like: runs of lowercase content words, scored by how often their words recur.

    A run of 2-4 words is a candidate; each word scores its frequency in the chunk, a
    phrase the sum of its words' scores times its own count, so the chunk's recurring
    topic ("breast cancer") beats a one-off ("established drug group"). Runs longer
    than 4 words give their word pairs instead, since RAKE's long candidates are
    fragments of sentences rather than terms.
    """
    runs: list[list[str]] = []
    run: list[str] = []
    for token in _PHRASE_TOKEN.findall(text):
        if token.islower() and token not in _PHRASE_STOP and len(token) > 1:
            run.append(token)
        elif run:
            runs.append(run)
            run = []
    if run:
        runs.append(run)
    frequency: Counter[str] = Counter()
    candidates: Counter[tuple[str, ...]] = Counter()
    for run in runs:
        frequency.update(run)
        if len(run) < 2:
            continue
        if len(run) <= 4:
            candidates[tuple(run)] += 1
        else:
            candidates.update(zip(run, run[1:]))
    if not candidates:
        return
    scored = sorted(
        candidates.items(), key=lambda item: -item[1] * sum(frequency[w] for w in item[0])
    )  # stable: ties keep the order of first appearance
    lowered = text.lower()
    for words, _ in scored[:MAX_PHRASES]:
        phrase = " ".join(words)
        position = lowered.find(phrase)
        found.append((position if position >= 0 else lowered.find(words[0]), phrase, "phrase"))


def _defined_acronyms(text: str) -> dict[str, str]:
    """Acronym -> the long form written just before it, matched by initials."""
    aliases: dict[str, str] = {}
    for match in _DEFINED_ACRONYM.finditer(text):
        letters = match.group("acronym").upper()
        if len(letters) > 10 or letters in aliases:
            continue
        window_start = max(0, match.start() - 160)
        words = list(_EXPANSION_WORD.finditer(text, window_start, match.start()))
        expected = len(letters) - 1
        begin = None
        for word in reversed(words[-(len(letters) + 4) :]):
            lower = word.group().lower()
            if expected >= 0 and lower[0] == letters[expected].lower():
                expected -= 1
                begin = word.start()
                if expected < 0:
                    break
            elif lower not in _EXPANSION_SKIP:
                break
        if expected < 0 and begin is not None:
            long_form = " ".join(text[begin : match.start()].split())
            if long_form and len(long_form) <= MAX_NAME_CHARS:
                aliases[letters] = long_form
    return aliases


def _assemble(
    text: str, found: list[tuple[int, str, str]], members: list[tuple[str, str]], aliases: dict[str, str]
) -> Extraction:
    """Dedupe by normalised name, apply the caps, and link entities sharing a sentence."""
    found.sort()
    surfaces: dict[str, list[str]] = {}
    kinds: dict[str, str] = {}
    positions: dict[str, list[int]] = {}
    held: list[tuple[int, str, str]] = []
    for position, surface, kind in found:
        if kind[0] == "?":
            held.append((position, surface, kind[1:]))
            continue
        key = _key(surface)
        if not key:
            continue
        if key in surfaces:
            surfaces[key].append(surface)
            positions[key].append(position)
            if _RANK[kind] > _RANK[kinds[key]]:
                kinds[key] = kind
        else:
            surfaces[key] = [surface]
            positions[key] = [position]
            kinds[key] = kind
    for position, surface, kind in held:
        key = _key(surface)
        if key in surfaces:  # named elsewhere in the chunk, so this capital is a name too
            surfaces[key].append(surface)
            positions[key].append(position)

    phrases = [key for key in surfaces if kinds[key] == "phrase"][: MAX_PHRASES + MAX_CJK]
    others = [key for key in surfaces if kinds[key] != "phrase"]
    others.sort(key=lambda key: -len(positions[key]))  # stable: ties by first position
    kept = set(others[: MAX_ENTITIES - len(phrases)] + phrases)
    order = sorted(kept, key=lambda key: min(positions[key]))

    names: dict[str, str] = {}
    entities: list[Entity] = []
    for key in order:
        forms = surfaces[key]
        name = forms[0] if len(set(forms)) == 1 else Counter(forms).most_common(1)[0][0]
        names[key] = name
        alias = aliases.get(name.upper()) if kinds[key] == "acronym" else None
        entities.append(Entity(name, kinds[key], (alias,) if alias else ()))
    relations: list[Relation] = []
    linked: set[frozenset[str]] = set()
    for member, owner in members:
        pair = frozenset((_key(member), _key(owner)))
        if pair <= names.keys() and pair not in linked and len(relations) < MAX_RELATIONS:
            linked.add(pair)
            relations.append(Relation(names[_key(member)], names[_key(owner)], "member_of"))
    _co_occurrences(text, positions, names, relations, linked)
    return Extraction(tuple(entities), tuple(relations))


def _co_occurrences(
    text: str,
    positions: dict[str, list[int]],
    names: dict[str, str],
    relations: list[Relation],
    linked: set[frozenset[str]],
) -> None:
    """Pairs sharing a sentence, nearest first, so the cap keeps the tightest links."""
    boundaries = [m.end() for m in _BOUNDARY.finditer(text)]
    sentences: dict[int, list[tuple[int, str]]] = {}
    for key, name in names.items():
        seen: set[int] = set()
        for position in positions[key]:
            sentence = bisect_right(boundaries, position)
            if sentence not in seen:
                seen.add(sentence)
                sentences.setdefault(sentence, []).append((position, name))
    groups = [[name for _, name in sorted(items)] for _, items in sorted(sentences.items()) if len(items) > 1]
    gap = 1
    while groups and len(relations) < MAX_RELATIONS:
        groups = [group for group in groups if len(group) > gap]
        for group in groups:
            for source, target in zip(group, group[gap:]):
                pair = frozenset((_key(source), _key(target)))
                if len(pair) == 2 and pair not in linked:
                    linked.add(pair)
                    relations.append(Relation(source, target, "co_occurs"))
                    if len(relations) == MAX_RELATIONS:
                        return
        gap += 1
