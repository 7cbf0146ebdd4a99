"""Memory capsules: short pieces of knowledge an agent or a person wants kept.

A capsule is a document in the `memory` source, found by every search (the `capsule`
kind filter narrows to them), plus its own row (kind, scope, confidence, use, links).

Write-time dedup, in this order, under one lock so two writers cannot both pass a check:
1. `supersedes` names a current capsule: the new one replaces it (the old one keeps its
   row, marked, and leaves the index).
2. The same title (redacted; case and spacing aside, punctuation not: "C++" is not
   "C#") in the same scope: that capsule is updated. A secret in a title is masked with
   its fingerprint (`[REDACTED:3f9a]`, service/redaction_key.py), so "deploy token
   ghp_A…" does not update "deploy token ghp_B…".
3. A capsule of the same kind in the same scope at least `duplicate_similarity` alike
   (cosine of the daemon's embedder over title and body; trigram Jaccard of the bodies
   >= `duplicate_trigram` while vectors are not ready): refused with its id, nothing
   written, unless `force`.

Recall ranks by the search's relevance times a freshness that halves its decaying part
every `half_life_days` without a use or an update (never below half), times a weight
for confidence. Being returned by recall or shown counts as a use.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass, replace

import msgspec
import numpy as np

from kenning.api import Capsule, CapsuleHit, CapsuleList, Forgotten, Recalled, Remembered
from kenning.config import ChunkingSettings, Settings
from kenning.errors import EmbedderUnavailable, InvalidRequest, NotFound
from kenning.ingest.chunker import chunk_document
from kenning.ingest.readers import ReadResult
from kenning.ingest.redact import redact
from kenning.ingest.text_docs import check_line, check_title
from kenning.ingest.text_prep import Labels, prepare_text, tidy_tags, visible
from kenning.retrieval.search import Retriever
from kenning.service import paging
from kenning.service.handles import random_handle
from kenning.service.semantic import Semantic
from kenning.store import capsules, lookup, sources
from kenning.store import vectors as vector_store
from kenning.store.capsules import CapsuleDocument, CapsuleRow
from kenning.store.database import Database
from kenning.text.likeness import jaccard, title_key, trigrams
from kenning.workers.embedders import embedding_text

log = logging.getLogger(__name__)

URI_PREFIX = "kenning://memory/"
DAY = 86400.0
FRESHNESS_FLOOR = 0.5
# Chunk hits asked of the search per capsule wanted: a long capsule is several chunks.
SEARCH_DEPTH = 5
MIN_SEARCH_DEPTH = 30
# How many chunks more than its body makes as prose a capsule's headings may cut it
# into. A capsule is a short note, embedded whole by remember: a few sections are a few
# chunks, while 20,000 characters of `#` lines were 10,000 chunks, all embedded at once.
# Not [limits] max_chunks_per_file (10,000 by default), which is sized for files.
CAPSULE_SECTIONS = 32


@dataclass(frozen=True)
class NewCapsule:
    title: str
    body: str
    kind: str = "fact"
    scope: str = "default"
    tags: tuple[str, ...] = ()
    confidence: float = 1.0
    source: str | None = None
    supersedes: str | None = None
    force: bool = False


def _redacted_again(row: CapsuleRow, key: bytes) -> CapsuleRow:
    """A stored capsule's title, body, scope, tags and source redacted and folded by this code."""
    title = redact(row.title, key).strip()
    title = title if visible(title) else row.title
    return replace(
        row, title=title, title_key=title_key(title), body=redact(row.body), scope=redact(row.scope) or "default",
        tags=tidy_tags(row.tags, cut=False), source_ref=redact(row.source_ref) if row.source_ref else None,
    )  # fmt: skip


def scope_of(scope: str) -> str:
    """The scope a capsule is kept in: without spaces at its ends and with any secret in
    it redacted, the default when blank. A scope asked for is folded the same way, so
    the scope an agent wrote under (" ops ") finds what it wrote there."""
    return redact(scope.strip()) or "default"


def capsule_chunk_limit(body: str, chunking: ChunkingSettings) -> int:
    """Scaled to the body as prose, which makes about one chunk per target's worth of
    text, so no chunking setting refuses a capsule without headings of its own."""
    prose = chunk_document(
        ReadResult(text=body, title="", kind="prose", format="text"), chunking.target_chars, chunking.overlap_chars
    )
    return len(prose) + CAPSULE_SECTIONS


