"""The SQLite store on real files: pragmas, migrations, and writes that keep FTS in step."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from dataclasses import replace
from pathlib import Path

import pytest

import numpy as np

from kenning.store import capsules, documents, fts, graph, sources, tallies, vectors
from kenning.store.database import ChangeSet, Database, on_thread, read_until_cancelled
from kenning.store.keys import agent_key
from kenning.store.migrations import MIGRATIONS, migrate
from kenning.store.records import DocumentMeta, Entity, Extraction, NewItem
from kenning.store.texthash import text_hash
from tests.helpers import search, store_document


async def index(db: Database, source_id: int, path: str, *texts: str) -> int:
    document_id, _ = await store_document(db, source_id, path, *texts)
    return document_id


async def test_every_connection_gets_the_pragmas_and_the_file_is_in_wal_mode(db: Database, tmp_path: Path):
    async with db.reader() as conn:
        values = {
            name: (await (await conn.execute(f"PRAGMA {name}")).fetchone())[0]
            for name in ("journal_mode", "foreign_keys", "busy_timeout", "synchronous", "journal_size_limit", "secure_delete")
        }
    assert values == {
        "journal_mode": "wal", "foreign_keys": 1, "busy_timeout": 10000, "synchronous": 1, "journal_size_limit": 16 << 20,
        "secure_delete": 1,
    }  # fmt: skip
    # The writer is the connection that deletes: what it frees is zeroed, whatever the
    # SQLite build's default (Debian's is on; SQLite's own default is off).
    assert await db.write_one("PRAGMA secure_delete") == [(1,)]
    await sources.sync_sources(db, [("notes", "/n", "default")])
    assert (tmp_path / "kenning.db-wal").exists()


async def test_a_library_in_a_folder_whose_name_holds_a_hash_or_a_question_mark_opens_and_reads(tmp_path: Path):
    """Readers opened the file by a URI, where '#' begins a fragment and '?' a query: in
    "C#lib" they read an empty file "C" beside it, and the daemon failed to start."""
    for name in ("C#lib", "what?", "100%25"):
        (tmp_path / name).mkdir()
        database = Database(tmp_path / name / "kenning.db")
        await database.open()
        try:
            await sources.sync_sources(database, [("notes", "/n", "default")])
            named = await database.read("SELECT name FROM sources WHERE kind = 'folder'")
            assert [row[0] for row in named] == ["notes"]
        finally:
            await database.close()
    assert sorted(path.name for path in tmp_path.iterdir()) == ["100%25", "C#lib", "what?"]


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


def test_upgrading_a_v21_library_gives_a_quarter_dated_document_its_last_month(tmp_path: Path):
    """A note stored as `date: Q3 2025` before m022 kept only July: `since 2025-08` still
    missed it after the upgrade until its quarter's end was read from what is stored."""
    conn = sqlite3.connect(tmp_path / "v21.db", isolation_level=None)
    conn.execute("PRAGMA foreign_keys = ON")
    migrate(conn, MIGRATIONS[:21])
    conn.execute("INSERT INTO sources (id, name, root, created_at) VALUES (1, 'notes', '/n', 0)")
    documents = [
        (1, "review.md", "2025-07", "front matter", "---\ndate: Q3 2025\n---\n# Review"),
        (2, "july.md", "2025-07", "front matter", "---\ndate: 2025-07\n---\n# July"),
        (3, "2025-Q4 plan.md", "2025-10", "file name", "# Plan"),
        (4, "pump.md", "2025-07", "modified", "# Q3 2025 pump log"),
    ]
    for document_id, path, day, source, text in documents:
        conn.execute(
            "INSERT INTO documents (id, source_id, path, status, mtime, chunk_count, updated_at, date, date_source)"
            " VALUES (?, 1, ?, 'done', 0, 1, 0, ?, ?)",
            (document_id, path, day, source),
        )
        conn.execute(
            "INSERT INTO items (document_id, ord, title, content, line_start, line_end) VALUES (?, 0, 't', ?, 1, 1)",
            (document_id, text),
        )

    assert migrate(conn) == len(MIGRATIONS)

    ends = dict(conn.execute("SELECT id, date_end FROM documents").fetchall())
    assert ends == {1: "2025-09", 2: None, 3: "2025-12", 4: None}
    assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)


def test_upgrading_a_v24_library_counts_each_archives_retention_from_when_it_was_archived(tmp_path: Path):
    conn = sqlite3.connect(tmp_path / "v24.db", isolation_level=None)
    conn.execute("PRAGMA foreign_keys = ON")
    migrate(conn, MIGRATIONS[:24])
    conn.execute("INSERT INTO sources (id, name, root, created_at) VALUES (1, 'archive', '', 0)")
    conn.execute(
        "INSERT INTO documents (id, source_id, path, status, updated_at) VALUES (1, 1, 'archive:a-1', 'done', 0)"
    )
    conn.execute(
        "INSERT INTO archives (handle, document_id, title, chars, bytes, digest, created_at)"
        " VALUES ('a-1', 1, 'Arc', 4, 4, 'd1', 1234.5)"
    )

    assert migrate(conn) == len(MIGRATIONS)

    assert conn.execute("SELECT created_at, kept_at FROM archives").fetchall() == [(1234.5, 1234.5)]
    assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)


