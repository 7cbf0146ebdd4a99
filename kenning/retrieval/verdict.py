"""After fusion: which hits are true now, whether any answer is supported, one hit per place.

The steps, each in its own module, in order:

1. proximity (coverage.py): hits holding the query's words near each other go up;
2. dates (dates.py): for a query naming a period, a best document's chunk dated in
   it by a date of its own (a changelog's entry) takes the score of that document's
   best hit, and stands for it before the floor; hits dated outside the period go down;
   then hits lacking a phrase the person quoted go below those holding it (coverage.py);
3. the answer's lines: a document's chunk that holds more of the query (coverage.py),
   or, for a question asking for a kind of value, that states one (values.py), takes
   the place of its best chunk;
4. truth (truth.py): corrections, retractions, "now" questions, hedges and
   disagreements among the best hits; and notices that retract one of the best while
   sharing no word with the query, found by what they call it (notices.py);
5. crowding (diversity.py): a document's later hits go down, but never below a hit
   they correct or retract;
6. the floor (floors.py): no hits when the best of them support no answer, or none that
   may answer states the kind of value asked for (values.py);
7. one hit per place (diversity.py): no overlapping lines, no identical copies.

Each step that moves a hit says why in its `reasons` (`ken search --explain`). The store is
read once more, for the best hits only, in two statements run together: their full text,
and which of their documents an agent said another supersedes; and, only when one of
them corrects or retracts, how many chunks hold the words that say what it means; and
the keyword index, for notices that name the best three by their titles; and, for a
query naming a period, which chunks of the best three documents carry a date of
their own. Which of the query's terms and word pairs each of them holds is read from a scratch
index of just those chunks (store/scratch.py); the terms' counts were read alongside
the legs.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import date, timedelta
from functools import partial
from typing import NamedTuple

import numpy as np

from kenning.api import Hit
from kenning.config import RetrievalSettings
from kenning.retrieval import coverage, diversity, floors, notices, roles, truth, values
from kenning.retrieval.dates import TimeIntent, affinity, favour_periods, speaks_of
from kenning.retrieval.fusion import in_rank_order
from kenning.retrieval.query import KeywordQuery, parse, quote, term_probe
from kenning.store import fts
from kenning.store.database import Database
from kenning.store.fts import Probe
from kenning.store.hits import ChunkText, chunk_texts, load_hits, own_dates
from kenning.store.links import superseders
from kenning.store.scope import Scope
from kenning.store.vector_index import VectorIndex
from kenning.text import cjk
from kenning.text.statements import holder

# Hits read in full for the truth signals and the floor; past them nothing moves.
JUDGED = 30


# The hop: the page the best of these hits names for the question, or None.
Follow = Callable[[list[Hit]], Awaitable[Hit | None]]


@dataclass(frozen=True)
class Meaning:
    """The query's vector and the index it was compared with (None when the vector leg did not run)."""

    index: VectorIndex
    query: np.ndarray

    def to_query(self, ids: list[int]) -> dict[int, float]:
        return self.index.similarities(self.query, ids)

    def between(self, ids: list[int]) -> truth.Similarity:
        found, matrix = self.index.vectors_for(ids)
        rows = {item_id: row for row, item_id in enumerate(found)}

        def cosine(a: int, b: int) -> float | None:
            if a not in rows or b not in rows:
                return None
            return float(matrix[rows[a]] @ matrix[rows[b]])

        return cosine


