"""What `ken` sends a terminal when the library holds escape sequences: in an agent's
text, a capsule, an archive, a ledger entry, a file's name and text, a folder's name.
Each command prints them written out (`\\x1b`), never as the bytes a terminal acts on
(an OSC retitles the window, OSC 52 writes the clipboard, CSI 2J clears the screen);
`--json` stays exact JSON, and text piped elsewhere comes out as stored.

Against a real daemon, each command run on a pseudo-terminal."""

from __future__ import annotations

import json
import re
import subprocess
import sys

from tests.daemon_harness import on_a_terminal, wait_for
from tests.fake_ollama import fake_ollama

# Retitle the window, write the clipboard (OSC 52, "owned" in base64), clear the screen.
HOSTILE = "\x1b]0;owned\x07\x1b]52;c;b3duZWQ=\x07\x1b[2J"
# As `ken` writes it out: `\x1b]0;owned\x07...`, one backslash each.
SHOWN = HOSTILE.encode("unicode_escape")
# What `ken` itself sends a terminal: click's colours (SGR, ESC [ ... m) and rich's progress
# bars (hide and show the cursor, erase the line, go up one). Any other ESC, and any BEL,
# came from the library.
OWN_CONTROLS = re.compile(rb"\x1b\[(?:[0-9;]*m|\?25[lh]|2K|1A)")


def raw_controls(shown: bytes) -> list[bytes]:
    """The escape sequences and bells in `shown` that `ken` did not write itself."""
    return re.findall(rb"\x1b.{0,12}|\x07", OWN_CONTROLS.sub(b"", shown))


def ken(library, *args: str, stdin: str = "") -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "kenning", "--config", str(library.config), *args],
        check=False, capture_output=True, text=True, input=stdin, timeout=60,
    )  # fmt: skip


def shown_on_a_terminal(library, *args: str, status: int = 0, env: dict[str, str] | None = None) -> bytes:
    code, shown = on_a_terminal(library.config, *args, env=env)
    assert code == status, shown
    assert raw_controls(shown) == [], (args, shown)
    return shown


def test_what_agents_keep_reaches_a_terminal_escaped(library):
    library.configure([])
    library.daemon()
    added = ken(library, "add-text", "--uri", "agent://hostile", "--title", "Wombat report", "--tag", f"t{HOSTILE}",
                stdin=f"Wombats dig {HOSTILE} burrows.\n")  # fmt: skip
    assert added.returncode == 0, added.stderr
    capsule = ken(library, "memory", "add", "--title", "Wombat burrows", "--body", f"Wombats dig {HOSTILE} deep.",
                  "--tag", f"t{HOSTILE}", "--source", f"s{HOSTILE}", "--json")  # fmt: skip
    assert capsule.returncode == 0, capsule.stderr
    archived = ken(library, "archive", "--title", "wombat log", "--tag", f"t{HOSTILE}", stdin=f"wombat log {HOSTILE}\n")
    assert archived.returncode == 0, archived.stderr
    entry = ken(library, "ledger", "add", "hosts", "--field", "ip=10.9.8.7", "--field", f"hostname=db{HOSTILE}",
                "--owner", f"o{HOSTILE}", "--evidence", f"e{HOSTILE}")  # fmt: skip
    assert entry.returncode == 0, entry.stderr
    item = next(hit for hit in ken_search(library) if hit["path"] == "agent://hostile")["item_id"]

    # Each shows the stored text, written out.
    for command in (
        ["ledger", "render"],
        ["ledger", "list"],
        ["ledger", "add", "findings", "--field", f"title=open {HOSTILE}"],
        ["context", "wombat"],
        ["memory", "recall", "wombat"],
        ["memory", "show", json.loads(capsule.stdout)["id"]],
        ["recall", archived.stdout.split()[0]],
        ["get", "agent://hostile"],
        ["show", str(item)],
        ["search", "wombat"],
        ["search", "wombat", "--format", "md"],
    ):
        assert SHOWN in shown_on_a_terminal(library, *command), command
    # These name what holds it (titles, paths), which hold none.
    for command in (["memory", "list"], ["archive", "list"], ["search", "wombat", "--format", "paths"]):
        shown_on_a_terminal(library, *command)

    # Piped, the text is as stored (`ken ledger render > prompt.txt`); as JSON, exact.
    assert f"hostname=db{HOSTILE}" in ken(library, "ledger", "render").stdout
    assert f"Wombats dig {HOSTILE} burrows." in ken(library, "context", "wombat").stdout
    code, shown = on_a_terminal(library.config, "context", "wombat", "--json")
    assert code == 0 and f"Wombats dig {HOSTILE} burrows." in json.loads(shown)["text"]


