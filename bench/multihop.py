"""Multi-hop retrieval on kenning's own set: does the graph leg find the page two hops away?

The questions in bench/multihop/data name an entity A and ask about an entity B linked to
it; the page that answers never names A, so keyword and vector legs see it only through
words hundreds of pages share. A graph leg that follows A to B can find it. A real daemon
ingests the pages, embeds them and extracts entities; then every question goes through
its socket in each mode, and the same run reports every mode, so the comparison holds on
any machine.

    .venv/bin/python bench/multihop.py [--modes keyword,hybrid,graph] [--keep DIR] [--json]
                                       [--extra-config TEXT] [--data DIR] [--deadline S]

Progress goes to stderr; the summary (or the JSON object) is the only thing on stdout.
"""

from __future__ import annotations

import argparse
import json
import math
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kenning.client import Client
from kenning.errors import DaemonNotRunning, RpcError

DATA = Path(__file__).resolve().parent / "multihop" / "data"
SOURCE = "multihop"
# Chunks asked of `search`; pages are one chunk each, so 20 leave room to collapse
# several chunks of one page and still rank 10 pages.
CHUNK_LIMIT = 20
TOP = 10
WARMUP = 10
POLL_S = 0.25
STOP_DEADLINE_S = 15.0
# How long to keep polling for status["graph"] once ingest and embedding are done: the
# key may appear only when the extraction job starts.
GRAPH_KEY_GRACE_S = 30.0
INVALID_PARAMS = -32602


@dataclass(frozen=True)
class Mode:
    key: str
    label: str
    legs: tuple[str, ...]


MODES = {
    "keyword": Mode("keyword", "keyword only", ("keyword",)),
    "hybrid": Mode("hybrid", "hybrid (keyword+vector)", ("keyword", "vector")),
    "graph": Mode("graph", "hybrid+graph (keyword+vector+graph)", ("keyword", "vector", "graph")),
    # Not run by default: the graph leg alone, to tell a leg that finds nothing from a
    # fusion that drowns what it finds.
    "graph_only": Mode("graph_only", "graph leg only", ("graph",)),
}
DEFAULT_MODES = "keyword,hybrid,graph"


class SetupError(Exception):
    """The daemon cannot be measured as asked; the message says why and what to do."""


@dataclass
class Query:
    id: str
    text: str
    hops: int
    kind: str
    grades: dict[str, int]  # page file name -> grade

    @property
    def answer(self) -> str:
        return next(doc for doc, grade in self.grades.items() if grade == 2)


@dataclass
class Run:
    rankings: dict[str, list[str]] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)
    warnings: dict[str, int] = field(default_factory=lambda: defaultdict(int))


def log(message: str) -> None:
    print(f"[bench] {message}", file=sys.stderr, flush=True)


# --- the set ---------------------------------------------------------------------------


def load_set(data: Path) -> tuple[list[Query], list[Path]]:
    grades: dict[str, dict[str, int]] = defaultdict(dict)
    with (data / "qrels.tsv").open(encoding="utf-8") as lines:
        next(lines)  # header
        for line in lines:
            if line.strip():
                qid, doc, grade = line.rstrip("\n").split("\t")
                grades[qid][doc] = int(grade)
    queries = []
    with (data / "queries.jsonl").open(encoding="utf-8") as lines:
        for line in lines:
            if line.strip():
                row = json.loads(line)
                queries.append(Query(row["id"], row["text"], row["hops"], row.get("kind", ""), grades[row["id"]]))
    docs = sorted((data / "docs").glob("*.md"))
    names = {path.name for path in docs}
    missing = sorted({doc for q in queries for doc in q.grades} - names)
    if not queries or missing:
        raise SetupError(f"{data}: {len(queries)} queries, judged pages missing from docs/: {missing[:5]}")
    return queries, docs


# --- metrics ---------------------------------------------------------------------------


def score(ranking: list[str], q: Query) -> dict[str, float]:
    """answer@10: the grade-2 page in the top 10; both@10: it and the bridge page (multi-hop).

    recall@10 is the usual fraction of judged pages in the top 10; nDCG@10 uses the grade
    as gain; MRR@10 is the reciprocal rank of the answer page.
    """
    top = ranking[:TOP]
    judged = [doc for doc, grade in q.grades.items() if grade > 0]
    dcg = sum(q.grades.get(doc, 0) / math.log2(rank + 2) for rank, doc in enumerate(top))
    ideal = sorted((grade for grade in q.grades.values() if grade > 0), reverse=True)[:TOP]
    idcg = sum(grade / math.log2(rank + 2) for rank, grade in enumerate(ideal))
    rank = top.index(q.answer) + 1 if q.answer in top else None
    return {
        "answer@10": float(rank is not None),
        "both@10": float(all(doc in top for doc in judged)),
        "recall@10": sum(doc in top for doc in judged) / len(judged),
        "ndcg@10": dcg / idcg,
        "mrr@10": 1.0 / rank if rank else 0.0,
    }


