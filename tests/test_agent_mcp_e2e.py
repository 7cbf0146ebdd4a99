"""The agent's own tools through `ken mcp`, end to end: the SDK's stdio client, the MCP
server as a child process, a real daemon on its real socket. Memory capsules through
remember, recall, supersede and forget; a megabyte archived and recalled page by page;
the ledger merging by alias and rendering under a budget; a context pack under budget."""

from __future__ import annotations

from typing import Any

from tests.daemon_harness import DaemonProcess, wait_for
from tests.mcp_client import data, error_text, ken_mcp

GITHUB_TOKEN = "ghp_" + "a1B2" * 9


def started(library, extra: str = "") -> DaemonProcess:
    library.configure([], extra)
    daemon = library.daemon()
    # Write-time dedup compares vectors once the embedder is up (trigrams before).
    wait_for(lambda: daemon.call("status")["embedder"]["vectors"] is not None, 20, "the embedder")
    return daemon


async def call(client, tool: str, **arguments: Any) -> Any:
    return data(await client.call_tool(tool, arguments))


async def test_remember_recall_supersede_forget(library):
    started(library)
    async with ken_mcp(library.config, library.root / "mcp.log") as client:
        first = await call(
            client, "remember", title="Deploy order", kind="gotcha", scope="shop", source="runbooks/deploy.md:12",
            body="Run the quokka schema migrations before deploying the API service.",
        )  # fmt: skip
        assert first["status"] == "created" and first["id"].startswith("m-")

        # Nearly the same words under another title: refused, naming the capsule kept.
        twin = await call(
            client, "remember", title="Before a deploy", kind="gotcha", scope="shop",
            body="Run the quokka schema migrations before you deploy the API service.",
        )  # fmt: skip
        assert (twin["status"], twin["id"]) == ("refused", first["id"])
        assert f"supersedes={first['id']}" in twin["message"] and twin["similarity"] >= 0.85
        # The same in another scope is another project's knowledge: kept.
        other = await call(
            client, "remember", title="Deploy order", kind="gotcha", scope="warehouse",
            body="Run the quokka schema migrations before deploying the API service.",
        )  # fmt: skip
        assert other["status"] == "created"

        recalled = await call(client, "recall_memory", query="what must happen before deploying the API", scope="shop")
        [hit] = recalled["capsules"]
        assert hit["capsule"]["id"] == first["id"] and hit["capsule"]["source"] == "runbooks/deploy.md:12"
        hits = await call(client, "search", query="quokka", kind=["capsule"])
        # The same text in two scopes shows once, the other place listed under it.
        found = {h["path"] for h in hits["hits"]} | {o["path"] for h in hits["hits"] for o in h.get("also_at", [])}
        assert found == {f"kenning://memory/{first['id']}", f"kenning://memory/{other['id']}"}
        assert (await call(client, "search", query="quokka", kind=["file", "archive"]))["hits"] == []

        newer = await call(
            client, "remember", title="Deploy order, corrected", kind="gotcha", scope="shop", supersedes=first["id"],
            body="Drain the API first, then run the quokka schema migrations, then deploy.",
        )  # fmt: skip
        assert (newer["status"], newer["superseded"]) == ("superseded", first["id"])
        recalled = await call(client, "recall_memory", query="quokka schema migrations and deploying", scope="shop")
        assert [h["capsule"]["id"] for h in recalled["capsules"]] == [newer["id"]]
        assert {h["path"] for h in (await call(client, "search", query="quokka", kind=["capsule"]))["hits"]} == {
            f"kenning://memory/{newer['id']}",
            f"kenning://memory/{other['id']}",
        }
        assert f"already superseded by {newer['id']}" in error_text(
            await client.call_tool(
                "remember", {"title": "again", "body": "again", "kind": "gotcha", "supersedes": first["id"]}
            )
        )

        # The same title in the same scope updates the capsule in place.
        updated = await call(
            client, "remember", title="deploy order, CORRECTED", kind="gotcha", scope="shop",
            body="Drain the API, run the quokka schema migrations, deploy, then undrain.",
        )  # fmt: skip
        assert (updated["status"], updated["id"]) == ("updated", newer["id"])
        page = await call(client, "get", uri=f"kenning://memory/{newer['id']}", line_start=1)
        assert page["lines"]["text"] == "Drain the API, run the quokka schema migrations, deploy, then undrain."

        assert (await call(client, "forget", id=newer["id"]))["id"] == newer["id"]
        # What the forgotten capsule replaced is current again; forgotten too, nothing is left.
        recalled = await call(client, "recall_memory", query="quokka migrations", scope="shop")
        assert [h["capsule"]["id"] for h in recalled["capsules"]] == [first["id"]]
        assert (await call(client, "forget", id=first["id"]))["id"] == first["id"]
        assert (await call(client, "recall_memory", query="quokka migrations", scope="shop"))["capsules"] == []
        assert f"no capsule {newer['id']}" in error_text(await client.call_tool("forget", {"id": newer["id"]}))


