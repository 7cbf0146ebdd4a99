"""The socket's edges (issue 12, item 10) against the real daemon over its real socket:
pathological JSON, ids and integers beyond 64 bits, idle and half-sent connections, a
burst of connects, a large CJK document through `ken add-text`, `ken` run by a user
who cannot open the socket, and params that are wrong in type, empty, far too long or out
of range (-32602 naming the field, the value echoed short if at all)."""

from __future__ import annotations

import json
import os
import select
import socket
import subprocess
import sys
import time

import pytest

from kenning.daemon.protocol import MAX_CONNECTIONS
from kenning.errors import RpcError
from tests.daemon_harness import wait_for


def _config(library, extra: str = "") -> None:
    notes = library.root / "notes"
    notes.mkdir(exist_ok=True)
    (notes / "a.md").write_text("# Hedgehogs\n\nHedgehogs hibernate in winter.\n")
    library.configure([{"name": "notes", "path": str(notes)}], extra=extra)


def _lines(conn: socket.socket, count: int, timeout: float = 30) -> list[dict]:
    """Read `count` answer lines from `conn`."""
    conn.settimeout(timeout)
    data = b""
    while data.count(b"\n") < count:
        chunk = conn.recv(1 << 16)
        if not chunk:
            break
        data += chunk
    return [json.loads(line) for line in data.splitlines()]


@pytest.fixture(scope="module")
def daemon(module_library):
    """One daemon, its note indexed, for the tests below that only ask it things or add
    what none of the others look for; each started and indexed its own."""
    _config(module_library)
    started = module_library.daemon()
    started.wait_idle("notes")
    return started


def test_pathological_json_gets_errors_and_the_connection_stays(daemon):
    search = b'{"jsonrpc": "2.0", "id": 99, "method": "search", "params": {"query": "hedgehogs", "legs": ["keyword"]}}'
    cases = [
        (b"[" * 100_000 + b"]" * 100_000, -32700),
        (b'{"jsonrpc": "2.0", "id": 1, "method": "status", "params": {"a": ' + b"[" * 5000 + b"]" * 5000 + b"}}", -32700),
        (b'{"jsonrpc": "2.0", "id": ' + b"7" * 5000 + b', "method": "status"}', -32700),
        (b'{"jsonrpc": "2.0", "id": 9223372036854775808, "method": "status"}', -32600),
        (b'{"jsonrpc": "2.0", "id": NaN, "method": "status"}', -32700),
        (b'{"jsonrpc": "2.0", "id": Infinity, "method": "status"}', -32700),
        (b'{"jsonrpc": "2.0", "id": 2.5e400, "method": "status"}', -32700),
        (b'{"jsonrpc": "2.0", "id": [1], "method": "status"}', -32600),
        (b'{"jsonrpc": "2.0", "id": 3, "method": "documents.get", "params": {"item_id": 9223372036854775808}}', -32602),
        (b'{"jsonrpc": "2.0", "id": 4, "method": "documents.get", "params": {"document_id": -9223372036854775809}}', -32602),
    ]
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.connect(str(daemon.socket))
        for line, code in cases:
            conn.sendall(line + b"\n" + search + b"\n")
            error, after = _lines(conn, 2)
            assert error["error"]["code"] == code, (line[:80], error)
            assert error["id"] in (None, 3, 4)
            assert after["id"] == 99 and after["result"]["hits"]
    assert daemon.proc.poll() is None
    # A lone surrogate escape is named as such, not as a line cut short.
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.connect(str(daemon.socket))
        conn.sendall(b'{"jsonrpc": "2.0", "id": 5, "method": "search", "params": {"query": "\\ud800"}}\n')
        [error] = _lines(conn, 1)
        assert error["error"]["code"] == -32700
        assert error["error"]["message"] == "parse error: \\ud800 is half of a UTF-16 surrogate pair, not a character"


def test_idle_and_half_sent_connections_time_out(library):
    _config(library, "socket_idle_timeout = 1\nsocket_line_timeout = 1\n")
    daemon = library.daemon()
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as idle:
        idle.connect(str(daemon.socket))
        idle.settimeout(20)
        started = time.monotonic()
        assert idle.recv(100) == b""  # closed without a word
        assert time.monotonic() - started < 10
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as half:
        half.connect(str(daemon.socket))
        half.sendall(b'{"jsonrpc": "2.0", "id": 1, "method": "sta')
        (error,) = _lines(half, 1, timeout=20)
        assert error["error"]["code"] == -32600 and "not completed" in error["error"]["message"]
        assert half.recv(100) == b""
    assert daemon.call("status")["daemon"]["pid"] == daemon.proc.pid


