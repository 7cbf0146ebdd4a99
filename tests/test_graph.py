"""The entity graph on a real SQLite file: the store, the graph leg and the extraction job.

Extractions are written the way the job writes them (`graph.write_results`), from
hand-made records where a test needs exact names and from the real offline extractor
where it needs the pipeline. Scores depend on tuned weights, so the leg is checked for
what it reaches, never for an order or a number.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

import pytest

from kenning.api import EntityRelation
from kenning.config import LlmSettings, RetrievalSettings
from kenning.errors import ShutDown
from kenning.ingest.parse_pool import ParsePool
from kenning.retrieval import graph as graph_leg
from kenning.retrieval.search import Retriever
from kenning.store import documents, graph, sources
from kenning.store.database import Database
from kenning.service.graph import GraphSide
from kenning.workers.extract import chunk_text
from kenning.workers.job import JobState
from kenning.store.records import Entity, Extraction, ExtractionFailed, Relation
from kenning.workers.offline_extract import SIGNATURE as OFFLINE
from kenning.workers.offline_extract import OfflineExtractor
from tests.helpers import search, store_document

LLM = "ollama:fake-chat:v1"


async def source(db: Database, name: str = "notes") -> int:
    """A folder source; the ones made before it stay active (sync_sources would retire them)."""
    known = [(row.name, row.root, row.namespace) for row in await sources.list_sources(db) if row.active]
    ids = await sources.sync_sources(db, [*known, (name, f"/{name}", "default")])
    return ids[name]


async def item_ids(db: Database, document_id: int) -> list[int]:
    async with db.reader() as conn:
        rows = await conn.execute_fetchall("SELECT id FROM items WHERE document_id = ? ORDER BY ord", (document_id,))
    return [row[0] for row in rows]


async def rows(db: Database, sql: str, params: tuple = ()) -> list[tuple]:
    async with db.reader() as conn:
        return list(await conn.execute_fetchall(sql, params))


async def entity_names(db: Database) -> set[str]:
    return {name for (name,) in await rows(db, "SELECT name FROM entities")}


async def mentioned_by(db: Database, item_id: int) -> set[str]:
    found = await rows(
        db, "SELECT e.name FROM mentions m JOIN entities e ON e.id = m.entity_id WHERE m.item_id = ?", (item_id,)
    )
    return {name for (name,) in found}


async def relations_of(db: Database, item_id: int) -> set[tuple[str, str, str]]:
    found = await rows(
        db,
        "SELECT s.name, r.kind, t.name FROM relations r JOIN entities s ON s.id = r.source_id"
        " JOIN entities t ON t.id = r.target_id WHERE r.item_id = ?",
        (item_id,),
    )
    return set(found)


async def extraction_row(db: Database, item_id: int) -> tuple | None:
    found = await rows(
        db, "SELECT signature, status, attempts, error, retry_at FROM extractions WHERE item_id = ?", (item_id,)
    )
    return found[0] if found else None


async def extract_offline(db: Database, item_ids_: list[int]) -> None:
    """Mine chunks with the real offline extractor, as the job would."""
    placeholders = ", ".join("?" * len(item_ids_))
    found = await rows(
        db, f"SELECT id, title, section, content FROM items WHERE id IN ({placeholders})", tuple(item_ids_)
    )
    items = [graph.PendingItem(*row) for row in found]
    results = await OfflineExtractor().extract([chunk_text(item) for item in items])
    await graph.write_results(db, OFFLINE, [(item.id, result) for item, result in zip(items, results)])


FALCON = Extraction(
    entities=(Entity("Project Falcon", "project"), Entity("Maria Chen", "person")),
    relations=(Relation("Maria Chen", "Project Falcon", "leads"),),
)


# -- the store -----------------------------------------------------------------------


async def test_spellings_of_one_name_are_one_entity_and_aliases_resolve_to_it(db: Database):
    notes = await source(db)
    document_id, _ = await store_document(db, notes, "a.md", "Maria Chen leads it.", "maria  chen again.")
    first, second = await item_ids(db, document_id)
    authority = Entity("Tennessee Valley Authority", "organization", aliases=("TVA",))
    await graph.write_results(
        db,
        LLM,
        [
            (first, Extraction(entities=(Entity("Maria Chen", "person"), authority))),
            (second, Extraction(entities=(Entity("maria  chen", "person"), Entity("tva")))),
        ],
    )

    entities = await rows(db, "SELECT name, norm, kind FROM entities ORDER BY norm")
    assert entities == [
        ("Maria Chen", "maria chen", "person"),
        ("Tennessee Valley Authority", "tennessee valley authority", "organization"),
    ]
    assert await mentioned_by(db, first) == {"Maria Chen", "Tennessee Valley Authority"}
    # "tva" in the second chunk resolved through the alias rather than making a new entity.
    assert await mentioned_by(db, second) == {"Maria Chen", "Tennessee Valley Authority"}
    resolved = await graph.resolve_names(db, ["tva", "maria chen", "nobody"])
    assert resolved.keys() == {"tva", "maria chen"}
    assert resolved["tva"].name == "Tennessee Valley Authority"
    assert resolved["maria chen"].mentions == 2

    [found] = await graph.find_entities(db, "TVA", limit=5)
    assert found.name == "Tennessee Valley Authority"
    assert found.aliases == ["tva"]
    assert {chunk.item_id for chunk in found.chunks} == {first, second}


async def test_a_name_looked_up_before_its_entity_was_mined_is_found_after(db: Database):
    """Names searches looked up, found or not, are kept until the next commit."""
    notes = await source(db)
    document_id, _ = await store_document(db, notes, "a.md", "Maria Chen leads it.")
    [item] = await item_ids(db, document_id)
    assert await graph.resolve_names(db, ["maria chen"]) == {}
    await graph.write_results(db, LLM, [(item, Extraction(entities=(Entity("Maria Chen", "person"),)))])
    assert (await graph.resolve_names(db, ["maria chen"]))["maria chen"].mentions == 1


async def test_relations_are_typed_and_belong_to_their_chunk(db: Database):
    notes = await source(db)
    document_id, _ = await store_document(db, notes, "a.md", "Maria Chen leads Project Falcon.")
    [item] = await item_ids(db, document_id)
    await graph.write_results(db, LLM, [(item, FALCON)])

    assert await relations_of(db, item) == {("Maria Chen", "leads", "Project Falcon")}
    [maria] = await graph.find_entities(db, "maria chen", limit=5)
    assert maria.kind == "person"
    assert maria.mentions == 1
    assert maria.relations == [EntityRelation("leads", "out", "Project Falcon", item, 1)]

    # A source taken out of the config keeps its rows but shows nothing, as in search;
    # put back, it shows all again.
    await sources.sync_sources(db, [])
    assert await graph.find_entities(db, "maria chen", limit=5) == []
    await sources.sync_sources(db, [("notes", "/notes", "default")])
    [maria] = await graph.find_entities(db, "maria chen", limit=5)
    assert maria.relations == [EntityRelation("leads", "out", "Project Falcon", item, 1)]
    [chunk] = maria.chunks
    assert chunk.item_id == item and chunk.source == "notes" and chunk.path.endswith("a.md")
    ids = await graph.resolve_names(db, ["maria chen", "project falcon"])
    links = await graph.reading_graph(db, lambda reads: reads.neighbours([ids["maria chen"].id], per_entity=5))
    assert links == {ids["maria chen"].id: [(ids["project falcon"].id, 1)]}


async def test_a_relation_to_an_entity_the_chunk_does_not_name_is_not_stored(db: Database):
    notes = await source(db)
    document_id, _ = await store_document(db, notes, "a.md", "Maria Chen.")
    [item] = await item_ids(db, document_id)
    stray = Extraction(entities=(Entity("Maria Chen"),), relations=(Relation("Maria Chen", "Atlantis", "visits"),))
    await graph.write_results(db, LLM, [(item, stray)])
    assert await entity_names(db) == {"Maria Chen"}
    assert await relations_of(db, item) == set()


async def test_extracting_a_chunk_again_replaces_its_part_of_the_graph(db: Database):
    notes = await source(db)
    document_id, _ = await store_document(db, notes, "a.md", "Maria Chen leads Project Falcon.")
    [item] = await item_ids(db, document_id)
    await graph.write_results(db, LLM, [(item, FALCON)])
    await graph.write_results(db, LLM, [(item, FALCON)])
    assert await rows(db, "SELECT count(*) FROM mentions") == [(2,)]
    assert await rows(db, "SELECT count(*) FROM relations") == [(1,)]

    heron = Extraction(
        entities=(Entity("Maria Chen"), Entity("Project Heron")),
        relations=(Relation("Project Heron", "Maria Chen", "employs"),),
    )
    await graph.write_results(db, LLM, [(item, heron)])
    assert await mentioned_by(db, item) == {"Maria Chen", "Project Heron"}
    assert await relations_of(db, item) == {("Project Heron", "employs", "Maria Chen")}
    # Nothing mentions Project Falcon any more, so it is gone, not left dangling.
    assert await entity_names(db) == {"Maria Chen", "Project Heron"}


async def test_replacing_a_documents_chunks_takes_their_graph_with_them(db: Database):
    notes = await source(db)
    document_id, _ = await store_document(db, notes, "a.md", "Maria Chen leads Project Falcon.")
    [old] = await item_ids(db, document_id)
    authority = Entity("Tennessee Valley Authority", aliases=("TVA",))
    await graph.write_results(
        db, LLM, [(old, Extraction(entities=(*FALCON.entities, authority), relations=FALCON.relations))]
    )

    await store_document(db, notes, "a.md", "Now about gardening only.", mtime=2.0)
    [new] = await item_ids(db, document_id)
    assert new != old
    assert await rows(db, "SELECT count(*) FROM mentions") == [(0,)]
    assert await rows(db, "SELECT count(*) FROM relations") == [(0,)]
    assert await entity_names(db) == set()
    assert await rows(db, "SELECT count(*) FROM entity_aliases") == [(0,)]
    assert await rows(db, "SELECT count(*) FROM extractions") == [(0,)]
    # The new chunk is waiting for extraction.
    assert [item.id for item in await graph.pending_page(db, LLM, 0, 10)] == [new]


async def test_deleting_a_document_drops_entities_only_it_mentioned(db: Database):
    notes = await source(db)
    first_doc, _ = await store_document(db, notes, "a.md", "Maria Chen leads Project Falcon.")
    second_doc, _ = await store_document(db, notes, "b.md", "Maria Chen works from the Tromsø office.")
    [first] = await item_ids(db, first_doc)
    [second] = await item_ids(db, second_doc)
    tromso = Extraction(
        entities=(Entity("Maria Chen"), Entity("Tromsø", "place", aliases=("Tromso",))),
        relations=(Relation("Maria Chen", "Tromsø", "works_in"),),
    )
    await graph.write_results(db, LLM, [(first, FALCON), (second, tromso)])
    assert await entity_names(db) == {"Maria Chen", "Project Falcon", "Tromsø"}

    await documents.delete_documents(db, notes, ["b.md"])
    # Maria Chen is still named by a.md; Tromsø only by b.md, so it goes with its alias
    # and its relation.
    assert await entity_names(db) == {"Maria Chen", "Project Falcon"}
    assert await rows(db, "SELECT norm FROM entity_aliases") == []
    assert await relations_of(db, first) == {("Maria Chen", "leads", "Project Falcon")}
    assert await rows(db, "SELECT count(*) FROM relations") == [(1,)]
    [maria] = await graph.find_entities(db, "Maria Chen", limit=5)
    assert maria.mentions == 1 and [chunk.item_id for chunk in maria.chunks] == [first]

    await documents.delete_documents(db, notes, ["a.md"])
    assert await entity_names(db) == set()
    assert await rows(db, "SELECT count(*) FROM mentions") == [(0,)]
    assert await rows(db, "SELECT count(*) FROM relations") == [(0,)]
    assert await graph.summary(db) == {"entities": 0, "relations": 0, "failed": 0, "pending": None}


async def test_results_for_a_chunk_deleted_while_it_was_mined_are_dropped(db: Database):
    notes = await source(db)
    document_id, _ = await store_document(db, notes, "a.md", "Maria Chen leads Project Falcon.")
    [item] = await item_ids(db, document_id)
    await documents.delete_documents(db, notes, ["a.md"])
    assert await graph.write_results(db, LLM, [(item, FALCON)]) == 0
    assert await entity_names(db) == set()
    assert await extraction_row(db, item) is None


# -- failures and what is pending ----------------------------------------------------


async def test_a_failed_extraction_is_recorded_retried_later_and_cleared_by_a_success(db: Database):
    notes = await source(db)
    document_id, _ = await store_document(db, notes, "a.md", "The walrus ledger of Maria Chen.")
    [item] = await item_ids(db, document_id)
    before = time.time()
    await graph.write_results(db, LLM, [(item, ExtractionFailed("fake-chat returned malformed extraction"))])

    signature, status, attempts, error, retry_at = await extraction_row(db, item)
    assert (signature, status, attempts) == (LLM, "failed", 1)
    assert "malformed" in error
    assert retry_at > before + 30
    assert (await graph.summary(db))["failed"] == 1
    assert [hit.item_id for hit in await search(db, "walrus")] == [item]
    assert await graph.count_pending(db, LLM) == 0
    assert await graph.pending_page(db, LLM, 0, 10) == []

    # Time passes: the retry is due.
    async with db.transaction() as conn:
        await conn.execute("UPDATE extractions SET retry_at = ? WHERE item_id = ?", (time.time() - 1, item))
    assert await graph.count_pending(db, LLM) == 1
    assert (await graph.summary(db, LLM))["pending"] == 1  # as status counts it
    assert [pending.id for pending in await graph.pending_page(db, LLM, 0, 10)] == [item]

    await graph.write_results(db, LLM, [(item, ExtractionFailed("again"))])
    _, status, attempts, error, second_retry = await extraction_row(db, item)
    assert (status, attempts, error) == ("failed", 2, "again")
    # The pause grows with each attempt.
    assert second_retry - time.time() > retry_at - before
    assert await graph.count_pending(db, LLM) == 0

    async with db.transaction() as conn:
        await conn.execute("UPDATE extractions SET retry_at = ? WHERE item_id = ?", (time.time() - 1, item))
    await graph.write_results(db, LLM, [(item, FALCON)])
    assert await extraction_row(db, item) == (LLM, "ok", 0, None, None)
    assert (await graph.summary(db))["failed"] == 0
    assert await mentioned_by(db, item) == {"Maria Chen", "Project Falcon"}
    assert await graph.count_pending(db, LLM) == 0


async def test_a_failure_keeps_the_graph_the_chunk_already_had(db: Database):
    notes = await source(db)
    document_id, _ = await store_document(db, notes, "a.md", "Maria Chen leads Project Falcon.")
    [item] = await item_ids(db, document_id)
    await graph.write_results(db, OFFLINE, [(item, FALCON)])
    await graph.write_results(db, LLM, [(item, ExtractionFailed("timed out"))])
    assert await mentioned_by(db, item) == {"Maria Chen", "Project Falcon"}
    assert (await extraction_row(db, item))[:3] == (LLM, "failed", 1)


async def test_chunks_are_pending_until_mined_and_again_for_another_extractor(db: Database):
    notes = await source(db)
    document_id, _ = await store_document(db, notes, "a.md", "Maria Chen.", "Project Falcon.", "Tromsø.")
    items = await item_ids(db, document_id)
    assert await graph.count_pending(db, OFFLINE) == 3
    assert [item.id for item in await graph.pending_page(db, OFFLINE, 0, 2)] == items[:2]
    assert [item.id for item in await graph.pending_page(db, OFFLINE, items[1], 2)] == items[2:]
    assert [item.id for item in await graph.unmined_page(db, 0, 10)] == items

    await extract_offline(db, items[:2])
    assert await graph.count_pending(db, OFFLINE) == 1
    assert [item.id for item in await graph.unmined_page(db, 0, 10)] == items[2:]
    await extract_offline(db, items[2:])
    assert await graph.count_pending(db, OFFLINE) == 0
    assert await graph.unmined_page(db, 0, 10) == []

    # The extractor changed: everything is mined again under the new signature.
    assert await graph.count_pending(db, LLM) == 3
    await graph.write_results(db, LLM, [(items[0], FALCON)])
    assert await graph.count_pending(db, LLM) == 2
    assert await graph.count_pending(db, OFFLINE) == 1


async def test_the_pending_count_is_what_the_job_pages_through_whatever_each_chunk_went_through(db: Database):
    """`status` shows the count and the job sizes its pass by it; it is counted without
    the pages' join, so it must name the same chunks in every state one can be in."""
    notes = await source(db)
    document_id, _ = await store_document(db, notes, "a.md", *(f"Chunk {n} of Maria Chen." for n in range(6)))
    other, mined, failed, due, structured, new = await item_ids(db, document_id)
    await extract_offline(db, [other])
    await graph.write_results(db, LLM, [(mined, FALCON), (failed, ExtractionFailed("x")), (due, ExtractionFailed("x"))])
    async with db.transaction() as conn:
        await conn.execute("UPDATE extractions SET retry_at = ? WHERE item_id = ?", (time.time() - 1, due))
        await graph.write_structured(conn, [(structured, FALCON)])

    for signature, pending in ((LLM, [other, due, new]), (OFFLINE, [mined, failed, due, new])):
        assert [item.id for item in await graph.pending_page(db, signature, 0, 10)] == pending
        assert await graph.count_pending(db, signature) == len(pending)

    await documents.delete_documents(db, notes, ["a.md"])
    assert await graph.count_pending(db, LLM) == 0


