"""A scripted agent session against a real daemon: memory capsules, archives, MCP latency.

The session writes 200 capsules through the socket's `memory.add`, as an agent would:
140 distinct facts (from 20 templates with 7 fills each: same-template pairs are the
hard negatives, alike in words and different in fact), 40 planted duplicates of them
(20 light edits, 20 paraphrases, under other titles), and 20 corrections (a fact's value
changed; half under the same title, which updates in place, half under a new title,
which dedup should catch and the script then supersedes, as an agent acting on the
refusal would). Before the duplicates and corrections arrive, the distinct capsules are
aged 30-120 days (20 of them, the stale ones, 200 days, never used) by rewriting their
timestamps in the database: the only way to let months pass in a benchmark.

Reported, all from one run:
- write-time dedup precision and recall: a duplicate refused naming its original is a
  true positive; a distinct fact refused is a false positive. A replay of the same rule
  with the daemon's embedder and trigrams over the same texts shows other thresholds
  (choose `[memory] duplicate_similarity` here);
- corrections caught (refused naming the fact they correct, then superseded);
- recall@5 of the current capsule over the one it corrects, for every correction (a
  superseded capsule is out of search, an updated one changed in place; the rest must
  rank below the correction), and plain recall@5 of 60 distinct facts asked as questions;
- `curate`'s stale list against the 20 aged ones;
- archive round trip: 10 MB archived through the socket and recalled in 1,000,000-
  character pages, MB/s each way, beside the same text written to and read from a bare
  SQLite table (WAL, one transaction) in the same run;
- MCP tool latency p50/p95 through `ken mcp` (the SDK's stdio client), beside the same
  daemon methods called on the socket directly.

    .venv/bin/python bench/agent_memory.py [--json] [--calls 40]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from mcp import Client as McpClient
from mcp import StdioServerParameters, stdio_client

from kenning.client import Client
from kenning.config import EmbedderSettings
from kenning.errors import DaemonNotRunning
from kenning.text.likeness import jaccard, trigrams
from kenning.workers.embedders import make_embedder

SEED = 20261201
DAY = 86400.0
SCOPE = "shop"
SERVICES = (
    "billing search notifier gateway scheduler ledger invoicer auth exporter mailer catalog pricing reports"
    " uploads webhooks inventory"
).split()
DATABASES = ("orders-db", "users-db", "events-db", "main-db")
PEOPLE = ("Priya", "Tomasz", "Aiko", "Femi", "Lucía", "Jonas", "Mei", "Arjun")

# (kind, title, body, paraphrase, question, values); {a} a service, {b} a database or
# service, {v} the value a correction changes.
TEMPLATES = (
    ("fact", "{a} port", "The {a} service listens on port {v} in staging.",
     "In staging, connections to {a} go to port {v}.", "Which port does {a} listen on in staging?",
     ("8081", "8443", "9090", "9200", "7000", "6060", "5050", "3000")),
    ("gotcha", "{a} migrations order", "Run the {b} migrations {v} deploying {a}; otherwise it reads missing columns.",
     "Deploy {a} only {v} the {b} migrations have run, or it hits columns that are not there.",
     "When do the {b} migrations run relative to deploying {a}?", ("before", "after")),
    ("decision", "{a} queue", "We chose {v} as the message queue for {a} because the cluster already runs it.",
     "{a} uses {v} for its queue; it was picked since our cluster runs it anyway.", "Which queue does {a} use?",
     ("RabbitMQ", "Kafka", "NATS", "Redis Streams", "SQS")),
    ("recipe", "Restart {a} safely", "To restart {a} without dropping requests, drain it, wait {v} seconds, restart.",
     "Drain {a} first and give it {v} seconds; only then restart it, so no request is lost.",
     "How do I restart {a} without dropping requests?", ("10", "20", "30", "45", "60", "90")),
    ("fact", "{a} on-call", "The on-call owner for {a} is {v}; page them through the #{a}-oncall channel.",
     "Page {v} in #{a}-oncall: they carry the {a} pager.", "Who is on call for {a}?", PEOPLE),
    ("principle", "{a} retries", "Client calls to {a} retry at most {v} times with exponential backoff.",
     "Never retry a call to {a} more than {v} times, and back off exponentially between tries.",
     "How many times may a client retry {a}?", ("2", "3", "4", "5")),
    ("anti-pattern", "{a} calls in loops", "Do not call {a} once per {b} row; send up to {v} rows in one batch.",
     "Calling {a} for each {b} row in a loop is wrong: batch up to {v} rows per request.",
     "Should I call {a} for every {b} row?", ("50", "100", "200", "500")),
    ("pattern", "{a} feature flags", "Feature flags for {a} are read from {v} at startup and cached five minutes.",
     "{a} loads its feature flags from {v} when it starts and keeps them five minutes.",
     "Where does {a} read its feature flags from?", ("Consul", "etcd", "LaunchDarkly", "a YAML file")),
    ("fact", "{a} log retention", "Logs from {a} are kept for {v} days in the central log store.",
     "The central log store keeps the {a} logs for {v} days.", "How long are {a} logs kept?",
     ("7", "14", "30", "60", "90")),
    ("gotcha", "{a} timestamps", "{a} stores timestamps in {v}; convert them before comparing with {b} data.",
     "Timestamps written by {a} are in {v}, so convert before you compare them with {b}.",
     "What timezone are {a} timestamps in?", ("UTC", "local time", "Europe/London", "US/Eastern")),
    ("decision", "{a} language", "{a} is written in {v}, and new modules for it must use {v} too.",
     "New modules for {a} are written in {v}, the language the service already uses.",
     "Which language is {a} written in?", ("Go", "Rust", "Python", "Kotlin", "TypeScript")),
    ("recipe", "Rotate the {a} password", "Rotate the {a} database password in Vault, then restart {b} within {v} minutes.",
     "After Vault rotates the {a} database password, {b} must be restarted within {v} minutes.",
     "How do I rotate the {a} database password?", ("5", "10", "15", "30")),
    ("fact", "{a} backups", "Backups of {a} run every {v} hours and are kept for a week.",
     "{a} is backed up every {v} hours; each backup is kept seven days.", "How often is {a} backed up?",
     ("1", "4", "6", "12", "24")),
    ("gotcha", "{a} memory limit", "{a} is OOM-killed above {v} MiB, so keep the batch jobs calling it small.",
     "Above {v} MiB {a} gets OOM-killed; keep the batches that call it small.", "What is the memory limit of {a}?",
     ("256", "512", "1024", "2048")),
    ("principle", "{a} API versions", "Breaking changes to the {a} API need a new major version and {v} months of overlap.",
     "After a breaking change, the old {a} API major version stays up {v} more months.",
     "How long do old {a} API versions stay up?", ("3", "6", "12")),
    ("fact", "{a} dashboard", "The main dashboard for {a} is in {v}, folder {a}-prod.",
     "{a}'s main dashboard lives in {v} under {a}-prod.", "Where is the {a} dashboard?",
     ("Grafana", "Datadog", "Kibana", "New Relic")),
    ("pattern", "{a} idempotency keys", "Writes to {a} carry an idempotency key kept {v} hours, so retries are safe.",
     "{a} keeps idempotency keys for {v} hours; every write sends one, which makes a retry harmless.",
     "How long does {a} keep idempotency keys?", ("12", "24", "48", "72")),
    ("fact", "{a} rate limit", "The public {a} endpoint allows {v} requests per minute per API key.",
     "Each API key may send {v} requests a minute to the public {a} endpoint.", "What is the {a} rate limit?",
     ("60", "120", "300", "600", "1000")),
    ("decision", "{a} hosting", "{a} runs on {v}; moving it elsewhere needs an architecture review.",
     "We host {a} on {v}, and moving it off needs an architecture review first.", "Where is {a} hosted?",
     ("Kubernetes", "bare metal", "ECS", "a single VM")),
    ("recipe", "Reindex {a}", "To rebuild the {a} search index run `make reindex-{a}`; it takes about {v} minutes.",
     "`make reindex-{a}` rebuilds the {a} search index in roughly {v} minutes.",
     "How do I rebuild the {a} search index?", ("5", "10", "20", "40", "90")),
)  # fmt: skip
FILLS = 7
THRESHOLDS = (0.85, 0.875, 0.9, 0.925, 0.95)
TRIGRAM_THRESHOLDS = (0.6, 0.7, 0.8, 0.9)


@dataclass
class Fact:
    template: int
    a: str
    b: str
    v: str
    id: str = ""

    @property
    def spec(self) -> tuple:
        return TEMPLATES[self.template]

    def fill(self, text: str, v: str | None = None) -> str:
        return text.format(a=self.a, b=self.b, v=self.v if v is None else v)

    def capsule(self, title: str | None = None, body: str | None = None) -> dict[str, Any]:
        return {"title": title or self.fill(self.spec[1]), "body": body or self.fill(self.spec[2]),
                "kind": self.spec[0], "scope": SCOPE}  # fmt: skip


def log(message: str) -> None:
    print(f"[agent-memory] {message}", file=sys.stderr, flush=True)


def facts(rng: random.Random) -> list[Fact]:
    out = []
    for number, spec in enumerate(TEMPLATES):
        subjects = rng.sample(SERVICES, FILLS)
        for a in subjects:
            b = rng.choice([s for s in (*DATABASES, *SERVICES) if s != a])
            out.append(Fact(number, a, b, rng.choice(spec[5])))
    return out


def light_edit(text: str) -> str:
    """A restatement in nearly the same words: a lead-in, other punctuation, one word more."""
    return "Note: " + text.replace(";", ",").rstrip(".") + " (confirmed)."


def start_daemon(
    root: Path, env: dict[str, str] | None = None, call_timeout: float = 300
) -> tuple[subprocess.Popen, Client, Path]:
    """A daemon on an empty library under `root` (also bench/agent_scale.py's), with
    `env` added to its environment, once its embedder is up."""
    data_dir = root / "data"
    config = root / "kenning.toml"
    config.write_text(f'[daemon]\ndata_dir = "{data_dir}"\nsweep_interval = 3600\nlog_level = "warning"\n')
    with open(root / "daemon.log", "wb") as out:
        daemon = subprocess.Popen([sys.executable, "-m", "kenning", "--config", str(config), "daemon"], stdout=out,
                                  stderr=subprocess.STDOUT, env={**os.environ, **(env or {})})  # fmt: skip
    client = Client(data_dir / "kenning.sock", timeout=call_timeout)
    deadline = time.monotonic() + 60
    while True:
        try:
            if client.call("status")["embedder"]["vectors"] is not None:
                return daemon, client, config
        except DaemonNotRunning:
            pass
        if daemon.poll() is not None or time.monotonic() > deadline:
            raise SystemExit(f"the daemon did not come up; see {root / 'daemon.log'}")
        time.sleep(0.2)


def wait_idle(client: Client, deadline_s: float = 300) -> None:
    """Until embedding and extraction have caught up, so they do not share the cores with
    what is timed next."""
    deadline = time.monotonic() + deadline_s
    quiet = 0
    while time.monotonic() < deadline:
        status = client.call("status")
        busy = status["embedder"]["job"]["state"] != "idle" or (status["graph"]["pending"] or 0) > 0
        quiet = 0 if busy else quiet + 1
        if quiet >= 3:
            return
        time.sleep(0.3)
    log("background jobs still busy; timing anyway")


def age(db_path: Path, ages: dict[str, float]) -> None:
    """Let time pass for these capsules (id -> days since written, never used)."""
    now = time.time()
    with sqlite3.connect(db_path, timeout=30) as conn:
        conn.executemany(
            "UPDATE capsules SET created_at = ?, updated_at = ?, last_used_at = NULL, uses = 0 WHERE id = ?",
            [(now - days * DAY, now - days * DAY, capsule_id) for capsule_id, days in ages.items()],
        )


def session(client: Client, db_path: Path, rng: random.Random) -> dict[str, Any]:
    base = facts(rng)
    fact_of = {fact.fill(fact.spec[1]): fact for fact in base}
    writes: list[dict[str, Any]] = []  # every memory.add with what it was meant to be

    def add(params: dict[str, Any], role: str, original: Fact | None) -> dict[str, Any]:
        result = client.call("memory.add", params)
        writes.append({"role": role, "params": params, "result": result, "original": original.id if original else None,
                       "template": (original or fact_of[params["title"]]).template})  # fmt: skip
        return result

    for fact in base:
        result = add(fact.capsule(), "distinct", None)
        # A distinct fact refused is a false positive: it is not stored, so nothing refers to it.
        fact.id = result["id"] if result["status"] == "created" else ""
    order = rng.sample([i for i, fact in enumerate(base) if fact.id], sum(bool(fact.id) for fact in base))
    duplicates, corrections, stale = order[:40], order[40:60], order[60:80]
    age(db_path, {base[i].id: (200.0 if i in stale else rng.uniform(10, 80)) for i in order})

    for n, i in enumerate(duplicates):
        fact = base[i]
        if n % 2:
            body, kind = light_edit(fact.fill(fact.spec[2])), "light"
        else:
            body, kind = fact.fill(fact.spec[3]), "paraphrase"
        add(fact.capsule(title=f"{fact.fill(fact.spec[1])} ({kind})", body=body), f"duplicate-{kind}", fact)

    current: dict[int, str] = {}
    for n, i in enumerate(corrections):
        fact = base[i]
        values = [v for v in fact.spec[5] if v != fact.v]
        new_value = rng.choice(values)
        body = fact.fill(fact.spec[2], new_value) + " (changed this month)"
        if n % 2:
            result = add(fact.capsule(body=body), "correction-same-title", fact)
        else:
            title = fact.fill(fact.spec[1]) + ", corrected"
            result = add(fact.capsule(title=title, body=body), "correction-new-title", fact)
            if result["status"] == "refused":
                # As an agent reading the refusal would: supersede the fact it corrects,
                # or keep both when the refusal named another one.
                again = {"supersedes": result["id"]} if result["id"] == fact.id else {"force": True}
                result = client.call("memory.add", {**fact.capsule(title=title, body=body), **again})
        current[i] = result["id"]
        fact.v = new_value

    # Before any recall: being recalled is a use, which makes a capsule fresh again.
    curated = client.call("memory.curate", {"scope": SCOPE, "limit": 500})
    # Recall: each correction asked as its question; then 60 distinct facts.
    corrected = []
    for i, capsule_id in current.items():
        fact = base[i]
        hits = client.call("memory.recall", {"query": fact.fill(fact.spec[4]), "limit": 5, "scope": SCOPE})["capsules"]
        ids = [hit["capsule"]["id"] for hit in hits]
        old_rank = ids.index(fact.id) if fact.id in ids and fact.id != capsule_id else None
        corrected.append(capsule_id in ids and (old_rank is None or ids.index(capsule_id) < old_rank))
    plain_ids = [i for i in order[80:] if base[i].id][:60]
    plain = []
    for i in plain_ids:
        fact = base[i]
        hits = client.call("memory.recall", {"query": fact.fill(fact.spec[4]), "limit": 5, "scope": SCOPE})["capsules"]
        plain.append(fact.id in [hit["capsule"]["id"] for hit in hits])
    stale_ids = {base[i].id for i in stale}
    listed = {entry["id"] for entry in curated["stale"]}
    return {
        "writes": writes,
        "corrected": corrected,
        "plain": plain,
        "stale": {"listed": len(listed), "right": len(listed & stale_ids), "planted": len(stale_ids)},
        "curate_duplicates": len(curated["duplicates"]),
        "curate_contradictions": len(curated["contradictions"]),
    }


def _names_original(write: dict[str, Any]) -> bool:
    return write["result"]["status"] == "refused" and write["result"]["id"] == write["original"]


def dedup_scores(writes: list[dict[str, Any]]) -> dict[str, Any]:
    positives = [w for w in writes if w["role"].startswith("duplicate")]
    negatives = [w for w in writes if w["role"] == "distinct"]
    caught = [w for w in positives if _names_original(w)]
    false = [w for w in negatives if w["result"]["status"] == "refused"]
    refused = len([w for w in positives if w["result"]["status"] == "refused"]) + len(false)
    by_kind = {
        kind: round(
            sum(w in caught for w in positives if w["role"] == f"duplicate-{kind}")
            / max(1, sum(w["role"] == f"duplicate-{kind}" for w in positives)), 3,
        )
        for kind in ("light", "paraphrase")
    }  # fmt: skip
    renamed = [w for w in writes if w["role"] == "correction-new-title"]
    return {
        "precision": round(len(caught) / refused, 3) if refused else None,
        "recall": round(len(caught) / len(positives), 3),
        "recall_by_kind": by_kind,
        "false_refusals": len(false),
        "methods": sorted({w["result"].get("method") or "-" for w in writes if w["result"]["status"] == "refused"}),
        "corrections_caught": f"{sum(_names_original(w) for w in renamed)}/{len(renamed)}",
    }


def replay(writes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The dedup rule at other thresholds: each duplicate and distinct write against the
    distinct facts written before it (same kind), by cosine and by trigrams."""
    embedder = make_embedder(EmbedderSettings())
    rows = [w for w in writes if w["role"] == "distinct" or w["role"].startswith("duplicate")]
    texts = [f"{w['params']['title']}\n{w['params']['body']}" for w in rows]
    vectors = embedder.embed(texts)
    grams = [trigrams(w["params"]["body"]) for w in rows]
    # Per write and method: the best score against an earlier distinct fact, and which one.
    best: list[dict[str, tuple[float, int | None]]] = []
    for n, w in enumerate(rows):
        earlier = [m for m in range(len(rows)) if rows[m]["role"] == "distinct" and m != n
                   and rows[m]["params"]["kind"] == w["params"]["kind"] and (m < n or w["role"] != "distinct")]  # fmt: skip
        if not earlier:
            best.append({"vector": (0.0, None), "trigram": (0.0, None)})
            continue
        cosines = vectors[earlier] @ vectors[n]
        jaccards = [jaccard(grams[n], grams[m]) for m in earlier]
        top_cos, top_jac = int(np.argmax(cosines)), int(np.argmax(jaccards))
        best.append({"vector": (float(cosines[top_cos]), earlier[top_cos]),
                     "trigram": (jaccards[top_jac], earlier[top_jac])})  # fmt: skip
    ids = [w["result"]["id"] if w["role"] == "distinct" else w["original"] for w in rows]
    table = []
    for method, thresholds in (("vector", THRESHOLDS), ("trigram", TRIGRAM_THRESHOLDS)):
        for threshold, split in ((t, split) for t in thresholds for split in ("dev", "test")):
            tp = fp = fn = 0
            for n, w in enumerate(rows):
                if (w["template"] % 2 == 0) != (split == "dev"):
                    continue
                score, nearest = best[n][method]
                refused = score >= threshold
                if w["role"] == "distinct":
                    fp += refused
                else:
                    right = nearest is not None and ids[nearest] == w["original"]
                    tp += refused and right
                    fp += refused and not right
                    fn += not (refused and right)
            table.append({"method": method, "threshold": threshold, "split": split,
                          "precision": round(tp / max(1, tp + fp), 3), "recall": round(tp / max(1, tp + fn), 3)})  # fmt: skip
    return table


def archive_speed(client: Client, root: Path, rng: random.Random, megabytes: int = 10) -> dict[str, Any]:
    words = "deploy build cache worker node request error retry timeout shard token queue".split()
    texts = []
    for n in range(4):
        lines = [f"{i:08d} {rng.choice(words)} {rng.choice(words)} step {i % 977} took {rng.randint(1, 999)} ms run {n}"
                 for i in range(megabytes * 1_000_000 // 4 // 50)]  # fmt: skip
        texts.append("\n".join(lines) + "\n")
    size = sum(len(text.encode()) for text in texts) / 1e6
    handles, write_s = [], 0.0
    for text in texts:
        # Each on a quiet daemon: the embedding of the previous one would share the cores.
        wait_idle(client)
        started = time.perf_counter()
        handles.append(client.call("archive.add", {"text": text})["handle"])
        write_s += time.perf_counter() - started
    wait_idle(client)
    started = time.perf_counter()
    for handle, text in zip(handles, texts):
        pieces, offset = [], 0
        while offset is not None:
            page = client.call("archive.recall", {"handle": handle, "offset": offset, "limit": 1_000_000})
            pieces.append(page["text"])
            offset = page["next_offset"]
        if "".join(pieces) != text:
            raise SystemExit(f"archive {handle} did not come back as it was archived")
    read_s = time.perf_counter() - started
    bare = sqlite3.connect(root / "bare.db", isolation_level=None)
    bare.execute("PRAGMA journal_mode = WAL")
    bare.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, body TEXT)")
    started = time.perf_counter()
    for text in texts:
        bare.execute("BEGIN")
        bare.execute("INSERT INTO t (body) VALUES (?)", (text,))
        bare.execute("COMMIT")
    bare_write = time.perf_counter() - started
    started = time.perf_counter()
    assert [row[0] for row in bare.execute("SELECT body FROM t ORDER BY id")] == texts
    bare_read = time.perf_counter() - started
    bare.close()
    return {
        "mb": round(size, 2),
        "write_mb_s": round(size / write_s, 1),
        "read_mb_s": round(size / read_s, 1),
        "bare_write_mb_s": round(size / bare_write, 1),
        "bare_read_mb_s": round(size / bare_read, 1),
    }


def percentiles(seconds: list[float]) -> dict[str, float]:
    cuts = statistics.quantiles(seconds, n=100, method="inclusive")
    return {"p50_ms": round(cuts[49] * 1000, 2), "p95_ms": round(cuts[94] * 1000, 2)}


async def mcp_latency(config: Path, client: Client, calls: int, handle: str) -> dict[str, Any]:
    """Each tool `calls` times through `ken mcp`, and its daemon method on the socket."""
    plans = {
        "search": ("search", lambda n: {"query": f"restart {SERVICES[n % 16]} safely"}),
        "recall_memory": ("memory.recall", lambda n: {"query": f"which port does {SERVICES[n % 16]} use"}),
        "remember": ("memory.add", lambda n: {"title": f"Latency note {n}", "scope": "latency",
                                              "body": f"Measured call {n} of the session; {SERVICES[n % 16]}."}),
        "archive": ("archive.add", lambda n: {"text": f"output of run {n}\n" + "line of tool output\n" * 400}),
        "recall": ("archive.recall", lambda n: {"handle": handle, "offset": n * 20_000 % 200_000, "limit": 20_000}),
        "ledger_add": ("ledger.add", lambda n: {"section": "hosts", "fields": {"ip": f"10.1.{n // 250}.{n % 250}"}}),
        "ledger_render": ("ledger.render", lambda n: {}),
        "context_pack": ("context.pack", lambda n: {"task": f"restart {SERVICES[n % 16]} without dropping requests"}),
    }  # fmt: skip
    env = {"PYTHONPATH": os.environ["PYTHONPATH"]} if "PYTHONPATH" in os.environ else None
    params = StdioServerParameters(command=sys.executable, args=["-m", "kenning", "--config", str(config), "mcp"],
                                   env=env)  # fmt: skip
    out: dict[str, Any] = {}
    with open(config.parent / "mcp.log", "w") as errlog:
        async with McpClient(stdio_client(params, errlog=errlog)) as mcp:
            for tool, (method, make) in plans.items():
                mcp_s, socket_s = [], []
                for n in range(calls + 3):
                    arguments = make(n)
                    started = time.perf_counter()
                    result = await mcp.call_tool(tool, arguments)
                    elapsed = time.perf_counter() - started
                    if result.is_error:
                        raise SystemExit(f"{tool} failed: {result.content[0].text}")
                    socket_args = {**make(n + 10_000)} if tool in ("remember", "archive", "ledger_add") else arguments
                    started = time.perf_counter()
                    await asyncio.to_thread(client.call, method, socket_args)
                    direct = time.perf_counter() - started
                    if n >= 3:  # the first calls warm caches on both paths
                        mcp_s.append(elapsed)
                        socket_s.append(direct)
                out[tool] = {"mcp": percentiles(mcp_s), "socket": percentiles(socket_s)}
    return out


def report(result: dict[str, Any]) -> str:
    d = result["dedup"]
    lines = [
        f"== agent memory session: {result['writes']} capsule writes ({result['seconds']} s) ==",
        f"write-time dedup: precision {d['precision']}, recall {d['recall']} (light edits {d['recall_by_kind']['light']},"
        f" paraphrases {d['recall_by_kind']['paraphrase']}); {d['false_refusals']} distinct facts refused;"
        f" judged by {', '.join(d['methods'])}",
        f"corrections under a new title caught (refused, then superseded): {d['corrections_caught']}",
        f"recall@5 of the current capsule over the one it corrects: {result['current_over_old']}",
        f"recall@5 of distinct facts asked as questions: {result['plain_recall']}",
        f"curate: stale listed {result['stale']['listed']}, of them planted {result['stale']['right']}"
        f"/{result['stale']['planted']}; likely duplicates {result['curate_duplicates']},"
        f" contradiction candidates {result['curate_contradictions']}",
        "",
        "dedup replay (same texts, the daemon's embedder; dev = even templates, test = odd):",
        "  method  threshold   dev precision / recall   test precision / recall",
    ]
    rows = {(row["method"], row["threshold"], row["split"]): row for row in result["replay"]}
    for method, threshold in dict.fromkeys((row["method"], row["threshold"]) for row in result["replay"]):
        dev, test = rows[method, threshold, "dev"], rows[method, threshold, "test"]
        lines.append(f"  {method:<8}{threshold:>9}   {dev['precision']:>9.3f} / {dev['recall']:.3f}"
                     f"   {test['precision']:>13.3f} / {test['recall']:.3f}")  # fmt: skip
    a = result["archive"]
    lines += [
        "",
        f"archive round trip, {a['mb']} MB in 4 texts: archive {a['write_mb_s']} MB/s, recall {a['read_mb_s']} MB/s"
        f" (bare SQLite: write {a['bare_write_mb_s']} MB/s, read {a['bare_read_mb_s']} MB/s)",
        "",
        f"{'tool':<15}{'MCP p50':>9}{'p95':>9}{'socket p50':>12}{'p95':>9}   (ms, {result['calls']} calls each)",
    ]
    for tool, cells in result["latency"].items():
        lines.append(f"{tool:<15}{cells['mcp']['p50_ms']:>9}{cells['mcp']['p95_ms']:>9}"
                     f"{cells['socket']['p50_ms']:>12}{cells['socket']['p95_ms']:>9}")  # fmt: skip
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--calls", type=int, default=40, help="measured calls per MCP tool")
    args = parser.parse_args()
    rng = random.Random(SEED)
    root = Path(tempfile.mkdtemp(prefix="kenning-agent-"))
    daemon = None
    try:
        daemon, client, config = start_daemon(root)
        started = time.monotonic()
        log("writing 200 capsules")
        run = session(client, root / "data" / "kenning.db", rng)
        seconds = round(time.monotonic() - started, 1)
        log("replaying dedup at other thresholds")
        table = replay(run["writes"])
        handle = client.call("archive.add", {"text": "latency page\n" * 20_000})["handle"]
        wait_idle(client)
        log("MCP latency")
        latency = asyncio.run(mcp_latency(config, client, args.calls, handle))
        log("archive round trip")
        archive = archive_speed(client, root, rng)
    finally:
        if daemon is not None:
            daemon.terminate()
            daemon.wait(timeout=30)
        shutil.rmtree(root, ignore_errors=True)
    result = {
        "writes": len(run["writes"]),
        "seconds": seconds,
        "dedup": dedup_scores(run["writes"]),
        "current_over_old": round(sum(run["corrected"]) / len(run["corrected"]), 3),
        "plain_recall": round(sum(run["plain"]) / len(run["plain"]), 3),
        "stale": run["stale"],
        "curate_duplicates": run["curate_duplicates"],
        "curate_contradictions": run["curate_contradictions"],
        "replay": table,
        "archive": archive,
        "calls": args.calls,
        "latency": latency,
    }
    print(json.dumps(result, indent=2) if args.json else report(result))


if __name__ == "__main__":
    main()
