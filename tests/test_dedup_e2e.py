"""Dedup and source removal through a real daemon: one copy per document, shared across
sources, surviving the removal of any one holder and a kill -9 at any point."""

from __future__ import annotations

import json
import os
import pty
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from kenning.errors import RpcError
from kenning.store.sources import REMOVE_BATCH
from tests.daemon_harness import wait_for

FILLER = (
    "This note records the weekly review of the greenhouse sensors, the watering schedule,"
    " the supplier calls and the open questions for the next planting season, in the order"
    " they came up during the meeting on Thursday afternoon."
)


def ken(library, *args: str, stdin: str | None = None, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "kenning", "--config", str(library.config), *args],
        capture_output=True, text=True, input=stdin, timeout=60, env=env,
    )  # fmt: skip


def db_rows(library, sql: str) -> list[tuple]:
    conn = sqlite3.connect(f"file:{library.data_dir / 'kenning.db'}?mode=ro", uri=True)
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


def assert_sound(library) -> None:
    conn = sqlite3.connect(library.data_dir / "kenning.db")
    try:
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
        conn.execute("INSERT INTO items_fts (items_fts) VALUES ('integrity-check')")
    finally:
        conn.close()


def test_a_folder_copy_is_one_document_held_by_both_and_survives_either_removal(library, tmp_path):
    original, copy = tmp_path / "original", tmp_path / "copy"
    for folder in (original, copy):
        folder.mkdir()
        for n in range(5):
            (folder / f"note{n}.md").write_text(f"# Note {n}\n\nThe quokka{n} tally. {FILLER}\n")
    (copy / "only-here.md").write_text("The wombat census lives only in the copy.\n")
    library.configure([{"name": "original", "path": original}, {"name": "copy", "path": copy}])
    daemon = library.daemon()
    daemon.wait_idle("original")
    daemon.wait_idle("copy")

    for n in range(5):
        [hit] = daemon.search(f"quokka{n}")
    shown = ken(library, "show", str(hit["item_id"]))
    assert "held by:" in shown.stdout and "[original]" in shown.stdout and "[copy]" in shown.stdout
    listed = {s["name"]: s for s in daemon.call("sources.list")["sources"]}
    assert listed["original"]["documents"] == 5 and listed["copy"]["documents"] == 6
    assert daemon.call("sources.list")["library_documents"] == 6
    [owned] = daemon.search("quokka1")
    for scope, folder in (("original", original), ("copy", copy)):
        [hit] = daemon.search("quokka1", source=scope)
        # One stored copy, cited in the folder the search was scoped to.
        assert hit["item_id"] == owned["item_id"]
        assert (hit["source"], hit["path"]) == (scope, str(folder / "note1.md"))
        # Read by either file's path, the one stored copy is cited at the file named, and
        # that file leads the places holding it.
        asked = {"source": scope, "path": str(folder / "note1.md")}
        read = json.loads(ken(library, "get", asked["path"], "--json").stdout)
        assert {"source": read["source"], "path": read["path"]} == asked
        assert [read["locations"][0], len(read["locations"])] == [asked, 2]
        page = daemon.call("documents.get", {"path": asked["path"], "limit": 1})
        assert {"source": page["document"]["source"], "path": page["document"]["path"]} == asked
        assert page["items"][0]["path"] == asked["path"]
    # On a terminal, `ken get` heads the text with the file asked for and the other copy.
    leader, follower = pty.openpty()
    try:
        headed = subprocess.run(
            [sys.executable, "-m", "kenning", "--config", str(library.config), "get", str(copy / "note1.md")],
            stdout=follower, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True, timeout=60,
        )  # fmt: skip
    finally:
        os.close(follower)
        os.close(leader)
    assert headed.returncode == 0, headed.stderr
    assert headed.stderr.splitlines() == [
        f"Note 1 · {copy / 'note1.md'} · lines 1-3 of 3",
        f"same text in {original / 'note1.md'} [original]",
    ]
    # A folder reached through a link is the folder: read and cited where kenning watches it.
    (tmp_path / "linked").symlink_to(copy)
    through = daemon.call("documents.get", {"path": str(tmp_path / "linked" / "note1.md"), "line_start": 3})
    assert through["document"]["path"] == str(copy / "note1.md") and "quokka1" in through["lines"]["text"]
    # A note that says it supersedes the copy's file supersedes the one stored text.
    newer = {"title": "Tally", "text": "The quokka1 tally is kept monthly now.", "source_uri": "note://tally"}
    daemon.call("documents.add", {**newer, "supersedes": [str(copy / "note1.md")]})
    [old] = [hit for hit in daemon.search("quokka1") if hit["path"] != "note://tally"]
    assert old["document_id"] == owned["document_id"] and old["superseded_by"] is not None
    daemon.call("documents.remove", {"uri": "note://tally"})

    # The original folder taken out of the config and gone from the disk (a drive
    # unmounted): the copy's file is what a hit cites and what `ken open` opens.
    library.configure([{"name": "copy", "path": copy}])
    assert ken(library, "reload").returncode == 0
    (original / "note1.md").rename(tmp_path / "note1.md")
    [hit] = daemon.search("quokka1")
    assert hit["path"] == str(copy / "note1.md")
    # Its index is kept but not searched: a search scoped to it said "no matches".
    with pytest.raises(RpcError, match="'original' is not in the config; its index is kept but not searched") as out:
        daemon.search("quokka1", source="original")
    assert out.value.code == -32001
    recorder = tmp_path / "editor.py"
    recorder.write_text("import sys, pathlib\npathlib.Path(sys.argv[0] + '.args').write_text(sys.argv[-1])\n")
    opened = subprocess.run(
        [sys.executable, "-m", "kenning", "--config", str(library.config), "open", str(hit["item_id"])],
        capture_output=True, text=True, timeout=60, env={**os.environ, "VISUAL": f"{sys.executable} {recorder}"},
    )  # fmt: skip
    assert opened.returncode == 0, opened.stderr
    assert Path(f"{recorder}.args").read_text() == str(copy / "note1.md")
    (tmp_path / "note1.md").rename(original / "note1.md")
    library.configure([{"name": "original", "path": original}, {"name": "copy", "path": copy}])
    assert ken(library, "reload").returncode == 0

    # A file hard-linked into both folders and saved through one of them: inotify tells
    # only the watch of the folder it was saved through, and the other folder cited the
    # text its file no longer holds until the next periodic sweep, an hour later here.
    (copy / "note4.md").unlink()
    os.link(original / "note4.md", copy / "note4.md")
    for name in ("original", "copy"):
        daemon.call("sources.scan", {"name": name, "wait": True})
    (original / "note4.md").write_text("# Note 4\n\nThe quokka4 tally moved to the barn.\n")
    wait_for(lambda: daemon.search("barn", source="copy"), 15, "the copy's link to hold its new text")
    [hit] = daemon.search("quokka4", source="copy")
    assert hit["path"] == str(copy / "note4.md") and "barn" in hit["snippet"]

    removed = ken(library, "sources", "remove", "original", "--yes")
    assert removed.returncode == 0, removed.stderr
    for n in range(5):
        [hit] = daemon.search(f"quokka{n}")
        assert hit["source"] == "copy" and hit["path"] == str(copy / f"note{n}.md")
    assert "original" not in library.config.read_text()
    # The copy's own sweeps still work on the documents it inherited.
    (copy / "note0.md").write_text("# Note 0\n\nThe quokka0 tally was revised.\n")
    daemon.call("sources.scan", {"name": "copy", "wait": True})
    assert "revised" in daemon.search("quokka0")[0]["snippet"]

    assert ken(library, "sources", "remove", "copy", "--yes").returncode == 0
    assert daemon.search("quokka3") == [] and daemon.search("wombat") == []
    assert db_rows(library, "SELECT count(*) FROM items") == [(0,)]
    assert_sound(library)


