"""Fault suite: the real daemon put through what issue 12 found breaking it.

Not a timed test: a run of the daemon (`ken daemon` in a subprocess, its loop in
asyncio debug mode so it logs every callback over 100 ms) through

- malformed socket requests (1,000+: not JSON, deep nesting, 5,000-digit numbers,
  NaN/Infinity, ids and params beyond 64 bits, wrong types, unknown methods, oversized
  and half-sent lines), each expecting its JSON-RPC error, the connection kept;
- 500 simultaneous connects, each answered;
- kill -9 at six points: first sweep, embedding, re-embedding, source removal, a reload
  storm, a hostile-file parse; after each restart every file is indexed once;
- a folder of hostile files (bench/hostile.py's bombs, random bytes, BOM-less UTF-16, a
  FIFO, odd names) beside ordinary ones: each fails or is passed over alone;
- Ollama (tests/fake_ollama.py, real HTTP) down, hung, answering 500, garbage, and
  embeddings of the wrong dimension and count: searches timed while it misbehaves,
  and the time until vectors catch up once it behaves;
- reload storms (100 SIGHUPs with [chunking] changes, and `ken reload`s) during ingest;

and prints one table: cases, passed, documents lost and duplicated, peak RSS (overall
and on the hostile folder), the longest loop stall, the slowest search while a backend
hangs, and the slowest recovery. Targets: 0 lost, 0 duplicated, daemon up throughout,
peak RSS < 1 GB on the hostile folder, no search over 2 s while a backend hangs,
recovery within 60 s.

    .venv/bin/python bench/faults.py                 # about 6 min on 2 cores
    .venv/bin/python bench/faults.py --files 500     # a smaller library

Progress goes to stderr; MB is 2**20 bytes.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import closing
from pathlib import Path
from typing import Any

import psutil

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from hostile import hostile_files, ordinary_files, tree_rss  # noqa: E402

from kenning.client import Client  # noqa: E402
from kenning.errors import KenningError  # noqa: E402
from tests.fake_ollama import FakeOllama  # noqa: E402

MiB = 1 << 20
# The daemon logs each loop step over this much wall time (kenning/daemon/stalls.py).
STALL_LOGGED_MS = 100
STALL = re.compile(r"loop step took (\d+\.\d+) s, (\d+\.\d+) s of it on the CPU")
SEARCH = {"query": "wombat burrow paragraph"}


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def wait_for(check: Callable[[], Any], timeout: float, what: str, interval: float = 0.2) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        try:
            value = check()
        except (KenningError, OSError):
            value = None
        if value:
            return value
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out after {timeout:.0f}s waiting for {what}")
        time.sleep(interval)


class Suite:
    """The daemon under test, its workspace and the tally of cases."""

    def __init__(self, work: Path, files: int) -> None:
        self.work = work
        self.files = files
        self.data = work / "data"
        self.config = work / "config.toml"
        self.log_path = work / "daemon.log"
        self.ollama = FakeOllama().start()
        self.proc: subprocess.Popen | None = None
        self.client = Client(self.data / "kenning.sock", timeout=120)
        self.groups: dict[str, list[bool]] = {}
        self.failures: list[str] = []
        self.lost = self.duplicated = 0
        self.peak_rss = self.hostile_rss = 0
        self.hang_search_s = 0.0
        self.recovery_s = 0.0
        self.unexpected_exits = 0
        self._sampling = threading.Event()
        self._phase_peak = 0
        self.sources: dict[str, Path] = {}
        self.chunking = 400
        self._bombs: list[Path] | None = None

    # -- the daemon --------------------------------------------------------------------

    def write_config(self, extra: str = "") -> None:
        lines = [
            "[daemon]",
            f'data_dir = "{self.data}"',
            "sweep_interval = 3600",
            "debounce_ms = 200",
            "max_file_mb = 64",
            "[embedder]",
            'backend = "ollama"',
            'model = "fake-embed"',
            f'base_url = "{self.ollama.url}"',
            "timeout = 10",
            "[llm]",
            'backend = "ollama"',
            'model = "fake-chat"',
            f'base_url = "{self.ollama.url}"',
            "timeout = 10",
            "[retrieval]",
            "min_similarity = -1.0",
            "[chunking]",
            f"target_chars = {self.chunking}",
            "overlap_chars = 50",
            "[limits]",
            "parse_memory_mb = 300",
            "parse_timeout = 60",
            extra,
        ]
        for name, path in self.sources.items():
            lines += ["[[sources]]", f'name = "{name}"', f'path = "{path}"']
        self.config.write_text("\n".join(lines) + "\n")

    def start(self) -> None:
        with open(self.log_path, "ab") as out:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "kenning", "--config", str(self.config), "daemon"],
                stdout=out,
                stderr=subprocess.STDOUT,
                cwd=ROOT,
                env={**os.environ, "KENNING_SLOW_CALLBACK_MS": str(STALL_LOGGED_MS), "PYTHONUNBUFFERED": "1"},
            )
        threading.Thread(target=self._sample, args=(self.proc.pid,), daemon=True).start()
        wait_for(lambda: self.client.call("status"), 60, "the daemon to answer")

    def kill9(self) -> None:
        assert self.proc is not None
        self.proc.kill()
        self.proc.wait()

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.record("lifecycle", False, "SIGTERM did not stop the daemon within 30 s")
                self.kill9()

    def up(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def call(self, method: str, params: dict | None = None) -> Any:
        return self.client.call(method, params)

    def _sample(self, pid: int) -> None:
        try:
            process = psutil.Process(pid)
            while process.is_running() and process.status() != psutil.STATUS_ZOMBIE:
                rss = tree_rss(process)
                self.peak_rss = max(self.peak_rss, rss)
                if self._sampling.is_set():
                    self._phase_peak = max(self._phase_peak, rss)
                time.sleep(0.05)
        except psutil.Error:
            pass

    def longest_stall(self) -> float:
        text = self.log_path.read_text(errors="replace") if self.log_path.exists() else ""
        return max((float(match.group(1)) for match in STALL.finditer(text)), default=0.0)

    # -- bookkeeping -------------------------------------------------------------------

    def record(self, group: str, passed: bool, failure: str = "") -> None:
        self.groups.setdefault(group, []).append(passed)
        if not passed:
            self.failures.append(f"{group}: {failure}")
            log(f"FAILED {group}: {failure}")

    def check_up(self, group: str, when: str) -> None:
        alive = self.up()
        if not alive:
            self.unexpected_exits += 1
        self.record(group, alive, f"the daemon exited ({when})")

    def query(self, sql: str, params: tuple = ()) -> list[tuple]:
        with closing(sqlite3.connect(f"file:{self.data / 'kenning.db'}?mode=ro", uri=True, timeout=30)) as conn:
            return conn.execute(sql, params).fetchall()

    def folder(self, name: str, count: int, words: str = "wombat burrow") -> Path:
        path = self.work / name
        path.mkdir(exist_ok=True)
        for n in range(count):
            (path / f"note{n:05}.md").write_text(
                f"# {name} note {n}\n\n{name}{n} {words} paragraph {n}.\n\n" + "Filler sentence. " * (n % 40) + "\n"
            )
        return path

    def processed(self, name: str) -> int:
        status = next((s for s in self.call("status")["sources"] if s["name"] == name), None)
        return 0 if status is None else status["holds"] + status["failed"]

    def bombs(self) -> list[Path]:
        """bench/hostile.py's hostile files, made once per run."""
        if self._bombs is None:
            self._bombs = hostile_files(self.work / "hostile-src")
        return self._bombs

    def settled(self, name: str) -> dict | None:
        status = next((s for s in self.call("status")["sources"] if s["name"] == name), None)
        if status is None or status["scanning"] or status["discovered"] is None or status["last_sweep_at"] is None:
            return None
        if status["holds"] + status["failed"] + status["skipped"] + status["capped"] < status["discovered"]:
            return None
        return status

    def audit(self, group: str, name: str, expected: int) -> None:
        """Every file of the folder indexed exactly once, chunks unduplicated, file sound."""
        wait_for(lambda: self.settled(name), 300, f"source {name} to settle")
        (source_id,) = self.query("SELECT id FROM sources WHERE name = ?", (name,))[0]
        # A file collapsed into a near-duplicate elsewhere (`merged`) is held, not lost.
        done = self.query(
            "SELECT count(*) FROM documents WHERE source_id = ? AND status IN ('done', 'merged')", (source_id,)
        )[0][0]
        dup_text = self.query(
            "SELECT coalesce(sum(n - 1), 0) FROM (SELECT count(*) n FROM documents WHERE source_id = ?"
            " AND content_hash IS NOT NULL GROUP BY content_hash HAVING n > 1)",
            (source_id,),
        )[0][0]
        # Chunks beyond what the document's own row says it was cut into. (Equal chunks
        # are no evidence: the chunker cuts a long line of repeated text into equal pieces.)
        dup_chunks = self.query(
            "SELECT coalesce(sum(max(n - d.chunk_count, 0)), 0) FROM documents d JOIN"
            " (SELECT document_id, count(*) n FROM items GROUP BY document_id) c ON c.document_id = d.id"
            " WHERE d.source_id = ? AND d.status = 'done'",
            (source_id,),
        )[0][0]
        sound = self.query("PRAGMA quick_check")[0][0] == "ok"
        self.lost += max(expected - done, 0)
        self.duplicated += dup_text + dup_chunks
        self.record(group, done == expected, f"{name}: {done} of {expected} files indexed")
        self.record(group, dup_text + dup_chunks == 0, f"{name}: {dup_text} duplicate documents, {dup_chunks} chunks")
        self.record(group, sound, f"{name}: quick_check failed")

    def vectors_complete(self) -> bool:
        items = self.query("SELECT count(*) FROM items")[0][0]
        vectors = self.query("SELECT count(*) FROM vectors WHERE signature = 'ollama:fake-embed:r1:c2000'")[0][0]
        embedder = self.call("status")["embedder"]
        return items == vectors and embedder["job"]["last_error"] is None and embedder["job"]["state"] == "idle"


