"""One stored copy per document, on a real database: every data-loss case the reference
design recorded, each followed by the same checks — every document that should exist is
found exactly once, by every source that holds it, and the file and its index are sound."""

from __future__ import annotations

import asyncio
from dataclasses import replace

import numpy as np

import pytest

from kenning.config import ChunkingSettings, DedupSettings
from kenning.ingest.dedup import near_dup_sweep
from kenning.ingest.text_docs import TextDocument, add_text
from kenning.service.reading import fetch
from kenning.store import documents, lookup, sources, vectors
from kenning.store import tallies as tally_store
from kenning.store.database import Database
from kenning.store.vector_index import VectorIndex
from tests.helpers import search, store_document

OPENED: list[VectorIndex] = []


@pytest.fixture(autouse=True)
async def close_indexes():
    yield
    while OPENED:
        await OPENED.pop().close()

TEXT = ("the okapi lives in the ituri rainforest", "it is the only living relative of the giraffe")


async def setup(db: Database, *names: str) -> dict[str, int]:
    return await sources.sync_sources(db, [(name, f"/{name}", "default") for name in names])


async def check(db: Database, query: str, expect: int) -> list:
    """Exactly `expect` documents found for the query — hits, and the identical copies a
    hit lists in `also_at` — with the file and its FTS index intact."""
    hits = await search(db, query)
    places = [h.path for h in hits] + [other.path for h in hits for other in h.also_at]
    assert len(places) == expect, places
    async with db.reader() as conn:
        assert await conn.execute_fetchall("PRAGMA integrity_check") == [("ok",)]
        assert await conn.execute_fetchall("PRAGMA foreign_key_check") == []
    async with db.transaction() as conn:
        await conn.execute("INSERT INTO items_fts (items_fts) VALUES ('integrity-check')")
    return hits


async def holders(db: Database, query: str) -> set[str]:
    [hit] = await search(db, query)
    item = await lookup.get_item(db, hit.item_id)
    return {location.source for location in item.locations}


async def test_a_folder_copy_is_stored_once_with_two_locations(db: Database):
    ids = await setup(db, "a", "b")
    await store_document(db, ids["a"], "okapi.md", *TEXT)
    _, stored = await store_document(db, ids["b"], "copy/okapi.md", *TEXT)
    assert stored == "merged"
    await check(db, "okapi", 1)
    assert await holders(db, "okapi") == {"a", "b"}
    # One stored copy, cited where the scoped search looked.
    for name in ("a", "b"):
        assert [h.source for h in await search(db, "okapi", source=name)] == [name]
    tallies = await tally_store.tallies(db)
    assert tallies.by_source[ids["a"]].holds == tallies.by_source[ids["b"]].holds == 1
    assert tallies.library_documents == 1


async def test_a_path_is_read_in_the_innermost_folder_and_through_links(db: Database, tmp_path):
    """A folder source inside another holds its files twice, one stored copy: read by
    path, a file is cited in the inner folder, the one the user registered for it. A
    folder is the same folder through a link, whether the link is the configured root or
    the path asked for."""
    outer, inner, real = tmp_path / "outer", tmp_path / "outer" / "inner", tmp_path / "real"
    inner.mkdir(parents=True)
    real.mkdir()
    (tmp_path / "linked").symlink_to(real)
    (tmp_path / "to-outer").symlink_to(outer)
    roots = [("outer", outer), ("inner", inner), ("linked", tmp_path / "linked")]
    ids = await sources.sync_sources(db, [(name, str(root), "default") for name, root in roots])
    await store_document(db, ids["outer"], "inner/okapi.md", *TEXT)
    _, stored = await store_document(db, ids["inner"], "okapi.md", *TEXT)
    assert stored == "merged"
    await store_document(db, ids["linked"], "ituri.md", "the ituri rainforest is in the congo basin")

    for asked in (inner / "okapi.md", tmp_path / "to-outer" / "inner" / "okapi.md"):
        page = await fetch(db, path=str(asked), line_start=1)
        assert (page.document.source, page.document.path) == ("inner", str(inner / "okapi.md"))
        assert page.lines.text.startswith("the okapi lives")
    page = await fetch(db, path=str(real / "ituri.md"), limit=1)
    assert (page.document.source, page.document.path) == ("linked", str(tmp_path / "linked" / "ituri.md"))
    assert page.items[0].path == page.document.path


