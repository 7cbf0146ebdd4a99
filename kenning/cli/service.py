"""Commands that run and look after the daemon and its sources."""

from __future__ import annotations

import asyncio
import logging
import os
import sys
import time
from pathlib import Path

import click

from kenning.cli.agent_memory import echo_agent_records
from kenning.cli.app import Context, main, pass_context, print_json
from kenning.config import SourceSettings, add_source, remove_source
from kenning.errors import DaemonNotRunning, KenningError
from kenning.ingest.preview import describe as describe_preview
from kenning.ingest.preview import preview


@main.command()
@pass_context
def daemon(ctx: Context) -> None:
    """Run the daemon in the foreground (logs go to stderr)."""
    from kenning.daemon.supervisor import Daemon

    settings = ctx.settings
    logging.basicConfig(
        level=settings.daemon.log_level.upper(),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    # aiosqlite logs every statement at debug level, httpx every request, and pdfminer
    # warns about every damaged PDF object; they drown kenning's own lines (a bad file is reported once,
    # as its failure reason).
    logging.getLogger("aiosqlite").setLevel(logging.INFO)
    logging.getLogger("pdfminer").setLevel(logging.ERROR)
    logging.getLogger("httpx").setLevel(logging.WARNING)
    # Files the daemon creates (database, WAL, socket) are the user's alone.
    os.umask(0o077)
    asyncio.run(Daemon(settings, ctx.config_path).run())


@main.command()
@click.option("--json", "as_json", is_flag=True, help="Print what the daemon's `status` method returns.")
@pass_context
def status(ctx: Context, as_json: bool) -> None:
    """Show the daemon and each source: files done / failed / skipped, chunks, sweeps."""
    result = ctx.call("status")
    if as_json:
        print_json(result)
        return
    info = result["daemon"]
    click.echo(
        f"kenning {info['version']} · pid {info['pid']} · up {_ago(info['uptime_seconds'])}"
        f" · index {info['db_bytes'] / 1e6:.1f} MB · {info['data_dir']}"
    )
    _echo_embedder(result["embedder"])
    _echo_graph(result["graph"])
    click.echo(f"library: {result['library']['documents']} documents (each counted once)")
    echo_agent_records(result.get("agent"))
    if not result["sources"]:
        click.echo("no sources yet: add one with `ken sources add PATH`")
    for source in result["sources"]:
        _echo_source_status(source)


AGGREGATE_LABELS = {
    "agent": "agent documents",
    "url": "fetched pages",
    "capsule": "memory capsules",
    "archive": "archived outputs",
    "ledger": "ledger entries",
}


def _echo_source_status(source: dict) -> None:
    if source["kind"] != "folder":
        label = AGGREGATE_LABELS.get(source["kind"], source["kind"])
        click.echo(f"\n{click.style(source['name'], bold=True)}  ({label})")
        click.echo(f"  documents: {source['holds']} · chunks: {source['chunks']}")
        return
    state = "scanning" if source["scanning"] else ("watching" if source["active"] else "not in config")
    click.echo(f"\n{click.style(source['name'], bold=True)}  {source['path']}  ({state})")
    if source["total"] is not None:
        click.echo(f"  files: {source['processed']}/{source['total']} done ({source['percent']:g}%)")
    shared = f" ({source['merged']} also held by another source)" if source["merged"] else ""
    click.echo(
        f"  {source['holds']} indexed{shared} · {source['failed']} failed · {source['skipped']} skipped"
        f" · {source['pending']} pending"
        + (f" · {source['capped']} over max_files" if source["capped"] else "")
    )
    last = source["last_sweep_at"]
    swept = f"{_ago(time.time() - last)} ago" if last else "never"
    budget = source["chunks_per_sweep"]
    per_sweep = "no limit" if budget == 0 else ("budget spent until the next interval" if budget is None else budget)
    line = f"  chunks: {source['chunks']} · per sweep: {per_sweep} · last sweep: {swept}"
    if source["next_sweep_at"]:
        line += f" · next in {_ago(max(source['next_sweep_at'] - time.time(), 0))}"
    click.echo(line)
    if source["deferred"]:
        click.echo(f"  {source['deferred']} files wait for the next sweep (chunk budget)")
    if source["last_error"]:
        click.echo(click.style(f"  error: {source['last_error']}", fg="red"))
    for failure in source["failures"]:
        click.echo(f"  failed: {failure['path']}: {failure['reason']}")


def _echo_embedder(embedder: dict) -> None:
    job = embedder["job"]
    vectors = "loading" if embedder["vectors"] is None else f"{embedder['vectors']} vectors"
    line = f"embedder: {embedder['backend']} {embedder['model']} · {vectors} · {job['state']}"
    if job["state"] == "embedding":
        line += f" {job['done']}/{job['total']}"
        if job.get("rate_per_second"):
            line += f" at {job['rate_per_second']:.0f}/s"
        if job.get("eta_seconds") is not None:
            line += f", about {_ago(job['eta_seconds'])} left"
    click.echo(line)
    if job.get("last_error"):
        click.echo(click.style(f"  {job['last_error']}", fg="yellow"))


def _echo_graph(report: dict) -> None:
    job = report["job"]
    line = (
        f"graph: {report['extractor']} · {report['entities']} entities · {report['relations']} relations"
        f" · {job['state']}"
    )
    if report.get("pending"):
        line += f" · {report['pending']} chunks waiting"
        if job.get("rate_per_second"):
            line += f" at {job['rate_per_second']:.0f}/s"
    if report["failed"]:
        line += f" · {report['failed']} failed (retried later)"
    click.echo(line)
    if job.get("last_error"):
        click.echo(click.style(f"  {job['last_error']}", fg="yellow"))


def _ago(seconds: float) -> str:
    seconds = int(seconds)
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m"
    if seconds < 86400:
        return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"
    return f"{seconds // 86400}d"


@main.group()
def sources() -> None:
    """List, add or remove sources."""


@sources.command("list")
@click.option("--json", "as_json", is_flag=True)
@pass_context
def sources_list(ctx: Context, as_json: bool) -> None:
    """List the sources the daemon knows."""
    result = ctx.call("sources.list")
    if as_json:
        print_json(result)
        return
    if not result["sources"]:
        click.echo("no sources yet: add one with `ken sources add PATH`")
    for source in result["sources"]:
        if source["kind"] == "folder" and not source["in_config"]:
            note = "  (removed from config; index kept, not searched)"
        else:
            note = {"agent": "  (agent documents)", "url": "  (fetched pages)"}.get(source["kind"], "")
        shared = f", {source['shared']} shared" if source["shared"] else ""
        click.echo(
            f"{source['name']}\t{source['path']}\tnamespace={source['namespace']}"
            f"\t{source['documents']} documents{shared}{note}"
        )
    click.echo(f"library: {result['library_documents']} documents (a shared document counts once)")


@sources.command("add")
@click.argument("path", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--name", help="Source name (default: the folder's name).")
@click.option("--namespace", default="default", show_default=True)
@click.option("--ignore", multiple=True, help="Glob to leave out, relative to the folder (repeatable).")
@click.option("--max-files", type=click.IntRange(min=1), default=5000, show_default=True)
@click.option(
    "--chunk-budget",
    type=click.IntRange(min=0),
    help="Chunks per sweep for this source, 0 = no limit (default: [daemon] folder_chunk_budget).",
)
@click.option("--no-confine", is_flag=True, help="Follow file symlinks that lead outside the folder.")
@click.option("--yes", "-y", is_flag=True, help="Add without asking after the cost preview.")
@pass_context
def sources_add(
    ctx: Context,
    path: Path,
    name: str | None,
    namespace: str,
    ignore: tuple[str, ...],
    max_files: int,
    chunk_budget: int | None,
    no_confine: bool,
    yes: bool,
) -> None:
    """Preview what a folder will cost, then add it to the config and tell the daemon."""
    path = path.resolve()
    name = name or "".join(ch if ch.isalnum() or ch in "._-" else "-" for ch in path.name).strip("-._") or "folder"
    settings = ctx.settings
    if settings.source(name) is not None:
        raise KenningError(f"a source named {name!r} already exists in {ctx.config_path}; pick another with --name")
    if any(existing.path == path for existing in settings.sources):
        raise KenningError(f"{path} is already a source in {ctx.config_path}")
    try:
        source = SourceSettings(
            name=name,
            path=path,
            namespace=namespace,
            ignore=ignore,
            max_files=max_files,
            chunk_budget=chunk_budget,
            confine_to_root=not no_confine,
        )
    except ValueError as exc:
        raise KenningError(f"invalid source: {exc}") from None
    for line in describe_preview(preview(source, settings), source, settings):
        click.echo(line)
    if not yes:
        if not sys.stdin.isatty():
            raise KenningError("not adding without confirmation; run again with --yes")
        click.confirm(f"Add {path} as source {name!r}?", abort=True)
    add_source(ctx.config_path, source)
    click.echo(f"added source {name!r} ({path}) to {ctx.config_path}")
    try:
        ctx.call("reload")
    except DaemonNotRunning:
        click.echo("the daemon is not running; it will index this folder when it starts (`ken daemon`)")
        return
    click.echo("the daemon is indexing it now; follow with `ken status`")


@sources.command("remove")
@click.argument("name")
@click.option("--yes", "-y", is_flag=True, help="Do not ask for confirmation.")
@pass_context
def sources_remove(ctx: Context, name: str, yes: bool) -> None:
    """Remove a source and its index; documents another source also holds stay searchable."""
    if not yes:
        click.confirm(
            f"Remove source {name!r} and everything only it holds from the index?", abort=True, err=True
        )
    in_config = remove_source(ctx.config_path, name)
    if in_config:
        click.echo(f"removed {name!r} from {ctx.config_path}")
    try:
        result = ctx.call("sources.remove", {"name": name}, timeout=None)
    except DaemonNotRunning:
        if not in_config:
            raise
        click.echo("the daemon is not running; run `ken sources remove` again once it is, to delete the index")
        sys.exit(1)
    click.echo(f"removed source {name!r}: {result['documents_removed']} documents dropped or handed to other sources")


@main.command()
@click.argument("name")
@click.option("--wait", is_flag=True, help="Return when the sweep has finished, with its counts.")
@pass_context
def scan(ctx: Context, name: str, wait: bool) -> None:
    """Sweep one source now instead of waiting for the next periodic sweep."""
    result = ctx.call("sources.scan", {"name": name, "wait": wait}, timeout=None if wait else 60.0)
    if wait:
        counts = ", ".join(f"{key} {value}" for key, value in result["result"].items())
        click.echo(f"swept {name}: {counts}")
    else:
        click.echo(f"sweep of {name} started; follow with `ken status`")


@main.command()
@pass_context
def reload(ctx: Context) -> None:
    """Re-read the config file (same as sending SIGHUP to the daemon)."""
    result = ctx.call("reload")
    added = ", ".join(result["added"]) or "none"
    removed = ", ".join(result["removed"]) or "none"
    click.echo(f"reloaded: {len(result['sources'])} sources (added: {added}; removed: {removed})")


@main.command()
@pass_context
def dedup(ctx: Context) -> None:
    """Run the near-duplicate sweep now (it also runs every [dedup] every_n_sweeps sweeps)."""
    result = ctx.call("dedup", timeout=None)
    click.echo(
        f"compared {result['documents']} documents in {result['seconds']:.2f}s:"
        f" {result['collapsed']} near-duplicates collapsed"
    )


@main.command()
@pass_context
def reembed(ctx: Context) -> None:
    """Embed every item again with the current embedder, in the background."""
    result = ctx.call("reembed")
    click.echo(f"dropped {result['dropped']} vectors; re-embedding in the background (see `ken status`)")


