"""The agent's own tools: memory capsules, archive and recall by handle, the facts
ledger, and context packs, each a pass-through to one daemon method (docs/protocol.md).

Reading tools are always offered; the ones that write (remember, forget, archive,
ledger_add, ledger_remove) only with `[mcp] memory = true`, the default. They write to
kenning's memory, archive and ledger sources only, never to the user's own documents.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from mcp.server.mcpserver import MCPServer
from mcp.types import CallToolResult, ToolAnnotations
from pydantic import Field

from kenning.mcp.agent_models import (
    ArchivePage,
    Archived,
    ContextPack,
    Forgotten,
    LedgerAdded,
    LedgerRemoved,
    LedgerRender,
    Recalled,
    Remembered,
)
from kenning.mcp.calls import DaemonCalls, answer

READ_ONLY = ToolAnnotations(read_only_hint=True, open_world_hint=False)
ADDS = ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False)
# A recall counts as a use of what it returns (its rank stops decaying): a write, not a destructive one.
USES = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=False)
REMOVES = ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=True, open_world_hint=False)

CapsuleKind = Literal["fact", "decision", "gotcha", "pattern", "anti-pattern", "recipe", "principle"]
DocumentKind = Literal["file", "page", "agent", "capsule", "archive", "ledger"]
Scope = Annotated[str, Field(min_length=1, max_length=64, description="project or namespace; default 'default'")]
Fields = Annotated[
    dict[str, str | int | float],
    Field(min_length=1, max_length=32, description="the entry's fields, identity fields included"),
]
LEDGER_SECTIONS = (
    "credentials (account + host, or account + url), findings (title), decisions (subject), next_steps (text),"
    " hosts (ip, or hostname), services (host + port), paths (path), urls (url)"
)


def _given(**values: Any) -> dict[str, Any]:
    return {name: value for name, value in values.items() if value is not None}


def register(server: MCPServer, daemon: DaemonCalls, allow_memory: bool) -> None:
    @server.tool(annotations=USES)
    async def recall_memory(
        query: Annotated[str, Field(min_length=1, max_length=4000, description="the task or question at hand")],
        limit: Annotated[int, Field(ge=1, le=50)] = 5,
        scope: Scope | None = None,
        kind: Annotated[list[CapsuleKind] | None, Field(description="only capsules of these kinds")] = None,
    ) -> Annotated[CallToolResult, Recalled]:
        """Recall memory capsules (facts, decisions, gotchas, patterns, recipes ... kept with
        `remember`) relevant to a task, best first. Ranking is relevance, lowered for capsules
        long unused or unchanged; being recalled counts as a use. Superseded capsules never
        come back. Check it before starting a task."""
        params = _given(query=query, limit=limit, scope=scope, kind=kind)
        return answer(Recalled.model_validate(await daemon("memory.recall", params)))

    @server.tool(annotations=READ_ONLY)
    async def recall(
        handle: Annotated[str, Field(min_length=1, max_length=40, description="an archive handle, a-...")],
        offset: Annotated[int, Field(ge=0, description="first character to return")] = 0,
        limit: Annotated[int, Field(ge=1, le=1_000_000, description="characters to return")] = 20_000,
        version: Annotated[
            str | None,
            Field(
                min_length=1, max_length=64,
                description="the `version` of an earlier page of this archive: an error if it holds another text"
                " since, so the pages you join are one text",
            ),
        ] = None,
    ) -> Annotated[CallToolResult, ArchivePage]:
        """Read archived text back by its handle, a page of characters at a time. Pages are
        exact: follow `next_offset` until it is null, passing each page's `version` with the
        next, and the pages join to the stored text."""
        params = _given(handle=handle, offset=offset, limit=limit, version=version)
        return answer(ArchivePage.model_validate(await daemon("archive.recall", params)))

    @server.tool(annotations=READ_ONLY)
    async def ledger_render(
        budget: Annotated[int | None, Field(ge=200, le=1_000_000, description="bytes; default 16000")] = None,
        sections: Annotated[list[str] | None, Field(description="only these sections (none or [] for all)")] = None,
    ) -> Annotated[CallToolResult, LedgerRender]:
        """The facts ledger as one text block for a prompt, at most `budget` bytes: sections
        in priority order (credentials, findings, decisions, next_steps, hosts, services,
        paths, urls), entries in the order recorded, and a note counting what did not fit."""
        rendered = await daemon("ledger.render", _given(budget=budget, sections=sections))
        return answer(LedgerRender.model_validate(rendered))

    @server.tool(annotations=READ_ONLY)
    async def context_pack(
        task: Annotated[str, Field(min_length=1, max_length=4000, description="what you are about to do")],
        budget: Annotated[int, Field(ge=500, le=2_000_000, description="bytes the pack may take")] = 16_000,
        source: Annotated[str | None, Field(description="only this source")] = None,
        namespace: Annotated[str | None, Field(description="only sources in this namespace")] = None,
        kind: Annotated[list[DocumentKind] | None, Field(description="only these kinds of document")] = None,
    ) -> Annotated[CallToolResult, ContextPack]:
        """What to put in your prompt for a task: the most relevant documents of the library
        inlined whole while they fit the byte budget, and the other relevant ones listed one
        line each (title, path:lines, document id) to read with get or find with search."""
        params = _given(task=task, budget=budget, source=source, namespace=namespace, kind=kind)
        return answer(ContextPack.model_validate(await daemon("context.pack", params)))

    if not allow_memory:
        return

    @server.tool(annotations=ADDS)
    async def remember(
        title: Annotated[str, Field(min_length=1, max_length=200, description="what it is about, in a few words")],
        body: Annotated[str, Field(min_length=1, max_length=20_000, description="the knowledge itself")],
        kind: CapsuleKind = "fact",
        scope: Scope = "default",
        tags: Annotated[list[Annotated[str, Field(max_length=64)]], Field(max_length=32)] = [],  # noqa: B006
        confidence: Annotated[float, Field(ge=0, le=1)] = 1.0,
        source: Annotated[str | None, Field(max_length=500, description="where it came from: path:line, url")] = None,
        supersedes: Annotated[str | None, Field(description="id of a capsule this one replaces")] = None,
        force: Annotated[bool, Field(description="store even if a near-identical capsule exists")] = False,
    ) -> Annotated[CallToolResult, Remembered]:
        """Keep a piece of knowledge for later sessions: a fact, decision, gotcha, pattern,
        anti-pattern, recipe or principle. The same title in the same scope updates that
        capsule. A near-identical capsule of the same kind is refused (status `refused`,
        with its id): pass supersedes=<id> if yours corrects it, or force=true if both
        should stay. Credentials in it are redacted before it is stored."""
        params = _given(
            title=title, body=body, kind=kind, scope=scope, tags=tags, confidence=confidence, source=source,
            supersedes=supersedes, force=force,
        )  # fmt: skip
        return answer(Remembered.model_validate(await daemon("memory.add", params)))

    @server.tool(annotations=REMOVES)
    async def forget(
        id: Annotated[str, Field(min_length=1, max_length=40, description="a capsule id, m-...")],
    ) -> Annotated[CallToolResult, Forgotten]:
        """Delete a memory capsule for good (to replace one, remember with supersedes instead);
        the capsule it replaced, if any, is current again."""
        return answer(Forgotten.model_validate(await daemon("memory.forget", {"id": id})))

    @server.tool(annotations=ADDS)
    async def archive(
        text: Annotated[str, Field(min_length=1, max_length=10_000_000, description="a tool output, a log")],
        title: Annotated[str | None, Field(max_length=500, description="default: its first line")] = None,
        tags: Annotated[list[Annotated[str, Field(max_length=64)]], Field(max_length=32)] = [],  # noqa: B006
    ) -> Annotated[CallToolResult, Archived]:
        """Park a large text and get a short handle back: keep only the handle in your context
        and read the text again with recall(handle). It is stored whole (credentials
        redacted) and indexed, so search(kind=["archive"]) finds it too. The same text again
        returns the same handle, kept once under its first title and tags (existing=true,
        and a note naming what was not recorded; its retention counts from now). Archives
        not archived for a while are pruned by the user's retention setting."""
        params = _given(text=text, title=title, tags=tags)
        return answer(Archived.model_validate(await daemon("archive.add", params)))

    @server.tool(annotations=ADDS)
    async def ledger_add(
        section: Annotated[str, Field(description=f"one of: {LEDGER_SECTIONS}")],
        fields: Fields,
        owner: Annotated[str, Field(min_length=1, max_length=100, description="who records it")] = "agent",
        evidence: Annotated[
            list[Annotated[str, Field(max_length=300)]],
            Field(max_length=20, description="where it was seen: archive handles, item ids, paths"),
        ] = [],  # noqa: B006
    ) -> Annotated[CallToolResult, LedgerAdded]:
        """Record a confirmed fact in the ledger. Each section needs its identity fields (in
        brackets in `section`); other fields are free. An entry whose identity, or an alias
        of it, is already recorded is merged into that entry: new details are added, its
        first recorder stays its owner, evidence accumulates."""
        params = {"section": section, "fields": fields, "owner": owner, "evidence": evidence}
        return answer(LedgerAdded.model_validate(await daemon("ledger.add", params)))

    @server.tool(annotations=REMOVES)
    async def ledger_remove(
        id: Annotated[str | None, Field(description="an entry id, l-...")] = None,
        section: Annotated[str | None, Field(description="with fields: the entry's section")] = None,
        fields: Annotated[dict[str, str | int | float] | None, Field(description="with section: its identity")] = None,
    ) -> Annotated[CallToolResult, LedgerRemoved]:
        """Remove a ledger entry, by id or by its section and identity fields. To correct an
        entry, remove it and add it again."""
        removed = await daemon("ledger.remove", _given(id=id, section=section, fields=fields))
        return answer(LedgerRemoved.model_validate(removed))
