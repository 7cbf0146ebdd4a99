"""Notices that take back one of the best hits, found by what they call it.

A retraction often shares no word with the question that finds the claim: "At what age
should adult non-fiction be taken off the shelves?" finds the weeding guidance, and the
policy's later line "the weeding guidance of 9 March is withdrawn" says nothing of age
or shelves. The truth signals (truth.py) tie a notice to a claim only on a line naming
the question's words, so such a notice, whether or not a leg found it, was never tied
and the withdrawn rule answered alone. A notice names what it takes back as a person
would, by its title: two words standing together in the claim's title ("weeding
guidance", "Oakridge shelving") on the line that says "withdrawn". So for the best few
hits, the keyword index is asked for chunks dated after them that hold such a pair of
title words, and their cues are read. One whose retraction cue stands on a line holding the
pair is the notice when that line also names the claim's time ("the guidance of 9
March", "the report of 19 January 2026") or every word of a title longer than the pair:
a pair alone may name the subject rather than the note ("disregard the billing service
alert" is no retraction of the runbook "Restart the billing service"). A hedged notice
("if we were to withdraw...") takes nothing back, nor does one taking back the withdrawal
of the note it names ("disregard the withdrawal of the glaze firing report of 2 May"). The
notice goes just above the claim, which carries `retracted_by`, even when a correction
already supersedes it: a note corrected once and withdrawn later carries both. Nothing is
dropped.

A Chinese, Japanese or Korean title has no spaces ("出張規程"), and a notice runs its name
into the words around it ("出張規程を撤回します"): its words are the pairs of characters
the CJK index holds, and two overlapping ones ("出張", "張規") are a pair standing
together, asked of that index.
"""

from __future__ import annotations

import asyncio
import dataclasses
import re
from datetime import date

from kenning.api import Hit
from kenning.retrieval import truth
from kenning.retrieval.query import quote
from kenning.store import fts
from kenning.store.database import Database
from kenning.store.hits import ChunkText, chunk_texts, load_hits
from kenning.store.scope import Scope
from kenning.text import cjk
from kenning.text.dates import period
from kenning.text.stopwords import STOPWORDS

# How many of the best hits are claims a notice may name, and how many later chunks
# naming them are read. The index is asked for the title words alone: with the cue
# words as well ("do not use", "in error") the query cost more than the search's own
# keyword leg, and the cues are read exactly on the chunks anyway (retrieval/cues.py).
CLAIMS = 3
CANDIDATES = 30
_WORD = re.compile(r"\w+")
# How far from a claim's title words, in characters, a year names which one it is.
YEAR_REACH = 12
_YEAR_NEAR = re.compile(r"(?<![\w.-])(?:19|20)\d\d(?![\w-])")
_NUMBER = re.compile(r"\d")


def _naming(word: str) -> bool:
    """Whether a title's (lower-cased) word may name the note: neither a function word
    nor one with a digit ("2026", "Q3"), which says when rather than what."""
    return word not in STOPWORDS and not _NUMBER.search(word)


def _title_words(title: str) -> list[str]:
    """A title's naming words; a run of Chinese, Japanese or Korean, which has no spaces
    ("出張規程"), is one word to `\\w+` that a notice holds only when it writes nothing
    next to it ("出張規程を撤回します" is one run too), so its words are the pairs of
    characters the CJK index holds (`truth.cjk_words`). "2025年4月版" says when, as
    "2025" does."""
    words = []
    for word in map(str.lower, _WORD.findall(title)):
        if not _naming(word):
            continue
        if cjk.RUN.search(word):
            words += [part for part in _WORD.findall(cjk.RUN.sub(" ", word)) if _naming(part)]
            words += truth.cjk_words(word)
        else:
            words.append(word)
    return words


