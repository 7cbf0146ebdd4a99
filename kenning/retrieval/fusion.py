"""Fusing the retrieval legs into one ranking.

Two methods. `score` (the default) mixes each candidate's keyword and vector scores,
min-max normalised per query, with the configured weights; every candidate is scored
on both legs (a keyword hit's cosine is looked up even when the vector leg did not rank
it), so the vector leg reorders keyword hits by meaning and can add hits no term
matched. `rrf` is weighted reciprocal rank fusion, which uses only ranks.

On the public test collections (bench/retrieval.py) RRF with a weak dense leg traded
top-10 precision for recall at every weight, while score fusion beat the keyword leg
alone on nDCG@10 on both collections; hence the default.
"""

from __future__ import annotations

from kenning.retrieval.hits import Hit


def _merge(legs: dict[str, list[Hit]]) -> dict[int, Hit]:
    """One hit per item, recording every leg that found it and its rank there."""
    merged: dict[int, Hit] = {}
    for leg, hits in legs.items():
        for rank, hit in enumerate(hits, start=1):
            kept = merged.setdefault(hit.item_id, hit)
            if kept is hit:
                kept.legs, kept.ranks = [], {}
            kept.legs.append(leg)
            kept.ranks[leg] = rank
    return merged


def _ranked(merged: dict[int, Hit], scores: dict[int, float]) -> list[Hit]:
    for item_id, hit in merged.items():
        hit.score = round(scores[item_id], 6)
    # Ties go to the more recently modified document.
    return sorted(merged.values(), key=lambda hit: (-hit.score, -hit.modified))


def fuse_rrf(legs: dict[str, list[Hit]], weights: dict[str, float], k: int) -> list[Hit]:
    scores: dict[int, float] = {}
    for leg, hits in legs.items():
        for rank, hit in enumerate(hits, start=1):
            scores[hit.item_id] = scores.get(hit.item_id, 0.0) + weights.get(leg, 0.0) / (k + rank)
    return _ranked(_merge(legs), scores)


def fuse_scores(
    legs: dict[str, list[Hit]],
    raw: dict[str, dict[int, float]],
    weights: dict[str, float],
    calibrated: frozenset[str] = frozenset(),
) -> list[Hit]:
    """Weighted sum of per-leg scores, each min-max normalised over this query's candidates.

    `raw[leg]` holds that leg's score for every candidate it can score; a candidate a
    leg cannot score (no term matched, no vector yet) gets nothing from that leg. A leg
    in `calibrated` already scores on an absolute 0-1 scale and is used as it is, so
    its weak answers stay weak instead of being stretched to fill the range.
    """
    merged = _merge(legs)
    # A leg that found nothing for this query (no entity named, no vectors yet) does
    # not dilute the others: the weights are shared among the legs that answered.
    total = sum(weights.get(leg, 0.0) for leg, values in raw.items() if values) or 1.0
    scores = dict.fromkeys(merged, 0.0)
    for leg, values in raw.items():
        if not values:
            continue
        low, high = min(values.values()), max(values.values())
        share = weights.get(leg, 0.0) / total
        for item_id in merged:
            value = values.get(item_id)
            if value is None:
                continue
            if leg in calibrated:
                scores[item_id] += share * value
            else:
                # One distinct score (a single match): it is this leg's best, not its worst.
                scores[item_id] += share * ((value - low) / (high - low) if high > low else 1.0)
    return _ranked(merged, scores)
