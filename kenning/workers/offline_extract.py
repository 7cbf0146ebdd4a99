"""The extractor that needs nothing: one regular-expression pass over a chunk, no model.

The graph leg resolves the words of a query, and pairs of adjacent words, to entities
by normalised name, so what this extracts is what a query would contain: proper names,
acronyms, code identifiers, a few lowercase concept phrases, and short CJK runs. Two
entities stated in one sentence are linked (`co_occurs`), which is what lets a
question about X reach a chunk about Y when another chunk states X and Y together.

Person, organisation and place cannot be told apart without a model, so kinds say
only how a name was found: "name", "acronym", "code", "phrase" (a key phrase), "term"
(a CJK run, which may be a name or a word: without a segmenter there is no telling).

It runs beside ingest on small machines, so a chunk is read by one precompiled
tokenizer (possessive and atomic, so no input makes it backtrack) and one loop over
its tokens; names, code, phrases and sentence boundaries all come out of that pass.
"""

from __future__ import annotations

import asyncio
import logging
import re
import unicodedata
from collections import Counter
from collections.abc import Callable
from functools import cache, lru_cache
from typing import Any, Protocol

from kenning.errors import BackendUnavailable, WorkerFailed, WorkerStopped, error_line
from kenning.store.records import Entity, Extraction, ExtractionFailed, Relation
from kenning.text.names import normalize_name
from kenning.text.stopwords import STOPWORDS

log = logging.getLogger(__name__)

