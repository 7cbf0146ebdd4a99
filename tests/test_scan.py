"""Sweeps on a real folder and a real database, without the daemon around them."""

from __future__ import annotations

import asyncio
import gzip
import os
import random
import shutil
import subprocess
import sys
import threading
import time
from concurrent.futures import Future
from pathlib import Path


import docx
import pytest

from kenning.config import ChunkingSettings, DaemonSettings, LimitsSettings, Settings, SourceSettings
from kenning.errors import ReaderError
from kenning.ingest import convert, scan
from kenning.ingest.parse_pool import ParsePool
from kenning.ingest.pipeline import RACY_SECONDS, FileJob, IngestOptions, ingest, needs_look
from kenning.ingest.preview import describe, preview
from kenning.ingest import mounts as mounts_module
from kenning.ingest.mounts import read_table
from kenning.ingest.scan import FolderScanner, SweepBudget
from kenning.ingest.walk import SYSTEM_FS, WalkRules, walk
from kenning.service.library import Library
from tests.daemon_harness import as_a_user
from tests.helpers import search
from tests.hostile_files import pdf_reference_loop
from kenning.store import documents, lookup, sources
from kenning.store import tallies as tally_store
from kenning.store.database import Database


@pytest.fixture
def options(parsers: ParsePool) -> IngestOptions:
    return IngestOptions(chunking=ChunkingSettings(), limits=LimitsSettings(), max_file_bytes=1 << 20, parsers=parsers)


async def scanner_for(db: Database, folder: Path, options: IngestOptions, **overrides) -> FolderScanner:
    settings = SourceSettings(name="notes", path=folder, **overrides)
    ids = await sources.sync_sources(db, [("notes", str(folder), "default")])
    return FolderScanner(db, ids["notes"], settings, options)


def write(folder: Path, name: str, text: str, mtime: float | None = None) -> Path:
    path = folder / name
    path.write_text(text)
    if mtime is not None:
        os.utime(path, (mtime, mtime))
    return path


async def item_ids(db: Database) -> list[int]:
    async with db.reader() as conn:
        return [row[0] for row in await (await conn.execute("SELECT id FROM items ORDER BY id")).fetchall()]


async def test_unchanged_files_are_not_reingested_and_same_bytes_keep_their_chunks(db, tmp_path, options):
    folder = tmp_path / "notes"
    folder.mkdir()
    path = write(folder, "a.md", "# A\n\nkoala facts\n", mtime=1000)
    scanner = await scanner_for(db, folder, options)
    assert (await scanner.sweep())["indexed"] == 1
    before = await item_ids(db)
    assert (await scanner.sweep())["unchanged"] == 1
    os.utime(path, (2000, 2000))  # touched, same bytes
    counts = await scanner.sweep()
    assert counts["indexed"] == 0 and counts["unchanged"] == 1
    assert await item_ids(db) == before
    states = await documents.file_states(db, scanner.source_id)
    assert states["a.md"].mtime == 2000


async def test_a_request_is_answered_while_a_sweep_sets_its_files_against_the_index(
    db, tmp_path, options, monkeypatch
):
    """A sweep sets every file found against its row before it reads any; on the event
    loop, a folder of 100,000 files held every request (`ken status`, a search, an MCP
    call) for 0.7 s of CPU at each sweep, one that changed nothing included.
    The listing is held here on its first file until a query sent from the loop has its
    answer: on the loop, the query could not run and the sweep waited for it in vain."""
    folder = tmp_path / "notes"
    folder.mkdir()
    write(folder, "a.md", "# A\n\nkoala facts\n", mtime=1000)
    write(folder, "b.md", "# B\n\nwombat facts\n", mtime=1000)
    scanner = await scanner_for(db, folder, options)
    assert (await scanner.sweep())["indexed"] == 2
    loop = asyncio.get_running_loop()
    answered = threading.Event()
    asked: list[Future[None]] = []
    while_held: list[bool] = []

    async def request() -> None:
        await sources.list_sources(db)
        answered.set()

    def held(job: FileJob) -> bool:
        if not asked:
            asked.append(asyncio.run_coroutine_threadsafe(request(), loop))
            while_held.append(answered.wait(30))
        return needs_look(job)

    monkeypatch.setattr(scan, "needs_look", held)
    counts = await scanner.sweep()
    assert while_held == [True]
    assert counts["unchanged"] == 2


async def test_a_readers_own_version_reads_again_that_format_alone(db, tmp_path, options, monkeypatch):
    """A change to the markdown reader alone reads again the markdown files, those it
    skipped too, and none of a library's text or code; a reader that now reads files it
    refused tries again those alone."""
    folder = tmp_path / "notes"
    folder.mkdir()
    write(folder, "a.md", "# A\n\nkoala facts\n", mtime=1000)
    write(folder, "b.txt", "wombat facts\n", mtime=1000)
    write(folder, "c.py", "print('numbat facts')\n", mtime=1000)
    write(folder, "d.md", "", mtime=1000)
    write(folder, "e.txt", "", mtime=1000)
    scanner = await scanner_for(db, folder, options)
    first = await scanner.sweep()
    assert first["indexed"] == 3 and first["skipped"] == 2

    async def looked_at() -> set[str]:
        before = await documents.file_states(db, scanner.source_id)
        await scanner.sweep()
        after = await documents.file_states(db, scanner.source_id)
        changed = {path for path in after if after[path].updated_at != before[path].updated_at}
        assert scanner.progress.to_check == len(changed)
        return changed

    monkeypatch.setitem(convert.FORMAT_VERSIONS, "markdown", convert.FORMAT_VERSIONS.get("markdown", 0) + 1)
    assert await looked_at() == {"a.md", "d.md"}
    assert await looked_at() == set()
    monkeypatch.setitem(convert.RETRY_VERSIONS, "text", 99)
    assert await looked_at() == {"e.txt"}


async def test_a_link_is_read_again_when_its_targets_reader_changes_not_its_own_names(
    db, tmp_path, options, monkeypatch
):
    """`summary.md -> report.docx` is read by the DOCX reader, so a change to that reader
    must read it again, and a change to the markdown reader must not. The report lives
    outside the folder, so only the link is in it."""
    folder, elsewhere = tmp_path / "notes", tmp_path / "reports"
    folder.mkdir()
    elsewhere.mkdir()
    document = docx.Document()
    document.add_paragraph("Quarterly okapi figures held steady.")
    document.save(str(elsewhere / "report.docx"))
    (folder / "summary.md").symlink_to(elsewhere / "report.docx")
    # Long settled, so a sweep reads it again only for a change of reading.
    os.utime(elsewhere / "report.docx", (1000, 1000))
    os.utime(folder / "summary.md", (1000, 1000), follow_symlinks=False)
    scanner = await scanner_for(db, folder, options, confine_to_root=False)
    assert (await scanner.sweep())["indexed"] == 1

    async def looked_at() -> set[str]:
        before = await documents.file_states(db, scanner.source_id)
        await scanner.sweep()
        after = await documents.file_states(db, scanner.source_id)
        return {path for path in after if after[path].updated_at != before[path].updated_at}

    monkeypatch.setitem(convert.FORMAT_VERSIONS, "docx", 99)
    assert await looked_at() == {"summary.md"}
    monkeypatch.setitem(convert.FORMAT_VERSIONS, "markdown", 99)
    assert await looked_at() == set()


