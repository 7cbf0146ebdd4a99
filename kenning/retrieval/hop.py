"""Multi-hop questions: the page about what the best hit names for the question.

"Which city does the lead of Project Lantern work from?" is answered by a page that never
names Project Lantern (Aisha Okafor's), and found through a note that does ("Project lead:
Aisha Okafor"). Every leg ranks that note first and the page far down: it shares no word
with the question but the lead's name, which the question does not know. The line of the
best hit that holds the question's own words and names someone or something with a page
of its own (a chunk titled with that entity's name, store/graph.py), or an identifier
("rota-service", "pg-pay-2") that another document is titled with, is the bridge; the
page is put right after it. Identifiers are looked up by title because extraction
takes a lowercase hyphenated word for prose: "Source system: rota-service" names the
service's page as a wiki link would, and so does "the ledger service" the page titled
"ledger". Capitalised words are looked up among the names with a page, because
extraction takes a lone one at a line's start or after a colon for a sentence opener:
"Winter lay-up berth: Skerrivaig inner basin" names Skerrivaig's page.

The line is a sentence, its paragraph's hard-wrapped lines read as one. A paragraph
about a person names her manager, her team and her former employer, and the sentence
holding the question's words ("Ines reports to Marta Quist.") says which one the
question links to; a sentence holding none of them ("It is built on top of
conf_loader.") still counts what its paragraph holds, after those that hold some. On
bench/multihop.py, against whole paragraphs, this put the answer page in the top 10 for
14 more of its 150 two-hop questions and out of it for 5, where the paragraph's
first-named page had been right by the order alone.

A thing the line names that has no page of its own ("The Core Dispatch team checks the
dead letter queue") is followed to the best chunk of another document that names it
and holds the question's words the line does not ("Which service is owned by..."): the
catalogue's row "dispatch-api | Core Dispatch". On the truth set's tune split this
answered one more multi-hop question and moved no other; bench/multihop.py, whose pages
are all titled, is unchanged. For a question asking for a kind of value, a run of
capitalised words the line names with no page ("MOT and servicing at Lochside Motors")
is followed too, but only to a line that names it, holds a word of the question and
states that kind of value (the contacts list's "Lochside Motors (garage): 01999 412
880") or, under its table's header, the kind of thing asked for ("Which vessel..."); and
only from the best hit. Without the question's word on that line, and from
the note below the best hit too, it answered two unanswerable questions of the tune
split and one of the third set (bench/README.md).

The page is never one the question names itself ("the owning project of the
export_worker service"): a service catalogue's row "export_worker was built for Project
Basalt" names the service's own page as well as the project's, and the question reached
the service already. On bench/multihop.py this put the answer page in the top 10 for 7
more of its 150 two-hop questions; one single-hop question, answered by its subject's
page, has it third rather than second.

Only questions that ask for a fact take the hop, and not one asking how the asker does
something ("How do I add a trusted key for an apt repository?"): an instruction answers
it, and the page its best hit names is no step of it. Over 120 questions a user might
ask of a Debian system's documentation (2,469 of its files), 45 of the 86 pages a hop
put among the top five answered such a question, none of them usefully; the multi-hop
sets ask none (bench/README.md). A page is one short document (store/graph.py
PAGE_CHUNKS). It is taken from the best hit, whose page goes second, and from the next
document's best hit, whose page goes after it unless the hits hold that page already:
the note that links the question on is often not the best hit but the update below it
("From now on Eric Hoffmann reports to Luca Virtanen" under Eric's own page, which names
no manager). That second hop put the answer page in bench/multihop.py's top 10 for 10
more of its two-hop questions and moved nothing on the truth sets; letting it move a
page already among the hits put a retracted claim above the policy it contradicts. Its
linking sentence must itself hold something of the question: a note below the best hit
that names a port in passing pushed the answer to "How do the ships get electricity
overnight at Ardnish?" out of the top five. So a clean question that the best hit
answers itself keeps that answer first and loses two places at most below it. A line
holding a word of the question other than its names, where the relation is said ("lead",
"maintainer", "source system"), comes before one holding only names; that one still
links (a table row naming the model asked about). Hopping only from the lines that hold
most of those words, rather than from the best line naming a page, lost 10 and 20 of the
150 two-hop answers found on bench/multihop.py's two worlds: the sentence that holds the
question's words often names nothing with a page.

When no line holding the question's words names anything, the note says what the
question goes through in words of its own ("Lead: Nadia Quinn." on the seed library
pilot's page, for "the person running" it; "It is based in Kestrup." for Cinder Works'
"home town"), and the page it names first, outside its headings, is the hop. Not when
its line holding most of the question names the link by no page's name ("Calls only at
Carrick pier", whose page is titled "Carrick pier"): the first-named page (the route's
ship) pushed the pier's page out of the top five. On bench/multihop.py's committed
world and two unseen ones this found the answer page for 1, 1 and 3 more two-hop
questions and moved three from third to fourth; on the truth sets it answered one more
multi-hop question of held-out A's dev half and moved nothing else.
"""