METRICS = ("answer@10", "both@10", "recall@10", "ndcg@10", "mrr@10")
HEADERS = ("Ans@10", "Both@10", "R@10", "nDCG@10", "MRR@10", "ms")


def evaluate(run: Run, queries: list[Query]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for hops in (2, 1):
        chosen = [q for q in queries if q.hops == hops]
        if not chosen:
            continue
        scores = [score(run.rankings[q.id], q) for q in chosen]
        row = {metric: round(statistics.fmean(s[metric] for s in scores), 4) for metric in METRICS}
        row["mean_ms"] = round(statistics.fmean(run.seconds[q.id] for q in chosen) * 1000, 2)
        row["queries"] = len(chosen)
        result[f"hops{hops}"] = row
    by_relation: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for q in queries:
        if q.hops == 2:
            relation = q.kind.split(">")[0]
            by_relation[relation][0] += q.answer in run.rankings[q.id][:TOP]
            by_relation[relation][1] += 1
    result["answer@10_by_relation"] = {k: f"{hit}/{n}" for k, (hit, n) in sorted(by_relation.items())}
    if run.warnings:
        result["warnings"] = dict(run.warnings)
    return result


# --- the daemon ------------------------------------------------------------------------


def write_config(root: Path, docs: Path, extra: str) -> tuple[Path, Path]:
    data_dir = root / "data"
    config = root / "kenning.toml"
    text = (
        "[daemon]\n"
        f'data_dir = "{data_dir}"\n'
        "sweep_interval = 3600\n"
        'log_level = "warning"\n'
        "[[sources]]\n"
        f'name = "{SOURCE}"\n'
        f'path = "{docs}"\n'
    )
    if extra:
        text += extra.rstrip("\n") + "\n"
    config.write_text(text)
    return config, data_dir


def tail(path: Path, lines: int = 20) -> str:
    return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])


def wait_ready(
    daemon: subprocess.Popen, client: Client, expected: int, need_graph: bool, deadline_s: float, log_path: Path
) -> tuple[dict, dict[str, float]]:
    """Poll status until ingest, embedding and (when present or needed) extraction are done.

    Returns the last status and the seconds from start at which each stage finished.
    """
    started = time.monotonic()
    done: dict[str, float] = {}
    last_report = started
    quiet_polls = 0
    while True:
        now = time.monotonic()
        if daemon.poll() is not None:
            raise SetupError(f"daemon exited with {daemon.returncode} before it was ready:\n{tail(log_path)}")
        if now - started > deadline_s:
            raise SetupError(f"not ready within {deadline_s:.0f} s (stages done: {done or 'none'}); see {log_path}")
        try:
            status = client.call("status")
        except DaemonNotRunning:
            time.sleep(POLL_S)  # socket not bound yet
            continue
        source = next((s for s in status["sources"] if s["name"] == SOURCE), None)
        if source is None:
            raise SetupError(f"daemon has no source {SOURCE!r}: {[s['name'] for s in status['sources']]}")
        settled = source["done"] + source["failed"] + source["skipped"]
        # discovered stays 0 until the first sweep has walked the tree.
        discovered = source["discovered"] or 0
        if "ingest" not in done and not source["scanning"] and discovered >= expected and settled == discovered:
            done["ingest"] = now - started
            log(f"  ingest done in {done['ingest']:.1f} s: {source['chunks']} chunks, {source['failed']} failed")
        embedder = status["embedder"]
        embedded = embedder["job"].get("state") == "idle" and embedder["vectors"] == source["chunks"]
        if "ingest" in done and "embed" not in done and embedded:
            done["embed"] = now - started
            log(f"  every chunk embedded at {done['embed']:.1f} s")
        graph = status.get("graph")
        if "embed" in done and "graph" not in done:
            if graph is None:
                if not need_graph:
                    return status, done
                if now - started - done["embed"] > GRAPH_KEY_GRACE_S:
                    raise SetupError(
                        "status has no 'graph' object: this daemon build does not report entity extraction "
                        "(expected status['graph'] = {pending, entities, relations}). "
                        "Measure without the graph leg with --modes keyword,hybrid."
                    )
            else:
                # pending can dip to 0 between the ingest handing over chunks and the
                # extraction job picking them up: wait for it to stay there.
                quiet_polls = quiet_polls + 1 if graph["pending"] == 0 else 0
                if quiet_polls >= 3:
                    done["graph"] = now - started
                    log(
                        f"  extraction done at {done['graph']:.1f} s: {graph['entities']} entities,"
                        f" {graph['relations']} relations"
                    )
                    return status, done
        if now - last_report >= 5:
            job = embedder["job"]
            pending = "n/a" if graph is None else graph.get("pending")
            log(
                f"  {settled}/{source['discovered']} files, {embedder['vectors']} vectors"
                f" ({job.get('state')}), extraction pending {pending}"
            )
            last_report = now
        time.sleep(POLL_S)


