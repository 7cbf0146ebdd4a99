"""Hostile files: what each way of parsing costs, and the daemon on a folder of them.

Four parts, each with its baseline in the same run:

1. Each hostile file (the issue's sizes: a 1 MB DOCX of 1 GiB of spaces, a 408 KB PDF
   whose stream inflates to 400 MB, a DOCX of 2M paragraphs, a nested HTML, a gzip bomb)
   parsed three ways, each in a fresh process whose tree RSS is sampled:
   - unbounded: today's readers with every cap lifted, in-process (baseline);
   - caps only: today's readers (streaming caps: size checks, bounded gunzip, text cap,
     DOCX inflate check) in-process, with no memory or time limit;
   - pool: today's path, a ParsePool worker with RLIMIT_AS and a time limit.
2. Overhead on ordinary files (markdown, PDF, DOCX, HTML): read → redact → chunk in a
   thread of the calling process (baseline) against a round trip through the pool.
3. The real daemon (`ken daemon`) on a folder of the hostile files plus ordinary
   ones: peak RSS of the daemon and its workers, the slowest `status` answer while it
   ingests, and whether every ordinary file was indexed. Target: peak RSS < 1 GB,
   daemon up throughout.
4. HTML whose markup is left open at the end of the file (comments opened and never
   closed, a tag whose attributes run to the end), and an ordinary page of the same
   size: each converted by html2text on Python's own parser (baseline, what kenning ran
   before) and by kenning's `html_to_markdown`, each in a fresh process, timed inside it.

    .venv/bin/python bench/hostile.py                 # everything (~12 min on 2 cores, part 4 most of it)
    .venv/bin/python bench/hostile.py --parts 2       # only the overhead part
    .venv/bin/python bench/hostile.py --timeout 30    # give up on an unbounded parse sooner
    .venv/bin/python bench/hostile.py --parts 4 --html-sizes 1 4   # open markup at 1 and 4 MB

MB here is 2**20 bytes (the limits are set in MiB). Progress goes to stderr.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import docx
import html2text
import psutil

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from kenning.client import Client  # noqa: E402
from kenning.ingest.convert import ConvertLimits, convert_file  # noqa: E402
from kenning.ingest.parse_pool import ParsePool  # noqa: E402
from kenning.ingest.readers import ReadLimits  # noqa: E402
from kenning.text.html import html_to_markdown  # noqa: E402
from tests.helpers import make_pdf  # noqa: E402
from tests.hostile_files import (  # noqa: E402
    docx_many_paragraphs,
    docx_whitespace_bomb,
    gzip_bomb,
    html_comment_openers,
    nested_html,
    pdf_stream_bomb,
)

MiB = 1 << 20
SAMPLE_S = 0.05
LIMITS = ConvertLimits(read=ReadLimits(), target_chars=1200, overlap_chars=150, max_chunks=10_000)
POOL_MEMORY_MB = 512
POOL_TIMEOUT_S = 120.0
TARGET_PEAK_MB = 1024
# A daemon past this much RSS is stopped: the baseline can reach several GB, and the
# machine is shared.
GUARD_RSS = 6 << 30


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def hostile_files(folder: Path) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    return [
        docx_whitespace_bomb(folder / "spaces.docx", 1 << 30),
        pdf_stream_bomb(folder / "stream.pdf", 400 * MiB),
        docx_many_paragraphs(folder / "paragraphs.docx", 2_000_000),
        # Under the inflate limit (30 MB of XML), so only the memory or time limit stops it.
        docx_many_paragraphs(folder / "paragraphs-800k.docx", 800_000),
        nested_html(folder / "nested.html", 5000),
        gzip_bomb(folder / "bomb.md.gz", 1 << 30),
    ]


# --- part 1: one file, one way, in a child process -----------------------------------


def unbounded(path: Path) -> str:
    """Today's readers with every cap lifted: what parsing costs with nothing to stop it."""
    lifted = ConvertLimits(read=ReadLimits(4 << 30, 1 << 40), target_chars=1200, overlap_chars=150, max_chunks=1 << 40)
    return f"{len(convert_file(path, path.stem, lifted).items)} chunks"


def caps_only(path: Path) -> str:
    return f"{len(convert_file(path, path.stem, LIMITS).items)} chunks"


def in_pool(path: Path) -> str:
    async def run() -> str:
        pool = ParsePool(1, POOL_MEMORY_MB)
        try:
            return f"{len((await pool.convert(path, path.stem, LIMITS, POOL_TIMEOUT_S)).items)} chunks"
        finally:
            await pool.stop()

    return asyncio.run(run())


WAYS = {"unbounded": unbounded, "caps only": caps_only, "pool": in_pool}