def test_an_item_is_read_at_the_copy_a_source_holds_and_only_there(library, tmp_path):
    original, copy, other = tmp_path / "original", tmp_path / "copy", tmp_path / "other"
    for folder in (original, copy, other):
        folder.mkdir()
    text = f"# Tally\n\nThe quokka tally.\n\n{FILLER}\n"
    (original / "tally.md").write_text(text)
    (copy / "tally.md").write_text(text)
    (other / "elsewhere.md").write_text("The wombat census.\n")
    folders = {"original": original, "other": other}
    library.configure([{"name": name, "path": folder} for name, folder in folders.items()])
    daemon = library.daemon()
    daemon.wait_idle("original")
    daemon.wait_idle("other")
    # The copy's folder comes second, so the original's file holds the stored text.
    folders["copy"] = copy
    library.configure([{"name": name, "path": folder} for name, folder in folders.items()])
    daemon.call("reload")
    daemon.wait_idle("copy")
    [hit] = daemon.search("quokka", source="copy")
    item_id, document_id = hit["item_id"], hit["document_id"]
    here, there = str(copy / "tally.md"), str(original / "tally.md")
    assert hit["path"] == here

    # An item id names the one stored text; `source` names the file to cite it at.
    plain = daemon.call("documents.get", {"item_id": item_id})["item"]
    assert (plain["source"], plain["path"], plain["locations"][0]["source"]) == ("original", there, "original")
    item = daemon.call("documents.get", {"item_id": item_id, "source": "copy"})["item"]
    assert (item["source"], item["path"], item["content"]) == ("copy", here, plain["content"])
    assert item["locations"] == [{"source": "copy", "path": here}, {"source": "original", "path": there}]
    for params in ({"item_id": item_id}, {"document_id": document_id}):
        lines = daemon.call("documents.get", {**params, "source": "copy", "line_start": 3, "line_end": 3})
        assert (lines["document"]["path"], lines["lines"]["text"]) == (here, "The quokka tally.")
        assert lines["document"]["locations"][0]["source"] == "copy"
    read = daemon.call("documents.read", {"document_id": document_id, "source": "copy", "line_start": 3})
    assert (read["source"], read["path"], read["lines"][0]) == ("copy", here, "The quokka tally.")
    assert [place["source"] for place in read["locations"]] == ["copy", "original"]
    # The owner named is the owner's file, as without it.
    owned = daemon.call("documents.get", {"item_id": item_id, "source": "original"})["item"]
    assert owned == plain

    # An unknown source, or one holding no copy, is an error naming what does.
    for method, params in (("documents.get", {"item_id": item_id}), ("documents.read", {"document_id": document_id})):
        with pytest.raises(RpcError) as unknown:
            daemon.call(method, {**params, "source": "nope"})
        assert (unknown.value.code, str(unknown.value)) == (-32001, "unknown source 'nope'; see `ken sources list`")
        with pytest.raises(RpcError) as elsewhere:
            daemon.call(method, {**params, "source": "other"})
        assert elsewhere.value.code == -32001
        assert "source 'other' holds no copy of" in str(elsewhere.value)
        assert str(elsewhere.value).endswith("it is held by original, copy")
    with pytest.raises(RpcError) as both:
        daemon.call("documents.get", {"path": here, "source": "copy"})
    assert both.value.code == -32602 and "a path names its own copy" in str(both.value)

    # `ken show` lists every holder; with --source it cites that source's file.
    shown = ken(library, "show", str(item_id))
    first, last = hit["line_start"], hit["line_end"]
    assert shown.stdout.splitlines()[1] == f"{there}:{first}  lines {first}-{last}  [original]"
    assert "held by:\n  [original] " + there + "\n  [copy] " + here in shown.stdout
    shown = ken(library, "show", str(item_id), "--source", "copy")
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.splitlines()[1] == f"{here}:{first}  lines {first}-{last}  [copy]"
    assert "held by:\n  [copy] " + here + "\n  [original] " + there in shown.stdout
    around = json.loads(ken(library, "show", str(item_id), "--source", "copy", "-C", "1", "--json").stdout)
    assert (around["item"]["path"], around["context"]["path"], around["context"]["source"]) == (here, here, "copy")

    # `ken open` opens the file of the source named, at the hit's line; without one, the
    # stored copy's; an unknown source, or one holding no copy, opens nothing.
    recorder = tmp_path / "editor.py"
    recorder.write_text("import sys, pathlib\npathlib.Path(sys.argv[0] + '.args').write_text(' '.join(sys.argv[1:]))\n")
    asked = Path(f"{recorder}.args")
    editor = {**os.environ, "VISUAL": f"{sys.executable} {recorder}"}
    for extra, path in (((), there), (("--source", "copy"), here), (("--source", "original"), there)):
        opened = ken(library, "open", str(item_id), *extra, env=editor)
        assert opened.returncode == 0, opened.stderr
        assert asked.read_text() == f"+{first} {path}"
        asked.unlink()
    for name, message in (("nope", "ken: unknown source 'nope'"), ("other", "ken: source 'other' holds no copy of")):
        refused = ken(library, "open", str(item_id), "--source", name, env=editor)
        assert refused.returncode == 1 and refused.stderr.startswith(message), refused.stderr
        assert not asked.exists()
        shown = ken(library, "show", str(item_id), "--source", name)
        assert shown.returncode == 1 and shown.stderr.startswith(message) and shown.stdout == ""

    # A hit cited at a copy says so, and search prints the command that opens that copy.
    assert (hit["copy"], daemon.search("quokka")[0]["copy"], daemon.search("quokka", source="original")[0]["copy"]) == (
        True, False, False,
    )  # fmt: skip
    hint = f"ken open {item_id} --source copy"
    scoped = ken(library, "search", "quokka", "--source", "copy", "--leg", "keyword")
    assert f"    open this copy: {hint}\n" in scoped.stdout
    assert f"item {item_id} (`{hint}`)" in ken(library, "search", "quokka", "--source", "copy", "--format", "md").stdout
    for scope in ((), ("--source", "original")):
        assert "open this copy" not in ken(library, "search", "quokka", *scope, "--leg", "keyword").stdout