async def test_deleting_either_source_keeps_what_the_other_holds(db: Database):
    for first, second in (("a", "b"), ("b", "a")):
        ids = await setup(db, f"{first}1", f"{second}1")
        await store_document(db, ids["a1" if first == "a" else "b1"], "okapi.md", *TEXT)
        await store_document(db, ids["b1" if first == "a" else "a1"], "okapi.md", *TEXT)
        await sources.remove_source(db, ids[f"{first}1"])
        [hit] = await check(db, "okapi", 1)
        assert hit.source == f"{second}1"
        assert await holders(db, "okapi") == {f"{second}1"}
        await sources.remove_source(db, ids[f"{second}1"])
        await check(db, "okapi", 0)
        async with db.reader() as conn:
            assert await conn.execute_fetchall("SELECT count(*) FROM documents") == [(0,)]
            assert await conn.execute_fetchall("SELECT count(*) FROM items") == [(0,)]


async def test_deleting_the_winners_file_hands_the_document_to_the_loser(db: Database):
    ids = await setup(db, "a", "b")
    await store_document(db, ids["a"], "okapi.md", *TEXT)
    await store_document(db, ids["b"], "okapi.md", *TEXT)
    await documents.delete_documents(db, ids["a"], ["okapi.md"])
    [hit] = await check(db, "okapi", 1)
    assert (hit.source, hit.path) == ("b", "/b/okapi.md")
    await documents.delete_documents(db, ids["b"], ["okapi.md"])
    await check(db, "okapi", 0)


async def test_deleting_the_losers_file_leaves_the_winner(db: Database):
    ids = await setup(db, "a", "b")
    await store_document(db, ids["a"], "okapi.md", *TEXT)
    await store_document(db, ids["b"], "okapi.md", *TEXT)
    await documents.delete_documents(db, ids["b"], ["okapi.md"])
    [hit] = await check(db, "okapi", 1)
    assert hit.source == "a"
    assert await holders(db, "okapi") == {"a"}


async def test_a_folder_takes_over_a_transient_copy_and_survives_its_removal(db: Database):
    ids = await setup(db, "notes")
    agent = await sources.aggregate_source(db, "agent")
    await store_document(db, agent, "uri:okapi", *TEXT)
    _, stored = await store_document(db, ids["notes"], "okapi.md", *TEXT)
    assert stored == "adopted"
    [hit] = await check(db, "okapi", 1)
    assert hit.source == "notes"
    assert await holders(db, "okapi") == {"notes", "agent"}
    await sources.remove_source(db, agent)
    [hit] = await check(db, "okapi", 1)
    assert hit.source == "notes"


async def test_a_changed_file_equal_to_another_sources_document_drops_its_old_text(db: Database):
    ids = await setup(db, "a", "b")
    await store_document(db, ids["a"], "okapi.md", *TEXT)
    await store_document(db, ids["b"], "draft.md", "a draft about the pangolin")
    _, stored = await store_document(db, ids["b"], "draft.md", *TEXT)
    assert stored == "merged"
    await check(db, "pangolin", 0)
    await check(db, "okapi", 1)
    assert await holders(db, "okapi") == {"a", "b"}


async def test_editing_the_holder_gives_the_other_location_its_copy_back(db: Database):
    ids = await setup(db, "a", "b")
    await store_document(db, ids["a"], "okapi.md", *TEXT)
    await store_document(db, ids["b"], "okapi.md", *TEXT)
    await store_document(db, ids["a"], "okapi.md", "the okapi page now talks about the zebra")
    await check(db, "giraffe", 1)
    assert (await search(db, "giraffe"))[0].source == "b"
    await check(db, "zebra", 1)
    await check(db, "okapi", 2)


