"""How much of a query the best hits hold, and how close together: the keyword leg's
share of the abstention floor, and the proximity signal.

A hit's coverage is the share of the query's weight it holds, each term and quoted phrase
weighted by bm25's own idf, ln(1 + (N - n + 0.5) / (n + 0.5)), so a word in every chunk
counts for almost nothing and a word no chunk holds counts most (in a library of a few
notes, little more than the rarest word held: ABSENT_WEIGHT): a question naming
something the library has never heard of ("the Lisbon office") is never well covered,
however many of its other words a chunk shares. bm25 scores are not comparable across
queries; this share is.

Proximity: consecutive content words of the query that stand within a few tokens of each
other in a hit (FTS5 NEAR) are evidence the hit is about what the query says, not about
its words one at a time. Both are read for the best hits only, from a scratch index of
them (store/scratch.py), after the legs have run; the term counts run alongside the legs.
"""

from __future__ import annotations

import asyncio
import math
import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import takewhile

from kenning.api import Hit
from kenning.retrieval import diversity, values
from kenning.retrieval.query import CALENDAR, QUESTION_WORDS, KeywordQuery, phrase_probe, quote, term_probe
from kenning.store import fts, scratch
from kenning.store.database import Database
from kenning.store.fts import Probe
from kenning.store.hits import chunk_texts
from kenning.text import cjk
from kenning.text.stopwords import STOPWORDS

# A word no chunk holds weighs at most this many times a word one chunk holds. bm25's idf
# gives it ln(2N + 2) against ln(1 + (N - 0.5) / 1.5): 1.18 times as much in the truth
# set's library of 596 chunks, where the floors were chosen, but 1.8 times in a library
# of five notes, where the asker's own word for what a note says ("Which day does the
# butter arrive?": "delivered Tuesdays") outweighed all the note held, and fact questions
# over a few notes were refused for want of it (bench/README.md).
ABSENT_WEIGHT = 1.2

# Hits excerpted on the event loop; more are excerpted on a worker thread (Asked.excerpts).
EXCERPTS_ON_LOOP = 30

# A hyphenated name held by at most this many chunks is looked for in them as written.
SPELLED_OUT = 20

# Tokens apart that still count as near, and how many of the query's word pairs to try.
NEAR_DISTANCE = 6
MAX_PAIRS = 6
# Added to a hit's score, as a share of the best hit's, for holding all of the query's
# word pairs near each other (a part of that for some); set on the truth set's and
# NFCorpus's dev splits.
NEAR_BONUS = 0.15
NEAR_AMONG = 0.9
# What that share counts for, against the share of the query's weight, in choosing which
# of a document's chunks to cite (`cite_fullest`).
NEAR_IN_DOCUMENT = 1.0
# How far the last hit holding the quoted phrases goes above the best that does not.
QUOTED_STEP = 1e-3

@dataclass(frozen=True)
class Coverage:
    # Item id -> share of the query's weight the item holds.
    held: dict[int, float]
    # Item id -> the query's terms and phrases it holds, each with its weight.
    holds: dict[int, dict[Probe, float]]
    # Item id -> share of the query's consecutive word pairs that stand near each other.
    near: dict[int, float]
    # Item id -> share of the query's weight it holds leaving out the period's words and
    # those no chunk holds: what a hit vouching for the period must hold.
    beside_period: dict[int, float]
    # Names the query uses that no chunk holds ("the Lisbon office"), and things of the
    # asker's own ("my motorbike").
    unknown: list[str]
    # The query's single words, the most specific (rarest) first.
    specific: list[str]
    # The query's single words no chunk holds.
    absent: frozenset[str] = frozenset()
    # Each of the query's single words -> its share of the query's weight.
    shares: dict[str, float] = field(default_factory=dict)
    # Each of the words counted in `beside_period` -> its share of their weight.
    beside_shares: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class _Item:
    """One thing the query asks for: a term, a phrase, or a CJK piece."""

    label: str
    probe: Probe
    # A phrase's words, which stand in for it when no chunk holds the phrase itself
    # ("alkali-processed" where the text says "processed with alkali").
    words: tuple[Probe, ...] = ()