def stdlib_parser(path: Path) -> str:
    """html2text as kenning configures it, on Python's html.parser as it is."""
    converter = html2text.HTML2Text()
    converter.ignore_images = True
    converter.body_width = 0
    converter.unicode_snob = True
    source = path.read_text()
    started = time.process_time()
    text = converter.handle(source)
    return f"{time.process_time() - started:.3f} s, {len(text)} chars"


def kenning_html(path: Path) -> str:
    source = path.read_text()
    started = time.process_time()
    text = html_to_markdown(source)[0]
    return f"{time.process_time() - started:.3f} s, {len(text)} chars"


HTML_WAYS = {"stdlib parser": stdlib_parser, "kenning": kenning_html}


def one(way: str, path: Path) -> None:
    try:
        outcome = {**WAYS, **HTML_WAYS}[way](path)
    except Exception as exc:  # the outcome is the figure, whatever it is
        outcome = f"{type(exc).__name__}: {' '.join(str(exc).split())[:70]}"
    print(outcome, flush=True)


def tree_rss(process: psutil.Process) -> int:
    total = 0
    for member in (process, *process.children(recursive=True)):
        try:
            total += member.memory_info().rss
        except psutil.Error:
            pass
    return total


def measure(way: str, path: Path, timeout: float) -> tuple[float, float, str]:
    """Seconds, peak tree RSS in MB, and the outcome of parsing `path` one way."""
    child = subprocess.Popen(
        [sys.executable, __file__, "--one", way, str(path)], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
    )
    watched = psutil.Process(child.pid)
    started, peak = time.monotonic(), 0
    while child.poll() is None:
        peak = max(peak, tree_rss(watched))
        if time.monotonic() - started > timeout:
            for member in (*watched.children(recursive=True), watched):
                member.kill()
            child.wait()
            return time.monotonic() - started, peak / MiB, f"still running after {timeout:.0f} s (killed)"
        time.sleep(SAMPLE_S)
    outcome = (child.stdout.read() if child.stdout else "").strip()
    return time.monotonic() - started, peak / MiB, outcome


def part_bombs(work: Path, timeout: float) -> None:
    log("part 1: writing the hostile files")
    files = hostile_files(work / "hostile")
    print("\n1. Each hostile file parsed three ways (fresh process each; peak RSS of its process tree)\n")
    print(f"{'file':<22}{'size':>9}  {'way':<10}{'time s':>8}{'peak MB':>9}  outcome")
    for path in files:
        for way in WAYS:
            log(f"  {path.name}: {way}")
            seconds, peak, outcome = measure(way, path, timeout)
            size = f"{path.stat().st_size / 1024:.0f} KB"
            print(f"{path.name:<22}{size:>9}  {way:<10}{seconds:>8.1f}{peak:>9.0f}  {outcome}")


# --- part 2: overhead on ordinary files ----------------------------------------------


def ordinary_files(folder: Path) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    rng = random.Random(7)
    words = [f"w{i}" for i in range(3000)]

    def sentence() -> str:
        return " ".join(rng.choices(words, k=rng.randint(8, 20))) + "."

    files = []
    for n in range(300):
        path = folder / f"note{n}.md"
        paragraphs = ["\n".join(sentence() for _ in range(4)) for _ in range(rng.randint(2, 12))]
        path.write_text(f"# Note {n}\n\n" + "\n\n".join(paragraphs) + "\n")
        files.append(path)
    for n in range(20):
        files.append(make_pdf(folder / f"paper{n}.pdf", [[sentence() for _ in range(30)] for _ in range(3)]))
        document = docx.Document()
        document.add_heading(f"Report {n}", 1)
        for _ in range(40):
            document.add_paragraph(sentence())
        document.save(folder / f"report{n}.docx")
        files.append(folder / f"report{n}.docx")
        page = folder / f"page{n}.html"
        page.write_text("<html><body>" + "".join(f"<h2>Part {i}</h2><p>{sentence()}</p>" for i in range(30)) + "</body></html>")
        files.append(page)
    return files


async def convert_all(files: list[Path], convert) -> float:
    started = time.perf_counter()
    queue = iter(files)

    async def worker() -> None:
        for path in queue:
            await convert(path)

    # Two files in flight, as a sweep has.
    await asyncio.gather(worker(), worker())
    return time.perf_counter() - started


