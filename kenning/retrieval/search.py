"""Search entry point: runs the retrieval legs and fuses them into ranked, cited hits.

The legs run concurrently, each on its own reader (SQLite and numpy release the GIL
while they work), and each returns item ids and scores only. What a hit cites is loaded
for each leg's candidates as soon as that leg answers, while the slower legs still run
(an item found twice is loaded once); that is also where the scope is checked for the
legs that do not apply it themselves. Snippets are made only for the hits returned. A
search therefore costs about its slowest leg, not the sum of them.

The caller picks the legs (all three by default: keyword, vector, graph). The vector
leg runs when an index for the current embedder exists and the query can be embedded;
if it cannot (the embedder is down, the index is still loading after an embedder
change), the search still answers from the other legs and says why in `warnings`.

The keyword leg searches the main index and, for a query in Chinese, Japanese or
Korean, the CJK index too. After fusion, retrieval/verdict.py weighs the best hits'
dates, corrections, retractions, hedges and disagreements, refuses to answer when
nothing supports one, and keeps one hit per place.
"""

from __future__ import annotations

import asyncio
import math
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np

from kenning.api import Hit, SearchResult
from kenning.config import RetrievalSettings
from kenning.errors import EmbedderUnavailable, InvalidRequest
from kenning.retrieval import hop, values
from kenning.retrieval.coverage import Asked, idf
from kenning.retrieval.fusion import Ranked, fuse_rrf, fuse_scores, in_rank_order, legs_and_ranks
from kenning.retrieval.graph import graph_search
from kenning.retrieval.query import KeywordQuery, cjk_expression, has_words, parse
from kenning.retrieval.verdict import Meaning, settle
from kenning.store import fts
from kenning.store.database import Database
from kenning.store.fts import Probe
from kenning.store.hits import load_hits
from kenning.store.records import Embedder
from kenning.store.scope import Scope
from kenning.store.vector_index import VectorIndex
from kenning.text.unicode import normalized

LEGS = ("keyword", "vector", "graph")
MIN_CANDIDATES = 30
# When copies fill the legs' offer, the search runs again with this many times the depth,
# up to MAX_DEPTH candidates per leg.
DEEPER = 4
MAX_DEPTH = 1000
# Below this -bm25 every matched term had its idf clamped by FTS5 (at 1e-6, times at
# most a column weight of 2 and k1 + 1 per term): see Search._by_held_weight.
COMMON_TERMS_SCORE = 1e-4
# The graph walk ranks unscoped: it offers this many times the depth, so that after the
# scope is applied enough remain.
GRAPH_OVERSHOOT = 4
# The walk mass at which a graph hit counts for 63 % of the leg's weight (1 - 1/e).
GRAPH_SCALE = 0.02
# Query embeddings that may overrun their budget at once before searches stop asking.
MAX_OVERDUE_EMBEDS = 2


@dataclass(frozen=True)
class Vectors:
    """The current embedder and its index, as one unit: a query is only ever scored
    against vectors from the model that embedded it."""

    embedder: Embedder
    index: VectorIndex


def _stop_unheard(call: asyncio.Future) -> None:
    """Cancel `call`, whose answer no one will take, and take its ending here.

    A cancelled gather ends holding a CancelledError as its exception; never retrieved,
    asyncio logged it as an ERROR with a traceback each time a client hung up on a
    search while its scope lookup waited for a reader."""
    call.cancel()
    call.add_done_callback(lambda done: done.cancelled() or done.exception())


