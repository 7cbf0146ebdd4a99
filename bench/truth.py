"""Answers that know what is true now: kenning's own golden set, scored per class.

Clean teach-then-recall tests overstate a library's quality: real notes hold a decision
and its later correction, a claim and its retraction, two people disagreeing, last year's
figure next to this year's, a proposal that never happened. bench/truth holds realistic
notes with all of those and questions in eleven classes (see bench/truth/README.md). A
real daemon ingests the notes, embeds them and extracts entities; every question goes
through its socket `search` (limit 10), and the same questions go to a bare SQLite FTS5
table over the same files as the baseline, so both columns come from one run.

    .venv/bin/python bench/truth.py [--split dev|tune|test|all] [--json] [--keep DIR]
                                    [--extra-config TEXT] [--deadline S] [--check]

Scoring works on documents: the hits are reduced to their documents in order of first
appearance, and "top 5" means the first five documents. Progress goes to stderr; the
tables (or the JSON object) are the only thing on stdout. The script exits 0 whether the
targets pass or not; a set that fails its own checks stops the run before anything starts.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from kenning.client import Client
from kenning.errors import DaemonNotRunning

SET = Path(__file__).resolve().parent / "truth"
SOURCE = "truth"
LIMIT = 10
TOP = 5
POLL_S = 0.25
STOP_DEADLINE_S = 15.0
# status["graph"] may appear only once the extraction job starts; past this grace after
# embedding, a daemon without it is taken as one that does not extract.
GRAPH_KEY_GRACE_S = 30.0
# Every copied file gets this mtime (2026-12-01 00:00 UTC): what a note's date is must come
# from its text, and equal mtimes give no file an edge.
FIXED_MTIME = datetime(2026, 12, 1, tzinfo=timezone.utc).timestamp()
FTS_PIECE_CHARS = 1200
FTS_TOKENIZER = "porter unicode61 remove_diacritics 2"
MIN_PER_CLASS = 15
# dev and test are the set's two halves; tune holds extra abstention questions, written
# after the first floors failed to carry from dev to test, and answerable clean,
# multi-hop and citation ones that keep the floors honest, to choose the floors on along
# with dev.
# "all" is dev and test.
SPLITS = ("dev", "tune", "test")
TUNED_CLASSES = ("abstention", "clean", "multi-hop", "citation")
# The abstention trade-off (dev split only): the daemon is reloaded with each
# [retrieval] min_coverage and support_similarity and asked the dev questions again.
COVERAGE_FLOORS = (0.0, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8)
SIMILARITY_FLOORS = (0.3, 0.4, 0.5)


@dataclass(frozen=True)
class Kind:
    """How one class is judged and what the issue asks of it (None: no target set)."""

    name: str
    metric: str
    target: float | None


KINDS = {
    kind.name: kind
    for kind in (
        Kind("clean", "hit@5", 0.9),
        Kind("multi-hop", "hit@5", 0.9),
        Kind("correction", "right>wrong", 0.8),
        Kind("retraction", "right>wrong", 0.8),
        Kind("contradiction", "both@5", 0.8),
        Kind("time-bound", "right>wrong", 0.8),
        Kind("hypothetical", "right>wrong", 0.8),
        Kind("abstention", "no hits", 0.8),
        Kind("citation", "cited", 1.0),
        Kind("cjk", "hit@5", 0.8),
        Kind("phrase", "hit@5", None),
    )
}
# While abstaining, the library must still answer this share of the answerable questions.
ANSWERED_TARGET = 0.95
FIELDS = {
    "hit@5": ("relevant",),
    "right>wrong": ("right", "wrong"),
    "both@5": ("sides",),
    "no hits": (),
    "cited": ("relevant", "evidence"),
}
DATE_KEYS = re.compile(r"^(date|updated|created):\s*\S", re.MULTILINE)
DATED_NAME = re.compile(r"(19|20)\d\d-\d\d")
DATED_HEADING = re.compile(r"^#.*\b(19|20)\d\d\b", re.MULTILINE)
TOKEN = re.compile(r"\w+")


class SetupError(Exception):
    """The set or the daemon cannot be measured as asked; the message says why."""


@dataclass
class Question:
    id: str
    kind: Kind
    split: str
    text: str
    row: dict[str, Any]

    def documents(self) -> set[str]:
        """Every document this question's expectation names."""
        row = self.row
        names = [*row.get("relevant", []), *row.get("sides", [])]
        names += [row[key] for key in ("right", "wrong", "bridge") if key in row]
        return set(names)