def part_overhead(work: Path) -> None:
    log("part 2: ordinary files")
    files = ordinary_files(work / "ordinary")
    groups = {
        "markdown": [f for f in files if f.suffix == ".md"],
        "pdf": [f for f in files if f.suffix == ".pdf"],
        "docx": [f for f in files if f.suffix == ".docx"],
        "html": [f for f in files if f.suffix == ".html"],
    }

    async def run() -> list[tuple[str, int, float, float]]:
        pool = ParsePool(2, POOL_MEMORY_MB)
        await pool.convert(files[0], "warm", LIMITS, POOL_TIMEOUT_S)  # workers up before timing

        async def in_thread(path: Path) -> None:
            await asyncio.to_thread(convert_file, path, path.stem, LIMITS)

        async def through_pool(path: Path) -> None:
            await pool.convert(path, path.stem, LIMITS, POOL_TIMEOUT_S)

        rows = []
        for name, group in groups.items():
            await convert_all(group[:5], in_thread)  # imports and caches warm
            thread_s = await convert_all(group, in_thread)
            pool_s = await convert_all(group, through_pool)
            rows.append((name, len(group), thread_s, pool_s))
        await pool.stop()
        return rows

    print("\n2. Ordinary files: read → redact → chunk, two in flight\n")
    print(f"{'format':<10}{'files':>6}{'thread ms/file':>16}{'pool ms/file':>14}{'ratio':>7}")
    for name, count, thread_s, pool_s in asyncio.run(run()):
        print(f"{name:<10}{count:>6}{thread_s * 1000 / count:>16.2f}{pool_s * 1000 / count:>14.2f}{pool_s / thread_s:>7.2f}")


# --- part 3: the daemon on a hostile folder -------------------------------------------


def part_daemon(work: Path, baseline: Path | None, deadline: float) -> None:
    log("part 3: the daemon on a hostile folder")
    folder = work / "daemon-folder"
    folder.mkdir(parents=True, exist_ok=True)
    # Three copies of each, so both parse workers meet a bomb at the same time.
    for path in hostile_files(work / "hostile"):
        for copy in range(3):
            target = folder / f"{copy}-{path.name}"
            if not target.exists():
                os.link(path, target)
    with open(os.path.join(os.fsencode(folder), b"odd\xff\xfe.md"), "w") as handle:
        handle.write("an odd name\n")
    (folder / "noise.md").write_bytes(random.Random(1).randbytes(100_000))
    ordinary = ordinary_files(work / "ordinary")
    for path in ordinary:
        target = folder / path.name
        if not target.exists():
            os.link(path, target)
    print("\n3. The daemon on a folder of the hostile files plus ordinary ones\n")
    if baseline is not None:
        print(f"-- baseline: the daemon from {baseline}")
        run_daemon(work / "baseline", folder, len(ordinary), baseline, deadline)
        print("-- this tree")
    run_daemon(work / "current", folder, len(ordinary), ROOT, deadline)


def run_daemon(work: Path, folder: Path, ordinary: int, tree: Path, deadline: float) -> None:
    """Start `ken daemon` from `tree` on `folder` and watch it until it settles or `deadline` s pass."""
    work.mkdir(parents=True, exist_ok=True)
    data = work / "data"
    shutil.rmtree(data, ignore_errors=True)  # a kept --work folder must not start indexed
    config = work / "config.toml"
    config.write_text(
        f'[daemon]\ndata_dir = "{data}"\nsweep_interval = 3600\nlog_level = "info"\n'
        f'[[sources]]\nname = "hostile"\npath = "{folder}"\n'
    )
    log_path = work / "daemon.log"
    with open(log_path, "ab") as out:
        daemon = subprocess.Popen(
            [sys.executable, "-m", "kenning", "--config", str(config), "daemon"],
            stdout=out,
            stderr=subprocess.STDOUT,
            # `-m` puts the working directory first on the path: run from the tree.
            cwd=tree,
            env={**os.environ, "PYTHONPATH": str(tree)},
        )
    watched = psutil.Process(daemon.pid)
    client = Client(data / "kenning.sock", timeout=60)
    started, peak, slowest, answers, down = time.monotonic(), 0, 0.0, 0, 0
    status = None
    # Counting starts once the socket first answers; before that the daemon is starting.
    while not (data / "kenning.sock").exists() and daemon.poll() is None and time.monotonic() - started < 60:
        peak = max(peak, tree_rss(watched))
        time.sleep(0.05)
    while time.monotonic() - started < deadline and peak < GUARD_RSS:
        peak = max(peak, tree_rss(watched))
        if daemon.poll() is not None:
            break
        asked = time.monotonic()
        try:
            status = next(s for s in client.call("status")["sources"] if s["name"] == "hostile")
            slowest = max(slowest, time.monotonic() - asked)
            answers += 1
        except Exception:
            down += 1
        if status and status["last_sweep_at"] and not status["scanning"]:
            settled = status["holds"] + status["failed"] + status["skipped"] + status["capped"]
            if status["discovered"] and settled >= status["discovered"]:
                break
        time.sleep(0.2)
    elapsed = time.monotonic() - started
    alive = daemon.poll() is None
    settled_in_time = elapsed < deadline and peak < GUARD_RSS
    for member in (*watched.children(recursive=True), watched) if alive else ():
        member.kill()
    daemon.wait(30)
    if status is None:
        print(f"daemon gave no status (alive: {alive}); see {log_path}")
        return
    done = status["done"]
    print(f"files: {status['discovered']} discovered, {done} done, {status['failed']} failed ({ordinary} ordinary)")
    reasons: dict[str, int] = {}
    for failure in status["failures"]:
        reasons[failure["reason"]] = reasons.get(failure["reason"], 0) + 1
    for reason, count in sorted(reasons.items()):
        print(f"  {count} failed: {reason}")
    if settled_in_time:
        print(f"time to settle: {elapsed:.1f} s", end="")
    else:
        stopped = "RSS guard" if peak >= GUARD_RSS else f"{deadline:.0f} s deadline"
        print(f"not settled: stopped by the {stopped} after {elapsed:.1f} s", end="")
    print(f"; status answered {answers} times, {down} times not, slowest {slowest * 1000:.0f} ms")
    verdict = "PASS" if peak / MiB < TARGET_PEAK_MB and alive and settled_in_time and done >= ordinary else "FAIL"
    print(
        f"peak RSS, daemon + workers: {peak / MiB:.0f} MB  [{verdict}: target < {TARGET_PEAK_MB} MB, up throughout,"
        " settled, every ordinary file indexed]"
    )


