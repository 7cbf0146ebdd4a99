"""The SQLite store on real files: pragmas, migrations, and writes that keep FTS in step."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from tests.helpers import search, store_document
from kenning.store import documents, sources
from kenning.store.database import Database
from kenning.store.migrations import MIGRATIONS, migrate
from kenning.store.texthash import text_hash



async def index(db: Database, source_id: int, path: str, *texts: str) -> int:
    document_id, _ = await store_document(db, source_id, path, *texts)
    return document_id


async def test_every_connection_gets_the_pragmas_and_the_file_is_in_wal_mode(db: Database, tmp_path: Path):
    async with db.reader() as conn:
        values = {
            name: (await (await conn.execute(f"PRAGMA {name}")).fetchone())[0]
            for name in ("journal_mode", "foreign_keys", "busy_timeout", "synchronous")
        }
    assert values == {"journal_mode": "wal", "foreign_keys": 1, "busy_timeout": 10000, "synchronous": 1}
    await sources.sync_sources(db, [("notes", "/n", "default")])
    assert (tmp_path / "kenning.db-wal").exists()


def test_migrations_bring_an_empty_file_to_the_latest_version_and_refuse_a_newer_one(tmp_path: Path):
    conn = sqlite3.connect(tmp_path / "old.db", isolation_level=None)
    assert migrate(conn, MIGRATIONS[:0]) == 0
    assert migrate(conn) == len(MIGRATIONS)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS)
    assert migrate(conn) == len(MIGRATIONS)  # idempotent
    conn.execute(f"PRAGMA user_version = {len(MIGRATIONS) + 1}")
    with pytest.raises(RuntimeError, match="newer"):
        migrate(conn)


def test_upgrading_a_v2_library_keeps_every_document_and_backfills_its_text_hash(tmp_path: Path):
    conn = sqlite3.connect(tmp_path / "v2.db", isolation_level=None)
    conn.execute("PRAGMA foreign_keys = ON")
    migrate(conn, MIGRATIONS[:2])
    conn.execute("INSERT INTO sources (id, name, root, created_at) VALUES (1, 'notes', '/n', 0)")
    conn.execute(
        "INSERT INTO documents (id, source_id, path, status, chunk_count, updated_at) VALUES (7, 1, 'a.md', 'done', 2, 0)"
    )
    for ord_, text in enumerate(["first walrus chunk", "second walrus chunk"]):
        conn.execute(
            "INSERT INTO items (document_id, ord, title, content, line_start, line_end) VALUES (7, ?, 't', ?, 1, 1)",
            (ord_, text),
        )

    assert migrate(conn) == len(MIGRATIONS)

    assert conn.execute("SELECT count(*) FROM items WHERE document_id = 7").fetchone() == (2,)
    assert conn.execute("SELECT rowid FROM items_fts WHERE items_fts MATCH 'walrus'").fetchall() != []
    status, stored_hash = conn.execute("SELECT status, text_hash FROM documents WHERE id = 7").fetchone()
    assert status == "done"
    assert stored_hash == text_hash(["first walrus chunk", "second walrus chunk"])
    assert conn.execute("PRAGMA foreign_keys").fetchone() == (1,)
    assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)


def test_a_failing_migration_leaves_the_previous_version(tmp_path: Path):
    def m002_broken(conn: sqlite3.Connection) -> None:
        conn.execute("CREATE TABLE half_done (x)")
        conn.execute("THIS IS NOT SQL")

    conn = sqlite3.connect(tmp_path / "k.db", isolation_level=None)
    migrate(conn)
    with pytest.raises(sqlite3.OperationalError):
        migrate(conn, (*MIGRATIONS, m002_broken))
    assert conn.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS)
    assert not conn.execute("SELECT name FROM sqlite_master WHERE name = 'half_done'").fetchall()


async def test_replacing_a_document_swaps_its_chunks_in_the_index(db: Database):
    ids = await sources.sync_sources(db, [("notes", "/n", "default")])
    await index(db, ids["notes"], "a.md", "the old walrus text", "more walrus")
    assert len(await search(db, "walrus")) == 2
    await index(db, ids["notes"], "a.md", "the new narwhal text")
    assert await search(db, "walrus") == []
    [hit] = await search(db, "narwhal")
    assert (hit.path, hit.line_start) == ("/n/a.md", 1)


async def test_a_write_interrupted_midway_rolls_back_and_keeps_the_old_chunks(db: Database):
    ids = await sources.sync_sources(db, [("notes", "/n", "default")])
    document_id = await index(db, ids["notes"], "a.md", "original pangolin text")
    with pytest.raises(RuntimeError):
        async with db.transaction() as conn:
            await conn.execute("DELETE FROM items WHERE document_id = ?", (document_id,))
            raise RuntimeError("crash in the middle")
    assert len(await search(db, "pangolin")) == 1


async def test_deleting_documents_removes_their_chunks_from_the_index(db: Database):
    ids = await sources.sync_sources(db, [("notes", "/n", "default")])
    await index(db, ids["notes"], "a.md", "ibex one")
    await index(db, ids["notes"], "b.md", "ibex two")
    await documents.delete_documents(db, ids["notes"], ["a.md"])
    assert [hit.path for hit in await search(db, "ibex")] == ["/n/b.md"]
    async with db.transaction() as conn:
        await conn.execute("INSERT INTO items_fts(items_fts) VALUES ('integrity-check')")


async def test_sources_dropped_from_config_are_kept_but_not_searched(db: Database):
    ids = await sources.sync_sources(db, [("a", "/a", "work"), ("b", "/b", "home")])
    await index(db, ids["a"], "x.md", "a tapir in a")
    await index(db, ids["b"], "y.md", "a tapir in b")
    assert {h.source for h in await search(db, "tapir")} == {"a", "b"}
    assert {h.source for h in await search(db, "tapir", namespace="home")} == {"b"}
    assert {h.source for h in await search(db, "tapir", source="a")} == {"a"}
    await sources.sync_sources(db, [("b", "/b", "home")])
    assert {h.source for h in await search(db, "tapir")} == {"b"}
    rows = {row.name: row.active for row in await sources.list_sources(db)}
    assert rows == {"a": False, "b": True}
    again = await sources.sync_sources(db, [("a", "/a", "work"), ("b", "/b", "home")])
    assert again == ids
    assert {h.source for h in await search(db, "tapir")} == {"a", "b"}


async def test_a_scoped_search_finds_hits_ranked_below_thousands_of_others(db: Database):
    ids = await sources.sync_sources(db, [("big", "/big", "default"), ("small", "/small", "default")])
    await store_document(db, ids["big"], "many.md", *[f"heron heron heron note {n}" for n in range(3000)])
    await index(db, ids["small"], "one.md", "a single heron among " + "other words " * 40)
    [hit] = await search(db, "heron", limit=5, source="small")
    assert hit.path == "/small/one.md" and hit.source == "small"
    assert len(await search(db, "heron", limit=5)) == 5


async def test_merging_fts_segments_keeps_every_match(db: Database):
    from kenning.store.maintenance import merge_fts_segments

    ids = await sources.sync_sources(db, [("notes", "/n", "default")])
    for n in range(40):
        await index(db, ids["notes"], f"{n}.md", f"segment {n} of the heron study")
    async with db.reader() as conn:
        before = (await (await conn.execute("SELECT count(*) FROM items_fts_data")).fetchone())[0]
    steps = await merge_fts_segments(db)
    async with db.reader() as conn:
        after = (await (await conn.execute("SELECT count(*) FROM items_fts_data")).fetchone())[0]
    assert steps >= 1 and after < before
    assert len(await search(db, "heron", limit=100)) == 40
    async with db.transaction() as conn:
        await conn.execute("INSERT INTO items_fts(items_fts) VALUES ('integrity-check')")


def test_a_database_at_the_first_schema_upgrades_and_keeps_its_rows(tmp_path: Path):
    conn = sqlite3.connect(tmp_path / "v1.db", isolation_level=None)
    conn.execute("PRAGMA foreign_keys = ON")
    migrate(conn, MIGRATIONS[:1])
    conn.execute("INSERT INTO sources (name, root, created_at) VALUES ('a', '/a', 0)")
    conn.execute("INSERT INTO documents (source_id, path, status, updated_at) VALUES (1, 'x.md', 'done', 0)")
    conn.execute(
        "INSERT INTO items (document_id, ord, title, content, line_start, line_end) VALUES (1, 0, 't', 'kept', 1, 1)"
    )
    assert migrate(conn) == len(MIGRATIONS)
    conn.execute("INSERT INTO vectors (item_id, signature, dim, vector) VALUES (1, 's', 1, x'00000000')")
    conn.execute("DELETE FROM documents")
    assert conn.execute("SELECT count(*) FROM vectors").fetchone()[0] == 0


async def test_listeners_hear_exactly_the_item_ids_a_write_removed(db: Database):
    heard: list[int] = []
    db.on_items_removed(heard.extend)
    ids = await sources.sync_sources(db, [("notes", "/n", "default")])
    await index(db, ids["notes"], "a.md", "one", "two")
    await index(db, ids["notes"], "b.md", "three")
    async with db.reader() as conn:
        a_ids = [r[0] for r in await conn.execute_fetchall(
            "SELECT i.id FROM items i JOIN documents d ON d.id = i.document_id WHERE d.path = 'a.md'")]
    await index(db, ids["notes"], "a.md", "replaced")
    assert sorted(heard) == sorted(a_ids)
    heard.clear()
    async with db.reader() as conn:
        b_ids = [r[0] for r in await conn.execute_fetchall(
            "SELECT i.id FROM items i JOIN documents d ON d.id = i.document_id WHERE d.path = 'b.md'")]
    await documents.delete_documents(db, ids["notes"], ["b.md"])
    assert heard == b_ids