@dataclass
class Hit:
    doc: str
    line_start: int
    line_end: int
    score: float


@dataclass
class Answer:
    hits: list[Hit] = field(default_factory=list)

    @property
    def docs(self) -> list[str]:
        return list(dict.fromkeys(hit.doc for hit in self.hits))


def log(message: str) -> None:
    print(f"[truth] {message}", file=sys.stderr, flush=True)


# --- the set ---------------------------------------------------------------------------


def load_set(root: Path) -> tuple[list[Question], list[str]]:
    """The questions and the corpus files (relative paths); raises on any flaw in the set."""
    corpus = root / "corpus"
    files = sorted(path.relative_to(corpus).as_posix() for path in corpus.rglob("*") if path.is_file())
    questions = []
    problems = []
    with (root / "questions.jsonl").open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            row = json.loads(line)
            kind = KINDS.get(row.get("class"))
            if kind is None or row.get("split") not in SPLITS or not row.get("question"):
                problems.append(f"line {number}: needs a known class, split dev|tune|test and a question")
                continue
            questions.append(Question(row["id"], kind, row["split"], row["question"], row))
    problems += check_set(questions, set(files), corpus)
    if problems:
        raise SetupError("the set fails its checks:\n  " + "\n  ".join(problems))
    return questions, files


def check_set(questions: list[Question], files: set[str], corpus: Path) -> list[str]:
    problems = []
    ids = Counter(q.id for q in questions)
    problems += [f"{qid}: id used {n} times" for qid, n in ids.items() if n > 1]
    phrases = PhraseIndex(files, corpus)
    for q in questions:
        missing_fields = [key for key in FIELDS[q.kind.metric] if not q.row.get(key)]
        if missing_fields:
            problems.append(f"{q.id}: {q.kind.name} needs {missing_fields}")
            continue
        if q.kind.name == "abstention" and q.documents():
            problems.append(f"{q.id}: an abstention question names no document")
        missing = sorted(q.documents() - files)
        if missing:
            problems.append(f"{q.id}: not in corpus/: {missing}")
            continue
        if q.kind.metric == "right>wrong" and q.row["right"] == q.row["wrong"]:
            problems.append(f"{q.id}: right and wrong are the same document")
        if q.kind.metric == "right>wrong" or q.kind.name == "contradiction":
            undated = [doc for doc in sorted(q.documents()) if not has_explicit_date(doc, corpus)]
            problems += [f"{q.id}: {doc} carries no explicit date" for doc in undated]
        if q.kind.name == "citation":
            problems += check_evidence(q, corpus)
        if q.kind.name == "phrase":
            problems += phrases.check(q)
    for kind in KINDS.values():
        splits = Counter(q.split for q in questions if q.kind is kind and q.split != "tune")
        if sum(splits.values()) < MIN_PER_CLASS or set(splits) != {"dev", "test"}:
            problems.append(f"class {kind.name}: {dict(splits)}; needs >= {MIN_PER_CLASS} in dev and test together")
    tuned = [q.id for q in questions if q.split == "tune" and q.kind.name not in TUNED_CLASSES]
    if tuned:
        problems.append(f"the tune split holds {', '.join(TUNED_CLASSES)} questions only: {tuned}")
    tested = set().union(*(q.documents() for q in questions if q.split == "test"))
    for split in ("dev", "tune"):
        shared = set().union(*(q.documents() for q in questions if q.split == split)) & tested
        if shared:
            problems.append(f"documents named by both {split} and test questions: {sorted(shared)}")
    phrases.close()
    return problems


