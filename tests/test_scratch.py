"""The scratch index a search asks about its best hits: it must answer as the library's
own index would, and one search's chunks must never show in the next one's answers."""

from __future__ import annotations

import asyncio
import threading

from kenning.retrieval import coverage
from kenning.retrieval.coverage import EXCERPTS_ON_LOOP, Asked
from kenning.retrieval.query import parse
from kenning.store import scratch, sources
from kenning.store.database import Database
from kenning.store.fts import Probe
from kenning.store.hits import load_hits
from kenning.store.scope import Scope
from tests.helpers import store_document

NOTES = {
    "ferry.md": "The night ferry to Zanzibar leaves at 21:40 from pier four; the day ferry is slower. "
    "Tickets for the ferry are sold at the harbour office, cash only, and the Zanzibar crossing "
    "takes about two hours when the sea is calm.",
    "rota.md": "The on-call rota changes hands on Mondays at noon.",
}


async def test_excerpts_and_holders_are_what_the_library_index_gives(db: Database):
    ids = await sources.sync_sources(db, [("notes", "/n", "default")])
    for path, text in NOTES.items():
        await store_document(db, ids["notes"], path, text)
    expression = parse("night ferry zanzibar").expression
    async with db.reader() as conn:
        rows = await conn.execute_fetchall("SELECT id, title, section, content FROM items")
        library = dict(await conn.execute_fetchall(
            "SELECT rowid, snippet(items_fts, 2, '**', '**', '…', 24) FROM items_fts WHERE items_fts MATCH ?",
            (expression,),
        ))  # fmt: skip
    index = scratch.take()
    index.add({item_id: (title, section, content) for item_id, title, section, content in rows})
    assert index.excerpts(expression, list(library)) == library
    assert "**Zanzibar**" in next(iter(library.values()))
    [ferry] = index.holders([Probe('NEAR("night" "zanzibar", 6)')])
    assert ferry == set(library)
    scratch.give_back(index)


async def _library_excerpts(db: Database, expression: str) -> dict[int, str]:
    async with db.reader() as conn:
        return dict(await conn.execute_fetchall(
            "SELECT rowid, snippet(items_fts, 2, '**', '**', '…', 24) FROM items_fts WHERE items_fts MATCH ?",
            (expression,),
        ))  # fmt: skip


async def test_a_large_search_s_excerpts_are_the_library_s_and_a_cancelled_one_leaves_no_index_in_use(
    db: Database, monkeypatch
):
    """A large search's hits are excerpted on a worker thread (Asked.excerpts); a search
    cancelled meanwhile must not hand back the index the thread still fills."""
    ids = await sources.sync_sources(db, [("notes", "/n", "default")])
    for n in range(EXCERPTS_ON_LOOP + 15):
        await store_document(db, ids["notes"], f"ferry{n}.md", f"Sailing {n}: the night ferry to Zanzibar, pier {n}.")
    question = "night ferry zanzibar"
    expression = parse(question).expression
    library = await _library_excerpts(db, expression)
    hits = list((await load_hits(db, list(library), Scope())).values())
    assert len(hits) > EXCERPTS_ON_LOOP
    asked = Asked(db, parse(question), question)
    assert await asked.excerpts(expression, hits) == library
    asked.close()

    # The thread is held at its start, the search cancelled, and the next search's index
    # taken: it must not be the one the thread goes on to fill.
    entered, go_on, finished = threading.Event(), threading.Event(), threading.Event()

    def held_back(*args):
        entered.set()
        go_on.wait(10)
        try:
            return excerpt(*args)
        finally:
            finished.set()

    excerpt = coverage._index_and_excerpt
    monkeypatch.setattr(coverage, "_index_and_excerpt", held_back)
    asked = Asked(db, parse(question), question)
    search = asyncio.ensure_future(asked.excerpts(expression, hits))
    while not entered.is_set():
        await asyncio.sleep(0.01)
    search.cancel()
    await asyncio.gather(search, return_exceptions=True)
    asked.close()
    next_index = scratch.take()
    go_on.set()
    assert finished.wait(10)
    next_index.add({1: ("Rota", "", "The rota changes on Mondays.")})
    assert next_index.holders([Probe('"zanzibar"'), Probe('"rota"')]) == [set(), {1}]
    scratch.give_back(next_index)


def test_a_handed_back_index_holds_nothing_of_the_last_search():
    index = scratch.take()
    index.add({1: ("Ferry", "", "The night ferry to Zanzibar."), 2: ("東京", "", "東京の天気")})
    assert index.holders([Probe('"zanzibar"'), Probe('"東京"', "cjk")]) == [{1}, {2}]
    scratch.give_back(index)
    again = scratch.take()
    assert again is index
    assert not again.holds(1)
    assert again.holders([Probe('"zanzibar"'), Probe('"東京"', "cjk")]) == [set(), set()]
    again.add({1: ("Rota", "", "The rota changes on Mondays.")})
    assert again.holders([Probe('"zanzibar"'), Probe('"rota"')]) == [set(), {1}]
    scratch.give_back(again)


def test_an_excerpt_is_taken_after_the_front_matter_and_the_chunk_still_holds_it():
    index = scratch.take()
    index.add({
        1: ("Ferry", "", "---\ntitle: Ferry times\nupdated: 2026-04-01\n---\n# Ferry times\n\nThe night ferry leaves at 21:40."),
        2: ("Rota", "", "---\ntitle: Rota\nowner: Mariam\n---\n# Rota\n\nThe rota changes on Mondays."),
    })  # fmt: skip
    excerpts = index.excerpts('"ferry" OR "mariam"', [1, 2])
    assert excerpts[1].startswith("# **Ferry** times") and "updated" not in excerpts[1]
    # A word only the front matter holds still matches; the excerpt opens the body.
    assert excerpts[2].startswith("# Rota")
    assert index.holders([Probe('"mariam"'), Probe('"updated"')]) == [{2}, {1}]
    scratch.give_back(index)
