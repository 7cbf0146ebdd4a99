"""Commands for sources: list, add (with its cost preview), remove, scan."""

from __future__ import annotations

import os
import re
import sys
import time
import unicodedata
from pathlib import Path

import click

from kenning import api
from kenning.cli.app import Context, json_option, main, pass_context, print_json
from kenning.cli.follow import follow_removal, in_background, wait_until_searchable
from kenning.cli.status_view import megabytes
from kenning.config.paths import same_folder, user_path
from kenning.errors import DaemonNotRunning, KenningError, error_text
from kenning.text.controls import escaped
from kenning.text.counts import counted


@main.group()
def sources() -> None:
    """List, add or remove sources.

    \b
    Examples:
      ken sources list
      ken sources add ~/notes --wait
      ken sources remove notes
    """


@sources.command("list")
@json_option
@pass_context
def sources_list(ctx: Context, as_json: bool) -> None:
    """List the sources the daemon knows, with what each holds.

    \b
    Examples:
      ken sources list
      ken sources list --json | jq '.sources[].name'
    """
    result = ctx.fetch("sources.list", api.SourceList)
    if as_json:
        print_json(result)
        return
    if not result.sources:
        click.echo("no sources yet: add one with `ken sources add PATH`")
    for source in result.sources:
        if source.removing:
            note = "  (being removed)"
        elif source.kind == "folder" and not source.in_config:
            note = "  (removed from config; index kept, not searched)"
        else:
            note = {"agent": "  (agent documents)", "url": "  (fetched pages)"}.get(source.kind, "")
        shared = f", {source.shared} shared" if source.shared else ""
        # Escaped, as `ken status` shows it: a tab or a newline in a folder's name would
        # shift the columns, and an escape sequence would reach the terminal.
        click.echo(
            f"{source.name}\t{escaped(source.path)}\tnamespace={source.namespace}\t{counted(source.documents, 'document')}{shared}{note}"
        )
    click.echo(f"library: {counted(result.library_documents, 'document')} (a shared document counts once)")


