"""Paced ingestion through a real daemon: a chunk budget per sweep, resumed after a pause."""

from __future__ import annotations

from tests.daemon_harness import wait_for


def test_a_budgeted_source_ingests_in_paced_sweeps_and_status_shows_the_progress(library, tmp_path):
    notes = tmp_path / "notes"
    notes.mkdir()
    for n in range(10):
        (notes / f"n{n}.md").write_text(f"Note {n} about the ibex{n}.\n")
    library.configure(
        [{"name": "notes", "path": notes}],
        extra="folder_chunk_budget = 3\nbudget_pause = 0.5\n",
    )
    daemon = library.daemon()

    seen: list[tuple[int, int]] = []

    def progressed() -> dict | None:
        status = daemon.source_status("notes")
        seen.append((status["processed"], status["deferred"]))
        return status if status["processed"] == 10 and not status["scanning"] else None

    status = wait_for(progressed, timeout=30, what="every file, sweep by sweep", interval=0.05)
    assert status["total"] == 10 and status["percent"] == 100.0
    assert status["chunks_per_sweep"] == 3 and status["next_sweep_at"] is not None
    # It got there in steps of the budget, each sweep leaving the rest for the next.
    assert {(3, 7), (6, 4)} <= set(seen)
    for n in range(10):
        assert len(daemon.search(f"ibex{n}")) == 1


def test_a_file_named_unreadable_stays_named_while_the_budget_leaves_it_for_a_later_sweep(library, tmp_path):
    """The list of files a sweep could not open was started afresh by each sweep, so one
    that the budget left for later, or that the sweep had not reached yet, dropped out
    of `ken status` though its old text was still what searches found."""
    notes = tmp_path / "notes"
    notes.mkdir()
    shut = notes / "shut.md"
    shut.write_text("# Shut\n\nThe kestrel hovers over the verge.\n")
    library.configure([{"name": "notes", "path": notes}], extra="folder_chunk_budget = 1\nbudget_pause = 600\n")
    # File modes hold for this daemon as for any user's, root or not.
    daemon = library.daemon(plain_permissions=True)
    assert daemon.wait_idle("notes")["done"] == 1

    # An edit that lands closed to this user: the file looks changed, and cannot be read.
    edited = tmp_path / "shut.md.new"
    edited.write_text("# Shut\n\nThe kestrel hovers over the verge, and the buzzard circles.\n")
    edited.chmod(0)
    edited.rename(shut)
    try:
        daemon.call("sources.scan", {"name": "notes", "wait": True})
        assert daemon.source_status("notes")["unreadable_files"] == {"shut.md": "permission denied"}
        # A newer file takes the sweep's one chunk (whichever sweep, the watch's or a
        # scan); the shut file waits for the next sweep, budget_pause away.
        (notes / "new.md").write_text("# New\n\nA wren sings from the hedge.\n")
        wait_for(lambda: daemon.search("wren"), timeout=30, what="the new file to be indexed")
        # The sweep publishes what it left for later when it ends, a moment after the
        # new file's chunk is searchable.
        def swept() -> dict | None:
            status = daemon.source_status("notes")
            return status if status["deferred"] == 1 and not status["scanning"] else None

        status = wait_for(swept, timeout=30, what="the sweep to leave the shut file for later")
        assert status["unreadable_files"] == {"shut.md": "permission denied"}
        assert [hit["title"] for hit in daemon.search("kestrel")] == ["Shut"]
    finally:
        shut.chmod(0o644)
