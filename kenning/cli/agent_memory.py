"""Commands for what agents keep: `ken memory`, `ken archive` / `ken recall`, `ken ledger`,
`ken context`. Each is one daemon call (docs/protocol.md) decoded into its kenning.api
record; the same operations are MCP tools (`ken mcp`). Only click, kenning.api and the
CLI's own helpers are imported, so `ken` starts fast.
"""

from __future__ import annotations

import sys
from typing import Any

import click

from kenning import api
from kenning.cli.app import (
    Context, echo_notes, for_terminal, json_option, main, pass_context, print_json, stdin_text,
)  # fmt: skip
from kenning.text.counts import counted

_NO_BODY = "no text on standard input; pipe the capsule's body in"
_NO_ARCHIVE_TEXT = "no text on standard input; pipe the text to archive in"
# Pages of archived text asked for at a time when printing a whole archive.
RECALL_PAGE = 1_000_000


def _fields(pairs: tuple[str, ...]) -> dict[str, str]:
    """The --field pairs as an object. A name given twice is refused, as the daemon
    refuses it (names compared in lower case): kept as a dict, the last value silently
    replaced the first, and `--field hostname=db01 --field hostname=db01.lan` recorded
    one host name of two, or removed the entry named by the second."""
    fields: dict[str, str] = {}
    seen: dict[str, str] = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        name = name.strip()
        if not sep or not name:
            raise click.BadParameter(f"{pair!r} is not NAME=VALUE", param_hint="--field")
        if name.lower() in seen:
            raise click.BadParameter(
                f"{name!r} is given twice ({seen[name.lower()]!r} and {pair!r}); an entry has one value per field",
                param_hint="--field",
            )
        seen[name.lower()] = pair
        fields[name] = value
    return fields


def _given(**values: Any) -> dict[str, Any]:
    return {name: value for name, value in values.items() if value not in (None, (), [])}


# -- memory capsules -----------------------------------------------------------------------


@main.group()
def memory() -> None:
    """Memory capsules: short knowledge kept for later (facts, decisions, gotchas, ...).

    \b
    Examples:
      ken memory add --title "Billing migration window" --kind gotcha < note.md
      ken memory recall "when can I run the billing migration"
      ken memory curate --scope billing
    """


@memory.command("add")
@click.option("--title", required=True, help="What it is about; the same title in the same scope updates it.")
@click.option("--body", help="The knowledge itself (default: read from standard input).")
@click.option(
    "--kind", type=click.Choice(api.CAPSULE_KINDS), default="fact", show_default=True, help="What kind of knowledge."
)
@click.option("--scope", default="default", show_default=True, help="Project or namespace.")
@click.option("--tag", "tags", multiple=True, help="Tag (repeatable).")
@click.option(
    "--confidence",
    type=click.FloatRange(0, 1),
    default=1.0,
    show_default=True,
    help="How sure it is, 0 to 1; recall ranks a less certain capsule lower.",
)
@click.option("--source", help="Where it came from (path:line, url, archive handle).")
@click.option("--supersedes", help="Id of a capsule this one replaces.")
@click.option("--force", is_flag=True, help="Store even if a near-identical capsule of the same kind exists.")
@json_option
@pass_context
def memory_add(
    ctx: Context, title: str, body: str | None, kind: str, scope: str, tags: tuple[str, ...], confidence: float,
    source: str | None, supersedes: str | None, force: bool, as_json: bool,
) -> None:  # fmt: skip
    """Keep a capsule. A near-identical one of the same kind is refused (exit status 1).

    \b
    Examples:
      ken memory add --title "Billing migration window" --kind gotcha < note.md
      ken memory add --title "Deploy day" --kind decision --body "Deploys go out on Tuesdays."
      echo "Deploys go out on Thursdays." | ken memory add --title "Deploy day" --supersedes m-k3vq7xha
    """
    params = _given(
        title=title, body=body if body is not None else stdin_text(_NO_BODY), kind=kind, scope=scope,
        tags=list(tags), confidence=confidence, source=source, supersedes=supersedes, force=force or None,
    )  # fmt: skip
    result = ctx.fetch("memory.add", api.Remembered, params)
    if as_json:
        print_json(result)
    else:
        # Each message names the capsule: "stored as m-…", "not stored: capsule m-… says …".
        click.echo(result.message)
    if result.status == "refused":
        sys.exit(1)