@sources.command("add")
# As typed: a Path makes "" the current directory.
@click.argument("given", metavar="PATH", type=click.Path())
@click.option("--name", help="Source name: letters, digits, . _ - (default: made from the folder's name).")
@click.option("--namespace", default="default", show_default=True, help="Namespace to search it under.")
@click.option("--ignore", multiple=True, help="Glob to leave out, relative to the folder (repeatable).")
@click.option(
    "--max-files",
    type=click.IntRange(min=1),
    default=5000,
    show_default=True,
    help="Index at most this many files, newest first.",
)
@click.option(
    "--chunk-budget",
    type=click.IntRange(min=0),
    help="Chunks per sweep for this source, 0 = no limit (default: [daemon] folder_chunk_budget).",
)
@click.option("--no-confine", is_flag=True, help="Follow file symlinks that lead outside the folder.")
@click.option("--yes", "-y", is_flag=True, help="Add without asking after the cost preview.")
@click.option("--wait", is_flag=True, help="Follow the indexing with progress bars until the folder is searchable.")
@pass_context
def sources_add(
    ctx: Context,
    given: str,
    name: str | None,
    namespace: str,
    ignore: tuple[str, ...],
    max_files: int,
    chunk_budget: int | None,
    no_confine: bool,
    yes: bool,
    wait: bool,
) -> None:
    """Preview what a folder will cost, then add it to the config and tell the daemon.

    \b
    Examples:
      ken sources add ~/notes
      ken sources add ~/work/docs --name docs --ignore 'drafts/*' --yes --wait
    """
    # Imported here: the preview walks the folder with the sweep's own filters and
    # samples files through the real readers, which no other command should load.
    from pydantic import ValidationError

    from kenning.config import SourceSettings, add_source
    from kenning.config.settings import RESERVED_SOURCE_NAMES
    from kenning.ingest.preview import describe, preview

    ctx.creates_config()
    path = _folder(given)
    # The folder's name may hold anything a file name can (an escape sequence, a newline),
    # and each message below names it.
    shown = escaped(str(path))
    name = _name_for(path) if name is None else name
    if name in RESERVED_SOURCE_NAMES:
        raise KenningError(f"the name {name!r} is reserved for kenning's own sources; pick another with --name")
    settings = ctx.settings
    if settings.source(name) is not None:
        raise KenningError(f"a source named {name!r} already exists in {ctx.config_path}; pick another with --name")
    if any(same_folder(existing.path, path) for existing in settings.sources):
        raise KenningError(f"{shown} is already a source in {ctx.config_path}")
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
    except ValidationError as exc:
        if any(error["loc"] == ("name",) for error in exc.errors()):
            raise KenningError(
                f"{name!r} cannot be a source name: it must start with a letter or digit and hold only"
                " letters, digits, '.', '_' and '-' (at most 64); pick one with --name"
            ) from None
        problems = "; ".join(
            f"{'.'.join(map(str, error['loc']))}: {error['msg'].removeprefix('Value error, ')}" for error in exc.errors()
        )
        raise KenningError(f"invalid source: {problems}") from None
    for line in describe(preview(source, settings), source, settings):
        click.echo(line)
    if not yes:
        if not sys.stdin.isatty():
            raise KenningError("not adding without confirmation; run again with --yes")
        click.confirm(f"Add {shown} as source {name!r}?", abort=True)
    add_source(ctx.config_path, source)
    click.echo(f"added source {name!r} ({shown}) to {escaped(str(ctx.config_path))}")
    since = time.time()
    try:
        reads = ctx.daemon_reads_another()
    except DaemonNotRunning:
        click.echo("the daemon is not running; it will index this folder when it starts (`ken start`)")
        if wait:
            sys.exit(1)
        return
    if reads is not None:
        # A reload would re-read the daemon's own config, which does not name this source.
        reads_shown, config_shown = escaped(str(reads)), escaped(str(ctx.config_path))
        click.echo(
            f"the running daemon reads {reads_shown}, not {config_shown}: it indexes this folder once a daemon"
            f" runs on that config (`ken --config {config_shown} start`), or add it to {reads_shown}"
        )
        if wait:
            sys.exit(1)
        return
    ctx.call("reload")
    if not wait:
        click.echo(
            f"the daemon is indexing it now; follow with `ken status --watch`, search with `ken search --source {name}`"
        )
        return
    click.echo(f"{name}: {wait_until_searchable(ctx, {name}, since)}")


# A path an error names is cut past this many characters.
SHOWN_PATH_CHARS = 300


def _folder(given: str) -> Path:
    """The folder `given` names, links resolved and `~` expanded as the config file
    expands it: quoted ("~/My Notes", for its space) it reached the command as written,
    and was refused as a folder that does not exist."""
    if not given.strip():
        raise KenningError("the path given is empty; name the folder that holds the documents")
    try:
        path = user_path(given)
    except ValueError as exc:
        # The path is cut where it is named, so that what is wrong with it is still said
        # (a path of 100,000 characters, too long to open).
        reason = str(exc).removeprefix(f"{given}: ")
        raise KenningError(f"{escaped(error_text(given, SHOWN_PATH_CHARS))}: {reason}") from None
    if not path.is_dir():
        problem = "is not a folder" if path.exists() else "does not exist"
        raise KenningError(f"{escaped(str(path))} {problem}; name the folder that holds the documents")
    return Path(os.path.realpath(path))


def _name_for(folder: Path) -> str:
    """A source name from the folder's name, in the letters names allow: accents dropped
    (café → cafe), anything else between them a '-'. A name in another script (Документы,
    メモ) leaves nothing to go on, so the user is asked for one."""
    ascii_name = unicodedata.normalize("NFKD", folder.name).encode("ascii", "ignore").decode()
    name = re.sub(r"[^A-Za-z0-9._-]+", "-", ascii_name)[:64].strip("-._")
    if not name:
        raise KenningError(f"cannot make a source name from the folder name {folder.name!r}; give one with --name")
    return name