def _items(query: KeywordQuery, text: str) -> list[_Item]:
    items = [_Item(" ".join(p), Probe(phrase_probe(p)), tuple(Probe(quote(w)) for w in p)) for p in query.phrases]
    items += [_Item(term, Probe(term_probe(term))) for term in query.terms]
    items += [_Item(piece, Probe(quote(piece), "cjk")) for piece in dict.fromkeys(cjk.pieces(text))]
    return items


def written(name: str) -> re.Pattern[str]:
    """A hyphenated name or a dotted number as it may be written: its parts joined by a
    hyphen of any kind, an underscore, a point, a space or a line break, or by nothing
    ("BillingExporter"), the last one maybe plural."""
    parts = name.split()
    if not parts:
        # A name of no words is written nowhere.
        return re.compile(r"(?!)")
    # The question's plural of a name written in the singular ("edge-routers").
    if len(parts[-1]) > 3 and parts[-1].endswith("s") and not parts[-1].endswith("ss"):
        parts[-1] = parts[-1][:-1]
    # A version may be written "v2.1".
    start = r"(?<!\w)v?" if parts[0].isdigit() else r"(?<!\w)"
    parts = [re.escape(part) for part in parts]
    return re.compile(start + r"[-_.\s\u2010-\u2015]*".join(parts) + r"(?:e?s)?(?!\w)", re.IGNORECASE)


def _index_and_excerpt(
    held: scratch.Scratch, added: dict[int, tuple[str, str, str]], expression: str, ids: list[int]
) -> dict[int, str]:
    held.add(added)
    return held.excerpts(expression, ids)


def _pairs(query: KeywordQuery) -> list[tuple[str, str]]:
    words = list(query.terms)
    return list(zip(words, words[1:]))[:MAX_PAIRS]


def _near(pair: tuple[str, str]) -> Probe:
    return Probe(f"NEAR({quote(pair[0])} {quote(pair[1])}, {NEAR_DISTANCE})")


def idf(chunks: int, holding: int) -> float:
    """bm25's idf as Lucene has it, which FTS5 clamps where a term is in over half the chunks."""
    return math.log(1 + (chunks - holding + 0.5) / (holding + 0.5))


def weight(chunks: int, holding: int) -> float:
    """A term's weight in the query's coverage: its idf, but for a word no chunk holds at
    most ABSENT_WEIGHT times what a word one chunk holds weighs."""
    if holding or not chunks:
        return idf(chunks, holding)
    return min(idf(chunks, 0), ABSENT_WEIGHT * idf(chunks, 1))