from __future__ import annotations

import asyncio
import calendar
import re
from collections.abc import Callable
from functools import partial

from kenning.api import Hit
from kenning.retrieval import values
from kenning.retrieval.query import KeywordQuery, phrasal, quote
from kenning.store import fts, graph
from kenning.store.database import Database
from kenning.store.hits import chunk_texts, load_hits
from kenning.store.scope import Scope
from kenning.text.names import normalize_name
from kenning.text.statements import framed, holder, holds_any, sentences, statements, word_among
from kenning.text.stopwords import GENERIC_VERBS, STOPWORDS

_WORD = re.compile(r"\w+")
# Chunks naming a thing with no page of its own that are read for the one to follow,
# how many such names of the best line are tried, and how many capitalised names of
# the bridge's lines in all.
MENTIONS = 5
NAMED_UNPAGED = 3
# Chunks naming a thing with no page of its own that are read for a line stating the
# kind of value asked for.
STATING = 20
_CALENDAR = frozenset(
    name.casefold() for names in (calendar.month_name, calendar.month_abbr, calendar.day_name) for name in names if name
)
# Capitalised names a bridge's lines write that are looked up among the pages.
CALLED = 100
# A run of capitalised words ("Skerrivaig inner basin" starts one).
_CAPITALISED = re.compile(r"\b[A-Z][\w'&-]*(?:[ \t]+[A-Z][\w'&-]*)*")
# Words joined by hyphens or underscores: the names of services, clusters, datasets.
# An identifier is a whole run of word characters and hyphens (nothing of one before or
# after it) that is `\w+(?:[-_]\w+)+`: no hyphen at either end or doubled, and a hyphen
# or underscore inside it. That pattern as a regex nests `_` (a word character) in a
# repeat of itself and backtracks exponentially on a run it does not match ("ab_" * 22
# followed by "-" held the daemon's loop for seconds), so a run is found possessively and
# checked by hand.
_RUN = re.compile(r"(?<![\w-])[\w-]++")


def _identifiers(line: str) -> list[str]:
    r"""What `(?<![\w-])\w+(?:[-_]\w+)+(?![\w-])` finds in the line, in linear time."""
    return [
        run
        for run in _RUN.findall(line)
        if run[0] != "-" and run[-1] != "-" and "--" not in run and ("-" in run or "_" in run[1:-1])
    ]
# "the ledger service", "the Core Dispatch team": a name and the kind of thing it is,
# whose page is titled with the name alone.
_KIND_NAMED = re.compile(
    r"\b(?:the|our|a|an)\s+((?:[\w-]+\s+)?[\w-]+)\s+"
    r"(?:service|team|cluster|database|app|system|project|dataset|queue|pipeline|library|repo)\b",
    re.IGNORECASE,
)


def _name_words(query: KeywordQuery) -> set[str]:
    return {part for name in query.names for part in name.split()}


def _weight(line: str, query: KeywordQuery, linking: bool = False) -> tuple[int, int]:
    """How many of the question's other words and of its names a line holds.

    `linking`: leave out the words naming the kind of answer ("engines" in "What engines
    are fitted to the ship Ally Munro commands?") unless the line names the question's
    subject too. A line holding them about something else states an answer of its own,
    it does not say where to look: "Ailsa Grant | Engineer-mate | MV Puffin" is not the
    row that names Ally Munro's ship."""
    words = [word.casefold() for word in _WORD.findall(line)]
    name_words = _name_words(query) | {word for phrase in query.phrases for word in phrase}
    among = word_among(words)
    elsewhere = linking and not any(word in name_words for word in words)
    held = [term for term in query.terms if among(term) and not (elsewhere and term in query.asked_for)]
    held += [word for phrase in query.phrases for word in phrase if word in words]
    return len({t for t in held if t not in name_words}), len({t for t in held if t in name_words})


