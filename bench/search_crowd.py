"""A crowd of large searches at once: the daemon's memory during and after it, and how
long a small search sent meanwhile waits.

A folder of `--notes` small notes (3,000 by default) drawn from a 30-word vocabulary,
whose offline graph links every word to every other, is indexed, embedded and mined;
then `--clients` connections (300 by default) each send one `search` for `--limit` hits
(200) at the same moment, while one more connection asks a search for one hit every
0.3 s. Printed: the daemon's RSS before, at its peak, and 35 s after the last answer
(once the database's idle release has run), the time until every search is answered,
and the median and slowest small search. With `--baseline DIR` the daemon from that
checkout (e.g. a `git worktree add` of an older commit) runs the same first.

    .venv/bin/python bench/search_crowd.py                          # ~3 min on 2 cores
    .venv/bin/python bench/search_crowd.py --baseline /tmp/kenning-old

MB here is 2**20 bytes.
"""

from __future__ import annotations

import argparse
import random
import shutil
import statistics
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import psutil

HERE = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE / "bench"))

from tree_daemon import daemon_from  # noqa: E402

from kenning.client import Client  # noqa: E402

MiB = 1 << 20
WORDS = (
    "alpha beta gamma delta kernel socket daemon index vector graph search query rotate signing key launchd"
    " systemd python sqlite ollama embed chunk citation heron project dana whitfield city budget release"
).split()
QUERY = "alpha beta gamma delta kernel"
# The database hands its caches and free pages back after 30 s without a read or write.
SETTLE_SECONDS = 35


@dataclass
class Run:
    before_mb: float
    peak_mb: float
    after_mb: float
    seconds: float
    small_median_ms: float
    small_slowest_ms: float


def write_notes(folder: Path, count: int) -> None:
    pick = random.Random(1).choice
    for number in range(count):
        paragraphs = (" ".join(pick(WORDS) for _ in range(60)) + f" uniq{number}" for _ in range(3))
        (folder / f"note{number}.md").write_text(f"# Note {number}\n\n" + "\n\n".join(paragraphs) + "\n")


def settled(client: Client, notes: int) -> bool:
    status = client.call("status")
    chunks = sum(source["chunks"] for source in status["sources"])
    held = sum(source["holds"] for source in status["sources"])
    return held >= notes and (status["embedder"]["vectors"] or 0) >= chunks and status["graph"]["pending"] == 0


def run(tree: Path, work: Path, notes: Path, count: int, clients: int, limit: int) -> Run:
    data = work / "data"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    config = work / "config.toml"
    config.write_text(
        f'[daemon]\ndata_dir = "{data}"\nsweep_interval = 3600\n[[sources]]\nname = "notes"\npath = "{notes}"\n'
    )
    socket = data / "kenning.sock"
    with daemon_from(tree, config, work, socket) as daemon:
        watched = psutil.Process(daemon.pid)
        client = Client(socket, timeout=60)
        while not settled(client, count):
            time.sleep(1)
        time.sleep(SETTLE_SECONDS)
        before = watched.memory_info().rss
        done = threading.Event()
        small: list[float] = []
        peak = before

        def search() -> None:
            Client(socket, timeout=900).call("search", {"query": QUERY, "limit": limit})

        def probe() -> None:
            nonlocal peak
            prober = Client(socket, timeout=900)
            while not done.is_set():
                peak = max(peak, watched.memory_info().rss)
                asked = time.monotonic()
                prober.call("search", {"query": "uniq77", "limit": 1})
                small.append(time.monotonic() - asked)
                time.sleep(0.3)

        searchers = [threading.Thread(target=search) for _ in range(clients)]
        prober = threading.Thread(target=probe)
        started = time.monotonic()
        for searcher in searchers:
            searcher.start()
        prober.start()
        for searcher in searchers:
            searcher.join()
        elapsed = time.monotonic() - started
        done.set()
        prober.join()
        time.sleep(SETTLE_SECONDS)
        after = watched.memory_info().rss
    return Run(
        before / MiB, peak / MiB, after / MiB, elapsed, statistics.median(small) * 1000, max(small) * 1000
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--notes", type=int, default=3000)
    parser.add_argument("--clients", type=int, default=300)
    parser.add_argument("--limit", type=int, default=200)
    parser.add_argument("--baseline", type=Path, help="run the daemon from this checkout first, on the same load")
    parser.add_argument("--work", type=Path, help="where the notes and daemons' data go (default: a temporary folder)")
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="kenning-crowd-"))
    notes = work / "notes"
    notes.mkdir(parents=True, exist_ok=True)
    write_notes(notes, args.notes)
    print(f"{args.clients} searches for {args.limit} hits at once, on {args.notes} notes")
    for name, tree in (("baseline", args.baseline), ("kenning", HERE)):
        if tree is None:
            continue
        result = run(tree.resolve(), work / name, notes, args.notes, args.clients, args.limit)
        print(
            f"{name:8}  RSS {result.before_mb:4.0f} MB, peak {result.peak_mb:5.0f} MB,"
            f" {SETTLE_SECONDS} s after {result.after_mb:5.0f} MB  all answered in {result.seconds:5.1f} s"
            f"  small search median {result.small_median_ms:6.0f} ms, slowest {result.small_slowest_ms:6.0f} ms"
        )
    if args.work is None:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
