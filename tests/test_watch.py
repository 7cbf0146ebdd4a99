"""The folder watcher on real folders: inotify through watchfiles, no daemon around it."""

from __future__ import annotations

import asyncio
import shutil
import subprocess
import time
from pathlib import Path

from watchfiles import Change

from kenning.ingest import walk as walk_module
from kenning.ingest.walk import WalkRules
from kenning.ingest import watch as watch_module
from kenning.ingest.watch import ChangeFilter, Pacer, watch_folder


class Changes:
    def __init__(self) -> None:
        self.event = asyncio.Event()
        self.count = 0

    def __call__(self) -> None:
        self.count += 1
        self.event.set()

    def reset(self) -> None:
        self.count = 0
        self.event.clear()

    async def next(self, timeout: float = 10) -> None:
        await asyncio.wait_for(self.event.wait(), timeout)
        self.event.clear()


async def watching(root: Path, changes: Changes, stop: asyncio.Event) -> asyncio.Task:
    task = asyncio.create_task(watch_folder(root, WalkRules(), changes, stop, debounce_ms=50, retry_seconds=0.2))
    await asyncio.sleep(0.5)  # let the watch start before the test changes anything
    return task


async def test_a_root_created_after_the_watch_started_is_picked_up(tmp_path: Path) -> None:
    root = tmp_path / "later"
    changes, stop = Changes(), asyncio.Event()
    task = await watching(root, changes, stop)
    assert changes.count == 0
    root.mkdir()
    await changes.next()  # the root appearing asks for a sweep
    await asyncio.sleep(0.5)
    (root / "note.md").write_text("new note\n")
    await changes.next()  # and the root is watched from then on
    stop.set()
    await asyncio.wait_for(task, 5)


async def test_a_root_deleted_and_made_again_is_watched_again(tmp_path: Path) -> None:
    root = tmp_path / "notes"
    root.mkdir()
    (root / "old.md").write_text("old\n")
    changes, stop = Changes(), asyncio.Event()
    task = await watching(root, changes, stop)
    shutil.rmtree(root)
    await changes.next()
    await asyncio.sleep(0.5)
    root.mkdir()  # a new directory: the old watch died with the old one
    await changes.next()
    await asyncio.sleep(0.5)
    (root / "back.md").write_text("restored\n")
    await changes.next()
    stop.set()
    await asyncio.wait_for(task, 5)


async def test_a_root_mounted_over_and_unmounted_again_is_watched_again(tmp_path: Path, mount) -> None:
    """A drive mounted on the folder hides the directory the watch was on: nothing in the
    drive was seen until a periodic sweep, nor ever after."""
    root = tmp_path / "drive"
    root.mkdir()
    changes, stop = Changes(), asyncio.Event()
    task = await watching(root, changes, stop)
    mount("-t", "tmpfs", "kenning-test", root)
    try:
        await changes.next()  # the folder changing under the watch asks for a sweep
        await asyncio.sleep(0.5)
        (root / "on-the-drive.md").write_text("new\n")
        await changes.next()
        subprocess.run(["umount", str(root)], check=True)
        await changes.next()
        await asyncio.sleep(0.5)
        (root / "under-the-drive.md").write_text("new\n")
        await changes.next()
    finally:
        stop.set()
        await asyncio.wait_for(task, 5)


def test_a_file_written_to_again_and_again_asks_for_a_sweep_once_per_interval_and_once_after_it_stops():
    pacer = Pacer(lambda: None, interval=10.0)
    assert pacer.ask({"app.log"}, now=0.0)
    assert not pacer.ask({"app.log"}, now=1.0)  # held back ...
    assert not pacer.ask({"app.log"}, now=9.0)
    assert pacer.ask(set(), now=10.0)  # ... until it has waited the interval
    assert not pacer.ask(set(), now=11.0)  # nothing held any more
    assert not pacer.ask({"app.log"}, now=12.0)
    assert pacer.ask({"note.md"}, now=13.0)  # another file is swept at once, the log with it
    assert not pacer.ask(set(), now=30.0)
    assert pacer.ask({"app.log"}, now=30.0)  # quiet long enough: at once again
    assert not pacer.ask({"app.log"}, now=31.0)
    assert pacer.ask(set(), now=31.0, force=True)  # a file arriving or going is never held


def test_a_file_kenning_writes_is_no_change_even_through_a_linked_root(tmp_path):
    real = tmp_path / "real"
    real.mkdir()
    linked = tmp_path / "linked"
    linked.symlink_to(real)
    log = real / "kenning.log"
    log.write_text("")
    for root in (real, linked):
        changed = ChangeFilter(root, WalkRules(exclude=(log,)))
        assert not changed(Change.modified, str(root / "kenning.log"))
        assert changed(Change.modified, str(root / "notes.log"))


