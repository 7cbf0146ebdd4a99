"""Walking `memory.list` and `archive.list` page by page on a real daemon while another
client writes between the pages. By offset, a capsule added pushed one already read onto
the next page (read twice) and one forgotten pulled an unread one back (never read); by
`next_cursor`, every entry there from the first page to the last is read exactly once."""

from __future__ import annotations

import base64
import json
import subprocess
import sys
from collections import Counter

import pytest

from kenning.errors import RpcError

INVALID_PARAMS = -32602
WORDS = "otter heron badger lynx marten stoat vole shrew weasel ferret mink sable".split()


def walk(daemon, method: str, key: str, ident: str, params: dict, between) -> list[str]:
    """Every id the pages return, following next_cursor; `between(page)` runs after each page."""
    seen: list[str] = []
    cursor = None
    page = 0
    while True:
        answer = daemon.call(method, {**params, **({"cursor": cursor} if cursor else {})})
        seen += [entry[ident] for entry in answer[key]]
        cursor = answer["next_cursor"]
        if cursor is None:
            return seen
        between(page)
        page += 1


def remember(daemon, title: str, body: str, **extra) -> str:
    return daemon.call("memory.add", {"title": title, "body": body, "force": True, **extra})["id"]


def test_memory_list_by_cursor_reads_each_capsule_once_while_another_client_writes(library):
    library.configure([])
    daemon = library.daemon()
    ids = [remember(daemon, f"The {word}", f"The {word} lives near river number {n}.") for n, word in enumerate(WORDS)]
    newest_first = ids[::-1]
    forgotten: set[str] = set()
    added: list[str] = []

    def between(page: int) -> None:
        # A capsule added (it goes on top) each turn; on the first two, one already read
        # and one not yet read forgotten, and one not yet read updated (it must not move).
        added.append(remember(daemon, f"New {page}", f"A new note about moths, number {page}."))
        if page >= 2:
            return
        read, unread = newest_first[3 * page], newest_first[-1 - page]
        for capsule_id in (read, unread):
            daemon.call("memory.forget", {"id": capsule_id})
            forgotten.add(capsule_id)
        updated = newest_first[-4 - page]
        daemon.call("memory.add", {"title": daemon.call("memory.show", {"id": updated})["title"], "body": "Moved."})

    seen = walk(daemon, "memory.list", "capsules", "id", {"limit": 3}, between)
    counts = Counter(seen)
    throughout = [capsule_id for capsule_id in ids if capsule_id not in forgotten]
    assert [capsule_id for capsule_id in throughout if counts[capsule_id] != 1] == [], seen
    assert max(counts.values()) == 1, seen
    assert not set(added) & set(seen)  # added after the walk passed the top
    daemon.stop()


def test_archive_list_by_cursor_reads_each_archive_once_while_another_client_archives(library):
    # Room for about a dozen of these archives: each new one prunes the oldest.
    library.configure([], "[archive]\nmax_total_mb = 0.0025\n")
    daemon = library.daemon()

    pruned: set[str] = set()

    def archive(text: str) -> str:
        done = daemon.call("archive.add", {"text": text + " " + "log line. " * 18})
        pruned.update(done["pruned"])
        return done["handle"]

    handles = [archive(f"run {n}: the {word} job finished") for n, word in enumerate(WORDS)]
    before = len(pruned)
    added: list[str] = []

    def between(page: int) -> None:
        added.extend(archive(f"later run {page}.{n}: the moth job finished") for n in range(2))

    seen = walk(daemon, "archive.list", "archives", "handle", {"limit": 3}, between)
    assert len(pruned) > before, "retention pruned nothing while the walk went on"
    counts = Counter(seen)
    throughout = [handle for handle in handles if handle not in pruned]
    assert [handle for handle in throughout if counts[handle] != 1] == [], seen
    assert max(counts.values()) == 1, seen
    assert not set(added) & set(seen)
    daemon.stop()


def ken(library, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "kenning", "--config", str(library.config), *args],
        check=False, capture_output=True, text=True, timeout=60,
    )  # fmt: skip


def forged(state: dict) -> str:
    return base64.urlsafe_b64encode(json.dumps(state).encode()).decode().rstrip("=")


def test_a_bad_or_foreign_cursor_is_refused_by_name(library):
    library.configure([])
    daemon = library.daemon()
    for n, word in enumerate(WORDS[:4]):
        remember(daemon, f"The {word}", f"The {word} lives near river {n}.", scope="zoo" if n % 2 else "default")
        daemon.call("archive.add", {"text": f"run {n}: the {word} job finished\n"})
    memory_cursor = daemon.call("memory.list", {"limit": 1, "superseded": True})["next_cursor"]
    archive_cursor = daemon.call("archive.list", {"limit": 1})["next_cursor"]
    state = json.loads(base64.urlsafe_b64decode(memory_cursor + "=" * (-len(memory_cursor) % 4)))
    refusals = [
        ("memory.list", {"cursor": "not a cursor"}, "not one memory.list gave"),
        ("memory.list", {"cursor": forged({**state, "at": "yesterday"})}, "not one memory.list gave"),
        ("archive.list", {"cursor": forged([1, 2])}, "not one archive.list gave"),
        ("memory.list", {"cursor": archive_cursor}, "another list"),
        ("archive.list", {"cursor": memory_cursor}, "another list"),
        ("memory.list", {"cursor": memory_cursor}, "another superseded"),
        ("memory.list", {"cursor": memory_cursor, "superseded": True, "scope": "zoo"}, "another scope"),
        ("memory.list", {"cursor": memory_cursor, "superseded": True, "offset": 0}, "not both"),
        ("archive.list", {"cursor": ""}, "cursor"),
    ]
    for method, params, said in refusals:
        with pytest.raises(RpcError) as refused:
            daemon.call(method, params)
        assert refused.value.code == INVALID_PARAMS and said in str(refused.value), (method, params, refused.value)
    # The right cursor still continues, and the offset of older clients still counts from the top.
    following = daemon.call("memory.list", {"cursor": memory_cursor, "superseded": True, "limit": 10})
    assert len(following["capsules"]) == 3 and following["next_cursor"] is None
    assert daemon.call("archive.list", {"offset": 3})["archives"][0]["handle"] == (
        daemon.call("archive.list")["archives"][3]["handle"]
    )
    daemon.stop()


def test_ken_lists_say_how_to_get_the_next_page(library):
    library.configure([])
    daemon = library.daemon()
    for n, word in enumerate(WORDS[:3]):
        remember(daemon, f"The {word}", f"The {word} lives near river {n}.")
        daemon.call("archive.add", {"text": f"run {n}: the {word} job finished\n"})
    for command, title in ((["memory", "list"], "The otter"), (["archive", "list"], "run 0")):
        first = ken(library, *command, "-n", "2")
        assert first.returncode == 0, first.stderr
        hint = next(line for line in first.stdout.splitlines() if "--cursor" in line)
        cursor = hint.split("--cursor ")[1].split()[0]
        rest = ken(library, *command, "-n", "2", "--cursor", cursor)
        assert rest.returncode == 0, rest.stderr
        assert title in rest.stdout and title not in first.stdout and "--cursor" not in rest.stdout
    wrong = ken(library, "memory", "list", "--cursor", cursor)  # the archive list's
    assert wrong.returncode != 0 and "given by another list" in wrong.stderr, wrong.stderr
    daemon.stop()