async def _common(db: Database, words: set[str]) -> truth.Commonness:
    """Which of these words more than truth.COMMON_SHARE of the library's chunks hold, or
    more than truth.COMMON_DOCUMENTS of its documents, and at least truth.COMMON_FEWEST
    chunks; and which at most truth.RARE_DOCUMENTS documents hold."""
    if not words:
        return truth.Commonness()
    ordered = sorted(words)
    # A pair of CJK characters is counted where it is held: in the CJK index.
    probes = [Probe(quote(word), "cjk" if cjk.RUN.fullmatch(word) else "main") for word in ordered]
    chunks, documents = await asyncio.gather(
        fts.term_counts(db, probes), fts.term_counts(db, probes, documents=True)
    )
    counted = list(zip(ordered, chunks.matching, documents.matching))
    common = {
        word
        for word, in_chunks, in_documents in counted
        if in_chunks >= truth.COMMON_FEWEST
        and (in_chunks > chunks.total * truth.COMMON_SHARE or in_documents > documents.total * truth.COMMON_DOCUMENTS)
    }
    rare = {word for word, _, in_documents in counted if in_documents <= truth.RARE_DOCUMENTS}
    return truth.Commonness(frozenset(common), frozenset(rare))


class Settled(NamedTuple):
    hits: list[Hit]
    abstained: str | None
    # The best hits the floor judged, when it refused them.
    withheld: list[Hit]


