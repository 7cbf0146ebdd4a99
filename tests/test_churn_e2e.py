"""A watched folder that churns, and file times that are odd: mtimes past the calendar. After things settle the index must hold what is on disk now."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest


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
    outside = _calendar_defying_folder()
    if outside is None:
        pytest.skip("no file system here keeps an mtime past year 9999")
    try:
        (outside / "far.md").write_text("# Far\n\nThe quokka is from the far future.\n")
        (outside / "early.md").write_text("# Early\n\nThe quokka is from before year one.\n")
        os.utime(outside / "far.md", (1e12, 1e12))  # year 33658
        os.utime(outside / "early.md", (-62_200_000_000, -62_200_000_000))  # year -1
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
        dates = {Path(hit["path"]).name: hit["date"] for hit in hits}
        assert dates["far.md"] == "9999-12-31" and dates["early.md"] == "0001-01-01"
        assert daemon.call("sources.scan", {"name": "notes", "wait": True})["result"]["failed"] == 0
    finally:
        for child in outside.iterdir():
            child.unlink()
        outside.rmdir()
