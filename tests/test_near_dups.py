"""Near-duplicate matching: which pairs collapse, who wins, and that the work stays sub-quadratic."""

import numpy as np
import pytest

from kenning.ingest.near_dups import (
    DocSignal,
    NearDuplicate,
    SweepStats,
    find_near_duplicates,
    name_ratio,
    normalise_name,
)

DIM = 256
RNG = np.random.default_rng(11)
# Real document vectors share a common direction; random pairs here sit near cosine 0.5.
SHARED = RNG.standard_normal(DIM)
SHARED /= np.linalg.norm(SHARED)


def unit(vector: np.ndarray) -> np.ndarray:
    return (vector / np.linalg.norm(vector)).astype(np.float32)


def random_vector(rng: np.random.Generator = RNG) -> np.ndarray:
    own = rng.standard_normal(DIM)
    return unit(0.7 * SHARED + 0.7 * own / np.linalg.norm(own))


def near(vector: np.ndarray, cosine: float, rng: np.random.Generator = RNG) -> np.ndarray:
    """`vector` moved to about `cosine` from where it was."""
    noise = rng.standard_normal(DIM)
    noise -= noise @ vector * vector
    return unit(vector + np.sqrt(1 / cosine**2 - 1) * noise / np.linalg.norm(noise))


def doc(document_id: int, source_id: int, name: str, vector, rank: int = 1, chunks: int = 3) -> DocSignal:
    return DocSignal(document_id, source_id, name, vector, rank, chunks)


def pairs(found: list[NearDuplicate]) -> set[tuple[int, int]]:
    return {(d.winner_id, d.loser_id) for d in found}


@pytest.mark.parametrize(
    ("name", "stem"),
    [
        ("README.md", "readme"),
        ("readme (1).MD", "readme"),
        ("Report-Final_v2 (1).docx", "report"),
        ("Copy of Report.pdf", "report"),
        ("notes - Copy.txt", "notes"),
        ("notes copy 2.txt", "notes"),
        ("meeting_notes (another copy).md", "meeting notes"),
        ("MeetingNotes.md", "meeting notes"),
        ("spec v1.2.md", "spec"),
        ("docs/guide/Intro.html", "intro"),
        ("C:\\Users\\me\\Plan[2].txt", "plan"),
        ("minutes 2024-05-01.md", "minutes 2024 05 01"),
        ("release 2.0.pdf", "release 2 0"),
        ("photocopy.txt", "photocopy"),
        ("final.md", "final"),
        (".bashrc", "bashrc"),
        ("---", ""),
    ],
)
def test_normalise_name(name: str, stem: str) -> None:
    assert normalise_name(name) == stem


def test_name_ratio_rejects_a_different_number() -> None:
    assert name_ratio("invoice 0042", "invoice 0043") == 0.0
    assert name_ratio("minutes 2024 05", "minutes 2024 06") == 0.0
    assert name_ratio("meeting notes", "meetng notes") > 0.9


@pytest.mark.parametrize("copy_name", ["Guide (1).md", "guide-copy.md", "GUIDE.MD", "Copy of guide.txt", "guide_v2.md"])
def test_renamed_copy_in_another_source_is_found(copy_name: str) -> None:
    original = random_vector()
    docs = [
        doc(1, 1, "guide.md", original),
        doc(2, 2, copy_name, near(original, 0.99)),
        doc(3, 2, "other.md", random_vector()),
    ]
    [found] = find_near_duplicates(docs)
    assert (found.winner_id, found.loser_id) == (1, 2)
    assert found.similarity == pytest.approx(0.99, abs=1e-3)
    assert found.name_similarity == 1.0


def test_typo_in_the_name_is_found() -> None:
    original = random_vector()
    docs = [doc(1, 1, "architecture.md", original), doc(2, 2, "archtecture.md", near(original, 0.99))]
    [found] = find_near_duplicates(docs)
    assert 0.8 <= found.name_similarity < 1.0


@pytest.mark.parametrize(
    ("name", "cosine", "source"),
    [
        ("budget.md", 0.995, 2),  # different name
        ("invoice 0043.md", 0.995, 2),  # the next edition, not a copy
        ("invoice 0042 (1).md", 0.95, 2),  # text differs too much
        ("invoice 0042 (1).md", 0.995, 1),  # same source: kept on purpose
    ],
)
def test_not_a_near_duplicate(name: str, cosine: float, source: int) -> None:
    original = random_vector()
    docs = [doc(1, 1, "invoice 0042.md", original), doc(2, source, name, near(original, cosine))]
    assert find_near_duplicates(docs) == []


def test_thresholds_are_the_callers() -> None:
    original = random_vector()
    docs = [doc(1, 1, "architecture.md", original), doc(2, 2, "archtecture.md", near(original, 0.98))]
    assert len(find_near_duplicates(docs)) == 1
    assert find_near_duplicates(docs, similarity=0.99) == []
    assert find_near_duplicates(docs, name_similarity=1.0) == []


@pytest.mark.parametrize(
    ("first", "second", "winner"),
    [
        ({"rank": 1, "chunks": 9}, {"rank": 2, "chunks": 1}, 2),  # a folder beats an upload
        ({"rank": 1, "chunks": 3}, {"rank": 1, "chunks": 4}, 2),  # then more chunks
        ({"rank": 1, "chunks": 4}, {"rank": 1, "chunks": 4}, 1),  # then the older id
    ],
)
def test_winner_rule(first: dict, second: dict, winner: int) -> None:
    original = random_vector()
    docs = [doc(1, 1, "plan.md", original, **first), doc(2, 2, "plan (1).md", near(original, 0.99), **second)]
    [found] = find_near_duplicates(docs)
    assert (found.winner_id, found.loser_id) == (winner, 3 - winner)