def has_explicit_date(doc: str, corpus: Path) -> bool:
    """A date a reader can see: front matter, the file name, or a heading with a year."""
    text = (corpus / doc).read_text(encoding="utf-8")
    front = text.split("\n---", 1)[0] if text.startswith("---") else ""
    return bool(DATE_KEYS.search(front) or DATED_NAME.search(doc) or DATED_HEADING.search(text))


def check_evidence(q: Question, corpus: Path) -> list[str]:
    if len(q.row["relevant"]) != 1:
        return [f"{q.id}: a citation question names exactly one relevant document"]
    doc = q.row["relevant"][0]
    lines = (corpus / doc).read_text(encoding="utf-8").split("\n")
    found = sum(q.row["evidence"] in line for line in lines)
    return [] if found == 1 else [f"{q.id}: evidence on {found} lines of {doc}, must be exactly 1"]


class PhraseIndex:
    """Whole notes in FTS5 with the daemon's tokenizer, to find every note holding a phrase."""

    def __init__(self, files: set[str], corpus: Path) -> None:
        self.db = sqlite3.connect(":memory:")
        self.db.execute(f"CREATE VIRTUAL TABLE docs USING fts5(path UNINDEXED, body, tokenize='{FTS_TOKENIZER}')")
        self.db.executemany(
            "INSERT INTO docs VALUES (?, ?)",
            ((doc, (corpus / doc).read_text(encoding="utf-8")) for doc in sorted(files)),
        )

    def check(self, q: Question) -> list[str]:
        """The phrase is quoted in the question and, as a porter phrase, only in its notes."""
        phrase = q.row["phrase"]
        if f'"{phrase}"' not in q.text:
            return [f'{q.id}: the question does not quote "{phrase}"']
        rows = self.db.execute("SELECT path FROM docs WHERE docs MATCH ?", (fts_phrase(phrase),))
        holders = {row[0] for row in rows}
        if holders != set(q.row["relevant"]):
            return [f'{q.id}: "{phrase}" occurs in {sorted(holders)}, expected only {q.row["relevant"]}']
        return []

    def close(self) -> None:
        self.db.close()


def fts_phrase(text: str) -> str:
    return '"' + " ".join(TOKEN.findall(text)) + '"'


# --- the baseline: bare FTS5 -----------------------------------------------------------


def pieces(text: str) -> list[tuple[int, int, str]]:
    """Consecutive lines up to about FTS_PIECE_CHARS each, with their 1-based line range."""
    out: list[tuple[int, int, str]] = []
    lines = text.split("\n")
    start, size = 0, 0
    for index, line in enumerate(lines):
        if size and size + len(line) + 1 > FTS_PIECE_CHARS:
            out.append((start + 1, index, "\n".join(lines[start:index])))
            start, size = index, 0
        size += len(line) + 1
    out.append((start + 1, len(lines), "\n".join(lines[start:])))
    return out


def fts_baseline(docs: Path, files: list[str], questions: list[Question]) -> dict[str, Answer]:
    """Every question token quoted and OR-joined (stopwords kept), bm25, top LIMIT pieces."""
    db = sqlite3.connect(":memory:")
    db.execute(
        "CREATE VIRTUAL TABLE pieces USING fts5(doc UNINDEXED, line_start UNINDEXED, line_end UNINDEXED, body,"
        f" tokenize='{FTS_TOKENIZER}')"
    )
    for doc in files:
        text = (docs / doc).read_text(encoding="utf-8")
        db.executemany("INSERT INTO pieces VALUES (?, ?, ?, ?)", ((doc, *piece) for piece in pieces(text)))
    answers = {}
    for q in questions:
        tokens = list(dict.fromkeys(token.lower() for token in TOKEN.findall(q.text)))
        rows = []
        if tokens:
            expression = " OR ".join('"' + token.replace('"', '""') + '"' for token in tokens)
            rows = db.execute(
                "SELECT doc, line_start, line_end, -bm25(pieces) FROM pieces WHERE pieces MATCH ?"
                " ORDER BY bm25(pieces) LIMIT ?",
                (expression, LIMIT),
            ).fetchall()
        answers[q.id] = Answer([Hit(doc, start, end, score) for doc, start, end, score in rows])
    db.close()
    return answers