def stop(daemon: subprocess.Popen) -> int | None:
    daemon.send_signal(signal.SIGTERM)
    try:
        return daemon.wait(timeout=STOP_DEADLINE_S)
    except subprocess.TimeoutExpired:
        daemon.kill()
        daemon.wait()
        return None


def search(client: Client, mode: Mode, text: str) -> dict:
    try:
        return client.call("search", {"query": text, "limit": CHUNK_LIMIT, "legs": list(mode.legs)})
    except RpcError as exc:
        if exc.code == INVALID_PARAMS and "graph" in mode.legs:
            raise SetupError(
                f"the daemon rejects legs {list(mode.legs)} ({exc}): this build has no graph leg yet. "
                "Measure without it with --modes keyword,hybrid."
            ) from None
        raise


def run_mode(client: Client, mode: Mode, queries: list[Query]) -> Run:
    run = Run()
    for q in queries[:WARMUP]:
        search(client, mode, q.text)
    for q in queries:
        started = time.perf_counter()
        result = search(client, mode, q.text)
        run.seconds[q.id] = time.perf_counter() - started
        run.rankings[q.id] = list(dict.fromkeys(Path(hit["path"]).name for hit in result["hits"]))
        for warning in result.get("warnings", []):
            run.warnings[warning] += 1
    return run


def measure(args: argparse.Namespace, root: Path, modes: list[Mode]) -> dict[str, Any]:
    queries, pages = load_set(args.data)
    docs = root / "docs"
    docs.mkdir()
    for page in pages:
        shutil.copyfile(page, docs / page.name)
    config, data_dir = write_config(root, docs, args.extra_config)
    log_path = root / "daemon.log"
    client = Client(data_dir / "kenning.sock")
    need_graph = any("graph" in mode.legs for mode in modes)
    log(f"{len(pages)} pages, {len(queries)} questions; starting the daemon in {root}")
    daemon = start_daemon(config, log_path)
    try:
        status, stages = wait_ready(daemon, client, len(pages), need_graph, args.deadline, log_path)
        source = next(s for s in status["sources"] if s["name"] == SOURCE)
        results = {}
        for mode in modes:
            log(f"{mode.label}: {len(queries)} questions")
            results[mode.key] = {
                "label": mode.label,
                "legs": list(mode.legs),
                **evaluate(run_mode(client, mode, queries), queries),
            }
        exit_code = stop(daemon)
    finally:
        if daemon.poll() is None:
            daemon.kill()
            daemon.wait()
    graph = status.get("graph") or {}
    return {
        "pages": len(pages),
        "questions": {"hops2": sum(q.hops == 2 for q in queries), "hops1": sum(q.hops == 1 for q in queries)},
        "chunks": source["chunks"],
        "files_failed": source["failed"],
        "vectors": status["embedder"]["vectors"],
        "entities": graph.get("entities"),
        "relations": graph.get("relations"),
        "ready_seconds": {stage: round(seconds, 1) for stage, seconds in stages.items()},
        "extra_config": args.extra_config,
        "modes": results,
        "exit_code": exit_code,
    }


# --- report ----------------------------------------------------------------------------


def verdicts(result: dict[str, Any]) -> dict[str, Any]:
    modes = result["modes"]
    if "hybrid" not in modes or "graph" not in modes:
        return {"target": None, "control": None}
    plain, graph = modes["hybrid"], modes["graph"]
    verdict = {
        "target": graph["hops2"]["answer@10"] > plain["hops2"]["answer@10"],
        "hybrid_recall@10": plain["hops2"]["answer@10"],
        "graph_recall@10": graph["hops2"]["answer@10"],
        "control": None,
    }
    if "hops1" in plain:
        verdict["control"] = graph["hops1"]["answer@10"] >= plain["hops1"]["answer@10"]
        verdict["single_hop_hybrid_recall@10"] = plain["hops1"]["answer@10"]
        verdict["single_hop_graph_recall@10"] = graph["hops1"]["answer@10"]
    return verdict