async def test_a_file_dated_ahead_of_the_clock_is_hashed_until_it_settles_not_at_every_sweep(db, tmp_path, options):
    """Copied with its date from a machine whose clock runs fast: every sweep hashed it
    until the clock caught up (here a day)."""
    folder = tmp_path / "notes"
    folder.mkdir()
    ahead = time.time() + 86_400
    write(folder, "log.md", "# Log\n\nThe kayak leaves at ten.\n", mtime=ahead)
    scanner = await scanner_for(db, folder, options)
    assert (await scanner.sweep())["indexed"] == 1
    await asyncio.sleep(RACY_SECONDS + 0.1)
    await scanner.sweep()  # hashed again, now past the time a second save could share its stamp
    assert scanner.progress.to_check == 1
    for _ in range(2):
        assert (await scanner.sweep())["unchanged"] == 1
        assert scanner.progress.to_check == 0

    # Saved again with the same size and the same date to come: still read.
    write(folder, "log.md", "# Log\n\nThe skiff leaves at ten.\n", mtime=ahead)
    assert (await scanner.sweep())["indexed"] == 1
    assert {hit.title for hit in await search(db, "skiff")} == {"Log"}
    assert await search(db, "kayak") == []


async def test_chunk_budget_defers_files_to_later_sweeps(db, tmp_path, options):
    folder = tmp_path / "notes"
    folder.mkdir()
    for index in range(6):
        write(folder, f"n{index}.md", f"note {index} about emus\n", mtime=1000 + index)
    scanner = await scanner_for(db, folder, options, chunk_budget=2)
    first = await scanner.sweep()
    assert first["indexed"] == 2 and scanner.progress.pending == 4
    assert {h.path.rsplit("/", 1)[1] for h in await search(db, "emus")} == {"n5.md", "n4.md"}  # newest first
    await scanner.sweep()
    await scanner.sweep()
    assert len(await search(db, "emus")) == 6


async def test_a_source_pointed_at_another_folder_before_a_full_sweep_is_cited_for_that_folders_text(
    db, tmp_path, options
):
    """Two folders of notes with the same names, sizes and mtimes (a copy made with `cp
    -p`, two sources' paths swapped in one edit): the source's first sweep was cut short
    (here by its budget), so no sweep had noted which folder it indexed, and the files it
    had read were taken as unchanged in the new one, cited there for the old text."""
    old, new = tmp_path / "old", tmp_path / "new"
    for folder, word in ((old, "emus"), (new, "kiwi")):
        folder.mkdir()
        for index in range(4):
            write(folder, f"n{index}.md", f"note {index} about {word}\n", mtime=1000 + index)
    first = await scanner_for(db, old, options, chunk_budget=2)
    assert (await first.sweep())["indexed"] == 2
    second = await scanner_for(db, new, options)
    await second.sweep()
    assert await search(db, "emus") == []
    assert len(await search(db, "kiwi")) == 4


async def test_a_source_pointed_at_a_folder_that_is_not_there_cites_nothing_of_the_old_one(db, tmp_path, options):
    """A typo in the new path: the old folder's files were kept, as a drive that is away
    keeps its own, and every search cited them at paths in a folder that does not exist."""
    old = tmp_path / "notes"
    old.mkdir()
    write(old, "n.md", "note about emus\n")
    assert (await (await scanner_for(db, old, options)).sweep())["indexed"] == 1
    typo = await scanner_for(db, tmp_path / "ntoes", options)
    assert (await typo.sweep())["deleted"] == 1
    assert await search(db, "emus") == []
    assert typo.progress.last_error.startswith(f"cannot read {tmp_path / 'ntoes'}: No such file or directory")


async def test_a_sweep_of_the_old_folder_ending_after_the_re_point_does_not_undo_it(db, tmp_path, options):
    """A reload re-points the source while a sweep of the old folder is reading files
    (service/folders.py `apply` marks the new root before it stops that sweep): the
    sweep, ending, recorded the old folder as the one last looked at whole, so the new
    root was taken for the old folder and, not there (a typo), kept its text, cited at
    paths in a folder that does not exist."""
    old = tmp_path / "notes"
    old.mkdir()
    write(old, "n.md", "note about emus\n", mtime=1000)
    first = await scanner_for(db, old, options)
    await first.sweep()
    write(old, "n.md", "note about emus and owls\n", mtime=2000)
    typo = tmp_path / "ntoes"
    repointed: list[asyncio.Future] = []

    def reload_meanwhile(busy: bool) -> None:
        if busy and not repointed:
            repointed.append(asyncio.ensure_future(sources.sync_sources(db, [("notes", str(typo), "default")])))

    ending = FolderScanner(db, first.source_id, first.settings, options, on_ingesting=reload_meanwhile)
    assert (await ending.sweep())["indexed"] == 1
    await repointed[0]
    pointed = FolderScanner(db, first.source_id, SourceSettings(name="notes", path=typo), options)
    assert (await pointed.sweep())["deleted"] == 1
    assert await search(db, "emus") == []


async def test_a_file_is_read_from_the_source_the_config_names_not_one_it_dropped(db, tmp_path, options):
    """A source renamed in the config: the old name keeps its rows, out of search, and
    `ken get` of a file edited since read them, the text from before the edit."""
    folder = tmp_path / "notes"
    folder.mkdir()
    note = write(folder, "n.md", "note about emus\n", mtime=1000)
    await (await scanner_for(db, folder, options)).sweep()
    ids = await sources.sync_sources(db, [("renamed", str(folder), "default")])
    renamed = FolderScanner(db, ids["renamed"], SourceSettings(name="renamed", path=folder), options)
    await renamed.sweep()
    write(folder, "n.md", "note about kiwi\n", mtime=2000)
    assert (await renamed.sweep())["indexed"] == 1
    found = await lookup.document_at(db, str(note))
    assert found is not None and found.source == "renamed"


