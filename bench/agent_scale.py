"""The agent side at the size months of work leave it: call latency and loop stalls.

A real daemon (started with KENNING_SLOW_CALLBACK_MS=50) is filled through its socket as an
agent would fill it: a library of agent documents (~20,000 chunks), 20,000 memory capsules
in 50 scopes (one in 20 written to supersede an earlier one), 2,000 archives (one in 100 of
1 MB, the rest 2-20 KB) and 5,000 ledger entries over every ledger section (there are 8,
not 20: the sections are fixed). `--scale` shrinks every count alike.

Each agent call is timed `--calls` times (p50 / p99 in ms) twice in the same run: first as
the baseline, on the same daemon holding a small start (1 % of everything), then on the
full store. Loop steps over 50 ms that the daemon logged while each phase ran are counted,
and the slowest are shown with the task they belong to.

    .venv/bin/python bench/agent_scale.py [--scale 1.0] [--calls 30] [--json]
"""

from __future__ import annotations

import argparse
import json
import random
import re
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parent))

from agent_memory import start_daemon, wait_idle  # noqa: E402

from kenning.client import Client  # noqa: E402

SEED = 20261206
# Embedding and extraction after a full fill take long at scale 1.
IDLE_DEADLINE_S = 1800
SCOPES = 50
KINDS = ("fact", "decision", "gotcha", "pattern", "anti-pattern", "recipe", "principle")
SECTIONS = ("credentials", "findings", "decisions", "next_steps", "hosts", "services", "paths", "urls")
WORDS = (
    "deploy build cache worker node request error retry timeout shard token queue billing search gateway"
    " scheduler ledger invoice auth export mailer catalog pricing report upload webhook inventory replica"
    " index vacuum migration rollback canary latency budget quota tenant cluster region failover"
).split()
SYLLABLES = "ka lo mi ne su ta ri po an el or ux by de fi gu".split()
SLOW = re.compile(r"loop step took ([0-9.]+) s, ([0-9.]+) s of it on the CPU: (.*)")


def log(message: str) -> None:
    print(f"[agent-scale] {message}", file=sys.stderr, flush=True)


def vocabulary() -> tuple[list[str], list[float]]:
    """4,000 words drawn by Zipf's law, as prose draws them: a term of a query then matches
    a few chunks in a hundred, not every chunk, which a 40-word list would make it."""
    made = [a + b + c for a in SYLLABLES for b in SYLLABLES for c in SYLLABLES[:16]][: 4000 - len(WORDS)]
    words = [*WORDS, *made]
    random.Random(SEED).shuffle(words)
    return words, [1 / (rank + 1) for rank in range(len(words))]


VOCABULARY, WEIGHTS = vocabulary()


def words(rng: random.Random, n: int) -> str:
    return " ".join(rng.choices(VOCABULARY, WEIGHTS, k=n))


def query(rng: random.Random) -> str:
    """Three words of middling frequency, as a question names its subject."""
    return " ".join(rng.choice(VOCABULARY[50:1500]) for _ in range(3))


def sentence(rng: random.Random, n: int = 12) -> str:
    return " ".join(rng.choices(VOCABULARY, WEIGHTS, k=n)).capitalize() + f" {rng.randint(1, 99999)}."