async def test_identical_text_twice_in_one_source_stays_two_documents(db: Database):
    ids = await setup(db, "a", "b")
    await store_document(db, ids["a"], "one.md", *TEXT)
    await store_document(db, ids["a"], "two.md", *TEXT)
    # Two documents, shown as one hit that names the other copy.
    [hit] = await check(db, "okapi", 2)
    assert [other.path for other in hit.also_at] == ["/a/two.md"]
    # A copy in another source joins one of them; the pair in `a` stays a pair.
    await store_document(db, ids["b"], "three.md", *TEXT)
    await check(db, "okapi", 2)
    await documents.delete_documents(db, ids["a"], ["one.md"])
    await check(db, "okapi", 2)
    await sources.remove_source(db, ids["a"])
    [hit] = await check(db, "okapi", 1)
    assert hit.source == "b"


async def test_a_source_removed_while_a_gate_runs_loses_nothing(db: Database, monkeypatch):
    """Two tasks on one real database: removal batches and duplicate writes interleave."""
    monkeypatch.setattr(sources, "REMOVE_BATCH", 3)
    for round_ in range(3):
        ids = await setup(db, f"x{round_}", f"y{round_}")
        x, y = ids[f"x{round_}"], ids[f"y{round_}"]
        words = [f"walrus{round_}q{n}" for n in range(30)]
        for n, word in enumerate(words):
            await store_document(db, x, f"{n}.md", f"the {word} text")

        async def copy_all() -> None:
            for n, word in enumerate(words):
                await store_document(db, y, f"{n}.md", f"the {word} text")
                await asyncio.sleep(0)

        await asyncio.gather(copy_all(), sources.remove_source(db, x))
        for n, word in enumerate(words):
            [hit] = await check(db, word, 1)
            assert hit.path == f"/y{round_}/{n}.md"


async def test_an_agent_document_is_replaced_by_its_uri_not_its_title(db: Database):
    agent = await sources.aggregate_source(db, "agent")
    await store_document(db, agent, "uri:readme-1", "first readme about herons", title="README")
    await store_document(db, agent, "uri:readme-2", "second readme about ibises", title="README")
    await check(db, "herons", 1)
    await check(db, "ibises", 1)
    await store_document(db, agent, "uri:readme-1", "first readme now about storks", title="README")
    await check(db, "herons", 0)
    await check(db, "storks", 1)
    await check(db, "ibises", 1)
    await store_document(db, agent, "uri:readme-1", "first readme now about storks", title="README")
    await check(db, "storks", 1)


# -- the near-duplicate sweep ----------------------------------------------------------