@memory.command("recall")
@click.argument("query")
@click.option("--limit", "-n", default=5, show_default=True, type=click.IntRange(1, 50), help="Capsules to show.")
@click.option("--scope", help="Only capsules in this scope.")
@click.option(
    "--kind", "kinds", multiple=True, type=click.Choice(api.CAPSULE_KINDS), help="Only these kinds (repeatable)."
)
@json_option
@pass_context
def memory_recall(
    ctx: Context, query: str, limit: int, scope: str | None, kinds: tuple[str, ...], as_json: bool
) -> None:
    """The capsules most relevant to QUERY, with decay for disuse; showing them counts as a use.

    \b
    Examples:
      ken memory recall "when can I run the billing migration"
      ken memory recall deploys --scope shop --kind decision -n 3
    """
    params = _given(query=query, limit=limit, scope=scope, kind=list(kinds))
    result = ctx.fetch("memory.recall", api.Recalled, params)
    if as_json:
        print_json(result)
        return
    echo_notes(result.warnings)
    if not result.capsules:
        click.echo("no capsules match")
    for hit in result.capsules:
        _echo_capsule(hit.capsule, f"  score {hit.score:.3f}")


def _echo_capsule(capsule: api.Capsule, extra: str = "") -> None:
    heading = click.style(for_terminal(capsule.title), bold=True)
    click.echo(f"{capsule.id}  {heading}  [{capsule.kind}, {for_terminal(capsule.scope)}]{extra}")
    for line in capsule.body.splitlines():
        click.echo(f"    {for_terminal(line)}")


@memory.command("list")
@click.option("--scope", help="Only capsules in this scope.")
@click.option("--kind", type=click.Choice(api.CAPSULE_KINDS), help="Only this kind.")
@click.option("--all", "superseded", is_flag=True, help="Include superseded capsules.")
@click.option("--limit", "-n", default=50, show_default=True, type=click.IntRange(1, 500), help="Capsules to list.")
@click.option("--cursor", help="Continue after the page that printed it (with the same options).")
@json_option
@pass_context
def memory_list(
    ctx: Context, scope: str | None, kind: str | None, superseded: bool, limit: int, cursor: str | None, as_json: bool
) -> None:
    """Capsules, newest first, a page at a time.

    A page that is not the last ends with the --cursor to pass for the next one
    (`next_cursor` with --json): it goes on after that page's last capsule, so
    capsules added or forgotten meanwhile neither repeat nor skip the rest.

    \b
    Examples:
      ken memory list
      ken memory list --scope shop --kind decision --all
      ken memory list -n 20 --cursor CURSOR
    """
    params = _given(scope=scope, kind=kind, superseded=superseded or None, limit=limit, cursor=cursor)
    result = ctx.fetch("memory.list", api.CapsuleList, params)
    if as_json:
        print_json(result)
        return
    for capsule in result.capsules:
        replaced = f"  (superseded by {capsule.superseded_by})" if capsule.superseded_by else ""
        click.echo(for_terminal(f"{capsule.id}  {capsule.title}  [{capsule.kind}, {capsule.scope}]") + replaced)
    click.echo(f"{len(result.capsules)} of {counted(result.total, 'capsule')}")
    _next_page(result.next_cursor)


def _next_page(cursor: str | None) -> None:
    if cursor is not None:
        click.echo(f"next page: the same command with --cursor {cursor}")