async def settle(
    db: Database,
    text: str,
    hits: list[Hit],
    limit: int,
    settings: RetrievalSettings,
    asked: coverage.Asked | None,
    wanted: values.Wanted | None,
    meaning: Meaning | None,
    scope: Scope,
    follow: Follow | None = None,
) -> Settled:
    """The hits to return, best first, or why there are none when the floor refused
    them, with the best few it held back.

    `wanted` is the kind of value the query asks for, read only from a query worded as
    a question (retrieval/values.py). `follow` finds the page the best hit names (the
    hop), which may state the value a question asks for when the best hits do not."""
    if not hits:
        return Settled([], None, [])
    judged = hits[:JUDGED]
    # Every candidate's text: identical copies anywhere among them show as one hit.
    ids = [hit.item_id for hit in hits]
    chunks, superseded = await asyncio.gather(
        chunk_texts(db, ids), superseders(db, list(dict.fromkeys(hit.document_id for hit in judged)), scope)
    )
    texts = {item_id: chunk.content for item_id, chunk in chunks.items()}
    today = date.today()
    intent = TimeIntent.of(text, today)
    # An entry of the period asked about stands for its document's best hit, which holds
    # the question's words where the entry may hold none.
    standing_for: dict[int, int] = {}
    if intent.periods and not intent.clause:
        present = {hit.item_id for hit in hits}
        entries, read = await _entries_of_period(db, hits, intent, scope, asked.query if asked else parse(text))
        chunks.update(read)
        for entry, best in entries:
            if entry.item_id not in present:
                hits.append(entry)
            standing_for[entry.item_id] = best.item_id
        if standing_for:
            # Every hit's text was read above, and every entry's by `_entries_of_period`.
            texts.update((item_id, chunk.content) for item_id, chunk in read.items())
            in_rank_order(hits)
            judged = hits[:JUDGED]
    measured = None
    if asked is not None:
        measured = await asked.measure(
            {hit.item_id: (hit.title, hit.section, texts[hit.item_id]) for hit in judged if hit.item_id in texts},
            intent.words,
        )
    if measured is not None:
        coverage.reward_proximity(judged, measured)
    favour_periods(judged, intent)
    if measured is not None and asked is not None:
        coverage.quoted_first(judged, measured, asked.query.quoted)
    in_rank_order(hits)
    if measured is not None:
        # Before the kind of value, which may then prefer a chunk that states one.
        dated_in = (lambda hit: hit.date is not None and affinity(hit.date, intent.periods) >= 1) if intent.periods else None
        # "A learning budget of £1,000 a year" holds "money" for "How much money does
        # each person get per year...?" as the floor counts it, not the rules' "company
        # money" section.
        stated = (
            _held_as_values(measured.held, hits[:JUDGED], texts, wanted, measured, measured.shares) if wanted else None
        )
        coverage.cite_fullest(hits[:JUDGED], measured, dated_in, stated)
        in_rank_order(hits)
    if wanted is not None:
        # Before the truth signals, which then weigh the chunk that says the value.
        values.stating_first(hits[:JUDGED], texts, wanted)
        in_rank_order(hits)
    between = meaning.between([hit.item_id for hit in hits[: truth.DEPTH]]) if meaning else None
    # Two hits agree on what the question is about, not on the words naming the kind of
    # answer: "New departure time: 12:15" corrects the itinerary's ferry to Kristiansand,
    # which says "departs 08:00", though only it says "time".
    naming_kind = wanted.naming if wanted is not None else frozenset[str]()
    agreement = partial(coverage.agreement, measured, leaving_out=naming_kind) if measured is not None else None
    alike = partial(coverage.alike, measured) if measured is not None else None
    # The period asked about is no part of the subject: "staff" and "2025" on one line of
    # a January newsletter's travel correction do not make it about the 2025 ceilidh.
    keys = coverage.subject_keys(measured, intent.words) if measured is not None else []
    query = asked.query if asked is not None else parse(text)
    # The names the question asks about, not the period it names ("Q3").
    names = query.names - set(intent.words)
    # Numbers beside the words of a question asking for no kind of value ("how do I change
    # the default editor") are no answers a correction replaces: adduser's README "changed
    # to 0700" superseded tmux's changelog by them (bench/doc_marks.py).
    valued = wanted is not None and not query.procedure
    # The words naming the kind of answer ("date", "price") say what it is, not what it
    # is about; of a kind named by several ("which book band is Maya on now?"), those
    # before the last: "Maya is on Gold band now" names a band, "Billing message
    # templates" no message broker, nor "the standing desk" a laptop.
    kind = sorted(query.asked_for, key=text.lower().find)
    naming = naming_kind if wanted is not None else frozenset(kind[:-1])
    by_name = values.answered_by_name(text) if wanted is None else None
    answer_at = values.answers_at(text, wanted)
    sides = truth.read(hits, chunks, keys, answer_at, names, valued, naming, query.relating, by_name, query.asked_for)
    common = await _common(db, truth.naming_words(sides))
    truth.resolve(sides, intent, between, agreement, common, disagreeing=not query.procedure, alike=alike)
    truth.apply_stated(judged, superseded)
    in_rank_order(hits)
    for notice in await notices.tie(db, hits, chunks, scope):
        texts[notice.item_id] = chunks[notice.item_id].content
    truth.agree_with_nothing_taken_back(hits)
    # A document's first hit is counted in the order the truth signals left.
    in_rank_order(hits)
    diversity.spread(hits)
    truth.keep_above(hits)
    in_rank_order(hits)
    if asked is None or asked.query.question:
        truth.show_both_sides(hits)
        in_rank_order(hits)
    best = hits[: floors.DEPTH]
    held = None
    if measured is not None:
        held = measured.held | {
            entry: max(measured.held.get(entry, 0.0), measured.held.get(best_id, 0.0))
            for entry, best_id in standing_for.items()
        }
    if held is not None and measured is not None and wanted is not None:
        held = _held_as_values(held, best, texts, wanted, measured, measured.shares)
    coverage_best, similarity_best = floors.best_support(
        best, held, meaning.to_query([hit.item_id for hit in best]) if meaning else None
    )
    period = None
    # The best hits that speak of the period asked about (all of them when none is asked).
    of_period = [hit.item_id for hit in best]
    if intent.periods:
        beside = measured.beside_period if measured is not None else {}
        if measured is not None and wanted is not None:
            # "Postgres 16" on the decision log's line of February 2026 says what was
            # decided about Postgres versions then, without the word.
            beside = _held_as_values(beside, best, texts, wanted, measured, measured.beside_shares)
        # The rest of the question, which a line naming the period must hold some of: of
        # a relative clause naming it, the clause.
        rest: tuple[str, ...] = ()
        if asked is not None:
            rest = tuple(term for term in asked.query.terms if term not in intent.words)
            rest = tuple(term for term in rest if term in intent.clause) if intent.clause else rest
        of_period = [
            hit.item_id for hit in best if speaks_of(hit, texts.get(hit.item_id, ""), intent.periods, today, rest)
        ]
        if intent.clause:
            # The note that speaks of the period is the one the question goes through
            # ("the vessel whose bow thruster failed in March 2026"): it holds the clause,
            # and the page that answers may be dated any time.
            period = bool(of_period)
            of_period = [hit.item_id for hit in best]
        else:
            period = any(
                measured is None
                or max(beside.get(hit_id, 0.0), beside.get(standing_for.get(hit_id, hit_id), 0.0))
                >= floors.PERIOD_COVERAGE
                for hit_id in of_period
            )
    question = asked.query.question if asked is not None else True
    # What the question names is also what the notes write as a name, when it
    # capitalises nothing ("spurn point"): a value stated of something else is no answer.
    # Only here: the truth signals read values beside names on the lines naming them,
    # and "front tyre pressure golf" then found no pressure on the door sticker's line.
    named = names | (coverage.written_as_names(text, query, list(texts.values())) if wanted else frozenset())
    unstated = await _unstated(db, wanted, hits, texts, measured, asked, intent, follow, of_period, text, named)
    role = roles.asked(text) if wanted is None and question else None
    if role is not None and measured is not None:
        # What the role is of, as the question or the notes name it ("bramble's vet").
        seen = list(texts.values())
        owners = names | coverage.written_as_names(text, query, seen) | roles.owners_named(role, seen)
        unstated = _role_unstated(role, best, hits[:JUDGED], texts, owners, measured.absent)
    support = floors.Support(
        coverage_best,
        similarity_best,
        measured.unknown if measured is not None else [],
        period,
        unstated,
        question,
    )
    refused = floors.refusal(support, settings.min_coverage, settings.support_similarity)
    chosen = diversity.distinct(best if refused else hits, texts)[:limit]
    for hit in chosen:
        hit.score = round(hit.score, 6)
    return Settled([] if refused else chosen, refused, chosen if refused else [])