# --- the daemon ------------------------------------------------------------------------


def write_config(root: Path, docs: Path, extra: str, data_dir: Path | None = None) -> tuple[Path, Path]:
    data_dir = data_dir or root / "data"
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


def wait_ready(daemon: subprocess.Popen, client: Client, expected: int, deadline_s: float, log_path: Path) -> dict:
    """Poll status until ingest, embedding and (when the daemon reports it) extraction are done."""
    started = time.monotonic()
    done: dict[str, float] = {}
    quiet_polls = 0
    last_report = started
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
        discovered = source["discovered"] or 0  # 0 until the first sweep has walked the tree
        if "ingest" not in done and not source["scanning"] and discovered >= expected and settled == discovered:
            done["ingest"] = now - started
            log(f"  ingest done in {done['ingest']:.1f} s: {source['chunks']} chunks, {source['failed']} failed")
        embedder = status["embedder"]
        if "ingest" in done and "embed" not in done:
            if embedder["job"].get("state") == "idle" and embedder["vectors"] == source["chunks"]:
                done["embed"] = now - started
                log(f"  every chunk embedded at {done['embed']:.1f} s")
        graph = status.get("graph")
        if "embed" in done:
            if graph is None:
                if now - started - done["embed"] > GRAPH_KEY_GRACE_S:
                    log("  status has no 'graph' object: measuring without waiting for extraction")
                    return status
            else:
                # pending can dip to 0 between ingest handing chunks over and the job
                # picking them up: wait for it to stay there.
                quiet_polls = quiet_polls + 1 if graph["pending"] == 0 else 0
                if quiet_polls >= 3:
                    log(f"  extraction done: {graph['entities']} entities, {graph['relations']} relations")
                    return status
        if now - last_report >= 5:
            pending = "n/a" if graph is None else graph.get("pending")
            log(f"  {settled}/{discovered} files, {embedder['vectors']} vectors, extraction pending {pending}")
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


def ask_kenning(client: Client, docs: Path, questions: list[Question]) -> tuple[dict[str, Answer], Counter]:
    root = os.path.realpath(docs)
    answers: dict[str, Answer] = {}
    warnings: Counter = Counter()
    for q in questions:
        result = client.call("search", {"query": q.text, "limit": LIMIT})
        hits = []
        for hit in result["hits"]:
            path = os.path.realpath(hit["path"])
            doc = os.path.relpath(path, root) if path.startswith(root + os.sep) else hit["path"]
            hits.append(Hit(Path(doc).as_posix(), hit["line_start"], hit["line_end"], hit["score"]))
        answers[q.id] = Answer(hits)
        warnings.update(result.get("warnings", []))
    return answers, warnings


def copy_corpus(source: Path, target: Path) -> None:
    shutil.copytree(source, target)
    for path in target.rglob("*"):
        if path.is_file():
            os.utime(path, (FIXED_MTIME, FIXED_MTIME))


# --- scoring ---------------------------------------------------------------------------


def judge(q: Question, answer: Answer, docs: Path) -> bool:
    top = answer.docs[:TOP]
    row = q.row
    metric = q.kind.metric
    if metric == "hit@5":
        return any(doc in top for doc in row["relevant"])
    if metric == "right>wrong":
        right, wrong = row["right"], row["wrong"]
        return right in top and (wrong not in answer.docs or answer.docs.index(right) < answer.docs.index(wrong))
    if metric == "both@5":
        return all(doc in top for doc in row["sides"])
    if metric == "no hits":
        return not answer.hits
    hit = next((hit for hit in answer.hits if hit.doc in row["relevant"]), None)
    if hit is None or hit.doc not in top:
        return False
    lines = (docs / hit.doc).read_text(encoding="utf-8").split("\n")[hit.line_start - 1 : hit.line_end]
    return any(row["evidence"] in line for line in lines)