# --- part 4: markup left open at the end of an HTML page -------------------------------


def open_markup_pages(folder: Path, size: int) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    mb = f"{size / MiB:.3g}mb"
    before = "<p>Text before the open markup.</p>"
    tag = folder / f"open-tag-{mb}.html"
    tag.write_text(f"<html><body>{before}" + "<a x" * (size // 4))
    ordinary = folder / f"ordinary-{mb}.html"
    paragraph = "<p>" + " ".join(["ordinary words of a page"] * 8) + "</p><!-- a closed comment -->\n"
    ordinary.write_text("<html><body>" + paragraph * (size // len(paragraph)) + "</body></html>")
    return [html_comment_openers(folder / f"open-comments-{mb}.html", size, before), tag, ordinary]


def part_open_markup(work: Path, sizes: list[float], timeout: float) -> None:
    log("part 4: HTML with markup left open")
    print("\n4. HTML with markup left open at the end of the file (CPU seconds inside a fresh process)\n")
    print(f"{'file':<26}{'size':>9}  {'stdlib parser':<30}{'kenning':<26}{'ratio':>8}  (stdlib / kenning)")
    for size in sizes:
        for path in open_markup_pages(work / "open-markup", int(size * MiB)):
            outcomes = []
            for way in HTML_WAYS:
                log(f"  {path.name}: {way}")
                outcome = measure(way, path, timeout)[2]
                outcomes.append(f">{timeout:.0f} s (killed)" if outcome.startswith("still running") else outcome)
            seconds = [float(outcome.split(" s,")[0]) if " s," in outcome else None for outcome in outcomes]
            if seconds[1] is None:
                ratio = "-"
            elif seconds[0] is None:
                ratio = f">{timeout / max(seconds[1], 0.01):.0f}"
            else:
                ratio = f"{seconds[0] / max(seconds[1], 0.01):.1f}"
            kb = f"{path.stat().st_size / 1024:.0f} KB"
            print(f"{path.name:<26}{kb:>9}  {outcomes[0][:28]:<30}{outcomes[1][:24]:<26}{ratio:>8}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--parts", default="1234", help="which parts to run, e.g. 13")
    parser.add_argument("--html-sizes", type=float, nargs="+", default=[1.0, 4.0], help="part 4's page sizes in MB")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds before an unbounded parse is killed")
    parser.add_argument("--work", type=Path, help="keep the generated files here")
    parser.add_argument("--baseline", type=Path, help="part 3 also runs the daemon from this checkout (e.g. `git worktree add`)")
    parser.add_argument("--deadline", type=float, default=600.0, help="seconds part 3 waits for a daemon to settle")
    parser.add_argument("--one", nargs=2, metavar=("WAY", "FILE"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        one(args.one[0], Path(args.one[1]))
        return
    with tempfile.TemporaryDirectory(prefix="kenning-hostile-") as scratch:
        work = args.work or Path(scratch)
        if "1" in args.parts:
            part_bombs(work, args.timeout)
        if "2" in args.parts:
            part_overhead(work)
        if "3" in args.parts:
            part_daemon(work, args.baseline, args.deadline)
        if "4" in args.parts:
            part_open_markup(work, args.html_sizes, args.timeout)


if __name__ == "__main__":
    main()