def test_a_burst_of_500_connects_is_answered(daemon):
    request = b'{"jsonrpc": "2.0", "id": 1, "method": "sources.list"}\n'
    conns = []
    for _ in range(500):
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        # With a timeout, as `ken` connects: a full accept queue is EAGAIN at once.
        conn.settimeout(10)
        conn.connect(str(daemon.socket))
        conns.append(conn)
    for conn in conns:
        conn.sendall(request)
    answered = 0
    pending = {conn.fileno(): conn for conn in conns}
    deadline = time.monotonic() + 60
    buffers: dict[int, bytes] = {}
    while pending and time.monotonic() < deadline:
        readable, _, _ = select.select(list(pending.values()), [], [], 1)
        for conn in readable:
            buffers[conn.fileno()] = buffers.get(conn.fileno(), b"") + conn.recv(1 << 16)
            if buffers[conn.fileno()].endswith(b"\n"):
                assert "result" in json.loads(buffers[conn.fileno()])
                answered += 1
                del pending[conn.fileno()]
    for conn in conns:
        conn.close()
    assert answered == 500


def test_past_the_connection_cap_a_connection_is_told_busy_and_the_daemon_keeps_serving(library):
    _config(library)
    daemon = library.daemon()
    request = b'{"jsonrpc": "2.0", "id": 1, "method": "sources.list"}\n'
    held = []
    try:
        for _ in range(MAX_CONNECTIONS):
            conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            conn.connect(str(daemon.socket))
            conn.sendall(request)  # answered: the daemon holds it as one of its connections
            assert "result" in _lines(conn, 1)[0]
            held.append(conn)
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as extra:
            extra.connect(str(daemon.socket))
            [busy] = _lines(extra, 1)
            assert busy["error"]["code"] == -32003 and "busy" in busy["error"]["message"]
            assert extra.recv(1) == b""  # and closed
        for conn in held[:10]:
            conn.close()
        time.sleep(0.5)
        assert daemon.call("status")["daemon"]["pid"]
        assert daemon.log().count("turning new ones away") == 1
    finally:
        for conn in held:
            conn.close()


