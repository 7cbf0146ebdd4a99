"""`ken mcp` end to end: the MCP SDK's own stdio client launches `python -m kenning mcp`
as an agent's host would, and the server talks to a real daemon over its real socket."""

from __future__ import annotations

import json
import os
import select
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from mcp import MCPError
from mcp.types.version import HANDSHAKE_PROTOCOL_VERSIONS

from tests.mcp_client import data, error_text, ken_mcp

SMALL_CHUNKS = "[chunking]\ntarget_chars = 200\noverlap_chars = 20\n"
LIBRARY_TOOLS = {"search", "get", "list_sources", "status"}
AGENT_READS = {"recall_memory", "recall", "ledger_render", "context_pack"}
AGENT_WRITES = {"remember", "forget", "archive", "ledger_add", "ledger_remove"}

LAUNCHD = """# Services

How the daemon runs on a Mac.

## Restarting

After editing the plist, run launchctl kickstart -k gui/501/com.kenning.daemon to restart it.
"""


def long_document() -> str:
    sections = [
        f"## Part {n}\n\n" + f"Paragraph {n} is about the marker word zephyr{n}, told at some length. " * 4
        for n in range(6)
    ]
    return "# Almanac\n\n" + "\n\n".join(sections) + "\n"


@pytest.fixture(scope="module")
def empty(module_library):
    """One daemon on a library of nothing, writes not allowed, for the tests below that
    only ask it things; each started its own."""
    module_library.configure([])
    return module_library.daemon()


HELLO = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}