def _capitalised(line: str) -> list[str]:
    """Each run of capitalised words on a line and its leading words ("Skerrivaig",
    "Skerrivaig Inner"): a name the graph has a page for, whether or not extraction
    read it as one here."""
    runs = [match.split()[:4] for match in _CAPITALISED.findall(line)]
    return [" ".join(words[:end]) for words in runs for end in range(1, len(words) + 1)]


def _named_at(normalized: str, norms: list[str]) -> int | None:
    """Where on a line (normalized, padded with spaces) the first of these names stands,
    or None."""
    found = [re.search(r"(?<!\w)" + re.escape(norm) + r"(?!\w)", normalized) for norm in norms if norm]
    return min((match.start() for match in found if match), default=None)


async def follow(
    db: Database,
    query: KeywordQuery,
    hits: list[Hit],
    scope: Scope,
    said_there: bool = False,
    wanted: values.Wanted | None = None,
) -> Hit | None:
    """The page the best hit names for the question, as a hit to put after it; None
    when the question is not a fact question, or the best hit names no such page.

    `said_there`: the sentence naming the page must itself hold a word or a name of the
    question, not only its paragraph: what a hit below the best says in passing ("The
    Skerrivaig cafe closed in 2025") is no link. `wanted`: the kind of value the question
    asks for, which a line of another note naming what has no page may state."""
    if not query.question or query.procedure or not hits:
        return None
    bridge = hits[0]
    texts = await chunk_texts(db, [bridge.item_id])
    if bridge.item_id not in texts:
        return None
    # A sentence that holds the question's words comes first; one that holds none ("It is
    # built on top of conf_loader.") still speaks of what its paragraph does.
    lines = [
        (line, (*_weight(line, query, linking=True), *weight))
        for statement in statements(texts[bridge.item_id].content)
        if (weight := _weight(statement, query)) != (0, 0)
        for line in sentences(statement)
    ]
    identifiers = {normalize_name(found) for line, _ in lines for found in _identifiers(line)}
    # "the new ledger service" may name the ledger's page, or the new ledger's.
    identifiers |= {
        normalize_name(name)
        for line, _ in lines
        for found in _KIND_NAMED.findall(line)
        for name in (found, found.split()[-1])
    }
    pages = await graph.pages_named_by(db, bridge.item_id)
    named = {norm for norm, _, _ in pages}
    titled = await graph.pages_titled(db, sorted(identifiers - named - query.names), bridge.document_id)
    pages += [(name, [], page) for name, page in titled]
    capitalised = {normalize_name(name) for line, _ in lines for name in _capitalised(line)}
    paged = {norm for norm, _, _ in pages}
    pages += await graph.pages_called(db, sorted(capitalised - paged - query.names)[:CALLED], bridge.document_id)
    paged |= {norm for norm, _, _ in pages}
    # Words of the question: a page whose name is all of them is what the question names.
    said = set(query.terms) | _name_words(query)
    candidates = [(norm, aliases, page) for norm, aliases, page in pages if not set(_WORD.findall(norm)) <= said]
    # The line holding most of the question, its first on a tie; on it, the page named
    # first ("Sanne came to us from Orchard Lane Capital and works in Varnholm").
    best: tuple[tuple[tuple[int, ...], int, int], list[int]] | None = None
    for index, (line, weight) in enumerate(lines):
        if said_there and weight[:2] == (0, 0):
            continue
        normalized = f" {normalize_name(line)} "
        for norm, aliases, page in candidates:
            if (at := _named_at(normalized, [norm, *aliases])) is None:
                continue
            key = (weight, -index, -at)
            if best is None or key > best[0]:
                best = (key, page)
    answers = _answering(query, wanted)
    if best is not None:
        page_ids: list[int] | None = best[1]
    else:
        # What the note below the best hit names in passing is followed no further
        # than to a page, or a note holding the question's words.
        mentioned = await _mentioning(db, query, bridge, lines, paged, scope, None if said_there else answers)
        if mentioned is not None or said_there:
            return mentioned
        # The line holding most of the question names the link, but by no page's name
        # ("Calls only at Carrick pier"): another page is no better a guess.
        top = max(lines, key=lambda pair: pair[1], default=None)
        if top is not None and _unpaged_names(top[0], paged, query, _name_words(query)):
            return None
        page_ids = _first_named(texts[bridge.item_id].content, query, candidates)
        if page_ids is None:
            return None
    loaded = await load_hits(db, page_ids, scope)
    if not loaded:
        return None
    page_texts = await chunk_texts(db, list(loaded))

    def fit(hit: Hit) -> tuple[bool, int, int]:
        text = page_texts[hit.item_id].content if hit.item_id in page_texts else ""
        return answers is not None and answers(text), sum(_weight(text, query)), -hit.item_id

    # The page's chunk that states the kind of value asked, or names the kind of thing
    # ("Main engines: 2 x Yanmar" for "What engines..."), then that holds most of the
    # question, its first on a tie.
    chosen = max(loaded.values(), key=fit)
    chosen.reasons.append(f"named by the hit above it ({bridge.path}:{bridge.line_start}-{bridge.line_end})")
    return chosen


