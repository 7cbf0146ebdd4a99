"""Commands that read and add to the library: search, show, entities, agent text, pages."""

from __future__ import annotations

from typing import Any

import click

from kenning.cli.app import Context, main, pass_context, print_json
from kenning.errors import KenningError


@main.command()
@click.argument("query")
@click.option("--limit", "-n", default=10, show_default=True, type=click.IntRange(1, 200), help="Hits to show.")
@click.option("--source", help="Only this source.")
@click.option("--namespace", help="Only sources in this namespace.")
@click.option(
    "--leg",
    "legs",
    multiple=True,
    type=click.Choice(["keyword", "vector", "graph"]),
    help="Run only these retrieval legs (repeatable; default: all).",
)
@click.option(
    "--kind",
    "kinds",
    multiple=True,
    type=click.Choice(["file", "page", "agent", "capsule", "archive", "ledger"]),
    help="Only these kinds of document (repeatable): folder files, fetched pages, agent text, capsules, ...",
)
@click.option("--explain", is_flag=True, help="Show each leg's rank for every hit.")
@click.option("--json", "as_json", is_flag=True, help="Print {\"hits\": [...]} as JSON.")
@pass_context
def search(
    ctx: Context,
    query: str,
    limit: int,
    source: str | None,
    namespace: str | None,
    legs: tuple[str, ...],
    kinds: tuple[str, ...],
    explain: bool,
    as_json: bool,
) -> None:
    """Search the library; each hit cites its file, section and lines."""
    params: dict[str, Any] = {"query": query, "limit": limit}
    if source:
        params["source"] = source
    if namespace:
        params["namespace"] = namespace
    if legs:
        params["legs"] = list(legs)
    if kinds:
        params["kind"] = list(kinds)
    result = ctx.call("search", params)
    if as_json:
        print_json(result)
        return
    for warning in result.get("warnings", []):
        click.echo(click.style(f"note: {warning}", fg="yellow"), err=True)
    hits = result["hits"]
    if not hits:
        click.echo("no matches")
        return
    for rank, hit in enumerate(hits, start=1):
        heading = click.style(hit["title"], bold=True)
        if hit["section"]:
            heading += " — " + hit["section"]
        click.echo(f"{rank:>2}. {heading}")
        where = f"{hit['path']}:{hit['line_start']}-{hit['line_end']}"
        found_by = "+".join(hit["legs"])
        click.echo(
            f"    {click.style(where, fg='cyan')}  [{hit['source']}]  {found_by} {hit['score']:.4f}  item {hit['item_id']}"
        )
        if explain:
            ranks = ", ".join(f"{leg} #{position}" for leg, position in hit["ranks"].items())
            click.echo(f"    ranks: {ranks}")
        click.echo("    " + _highlight(" ".join(hit["snippet"].split())))


def _highlight(snippet: str) -> str:
    parts = snippet.split("**")
    return "".join(click.style(part, bold=True) if index % 2 else part for index, part in enumerate(parts))


@main.command()
@click.argument("item_id", type=int)
@click.option("--json", "as_json", is_flag=True)
@pass_context
def show(ctx: Context, item_id: int, as_json: bool) -> None:
    """Print one indexed chunk in full, with its citation."""
    item = ctx.call("documents.get", {"item_id": item_id})["item"]
    if as_json:
        print_json(item)
        return
    where = f"{item['path']}:{item['line_start']}-{item['line_end']}"
    click.echo(click.style(item["title"], bold=True) + (f" — {item['section']}" if item["section"] else ""))
    click.echo(click.style(where, fg="cyan") + f"  [{item['source']}]")
    if len(item["locations"]) > 1:
        click.echo("held by:")
        for location in item["locations"]:
            click.echo(f"  [{location['source']}] {location['path']}")
    click.echo()
    click.echo(item["content"])


@main.command()
@click.argument("query")
@click.option("--limit", "-n", default=10, show_default=True, type=click.IntRange(1, 100))
@click.option("--json", "as_json", is_flag=True)
@pass_context
def entities(ctx: Context, query: str, limit: int, as_json: bool) -> None:
    """List entities matching QUERY, with their relations and the chunks that mention them."""
    result = ctx.call("entities", {"query": query, "limit": limit})
    if as_json:
        print_json(result)
        return
    if not result["entities"]:
        click.echo("no matching entities")
        return
    for entity in result["entities"]:
        aliases = f" (also: {', '.join(entity['aliases'])})" if entity["aliases"] else ""
        click.echo(
            click.style(entity["name"], bold=True) + f"  {entity['kind']} · {entity['mentions']} chunks{aliases}"
        )
        for relation in entity["relations"][:10]:
            arrow = "→" if relation["direction"] == "out" else "←"
            times = f", {relation['chunks']} chunks" if relation["chunks"] > 1 else ""
            click.echo(f"  {arrow} {relation['kind']} {relation['other']}  (item {relation['item_id']}{times})")
        for chunk in entity["chunks"]:
            where = f"{chunk['path']}:{chunk['line_start']}-{chunk['line_end']}"
            click.echo(f"  · {click.style(where, fg='cyan')}  [{chunk['source']}]  item {chunk['item_id']}")


@main.command("add-text")
@click.option("--uri", required=True, help="Identity label of the document (never opened); same URI replaces it.")
@click.option("--title", required=True)
@click.option("--tag", "tags", multiple=True, help="Tag (repeatable).")
@click.option("--namespace", help="Namespace for this document (default: the agent source's).")
@click.option("--json", "as_json", is_flag=True)
@pass_context
def add_text(ctx: Context, uri: str, title: str, tags: tuple[str, ...], namespace: str | None, as_json: bool) -> None:
    """Add a document from standard input to the `agent` source, as an agent would."""
    text = click.get_text_stream("stdin").read()
    if not text.strip():
        raise KenningError("no text on standard input; pipe the document in: ken add-text --uri U --title T < file")
    params: dict[str, Any] = {"title": title, "text": text, "source_uri": uri, "tags": list(tags)}
    if namespace:
        params["namespace"] = namespace
    result = ctx.call("documents.add", params)
    if as_json:
        print_json(result)
        return
    click.echo(_stored_line(result))


def _stored_line(result: dict) -> str:
    if result["stored"] == "merged":
        return f"document {result['document_id']} {result['title']!r}: same text is already stored; recorded as another location"
    return f"document {result['document_id']} {result['title']!r}: {result['chunks']} chunks indexed"


@main.command("add-url")
@click.argument("url")
@click.option("--json", "as_json", is_flag=True, help="Print the stored document's id and title as JSON.")
@pass_context
def add_url(ctx: Context, url: str, as_json: bool) -> None:
    """Fetch a web page (its host must be in [fetch] allowed_hosts) and index it."""
    result = ctx.call("urls.add", {"url": url}, timeout=None)
    if as_json:
        print_json(result)
        return
    click.echo(_stored_line(result))


@main.command("refresh-url")
@click.argument("url")
@click.option("--json", "as_json", is_flag=True)
@pass_context
def refresh_url(ctx: Context, url: str, as_json: bool) -> None:
    """Fetch an added page again (conditional GET) and re-index it if it changed."""
    result = ctx.call("urls.refresh", {"url": url}, timeout=None)
    if as_json:
        print_json(result)
        return
    if not result["changed"]:
        click.echo(f"document {result['document_id']} {result['title']!r}: not modified")
    else:
        click.echo(_stored_line(result))