def title_pairs(title: str) -> list[tuple[str, str]]:
    """Two naming words standing together in a title, neither a single letter: how a
    note names another ("the weeding guidance", "the Oakridge shelving quote"); in a CJK
    run, two of its pairs of characters standing together ("出張", "張規" in 出張規程)."""
    words = [word.lower() for word in _WORD.findall(title)]
    pairs = [(a, b) for a, b in zip(words, words[1:]) if _naming(a) and _naming(b) and len(a) > 1 and len(b) > 1]
    for run in cjk.RUN.findall(title):
        pieces = cjk.pieces(run)
        kept = set(truth.cjk_words(run))
        pairs += [(a, b) for a, b in zip(pieces, pieces[1:]) if a in kept and b in kept and (a, b) not in pairs]
    return pairs


def _cjk(pair: tuple[str, str]) -> bool:
    """Whether the pair is two overlapping pieces of one CJK run (`title_pairs`)."""
    a, b = pair
    return len(a) == len(b) == cjk.PIECE and a[1:] == b[:1] and bool(cjk.RUN.fullmatch(a + b))


def _pattern(pair: tuple[str, str]) -> re.Pattern[str]:
    if _cjk(pair):
        return re.compile(re.escape(pair[0] + pair[1][1:]))
    return re.compile(rf"\b{re.escape(pair[0])}\W+{re.escape(pair[1])}\b")


def names_claim(notice: truth.Side, claim: truth.Side, pairs: list[tuple[str, str]]) -> bool:
    """Whether the notice's retraction stands on a line naming the claim by a pair of its
    title's words (`pairs`) and by its time (there, or as the day the notice's title
    names: truth.Side `dates`; a year by the claim's title, or by its date when its title
    writes no time), or by every word of a longer title."""
    # "disregard the withdrawal of the glaze firing report": it stands (`reinstates`).
    return _retracts_naming(notice, claim, pairs) and not truth.undoes(notice.cues.retraction_context)


def reinstates(notice: truth.Side, claim: truth.Side, pairs: list[tuple[str, str]]) -> bool:
    """Whether the notice takes back the withdrawal of the claim, naming it as a
    retraction would: "disregard the withdrawal of the shelving guidance of 9 March"."""
    return _retracts_naming(notice, claim, pairs) and truth.undoes(notice.cues.retraction_context)


def _year_beside(context: str, pairs: list[tuple[str, str]]) -> bool:
    """Whether a year stands right beside the claim's title words ("the 2025 staff
    handbook", "the staff handbook of 2025"): it says which one, where a year further along
    the line ("the cafe is not closing ... the Skerrivaig cafe closed in 2025") says when
    something else happened."""
    for pair in pairs:
        for match in _pattern(pair).finditer(context):
            if _YEAR_NEAR.search(context, max(0, match.start() - YEAR_REACH), match.end() + YEAR_REACH):
                return True
    return False


def _retracts_naming(notice: truth.Side, claim: truth.Side, pairs: list[tuple[str, str]]) -> bool:
    context = notice.cues.retraction_context
    if not notice.cues.retraction or notice.cues.hedged or not any(_pattern(pair).search(context) for pair in pairs):
        return False
    if notice.dates(context, claim, by_date=_year_beside(context, pairs)):
        return True
    words = _title_words(claim.hit.title)
    said = set(_WORD.findall(context)) | set(truth.cjk_words(context))
    return len(words) > 2 and all(word in said for word in words)