def capsule_text(title: str, body: str) -> str:
    """What is compared and embedded for dedup: the title says what the body is about."""
    return f"{title}\n{body}"


def freshness(row: CapsuleRow, now: float, half_life_days: float) -> float:
    idle_days = max(now - row.touched_at, 0.0) / DAY
    return FRESHNESS_FLOOR + (1 - FRESHNESS_FLOOR) * 0.5 ** (idle_days / half_life_days)


def confidence_weight(confidence: float) -> float:
    return 0.75 + 0.25 * confidence


def view(row: CapsuleRow) -> Capsule:
    return Capsule(
        id=row.id, kind=row.kind, scope=row.scope, title=row.title, body=row.body, tags=list(row.tags),
        confidence=row.confidence, source=row.source_ref, created_at=row.created_at, updated_at=row.updated_at,
        last_used_at=row.last_used_at, uses=row.uses, supersedes=row.supersedes, superseded_by=row.superseded_by,
        document_id=row.document_id, uri=URI_PREFIX + row.id,
    )  # fmt: skip


@dataclass(frozen=True)
class Likeness:
    """How alike a text is to each candidate, and the vectors worth keeping."""

    scores: list[float]
    method: str
    vector: bytes | None = None
    signature: str | None = None
    refreshed: tuple[tuple[str, bytes, str], ...] = ()


def _by_vectors(matrix: np.ndarray, stale: list[CapsuleRow], candidates: list[CapsuleRow], signature: str) -> Likeness:
    """Row 0 of `matrix` is the new capsule, the rest are the `stale` candidates."""
    mine = np.asarray(matrix[0], dtype=np.float32)
    fresh = {row.id: np.asarray(matrix[n], dtype=np.float32) for n, row in enumerate(stale, start=1)}
    scores = [
        float(mine @ (fresh[row.id] if row.id in fresh else np.frombuffer(row.vector or b"", np.float32)))
        for row in candidates
    ]
    refreshed = tuple((row_id, vector.tobytes(), signature) for row_id, vector in fresh.items())
    return Likeness(scores, "vector", mine.tobytes(), signature, refreshed)


def _by_trigrams(body: str, candidates: list[CapsuleRow]) -> Likeness:
    # Bodies only: a title is a few words, and a copy filed under another name is still a copy.
    mine = trigrams(body)
    return Likeness([jaccard(mine, trigrams(row.body)) for row in candidates], "trigram")