class Asked:
    """What a query asks the keyword indexes, with their counts read while the legs run.

    The best hits are asked in a scratch index of their own (store/scratch.py), which then
    gives the returned hits' excerpts; `close` hands it back. Indexing a search's 30 best
    hits takes about 2 ms, and a hop to a worker thread and back cost more than asking
    the index, so it is filled and asked on the event loop."""

    def __init__(self, db: Database, query: KeywordQuery, text: str) -> None:
        self.db = db
        self.query = query
        self.items = _items(query, text)
        # The kind of value a fact question asks for (retrieval/values.py); the words
        # naming it ("phone number") say what the answer is, not what it is about.
        self.wanted = values.wanted(text) if query.question else None
        self.probes = list(dict.fromkeys(p for item in self.items for p in (item.probe, *item.words)))
        self.counts = asyncio.ensure_future(fts.term_counts(db, self.probes))
        self._scratch: scratch.Scratch | None = None

    def close(self) -> None:
        if not self.counts.done():
            self.counts.cancel()
        if self._scratch is not None:
            scratch.give_back(self._scratch)
        self._scratch = None

    def index(self, chunks: dict[int, tuple[str, str, str]]) -> scratch.Scratch:
        """Add these chunks (title, section, content) to the ones the query is asked of."""
        held = self._taken()
        held.add(chunks)
        return held

    def _taken(self) -> scratch.Scratch:
        if self._scratch is None:
            self._scratch = scratch.take()
        return self._scratch

    def indexed(self, item_id: int) -> bool:
        return self._scratch is not None and self._scratch.holds(item_id)

    async def excerpts(self, expression: str, hits: list[Hit]) -> dict[int, str]:
        """Highlighted excerpts of these hits where the expression's terms occur in them
        (the keyword index's `snippet()`); the hits not indexed yet are read and added.

        More than EXCERPTS_ON_LOOP hits are indexed and excerpted on a worker thread: for
        a search of 200 hits that took 50 ms of the loop's CPU, and 120 ms on a busy
        machine, while every other request waited."""
        if not hits:
            return {}
        missing = [hit for hit in hits if not self.indexed(hit.item_id)]
        texts = await chunk_texts(self.db, [hit.item_id for hit in missing]) if missing else {}
        added = {
            hit.item_id: (hit.title, hit.section, texts[hit.item_id].content) for hit in missing if hit.item_id in texts
        }
        ids = [hit.item_id for hit in hits]
        if len(hits) <= EXCERPTS_ON_LOOP:
            return self.index(added).excerpts(expression, ids)
        work = asyncio.ensure_future(asyncio.to_thread(_index_and_excerpt, self._taken(), added, expression, ids))
        try:
            return await asyncio.shield(work)
        except asyncio.CancelledError:
            # The thread still writes to the scratch index: it is not handed back for
            # another search to empty meanwhile, but dropped once the thread is done.
            self._scratch = None
            raise

    async def _unwritten(self, holding: dict[Probe, int]) -> set[str]:
        """The hyphenated names the index matches only through stemming: no chunk it
        matches writes "billing-exporter" (or "billing_exporter", "BillingExporter"), only
        "billing export". A name many chunks hold is taken as written."""
        if not self.query.question:
            return set()
        items = [
            item
            for item in self.items
            if item.words and item.label in self.query.names and 0 < holding[item.probe] <= SPELLED_OUT
        ]
        texts = await asyncio.gather(*(fts.matching_texts(self.db, item.probe.expression, SPELLED_OUT) for item in items))
        return {
            item.label for item, found in zip(items, texts) if not any(written(item.label).search(text) for text in found)
        }

    async def measure(
        self, chunks: dict[int, tuple[str, str, str]], period_words: frozenset[str] = frozenset()
    ) -> Coverage:
        """`chunks` are the best hits' (title, section, content); `period_words` are the
        query's words that name the period it asks about (retrieval/dates.py TimeIntent):
        what a hit vouching for the period must hold besides them is the rest of the
        question, and no chunk holding one is the period rule's to judge."""
        ids = list(chunks)
        counts = await self.counts
        holding = dict(zip(self.probes, counts.matching))
        unwritten = await self._unwritten(holding)
        weights: dict[Probe, float] = {}
        unknown: list[str] = []
        for item in self.items:
            n = holding[item.probe]
            if n == 0 and item.probe.index == "cjk":
                # A CJK piece no chunk holds is mostly a pair of characters across a word
                # boundary in the question's own phrasing, not something the library lacks.
                continue
            if n == 0 and item.label in period_words:
                # A period named as no note writes it ("FY2025", "H1"): whether a hit
                # speaks of it is the period rule's, by its date. Weighed as the rarest
                # word, it left "What was revenue in FY2025?" holding 26% of its weight.
                continue
            if n == 0 and item.words and all(holding[word] for word in item.words):
                for word in item.words:
                    weights[word] = weights.get(word, 0.0) + weight(counts.total, holding[word]) / len(item.words)
                if item.label in self.query.names:
                    # A hyphenated name ("invoice-archiver", "pg-analytics") whose words
                    # each occur somewhere is still a thing no text names.
                    unknown.append(item.label)
                continue
            weights[item.probe] = weights.get(item.probe, 0.0) + weight(counts.total, n)
            named = (item.label in self.query.names or item.label in self.query.owned) and item.label not in period_words
            if named and (n == 0 or item.label in unwritten):
                # A period's own name ("H1") is the period rule's.
                unknown.append(item.label)
        asked = list(weights)
        pairs = _pairs(self.query)
        found = self.index(chunks).holders(asked + [_near(pair) for pair in pairs])
        total = sum(weights.values()) or 1.0
        holds = {
            item_id: {probe: weights[probe] for probe, holders in zip(asked, found) if item_id in holders}
            for item_id in ids
        }
        held = {item_id: sum(holds[item_id].values()) / total for item_id in ids}
        labels = {item.probe: item.label for item in self.items} | {
            word: part for item in self.items for word, part in zip(item.words, item.label.split())
        }
        # What vouches for a period holds the rest of the question: not the period's own
        # words, nor words no chunk holds (which no hit could hold), nor the verb after
        # "did we", which the text may say its own way ("did we win": "New customers: 12").
        beside = {probe for probe in weights if labels.get(probe) in period_words or not holding[probe]}
        relation = {probe for probe in weights if labels.get(probe) in self.query.relating}
        if set(weights) - beside - relation:
            # Unless it is all the rest: "How much did we spend in H1 2025?" asks about spending.
            beside |= relation
        beside_period = _shares(holds, weights, beside)
        # A pair counts with the weight of its commoner word: "service listen" standing
        # together says little, "label_printer port" much.
        term_weight = {probe.expression: weight for probe, weight in weights.items()}
        pair_weights = [min(term_weight.get(term_probe(a), 0.0), term_weight.get(term_probe(b), 0.0)) for a, b in pairs]
        total_pairs = sum(pair_weights)
        near = {
            item_id: sum(w for w, holders in zip(pair_weights, found[len(asked) :]) if item_id in holders) / total_pairs
            for item_id in ids
        } if total_pairs else {}  # fmt: skip
        terms = [(weights.get(item.probe, 0.0), item.label) for item in self.items if item.label in self.query.terms]
        specific = [label for _, label in sorted(terms, key=lambda pair: -pair[0])]
        absent = frozenset(
            item.label for item in self.items if item.label in self.query.terms and not holding[item.probe]
        )
        shares = _word_shares(self.items, weights, set())
        beside_shares = _word_shares(self.items, weights, beside)
        return Coverage(held, holds, near, beside_period, unknown, specific, absent, shares, beside_shares)