def _held_as_values(
    held: dict[int, float],
    best: list[Hit],
    texts: dict[int, str],
    wanted: values.Wanted,
    measured: coverage.Coverage,
    shares: dict[str, float],
) -> dict[int, float]:
    """Each best hit's share of the question (each word's share of it in `shares`: of the
    whole question, or of what a hit must hold beside the period it names), counting
    the words that name the kind of value asked for as held by a hit that states one:
    "Bicycles: £2.50 per single journey" answers "How much does it cost to bring a
    bicycle on the ferry?" without the word "cost", while "What colour are the RT-10
    tablets?" gains nothing from notes that give no colour, and "What is the deposit..."
    nothing from a rent."""
    said = wanted.said_by_any_value
    if not said:
        return held
    raised = dict(held)
    for hit in best:
        unheld = [word for word in said if Probe(term_probe(word)) not in measured.holds.get(hit.item_id, {})]
        if unheld and values.states(wanted, texts.get(hit.item_id, "")):
            raised[hit.item_id] = raised.get(hit.item_id, 0.0) + sum(shares.get(word, 0.0) for word in unheld)
    return raised


async def _unstated(
    db: Database,
    wanted: values.Wanted | None,
    hits: list[Hit],
    texts: dict[int, str],
    measured: coverage.Coverage | None,
    asked: coverage.Asked | None,
    intent: TimeIntent,
    follow: Follow | None,
    of_period: list[int],
    text: str,
    names: frozenset[str],
) -> str | None:
    """The kind of value the question asks for (retrieval/values.py) when no hit that may
    answer it states one: the best few about its subject and, when the question names a
    period, speaking of it (the 2025 festival report's ticket scans say nothing of 2026's
    tickets; `of_period` holds those best hits), and the page the best hit
    names (what the question links to: the far page of "the maintainer of DeltaHub",
    whatever words it holds), which the search puts second. Pages the graph walk alone
    reached further down are not asked: its tail reaches notes that hold some time or
    number about anything ("before 10:00" for the window cleaner's visits). Nor is a
    best hit about a namesake of what the question names (`coverage.not_namesakes`), nor
    the page a namesake names. A count must also stand on a page about the question's
    named subject, or on the best hit or a page it names: the words it stands beside
    ("seats") are as often another customer's. `names` are what the question names, as
    it capitalises them or the notes do ("spurn point" is Spurn Point). None for a form
    whose answer may give no value (what was decided about a thing's versions: a rule
    for old ones)."""
    if wanted is None or not wanted.form.refuses:
        return None
    if wanted.event and measured is not None and set(wanted.event) <= measured.absent:
        return f"{wanted.kind} of {' '.join(repr(word) for word in wanted.event)}, which no text names,"
    about = of_period
    # Whether the best hit is about what the question names: a namesake's page, and the
    # page it names, say nothing of the question's subject (the Ardnish booking office's
    # page names Skerrivaig's office, whose hours are not the Carrick office's).
    namesake = False
    if asked is not None:
        # A chunk's title and headings name what it is about as much as its text does.
        headed = {
            hit.item_id: f"# {hit.title}\n# {hit.section}\n{texts.get(hit.item_id, '')}"
            for hit in hits[:JUDGED]
            if hit.item_id in about or hit is hits[0]
        }
        kept = coverage.not_namesakes(list(dict.fromkeys([hits[0].item_id, *about])), headed, text, names)
        namesake = hits[0].item_id not in kept
        about = [item_id for item_id in about if item_id in kept]
    # The best hit, when it speaks of the period asked about: it is the far end of a
    # link as often as its subject ("the courier we use for Scotland").
    best = [hits[0].item_id] if hits[0].item_id in about else []
    if measured is not None and asked is not None:
        if not wanted.form.distance:
            # Any other kind is asked of the hits about the subject, and of the best hit
            # when the question names nothing that says what the subject is.
            left_out = asked.query.asked_for | intent.words | wanted.naming
            about = (best if not names else []) + coverage.about_subject(measured, about, left_out)
        else:
            # A count, a port or the like must stand near the words naming what it
            # measures, but "250 seats" on Halden Rail's page are not Kingsbridge Water's:
            # when the question names something, the other hits must hold the rarest of
            # its names or be pages the best hit names (Project Beryl's page names the
            # dataset it uses).
            linked = _named_by(hits[0], [hit for hit in hits[:JUDGED] if hit.item_id in about], texts) if best else []
            about = best + linked + coverage.about_subject(measured, about, frozenset(measured.specific) - names)
    if any(values.states(wanted, texts.get(item_id, "")) for item_id in about):
        return None
    kind = f"{wanted.kind} for the period it names" if intent.periods else wanted.kind
    page = await follow(hits) if follow is not None and not namesake else None
    if page is None:
        return kind
    named = texts.get(page.item_id)
    if named is None:
        chunk = (await chunk_texts(db, [page.item_id])).get(page.item_id)
        named = chunk.content if chunk is not None else ""
    return None if values.states(wanted, named) else kind


