"""What is forgotten or removed leaves the database file, not only the search: the bytes
of kenning.db and its WAL, read as `strings kenning.db` reads them, no longer hold the
words of a forgotten capsule, a removed agent document or a removed ledger entry once
the call returns, nor those of a file deleted before it. The
words go from the rows (secure_delete), from the keyword index's segments (a purge that
merges them) and from the WAL (truncated). In process, on a real SQLite file.
"""

from __future__ import annotations

import asyncio
import sqlite3
from contextlib import closing
from pathlib import Path

from kenning.config import DaemonSettings, Settings, SourceSettings
from kenning.ingest.text_docs import TextDocument
from kenning.service.library import Library
from kenning.service.memory import NewCapsule
from kenning.store.migrations import MIGRATIONS, migrate
from tests.test_agent_records import opened as library_opened
from tests.test_agent_records import tamper

# Made-up words the porter stemmer leaves as they are, one per thing removed, each in a
# title and a body; and words of what stays.
CAPSULE = ("Therapist schedule", "I see doctor vexmorland on Fridays; my pin hint is quibblestorm.")
DOCUMENT = ("Diary entry", "Met plonkabrix at the clinic; the diagnosis was zendaquarm.")
LEDGER = {"hostname": "grotvinheim", "owner": "fizzlemeyk"}
FILE = "# Private\n\nMy landlord trabbelwund owes me the deposit for flat yorvikstram.\n"
GONE = ("vexmorland", "quibblestorm", "plonkabrix", "zendaquarm", "grotvinheim", "fizzlemeyk", "trabbelwund", "yorvikstram")
KEPT = ("wombatry", "quollish", "bandicoot")


def on_disk(db: Path) -> bytes:
    wal = db.with_name(db.name + "-wal")
    return db.read_bytes() + (wal.read_bytes() if wal.exists() else b"")


def readable(db: Path, words: tuple[str, ...]) -> list[str]:
    data = on_disk(db)
    return [word for word in words if word.encode() in data]


async def opened(tmp_path: Path, folder: Path) -> Library:
    return await library_opened(tmp_path, sources=(SourceSettings(name="notes", path=folder),))


async def test_forgotten_and_removed_text_is_gone_from_the_database_file_and_its_wal(tmp_path):
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "private.md").write_text(FILE)
    (folder / "kept.md").write_text("# Kept\n\nNotes on wombatry and quollish habits.\n")
    library = await opened(tmp_path, folder)
    try:
        # The first sweep may have run at open already; this one ends after it.
        await library.scan("notes", wait=True)
        assert (await library.status()).sources[0].done == 2
        for n in range(20):
            await library.memory_add(NewCapsule(f"Filler {n}", f"Filler fact {n}: port {8000 + n} serves tool {n}.", "fact"))
        capsule = await library.memory_add(NewCapsule(*CAPSULE, "fact"))
        await library.add_text(TextDocument(*DOCUMENT, "diary://2026-12-01"))
        await library.ledger_add("hosts", LEDGER)
        await library.memory_add(NewCapsule("Garden", "The bandicoot digs under the fence.", "fact"))
        # Checkpointed too, as a library running for a while has it: the words are in
        # the file itself, not only in the WAL the test could otherwise wait out.
        await library.db.write_one("PRAGMA wal_checkpoint(TRUNCATE)")
        assert readable(library.db.path, GONE) == list(GONE)

        # A sweep does not purge (a whole index rewritten each time files come and go):
        # the deleted file's words go with the next removal's purge.
        (folder / "private.md").unlink()
        assert (await library.scan("notes", wait=True)).result["deleted"] == 1
        await library.memory_forget(capsule.id)
        await library.remove_text("diary://2026-12-01")
        await library.ledger_remove(section="hosts", fields={"hostname": "grotvinheim"})

        assert readable(library.db.path, GONE) == []
        assert readable(library.db.path, KEPT) == list(KEPT)
        assert [hit.title for hit in (await library.search("wombatry quollish")).hits] == ["Kept"]
        assert [hit.title for hit in (await library.search("bandicoot fence")).hits][:1] == ["Garden"]
        assert not (await library.search("vexmorland trabbelwund zendaquarm", legs=("keyword",))).hits
    finally:
        await library.close()
    assert readable(library.db.path, GONE) == []