class Filler:
    """Writes the store's contents in steps, so the baseline and the full store share a daemon."""

    def __init__(self, client: Client, scale: float, rng: random.Random) -> None:
        self.client, self.rng = client, rng
        self.targets = {
            "documents": max(1, round(1000 * scale)),  # ~20 chunks each
            "capsules": max(SCOPES, round(20_000 * scale)),
            "archives": max(1, round(2000 * scale)),
            "ledger": max(len(SECTIONS), round(5000 * scale)),
        }
        self.done = dict.fromkeys(self.targets, 0)
        self.capsule_ids: dict[str, list[str]] = {}
        self.big_handle = ""

    def fill(self, share: float) -> None:
        for what, target in self.targets.items():
            goal = max(1, round(target * share))
            started = time.monotonic()
            while self.done[what] < goal:
                getattr(self, f"_{what}")(self.done[what])
                self.done[what] += 1
            log(f"{what}: {self.done[what]} ({time.monotonic() - started:.0f} s)")

    def _documents(self, n: int) -> None:
        rng = self.rng
        sections = []
        for s in range(20):
            sections.append(f"## Part {s}: {words(rng, 2)}\n\n"
                            + " ".join(sentence(rng) for _ in range(12)))  # fmt: skip
        self.client.call("documents.add", {"title": f"Runbook {n}: {words(rng, 3)}",
                                           "text": "\n\n".join(sections), "source_uri": f"bench://runbook/{n}"})  # fmt: skip

    def _capsules(self, n: int) -> None:
        rng = self.rng
        scope = f"project-{n % SCOPES}"
        params: dict[str, Any] = {"title": f"Note {n} on {words(rng, 3)}",
                                  "body": " ".join(sentence(rng) for _ in range(3)),
                                  "kind": KINDS[n % len(KINDS)], "scope": scope, "force": True}  # fmt: skip
        earlier = self.capsule_ids.setdefault(scope, [])
        if n % 20 == 19 and earlier:
            params["supersedes"] = earlier.pop(rng.randrange(len(earlier)))
        result = self.client.call("memory.add", params)
        earlier.append(result["id"])

    def _archives(self, n: int) -> None:
        rng = self.rng
        size = 1_000_000 if n % 100 == 99 else rng.randint(2_000, 20_000)
        lines, total = [f"run {n} output"], 0
        while total < size:
            line = f"{total:08d} {rng.choice(WORDS)} {rng.choice(WORDS)} took {rng.randint(1, 999)} ms"
            lines.append(line)
            total += len(line) + 1
        self.client.call("archive.add", {"text": "\n".join(lines) + "\n"})

    def _ledger(self, n: int) -> None:
        section = SECTIONS[n % len(SECTIONS)]
        k = n // len(SECTIONS)
        identity = {
            "credentials": {"account": f"svc{k}", "host": f"h{k}.example.net"},
            "findings": {"title": f"finding {k} in {WORDS[k % len(WORDS)]}"},
            "decisions": {"subject": f"decision {k} on {WORDS[k % len(WORDS)]}"},
            "next_steps": {"text": f"step {k}: check {WORDS[k % len(WORDS)]}"},
            "hosts": {"ip": f"10.{k // 65536 % 256}.{k // 256 % 256}.{k % 256}"},
            "services": {"host": f"h{k}.example.net", "port": str(1000 + k % 60000)},
            "paths": {"path": f"/srv/app/{k}/{WORDS[k % len(WORDS)]}.log"},
            "urls": {"url": f"https://h{k}.example.net/api/{k}"},
        }[section]
        self.client.call("ledger.add", {"section": section, "fields": {**identity, "note": sentence(self.rng, 6)}})


def calls(
    filler: Filler, rng: random.Random
) -> tuple[dict[str, Callable[[int], tuple[str, dict[str, Any]]]], dict[str, str | None]]:
    """Each timed call, by name: its method and params for the n-th try."""

    def scope(n: int) -> str:
        return f"project-{n % SCOPES}"

    cursors: dict[str, str | None] = {}

    def list_page(n: int) -> tuple[str, dict[str, Any]]:
        # A walk by cursor through one scope; a new walk starts when one ends.
        return "memory.list", {"scope": scope(0), "limit": 50, **({"cursor": c} if (c := cursors.get("m")) else {})}

    def archive_page(n: int) -> tuple[str, dict[str, Any]]:
        return "archive.list", {"limit": 50, **({"cursor": c} if (c := cursors.get("a")) else {})}

    plans: dict[str, Callable[[int], tuple[str, dict[str, Any]]]] = {
        "memory.add": lambda n: ("memory.add", {"title": f"Timed note {n} {rng.random()}", "scope": scope(n),
                                                "body": " ".join(sentence(rng) for _ in range(3)), "force": True}),
        "memory.add (dedup)": lambda n: ("memory.add", {"title": f"Checked note {n} {rng.random()}", "scope": scope(n),
                                                        "body": " ".join(sentence(rng) for _ in range(3))}),
        "memory.recall": lambda n: ("memory.recall", {"query": query(rng),
                                                      "scope": scope(n), "limit": 5}),
        "memory.recall (all)": lambda n: ("memory.recall", {"query": query(rng)}),
        "memory.list": list_page,
        "memory.list (all)": lambda n: ("memory.list", {"limit": 50}),
        "memory.curate (scope)": lambda n: ("memory.curate", {"scope": scope(n)}),
        "memory.curate (all)": lambda n: ("memory.curate", {}),
        "archive.add": lambda n: ("archive.add", {"text": f"timed {n} {rng.random()}\n" + sentence(rng) * 200}),
        "archive.recall": lambda n: ("archive.recall", {"handle": filler.big_handle, "offset": n * 20_000 % 900_000}),
        "archive.list": archive_page,
        "ledger.add": lambda n: ("ledger.add", {"section": "hosts", "fields": {"hostname": f"timed-{n}-{rng.random()}.lan"}}),
        "ledger.render": lambda n: ("ledger.render", {}),
        "ledger.list": lambda n: ("ledger.list", {"section": SECTIONS[n % len(SECTIONS)]}),
        "context.pack 4000": lambda n: ("context.pack", {"task": query(rng),
                                                         "budget": 4000}),
        "context.pack 32000": lambda n: ("context.pack", {"task": query(rng),
                                                          "budget": 32000}),
        "status": lambda n: ("status", {}),
    }  # fmt: skip
    return plans, cursors