def _first_named(
    text: str, query: KeywordQuery, candidates: list[tuple[str, list[str], list[int]]]
) -> list[int] | None:
    """The page the best hit names first, in a sentence holding none of the question's
    words: the note is about what the question asks through, in its own words ("Lead:
    Nadia Quinn." on the seed library pilot's page, for "the person running the seed
    library pilot"; "It is based in Kestrup." for "the home town of Cinder Works")."""
    # A heading names the note itself, not a link ("# Charter" over a copy of the page
    # titled "Charter").
    quiet = (
        statement
        for statement in statements(text)
        if not statement.lstrip().startswith("#") and _weight(statement, query) == (0, 0)
    )
    for line in (line for statement in quiet for line in sentences(statement)):
        normalized = f" {normalize_name(line)} "
        named = [(_named_at(normalized, [norm, *aliases]), page) for norm, aliases, page in candidates]
        named = [(at, page) for at, page in named if at is not None]
        if named:
            return min(named, key=lambda pair: pair[0])[1]
    return None


async def _mentioning(
    db: Database,
    query: KeywordQuery,
    bridge: Hit,
    lines: list[tuple[str, tuple[int, ...]]],
    paged: set[str],
    scope: Scope,
    answers: Callable[[str], bool] | None,
) -> Hit | None:
    """Where the bridge's best line names something with no page of its own ("The Core
    Dispatch team checks the dead letter queue"), the best chunk of another document
    that names it too and holds half or more of the question's words the line does not
    ("Which service is owned by..."; with one or two such words, one): the catalogue's
    row "dispatch-api | Core Dispatch". Or, where the question asks for a kind of value
    or names the kind of thing it wants (`answers`), the best chunk with a line that
    names it and answers: "Lochside Motors (garage): 01999 412 880" in the contacts
    note, for the phone number of the garage the car's note names; "| Morven Shaw |
    Deckhand | MV Gannet |" under "| name | rank | vessel |", for the vessel the
    competition's winner works on. A register or a list is no page about what it lists,
    and says what it says of each in a row of its own words."""
    name_words = _name_words(query)
    # Capitalised names already followed from an earlier line, in vain.
    tried: set[str] = set()
    for line, _ in sorted(lines, key=lambda pair: pair[1], reverse=True):
        names = _unpaged_names(line, paged, query, name_words)
        names = [(name, capitals) for name, capitals in names if not capitals or (answers and name not in tried)]
        # At most NAMED_UNPAGED capitalised names over all the lines.
        left = NAMED_UNPAGED - len(tried)
        names = [pair for pair in names if not pair[1] or (left := left - 1) >= 0]
        if not names:
            continue
        among = holder(line)
        # Not what any text may say its own way, nor the period asked about.
        rest = [
            term
            for term in query.terms
            if not among(term) and term not in name_words and term not in GENERIC_VERBS and term.isalpha()
        ]
        if not rest and answers is None:
            return None
        for name, capitals in names:
            found = await _naming(db, name, capitals, rest, bridge, scope, answers)
            if found is not None:
                found.reasons.append(
                    f"names {name!r} as the hit above it does ({bridge.path}:{bridge.line_start}-{bridge.line_end})"
                )
                return found
        if not all(capitals for _, capitals in names):
            return None
        tried.update(name for name, _ in names)
    return None


