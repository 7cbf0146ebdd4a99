"""Near-duplicate matching across sources: the same document held twice, not byte-identical.

The exact-hash gate at ingest collapses identical text only; this tier finds copies that
differ a little (a re-export, an edited upload, a fetched page with a new footer). A pair
counts only when all three hold: the whole-document vectors are almost parallel (cosine
>= `similarity`), the names are almost the same once copy markers are stripped (>=
`name_similarity`), and the two documents sit in different sources. Two files in one
source with near-identical text are two documents the user keeps on purpose.

A matched pair is only a candidate. Collapsing it deletes the loser's items, so the store
applies it only when the loser has no line its winner lacks, whitespace aside
(`ownership.collapse_pairs`): a re-spaced copy or an excerpt folds into the fuller copy,
while two plans that differ in one owner line stay two documents, or that line would be
in no item and no search could find it. Keeping the loser's own chunks on a merged row
was the other way; it would break the rule that a merged row holds nothing, which
release, scoping and citations rely on. Leaving such a pair alone costs little: search
already folds identical chunks into one hit with the other file in `also_at`, so the
shared text still shows once.

Comparing every pair would make the hourly sweep quadratic in the library, so candidates
are blocked by name first: every document goes into a few blocks keyed by its normalised
name and by the first and last characters of it. Only documents sharing a block are
compared, by exact cosine and then exact name ratio. A block up to `MAX_EXACT_BLOCK`
costs at most that many comparisons per member. A bigger one (a hot name: "readme",
"index", "notes") is cut into buckets by random-hyperplane signatures of its vectors,
with enough tables that a pair at the threshold still meets in one of them with
probability about `_TARGET_RECALL`; a member then costs about tables x bucket size, and
the tables grow only as the block size to the power log2(1 / `_BIT_AGREEMENT`), about
0.18. So the sweep stays close to linear as hot names grow with the library, at the
price of that small miss rate inside hot blocks.

The trade-off: two near-identical texts whose names share no key (not the normalised
name, not its first or last characters) are never compared. That is by design: a name
match is a required condition, and names at difflib ratio >= 0.8 nearly always keep one
end intact; what is lost is a name edited at both ends, like "A project plan" and
"project plans" (ratio 0.89).
"""

from __future__ import annotations

import difflib
import math
import re
import unicodedata
from collections import defaultdict
from collections.abc import Collection, Sequence
from dataclasses import dataclass

import numpy as np

# A block up to this size is compared whole, in one matrix product; bigger blocks go
# through LSH buckets, which only pay off once n²/2 exceeds tables * n * bucket size.
MAX_EXACT_BLOCK = 256
_BUCKET_TARGET = 32
# How often one centred hyperplane keeps a pair at cosine 0.97 on the same side. Measured:
# 0.92 for wordllama vectors of edited NFCorpus/SciFact abstracts, 0.89 on the bench's
# more clustered synthetic vectors; the table count is derived from it, so a lower value
# buys recall with more comparisons.
_BIT_AGREEMENT = 0.88
_TARGET_RECALL = 0.995
_MAX_BITS = 16
_MAX_TABLES = 64
# Fixed so a sweep is reproducible and the targeted mode cuts the same buckets.
_LSH_SEED = 0x6B656E
_AFFIX_CHARS = 5
_SHORT_AFFIX_CHARS = 3
# Floats per batched product: 1 MB of float32 stays in cache and in the allocator's heap;
# bigger batches measured slower, as each fresh large array costs page faults.
_BATCH_FLOATS = 1 << 18

_CAMEL = re.compile(r"(?<=[a-z])(?=[A-Z])")
_COPY_OF = re.compile(r"^copy\s+of\s+")
# A letter first, so "v1.2" and "release 2.0" keep their numbers.
_EXTENSION = re.compile(r"\.[a-z][a-z0-9]{0,4}$")
_MARKER = re.compile(
    r"(?:\s*[(\[]\d{1,3}[)\]]"  # "name (1)", "name[2]": browser and desktop copies
    r"|\s*\((?:another |\d+(?:st|nd|rd|th) )?copy(?: \d+)?\)"  # "(copy)", "(another copy)"
    r"|[\s_.-]+copy(?: ?\d+)?"  # " copy", " - Copy", "-copy", " copy 2"
    r"|[\s_.-]+v\d+(?:[._]\d+)*"  # "_v2", " v3", "-v1.2"
    r"|[\s_.-]+final)$"
)
_WORD = re.compile(r"[^\W_]+")
_NUMBER = re.compile(r"\d+")


