"""A watched folder that churns, and file times that are odd: links re-pointed, mtimes
past the calendar. After things settle the index must hold what is on disk now."""

from __future__ import annotations

import os
import re
import tempfile
import time
from pathlib import Path

from kenning.text.dates import from_timestamp
from tests.daemon_harness import wait_for


def _scan(daemon, name: str = "notes") -> dict:
    return daemon.call("sources.scan", {"name": name, "wait": True})["result"]


def test_a_file_link_re_pointed_at_a_file_of_the_same_size_and_mtime_is_read_again(library, tmp_path):
    notes = tmp_path / "notes"
    notes.mkdir()
    # Two versions unpacked from one archive: same size, same mtime (to the second).
    (notes / "v1.md").write_text("# Plan\n\nThe ferry leaves at nine.\n")
    (notes / "v2.md").write_text("# Plan\n\nThe barge leaves at nine.\n")
    for version in ("v1.md", "v2.md"):
        os.utime(notes / version, (1_700_000_000, 1_700_000_000))
    (notes / "current.md").symlink_to("v1.md")
    (notes / ".drafts").mkdir()
    (notes / ".drafts" / "plan.md").write_text("# Draft\n\nThe canoe leaves at noon.\n")
    (notes / "draft.md").symlink_to(".drafts/plan.md")
    library.configure([{"name": "notes", "path": str(notes)}])
    daemon = library.daemon()
    daemon.wait_idle("notes")

    # `ln -sfn v2.md current.md`: a new link renamed over the old one.
    (notes / ".current.tmp").symlink_to("v2.md")
    os.rename(notes / ".current.tmp", notes / "current.md")
    _scan(daemon)

    def cited(word: str) -> set[str]:
        return {
            Path(place["path"]).name for hit in daemon.search(word) for place in [hit, *hit.get("also_at", [])]
        }

    assert cited("barge") == {"v2.md", "current.md"}
    assert cited("ferry") == {"v1.md"}

    # A link's target saved in a folder the walk does not enter (a dot folder): no watch
    # heard of it, and the link cited its old text until the periodic sweep.
    assert cited("canoe") == {"draft.md"}
    (notes / ".drafts" / "plan.md").write_text("# Draft\n\nThe dinghy leaves at noon.\n")
    wait_for(lambda: cited("dinghy") == {"draft.md"}, 15, "the link to cite its target's new text")
    assert cited("canoe") == set()

    # A second save of the same size within the file system's time resolution (FAT keeps
    # two seconds) leaves the same stamp; a file dated ahead of the clock (copied from a
    # machine whose clock runs fast) keeps one however it is saved.
    ahead = time.time() + 86_400
    for text in ("# Log\n\nThe kayak leaves at ten.\n", "# Log\n\nThe skiff leaves at ten.\n"):
        (notes / "log.md").write_text(text)
        os.utime(notes / "log.md", (ahead, ahead))
        _scan(daemon)
    assert cited("skiff") == {"log.md"}
    assert cited("kayak") == set()


def test_a_linked_root_re_pointed_at_a_release_of_the_same_sizes_and_mtimes_is_read_again(library, tmp_path):
    # Two releases unpacked from archives (same sizes, same mtimes), the source the
    # link `current` that a deploy re-points: the second release's files were older
    # than the rows written for the first, and its text was never read; a search cited
    # current/notes.md for words no longer in it.
    releases = tmp_path / "releases"
    for release, word in (("r1", "ferry"), ("r2", "barge")):
        (releases / release / "docs").mkdir(parents=True)
        (releases / release / "docs" / "notes.md").write_text(f"# Plan\n\nThe {word} leaves at nine.\n")
        os.utime(releases / release / "docs" / "notes.md", (1_700_000_000, 1_700_000_000))
    current = tmp_path / "current"
    current.symlink_to(releases / "r1")
    library.configure([{"name": "site", "path": str(current)}])
    daemon = library.daemon()
    daemon.wait_idle("site")
    assert daemon.search("ferry") and not daemon.search("barge")

    # `ln -sfn releases/r2 current`, a new link renamed over the old one, while the
    # daemon is stopped: nothing it kept in memory can tell the folder changed.
    daemon.stop()
    (tmp_path / ".current.tmp").symlink_to(releases / "r2")
    os.rename(tmp_path / ".current.tmp", current)
    daemon = library.daemon()
    _scan(daemon, "site")
    assert [hit["path"] for hit in daemon.search("barge")] == [str(current / "docs" / "notes.md")]
    assert not daemon.search("ferry")
    # Looked at once: the next sweep has nothing to hash.
    assert _scan(daemon, "site")["unchanged"] == 1