# -- the graph leg -------------------------------------------------------------------


async def falcon_library(db: Database) -> tuple[int, int, int]:
    """doc1 names Falcon and Maria Chen; doc2 names only Maria Chen and her office."""
    notes = await source(db)
    doc1, _ = await store_document(db, notes, "falcon.md", "Project Falcon is led by Maria Chen.", title="Falcon")
    doc2, _ = await store_document(db, notes, "office.md", "Maria Chen works from the Tromsø office.", title="Office")
    doc3, _ = await store_document(db, notes, "garden.md", "Tomatoes need sun and water.", title="Garden")
    await extract_offline(db, [*await item_ids(db, doc1), *await item_ids(db, doc2), *await item_ids(db, doc3)])
    return doc1, doc2, doc3


async def test_the_graph_leg_reaches_a_chunk_through_a_related_entity(db: Database):
    doc1, doc2, doc3 = await falcon_library(db)
    retriever = Retriever(db, RetrievalSettings())
    question = "Who leads Project Falcon and where is their office?"

    result = await retriever.search(question, legs=("graph",))
    found = {hit.document_id for hit in result.hits}
    assert {doc1, doc2} <= found
    assert doc3 not in found
    assert all(hit.legs == ["graph"] for hit in result.hits)
    # The office chunk never says "Falcon": only the graph, through Maria Chen, reaches it.
    keyword_only = await search(db, "Project Falcon")
    assert doc2 not in {hit.document_id for hit in keyword_only}