async def test_a_removal_while_searches_and_writes_go_on_still_leaves_no_word_behind(tmp_path):
    """The purge merges in steps between other writes: a capsule forgotten while others
    are written and searched for is gone too, and each forget waits for a purge that
    began after it, however many run at once."""
    folder = tmp_path / "notes"
    folder.mkdir()
    library = await opened(tmp_path, folder)
    try:
        doomed = [
            await library.memory_add(NewCapsule(f"Secret {n}", f"Code word {word} for vault {n}.", "fact"))
            for n, word in enumerate(GONE)
        ]

        async def writer() -> list[str]:
            return [
                (await library.add_text(TextDocument(f"Busy {n}", f"Log {n}: wombatry count {n * 37}.", f"log://{n}"))).stored
                for n in range(30)
            ]

        async def reader() -> None:
            for _ in range(30):
                await library.search("wombatry")

        written, *_ = await asyncio.gather(writer(), reader(), *(library.memory_forget(c.id) for c in doomed))
        assert readable(library.db.path, GONE) == []
        assert written == ["indexed"] * 30 and readable(library.db.path, ("wombatry",)) == ["wombatry"]
        assert (await library.memory_list(limit=100)).capsules == []
    finally:
        await library.close()


def test_an_upgraded_library_loses_the_words_removed_before_the_upgrade(tmp_path):
    """A library of the schema before m023, where a delete left its words in the index
    segments: the migration merges them away."""
    path = tmp_path / "kenning.db"
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA auto_vacuum = INCREMENTAL")
    conn.execute("PRAGMA journal_mode = WAL")
    migrate(conn, MIGRATIONS[:22])
    conn.execute("INSERT INTO sources (id, name, root, created_at) VALUES (1, 'notes', '/n', 0)")
    for n in range(40):
        conn.execute(
            "INSERT INTO documents (id, source_id, path, status, updated_at) VALUES (?, 1, ?, 'done', 0)", (n + 1, f"{n}.md")
        )
        text = f"note {n} about wombatry" + (" and the vexmorland quibblestorm affair" if n == 7 else "")
        conn.execute(
            "INSERT INTO items (document_id, ord, title, content, line_start, line_end) VALUES (?, 0, 'Note', ?, 1, 1)",
            (n + 1, text),
        )
    conn.execute("DELETE FROM documents WHERE id = 8")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    assert readable(path, ("vexmorland", "quibblestorm")) != []

    conn.execute("PRAGMA secure_delete = ON")
    assert migrate(conn) == len(MIGRATIONS)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    assert readable(path, ("vexmorland", "quibblestorm")) == []
    assert conn.execute("SELECT count(*) FROM items_fts WHERE items_fts MATCH 'wombatry'").fetchone() == (39,)
    assert conn.execute("PRAGMA freelist_count").fetchone() == (0,)
    conn.close()


async def test_a_source_removal_a_stop_cut_short_leaves_no_word_behind_once_the_next_start_finishes_it(tmp_path):
    """`ken sources remove` cut short by a stop (the source flagged, its documents still
    there) is finished by the next start in the background; its words must leave the
    file then too, not wait for some later removal's purge."""
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "private.md").write_text(FILE)
    library = await opened(tmp_path, folder)
    try:
        await library.scan("notes", wait=True)
        await library.memory_add(NewCapsule("Garden", "The bandicoot digs under the fence.", "fact"))
    finally:
        await library.close()
    path = tmp_path / "data" / "kenning.db"
    with closing(sqlite3.connect(path)) as conn, conn:  # as the removal's first commit left it
        conn.execute("UPDATE sources SET removing = 1, active = 0 WHERE name = 'notes'")
    assert readable(path, ("trabbelwund", "yorvikstram")) == ["trabbelwund", "yorvikstram"]

    library = Library(Settings(daemon=DaemonSettings(data_dir=tmp_path / "data")), tmp_path / "c.toml")
    await library.open()
    try:
        [finishing] = [task for task in library._tasks if task.get_name() == "finish removals"]
        await finishing
        assert await library.db.read("SELECT name FROM sources WHERE name = 'notes'") == []
        assert readable(path, ("trabbelwund", "yorvikstram")) == []
        assert readable(path, ("bandicoot",)) == ["bandicoot"]
    finally:
        await library.close()


def grow_index(path: Path, document_uri: str, chunks: int) -> None:
    """Give the library a keyword index large enough that a purge takes many steps
    (store/maintenance.py MERGE_PAGES_PER_STEP): chunks of made-up words written as rows
    of one document, through the triggers that index them as ingest's rows are. Ingesting
    that many chunks would take minutes."""
    words = ["".join(chr(97 + (n * 7 + k * 13) % 26) for k in range(3 + n % 6)) + str(n) for n in range(40_000)]
    with closing(sqlite3.connect(path)) as conn, conn:
        [(document_id,)] = conn.execute("SELECT id FROM documents WHERE uri = ?", (document_uri,)).fetchall()
        conn.executemany(
            "INSERT INTO items (document_id, ord, title, section, content, line_start, line_end)"
            " VALUES (?, ?, 'Filler', '', ?, 1, 1)",
            (
                (document_id, n + 1, " ".join(words[(n * 61 + k * 397) % len(words)] for k in range(80)))
                for n in range(chunks)
            ),
        )
        conn.commit()
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")


