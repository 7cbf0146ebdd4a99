"""Faults from issue 12 that need a whole daemon: config reloads while a first sweep
ingests files, and bursts of SIGHUP."""

from __future__ import annotations

import signal
import time

from tests.daemon_harness import wait_for

# Enough that every reload lands mid-sweep (the test checks the sweep outlasted them):
# eight rounds of reloads took 2 s, in which the sweep settled about 40 notes.
FILES = 300


def _folder(root, count: int = FILES):
    notes = root / "notes"
    notes.mkdir()
    for n in range(count):
        (notes / f"note{n:05}.md").write_text(f"# Note {n}\n\nmarker{n} wombat paragraph {n} of the pile.\n")
    return notes


def _configure(library, notes, target: int) -> None:
    library.configure(
        [{"name": "notes", "path": str(notes)}],
        extra=f"[chunking]\ntarget_chars = {target}\noverlap_chars = 50\n",
    )


def test_reloads_during_first_sweep_keep_writes_working(library):
    notes = _folder(library.root)
    _configure(library, notes, 1200)
    daemon = library.daemon()
    for round_number in range(8):
        _configure(library, notes, 600 + 100 * round_number)
        # A SIGHUP and a reload over the socket at once: two reloads racing each other.
        # Asked straight on the socket, not through `ken reload` (tested in
        # test_daemon_e2e): a CLI process took 0.5 s to start, so its request came long
        # after the signal's reload and the two seldom overlapped.
        daemon.proc.send_signal(signal.SIGHUP)
        assert daemon.call("reload")["sources"] == ["notes"]
        time.sleep(0.2)
        assert daemon.proc.poll() is None, daemon.log()
    assert daemon.source_status("notes")["scanning"], "the first sweep ended before the reloads did"
    status = daemon.wait_idle("notes", timeout=180)
    assert status["done"] == FILES and status["failed"] == 0
    assert "within a transaction" not in daemon.log()
    added = daemon.call(
        "documents.add", {"title": "after reloads", "text": "quokka ledger entry", "source_uri": "test://after"}
    )
    assert added["stored"] == "indexed"
    assert daemon.search("quokka")
    assert daemon.search(f"marker{FILES - 1}")
    assert daemon.stop() == 0


def test_sighup_storm_during_ingest(library):
    notes = _folder(library.root, 400)
    _configure(library, notes, 1200)
    daemon = library.daemon()
    for n in range(100):
        if n % 10 == 0:
            _configure(library, notes, 700 + 50 * (n // 10))
        daemon.proc.send_signal(signal.SIGHUP)
        time.sleep(0.03)
    assert daemon.proc.poll() is None, daemon.log()
    status = daemon.wait_idle("notes", timeout=180)
    assert status["done"] == 400 and status["failed"] == 0
    wait_for(lambda: daemon.search("marker399"), timeout=30, what="the last note to be searchable")
    added = daemon.call("documents.add", {"title": "storm", "text": "numbat after the storm", "source_uri": "test://storm"})
    assert added["stored"] == "indexed"
    assert daemon.stop() == 0
