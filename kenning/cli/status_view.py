"""How `ken status` reads: the daemon, its jobs and each source, as lines of text.

The same lines feed the one-shot `ken status` and the live `ken status --watch`; the
figures are the daemon's own (job rate and ETA come from the job that does the work).
"""

from __future__ import annotations

import time

import click

from kenning import api
from kenning.api import IGNORE_FILE_HOLDS
from kenning.text.controls import escaped
from kenning.text.counts import counted


def status_lines(status: api.Status) -> list[str]:
    info = status.daemon
    lines = [
        f"kenning {info.version} · pid {info.pid} · up {ago(info.uptime_seconds)} · {escaped(info.data_dir)}",
        database_line(info),
        embedder_line(status.embedder),
        graph_line(status.graph),
        f"library: {counted(status.library.documents, 'document')} (each counted once)",
    ]
    if status.agent is not None:
        lines.append(agent_line(status.agent))
    # Each named: on a full disk both said "disk I/O error", and nothing told them apart.
    for label, job in (("embedder", status.embedder.job), ("graph", status.graph.job)):
        if job.last_error:
            lines.append(click.style(f"  {label}: {escaped(job.last_error)}", fg="yellow"))
    if problem := dimension_problem(status.embedder):
        lines.append(click.style(f"  {problem}; `ken reembed` embeds them again", fg="yellow"))
    if status.embedder.left_out:
        lines.append(click.style(f"  {left_out_line(status.embedder.left_out)}", fg="yellow"))
    if not status.sources:
        lines.append("no sources yet: add one with `ken sources add PATH`")
    for source in status.sources:
        lines.append("")
        lines.extend(source_lines(source))
    return lines