async def test_sources_share_the_per_round_budget_and_resume_when_it_is_renewed(db, tmp_path, options):
    shared = SweepBudget(per_round=3)
    scanners = []
    for name in ("first", "second"):
        folder = tmp_path / name
        folder.mkdir()
        for index in range(4):
            write(folder, f"{name}{index}.md", f"{name} note {index} about yaks\n", mtime=1000 + index)
        ids = await sources.sync_sources(db, [(n, str(tmp_path / n), "default") for n in ("first", "second")])
        settings = SourceSettings(name=name, path=folder)
        scanners.append(FolderScanner(db, ids[name], settings, options, default_budget=0, shared_budget=shared))
    first, second = scanners
    assert (await first.sweep())["indexed"] == 3
    counts = await second.sweep()
    assert counts["indexed"] == 0 and counts["deferred"] == 4 and second.progress.deferred == 4
    shared.renew(3)
    assert (await second.sweep())["indexed"] == 3
    shared.renew(0)
    await first.sweep()
    await second.sweep()
    assert len(await search(db, "yaks", limit=20)) == 8


async def test_a_folder_default_budget_applies_unless_the_source_sets_its_own(db, tmp_path, options):
    folder = tmp_path / "notes"
    folder.mkdir()
    for index in range(5):
        write(folder, f"n{index}.md", f"note {index} about gnus\n", mtime=1000 + index)
    scanner = await scanner_for(db, folder, options)
    scanner.default_budget = 2
    assert (await scanner.sweep())["indexed"] == 2
    own = await scanner_for(db, folder, options, chunk_budget=0)
    own.default_budget = 2
    assert (await own.sweep())["indexed"] == 3


async def test_max_files_keeps_the_newest_and_lowering_it_deletes_nothing(db, tmp_path, options):
    folder = tmp_path / "notes"
    folder.mkdir()
    for index in range(5):
        write(folder, f"n{index}.md", f"note {index} about ocelots\n", mtime=1000 + index)
    scanner = await scanner_for(db, folder, options)
    await scanner.sweep()
    capped = await scanner_for(db, folder, options, max_files=2)
    counts = await capped.sweep()
    assert counts["deleted"] == 0 and capped.progress.capped == 3
    assert len(await search(db, "ocelots")) == 5


async def test_a_missing_root_is_reported_and_deletes_nothing(db, tmp_path, options):
    folder = tmp_path / "notes"
    folder.mkdir()
    write(folder, "a.md", "tamarin notes\n")
    scanner = await scanner_for(db, folder, options)
    await scanner.sweep()
    shutil.move(folder, tmp_path / "unmounted")
    counts = await scanner.sweep()
    assert counts["deleted"] == 0
    assert "cannot read" in scanner.progress.last_error
    assert len(await search(db, "tamarin")) == 1
    [row] = await sources.list_sources(db)
    assert row.last_sweep_error == scanner.progress.last_error and row.last_sweep_kept is None


async def test_a_root_that_fails_to_open_for_any_reason_is_reported_and_deletes_nothing(db, tmp_path, options):
    """Not only a missing or forbidden root: a dead network mount (ENOTCONN, ESTALE) or a
    link loop fails with another OSError, which went past the sweep unreported."""
    folder = tmp_path / "notes"
    folder.mkdir()
    write(folder, "a.md", "tamarin notes\n")
    scanner = await scanner_for(db, folder, options)
    await scanner.sweep()
    shutil.move(folder, tmp_path / "away")
    (tmp_path / "other").symlink_to(folder)
    folder.symlink_to(tmp_path / "other")
    counts = await scanner.sweep()
    assert counts["deleted"] == 0 and len(await search(db, "tamarin")) == 1
    assert scanner.progress.last_error == f"cannot read {folder}: Too many levels of symbolic links"


async def test_an_unmounted_drive_keeps_its_index_and_says_why_and_a_folder_emptied_by_hand_does_not(
    db, tmp_path, options, mount
):
    """A registered drive's mount point is an empty folder while the drive is not mounted:
    the sweep read that as every file deleted and dropped the drive's whole index (and
    mounting it again read, embedded and mined every file anew). A real tmpfs is mounted."""
    folder = tmp_path / "drive"
    folder.mkdir()
    mount("-t", "tmpfs", "kenning-test", folder)
    for index in range(3):
        write(folder, f"n{index}.md", f"note {index} about lynxes\n")
    scanner = await scanner_for(db, folder, options)
    await scanner.sweep()
    subprocess.run(["umount", str(folder)], check=True)
    # Kept after a restart too: a new scanner on the same library.
    scanner = await scanner_for(db, folder, options)
    counts = await scanner.sweep()
    assert counts["deleted"] == 0 and len(await search(db, "lynxes")) == 3
    assert scanner.progress.last_error == (
        f"{folder} is no longer a mount point (a drive or share not mounted?); the 3 indexed files not found in"
        " it are kept as last indexed until it is mounted again or the source is removed"
    )
    [row] = await sources.list_sources(db)
    assert row.last_sweep_error == scanner.progress.last_error and row.last_sweep_kept == "unmounted"

    # A folder that never was a mount point (the source pointed at one) is its
    # contents: emptied by hand, its files are deleted.
    plain = tmp_path / "plain"
    plain.mkdir()
    write(plain, "here.md", "a note about ocelots\n")
    scanner = await scanner_for(db, plain, options)
    assert (await scanner.sweep())["indexed"] == 1
    (plain / "here.md").unlink()
    assert (await scanner.sweep())["deleted"] == 1
    assert await search(db, "ocelots") == [] and scanner.progress.last_error is None


async def test_a_drive_away_stays_away_across_sweeps_and_restarts_whatever_its_mount_point_holds(
    db, tmp_path, options, mount
):
    """A sweep of the bare mount point holding a stray file recorded the root as "not a
    mount point", so the next sweep took the drive for a plain folder and deleted its
    files. A drive mounted a level up (the root a folder on it) is taken for away too:
    deletions wait until it is mounted at the root again (scan.py `_drive_away`)."""
    folder = tmp_path / "mnt" / "drive"
    folder.mkdir(parents=True)
    mount("-t", "tmpfs", "kenning-test", folder)
    for index in range(2):
        write(folder, f"n{index}.md", f"note {index} about fossas\n")
    scanner = await scanner_for(db, folder, options)
    await scanner.sweep()
    subprocess.run(["umount", str(folder)], check=True)
    write(folder, "stray.md", "a note left there about genets\n")
    for _ in range(2):
        scanner = await scanner_for(db, folder, options)
        assert (await scanner.sweep())["deleted"] == 0
        assert len(await search(db, "fossas")) == 2 and len(await search(db, "genets")) == 1
    (folder / "stray.md").unlink()
    assert (await scanner.sweep())["deleted"] == 0 and len(await search(db, "genets")) == 1

    # The drive now mounted on the parent, with one of its notes gone: kept all the same.
    mount("-t", "tmpfs", "kenning-test", folder.parent)
    folder.mkdir()
    write(folder, "n0.md", "note 0 about fossas\n")
    counts = await scanner.sweep()
    assert counts["deleted"] == 0 and len(await search(db, "fossas")) == 2
    assert "no longer a mount point" in scanner.progress.last_error