def format_summary(result: dict[str, Any]) -> str:
    width = max(len(m["label"]) for m in result["modes"].values()) + 2
    lines = [
        "== kenning multi-hop bench ==",
        (
            f"pages {result['pages']} ({result['chunks']} chunks, {result['files_failed']} failed), "
            f"questions {result['questions']['hops2']} multi-hop + {result['questions']['hops1']} single-hop"
        ),
        (
            f"vectors {result['vectors']}, entities {result['entities']}, relations {result['relations']}; "
            f"ready at {result['ready_seconds']} s"
        ),
    ]
    if result["extra_config"]:
        lines.append(f"extra config: {result['extra_config']!r}")
    for hops, title in (("hops2", "multi-hop (answer page graded 2, bridge page 1)"), ("hops1", "single-hop controls")):
        lines += ["", title, "mode".ljust(width) + "".join(h.rjust(9) for h in HEADERS)]
        for mode in result["modes"].values():
            row = mode.get(hops)
            if row:
                cells = [f"{row[m]:.3f}" for m in METRICS] + [f"{row['mean_ms']:.1f}"]
                lines.append(mode["label"].ljust(width) + "".join(c.rjust(9) for c in cells))
    lines += [
        "",
        (
            "Ans@10 = answer page in the top 10 (the recall@10 of the target); Both@10 = answer and bridge page"
            " both there; R@10 = judged pages found; MRR@10 on the answer page; ms = mean per search."
        ),
    ]
    verdict = result["verdicts"]
    if verdict["target"] is None:
        lines.append(
            "target: hybrid+graph recall@10 > hybrid recall@10 on multi-hop: NOT MEASURED (needs modes hybrid and graph)"
        )
    else:
        lines.append(
            f"target: hybrid+graph recall@10 > hybrid recall@10 on multi-hop: {'PASS' if verdict['target'] else 'FAIL'}"
            f" ({verdict['graph_recall@10']:.3f} vs {verdict['hybrid_recall@10']:.3f})"
        )
        if verdict["control"] is not None:
            lines.append(
                f"control: single-hop recall@10 hybrid+graph {verdict['single_hop_graph_recall@10']:.3f}"
                f" vs hybrid {verdict['single_hop_hybrid_recall@10']:.3f}: {'not hurt' if verdict['control'] else 'HURT'}"
            )
    for mode in result["modes"].values():
        for warning, count in mode.get("warnings", {}).items():
            lines.append(f"warning ({mode['label']}, {count} searches): {warning}")
    return "\n".join(lines)


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--modes", default=DEFAULT_MODES, help=f"comma-separated, from {', '.join(MODES)} (default: {DEFAULT_MODES})"
    )
    parser.add_argument("--data", type=Path, default=DATA, help=f"the set (default {DATA})")
    parser.add_argument("--keep", type=Path, metavar="DIR", help="work in DIR (must be empty or absent) and keep it")
    parser.add_argument("--json", action="store_true", help="print the results as one JSON object")
    parser.add_argument(
        "--extra-config",
        default="",
        metavar="TEXT",
        help="TOML appended to the daemon's config; start it with a table header, e.g. '[retrieval]'",
    )
    parser.add_argument("--deadline", type=float, default=900.0, help="seconds to wait for the daemon to be ready")
    args = parser.parse_args()
    unknown = [m for m in args.modes.split(",") if m not in MODES]
    if unknown:
        parser.error(f"unknown mode(s) {unknown}; choose from {', '.join(MODES)}")
    return args


@contextmanager
def workspace(keep: Path | None, name: str) -> Iterator[Path]:
    """The bench's directory: `--keep DIR` (made private, refused unless empty, kept), or
    a temporary one removed after. A SetupError ends the run with its message."""
    if keep is None:
        root = Path(tempfile.mkdtemp(prefix=f"kenning-{name}-"))
    elif keep.exists() and any(keep.iterdir()):
        sys.exit(f"--keep {keep}: directory is not empty")
    else:
        keep.mkdir(mode=0o700, parents=True, exist_ok=True)
        root = keep.absolute()
    try:
        yield root
    except SetupError as exc:
        sys.exit(f"{name} bench: {exc}")
    finally:
        if keep is None:
            shutil.rmtree(root, ignore_errors=True)
        else:
            log(f"kept {root}")


def start_daemon(config: Path, log_path: Path) -> subprocess.Popen:
    with open(log_path, "wb") as daemon_log:
        return subprocess.Popen(
            [sys.executable, "-m", "kenning", "--config", str(config), "daemon"],
            stdout=daemon_log,
            stderr=subprocess.STDOUT,
        )


def main() -> None:
    args = parse_args()
    modes = [MODES[key] for key in dict.fromkeys(args.modes.split(","))]
    started = time.monotonic()
    with workspace(args.keep, "multihop") as root:
        result = measure(args, root, modes)
    result["verdicts"] = verdicts(result)
    result["run_seconds"] = round(time.monotonic() - started, 1)
    print(json.dumps(result, indent=2) if args.json else format_summary(result))


if __name__ == "__main__":
    main()