def _indexed_beside_its_twin(library, tmp_path):
    """`notes` as the source, and `notes.new` beside it: the same path, size and mtime
    holding other text ("ferry" there, "barge" here); `spare/docs` holds a third ("skiff")."""
    for folder, word in (("notes", "ferry"), ("notes.new", "barge"), ("spare", "skiff")):
        (tmp_path / folder / "docs").mkdir(parents=True)
        (tmp_path / folder / "docs" / "plan.md").write_text(f"# Plan\n\nThe {word} leaves at nine.\n")
        os.utime(tmp_path / folder / "docs" / "plan.md", (1_700_000_000, 1_700_000_000))
    notes = tmp_path / "notes"
    library.configure([{"name": "notes", "path": str(notes)}])
    return notes


def test_a_folder_swapped_for_one_made_earlier_with_the_same_sizes_and_mtimes_is_read_again(library, tmp_path):
    # `mv notes notes.old && mv notes.new notes`, notes.new restored earlier from a
    # backup that keeps mtimes: the files at the same paths looked unchanged, and the
    # old folder's text stayed cited under them.
    notes = _indexed_beside_its_twin(library, tmp_path)
    daemon = library.daemon()
    daemon.wait_idle("notes")
    assert daemon.search("ferry") and not daemon.search("barge")

    os.rename(notes, tmp_path / "notes.old")
    os.rename(tmp_path / "notes.new", notes)
    _scan(daemon)
    assert [hit["path"] for hit in daemon.search("barge")] == [str(notes / "docs" / "plan.md")]
    assert not daemon.search("ferry")
    assert _scan(daemon)["unchanged"] == 1

    # The same swap one folder down (`mv docs docs.old && mv ../spare/docs docs`): the
    # root is the same folder, and a file moved with its folder keeps its inode's change
    # time, so only the folder's own tells. `ken get` gave the barge's text for a file
    # about a skiff, at every sweep.
    os.rename(notes / "docs", tmp_path / "docs.old")
    os.rename(tmp_path / "spare" / "docs", notes / "docs")
    _scan(daemon)
    assert [hit["path"] for hit in daemon.search("skiff")] == [str(notes / "docs" / "plan.md")]
    assert not daemon.search("barge")
    assert _scan(daemon)["unchanged"] == 1


def test_a_folder_swapped_while_the_daemon_is_stopped_is_read_again(library, tmp_path):
    # The same swap as above, done while the daemon is stopped (a restore run before the
    # login that starts it): what the running daemon kept in memory was gone, and the
    # old folder's text stayed cited under the new folder's paths.
    notes = _indexed_beside_its_twin(library, tmp_path)
    daemon = library.daemon()
    daemon.wait_idle("notes")
    assert daemon.search("ferry") and not daemon.search("barge")

    daemon.stop()
    os.rename(notes, tmp_path / "notes.old")
    os.rename(tmp_path / "notes.new", notes)
    daemon = library.daemon()
    _scan(daemon)
    assert [hit["path"] for hit in daemon.search("barge")] == [str(notes / "docs" / "plan.md")]
    assert not daemon.search("ferry")
    # Looked at once: a restart has nothing to hash.
    daemon.stop()
    daemon = library.daemon()
    assert _scan(daemon)["unchanged"] == 1


def test_a_log_appended_to_many_times_in_quick_succession_is_read_a_few_times_and_indexed_whole(library, tmp_path):
    """Each append used to cost a sweep that read, hashed and chunked the whole log."""
    notes = tmp_path / "notes"
    notes.mkdir()
    log = notes / "service.log"
    log.write_text("service started on port 8080\n")
    library.configure([{"name": "notes", "path": str(notes)}])
    daemon = library.daemon()
    daemon.wait_idle("notes")
    before = len(daemon.log())

    appends = 20
    for number in range(appends):
        with open(log, "a") as handle:
            handle.write(f"request served, marker seq{number}\n")
        time.sleep(0.25)
    wait_for(lambda: daemon.search(f"seq{appends - 1}"), timeout=60, what="the last line to be searchable")

    assert daemon.search("seq0") and daemon.search("8080")
    # Each sweep that read the log again says so: "swept 1 files (1 indexed, ...)".
    reads = sum(int(n) for n in re.findall(r"swept \d+ files \((\d+) indexed", daemon.log()[before:]))
    assert 1 <= reads < appends / 2