def build_log(lines: int) -> str:
    """About 72 bytes a line, some of them not ASCII, and one rare word in the middle."""
    out = []
    for n in range(lines):
        word = "zygomorphic" if n == lines // 2 else "ok"
        out.append(f"{n:07d} step {n % 97:02d} compiled module café_{n % 13} in {n % 1000} ms — {word}\n")
    return "".join(out)


async def test_a_megabyte_archived_comes_back_byte_for_byte_in_pages(library):
    started(library)
    text = build_log(18_000)
    assert len(text.encode()) > 1_000_000
    async with ken_mcp(library.config, library.root / "mcp.log") as client:
        archived = await call(client, "archive", text=text, title="nightly build log")
        handle = archived["handle"]
        assert handle.startswith("a-") and (archived["chars"], archived["bytes"]) == (len(text), len(text.encode()))
        assert not archived["existing"]

        pages, offset = [], 0
        while offset is not None:
            page = await call(client, "recall", handle=handle, offset=offset, limit=150_000)
            assert page["offset"] == offset and page["total_chars"] == len(text)
            pages.append(page["text"])
            offset = page["next_offset"]
        assert len(pages) == -(-len(text) // 150_000)
        assert "".join(pages).encode() == text.encode()

        again = await call(client, "archive", text=text)
        assert (again["handle"], again["existing"]) == (handle, True)
        hits = (await call(client, "search", query="zygomorphic", kind=["archive"]))["hits"]
        assert {h["path"] for h in hits} == {f"kenning://archive/{handle}"}

        # Credentials never reach the archive; the pages are of the stored text.
        secret = await call(client, "archive", text=f"deploy output\ntoken {GITHUB_TOKEN} accepted\n")
        stored = (await call(client, "recall", handle=secret["handle"]))["text"]
        assert GITHUB_TOKEN not in stored and stored.startswith("deploy output\ntoken ")

        assert "no archive a-zzzzzzzz" in error_text(await client.call_tool("recall", {"handle": "a-zzzzzzzz"}))
        assert "past the end" in error_text(
            await client.call_tool("recall", {"handle": handle, "offset": len(text) + 5})
        )


async def test_the_same_text_archived_under_a_new_title_says_what_it_kept(library):
    started(library)
    text = "pytest: 12 passed, 1 xfailed in 3.2s\n"
    async with ken_mcp(library.config, library.root / "mcp.log") as client:
        first = await call(client, "archive", text=text, title="first CI run", tags=["ci"])
        assert not first["existing"] and first["note"] is None

        # One copy, under the handle and title whoever archived it first still holds; the
        # reply says so and names what of this call was not recorded.
        again = await call(client, "archive", text=text, title="rerun after the fix", tags=["ci", "rerun"])
        assert (again["handle"], again["title"], again["existing"]) == (first["handle"], "first CI run", True)
        assert "archived before" in again["note"] and "'first CI run'" in again["note"]
        assert "the title 'rerun after the fix'" in again["note"] and "'rerun'" in again["note"]
        assert "'ci'" not in again["note"]
        plain = await call(client, "archive", text=text)
        assert plain["existing"] and "not recorded" not in plain["note"]
        listed = await call(client, "search", query="xfailed", kind=["archive"])
        assert [h["title"] for h in listed["hits"]] == ["first CI run"]


async def test_a_text_archived_again_is_not_the_first_retention_prunes(library):
    """An agent that archives a text again is handed its old handle: retention took that
    handle first, as the oldest, at the very next archive, and recalling it said pruned."""
    started(library, "[archive]\nmax_total_mb = 0.001\n")
    runs = {name: f"{name} run\n" + name[0] * 380 + "\n" for name in ("alpha", "beta", "gamma")}
    async with ken_mcp(library.config, library.root / "mcp.log") as client:
        alpha = await call(client, "archive", text=runs["alpha"])
        beta = await call(client, "archive", text=runs["beta"])
        again = await call(client, "archive", text=runs["alpha"])
        assert (again["handle"], again["existing"]) == (alpha["handle"], True)

        # Over 1,000 bytes with a third: the archive given least recently goes.
        gamma = await call(client, "archive", text=runs["gamma"])
        assert gamma["pruned"] == [beta["handle"]]
        page = await call(client, "recall", handle=alpha["handle"])
        assert page["text"] == runs["alpha"]


async def test_the_ledger_merges_by_alias_and_renders_under_a_budget(library):
    daemon = started(library)
    async with ken_mcp(library.config, library.root / "mcp.log") as client:
        host = await call(
            client, "ledger_add", section="hosts", fields={"hostname": "web01", "os": "Debian 12"}, owner="lead"
        )
        assert host["status"] == "created"
        # Its address, reported by another agent under the name's other spelling: the same host.
        merged = await call(
            client, "ledger_add", section="hosts", fields={"ip": "10.0.0.5", "hostname": "WEB01."},
            owner="scout", evidence=["a-abcdefgh"],
        )  # fmt: skip
        entry = merged["entry"]
        assert (merged["status"], entry["id"], entry["owner"]) == ("merged", host["entry"]["id"], "lead")
        assert entry["identity"] == "10.0.0.5" and {"10.0.0.5", "web01"} <= set(entry["aliases"])
        assert entry["fields"]["os"] == "Debian 12" and entry["evidence"] == ["a-abcdefgh"]

        ssh = await call(client, "ledger_add", section="services", fields={"host": "web01", "port": 22, "product": "OpenSSH"})
        # Named by the host's address this time: the host entry links the two names.
        again = await call(
            client, "ledger_add", section="services", fields={"host": "10.0.0.5", "port": "22/tcp", "version": "9.6"}
        )
        assert (again["status"], again["entry"]["id"]) == ("merged", ssh["entry"]["id"])
        assert again["entry"]["fields"]["version"] == "9.6" and again["entry"]["fields"]["product"] == "OpenSSH"
        for n in range(12):
            await call(client, "ledger_add", section="findings", fields={"title": f"Open directory listing {n}",
                                                                         "detail": "x" * 40})  # fmt: skip

        assert "needs ip or hostname" in error_text(
            await client.call_tool("ledger_add", {"section": "hosts", "fields": {"os": "Debian"}})
        )
        assert "unknown ledger section 'gadgets'" in error_text(
            await client.call_tool("ledger_add", {"section": "gadgets", "fields": {"name": "x"}})
        )

        whole = await call(client, "ledger_render")
        assert whole["omitted"] == {} and whole["entries"] == 14
        text = whole["text"]
        assert text.index("## findings") < text.index("## hosts") < text.index("## services")
        assert "- 10.0.0.5 — hostname=web01; os=Debian 12 (evidence: a-abcdefgh)" in text
        small = await call(client, "ledger_render", budget=400)
        assert small["bytes"] <= 400 and len(small["text"].encode()) == small["bytes"]
        assert sum(small["omitted"].values()) == 14 - small["entries"] > 0
        assert "entries left out" in small["text"]
        assert await call(client, "ledger_render", budget=400) == small

        # Ledger entries are documents, and their entities join the graph.
        hits = (await call(client, "search", query="OpenSSH", kind=["ledger"]))["hits"]
        assert [h["path"] for h in hits] == [f"kenning://ledger/{ssh['entry']['id']}"]
        [web01] = [e for e in daemon.call("entities", {"query": "web01"})["entities"] if e["kind"] == "host"]
        assert "10.0.0.5" in web01["aliases"] and web01["relations"][0]["kind"] == "runs_on"

        removed = await call(client, "ledger_remove", section="services", fields={"host": "web01", "port": "22"})
        assert removed["id"] == ssh["entry"]["id"]
        assert "## services" not in (await call(client, "ledger_render"))["text"]


NOTES = {
    "signing-keys.md": "# Rotating the quokka signing key\n\nRevoke the old key, mint a new one with `quokka keys "
    "rotate`, and publish its fingerprint in the release notes.\n",
    "rotation-log.md": "# Quokka signing key rotation log\n\n" + "".join(
        f"## Rotation {n}\n\nRotated the quokka signing key: revoked key {n}, minted key {n + 1}, published"
        " the new fingerprint.\n\n"
        for n in range(1, 60)
    ),
    "garden.md": "# Garden\n\nWater the tomatoes on Sundays.\n",
}


async def test_a_context_pack_inlines_what_fits_and_lists_the_rest(library):
    notes = library.root / "notes"
    notes.mkdir()
    for name, text in NOTES.items():
        (notes / name).write_text(text)
    library.configure([{"name": "notes", "path": str(notes)}])
    library.daemon().wait_idle("notes")
    async with ken_mcp(library.config, library.root / "mcp.log") as client:
        pack = await call(client, "context_pack", task="How do I rotate the quokka signing key?", budget=3000)
        assert pack["bytes"] <= 3000 and len(pack["text"].encode()) == pack["bytes"]
        assert [d["path"] for d in pack["inlined"]] == [str(notes / "signing-keys.md")]
        assert NOTES["signing-keys.md"].rstrip() in pack["text"]
        # The long log is relevant but does not fit: listed, with where its best hit is.
        [log] = [d for d in pack["listed"] if d["path"] == str(notes / "rotation-log.md")]
        assert f"{log['path']}:{log['line_start']}-{log['line_end']}" in pack["text"]
        assert log["bytes"] > 3000
        assert "Water the tomatoes" not in pack["text"]
        assert await call(client, "context_pack", task="How do I rotate the quokka signing key?", budget=3000) == pack

        roomy = await call(client, "context_pack", task="How do I rotate the quokka signing key?", budget=60_000)
        assert {d["path"] for d in roomy["inlined"]} == {str(notes / "signing-keys.md"), str(notes / "rotation-log.md")}
        assert NOTES["rotation-log.md"].rstrip() in roomy["text"] and roomy["bytes"] <= 60_000