def subject_keys(coverage: Coverage, period_words: frozenset[str]) -> list[str]:
    """The query's words that say what it is about, the most specific first, without
    those naming the period it asks about: what the truth signals (truth.py) look for
    on the line a cue stands on and in the notes it may mean. A run of CJK script is
    one word to the main index ("定例会議はどこで行いますか") that no note holds as such,
    so it stands as the pieces of the query that chunks hold ("定例", "会議"), the
    rarest first."""
    keys = [key for key in coverage.specific if key not in period_words and not cjk.RUN.search(key)]
    pieces = [label for label in coverage.shares if cjk.RUN.fullmatch(label)]
    return keys + sorted(pieces, key=lambda piece: -coverage.shares[piece])


def about_subject(coverage: Coverage, ids: list[int], left_out: frozenset[str]) -> list[int]:
    """Of these items, those holding the query's most specific word that any of them
    holds, leaving out `left_out` (the kind of answer, the period's words): the hits
    about what the question is about, not about the rest of its words ("Biscuit" in
    "What colour is Biscuit's coat?", not "colour"). All of them when none holds one."""
    for label in coverage.specific:
        if label in left_out:
            continue
        probe = Probe(term_probe(label))
        holding = [item_id for item_id in ids if probe in coverage.holds.get(item_id, {})]
        if holding:
            return holding
    return ids


# Capitalised words in a row, on one line: a name of several words ("Mobile Apps").
_RUN = re.compile(r"\b[A-Z]\w*(?:[ \t]+[A-Z]\w*)+")


def not_namesakes(ids: list[int], texts: dict[int, str], question: str, names: frozenset[str]) -> list[int]:
    """Of these items, all but those about a namesake of a name of several words the
    question uses, when one of them holds the name whole: the Mobile Platform team's
    page holds "Mobile" but is not about the Mobile Apps team, and a time it states is
    not their standup's. `texts` hold each item's title and headings with its text, so
    a later chunk of the Mobile Apps page that mentions the Platform team is still about
    the Apps team. The words are compared as written, not stemmed as the index does:
    "Apps" is not the "app" of "technician app"."""
    for match in _RUN.finditer(question):
        words = [word.lower() for word in match.group().split() if word.lower() in names]
        if len(words) < 2:
            continue
        whole = written(" ".join(words))
        if not any(whole.search(texts.get(item_id, "")) for item_id in ids):
            continue
        ids = [item_id for item_id in ids if not _namesake(texts.get(item_id, ""), whole, set(words))]
    for name, head in _named_things(question):
        if name.lower() in names:
            ids = [item_id for item_id in ids if not _another(texts.get(item_id, ""), name, head)]
    return ids