def test_kill_9_during_a_source_removal_loses_nothing_and_the_restart_finishes_it(library, tmp_path):
    doomed, keeper = tmp_path / "doomed", tmp_path / "keeper"
    doomed.mkdir()
    keeper.mkdir()
    # Removed REMOVE_BATCH (200) documents a transaction: 600 leave two commits after
    # the first for the kill to land before (a batch takes 0.15 s on an idle machine),
    # and every eighth is a copy the keeper must take over, a share of each batch.
    held = 600
    shared = range(0, held, 8)
    for n in range(held):
        (doomed / f"d{n}.md").write_text(f"Entry lynx{n} in the doomed folder.\n")
    for n in shared:
        (keeper / f"k{n}.md").write_text(f"Entry lynx{n} in the doomed folder.\n")
    library.configure([{"name": "doomed", "path": doomed}, {"name": "keeper", "path": keeper}])
    daemon = library.daemon()
    daemon.wait_idle("doomed", timeout=90)
    daemon.wait_idle("keeper", timeout=90)

    remover = subprocess.Popen(
        [sys.executable, "-m", "kenning", "--config", str(library.config), "sources", "remove", "doomed", "--yes"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    def under_way() -> bool:
        rows = db_rows(library, "SELECT removing, (SELECT count(*) FROM documents d WHERE d.source_id = s.id)"
                                " FROM sources s WHERE s.name = 'doomed'")  # fmt: skip
        return not rows or (rows[0][0] == 1 and rows[0][1] <= held - REMOVE_BATCH)

    wait_for(under_way, timeout=30, what="the removal to be under way", interval=0.005)
    daemon.proc.kill()
    daemon.proc.wait()
    remover.wait(timeout=30)
    assert db_rows(library, "SELECT removing FROM sources WHERE name = 'doomed'") == [(1,)], "not interrupted"

    daemon = library.daemon()
    wait_for(lambda: db_rows(library, "SELECT count(*) FROM sources WHERE name = 'doomed'") == [(0,)],
             timeout=30, what="the removal to finish")  # fmt: skip
    daemon.wait_idle("keeper")
    for n in shared:
        [hit] = daemon.search(f"lynx{n}")
        assert hit["source"] == "keeper"
    assert daemon.search("lynx1") == [] and daemon.search("lynx599") == []
    assert db_rows(library, "SELECT count(*) FROM documents") == [(len(shared),)]
    assert db_rows(library, "SELECT count(*) FROM items") == [(len(shared),)]
    assert_sound(library)


def test_kill_9_during_a_near_duplicate_sweep_then_a_rerun_leaves_one_copy_of_each(library, tmp_path):
    first, second = tmp_path / "first", tmp_path / "second"
    first.mkdir()
    second.mkdir()
    # Collapsed COLLAPSE_BATCH (100) a transaction: the kill lands with two or three left.
    pairs = 350
    for n in range(pairs):
        # Re-spaced copies: a collapse folds only a copy with no line of its own.
        body = f"The heron{n} survey. {FILLER} {FILLER} Filed by the north team."
        (first / f"survey{n}.md").write_text(body + "\n")
        (second / f"survey{n} (1).md").write_text(body.replace(". ", ".  ") + "\n")
    library.configure(
        [{"name": "first", "path": first}, {"name": "second", "path": second}],
        extra="[dedup]\nevery_n_sweeps = 0\n",
    )
    daemon = library.daemon()
    # The targeted pass after the scans collapses the pairs in batches; stop it midway.
    # Polled at leisure while the scans run (a poll every 5 ms would take a share of a
    # core from them), then often from when every copy is read.
    read = "SELECT count(*) FROM documents WHERE status IN ('done', 'merged')"
    wait_for(lambda: db_rows(library, read) == [(2 * pairs,)], timeout=90, what="both folders to be read")
    wait_for(lambda: 0 < db_rows(library, "SELECT count(*) FROM documents WHERE status = 'merged'")[0][0],
             timeout=90, what="the near-duplicate pass to start collapsing", interval=0.005)  # fmt: skip
    daemon.proc.kill()
    daemon.proc.wait()
    [(merged,)] = db_rows(library, "SELECT count(*) FROM documents WHERE status = 'merged'")
    assert 0 < merged < pairs, f"{merged} of {pairs} collapsed: the kill did not land mid-sweep"
    assert_sound(library)

    daemon = library.daemon()
    daemon.wait_idle("first", timeout=90)
    daemon.wait_idle("second", timeout=90)
    wait_for(lambda: daemon.call("status")["embedder"]["job"]["state"] == "idle", timeout=60, what="embedding")
    result = ken(library, "dedup")
    assert result.returncode == 0, result.stderr
    for n in range(0, pairs, 7):
        assert len(daemon.search(f"heron{n}")) == 1
    assert db_rows(library, "SELECT count(*) FROM documents WHERE status = 'merged'") == [(pairs,)]
    assert db_rows(library, "SELECT count(*) FROM documents WHERE status = 'done'") == [(pairs,)]
    assert_sound(library)


def test_a_near_duplicate_collapse_leaves_each_copys_own_line_findable_at_its_file(library, tmp_path):
    """Two plans share thirty paragraphs and differ in the owner line: collapsing one into
    the other dropped its owner line, so `ken search` found that name nowhere."""
    shared = "".join(f"## Step {n}\n\nThe ibex{n} stage of the move. {FILLER}\n\n" for n in range(30))
    folders = {}
    for name, owner in (("north", "Xanthippe"), ("south", "Aristides")):
        folders[name] = tmp_path / name
        folders[name].mkdir()
        (folders[name] / "plan.md").write_text(f"# Plan\n\nOwner: {owner}\n\n{shared}")
    library.configure([{"name": name, "path": folder} for name, folder in folders.items()])
    daemon = library.daemon()
    for name in folders:
        daemon.wait_idle(name)
    wait_for(lambda: daemon.call("status")["embedder"]["job"]["state"] == "idle", timeout=60, what="embedding")
    # The sweep still matches the two as near-duplicates, and leaves them two documents.
    swept = daemon.call("dedup")
    assert (swept["pairs"], swept["collapsed"]) == (1, 0)

    for name, owner in (("north", "Xanthippe"), ("south", "Aristides")):
        searched = ken(library, "search", owner, "--json")
        assert searched.returncode == 0, searched.stderr
        [hit] = [hit for hit in json.loads(searched.stdout)["hits"] if owner in hit["snippet"]]
        assert (hit["source"], hit["path"]) == (name, str(folders[name] / "plan.md"))
        assert hit["line_start"] <= 3 <= hit["line_end"]
    # A shared paragraph still shows once, naming the other file that holds it.
    [hit] = daemon.search("ibex17")
    places = {hit["path"], *(other["path"] for other in hit["also_at"])}
    assert places == {str(folder / "plan.md") for folder in folders.values()}
    assert_sound(library)
