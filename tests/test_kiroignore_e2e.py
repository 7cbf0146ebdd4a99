"""A folder's .kiroignore is the user's word on what must stay out of the index: a file
that cannot be used as written never lets in what it kept out, against a real daemon."""

from __future__ import annotations

import os
import subprocess
import sys

from tests.daemon_harness import wait_for
from kenning.ingest.kiroignore import MAX_FILE_BYTES


def _private_folder(tmp_path):
    notes = tmp_path / "notes"
    (notes / "private").mkdir(parents=True)
    (notes / "plans.md").write_text("# Plans\n\nThe okapi survey starts in May.\n")
    (notes / "private" / "diary.md").write_text("# Diary\n\nMy salamander secret, kept out of search.\n")
    (notes / ".kiroignore").write_text("# kept out of kenning\nprivate/\n")
    return notes


def test_a_kiroignore_with_a_byte_that_is_not_utf8_keeps_out_what_it_names(library, tmp_path):
    notes = _private_folder(tmp_path)
    library.configure([{"name": "notes", "path": notes}])
    daemon = library.daemon()
    daemon.wait_idle("notes")
    assert daemon.search("okapi") and not daemon.search("salamander")

    # A comment typed in an editor saving Latin-1 ("café"): every rule in the file was
    # dropped for it, and the diary it kept out was indexed.
    (notes / ".kiroignore").write_bytes(b"# notes from the caf\xe9\nprivate/\n")
    daemon.call("sources.scan", {"name": "notes", "wait": True})
    assert not daemon.search("salamander")
    assert daemon.source_status("notes")["last_error"] is None


def test_a_kiroignore_that_cannot_be_used_indexes_and_drops_nothing_and_says_why(library, tmp_path):
    notes = _private_folder(tmp_path)
    library.configure([{"name": "notes", "path": notes}])
    daemon = library.daemon()
    daemon.wait_idle("notes")
    assert daemon.search("okapi") and not daemon.search("salamander")

    # Rules pasted in past the size kenning reads: what the file excludes is unknown, so
    # the sweep takes nothing in (the diary stays out) and drops nothing it holds.
    # Saved whole (written beside, then renamed over, as editors save): a sweep the watch
    # starts while the file is half written would find the rules usable, rightly.
    pasted = tmp_path / "kiroignore.pasted"
    pasted.write_text("private/\n" + "# " + "x" * MAX_FILE_BYTES + "\n")
    os.replace(pasted, notes / ".kiroignore")
    (notes / "plans.md").unlink()
    (notes / "late.md").write_text("# Late\n\nA pangolin note.\n")
    daemon.call("sources.scan", {"name": "notes", "wait": True})
    assert not daemon.search("salamander")
    assert daemon.search("okapi") and not daemon.search("pangolin")
    error = daemon.source_status("notes")["last_error"]
    assert error and ".kiroignore" in error and "larger than" in error

    # A sweep the watch started for the files changed above may still be running, and
    # shows as "scanning" until it ends held like the one asked for.
    def held() -> str | None:
        shown = subprocess.run(
            [sys.executable, "-m", "kenning", "--config", str(library.config), "status"],
            capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        return shown.stdout if "(held: its .kiroignore cannot be used)" in shown.stdout else None

    wait_for(held, timeout=30, what="`ken status` to show the source held", interval=0.5)

    # Fixed: the sweep goes on as before, and the error is gone.
    (notes / ".kiroignore").write_text("private/\n")
    daemon.call("sources.scan", {"name": "notes", "wait": True})
    wait_for(lambda: daemon.search("pangolin"), timeout=30, what="the new note to be indexed")
    assert not daemon.search("salamander") and not daemon.search("okapi")
    assert daemon.source_status("notes")["last_error"] is None
