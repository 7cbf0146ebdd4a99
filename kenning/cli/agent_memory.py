"""Commands for what agents keep: `ken memory`, `ken archive` / `ken recall`, `ken ledger`,
`ken context`. Each is one daemon call (docs/protocol.md); the same operations are MCP
tools (`ken mcp`). Only click and the CLI's own helpers are imported, so `ken` starts fast.
"""

from __future__ import annotations

import sys
from typing import Any

import click

from kenning.cli.app import Context, main, pass_context, print_json
from kenning.errors import KenningError

CAPSULE_KINDS = ("fact", "decision", "gotcha", "pattern", "anti-pattern", "recipe", "principle")
DOCUMENT_KINDS = ("file", "page", "agent", "capsule", "archive", "ledger")
# Pages of archived text asked for at a time when printing a whole archive.
RECALL_PAGE = 1_000_000


def _stdin_text(what: str) -> str:
    text = click.get_text_stream("stdin").read()
    if not text.strip():
        raise KenningError(f"no text on standard input; pipe the {what} in")
    return text


def _fields(pairs: tuple[str, ...]) -> dict[str, str]:
    fields: dict[str, str] = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name.strip():
            raise click.BadParameter(f"{pair!r} is not NAME=VALUE", param_hint="--field")
        fields[name.strip()] = value
    return fields


def _given(**values: Any) -> dict[str, Any]:
    return {name: value for name, value in values.items() if value not in (None, (), [])}


# -- memory capsules -----------------------------------------------------------------------


@main.group()
def memory() -> None:
    """Memory capsules: short knowledge kept for later (facts, decisions, gotchas, ...)."""


@memory.command("add")
@click.option("--title", required=True, help="What it is about; the same title in the same scope updates it.")
@click.option("--body", help="The knowledge itself (default: read from standard input).")
@click.option("--kind", type=click.Choice(CAPSULE_KINDS), default="fact", show_default=True)
@click.option("--scope", default="default", show_default=True, help="Project or namespace.")
@click.option("--tag", "tags", multiple=True, help="Tag (repeatable).")
@click.option("--confidence", type=click.FloatRange(0, 1), default=1.0, show_default=True)
@click.option("--source", help="Where it came from (path:line, url, archive handle).")
@click.option("--supersedes", help="Id of a capsule this one replaces.")
@click.option("--force", is_flag=True, help="Store even if a near-identical capsule of the same kind exists.")
@click.option("--json", "as_json", is_flag=True)
@pass_context
def memory_add(
    ctx: Context, title: str, body: str | None, kind: str, scope: str, tags: tuple[str, ...], confidence: float,
    source: str | None, supersedes: str | None, force: bool, as_json: bool,
) -> None:  # fmt: skip
    """Keep a capsule. A near-identical one of the same kind is refused (exit status 1)."""
    params = _given(
        title=title, body=body if body is not None else _stdin_text("capsule's body"), kind=kind, scope=scope,
        tags=list(tags), confidence=confidence, source=source, supersedes=supersedes, force=force or None,
    )  # fmt: skip
    result = ctx.call("memory.add", params)
    if as_json:
        print_json(result)
    else:
        click.echo(f"{result['id']}: {result['message']}")
    if result["status"] == "refused":
        sys.exit(1)


@memory.command("recall")
@click.argument("query")
@click.option("--limit", "-n", default=5, show_default=True, type=click.IntRange(1, 50))
@click.option("--scope")
@click.option("--kind", "kinds", multiple=True, type=click.Choice(CAPSULE_KINDS), help="Only these kinds.")
@click.option("--json", "as_json", is_flag=True)
@pass_context
def memory_recall(
    ctx: Context, query: str, limit: int, scope: str | None, kinds: tuple[str, ...], as_json: bool
) -> None:
    """The capsules most relevant to QUERY, with decay for disuse; showing them counts as a use."""
    result = ctx.call("memory.recall", _given(query=query, limit=limit, scope=scope, kind=list(kinds)))
    if as_json:
        print_json(result)
        return
    if not result["capsules"]:
        click.echo("no capsules match")
    for hit in result["capsules"]:
        _echo_capsule(hit["capsule"], f"  score {hit['score']:.3f}")


def _echo_capsule(capsule: dict, extra: str = "") -> None:
    heading = click.style(capsule["title"], bold=True)
    click.echo(f"{capsule['id']}  {heading}  [{capsule['kind']}, {capsule['scope']}]{extra}")
    for line in capsule["body"].splitlines():
        click.echo(f"    {line}")


