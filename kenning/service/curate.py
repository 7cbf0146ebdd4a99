"""`ken memory curate`: the capsules worth a look. It reports and changes nothing; the
person or agent then forgets, supersedes or keeps.

- stale: not used or updated for `[memory] stale_days`;
- likely duplicates: two current capsules in one scope (any kind) at least as alike as
  write-time dedup refuses (pairs that got in with `force`, across kinds, or while the
  embedder was down);
- contradiction candidates: two capsules in one scope nearly that alike (within
  `CONTRADICTION_SLACK` of the threshold), about one subject (one's title words all
  occur in the other), whose texts differ in a way that can reverse a statement:
  different numbers, a negation only one makes, or opposite words ("before" /
  "after"). Such a pair is listed as a contradiction, not a duplicate.
"""

from __future__ import annotations

import asyncio
import time
from itertools import combinations

import numpy as np

from kenning.api import CapsulePair, Curation, StaleCapsule
from kenning.service.memory import DAY, Memory, capsule_text, scope_of
from kenning.store import capsules
from kenning.store.capsules import CapsuleRow
from kenning.text.likeness import Said, contrast, jaccard, said, same_subject, trigrams

CONTRADICTION_SLACK = 0.1
# Trigram comparison is pairwise in Python; past this many capsules in one scope it is
# skipped (with vectors, a matrix product handles thousands).
MAX_TRIGRAM_SCOPE = 1500


async def curate(memory: Memory, scope: str | None, limit: int) -> Curation:
    rows = await capsules.current(memory.db, scope_of(scope) if scope is not None else None)
    settings = memory.settings.memory
    # In a worker thread, as the pairs are: a library holds tens of thousands of capsules.
    stale = await asyncio.to_thread(_stale, rows, time.time(), settings.stale_days)
    vectors, why_not = await memory.vectors_for(rows)
    method = "vector" if vectors else "trigram"
    threshold = settings.duplicate_similarity if vectors else settings.duplicate_trigram
    duplicates, contradictions = await asyncio.to_thread(
        _pairs, rows, vectors, method, threshold, threshold - CONTRADICTION_SLACK
    )
    warnings = [] if vectors else _unchecked(rows, why_not)
    return Curation(stale[:limit], duplicates[:limit], contradictions[:limit], warnings)


def _stale(rows: list[CapsuleRow], now: float, stale_days: float) -> list[StaleCapsule]:
    return sorted(
        (
            StaleCapsule(row.id, row.title, row.scope, round((now - row.touched_at) / DAY, 1), row.uses, row.confidence)
            for row in rows
            if now - row.touched_at >= stale_days * DAY
        ),
        key=lambda entry: (-entry.idle_days, entry.id),
    )


def _unchecked(rows: list[CapsuleRow], why_not: str | None) -> list[str]:
    """Scopes too large to compare by trigrams are left out of the pair lists; say so,
    or empty lists there read as "no duplicates" while nothing was compared."""
    sizes: dict[str, int] = {}
    for row in rows:
        sizes[row.scope] = sizes.get(row.scope, 0) + 1
    return [
        f"duplicates and contradictions not checked in scope {scope!r}: {count} capsules, more than the"
        f" {MAX_TRIGRAM_SCOPE} compared by trigrams while the embedder cannot serve ({why_not or 'no vectors'})"
        for scope, count in sorted(sizes.items())
        if count > MAX_TRIGRAM_SCOPE
    ]


def _pairs(
    rows: list[CapsuleRow], vectors: dict[str, np.ndarray], method: str, threshold: float, floor: float
) -> tuple[list[CapsulePair], list[CapsulePair]]:
    by_scope: dict[str, list[CapsuleRow]] = {}
    for row in rows:
        by_scope.setdefault(row.scope, []).append(row)
    duplicates: list[CapsulePair] = []
    contradictions: list[CapsulePair] = []
    for scope, members in sorted(by_scope.items()):
        read: dict[str, Said] = {}

        def of(row: CapsuleRow) -> Said:
            if row.id not in read:
                read[row.id] = said(row.title, capsule_text(row.title, row.body))
            return read[row.id]

        for first, second, similarity in _alike(members, vectors, floor):
            mine, theirs = of(first), of(second)
            subject = same_subject(mine, theirs)
            if similarity < threshold and not subject:
                # Short of a duplicate, a pair is listed only as a contradiction, which
                # needs one subject: most pairs end here without being told apart.
                continue
            reason = contrast(mine, theirs)
            rounded = round(similarity, 4)
            if reason is not None:
                # Alike, yet stating different things: about one subject, they may
                # contradict; about two (same pattern, other names), they are neither.
                if subject:
                    contradictions.append(
                        CapsulePair(first.id, second.id, first.title, second.title, scope, rounded, method, reason)
                    )
            elif similarity >= threshold:
                duplicates.append(
                    CapsulePair(
                        first.id, second.id, first.title, second.title, scope, rounded, method, "near-identical"
                    )
                )
    order = lambda pair: (-pair.similarity, pair.first, pair.second)  # noqa: E731
    return sorted(duplicates, key=order), sorted(contradictions, key=order)


def _alike(
    members: list[CapsuleRow], vectors: dict[str, np.ndarray], floor: float
) -> list[tuple[CapsuleRow, CapsuleRow, float]]:
    """Pairs (older first) at least `floor` alike."""
    if vectors:
        matrix = np.stack([vectors[row.id] for row in members])
        similarities = matrix @ matrix.T
        first, second = np.nonzero(np.triu(similarities >= floor, k=1))
        return [(members[i], members[j], float(similarities[i, j])) for i, j in zip(first, second)]
    if len(members) > MAX_TRIGRAM_SCOPE:
        return []
    grams = [trigrams(row.body) for row in members]
    found = []
    for i, j in combinations(range(len(members)), 2):
        similarity = jaccard(grams[i], grams[j])
        if similarity >= floor:
            found.append((members[i], members[j], similarity))
    return found