def database_line(info: api.DaemonInfo) -> str:
    line = f"database: {megabytes(info.db_bytes)}"
    if info.wal_bytes:
        line += f" (of which WAL {megabytes(info.wal_bytes)})"
    if info.free_bytes >= max(info.db_bytes // 10, 16 << 20):
        line += f" · {megabytes(info.free_bytes)} unused inside: `ken compact` returns it"
    return line


def megabytes(count: int) -> str:
    return f"{count / 1e9:.2f} GB" if count >= 1e9 else f"{count / 1e6:.1f} MB"


def job_figures(job: api.JobStatus) -> str:
    """done/total, rate and time left of a job's pass, as far as the daemon knows them."""
    text = f"{job.done}/{job.total}"
    if job.rate_per_second:
        text += f" at {job.rate_per_second:.0f}/s"
    if job.eta_seconds is not None:
        text += f", about {ago(job.eta_seconds)} left"
    return text


def embedder_line(embedder: api.EmbedderStatus) -> str:
    job = embedder.job
    if embedder.vectors is None:
        # Waiting with no index: bringing it up failed, and is tried again (last_error says why).
        vectors = "off" if job.state == "waiting" else "loading"
    else:
        vectors = counted(embedder.vectors, "vector")
    line = f"embedder: {embedder.backend} {embedder.model} · {vectors} · {job.state}"
    if job.state in ("embedding", "deferred"):
        line += " " + job_figures(job)
    return line


def left_out_line(count: int) -> str:
    """Texts the embedder failed on: named one by one in the daemon's log, counted here."""
    them = "it" if count == 1 else "them"
    return f"{counted(count, 'text')} left to keyword search: the embedder failed on {them}; `ken reembed` tries again"


def dimension_problem(embedder: api.EmbedderStatus) -> str | None:
    """Why stored vectors cannot be scored against a query (the model behind the name was
    pulled anew with another length), or None. The daemon re-embeds by itself once it
    notices; until it does, the vector leg is off, which no job state would show."""
    held, made = embedder.dimension, embedder.model_dimension
    if held and made and held != made:
        return (
            f"{embedder.model} makes {made}-dimensional vectors but the index holds {held}-dimensional ones,"
            " so the vector leg is off"
        )
    if embedder.mismatched:
        return f"{counted(embedder.mismatched, 'stored vector')} of another dimension are left out of the vector leg"
    return None


def agent_line(records: api.AgentRecords) -> str:
    """Capsules, archives (and their retention) and ledger entries."""
    superseded = f" ({records.superseded_capsules} superseded)" if records.superseded_capsules else ""
    age = f"{records.archive_max_age_days:g} days" if records.archive_max_age_days else "no age limit"
    size = f"{records.archive_max_total_mb:g} MB" if records.archive_max_total_mb else "no size limit"
    line = (
        f"agent: {counted(records.capsules, 'capsule')}{superseded} · {counted(records.archives, 'archive')}"
        f" ({megabytes(records.archive_bytes)}; keeps {age}, {size})"
    )
    if records.archives_pruned:
        line += f", {records.archives_pruned} pruned"
    return line + f" · {records.ledger_entries} ledger entries"


def graph_line(report: api.GraphStatus) -> str:
    job = report.job
    line = f"graph: {report.extractor} · {counted(report.entities, 'entity', 'entities')} · {counted(report.relations, 'relation')} · {job.state}"
    if report.pending:
        line += f" · {counted(report.pending, 'chunk')} waiting"
        if job.rate_per_second:
            line += f" at {job.rate_per_second:.0f}/s"
    if report.failed:
        line += f" · {report.failed} failed (retried later)"
    return line


AGGREGATE_LABELS = {
    "agent": "agent documents",
    "url": "fetched pages",
    "capsule": "memory capsules",
    "archive": "archived outputs",
    "ledger": "ledger entries",
}


def _looked_at_again(source: api.SourceStatus) -> str:
    """Of the files a sweep has still to look at, those already counted as read (a
    changed file; one saved too close to its last read for its time to tell, whose hash
    does): counted both as read and as pending, the line added up to more files than the
    folder has, and a sweep a full disk stops leaves it so for as long as the disk is full."""
    again = source.holds + source.failed + source.skipped + source.pending - (source.total or 0)
    if source.total is None or source.pending == 0 or again <= 0:
        return ""
    return f" ({min(again, source.pending)} of them read before, to look at again)"


def source_lines(source: api.SourceStatus) -> list[str]:
    name = click.style(source.name, bold=True)
    if source.kind != "folder":
        label = AGGREGATE_LABELS.get(source.kind, source.kind)
        return [f"{name}  ({label})", f"  documents: {source.holds} · chunks: {source.chunks}"]
    if source.removing:
        state = "being removed"
    elif source.scanning:
        state = "scanning"
    elif not source.active:
        state = "not in config"
    else:
        # The last sweep could not read the folder (gone, unmounted, no permission): the
        # daemon looks for it again, but nothing in it is being followed now.
        state = "cannot read the folder" if source.last_error else "watching"
        if source.last_error and source.last_error.startswith("cannot write the index"):
            # A full disk or a read-only database: the sweep waits and tries again.
            state = "waiting: cannot write the index"
        elif source.last_error and source.last_error.startswith(IGNORE_FILE_HOLDS):
            # ingest/scan.py: nothing is indexed or dropped until the file is fixed.
            state = "held: its .kiroignore cannot be used"
        elif source.kept_unmounted == "unmounted":
            # ingest/scan.py's `_drive_away`: its files are kept while the drive is away.
            state = "not mounted: kept as last indexed"
        elif source.kept_unmounted == "unknown":
            # ingest/scan.py's `MountUnknown`: the same, for a root not seen holding its
            # files since the upgrade, empty or holding others.
            state = "maybe not mounted: kept as last indexed"
        elif source.not_watched:
            # ingest/watch.py: no watch could be set up (an inotify limit reached); its
            # changes wait for the periodic sweep.
            state = "not watched: changes wait for the periodic sweep"
    # A folder's name is anyone's to choose (an unpacked archive's, a synced share's).
    lines = [f"{name}  {escaped(source.path)}  ({state})"]
    if source.total is not None:
        line = f"  files: {source.processed}/{source.total} done ({source.percent:g}%)"
        if source.rate_per_second:
            line += f" at {source.rate_per_second:.0f}/s"
        if source.eta_seconds is not None:
            line += f", about {ago(source.eta_seconds)} left"
        lines.append(line)
    shared = f" ({source.merged} also held by another source)" if source.merged else ""
    lines.append(
        f"  {source.holds} indexed{shared} · {source.failed} failed · {source.skipped} skipped"
        f" · {source.pending} pending" + _looked_at_again(source)
        + (f" · {source.capped} over max_files" if source.capped else "")
        + (f" ({source.capped_kept} of them indexed before the cap, kept unchanged)" if source.capped_kept else "")
    )
    swept = f"{ago(time.time() - source.last_sweep_at)} ago" if source.last_sweep_at else "never"
    budget = source.chunks_per_sweep
    per_sweep = "no limit" if budget == 0 else ("budget spent until the next interval" if budget is None else budget)
    line = f"  chunks: {source.chunks} · per sweep: {per_sweep} · last sweep: {swept}"
    if source.next_sweep_at:
        line += f" · next in {ago(max(source.next_sweep_at - time.time(), 0))}"
    lines.append(line)
    if source.deferred:
        lines.append(f"  {counted(source.deferred, 'file')} {'waits' if source.deferred == 1 else 'wait'} for the next sweep (chunk budget)")
    if source.passed_over:
        reasons = ", ".join(f"{count} {reason}" for reason, count in source.passed_over.items())
        lines.append(f"  passed over: {reasons}")
    if source.last_error:
        lines.append(click.style(f"  error: {escaped(source.last_error)}", fg="red"))
    if source.not_watched:
        lines.append(click.style(f"  not watched: {escaped(source.not_watched)}", fg="red"))
    for folder, reason in source.unreadable_folders.items():
        lines.append(click.style(f"  cannot read folder {escaped(folder)}/: {escaped(reason)}", fg="red"))
    for path, reason in source.unreadable_files.items():
        lines.append(click.style(f"  cannot read {escaped(path)}: {escaped(reason)}; kept as last indexed", fg="red"))
    if source.unreadable_kept:
        lines.append(f"  {counted(source.unreadable_kept, 'file')} from unreadable folders kept as last indexed")
    # A file's name may hold a newline or an escape sequence, and a reason may quote it.
    for failure in source.failures:
        lines.append(f"  failed: {escaped(failure.path)}: {escaped(failure.reason)}")
    return lines


def ago(seconds: float) -> str:
    """A span as status shows it; one measured across a clock set back is none, not
    "-3590s"."""
    seconds = max(int(seconds), 0)
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m"
    if seconds < 86400:
        return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"
    return f"{seconds // 86400}d"
