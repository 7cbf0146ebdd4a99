"""One answer per place: no two hits of the same lines, one hit per identical text, and no
document crowding the others out.

- Chunks of one document whose line ranges overlap (a chunker's overlap, or a chunk
  nested in another: 202-205, 203-205, 204-205) show once, as the best of them.
- The same text in two files shows once, at its best hit; the others are listed in that
  hit's `also_at`.
- A document's second and later hits keep a shrinking share of their score
  (SAME_DOCUMENT_KEEPS per hit before them), so a long note that matches everywhere
  does not fill the page while another document answers too; its best hit is untouched.
- Which of a document's chunks leads it is the answer's lines' to say (`lead_with`):
  the chunk that holds more of the question, or states the value it asks for.
"""

from __future__ import annotations

import bisect
import hashlib
from collections.abc import Callable

from kenning.api import Elsewhere, Hit

# Measured on the truth set's dev split and bench/retrieval.py (bench/README.md).
SAME_DOCUMENT_KEEPS = 0.85


def _fingerprint(text: str) -> str:
    return hashlib.blake2b(" ".join(text.split()).encode(), digest_size=16).hexdigest()


def spread(hits: list[Hit]) -> None:
    """Lower each document's later hits; `hits` is best first (the caller sorts again)."""
    seen: dict[int, int] = {}
    for hit in hits:
        before = seen.get(hit.document_id, 0)
        if before:
            keep = SAME_DOCUMENT_KEEPS**before
            hit.score *= keep
            hit.reasons.append(f"hit {before + 1} of its document (x{keep:.2f})")
        seen[hit.document_id] = before + 1


def lead_with(hits: list[Hit], better: Callable[[Hit, Hit], bool], why: str) -> None:
    """Within each document, a hit `better` than the one leading it so far takes that
    one's score and place; other documents keep theirs. `why` says what it does that the
    other does not ("states a year"). `hits` is best first (the caller sorts again)."""
    first: dict[int, Hit] = {}
    for hit in hits:
        best = first.setdefault(hit.document_id, hit)
        if best is hit or not better(hit, best):
            continue
        best.score, hit.score = hit.score, best.score
        hit.reasons.append(f"{why}, unlike item {best.item_id}, its document's best hit before")
        best.reasons.append(f"below item {hit.item_id} of its document, which {why}")
        first[hit.document_id] = hit


def _overlaps(spans: list[tuple[int, int]], start: int, end: int) -> bool:
    """Whether lines start-end overlap one of `spans`, which are sorted and do not overlap
    each other: then the last span starting at or before `end` ends last of those, and
    only it needs asking. Asking each span, a search for 200 hits in one long document
    made 350,000 comparisons on the event loop (its 1,800 candidates against every span
    kept), and the work grew with the square of the candidates."""
    at = bisect.bisect_right(spans, (end, float("inf")))
    return at > 0 and spans[at - 1][1] >= start


def distinct(hits: list[Hit], texts: dict[int, str]) -> list[Hit]:
    """The hits without overlapping repeats and identical copies, best first."""
    kept: list[Hit] = []
    spans: dict[int, list[tuple[int, int]]] = {}
    copies: dict[str, Hit] = {}
    for hit in hits:
        if _overlaps(spans.get(hit.document_id, []), hit.line_start, hit.line_end):
            continue
        text = texts.get(hit.item_id)
        key = _fingerprint(text) if text is not None else None
        if key is not None and key in copies:
            first = copies[key]
            first.also_at.append(Elsewhere(hit.item_id, hit.document_id, hit.path, hit.line_start, hit.line_end))
            continue
        if key is not None:
            copies[key] = hit
        bisect.insort(spans.setdefault(hit.document_id, []), (hit.line_start, hit.line_end))
        kept.append(hit)
    return kept