class RawServer:
    """`ken mcp` as a host starts it, spoken to in raw lines (the SDK's client would
    never send what these tests send); its log goes to `log`."""

    def __init__(self, config: Path, log: Path) -> None:
        env = {**os.environ, "PYTHONPATH": os.environ.get("PYTHONPATH", "")}
        # Unbuffered, so select() on stdout tells the truth: read through a buffer, two
        # answers that came in one chunk left the second in it, and select() waited for
        # more while the answer sat there (a "no answer within 30 s" under load).
        with open(log, "wb") as stderr:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "kenning", "--config", str(config), "mcp"],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr, env=env, bufsize=0,
            )  # fmt: skip

    def send(self, line: str) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(line.encode() + b"\n")

    def answer(self, what: str = "a line") -> dict:
        assert self.process.stdout is not None
        if not select.select([self.process.stdout], [], [], 30)[0]:
            raise AssertionError(f"no answer to {what} within 30 s")
        return json.loads(self.process.stdout.readline())

    def initialize(self) -> None:
        self.send(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": HELLO}))
        assert self.answer("initialize")["id"] == 1


async def test_an_agent_lists_searches_reads_and_pages_with_citations(library):
    notes = library.root / "notes"
    notes.mkdir()
    (notes / "launchd.md").write_text(LAUNCHD)
    (notes / "almanac.md").write_text(long_document())
    library.configure([{"name": "notes", "path": str(notes)}], SMALL_CHUNKS)
    daemon = library.daemon()
    daemon.wait_idle("notes")

    async with ken_mcp(library.config, library.root / "mcp.log") as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert set(tools) == LIBRARY_TOOLS | AGENT_READS | AGENT_WRITES
        assert tools["search"].input_schema["required"] == ["query"]
        assert {"query", "limit", "source", "namespace", "kind", "since", "until"} == set(tools["search"].input_schema["properties"])
        assert "hits" in tools["search"].output_schema["properties"]
        get_arguments = {"item_id", "document_id", "uri", "path", "offset", "limit", "line_start", "line_end"}
        assert get_arguments | {"source", "version"} == set(tools["get"].input_schema["properties"])
        assert all(tools[name].description and tools[name].annotations.read_only_hint for name in LIBRARY_TOOLS)
        assert all(tools[name].description for name in AGENT_READS | AGENT_WRITES)
        assert not any(tools[name].annotations.read_only_hint for name in AGENT_WRITES)

        hits = data(await client.call_tool("search", {"query": "kickstart", "limit": 3}))["hits"]
        top = hits[0]
        assert top["path"] == str(notes / "launchd.md")
        assert top["section"].endswith("Restarting")
        assert top["line_start"] <= 7 <= top["line_end"]
        assert "**kickstart**" in top["snippet"]
        # A fact nothing states: no hits, why, and what matched held back for a look.
        refused = data(await client.call_tool("search", {"query": "Which port does the launchd daemon listen on?"}))
        assert refused["hits"] == [] and refused["abstained"]
        assert str(notes / "launchd.md") in [hit["path"] for hit in refused["withheld"]]

        page = data(await client.call_tool("get", {"item_id": top["item_id"]}))
        assert page["document"]["path"] == str(notes / "launchd.md")
        [chunk] = page["chunks"]
        assert chunk["item_id"] == top["item_id"]
        assert "launchctl kickstart -k gui/501/com.kenning.daemon" in chunk["content"]
        assert (chunk["line_start"], chunk["line_end"]) == (top["line_start"], top["line_end"])

        almanac = data(await client.call_tool("search", {"query": "zephyr3", "limit": 1}))["hits"][0]
        first = data(await client.call_tool("get", {"document_id": almanac["document_id"], "limit": 2}))
        total = first["total_chunks"]
        assert total >= 4
        assert [c["ord"] for c in first["chunks"]] == [0, 1]
        assert first["next_offset"] == 2
        last = data(await client.call_tool("get", {"document_id": almanac["document_id"], "offset": total - 1}))
        assert [c["ord"] for c in last["chunks"]] == [total - 1]
        assert last["next_offset"] is None
        assert "zephyr5" in last["chunks"][0]["content"]

        # Reading around a hit: a range of lines of the file by the path the hit cites,
        # blank lines and all, exactly as the file has them.
        around = data(await client.call_tool("get", {"path": top["path"], "line_start": 5, "line_end": 7}))
        assert around["lines"]["text"] == "\n".join(LAUNCHD.split("\n")[4:7])
        assert (around["lines"]["total_lines"], around["lines"]["next_line"], around["chunks"]) == (7, None, [])
        assert around["document"]["document_id"] == top["document_id"]
        heading = data(await client.call_tool("get", {"item_id": top["item_id"], "line_start": 1, "line_end": 1}))
        assert heading["lines"]["text"] == "# Services"

        # A host can attach a document the search found as a resource: its whole text.
        [template] = (await client.list_resource_templates()).resource_templates
        assert template.uri_template == "kenning://document/{document_id}"
        read = await client.read_resource(f"kenning://document/{top['document_id']}")
        assert read.contents[0].text == LAUNCHD.rstrip("\n")
        with pytest.raises(MCPError, match="no document 999999") as missing:
            await client.read_resource("kenning://document/999999")
        assert missing.value.code == -32602

        sources = data(await client.call_tool("list_sources", {}))["sources"]
        assert [(s["name"], s["documents"]) for s in sources if s["in_config"]] == [("notes", 2)]
        status = data(await client.call_tool("status", {}))
        assert next(s for s in status["sources"] if s["name"] == "notes")["holds"] == 2

        # The same file in a second folder is stored once: read by that folder's path, it
        # is cited there, the first folder's file listed as another place holding it.
        mirror = library.root / "mirror"
        mirror.mkdir()
        (mirror / "launchd.md").write_text(LAUNCHD)
        folders = {"notes": notes, "mirror": mirror}
        library.configure([{"name": name, "path": str(folder)} for name, folder in folders.items()], SMALL_CHUNKS)
        daemon.call("reload")
        daemon.wait_idle("mirror")
        copy = data(await client.call_tool("get", {"path": str(mirror / "launchd.md"), "limit": 1}))["document"]
        assert copy["document_id"] == top["document_id"]
        assert (copy["source"], copy["path"]) == ("mirror", str(mirror / "launchd.md"))
        places = [{"source": name, "path": str(folders[name] / "launchd.md")} for name in ("mirror", "notes")]
        assert copy["locations"] == places
        # A search scoped to the mirror cites its file; get with the hit's source cites the same.
        [mirrored] = data(await client.call_tool("search", {"query": "kickstart", "source": "mirror"}))["hits"]
        assert (mirrored["item_id"], mirrored["path"]) == (top["item_id"], str(mirror / "launchd.md"))
        for params in ({"item_id": top["item_id"]}, {"document_id": top["document_id"], "line_start": 1}):
            cited = data(await client.call_tool("get", {**params, "source": mirrored["source"]}))["document"]
            assert (cited["path"], cited["locations"]) == (mirrored["path"], places)
        owner = data(await client.call_tool("get", {"item_id": top["item_id"]}))["document"]
        assert (owner["path"], owner["locations"]) == (str(notes / "launchd.md"), places[::-1])
        assert "unknown source 'nope'" in error_text(
            await client.call_tool("get", {"item_id": top["item_id"], "source": "nope"})
        )
        assert "a path names its own copy" in error_text(
            await client.call_tool("get", {"path": mirrored["path"], "source": "mirror"})
        )


async def test_pages_of_a_document_that_changed_in_between_are_refused_not_joined(library):
    """An agent reads a long document a page at a time; the document changes between two
    pages (a watched file saved again, agent text replaced). The next offset then named
    a place in the new text, and the pages joined were a text that never existed, the
    first wombat counts of one and the rest of another. Each page now names the
    document's version, and a page asked for with an older one is an error."""
    library.configure([])
    daemon = library.daemon()
    parts = [f"## Part {n}\n\nPart {n} counts {n * 7} wombats, " + "told at some length " * 20 for n in range(12)]
    daemon.call("documents.add", {"title": "Census", "text": "\n\n".join(parts), "source_uri": "notes://census"})
    async with ken_mcp(library.config, library.root / "mcp.log") as client:
        first = data(await client.call_tool("get", {"uri": "notes://census", "limit": 3}))
        version = first["version"]
        unchanged = {"uri": "notes://census", "offset": first["next_offset"], "limit": 3, "version": version}
        assert data(await client.call_tool("get", unchanged))["version"] == version
        lines = data(await client.call_tool("get", {"uri": "notes://census", "line_start": 1, "line_end": 2}))
        assert lines["version"] == version

        # The same parts with more space between them: every line after the first part moved.
        spaced = "\n\n\n\n".join(parts)
        daemon.call("documents.add", {"title": "Census", "text": spaced, "source_uri": "notes://census"})
        for asked in (unchanged, {"uri": "notes://census", "line_start": 3, "version": version}):
            refused = error_text(await client.call_tool("get", asked))
            assert f"changed since version {version}" in refused and "read it again from the start" in refused
        again = data(await client.call_tool("get", {"uri": "notes://census", "limit": 3}))
        assert again["version"] != version
        following = {"uri": "notes://census", "offset": again["next_offset"], "limit": 3, "version": again["version"]}
        assert data(await client.call_tool("get", following))["chunks"][0]["content"].startswith("## Part 3")
        # Without a version, a page is what it was: the current text at that offset.
        assert data(await client.call_tool("get", {**unchanged, "version": None}))["version"] == again["version"]
        assert "one item" in error_text(await client.call_tool("get", {"item_id": 1, "version": version}))


async def test_a_resource_read_while_its_document_changes_is_one_version_whole(library):
    """The resource joined pages read while the document was replaced, ending with the
    first version's lines and going on with the second's. A read now starts again when
    the version changes under it, and says so when it keeps changing."""
    library.configure([])
    daemon = library.daemon()
    versions = {mark: "".join(f"{mark} line {n}\n" for n in range(60_000)).rstrip("\n") for mark in "AB"}

    def replace(mark: str) -> None:
        daemon.call("documents.add", {"title": "Log", "text": versions[mark], "source_uri": "logs://app"})

    replace("A")
    document_id = daemon.call("documents.get", {"uri": "logs://app", "limit": 1})["document"]["document_id"]
    stop = threading.Event()

    def churn() -> None:
        while not stop.is_set():
            for mark in "BA":
                replace(mark)

    writer = threading.Thread(target=churn)
    writer.start()
    read: list[str] = []
    try:
        async with ken_mcp(library.config, library.root / "mcp.log") as client:
            for _ in range(6):
                try:
                    read.append((await client.read_resource(f"kenning://document/{document_id}")).contents[0].text)
                except MCPError as exc:
                    assert "changed 3 times while it was read" in str(exc)
    finally:
        stop.set()
        writer.join()
    assert all(text in versions.values() for text in read), [text[:8] + "..." + text[-8:] for text in read]


async def test_bad_reads_get_an_error_the_agent_can_act_on(library):
    notes = library.root / "notes"
    notes.mkdir()
    (notes / "launchd.md").write_text(LAUNCHD)
    library.configure([{"name": "notes", "path": str(notes)}])
    library.daemon().wait_idle("notes")

    async with ken_mcp(library.config, library.root / "mcp.log") as client:
        assert "no item 999999" in error_text(await client.call_tool("get", {"item_id": 999999}))
        assert "exactly one of item_id, document_id, uri or path" in error_text(
            await client.call_tool("get", {"item_id": 1, "document_id": 1})
        )
        assert "pass them with document_id" in error_text(await client.call_tool("get", {"item_id": 1, "offset": 3}))
        hit = data(await client.call_tool("search", {"query": "kickstart"}))["hits"][0]
        assert "past the end" in error_text(
            await client.call_tool("get", {"document_id": hit["document_id"], "offset": 50})
        )
        assert "unknown source 'nope'" in error_text(
            await client.call_tool("search", {"query": "kickstart", "source": "nope"})
        )
        # The input schema's bounds are enforced before the daemon is asked.
        assert "limit" in error_text(await client.call_tool("search", {"query": "kickstart", "limit": 0}))
        # A resource uri whose id is no document's id is the host's to fix (-32602), whatever
        # it holds: letters and an id past 64 bits were internal errors (-32603).
        for document_id in ("abc", "99999999999999999999", "1e3", "١", "9" * 5000):
            with pytest.raises(MCPError, match=f"no document {document_id[:40]}") as refused:
                await client.read_resource(f"kenning://document/{document_id}")
            assert refused.value.code == -32602, document_id
        read = await client.read_resource(f"kenning://document/{hit['document_id']}")
        assert read.contents[0].text == LAUNCHD.rstrip("\n")


async def test_writes_are_not_offered_until_the_config_allows_them(empty):
    async with ken_mcp(empty.config, empty.config.parent / "writes.log") as client:
        assert not {"add_document", "remove_document"} & {tool.name for tool in (await client.list_tools()).tools}
        assert "allow_writes = true" in client.instructions
        assert "add_document" in error_text(
            await client.call_tool("add_document", {"title": "t", "text": "x", "uri": "note://x"})
        )
    assert empty.call("status")["library"]["documents"] == 0


async def test_with_writes_allowed_an_agent_adds_a_document_that_search_then_cites(library):
    library.configure([], "[mcp]\nallow_writes = true\n")
    daemon = library.daemon()

    async with ken_mcp(library.config, library.root / "mcp.log") as client:
        tool = next(t for t in (await client.list_tools()).tools if t.name == "add_document")
        assert tool.annotations.read_only_hint is False
        assert {"title", "text", "uri"} == set(tool.input_schema["required"])
        added = data(
            await client.call_tool(
                "add_document",
                {
                    "title": "Deploy checklist",
                    "text": "# Deploy\n\nRotate the quokka signing key before every release.\n",
                    "uri": "agent://checklists/deploy",
                    "tags": ["ops"],
                },
            )
        )
        assert added["stored"] == "indexed"
        assert added["chunks"] >= 1

        hits = data(await client.call_tool("search", {"query": "quokka"}))["hits"]
        assert [(h["document_id"], h["path"], h["source"]) for h in hits] == [
            (added["document_id"], "agent://checklists/deploy", "agent")
        ]
        assert daemon.search("quokka")[0]["document_id"] == added["document_id"]

        removed = data(await client.call_tool("remove_document", {"uri": "agent://checklists/deploy"}))
        assert removed == {"document_id": added["document_id"], "title": "Deploy checklist", "uri": added["uri"]}
        assert not data(await client.call_tool("search", {"query": "quokka"}))["hits"]
        assert "no document added by an agent" in error_text(
            await client.call_tool("remove_document", {"uri": "agent://checklists/deploy"})
        )


async def test_an_agent_document_says_when_it_speaks_from_and_what_it_replaces(library):
    library.configure([], "[mcp]\nallow_writes = true\n")
    library.daemon()

    async with ken_mcp(library.config, library.root / "mcp.log") as client:
        old = data(
            await client.call_tool(
                "add_document",
                {
                    "title": "Gizmo settings",
                    "text": "The gizmo flux setting is 40 on every line.\n",
                    "uri": "agent://gizmo/v1",
                    "date": "2025-01-01",
                },
            )
        )
        new = data(
            await client.call_tool(
                "add_document",
                {
                    "title": "Gizmo settings, revised",
                    "text": "The gizmo flux setting is 55 on every line.\n",
                    "uri": "agent://gizmo/v2",
                    "supersedes": ["agent://gizmo/v1"],
                },
            )
        )
        hits = data(await client.call_tool("search", {"query": "gizmo flux setting"}))["hits"]
        assert [hit["document_id"] for hit in hits] == [new["document_id"], old["document_id"]]
        assert hits[1]["date"] == "2025-01-01"
        assert hits[1]["superseded_by"] == hits[0]["item_id"]


async def test_an_argument_a_tool_does_not_take_is_refused_not_ignored(library):
    library.configure([], "[mcp]\nallow_writes = true\n")
    daemon = library.daemon()

    async with ken_mcp(library.config, library.root / "mcp.log") as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert all(tool.input_schema.get("additionalProperties") is False for tool in tools.values())
        # A misspelt filter would otherwise search the whole library without a word.
        message = error_text(await client.call_tool("search", {"query": "gizmo", "namespaces": "work"}))
        assert "namespaces" in message
        message = error_text(
            await client.call_tool("add_document", {"title": "t", "text": "x", "uri": "note://x", "supercedes": ["a"]})
        )
        assert "supercedes" in message
    assert daemon.call("status")["library"]["documents"] == 0


async def test_an_argument_of_the_wrong_json_type_is_refused_not_converted(library):
    library.configure([], "[mcp]\nallow_writes = true\n")
    daemon = library.daemon()

    async with ken_mcp(library.config, library.root / "mcp.log") as client:
        # Each was converted ("5" to 5, "true" to True, 2.0 to 2) and the call went ahead.
        for tool, arguments, named in (
            ("search", {"query": "gizmo", "limit": "5"}, "limit"),
            ("recall", {"handle": "a-abcdefgh", "offset": 2.0}, "offset"),
            ("remember", {"title": "Gizmo", "body": "Gizmos hum.", "force": "true"}, "force"),
            ("archive", {"text": "gizmo log", "title": 7}, "title"),
            ("ledger_add", {"section": "services", "fields": {"host": "db1", "port": True}}, "port"),
            ("add_document", {"title": "t", "text": "Gizmos hum.", "uri": "note://g", "tags": "gizmo"}, "tags"),
        ):
            message = error_text(await client.call_tool(tool, arguments))
            assert named in message and "valid" in message, (tool, message)
        # What JSON gives for the types the schema names is taken: an integer for a
        # number, an array for a list.
        document = {"title": "t", "text": "Gizmos hum.", "uri": "note://g", "tags": ["x"]}
        added = data(await client.call_tool("add_document", document))
        assert added["stored"] == "indexed"
        assert data(await client.call_tool("remember", {"title": "Gizmo", "body": "Gizmos hum.", "confidence": 1}))
        # An unknown prompt is invalid params, as the MCP spec has it, not code 0.
        with pytest.raises(MCPError) as unknown:
            await client.get_prompt("summarise")
        assert unknown.value.code == -32602 and "Unknown prompt: 'summarise'" in unknown.value.message
    status = daemon.call("status")
    assert status["library"]["documents"] == 2 and status["agent"]["archives"] == 0


def test_a_call_before_the_handshake_is_told_to_initialize_first(empty):
    """The SDK answers it "Invalid request parameters" and nothing more, which sends a host
    looking for a fault in its arguments. A host's raw lines, as the SDK's client always
    initializes first."""
    server = RawServer(empty.config, empty.config.parent / "handshake.log")

    def ask(message: dict) -> dict:
        server.send(json.dumps(message))
        return server.answer(message["method"]) if "id" in message else {}

    status = {"name": "status", "arguments": {}}
    try:
        early = ask({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": status})
        assert early["id"] == 1 and early["error"]["code"] == -32602
        assert "tools/call before the session is initialized: send `initialize`" in early["error"]["message"]
        assert "result" in ask({"jsonrpc": "2.0", "id": 2, "method": "initialize", "params": HELLO})
        ask({"jsonrpc": "2.0", "method": "notifications/initialized"})
        # Arguments a tool refuses still get the SDK's own answer, not the handshake's.
        bad = ask({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "status", "arguments": 5}})
        assert bad["error"]["code"] == -32602 and "initialize" not in bad["error"]["message"]
        answered = ask({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": status})
        assert answered["id"] == 4 and not answered["result"].get("isError"), answered
    finally:
        server.process.communicate(timeout=20)


def test_a_request_with_an_id_mcp_does_not_take_is_refused_and_a_blank_line_is_skipped(empty):
    """A request whose id is 1.5 or an object was taken by the SDK for a notification and
    never answered, so the host waited for ever; JSON-RPC answers an invalid request with
    -32600 and id null. A blank line was answered with a parse error, where the daemon's
    socket skips it. Answers come in the order of the lines, so the first one after the
    blank lines is the refusal of the 1.5."""
    server = RawServer(empty.config, empty.config.parent / "ids.log")
    send, answer = server.send, server.answer
    try:
        server.initialize()
        send(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        send("")
        send("  \t ")
        send('{"jsonrpc": "2.0", "id": 1.5, "method": "ping"}')
        send('{"jsonrpc": "2.0", "id": {"n": 2}, "method": "tools/call", "params": {"name": "status", "arguments": {}}}')
        send('{"jsonrpc": "2.0", "id": 3, "method": "ping"}')
        assert answer() == {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message":
            "Invalid request: its id is the number 1.5; a request\'s id must be a string or an integer"}}  # fmt: skip
        refused = answer()
        assert (refused["id"], refused["error"]["code"]) == (None, -32600), refused
        assert "its id is an object" in refused["error"]["message"]
        # The session goes on, and nothing else was answered in between.
        assert answer() == {"jsonrpc": "2.0", "id": 3, "result": {}}
    finally:
        server.process.communicate(timeout=20)


def test_ctrl_c_ends_the_server_while_its_input_is_still_open(library):
    """`ken mcp` run by hand in a terminal, or a host stopping it with SIGINT: the signal
    cancelled the server's loop, which then waited for its stdin reader, a thread blocked
    reading a line, so the server went on until the next line or the end of its input."""
    library.configure([])
    raw = RawServer(library.config, library.root / "mcp.log")
    server = raw.process
    try:
        raw.initialize()
        server.send_signal(signal.SIGINT)
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            raise AssertionError("ken mcp still running 10 s after SIGINT") from None
    finally:
        server.kill()
        server.wait()
        server.stdin.close()
        server.stdout.close()


def test_a_client_that_stops_reading_ends_the_server_without_a_traceback(library):
    """A host that closed its end of the server's stdout but not of its stdin: the write
    that failed ended the transport, which then waited for its stdin reader, a thread
    blocked reading a line, so the server lived on, answering no one, until stdin closed,
    and then left sixty lines of traceback in the host's log."""
    library.configure([])
    raw = RawServer(library.config, library.root / "mcp.log")
    server = raw.process
    try:
        raw.send(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": HELLO}))
        assert select.select([server.stdout], [], [], 30)[0], "no answer to initialize within 30 s"
        server.stdout.close()
        raw.send('{"jsonrpc": "2.0", "id": 2, "method": "ping"}')
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            raise AssertionError("ken mcp still running 10 s after its client stopped reading") from None
    finally:
        server.kill()
        server.wait()
        server.stdin.close()
    logged = (library.root / "mcp.log").read_text()
    assert "Traceback" not in logged and "stopped reading" in logged, logged


async def test_an_error_quoting_what_the_agent_sent_carries_no_terminal_control_characters(library):
    """The daemon's refusals quote the id or uri asked for, and a tool error is plain
    text: an OSC sequence an agent was talked into sending came back raw to the host."""
    library.configure([], "[mcp]\nallow_writes = true\n")
    library.daemon()
    sent = "\x1b]52;c;aGk=\x07\x1b[2J"
    calls = {
        "get": {"uri": f"notes://{sent}"},
        "recall": {"handle": f"a-{sent}"},
        "forget": {"id": f"m-{sent}"},
        "ledger_remove": {"id": f"l-{sent}"},
        "refresh_url": {"url": f"https://example.com/{sent}"},
    }
    async with ken_mcp(library.config, library.root / "mcp.log") as client:
        for name, arguments in calls.items():
            message = error_text(await client.call_tool(name, arguments))
            assert "\x1b" not in message and "\x07" not in message, (name, message)
            assert "\\x1b]52;c;aGk=\\x07" in message, (name, message)


async def test_without_a_daemon_every_tool_answers_at_once_with_one_clear_error(library):
    library.configure([], "[mcp]\nallow_writes = true\ntimeout = 30\n")
    calls = {
        "search": {"query": "anything"},
        "get": {"item_id": 1},
        "list_sources": {},
        "status": {},
        "add_document": {"title": "t", "text": "x", "uri": "note://x"},
        "remember": {"title": "t", "body": "b"},
        "recall_memory": {"query": "q"},
        "archive": {"text": "x"},
        "recall": {"handle": "a-x"},
        "ledger_add": {"section": "hosts", "fields": {"ip": "10.0.0.1"}},
        "ledger_render": {},
        "context_pack": {"task": "t"},
    }
    async with ken_mcp(library.config, library.root / "mcp.log") as client:
        for name, arguments in calls.items():
            started = time.monotonic()
            message = error_text(await client.call_tool(name, arguments))
            # Far below the 30 s timeout: a missing daemon is known at connect, not waited for.
            assert time.monotonic() - started < 5
            assert "kenning daemon is not running" in message and "ken start" in message, message


async def test_a_host_on_the_initialize_handshake_gets_the_same_server(library):
    library.configure([])
    async with ken_mcp(library.config, library.root / "mcp.log", mode="legacy") as client:
        assert client.protocol_version in HANDSHAKE_PROTOCOL_VERSIONS
        assert client.server_info.name == "kenning"
        assert {t.name for t in (await client.list_tools()).tools} == LIBRARY_TOOLS | AGENT_READS | AGENT_WRITES
        assert "not running" in error_text(await client.call_tool("status", {}))


async def test_a_daemon_that_never_answers_gives_a_timeout_error_not_a_hang(library):
    library.configure([], "[mcp]\ntimeout = 0.5\n")
    library.data_dir.mkdir(mode=0o700)
    # A socket that accepts connections and never answers: a wedged daemon.
    wedged = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    wedged.bind(str(library.data_dir / "kenning.sock"))
    wedged.listen(8)
    try:
        async with ken_mcp(library.config, library.root / "mcp.log") as client:
            for _ in range(2):
                message = error_text(await client.call_tool("status", {}))
                assert "did not answer 'status' within 0.5 s" in message
            # A write given up on goes on at the daemon: the error read as though nothing
            # happened, and a daemon busy past the timeout stored the archive all the same.
            assert "may" not in message
            message = error_text(await client.call_tool("archive", {"text": "build log"}))
            assert "did not answer 'archive.add' within 0.5 s" in message and "may still do it" in message
            assert "archiving the same text again is safe" in message
    finally:
        wedged.close()


async def test_many_calls_to_a_daemon_that_never_answers_each_give_up_after_the_timeout(library):
    """A session has at most MAX_CALLS calls at the daemon at once and the rest waited for
    a place with no deadline: of 64 calls to a wedged daemon, the last 16 answered after
    four times the timeout."""
    import asyncio

    from kenning.mcp.calls import MAX_CALLS

    library.configure([], "[mcp]\ntimeout = 5\n")
    library.data_dir.mkdir(mode=0o700)
    wedged = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    wedged.bind(str(library.data_dir / "kenning.sock"))
    wedged.listen(4 * MAX_CALLS)
    try:
        async with ken_mcp(library.config, library.root / "mcp.log") as client:
            started = time.monotonic()
            results = await asyncio.gather(*(client.call_tool("status", {}) for _ in range(4 * MAX_CALLS)))
            took = time.monotonic() - started
    finally:
        wedged.close()
    assert all("did not answer 'status' within 5 s" in error_text(result) for result in results)
    assert took < 12, took


async def test_one_session_outlives_a_daemon_crash_and_restart(library):
    notes = library.root / "notes"
    notes.mkdir()
    (notes / "launchd.md").write_text(LAUNCHD)
    library.configure([{"name": "notes", "path": str(notes)}])
    daemon = library.daemon()
    daemon.wait_idle("notes")

    async with ken_mcp(library.config, library.root / "mcp.log") as client:
        assert data(await client.call_tool("search", {"query": "kickstart"}))["hits"]
        daemon.stop(signal.SIGKILL)
        # The socket file is left behind by the kill: a refused connection, not a hang.
        assert (library.data_dir / "kenning.sock").exists()
        assert "not running" in error_text(await client.call_tool("search", {"query": "kickstart"}))
        library.daemon().wait_idle("notes")
        assert data(await client.call_tool("search", {"query": "kickstart"}))["hits"]


async def test_a_host_calling_many_tools_at_once_does_not_crowd_out_the_daemon(empty):
    """Each tool call was a connection of its own, all at once: a host sending 700
    calls together took the daemon's 512 connections, and 188 of its calls (and any
    `ken` command meanwhile) were told "busy: 512 connections are open"."""
    import asyncio

    async with ken_mcp(empty.config, empty.config.parent / "many.log") as client:
        results = await asyncio.gather(*(client.call_tool("list_sources", {}) for _ in range(600)))
    assert [result for result in results if result.is_error] == []
    assert "turning new ones away" not in empty.log()


def test_the_server_collects_cycles_again_once_it_has_started(empty):
    """`ken mcp` turns the cyclic collector off while it imports the SDK and builds its
    server, and freezes what that made (bench/mcp_start.py): left off, a long session
    would keep every reference cycle its calls made."""
    script = (
        "import gc, sys\n"
        "from kenning.cli import main\n"
        "try:\n"
        f"    main(['--config', {str(empty.config)!r}, 'mcp'])\n"
        "except SystemExit:\n"
        "    pass\n"
        "print(gc.isenabled(), gc.get_freeze_count() > 10_000)\n"
    )
    env = {**os.environ, "PYTHONPATH": os.environ.get("PYTHONPATH", "")}
    hello = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": HELLO}
    lines = [hello, {"jsonrpc": "2.0", "method": "notifications/initialized"}]
    done = subprocess.run(
        [sys.executable, "-c", script],
        input="".join(json.dumps(line) + "\n" for line in lines),
        capture_output=True, text=True, env=env, timeout=60,
    )  # fmt: skip
    *answers, state = done.stdout.splitlines()
    assert [json.loads(answer)["id"] for answer in answers] == [1], done.stderr[-2000:]
    assert state == "True True"