async def test_a_file_name_that_is_not_utf8_leaves_the_folder_watched(tmp_path: Path, caplog) -> None:
    root = tmp_path / "notes"
    root.mkdir()
    changes, stop = Changes(), asyncio.Event()
    # A retry far longer than the test waits: the folder must be watched again at once.
    task = asyncio.create_task(watch_folder(root, WalkRules(), changes, stop, debounce_ms=50, retry_seconds=600))
    await asyncio.sleep(0.5)
    with open(bytes(root) + b"/bad\xffname.md", "wb") as handle:
        handle.write(b"x\n")
    await changes.next()
    await asyncio.sleep(0.5)
    changes.reset()
    (root / "after.md").write_text("written after the odd name\n")
    await changes.next()
    assert changes.count >= 1
    assert "does not exist" not in caplog.text
    stop.set()
    await asyncio.wait_for(task, 5)


def counted_listings(monkeypatch, seconds: float = 0.0) -> list[float]:
    """When the watch listed the folder's directories (each listing taking `seconds`
    more): each is a watch set up again."""
    listed = watch_module.directories
    listings: list[float] = []

    def counted(*args):
        listings.append(time.monotonic())
        time.sleep(seconds)
        return listed(*args)

    monkeypatch.setattr(watch_module, "directories", counted)
    return listings


async def test_a_file_whose_name_is_not_utf8_written_to_again_and_again_does_not_set_the_watch_up_each_time(
    tmp_path: Path, monkeypatch
) -> None:
    root = tmp_path / "notes"
    root.mkdir()
    listings = counted_listings(monkeypatch)
    monkeypatch.setattr(watch_module, "BUSY_SECONDS", 1.0)
    changes, stop = Changes(), asyncio.Event()
    task = await watching(root, changes, stop)
    await asyncio.sleep(1)
    listings.clear()
    # A log with a Latin-1 name appended to ten times a second: each write ended the
    # watch, and each watch set up again listed the folder and asked for a sweep.
    for _ in range(20):
        with open(bytes(root) + b"/caf\xe9.log", "ab") as handle:
            handle.write(b"a line\n")
        await asyncio.sleep(0.1)
    assert len(listings) <= 8, len(listings)
    await asyncio.sleep(1.2)
    changes.reset()
    (root / "after.md").write_text("written once the log went quiet\n")
    await changes.next()
    stop.set()
    await asyncio.wait_for(task, 5)


async def test_files_in_directories_made_after_the_watch_started_are_seen(tmp_path: Path) -> None:
    root = tmp_path / "notes"
    root.mkdir()
    changes, stop = Changes(), asyncio.Event()
    task = await watching(root, changes, stop)
    await asyncio.sleep(1.5)  # past the sweep a new watch asks for
    # Made in one go, deeper than the directory the root's watch reports.
    (root / "2026" / "december").mkdir(parents=True)
    (root / "2026" / "december" / "first.md").write_text("written at once\n")
    await changes.next()
    await asyncio.sleep(1.5)
    changes.reset()
    (root / "2026" / "december" / "later.md").write_text("written once the folder was watched\n")
    await changes.next()
    assert changes.count >= 1
    stop.set()
    await asyncio.wait_for(task, 5)


async def test_a_linked_directory_is_not_watched(tmp_path: Path) -> None:
    root, elsewhere = tmp_path / "notes", tmp_path / "elsewhere"
    root.mkdir()
    elsewhere.mkdir()
    (root / "system").symlink_to(elsewhere)  # the walk never follows it: nor does the watch
    changes, stop = Changes(), asyncio.Event()
    task = await watching(root, changes, stop)
    await asyncio.sleep(1.5)
    changes.reset()
    (elsewhere / "unrelated.md").write_text("not in the library\n")
    await asyncio.sleep(1.5)
    assert changes.count == 0
    (root / "mine.md").write_text("in the library\n")
    await changes.next()
    stop.set()
    await asyncio.wait_for(task, 5)


async def test_a_directory_made_while_the_watch_is_set_up_is_watched(tmp_path: Path, monkeypatch) -> None:
    root = tmp_path / "notes"
    (root / "2026").mkdir(parents=True)
    listed = watch_module.directories

    def listing_then_a_new_directory(*args):
        # A directory made after the walk listed its parent and before the parent's
        # watch was up: no watch reports it (a copy or a sync still writing the tree).
        folders = listed(*args)
        (root / "2026" / "december").mkdir(exist_ok=True)
        return folders

    monkeypatch.setattr(watch_module, "directories", listing_then_a_new_directory)
    changes, stop = Changes(), asyncio.Event()
    task = await watching(root, changes, stop)
    await asyncio.sleep(2.5)  # past the sweep a new watch asks for, and any watch again
    changes.reset()
    (root / "2026" / "december" / "later.md").write_text("written once the folder was watched\n")
    await changes.next()
    stop.set()
    await asyncio.wait_for(task, 5)