class Memory:
    def __init__(self, db: Database, settings: Settings, retriever: Retriever, semantic: Semantic) -> None:
        self.db = db
        self.settings = settings
        self.retriever = retriever
        self.semantic = semantic
        self._lock = asyncio.Lock()
        # The fingerprints' key (service/redaction_key.py); the library sets it at open.
        self.redaction_key: bytes | None = None

    def _key(self) -> bytes:
        assert self.redaction_key is not None, "memory is used before the library opened"
        return self.redaction_key

    # -- writing -----------------------------------------------------------------------

    async def remember(self, new: NewCapsule) -> Remembered:
        async with self._lock:
            return await self._remember(new)

    async def _remember(self, new: NewCapsule) -> Remembered:
        spaced = " ".join(new.title.split())
        check_title(spaced)
        # A scope is the capsule's namespace; a blank one is the default.
        check_line("scope", new.scope)
        title = redact(spaced, self._key()).strip()
        body = redact(new.body.strip())
        # A title of format characters alone ("\u200b") is as blank as one of spaces.
        if not visible(title) or not body:
            raise InvalidRequest("a capsule needs a title and a body that are not blank")
        key = title_key(title)
        # Everything stored is redacted, a scope (it becomes the document's namespace) and tags too.
        new = replace(new, scope=scope_of(new.scope), tags=tidy_tags(new.tags))
        old = await self._supersedable(new.supersedes) if new.supersedes is not None else None
        same_title = await capsules.current_by_title(self.db, new.scope, key)
        if same_title is not None and (old is None or same_title.id != old.id):
            if old is not None:
                raise InvalidRequest(
                    f"capsule {same_title.id} already has the title {same_title.title!r} in scope {new.scope!r};"
                    f" give the new capsule another title, or supersede {same_title.id}"
                )
            return await self._update(same_title, new, title, body, key)
        candidates = [
            row for row in await capsules.current(self.db, new.scope, new.kind) if old is None or row.id != old.id
        ]
        likeness = await self._likeness(title, body, candidates)
        if not new.force and candidates:
            best = max(range(len(candidates)), key=lambda i: likeness.scores[i])
            threshold = self._threshold(likeness.method)
            if likeness.scores[best] >= threshold:
                match = candidates[best]
                return Remembered(
                    status="refused",
                    id=match.id,
                    title=match.title,
                    similarity=round(likeness.scores[best], 4),
                    method=likeness.method,
                    message=(
                        f"not stored: capsule {match.id} ({match.title!r}) says nearly the same"
                        f" ({likeness.method} similarity {likeness.scores[best]:.2f} >= {threshold:.2f}); pass"
                        f" supersedes={match.id} to replace it, or force to keep both"
                    ),
                )
        now = time.time()
        row = CapsuleRow(
            id=await self._fresh_id(), document_id=None, kind=new.kind, scope=new.scope, title=title,
            title_key=key, body=body, tags=tuple(new.tags), confidence=new.confidence,
            source_ref=redact(new.source) if new.source else None, created_at=now, updated_at=now,
            last_used_at=None, uses=0, supersedes=old.id if old else None, superseded_by=None,
            vector=likeness.vector, signature=likeness.signature,
        )  # fmt: skip
        document_id = await capsules.save(
            self.db, row, await self._document(row, held=True), old.id if old else None, likeness.refreshed
        )
        await self._embed_now(document_id)
        if old is not None:
            return Remembered(
                "superseded", row.id, title, f"stored as {row.id}, replacing {old.id}", superseded=old.id
            )
        return Remembered("created", row.id, title, f"stored as {row.id}")

    async def _update(self, row: CapsuleRow, new: NewCapsule, title: str, body: str, key: str) -> Remembered:
        likeness = await self._likeness(title, body, [])
        updated = replace(
            row, kind=new.kind, title=title, title_key=key, body=body, tags=tuple(new.tags),
            confidence=new.confidence, source_ref=redact(new.source) if new.source else row.source_ref,
            updated_at=time.time(), vector=likeness.vector, signature=likeness.signature,
        )  # fmt: skip
        await self._embed_now(await capsules.save(self.db, updated, await self._document(updated, held=True)))
        return Remembered("updated", row.id, title, f"updated {row.id}, which had the same title in this scope")

    async def _embed_now(self, document_id: int) -> None:
        """Embed the capsule's chunks at once, so recall finds it by meaning straight after
        remember rather than after the background job's next page (which would only
        rewrite the same vectors). With the embedder down, that job catches up later."""
        vectors = self.semantic.vectors
        if vectors is None:
            return
        items, _ = await lookup.document_page(self.db, document_id, 0, None)
        limit = self.settings.embedder.max_chars
        texts = [embedding_text(item.title, item.section, item.content, limit) for item in items]
        try:
            matrix = await asyncio.to_thread(vectors.embedder.embed, texts)
        except EmbedderUnavailable:
            return
        await vector_store.write_vectors(self.db, vectors.embedder.signature, [item.item_id for item in items], matrix)
        await vectors.index.settled()

    async def _supersedable(self, capsule_id: str) -> CapsuleRow:
        row = await capsules.get(self.db, capsule_id)
        if row is None:
            raise NotFound(f"no capsule {capsule_id}; `ken memory list` shows them")
        if row.superseded_by is not None:
            raise InvalidRequest(
                f"capsule {capsule_id} was already superseded by {row.superseded_by}; supersede that one instead"
            )
        return row

    async def _fresh_id(self) -> str:
        while True:
            capsule_id = random_handle("m")
            if await capsules.get(self.db, capsule_id) is None:
                return capsule_id

    async def prepare_again(self, document_id: int) -> bool:
        """Store a capsule again as this code prepares text (rereading.py): its title, body,
        scope, tags and source redacted and folded by the newest rules. Whether it was stored."""
        async with self._lock:
            row = (await capsules.by_documents(self.db, [document_id])).get(document_id)
            if row is None:
                return False
            again = _redacted_again(row, self._key())
            taken = await capsules.current_by_title(self.db, again.scope, again.title_key)
            if taken is not None and taken.id != row.id:
                # Two titles an older redactor kept apart by the secrets in them ("deploy
                # token ghp_1...", "deploy token ghp_2...") read the same now: this one is
                # told apart by its id rather than left holding its secret.
                title = f"{again.title} ({row.id})"
                again = replace(again, title=title, title_key=title_key(title))
            if (again.title, again.body) != (row.title, row.body):
                # Its likeness vector was of the old text; the next remember embeds it anew.
                again = replace(again, vector=None, signature=None)
            await capsules.save(self.db, again, await self._document(again, added=row.updated_at))
            return True

    async def prepare_superseded_again(self) -> int:
        """Replaced capsules have no document for rereading.py to find, but `memory.show`
        and `memory.list` still return their text, and forgetting what replaced one makes
        it current again: redact theirs by the newest rules too. How many changed."""
        async with self._lock:
            rows = await capsules.superseded(self.db)
            key = self._key()
            changed = [again for row in rows if (again := _redacted_again(row, key)) != row]
            if changed:
                await capsules.rewrite_superseded(self.db, changed)
            return len(changed)

    async def _document(self, row: CapsuleRow, added: float | None = None, held: bool = False) -> CapsuleDocument:
        """`held`: a capsule being written is refused past `capsule_chunk_limit`; one stored
        already is prepared again as it is, since nothing may be lost."""
        labels = Labels(row.title, URI_PREFIX + row.id, row.tags, row.scope)
        chunking = self.settings.chunking
        prepared = await asyncio.to_thread(
            prepare_text, labels, row.body, "markdown", chunking, format="capsule", added=added
        )
        if held:
            limit = await asyncio.to_thread(capsule_chunk_limit, row.body, chunking)
            if len(prepared.items) > limit:
                raise InvalidRequest(
                    f"the capsule makes {len(prepared.items)} chunks, over the {limit} a capsule of its length is held"
                    f" to ({limit - CAPSULE_SECTIONS} as prose and {CAPSULE_SECTIONS} more for its headings): a"
                    " capsule is a short note; give it fewer headings, or keep a long text with `ken add-text`"
                )
        source_id = await sources.aggregate_source(self.db, "capsule")
        return CapsuleDocument(source_id, prepared.labels.uri, prepared.meta, prepared.items)

    def _threshold(self, method: str) -> float:
        memory = self.settings.memory
        return memory.duplicate_similarity if method == "vector" else memory.duplicate_trigram

    async def _likeness(self, title: str, body: str, candidates: list[CapsuleRow]) -> Likeness:
        """Cosine with each candidate when the embedder can serve, else trigram Jaccard.

        Candidates whose stored vector came from another embedder are embedded again in
        the same call, and their new vectors are saved with the write. The comparisons run
        in a worker thread: a scope can hold thousands of capsules."""
        vectors = self.semantic.vectors
        if vectors is not None:
            embedder = vectors.embedder
            limit = self.settings.embedder.max_chars
            stale = [row for row in candidates if row.signature != embedder.signature or row.vector is None]
            texts = [capsule_text(title, body)[:limit], *(capsule_text(r.title, r.body)[:limit] for r in stale)]
            try:
                matrix = await asyncio.to_thread(embedder.embed, texts)
            except EmbedderUnavailable as exc:
                log.info("capsule dedup by trigrams: %s", exc)
            else:
                return await asyncio.to_thread(_by_vectors, matrix, stale, candidates, embedder.signature)
        return await asyncio.to_thread(_by_trigrams, body, candidates)

    # -- reading -----------------------------------------------------------------------

    async def recall(
        self, query: str, limit: int = 5, scope: str | None = None, kinds: tuple[str, ...] = ()
    ) -> Recalled:
        found = await self.retriever.search(
            query,
            max(limit * SEARCH_DEPTH, MIN_SEARCH_DEPTH),
            namespace=scope_of(scope) if scope is not None else None,
            kinds=("capsule",),
            vectors=self.semantic.vectors,
            vectors_off=self.semantic.off,
            snippets=False,
        )
        best: dict[int, tuple[float, int]] = {}
        for hit in found.hits:
            best.setdefault(hit.document_id, (hit.score, hit.item_id))
            # The same text kept in another scope is another capsule, as relevant;
            # freshness and confidence decide between them below.
            for other in hit.also_at:
                best.setdefault(other.document_id, (hit.score, other.item_id))
        rows = await capsules.by_documents(self.db, list(best))
        now = time.time()
        half_life = self.settings.memory.half_life_days
        ranked = []
        for document_id, (relevance, item_id) in best.items():
            row = rows.get(document_id)
            if row is None or (kinds and row.kind not in kinds):
                continue
            fresh = freshness(row, now, half_life)
            score = relevance * fresh * confidence_weight(row.confidence)
            ranked.append(CapsuleHit(view(row), round(score, 6), relevance, round(fresh, 4), item_id))
        ranked.sort(key=lambda hit: (-hit.score, hit.capsule.id))
        ranked = ranked[:limit]
        # Ranked by how fresh each was before this use; shown as this use leaves it, as
        # `show` shows a capsule.
        used_at = await capsules.mark_used(self.db, [hit.capsule.id for hit in ranked])
        for hit in ranked:
            hit.capsule = msgspec.structs.replace(hit.capsule, last_used_at=used_at, uses=hit.capsule.uses + 1)
        return Recalled(ranked, found.warnings)

    async def show(self, capsule_id: str) -> Capsule:
        row = await capsules.get(self.db, capsule_id)
        if row is None:
            raise NotFound(f"no capsule {capsule_id}; `ken memory list` shows them")
        if row.superseded_by is None:
            used_at = await capsules.mark_used(self.db, [row.id])
            row = replace(row, last_used_at=used_at, uses=row.uses + 1)
        return view(row)

    async def listing(
        self, scope: str | None, kind: str | None, superseded: bool, limit: int, offset: int, cursor: str | None
    ) -> CapsuleList:
        """Newest created first: an update leaves a capsule where it was, so a walk by
        cursor meets each capsule once however others write meanwhile."""
        scope = scope_of(scope) if scope is not None else None
        filters = {"scope": scope, "kind": kind, "superseded": superseded}
        after = None
        if cursor is not None:
            position = paging.decode(cursor, "memory.list", filters)
            after = (position.created_at, position.id)
        rows, total, more = await capsules.listing(self.db, scope, kind, superseded, limit, offset, after)
        following = None
        if more:
            following = paging.encode("memory.list", filters, paging.Position(rows[-1].created_at, rows[-1].id))
        return CapsuleList([view(row) for row in rows], total, following)

    async def forget(self, capsule_id: str) -> Forgotten:
        """Forgetting the current capsule of a chain of replacements makes the one it
        replaced current again (under its title and id when another current capsule has
        taken its title): the knowledge it stood in for is not forgotten with it."""
        async with self._lock:
            row = await capsules.get(self.db, capsule_id)
            if row is None:
                raise NotFound(f"no capsule {capsule_id}; `ken memory list` shows them")
            previous = await capsules.get(self.db, row.supersedes) if row.supersedes is not None else None
            revived = None
            if previous is not None and row.superseded_by is None and previous.superseded_by == row.id:
                taken = await capsules.current_by_title(self.db, previous.scope, previous.title_key)
                if taken is not None and taken.id != row.id:
                    # Another current capsule took its title meanwhile; left replaced, it would
                    # name a capsule that no longer exists and could never be replaced again
                    # ("supersede that one instead"). It comes back told apart by its id.
                    title = f"{previous.title} ({previous.id})"
                    previous = replace(previous, title=title, title_key=title_key(title))
                revived = (previous, await self._document(previous))
            forgotten = await capsules.forget(self.db, capsule_id, revived)
        if forgotten is None:
            raise NotFound(f"no capsule {capsule_id}; `ken memory list` shows them")
        row, document_id = forgotten
        if document_id is not None:
            await self._embed_now(document_id)
        return Forgotten(row.id, row.title)

    async def vectors_for(self, rows: list[CapsuleRow]) -> tuple[dict[str, np.ndarray], str | None]:
        """Current-embedder vectors for these capsules (embedding and saving the stale
        ones), or ({}, why not) when the embedder cannot serve."""
        vectors = self.semantic.vectors
        if vectors is None:
            return {}, self.semantic.off
        embedder = vectors.embedder
        have = {
            row.id: np.frombuffer(row.vector, np.float32)
            for row in rows
            if row.vector is not None and row.signature == embedder.signature
        }
        stale = [row for row in rows if row.id not in have]
        if stale:
            limit = self.settings.embedder.max_chars
            try:
                matrix = await asyncio.to_thread(
                    embedder.embed, [capsule_text(row.title, row.body)[:limit] for row in stale]
                )
            except EmbedderUnavailable as exc:
                return {}, str(exc)
            fresh = {row.id: np.asarray(vector, dtype=np.float32) for row, vector in zip(stale, matrix)}
            await capsules.set_vectors(
                self.db, [(row_id, vector.tobytes(), embedder.signature) for row_id, vector in fresh.items()]
            )
            have.update(fresh)
        return have, None