@memory.command("list")
@click.option("--scope")
@click.option("--kind", type=click.Choice(CAPSULE_KINDS))
@click.option("--all", "superseded", is_flag=True, help="Include superseded capsules.")
@click.option("--limit", "-n", default=50, show_default=True, type=click.IntRange(1, 500))
@click.option("--json", "as_json", is_flag=True)
@pass_context
def memory_list(
    ctx: Context, scope: str | None, kind: str | None, superseded: bool, limit: int, as_json: bool
) -> None:
    """Capsules, most recently updated first."""
    result = ctx.call("memory.list", _given(scope=scope, kind=kind, superseded=superseded or None, limit=limit))
    if as_json:
        print_json(result)
        return
    for capsule in result["capsules"]:
        replaced = f"  (superseded by {capsule['superseded_by']})" if capsule["superseded_by"] else ""
        click.echo(f"{capsule['id']}  {capsule['title']}  [{capsule['kind']}, {capsule['scope']}]{replaced}")
    click.echo(f"{len(result['capsules'])} of {result['total']} capsules")


@memory.command("show")
@click.argument("capsule_id")
@click.option("--json", "as_json", is_flag=True)
@pass_context
def memory_show(ctx: Context, capsule_id: str, as_json: bool) -> None:
    """One capsule in full, with its links."""
    capsule = ctx.call("memory.show", {"id": capsule_id})
    if as_json:
        print_json(capsule)
        return
    _echo_capsule(capsule)
    tags = f" · tags: {', '.join(capsule['tags'])}" if capsule["tags"] else ""
    click.echo(f"  confidence {capsule['confidence']:g} · used {capsule['uses']} times{tags}")
    if capsule["source"]:
        click.echo(f"  source: {capsule['source']}")
    if capsule["supersedes"]:
        click.echo(f"  replaces {capsule['supersedes']}")
    if capsule["superseded_by"]:
        click.echo(f"  superseded by {capsule['superseded_by']} (no longer found by search)")


@memory.command("forget")
@click.argument("capsule_id")
@pass_context
def memory_forget(ctx: Context, capsule_id: str) -> None:
    """Delete a capsule for good."""
    result = ctx.call("memory.forget", {"id": capsule_id})
    click.echo(f"forgot {result['id']} {result['title']!r}")


@memory.command("curate")
@click.option("--scope")
@click.option("--json", "as_json", is_flag=True)
@pass_context
def memory_curate(ctx: Context, scope: str | None, as_json: bool) -> None:
    """List stale capsules, likely duplicates and contradiction candidates (changes nothing)."""
    result = ctx.call("memory.curate", _given(scope=scope))
    if as_json:
        print_json(result)
        return
    click.echo(f"stale ({len(result['stale'])}):")
    for entry in result["stale"]:
        click.echo(f"  {entry['id']}  {entry['title']}  idle {entry['idle_days']:g} days, used {entry['uses']} times")
    for name, pairs in (
        ("likely duplicates", result["duplicates"]),
        ("contradiction candidates", result["contradictions"]),
    ):
        click.echo(f"{name} ({len(pairs)}):")
        for pair in pairs:
            click.echo(
                f"  {pair['first']} {pair['first_title']!r} / {pair['second']} {pair['second_title']!r}"
                f"  {pair['method']} {pair['similarity']:.2f}: {pair['reason']}"
            )


# -- archive and recall ----------------------------------------------------------------------


@main.group(invoke_without_command=True)
@click.option("--title", help="Default: the text's first line.")
@click.option("--tag", "tags", multiple=True, help="Tag (repeatable).")
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def archive(click_ctx: click.Context, title: str | None, tags: tuple[str, ...], as_json: bool) -> None:
    """Archive standard input whole (redacted, indexed) and print its handle; `ken recall` reads it back."""
    if click_ctx.invoked_subcommand is not None:
        return
    ctx = click_ctx.find_object(Context)
    assert ctx is not None
    result = ctx.call("archive.add", _given(text=_stdin_text("text to archive"), title=title, tags=list(tags)))
    if as_json:
        print_json(result)
        return
    again = " (archived before)" if result["existing"] else ""
    click.echo(f"{result['handle']}  {result['title']!r}  {result['chars']} characters{again}")
    if result["pruned"]:
        click.echo(f"retention pruned {len(result['pruned'])} older archives: {', '.join(result['pruned'])}")


@archive.command("list")
@click.option("--limit", "-n", default=50, show_default=True, type=click.IntRange(1, 500))
@click.option("--json", "as_json", is_flag=True)
@pass_context
def archive_list(ctx: Context, limit: int, as_json: bool) -> None:
    """Archives, newest first."""
    result = ctx.call("archive.list", {"limit": limit})
    if as_json:
        print_json(result)
        return
    for entry in result["archives"]:
        click.echo(f"{entry['handle']}  {entry['title']!r}  {entry['bytes']} bytes")
    click.echo(f"{result['total']} archives, {result['total_bytes'] / 1e6:.1f} MB")