async def tie(db: Database, hits: list[Hit], chunks: dict[int, ChunkText], scope: Scope) -> list[Hit]:
    """Find the notices that retract the best CLAIMS hits, mark and place them (see the
    module's docstring). `hits` is sorted best first; a notice among them moves, one
    that is not joins them and `chunks` gains its text. Those that joined are returned."""
    claims = [hit for hit in hits[:CLAIMS] if hit.retracted_by is None and hit.date and hit.item_id in chunks]
    pairs = {hit.item_id: title_pairs(hit.title) for hit in claims}
    asked = list(dict.fromkeys(pair for found in pairs.values() for pair in found))
    if not asked:
        return []
    # The CJK index holds a run's pairs of characters as words in order, so two
    # overlapping ones stand together as a phrase there, as two words do in the main one.
    named = {
        index: " OR ".join(quote(" ".join(pair)) for pair in asked if _cjk(pair) == (index == "cjk"))
        for index in ("main", "cjk")
    }
    # Only what speaks from after the earliest claim: the claims' own chunks, which hold
    # their titles, do not crowd the notices out.
    after = min(period(hit.date).end for hit in claims if hit.date is not None).isoformat()
    later = dataclasses.replace(scope, since=max(scope.since or after, after))
    found_by = await asyncio.gather(
        *(fts.rank(db, expression, CANDIDATES, later, index=index) for index, expression in named.items() if expression)
    )
    # Each index's best first: their scores do not compare, and a title is all Latin or
    # all CJK far more often than it is both.
    ranked = list(dict.fromkeys(item_id for each in found_by for item_id, _ in each))
    present = {hit.item_id: hit for hit in hits}
    fresh = [item_id for item_id in ranked if item_id not in present]
    loaded, texts = await asyncio.gather(load_hits(db, fresh, scope), chunk_texts(db, fresh))
    keys = {claim.item_id: [word for pair in pairs[claim.item_id] for word in pair] for claim in claims}
    sides = {claim.item_id: truth.Side(claim, chunks[claim.item_id], keys[claim.item_id], None) for claim in claims}
    today = date.today()
    # Each notice read as one about each claim: (notice, its text, the notice's side).
    read = [
        (notice, text, {claim.item_id: truth.Side(notice, text, keys[claim.item_id], None) for claim in claims})
        for item_id in ranked
        if (notice := present.get(item_id) or loaded.get(item_id)) is not None
        and (text := chunks.get(item_id) or texts.get(item_id)) is not None
    ]
    found: list[Hit] = []

    def join(notice: Hit, text: ChunkText) -> None:
        if notice.item_id not in present and notice not in found:
            chunks[notice.item_id] = text
            found.append(notice)

    for notice, text, said_of in read:
        if notice.retracted_by is not None:
            continue
        for claim in claims:
            if claim.retracted_by is not None or notice.document_id == claim.document_id:
                continue
            older, said = sides[claim.item_id], said_of[claim.item_id]
            # A notice dated after today says what will be withdrawn, as a note dated
            # ahead says what will be (truth.py `ahead_of`): the claim holds now.
            if truth.ahead_of(said, today) or not (
                truth.may_take_back(said, older) and names_claim(said, older, pairs[claim.item_id])
            ):
                continue
            claim.retracted_by = notice.item_id
            truth.place_above(notice, claim, f"retracts item {claim.item_id} ({said.cues.retraction!r}), naming it")
            claim.reasons.append(f"retracted by item {notice.item_id}, which names it")
            join(notice, text)
            undone = _reinstated(claim, said, read, sides[claim.item_id], pairs[claim.item_id], today)
            if undone is not None:
                join(*undone)
            break
    hits += found
    return found


def _reinstated(
    claim: Hit,
    notice: truth.Side,
    read: list[tuple[Hit, ChunkText, dict[int, truth.Side]]],
    older: truth.Side,
    pairs: list[tuple[str, str]],
    today: date,
) -> tuple[Hit, ChunkText] | None:
    """A later notice taking back the withdrawal `notice` made of the claim ("disregard
    the withdrawal of the shelving guidance of 9 March") leaves the claim standing, as
    truth.py's `_reinstate` does for notices among the best hits: found only by the
    claim's title, it was passed over, and the claim stayed withdrawn. The notice that
    took it back, and its text, when there is one."""
    for later, text, said_of in read:
        said = said_of[claim.item_id]
        if later.document_id in (claim.document_id, notice.hit.document_id) or truth.ahead_of(said, today):
            continue
        if truth.speaks_later(said, notice) and reinstates(said, older, pairs):
            notice.hit.retracted_by = later.item_id
            why = f"takes back item {notice.hit.item_id}'s retraction of item {claim.item_id}"
            truth.place_above(later, notice.hit, why)
            claim.retracted_by = None
            claim.reasons.append(f"its retraction, item {notice.hit.item_id}, was taken back by item {later.item_id}")
            return later, text
    return None
