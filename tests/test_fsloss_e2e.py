"""What search cites after the file system moves under a running daemon: links, saves,
renames and kills. Each test ends by asking what a user would: does search find what the
files hold now, at the right path, and nothing that is gone?"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.daemon_harness import wait_for


def ken(config: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "kenning", "--config", str(config), *args], capture_output=True, text=True, timeout=60
    )


def paths(hits: list[dict]) -> list[str]:
    """Every path the hits cite, a copy of the same text kept once included."""
    return sorted(place["path"] for hit in hits for place in [hit, *hit.get("also_at", [])])


def test_a_linked_file_whose_target_folder_cannot_be_searched_keeps_its_text(library, tmp_path):
    """`chmod a-x` on the folder a file link points into: the link can no longer be
    followed, as a file in that folder can no longer be stat'ed. The file reached directly
    kept its text, but the link was passed over as "unreadable or vanished" and deleted."""
    notes, shelf = tmp_path / "notes", tmp_path / "shelf"
    notes.mkdir()
    shelf.mkdir()
    (shelf / "iceland.md").write_text("# Iceland\n\nPuffins nest on the cliffs at Latrabjarg.\n")
    (notes / "iceland.md").symlink_to(shelf / "iceland.md")
    (notes / "home.md").write_text("# Home\n\nThe quokka pen needs a new gate.\n")
    library.configure([{"name": "notes", "path": notes, "confine_to_root": False}])
    daemon = library.daemon(plain_permissions=True)
    assert daemon.wait_idle("notes")["done"] == 2
    assert paths(daemon.search("puffins")) == [str(notes / "iceland.md")]

    (shelf / "faroe.md").write_text("# Faroe\n\nGannets dive off Mykines.\n")
    shelf.chmod(0o644)
    try:
        # A link made now was never read: nothing is kept of it, and it is passed over.
        (notes / "faroe.md").symlink_to(shelf / "faroe.md")
        assert daemon.call("sources.scan", {"name": "notes", "wait": True})["result"]["deleted"] == 0
        assert paths(daemon.search("puffins")) == [str(notes / "iceland.md")]
        status = daemon.source_status("notes")
        assert status["unreadable_files"] == {"iceland.md": "its target cannot be reached: Permission denied"}
        assert status["passed_over"] == {"unreadable or vanished": 1} and status["percent"] == 100.0
        doctor = ken(library.config, "doctor").stdout
        assert f"cannot read {notes / 'iceland.md'}: its target cannot be reached" in doctor
        assert f"chmod u+x {shelf};" in doctor
    finally:
        shelf.chmod(0o755)
    assert daemon.call("sources.scan", {"name": "notes", "wait": True})["result"]["deleted"] == 0
    assert daemon.source_status("notes")["unreadable_files"] == {}
    assert paths(daemon.search("gannets")) == [str(notes / "faroe.md")]
    # A link whose target is really gone is still a deletion.
    (shelf / "iceland.md").unlink()
    assert daemon.call("sources.scan", {"name": "notes", "wait": True})["result"]["deleted"] == 1
    assert daemon.search("puffins") == []
    daemon.stop()


def test_a_file_replaced_by_one_of_the_same_size_and_mtime_is_read_again(library, tmp_path):
    """Two versions unpacked from one archive (`git archive`, a zip) share their mtime;
    `mv v2.md v1.md`, or a hard link swapped over it, leaves v1.md with v2's text and the
    stamp and size the index holds for v1.md. The sweep judged it unchanged, and search
    cited v1.md for the text that is gone from it, and for v2's text nothing at all."""
    notes = tmp_path / "notes"
    notes.mkdir()
    for name, boat in (("v1.md", "ferry"), ("v2.md", "barge"), ("v3.md", "skiff")):
        (notes / name).write_text(f"# Plan\n\nThe {boat} leaves at nine.\n")
        os.utime(notes / name, (1_700_000_000, 1_700_000_000))
    library.configure([{"name": "notes", "path": notes}])
    daemon = library.daemon()
    assert daemon.wait_idle("notes")["done"] == 3

    os.rename(notes / "v2.md", notes / "v1.md")
    assert daemon.call("sources.scan", {"name": "notes", "wait": True})["result"]["deleted"] == 1
    assert paths(daemon.search("barge")) == [str(notes / "v1.md")]
    assert daemon.search("ferry") == []
    # A hard link made and renamed over it: `ln -f v3.md v1.md`.
    os.link(notes / "v3.md", notes / "v1.md.new")
    os.rename(notes / "v1.md.new", notes / "v1.md")
    daemon.call("sources.scan", {"name": "notes", "wait": True})
    assert paths(daemon.search("skiff")) == [str(notes / "v1.md"), str(notes / "v3.md")]
    assert daemon.search("barge") == []
    daemon.stop()


def test_a_root_link_loop_pointed_at_a_folder_is_read_at_once(library, tmp_path):
    """A source root that is a link looping back on itself cannot be read ("Too many
    levels of symbolic links"). Pointed at a folder, it was looked at again only every
    `watch_retry`, and `ken status` showed the error until then; the folder above it is
    watched for the link's change, and the folder is swept at once. The log's "cannot
    watch" line called it "not a folder", naming no link that loops."""
    shelf, root = tmp_path / "shelf", tmp_path / "notes"
    shelf.mkdir()
    (shelf / "kea.md").write_text("# Kea\n\nThe kea opened the tramper's pack.\n")
    root.symlink_to(root)
    library.configure([{"name": "notes", "path": root}], "watch_retry = 600")
    daemon = library.daemon()

    def error() -> str | None:
        return daemon.source_status("notes")["last_error"]

    wait_for(lambda: "Too many levels of symbolic links" in (error() or ""), 30, "the sweep to say the root loops")
    # The watch's line names the link that loops, and its round, not "not a folder".
    loop = f"cannot watch {root}: its path goes round a symbolic link loop: {root} -> {root};"
    wait_for(lambda: loop in daemon.log(), 10, "the watch to say where the path loops")

    link = tmp_path / "notes.new"
    link.symlink_to(shelf)
    link.replace(root)

    wait_for(lambda: error() is None, 20, "the folder the link now names to be read")
    assert daemon.wait_idle("notes")["done"] == 1
    assert paths(daemon.search("kea tramper")) == [str(root / "kea.md")]