def _role_unstated(
    role: roles.Role,
    best: list[Hit],
    hits: list[Hit],
    texts: dict[int, str],
    names: frozenset[str],
    absent: frozenset[str],
) -> str | None:
    """The person a "who is the ..." question asks for (retrieval/roles.py) when no best
    hit has a line saying who holds the role: with every name of what it is of; else,
    when none says it is not filled yet, with those its document writes."""
    read = [(texts.get(hit.item_id, ""), (hit.title, hit.section)) for hit in best]
    if any(roles.states(role, text, headings, names, absent, strict=True) for text, headings in read):
        return None
    # Each document as the hits at hand hold it: Bramble's section beside Otis's.
    documents = {
        hit.document_id: "\n".join(texts.get(other.item_id, "") for other in hits if other.document_id == hit.document_id)
        for hit in best
    }
    if not any(roles.pending(role, text, headings, names) for text, headings in read) and any(
        roles.states(role, text, headings, names, absent, document=documents[hit.document_id])
        for hit, (text, headings) in zip(best, read)
    ):
        return None
    return f"the person who is its {str(role)!r}"


def _named_by(hit: Hit, others: list[Hit], texts: dict[int, str]) -> list[int]:
    """Those of the other hits whose page this hit names by its title, written as a name
    is, capitals and all: "It uses Forest Plot Measurements" links Project Beryl's page
    to the dataset's, which counts its records, while "their licences renew" names no
    page titled "Licences". A title of one word names it only inside a sentence, where a
    capital is no sentence's opening ("Notes: ..." is not the page "Notes")."""
    text = texts.get(hit.item_id, "")
    linked = []
    for other in others:
        title = other.title.strip()
        if other.document_id == hit.document_id or not title or title == title.lower():
            continue
        spelled = re.compile(r"(?<![\w-])" + r"\s+".join(re.escape(word) for word in title.split()) + r"(?![\w-])")
        if any(" " in title or not coverage.opens_sentence(text, match.start()) for match in spelled.finditer(text)):
            linked.append(other.item_id)
    return linked