def summarise(questions: list[Question], answers: dict[str, Answer], docs: Path) -> dict[str, Any]:
    """Per split ('dev', 'tune', 'test', and 'all' = dev + test): per class passed/n and
    score, plus the share of the split's answerable questions that got a hit."""
    passed = {q.id: judge(q, answers[q.id], docs) for q in questions}
    out: dict[str, Any] = {}
    for split in SPLITS + ("all",):
        chosen = [q for q in questions if q.split == split or (split == "all" and q.split != "tune")]
        classes = {}
        for kind in KINDS.values():
            mine = [q for q in chosen if q.kind is kind]
            if mine:
                wins = sum(passed[q.id] for q in mine)
                classes[kind.name] = {"n": len(mine), "passed": wins, "score": round(wins / len(mine), 3)}
                if kind.metric == "hit@5":
                    firsts = sum(bool(set(answers[q.id].docs[:1]) & set(q.row["relevant"])) for q in mine)
                    classes[kind.name]["hit@1"] = round(firsts / len(mine), 3)
        answerable = [q for q in chosen if q.kind.name != "abstention"]
        answered = sum(bool(answers[q.id].hits) for q in answerable)
        out[split] = {
            "classes": classes,
            "answered": {
                "n": len(answerable), "passed": answered, "score": round(answered / max(len(answerable), 1), 3)
            },
        }
    out["questions"] = {
        q.id: {
            "passed": passed[q.id],
            "docs": answers[q.id].docs,
            "hits": len(answers[q.id].hits),
            "top_score": round(answers[q.id].hits[0].score, 4) if answers[q.id].hits else None,
        }
        for q in questions
    }
    return out


def floor_tradeoff(
    client: Client, config: Path, data_dir: Path, docs: Path, extra: str, questions: list[Question]
) -> list[dict[str, float]]:
    """Dev and tune answering at each [retrieval] min_coverage and support_similarity, from
    real searches.

    Each pair is written to the config and applied with `reload`, which swaps the
    retriever's settings without touching the index; the shipped config is restored after.
    """
    dev = [q for q in questions if q.split in ("dev", "tune")]
    absent = [q for q in dev if q.kind.name == "abstention"]
    answerable = [q for q in dev if q.kind.name != "abstention"]
    rows = []
    try:
        for similarity in SIMILARITY_FLOORS:
            for coverage in COVERAGE_FLOORS:
                floors = f"[retrieval]\nmin_coverage = {coverage}\nsupport_similarity = {similarity}\n"
                write_config(config.parent, docs, (extra + "\n" + floors).strip(), data_dir)
                client.call("reload")
                answers, _ = ask_kenning(client, docs, dev)
                rows.append(
                    {
                        "min_coverage": coverage,
                        "support_similarity": similarity,
                        "refused_absent": round(sum(not answers[q.id].hits for q in absent) / len(absent), 3),
                        "answered_answerable": round(
                            sum(bool(answers[q.id].hits) for q in answerable) / len(answerable), 3
                        ),
                    }
                )
    finally:
        write_config(config.parent, docs, extra, data_dir)
        client.call("reload")
    return rows


def verdict(kind: Kind, score: float, answered: float) -> str:
    if kind.target is None:
        return "-"
    ok = score >= kind.target and (kind.name != "abstention" or answered >= ANSWERED_TARGET)
    return "PASS" if ok else "FAIL"


# --- report ----------------------------------------------------------------------------


