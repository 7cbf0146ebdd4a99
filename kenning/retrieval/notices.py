"""Notices that take back one of the best hits, found by what they call it.

A retraction often shares no word with the question that finds the claim: "At what age
should adult non-fiction be weeded?" finds the weeding guidance, and the policy's later
line "the weeding guidance of 9 March is withdrawn" says nothing of age or non-fiction.
The truth signals (truth.py) relate only hits the legs found, so such a notice was never
tied to its claim and the withdrawn rule answered first. A notice names what it takes
back as a person would, by its title: two words standing together in the claim's title
("weeding guidance", "Oakridge shelving") on the line that says "withdrawn". So for the
best few hits, the library is asked for later chunks of other documents that hold such a
pair of title words and a retraction word. One whose retraction cue stands on a line
holding the pair is the notice when that line also names the claim's time ("the
guidance of 9 March", "the report of 19 January") or every word of its title: a pair
alone may name the subject rather than the note ("disregard the billing service alert"
is no retraction of the runbook "Restart the billing service"). It goes just above the
claim, which carries `retracted_by`. Nothing is dropped.
"""

from __future__ import annotations

import asyncio
import re

from kenning.api import Hit
from kenning.retrieval import truth
from kenning.retrieval.query import quote
from kenning.store import fts
from kenning.store.database import Database
from kenning.store.hits import ChunkText, chunk_texts, load_hits
from kenning.store.scope import Scope
from kenning.text.stopwords import STOPWORDS

# How many of the best hits are claims a notice may name, and how many chunks naming
# them are read.
CLAIMS = 3
CANDIDATES = 10
# What the keyword index is asked for besides the title: the words of truth's retraction
# cues (retrieval/cues.py), stemmed by the index as the text is. The cue itself is then
# read exactly.
_RETRACTION_WORDS = (
    "retract", "withdrawn", "withdraw", "withdrew", "disregard", "rescind", "ignore", "do not use", "don't use",
    "in error", "fell through", "called off", "no longer valid", "invalid", "invalidated", "mistake",
    "do not rely", "don't rely", "not be used", "not to be used", "null and void", "scrapped", "shelved",
)  # fmt: skip
_WORD = re.compile(r"\w+")
_NUMBER = re.compile(r"\d")


def _title_words(title: str) -> list[str]:
    """A title's words as a note may name it by: lower-cased, a year or a day left out,
    since they say when, not what."""
    return [word.lower() for word in _WORD.findall(title) if not _NUMBER.search(word)]


def title_pairs(title: str) -> list[tuple[str, str]]:
    """Two words standing together in a title, neither a function word: how a note names
    another ("the weeding guidance", "the Oakridge shelving quote")."""
    words = [word.lower() for word in _WORD.findall(title)]
    return [
        (a, b)
        for a, b in zip(words, words[1:])
        if a not in STOPWORDS and b not in STOPWORDS and not _NUMBER.search(a + b) and len(a) > 1 and len(b) > 1
    ]


def _pattern(pair: tuple[str, str]) -> re.Pattern[str]:
    return re.compile(rf"\b{re.escape(pair[0])}\W+{re.escape(pair[1])}\b")


def names_claim(notice: truth.Side, claim: truth.Side, pairs: list[tuple[str, str]]) -> bool:
    """Whether the notice's retraction stands on a line naming the claim by a pair of its
    title's words (`pairs`) and by its time, or by every word of its title."""
    context = notice.cues.retraction_context
    if not notice.cues.retraction or not any(_pattern(pair).search(context) for pair in pairs):
        return False
    if notice.names_time(context):
        return notice.dates(context, claim)
    said = set(_WORD.findall(context))
    return all(word in said for word in _title_words(claim.hit.title) if word not in STOPWORDS)


async def tie(db: Database, hits: list[Hit], chunks: dict[int, ChunkText], scope: Scope) -> list[Hit]:
    """Find the notices that retract the best CLAIMS hits, mark and place them (see the
    module's docstring). `hits` is sorted best first; a notice among them moves, one
    that is not joins them and `chunks` gains its text. Those that joined are returned."""
    claims = [hit for hit in hits[:CLAIMS] if hit.retracted_by is None and hit.item_id in chunks]
    pairs = {hit.item_id: title_pairs(hit.title) for hit in claims}
    asked = list(dict.fromkeys(pair for found in pairs.values() for pair in found))
    if not asked:
        return []
    named = " OR ".join(quote(" ".join(pair)) for pair in asked)
    cue = " OR ".join(quote(word) for word in _RETRACTION_WORDS)
    ranked = [item_id for item_id, _ in await fts.rank(db, f"({named}) AND ({cue})", CANDIDATES, scope)]
    present = {hit.item_id: hit for hit in hits}
    fresh = [item_id for item_id in ranked if item_id not in present]
    loaded, texts = await asyncio.gather(load_hits(db, fresh, scope), chunk_texts(db, fresh))
    found: list[Hit] = []
    for item_id in ranked:
        notice = present.get(item_id) or loaded.get(item_id)
        text = chunks.get(item_id) or texts.get(item_id)
        if notice is None or text is None:
            continue
        for claim in claims:
            if claim.retracted_by is not None or notice.document_id == claim.document_id:
                continue
            words = [word for pair in pairs[claim.item_id] for word in pair]
            said = truth.Side(notice, text, words, None)
            older = truth.Side(claim, chunks[claim.item_id], words, None)
            if truth.speaks_later(said, older) and names_claim(said, older, pairs[claim.item_id]):
                claim.retracted_by = item_id
                truth.place_above(notice, claim, f"retracts item {claim.item_id} ({said.cues.retraction!r}), naming it")
                claim.reasons.append(f"retracted by item {item_id}, which names it")
                if item_id not in present:
                    notice.legs = ["keyword"]
                    chunks[item_id] = text
                    found.append(notice)
                break
    hits += found
    return found
