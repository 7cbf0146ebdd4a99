"""`ken` as a user types it against a real daemon: --wait, reading around a hit (get, show
--context, open), search output formats, and the small frictions of issue 13."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from kenning.cli import main
from tests.daemon_harness import write_config
from kenning.cli.app import COMMANDS
from kenning.errors import RpcError
from tests.helpers import make_pdf


def ken(config: Path, *args: str, env: dict | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    import os

    return subprocess.run(
        [sys.executable, "-m", "kenning", "--config", str(config), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
        env={**os.environ, **(env or {})},
    )


GUIDE = "# Guide\n\nIntro line.\n\n## Install\n\nFirst step.\nRun the wombat installer.\nThird step.\n\n## Use\n\nLast words.\n"


def test_sources_add_and_scan_wait_until_searchable_and_embedded(library, tmp_path):
    notes = tmp_path / "notes"
    notes.mkdir()
    for index in range(40):
        (notes / f"n{index}.md").write_text(f"# Note {index}\n\n" + f"The capybara number {index} swims. " * 80)
    library.configure([])
    daemon = library.daemon()

    added = ken(library.config, "sources", "add", str(notes), "--yes", "--wait")
    assert added.returncode == 0, added.stderr
    assert added.stdout.strip().endswith("notes: searchable")
    # Not a poll-and-hope: at the moment --wait returns every file is in and every chunk has its vector.
    status = daemon.call("status")
    [source] = status["sources"]
    assert (source["done"], source["scanning"]) == (40, False)
    assert status["embedder"]["vectors"] == source["chunks"] > 40
    assert status["embedder"]["job"]["state"] == "idle"
    assert "notes:" in added.stderr  # the progress, on stderr (plain lines off a terminal)

    (notes / "late.md").write_text("# Late\n\nA pangolin arrives late.\n")
    scanned = ken(library.config, "scan", "notes", "--wait")
    assert scanned.returncode == 0, scanned.stderr
    assert "swept notes:" in scanned.stdout and "notes: searchable" in scanned.stdout
    assert daemon.search("pangolin")
    status = daemon.call("status")
    assert status["embedder"]["vectors"] == status["sources"][0]["chunks"]

    unknown = ken(library.config, "scan", "nope", "--wait")
    assert unknown.returncode == 1 and "unknown source 'nope'" in unknown.stderr

    # Another config on the same data directory: the running daemon does not read it,
    # and `sources add` says so rather than that the folder is being indexed. Asked in
    # this process: what is checked is what the CLI answers, and a `ken` process took
    # 0.5 s (more under load) to start.
    other = write_config(tmp_path / "other.toml", library.data_dir, [])
    more = tmp_path / "more"
    more.mkdir()
    (more / "m.md").write_text("# More\n\nA tapir.\n")
    elsewhere = CliRunner().invoke(main, ["--config", str(other), "sources", "add", str(more), "--yes"])
    assert elsewhere.exit_code == 0, elsewhere.stderr
    assert f"the running daemon reads {library.config}, not {other}" in elsewhere.stdout
    assert "indexing it now" not in elsewhere.stdout
    most = tmp_path / "most"
    most.mkdir()
    waited = CliRunner().invoke(main, ["--config", str(other), "sources", "add", str(most), "--yes", "--wait"])
    assert waited.exit_code == 1 and f"the running daemon reads {library.config}" in waited.stdout
    # A reload of that config re-reads the daemon's own: it said "reloaded" alone, and
    # the folders `other.toml` names were never indexed with no word of why.
    reloaded = CliRunner().invoke(main, ["--config", str(other), "reload"])
    assert reloaded.exit_code == 0 and f"the running daemon reads {library.config}, not {other}" in reloaded.output
    assert [source["name"] for source in daemon.call("status")["sources"]] == ["notes"]


def test_get_show_context_open_and_search_formats(library, tmp_path):
    notes = tmp_path / "notes"
    notes.mkdir()
    guide = notes / "guide.md"
    guide.write_text(GUIDE)
    make_pdf(notes / "paper.pdf", [["Opening page text."], ["The marmoset study results.", "More findings here."]])
    library.configure([{"name": "notes", "path": notes}])
    daemon = library.daemon()
    daemon.wait_idle("notes")
    [hit] = daemon.search("wombat")

    lines = ken(library.config, "get", str(guide), "--lines", "7-9")
    assert lines.returncode == 0, lines.stderr
    assert lines.stdout == "First step.\nRun the wombat installer.\nThird step.\n"
    whole = ken(library.config, "get", str(hit["document_id"]), "--numbers")
    assert " 8  Run the wombat installer.\n" in whole.stdout and whole.stdout.startswith(" 1  # Guide\n")
    as_json = json.loads(ken(library.config, "get", str(guide), "--lines", "8", "--json").stdout)
    assert (as_json["lines"], as_json["line_start"], as_json["last_line"]) == (["Run the wombat installer."], 8, 13)
    # A relative path is the caller's, not the daemon's.
    relative = subprocess.run(
        [sys.executable, "-m", "kenning", "--config", str(library.config), "get", "guide.md", "--lines", "8"],
        capture_output=True,
        text=True,
        cwd=notes,
    )
    assert relative.stdout == "Run the wombat installer.\n"

    # A PDF's lines count in its extracted text, which `get` shows: the hit's lines hold the words.
    [pdf_hit] = daemon.search("marmoset")
    extracted = ken(
        library.config, "get", str(notes / "paper.pdf"), "--lines", f"{pdf_hit['line_start']}-{pdf_hit['line_end']}"
    )
    assert "marmoset" in extracted.stdout

    shown = ken(library.config, "show", str(hit["item_id"]), "--context", "2")
    assert shown.returncode == 0, shown.stderr
    numbered = [line for line in shown.stdout.splitlines() if line[:2].strip().isdigit()]
    marked = [line for line in numbered if line.split()[0].endswith(">")]
    assert any("wombat" in line for line in marked)
    assert int(numbered[0].split()[0].rstrip(">")) == max(hit["line_start"] - 2, 1)

    missing = ken(library.config, "get", str(notes / "nope.md"))
    assert missing.returncode == 1 and "is not in the library" in missing.stderr
    bad_range = ken(library.config, "get", str(guide), "--lines", "9-3")
    assert bad_range.returncode == 2 and "ends before it starts" in bad_range.stderr

    recorder = tmp_path / "editor.py"
    recorder.write_text(
        "import sys, pathlib\npathlib.Path(sys.argv[0] + '.args').write_text('\\n'.join(sys.argv[1:]))\n"
    )
    opened = ken(
        library.config, "open", str(hit["item_id"]), env={"VISUAL": "", "EDITOR": f"{sys.executable} {recorder}"}
    )
    assert opened.returncode == 0, opened.stderr
    assert Path(str(recorder) + ".args").read_text().split("\n") == [f"+{hit['line_start']}", str(guide)]
    refused = ken(library.config, "open", str(pdf_hit["item_id"]), env={"EDITOR": "true"})
    assert refused.returncode == 1 and f"ken get {pdf_hit['document_id']} --lines" in refused.stderr
    # An editor that is no command was a Python traceback: a $VISUAL of spaces (it hid
    # $EDITOR), a quote left open, a folder.
    bad_editors = ((" ", 'vim -c "set nu', "No closing quotation"), ("", str(tmp_path), "Permission denied"))
    for visual, editor, said in bad_editors:
        bad = ken(library.config, "open", str(hit["item_id"]), env={"VISUAL": visual, "EDITOR": editor})
        assert bad.returncode == 1 and bad.stderr.startswith("ken: ") and said in bad.stderr, bad.stderr
        assert "$EDITOR" in bad.stderr and "Traceback" not in bad.stderr

    paths = ken(library.config, "search", "wombat", "--format", "paths", "--leg", "keyword")
    assert paths.stdout.splitlines() == [f"{guide}:{hit['line_start']}: Guide — Guide > Install"]
    markdown = ken(library.config, "search", "wombat", "--format", "md", "--leg", "keyword")
    assert markdown.stdout.startswith("1. **Guide** — Guide > Install")
    assert f"`{guide}:{hit['line_start']}-{hit['line_end']}`" in markdown.stdout
    assert "**wombat**" in markdown.stdout
    text = ken(library.config, "search", "wombat", "--leg", "keyword")
    assert f"{guide}:{hit['line_start']}  lines {hit['line_start']}-{hit['line_end']}" in text.stdout
    assert "\x1b[" not in text.stdout  # not a terminal: no colour codes


def test_unknown_namespace_is_an_error_like_an_unknown_source(library, tmp_path):
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "a.md").write_text("The quokka smiles.\n")
    library.configure([{"name": "notes", "path": notes, "namespace": "home"}])
    daemon = library.daemon()
    daemon.wait_idle("notes")
    assert daemon.search("quokka", namespace="home")
    wrong = ken(library.config, "search", "quokka", "--namespace", "hom")
    assert wrong.returncode == 1
    assert "unknown namespace 'hom'; namespaces: home" in wrong.stderr
    # An empty filter, as a script's unset variable passes it, is refused, not dropped.
    for option in ("--namespace", "--source", "--since", "--until"):
        empty = ken(library.config, "search", "quokka", option, "")
        assert empty.returncode == 1 and option.removeprefix("--") in empty.stderr, (option, empty.stderr)


def test_missing_config_is_an_error_and_no_color_is_respected(tmp_path):
    missing = tmp_path / "nonexistent.toml"
    result = CliRunner().invoke(main, ["--config", str(missing), "status"])
    assert result.exit_code == 1 and f"config file {missing} does not exist" in result.output

    config = tmp_path / "config.toml"
    config.write_text("[daemon\n")
    coloured = CliRunner().invoke(main, ["--config", str(config), "doctor"], color=True)
    assert "\x1b[" in coloured.output
    plain = CliRunner(env={"NO_COLOR": "1"}).invoke(main, ["--config", str(config), "doctor"], color=True)
    assert "\x1b[" not in plain.output and "PROBLEM" in plain.output and "not valid TOML" in plain.output


def test_every_command_has_an_example_and_every_option_help():
    ctx = main.make_context("ken", ["--help"], resilient_parsing=True)
    missing = []

    def visit(command, path):
        if command.hidden:
            return
        if hasattr(command, "commands"):
            for name in command.list_commands(ctx):
                visit(command.get_command(ctx, name), f"{path} {name}")
            if path != "ken" and "Examples:" not in (command.help or ""):
                missing.append(f"{path}: no example")
            return
        if "Examples:" not in (command.help or ""):
            missing.append(f"{path}: no example")
        for param in command.params:
            if param.param_type_name == "option" and not param.help and param.name != "help":
                missing.append(f"{path} --{param.name}: no help")

    visit(main, "ken")
    assert set(COMMANDS) <= set(main.list_commands(ctx))
    assert missing == []


def test_search_prints_one_line_per_hit_whatever_names_and_titles_hold(library, tmp_path):
    """A file's name (and so its title) may hold a newline or an escape sequence. Printed
    raw, `--format paths` made a line of its own of it, a hit that `vim -q` would open
    (here .bashrc), and escapes reached the terminal. An agent's title or uri holding
    one is refused."""
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "okapi\n.bashrc:1: okapi\x1b[2J.txt").write_text("The okapi hides in the forest.\n")
    library.configure([{"name": "notes", "path": notes}])
    daemon = library.daemon()
    daemon.wait_idle("notes")
    # A title or a uri is one line: one holding a control character is refused, nothing stored.
    with pytest.raises(RpcError, match="U\\+000D"):
        daemon.call(
            "documents.add",
            {"title": "Okapi notes", "text": "An okapi eats leaves.\n", "source_uri": "mem://okapi\r\n/etc/passwd:1: x"},
        )
    with pytest.raises(RpcError, match="U\\+000A"):
        daemon.call("documents.add", {"title": "Okapi\n/etc/passwd:1: x", "text": "okapi", "source_uri": "mem://2"})

    paths = ken(library.config, "search", "okapi", "--format", "paths", "--leg", "keyword")
    assert paths.returncode == 0, paths.stderr
    assert sorted(paths.stdout.split("\n")) == [
        "",
        f"{notes}/okapi\\n.bashrc:1: okapi\\x1b[2J.txt:1: okapi\\n.bashrc:1: okapi\\x1b[2J",
    ]
    markdown = ken(library.config, "search", "okapi", "--format", "md", "--leg", "keyword")
    assert markdown.returncode == 0, markdown.stderr
    assert [line[:3] for line in markdown.stdout.split("\n")] == ["1. ", "   ", "   ", ""]
    text = ken(library.config, "search", "okapi", "--leg", "keyword")
    assert text.returncode == 0, text.stderr
    for raw in ("\x1b", "\r", "\n/etc/passwd", "\n.bashrc"):
        assert raw not in text.stdout


def test_a_note_holding_the_searched_word_ranks_above_one_only_near_it_in_meaning(library, tmp_path):
    """A keyword-only hit and a vector-only hit each score their leg's weight; the one
    that holds the word goes first, however new the other is."""
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "fm.md").write_text('---\ntitle: "deploy notes"\n---\nfrontmatter marmot2\n')
    newer = notes / "x.md"
    newer.write_text("dir secret marmot4\n")
    os.utime(newer, (time.time() + 60, time.time() + 60))
    library.configure([])
    library.daemon()
    added = ken(library.config, "sources", "add", str(notes), "--yes", "--wait")
    assert added.returncode == 0, added.stderr
    found = ken(library.config, "search", "marmot2", "--format", "paths")
    assert found.returncode == 0, found.stderr
    assert found.stdout.splitlines()[0].startswith(f"{notes}/fm.md:")