async def test_a_source_scoped_graph_search_keeps_to_its_source(db: Database):
    _, doc2, _ = await falcon_library(db)
    other = await source(db, "other")
    elsewhere, _ = await store_document(db, other, "memo.md", "Maria Chen signed the Falcon memo.", title="Memo")
    await extract_offline(db, await item_ids(db, elsewhere))
    retriever = Retriever(db, RetrievalSettings())
    question = "Who leads Project Falcon?"

    everywhere = await retriever.search(question, legs=("graph",))
    assert {"notes", "other"} <= {hit.source for hit in everywhere.hits}
    scoped = await retriever.search(question, source="notes", legs=("graph",))
    assert scoped.hits and {hit.source for hit in scoped.hits} == {"notes"}
    assert doc2 in {hit.document_id for hit in scoped.hits}
    only_other = await retriever.search(question, source="other", legs=("graph",))
    assert {hit.document_id for hit in only_other.hits} == {elsewhere}


async def test_a_page_of_its_own_is_one_short_document_titled_with_the_name(db: Database):
    notes = await source(db)
    bridge, _ = await store_document(db, notes, "falcon.md", "Project lead: Maria Chen.", title="Falcon")
    page, _ = await store_document(db, notes, "maria.md", "Maria Chen works from Tromsø.", title="Maria Chen")
    await extract_offline(db, [*await item_ids(db, bridge), *await item_ids(db, page)])
    [linking] = await item_ids(db, bridge)
    assert [(norm, pages) for norm, _, pages in await graph.pages_named_by(db, linking)] == [
        ("maria chen", await item_ids(db, page))
    ]
    assert [name for name, _ in await graph.pages_titled(db, ["maria chen"], bridge)] == ["maria chen"]

    # A second document titled with the name ("README", "NEWS" title hundreds): the
    # name is the page of neither.
    again, _ = await store_document(db, notes, "maria-2.md", "Maria Chen joined in 2019.", title="Maria Chen")
    await extract_offline(db, await item_ids(db, again))
    assert await graph.pages_named_by(db, linking) == []
    assert await graph.pages_called(db, ["maria chen"], bridge) == []
    assert await graph.pages_titled(db, ["maria chen"], bridge) == []