# A word and what may open a name: one letter of any script, then letters, digits or hyphens.
_WORD = re.compile(r"[^\W\d_][\w-]*|\S")
_DETERMINERS = frozenset("the a an our your their its this that".split())


def _named_things(question: str) -> list[tuple[str, str]]:
    """Each name of one word the question puts between a determiner and a common noun,
    with the noun (and the one after it): "the Carrick booking office" gives ("Carrick",
    "booking office"). A name of several words ("the Mobile Apps team") is a namesake's
    only by `_namesake`; a name with no determiner before it is as often the subject of a
    verb ("does Redis listen on")."""
    tokens = _WORD.findall(question)
    things = []
    for at, token in enumerate(tokens[:-2]):
        if token.lower() not in _DETERMINERS:
            continue
        end = at + 1
        while end < len(tokens) and tokens[end][0].isupper():
            end += 1
        head = list(takewhile(lambda word: word[0].islower() and word not in STOPWORDS, tokens[end : end + 2]))
        if end == at + 2 and head:
            things.append((tokens[at + 1], " ".join(head)))
    return things


def _fold(text: str) -> str:
    """Accents dropped, as the keyword index drops them: "Zürich" is "Zurich"."""
    return "".join(char for char in unicodedata.normalize("NFKD", text) if not unicodedata.combining(char))


def _another(text: str, name: str, head: str) -> bool:
    """Whether the text names the thing the question's head noun names under another
    name, and never under the question's: the Ardnish booking office's page, to "What
    are the opening hours of the Carrick booking office?". A capitalised word opening a
    sentence may be any word ("Every booking office..."), and names only in a heading;
    the caller puts the chunk's title and section before its text as headings."""
    text = _fold(text)
    if written(_fold(name).lower()).search(text):
        return False
    noun = written(head)
    for line in text.splitlines():
        heading = line.lstrip().startswith("#")
        for match in noun.finditer(line):
            # The word before the noun, looked for just before it: a line is read once.
            other = _LAST_WORD.search(line, max(0, match.start() - 64), match.start())
            if other is None or not other.group(1)[0].isupper() or other.group(1).lower() in STOPWORDS:
                continue
            if heading or not opens_sentence(line, other.start(1)):
                return True
    return False


def written_as_names(question: str, query: KeywordQuery, texts: list[str]) -> frozenset[str]:
    """The words of a question typed all in lower case that the notes write as names:
    with a capital inside a sentence, and never without one ("how much is the coach to
    spurn point" over a note on the trip to Spurn Point). Read as the asker would have
    capitalised them, the question names what the notes call by name; a word at a
    sentence's or a line's opening, in a title or in capitals says nothing, and one the
    notes also write in lower case ("the concert", "Spring Concert") is a word of the
    language. None when the question capitalises a word of its own: its lower-case words
    were meant so."""
    inner = _WORD.findall(question)[1:]
    if any(word[0].isupper() for word in inner) or not texts:
        return frozenset()
    candidates = [
        term
        for term in query.terms
        if term.isalpha() and len(term) > 2 and term not in STOPWORDS
        and term not in QUESTION_WORDS and term not in CALENDAR and term not in query.asked_for
    ]  # fmt: skip
    return frozenset(term for term in candidates if _written_as_name(term, texts))


def _written_as_name(term: str, texts: list[str]) -> bool:
    """Whether the texts write `term` with a capital inside a sentence, and never without
    one. Inside a sentence is after a word in lower case, on its line, with only other
    capitalised words between ("a trip to Spurn Point"), on a line writing some word
    but a function word in lower case: a word after a time, a bullet, a checkbox, a
    list's comma, in a title or in capitals ("07:00 Coach leaves", "• Coach", "snacks,
    Ticket", "Minutes of the Parish Council", "bring your PASSPORT") says nothing."""
    pattern = re.compile(rf"(?<![\w-]){re.escape(term)}(?![\w-])", re.IGNORECASE)
    named = False
    for text in texts:
        for match in pattern.finditer(text):
            if match.group()[0].islower():
                return False
            if not named and not match.group().isupper():
                # A run of capitalised words is short: its line's last words tell. A line
                # in a title's style ("# Minutes of the Parish Council") capitalises every
                # word but the function words.
                line_start = text.rfind("\n", 0, match.start()) + 1
                line_end = text.find("\n", line_start, line_start + NAME_LINE)
                line = text[line_start : line_end if line_end >= 0 else line_start + NAME_LINE]
                start = max(line_start, match.start() - NAME_REACH)
                named = _AFTER_LOWER_CASE.search(text, start, match.start()) is not None and any(
                    word[0].islower() and word not in STOPWORDS for word in _LINE_WORD.findall(line)
                )
    return named