def test_files_made_without_a_pause_in_a_large_folder_do_not_keep_it_swept_back_to_back(library, tmp_path):
    """Each file made asked for a sweep at once, and each sweep lists the whole folder: a
    program writing files without a pause (a download, a build) kept a folder of 10,000
    files swept back to back, most of a CPU for as long as it ran."""
    notes = tmp_path / "notes"
    notes.mkdir()
    for number in range(4000):
        (notes / f"empty{number}.md").touch()  # listed by every sweep; capped, never read
    library.configure([{"name": "notes", "path": str(notes), "max_files": 1}])
    daemon = library.daemon()
    daemon.wait_idle("notes")
    before = len(daemon.log())

    started = time.monotonic()
    made = 50
    for number in range(made):
        (notes / f"new{number}.md").write_text(f"The pangolin{number} was counted.\n")
        time.sleep(0.05)
    elapsed = time.monotonic() - started
    # Nothing made is lost: the last one is found (the cap keeps the newest file).
    wait_for(lambda: daemon.search(f"pangolin{made - 1}"), timeout=30, what="the last file to be searchable")
    listed = [float(n) for n in re.findall(r"swept \d+ files .*, ([\d.]+)s of it listing", daemon.log()[before:])]
    assert listed
    # Back to back, sweeps spent most of the time listing (1.7 s of 2.6 here); paced, a
    # fifth of it at most, and the two sweeps that may come after the last file was made
    # (the last paced one, then the one that reads it) add a listing each.
    assert sum(listed) < 0.3 * elapsed + 2 * max(listed), listed


def _calendar_defying_folder() -> Path | None:
    """A folder whose file system keeps an mtime past year 9999 (ext4 clamps to 2446;
    tmpfs, btrfs and XFS with bigtime do not)."""
    for base in ("/dev/shm", tempfile.gettempdir()):
        try:
            folder = Path(tempfile.mkdtemp(dir=base, prefix="kenning-mtime-"))
        except OSError:
            continue
        probe = folder / "probe"
        probe.write_text("")
        os.utime(probe, (1e12, 1e12))
        if os.stat(probe).st_mtime == 1e12:
            probe.unlink()
            return folder
        probe.unlink()
        folder.rmdir()
    return None


def test_files_with_mtimes_outside_the_calendar_are_indexed_and_settle(library, tmp_path):
    # Where no file system keeps such a time (ext4 clamps it), the files carry the most
    # extreme times it keeps, and the test checks they are dated by them all the same.
    outside = _calendar_defying_folder()
    made = outside is not None
    if outside is None:
        outside = tmp_path / "outside"
        outside.mkdir()
    try:
        (outside / "far.md").write_text("# Far\n\nThe quokka is from the far future.\n")
        (outside / "early.md").write_text("# Early\n\nThe quokka is from before year one.\n")
        for name, seconds in (("far.md", 1e12), ("early.md", -62_200_000_000)):  # year 33658, year -1
            try:
                os.utime(outside / name, (seconds, seconds))
            except OSError:  # a file system that refuses the time outright keeps today's
                pass
        notes = tmp_path / "notes"
        notes.mkdir()
        # A source under /dev is refused, so the files are reached through links.
        (notes / "far.md").symlink_to(outside / "far.md")
        (notes / "early.md").symlink_to(outside / "early.md")
        (notes / "plain.md").write_text("# Plain\n\nThe quokka is from today.\n")
        library.configure([{"name": "notes", "path": str(notes), "confine_to_root": False}])
        daemon = library.daemon()
        # Settles: every file is done, none left `scanning` to be retried by every sweep.
        status = daemon.wait_idle("notes", timeout=30)
        assert (status["done"], status["in_progress"], status["failed"]) == (3, 0, 0)
        hits = daemon.search("quokka")
        assert {Path(hit["path"]).name for hit in hits} == {"far.md", "early.md", "plain.md"}
        dated = {Path(hit["path"]).name: hit["date"] for hit in hits}
        kept = {name: from_timestamp(os.stat(outside / name).st_mtime) for name in ("far.md", "early.md")}
        assert (dated["far.md"], dated["early.md"]) == (kept["far.md"], kept["early.md"])
        if made:
            assert kept == {"far.md": "9999-12-31", "early.md": "0001-01-01"}
        assert _scan(daemon)["failed"] == 0
    finally:
        if made:
            for child in outside.iterdir():
                child.unlink()
            outside.rmdir()