@memory.command("show")
@click.argument("capsule_id")
@json_option
@pass_context
def memory_show(ctx: Context, capsule_id: str, as_json: bool) -> None:
    """One capsule in full, with its links (CAPSULE_ID from `ken memory list`); counts as a use.

    \b
    Examples:
      ken memory show m-k3vq7xha
    """
    capsule = ctx.fetch("memory.show", api.Capsule, {"id": capsule_id})
    if as_json:
        print_json(capsule)
        return
    _echo_capsule(capsule)
    tags = f" · tags: {for_terminal(', '.join(capsule.tags))}" if capsule.tags else ""
    click.echo(f"  confidence {capsule.confidence:g} · used {capsule.uses} times{tags}")
    if capsule.source:
        click.echo(f"  source: {for_terminal(capsule.source)}")
    if capsule.supersedes:
        click.echo(f"  replaces {capsule.supersedes}")
    if capsule.superseded_by:
        click.echo(f"  superseded by {capsule.superseded_by} (no longer found by search)")


@memory.command("forget")
@click.argument("capsule_id")
@pass_context
def memory_forget(ctx: Context, capsule_id: str) -> None:
    """Delete a capsule for good; the capsule it replaced, if any, is current again.

    \b
    Examples:
      ken memory forget m-k3vq7xha
    """
    result = ctx.fetch("memory.forget", api.Forgotten, {"id": capsule_id})
    click.echo(f"forgot {result.id} {result.title!r}")


@memory.command("curate")
@click.option("--scope", help="Only capsules in this scope.")
@json_option
@pass_context
def memory_curate(ctx: Context, scope: str | None, as_json: bool) -> None:
    """List stale capsules, likely duplicates and contradiction candidates (changes nothing).

    \b
    Examples:
      ken memory curate
      ken memory curate --scope shop --json
    """
    result = ctx.fetch("memory.curate", api.Curation, _given(scope=scope))
    if as_json:
        print_json(result)
        return
    echo_notes(result.warnings)
    click.echo(f"stale ({len(result.stale)}):")
    for entry in result.stale:
        click.echo(for_terminal(f"  {entry.id}  {entry.title}  idle {entry.idle_days:g} days, used {entry.uses} times"))
    for name, pairs in (("likely duplicates", result.duplicates), ("contradiction candidates", result.contradictions)):
        click.echo(f"{name} ({len(pairs)}):")
        for pair in pairs:
            click.echo(
                for_terminal(
                    f"  {pair.first} {pair.first_title!r} / {pair.second} {pair.second_title!r}"
                    f"  {pair.method} {pair.similarity:.2f}: {pair.reason}"
                )
            )


# -- archive and recall ----------------------------------------------------------------------


@main.group(invoke_without_command=True)
@click.option("--title", help="What it is, shown in lists and hits (default: the text's first line).")
@click.option("--tag", "tags", multiple=True, help="Tag (repeatable).")
@json_option
@click.pass_context
def archive(click_ctx: click.Context, title: str | None, tags: tuple[str, ...], as_json: bool) -> None:
    """Archive standard input whole (redacted, indexed) and print its handle; `ken recall` reads it back.

    The same text archived again is kept once: its first handle and title are printed,
    with a note naming a title or tags given now that were not recorded.

    \b
    Examples:
      pytest -x 2>&1 | ken archive --title "pytest run" --tag ci
      ken archive < build.log
      ken archive list
    """
    if click_ctx.invoked_subcommand is not None:
        return
    ctx = click_ctx.find_object(Context)
    assert ctx is not None
    params = _given(text=stdin_text(_NO_ARCHIVE_TEXT), title=title, tags=list(tags))
    result = ctx.fetch("archive.add", api.Archived, params)
    if as_json:
        print_json(result)
        return
    click.echo(f"{result.handle}  {result.title!r}  {result.chars} characters")
    if result.note:
        click.echo(result.note)
    if result.pruned:
        click.echo(f"retention pruned {len(result.pruned)} older archives: {', '.join(result.pruned)}")


