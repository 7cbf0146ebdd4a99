"""Search entry point: runs the retrieval legs and fuses them into ranked, cited hits.

The caller picks the legs (all three by default: keyword, vector, graph). The vector leg runs when an index for the current
embedder exists and the query can be embedded; if it cannot (the embedder is down, the
index is still loading after an embedder change), the search still answers from the
other legs and says why in `warnings`.
"""

from __future__ import annotations

import asyncio
import math
from dataclasses import dataclass, field

from kenning.config import RetrievalSettings
from kenning.retrieval.fusion import fuse_rrf, fuse_scores
from kenning.retrieval.graph import graph_search
from kenning.retrieval.hits import Hit, load_hits
from kenning.retrieval.keyword import keyword_search, snippets
from kenning.retrieval.scope import Scope
from kenning.retrieval.vector_index import VectorIndex
from kenning.store.database import Database
from kenning.workers.embedders import Embedder, EmbedderUnavailable

LEGS = ("keyword", "vector", "graph")
MIN_CANDIDATES = 30
# The walk mass at which a graph hit counts for 63 % of the leg's weight (1 - 1/e).
GRAPH_SCALE = 0.02


@dataclass
class SearchResult:
    hits: list[Hit]
    warnings: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        result: dict = {"hits": [hit.to_dict() for hit in self.hits]}
        if self.warnings:
            result["warnings"] = self.warnings
        return result


@dataclass
class Retriever:
    db: Database
    settings: RetrievalSettings
    embedder: Embedder | None = None
    index: VectorIndex | None = None

    async def search(
        self,
        query: str,
        limit: int = 10,
        source: str | None = None,
        namespace: str | None = None,
        legs: tuple[str, ...] = LEGS,
    ) -> SearchResult:
        scope = Scope(source, namespace)
        depth = max(limit * 3, MIN_CANDIDATES)
        found: dict[str, list[Hit]] = {}
        warnings: list[str] = []
        query_vector = None
        if "vector" in legs:
            query_vector = await self._embed_query(query, warnings)
        async with self.db.reader() as conn:
            if "keyword" in legs:
                found["keyword"] = await keyword_search(conn, query, depth, scope)
            if query_vector is not None and self.index is not None:
                found["vector"] = await self._vector_leg(conn, query_vector, depth, scope)
            if "graph" in legs and self.settings.graph_weight > 0:
                found["graph"] = await graph_search(conn, query, depth, scope)
            hits = [hit for hit in self._fuse(found, query_vector) if hit.score >= self.settings.min_score]
            hits = hits[:limit]
            highlighted = await snippets(conn, query, [hit.item_id for hit in hits if "keyword" in hit.legs])
        for hit in hits:
            hit.snippet = highlighted.get(hit.item_id) or hit.snippet
        return SearchResult(hits, warnings)

    def _fuse(self, found: dict[str, list[Hit]], query_vector) -> list[Hit]:
        weights = {
            "keyword": self.settings.keyword_weight,
            "vector": self.settings.vector_weight,
            "graph": self.settings.graph_weight,
        }
        if self.settings.fusion == "rrf":
            return fuse_rrf(found, weights, self.settings.rrf_k)
        raw = {leg: {hit.item_id: hit.score for hit in hits} for leg, hits in found.items()}
        if "graph" in found:
            # Graph scores are walk probabilities: what share of the query's entities'
            # weight reached the chunk. Their size is the leg's confidence (a query
            # naming a rare entity reaches a few chunks strongly; one naming only
            # common phrases spreads thin), so they are mapped onto 0-1 as they are
            # rather than stretched per query.
            raw["graph"] = {hit.item_id: 1.0 - math.exp(-hit.score / GRAPH_SCALE) for hit in found["graph"]}
        if "vector" in found and "keyword" in found:
            # Score every keyword candidate on meaning too, not just those the vector
            # leg happened to rank: this is what lets it reorder keyword hits.
            unscored = [hit.item_id for hit in found["keyword"] if hit.item_id not in raw["vector"]]
            raw["vector"].update(self.index.similarities(query_vector, unscored))
        return fuse_scores(found, raw, weights, calibrated=frozenset({"graph"}))

    async def _embed_query(self, query: str, warnings: list[str]):
        if self.embedder is None or self.index is None:
            warnings.append("vector leg unavailable: the embedding index is loading; keyword results only")
            return None
        if self.index.mismatched:
            warnings.append(
                f"{self.index.mismatched} stored vectors have another dimension and are skipped;"
                " `ken reembed` rebuilds them"
            )
        try:
            vector = (await asyncio.to_thread(self.embedder.embed, [query]))[0]
        except EmbedderUnavailable as exc:
            warnings.append(f"vector leg skipped: {exc}")
            return None
        if self.index.dim is not None and vector.shape[0] != self.index.dim:
            warnings.append(
                f"vector leg skipped: the query embeds to {vector.shape[0]} dimensions but the index holds"
                f" {self.index.dim}; `ken reembed` rebuilds it for the current embedder"
            )
            return None
        return vector

    async def _vector_leg(self, conn, query_vector, depth: int, scope: Scope) -> list[Hit]:
        allowed = await scope.source_ids(conn)
        if not allowed:
            return []
        pairs = await asyncio.to_thread(
            self.index.search, query_vector, depth, allowed, self.settings.min_similarity
        )
        where, params = scope.where()
        loaded = await load_hits(conn, [item_id for item_id, _ in pairs], where, params)
        hits = []
        for item_id, similarity in pairs:
            hit = loaded.get(item_id)
            if hit is not None:  # removed since the index snapshot, or out of scope
                hit.score = round(similarity, 6)
                hits.append(hit)
        return hits