def format_report(result: dict[str, Any], splits: list[str]) -> str:
    lines = [
        "== kenning truth bench ==",
        (
            f"corpus {result['files']} files ({result['chunks']} chunks, {result['files_failed']} failed), "
            f"{result['questions']} questions; vectors {result['vectors']}, entities {result['entities']}"
        ),
        f"ready at {result['ready_seconds']} s; run took {result['run_seconds']} s",
    ]
    if result["extra_config"]:
        lines.append(f"extra config: {result['extra_config']!r}")
    header = f"{'class':<14}{'n':>4}  {'metric':<12}{'kenning':>8}{'FTS5':>8}{'target':>8}  verdict"
    for split in splits:
        ken, fts = result["kenning"][split], result["fts5"][split]
        lines += ["", f"-- split {split} --", header]
        for name, row in ken["classes"].items():
            kind = KINDS[name]
            target = "-" if kind.target is None else f">={kind.target:g}"
            lines.append(
                f"{name:<14}{row['n']:>4}  {kind.metric:<12}{row['score']:>8.2f}"
                f"{fts['classes'][name]['score']:>8.2f}{target:>8}  "
                f"{verdict(kind, row['score'], ken['answered']['score'])}"
            )
            if name == "phrase":
                # The phrase class has no target; hit@1 shows what phrase matching changes
                # when the note is already among the first five.
                lines.append(
                    f"{'  phrase':<14}{row['n']:>4}  {'hit@1':<12}{row['hit@1']:>8.2f}"
                    f"{fts['classes'][name]['hit@1']:>8.2f}{'-':>8}  -"
                )
        lines.append(
            f"{'answerable':<14}{ken['answered']['n']:>4}  {'answered':<12}{ken['answered']['score']:>8.2f}"
            f"{fts['answered']['score']:>8.2f}{'>=' + format(ANSWERED_TARGET, 'g'):>8}  (abstention keeps these)"
        )
    lines += [
        "",
        "hit@5: a relevant document among the first 5 documents of the hits; right>wrong: the right one in",
        "the top 5 and above the wrong one (or the wrong one absent); both@5: both sides in the top 5;",
        "hit@1: a relevant document first (JSON has it for every hit@5 class);",
        "no hits: the search returned nothing; cited: the first hit of the relevant document is in the top 5",
        "and its line range holds the evidence line; answered: answerable questions that got any hit.",
        "abstention PASS needs both its own target and answered >= 0.95.",
        "",
        "abstention trade-off on dev + tune: [retrieval] min_coverage (columns) at each support_similarity (rows),",
        "from real searches after `reload` (refused: abstention questions with no hits; answerd: others with hits):",
        "  min_coverage    " + "".join(f"{c:>6.1f}" for c in COVERAGE_FLOORS),
    ]
    for similarity in SIMILARITY_FLOORS:
        row = [r for r in result["floor_tradeoff"] if r["support_similarity"] == similarity]
        lines.append(f"  sim {similarity:.1f} refused" + "".join(f"{r['refused_absent']:>6.2f}" for r in row))
        lines.append(f"  sim {similarity:.1f} answerd" + "".join(f"{r['answered_answerable']:>6.2f}" for r in row))
    lines.append("")
    for failure in result["failures"]:
        lines.append(f"file failed to ingest: {failure['path']}: {failure['reason']}")
    for warning, count in result["warnings"].items():
        lines.append(f"warning ({count} searches): {warning}")
    return "\n".join(lines)


# --- run -------------------------------------------------------------------------------


