"""Weighted reciprocal rank fusion of the retrieval legs.

RRF needs only ranks, so legs whose scores live on different scales (bm25, cosine)
combine without calibration. A leg's weight says how much its opinion counts; a weak
leg fused at full weight pulls good keyword hits down, which is why the weights are
set per embedder from the retrieval benchmark.
"""

from __future__ import annotations

from kenning.retrieval.hits import Hit


def fuse(legs: dict[str, list[Hit]], weights: dict[str, float], k: int) -> list[Hit]:
    """One list, best first; each hit keeps every leg that found it and its rank there.

    Ties go to the more recently modified document.
    """
    fused: dict[int, Hit] = {}
    scores: dict[int, float] = {}
    for leg, hits in legs.items():
        weight = weights.get(leg, 0.0)
        for rank, hit in enumerate(hits, start=1):
            merged = fused.get(hit.item_id)
            if merged is None:
                merged = fused[hit.item_id] = hit
                merged.legs, merged.ranks = [], {}
            elif not merged.snippet or "**" in hit.snippet:
                merged.snippet = hit.snippet or merged.snippet
            merged.legs.append(leg)
            merged.ranks[leg] = rank
            scores[hit.item_id] = scores.get(hit.item_id, 0.0) + weight / (k + rank)
    for item_id, hit in fused.items():
        hit.score = round(scores[item_id], 6)
    return sorted(fused.values(), key=lambda hit: (-hit.score, -hit.modified))
