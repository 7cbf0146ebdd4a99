"""The graph leg: chunks reached from the entities a query names, through their relations.

Query words, adjacent word runs (up to four words, longest first) and, for CJK text,
contiguous sub-runs of each spaceless run resolve to entities by normalized name or
alias. From those seeds the leg follows relations to depth 2 — the step that lets a
question about one thing reach a chunk that only names the thing it is related to — and
scores each chunk by the entities it mentions, weighted by depth and by how specific
each entity is (one named in a few chunks counts for more than one named in thousands).

Everything is read from SQLite per query through indexed lookups, so there is no graph
to load: start-up does not grow with the library. The walk runs whole on a reader's
thread (store/graph.py GraphReads), reads and arithmetic, so the event loop only awaits
it. The walk does not know the search's scope: the hits it leads to are checked against
it when they are loaded, with the other legs' hits.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from kenning.store import graph
from kenning.store.database import Database
from kenning.text.names import normalize_name
from kenning.text.stopwords import STOPWORDS

MAX_RUN_WORDS = 4
MAX_CANDIDATES = 96
CJK_SUBRUN_MAX_LEN = 8
CJK_SUBRUN_MAX_CANDIDATES = 24
NEIGHBOURS_PER_ENTITY = 12
ITEMS_PER_ENTITY = 200
MAX_DEPTH = 2
# Each hop away from what the query named halves an entity's weight.
HOP_DECAY = 0.5
ABOUT_BOOST = 4.0
HUB_MENTIONS = 200
FRONTIER_LIMIT = 32
# Chunks that name the query's own entities are the keyword leg's to find; the walk's
# own contribution is the chunks those entities lead to.
SEED_SHARE = 0.1

_WORD = re.compile(r"[\w][\w.+#-]*[\w+#]|[\w]", re.UNICODE)
# Runs of one script: a change between kanji and kana is where Japanese words meet, and
# the offline extractor cuts names at the same places. Hiragana runs are mostly
# particles and endings, so they are not looked up.
_CJK_RUNS = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+|[\u30a0-\u30ff]+")


@dataclass(frozen=True)
class Reached:
    """The chunks a walk reached: ids, the weight each took, and where in the walk each
    was first reached (the tie-break)."""

    ids: np.ndarray
    scores: np.ndarray
    first: np.ndarray

    def best(self, limit: int) -> list[tuple[int, float]]:
        """The best `limit` (item id, score) pairs, ties in the order first reached."""
        count = min(limit, len(self.ids))
        if count <= 0:
            return []
        kth = np.partition(self.scores, len(self.scores) - count)[len(self.scores) - count]
        rows = np.flatnonzero(self.scores >= kth)
        rows = rows[np.lexsort((self.first[rows], -self.scores[rows]))][:count]
        return [(int(self.ids[row]), round(float(self.scores[row]), 6)) for row in rows]


def _walk(reads: graph.GraphReads, seeds: dict[int, float]) -> Reached:
    """Spread each seed's weight over the chunks that mention it, and over its neighbours.

    A short random walk: an entity hands its weight to its chunks split evenly (so a hub
    named in hundreds of chunks gives each very little), and, decayed, to its neighbours
    in proportion to how often they are related. A chunk whose title is the entity — the
    page about it — takes a larger share. The shares are added up in the order they were
    handed out (np.bincount adds in input order), so a chunk's score is the same sum a
    loop over the chunks would make.
    """
    reached: list[np.ndarray] = []
    shares: list[np.ndarray] = []
    frontier = dict(seeds)
    visited = set(seeds)
    for depth in range(MAX_DEPTH + 1):
        mentioned = reads.mentions(list(frontier), ITEMS_PER_ENTITY)
        for entity_id, weight in frontier.items():
            found = mentioned[entity_id]
            share = weight / max(found.count, 1) * (SEED_SHARE if depth == 0 else 1.0)
            reached.append(found.items)
            shares.append(np.where(found.about, share * ABOUT_BOOST, share))
        # A hub (named in hundreds of chunks) hands each neighbour almost nothing, and
        # listing its relations would cost more than the whole rest of the walk.
        onward = [entity_id for entity_id in frontier if mentioned[entity_id].count <= HUB_MENTIONS]
        if depth == MAX_DEPTH or not onward:
            break
        links = reads.neighbours(onward, NEIGHBOURS_PER_ENTITY)
        following: dict[int, float] = {}
        for entity_id, others in links.items():
            total = sum(count for _, count in others) or 1
            for other, count in others:
                if other not in visited:
                    following[other] = following.get(other, 0.0) + frontier[entity_id] * HOP_DECAY * count / total
        # The strongest few go on: past them each entity adds little but its lookups.
        frontier = dict(sorted(following.items(), key=lambda pair: -pair[1])[:FRONTIER_LIMIT])
        visited |= frontier.keys()
    ids, first, order = np.unique(np.concatenate(reached), return_index=True, return_inverse=True)
    return Reached(ids, np.bincount(order, weights=np.concatenate(shares), minlength=len(ids)), first)


def candidates(query: str) -> list[str]:
    """Normalized names a query might contain, longest first, bounded."""
    words = _WORD.findall(query)
    found: list[str] = []
    seen: set[str] = set()

    def add(text: str) -> None:
        norm = normalize_name(text)
        if norm and norm not in seen and norm not in STOPWORDS:
            seen.add(norm)
            found.append(norm)

    for size in range(min(MAX_RUN_WORDS, len(words)), 0, -1):
        for start in range(len(words) - size + 1):
            run = words[start : start + size]
            # A run that starts or ends on a function word is not a name worth a lookup.
            if size > 1 and (run[0].lower() in STOPWORDS or run[-1].lower() in STOPWORDS):
                continue
            add(" ".join(run))
    for run in _CJK_RUNS.findall(query):
        added = 0
        for size in range(min(len(run), CJK_SUBRUN_MAX_LEN), 1, -1):
            for start in range(len(run) - size + 1):
                if added < CJK_SUBRUN_MAX_CANDIDATES:
                    add(run[start : start + size])
                    added += 1
    return found[:MAX_CANDIDATES]


async def graph_search(db: Database, query: str, limit: int) -> list[tuple[int, float]]:
    """Best `limit` (item id, walk score) pairs reached through the graph, best first."""
    names = candidates(query)
    if not names:
        return []
    return await graph.reading_graph(db, lambda reads: _search(reads, names, limit))


def _search(reads: graph.GraphReads, names: list[str], limit: int) -> list[tuple[int, float]]:
    matches = reads.resolve_names(names)
    if not matches:
        return []
    # A name inside a longer matched name ("york" in "new york city") is not its own seed.
    seeds = {
        match.id: graph.specificity(match.mentions)
        for norm, match in matches.items()
        if not any(norm != other and f" {norm} " in f" {other} " for other in matches)
        and match.kind not in graph.UNWALKED_KINDS
    }
    if not seeds:
        return []
    return _walk(reads, seeds).best(limit)