async def test_directories_arriving_steadily_do_not_set_the_watch_up_each_time(tmp_path: Path, monkeypatch) -> None:
    root = tmp_path / "notes"
    root.mkdir()
    # Listing a folder of 20,000 directories takes about this long (and setting up their
    # watches holds the interpreter for a third of a second).
    listings = counted_listings(monkeypatch, seconds=0.2)
    changes, stop = Changes(), asyncio.Event()
    task = await watching(root, changes, stop)
    await asyncio.sleep(2)
    listings.clear()
    for day in range(12):  # a directory every quarter second, for three seconds
        (root / f"day{day}").mkdir()
        await asyncio.sleep(0.25)
    # Without a pace each one set the watch up again: twelve listings and more.
    assert len(listings) <= 6, len(listings)
    await asyncio.sleep(4)  # the last ones are watched all the same, a little later
    changes.reset()
    (root / "day11" / "note.md").write_text("written into the newest directory\n")
    await changes.next()
    stop.set()
    await asyncio.wait_for(task, 5)


async def test_a_directory_made_readable_again_is_watched(tmp_path: Path, monkeypatch) -> None:
    root = tmp_path / "notes"
    (root / "locked").mkdir(parents=True)
    listed = watch_module.directories
    unreadable = [True]

    def listing(*args):
        # As the walk lists a folder whose `locked` directory it cannot read (chmod 000;
        # the tests may run as root, whom no mode keeps out).
        return [folder for folder in listed(*args) if not (unreadable[0] and folder.endswith("locked"))]

    monkeypatch.setattr(watch_module, "directories", listing)
    changes, stop = Changes(), asyncio.Event()
    task = await watching(root, changes, stop)
    await asyncio.sleep(1.5)
    unreadable[0] = False
    (root / "locked").chmod(0o755)  # readable again: an attribute change, no new directory
    await asyncio.sleep(2)
    changes.reset()
    (root / "locked" / "note.md").write_text("written once it could be read\n")
    await changes.next()
    stop.set()
    await asyncio.wait_for(task, 5)


async def test_a_directory_closed_between_listing_and_watching_leaves_the_rest_watched(
    tmp_path: Path, monkeypatch
) -> None:
    # Watches are set up strictly, so that an inotify limit is heard of; a directory
    # chmod'ed shut after the walk listed it refuses its watch with a PermissionError
    # (what watchfiles raises for EACCES; root, running the tests, is never refused).
    root = tmp_path / "notes"
    (root / "open").mkdir(parents=True)
    real = watch_module.watch

    def refusing(*paths, ignore_permission_denied, **options):
        if not ignore_permission_denied:
            raise PermissionError(13, "Permission denied", paths[-1])
        return real(*paths, ignore_permission_denied=ignore_permission_denied, **options)

    monkeypatch.setattr(watch_module, "watch", refusing)
    changes, stop = Changes(), asyncio.Event()
    heard: list[str | None] = []
    task = asyncio.create_task(
        watch_folder(root, WalkRules(), changes, stop, debounce_ms=50, retry_seconds=600, on_failure=heard.append)
    )
    await asyncio.sleep(2.5)  # past the sweep a watch set up again asks for
    changes.reset()
    (root / "open" / "note.md").write_text("written into a watched folder\n")
    await changes.next()
    assert heard and all(why is None for why in heard)
    stop.set()
    await asyncio.wait_for(task, 5)


def test_a_new_file_link_sets_the_watch_up_again_only_for_a_target_no_watch_covers(tmp_path: Path) -> None:
    """Each new link to a note beside it rebuilt the watch of every folder when the root
    was given through a link (`current -> releases/42`): the target's real folder was
    looked for among folders watched under the link's name."""
    real = tmp_path / "releases" / "42"
    (real / "notes").mkdir(parents=True)
    (real / ".drafts").mkdir()
    (real / "notes" / "a.md").write_text("alpha\n")
    (real / ".drafts" / "plan.md").write_text("plan\n")
    (tmp_path / "outside.md").write_text("outside\n")
    root = tmp_path / "current"
    root.symlink_to(real)
    targets: set[str] = set()
    watched = set(walk_module.directories(root, WalkRules(), targets))
    changes = ChangeFilter(root, WalkRules(), frozenset(targets))

    def arrives(name: str, target: str) -> bool:
        link = root / "notes" / name
        link.symlink_to(target)
        return watch_module._moves_the_watch(Change.added, str(link), changes, watched)

    assert not arrives("beside.md", "a.md")
    assert arrives("draft.md", "../.drafts/plan.md")
    # Confined to its root (the default), a folder reads no file outside it.
    assert not arrives("out.md", str(tmp_path / "outside.md"))
