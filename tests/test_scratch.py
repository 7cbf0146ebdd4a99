"""The scratch index a search asks about its best hits: it must answer as the library's
own index would, and one search's chunks must never show in the next one's answers."""

from __future__ import annotations

from kenning.retrieval.query import parse
from kenning.store import scratch, sources
from kenning.store.database import Database
from kenning.store.fts import Probe
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