async def _entries_of_period(
    db: Database, hits: list[Hit], intent: TimeIntent, scope: Scope, query: KeywordQuery
) -> tuple[list[tuple[Hit, Hit]], dict[int, ChunkText]]:
    """For each of the best documents whose best hit is not dated in the period asked
    about, its chunk that is, by a date of its own, with that best hit: "Which
    dispatch-api release went to production in July 2025?" finds the changelog by its
    name and words, whose best chunk is its introduction; the entry headed "2025.07.0
    (2025-07-15)" holds none of the question's other words, and the legs rank it far
    down or not at all. Of several such chunks, the one holding most of the question's
    words. It takes the document's best hit's score, which the period then lowers for
    the best hit alone (when it is dated). Entries the legs did not find are loaded; the
    caller adds them. Also the texts read of the chunks dated in the period."""
    leading: dict[int, Hit] = {}
    for hit in hits:
        if len(leading) == floors.DEPTH:
            break
        leading.setdefault(hit.document_id, hit)
    outside = {doc: hit for doc, hit in leading.items() if hit.date is None or affinity(hit.date, intent.periods) < 1}
    inside: dict[int, list[int]] = {}
    first = min(period.start.year for period in intent.periods)
    last = max((period.end - timedelta(days=1)).year for period in intent.periods)
    for item_id, document_id, dated in await own_dates(db, sorted(outside), first, last):
        if dated and affinity(dated, intent.periods) >= 1:
            inside.setdefault(document_id, []).append(item_id)
    ids = [item_id for dated in inside.values() for item_id in dated]
    if not ids:
        return [], {}
    found = {hit.item_id: hit for hit in hits}
    loaded, texts = await asyncio.gather(
        load_hits(db, [item_id for item_id in ids if item_id not in found], scope), chunk_texts(db, ids)
    )

    def held(hit: Hit) -> int:
        return sum(map(holder(f"{hit.title}\n{hit.section}\n{texts[hit.item_id].content}"), query.terms))

    entries: list[tuple[Hit, Hit]] = []
    for doc, dated in inside.items():
        candidates = [found.get(item_id) or loaded[item_id] for item_id in dated if item_id in found or item_id in loaded]
        candidates = [hit for hit in candidates if hit.item_id in texts]
        if not candidates:
            continue
        # The first of those holding most of the question's words.
        entry = max(candidates, key=held)
        best = outside[doc]
        entry.score = max(entry.score, best.score)
        entry.reasons.append(
            f"dated {entry.date} in the period asked about, unlike item {best.item_id}, its document's best hit"
        )
        entries.append((entry, best))
    return entries, texts