def test_add_text_sends_three_million_cjk_characters(library):
    _config(library)
    daemon = library.daemon()
    text = ("東京の図書館で資料を読む。" * 230_770)[:3_000_000]
    answer = subprocess.run(
        [sys.executable, "-m", "kenning", "--config", str(library.config), "add-text", "--uri", "t://cjk", "--title", "大きい"],
        input=text,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert answer.returncode == 0, answer.stderr
    assert daemon.call("documents.get", {"uri": "t://cjk", "limit": 1})["total_chunks"] > 100


def test_ken_status_by_a_user_who_cannot_open_the_socket_is_one_line(module_library, daemon):
    """Another user meets a socket they may not write to. The tests run as root, which
    may open anything, so `ken` runs without root's capabilities (setpriv) against a
    socket whose mode lets no one write."""
    os.chmod(daemon.socket, 0)
    try:
        answer = subprocess.run(
            ["setpriv", "--inh-caps=-all", "--bounding-set=-all", "--",
             sys.executable, "-m", "kenning", "--config", str(module_library.config), "status"],
            capture_output=True,
            text=True,
            timeout=60,
        )  # fmt: skip
    finally:
        os.chmod(daemon.socket, 0o600)
    assert answer.returncode == 1
    assert "Traceback" not in answer.stderr
    refused = f"ken: cannot open {daemon.socket}: Permission denied: {daemon.socket} is yours but mode 000;"
    assert answer.stderr.startswith(refused) and answer.stderr.count("\n") == 1, answer.stderr
    assert daemon.call("status")["daemon"]["pid"] == daemon.proc.pid


def _error(daemon, method: str, params: dict) -> tuple[int, str]:
    """The code and message of the error `method` answers `params` with."""
    with pytest.raises(RpcError) as caught:
        daemon.call(method, params)
    return caught.value.code, str(caught.value)


def test_params_of_the_wrong_type_are_named_not_coerced(daemon):
    """A string or a bool where a number belongs, or a string where a bool does, was read
    as the value it resembles ("3" as 3, true as 1, "yes" as true)."""
    item_id = daemon.search("hedgehogs")[0]["item_id"]
    wrong = [
        ("search", {"query": "hedgehogs", "limit": "3"}, "limit"),
        ("search", {"query": "hedgehogs", "limit": True}, "limit"),
        ("search", {"query": "hedgehogs", "limit": 3.0}, "limit"),  # JSON integers only, as pydantic's strict JSON
        ("documents.get", {"item_id": str(item_id)}, "item_id"),
        ("documents.get", {"item_id": True}, "item_id"),
        ("memory.add", {"title": "Naps", "body": "Hedgehogs nap.", "force": "yes"}, "force"),
        ("memory.add", {"title": "Naps", "body": "Hedgehogs nap.", "confidence": "0.5"}, "confidence"),
        ("sources.scan", {"name": "notes", "wait": 1}, "wait"),
        ("ledger.add", {"section": "findings", "fields": {"title": True}}, "fields.title"),
    ]
    for method, params, field in wrong:
        code, message = _error(daemon, method, params)
        assert code == -32602 and message.startswith(field), (method, params, message)
    # JSON's own types still pass: integers, an integer for a float, arrays for lists.
    assert daemon.search("hedgehogs", limit=3, kind=["file"])[0]["item_id"] == item_id
    added = daemon.call("memory.add", {"title": "Naps", "body": "Hedgehogs nap.", "confidence": 1, "tags": ["sleep"]})
    assert added["status"] == "created"


def test_an_empty_legs_list_is_refused(daemon):
    """No legs ran no search and answered no hits, while an empty `kind` means every kind."""
    code, message = _error(daemon, "search", {"query": "hedgehogs", "legs": []})
    assert code == -32602 and message.startswith("legs") and "keyword, vector" in message, message
    assert daemon.search("hedgehogs", kind=[])


def test_a_query_with_no_words_is_refused_not_answered_no_matches(module_library, daemon):
    """`"`, `""` or `?!` ran every leg and answered no hits and no reason: `ken` said "no
    matches", as if the library held nothing on it. An empty query was already -32602.
    An emoji is no word either: the index keeps none, though the notes may hold it."""
    for query in ('"', '""', "?!", " \u200b ", "_", "\U0001f984"):
        for method, params in (
            ("search", {"query": query}),
            ("memory.recall", {"query": query}),
            ("context.pack", {"task": query}),
        ):
            code, message = _error(daemon, method, params)
            assert code == -32602 and "no words" in message and "emoji" in message, (method, query, message)
    assert daemon.search('"hedgehogs"')
    answer = subprocess.run(
        [sys.executable, "-m", "kenning", "--config", str(module_library.config), "search", '""'],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert answer.returncode == 1 and "no words" in answer.stderr and "no matches" not in answer.stdout, answer


def test_names_are_bounded_and_errors_echo_them_short(daemon):
    """A 1 MB source came back whole in the not-found error; so did a long unknown
    parameter name, and every one of a long list of bad items."""
    huge = [
        ("search", {"query": "hedgehogs", "source": "s" * 1_000_000}, "source"),
        ("search", {"query": "hedgehogs", "namespace": "n" * 100_000}, "namespace"),
        ("context.pack", {"task": "hedgehogs", "namespace": "n" * 100_000}, "namespace"),
        ("sources.scan", {"name": "s" * 100_000}, "name"),
        ("sources.remove", {"name": "s" * 100_000}, "name"),
        ("search", {"query": "hedgehogs", "since": "2" * 100_000}, "since"),
        ("search", {"query": "hedgehogs", "k" * 100_000: 1}, "k" * 64 + "..."),
        ("ledger.add", {"section": "findings", "fields": {"f" * 100_000: "x"}}, "fields." + "f" * 64 + "..."),
        ("search", {"query": "hedgehogs", "kind": ["bogus"] * 20_000}, "kind.0"),
    ]
    for method, params, field in huge:
        code, message = _error(daemon, method, params)
        assert code == -32602 and message.startswith(field) and len(message) < 1000, (method, field, message[:300])
    # The longest names allowed are still looked up.
    assert _error(daemon, "search", {"query": "hedgehogs", "source": "s" * 64})[0] == -32001
    assert _error(daemon, "search", {"query": "hedgehogs", "namespace": "n" * 200})[0] == -32001


def test_dates_out_of_range_name_the_range(daemon):
    """9999, 0001 and 1899 look like years; the error said they were not dates at all."""
    for year in ("9999", "0001", "1899", "2200-01"):
        code, message = _error(daemon, "search", {"query": "hedgehogs", "since": year})
        assert code == -32602 and "1900 to 2199" in message, message
    assert daemon.search("hedgehogs", since="1900", until="2199")
    # Nothing is converted: a date with a space or a newline around it is not one.
    for padded in (" 2026", "2026\n"):
        code, _ = _error(daemon, "search", {"query": "hedgehogs", "since": padded})
        assert code == -32602


def test_a_line_past_the_end_is_invalid_params_from_get_and_read(daemon):
    """documents.get answered -32602 and documents.read -32001 for the same lines."""
    document_id = daemon.search("hedgehogs", kind=["file"])[0]["document_id"]
    for method in ("documents.get", "documents.read"):
        code, message = _error(daemon, method, {"document_id": document_id, "line_start": 50})
        assert code == -32602 and "50" in message, (method, message)


def test_a_client_that_stops_reading_its_answer_is_cut_off(library):
    """A client that sent a request and never read the answer held its connection, and
    the whole answer in the daemon's memory, for good: the idle timeout counted only the
    wait for a request. Forty such clients asking for a 10 MB archive held 740 MB."""
    _config(library, "socket_idle_timeout = 1\n")
    daemon = library.daemon()
    handle = daemon.call("archive.add", {"text": "lorem ipsum dolor " * 250_000, "title": "big"})["handle"]
    request = {"jsonrpc": "2.0", "id": 1, "method": "archive.recall", "params": {"handle": handle, "limit": 5_000_000}}
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as stuck:
        stuck.connect(str(daemon.socket))
        stuck.sendall(json.dumps(request).encode() + b"\n")
        # The answer is far larger than the socket's buffer, and nothing reads it until
        # the daemon gives up on the client.
        wait_for(lambda: "did not read its answer" in daemon.log(), timeout=30, what="the client to be cut off")
        stuck.settimeout(20)
        received = 0
        while chunk := stuck.recv(1 << 16):
            received += len(chunk)
    assert received < 4_000_000  # what the kernel had buffered, then the end: the rest was dropped
    assert daemon.call("archive.recall", {"handle": handle, "limit": 10})["text"] == "lorem ipsu"


def test_a_path_holding_a_nul_is_invalid_params(module_library, daemon):
    """documents.get and documents.read by a path holding a NUL answered "internal error:
    ValueError: embedded null byte" (an agent's `get` tool said the same), and the daemon
    logged a traceback for it."""
    note = str(module_library.root / "notes" / "a.md")
    for method, path in (("documents.get", note + "\x00"), ("documents.get", "\x00"), ("documents.read", "/a\x00b")):
        code, message = _error(daemon, method, {"path": path})
        assert code == -32602 and message.startswith("path") and "NUL" in message, (method, message)
    assert "Traceback" not in daemon.log()
    assert daemon.call("documents.get", {"path": note})["items"]


def _rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmRSS")) / 1024


def test_lines_left_unfinished_on_many_connections_share_one_memory_budget(library):
    """Each connection could hold a 48 MiB line in memory while it arrived, so one client
    opening its 512 connections and sending 45 MB on each, never a newline, could make the
    daemon hold 23 GB: forty such connections took it from 160 MB to 1.9 GB."""
    _config(library)
    daemon = library.daemon()
    daemon.wait_idle("notes")
    before = _rss_mb(daemon.proc.pid)
    head = b'{"jsonrpc": "2.0", "id": 1, "method": "documents.add", "params": {"title": "t", "text": "'
    part = head + b"a" * (45 << 20)
    held = []
    try:
        for _ in range(12):  # 540 MB begun and not finished
            conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            conn.connect(str(daemon.socket))
            conn.settimeout(0.5)
            try:
                conn.sendall(part)
            except TimeoutError:
                pass  # the daemon stopped reading this one: its budget is spent
            held.append(conn)
        time.sleep(1)
        assert _rss_mb(daemon.proc.pid) - before < 400
        assert daemon.search("hedgehogs")  # small requests are still read and answered
    finally:
        for conn in held:
            conn.close()
    # With the budget given back, a large document is read whole again.
    text = "hedgehogs " * 900_000
    added = daemon.call("documents.add", {"title": "Big", "text": text, "source_uri": "t://big"})
    assert added["chunks"] > 100


def test_a_kind_named_many_times_is_one_kind(daemon):
    """search and context.pack with `kind` holding "file" 300,000 times answered "internal
    error: OperationalError: too many SQL variables" (one placeholder each)."""

    def mined() -> bool:
        # A hit found before its chunk is embedded and mined gains legs after: the two
        # searches compared must see the same library, whatever else the tests sharing
        # this daemon have added to it.
        status = daemon.call("status")
        graph, embedder = status["graph"], status["embedder"]
        chunks = sum(source["chunks"] for source in status["sources"])
        return graph["pending"] == 0 and graph["job"]["state"] == "idle" and embedder["vectors"] >= chunks

    wait_for(mined, timeout=60, what="every chunk to be embedded and mined")
    once = daemon.call("search", {"query": "hedgehogs", "kind": ["file"]})["hits"]
    assert once and daemon.call("search", {"query": "hedgehogs", "kind": ["file"] * 300_000})["hits"] == once
    # Both kinds, as below: the daemon is shared, and another test may add agent text.
    pack = daemon.call("context.pack", {"task": "hedgehogs", "kind": ["file", "agent"]})
    assert daemon.call("context.pack", {"task": "hedgehogs", "kind": ["file", "agent"] * 150_000}) == pack
    assert "Traceback" not in daemon.log()


def test_scanning_one_of_kennings_own_sources_says_why_not(daemon):
    """`ken scan agent` said "unknown source 'agent'; see `ken sources list`", and that
    list shows `agent`."""
    daemon.call("documents.add", {"title": "Note", "text": "kakapo notes\n", "source_uri": "t://a"})
    assert "agent" in [source["name"] for source in daemon.call("sources.list")["sources"]]
    code, message = _error(daemon, "sources.scan", {"name": "agent"})
    assert code == -32602 and "not a folder" in message, message
    assert _error(daemon, "sources.scan", {"name": "nosuch"})[0] == -32001


def test_scan_wait_whose_sweep_is_stopped_is_answered_and_logged(library):
    """`sources.scan` with wait waits for the folder's next sweep; removing the source
    meanwhile stops that sweep, and the cancelled wait came out of the handler as a
    CancelledError that the server took for its own shutdown: the connection was dropped
    without an answer ("closed the connection without answering") and nothing logged."""
    notes = library.root / "notes"
    notes.mkdir()
    for n in range(1500):
        (notes / f"note{n:05}.md").write_text(f"# Note {n}\n\nThe heron number {n}. " + "word " * 300 + "\n")
    library.configure([{"name": "notes", "path": str(notes)}])
    daemon = library.daemon()
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.connect(str(daemon.socket))
        wait_for(lambda: daemon.source_status("notes")["scanning"], timeout=30, what="the first sweep to be under way")
        # Waits for the sweep after the one under way, which the removal below stops.
        conn.sendall(b'{"jsonrpc": "2.0", "id": 1, "method": "sources.scan", "params": {"name": "notes", "wait": true}}\n')
        time.sleep(0.5)
        assert daemon.call("sources.remove", {"name": "notes"})["name"] == "notes"
        [answer] = _lines(conn, 1, timeout=60)
        assert answer["id"] == 1 and answer["error"]["code"] == -32603, answer
        assert answer["error"]["message"].startswith("sources.scan was cut short: the work it waited on was stopped")
        conn.sendall(b'{"jsonrpc": "2.0", "id": 2, "method": "sources.list"}\n')
        assert "result" in _lines(conn, 1)[0]  # and the connection is still served
    assert "method sources.scan: the work it waited on was cancelled" in daemon.log()
    assert daemon.call("status")["daemon"]["pid"] == daemon.proc.pid


def test_a_search_of_the_default_size_does_not_wait_for_a_crowd_of_large_ones(daemon):
    """Searches for many hits, sent together, ran interleaved on the readers, each holding
    its candidates until the crowd's end: a search for five hits sent with sixteen for
    200 was answered with the last of them, and 300 searches for 200 hits took the daemon
    from 138 MB to 751 MB, and it kept 471 MB after (bench/search_crowd.py). Large
    searches now take turns; small ones never wait."""
    words = "hedgehog forage hedge garden night beetle worm leaf winter nest"
    text = "\n\n".join(f"## Part {i}\n\n{words} part{i} " + words[i % 7 :] for i in range(1500))
    daemon.call("documents.add", {"title": "Crowd", "text": text, "source_uri": "t://crowd-of-hedgehogs"})
    daemon.wait_derived()  # each leg offers its 600 candidates
    large = {"jsonrpc": "2.0", "id": 1, "method": "search", "params": {"query": words, "limit": 200}}
    small = {"jsonrpc": "2.0", "id": 2, "method": "search", "params": {"query": "hedgehogs hibernate", "limit": 5}}
    conns = [socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) for _ in range(17)]
    answered: dict[socket.socket, float] = {}
    try:
        for conn, request in zip(conns, [large] * 16 + [small]):
            conn.connect(str(daemon.socket))
            conn.sendall(json.dumps(request).encode() + b"\n")
        sent = time.monotonic()
        while len(answered) < len(conns):
            readable, _, _ = select.select([c for c in conns if c not in answered], [], [], 60)
            assert readable, "no answer within 60 s"
            for conn in readable:
                assert _lines(conn, 1)[0]["result"]["hits"]
                answered[conn] = time.monotonic() - sent
    finally:
        for conn in conns:
            conn.close()
    # Measured against the crowd's own time, so a slow machine slows both alike: the small
    # search waits at most for the two large ones under way, not for the crowd.
    assert answered[conns[-1]] < max(answered.values()) / 3


def test_answers_of_clients_that_went_without_reading_them_are_let_go(library):
    """A client that closed its connection while its answer was still being written left
    that answer held in a reference cycle (the error, its traceback, the frames holding
    the answer) that only a full garbage collection frees, which an idle daemon does not
    run: sixty such clients of a 10 MB archive took the daemon from 150 MB to 1.35 GB,
    and it held 725 MB from then on. And while a client did not read, its answer was
    held twice: the result it was made from was kept beside the written copy."""
    _config(library)
    daemon = library.daemon()
    daemon.wait_idle("notes")
    handle = daemon.call("archive.add", {"text": "lorem ipsum dolor " * 120_000, "title": "big"})["handle"]
    daemon.call("archive.recall", {"handle": handle, "limit": 5_000_000})  # what any recall loads once
    before = _rss_mb(daemon.proc.pid)
    request = {"jsonrpc": "2.0", "id": 1, "method": "archive.recall", "params": {"handle": handle, "limit": 5_000_000}}
    conns = []
    for _ in range(20):
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        conn.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        conn.connect(str(daemon.socket))
        conn.sendall(json.dumps(request).encode() + b"\n")
        conns.append(conn)
    answers_mb = 20 * len(json.dumps(daemon.call("archive.recall", request["params"]))) / 2**20
    try:
        # Once every answer is made and its first bytes written (each one is written
        # whole, once made), and the memory settled: an answer in the making is there
        # several times over for a moment.
        wait_for(lambda: len(select.select(conns, [], [], 0)[0]) == len(conns), timeout=30, what="every answer")
        held = [_rss_mb(daemon.proc.pid) - before]

        def settled() -> bool:
            time.sleep(0.3)
            held.append(_rss_mb(daemon.proc.pid) - before)
            return abs(held[-1] - held[-2]) < 1

        wait_for(settled, timeout=30, what="the daemon's memory to settle")
        assert held[-1] < 1.5 * answers_mb, f"{held[-1]:.0f} MB held for {answers_mb:.0f} MB of answers"
        # Enough other work that the collector sees the waiting answers' objects live
        # and moves them to its oldest generation, as a busy daemon's does.
        for _ in range(15):
            daemon.call("search", {"query": "hedgehogs lorem", "limit": 50})
        for conn in conns:
            conn.close()
        wait_for(lambda: _rss_mb(daemon.proc.pid) - before < 25, timeout=10, what="the answers' memory to be freed")
    finally:
        for conn in conns:
            conn.close()