def test_upgrading_a_v4_library_dates_its_documents_and_indexes_its_cjk_text(tmp_path: Path):
    conn = sqlite3.connect(tmp_path / "v4.db", isolation_level=None)
    conn.execute("PRAGMA foreign_keys = ON")
    migrate(conn, MIGRATIONS[:4])
    conn.execute("INSERT INTO sources (id, name, root, created_at) VALUES (1, 'notes', '/n', 0)")
    documents = [
        (1, "runbook.md", 1.7e9, ["---\nupdated: 2024-06-18\n---\n# Restart", "Run systemctl restart."]),
        (2, "2025-09-18-sync.md", 1.7e9, ["# Sync", "Decided: NATS."]),
        (3, "changelog.md", 1_764_547_200.0, ["# Changelog", "## 2.3.0 — 2025-06-10\nIdempotency keys."]),
        (4, "会议.md", 1_764_547_200.0, ["# 会议", "供应商确认最小订单量是 500 台。"]),
    ]
    for document_id, path, mtime, chunks in documents:
        conn.execute(
            "INSERT INTO documents (id, source_id, path, status, mtime, chunk_count, updated_at)"
            " VALUES (?, 1, ?, 'done', ?, ?, 0)",
            (document_id, path, mtime, len(chunks)),
        )
        for ord_, text in enumerate(chunks):
            conn.execute(
                "INSERT INTO items (document_id, ord, title, content, line_start, line_end) VALUES (?, ?, 't', ?, 1, 1)",
                (document_id, ord_, text),
            )

    assert migrate(conn) == len(MIGRATIONS)

    dated = dict(
        conn.execute("SELECT path, date || ' ' || date_source FROM documents").fetchall()
    )
    assert dated == {
        "runbook.md": "2024-06-18 front matter",
        "2025-09-18-sync.md": "2025-09-18 file name",
        "changelog.md": "2025-12-01 modified",
        "会议.md": "2025-12-01 modified",
    }
    refined = conn.execute("SELECT i.date FROM items i JOIN documents d ON d.id = i.document_id"
                           " WHERE d.path = 'changelog.md' ORDER BY i.ord").fetchall()
    assert refined == [(None,), ("2025-06-10",)]
    [(held,)] = conn.execute("SELECT count(*) FROM items_cjk WHERE items_cjk MATCH '订单'").fetchall()
    assert held == 1
    conn.execute("DELETE FROM documents WHERE id = 4")
    assert conn.execute("SELECT count(*) FROM items_cjk").fetchone() == (0,)
    assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)


def test_upgrading_a_v9_library_keys_capsule_titles_with_their_punctuation(tmp_path: Path):
    """Keys were the title without punctuation: "C++" held "c", so adding "C#" or "C"
    updated it. Current capsules keep keys of their own; a superseded one may share its
    old key with a current one, and keeps a key of its own too."""
    conn = sqlite3.connect(tmp_path / "v9.db", isolation_level=None)
    conn.execute("PRAGMA foreign_keys = ON")
    migrate(conn, MIGRATIONS[:9])
    conn.execute("INSERT INTO sources (id, name, kind, root, created_at) VALUES (1, 'memory', 'capsule', '', 0)")
    capsules = [
        ("m-1", 1, "C++", "c"),
        ("m-2", 2, "Go!", "go"),
        ("m-3", None, "Go", "go"),
        ("m-4", 3, "Ｍixed Case", "mixed case"),
    ]
    for capsule_id, document_id, title, old_key in capsules:
        if document_id is not None:
            conn.execute(
                "INSERT INTO documents (id, source_id, path, status, updated_at) VALUES (?, 1, ?, 'done', 0)",
                (document_id, f"capsule:{capsule_id}"),
            )
        conn.execute(
            "INSERT INTO capsules (id, document_id, kind, scope, title, title_key, body, confidence, created_at,"
            " updated_at, superseded_by) VALUES (?, ?, 'fact', 'langs', ?, ?, 'body', 1, 0, 0, ?)",
            (capsule_id, document_id, title, old_key, None if document_id else "m-2"),
        )

    assert migrate(conn) == len(MIGRATIONS)

    keys = dict(conn.execute("SELECT title, title_key FROM capsules").fetchall())
    assert keys == {"C++": "c++", "Go!": "go!", "Go": "go", "Ｍixed Case": "mixed case"}
    assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)


def test_upgrading_a_v16_library_tells_status_which_folders_it_kept_while_empty(tmp_path: Path):
    """Which sweeps kept an empty root's index was only in the error's words, which
    `ken status` matched; a library whose drive is away at the upgrade says it at once."""
    conn = sqlite3.connect(tmp_path / "v16.db", isolation_level=None)
    migrate(conn, MIGRATIONS[:16])
    errors = {
        "usb": "/mnt/usb is empty and no longer a mount point (a drive or share not mounted?); its 3 indexed files"
        " are kept until it holds files again or the source is removed",
        "share": "/mnt/share is empty, and whether it is a drive's or a share's mount point is not known (it has"
        " not held files since kenning was upgraded); its 2 indexed files are kept until it holds files again",
        "gone": "cannot read /home/u/gone: No such file or directory",
        "fine": None,
    }
    for name, error in errors.items():
        conn.execute(
            "INSERT INTO sources (name, kind, root, created_at, last_sweep_error) VALUES (?, 'folder', ?, 0, ?)",
            (name, f"/{name}", error),
        )

    assert migrate(conn) == len(MIGRATIONS)

    kept = dict(conn.execute("SELECT name, last_sweep_kept FROM sources").fetchall())
    assert kept == {"usb": "unmounted", "share": "unknown", "gone": None, "fine": None}


def test_upgrading_a_v17_library_keeps_a_mount_it_knew_and_forgets_what_it_did_not(tmp_path: Path):
    """Schema 17 held whether a root was a mount point; 18 holds the mount it is on. A
    `0` may have been recorded for a folder on a drive mounted above it, or while that
    drive was away: it does not say which mount, so it becomes unknown (ingest/scan.py)."""
    conn = sqlite3.connect(tmp_path / "v17.db", isolation_level=None)
    migrate(conn, MIGRATIONS[:17])
    for name, mounted in (("usb", 1), ("notes", 0), ("new", None)):
        conn.execute(
            "INSERT INTO sources (name, kind, root, created_at, root_mounted) VALUES (?, 'folder', ?, 0, ?)",
            (name, f"/media/{name}", mounted),
        )

    assert migrate(conn) == len(MIGRATIONS)

    mounts = dict(conn.execute("SELECT name, root_mount FROM sources").fetchall())
    assert mounts == {"usb": "/media/usb", "notes": None, "new": None}


def test_upgrading_a_v18_library_counts_each_sources_documents_and_chunks_from_the_index_alone(tmp_path: Path):
    """`ken status` counts every source's documents by state with their chunks; read from
    the rows, that was 25 ms of each call at 100,000 documents (bench/status_speed.py)."""
    conn = sqlite3.connect(tmp_path / "v18.db", isolation_level=None)
    migrate(conn, MIGRATIONS[:18])
    conn.execute("INSERT INTO sources (name, kind, root, created_at) VALUES ('notes', 'folder', '/n', 0)")
    for n, status in enumerate(("done", "done", "failed")):
        conn.execute(
            "INSERT INTO documents (source_id, path, status, chunk_count, updated_at) VALUES (1, ?, ?, ?, 0)",
            (f"{n}.md", status, 3 if status == "done" else 0),
        )

    assert migrate(conn) == len(MIGRATIONS)

    plan = " ".join(row[3] for row in conn.execute(f"EXPLAIN QUERY PLAN {tallies.TALLY_SQL}"))
    assert "COVERING INDEX" in plan
    assert sorted(conn.execute(tallies.TALLY_SQL).fetchall()) == [(1, "done", 2, 6), (1, "failed", 1, 0)]