async def test_a_long_document_titled_with_a_name_is_a_manual_not_its_page(db: Database):
    notes = await source(db)
    bridge, _ = await store_document(db, notes, "cli.md", "Each Process has an exit code.", title="Exit codes")
    chunks = [f"Part {n}: signals, the working directory and its environment." for n in range(graph.PAGE_CHUNKS + 1)]
    manual, _ = await store_document(db, notes, "process.md", *chunks, title="Process")
    # Extraction names Process in two of the manual's thirteen chunks: the manual is
    # still thirteen chunks long.
    named = Extraction(entities=(Entity("Process", "concept"),), relations=())
    [linking] = await item_ids(db, bridge)
    pages = (await item_ids(db, manual))[:2]
    await graph.write_results(db, OFFLINE, [(item, named) for item in (linking, *pages)])
    assert await graph.pages_called(db, ["process"], bridge) == []
    assert await graph.pages_titled(db, ["process"], bridge) == []
    assert await graph.pages_named_by(db, linking) == []
    # The same name over a document of PAGE_CHUNKS chunks is its page.
    await store_document(db, notes, "process.md", *chunks[: graph.PAGE_CHUNKS], title="Process")
    pages = (await item_ids(db, manual))[:2]
    await graph.write_results(db, OFFLINE, [(item, named) for item in pages])
    assert [norm for norm, _, _ in await graph.pages_called(db, ["process"], bridge)] == ["process"]
    assert [norm for norm, _, _ in await graph.pages_named_by(db, linking)] == ["process"]
    assert [name for name, _ in await graph.pages_titled(db, ["process"], bridge)] == ["process"]


