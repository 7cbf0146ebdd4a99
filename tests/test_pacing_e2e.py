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