# --- the parts ------------------------------------------------------------------------


def part_kill9(suite: Suite) -> None:
    group = "kill -9"
    log(f"kill -9: first sweep of {suite.files} files")
    suite.sources["notes"] = suite.folder("notes", suite.files)
    suite.write_config()
    suite.start()
    wait_for(lambda: suite.processed("notes") > suite.files // 4, 120, "a quarter ingested")
    suite.kill9()
    suite.start()
    suite.audit(group, "notes", suite.files)

    log("kill -9: while embedding")
    suite.ollama.delay = 0.2
    suite.call("reembed")
    wait_for(lambda: suite.call("status")["embedder"]["job"]["done"] >= 64, 120, "embedding under way")
    suite.kill9()
    suite.ollama.delay = 0.0
    suite.start()
    suite.record(group, bool(wait_for(suite.vectors_complete, 300, "vectors to catch up")), "vectors never caught up")

    log("kill -9: while re-embedding")
    suite.ollama.delay = 0.1
    suite.call("reembed")
    wait_for(lambda: suite.call("status")["embedder"]["job"]["state"] == "embedding", 60, "re-embedding under way")
    time.sleep(1.0)
    suite.kill9()
    suite.ollama.delay = 0.0
    suite.start()
    suite.record(group, bool(wait_for(suite.vectors_complete, 300, "vectors to catch up")), "re-embed never finished")
    suite.audit(group, "notes", suite.files)

    log("kill -9: while a source is removed")
    suite.sources["bulk"] = suite.folder("bulk", suite.files, words="numbat termite")
    suite.write_config()
    suite.call("reload")
    wait_for(lambda: suite.settled("bulk"), 300, "bulk to be indexed")
    del suite.sources["bulk"]
    suite.write_config()
    suite.call("reload")
    remover = threading.Thread(target=lambda: _quietly(suite.call, "sources.remove", {"name": "bulk"}), daemon=True)
    remover.start()
    time.sleep(0.3)
    suite.kill9()
    suite.start()
    gone = wait_for(
        lambda: not suite.query("SELECT 1 FROM sources WHERE name = 'bulk'")
        or (_quietly(suite.call, "sources.remove", {"name": "bulk"}) and False),
        120,
        "the removal to finish",
    )
    suite.record(group, bool(gone), "the removed source is still there")
    suite.audit(group, "notes", suite.files)

    log("kill -9: during a reload storm")
    suite.sources["storm"] = suite.folder("storm", suite.files, words="quokka island")
    suite.write_config()
    suite.call("reload")
    for n in range(30):
        suite.chunking = 300 + 20 * (n % 10)
        suite.write_config()
        assert suite.proc is not None
        suite.proc.send_signal(signal.SIGHUP)
        time.sleep(0.05)
    suite.kill9()
    suite.start()
    suite.audit(group, "storm", suite.files)
    suite.audit(group, "notes", suite.files)

    log("kill -9: while a hostile file is parsed")
    hostile = suite.work / "bombs"
    hostile.mkdir(exist_ok=True)
    for path in suite.bombs()[:3]:
        os.link(path, hostile / path.name)
    suite.folder("bombs", 50, words="tapir")
    suite.sources["bombs"] = hostile
    suite.write_config()
    suite.call("reload")
    time.sleep(2.0)
    suite.kill9()
    suite.start()
    status = wait_for(lambda: suite.settled("bombs"), 300, "bombs to settle")
    suite.record(group, status["holds"] == 50, f"bombs: {status['holds']} of 50 ordinary files indexed")
    del suite.sources["bombs"]
    suite.write_config()
    suite.call("reload")
    suite.check_up(group, "after the kill -9 part")



def _quietly(function: Callable, *args: Any) -> Any:
    try:
        return function(*args)
    except (KenningError, OSError):
        return None


def malformed_requests() -> list[tuple[bytes, set[int]]]:
    """1,000+ lines, each with the error codes that are a right answer to it."""
    rng = random.Random(12)
    parse, invalid, params, unknown = {-32700}, {-32600}, {-32602}, {-32601}
    cases: list[tuple[bytes, set[int]]] = []
    for n in range(300):
        junk = bytes(rng.randrange(1, 256) for _ in range(rng.randrange(1, 200))).replace(b"\n", b" ")
        cases.append((b"\x00" + junk, parse))
    for n in range(100):
        good = json.dumps({"jsonrpc": "2.0", "id": n, "method": "search", "params": {"query": "x"}}).encode()
        cases.append((good[: rng.randrange(1, len(good) - 1)], parse))
    for depth in range(100):
        cases.append((b"[" * (1000 + 500 * depth) + b"]" * (1000 + 500 * depth), parse))
    for digits in range(100):
        # A number beyond 64 bits is refused by the decoder, or read as a float, not an id.
        cases.append((b'{"jsonrpc": "2.0", "id": ' + b"9" * (100 + 50 * digits) + b', "method": "status"}', parse | invalid))
    for literal in (b"NaN", b"Infinity", b"-Infinity", b"1e999"):
        for n in range(25):
            cases.append((b'{"jsonrpc": "2.0", "id": ' + literal + b', "method": "status"}', parse))
    for n in range(100):
        cases.append((json.dumps({"jsonrpc": "2.0", "id": 2**63 + n, "method": "status"}).encode(), invalid))
    for n in range(100):
        request = {"jsonrpc": "2.0", "id": n, "method": "documents.get", "params": {"item_id": 2**63 + n * 7919}}
        cases.append((json.dumps(request).encode(), params))
    shapes: list[tuple[Any, set[int]]] = [
        ([1, 2, 3], invalid),
        ("a string", invalid),
        ({"jsonrpc": "1.0", "id": 1, "method": "status"}, invalid),
        ({"jsonrpc": "2.0", "id": {"a": 1}, "method": "status"}, invalid),
        ({"jsonrpc": "2.0", "id": 1, "method": 7}, invalid),
        ({"jsonrpc": "2.0", "id": 1, "method": "no.such"}, unknown),
        ({"jsonrpc": "2.0", "id": 1, "method": "search", "params": "nope"}, params),
        ({"jsonrpc": "2.0", "id": 1, "method": "search", "params": {"query": ""}}, params),
        ({"jsonrpc": "2.0", "id": 1, "method": "search", "params": {"query": "x", "limit": -1}}, params),
        ({"jsonrpc": "2.0", "id": 1, "method": "search", "params": {"query": "x", "legs": ["nope"]}}, params),
        ({"jsonrpc": "2.0", "id": 1, "method": "documents.add", "params": {"title": "t"}}, params),
        ({"jsonrpc": "2.0", "id": 1, "method": "documents.get", "params": {"item_id": "x"}}, params),
        ({"jsonrpc": "2.0", "id": 1, "method": "archive.recall", "params": {"handle": "a", "offset": -5}}, params),
    ]
    for n in range(120):
        shape, codes = shapes[n % len(shapes)]
        cases.append((json.dumps(shape).encode(), codes))
    return cases


def part_protocol(suite: Suite) -> None:
    group = "malformed requests"
    cases = malformed_requests()
    log(f"protocol: {len(cases)} malformed requests")
    follow_up = b'{"jsonrpc": "2.0", "id": "after", "method": "search", "params": {"query": "wombat"}}'
    socket_path = str(suite.data / "kenning.sock")
    for start in range(0, len(cases), 50):
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
            conn.settimeout(60)
            conn.connect(socket_path)
            batch = cases[start : start + 50]
            conn.sendall(b"".join(line + b"\n" for line, _ in batch) + follow_up + b"\n")
            answers = _read_lines(conn, len(batch) + 1)
        for (line, codes), answer in zip(batch, answers):
            code = answer.get("error", {}).get("code") if answer else None
            suite.record(group, code in codes, f"{line[:60]!r}: answered {code}, expected {sorted(codes)}")
        for _ in range(len(batch) - len(answers)):
            suite.record(group, False, "no answer (the connection closed)")
        last = answers[-1] if len(answers) == len(batch) + 1 else {}
        suite.record(group, last.get("id") == "after" and "result" in last, "the connection did not stay usable")
    # Oversized and half-sent lines: skipped with an error, the connection kept / closed.
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.settimeout(60)
        conn.connect(socket_path)
        conn.sendall(b'{"x": "' + b"y" * (49 * MiB) + b'"}\n' + follow_up + b"\n")
        oversized, after = (_read_lines(conn, 2) + [{}, {}])[:2]
        suite.record(group, oversized.get("error", {}).get("code") == -32600, "an oversized line was not refused")
        suite.record(group, after.get("id") == "after", "the connection did not survive an oversized line")
    suite.check_up(group, "after the malformed requests")

    group = "500 simultaneous connects"
    log("protocol: 500 simultaneous connects")
    request = b'{"jsonrpc": "2.0", "id": 1, "method": "sources.list"}\n'

    def one(_: int) -> bool:
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
                conn.settimeout(60)
                conn.connect(socket_path)
                conn.sendall(request)
                answer = _read_lines(conn, 1)
                return bool(answer) and "result" in answer[0]
        except OSError:
            return False

    barrier = threading.Barrier(500)

    def at_once(n: int) -> bool:
        barrier.wait()
        return one(n)

    with ThreadPoolExecutor(500) as pool:
        results = list(pool.map(at_once, range(500)))
    for ok in results:
        suite.record(group, ok, "a connect was refused or not answered")
    suite.check_up(group, "after the burst")


def _read_lines(conn: socket.socket, count: int) -> list[dict]:
    data = b""
    try:
        while data.count(b"\n") < count:
            chunk = conn.recv(1 << 20)
            if not chunk:
                break
            data += chunk
    except OSError:
        pass
    return [json.loads(line) for line in data.splitlines() if line.strip()]


def part_hostile(suite: Suite) -> None:
    group = "hostile files"
    log("hostile folder: bombs, binary, encodings, FIFO, odd names")
    folder = suite.work / "hostile"
    folder.mkdir(exist_ok=True)
    bombs = suite.bombs()
    for copy in range(2):
        for path in bombs:
            os.link(path, folder / f"{copy}-{path.name}")
    ordinary = ordinary_files(suite.work / "ordinary")
    for path in ordinary:
        os.link(path, folder / path.name)
    (folder / "noise.md").write_bytes(random.Random(1).randbytes(100_000))
    (folder / "utf16.md").write_bytes("# UTF-16 without a BOM\n\nwombat\n".encode("utf-16-le"))
    os.mkfifo(folder / "pipe.md")
    odd = [b"odd\xff\xfe.md", b"new\nline.md", b"-dash.md", b" spaced .md", "\u0645\u0644\u0641.md".encode(), b"x" * 250 + b".md"]
    for name in odd:
        with open(os.path.join(os.fsencode(folder), name), "w") as handle:
            handle.write("# odd name\n\nan odd name holds tapirs\n")
    suite.sources["hostile"] = folder
    suite.write_config()
    suite._phase_peak = 0
    suite._sampling.set()
    suite.call("reload")
    started = time.monotonic()
    slowest_status = 0.0
    while time.monotonic() - started < 600:
        asked = time.monotonic()
        settled = _quietly(suite.settled, "hostile")
        slowest_status = max(slowest_status, time.monotonic() - asked)
        if settled:
            break
        time.sleep(0.5)
    suite._sampling.clear()
    suite.hostile_rss = suite._phase_peak
    status = suite.settled("hostile") or {}
    reasons = {failure["path"]: failure["reason"] for failure in status.get("failures", [])}
    bomb_names = [f"{copy}-{path.name}" for copy in range(2) for path in bombs]
    for name in bomb_names + ["noise.md"]:
        suite.record(group, name in reasons, f"{name} was not failed with a reason")
    # Ordinary files, the BOM-less UTF-16 one and the odd but valid names are indexed; the
    # FIFO and the name that is not UTF-8 are passed over.
    expected = len(ordinary) + 1 + len(odd) - 1
    suite.record(group, status.get("holds") == expected, f"{status.get('holds')} of {expected} readable files indexed")
    suite.record(group, suite.hostile_rss < 1024 * MiB, f"peak RSS {suite.hostile_rss / MiB:.0f} MB")
    suite.record(group, slowest_status < 2.0, f"status took {slowest_status:.1f} s while hostile files were read")
    suite.check_up(group, "after the hostile folder")
    del suite.sources["hostile"]
    suite.write_config()
    suite.call("reload")


def part_ollama(suite: Suite) -> None:
    group = "ollama faults"
    for mode in ("down", "hang", "error500", "garbage", "wrong_dim", "wrong_count"):
        log(f"ollama: {mode}")
        if mode == "down":
            suite.ollama.down = True
        else:
            suite.ollama.mode = mode
        for n in range(5):
            suite.call(
                "documents.add",
                {"title": f"{mode} {n}", "text": f"wombat burrow written while ollama was {mode}, {n}", "source_uri": f"fault://{mode}/{n}"},
            )
        time.sleep(1.0)
        latencies = []
        errors = 0

        def timed(_: int) -> float:
            nonlocal errors
            asked = time.monotonic()
            try:
                answer = suite.call("search", SEARCH)
                if not answer["hits"]:
                    errors += 1
            except KenningError:
                errors += 1
            return time.monotonic() - asked

        latencies += [timed(0) for _ in range(5)]
        with ThreadPoolExecutor(5) as pool:
            latencies += list(pool.map(timed, range(5)))
        slowest = max(latencies)
        if mode in ("hang", "down"):
            suite.hang_search_s = max(suite.hang_search_s, slowest)
        suite.record(group, slowest < 2.0, f"{mode}: a search took {slowest:.2f} s")
        suite.record(group, errors == 0, f"{mode}: {errors} searches failed or found nothing")
        wrong = suite.query("SELECT count(*) FROM vectors WHERE dim != 64")[0][0]
        suite.record(group, wrong == 0, f"{mode}: {wrong} vectors of the wrong dimension stored")
        if mode == "down":
            suite.ollama.down = False
        else:
            suite.ollama.mode = None
        back = time.monotonic()
        try:
            wait_for(suite.vectors_complete, 120, "vectors to catch up")
            recovered = time.monotonic() - back
        except TimeoutError:
            recovered = float("inf")
        suite.recovery_s = max(suite.recovery_s, recovered)
        suite.record(group, recovered < 60, f"{mode}: vectors caught up after {recovered:.1f} s")
        graph = wait_for(lambda: (g := suite.call("status")["graph"])["pending"] == 0 and g, 120, "extraction")
        suite.record(group, bool(graph), f"{mode}: extraction did not catch up")
        suite.check_up(group, f"after ollama {mode}")


def part_reload_storm(suite: Suite) -> None:
    group = "reload storms"
    log("reload storm: 100 SIGHUPs and 10 `ken reload`s while a folder is ingested")
    suite.sources["gale"] = suite.folder("gale", suite.files, words="bilby desert")
    suite.write_config()
    suite.call("reload")
    assert suite.proc is not None
    for n in range(100):
        if n % 10 == 0:
            suite.chunking = 300 + 25 * (n // 10)
            suite.write_config()
            answer = subprocess.run(
                [sys.executable, "-m", "kenning", "--config", str(suite.config), "reload"],
                capture_output=True,
                text=True,
                cwd=ROOT,
            )
            suite.record(group, answer.returncode == 0, f"ken reload failed: {answer.stderr.strip()[:200]}")
        suite.proc.send_signal(signal.SIGHUP)
        time.sleep(0.035)
    suite.check_up(group, "during the storm")
    suite.audit(group, "gale", suite.files)
    added = _quietly(suite.call, "documents.add", {"title": "after", "text": "bilby after the storm", "source_uri": "fault://after"})
    suite.record(group, bool(added) and added["stored"] == "indexed", "documents.add failed after the storm")
    suite.check_up(group, "after the storm")


def report(suite: Suite, seconds: float) -> None:
    print("\n| part | cases | passed |\n|---|---:|---:|")
    total = passed = 0
    for group, results in suite.groups.items():
        total += len(results)
        passed += sum(results)
        print(f"| {group} | {len(results)} | {sum(results)} |")
    print(f"| **all** | **{total}** | **{passed}** |")
    print("\n| measure | value | target |\n|---|---:|---|")
    print(f"| documents lost | {suite.lost} | 0 |")
    print(f"| documents duplicated | {suite.duplicated} | 0 |")
    print(f"| unexpected daemon exits | {suite.unexpected_exits} | 0 |")
    print(f"| peak RSS, hostile folder (daemon + workers) | {suite.hostile_rss / MiB:.0f} MB | < 1024 MB |")
    print(f"| peak RSS, whole run | {suite.peak_rss / MiB:.0f} MB | |")
    stall = suite.longest_stall()
    shown = f"{stall * 1000:.0f} ms" if stall else f"none over {STALL_LOGGED_MS} ms"
    print(f"| longest event-loop stall | {shown} | |")
    print(f"| slowest search while Ollama hangs or is down | {suite.hang_search_s:.2f} s | < 2 s |")
    print(f"| slowest recovery after Ollama behaves again | {suite.recovery_s:.1f} s | < 60 s |")
    print(f"| run time | {seconds / 60:.1f} min | |")
    for failure in suite.failures[:30]:
        print(f"- {failure}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--files", type=int, default=1000, help="files per generated folder (default 1000)")
    parser.add_argument("--work", type=Path, help="keep the workspace here (default: a temporary directory)")
    args = parser.parse_args()
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="kenning-faults-") as scratch:
        work = args.work or Path(scratch)
        work.mkdir(parents=True, exist_ok=True)
        suite = Suite(work, args.files)
        try:
            part_kill9(suite)
            part_protocol(suite)
            part_ollama(suite)
            part_reload_storm(suite)
            part_hostile(suite)
            suite.stop()
        except Exception as exc:
            suite.record("suite", False, f"stopped early: {type(exc).__name__}: {exc}")
            if suite.proc is not None and suite.proc.poll() is None:
                suite.kill9()
        finally:
            suite.ollama.stop()
        report(suite, time.monotonic() - started)


if __name__ == "__main__":
    main()