# How far before a capitalised word the lower-case word before its run is looked for, and
# how much of its line is read for a word in lower case that is no function word.
NAME_REACH = 80
NAME_LINE = 400
_LINE_WORD = re.compile(r"[^\W\d_][\w'’-]*")
# A word in lower case, then capitalised words, each followed by a space, up to here.
_AFTER_LOWER_CASE = re.compile(r"(?:^|[ \t])[a-z][a-z'’]*[ \t]+(?:[A-Z][\w'’-]*[ \t]+)*$", re.MULTILINE)


def opens_sentence(text: str, position: int) -> bool:
    """Whether the word at `position` opens a sentence, where a capital says nothing:
    only a heading's hashes, a list's or a quote's marker, a table's bar or a number
    stand before it on its line, or the end of a sentence or a colon does."""
    start = text.rfind("\n", 0, position) + 1
    if position <= _MARKERS.match(text, start).end():
        return True
    return text[max(start, position - 8) : position].rstrip().endswith((".", "!", "?", ":"))


_MARKERS = re.compile(r"[\s\-*>|+#]*(?:\d+[.)]\s*)?")
_LAST_WORD = re.compile(r"([^\W\d_][\w-]*)[ \t]+$")


def _namesake(text: str, whole: re.Pattern[str], words: set[str]) -> bool:
    """Whether the text names something else with one of these words and not the name itself."""
    if whole.search(text):
        return False
    return any(words.intersection(word.lower() for word in run.group().split()) for run in _RUN.finditer(text))


def _shares(holds: dict[int, dict[Probe, float]], weights: dict[Probe, float], left_out: set[Probe]) -> dict[int, float]:
    """Each item's share of the query's weight, not counting `left_out`."""
    total = sum(weight for probe, weight in weights.items() if probe not in left_out)
    return {
        item_id: sum(weight for probe, weight in held.items() if probe not in left_out) / total if total else 1.0
        for item_id, held in holds.items()
    }


def _word_shares(items: list[_Item], weights: dict[Probe, float], left_out: set[Probe]) -> dict[str, float]:
    """Each of the query's words' share of its weight, not counting `left_out`."""
    total = sum(weight for probe, weight in weights.items() if probe not in left_out) or 1.0
    return {
        item.label: weights[item.probe] / total for item in items if item.probe in weights and item.probe not in left_out
    }


def agreement(coverage: Coverage, a: int, b: int, leaving_out: frozenset[str] = frozenset()) -> float | None:
    """How much of the query's weight held by the one of two items that holds less the
    other holds too, leaving out the words `leaving_out`; None when either was not
    measured."""
    return _shared(coverage, a, b, min, frozenset(Probe(term_probe(word)) for word in leaving_out))


def alike(coverage: Coverage, a: int, b: int) -> float | None:
    """How much of the query's weight held by the one of two items that holds more the
    other holds too: the NAS's backup page and the laptops' share every word of "When
    does the laptop backup run?" the laptops' page holds, but not the other way round."""
    return _shared(coverage, a, b, max)


def _shared(
    coverage: Coverage, a: int, b: int, which: Callable[[float, float], float], left_out: frozenset[Probe] = frozenset()
) -> float | None:
    """The weight both items hold, as a share of the weight `which` of the two holds."""
    if a not in coverage.holds or b not in coverage.holds:
        return None
    held_a = {probe: weight for probe, weight in coverage.holds[a].items() if probe not in left_out}
    held_b = {probe: weight for probe, weight in coverage.holds[b].items() if probe not in left_out}
    whole = which(sum(held_a.values()), sum(held_b.values()))
    return sum(w for probe, w in held_a.items() if probe in held_b) / whole if whole else 0.0