@dataclass(frozen=True, eq=False)
class DocSignal:
    """What matching needs of one document; `vector` None means not embedded yet.

    `vector` is the mean of the document's chunk vectors (normalised here again, so the
    raw mean works too); `rank` is its source's persistence rank, higher kept first.
    """

    document_id: int
    source_id: int
    name: str
    vector: np.ndarray | None
    rank: int
    chunk_count: int


@dataclass(frozen=True)
class NearDuplicate:
    """Collapse `loser_id` into `winner_id`; the scores are those of this very pair."""

    winner_id: int
    loser_id: int
    similarity: float
    name_similarity: float


@dataclass
class SweepStats:
    """Counters of one call, so a caller or a test can see the work stayed sub-quadratic."""

    documents: int = 0  # documents with a vector and a usable name
    blocks: int = 0  # distinct blocks of two or more documents that were compared
    lsh_blocks: int = 0  # of those, blocks too big to compare whole
    comparisons: int = 0  # document pairs whose cosine was computed (repeats included)
    candidates: int = 0  # distinct pairs over the vector threshold, then name-checked
    pairs: int = 0  # distinct pairs meeting every condition, before clustering


def normalise_name(name: str) -> str:
    """The name a copy shares with its original: last path segment, case folded, words
    split at camelCase and separators, extension and copy markers stripped.

    Copy markers are what file managers, browsers and people add to a copy: " (1)",
    "[2]", " copy", " - Copy", "-copy", "copy of ", "(another copy)", "_v2", "v1.2",
    "_final", stripped repeatedly from the end. Dates and other bare numbers are kept:
    they usually name a distinct edition (see `name_ratio`). Empty when nothing is left.
    """
    base = name.replace("\\", "/").rstrip("/ ").rpartition("/")[2]
    if not base.isascii():
        base = unicodedata.normalize("NFKC", base)
    base = _CAMEL.sub(" ", base).casefold().strip()
    base = _COPY_OF.sub("", base)
    base = _EXTENSION.sub("", base) or base
    while (stripped := _MARKER.sub("", base)) != base and stripped:
        base = stripped
    return " ".join(_WORD.findall(base))


def name_ratio(a: str, b: str) -> float:
    """difflib ratio of two normalised names, or 0 when the numbers in them differ.

    A number in a name usually names an edition (invoice 0042 and 0043, the minutes of
    2024-05 and 2024-06, chapter 1 and 2); a template makes such editions near-identical
    as vectors, and difflib still rates their names 0.9 alike. Copy and version numbers
    are gone after `normalise_name`, so they do not count.
    """
    if a == b:
        return 1.0
    if [int(n) for n in _NUMBER.findall(a)] != [int(n) for n in _NUMBER.findall(b)]:
        return 0.0
    return difflib.SequenceMatcher(None, a, b, autojunk=False).ratio()


def _block_keys(stem: str) -> tuple[str, ...]:
    """Keys a renamed copy likely still shares: the whole normalised name for a copy
    marker, its first or last characters for an edit at the other end. A short name
    also gets shorter ends, or one edit in its middle would change both."""
    compact = stem.replace(" ", "")
    keys = ("=" + stem, "<" + compact[:_AFFIX_CHARS], ">" + compact[-_AFFIX_CHARS:])
    if len(compact) < 2 * _AFFIX_CHARS:
        keys += ("<<" + compact[:_SHORT_AFFIX_CHARS], ">>" + compact[-_SHORT_AFFIX_CHARS:])
    return keys


