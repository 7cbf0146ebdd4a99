"""Fusing the retrieval legs into one ranking.

Two methods. `score` (the default) mixes each candidate's keyword and vector scores,
min-max normalised per query, with the configured weights; every candidate is scored
on both legs (a keyword hit's cosine is looked up even when the vector leg did not rank
it), so the vector leg reorders keyword hits by meaning and can add hits no term
matched. `rrf` is weighted reciprocal rank fusion, which uses only ranks.

On the public test collections (bench/retrieval.py) RRF with a weak dense leg traded
top-10 precision for recall at every weight, while score fusion beat the keyword leg
alone on nDCG@10 on both collections; hence the default.

Both work on item ids only: what a hit cites is loaded once, for the candidates that
survive, by the caller.
"""

from __future__ import annotations

from kenning.api import Hit

# Each leg's candidates, best first.
Ranked = dict[str, list[int]]


def in_rank_order(hits: list[Hit]) -> None:
    """Best first. Of two hits scored alike, the one the keyword leg found goes first,
    since it holds the query's words (a keyword-only hit and a vector-only one both
    score the weight of their one leg: "marmot2" must find the note that says
    marmot2 before the one that says marmot4); then the more recently modified."""
    hits.sort(key=lambda hit: (-hit.score, "keyword" not in hit.legs, -hit.modified))


def legs_and_ranks(ranked: Ranked) -> dict[int, tuple[list[str], dict[str, int]]]:
    """For every candidate, the legs that found it and its (1-based) rank in each."""
    found: dict[int, tuple[list[str], dict[str, int]]] = {}
    for leg, ids in ranked.items():
        for rank, item_id in enumerate(ids, start=1):
            legs, ranks = found.setdefault(item_id, ([], {}))
            legs.append(leg)
            ranks[leg] = rank
    return found


def fuse_rrf(ranked: Ranked, weights: dict[str, float], k: int) -> dict[int, float]:
    scores: dict[int, float] = {}
    for leg, ids in ranked.items():
        for rank, item_id in enumerate(ids, start=1):
            scores[item_id] = scores.get(item_id, 0.0) + weights.get(leg, 0.0) / (k + rank)
    return scores


def fuse_scores(
    ranked: Ranked,
    raw: dict[str, dict[int, float]],
    weights: dict[str, float],
    calibrated: frozenset[str] = frozenset(),
) -> dict[int, float]:
    """Weighted sum of per-leg scores, each min-max normalised over this query's candidates.

    `raw[leg]` holds that leg's score for every candidate it can score; a candidate a
    leg cannot score (no term matched, no vector yet) gets nothing from that leg. A leg
    in `calibrated` already scores on an absolute 0-1 scale and is used as it is, so
    its weak answers stay weak instead of being stretched to fill the range.
    """
    candidates = dict.fromkeys(item_id for ids in ranked.values() for item_id in ids)
    # A leg that found nothing for this query (no entity named, no vectors yet) does
    # not dilute the others: the weights are shared among the legs that answered.
    total = sum(weights.get(leg, 0.0) for leg, values in raw.items() if values) or 1.0
    scores = dict.fromkeys(candidates, 0.0)
    for leg, values in raw.items():
        if not values:
            continue
        low, high = min(values.values()), max(values.values())
        share = weights.get(leg, 0.0) / total
        for item_id in candidates:
            value = values.get(item_id)
            if value is None:
                continue
            if leg in calibrated:
                scores[item_id] += share * value
            else:
                # One distinct score (a single match): it is this leg's best, not its worst.
                scores[item_id] += share * ((value - low) / (high - low) if high > low else 1.0)
    return scores