def reward_proximity(hits: list[Hit], coverage: Coverage) -> None:
    """Words standing together rank a hit up among those that hold about as much of the
    query as the best one does (NEAR_AMONG of its share): a page naming two of the words
    side by side must not pass one that holds them all further apart."""
    best = max(coverage.held.values(), default=0.0)
    # In units of the best hit's score, so the bonus means the same under rank fusion,
    # whose scores are a few hundredths, as under score fusion, whose best is about 1.
    scale = max((hit.score for hit in hits), default=0.0)
    for hit in hits:
        share = coverage.near.get(hit.item_id, 0.0)
        if share and coverage.held.get(hit.item_id, 0.0) >= NEAR_AMONG * best:
            bonus = NEAR_BONUS * share * scale
            hit.score += bonus
            # Two significant figures: under rank fusion a bonus is a few ten-thousandths.
            hit.reasons.append(f"query words near each other (+{bonus:.2g})")


def quoted_first(hits: list[Hit], coverage: Coverage, quoted: frozenset[str]) -> None:
    """Hits holding every phrase the person put in quotes rank above every hit that does
    not: quotes say the words must stand so ("Which service had a "soft launch"?" is not
    answered by the notice that says "service" three times). Unless no chunk holds them,
    where their words stood in for them and nothing is moved. They go up rather than the
    others down: score fusion puts its last candidate at 0, and nothing goes below that.
    `hits` are those judged; the caller sorts again."""
    probes = [Probe(quote(phrase)) for phrase in quoted]
    measured = [hit for hit in hits if hit.item_id in coverage.holds]
    holds_all = {hit.item_id: all(probe in coverage.holds[hit.item_id] for probe in probes) for hit in measured}
    holding = [hit for hit in measured if holds_all[hit.item_id]]
    lacking = [hit.score for hit in measured if not holds_all[hit.item_id]]
    if not probes or not holding or not lacking:
        return
    lift = max(lacking) - min(hit.score for hit in holding)
    if lift < 0:
        return
    lift += QUOTED_STEP
    for hit in holding:
        hit.score += lift
        hit.reasons.append(f"holds the quoted {', '.join(repr(phrase) for phrase in sorted(quoted))} (+{lift:.3f})")


def cite_fullest(
    hits: list[Hit],
    coverage: Coverage,
    of_period: Callable[[Hit], bool] | None = None,
    held: dict[int, float] | None = None,
) -> None:
    """Within one document, the chunk holding more of the query's weight than the
    document's best chunk takes that one's place: a chat export's first line names the
    channel and the month the question names, a runbook's introduction the task, and the
    message or the step that answers holds the rest of the question. Other documents
    keep their places. `hits` is best first (the caller sorts again).

    `of_period`: whether a chunk is dated in the period the question names; one that is
    keeps its place before one that is not (a changelog's entry for July before its
    introduction, which names the service and says what the dates mean).

    `held`: each hit's share of the query, when it is not `coverage.held` (the words
    naming the kind of value asked for counted as held by a chunk that states one).
    Only the chunks `coverage` measured take part: one it did not (it rose into the
    judged hits when those above it were lowered for their period) counts there as
    holding the naming words alone, and was cited for a value it states though nothing
    said it held any of the question's other words.

    The share of the query's word pairs a chunk holds near each other (`near`) counts
    as much as the share of its weight: the changelog's entry that says "send an
    `Idempotency-Key` header" answers "Which header should I send...?", while an older
    entry holding a little more of the question's words one at a time ("created",
    "duplicate", "request ids" on another line) says nothing of a header. Counted from
    half as much to one and a half times as much, the truth set's dev and tune splits
    pass the same questions; at 0.4 the older entry is still cited."""
    held = coverage.held if held is None else held

    def fullness(hit: Hit) -> float:
        return held[hit.item_id] + NEAR_IN_DOCUMENT * coverage.near.get(hit.item_id, 0.0)

    def better(hit: Hit, best: Hit) -> bool:
        if of_period is not None and of_period(best) and not of_period(hit):
            return False
        return fullness(hit) > fullness(best)

    measured = [hit for hit in hits if hit.item_id in coverage.held]
    diversity.lead_with(measured, better, "holds more of the query")