def measure(args: argparse.Namespace, root: Path, questions: list[Question], files: list[str]) -> dict[str, Any]:
    docs = root / "docs"
    copy_corpus(args.data / "corpus", docs)
    log(f"{len(files)} files, {len(questions)} questions; FTS5 baseline first")
    fts = fts_baseline(docs, files, questions)
    config, data_dir = write_config(root, docs, args.extra_config)
    log_path = root / "daemon.log"
    client = Client(data_dir / "kenning.sock")
    log(f"starting the daemon in {root}")
    started = time.monotonic()
    with open(log_path, "wb") as daemon_log:
        daemon = subprocess.Popen(
            [sys.executable, "-m", "kenning", "--config", str(config), "daemon"],
            stdout=daemon_log,
            stderr=subprocess.STDOUT,
        )
    try:
        status = wait_ready(daemon, client, len(files), args.deadline, log_path)
        ready = time.monotonic() - started
        log(f"asking {len(questions)} questions")
        kenning, warnings = ask_kenning(client, docs, questions)
        tradeoff = []
        if "[retrieval]" in args.extra_config:
            log("--extra-config sets [retrieval]: no abstention trade-off table")
        else:
            log("abstention trade-off on dev")
            tradeoff = floor_tradeoff(client, config, data_dir, docs, args.extra_config, questions)
        exit_code = stop(daemon)
    finally:
        if daemon.poll() is None:
            daemon.kill()
            daemon.wait()
    source = next(s for s in status["sources"] if s["name"] == SOURCE)
    graph = status.get("graph") or {}
    return {
        "files": len(files),
        "questions": len(questions),
        "chunks": source["chunks"],
        "files_failed": source["failed"],
        "failures": source.get("failures", []),
        "vectors": status["embedder"]["vectors"],
        "entities": graph.get("entities"),
        "ready_seconds": round(ready, 1),
        "extra_config": args.extra_config,
        "kenning": summarise(questions, kenning, docs),
        "fts5": summarise(questions, fts, docs),
        "floor_tradeoff": tradeoff,
        "warnings": dict(warnings),
        "daemon_exit_code": exit_code,
    }


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--split", choices=SPLITS + ("all",), default=None, help="the one table to print (default: all four)"
    )
    parser.add_argument("--data", type=Path, default=SET, help=f"the set (default {SET})")
    parser.add_argument("--keep", type=Path, metavar="DIR", help="work in DIR (must be empty or absent) and keep it")
    parser.add_argument("--json", action="store_true", help="print the results as one JSON object")
    parser.add_argument(
        "--extra-config",
        default="",
        metavar="TEXT",
        help="TOML appended to the daemon's config; start it with a table header, e.g. '[retrieval]'",
    )
    parser.add_argument("--deadline", type=float, default=600.0, help="seconds to wait for the daemon to be ready")
    parser.add_argument("--check", action="store_true", help="only check the set (no daemon) and print its counts")
    return parser.parse_args()


def main() -> None:
    args = parse_args()
    try:
        questions, files = load_set(args.data)
    except SetupError as exc:
        sys.exit(f"truth bench: {exc}")
    if args.check:
        counts = Counter((q.kind.name, q.split) for q in questions)
        for kind in KINDS:
            print(f"{kind:<14} dev {counts[kind, 'dev']:>3}  tune {counts[kind, 'tune']:>3}  test {counts[kind, 'test']:>3}")
        print(f"{len(files)} files, {len(questions)} questions: the set passes its checks")
        return
    if args.keep is not None:
        if args.keep.exists() and any(args.keep.iterdir()):
            sys.exit(f"--keep {args.keep}: directory is not empty")
        args.keep.mkdir(mode=0o700, parents=True, exist_ok=True)
        root = args.keep.absolute()
    else:
        root = Path(tempfile.mkdtemp(prefix="kenning-truth-"))
    started = time.monotonic()
    try:
        result = measure(args, root, questions, files)
    except SetupError as exc:
        sys.exit(f"truth bench: {exc}")
    finally:
        if args.keep is None:
            shutil.rmtree(root, ignore_errors=True)
        else:
            log(f"kept {root}")
    result["run_seconds"] = round(time.monotonic() - started, 1)
    splits = [args.split] if args.split else [*SPLITS, "all"]
    if args.json:
        if args.split:
            # Only the split's own questions: a tuning run's output must not show how the
            # test questions fared, one by one.
            shown = {q.id for q in questions if q.split == args.split or (args.split == "all" and q.split != "tune")}
            for system in ("kenning", "fts5"):
                asked = result[system]["questions"]
                result[system] = {
                    args.split: result[system][args.split],
                    "questions": {qid: outcome for qid, outcome in asked.items() if qid in shown},
                }
        print(json.dumps(result, indent=2, ensure_ascii=False))
    else:
        print(format_report(result, splits))


if __name__ == "__main__":
    main()