@sources.command("remove")
@click.argument("name")
@click.option("--yes", "-y", is_flag=True, help="Do not ask for confirmation.")
@pass_context
def sources_remove(ctx: Context, name: str, yes: bool) -> None:
    """Remove a source and its index; documents another source also holds stay searchable.

    \b
    Examples:
      ken sources remove notes
      ken sources remove old-archive --yes
    """
    from kenning.config import remove_source
    from kenning.config.settings import SOURCE_NAME_PATTERN

    if not re.fullmatch(SOURCE_NAME_PATTERN, name):
        # No source was ever named so: asking to confirm its removal first quoted a
        # pasted line back whole, control characters and all.
        raise KenningError(
            f"no source is named '{escaped(error_text(name, 100))}': a source's name is 1 to 64 letters, digits,"
            " '.', '_' or '-', starting with a letter or digit (`ken sources list` names them)"
        )
    if _kept_by_kenning(ctx, name):
        # The daemon refuses it and says how its items go: asking first would be asking
        # to confirm something that will not happen.
        ctx.fetch("sources.remove", api.RemovedSource, {"name": name})
    if not yes:
        click.confirm(f"Remove source {name!r} and everything only it holds from the index?", abort=True, err=True)
    in_config = remove_source(ctx.config_path, name)
    if in_config:
        click.echo(f"removed {name!r} from {ctx.config_path}")
    try:
        status = ctx.fetch("status", api.Status)
    except DaemonNotRunning:
        if not in_config:
            raise
        click.echo("the daemon is not running; run `ken sources remove` again once it is, to delete the index")
        sys.exit(1)
    known = next((s for s in status.sources if s.name == name), None)
    total = 0 if known is None else known.holds + known.failed + known.skipped + known.in_progress
    thread, outcome = in_background(
        lambda: ctx.fetch("sources.remove", api.RemovedSource, {"name": name}, timeout=None)
    )
    follow_removal(ctx, name, total, thread, outcome)
    thread.join()
    if "error" in outcome:
        raise outcome["error"]
    result: api.RemovedSource = outcome["result"]
    freed = f"; the database shrank by {megabytes(result.bytes_freed)}" if result.bytes_freed else ""
    click.echo(
        f"removed source {name!r}: {counted(result.documents_removed, 'document')} dropped or handed to other sources{freed}"
    )


def _kept_by_kenning(ctx: Context, name: str) -> bool:
    """Whether the running daemon holds `name` as one of kenning's own sources of what
    agents keep (agent documents, capsules, archives, the ledger)."""
    try:
        status = ctx.fetch("status", api.Status)
    except DaemonNotRunning:
        return False
    return any(s.name == name and s.kind in ("agent", "capsule", "archive", "ledger") for s in status.sources)


@main.command()
@click.argument("name")
@click.option("--wait", is_flag=True, help="Follow the sweep and the embedding with progress bars until they are done.")
@pass_context
def scan(ctx: Context, name: str, wait: bool) -> None:
    """Sweep one source now instead of waiting for the next periodic sweep.

    \b
    Examples:
      ken scan notes
      ken scan notes --wait
    """
    if not wait:
        ctx.fetch("sources.scan", api.ScanResult, {"name": name})
        click.echo(f"sweep of {name} started; follow with `ken status --watch`")
        return
    thread, outcome = in_background(
        lambda: ctx.fetch("sources.scan", api.ScanResult, {"name": name, "wait": True}, timeout=None)
    )
    ended = wait_until_searchable(ctx, {name}, None, sweep=(thread, outcome))
    thread.join()
    if "error" in outcome:
        raise outcome["error"]
    result: api.ScanResult = outcome["result"]
    counts = ", ".join(f"{key} {value}" for key, value in (result.result or {}).items())
    click.echo(f"swept {name}: {counts}")
    click.echo(f"{name}: {ended}")
