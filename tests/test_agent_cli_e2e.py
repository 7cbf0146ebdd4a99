"""`ken memory`, `ken archive` / `ken recall`, `ken ledger` and `ken context` against a
real daemon, as a person or a shell-driving agent uses them; and a ledger entry that
outlives a kill -9."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
from typing import Any

from click.testing import CliRunner, Result

from kenning.cli import main
from tests.daemon_harness import on_a_terminal as terminal


def ken(library, *args: str, stdin: str = "") -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "kenning", "--config", str(library.config), *args],
        check=False, capture_output=True, text=True, input=stdin, timeout=60,
    )  # fmt: skip


def ken_here(library, *args: str) -> Result:
    """`ken` run in this process, for what does not read stdin: the same commands and
    output without a process start."""
    return CliRunner().invoke(main, ["--config", str(library.config), *args])


def ken_here_json(library, *args: str) -> Any:
    done = ken_here(library, *args, "--json")
    assert done.exit_code == 0, done.output
    return json.loads(done.stdout)


def ken_json(library, *args: str, stdin: str = "") -> Any:
    done = ken(library, *args, "--json", stdin=stdin)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_archive_from_stdin_and_recall_to_stdout_exactly(library, tmp_path):
    library.configure([])
    library.daemon()
    text = "".join(f"{n:05d} résumé — 漢字 line without a newline at the end" + "\n" * (n % 3) for n in range(3000))
    text = text.rstrip("\n") + "  "
    archived = ken(library, "archive", "--title", "pytest output", stdin=text)
    assert archived.returncode == 0, archived.stderr
    handle = archived.stdout.split()[0]
    assert handle.startswith("a-") and "pytest output" in archived.stdout
    # The same text again under another title: one copy, kept as it was, and said so.
    again = ken(library, "archive", "--title", "pytest rerun", stdin=text)
    assert again.returncode == 0, again.stderr
    assert again.stdout.startswith(f"{handle}  'pytest output'")
    assert "archived before" in again.stdout and "the title 'pytest rerun' was not recorded" in again.stdout

    recalled = subprocess.run(
        [sys.executable, "-m", "kenning", "--config", str(library.config), "recall", handle],
        check=True, capture_output=True, timeout=60,
    )  # fmt: skip
    assert recalled.stdout == text.encode()
    middle = ken(library, "recall", handle, "--offset", "100", "--limit", "50")
    assert middle.stdout == text[100:150]
    listed = ken_json(library, "archive", "list")
    assert [a["handle"] for a in listed["archives"]] == [handle]
    missing = ken(library, "recall", "a-nothing1")
    assert missing.returncode == 1 and "no archive a-nothing1" in missing.stderr

    def ken_bytes(*args: str, stdin: bytes) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "kenning", "--config", str(library.config), *args],
            check=False, capture_output=True, input=stdin, timeout=60,
        )  # fmt: skip

    # CRLF line endings come back as they went in.
    crlf = ken_bytes("archive", "--title", "windows log", stdin=b"first\r\nsecond\r\n")
    assert crlf.returncode == 0, crlf.stderr
    back = ken_bytes("recall", crlf.stdout.split()[0].decode(), stdin=b"")
    assert back.stdout == b"first\r\nsecond\r\n"
    # Bytes that are not UTF-8 are refused with a one-line error, and nothing is stored.
    for command in (["archive"], ["add-text", "--uri", "u:latin1", "--title", "t"], ["memory", "add", "--title", "t"]):
        refused = ken_bytes(*command, stdin=b"caf\xe9 au lait\n")
        assert refused.returncode == 1 and b"not UTF-8 text (byte 0xe9 at offset 3)" in refused.stderr
        assert b"Traceback" not in refused.stderr
    assert len(ken_json(library, "archive", "list")["archives"]) == 2


def test_memory_commands_refuse_a_duplicate_with_status_1(library):
    library.configure([])
    library.daemon()
    body = "Never run the billing migration during the nightly invoice batch."
    first = ken_json(library, "memory", "add", "--title", "Billing migration window", "--kind", "gotcha", stdin=body)
    assert first["status"] == "created"
    twin = ken(
        library, "memory", "add", "--title", "Billing migration timing", "--kind", "gotcha",
        "--body", "Never run the billing migration during the nightly invoice batch!",
    )  # fmt: skip
    assert twin.returncode == 1 and twin.stdout.startswith(f"not stored: capsule {first['id']} ")
    # The rest in this process: the add from stdin and the refusal's exit status are the
    # ones a real process shows; eight more `ken` processes cost 0.5 s each to start.
    recalled = ken_here_json(library, "memory", "recall", "when can I run the billing migration")
    assert [hit["capsule"]["id"] for hit in recalled["capsules"]] == [first["id"]]
    assert first["id"] in ken_here(library, "memory", "list").stdout
    shown = ken_here(library, "memory", "show", first["id"])
    assert "Never run the billing migration" in shown.stdout and "used 2 times" in shown.stdout
    assert "likely duplicates (0)" in ken_here(library, "memory", "curate").stdout
    assert "agent: 1 capsule" in ken_here(library, "status").stdout
    assert ken_here(library, "memory", "forget", first["id"]).exit_code == 0
    assert ken_here_json(library, "memory", "list")["total"] == 0
    other = ken_here(library, "memory", "add", "--title", "Deploy day", "--body", "Deploys go out on Tuesdays.")
    assert other.exit_code == 0 and other.stdout.startswith("stored as m-") and other.stdout.count("m-") == 1


def test_sources_remove_refuses_kennings_own_sources_and_keeps_what_they_hold(library):
    library.configure([])
    daemon = library.daemon()
    daemon.call("memory.add", {"title": "Naps", "body": "Hedgehogs nap in the afternoon."})
    daemon.call("archive.add", {"text": "pytest: 12 passed", "title": "test run"})
    daemon.call("ledger.add", {"section": "hosts", "fields": {"hostname": "web01"}})
    daemon.call("documents.add", {"title": "Plan", "text": "Ship the owl tracker.", "source_uri": "t://plan"})
    before = {s["name"]: s["holds"] for s in daemon.call("status")["sources"]}
    for name, instead in (
        ("memory", "ken memory forget ID"),
        ("archive", "max_age_days"),
        ("ledger", "ken ledger remove ID"),
        ("agent", "ken remove URI"),
    ):
        for confirmed in ((), ("--yes",)):
            refused = ken(library, "sources", "remove", name, *confirmed)
            assert refused.returncode == 1
            assert refused.stderr.startswith(f"ken: {name!r} is kenning's own source of ") and instead in refused.stderr
            # The refusal is all it says: no question first, no progress bar claiming a removal.
            assert refused.stderr.count("\n") == 1 and refused.stdout == ""
    after = {s["name"]: s["holds"] for s in daemon.call("status")["sources"]}
    assert after == before and all(after[name] == 1 for name in ("memory", "archive", "ledger", "agent"))
    assert [c["title"] for c in ken_json(library, "memory", "list")["capsules"]] == ["Naps"]


def test_a_ledger_entry_outlives_kill_9_and_renders_as_a_block(library):
    library.configure([])
    daemon = library.daemon()
    added = ken_json(library, "ledger", "add", "hosts", "--field", "ip=10.9.8.7", "--field", "hostname=db01",
                     "--evidence", "a-abcdefgh")  # fmt: skip
    assert added["status"] == "created"
    merged = ken_json(library, "ledger", "add", "services", "--field", "host=db01", "--field", "port=5432")
    daemon.stop(signal.SIGKILL)

    library.daemon()
    entries = ken_json(library, "ledger", "list")["entries"]
    assert [(e["section"], e["identity"]) for e in entries] == [("hosts", "10.9.8.7"), ("services", "db01:5432")]
    assert set(entries[1]["aliases"]) == {"db01:5432", "10.9.8.7:5432"}
    block = ken(library, "ledger", "render", "--budget", "300").stdout
    assert block == "## hosts\n- 10.9.8.7 — hostname=db01 (evidence: a-abcdefgh)\n## services\n- db01:5432\n"
    bad = ken(library, "ledger", "add", "services", "--field", "port=5432")
    assert bad.returncode == 1 and "needs host + port" in bad.stderr
    # A field given twice is refused, not cut to its last value: that recorded one host
    # name of two, and a remove named by the second value removed that entry.
    web = ken_json(library, "ledger", "add", "hosts", "--field", "hostname=web02")["entry"]
    for command in (["add", "hosts"], ["remove", "--section", "hosts"]):
        twice = ken(library, "ledger", *command, "--field", "hostname=db01.lan", "--field", "hostname=web02")
        assert twice.returncode == 2 and "'hostname' is given twice" in twice.stderr, twice.stderr
    identities = [e["identity"] for e in ken_json(library, "ledger", "list")["entries"]]
    assert identities == ["10.9.8.7", "db01:5432", web["identity"]]
    assert ken(library, "ledger", "remove", merged["entry"]["id"]).returncode == 0
    assert "services" not in ken(library, "ledger", "render").stdout


def test_context_prints_a_pack_within_the_budget(library):
    notes = library.root / "notes"
    notes.mkdir()
    (notes / "oncall.md").write_text("# On-call handover\n\nHand the pager over on Mondays at 10:00 in #ops.\n")
    library.configure([{"name": "notes", "path": str(notes)}])
    library.daemon().wait_idle("notes")
    done = ken(library, "context", "when is the pager handed over", "--budget", "600")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("# Context for: when is the pager handed over\n")
    assert "Hand the pager over on Mondays at 10:00 in #ops." in done.stdout
    assert len(done.stdout.encode()) <= 600


def on_a_terminal(library, *args: str) -> bytes:
    """What `ken` prints when its standard output is a terminal (a pseudo-terminal here)."""
    status, shown = terminal(library.config, *args)
    assert status == 0, shown
    return shown


def test_escape_sequences_in_stored_text_reach_a_terminal_as_escapes(library):
    library.configure([])
    library.daemon()
    hostile = "before \x1b]0;PWNED\x07 after \x1b[2J end\n"
    added = ken(library, "add-text", "--uri", "ansi://1", "--title", "Hostile", stdin=hostile)
    assert added.returncode == 0, added.stderr
    archived = ken(library, "archive", "--title", "hostile log", stdin=hostile)
    handle = archived.stdout.split()[0]
    for command in (["get", "ansi://1"], ["recall", handle]):
        shown = on_a_terminal(library, *command)
        assert b"\x1b]0;" not in shown and b"\x1b[2J" not in shown
        assert b"before \\x1b]0;PWNED\\x07 after \\x1b[2J end" in shown
    # Piped, the text comes back as stored.
    assert ken(library, "recall", handle).stdout == hostile
    # A capsule's tags are the agent's too.
    capsule = ken_json(library, "memory", "add", "--title", "Naps", "--body", "Hedgehogs nap.", "--tag", "a\x1b[2Jb")
    shown = on_a_terminal(library, "memory", "show", capsule["id"])
    assert b"\x1b[2J" not in shown and b"tags: a\\x1b[2Jb" in shown
    entry = ken_json(library, "ledger", "add", "findings", "--field", "title=open \x1b[2Jlisting")["entry"]
    shown = on_a_terminal(library, "ledger", "remove", entry["id"])
    assert b"\x1b[2J" not in shown and b"open \\x1b[2Jlisting" in shown


def test_a_document_added_by_uri_is_removed_by_it_and_nothing_else_goes(library, tmp_path):
    notes = tmp_path / "notes"
    notes.mkdir()
    shared = "# Tern colony\n\nThe tern colony nests on the north spit.\n"
    (notes / "terns.md").write_text(shared)
    library.configure([{"name": "notes", "path": notes}])
    daemon = library.daemon()
    daemon.wait_idle("notes")
    plan = ken_json(library, "add-text", "--uri", "notes://plan", "--title", "Plan", stdin="Ring the puffins in May.\n")
    copy = ken_json(library, "add-text", "--uri", "notes://terns", "--title", "Terns", stdin=shared)
    assert [hit["document_id"] for hit in daemon.search("puffins")] == [plan["document_id"]]

    removed = ken(library, "remove", "notes://plan")
    assert removed.returncode == 0, removed.stderr
    assert f"removed document {plan['document_id']} 'Plan' (notes://plan)" in removed.stdout
    assert not daemon.search("puffins")
    gone = ken(library, "get", "notes://plan")
    assert gone.returncode == 1
    again = ken(library, "remove", "notes://plan")
    assert again.returncode == 1 and "no document added by an agent under 'notes://plan'" in again.stderr
    # Text the folder's file also holds stays searchable there.
    assert ken_json(library, "remove", "notes://terns")["document_id"] == copy["document_id"]
    [hit] = daemon.search("tern colony north spit")
    assert hit["path"] == str(notes / "terns.md")
    # A folder's file is not removed by its path: it goes when it is deleted.
    refused = ken(library, "remove", str(notes / "terns.md"))
    assert refused.returncode == 1 and "deleted or ignored" in refused.stderr
    assert daemon.search("tern colony north spit")


def test_a_document_added_under_a_uri_with_a_token_is_removed_by_the_uri_its_hit_shows(library):
    """A uri or URL holding a credential is shown redacted, and the raw one is kept only as
    a hash: the user who finds an agent's document in search had no way to remove it, as
    `ken remove` took the raw uri alone and nothing names the one shown."""
    library.configure([])
    daemon = library.daemon()
    token = "ghp_" + "Zq4T" * 9
    added = ken_json(
        library, "add-text", "--uri", f"notes://deploy/{token}", "--title", "Deploy", stdin="Kiwi deploy.\n"
    )
    twins = [
        ken_json(library, "add-text", "--uri", f"notes://twin/{secret}", "--title", "Twin", stdin=f"Weka {n}.\n")
        for n, secret in enumerate(("ghp_" + "Yx7R" * 9, "ghp_" + "Wv3P" * 9))
    ]
    [hit] = daemon.search("kiwi deploy")
    assert hit["path"] == "notes://deploy/[REDACTED]"

    removed = ken(library, "remove", hit["path"])
    assert removed.returncode == 0, removed.stderr
    assert f"removed document {added['document_id']} 'Deploy' (notes://deploy/[REDACTED])" in removed.stdout
    assert not daemon.search("kiwi deploy")
    # Two documents shown under one uri: which one is meant, the uri alone cannot say.
    refused = ken(library, "remove", "notes://twin/[REDACTED]")
    ids = ", ".join(str(twin["document_id"]) for twin in twins)
    assert refused.returncode == 1 and f"2 documents are stored under notes://twin/[REDACTED] ({ids})" in refused.stderr
    assert len(daemon.search("weka")) == 2


def test_add_text_with_an_empty_date_or_namespace_is_refused_and_adds_nothing(library):
    # A script passing "--date $DAY" with DAY unset would otherwise have its text dated
    # today, and outrank what it was meant to come before.
    library.configure([])
    daemon = library.daemon()
    for option in ("--date", "--namespace"):
        done = ken(library, "add-text", "--uri", "notes://empty", "--title", "Plan", option, "", stdin="Ring the puffins.\n")
        assert done.returncode == 1, (option, done.stdout)
        assert option.lstrip("-") in done.stderr, done.stderr
    assert not daemon.search("puffins")


def test_a_write_the_daemon_did_not_answer_in_time_says_how_to_see_whether_it_was_done(library, monkeypatch):
    """`ken` gives up on an answer after CALL_TIMEOUT, and the daemon goes on with the
    write: "it may have done it" left the user to guess how to find out, which `ken mcp`
    tells an agent for each tool, and a read given up on says nothing of the kind."""
    from kenning.cli import app

    library.configure([])
    library.data_dir.mkdir(mode=0o700)
    # A socket that accepts connections and never answers: a daemon busy past the wait.
    wedged = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    wedged.bind(str(library.data_dir / "kenning.sock"))
    wedged.listen(8)
    monkeypatch.setattr(app, "CALL_TIMEOUT", 0.5)
    try:
        for args, stdin, check in (
            (("memory", "add", "--title", "Naps", "--body", "Hedgehogs nap."), "", "`ken memory list` shows whether"),
            (("archive", "--title", "run"), "pytest: 12 passed", "`ken archive list` shows whether"),
            (("ledger", "add", "hosts", "--field", "hostname=web01"), "", "`ken ledger list` shows whether"),
            (("reload",), "", "`ken sources list` shows the sources the daemon took up"),
        ):
            done = CliRunner().invoke(main, ["--config", str(library.config), *args], input=stdin)
            assert done.exit_code == 1
            assert "within 0.5 s" in done.output and "it may have done it, or may still do it: " + check in done.output
        read = ken_here(library, "memory", "list")
        assert read.exit_code == 1 and "within 0.5 s" in read.output and "may" not in read.output
    finally:
        wedged.close()
