"""Many agents adding long documents at once: the daemon's peak memory, and whether a small
request is still answered meanwhile.

`--clients` connections (30 by default) each send one `documents.add` of about 9 MB of
text at the same moment, while one more connection asks `status` every 0.2 s. Printed:
the peak RSS of the daemon and its workers, the time until every add is answered, how
many were added, and the slowest `status` answer. With `--baseline DIR` the daemon from
that checkout (e.g. a `git worktree add` of an older commit) runs the same first, so the
ratio is measured in one run.

    .venv/bin/python bench/large_requests.py                       # ~1 min on 2 cores
    .venv/bin/python bench/large_requests.py --baseline /tmp/kenning-old
    .venv/bin/python bench/large_requests.py --clients 40 --wide --words 1100000  # 40 x 36 MB

MB here is 2**20 bytes.
"""

from __future__ import annotations

import argparse
import shutil
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

from hostile import tree_rss  # noqa: E402
from tree_daemon import daemon_from  # noqa: E402

from kenning.client import Client  # noqa: E402

MiB = 1 << 20


@dataclass
class Run:
    peak_mb: float
    seconds: float
    added: int
    slowest_status_ms: float


def document(words: int, wide: bool = False) -> str:
    if wide:
        # Eight CJK Extension B characters a word, four bytes each in UTF-8: 10,000,000
        # characters (the most a document may have) come to a 36 MB request line.
        return "# A long transcript\n\n" + " ".join(chr(0x20000 + index % 40000) * 8 for index in range(words))
    return "# A long transcript\n\n" + " ".join(f"w{index % 5000}" for index in range(words))


def run(tree: Path, work: Path, clients: int, text: str) -> Run:
    data = work / "data"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    config = work / "config.toml"
    config.write_text(f'[daemon]\ndata_dir = "{data}"\nsweep_interval = 3600\n')
    socket = data / "kenning.sock"
    with daemon_from(tree, config, work, socket) as daemon:
        watched = psutil.Process(daemon.pid)
        Client(socket, timeout=30).call("status")
        added: list[int] = []
        adders_done = threading.Event()

        def add(number: int) -> None:
            params = {"title": f"transcript {number}", "text": text, "source_uri": f"bench://long/{number}"}
            try:
                Client(socket, timeout=600).call("documents.add", params)
                added.append(number)
            except Exception as exc:
                print(f"  add {number}: {exc}", file=sys.stderr)

        peak, slowest = 0, 0.0

        def poll() -> None:
            nonlocal peak, slowest
            client = Client(socket, timeout=60)
            while not adders_done.is_set():
                peak = max(peak, tree_rss(watched))
                asked = time.monotonic()
                client.call("status")
                slowest = max(slowest, time.monotonic() - asked)
                time.sleep(0.2)

        poller = threading.Thread(target=poll)
        adders = [threading.Thread(target=add, args=(number,)) for number in range(clients)]
        started = time.monotonic()
        poller.start()
        for adder in adders:
            adder.start()
        for adder in adders:
            adder.join()
        elapsed = time.monotonic() - started
        adders_done.set()
        poller.join()
        return Run(peak / MiB, elapsed, len(added), slowest * 1000)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--clients", type=int, default=30)
    parser.add_argument("--words", type=int, default=1_500_000, help="words per document (1.5M: about 9 MB)")
    parser.add_argument("--wide", action="store_true", help="words of 4-byte characters, for the largest lines")
    parser.add_argument("--baseline", type=Path, help="run the daemon from this checkout first, on the same load")
    parser.add_argument("--work", type=Path, help="where the daemons keep their data (default: a temporary folder)")
    args = parser.parse_args()
    text = document(args.words, args.wide)
    work = args.work or Path(tempfile.mkdtemp(prefix="kenning-large-"))
    print(f"{args.clients} clients, each adding {len(text.encode()) / MiB:.1f} MB of text at once")
    runs = {}
    for name, tree in (("baseline", args.baseline), ("kenning", HERE)):
        if tree is None:
            continue
        runs[name] = result = run(tree.resolve(), work / name, args.clients, text)
        print(
            f"{name:8}  peak RSS {result.peak_mb:6.0f} MB  all answered in {result.seconds:5.1f} s"
            f"  added {result.added}/{args.clients}  slowest status {result.slowest_status_ms:5.0f} ms"
        )
    if "baseline" in runs:
        print(f"peak RSS ratio kenning/baseline: {runs['kenning'].peak_mb / runs['baseline'].peak_mb:.2f}")
    if args.work is None:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