def test_upgrading_a_v20_library_counts_the_chunks_waiting_for_an_extractor_without_reading_every_chunk(tmp_path: Path):
    """`ken status` counts the chunks the extractor has yet to mine, again after every
    write; joining each chunk to its extraction took 30-200 ms at 100,000 chunks
    (bench/status_speed.py). Counted from the extractions' index, no chunk row is read."""
    conn = sqlite3.connect(tmp_path / "v20.db", isolation_level=None)
    migrate(conn, MIGRATIONS[:20])
    conn.execute("INSERT INTO sources (name, kind, root, created_at) VALUES ('notes', 'folder', '/n', 0)")
    conn.execute("INSERT INTO documents (source_id, path, status, updated_at) VALUES (1, 'a.md', 'done', 0)")
    conn.executemany(
        "INSERT INTO items (document_id, ord, title, content, line_start, line_end) VALUES (1, ?, 'a', 'text', 1, 1)",
        [(n,) for n in range(4)],
    )
    conn.executemany(
        "INSERT INTO extractions (item_id, signature, status, retry_at) VALUES (?, ?, ?, ?)",
        [(1, "llm", "ok", None), (2, "llm", "failed", 10.0), (3, "llm", "failed", 10.0**12)],
    )

    assert migrate(conn) == len(MIGRATIONS)

    plan = [row[3] for row in conn.execute(f"EXPLAIN QUERY PLAN {graph.PENDING_COUNT_SQL}", ("llm", 100.0))]
    extractions = [step for step in plan if "extractions" in step]
    assert extractions and all("COVERING INDEX extractions_pending" in step for step in extractions)
    assert not any("PRIMARY KEY" in step for step in plan)  # no chunk is looked up one by one
    assert conn.execute(graph.PENDING_COUNT_SQL, ("llm", 100.0)).fetchone() == (2,)