def _after(
    hits: list[Hit], bridge: Hit, page: Hit, found_by: tuple[list[str], dict[str, int]], limit: int
) -> list[Hit]:
    """The hits with `page` right after `bridge`, the hit that names it, scored between
    its neighbours; `limit` of them.

    A page already among the hits moves as it is, with what the truth signals said of it
    (a claim the best hit retracts stays marked `retracted_by`). The hits that take it
    back (a notice retracting it, a text superseding it, and what takes those back),
    when they rank below the bridge, move with it and go just above it: the
    lead's page saying she works from Leeds went second, above the correction saying
    she has moved to Bristol, which it named as its `superseded_by`."""
    if page.item_id == bridge.item_id:
        return hits[:limit]
    known = next((hit for hit in hits if hit.item_id == page.item_id), None)
    if known is None:
        page.legs, page.ranks = found_by
    else:
        known.reasons += page.reasons
        page = known
    below = {hit.item_id: hit for hit in hits[hits.index(bridge) + 1 :]}
    moving = [page]
    # A chain of corrections comes along whole, each above what it takes back, and so
    # do a notice retracting a hit and a text superseding it; a ring an agent stated
    # ends it.
    waiting = [page]
    while waiting:
        taken = waiting.pop(0)
        for newer in _taking_back(taken, below):
            if newer not in moving:
                newer.reasons.append(f"kept above item {taken.item_id}, which it takes back")
                moving.insert(moving.index(taken), newer)
                waiting.append(newer)
    others = [hit for hit in hits if hit not in moving]
    at = others.index(bridge) + 1
    low = others[at].score if at < len(others) else bridge.score
    step = (bridge.score - low) / (len(moving) + 1)
    for place, hit in enumerate(moving, 1):
        hit.score = round(bridge.score - place * step, 6)
    return [*others[:at], *moving, *others[at:]][:limit]


def _taking_back(hit: Hit, among: dict[int, Hit]) -> list[Hit]:
    """The hits among `among` that retract or supersede `hit`."""
    return [among[later] for later in (hit.retracted_by, hit.superseded_by) if later is not None and later in among]