async def index_with_vectors(db: Database, directions: dict[str, np.ndarray]) -> VectorIndex:
    """A vector index in which every chunk of a document points the given way."""
    rows = await db.read("SELECT i.id, d.path FROM items i JOIN documents d ON d.id = i.document_id")
    matrix = np.stack([directions[path] for _, path in rows]).astype(np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    await vectors.write_vectors(db, "test", [item_id for item_id, _ in rows], matrix)
    OPENED.append(await VectorIndex.open(db, "test"))
    return OPENED[-1]


async def test_a_near_duplicate_in_another_source_collapses_and_comes_back_when_the_winner_goes(db: Database):
    ids = await setup(db, "a", "b")
    rng = np.random.default_rng(7)
    base, other = rng.standard_normal(64), rng.standard_normal(64)
    await store_document(db, ids["a"], "survey.md", "the heron survey, filed north", "counts by the river")
    # Re-spaced: a collapse folds only a copy with no line of its own.
    await store_document(db, ids["b"], "survey (1).md", "the heron  survey, filed north", "counts by the river")
    await store_document(db, ids["b"], "budget.md", "the heron budget", "counts of money")
    index = await index_with_vectors(
        db, {"survey.md": base, "survey (1).md": base + rng.standard_normal(64) * 0.01, "budget.md": other}
    )

    run = await near_dup_sweep(db, index, DedupSettings())
    assert (run.documents, run.collapsed) == (3, 1)
    [hit] = await check(db, "survey", 1)
    assert await holders(db, "survey") == {"a", "b"}
    assert [h.item_id for h in await search(db, "survey", source="b")] == [hit.item_id]
    await check(db, "budget", 1)
    assert (await near_dup_sweep(db, index, DedupSettings())).collapsed == 0

    # The winner's file goes: the loser holds the copy, marked to be read again so its
    # own text replaces the winner's at the next sweep.
    await documents.delete_documents(db, ids["a"], ["survey.md"])
    [hit] = await check(db, "survey", 1)
    assert hit.source == "b"
    async with db.reader() as conn:
        [(status, mtime)] = await conn.execute_fetchall(
            "SELECT status, mtime FROM documents WHERE path = 'survey (1).md'"
        )
    assert (status, mtime) == ("done", -1)


async def test_a_near_duplicate_with_a_line_of_its_own_is_not_collapsed(db: Database):
    """A collapse deletes the loser's items: a line only the loser had would be gone."""
    ids = await setup(db, "a", "b", "c")
    rng = np.random.default_rng(13)
    base = rng.standard_normal(64)
    await store_document(db, ids["a"], "plan.md", "the heron plan", "counts by the river", "owner: north")
    # An excerpt (every line of it in a's plan) and a copy with its own owner line.
    await store_document(db, ids["b"], "plan (1).md", "the heron plan", "counts by  the river")
    await store_document(db, ids["c"], "plan (2).md", "the heron plan", "counts by the river", "owner: south")
    index = await index_with_vectors(db, {path: base for path in ("plan.md", "plan (1).md", "plan (2).md")})

    run = await near_dup_sweep(db, index, DedupSettings())
    assert (run.pairs, run.collapsed) == (2, 1)
    assert await holders(db, "north") == {"a", "b"}
    [hit] = await check(db, "south", 1)
    assert (hit.source, hit.path) == ("c", "/c/plan (2).md")
    # The shared chunk shows once, naming the copy that also holds it.
    [hit] = await check(db, "heron", 2)
    assert {hit.path, *(other.path for other in hit.also_at)} == {"/a/plan.md", "/c/plan (2).md"}


async def test_an_excerpt_that_won_gives_way_to_its_fuller_copy_unless_it_outranks_it(db: Database):
    """The winner is the older of two copies as long in chunks: an excerpt stored first
    won, its fuller copy had a line it lacked, and neither collapsed. The fuller copy
    survives instead when the two rank alike; a folder's excerpt still outranks an
    agent's fuller copy, and both stay."""
    ids = await setup(db, "a", "b")
    agent = await sources.aggregate_source(db, "agent")
    rng = np.random.default_rng(17)
    plan, memo = rng.standard_normal(64), rng.standard_normal(64)
    await store_document(db, ids["a"], "plan.md", "the heron plan", "counts by the river")
    await store_document(db, ids["b"], "plan (1).md", "the heron  plan", "counts by the river\nowner: north")
    await store_document(db, ids["a"], "memo.md", "the egret memo", "filed by the weir")
    await store_document(db, agent, "memo (1).md", "the egret memo", "filed by the weir\nowner: south")
    paths = {"plan.md": plan, "plan (1).md": plan, "memo.md": memo, "memo (1).md": memo}
    index = await index_with_vectors(db, paths)

    run = await near_dup_sweep(db, index, DedupSettings())
    assert (run.pairs, run.collapsed) == (2, 1)
    # The fuller copy holds the text, every line of it, at both files.
    [hit] = await check(db, "north", 1)
    assert (hit.source, hit.path) == ("b", "/b/plan (1).md")
    assert await holders(db, "north") == {"a", "b"}
    [hit] = await check(db, "heron", 1)
    assert [h.item_id for h in await search(db, "heron", source="a")] == [hit.item_id]
    # Ranked apart: two documents, each line at its own file.
    [hit] = await check(db, "south", 1)
    assert hit.source == "agent"
    [hit] = await check(db, "egret", 2)
    assert {hit.path, *(other.path for other in hit.also_at)} == {"/a/memo.md", "agent://memo (1).md"}


async def test_an_excerpt_that_won_over_two_copies_is_not_turned_round(db: Database):
    """An excerpt that won over a fuller copy and a re-spaced one: giving way to the
    fuller copy would leave the re-spaced one nothing to fold into, so it keeps the
    re-spaced copy and the fuller one stays its own document, every line found."""
    ids = await setup(db, "a", "b", "c")
    base = np.random.default_rng(19).standard_normal(64)
    await store_document(db, ids["a"], "plan.md", "the heron plan", "counts by the river")
    await store_document(db, ids["b"], "plan (1).md", "the heron plan", "counts by the river\nowner: north")
    await store_document(db, ids["c"], "plan (2).md", "the heron  plan", "counts  by the river")
    index = await index_with_vectors(db, {path: base for path in ("plan.md", "plan (1).md", "plan (2).md")})

    run = await near_dup_sweep(db, index, DedupSettings())
    assert (run.pairs, run.collapsed) == (2, 1)
    [hit] = await check(db, "north", 1)
    assert hit.path == "/b/plan (1).md"
    async with db.reader() as conn:
        merged = await conn.execute_fetchall("SELECT path FROM documents WHERE status = 'merged'")
    assert merged == [("plan (2).md",)]


async def test_two_near_identical_files_in_one_source_are_not_collapsed(db: Database):
    ids = await setup(db, "a")
    rng = np.random.default_rng(3)
    base = rng.standard_normal(64)
    await store_document(db, ids["a"], "notes.md", "notes on the kestrel, draft")
    await store_document(db, ids["a"], "notes (1).md", "notes on the kestrel, final")
    index = await index_with_vectors(db, {"notes.md": base, "notes (1).md": base})
    assert (await near_dup_sweep(db, index, DedupSettings())).collapsed == 0
    await check(db, "kestrel", 2)


async def test_a_copy_arriving_while_its_holder_is_being_re_read_is_still_stored_once(db: Database):
    ids = await setup(db, "a", "b", "c")
    await store_document(db, ids["a"], "okapi.md", *TEXT)
    await store_document(db, ids["b"], "okapi.md", *TEXT)
    # The holder's file changed and is being read again: it still holds the old text.
    await documents.mark_scanning(db, ids["a"], "okapi.md")
    _, stored = await store_document(db, ids["c"], "okapi.md", *TEXT)
    assert stored == "merged"
    await store_document(db, ids["a"], "okapi.md", "the okapi page now talks about the zebra")
    await check(db, "giraffe", 1)
    assert await holders(db, "giraffe") == {"b", "c"}


async def test_re_storing_a_holder_with_the_same_text_keeps_one_copy(db: Database):
    ids = await setup(db, "a", "b")
    await store_document(db, ids["a"], "okapi.md", *TEXT)
    await store_document(db, ids["b"], "okapi.md", *TEXT)
    # Rewritten with other bytes (or re-read after a crash left it `scanning`), same text.
    await documents.mark_scanning(db, ids["a"], "okapi.md")
    await store_document(db, ids["a"], "okapi.md", *TEXT)
    await check(db, "okapi", 1)
    assert await holders(db, "okapi") == {"a", "b"}


async def test_an_agent_re_adding_the_same_text_keeps_one_copy(db: Database):
    agent = await sources.aggregate_source(db, "agent")
    web = await sources.aggregate_source(db, "url")
    await store_document(db, agent, "uri:okapi", *TEXT)
    await store_document(db, web, "url:https://example.com/okapi", *TEXT)
    await store_document(db, agent, "uri:okapi", *TEXT)
    await check(db, "okapi", 1)
    assert await holders(db, "okapi") == {"agent", "web"}


async def test_an_agent_re_adding_its_text_under_a_new_title_retitles_the_copy(db: Database):
    """The same text under a new title was taken for the same document: the answer said
    the new title while documents.get and every hit kept the old one."""
    web = await sources.aggregate_source(db, "url")
    document = TextDocument("Old title", "The platypus lays eggs.\n", "test://platypus")
    first = await add_text(db, document, ChunkingSettings())
    contents = [content for (content,) in await db.read("SELECT content FROM items ORDER BY ord")]
    await store_document(db, web, "url:https://example.com/platypus", *contents, title="Platypus page")
    assert await holders(db, "platypus") == {"agent", "web"}

    again = await add_text(db, replace(document, title="New title"), ChunkingSettings())
    assert (again.document_id, again.title, again.stored) == (first.document_id, "New title", "indexed")
    fetched = await fetch(db, uri="test://platypus")
    assert fetched.document.title == "New title"
    assert {item.title for item in fetched.items} == {"New title"}
    [hit] = await check(db, "platypus", 1)
    assert hit.title == "New title"
    # Still one copy, which the page shares.
    assert await holders(db, "platypus") == {"agent", "web"}


async def test_a_collapse_never_joins_two_files_of_one_source(db: Database):
    ids = await setup(db, "a", "b")
    rng = np.random.default_rng(11)
    base = rng.standard_normal(64)
    # b/okapi.md (T2) is held; a/okapi-draft.md has T2 too and is its location; a/okapi.md
    # (T1) is a near-duplicate of b's. Collapsing a/okapi.md with b/okapi.md would make
    # a's two files one document.
    t1 = ("the okapi lives in the ituri rainforest", "north")
    t2 = ("the okapi lives in the ituri rainforest", "zebra stripes")
    await store_document(db, ids["b"], "okapi.md", *t2)
    await store_document(db, ids["a"], "okapi.md", *t1)
    _, stored = await store_document(db, ids["a"], "okapi-draft.md", *t2)
    assert stored == "merged"
    index = await index_with_vectors(db, {"okapi.md": base})
    assert (await near_dup_sweep(db, index, DedupSettings())).collapsed == 0
    await check(db, "north", 1)
    await check(db, "zebra", 1)


async def test_an_heir_holding_near_duplicate_text_is_read_again(db: Database, tmp_path):
    ids = await setup(db, "a", "b")
    await store_document(db, ids["a"], "survey.md", "heron survey north", "by the river")
    await store_document(db, ids["b"], "survey (1).md", "heron  survey north", "by the river")
    rng = np.random.default_rng(5)
    base = rng.standard_normal(64)
    index = await index_with_vectors(db, {"survey.md": base, "survey (1).md": base})
    assert (await near_dup_sweep(db, index, DedupSettings())).collapsed == 1
    await documents.delete_documents(db, ids["a"], ["survey.md"])
    states = await documents.file_states(db, ids["b"])
    # Neither the mtime nor the hash matches the file any more, so the sweep reads it.
    assert states["survey (1).md"].mtime == -1 and states["survey (1).md"].content_hash is None


async def test_many_copies_of_one_text_do_not_hide_the_documents_behind_them(db: Database):
    ids = await setup(db, "a")
    for n in range(40):
        await store_document(db, ids["a"], f"copy{n}.md", "quokka licence header")
    for n in range(5):
        text = f"report {n}: the quokka survey counted {n + 3} animals near the ferry, among other wildlife notes"
        await store_document(db, ids["a"], f"report{n}.md", text)
    hits = await search(db, "quokka")
    # One hit for the forty copies, naming the other 39, and every report besides.
    assert len(hits) == 6
    [copy] = [hit for hit in hits if hit.also_at]
    assert len(copy.also_at) == 39
    assert {hit.path for hit in hits if not hit.also_at} == {f"/a/report{n}.md" for n in range(5)}