# v2: a heading of one capitalised word is the name of what the page is about.
# v3: the mark redaction leaves is no entity (workers/extract.chunk_text); a library
# mined before is mined again, so its "REDACTED" entity goes.
SIGNATURE = "offline:v3"
# A batch of 256 chunks takes well under a second; this only catches a stuck worker.
BATCH_TIMEOUT_SECONDS = 120.0
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
    add ask call check click contact email install meet open please read run send
    thanks try use visit welcome
    abstract aim aims background conclusion conclusions design discussion example
    examples fig figure importance introduction limitations main method methods
    note objective objectives outcome outcomes purpose result results review section
    participants measures interventions exposures context findings relevance
    see setting settings summary table tip todo fixme warning chapter appendix step
    id ok etc
    none true false null nil self
    select from where insert update delete create drop table index values join inner
    outer left right order group limit primary key foreign references integer text
    """.split()
)
_COMMON_CAPITALISED = frozenset(f(w) for w in _COMMON for f in (str.capitalize, str.upper))

# Words a lowercase concept phrase cannot contain (RAKE's stop list): function words,
# reporting verbs, code keywords, and every single letter.
_PHRASE_STOP = frozenset(
    STOPWORDS
    | _COMMON
    | set("abcdefghijklmnopqrstuvwxyz")
    | set(
        """
        able across al already always among based can cannot could eg et get gets given
        go going got ie include included includes including less like made make makes
        may might must new per shall shown shows show showed found find finds us use used
        uses using versus via vs well within without would will likely don't doesn't
        def return class import elif else lambda async await const let var function
        public private static void int str bool string try except finally raise pass
        yield assert print len
        two three four five six seven eight nine ten twice currently recently usually
        never mostly mainly nearly almost really quite according
        agreed allows analyzed assessed associated became become becomes built builds
        called came collected come comes compared conducted contains covers
        decreased demonstrated described determined estimated evaluated examined
        goes happen happens help helps identified increased indicated investigated
        knows linked listens lives located measured met named needs observed obtained
        performed planned posted provides received recorded reduced released remains
        reported reports requires said says showed signed spent stored suggest
        suggested suggests takes taken tested tracks trained wants works written
        """.split()
    )
)

_CALL_STOP = frozenset(
    """
    if elif while for switch return print len str int float bool list dict set tuple
    range super isinstance type not and or in catch function sizeof assert typeof
    """.split()
)
_RECEIVERS = frozenset({"self", "cls", "this"})


def _letter_class(*categories: str) -> str:
    """Every BMP letter of the given Unicode categories, as a regex character class."""
    ranges: list[str] = []
    start = previous = -2
    for cp in range(0x10000):
        if unicodedata.category(chr(cp)) in categories:
            if cp != previous + 1:
                if start >= 0:
                    ranges.append(_range(start, previous))
                start = cp
            previous = cp
    ranges.append(_range(start, previous))
    return "[" + "".join(ranges) + "]"


def _range(first: int, last: int) -> str:
    return re.escape(chr(first)) if first == last else f"{re.escape(chr(first))}-{re.escape(chr(last))}"


_HAN = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_KATAKANA = "\u30a0-\u30ff\u31f0-\u31ff"
_HANGUL = "\uac00-\ud7af"
_CJK = f"{_HAN}{_KATAKANA}{_HANGUL}\u3040-\u309f"  # with hiragana
_CONNECTOR = r"(?:of|for|the|de|du|da|di|del|della|des|van|von|der|den|la|le|&)"


@cache
def _tokenizer() -> re.Pattern[str]:
    """The one pattern that reads a chunk, made on first use.

    Its letter classes walk the whole BMP and the pattern they make takes a while to
    compile: 40-60 ms of CPU that every daemon start paid, though the daemon hands
    extraction to its parse workers and never reads a chunk with it itself.
    """
    upper = _letter_class("Lu", "Lt")
    lower = _letter_class("Ll")
    # A capitalised word, but not a call (`Chunk(`) or the head of a dotted name (`Path.home`).
    capitalised = rf"(?>{upper}\w*+(?:[-/&'’]\w++)*+)(?!\(|\.[A-Za-z_])"
    # A lowercase word that is prose, not code: not followed by `(`, `.attr` or `_`.
    plain = rf"{lower}++(?:['’-]{lower}++)*+(?![\w(]|\.\w)"
    # One pass reads the whole chunk. The scanner always resumes at a word boundary, since
    # every alternative that starts on a word character consumes the whole word. Plain
    # lowercase words, most of any chunk, come back as whole runs, not one by one.
    return re.compile(
        r"(?P<url>(?:https?|ftp|file)://\S++)"
        rf"|(?P<text>{plain}(?:(?>[ \t]*+\n[ \t]*+|[ \t]++){plain})*+)"
        rf"|(?P<name>{capitalised}(?: ++(?:{_CONNECTOR} ++){{0,2}}{capitalised})*+)"
        # A sentence ends at . ! ? before a space, at a blank line, or before a list item
        # or heading; one newline inside a wrapped paragraph does not end it.
        r"|(?P<end>[.!?](?=\s|\Z)|[。！？]|\n[ \t]*+(?:\n\s*+|(?=[-*+>#|]|\d+[.)]\s)))"
        r"|(?P<opening>[:;\n])"
        # A bullet or a quote between a line start and its first word.
        r"|(?P<mark>[-*+>#\"'“‘(\[|~])"
        r"|(?P<ident>[A-Za-z_]\w*+(?:\.[A-Za-z_]\w*+)*+)(?P<call>\((?!s\)))?"
        r"|`(?P<tick>[^`\n]{1,100})`"
        rf"|(?P<cjk>[{_HAN}]{{2,}}+|[{_KATAKANA}]{{2,}}+|[{_HANGUL}]{{2,}}+)"
        # Anything else (digits, other punctuation) ends a phrase; CJK is left out so a
        # single kana cannot swallow the kanji after it.
        rf"|[^\W{_CJK}]++|[^\w\s]"
    )


_TITLE = re.compile(r"#{1,6}[ \t]")  # a markdown heading as the chunk's first line
_TITLE_NAME_WORDS = 3
_INNER_CAPITAL = re.compile(r"[a-z][A-Z]")
_DUNDER = re.compile(r"__\w+__")

# Chinese function characters that are rarely inside a word: they end a run, as
# stopwords end an English phrase.
_HAN_STOP = str.maketrans(dict.fromkeys("的了是和与及或也都并被把这那着过", " "))

# "Food and Drug Administration (FDA)": the long form becomes the acronym's alias.
_DEFINED_ACRONYM = re.compile(r"\((?P<acronym>[A-Z][A-Za-z]{0,8}[A-Z])s?\)")
_EXPANSION_WORD = re.compile(r"[^\W\d_]+")
_EXPANSION_SKIP = frozenset({"and", "of", "the", "for", "in", "on", "to", "with", "a", "an"})

_RANK = {"code": 3, "acronym": 2, "name": 1, "phrase": 0, "term": 0}

# Token positions step by this much, so the pieces of one token (a split name run, a
# long CJK run) keep their order between it and the next token.
_STEP = 64
# (token position, sentence index, surface form, kind); kind "?name" marks a lone
# capitalised word at a sentence start, which counts only if named elsewhere too.
Mention = tuple[int, int, str, str]


class Processes(Protocol):
    """Somewhere to run a picklable function in another process (the daemon's worker
    pool, kenning/ingest/parse_pool.py)."""

    async def run(self, function: Callable, args: tuple, timeout: float) -> Any: ...


class OfflineExtractor:
    """The Extractor protocol over extract_text.

    With `processes`, a batch runs in a worker process: mining a large library is pure
    Python that would otherwise hold the GIL the daemon's event loop needs, and leave
    its heap behind in the daemon. Without, in a thread (tests, benches).
    """

    signature = SIGNATURE

    def __init__(self, processes: Processes | None = None) -> None:
        self.processes = processes

    async def extract(self, texts: list[str]) -> list[Extraction | ExtractionFailed]:
        if self.processes is None:
            return await asyncio.to_thread(_extract_all, texts)
        try:
            return await self.processes.run(_extract_all, (texts,), BATCH_TIMEOUT_SECONDS)
        except WorkerStopped as exc:
            # New workers start, so the job backs off and tries again. ShutDown (the
            # workers were stopped on purpose) goes up as it is and ends the job.
            raise BackendUnavailable(f"extraction workers: {exc}") from None
        except (WorkerFailed, MemoryError, TimeoutError) as exc:
            # Tried again later, with backoff, like any failed chunk.
            reason = f"offline extractor: {error_line(exc)}"
            return [ExtractionFailed(reason) for _ in texts]

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
    """Entities and relations of one chunk; the same text always gives the same result.

    A lone, plainly capitalised word where a sentence or line starts ("However",
    "Recent", "Patients") is a name only if the chunk also writes it capitalised
    mid-sentence, as code, or inside a longer name ("Hanna" of "Hanna Kaur"): no
    compact word list can name every sentence opener. Runs of several capitalised
    words count anywhere, so "Maria Chen leads ..." still names her, and so do words
    no common word is shaped like (NASA, ReadResult, HTTP_PROXY). The cost: a name
    written once, only at a sentence start ("Python is ..."), is missed. Except where
    it is the whole heading the chunk opens with ("# Varnholm", "# Skerrivaig"): that
    names what the page is about, and without it a town's page was no page of the
    town's (store/graph.py), so no hop could reach it. A heading word that is a section
    label ("# Introduction", "# Summary") is still no name.
    """
    mentions: list[Mention] = []
    members: list[tuple[str, str]] = []  # (dotted name, its owner)
    phrases: list[tuple[list[str], int, int]] = []  # (content words, position, sentence)
    vocabulary: list[str] = []  # every content word, for the phrase scores
    cjk: list[Mention] = []
    sentence = index = 0
    opening = True
    titled = _TITLE.match(text) is not None
    heading = text.split("\n", 1)[0].lstrip("#").strip() if titled else ""
    lead, lead_index = "", -1  # "Breast" of "Breast cancer is ...": a phrase's first word
    for _url, words, name, end, start, mark, ident, call, tick, han in _tokenizer().findall(text):
        index += _STEP
        if words:
            if lead_index == index - _STEP:
                words = f"{lead} {words}"
            _content_runs(words, index, sentence, phrases, vocabulary)
        elif name:
            # A title-cased heading ("A Potential Environmental Risk Factor") is one
            # long run of capitals; in a title, only short runs are names.
            if not (titled and sentence == 0 and name.count(" ") >= _TITLE_NAME_WORDS):
                _name(name, index, sentence, opening and not (sentence == 0 and name == heading), mentions)
            if opening and name[1:].islower():
                lead, lead_index = name.lower(), index
        elif end:
            sentence += 1
        elif mark:
            continue  # a bullet or a quote: the next word still opens its line
        elif ident:
            _identifier(ident, bool(call), index, sentence, mentions, members)
        elif tick:
            tick = " ".join(tick.split()).removesuffix("()")
            if len(tick) >= 2:
                mentions.append((index, sentence, tick, "code"))
        elif han:
            _cjk(han, index, sentence, cjk)
        elif start == "\n" and titled and sentence == 0:
            sentence = 1  # the title line is a sentence of its own
        opening = bool(end or start)
    mentions += _phrases(phrases, vocabulary)
    mentions += _top_cjk(cjk)
    aliases = _defined_acronyms(text) if "(" in text else {}
    return _assemble(mentions, members, aliases, titled)


def _name(run: str, index: int, sentence: int, opening: bool, mentions: list[Mention]) -> None:
    if " " in run:
        _split_run(run.split(" "), index, sentence, opening, mentions)
        return
    if run in _COMMON_CAPITALISED or len(run) < 2 or len(run) > MAX_NAME_CHARS:
        return
    if run.endswith(("'s", "’s")):
        run = run[:-2]
    elif run[-1] == "s" and len(run) > 2 and run[:-1].isupper():
        run = run[:-1]  # "RCTs" is the plural of the acronym a query names: "RCT"
    head, _, tail = run.rpartition("-")
    if len(head) > 1 and tail.isalpha() and tail.islower():
        run = head  # "TNF-induced", "ID-related": the name is the part before
    # Only a plain capitalised word is held back at a sentence start: no common word is
    # shaped like HTTP_PROXY, ReadResult or NASA.
    if "_" in run or _INNER_CAPITAL.search(run):
        mentions.append((index, sentence, run, "code"))
    elif run.isupper():
        if len(run.rstrip("0123456789/-.")) >= 2:  # not "Q2", "H1": a letter and a number
            mentions.append((index, sentence, run, "acronym"))
    else:
        mentions.append((index, sentence, run, "?name" if opening else "name"))


def _split_run(words: list[str], index: int, sentence: int, opening: bool, mentions: list[Mention]) -> None:
    """Common words break a run: "However Maria Chen" holds the name "Maria Chen"."""
    piece: list[str] = []
    for word in words:
        if word in _COMMON_CAPITALISED:
            _add_piece(piece, index, sentence, opening and not piece, mentions)
            piece = []
            opening = False
            index += 1
        elif word:
            piece.append(word)
    _add_piece(piece, index, sentence, opening, mentions)


def _add_piece(words: list[str], index: int, sentence: int, opening: bool, mentions: list[Mention]) -> None:
    while words and not words[-1][0].isupper():
        words.pop()  # a connector left at the end by a split ("Bank of")
    while words and not words[0][0].isupper():
        words.pop(0)
    if not words or len(words) > MAX_NAME_WORDS:
        return
    if len(words) == 1:
        _name(words[0], index, sentence, opening, mentions)
        return
    name = " ".join(words)
    if name.endswith(("'s", "’s")):
        name = name[:-2]
    if len(name) <= MAX_NAME_CHARS:
        mentions.append((index, sentence, name, "name"))


def _identifier(
    ident: str, call: bool, index: int, sentence: int, mentions: list[Mention], members: list[tuple[str, str]]
) -> None:
    """Code: dotted names, calls, snake_case and camelCase; a plain word is none of them."""
    if "." in ident:
        parts = ident.split(".")
        if parts[0] in _RECEIVERS:
            # `self.lines` is a local detail; `self._pack(...)` is a method worth naming.
            if call:
                mentions.append((index, sentence, parts[-1], "code"))
            return
        if max(map(len, parts)) < 2:
            return  # "e.g", "i.e"
        owner = ".".join(parts[:-1])
        members.append((ident, owner))
        if len(parts) > 2:
            # "os.path" is named by "os.path.join"; the "items" of "items.append" is a
            # local variable, an entity only if the chunk names it on its own.
            mentions.append((index, sentence, owner, "code"))
    elif call:
        if ident in _CALL_STOP:
            return
    elif "_" in ident:
        if _DUNDER.fullmatch(ident) or ident.strip("_").isdigit():
            return  # `__init__` is in every Python chunk; it would join them all
    elif ident.islower() or ident.isupper():
        return  # a single letter, or a word with digits: not an identifier by its shape
    if 2 <= len(ident) <= MAX_NAME_CHARS:
        mentions.append((index, sentence, ident, "code"))


def _cjk(run: str, index: int, sentence: int, found: list[Mention]) -> None:
    """Whole runs of one CJK script, 2-8 characters, as phrases a CJK query can name.

    With no segmenter, a run between punctuation, script changes (kana between kanji)
    or Chinese function characters is the best available guess at a term; what is
    still longer is left out rather than cut at arbitrary places.
    """
    for offset, piece in enumerate(run.translate(_HAN_STOP).split() if len(run) > 8 else (run,)):
        if 2 <= len(piece) <= 8:
            found.append((index + min(offset, _STEP - 1), sentence, piece, "term"))


def _top_cjk(found: list[Mention]) -> list[Mention]:
    if not found:
        return []
    keep = {piece for piece, _ in Counter(m[2] for m in found).most_common(MAX_CJK)}
    return [m for m in found if m[2] in keep]


def _content_runs(
    text: str, index: int, sentence: int, phrases: list[tuple[list[str], int, int]], vocabulary: list[str]
) -> None:
    """Cut a run of lowercase words at its stopwords: what is left are phrase candidates."""
    run: list[str] = []
    for word in text.split():
        if word not in _PHRASE_STOP:
            run.append(word)
        elif run:
            vocabulary += run
            if len(run) > 1:
                phrases.append((run, index, sentence))
                index += 1
            run = []
    if run:
        vocabulary += run
        if len(run) > 1:
            phrases.append((run, index, sentence))


def _phrases(runs: list[tuple[list[str], int, int]], vocabulary: list[str]) -> list[Mention]:
    """RAKE-like: runs of lowercase content words, scored by how often their words recur.

    Every two and three words in a run are candidates, and so is a whole run of four;
    longer runs are fragments of sentences rather than terms. Each word scores its
    frequency in the chunk, a phrase the sum of its words' scores times its own count,
    so the chunk's recurring topic ("breast cancer", inside "breast cancer mortality"
    and "breast cancer recurrence") beats a one-off ("established drug group"). A
    phrase overlapping one already chosen is skipped: "white matter" or "cerebral
    white matter development" add little to "cerebral white matter" but would take
    a place.
    """
    if not runs:
        return []
    frequency = Counter(vocabulary)
    places: dict[tuple[str, ...], list[tuple[int, int]]] = {}  # -> (position, sentence) each time
    for words, index, sentence in runs:
        place = (index, sentence)
        grams = list(zip(words, words[1:], words[2:]))
        grams += zip(words, words[1:])
        if len(words) == 4:
            grams.append(tuple(words))
        for gram in grams:
            seen = places.get(gram)
            if seen is None:
                places[gram] = [place]
            else:
                seen.append(place)
    score = frequency.__getitem__
    ranked = sorted(places.items(), key=lambda item: -len(item[1]) * sum(map(score, item[0])))
    # sorted is stable: ties keep the order of first appearance
    chosen: list[str] = []
    found: list[Mention] = []
    for words, seen in ranked:
        phrase = " ".join(words)
        padded = f" {phrase} "
        if any(padded in other or other in padded for other in chosen):
            continue
        chosen.append(padded)
        found += [(index, sentence, phrase, "phrase") for index, sentence in seen]
        if len(chosen) == MAX_PHRASES:
            break
    return found


def _defined_acronyms(text: str) -> dict[str, str]:
    """Acronym -> the long form written just before it, matched by initials."""
    aliases: dict[str, str] = {}
    for match in _DEFINED_ACRONYM.finditer(text):
        letters = match.group("acronym").upper()
        if letters in aliases:
            continue
        words = list(_EXPANSION_WORD.finditer(text, max(0, match.start() - 160), match.start()))
        expected = len(letters) - 1
        begin = -1
        for word in reversed(words[-(len(letters) + 4) :]):
            lower = word.group().lower()
            if lower[0] == letters[expected].lower():
                expected -= 1
                begin = word.start()
                if expected < 0:
                    break
            elif lower not in _EXPANSION_SKIP:
                break
        if expected < 0:
            long_form = " ".join(text[begin : match.start()].split())
            if len(long_form) <= MAX_NAME_CHARS:
                aliases[letters] = long_form
    return aliases


def _assemble(
    mentions: list[Mention], members: list[tuple[str, str]], aliases: dict[str, str], titled: bool
) -> Extraction:
    """Dedupe by normalised name, apply the caps, and link entities sharing a sentence.

    A chunk that opens with a heading is about what the heading names, so the
    heading's entities are also linked to the rest: on a page "# Urban Noise Panel",
    "The dataset was collected by Quill & Ledger." links the two.
    """
    mentions.sort()
    keyed = [(_key(surface), sentence, surface, kind) for _, sentence, surface, kind in mentions]
    # A held mention counts only if the chunk writes the same name where a capital
    # means something: mid-sentence, as code.
    named = {key for key, _, _, kind in keyed if kind[0] != "?"}
    named.discard("")
    # So is a word of a longer name in the chunk: "Hanna" of "Hanna Kaur".
    named.update(word for key, _, _, kind in keyed if kind == "name" and " " in key for word in key.split(" "))
    kinds: dict[str, str] = {}
    surfaces: dict[str, list[str]] = {}
    for key, _, surface, kind in keyed:
        if key not in named:
            continue
        if key in kinds:
            surfaces[key].append(surface)
            if kind != kinds[key] and _RANK[kind.lstrip("?")] > _RANK[kinds[key]]:
                kinds[key] = kind.lstrip("?")
        else:
            kinds[key] = kind.lstrip("?")
            surfaces[key] = [surface]

    phrases = [key for key, kind in kinds.items() if kind in ("phrase", "term")]
    others = [key for key, kind in kinds.items() if kind not in ("phrase", "term")]
    if len(others) + len(phrases) > MAX_ENTITIES:
        others.sort(key=lambda key: -len(surfaces[key]))  # stable: ties by first mention
        kept = set(others[: MAX_ENTITIES - len(phrases)] + phrases)
    else:
        kept = kinds.keys()

    names: dict[str, str] = {}
    entities: list[Entity] = []
    for key, kind in kinds.items():  # in order of first mention
        if key not in kept:
            continue
        forms = surfaces[key]
        name = forms[0] if len(set(forms)) == 1 else Counter(forms).most_common(1)[0][0]
        names[key] = name
        alias = aliases.get(name.upper()) if kind == "acronym" else None
        entities.append(Entity(name, kind, (alias,) if alias else ()))

    relations: list[Relation] = []
    linked: set[tuple[str, str]] = set()
    for member, owner in members:
        pair = (_key(member), _key(owner))
        if pair[0] in names and pair[1] in names and pair not in linked and len(relations) < MAX_RELATIONS:
            linked.add(pair)
            linked.add(pair[::-1])
            relations.append(Relation(names[pair[0]], names[pair[1]], "member_of"))
    by_sentence: dict[int, dict[str, None]] = {}
    for key, sentence, _, _ in keyed:
        if key in names:
            by_sentence.setdefault(sentence, {})[key] = None
    title = list(by_sentence.get(0, ())) if titled else []
    rest = [key for key in names if key not in title]
    groups = [list(group) for group in by_sentence.values() if len(group) > 1]
    _co_occurrences(groups, [(subject, key) for subject in title for key in rest], names, relations, linked)
    return Extraction(tuple(entities), tuple(relations))


def _co_occurrences(
    groups: list[list[str]],
    titled: list[tuple[str, str]],
    names: dict[str, str],
    relations: list[Relation],
    linked: set[tuple[str, str]],
) -> None:
    """Pairs sharing a sentence, nearest first, so the cap keeps the tightest links.

    Neighbours in a sentence come first, then the title's links, then pairs further
    apart in a sentence.
    """
    gap = 1
    while (groups or titled) and len(relations) < MAX_RELATIONS:
        pairs = [pair for group in groups for pair in zip(group, group[gap:])]
        if gap == 1:
            pairs += titled
            titled = []
        for pair in pairs:
            if pair not in linked:
                linked.add(pair)
                linked.add(pair[::-1])
                relations.append(Relation(names[pair[0]], names[pair[1]], "co_occurs"))
                if len(relations) == MAX_RELATIONS:
                    return
        gap += 1
        groups = [group for group in groups if len(group) > gap]