async def _naming(
    db: Database,
    name: str,
    capitals: bool,
    rest: list[str],
    bridge: Hit,
    scope: Scope,
    answers: Callable[[str], bool] | None,
) -> Hit | None:
    """Another document's best chunk that names `name` and holds half or more of `rest`,
    or, failing that, has a line naming it that `answers` and holds a word of `rest` (if any)
    ("Lochside Motors (garage): 01999 412 880"; "PadoTicket: licence £18,400 a year").
    `capitals`: the name is a run of capitalised words, which only the second may
    follow."""
    if rest and not capitals:
        either = " OR ".join(quote(term) for term in rest)
        ranked = [item_id for item_id, _ in await fts.rank(db, f"{quote(name)} AND ({either})", MENTIONS, scope)]
        loaded, texts = await asyncio.gather(load_hits(db, ranked, scope), chunk_texts(db, ranked))
        for item_id in ranked:
            hit = loaded.get(item_id)
            if hit is None or hit.document_id == bridge.document_id or item_id not in texts:
                continue
            if 2 * sum(map(holder(texts[item_id].content), rest)) >= len(rest):
                return hit
    if answers is None:
        return None
    ranked = [item_id for item_id, _ in await fts.rank(db, quote(name), STATING, scope)]
    loaded, texts = await asyncio.gather(load_hits(db, ranked, scope), chunk_texts(db, ranked))
    for item_id in ranked:
        hit = loaded.get(item_id)
        if hit is None or hit.document_id == bridge.document_id or item_id not in texts:
            continue
        naming = [
            f"{frame}\n{unit}" for frame, unit in framed(texts[item_id].content)
            if _named_at(f" {normalize_name(unit)} ", [name])
        ]
        if any(answers(line) and holds_any(line, rest) for line in naming):
            return hit
    return None


def _answering(query: KeywordQuery, wanted: values.Wanted | None) -> Callable[[str], bool] | None:
    """Whether a line, with what frames it, answers the question: states the kind of
    value it asks for, or holds the word naming the kind of thing ("| name | rank |
    vessel |" over a crew list's row, for "Which vessel..."); None when the question
    says neither."""
    if wanted is not None:
        return partial(values.states, wanted)
    if query.asked_for:
        kinds = sorted(query.asked_for)
        return partial(holds_any, terms=kinds)
    return None


def _capitalised_names(line: str) -> list[str]:
    """The runs of capitalised words a line writes ("Lochside Motors", "PadoTicket"),
    longest first; of a run opening the line, the words after its first, which opens a
    sentence whatever it is ("At Lochside Motors the MOT..."). Not a function word or a
    short abbreviation ("I", "OK", "HR": a search for it matches almost every chunk), nor
    the name of a month or a day ("MOT due every May")."""
    opening = re.match(r"[\s\-*|>#\d.)]*", line)
    start = opening.end() if opening else 0
    runs = []
    for match in _CAPITALISED.finditer(line):
        words = match.group().split()[1:] if match.start() <= start else match.group().split()
        while words and _too_common(words[0]):
            words = words[1:]
        if words and not (len(words) == 1 and _too_common(words[0])) and not {w.casefold() for w in words} <= _CALENDAR:
            runs.append(" ".join(words))
    return sorted(runs, key=lambda run: -len(run.split()))


def _too_common(word: str) -> bool:
    return word.casefold() in STOPWORDS or (word.isupper() and len(word) <= 3) or len(word) == 1


def _unpaged_names(line: str, paged: set[str], query: KeywordQuery, name_words: set[str]) -> list[tuple[str, bool]]:
    """What a line names that has no page, surest first and at most NAMED_UNPAGED: a
    capitalised team, service or the like ("the Core Dispatch team"), an identifier with
    a digit or an underscore ("sms_gateway", "eu-west-2"), then any hyphenated one
    ("rota-service", but also "re-drives": only the question's words decide between
    them), then a run of capitalised words ("Lochside Motors"), marked True. Not one the
    question says itself ("the job queue" names "job").

    A run of capitalised words is followed only to a line stating the kind of value
    asked for: the chunks holding "PadoTicket" and "year" are any notes about the
    system, a row of the register stating what it costs a year is what was asked."""
    kinds = [
        [found for found in _KIND_NAMED.findall(line) if found[:1].isupper()],
        [found for found in _identifiers(line) if re.search(r"[\d_]", found)],
        # Not a word of the language ("self-service", "full-time", "check-in").
        [found for found in _identifiers(line) if not phrasal(tuple(re.split(r"[-_]", found.lower())))],
    ]
    said = set(query.terms) | name_words
    names: list[tuple[str, bool]] = []
    spelled = [(found, False) for kind in kinds for found in kind] + [(found, True) for found in _capitalised_names(line)]
    for found, capitals in ((normalize_name(found), capitals) for found, capitals in spelled):
        words = _WORD.findall(found)
        seen = found in paged or any(found == name for name, _ in names)
        if seen or not any(word.isalpha() for word in words) or set(words) <= said:
            continue
        names.append((found, capitals))
    return names[:NAMED_UNPAGED]