def test_upgrading_a_v24_library_lists_capsules_page_by_page_without_sorting_them_all(tmp_path: Path):
    """`memory.list` without a scope sorted every capsule for each page: 26 ms a page at
    20,000 (bench/agent_scale.py). Read in the index's order, a page reads its own rows,
    a cursor seeks to where the last one ended, and a scope keeps to its own index."""
    conn = sqlite3.connect(tmp_path / "v24.db", isolation_level=None)
    migrate(conn, MIGRATIONS[:24])
    conn.execute("INSERT INTO sources (id, name, kind, root, created_at) VALUES (1, 'memory', 'capsule', '', 0)")
    for n in range(12):
        conn.execute(
            "INSERT INTO documents (id, source_id, path, status, updated_at) VALUES (?, 1, ?, 'done', 0)",
            (n + 1, f"capsule:m-{n:02d}"),
        )
        # Three capsules to each moment: the cursor must tell them apart by id.
        conn.execute(
            "INSERT INTO capsules (id, document_id, kind, scope, title, title_key, body, confidence, created_at,"
            " updated_at) VALUES (?, ?, 'fact', ?, ?, ?, 'body', 1, ?, 0)",
            (f"m-{n:02d}", n + 1, f"s{n % 2}", f"t{n}", f"t{n}", float(n // 3)),
        )

    assert migrate(conn) == len(MIGRATIONS)

    def plan(statement: tuple[str, list]) -> str:
        return " | ".join(row[3] for row in conn.execute(f"EXPLAIN QUERY PLAN {statement[0]}", statement[1]))

    for superseded in (False, True):
        _, first = capsules.listing_statements(None, None, superseded, 5)
        assert plan(first) == "SCAN capsules USING INDEX capsules_created"
        _, following = capsules.listing_statements(None, "fact", superseded, 5, after=(2.0, "m-07"))
        assert plan(following) == "SEARCH capsules USING INDEX capsules_created (created_at<?)"
    _, scoped = capsules.listing_statements("s1", None, False, 5, after=(2.0, "m-07"))
    assert plan(scoped).startswith("SEARCH capsules USING INDEX capsules_scope_kind (scope=?)")

    seen, after = [], None
    while True:
        _, (sql, params) = capsules.listing_statements(None, None, False, 5, after=after)
        rows = conn.execute(sql, params).fetchall()
        seen += [row[0] for row in rows[:5]]
        if len(rows) <= 5:
            break
        after = (rows[4][10], rows[4][0])
    expected = [f"m-{n:02d}" for moment in (3, 2, 1, 0) for n in range(3 * moment, 3 * moment + 3)]
    assert seen == expected


def test_upgrading_a_v11_library_keeps_every_document_id_and_never_gives_one_out_again(tmp_path: Path):
    """Document ids were a plain rowid: the largest one deleted was handed to the next
    document, so `ken get 3` came to show another file. The rebuild keeps every id and
    everything that names one; afterwards a deleted document's id stays unused."""
    conn = sqlite3.connect(tmp_path / "v11.db", isolation_level=None)
    conn.execute("PRAGMA foreign_keys = ON")
    migrate(conn, MIGRATIONS[:11])
    for source_id, name, kind in ((1, "notes", "folder"), (2, "memory", "capsule"), (3, "archive", "archive"),
                                  (4, "ledger", "ledger"), (5, "agent", "agent")):  # fmt: skip
        conn.execute(
            "INSERT INTO sources (id, name, kind, root, created_at) VALUES (?, ?, ?, '/r', 0)", (source_id, name, kind)
        )
    rows = [
        (1, 1, "a.md", None, "done", None, 1, "2025-01-02"),
        (2, 5, "copy", "agent://copy", "merged", 1, 0, None),
        (3, 2, "capsule:m-1", "kenning://capsule/m-1", "done", None, 1, None),
        (4, 3, "archive:a-1", "kenning://archive/a-1", "done", None, 1, None),
        (5, 4, "ledger:l-1", "kenning://ledger/l-1", "done", None, 1, None),
        (6, 5, "agent-note", "agent://note", "done", None, 1, None),
    ]
    for document_id, source_id, path, uri, status, merged_into, chunks, date in rows:
        conn.execute(
            "INSERT INTO documents (id, source_id, path, uri, title, status, merged_into, chunk_count, text_hash,"
            " updated_at, date, reading) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?, 'r1')",
            (document_id, source_id, path, uri, f"title {document_id}", status, merged_into, chunks,
             f"h{document_id}", date),
        )  # fmt: skip
        if chunks:
            conn.execute(
                "INSERT INTO items (document_id, ord, title, content, line_start, line_end)"
                " VALUES (?, 0, 't', ?, 1, 1)",
                (document_id, f"narwhal text of document {document_id}"),
            )
    conn.execute("INSERT INTO vectors (item_id, signature, dim, vector) VALUES (1, 's', 1, x'00000000')")
    conn.execute("INSERT INTO entities (id, name, norm) VALUES (1, 'Narwhal', 'narwhal')")
    conn.execute("INSERT INTO mentions (entity_id, item_id) VALUES (1, 1)")
    conn.execute(
        "INSERT INTO capsules (id, document_id, kind, scope, title, title_key, body, confidence, created_at,"
        " updated_at) VALUES ('m-1', 3, 'fact', 'default', 'Cap', 'cap', 'body', 1, 0, 0)"
    )
    conn.execute(
        "INSERT INTO archives (handle, document_id, title, chars, bytes, digest, created_at)"
        " VALUES ('a-1', 4, 'Arc', 4, 4, 'd1', 0)"
    )
    conn.execute("INSERT INTO archive_segments (handle, seq, text) VALUES ('a-1', 0, 'text')")
    conn.execute(
        "INSERT INTO ledger_entries (id, document_id, section, identity, fields, owner, created_at, updated_at)"
        " VALUES ('l-1', 5, 'hosts', 'h', '{}', 'agent', 0, 0)"
    )
    conn.execute("INSERT INTO ledger_keys (section, key, entry_id) VALUES ('hosts', 'h', 'l-1')")
    conn.execute(
        "INSERT INTO document_links (document_id, kind, target) VALUES (6, 'supersedes', ?)", (agent_key("agent://old"),)
    )
    tables = ("documents", "items", "items_fts", "vectors", "mentions", "capsules", "archives", "archive_segments",
              "ledger_entries", "ledger_keys", "document_links")  # fmt: skip
    # Compared in the columns they had: a later migration may add one (m022, `date_end`).
    columns = {table: ", ".join(f'"{c[1]}"' for c in conn.execute(f"PRAGMA table_info({table})")) for table in tables}
    before = {table: conn.execute(f"SELECT {columns[table]} FROM {table} ORDER BY 1, 2").fetchall() for table in tables}
    indexes = "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'documents' ORDER BY name"
    indexes_before = conn.execute(indexes).fetchall()

    assert migrate(conn, MIGRATIONS[:12]) == 12
    assert conn.execute(indexes).fetchall() == indexes_before  # the rebuild (m012) keeps every index
    assert migrate(conn) == len(MIGRATIONS)

    after = {table: conn.execute(f"SELECT {columns[table]} FROM {table} ORDER BY 1, 2").fetchall() for table in tables}
    assert after == before
    assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
    assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    conn.execute("DELETE FROM documents WHERE id = 6")
    [(new_id,)] = conn.execute(
        "INSERT INTO documents (source_id, path, status, updated_at) VALUES (1, 'b.md', 'done', 0) RETURNING id"
    ).fetchall()
    assert new_id == 7
    assert conn.execute("SELECT count(*) FROM document_links").fetchone() == (0,)
    conn.execute("DELETE FROM documents WHERE id IN (3, 4, 5)")
    assert [conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
            for table in ("capsules", "archives", "archive_segments", "ledger_entries", "ledger_keys")] == [0] * 5
    conn.execute("DELETE FROM documents WHERE id = 2")
    conn.execute("DELETE FROM documents WHERE id = 1")
    assert conn.execute("SELECT count(*) FROM vectors").fetchone() == (0,)
    assert conn.execute("SELECT count(*) FROM mentions").fetchone() == (0,)


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


async def test_a_chunk_kept_on_reading_again_takes_the_first_date_it_is_read_with_now(db: Database):
    """A log stored before chunks kept their first dated line is read again after the
    upgrade with the same text: its chunks are kept, and take the first date as well."""
    ids = await sources.sync_sources(db, [("notes", "/n", "default")])
    document_id = await documents.mark_scanning(db, ids["notes"], "log.md")
    text = "2015-03-10 heron 412 mm\n2015-03-20 heron 420 mm"
    meta = DocumentMeta("Log", "markdown", 1.0, 1, "bytes", text_hash([text]))
    for first in (None, "2015-03-10"):
        item = NewItem("Log", "", text, 1, 2, date="2015-03-20", date_first=first)
        await documents.replace_items(db, document_id, meta, [item])
    assert await db.read("SELECT date_first, date FROM items") == [("2015-03-10", "2015-03-20")]


async def test_reading_a_file_again_uses_up_no_document_id(db: Database):
    ids = await sources.sync_sources(db, [("notes", "/n", "default")])
    first, _ = await store_document(db, ids["notes"], "a.md", "okapi")
    for _ in range(3):
        again, _ = await store_document(db, ids["notes"], "a.md", "okapi forest")
        assert again == first
    second, _ = await store_document(db, ids["notes"], "b.md", "quokka")
    assert second == first + 1


async def test_a_write_interrupted_midway_rolls_back_and_keeps_the_old_chunks(db: Database):
    ids = await sources.sync_sources(db, [("notes", "/n", "default")])
    document_id = await index(db, ids["notes"], "a.md", "original pangolin text")
    with pytest.raises(RuntimeError):
        async with db.transaction() as conn:
            await conn.execute("DELETE FROM items WHERE document_id = ?", (document_id,))
            raise RuntimeError("crash in the middle")
    assert len(await search(db, "pangolin")) == 1


async def test_a_quoted_cjk_phrase_matches_only_where_its_characters_stand_together(db: Database):
    ids = await sources.sync_sources(db, [("notes", "/notes", "default")])
    await store_document(db, ids["notes"], "keys.md", "署名鍵はサーバーに保管する。")
    await store_document(db, ids["notes"], "party.md", "来月、鍵署名パーティーを開く。")
    assert {hit.path for hit in await search(db, "鍵署名")} == {"/notes/keys.md", "/notes/party.md"}
    assert [hit.path for hit in await search(db, '"鍵署名"')] == ["/notes/party.md"]
    assert [hit.path for hit in await search(db, '"署名鍵" 保管')] == ["/notes/keys.md"]


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


async def test_a_narrow_scope_is_ranked_among_its_own_chunks_exactly_as_the_windows_rank_it(db: Database):
    """A memory scope holds a few hundred of a library's chunks; its keyword ranking
    widened the window over every match until the scope filled it (4-8 times a small
    library's cost, bench/agent_scale.py). Ranked among the scope's own chunks, the hits
    are the same, in the same order, ties by id: as every match ranked and filtered says."""
    import random

    from kenning.store.scope import Scope
    from kenning.text import cjk

    rng = random.Random(7)
    words = "heron tapir kestrel marmot ibex lynx otter badger".split()
    ids = await sources.sync_sources(db, [("big", "/big", "default"), ("small", "/small", "home")])
    # Thousands of chunks that outrank every scoped one: the windows must widen.
    await store_document(db, ids["big"], "many.md", *[f"heron tapir kestrel heron note {n}" for n in range(3000)])
    await index(db, ids["big"], "shared.md", "the shared heron tapir page")
    await index(db, ids["small"], "own.md", *[f"{rng.choice(words)} {rng.choice(words)} in small" for _ in range(40)])
    # A location of big's copy: a search of `small` or `home` finds it there.
    await index(db, ids["small"], "copy.md", "the shared heron tapir page")
    memory = await sources.aggregate_source(db, "capsule")
    async with db.transaction() as conn:
        for n in range(300):
            scope = ("alpha", "beta", "gamma")[n % 3]
            # Capsules of one length from eight words: many score alike, and ties go by id.
            text = " ".join(rng.choice(words) for _ in range(6)) + ("", "", " 東京の会議", " 大阪の会議")[n % 4]
            items = [NewItem(f"Note {n}", "", text, 1, 1, cjk=cjk.index_text(f"Note {n}", "", text))]
            meta = DocumentMeta(f"Note {n}", "markdown", 1.0, 1, f"capsule {n}", text_hash([text]), namespace=scope)
            await documents.write_text(conn, memory, f"capsule:{n}", f"memory://{n}", meta, items)

    scopes = [
        Scope(namespace="alpha", kinds=("capsule",)),
        Scope(namespace="beta"),
        Scope(namespace="home"),
        Scope(source="small"),
        Scope(source="small", namespace="home", kinds=("file",)),
        Scope(source="memory", namespace="gamma"),
        Scope(namespace="nowhere"),
    ]
    queries = {
        "main": [f'"{a}" OR "{b}"' for a, b in zip(words, words[1:] + words[:1])] + [f'"{word}"' for word in words],
        "cjk": ['"東京"', '"会議"', '"大阪" OR "東京"'],
    }
    ties, matched = 0, dict.fromkeys(queries, 0)
    async with db.reader() as conn:
        for scope in scopes:
            where, params = scope.where()
            assert await scope.few_chunks(db) is not None
            for which, expressions in queries.items():
                table, bm25 = fts.INDEXES[which]
                for expression in expressions:
                    every = await conn.execute_fetchall(
                        f"SELECT i.id, -{bm25} AS score FROM {table} JOIN {fts._IN_SCOPE} WHERE i.id = {table}.rowid"
                        f" AND {table} MATCH ? AND {where} ORDER BY score DESC, i.id",
                        [expression, *params],
                    )
                    for limit in (1, 5, 30):
                        expected = [tuple(row) for row in every[:limit]]
                        assert await fts.rank(db, expression, limit, scope, which) == expected
                        assert await on_thread(conn, fts.rank_by_windows, expression, limit, scope, which) == expected
                    ties += sum(a[1] == b[1] for a, b in zip(every, every[1:]))
                    matched[which] += len(every)
    assert ties > 100 and all(count > 50 for count in matched.values())


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


async def item_rows(db: Database, path: str) -> list[tuple]:
    return await db.read(
        "SELECT i.id, i.ord, i.content, i.line_start FROM items i JOIN documents d ON d.id = i.document_id"
        " WHERE d.path = ? ORDER BY i.ord",
        (path,),
    )


async def test_every_committed_write_publishes_what_it_did_to_items_and_vectors(db: Database):
    heard: list[ChangeSet] = []
    # What a write does to documents rows is published too (the counts status shows); here
    # only items and vectors are asked after.
    db.subscribe(lambda changes: heard.append(changes) if replace(changes, counted={}) else None)
    ids = await sources.sync_sources(db, [("notes", "/n", "default"), ("copies", "/c", "default")])
    assert heard == []  # state rows only
    await index(db, ids["notes"], "a.md", "one", "two")
    [first] = heard
    a_ids = [row[0] for row in await item_rows(db, "a.md")]
    assert first.added == tuple(a_ids) and not first.removed

    # an edit publishes the chunk it dropped and the one it added, nothing for the one kept
    heard.clear()
    await index(db, ids["notes"], "a.md", "two", "replaced")
    [edit] = heard
    after = await item_rows(db, "a.md")
    assert edit.removed == (a_ids[0],) and edit.added == (after[1][0],) and after[0][0] == a_ids[1]

    heard.clear()
    await vectors.write_vectors(db, "sig", [after[0][0]], np.ones((1, 4), dtype=np.float32) / 2)
    assert heard[-1].embedded == {"sig": (after[0][0],)}

    # a deletion by cascade is heard too: the items, and the vectors they took with them
    heard.clear()
    await documents.delete_documents(db, ids["notes"], ["a.md"])
    [deleted] = heard
    assert sorted(deleted.removed) == sorted(row[0] for row in after)
    assert deleted.unembedded == {"sig": (after[0][0],)}

    # a holder deleted hands its items to the other source's copy: a move, not a removal
    await index(db, ids["notes"], "b.md", "shared text")
    await index(db, ids["copies"], "b.md", "shared text")
    b_ids = [row[0] for row in await item_rows(db, "b.md")]
    heard.clear()
    await documents.delete_documents(db, ids["notes"], ["b.md"])
    [moved] = heard
    assert moved.moved == {ids["copies"]: tuple(b_ids)} and not moved.removed

    # a transaction that rolls back changed nothing, and says nothing
    heard.clear()
    with pytest.raises(RuntimeError):
        async with db.transaction() as conn:
            await conn.execute("DELETE FROM items")
            raise RuntimeError("changed my mind")
    assert heard == [] and len(await db.read("SELECT id FROM items")) == 1
    await index(db, ids["copies"], "c.md", "after the rollback")
    assert len(heard) == 1 and not heard[0].removed


async def test_an_edit_keeps_the_ids_vectors_and_entities_of_chunks_whose_text_did_not_change(db: Database):
    ids = await sources.sync_sources(db, [("notes", "/n", "default")])
    texts = [f"paragraph {n} about the heron" for n in range(6)]
    document_id = await index(db, ids["notes"], "long.md", *texts)
    before = {content: item_id for item_id, _, content, _ in await item_rows(db, "long.md")}
    kept = before[texts[4]]
    await vectors.write_vectors(db, "sig", [kept], np.ones((1, 4), dtype=np.float32) / 2)
    await graph.write_results(db, "offline:v1", [(kept, Extraction((Entity("Heron"),)))])

    # a new first paragraph (everything shifts down one) and the third one edited
    edited = ["a new opening paragraph", *texts[:2], "paragraph 2, corrected", *texts[3:]]
    assert await index(db, ids["notes"], "long.md", *edited) == document_id
    rows = await item_rows(db, "long.md")
    assert [content for _, _, content, _ in rows] == edited
    assert [ord_ for _, ord_, _, _ in rows] == list(range(len(edited)))
    assert [line for *_, line in rows] == list(range(1, len(edited) + 1))
    for item_id, _, content, _ in rows:
        if content in before:
            assert item_id == before[content], content
    assert {content for _, _, content, _ in rows if content not in before} == {edited[0], edited[3]}
    assert texts[2] not in {content for _, _, content, _ in rows}

    # what was computed for an unchanged chunk stays with it
    assert await db.read("SELECT item_id FROM vectors") == [(kept,)]
    assert await db.read("SELECT item_id FROM mentions") == [(kept,)]
    assert [hit.item_id for hit in await search(db, "corrected")] == [rows[3][0]]
    assert [hit.line_start for hit in await search(db, "opening")] == [1]
    async with db.transaction() as conn:
        await conn.execute("INSERT INTO items_fts(items_fts) VALUES ('integrity-check')")


async def test_an_answer_read_while_a_write_is_open_is_not_kept_past_its_commit(db: Database):
    """What searches ask the index (term counts, names) is kept until the next commit
    (store/until_commit.py). Read while a write has run its statements but not yet
    committed, the answer is the old one; the commit must drop it."""
    ids = await sources.sync_sources(db, [("notes", "/n", "default")])
    await index(db, ids["notes"], "a.md", "one walrus")
    walrus = [fts.Probe('"walrus"')]
    assert (await fts.term_counts(db, walrus)).matching == [1]
    await index(db, ids["notes"], "b.md", "two walrus")
    assert (await fts.term_counts(db, walrus)).matching == [2]
    async with db.transaction() as conn:
        await conn.execute("INSERT INTO entities (name, norm, kind) VALUES ('Walrus Keeper', 'walrus keeper', 'person')")
        assert await graph.resolve_names(db, ["walrus keeper"]) == {}
    assert (await graph.resolve_names(db, ["walrus keeper"]))["walrus keeper"].name == "Walrus Keeper"


async def counted_afresh(db: Database) -> dict[int, tallies.SourceCounts]:
    rows = await db.read(tallies.TALLY_SQL)
    by_source: dict[int, dict[str, int]] = {}
    for source_id, status, files, chunks in rows:
        entry = by_source.setdefault(source_id, {"chunks": 0})
        entry[status] = files
        entry["chunks"] += chunks
    return {source_id: tallies.SourceCounts(**entry) for source_id, entry in by_source.items()}


async def test_the_counts_status_shows_follow_every_commit(db: Database):
    """Status's counts are kept, not counted again for each call (a script polling `ken
    status` asks the same again and again, and an agent writing commits many times a
    second), so each change must show the moment it is committed, whichever kind of
    write made it: a transaction, one statement, a cascade."""
    ids = await sources.sync_sources(db, [("notes", "/n", "default"), ("copies", "/c", "default")])
    await index(db, ids["notes"], "a.md", "one walrus", "two walrus")
    first = await tallies.tallies(db)
    assert (first.by_source[ids["notes"]].done, first.by_source[ids["notes"]].chunks) == (1, 2)
    assert await tallies.tallies(db) is first  # nothing committed since: nothing read again

    await index(db, ids["copies"], "a.md", "one walrus", "two walrus")  # the same text: a shared copy
    broken = await documents.mark_scanning(db, ids["notes"], "broken.pdf")
    assert (await tallies.tallies(db)).by_source[ids["notes"]].scanning == 1
    await documents.mark_unindexed(db, broken, "failed", "not a pdf", 1.0, 9, None)
    after = await tallies.tallies(db)
    assert after.by_source == await counted_afresh(db)
    assert (after.by_source[ids["notes"]].failed, after.by_source[ids["copies"]].merged) == (1, 1)
    assert [failure.path for failure in after.failures[ids["notes"]]] == ["broken.pdf"]
    assert after.library_documents == 1

    # one statement (write_one): a file kenning failed on keeps its text, and its reason shows
    await index(db, ids["notes"], "c.md", "three walrus")
    await documents.mark_broken(db, ids["notes"], "c.md", "the store said no", 2.0, 5, None)
    broke = await tallies.tallies(db)
    assert broke.by_source == await counted_afresh(db)
    assert broke.by_source[ids["notes"]].failed == 2
    assert {failure.path: failure.reason for failure in broke.failures[ids["notes"]]} == {
        "broken.pdf": "not a pdf",
        "c.md": "the store said no",
    }
    # a failed file failing again for another reason: no count moves, the reason shown does
    await documents.mark_broken(db, ids["notes"], "c.md", "the disk said no", 3.0, 5, None)
    assert {failure.reason for failure in (await tallies.tallies(db)).failures[ids["notes"]]} == {
        "not a pdf",
        "the disk said no",
    }

    # a rolled-back write changes nothing
    with pytest.raises(RuntimeError):
        async with db.transaction() as conn:
            await conn.execute("DELETE FROM documents")
            raise RuntimeError("changed my mind")
    assert (await tallies.tallies(db)).by_source == await counted_afresh(db)

    await documents.delete_documents(db, ids["notes"], ["a.md", "broken.pdf", "c.md"])
    gone = await tallies.tallies(db)
    assert ids["notes"] not in gone.by_source and gone.failures == {}
    assert (gone.by_source[ids["copies"]].done, gone.library_documents) == (1, 1)

    # a source removed takes its documents with it
    await index(db, ids["notes"], "d.md", "four walrus")
    await sources.remove_source(db, ids["copies"])
    left = await tallies.tallies(db)
    assert left.by_source == await counted_afresh(db)
    assert ids["copies"] not in left.by_source and left.library_documents == 1


async def test_a_commit_that_changes_no_document_keeps_the_counts_status_shows(db: Database):
    """An agent's document is stored, embedded and mined in a commit each, and a status
    asked meanwhile counted every document again after each one (25-50 ms at 100,000
    documents). A vector or an extraction written changes no count, so nothing is read."""
    ids = await sources.sync_sources(db, [("notes", "/n", "default")])
    await index(db, ids["notes"], "a.md", "one walrus")
    [(item_id,)] = await db.read("SELECT id FROM items")
    kept = await tallies.tallies(db)
    await vectors.write_vectors(db, "sig", [item_id], np.ones((1, 4), dtype=np.float32) / 2)
    await graph.write_results(db, "offline:v1", [(item_id, Extraction((Entity("Walrus"),)))])
    assert await tallies.tallies(db) is kept


async def test_counts_read_while_a_commit_lands_are_not_kept_past_it(db: Database):
    """A source with failures has them read on a reader; a commit that lands while that
    read waits must show in the next status, not the counts taken before it."""
    import asyncio

    ids = await sources.sync_sources(db, [("notes", "/n", "default")])
    first = await documents.mark_scanning(db, ids["notes"], "a.pdf")
    await documents.mark_unindexed(db, first, "failed", "not a pdf", 1.0, 1, None)
    await tallies.tallies(db)
    second = await documents.mark_scanning(db, ids["notes"], "b.pdf")
    await documents.mark_unindexed(db, second, "failed", "not a pdf either", 1.0, 1, None)
    async with db.reader(), db.reader(), db.reader():  # the failures' read waits for one
        asking = asyncio.ensure_future(tallies.tallies(db))
        await asyncio.sleep(0.05)
        skipped = await documents.mark_scanning(db, ids["notes"], "c.bin")
        await documents.mark_unindexed(db, skipped, "skipped", "binary", 1.0, 1, None)
    await asking
    now = await tallies.tallies(db)
    assert now.by_source == await counted_afresh(db)
    assert (now.by_source[ids["notes"]].failed, now.by_source[ids["notes"]].skipped) == (2, 1)


async def test_the_counts_stay_right_when_status_is_asked_while_writes_land(db: Database):
    """The counts are read once between two writes and then follow each commit: one
    read while others commit must neither miss a commit nor count one twice."""
    import asyncio

    ids = await sources.sync_sources(db, [("notes", "/n", "default")])

    async def write(n: int) -> None:
        document_id = await documents.mark_scanning(db, ids["notes"], f"f{n}.md")
        if n % 3:
            await store_document(db, ids["notes"], f"f{n}.md", f"walrus number {n}", f"and its tail {n}")
        else:
            await documents.mark_unindexed(db, document_id, "failed", f"broken {n}", 1.0, 1, None)

    async def ask() -> None:
        for _ in range(30):
            for cache in db.caches.values():  # as after an idle spell: read again, with writes under way
                cache.clear()
            await tallies.tallies(db)
            await asyncio.sleep(0)

    await asyncio.gather(ask(), *(write(n) for n in range(40)), ask())
    final = await tallies.tallies(db)
    assert final.by_source == await counted_afresh(db)
    assert final.by_source[ids["notes"]].failed == 14 and final.by_source[ids["notes"]].done == 26
    assert sorted(failure.path for failure in final.failures[ids["notes"]]) == sorted(
        f"f{n}.md" for n in range(0, 40, 3)
    )


async def test_a_write_whose_caller_is_cancelled_after_it_commits_still_shows_in_the_counts(db: Database):
    """A reload or a source's removal cancels a sweep while its write waits on the
    writer's thread; the write still commits. Status's counts follow only what is
    published, so a commit left unpublished was missing from them until the library
    went quiet for 30 s, which a library an agent writes to never does."""
    import asyncio

    ids = await sources.sync_sources(db, [("notes", "/n", "default")])
    await index(db, ids["notes"], "a.md", "one walrus")
    await tallies.tallies(db)  # kept from now on, following each commit

    async def cancelled_while_it_waits(write) -> None:
        blocker = sqlite3.connect(db.path, isolation_level=None)
        blocker.execute("BEGIN IMMEDIATE")
        task = asyncio.ensure_future(write)
        await asyncio.sleep(0.2)  # the write is on the writer's thread, waiting for the lock
        task.cancel()
        blocker.execute("COMMIT")
        blocker.close()
        with pytest.raises(asyncio.CancelledError):
            await task

    await cancelled_while_it_waits(documents.mark_scanning(db, ids["notes"], "b.pdf"))  # a transaction
    assert (await tallies.tallies(db)).by_source == await counted_afresh(db)
    await cancelled_while_it_waits(documents.mark_broken(db, ids["notes"], "b.pdf", "no", 1.0, 1, None))  # one statement
    now = await tallies.tallies(db)
    assert now.by_source == await counted_afresh(db)
    assert [failure.path for failure in now.failures[ids["notes"]]] == ["b.pdf"]

    async def stored_in_a_transaction() -> None:
        async with db.transaction() as conn:
            await conn.execute("UPDATE documents SET status = 'skipped' WHERE path = 'b.pdf'")

    await cancelled_while_it_waits(stored_in_a_transaction())  # BEGIN waits; the body and COMMIT never run
    assert (await tallies.tallies(db)).by_source == await counted_afresh(db)


async def test_an_idle_library_drops_what_it_kept_for_searches_and_still_answers(
    db: Database, monkeypatch: pytest.MonkeyPatch
):
    import asyncio

    from kenning.store import database

    monkeypatch.setattr(database, "IDLE_RELEASE_S", 0.2)
    ids = await sources.sync_sources(db, [("notes", "/n", "default")])
    await index(db, ids["notes"], "a.md", "one walrus", "two walrus")
    walrus = [fts.Probe('"walrus"')]
    assert (await fts.term_counts(db, walrus)).matching == [2]
    assert db.caches["term counts"].entries
    await asyncio.sleep(0.1)
    assert db.caches["term counts"].entries, "dropped while the library was still in use"
    await asyncio.sleep(0.5)
    assert not db.caches["term counts"].entries
    assert (await fts.term_counts(db, walrus)).matching == [2]
    assert len(await search(db, "walrus")) == 2


async def test_a_burst_that_grew_the_wal_does_not_leave_it_that_large_while_the_library_stays_busy(
    db: Database, tmp_path: Path
):
    """Soak finding: the WAL kept the size its largest burst gave it (70 MB beside an
    18 MB database) for as long as the daemon ran."""
    limit = 16 << 20  # the journal_size_limit every connection sets
    wal = tmp_path / "kenning.db-wal"
    ids = await sources.sync_sources(db, [("notes", "/n", "default")])
    # A reader on an old snapshot (a slow search) keeps every frame written meanwhile in the WAL.
    pinned = sqlite3.connect(db.path, isolation_level=None)
    pinned.execute("BEGIN")
    pinned.execute("SELECT count(*) FROM documents").fetchall()
    for n in range(5):
        await index(db, ids["notes"], f"big{n}.md", " ".join(f"walrus{n}x{k}" for k in range(100_000)))
    assert wal.stat().st_size > limit
    pinned.execute("COMMIT")
    pinned.close()
    # The next commit checkpoints the WAL whole; the one after starts it again from its beginning.
    for n in range(3):
        await index(db, ids["notes"], f"small{n}.md", "one small walrus")
    assert wal.stat().st_size <= limit
    assert len(await search(db, "walrus4x99999")) == 1


async def _emptied(wal: Path) -> None:
    """Until the idle release has truncated `wal` (it runs IDLE_RELEASE_S after the last
    work), for at most five seconds."""
    for _ in range(50):
        await asyncio.sleep(0.1)
        if wal.stat().st_size == 0:
            break
    assert wal.stat().st_size == 0


async def test_an_idle_library_folds_its_wal_back_and_truncates_it(
    db: Database, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    from kenning.store import database

    monkeypatch.setattr(database, "IDLE_RELEASE_S", 0.2)
    wal = tmp_path / "kenning.db-wal"
    ids = await sources.sync_sources(db, [("notes", "/n", "default")])
    await index(db, ids["notes"], "a.md", " ".join(f"walrus{k}" for k in range(50_000)))
    assert wal.stat().st_size > 1 << 20
    await _emptied(wal)
    assert len(await search(db, "walrus49999")) == 1


async def test_a_wal_an_outside_reader_kept_from_truncating_is_truncated_once_it_lets_go(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    """An sqlite3 shell left inside a read transaction while a folder was indexed, past
    the busy timeout, kept the idle checkpoint from truncating the WAL (75 MB beside a
    10 MB database), and with no write after it nothing tried again: the WAL stayed that
    large until the next burst of work."""
    from kenning.store import database

    monkeypatch.setattr(database, "IDLE_RELEASE_S", 0.2)
    # A busy timeout the reader outlasts in a test's time (it is 10 s).
    pragmas = tuple(p for p in database.PRAGMAS if "busy_timeout" not in p)
    monkeypatch.setattr(database, "PRAGMAS", ("PRAGMA busy_timeout = 200", *pragmas))
    db = Database(tmp_path / "kenning.db")
    await db.open()
    try:
        wal = tmp_path / "kenning.db-wal"
        ids = await sources.sync_sources(db, [("notes", "/n", "default")])
        outside = sqlite3.connect(db.path, isolation_level=None)
        outside.execute("BEGIN")
        outside.execute("SELECT count(*) FROM documents").fetchall()
        await index(db, ids["notes"], "a.md", " ".join(f"walrus{k}" for k in range(50_000)))
        await asyncio.sleep(1.0)  # idle: the checkpoint is tried, and given up, while the reader holds
        assert wal.stat().st_size > 1 << 20
        outside.execute("COMMIT")
        outside.close()
        await _emptied(wal)
        assert len(await search(db, "walrus49999")) == 1
    finally:
        await db.close()


async def test_a_close_while_another_process_holds_the_write_lock_does_not_wait_it_out(tmp_path: Path):
    """An sqlite3 shell left in BEGIN IMMEDIATE at `ken stop`: the close's checkpoint
    waited out the busy timeout (10 s), past the shutdown's deadline (9 s), and the daemon
    left saying work in flight was rolled back. What the WAL holds is the next open's."""
    import time

    db = Database(tmp_path / "kenning.db")
    await db.open()
    ids = await sources.sync_sources(db, [("notes", "/n", "default")])
    await index(db, ids["notes"], "a.md", "one walrus")
    outside = sqlite3.connect(db.path, isolation_level=None)
    outside.execute("BEGIN IMMEDIATE")
    started = time.monotonic()
    try:
        await db.close()
    finally:
        outside.execute("ROLLBACK")
        outside.close()
    assert time.monotonic() - started < 5, "the close waited out the busy timeout"
    again = Database(tmp_path / "kenning.db")
    await again.open()
    try:
        assert len(await search(again, "walrus")) == 1
    finally:
        await again.close()


async def test_a_transaction_cancelled_twice_while_begin_waits_leaves_the_writer_usable(db: Database):
    """Issue 12, item 1: a reload cancels a sweep whose BEGIN IMMEDIATE is still waiting
    for the file lock, and cancels it again before BEGIN returns. BEGIN then completes on
    the connection's thread; the writer must not be left inside that transaction."""
    import asyncio

    blocker = sqlite3.connect(db.path, isolation_level=None)
    blocker.execute("BEGIN IMMEDIATE")
    entered = asyncio.Event()

    async def write() -> None:
        async with db.transaction() as conn:
            entered.set()
            await conn.execute("INSERT INTO sources (name, root, created_at) VALUES ('x', '/x', 0)")

    task = asyncio.create_task(write())
    await asyncio.sleep(0.2)  # BEGIN IMMEDIATE is now waiting on the blocker's lock
    task.cancel()
    await asyncio.sleep(0.05)
    task.cancel()
    await asyncio.sleep(0.05)
    blocker.execute("COMMIT")
    blocker.close()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert not entered.is_set()
    async with db.transaction() as conn:
        await conn.execute("INSERT INTO sources (name, root, created_at) VALUES ('y', '/y', 0)")
    assert [row[0] for row in await db.read("SELECT name FROM sources")] == ["y"]


async def test_a_read_whose_caller_is_cancelled_stops_part_way_and_frees_its_reader(db: Database):
    """A cancelled caller's read ran on its reader's thread to its end, and every read
    handed that reader next waited behind it."""
    started = threading.Event()
    endless = "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT count(*) FROM n"

    def count_forever(raw: sqlite3.Connection) -> list[tuple]:
        started.set()
        return raw.execute(endless).fetchall()

    async with db.reader() as conn:
        call = asyncio.ensure_future(read_until_cancelled(conn, count_forever))
        await asyncio.to_thread(started.wait, 60)
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        assert await asyncio.wait_for(on_thread(conn, lambda raw: raw.execute("SELECT 7").fetchall()), 60) == [(7,)]