def measure(client: Client, filler: Filler, rng: random.Random, count: int) -> dict[str, dict[str, float]]:
    plans, cursors = calls(filler, rng)
    out = {}
    for name, make in plans.items():
        seconds = []
        for n in range(count + 2):
            method, params = make(n)
            started = time.perf_counter()
            result = client.call(method, params)
            elapsed = time.perf_counter() - started
            if name in ("memory.list", "archive.list"):
                cursors[name[0]] = result["next_cursor"]
            if n >= 2:  # the first calls warm caches
                seconds.append(elapsed)
        cuts = statistics.quantiles(seconds, n=100, method="inclusive")
        out[name] = {"p50_ms": round(cuts[49] * 1000, 1), "p99_ms": round(cuts[98] * 1000, 1)}
    return out


def slow_steps(log_path: Path, since: int) -> tuple[int, list[dict[str, Any]]]:
    """Loop steps the daemon reported past byte `since` of its log: how many, the slowest."""
    with open(log_path, "rb") as f:
        f.seek(since)
        text = f.read().decode(errors="replace")
    steps = [{"wall_s": float(m[1]), "cpu_s": float(m[2]), "what": m[3][:140]} for m in SLOW.finditer(text)]
    return len(steps), sorted(steps, key=lambda step: -step["wall_s"])[:5]


def phase(client: Client, filler: Filler, rng: random.Random, count: int, log_path: Path) -> dict[str, Any]:
    wait_idle(client, IDLE_DEADLINE_S)
    mark = log_path.stat().st_size
    figures = measure(client, filler, rng, count)
    stalls, worst = slow_steps(log_path, mark)
    return {"calls": figures, "slow_steps": stalls, "slowest": worst}


def report(result: dict[str, Any]) -> str:
    base, full = result["baseline"], result["full"]
    held = ", ".join(f"{k} {v}" for k, v in result["held"].items())
    lines = [
        f"== agent side at scale {result['scale']}: {held}; fill {result['fill_s']} s ==",
        f"{'call':<24}{'base p50':>10}{'p99':>9}{'full p50':>11}{'p99':>9}   (ms, {result['count']} calls each)",
    ]
    for name, cell in full["calls"].items():
        b = base["calls"][name]
        lines.append(f"{name:<24}{b['p50_ms']:>10}{b['p99_ms']:>9}{cell['p50_ms']:>11}{cell['p99_ms']:>9}")
    for label, part in (("baseline", base), ("full", full)):
        lines.append(f"loop steps over 50 ms while timing the {label}: {part['slow_steps']}")
        lines += [f"  {s['wall_s']} s ({s['cpu_s']} s CPU) {s['what']}" for s in part["slowest"]]
    lines.append(f"loop steps over 50 ms while filling: {result['fill_slow_steps']}")
    lines += [f"  {s['wall_s']} s ({s['cpu_s']} s CPU) {s['what']}" for s in result["fill_slowest"]]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scale", type=float, default=1.0, help="share of the full sizes to fill")
    parser.add_argument("--calls", type=int, default=30, help="timed calls per method and phase")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--keep", action="store_true", help="keep the daemon's folder (its log) and say where")
    args = parser.parse_args()
    rng = random.Random(SEED)
    root = Path(tempfile.mkdtemp(prefix="kenning-scale-"))
    log_path = root / "daemon.log"
    daemon = None
    try:
        daemon, client, _ = start_daemon(root, {"KENNING_SLOW_CALLBACK_MS": "50"}, call_timeout=600)
        filler = Filler(client, args.scale, rng)
        filler.fill(0.01)
        filler.big_handle = client.call("archive.add", {"text": "".join(f"{i:08d} page line\n" for i in range(60_000))})[
            "handle"
        ]  # fmt: skip
        log("baseline")
        baseline = phase(client, filler, rng, args.calls, log_path)
        mark, started = log_path.stat().st_size, time.monotonic()
        filler.fill(1.0)
        wait_idle(client, IDLE_DEADLINE_S)
        fill_s = round(time.monotonic() - started)
        fill_stalls, fill_worst = slow_steps(log_path, mark)
        log("full")
        full = phase(client, filler, rng, args.calls, log_path)
    finally:
        if daemon is not None:
            daemon.terminate()
            daemon.wait(timeout=60)
        if args.keep:
            log(f"kept {root}")
        else:
            shutil.rmtree(root, ignore_errors=True)
    result = {"scale": args.scale, "count": args.calls, "held": filler.done, "fill_s": fill_s, "baseline": baseline,
              "full": full, "fill_slow_steps": fill_stalls, "fill_slowest": fill_worst}  # fmt: skip
    print(json.dumps(result, indent=2) if args.json else report(result))


if __name__ == "__main__":
    main()
