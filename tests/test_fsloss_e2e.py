"""What search cites after the file system moves under a running daemon: links, saves,
renames and kills. Each test ends by asking what a user would: does search find what the
files hold now, at the right path, and nothing that is gone?"""

from __future__ import annotations

from tests.daemon_harness import wait_for


def paths(hits: list[dict]) -> list[str]:
    return sorted(hit["path"] for hit in hits)


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

    shelf.chmod(0o644)
    try:
        assert daemon.call("sources.scan", {"name": "notes", "wait": True})["result"]["deleted"] == 0
        assert paths(daemon.search("puffins")) == [str(notes / "iceland.md")]
        status = daemon.source_status("notes")
        assert status["unreadable_files"] == {"iceland.md": "its target cannot be reached: Permission denied"}
        assert status["passed_over"] == {} and status["percent"] == 100.0
    finally:
        shelf.chmod(0o755)
    assert daemon.call("sources.scan", {"name": "notes", "wait": True})["result"]["deleted"] == 0
    assert daemon.source_status("notes")["unreadable_files"] == {}
    # A link whose target is really gone is still a deletion.
    (shelf / "iceland.md").unlink()
    assert daemon.call("sources.scan", {"name": "notes", "wait": True})["result"]["deleted"] == 1
    assert daemon.search("puffins") == []
    daemon.stop()