async def test_a_stop_during_a_purge_cuts_it_short_and_the_next_start_takes_the_removed_words_out(tmp_path):
    """A removal's purge rewrites the whole keyword index, seconds on a large library; a
    stop that waited for it ran past the shutdown deadline (and a service manager's
    patience). The stop cuts it short between two steps, the removal answers as done, and the
    next start finishes the purge: the words leave the file then."""
    library = await library_opened(tmp_path)
    try:
        await library.add_text(TextDocument("Filler", "Wombatry notes.", "filler://1"))
        await library.add_text(TextDocument(*DOCUMENT, "diary://2026-12-01"))
    finally:
        await library.close()
    path = tmp_path / "data" / "kenning.db"
    grow_index(path, "filler://1", 20_000)

    settings = Settings(daemon=DaemonSettings(data_dir=tmp_path / "data"))
    library = Library(settings, tmp_path / "c.toml")
    await library.open()
    removal = asyncio.create_task(library.remove_text("diary://2026-12-01"))
    try:
        while library.scrubber._running is None:
            assert not removal.done(), "the removal ended before its purge was seen to start"
            await asyncio.sleep(0.005)
    finally:
        await library.close()
    # The removal is done, and says so: what is owed is the purge, not the removal.
    assert (await removal).uri == "diary://2026-12-01"
    # Cut short: the words are still in the file, and the document is gone all the same.
    assert readable(path, ("plonkabrix", "zendaquarm")) != []

    library = Library(settings, tmp_path / "c.toml")
    await library.open()
    try:
        [finishing] = [task for task in library._tasks if task.get_name() == "finish the purge a stop cut short"]
        await finishing
        assert await library.db.read("SELECT count(*) FROM documents WHERE uri = 'diary://2026-12-01'") == [(0,)]
        assert await library.db.read("SELECT count(*) FROM items_fts WHERE items_fts MATCH 'wombatry'") == [(1,)]
        assert await library.db.read("SELECT count(*) FROM items") == [(20_001,)]
    finally:
        await library.close()
    assert readable(path, ("plonkabrix", "zendaquarm")) == []


async def test_the_purge_is_marked_owed_in_the_file_before_the_removed_rows_go(tmp_path):
    """A crash between a removal's commit and a mark written after it left the words in
    the file with nothing to say a purge was owed. Seen from outside the daemon, at the
    moment each removal's rows are gone: the mark is already in the file."""
    library = await library_opened(tmp_path)
    path = tmp_path / "data" / "kenning.db"
    marked_when_removed: list[bool] = []

    def on_commit(changes) -> None:
        if changes.removed:
            with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as conn:
                marked_when_removed.append(conn.execute("SELECT count(*) FROM owed").fetchone() == (1,))

    try:
        await library.add_text(TextDocument(*DOCUMENT, "diary://2026-12-01"))
        capsule = await library.memory_add(NewCapsule(*CAPSULE, "fact"))
        library.db.subscribe(on_commit)
        await library.remove_text("diary://2026-12-01")
        await library.memory_forget(capsule.id)
    finally:
        await library.close()
    assert marked_when_removed == [True, True]
    with closing(sqlite3.connect(path)) as conn:
        assert conn.execute("SELECT count(*) FROM owed").fetchone() == (0,)


async def test_a_source_being_removed_is_listed_as_such_before_and_after_a_reload(tmp_path):
    """A removal flags the source's row first and drops its documents in batches. Until
    it ended, `sources.list` left the source out, or, once a reload read a config still
    naming it (a script removing it over the socket, a start finishing a removal a stop
    cut short), listed it as an ordinary folder; `status` called it "not in config"."""
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "private.md").write_text(FILE)
    (tmp_path / "c.toml").write_text(f'[[sources]]\nname = "notes"\npath = "{folder}"\n')
    library = await opened(tmp_path, folder)
    try:
        await library.scan("notes", wait=True)
        await tamper(library, ("UPDATE sources SET removing = 1, active = 0 WHERE name = 'notes'", ()))
        for _ in range(2):
            [listed] = [s for s in (await library.sources_list()).sources if s.name == "notes"]
            [shown] = [s for s in (await library.status()).sources if s.name == "notes"]
            assert listed.removing and shown.removing and (listed.documents, shown.holds) == (1, 1)
            await library.reload()
    finally:
        await library.close()