async def test_a_query_naming_no_known_entity_has_no_graph_hits(db: Database):
    await falcon_library(db)
    result = await Retriever(db, RetrievalSettings()).search("how do glaciers calve icebergs", legs=("graph",))
    assert result.hits == []
    assert await graph_leg.graph_search(db, "the of and", 10) == []


def test_cjk_queries_yield_contiguous_sub_runs_longest_first_and_bounded():
    found = graph_leg.candidates("東京大学の研究")
    assert "東京大学" in found and "研究" in found
    assert found.index("東京大学") < found.index("東京")
    lengths = [len(name) for name in found]
    assert lengths == sorted(lengths, reverse=True)
    assert all(name in "東京大学の研究" for name in found)

    long_run = "".join(chr(0x4E00 + n) for n in range(60))
    many = graph_leg.candidates(long_run)
    assert len(many) <= graph_leg.CJK_SUBRUN_MAX_CANDIDATES + 1  # the sub-runs and the whole run
    assert all(name in long_run for name in many)
    assert len(graph_leg.candidates(" ".join([long_run] * 10))) <= graph_leg.MAX_CANDIDATES


def test_a_cjk_question_written_as_one_sentence_still_tries_the_names_it_contains():
    assert "東京大学" in graph_leg.candidates("東京大学の研究室で働いている人は誰ですか")