def find_near_duplicates(
    docs: Sequence[DocSignal],
    *,
    similarity: float = 0.97,
    name_similarity: float = 0.8,
    only: Collection[int] | None = None,
    stats: SweepStats | None = None,
) -> list[NearDuplicate]:
    """The collapses a sweep should apply, one winner per cluster and each loser once.

    With `only`, just the pairs involving those document ids are looked for (the targeted
    pass after a scan): the block index over all documents is still built, O(N), but only
    the blocks holding one of them are compared. `stats`, when given, is filled in.
    """
    matcher = _Matcher(docs, similarity, name_similarity, only, stats if stats is not None else SweepStats())
    matcher.run()
    return matcher.resolve()


class _Matcher:
    def __init__(
        self,
        docs: Sequence[DocSignal],
        similarity: float,
        name_similarity: float,
        only: Collection[int] | None,
        stats: SweepStats,
    ) -> None:
        if len({doc.document_id for doc in docs}) != len(docs):
            raise ValueError("document ids must be unique")
        # Hot names repeat thousands of times; normalise each distinct one once.
        stems = {name: normalise_name(name) for name in {doc.name for doc in docs}}
        # Not embedded yet, or nothing to compare the name on: a later sweep retries.
        kept = [doc for doc in docs if doc.vector is not None and stems[doc.name]]
        vectors = np.array([doc.vector for doc in kept], np.float32) if kept else np.zeros((0, 1), np.float32)
        norms = np.sqrt(np.einsum("ij,ij->i", vectors, vectors))
        # A zero mean (a document of empty chunks) has no direction to compare.
        if not norms.all():
            kept = [doc for doc, norm in zip(kept, norms) if norm]
            vectors, norms = vectors[norms > 0], norms[norms > 0]
        vectors /= norms[:, None]
        self.docs = kept
        self.stems = [stems[doc.name] for doc in kept]
        self.vectors = vectors
        self.sources = np.array([doc.source_id for doc in self.docs])
        self.focus = None if only is None else np.array([doc.document_id in only for doc in self.docs], bool)
        self.similarity = similarity
        self.name_similarity = name_similarity
        self.stats = stats
        stats.documents = len(self.docs)
        self.checked: set[tuple[int, int]] = set()
        self.pairs: dict[tuple[int, int], tuple[float, float]] = {}
        self.lsh: tuple[np.ndarray, np.ndarray] | None = None  # random planes, library mean

    def run(self) -> None:
        keys = {stem: _block_keys(stem) for stem in set(self.stems)}
        blocks: dict[str, list[int]] = defaultdict(list)
        for row, stem in enumerate(self.stems):
            for key in keys[stem]:
                blocks[key].append(row)
        if self.focus is None:
            wanted = blocks.keys()
        else:
            wanted = {key for row in np.flatnonzero(self.focus) for key in keys[self.stems[row]]}
        # The whole name, its prefix and its suffix often give the same members: compare once.
        compared: set[tuple[int, ...]] = set()
        groups: dict[int, list[np.ndarray]] = defaultdict(list)
        for key in wanted:
            members = tuple(blocks[key])
            if len(members) < 2 or members in compared:
                continue
            compared.add(members)
            block = np.array(members)
            if np.all(self.sources[block] == self.sources[block[0]]):
                continue
            self.stats.blocks += 1
            if block.size > MAX_EXACT_BLOCK:
                self.stats.lsh_blocks += 1
                buckets = self._buckets(block)
            else:
                buckets = [block]
            for bucket in buckets:
                if self.focus is None or self.focus[bucket].any():
                    groups[bucket.size].append(bucket)
        for size, same_size in groups.items():
            self._compare(np.array(same_size), size)
        self.stats.pairs = len(self.pairs)

    def _compare(self, groups: np.ndarray, size: int) -> None:
        """All pairs inside each row of `groups`, equal-sized groups in one batched product,
        since thousands of tiny products would cost more in call overhead than in arithmetic."""
        per_chunk = max(1, _BATCH_FLOATS // (size * max(size, self.vectors.shape[1])))
        for start in range(0, len(groups), per_chunk):
            chunk = groups[start : start + per_chunk]
            stacked = self.vectors[chunk]
            self.stats.comparisons += len(chunk) * size * (size - 1) // 2
            # A small margin: float32 products differ in the last bits with the batch
            # shape, and the decision itself is taken in float64 in `_consider`. Hits are
            # rare, so the other conditions are checked on them alone.
            group, a, b = np.nonzero(stacked @ stacked.transpose(0, 2, 1) >= self.similarity - 1e-4)
            upper = a < b
            first, second = chunk[group[upper], a[upper]], chunk[group[upper], b[upper]]
            keep = self.sources[first] != self.sources[second]
            if self.focus is not None:
                keep &= self.focus[first] | self.focus[second]
            for i, j in zip(first[keep].tolist(), second[keep].tolist()):
                self._consider(i, j)

    def _buckets(self, block: np.ndarray) -> list[np.ndarray]:
        """LSH buckets of a big block: sign patterns of the centred vectors on random planes.

        Centring on the library mean matters: document vectors share a large common
        direction, so uncentred planes would put most of a block on one side and the
        buckets would stay big. Bits per table grow with log2 of the block size so buckets
        average `_BUCKET_TARGET`; tables are added until a pair agreeing on each bit with
        probability `_BIT_AGREEMENT` meets in some bucket with `_TARGET_RECALL`.
        """
        if self.lsh is None:
            rng = np.random.default_rng(_LSH_SEED)
            planes = rng.standard_normal((self.vectors.shape[1], _MAX_TABLES, _MAX_BITS)).astype(np.float32)
            self.lsh = planes, self.vectors.mean(axis=0)
        all_planes, centre = self.lsh
        bits = min(_MAX_BITS, max(1, math.ceil(math.log2(block.size / _BUCKET_TARGET))))
        tables = min(_MAX_TABLES, math.ceil(math.log(1 - _TARGET_RECALL) / math.log(1 - _BIT_AGREEMENT**bits)))
        planes = all_planes[:, :tables, :bits].reshape(self.vectors.shape[1], tables * bits)
        signs = ((self.vectors[block] - centre) @ planes > 0).reshape(block.size, tables, bits)
        codes = signs @ (1 << np.arange(bits))
        buckets = []
        for table in range(tables):
            order = np.argsort(codes[:, table], kind="stable")
            cuts = np.flatnonzero(np.diff(codes[order, table])) + 1
            buckets.extend(block[bucket] for bucket in np.split(order, cuts) if bucket.size > 1)
        return buckets

    def _consider(self, i: int, j: int) -> None:
        key = (i, j) if i < j else (j, i)
        if key in self.checked:
            return
        self.checked.add(key)
        self.stats.candidates += 1
        cosine = float(np.dot(self.vectors[i].astype(np.float64), self.vectors[j].astype(np.float64)))
        if cosine < self.similarity:
            return
        ratio = name_ratio(self.stems[i], self.stems[j])
        if ratio >= self.name_similarity:
            self.pairs[key] = (cosine, ratio)

    def resolve(self) -> list[NearDuplicate]:
        """Greedy star clusters: the best document left claims every match not yet claimed.

        Union-find would chain A~B~C into one cluster and collapse C into A although the
        two never matched; here every loser is a direct match of its winner, no winner is
        anyone's loser, and a document matching only a loser stays, as it is not a copy
        of what survives. Best means higher rank, then more chunks, then the older id.
        """
        neighbours: dict[int, list[int]] = defaultdict(list)
        for i, j in self.pairs:
            neighbours[i].append(j)
            neighbours[j].append(i)

        def priority(row: int) -> tuple[int, int, int]:
            doc = self.docs[row]
            return (-doc.rank, -doc.chunk_count, doc.document_id)

        claimed: set[int] = set()
        collapses: list[NearDuplicate] = []
        for winner in sorted(neighbours, key=priority):
            if winner in claimed:
                continue
            claimed.add(winner)
            for loser in sorted(neighbours[winner], key=priority):
                if loser not in claimed:
                    claimed.add(loser)
                    cosine, ratio = self.pairs[(winner, loser) if winner < loser else (loser, winner)]
                    collapses.append(
                        NearDuplicate(self.docs[winner].document_id, self.docs[loser].document_id, cosine, ratio)
                    )
        return collapses