@archive.command("list")
@click.option("--limit", "-n", default=50, show_default=True, type=click.IntRange(1, 500), help="Archives to list.")
@click.option("--cursor", help="Continue after the page that printed it.")
@json_option
@pass_context
def archive_list(ctx: Context, limit: int, cursor: str | None, as_json: bool) -> None:
    """Archives, newest first, a page at a time.

    A page that is not the last ends with the --cursor to pass for the next one
    (`next_cursor` with --json): archives added or pruned meanwhile neither repeat
    nor skip the rest.

    \b
    Examples:
      ken archive list
      ken archive list -n 5 --json
      ken archive list -n 5 --cursor CURSOR
    """
    result = ctx.fetch("archive.list", api.ArchiveList, _given(limit=limit, cursor=cursor))
    if as_json:
        print_json(result)
        return
    for entry in result.archives:
        click.echo(f"{entry.handle}  {entry.title!r}  {entry.bytes} bytes")
    click.echo(f"{result.total} archives, {result.total_bytes / 1e6:.1f} MB")
    _next_page(result.next_cursor)


@main.command()
@click.argument("handle")
@click.option("--offset", default=0, show_default=True, type=click.IntRange(0), help="First character.")
@click.option("--limit", type=click.IntRange(1), help="Characters to print (default: to the end).")
@click.option("--json", "as_json", is_flag=True, help="Print one page as JSON, with next_offset.")
@pass_context
def recall(ctx: Context, handle: str, offset: int, limit: int | None, as_json: bool) -> None:
    """Print archived text exactly as stored (from --offset, --limit characters).

    \b
    Examples:
      ken recall a-mfrgg3dp > pytest.log
      ken recall a-mfrgg3dp --offset 20000 --limit 4000
    """
    if as_json:
        params = {"handle": handle, "offset": offset, "limit": limit or RECALL_PAGE}
        print_json(ctx.fetch("archive.recall", api.ArchivePage, params))
        return
    remaining = limit
    position: int | None = offset
    version = None
    while position is not None and (remaining is None or remaining > 0):
        asked = min(remaining, RECALL_PAGE) if remaining is not None else RECALL_PAGE
        params = {"handle": handle, "offset": position, "limit": asked}
        # Each page after the first names the text the first was cut from: stored again
        # meanwhile, the pages printed would join two texts into one that never was.
        page = ctx.fetch("archive.recall", api.ArchivePage, params | ({"version": version} if version else {}))
        sys.stdout.write(for_terminal(page.text))
        position, version = page.next_offset, page.version
        if remaining is not None:
            remaining -= len(page.text)
    sys.stdout.flush()


# -- the facts ledger ---------------------------------------------------------------------------


@main.group()
def ledger() -> None:
    """The facts ledger: findings in sections, merged by identity (see README).

    \b
    Examples:
      ken ledger add hosts --field ip=10.9.8.7 --field hostname=db01
      ken ledger render --budget 2000
    """


@ledger.command("add")
@click.argument("section")
@click.option(
    "--field", "pairs", multiple=True, required=True,
    help="NAME=VALUE (repeatable, each name once), identity fields too.",
)  # fmt: skip
@click.option("--owner", default="agent", show_default=True, help="Who records it (kept by the first).")
@click.option("--evidence", multiple=True, help="Where it was seen: archive handle, item id, path (repeatable).")
@json_option
@pass_context
def ledger_add(
    ctx: Context, section: str, pairs: tuple[str, ...], owner: str, evidence: tuple[str, ...], as_json: bool
) -> None:
    """Record an entry in SECTION; an entry with the same identity (or an alias) is merged.

    \b
    Examples:
      ken ledger add hosts --field ip=10.9.8.7 --field hostname=db01 --evidence a-mfrgg3dp
      ken ledger add services --field host=db01 --field port=5432
      ken ledger add findings --field title="TLS 1.0 enabled" --owner scanner
    """
    params = {"section": section, "fields": _fields(pairs), "owner": owner, "evidence": list(evidence)}
    result = ctx.fetch("ledger.add", api.LedgerAdded, params)
    if as_json:
        print_json(result)
        return
    entry = result.entry
    click.echo(for_terminal(f"{entry.id}  {result.status}: {entry.section} {entry.identity}"))