async def test_the_graph_leg_resolves_a_cjk_name_inside_a_query(db: Database):
    notes = await source(db)
    document_id, _ = await store_document(db, notes, "tokyo.md", "東京大学の研究は進んでいる。", title="研究")
    await extract_offline(db, await item_ids(db, document_id))
    result = await Retriever(db, RetrievalSettings()).search("東京大学の研究", legs=("graph",))
    assert document_id in {hit.document_id for hit in result.hits}


# -- the extraction job --------------------------------------------------------------


async def wait_until(check: Callable, timeout: float = 10.0):
    deadline = time.monotonic() + timeout
    while True:
        value = await check()
        if value:
            return value
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(0.02)


async def _none_pending(db: Database) -> bool:
    return await graph.count_pending(db, OFFLINE) == 0


async def _state_is(side: GraphSide, state: JobState) -> bool:
    return side.job is not None and side.job.state == state


async def test_the_job_mines_every_chunk_offline_and_stops_cleanly(db: Database):
    notes = await source(db)
    await store_document(db, notes, "a.md", "Project Falcon is led by Maria Chen.", "Acme Corp pays NASA.")
    builder = GraphSide(db, LlmSettings(), asyncio.Event())
    builder.quiet.set()
    await builder.start()
    try:

        async def settled() -> bool:
            return await _none_pending(db) and await _state_is(builder, JobState.IDLE)

        await wait_until(settled)
        status = await builder.status()
        assert status.pending == 0 and status.job.state == "idle"
        assert status.backend == "offline" and status.extractor == OFFLINE
        assert status.entities > 0 and status.relations > 0 and status.failed == 0
        assert {"Maria Chen", "Project Falcon", "Acme Corp", "NASA"} <= await entity_names(db)

        # New chunks and a wake: the job picks them up.
        document_id, _ = await store_document(db, notes, "b.md", "Maria Chen works from the Tromsø office.")
        builder.wake()
        await wait_until(lambda: _none_pending(db))
        [item] = await item_ids(db, document_id)
        assert "Tromsø" in await mentioned_by(db, item)
    finally:
        await builder.stop()
    assert builder.job is None
    await builder.stop()  # twice is harmless