async def test_a_bind_mount_on_the_same_filesystem_is_a_drive_too_once_it_is_undone(db, tmp_path, options, mount):
    """ismount compares a folder's device with its parent's, and a folder bound from the
    same filesystem has the same one: the bind was never known for a mount point, and
    once undone, its bare folder with a stray file in it read as every file deleted."""
    archive = tmp_path / "archive"
    archive.mkdir()
    for index in range(2):
        write(archive, f"n{index}.md", f"note {index} about binturongs\n")
    folder = tmp_path / "notes"
    folder.mkdir()
    mount("--bind", archive, folder)
    scanner = await scanner_for(db, folder, options)
    assert (await scanner.sweep())["indexed"] == 2
    subprocess.run(["umount", str(folder)], check=True)
    write(folder, "stray.md", "a note left there about kinkajous\n")
    assert (await scanner.sweep())["deleted"] == 0
    assert len(await search(db, "binturongs")) == 2 and len(await search(db, "kinkajous")) == 1
    assert "no longer a mount point" in scanner.progress.last_error


async def test_a_folder_found_empty_whose_mount_state_is_unknown_keeps_its_index_until_it_holds_one_of_its_files(
    db, tmp_path, options
):
    """A library upgraded to schema 15 does not know whether a folder last seen with
    files by an older kenning was a drive's mount point (migrations.py m015): found
    empty, its index is kept and the error says so. A file put in it does not settle it
    (one saved on a drive's bare mount point would then have dropped the drive's index);
    one of its files found as it was indexed does: from then on it is a folder like any other."""
    folder = tmp_path / "notes"
    folder.mkdir()
    for index in range(2):
        write(folder, f"n{index}.md", f"note {index} about margays\n", mtime=1000 + index)
    scanner = await scanner_for(db, folder, options)
    await scanner.sweep()
    async with db.transaction() as conn:
        await conn.execute("UPDATE sources SET root_mount = NULL")  # what m015 makes of m014's default
    for path in folder.iterdir():
        path.unlink()
    counts = await scanner.sweep()
    assert counts["deleted"] == 0 and len(await search(db, "margays")) == 2
    assert scanner.progress.last_error == (
        f"{folder} is empty, and whether it is a drive's or a share's mount point is not known (it has not been"
        " seen holding its files since kenning was upgraded); its 2 indexed files are kept until the drive is"
        " mounted there again; if they were deleted on purpose, `ken sources remove notes` and add the folder again"
    )
    [row] = await sources.list_sources(db)
    assert row.last_sweep_kept == "unknown"  # what `status` shows, not the error's words

    write(folder, "here.md", "a note about ocelots\n")
    counts = await scanner.sweep()
    assert counts["deleted"] == 0 and counts["indexed"] == 0 and len(await search(db, "margays")) == 2
    assert (await sources.list_sources(db))[0].last_sweep_kept == "unknown"

    write(folder, "n0.md", "note 0 about margays\n", mtime=1000)  # restored as it was
    counts = await scanner.sweep()
    assert counts["deleted"] == 1 and counts["indexed"] == 1 and scanner.progress.last_error is None
    assert (await sources.list_sources(db))[0].last_sweep_kept is None
    assert len(await search(db, "margays")) == 1 and len(await search(db, "ocelots")) == 1
    for path in folder.iterdir():
        path.unlink()
    assert (await scanner.sweep())["deleted"] == 2 and scanner.progress.last_error is None


async def test_a_source_whose_folder_links_to_a_drive_keeps_its_index_when_the_drive_is_unmounted(
    db, tmp_path, options, mount
):
    """A source added as a link to the drive's mount point (~/drive -> /mnt/usb): the
    walk follows the link, but the mount point was looked for on the link itself, which
    is never one, so unmounting the drive dropped its whole index all the same."""
    drive = tmp_path / "drive"
    drive.mkdir()
    mount("-t", "tmpfs", "kenning-test", drive)
    linked = tmp_path / "linked"
    linked.symlink_to(drive)
    for index in range(2):
        write(drive, f"n{index}.md", f"note {index} about caracals\n")
    scanner = await scanner_for(db, linked, options)
    assert (await scanner.sweep())["indexed"] == 2
    subprocess.run(["umount", str(drive)], check=True)
    counts = await scanner.sweep()
    assert counts["deleted"] == 0 and len(await search(db, "caracals")) == 2
    assert "no longer a mount point" in scanner.progress.last_error


async def test_a_source_moved_from_a_drive_to_an_empty_folder_is_not_taken_for_an_unmounted_drive(
    db, tmp_path, options, mount
):
    """The mount was remembered by the source's name, not its folder: a source that had
    been on a drive and was pointed at a new, empty folder kept the drive's files, cited
    in a folder that never held them, and ken status called it "not mounted"."""
    drive = tmp_path / "drive"
    drive.mkdir()
    mount("-t", "tmpfs", "kenning-test", drive)
    write(drive, "n.md", "a note about servals\n")
    scanner = await scanner_for(db, drive, options)
    assert (await scanner.sweep())["indexed"] == 1
    subprocess.run(["umount", str(drive)], check=True)
    moved = tmp_path / "elsewhere"
    moved.mkdir()
    scanner = await scanner_for(db, moved, options)
    counts = await scanner.sweep()
    assert counts["deleted"] == 1 and scanner.progress.last_error is None
    assert await search(db, "servals") == []


async def test_a_folder_on_a_drive_mounted_above_it_keeps_its_index_while_the_drive_is_away(
    db, tmp_path, options, mount
):
    """A source that is a folder on a drive (/media/usb/notes, the drive mounted at
    /media/usb) was recorded as "not a mount point": with the drive away its folder was
    missing and `status` said it could not be read, and once a folder of that name was
    there again (made by hand, or by a program saving into it), the sweep read it as
    every file of the drive's deleted. The mount the folder lives on is what is recorded."""
    usb = tmp_path / "usb"
    usb.mkdir()
    folder = usb / "notes"

    def plug_in() -> None:
        mount("-t", "tmpfs", "kenning-test", usb)
        folder.mkdir()

    plug_in()
    for index in range(2):
        write(folder, f"n{index}.md", f"note {index} about pangolins\n")
    scanner = await scanner_for(db, folder, options)
    assert (await scanner.sweep())["indexed"] == 2
    subprocess.run(["umount", str(usb)], check=True)

    # Away, and the folder with it: kept, and said to be a drive not mounted.
    scanner = await scanner_for(db, folder, options)
    assert (await scanner.sweep())["deleted"] == 0 and len(await search(db, "pangolins")) == 2
    assert scanner.progress.kept_unmounted == "unmounted"
    assert scanner.progress.last_error.startswith(
        f"{usb}, the mount point {folder} is on, is no longer a mount point (a drive or share not mounted?); the 2"
        " indexed files not found in"
    )
    # A folder of that name made on the bare mount point, a note saved in it.
    folder.mkdir()
    write(folder, "stray.md", "a note left there about civets\n")
    for _ in range(2):
        assert (await scanner.sweep())["deleted"] == 0
        assert len(await search(db, "pangolins")) == 2 and len(await search(db, "civets")) == 1
        assert scanner.progress.kept_unmounted == "unmounted"

    # Back, without one of its notes: that one goes, and so does the note the drive hides.
    shutil.rmtree(folder)
    plug_in()
    write(folder, "n0.md", "note 0 about pangolins\n")
    counts = await scanner.sweep()
    assert counts["deleted"] == 2 and scanner.progress.last_error is None
    assert len(await search(db, "pangolins")) == 1 and await search(db, "civets") == []
    subprocess.run(["umount", str(usb)], check=True)
    assert (await scanner.sweep())["deleted"] == 0 and scanner.progress.kept_unmounted == "unmounted"



