"""Where the hop's page goes among the hits (retrieval/search.py `_after`)."""

from __future__ import annotations

from kenning.api import Hit
from kenning.retrieval.search import _after


def hit(item_id: int, score: float, **fields) -> Hit:
    return Hit(
        item_id, item_id, f"Note {item_id}", "", "notes", "default", f"/n/{item_id}.md", "", 1, 5, 0.0,
        score=score, **fields,
    )  # fmt: skip


def test_a_page_retracted_by_one_hit_and_superseded_by_another_goes_below_both():
    bridge, newer, notice, other = hit(1, 1.0), hit(2, 0.9), hit(5, 0.85), hit(4, 0.7)
    page = hit(3, 0.8, superseded_by=2, retracted_by=5)
    placed = _after([bridge, newer, notice, page, other], bridge, page, ([], {}), 10)
    assert placed.index(page) > placed.index(newer) and placed.index(page) > placed.index(notice)
    assert placed[0] is bridge and placed[-1] is other
    assert [h.score for h in placed] == sorted((h.score for h in placed), reverse=True)


def test_a_ring_of_supersessions_moves_each_hit_once():
    bridge, other = hit(1, 1.0), hit(4, 0.7)
    first, second = hit(2, 0.9, superseded_by=3), hit(3, 0.8, superseded_by=2)
    placed = _after([bridge, first, second, other], bridge, second, ([], {}), 10)
    assert [h.item_id for h in placed] == [1, 2, 3, 4]