def ken_search(library) -> list[dict]:
    done = ken(library, "search", "wombat", "--leg", "keyword", "--json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)["hits"]


def test_a_folders_and_files_names_reach_a_terminal_escaped(library, tmp_path):
    root = tmp_path / f"notes{HOSTILE}"
    root.mkdir()
    filler = "Wombats dig their burrows with strong claws and sleep in them by day. " * 8
    note = root / f"wombat{HOSTILE}.md"
    note.write_text(f"# Wombats\n\nWombats dig {HOSTILE} burrows.\n\n{filler}\n")
    locked = root / f"locked{HOSTILE}"
    locked.mkdir()
    (locked / "inside.md").write_text("# Inside\n\nA wombat note in a folder about to be closed.\n")
    # TOML takes control characters only as escapes.
    escaped_root = str(root).encode("unicode_escape").decode().replace("\\x", "\\u00")
    library.configure([{"name": "notes", "path": escaped_root}])
    daemon = library.daemon(plain_permissions=True)
    assert daemon.wait_idle("notes")["holds"] == 2

    locked.chmod(0)
    try:
        # The wait names the folder it could not read; status and doctor name it too.
        assert SHOWN in shown_on_a_terminal(library, "scan", "notes", "--wait")
        assert SHOWN in shown_on_a_terminal(library, "status")
        assert SHOWN in shown_on_a_terminal(library, "sources", "list")
        assert SHOWN in shown_on_a_terminal(library, "doctor", status=1)
    finally:
        locked.chmod(0o755)
    assert SHOWN in shown_on_a_terminal(library, "search", "wombats", "--leg", "keyword")
    assert SHOWN in shown_on_a_terminal(library, "get", str(note))
    # An error that names the file: here, where the hit is when no editor is set.
    item = next(hit for hit in ken_search(library) if hit["path"] == str(note))["item_id"]
    assert SHOWN in shown_on_a_terminal(library, "open", str(item), status=1, env={"VISUAL": "", "EDITOR": ""})

    # The folder gone: the sweep's error quotes its name, and the wait ends with it.
    root.rename(tmp_path / "gone")
    assert SHOWN in shown_on_a_terminal(library, "scan", "notes", "--wait", status=1)
    assert SHOWN in shown_on_a_terminal(library, "doctor", status=1)
    assert SHOWN in shown_on_a_terminal(library, "status")


def test_a_wait_shows_a_sweep_error_that_reads_as_rich_markup(library, tmp_path):
    # A path, not a name, may hold "[/x]": a folder "notes[" holding one named "x]".
    root = tmp_path / "notes[" / "x]"
    root.mkdir(parents=True)
    (root / "a.md").write_text("# A\n\nA wombat.\n")
    library.configure([{"name": "notes", "path": str(root)}])
    library.daemon().wait_idle("notes")
    root.rename(tmp_path / "gone")
    # The progress bars show the sweep's error as written; taken for markup, a closing
    # tag that opens nothing ended the wait in a traceback.
    code, shown = on_a_terminal(library.config, "scan", "notes", "--wait")
    assert code == 1 and b"Traceback" not in shown, shown
    assert f"ken: notes: cannot read {root}: No such file or directory".encode() in shown


def test_a_backends_error_quoted_in_a_note_reaches_a_terminal_escaped(library):
    with fake_ollama() as ollama:
        embedder = f'[embedder]\nbackend = "ollama"\nmodel = "fake-embed"\nbase_url = "{ollama.url}"\ntimeout = 30\n'
        library.configure([], embedder)
        daemon = library.daemon()
        daemon.call("documents.add", {"title": "Wombats", "text": "Wombats dig burrows.", "source_uri": "t://w"})
        daemon.call("memory.add", {"title": "Wombat burrows", "body": "Wombats dig burrows at dusk."})
        wait_for(lambda: daemon.call("status")["embedder"]["vectors"] == 2, timeout=30, what="the vectors")
        # Ollama passes on what its model runner printed, and the search's note quotes it.
        ollama.error_text = f"runner crashed {HOSTILE}"
        ollama.mode = "error500"
        note = b"note: vector leg skipped: ollama error 500: runner crashed " + SHOWN
        shown = shown_on_a_terminal(library, "search", "wombats")
        assert note in shown and b"Wombats" in shown
        # Recall and a context pack search too; their notes were not shown at all.
        for command in (["memory", "recall", "wombats"], ["context", "wombats"]):
            shown = shown_on_a_terminal(library, *command)
            assert note in shown and b"Wombats dig burrows" in shown, command


def test_a_folder_being_added_is_named_escaped(library, tmp_path):
    folder = tmp_path / f"inbox{HOSTILE}"
    folder.mkdir()
    (folder / "wombat.md").write_text("# Wombats\n\nWombats dig burrows.\n")
    library.configure([])
    library.daemon()
    # The cost preview and the confirmation each name the folder just typed.
    shown = shown_on_a_terminal(library, "sources", "add", str(folder), "--name", "inbox", "--yes")
    assert shown.count(SHOWN) == 2 and b"added source 'inbox'" in shown
    refused = shown_on_a_terminal(library, "sources", "add", str(folder), "--name", "again", "--yes", status=1)
    assert SHOWN + b" is already a source" in refused