async def test_a_folder_on_a_drive_listed_above_it_in_the_mount_table_is_kept_while_the_drive_is_away(
    db, tmp_path, options, monkeypatch
):
    """The test above where mounting is not allowed: the mount table (mountinfo) lists
    the drive above the source's folder, as the kernel lists a bind mount; the drive
    goes with its line, its files moved off and a bare mount point left in its place."""
    table = tmp_path / "mountinfo"
    monkeypatch.setattr(mounts_module, "read_table", lambda: read_table(str(table)))
    usb, shelf, bare = tmp_path / "usb", tmp_path / "shelf", tmp_path / "bare"
    folder = usb / "notes"
    folder.mkdir(parents=True)
    mounted = f"40 1 0:40 / {usb} rw,relatime - tmpfs kenning-test rw\n"
    table.write_text(mounted)
    for index in range(2):
        write(folder, f"n{index}.md", f"note {index} about quolls\n")
    scanner = await scanner_for(db, folder, options)
    assert (await scanner.sweep())["indexed"] == 2

    table.write_text("")
    usb.rename(shelf)
    usb.mkdir()
    assert (await scanner.sweep())["deleted"] == 0 and scanner.progress.kept_unmounted == "unmounted"
    folder.mkdir()
    write(folder, "stray.md", "a note left there about bilbies\n")
    assert (await scanner.sweep())["deleted"] == 0 and scanner.progress.kept_unmounted == "unmounted"
    assert len(await search(db, "quolls")) == 2 and len(await search(db, "bilbies")) == 1

    usb.rename(bare)
    shelf.rename(usb)
    (folder / "n1.md").unlink()
    table.write_text(mounted)
    assert (await scanner.sweep())["deleted"] == 2 and scanner.progress.last_error is None
    assert len(await search(db, "quolls")) == 1 and await search(db, "bilbies") == []


async def test_a_library_upgraded_while_its_drive_is_away_keeps_the_index_though_a_file_lands_on_the_mount_point(
    db, tmp_path, options, mount
):
    """Whether a root was a mount point is not known after the upgrade to schema 15
    (migrations.py m015). Found empty, the index was kept; found holding anything and
    not a mount point, that was taken as the truth: a stray file on a drive's bare mount
    point (a note saved there, a file manager's) made the first sweep delete every file
    of the drive's, and a folder emptied by hand was told to take any file to drop its
    old ones. Now the state is learnt from a sweep that finds one of the indexed files
    as it was indexed, or the root a mount point."""
    drive = tmp_path / "drive"
    drive.mkdir()
    mount("-t", "tmpfs", "kenning-test", drive)
    for index in range(2):
        write(drive, f"n{index}.md", f"note {index} about aardwolves\n")
    scanner = await scanner_for(db, drive, options)
    assert (await scanner.sweep())["indexed"] == 2
    subprocess.run(["umount", str(drive)], check=True)
    async with db.transaction() as conn:
        await conn.execute("UPDATE sources SET root_mount = NULL")  # what an upgrade leaves
    write(drive, "stray.md", "a note saved here by mistake about zorillas\n")
    for _ in range(2):
        scanner = await scanner_for(db, drive, options)
        assert (await scanner.sweep())["deleted"] == 0 and len(await search(db, "aardwolves")) == 2
        assert scanner.progress.kept_unmounted == "unknown"
        assert scanner.progress.last_error == (
            f"{drive} is not a mount point, and it holds none of its 2 indexed files unchanged and not half of them"
            " by name; whether it was a drive's or a share's mount point is not known (it has not been seen holding them since kenning was"
            " upgraded), so they are kept and nothing in it is read until the drive is mounted there again; if"
            " they were deleted on purpose, `ken sources remove notes` and add the folder again"
        )
    # Nothing of the bare mount point was read: a file indexed from it would have looked
    # like the drive's own at the next sweep.
    assert await search(db, "zorillas") == []

    (drive / "stray.md").unlink()
    mount("-t", "tmpfs", "kenning-test", drive)
    write(drive, "n0.md", "note 0 about aardwolves\n")
    assert (await scanner.sweep())["deleted"] == 1 and scanner.progress.last_error is None
    subprocess.run(["umount", str(drive)], check=True)
    assert (await scanner.sweep())["deleted"] == 0 and scanner.progress.kept_unmounted == "unmounted"


async def test_a_plain_folder_whose_mount_state_is_unknown_is_learnt_from_a_file_found_as_indexed(
    db, tmp_path, options
):
    """The other side of the rule above: a folder that never was a mount point, holding
    files as they were indexed, is known for what it is at its first sweep, and its
    deletions are made then."""
    folder = tmp_path / "notes"
    folder.mkdir()
    for index in range(3):
        write(folder, f"n{index}.md", f"note {index} about tayras\n", mtime=1000 + index)
    scanner = await scanner_for(db, folder, options)
    assert (await scanner.sweep())["indexed"] == 3
    async with db.transaction() as conn:
        await conn.execute("UPDATE sources SET root_mount = NULL")
    (folder / "n2.md").unlink()
    write(folder, "n1.md", "note 1 about tayras, rewritten\n")
    counts = await scanner.sweep()
    assert counts["deleted"] == 1 and counts["indexed"] == 1 and scanner.progress.last_error is None
    assert len(await search(db, "tayras")) == 2


async def test_a_plain_folder_whose_every_file_changed_across_the_upgrade_is_read(db, tmp_path, options):
    """Schema 18 made every plain folder's mount state unknown again (m018). Its notes
    all edited while the daemon was stopped for the upgrade, none was found as indexed:
    the folder was held for good, its old text served, its edits and new files never
    read, with a message asking for a drive to be mounted that never was. The indexed
    files found by name, half of them at least, say it is the folder that was indexed; a
    stray file on a drive's bare mount point is not that."""
    folder = tmp_path / "notes"
    folder.mkdir()
    for index in range(3):
        write(folder, f"n{index}.md", f"note {index} about walruses\n", mtime=1000 + index)
    scanner = await scanner_for(db, folder, options)
    assert (await scanner.sweep())["indexed"] == 3
    async with db.transaction() as conn:
        await conn.execute("UPDATE sources SET root_mount = NULL")  # what m018 makes of a 0
    for index in range(3):
        write(folder, f"n{index}.md", f"note {index} about narwhals, edited\n", mtime=5000 + index)
    write(folder, "new.md", "a new note about belugas\n")
    counts = await scanner.sweep()
    assert scanner.progress.last_error is None and scanner.progress.kept_unmounted is None
    assert counts["indexed"] == 4 and await search(db, "walruses") == []
    assert len(await search(db, "narwhals")) == 3 and len(await search(db, "belugas")) == 1