@main.command()
@click.argument("handle")
@click.option("--offset", default=0, show_default=True, type=click.IntRange(0), help="First character.")
@click.option("--limit", type=click.IntRange(1), help="Characters to print (default: to the end).")
@click.option("--json", "as_json", is_flag=True, help="Print one page as JSON, with next_offset.")
@pass_context
def recall(ctx: Context, handle: str, offset: int, limit: int | None, as_json: bool) -> None:
    """Print archived text exactly as stored (from --offset, --limit characters)."""
    if as_json:
        print_json(ctx.call("archive.recall", {"handle": handle, "offset": offset, "limit": limit or RECALL_PAGE}))
        return
    remaining = limit
    position: int | None = offset
    while position is not None and (remaining is None or remaining > 0):
        asked = min(remaining, RECALL_PAGE) if remaining is not None else RECALL_PAGE
        page = ctx.call("archive.recall", {"handle": handle, "offset": position, "limit": asked})
        sys.stdout.write(page["text"])
        position = page["next_offset"]
        if remaining is not None:
            remaining -= len(page["text"])
    sys.stdout.flush()


# -- the facts ledger ---------------------------------------------------------------------------


@main.group()
def ledger() -> None:
    """The facts ledger: findings in sections, merged by identity (see README)."""


@ledger.command("add")
@click.argument("section")
@click.option("--field", "pairs", multiple=True, required=True, help="NAME=VALUE (repeatable), identity fields too.")
@click.option("--owner", default="agent", show_default=True, help="Who records it (kept by the first).")
@click.option("--evidence", multiple=True, help="Where it was seen: archive handle, item id, path (repeatable).")
@click.option("--json", "as_json", is_flag=True)
@pass_context
def ledger_add(
    ctx: Context, section: str, pairs: tuple[str, ...], owner: str, evidence: tuple[str, ...], as_json: bool
) -> None:
    """Record an entry in SECTION; an entry with the same identity (or an alias) is merged."""
    params = {"section": section, "fields": _fields(pairs), "owner": owner, "evidence": list(evidence)}
    result = ctx.call("ledger.add", params)
    if as_json:
        print_json(result)
        return
    entry = result["entry"]
    click.echo(f"{entry['id']}  {result['status']}: {entry['section']} {entry['identity']}")


@ledger.command("remove")
@click.argument("entry_id", required=False)
@click.option("--section")
@click.option("--field", "pairs", multiple=True, help="NAME=VALUE identity field (repeatable), with --section.")
@pass_context
def ledger_remove(ctx: Context, entry_id: str | None, section: str | None, pairs: tuple[str, ...]) -> None:
    """Remove an entry by id, or by --section and its identity --field values."""
    params = _given(id=entry_id, section=section, fields=_fields(pairs) if pairs else None)
    result = ctx.call("ledger.remove", params)
    click.echo(f"removed {result['id']}: {result['section']} {result['identity']}")


@ledger.command("render")
@click.option("--budget", type=click.IntRange(200, 1_000_000), help="Bytes (default: [ledger] render_budget).")
@click.option("--section", "sections", multiple=True, help="Only this section (repeatable).")
@click.option("--json", "as_json", is_flag=True)
@pass_context
def ledger_render(ctx: Context, budget: int | None, sections: tuple[str, ...], as_json: bool) -> None:
    """Print the ledger as the text block an agent puts in its prompt."""
    result = ctx.call("ledger.render", _given(budget=budget, sections=list(sections)))
    if as_json:
        print_json(result)
    else:
        sys.stdout.write(result["text"])


@ledger.command("list")
@click.option("--section")
@click.option("--json", "as_json", is_flag=True)
@pass_context
def ledger_list(ctx: Context, section: str | None, as_json: bool) -> None:
    """Every entry, with its id, owner, aliases and evidence."""
    result = ctx.call("ledger.list", _given(section=section))
    if as_json:
        print_json(result)
        return
    for entry in result["entries"]:
        fields = "; ".join(f"{name}={value}" for name, value in entry["fields"].items())
        click.echo(f"{entry['id']}  {entry['section']}  {entry['identity']}  ({entry['owner']})  {fields}")
        if len(entry["aliases"]) > 1:
            click.echo(f"    aliases: {', '.join(entry['aliases'])}")
        if entry["evidence"]:
            click.echo(f"    evidence: {', '.join(entry['evidence'])}")


# -- context packs ---------------------------------------------------------------------------


@main.command()
@click.argument("task")
@click.option("--budget", default=16_000, show_default=True, type=click.IntRange(500, 2_000_000), help="Bytes.")
@click.option("--source", help="Only this source.")
@click.option("--namespace", help="Only sources in this namespace.")
@click.option("--kind", "kinds", multiple=True, type=click.Choice(DOCUMENT_KINDS), help="Only these kinds.")
@click.option("--json", "as_json", is_flag=True)
@pass_context
def context(
    ctx: Context, task: str, budget: int, source: str | None, namespace: str | None, kinds: tuple[str, ...],
    as_json: bool,
) -> None:  # fmt: skip
    """Print what to put in a prompt for TASK: relevant documents whole, under --budget bytes."""
    params = _given(task=task, budget=budget, source=source, namespace=namespace, kind=list(kinds))
    result = ctx.call("context.pack", params)
    if as_json:
        print_json(result)
    else:
        sys.stdout.write(result["text"])
