"""The embedding job's progress is true while work keeps arriving: the total grows with the
items added mid-pass, the done count never overtakes it, and the ETA is not zero while
items are left (issue 13: `embedding 10240/10240 … about 0s left` for nine minutes)."""

from __future__ import annotations

import asyncio
import time
from types import SimpleNamespace

import click

from kenning import api
from kenning.cli.follow import work_rows
from kenning.cli.status_view import source_lines, status_lines
from kenning.config import EmbedderSettings
from kenning.service.jobs import job_status
from kenning.store import sources, vectors
from kenning.store.database import Database
from kenning.workers.embed import PAGE_SIZE, EmbedJob
from kenning.workers.ollama_embed import OllamaEmbedder
from tests.fake_ollama import fake_ollama
from tests.helpers import store_document


async def test_embedding_progress_stays_true_when_items_arrive_mid_pass(db: Database):
    source_id = (await sources.sync_sources(db, [("notes", "/n", "default")]))["notes"]
    first = [f"first batch chunk {n} about otters" for n in range(PAGE_SIZE + 100)]
    second = [f"second batch chunk {n} about beavers" for n in range(PAGE_SIZE + 100)]
    await store_document(db, source_id, "a.md", *first)
    with fake_ollama() as server:
        server.delay = 0.01  # per request of batch_size texts: a page takes about a second
        embedder = OllamaEmbedder(
            EmbedderSettings(backend="ollama", model="fake-embed", base_url=server.url, batch_size=16)
        )
        job = EmbedJob(db, embedder, 2000)
        # As the Library wires it: every commit that adds items wakes the job with their number.
        db.subscribe(lambda changes: job.wake(len(changes.added)) if changes.added else None)
        job.start()
        samples = []
        added = False
        expected = len(first) + len(second)
        deadline = time.monotonic() + 60
        try:
            while True:
                report = job_status(job, running="embedding")
                samples.append(report)
                if not added and report.done >= PAGE_SIZE // 2:
                    await store_document(db, source_id, "b.md", *second)
                    added = True
                if added and report.state == "idle" and await vectors.count_stale(db, embedder.signature) == 0:
                    break
                assert time.monotonic() < deadline, samples[-1]
                await asyncio.sleep(0.05)
        finally:
            await job.stop()
            embedder.close()
    running = [s for s in samples if s.state in ("embedding", "deferred")]
    assert all(s.done <= s.total for s in running)
    # Once the second batch was in, the pass knew about all of it before it got there.
    assert any(s.total == expected and s.done < len(first) for s in running)
    assert all(s.eta_seconds is None or s.eta_seconds > 0 for s in running if s.done < s.total)
    assert job.progress.done == job.progress.total == expected


def test_a_sweep_in_flight_reports_its_file_rate_and_time_left(library, tmp_path):
    notes = tmp_path / "notes"
    notes.mkdir()
    for index in range(400):
        (notes / f"n{index}.md").write_text(f"# Note {index}\n\nThe gecko {index} climbs walls.\n" * 20)
    library.configure([{"name": "notes", "path": notes}])
    daemon = library.daemon()
    seen = []
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        source = daemon.source_status("notes")
        if source["scanning"] and source["pending"] and source["rate_per_second"]:
            seen.append(source)
        if source["last_sweep_at"] and not source["scanning"]:
            break
        time.sleep(0.05)
    assert seen, "never saw the sweep mid-way"
    assert all(s["eta_seconds"] >= 1 and s["rate_per_second"] > 0 for s in seen)
    assert daemon.source_status("notes")["rate_per_second"] is None  # not reading any more


def test_the_progress_board_says_extraction_is_up_to_date_only_when_no_chunk_waits():
    def status(pending: int) -> SimpleNamespace:
        embedder = SimpleNamespace(vectors=10, job=api.JobStatus(state="idle"))
        graph = api.GraphStatus("offline", "offline:v2", None, 351, 20, 0, pending, api.JobStatus(state="idle"))
        return SimpleNamespace(sources=[], embedder=embedder, graph=graph)

    [_, extraction] = work_rows(status(1754), None)
    assert extraction.detail == "351 entities, 1754 chunks waiting" and extraction.total is None
    [_, extraction] = work_rows(status(0), None)
    assert extraction.detail == "351 entities, up to date"


def test_status_says_a_folder_it_cannot_read_is_not_being_watched():
    def source(last_error: str | None) -> api.SourceStatus:
        return api.SourceStatus(
            "notes", "folder", "/mnt/usb/notes", "default", True, 0, 0, 0, 0, 0, 0, 0, 1.0, last_error, 0,
            total=0, percent=100.0,
        )  # fmt: skip

    [first, *rest] = source_lines(source("cannot read /mnt/usb/notes: No such file or directory"))
    assert first.endswith("(cannot read the folder)")
    assert any("No such file or directory" in line for line in rest)
    assert source_lines(source(None))[0].endswith("(watching)")
    # The state is the sweep's `kept_unmounted`, not words matched in its error, which
    # may be reworded: an error in other words still shows it.
    unmounted = source("/mnt/usb/notes is away; its 3 indexed files are kept")
    unmounted.kept_unmounted = "unmounted"
    assert source_lines(unmounted)[0].endswith("(not mounted: kept as last indexed)")
    unknown = source("/mnt/usb/notes is empty; its 3 indexed files are kept")
    unknown.kept_unmounted = "unknown"
    assert source_lines(unknown)[0].endswith("(maybe not mounted: kept as last indexed)")


def test_a_sweep_stopped_midway_shows_counts_that_add_up_to_the_folder():
    """A full disk stopped the sweep after 15 of 200 files; its retry looks at 8 of those
    15 again (saved too close to their read for their times to tell), and status read
    "15 indexed · 193 pending" of a folder of 200 for as long as the disk stayed full."""
    source = api.SourceStatus(
        "notes", "folder", "/home/u/notes", "default", True, 15, 0, 15, 0, 0, 2, 120, None,
        "cannot write the index: disk I/O error", 15, pending=193, total=200, percent=7.5,
    )  # fmt: skip
    [counts] = [line for line in source_lines(source) if " pending" in line]
    assert "15 indexed · 0 failed · 0 skipped · 193 pending (8 of them read before, to look at again)" in counts
    source.pending = 185
    assert [line for line in source_lines(source) if line.strip().endswith("185 pending")]


def test_status_names_the_job_each_error_is_from_and_shows_no_negative_time():
    """On a full disk the embedder's and the graph's errors were two bare "disk I/O
    error" lines; and a clock set back showed the daemon "up -3590s"."""
    failed = api.JobStatus(state="waiting", last_error="disk I/O error")
    status = SimpleNamespace(
        daemon=SimpleNamespace(
            version="1", pid=7, uptime_seconds=-3590.0, data_dir="/d", db_bytes=0, wal_bytes=0, free_bytes=0
        ),
        embedder=SimpleNamespace(
            vectors=3, backend="wordllama", model="m", job=failed, dimension=0, model_dimension=0, mismatched=0,
            left_out=0,
        ),
        graph=api.GraphStatus("offline", "offline:v2", None, 1, 0, 0, 0, failed),
        library=SimpleNamespace(documents=3),
        agent=None,
        sources=[],
    )  # fmt: skip
    lines = status_lines(status)
    assert " up 0s " in lines[0]
    errors = [click.unstyle(line) for line in lines if "disk I/O error" in line]
    assert errors == ["  embedder: disk I/O error", "  graph: disk I/O error"]