async def test_a_file_left_scanning_by_a_crash_is_ingested_again(db, tmp_path, options):
    folder = tmp_path / "notes"
    folder.mkdir()
    write(folder, "a.md", "# A\n\nmanatee one\n", mtime=1000)
    scanner = await scanner_for(db, folder, options)
    await scanner.sweep()
    write(folder, "a.md", "# A\n\nmanatee two\n", mtime=1000)  # same mtime and size: only the state row tells
    await documents.mark_scanning(db, scanner.source_id, "a.md")
    counts = await scanner.sweep()
    assert counts["indexed"] == 1
    [hit] = await search(db, "manatee")
    assert "two" in hit.snippet
    tally = (await tally_store.tallies(db)).by_source[scanner.source_id]
    assert (tally.done, tally.scanning) == (1, 0)


async def test_a_failed_file_is_retried_only_when_it_changes(db, tmp_path, options):
    folder = tmp_path / "notes"
    folder.mkdir()
    bad = folder / "broken.pdf"
    bad.write_bytes(b"not a pdf")
    os.utime(bad, (1000, 1000))
    scanner = await scanner_for(db, folder, options)
    assert (await scanner.sweep())["failed"] == 1
    assert (await scanner.sweep())["unchanged"] == 1
    [failure] = (await tally_store.tallies(db)).failures.get(scanner.source_id, [])
    assert failure.path == "broken.pdf" and failure.reason
    bad.unlink()
    write(folder, "broken.pdf.md", "now fixed gecko text\n")
    counts = await scanner.sweep()
    assert counts["deleted"] == 1 and counts["indexed"] == 1
    assert (await tally_store.tallies(db)).failures.get(scanner.source_id, []) == []


async def test_credentials_are_redacted_before_they_are_stored(db, tmp_path, options):
    folder = tmp_path / "notes"
    folder.mkdir()
    write(folder, "ops.md", "# Deploy\n\naws key AKIAABCDEFGHIJKLMNOP for the quail bucket\npassword = hunter2hunter2\n")
    scanner = await scanner_for(db, folder, options)
    await scanner.sweep()
    [hit] = await search(db, "quail")
    async with db.reader() as conn:
        stored = (await (await conn.execute("SELECT content FROM items")).fetchone())[0]
    assert "AKIAABCDEFGHIJKLMNOP" not in stored and "hunter2" not in stored
    assert stored.count("[REDACTED]") == 2
    assert (hit.line_start, hit.line_end) == (1, 4)


async def test_a_title_taken_from_the_file_name_is_redacted_and_the_path_kept(db, tmp_path, options):
    folder = tmp_path / "notes"
    folder.mkdir()
    name = "stripe-sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc" + ".txt"
    write(folder, name, "Rotate the grebe cluster keys.\n")
    scanner = await scanner_for(db, folder, options)
    await scanner.sweep()
    [hit] = await search(db, "grebe")
    assert hit.title == "stripe-[REDACTED]"
    # The path is the document's identity and what a citation opens: kept as it is.
    assert hit.path == str(folder / name)


async def test_max_files_indexes_only_the_newest_files(db, tmp_path, options):
    folder = tmp_path / "notes"
    folder.mkdir()
    for index in range(5):
        write(folder, f"n{index}.md", f"note {index} about okapis\n", mtime=1000 + index)
    scanner = await scanner_for(db, folder, options, max_files=2)
    counts = await scanner.sweep()
    assert counts["indexed"] == 2 and scanner.progress.discovered == 5 and scanner.progress.capped == 3
    assert {h.path.rsplit("/", 1)[1] for h in await search(db, "okapis")} == {"n3.md", "n4.md"}


async def test_a_file_name_that_is_not_utf8_costs_only_that_file(db, tmp_path, options):
    folder = tmp_path / "notes"
    folder.mkdir()
    for index in range(20):
        write(folder, f"n{index}.md", f"note {index} about axolotls\n")
    with open(os.path.join(os.fsencode(folder), b"odd\xff\xfe.md"), "w") as handle:
        handle.write("an odd name\n")
    scanner = await scanner_for(db, folder, options)
    counts = await scanner.sweep()
    assert counts["indexed"] == 20 and scanner.progress.last_error is None
    assert len(await search(db, "axolotls", limit=30)) == 20


async def test_a_file_swapped_for_a_fifo_after_the_walk_fails_without_hanging(db, tmp_path, options):
    folder = tmp_path / "notes"
    folder.mkdir()
    path = write(folder, "log.md", "soon a pipe\n")
    [found] = walk(folder, WalkRules())
    path.unlink()
    os.mkfifo(path)
    ids = await sources.sync_sources(db, [("notes", str(folder), "default")])
    reading, retry = options.convert_limits.reading_for("markdown"), options.retry_for("markdown")
    job = FileJob(ids["notes"], folder, found, None, True, reading, retry)
    outcome = await asyncio.wait_for(ingest(db, job, options), 20)
    assert outcome.result == "failed" and "not a regular file" in outcome.reason


async def test_a_huge_sparse_file_is_refused_without_being_read(db, tmp_path, options):
    folder = tmp_path / "notes"
    folder.mkdir()
    write(folder, "small.md", "a small note on herons\n")
    with open(folder / "huge.log", "wb") as handle:
        handle.truncate(1 << 40)  # 1 TiB of holes: reading it first would outlast the test
    scanner = await scanner_for(db, folder, options)
    counts = await scanner.sweep()
    assert (counts["indexed"], counts["failed"]) == (1, 1)
    [failure] = (await tally_store.tallies(db)).failures.get(scanner.source_id, [])
    assert failure.path == "huge.log" and "over the 1048576-byte limit" in failure.reason


async def test_binary_and_capped_files_fail_with_their_reason_and_the_rest_is_indexed(db, tmp_path, parsers):
    folder = tmp_path / "notes"
    folder.mkdir()
    write(folder, "good.md", "# Good\n\nnotes on ibises\n")
    (folder / "noise.md").write_bytes(random.Random(3).randbytes(5000))
    write(folder, "long.txt", "\n\n".join(f"paragraph {i} " + "w" * 1100 for i in range(30)))
    (folder / "notes.md.gz").write_bytes(gzip.compress(b"# Packed\n\nnotes on egrets\n"))
    limits = LimitsSettings(max_chunks_per_file=20)
    capped = IngestOptions(chunking=ChunkingSettings(), limits=limits, max_file_bytes=1 << 20, parsers=parsers)
    scanner = await scanner_for(db, folder, capped)
    counts = await scanner.sweep()
    assert (counts["indexed"], counts["failed"]) == (2, 2)
    reasons = {failure.path: failure.reason for failure in (await tally_store.tallies(db)).failures.get(scanner.source_id, [])}
    assert "binary content" in reasons["noise.md"]
    assert "over the 20-chunk limit" in reasons["long.txt"]
    [hit] = await search(db, "egrets")
    assert hit.path.endswith("notes.md.gz") and hit.title == "Packed"


