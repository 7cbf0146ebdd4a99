"""Commands that run and look after the daemon: daemon, status, reload, dedup, reembed, compact."""

from __future__ import annotations

import os
from pathlib import Path

import click

from kenning import api
from kenning.cli.app import Context, echo_notes, json_option, main, pass_context, print_json
from kenning.cli.status_view import megabytes, status_lines
from kenning.text.controls import escaped
from kenning.text.counts import counted


@main.command()
@pass_context
def daemon(ctx: Context) -> None:
    """Run the daemon in the foreground (logs go to stderr); `ken start` runs it in the background.

    \b
    Examples:
      ken daemon
      ken --config ~/work/kenning.toml daemon
    """
    from kenning.daemon.run import serve

    # Absolute: `ken status` and `ken doctor` show and compare it from other directories.
    serve(ctx.settings, Path(os.path.abspath(ctx.config_path)))


@main.command()
@click.option("--watch", "-w", is_flag=True, help="Keep it on screen, refreshed, with progress bars; Ctrl-C ends it.")
@json_option
@pass_context
def status(ctx: Context, watch: bool, as_json: bool) -> None:
    """Show the daemon, the database, the embedding and entity jobs, and each source.

    \b
    Examples:
      ken status
      ken status --watch
      ken status --json | jq .embedder.job
    """
    if watch:
        from kenning.cli.follow import watch as follow

        follow(ctx)
        return
    result = ctx.fetch("status", api.Status)
    if as_json:
        print_json(result)
    else:
        for line in status_lines(result):
            click.echo(line)
    from kenning.cli.lifecycle import moved_away, still_runs

    # On stderr, so `--json` stays JSON: a second daemon of this library is what a user
    # never expects, and this status shows only the one that answered.
    echo_notes([f"{still_runs(record)}; `ken restart` stops it" for record in moved_away(ctx)])


@main.command()
@pass_context
def reload(ctx: Context) -> None:
    """Re-read the config file (same as sending SIGHUP to the daemon).

    \b
    Examples:
      ken reload
    """
    result = ctx.fetch("reload", api.ReloadResult)
    # Asked after: a daemon too busy to answer is then told of as one that may have
    # reloaded, with what shows whether it did (cli/app.py), not as a status unanswered.
    reads = ctx.daemon_reads_another()
    added = ", ".join(result.added) or "none"
    removed = ", ".join(result.removed) or "none"
    click.echo(f"reloaded: {counted(len(result.sources), 'source')} (added: {added}; removed: {removed})")
    if reads is not None:
        # It re-read its own file: "reloaded" alone left this config's folders unindexed
        # with no word of why.
        reads_shown, config_shown = escaped(str(reads)), escaped(str(ctx.config_path))
        click.echo(
            f"the running daemon reads {reads_shown}, not {config_shown}: it re-read that file; to run on"
            f" {config_shown}, stop that daemon and `ken --config {config_shown} start`"
        )
    if result.restart_needed:
        click.echo(f"not applied until `ken restart`: {', '.join(result.restart_needed)}")


@main.command()
@pass_context
def dedup(ctx: Context) -> None:
    """Run the near-duplicate sweep now (it also runs every [dedup] every_n_sweeps sweeps).

    A copy that has a line the other lacks stays its own document, so that line is still
    found and cited at its file.

    \b
    Examples:
      ken dedup
    """
    result = ctx.fetch("dedup", api.DedupResult, timeout=None)
    click.echo(
        f"compared {counted(result.documents, 'document')} in {result.seconds:.2f}s:"
        f" {counted(result.collapsed, 'near-duplicate')} collapsed"
    )


@main.command()
@pass_context
def reembed(ctx: Context) -> None:
    """Embed every item again with the current embedder, in the background, those it
    failed on and left to keyword search included.

    \b
    Examples:
      ken reembed && ken status --watch
    """
    result = ctx.fetch("reembed", api.ReembedResult)
    click.echo(f"dropped {counted(result.dropped, 'vector')}; re-embedding in the background (see `ken status --watch`)")


@main.command()
@pass_context
def compact(ctx: Context) -> None:
    """Give the space deleted documents left inside the database back to the disk.

    Removals return their space on their own in a library made by this version; this
    rewrites the whole file once (VACUUM), which also switches an older library over.
    Searches go on meanwhile; new indexing waits until it is done.

    \b
    Examples:
      ken compact
    """
    click.echo("compacting the database (a large library takes a while)…", err=True)
    result = ctx.fetch("compact", api.CompactResult, timeout=None)
    click.echo(f"database: {megabytes(result.bytes_before)} → {megabytes(result.bytes_after)} in {result.seconds:.1f}s")