class Retriever:
    def __init__(self, db: Database, settings: RetrievalSettings) -> None:
        self.db = db
        self.settings = settings
        self._embedding_threads = ThreadPoolExecutor(MAX_OVERDUE_EMBEDS, thread_name_prefix="query-embed")
        # Query embeddings still running past their budget (see _embed_query).
        self._overdue: set[Future] = set()

    def close(self) -> None:
        """Let the query-embedding threads end: left idle, they read as work still in
        flight when the daemon leaves, which then warns and exits without cleaning up."""
        self._embedding_threads.shutdown(wait=False, cancel_futures=True)

    async def search(
        self,
        query: str,
        limit: int = 10,
        source: str | None = None,
        namespace: str | None = None,
        legs: tuple[str, ...] = LEGS,
        vectors: Vectors | None = None,
        snippets: bool = True,
        kinds: tuple[str, ...] = (),
        since: str | None = None,
        until: str | None = None,
        vectors_off: str = "the embedding index is loading",
    ) -> SearchResult:
        """The best `limit` hits for the query, cited, or none and why (`vectors_off`
        says why when there are no `vectors`).

        Each leg offers `depth` candidates. Identical copies and overlapping chunks show
        as one hit, so when they fill a leg's offer (forty copies of one licence header)
        and fewer than `limit` hits are left, the search runs again with a deeper offer:
        the text the copies pushed out is found, and every copy is listed in `also_at`.
        """
        scope = Scope(source, namespace, kinds, since, until)
        # In the form the text was indexed in (text/unicode.py).
        query = normalized(query)
        if not has_words(query):
            raise InvalidRequest(
                "query has no words (only quotes, punctuation, symbols such as emoji, or spaces, which are not indexed);"
                " give a word to search for"
            )
        depth = max(limit * 3, MIN_CANDIDATES)
        while True:
            result, full = await self._search(query, limit, scope, legs, vectors, vectors_off, snippets, depth)
            if len(result.hits) >= limit or result.abstained or not full or depth >= MAX_DEPTH:
                return result
            depth = min(depth * DEEPER, MAX_DEPTH)

    async def _search(
        self,
        query: str,
        limit: int,
        scope: Scope,
        legs: tuple[str, ...],
        vectors: Vectors | None,
        vectors_off: str,
        snippets: bool,
        depth: int,
    ) -> tuple[SearchResult, bool]:
        """One search with each leg offering `depth` candidates, and whether some leg
        offered that many (so more may lie beyond)."""
        keywords = parse(query)
        expression = keywords.expression
        warnings: list[str] = []
        leg_calls: dict[str, asyncio.Future] = {}
        asked: Asked | None = None
        if "keyword" in legs and (expression is not None or cjk_expression(query)):
            leg_calls["keyword"] = asyncio.ensure_future(self._keyword_leg(keywords, query, depth, scope))
            asked = Asked(self.db, keywords, query)
        query_vector: np.ndarray | None = None
        if "vector" in legs:
            vector_leg = self._vector_leg(query, depth, scope, vectors, vectors_off, warnings)
            leg_calls["vector"] = asyncio.ensure_future(vector_leg)
        if "graph" in legs and self.settings.graph_weight > 0:
            leg_calls["graph"] = asyncio.ensure_future(graph_search(self.db, query, depth * GRAPH_OVERSHOOT))
        # Each leg's hits are loaded as soon as it answers, while the others still run; an
        # item two legs found is loaded once.
        loaded: dict[int, Hit] = {}
        requested: set[int] = set()

        async def load(ids: list[int]) -> None:
            fresh = [item_id for item_id in dict.fromkeys(ids) if item_id not in requested]
            requested.update(fresh)
            loaded.update(await load_hits(self.db, fresh, scope))

        async def answer_and_load(leg: str, call: asyncio.Future) -> Any:
            answer = await call
            pairs = answer[0] if leg == "vector" else answer
            # The graph's overshoot is loaded only as far as the scope needs it:
            # unscoped, its first `depth` nearly always survive.
            await load([item_id for item_id, _ in (pairs[:depth] if leg == "graph" else pairs)])
            return answer

        try:
            answers = dict(
                zip(leg_calls, await asyncio.gather(*(answer_and_load(leg, call) for leg, call in leg_calls.items())))
            )
        except BaseException:
            for call in leg_calls.values():
                call.cancel()
            if asked is not None:
                asked.close()
            raise
        if "vector" in answers:
            answers["vector"], query_vector = answers["vector"]
        full = any(len(pairs) >= depth for leg, pairs in answers.items() if leg != "graph")
        walked = answers.pop("graph", [])
        if "graph" in leg_calls:
            kept = [pair for pair in walked[:depth] if pair[0] in loaded]
            for start in range(depth, len(walked), depth):
                if len(kept) >= depth:
                    break
                more = walked[start : start + depth]
                await load([item_id for item_id, _ in more])
                kept += [pair for pair in more if pair[0] in loaded]
            answers["graph"] = kept[:depth]
        # Removed since a leg ranked it, or (graph) out of scope.
        scored = {leg: [(item_id, score) for item_id, score in pairs if item_id in loaded] for leg, pairs in answers.items()}
        if query_vector is None:
            scored.pop("vector", None)
        ranked: Ranked = {leg: [item_id for item_id, _ in pairs] for leg, pairs in scored.items()}
        scores = self._fuse(ranked, scored, query_vector, vectors)
        found_by = legs_and_ranks(ranked)
        hits: list[Hit] = []
        for item_id, score in scores.items():
            hit = loaded[item_id]
            hit.score = round(score, 6)
            hit.legs, hit.ranks = found_by[item_id]
            hits.append(hit)
        in_rank_order(hits)
        hits = [hit for hit in hits if hit.score >= self.settings.min_score]
        # The floor may ask for the hop's page before the hop itself puts it second: it
        # is looked up once for a given best hit. It is started for the best hit as fused,
        # to run alongside the truth stages, which most often leave that hit first.
        followed: dict[int, asyncio.Future] = {}
        # The kind of value asked, read only from a query worded as a question: the
        # keyword side read it already; without that leg the wording is read here.
        wanted = asked.wanted if asked is not None else values.wanted(query) if keywords.question else None

        def hop_from(best: Hit) -> asyncio.Future:
            if best.item_id not in followed:
                followed[best.item_id] = asyncio.ensure_future(
                    hop.follow(self.db, keywords, [best], scope, wanted=wanted)
                )
            return followed[best.item_id]

        async def follow(best: list[Hit]) -> Hit | None:
            if "graph" not in legs or not best:
                return None
            return await hop_from(best[0])

        if "graph" in legs and hits:
            hop_from(hits[0])
        meaning = Meaning(vectors.index, query_vector) if vectors is not None and query_vector is not None else None
        try:
            hits, abstained, withheld = await settle(
                self.db, query, hits, limit, self.settings, asked, wanted, meaning, scope, follow
            )
            if (page := await follow(hits)) is not None:
                hits = _after(hits, hits[0], page, found_by.get(page.item_id, (["graph"], {})), limit)
            # The next document's best hit may be the note that links the question on
            # (an org chart update naming someone's new manager, a grant agreement naming
            # a project's sponsor), while the best hit names an older or another link.
            # Its page goes after it only when the hits do not hold it already, where
            # the truth signals placed it, and when the sentence naming it says something
            # of the question itself (retrieval/hop.py).
            if "graph" in legs and hits:
                skip = {hits[0].document_id} | ({page.document_id} if page is not None else set())
                if (second := next((hit for hit in hits if hit.document_id not in skip), None)) is not None:
                    more = await hop.follow(self.db, keywords, [second], scope, said_there=True)
                    if more is not None and all(hit.item_id != more.item_id for hit in hits):
                        hits = _after(hits, second, more, found_by.get(more.item_id, (["graph"], {})), limit)
            if snippets and asked is not None and expression is not None:
                shown = hits + withheld
                highlighted = await asked.excerpts(expression, [hit for hit in shown if "keyword" in hit.legs])
                for hit in shown:
                    hit.snippet = highlighted.get(hit.item_id) or hit.snippet
        finally:
            if asked is not None:
                asked.close()
            for call in followed.values():
                if not call.done():
                    call.cancel()
                elif not call.cancelled():
                    call.exception()  # a hop no one waited for may fail unseen
        return SearchResult(hits, warnings, abstained, withheld), full

    def _fuse(
        self,
        ranked: Ranked,
        scored: dict[str, list[tuple[int, float]]],
        query_vector: np.ndarray | None,
        vectors: Vectors | None,
    ) -> dict[int, float]:
        weights = {
            "keyword": self.settings.keyword_weight,
            "vector": self.settings.vector_weight,
            "graph": self.settings.graph_weight,
        }
        if self.settings.fusion == "rrf":
            return fuse_rrf(ranked, weights, self.settings.rrf_k)
        raw = {leg: dict(scored[leg]) for leg in ranked}
        if "graph" in raw:
            # Graph scores are walk probabilities: what share of the query's entities'
            # weight reached the chunk. Their size is the leg's confidence (a query
            # naming a rare entity reaches a few chunks strongly; one naming only
            # common phrases spreads thin), so they are mapped onto 0-1 as they are
            # rather than stretched per query.
            raw["graph"] = {item_id: 1.0 - math.exp(-score / GRAPH_SCALE) for item_id, score in raw["graph"].items()}
        if "vector" in raw and "keyword" in raw and vectors is not None and query_vector is not None:
            # Score every keyword candidate on meaning too, not just those the vector
            # leg happened to rank: this is what lets it reorder keyword hits.
            unscored = [item_id for item_id in ranked["keyword"] if item_id not in raw["vector"]]
            raw["vector"].update(vectors.index.similarities(query_vector, unscored))
        return fuse_scores(ranked, raw, weights, calibrated=frozenset({"graph"}))

    async def _keyword_leg(
        self, keywords: KeywordQuery, query: str, depth: int, scope: Scope
    ) -> list[tuple[int, float]]:
        """The main index's ranking, merged with the CJK index's when the query has CJK runs.

        bm25 values of two indexes are not on one scale, so each ranking is divided by
        its own best before they are added up.
        """
        calls = []
        if keywords.expression is not None:
            calls.append(fts.rank(self.db, keywords.expression, depth, scope))
        cjk = cjk_expression(query)
        if cjk is not None:
            calls.append(fts.rank(self.db, cjk, depth, scope, index="cjk"))
        rankings = list(await asyncio.gather(*calls))
        if keywords.expression is not None and rankings[0] and rankings[0][0][1] < COMMON_TERMS_SCORE:
            rankings[0] = await self._by_held_weight(keywords, rankings[0])
        if len(rankings) == 1:
            return rankings[0]
        merged: dict[int, float] = {}
        for ranking in rankings:
            best = max((score for _, score in ranking), default=0.0) or 1.0
            for item_id, score in ranking:
                merged[item_id] = merged.get(item_id, 0.0) + score / best
        return sorted(merged.items(), key=lambda pair: -pair[1])[:depth]

    async def _by_held_weight(self, keywords: KeywordQuery, ranking: list[tuple[int, float]]) -> list[tuple[int, float]]:
        """A ranking whose every term is in over half the chunks, ranked by how much of the
        query each chunk holds, each term weighted by an idf that stays positive.

        FTS5 clamps such a term's idf to 1e-6, so its scores differ only by term counts
        and lengths at the sixth decimal; min-max fusion would stretch that noise to the
        leg's whole range and let it outvote meaning. In a library of a few notes this is
        most queries, and read as a tie the leg said nothing: "Which day is the maritime
        museum closed?" went to the art gallery's note (closed on Mondays), closest in
        meaning, over the trip plan holding "maritime museum closed". A long log
        repeating the query's words does it in a larger library."""
        probes = [Probe(expression) for expression in keywords.probes]
        ids = [item_id for item_id, _ in ranking]
        counts, held = await asyncio.gather(fts.term_counts(self.db, probes), fts.holders(self.db, probes, ids))
        weights = [idf(counts.total, n) for n in counts.matching]
        scores = {item_id: sum(w for w, holding in zip(weights, held) if item_id in holding) for item_id in ids}
        return sorted(scores.items(), key=lambda pair: -pair[1])

    async def _embed_query(self, embedder: Embedder, query: str) -> np.ndarray:
        """The query's vector within `query_embed_timeout`, or TimeoutError.

        Query embeddings run on threads of their own, so a hung backend cannot take the
        threads everything else hands work to. A thread cannot be stopped: one that
        overruns is remembered until it ends, and while MAX_OVERDUE_EMBEDS are, searches
        skip the leg without asking again; one still queued is dropped. A call overruns
        whether or not its search still waits: counted only when a search timed out on it,
        the calls of searches whose clients hung up first (an MCP host that cancels sooner
        than the budget) held both threads unseen, and every later search waited its
        budget out in the queue behind them.
        """
        budget = self.settings.query_embed_timeout
        call = self._embedding_threads.submit(embedder.embed, [query])
        asyncio.get_running_loop().call_later(budget, self._count_if_overdue, call)
        # Not asyncio.wait_for: on 3.11 it swallows a cancellation that meets the answer,
        # and a search cut off by shutdown went on to rank and load its vector leg.
        try:
            async with asyncio.timeout(budget):
                return (await asyncio.wrap_future(call))[0]
        except TimeoutError:
            self._count_if_overdue(call)
            raise TimeoutError(f"the embedder did not answer within {budget:g} s") from None

    def _count_if_overdue(self, call: Future) -> None:
        if not call.done():
            self._overdue.add(call)
            call.add_done_callback(self._overdue.discard)

    async def _vector_leg(
        self, query: str, depth: int, scope: Scope, vectors: Vectors | None, vectors_off: str, warnings: list[str]
    ) -> tuple[list[tuple[int, float]], np.ndarray | None]:
        """The best `depth` (item id, cosine) pairs, and the query's vector (None when the
        leg could not run; `warnings` says why)."""
        if vectors is None:
            warnings.append(f"vector leg unavailable: {vectors_off}; keyword results only")
            return [], None
        index = vectors.index
        if index.mismatched:
            warnings.append(
                f"{index.mismatched} stored vectors have another dimension and are skipped; `ken reembed` rebuilds them"
            )
        if len(self._overdue) >= MAX_OVERDUE_EMBEDS:
            warnings.append(
                f"vector leg skipped: the embedder has not answered the last {len(self._overdue)} queries"
            )
            return [], None
        allowed_call = asyncio.gather(scope.source_ids(self.db), scope.few_chunks(self.db))
        # However the leg ends before it takes the lookup's answer (the embedder failed, or
        # the search was cancelled as its client hung up), the lookup stops with it: left
        # running, it took a reader once one was free and read the scope for no one.
        try:
            try:
                vector = await self._embed_query(vectors.embedder, query)
            except (EmbedderUnavailable, TimeoutError) as exc:
                warnings.append(f"vector leg skipped: {exc}")
                return [], None
            allowed, among = await allowed_call
        finally:
            _stop_unheard(allowed_call)
        if index.dim is not None and vector.shape[0] != index.dim:
            warnings.append(
                f"vector leg skipped: the query embeds to {vector.shape[0]} dimensions but the index holds"
                f" {index.dim}; the library is embedded again with the current model in the background"
            )
            return [], None
        if not allowed:
            return [], vector
        # A narrow scope (a memory scope among fifty) is searched among its own chunks:
        # searched by source, its chunks were few of the nearest the leg offered, so the
        # search ran again deeper, twice, and still missed those beyond a thousand.
        pairs = await index.nearest(vector, depth, allowed, self.settings.min_similarity, among)
        return [(item_id, round(similarity, 6)) for item_id, similarity in pairs], vector