async def test_status_counts_what_the_walk_passed_over_by_reason(db, tmp_path, options):
    folder = tmp_path / "notes"
    folder.mkdir()
    write(folder, "kept.md", "a heron note\n")
    write(folder, "photo.jpg", "not text at all\n")
    write(folder, ".hidden.md", "hidden note\n")
    write(folder, "package-lock.json", "{}\n")
    scanner = await scanner_for(db, folder, options)
    await scanner.sweep()
    assert scanner.progress.passed_over == {"unsupported type": 1, "hidden": 1, "junk, backup or lock file": 1}


async def test_a_proc_mounted_in_a_folder_is_not_entered_and_status_counts_it(db, tmp_path, options, mount):
    folder = tmp_path / "chroot"
    (folder / "proc").mkdir(parents=True)
    write(folder, "kept.md", "a heron note\n")
    mount("-t", "proc", "proc", folder / "proc")
    scanner = await scanner_for(db, folder, options)
    counts = await scanner.sweep()
    assert counts["indexed"] == 1 and counts["failed"] == 0
    assert scanner.progress.passed_over == {SYSTEM_FS: 1}


def test_a_file_whose_folder_closed_since_the_walk_is_refused_for_want_of_permission(tmp_path):
    """A sweep that listed a folder before `chmod 644` took its search bit off hashed its
    files after: the lookup of each was refused, read as a file that could not be
    opened, and the text indexed from it was dropped. Refused for want of permission,
    it is kept as last indexed (pipeline.py), as a file closed by its own mode is."""
    notes = tmp_path / "notes"
    notes.mkdir()
    write(notes, "home.md", "# Home\n\nThe quokka pen needs a new gate.\n")
    script = (
        "import sys\nfrom pathlib import Path\nfrom kenning.errors import AccessDenied\n"
        "from kenning.ingest.convert import guarded_hash\n"
        "try:\n    guarded_hash(Path(sys.argv[1]), Path(sys.argv[2]), True, 1 << 20)\n"
        "except AccessDenied as exc:\n    print('denied:', exc)\n"
    )
    command = [sys.executable, "-c", script, str(notes / "home.md"), str(notes)]
    assert subprocess.run(as_a_user(command), capture_output=True, text=True, check=True).stdout == ""
    notes.chmod(0o644)
    try:
        done = subprocess.run(as_a_user(command), capture_output=True, text=True, check=True)
    finally:
        notes.chmod(0o755)
    assert done.stdout == "denied: permission denied\n"


def test_a_file_turned_into_a_link_loop_since_the_walk_fails_as_unreadable(tmp_path):
    """Python 3.11's Path.resolve raises RuntimeError on a loop, and the file was failed
    as "internal error: RuntimeError"; it is a file that cannot be opened."""
    notes = tmp_path / "notes"
    notes.mkdir()
    os.symlink(notes / "b.md", notes / "a.md")
    os.symlink(notes / "a.md", notes / "b.md")
    with pytest.raises(ReaderError, match="cannot open: Too many levels of symbolic links"):
        convert.guarded_hash(notes / "a.md", notes, True, 1 << 20)


def test_the_preview_reads_a_link_as_its_target_as_a_sweep_does(tmp_path):
    """`ken sources add` estimated `summary.md -> report.docx` by reading the DOCX's bytes
    as markdown (its link's name): binary, so no chunks, where the sweep reads a report."""
    reports, folder = tmp_path / "reports", tmp_path / "notes"
    reports.mkdir()
    folder.mkdir()
    document = docx.Document()
    for number in range(40):
        document.add_heading(f"Section {number}", level=2)
        document.add_paragraph("The heron survey counted nests along the estuary. " * 12)
    document.save(reports / "report.docx")
    (folder / "summary.md").symlink_to(reports / "report.docx")
    source = SourceSettings(name="notes", path=folder, confine_to_root=False)
    result = preview(source, Settings(daemon=DaemonSettings(data_dir=tmp_path / "data")))
    assert result.files == 1 and result.estimated_chunks >= 40


def test_the_preview_gives_up_on_a_file_whose_parse_never_ends(tmp_path):
    """A PDF of a few hundred bytes whose page tree refers to itself keeps pdfminer going
    round for ever: the sample read it in `ken sources add` itself, which never ended."""
    folder = tmp_path / "notes"
    folder.mkdir()
    pdf_reference_loop(folder / "circle.pdf")
    write(folder, "herons.md", "# Herons\n\n" + "The heron survey counted nests. " * 100)
    source = SourceSettings(name="notes", path=folder)
    settings = Settings(daemon=DaemonSettings(data_dir=tmp_path / "data"))
    previewed: Future = Future()
    threading.Thread(target=lambda: previewed.set_result(preview(source, settings)), daemon=True).start()
    result = previewed.result(timeout=60)
    assert result.files == 2 and result.estimated_chunks >= 2


async def test_a_pdf_whose_page_tree_refers_to_itself_fails_at_once_as_damaged(db, tmp_path, options):
    """Through the real parse workers: such a file held one for the whole parse_timeout
    (120 s) and then failed as taking too long, which read as a large file, not a bad
    one. The rest of the folder is indexed."""
    folder = tmp_path / "notes"
    folder.mkdir()
    pdf_reference_loop(folder / "circle.pdf")
    write(folder, "herons.md", "# Herons\n\nThe heron survey counted nests.\n")
    scanner = await scanner_for(db, folder, options)
    assert (await scanner.sweep())["failed"] == 1
    [failure] = (await tally_store.tallies(db)).failures[scanner.source_id]
    assert (failure.path, failure.reason) == (
        "circle.pdf",
        "damaged PDF: its object 3 is a reference that leads round in a circle back to itself",
    )
    [hit] = await search(db, "heron survey")
    assert hit.path.endswith("herons.md")


def test_the_preview_names_a_proc_mounted_in_the_folder(tmp_path, mount):
    folder = tmp_path / "chroot"
    (folder / "proc").mkdir(parents=True)
    write(folder, "kept.md", "a heron note\n")
    mount("-t", "proc", "proc", folder / "proc")
    source = SourceSettings(name="chroot", path=folder)
    settings = Settings(daemon=DaemonSettings(data_dir=tmp_path / "data"))
    result = preview(source, settings)
    assert result.files == 1 and result.system_dirs == {"proc": "proc"}
    assert "  of them, system filesystems holding no documents: proc/ (proc)" in describe(result, source, settings)