@ledger.command("remove")
@click.argument("entry_id", required=False)
@click.option("--section", help="The entry's section, to name it by identity (with --field).")
@click.option(
    "--field", "pairs", multiple=True, help="NAME=VALUE identity field (repeatable, each name once), with --section."
)
@pass_context
def ledger_remove(ctx: Context, entry_id: str | None, section: str | None, pairs: tuple[str, ...]) -> None:
    """Remove an entry by id, or by --section and its identity --field values.

    \b
    Examples:
      ken ledger remove l-7dq2hxwa
      ken ledger remove --section services --field host=db01 --field port=5432
    """
    params = _given(id=entry_id, section=section, fields=_fields(pairs) if pairs else None)
    result = ctx.fetch("ledger.remove", api.LedgerRemoved, params)
    click.echo(for_terminal(f"removed {result.id}: {result.section} {result.identity}"))


@ledger.command("render")
@click.option("--budget", type=click.IntRange(200, 1_000_000), help="Bytes (default: [ledger] render_budget).")
@click.option("--section", "sections", multiple=True, help="Only this section (repeatable).")
@json_option
@pass_context
def ledger_render(ctx: Context, budget: int | None, sections: tuple[str, ...], as_json: bool) -> None:
    """Print the ledger as the text block an agent puts in its prompt.

    \b
    Examples:
      ken ledger render
      ken ledger render --budget 2000 --section hosts --section services
    """
    result = ctx.fetch("ledger.render", api.LedgerRender, _given(budget=budget, sections=list(sections)))
    if as_json:
        print_json(result)
    else:
        sys.stdout.write(for_terminal(result.text))


@ledger.command("list")
@click.option("--section", help="Only this section.")
@json_option
@pass_context
def ledger_list(ctx: Context, section: str | None, as_json: bool) -> None:
    """Every entry, with its id, owner, aliases and evidence.

    \b
    Examples:
      ken ledger list
      ken ledger list --section hosts --json
    """
    result = ctx.fetch("ledger.list", api.LedgerList, _given(section=section))
    if as_json:
        print_json(result)
        return
    for entry in result.entries:
        fields = "; ".join(f"{name}={value}" for name, value in entry.fields.items())
        click.echo(for_terminal(f"{entry.id}  {entry.section}  {entry.identity}  ({entry.owner})  {fields}"))
        if len(entry.aliases) > 1:
            click.echo(for_terminal(f"    aliases: {', '.join(entry.aliases)}"))
        if entry.evidence:
            click.echo(for_terminal(f"    evidence: {', '.join(entry.evidence)}"))


# -- context packs ---------------------------------------------------------------------------


@main.command()
@click.argument("task")
@click.option(
    "--budget",
    default=16_000,
    show_default=True,
    type=click.IntRange(500, 2_000_000),
    help="Most bytes the pack may take.",
)
@click.option("--source", help="Only this source (see `ken sources list`).")
@click.option("--namespace", help="Only sources and documents in this namespace.")
@click.option(
    "--kind",
    "kinds",
    multiple=True,
    type=click.Choice(api.DOCUMENT_KINDS),
    help="Only these kinds of document (repeatable).",
)
@json_option
@pass_context
def context(
    ctx: Context, task: str, budget: int, source: str | None, namespace: str | None, kinds: tuple[str, ...],
    as_json: bool,
) -> None:  # fmt: skip
    """Print what to put in a prompt for TASK: relevant documents whole, under --budget bytes.

    \b
    Examples:
      ken context "when is the pager handed over"
      ken context "rotate the signing key" --budget 4000 --source notes
      ken context "billing migration" --kind capsule --kind ledger
    """
    params = _given(task=task, budget=budget, source=source, namespace=namespace, kind=list(kinds))
    result = ctx.fetch("context.pack", api.ContextPack, params)
    if as_json:
        print_json(result)
    else:
        echo_notes(result.warnings)
        sys.stdout.write(for_terminal(result.text))