def test_three_copies_give_one_winner_and_two_losers() -> None:
    original = random_vector()
    docs = [
        doc(7, 3, "plan (2).md", near(original, 0.995), rank=1),
        doc(5, 1, "plan.md", original, rank=2),
        doc(6, 2, "Plan copy.md", near(original, 0.995), rank=1),
    ]
    assert pairs(find_near_duplicates(docs)) == {(5, 6), (5, 7)}


def test_a_chain_does_not_collapse_what_never_matched() -> None:
    """A~B and B~C but not A~C: B goes into the best of its matches, C stays."""
    a = random_vector()
    b = near(a, 0.975)
    c = near(b, 0.975)
    while float(a @ c) >= 0.97:  # make sure the ends really differ
        c = near(b, 0.975)
    docs = [doc(1, 1, "plan.md", a, rank=2), doc(2, 2, "plan.md", b), doc(3, 3, "plan.md", c)]
    found = find_near_duplicates(docs)
    assert pairs(found) == {(1, 2)}
    winners, losers = {d.winner_id for d in found}, {d.loser_id for d in found}
    assert not winners & losers


def test_documents_without_a_vector_or_name_are_skipped() -> None:
    original = random_vector()
    docs = [
        doc(1, 1, "plan.md", original),
        doc(2, 2, "plan.md", None),
        doc(3, 3, "plan.md", np.zeros(DIM, np.float32)),
        doc(4, 4, "(1).md", near(original, 0.999)),
    ]
    assert find_near_duplicates(docs) == []
    assert find_near_duplicates([]) == []


def test_unnormalised_mean_vectors_work() -> None:
    original = random_vector()
    docs = [doc(1, 1, "plan.md", original * 3.5), doc(2, 2, "plan.md", near(original, 0.99) * 0.2)]
    assert pairs(find_near_duplicates(docs)) == {(1, 2)}


def test_duplicate_document_ids_are_refused() -> None:
    with pytest.raises(ValueError, match="unique"):
        find_near_duplicates([doc(1, 1, "a.md", random_vector()), doc(1, 2, "a.md", random_vector())])


def small_library(rng: np.random.Generator) -> tuple[list[DocSignal], set[frozenset[int]]]:
    """300 documents over four sources, 30 planted copies, names from a small vocabulary."""
    words = ["notes", "plan", "design", "readme", "budget", "roadmap", "spec", "todo"]
    docs: list[DocSignal] = []
    for _ in range(300):
        name = "-".join(rng.choice(words, size=rng.integers(1, 3))) + ".md"
        docs.append(doc(len(docs) + 1, int(rng.integers(1, 5)), name, random_vector(rng), int(rng.integers(1, 3))))
    planted = set()
    for index in rng.choice(len(docs), size=30, replace=False):
        original = docs[index]
        source = 1 + (original.source_id % 4)
        stem = original.name.removesuffix(".md")
        copy = doc(len(docs) + 1, source, f"{stem} (1).md", near(original.vector, 0.985, rng), int(rng.integers(1, 3)))
        docs.append(copy)
        planted.add(frozenset((original.document_id, copy.document_id)))
    return docs, planted


def test_full_sweep_finds_the_planted_copies() -> None:
    docs, planted = small_library(np.random.default_rng(3))
    found = find_near_duplicates(docs)
    assert {frozenset(p) for p in pairs(found)} == planted


def test_targeted_mode_finds_what_the_full_sweep_finds_for_those_documents() -> None:
    docs, planted = small_library(np.random.default_rng(5))
    full = find_near_duplicates(docs)
    changed = {next(iter(pair)) for pair in list(planted)[:10]} | {1, 2, 3, 4, 5}
    targeted = find_near_duplicates(docs, only=changed)
    assert targeted
    assert pairs(targeted) == {p for p in pairs(full) if set(p) & changed}


def readme_block(size: int, rng: np.random.Generator) -> list[DocSignal]:
    return [doc(i, int(rng.integers(1, 6)), "README.md", random_vector(rng)) for i in range(1, size + 1)]


def test_hot_name_is_bucketed_not_compared_whole() -> None:
    rng = np.random.default_rng(9)
    docs = readme_block(2000, rng)
    docs += [
        doc(2001, 9, "README (1).md", near(docs[10].vector, 0.98, rng)),
        doc(2002, 8, "readme.MD", near(docs[500].vector, 0.975, rng)),
    ]
    stats = SweepStats()
    found = find_near_duplicates(docs, stats=stats)
    assert pairs(found) == {(11, 2001), (501, 2002)}
    assert stats.lsh_blocks == 1
    assert stats.comparisons < len(docs) * (len(docs) - 1) // 2 / 5

    targeted = SweepStats()
    assert pairs(find_near_duplicates(docs, only={2002}, stats=targeted)) == {(501, 2002)}
    assert targeted.comparisons < stats.comparisons


def test_hot_name_work_grows_far_slower_than_all_pairs() -> None:
    """Four times the block: all pairs would be 16 times the work, the LSH sweep ~5."""
    rng = np.random.default_rng(4)
    small, large = SweepStats(), SweepStats()
    find_near_duplicates(readme_block(1000, rng), stats=small)
    find_near_duplicates(readme_block(4000, rng), stats=large)
    assert large.comparisons < 7 * small.comparisons