async def test_the_job_defers_to_a_running_ingest(db: Database):
    notes = await source(db)
    await store_document(db, notes, "a.md", "Project Falcon is led by Maria Chen.")
    quiet = asyncio.Event()  # a sweep is reading files in
    builder = GraphSide(db, LlmSettings(), quiet)
    await builder.start()
    try:
        await wait_until(lambda: _state_is(builder, JobState.DEFERRED))
        assert await graph.count_pending(db, OFFLINE) == 1
        quiet.set()
        await wait_until(lambda: _none_pending(db))
    finally:
        await builder.stop()


async def test_the_mark_redaction_leaves_is_no_entity(db: Database):
    """Every note that held a secret would otherwise share one entity, "REDACTED", and
    the graph leg would walk from any of them to all the others."""
    ids = await sources.sync_sources(db, [("notes", "/n", "default")])
    await store_document(db, ids["notes"], "a.md", "Deploy with Mara Quinn.\npassword = [REDACTED]")
    await store_document(db, ids["notes"], "b.md", "The kiln log.\ntoken: [REDACTED]")
    await extract_offline(db, [row[0] for row in await rows(db, "SELECT id FROM items")])
    names = {row[0] for row in await rows(db, "SELECT name FROM entities")}
    assert "Mara Quinn" in names and not any("REDACTED" in name.upper() for name in names)


async def test_extraction_on_workers_stopped_for_shutdown_ends_at_once_and_loses_nothing(db: Database):
    """The worker pool is stopped on purpose (the library is closing): no retry can help,
    so the pass ends with that reason instead of backing off for ever, and the chunk it
    could not mine is not marked failed but left for the next start."""
    notes = await source(db)
    document_id, _ = await store_document(db, notes, "a.md", "Project Falcon is led by Maria Chen.")
    workers = ParsePool(workers=1, memory_mb=300)
    await workers.stop()
    builder = GraphSide(db, LlmSettings(), asyncio.Event(), workers)
    builder.quiet.set()
    await builder.start()
    try:
        assert builder.job is not None
        async with asyncio.timeout(20):
            with pytest.raises(ShutDown, match="the worker pool is stopped"):
                await builder.job.request()
        assert not builder.job.running
        assert (await builder.status()).job.state == "stopped"
    finally:
        await builder.stop()
    [item] = await item_ids(db, document_id)
    assert await extraction_row(db, item) is None
    assert await graph.count_pending(db, OFFLINE) == 1
