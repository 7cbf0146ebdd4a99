"""Following the daemon's work live: `ken status --watch`, `--wait` on `sources add` and
`scan`, and `ken sources remove`.

Everything shown is polled from the daemon's `status` (the files a sweep has processed,
the embedding and extraction jobs' own done/total/rate/ETA), so a bar moves only when the
work does. On a terminal the bars are rich's; elsewhere (a pipe, a log, CI) a plain line
is printed when the figures change, at most every few seconds. rich is imported only
here and only when a command follows something: it costs more to import than most
commands take to run.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import click

from kenning import api
from kenning.cli.app import Context, no_color
from kenning.cli.status_view import ago, job_figures, status_lines
from kenning.errors import DaemonNotRunning, KenningError
from kenning.text.controls import escaped
from kenning.text.counts import counted

POLL_SECONDS = 0.5
PLAIN_EVERY_SECONDS = 5.0


@dataclass(frozen=True)
class Row:
    key: str
    label: str
    completed: int
    total: int | None  # None: not known yet
    detail: str


def source_row(source: api.SourceStatus) -> Row:
    if source.total is None or (source.scanning and not source.discovered):
        return Row(f"source:{source.name}", source.name, 0, None, "walking the folder")
    done = min(source.processed, source.total)
    detail = f"{done}/{source.total} files"
    if source.rate_per_second:
        detail += f" at {source.rate_per_second:.0f}/s"
    if source.eta_seconds is not None and done < source.total:
        detail += f", about {ago(source.eta_seconds)} left"
    if source.failed:
        detail += f" · {source.failed} failed"
    if source.deferred:
        detail += f" · {source.deferred} wait for the next sweep (chunk budget)"
    if source.last_error:
        # It names the source's folder (`cannot read PATH: ...`), whatever that is called.
        detail += f" · {escaped(source.last_error)}"
    return Row(f"source:{source.name}", source.name, done, source.total, detail)


def job_row(key: str, label: str, job: api.JobStatus, finished: str) -> Row:
    if job.state in ("embedding", "extracting", "deferred", "running"):
        detail = job_figures(job) + (" · yielding to ingest" if job.state == "deferred" else "")
        return Row(key, label, job.done, max(job.total, job.done), detail)
    if job.state == "waiting":
        waiting = f"waiting for the backend: {escaped(job.last_error or '')}"
        return Row(key, label, job.done, job.total or None, waiting)
    if job.state in ("queued", "starting", "loading"):
        return Row(key, label, 0, None, job.state)
    return Row(key, label, 1, 1, finished)


def work_rows(status: api.Status, names: set[str] | None) -> list[Row]:
    rows = [
        source_row(source)
        for source in status.sources
        if source.kind == "folder" and source.active and (names is None or source.name in names)
    ]
    embedder = status.embedder
    rows.append(job_row("embedding", "embedding", embedder.job, f"{counted(embedder.vectors or 0, 'vector')}, up to date"))
    graph = status.graph
    if graph.job.state == "idle" and graph.pending:
        # The job has not picked up the chunks a sweep just wrote: no full bar for it.
        waiting = f"{counted(graph.entities, 'entity', 'entities')}, {counted(graph.pending, 'chunk')} waiting"
        rows.append(Row("extraction", "entities", 0, None, waiting))
    else:
        rows.append(job_row("extraction", "entities", graph.job, f"{counted(graph.entities, 'entity', 'entities')}, up to date"))
    return rows


def sweep_settled(source: api.SourceStatus, since: float | None) -> bool:
    """The source's sweep (one that ended after `since`) has finished and every file it
    found is indexed, failed or skipped."""
    if source.scanning or source.last_sweep_at is None or source.total is None:
        return False
    if since is not None and source.last_sweep_at < since:
        return False
    return source.processed >= source.total


def embedding_state(status: api.Status) -> str | None:
    """None while embedding still has work; otherwise how it ended."""
    embedder = status.embedder
    if embedder.job.state == "waiting":
        return (
            f"embedding waits for its backend ({escaped(embedder.job.last_error or '')});"
            " keyword search covers the new text meanwhile"
        )
    if embedder.vectors is not None and embedder.job.state == "idle":
        return "searchable"
    return None


class Board:
    """Bars on a terminal, plain lines elsewhere."""

    def __init__(self, err: bool) -> None:
        self.err = err
        self.terminal = (sys.stderr if err else sys.stdout).isatty()
        self._live: Any = None
        self._progress: Any = None
        self._tasks: dict[str, Any] = {}
        self._latest = ""
        self._printed = ""
        self._printed_at = 0.0

    def __enter__(self) -> "Board":
        if self.terminal:
            from rich.console import Console
            from rich.live import Live
            from rich.progress import BarColumn, Progress, TextColumn

            console = Console(stderr=self.err, no_color=no_color())
            self._progress = Progress(
                TextColumn("{task.description:<16}"),
                BarColumn(bar_width=30),
                # The detail is the daemon's words, which may quote a folder's name: shown
                # as written, never read as rich markup ("[/x]" in a name would raise).
                TextColumn("{task.fields[detail]}", markup=False),
                console=console,
            )
            self._live = Live(self._progress, console=console, refresh_per_second=4, transient=False)
            self._live.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._live is not None:
            self._live.__exit__(*exc)
        elif self._latest != self._printed:
            # The state things ended in, if the last change came between two prints.
            click.echo(self._latest, err=self.err)

    def show(self, rows: list[Row], lines: list[str] | None = None) -> None:
        if self._live is None:
            self._plain(rows, lines)
            return
        for row in rows:
            task = self._tasks.get(row.key)
            if task is None:
                task = self._tasks[row.key] = self._progress.add_task(row.label, total=row.total, detail="")
            self._progress.update(task, completed=row.completed, total=row.total, detail=row.detail)
        if lines is not None:
            from rich.console import Group
            from rich.text import Text

            body = "\n".join(click.unstyle(line) if no_color() else line for line in lines)
            self._live.update(Group(Text.from_ansi(body), Text(""), self._progress))

    def _plain(self, rows: list[Row], lines: list[str] | None) -> None:
        summary = " · ".join(f"{row.label}: {row.detail}" for row in rows)
        self._latest = summary
        now = time.monotonic()
        if summary == self._printed or now - self._printed_at < PLAIN_EVERY_SECONDS:
            return
        if lines is not None:
            click.echo("\n".join(click.unstyle(line) for line in lines) + "\n")
        else:
            click.echo(summary, err=self.err)
        self._printed, self._printed_at = summary, now


def watch(ctx: Context) -> None:
    """`ken status --watch`: the status, refreshed, with bars for the work in flight; until Ctrl-C."""
    board = Board(err=False)
    try:
        with board:
            while True:
                status = ctx.fetch("status", api.Status)
                board.show(work_rows(status, None), status_lines(status))
                time.sleep(POLL_SECONDS * 2)
    except KeyboardInterrupt:
        pass


def wait_until_searchable(
    ctx: Context, names: set[str], since: float | None, sweep: tuple[threading.Thread, dict] | None = None
) -> str:
    """Poll until the named sources' sweeps are done and embedding has caught up; returns
    how it ended (searchable, or why embedding cannot finish now). `sweep` is a sweep
    requested in the background (`in_background`), whose end is waited for too."""
    started = time.monotonic()
    with Board(err=True) as board:
        while True:
            if sweep is not None and "error" in sweep[1]:
                raise sweep[1]["error"]
            # Before the status is read: a status read while the sweep was still running
            # must not pass for the one after it.
            swept = sweep is None or not sweep[0].is_alive()
            try:
                status = ctx.fetch("status", api.Status)
            except DaemonNotRunning:
                if sweep is not None:
                    # The daemon went midway: the sweep's own answer says how it ended
                    # (cut short, or unanswered, which may still have been done).
                    sweep[0].join()
                    if "error" in sweep[1]:
                        raise sweep[1]["error"] from None
                raise
            board.show(work_rows(status, names))
            sources = {source.name: source for source in status.sources}
            missing = names - set(sources)
            if missing and time.monotonic() - started > 30:
                raise click.ClickException(f"the daemon does not know {', '.join(sorted(missing))}; see `ken status`")
            if swept and not missing and all(sweep_settled(sources[name], since) for name in names):
                unread = [sources[name] for name in sorted(names) if sources[name].last_error]
                if unread:
                    # The sweep ended without reading the folder (gone, not a folder, no
                    # permission): what it indexed before stays searchable, nothing new came in.
                    raise KenningError(
                        "; ".join(f"{source.name}: {source.last_error}" for source in unread)
                        + "; what was indexed before stays searchable"
                    )
                ended = embedding_state(status)
                if ended is not None:
                    return ended + _shut([sources[name] for name in sorted(names)])
            time.sleep(POLL_SECONDS)


def _shut(sources: list[api.SourceStatus]) -> str:
    """What the sweeps could not open and kept as last read, said where the user waits
    for them rather than only in `ken status`."""
    shut = [f"{folder}/" for source in sources for folder in source.unreadable_folders]
    shut += [path for source in sources for path in source.unreadable_files]
    if not shut:
        return ""
    named = ", ".join(escaped(path) for path in shut[:3]) + (f" and {len(shut) - 3} more" if len(shut) > 3 else "")
    return f" (cannot read {named}: kept as last indexed; see `ken status`)"


def in_background(call: Callable[[], Any]) -> tuple[threading.Thread, dict[str, Any]]:
    """Run a blocking daemon call in a thread while the caller shows progress; the outcome
    (`result` or `error`) lands in the returned dict."""
    outcome: dict[str, Any] = {}

    def run() -> None:
        try:
            outcome["result"] = call()
        except BaseException as exc:  # handed to the main thread, which re-raises it
            outcome["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, outcome


def follow_removal(ctx: Context, name: str, total: int, thread: threading.Thread, outcome: dict[str, Any]) -> None:
    """A bar of the documents the removal has dropped, read from the source's counts;
    full at the end only when the removal went through (a refused one removed nothing)."""
    started = time.monotonic()
    with Board(err=True) as board:
        while thread.is_alive():
            thread.join(POLL_SECONDS)
            if not thread.is_alive():
                break
            try:
                status = ctx.fetch("status", api.Status)
            except DaemonNotRunning:
                # The daemon went midway (stopped, its library wiped): how the removal
                # ended is its own answer's to say (done, or cut short and finished at the
                # next start), not this question's, which only fed the bar.
                thread.join()
                break
            source = next((s for s in status.sources if s.name == name), None)
            left = 0 if source is None else source.holds + source.failed + source.skipped + source.in_progress
            done = max(total - left, 0)
            board.show(
                [
                    Row(
                        "remove",
                        f"removing {name}",
                        done,
                        total or None,
                        f"{done}/{total} documents · {ago(time.monotonic() - started)}",
                    )
                ]
            )
        if "error" not in outcome:
            board.show([Row("remove", f"removing {name}", total, total or None, f"{total}/{total} documents")])
