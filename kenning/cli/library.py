"""Commands that read and add to the library: search, show, get, open, entities, agent text, pages."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path
from typing import Any

import click

from kenning import api
from kenning.cli.app import (
    Context, echo_notes, for_terminal, json_option, main, pass_context, print_json, stdin_text,
)  # fmt: skip
from kenning.client import PAGE_WAIT_MARGIN, page_wait
from kenning.errors import DaemonTimeout, KenningError, RpcError
from kenning.text.controls import escaped
from kenning.text.counts import counted

NOT_FOUND = -32001  # docs/protocol.md
INVALID_PARAMS = -32602

# What `ken add-url` says it was waiting for when the daemon stopped answering, by the
# last stage the daemon reported for the page (docs/protocol.md, `progress`).
_STALLED_AT = {
    None: "no answer from the daemon within {waited:g} s",
    "queued": "no word from the daemon for {waited:g} s while the page waited for a fetch worker",
    "fetching": "no answer from the daemon within {waited:g} s of its starting the fetch",
    "reading": "no answer from the daemon within {waited:g} s of its starting to read the page",
}

# Formats whose line numbers are the file's own: an editor opens them at a cited line.
# PDF, DOCX and HTML are cited in the text kenning extracted (`ken get` shows it).
FILE_LINE_FORMATS = frozenset({"markdown", "code", "data", "text"})


def one_line(text: str) -> str:
    """Control characters as escapes (`\\n`, `\\x1b`). A file name may hold a newline,
    and a title read from a file or a page anything: printed raw, it would make a line
    of its own, which `vim -q <(ken search X --format paths)` reads as another hit, or
    reach the terminal as an escape sequence."""
    return escaped(text)


@main.command()
@click.argument("query")
@click.option("--limit", "-n", default=10, show_default=True, type=click.IntRange(1, 200), help="Hits to show.")
@click.option("--source", help="Only this source (see `ken sources list`).")
@click.option("--namespace", help="Only sources and documents in this namespace.")
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
@click.option(
    "--since",
    metavar="DATE",
    help="Only text dated from DATE on, or by a year or quarter reaching it (YYYY, YYYY-MM or YYYY-MM-DD;"
    " years 1900-2199).",
)
@click.option(
    "--until",
    metavar="DATE",
    help="Only text dated up to DATE, inclusive (YYYY, YYYY-MM or YYYY-MM-DD; years 1900-2199).",
)
@click.option(
    "--explain",
    is_flag=True,
    help="Show each leg's rank for every hit, and why it moved (date, correction, floor...); when nothing"
    " supports an answer, the best hits held back.",
)
@click.option(
    "--format",
    "output",
    type=click.Choice(["text", "json", "md", "paths"]),
    default="text",
    show_default=True,
    help="text: for reading; json: the daemon's answer; md: a Markdown list with citations;"
    " paths: one `path:line: title` per hit (grep -n's shape, which editors' quickfix lists read).",
)
@click.option("--json", "as_json", is_flag=True, help="Same as --format json.")
@pass_context
def search(
    ctx: Context,
    query: str,
    limit: int,
    source: str | None,
    namespace: str | None,
    legs: tuple[str, ...],
    kinds: tuple[str, ...],
    since: str | None,
    until: str | None,
    explain: bool,
    output: str,
    as_json: bool,
) -> None:
    """Search the library; each hit cites its file, section and lines.

    Put words in double quotes to match them as a phrase. A hit corrected, retracted or
    contradicted by another says so; questions about "now" prefer the newest text, and
    ones naming a period ("in 2025") prefer text dated in it.

    \b
    Examples:
      ken search "how do I rotate the signing key"
      ken search launchd --source notes -n 3
      ken search '"git switch"' --since 2025       # a phrase, in text dated 2025 or later
      ken search "retry policy" --format paths     # path:line, one per hit
      vim -q <(ken search retry --format paths)    # hits as a quickfix list
    """
    params: dict[str, Any] = {"query": query, "limit": limit}
    # An empty filter (a script's unset variable) is the daemon's to refuse: taken for
    # no filter, it would search the whole library without a word.
    # What a shell hands over may carry a space ("--since ' 2025'"); the daemon takes none.
    since, until = (value.strip() if value is not None else None for value in (since, until))
    filters = {"source": source, "namespace": namespace, "since": since, "until": until}
    params.update((key, value) for key, value in filters.items() if value is not None)
    if legs:
        params["legs"] = list(legs)
    if kinds:
        params["kind"] = list(kinds)
    result = ctx.fetch("search", api.SearchResult, params)
    output = "json" if as_json else output
    if output == "json":
        print_json(result)
        return
    echo_notes(result.warnings)
    if output == "paths":
        for hit in result.hits:
            click.echo(f"{one_line(hit.path)}:{hit.line_start}: {one_line(hit.title)}{_section(hit)}")
        return
    if not result.hits:
        click.echo("no matches", err=output == "md")
        if result.abstained:
            why = result.abstained if explain else "some text matched, but nothing supports an answer"
            if result.withheld and not explain and output == "text":
                why += f"; --explain shows the {len(result.withheld)} best it held back"
            click.echo(f"  ({why})", err=output == "md")
        if explain and output == "text" and result.withheld:
            click.echo("held back:")
            numbers = {hit.item_id: rank for rank, hit in enumerate(result.withheld, start=1)}
            for rank, hit in enumerate(result.withheld, start=1):
                _text_hit(rank, hit, numbers, explain)
        return
    numbers = {hit.item_id: rank for rank, hit in enumerate(result.hits, start=1)}
    for rank, hit in enumerate(result.hits, start=1):
        if output == "md":
            _markdown_hit(rank, hit, numbers)
        else:
            _text_hit(rank, hit, numbers, explain)


def _section(hit: api.Hit) -> str:
    return f" — {one_line(hit.section)}" if hit.section else ""


def _text_hit(rank: int, hit: api.Hit, numbers: dict[int, int], explain: bool) -> None:
    click.echo(f"{rank:>2}. {click.style(one_line(hit.title), bold=True)}{_section(hit)}")
    where = click.style(f"{one_line(hit.path)}:{hit.line_start}", fg="cyan")
    dated = f"  {hit.date}" if hit.date else ""
    legs = f"{'+'.join(hit.legs)} " if hit.legs else ""
    click.echo(
        f"    {where}  lines {hit.line_start}-{hit.line_end}  [{hit.source}]{dated}"
        f"  {legs}{hit.score:.4f}  item {hit.item_id}"
    )
    if hit.copy:
        click.echo(f"    open this copy: {_open_copy(hit)}")
    for note in _truth_notes(hit, numbers):
        click.echo("    " + click.style(note, fg="yellow"))
    if explain:
        # A notice found by what it names (retrieval/notices.py) was ranked by no leg.
        if hit.ranks:
            click.echo("    ranks: " + ", ".join(f"{leg} #{position}" for leg, position in hit.ranks.items()))
        for reason in hit.reasons:
            # A reason may quote a path or a name from the library ("named by the hit
            # above it (PATH:3-9)"): escaped like the title and path above it.
            click.echo(f"    moved: {one_line(reason)}")
    click.echo("    " + _highlight(one_line(" ".join(hit.snippet.split()))))


def _markdown_hit(rank: int, hit: api.Hit, numbers: dict[int, int]) -> None:
    click.echo(f"{rank}. **{one_line(hit.title)}**{_section(hit)}  ")
    dated = f" · {hit.date}" if hit.date else ""
    where = f"{one_line(hit.path)}:{hit.line_start}-{hit.line_end}"
    opens = f" (`{_open_copy(hit)}`)" if hit.copy else ""
    click.echo(f"   `{where}` · {hit.source}{dated} · item {hit.item_id}{opens}  ")
    for note in _truth_notes(hit, numbers):
        click.echo(f"   _{note}_  ")
    click.echo(f"   {one_line(' '.join(hit.snippet.split()))}")


def _open_copy(hit: api.Hit) -> str:
    """The command that opens the file a hit cites when that file is a copy: the item id
    alone names the file of the source that stored the text (`ken open --source`)."""
    return f"ken open {hit.item_id} --source {hit.source}"


def _truth_notes(hit: api.Hit, numbers: dict[int, int]) -> list[str]:
    def name(item_id: int) -> str:
        return f"#{numbers[item_id]}" if item_id in numbers else f"item {item_id}"

    notes = []
    if hit.retracted_by is not None:
        notes.append(f"retracted by {name(hit.retracted_by)}")
    if hit.superseded_by is not None:
        notes.append(f"superseded by {name(hit.superseded_by)}")
    if hit.conflicts_with:
        notes.append("disagrees with " + ", ".join(name(other) for other in hit.conflicts_with))
    for other in hit.also_at:
        notes.append(f"same text in {one_line(other.path)}:{other.line_start}-{other.line_end}")
    return notes


def _highlight(snippet: str) -> str:
    parts = snippet.split("**")
    return "".join(click.style(part, bold=True) if index % 2 else part for index, part in enumerate(parts))


def source_option(action: str) -> Any:
    """`--source NAME`: text two sources hold is stored once, under one item id, so the
    item names no file; the source names the copy to cite or open."""
    return click.option(
        "--source",
        metavar="NAME",
        help=f"{action} the copy this source holds (the [NAME] a hit or `held by:` shows): text two folders"
        " hold is stored once, under one item id. Default: the source that stored it.",
    )


def with_source(params: dict[str, Any], source: str | None) -> dict[str, Any]:
    return params if source is None else {**params, "source": source}


@main.command()
@click.argument("item_id", type=int)
@click.option(
    "--context", "-C", "context", type=click.IntRange(0, 10_000), help="Also show N lines before and after the chunk."
)
@source_option("Cite")
@json_option
@pass_context
def show(ctx: Context, item_id: int, context: int | None, source: str | None, as_json: bool) -> None:
    """Print one indexed chunk in full (ITEM_ID from `ken search`), with its citation and,
    when several sources hold the same text, each of their files.

    \b
    Examples:
      ken show 1234
      ken show 1234 --context 20     # the lines around it, numbered; the chunk is marked
      ken show 1234 --source backup  # cited in the backup folder's copy of the file
    """
    item = ctx.fetch("documents.get", api.Fetched, with_source({"item_id": item_id}, source)).item
    assert item is not None
    around = None
    if context is not None:
        params = {
            "document_id": item.document_id,
            "line_start": max(item.line_start - context, 1),
            "line_end": item.line_end + context,
        }
        around = ctx.fetch("documents.read", api.DocumentText, with_source(params, source))
    if as_json:
        print_json({"item": item, "context": around} if around is not None else item)
        return
    section = f" — {one_line(item.section)}" if item.section else ""
    click.echo(click.style(one_line(item.title), bold=True) + section)
    click.echo(
        click.style(f"{one_line(item.path)}:{item.line_start}", fg="cyan")
        + f"  lines {item.line_start}-{item.line_end}  [{item.source}]"
    )
    if item.format not in FILE_LINE_FORMATS:
        click.echo(f"(line numbers count in the text kenning extracted from this {item.format}; `ken get` shows it)")
    if len(item.locations) > 1:
        click.echo("held by:")
        for location in item.locations:
            click.echo(f"  [{location.source}] {one_line(location.path)}")
    click.echo()
    if around is None:
        click.echo(for_terminal(item.content))
        return
    _numbered(around, marked=(item.line_start, item.line_end))


def _numbered(text: api.DocumentText, marked: tuple[int, int] | None = None) -> None:
    width = len(str(text.line_end))
    for number, line in enumerate(text.lines, start=text.line_start):
        inside = marked is not None and marked[0] <= number <= marked[1]
        gutter = f"{number:>{width}}{'>' if inside else ' '} "
        click.echo(click.style(gutter, fg="cyan" if inside else None, dim=not inside) + for_terminal(line))


def _line_range(value: str | None) -> tuple[int, int | None]:
    if value is None:
        return 1, None
    match = re.fullmatch(r"(\d+)(?:-(\d*))?", value.strip())
    if not match or int(match.group(1)) < 1:
        raise click.BadParameter(f"{value!r} is not a line range; write A-B, A- or A (lines count from 1)")
    start = int(match.group(1))
    if match.group(2) is None:
        return start, start
    end = int(match.group(2)) if match.group(2) else None
    if end is not None and end < start:
        raise click.BadParameter(f"{value!r} ends before it starts")
    return start, end


def _target(value: str) -> dict[str, Any]:
    """A document as the user names it: a file path, a document id, or a uri."""
    if "://" in value:
        return {"uri": value}
    if value.isdigit() and not os.path.exists(value):
        return {"document_id": int(value)}
    return {"path": os.path.abspath(os.path.expanduser(value))}


@main.command()
@click.argument("document")
@click.option("--lines", "lines", metavar="A-B", help="Only these lines (A-B, A- to the end, or one line A).")
@click.option(
    "--numbers/--no-numbers",
    default=None,
    help="Number the lines (default: when printing to a terminal).",
)
@json_option
@pass_context
def get(ctx: Context, document: str, lines: str | None, numbers: bool | None, as_json: bool) -> None:
    """Print a document's text as kenning indexed it: the text that citations' lines count in.

    DOCUMENT is a file path, a document id (from `ken search --json` or `ken show`) or the
    uri of agent text or a fetched page. For PDF, DOCX and HTML this is the extracted text,
    which is where their line numbers point.

    \b
    Examples:
      ken get ~/notes/setup.md --lines 40-80
      ken get ~/papers/report.pdf --lines 120-   # from line 120 to the end
      ken get 57                                 # document 57
      ken get agent://meeting/2024-05-02
    """
    start, end = _line_range(lines)
    target = _target(document)
    params = {"line_start": start} if end is None else {"line_start": start, "line_end": end}
    try:
        text = ctx.fetch("documents.read", api.DocumentText, {**target, **params})
    except RpcError as exc:
        # Agent uris need not look like URLs; a name that is no file may be one.
        if exc.code != NOT_FOUND or "path" not in target or os.path.exists(document):
            raise
        text = ctx.fetch("documents.read", api.DocumentText, {"uri": document, **params})
    if as_json:
        print_json(text)
        return
    terminal = sys.stdout.isatty()
    if terminal:
        note = "" if text.format in FILE_LINE_FORMATS else f" · text extracted from {text.format}"
        click.echo(
            click.style(
                f"{one_line(text.title)} · {one_line(text.path)} · lines {text.line_start}-{text.line_end}"
                f" of {text.last_line}{note}",
                dim=True,
            ),
            err=True,
        )
        # Other folders' copies of the file, stored once: as a search hit names them.
        for place in text.locations:
            if place.path != text.path:
                click.echo(click.style(f"same text in {one_line(place.path)} [{place.source}]", dim=True), err=True)
    if numbers if numbers is not None else terminal:
        _numbered(text)
    else:
        for line in text.lines:
            click.echo(for_terminal(line))


# Editors that take `+LINE FILE` (vi, vim, nvim, nano, emacs, micro, kak, helix) are the
# default; these take the line some other way.
_GOTO_FLAG = {"code", "code-insiders", "codium", "cursor", "windsurf"}  # --goto FILE:LINE
_COLON_LINE = {"subl", "zed", "hx", "helix", "mate"}  # FILE:LINE


def _editor() -> str | None:
    """$VISUAL, else $EDITOR: the first that names a command. One of spaces is as good as
    unset, as an empty one is; it hid the other and left nothing to run."""
    for name in ("VISUAL", "EDITOR"):
        value = os.environ.get(name, "")
        if value.strip():
            return value
    return None


def editor_command(editor: str, path: str, line: int) -> list[str]:
    import shlex

    try:
        words = shlex.split(editor)
    except ValueError as exc:
        raise KenningError(f"cannot read $VISUAL/$EDITOR {one_line(editor)!r} as a command: {exc}") from None
    name = Path(words[0]).name
    if name in _GOTO_FLAG:
        return [*words, "--goto", f"{path}:{line}"]
    if name in _COLON_LINE:
        return [*words, f"{path}:{line}"]
    return [*words, f"+{line}", path]


@main.command("open")
@click.argument("item_id", type=int)
@source_option("Open")
@pass_context
def open_item(ctx: Context, item_id: int, source: str | None) -> None:
    """Open the file a hit cites in $VISUAL or $EDITOR, at the hit's first line.

    Text two folders hold is stored once, under one item id: without --source this opens
    the file of the source that stored it (or, when that file is gone, another copy); a
    search scoped to another source cites that source's copy, and prints the `ken open
    ITEM --source NAME` that opens it.

    \b
    Examples:
      ken open 1234
      ken open 1234 --source backup  # the backup folder's copy of the file
      EDITOR="code" ken open 1234    # VS Code: --goto FILE:LINE
    """
    item = ctx.fetch("documents.get", api.Fetched, with_source({"item_id": item_id}, source)).item
    assert item is not None
    # Text two folders hold is cited in the first that had it; when that copy is gone
    # (its drive unmounted, its folder taken out of the config), another holds the same
    # lines. A copy asked for by its source is that file or nothing: the user is about
    # to edit it.
    places = (item.path,) if source is not None else (item.path, *(where.path for where in item.locations))
    path = next((place for place in places if os.path.isfile(place)), item.path)
    if item.format not in FILE_LINE_FORMATS or path.endswith(".gz") or not os.path.isfile(path):
        what = f"a {item.format} file" if os.path.isfile(path) else "not a file on this machine"
        raise KenningError(
            f"item {item_id} is in {path}, {what}: its lines count in the extracted text;"
            f" read them with `ken get {item.document_id} --lines {item.line_start}-{item.line_end}`"
        )
    editor = _editor()
    if editor is None:
        raise KenningError(f"set $VISUAL or $EDITOR to open files; the hit is at {path}:{item.line_start}")
    import subprocess

    command = editor_command(editor, path, item.line_start)
    try:
        status = subprocess.call(command)
    except FileNotFoundError:
        raise KenningError(f"cannot run the editor {command[0]!r} (from $VISUAL/$EDITOR)") from None
    except OSError as exc:
        # A folder, a file without execute permission, one that is no program.
        why = exc.strerror or exc
        raise KenningError(f"cannot run the editor {command[0]!r} (from $VISUAL/$EDITOR): {why}") from None
    if status:
        raise KenningError(f"{command[0]} exited with status {status}")


@main.command()
@click.argument("query")
@click.option("--limit", "-n", default=10, show_default=True, type=click.IntRange(1, 100), help="Entities to show.")
@json_option
@pass_context
def entities(ctx: Context, query: str, limit: int, as_json: bool) -> None:
    """List entities matching QUERY, with their relations and the chunks that mention them.

    \b
    Examples:
      ken entities kafka
      ken entities "Ada Lovelace" --json
    """
    result = ctx.fetch("entities", api.Entities, {"query": query, "limit": limit})
    if as_json:
        print_json(result)
        return
    if not result.entities:
        click.echo("no matching entities")
        return
    for entity in result.entities:
        # Names are the library's text as written (a code identifier may hold an escape
        # sequence): escaped, so each stays on its line and none reaches the terminal raw.
        aliases = f" (also: {one_line(', '.join(entity.aliases))})" if entity.aliases else ""
        click.echo(
            click.style(one_line(entity.name), bold=True)
            + f"  {one_line(entity.kind)} · {counted(entity.mentions, 'chunk')}{aliases}"
        )
        for relation in entity.relations[:10]:
            arrow = "→" if relation.direction == "out" else "←"
            times = f", {relation.chunks} chunks" if relation.chunks > 1 else ""
            click.echo(f"  {arrow} {one_line(relation.kind)} {one_line(relation.other)}  (item {relation.item_id}{times})")
        for chunk in entity.chunks:
            where = f"{one_line(chunk.path)}:{chunk.line_start}-{chunk.line_end}"
            click.echo(f"  · {click.style(where, fg='cyan')}  [{chunk.source}]  item {chunk.item_id}")


@main.command("add-text")
@click.option(
    "--uri", required=True, help="Identity label of the document (never opened; not a file path); same URI replaces it."
)
@click.option("--title", required=True, help="The document's title, shown in hits.")
@click.option("--tag", "tags", multiple=True, help="Tag (repeatable).")
@click.option("--namespace", help="Namespace for this document (default: the agent source's).")
@click.option(
    "--date", metavar="DATE", help="The date the text speaks from (YYYY, YYYY-MM or YYYY-MM-DD; years 1900-2199)."
)
@click.option(
    "--supersedes", "supersedes", multiple=True, metavar="URI",
    help="A document this one replaces: its URI, a page URL or a file path, not a kenning:// record (repeatable).",
)  # fmt: skip
@json_option
@pass_context
def add_text(
    ctx: Context,
    uri: str,
    title: str,
    tags: tuple[str, ...],
    namespace: str | None,
    date: str | None,
    supersedes: tuple[str, ...],
    as_json: bool,
) -> None:
    """Add a document from standard input to the `agent` source, as an agent would.

    \b
    Examples:
      ken add-text --uri notes://standup/2024-05-02 --title "Stand-up" < standup.md
      pbpaste | ken add-text --uri clip://1 --title "Clipboard" --tag scratch
      ken add-text --uri notes://plan --title "Plan v2" --date 2026-11 --supersedes notes://plan-v1 < plan.md
    """
    text = stdin_text("no text on standard input; pipe the document in: ken add-text --uri U --title T < file")
    params: dict[str, Any] = {"title": title, "text": text, "source_uri": uri, "tags": list(tags)}
    # An empty value goes to the daemon, which refuses it: dropped, the text would be
    # dated when it was added, or land in the default namespace.
    if namespace is not None:
        params["namespace"] = namespace
    if date is not None:
        params["date"] = date
    if supersedes:
        params["supersedes"] = list(supersedes)
    result = ctx.fetch("documents.add", api.AddedDocument, params)
    if as_json:
        print_json(result)
        return
    click.echo(_stored_line(result))


def _stored_line(result: api.AddedDocument) -> str:
    if result.stored == "merged":
        return (
            f"document {result.document_id} {result.title!r}: same text is already stored; recorded as another location"
        )
    return f"document {result.document_id} {result.title!r}: {counted(result.chunks, 'chunk')} indexed"


@main.command("remove")
@click.argument("uri")
@json_option
@pass_context
def remove_text(ctx: Context, uri: str, as_json: bool) -> None:
    """Remove a document added by `ken add-text` (or an agent) by its URI, or a fetched
    page by its URL, or either by the URI `ken search` shows when a credential in it was
    redacted. A folder's file leaves the index when it is deleted or ignored.

    \b
    Examples:
      ken remove notes://standup/2024-05-02
      ken remove https://docs.python.org/3/library/asyncio-task.html
    """
    result = ctx.fetch("documents.remove", api.RemovedDocument, {"uri": uri})
    if as_json:
        print_json(result)
        return
    click.echo(f"removed document {result.document_id} {result.title!r} ({one_line(result.uri)})")


def url_wait_option(function):
    return click.option(
        "--timeout",
        type=click.FloatRange(0, min_open=True),
        metavar="SECONDS",
        help="How long to wait for each step of the daemon's own work on the page (fetching it; reading and"
        " storing it). Time spent waiting for a fetch worker behind other pages does not count while the daemon"
        " keeps saying the page is queued (every 5 s; no word for SECONDS, at least 15, ends the wait)."
        " Default: [fetch] timeout + [limits] parse_timeout"
        f" + {PAGE_WAIT_MARGIN:g} s (180 s with the default config).",
    )(function)


def _page_call(ctx: Context, method: str, url: str, timeout: float | None, doing: str) -> api.AddedDocument:
    """Waits as long as the daemon's own limits let its work on the page run, so a
    stalled daemon cannot keep the command waiting forever; a page queued behind a burst
    of others is waited for while the daemon says it is queued, so a script adding fifty
    pages at once sees them all added. The daemon goes on with a request its client gave
    up on, so the message says the page may still arrive."""
    if timeout is None:
        timeout = page_wait(ctx.settings)
    try:
        try:
            return ctx.fetch(method, api.AddedDocument, {"url": url}, timeout=timeout, progress=True)
        except RpcError as exc:
            # A daemon from before `progress` (upgraded, not yet restarted) refuses the
            # param and does nothing: asked the old way, it is waited for the old way.
            if exc.code != INVALID_PARAMS or not str(exc).startswith("progress:"):
                raise
            return ctx.fetch(method, api.AddedDocument, {"url": url}, timeout=timeout)
    except DaemonTimeout as exc:
        shown = one_line(url)
        stalled = _STALLED_AT.get(exc.stage, _STALLED_AT[None]).format(waited=exc.waited or timeout)
        raise DaemonTimeout(
            f"{stalled}; it may still be {doing} {shown}."
            f" `ken get {shown}` shows the page once it is indexed; `ken status` shows whether the daemon"
            " answers, and its log why a page failed. --timeout waits longer"
        ) from None


@main.command("add-url")
@click.argument("url")
@url_wait_option
@json_option
@pass_context
def add_url(ctx: Context, url: str, timeout: float | None, as_json: bool) -> None:
    """Fetch a web page (its host must be in [fetch] allowed_hosts) and index it.

    \b
    Examples:
      ken add-url https://docs.python.org/3/library/asyncio-task.html
      ken add-url --timeout 600 https://example.com/slow-server.html
    """
    result = _page_call(ctx, "urls.add", url, timeout, "fetching and adding")
    if as_json:
        print_json(result)
        return
    click.echo(_stored_line(result))


@main.command("refresh-url")
@click.argument("url")
@url_wait_option
@json_option
@pass_context
def refresh_url(ctx: Context, url: str, timeout: float | None, as_json: bool) -> None:
    """Fetch an added page again (conditional GET) and re-index it if it changed.

    \b
    Examples:
      ken refresh-url https://docs.python.org/3/library/asyncio-task.html
    """
    result = _page_call(ctx, "urls.refresh", url, timeout, "fetching and updating")
    if as_json:
        print_json(result)
        return
    if not result.changed:
        click.echo(f"document {result.document_id} {result.title!r}: not modified")
    else:
        click.echo(_stored_line(result))