async def test_a_file_that_hits_an_internal_error_is_failed_with_its_reason_and_keeps_what_was_indexed(
    db, tmp_path, options, monkeypatch
):
    """No real input is known to raise anything but a ReaderError from the readers (they
    turn every error of a parser into one), and the readers run in spawned worker
    processes a monkeypatch cannot reach, so the parse pool's calls into them are
    patched, for two files only, to raise what a bug in a reader or the chunker would: a
    plain exception, as it comes back from a worker."""
    folder = tmp_path / "notes"
    folder.mkdir()
    write(folder, "kept.md", "# Kept\n\nnotes on wombats\n", mtime=1000)
    write(folder, "fine.md", "# Fine\n\nnotes on numbats\n", mtime=1000)
    scanner = await scanner_for(db, folder, options)
    assert (await scanner.sweep())["indexed"] == 2

    tried: list[str] = []
    convert, read = options.parsers.convert, options.parsers.read

    async def buggy_convert(path, *args):
        if path.name == "kept.md":
            tried.append(path.name)
            raise KeyError("a reader bug")
        return await convert(path, *args)

    async def buggy_read(function, args, timeout):
        if args[0].name == "new.md":
            tried.append("new.md")
            raise KeyError("a reader bug")
        return await read(function, args, timeout)

    monkeypatch.setattr(options.parsers, "convert", buggy_convert)
    monkeypatch.setattr(options.parsers, "read", buggy_read)
    write(folder, "kept.md", "# Kept\n\nnotes on wombats, now with quolls\n", mtime=2000)
    write(folder, "new.md", "# New\n\nnotes on bilbies\n", mtime=2000)
    counts = await scanner.sweep()
    assert (counts["failed"], counts["unchanged"]) == (2, 1)
    reasons = {failure.path: failure.reason for failure in (await tally_store.tallies(db)).failures.get(scanner.source_id, [])}
    assert reasons == {
        "kept.md": "internal error: KeyError: 'a reader bug'",
        "new.md": "internal error: KeyError: 'a reader bug'",
    }
    tally = (await tally_store.tallies(db)).by_source[scanner.source_id]
    assert (tally.done, tally.failed, tally.scanning) == (1, 2, 0)
    # Nothing indexed is lost to a bug: the text read before the edit is still found,
    # and stays the one copy of it that another folder holding it shares.
    [hit] = await search(db, "wombats")
    assert hit.path.endswith("kept.md")
    other = tmp_path / "other"
    other.mkdir()
    write(other, "copy.md", "# Kept\n\nnotes on wombats\n")
    ids = await sources.sync_sources(db, [("notes", str(folder), "default"), ("other", str(other), "default")])
    assert (await FolderScanner(db, ids["other"], SourceSettings(name="other", path=other), options).sweep())["merged"] == 1
    assert [hit.document_id for hit in await search(db, "wombats")] == [hit.document_id]

    # Not read again by every sweep while nothing changes...
    assert (await scanner.sweep())["unchanged"] == 3
    assert sorted(tried) == ["kept.md", "new.md"]

    # ...but once the file changes, or kenning reads files otherwise (an upgrade).
    monkeypatch.undo()
    write(folder, "kept.md", "# Kept\n\nnotes on wombats and quolls\n", mtime=3000)
    assert (await scanner.sweep())["indexed"] == 1
    assert [hit.path.rsplit("/", 1)[1] for hit in await search(db, "quolls")] == ["kept.md"]
    upgraded = IngestOptions(
        chunking=ChunkingSettings(target_chars=900), limits=LimitsSettings(), max_file_bytes=1 << 20,
        parsers=options.parsers,
    )  # fmt: skip
    scanner.options = upgraded
    assert (await scanner.sweep())["failed"] == 0
    assert (await tally_store.tallies(db)).failures.get(scanner.source_id, []) == []
    [hit] = await search(db, "bilbies")
    assert hit.path.endswith("new.md")


async def test_an_internal_error_is_stored_as_one_short_line(db, tmp_path, options, monkeypatch):
    """A bug's message may quote what it choked on (a whole chunk of text, a path), over
    many lines: the reason is stored, logged and shown by every `ken status`, and was
    kept whole, where a parser's is cut to one line of 300 characters. The parse pool
    is patched as in the test above."""
    folder = tmp_path / "notes"
    folder.mkdir()
    write(folder, "new.md", "# New\n\nnotes on bilbies\n")
    read = options.parsers.read

    async def buggy_read(function, args, timeout):
        if args[0].name == "new.md":
            raise ValueError("could not place the chunk\n" + "bilbies burrow " * 10_000)
        return await read(function, args, timeout)

    monkeypatch.setattr(options.parsers, "read", buggy_read)
    scanner = await scanner_for(db, folder, options)
    assert (await scanner.sweep())["failed"] == 1
    [failure] = (await tally_store.tallies(db)).failures[scanner.source_id]
    assert failure.reason.startswith("internal error: ValueError: could not place the chunk bilbies burrow bilbies")
    assert failure.reason.endswith("… [cut from 150,025 characters]") and "\n" not in failure.reason
    assert len(failure.reason) < 400


async def test_a_file_failed_by_an_internal_error_still_opens_at_its_last_indexed_text(tmp_path, monkeypatch):
    """Through the Library, as `ken status` and `ken get` see it. The parse pool is
    patched to raise what a bug in a reader would, as in the test above."""
    folder = tmp_path / "notes"
    folder.mkdir()
    note = write(folder, "kept.md", "# Kept\n\nnotes on wombats\n", mtime=1000)
    source = SourceSettings(name="notes", path=folder)
    library = Library(Settings(daemon=DaemonSettings(data_dir=tmp_path / "data"), sources=(source,)), tmp_path / "c.toml")
    await library.open()
    try:
        assert (await library.scan("notes", wait=True)).result["indexed"] == 1

        async def buggy_convert(self, path, *args):
            raise KeyError("a reader bug")

        monkeypatch.setattr(ParsePool, "convert", buggy_convert)
        write(folder, "kept.md", "# Kept\n\nnotes on wombats, now with quolls\n", mtime=2000)
        assert (await library.scan("notes", wait=True)).result["failed"] == 1
        [status] = (await library.status()).sources
        assert (status.failed, status.in_progress) == (1, 0)
        assert [(f.path, f.reason) for f in status.failures] == [("kept.md", "internal error: KeyError: 'a reader bug'")]
        [hit] = (await library.search("wombats")).hits
        assert "\n".join((await library.read_document(document_id=hit.document_id)).lines).endswith("notes on wombats")
        assert (await library.read_document(path=str(note))).document_id == hit.document_id
        assert (await library.get(path=str(note))).document.document_id == hit.document_id
    finally:
        await library.close()
