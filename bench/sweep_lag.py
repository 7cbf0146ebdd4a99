"""How long a sweep that changes nothing holds the daemon's answers up, on a large folder.

A folder of `--files` small notes is indexed once (embedding and extraction finished
too), then a daemon is started on that index and, while it does nothing, a client asks
it in a tight loop, one connection per call as `ken` does: `status` (what `ken status`
asks) and `ping`, a method the daemon does not have, which the socket server answers on
the event loop with no database trip, so its time is the loop's alone; each is asked
from a thread of its own. That is the baseline. Then `sources.scan` with `wait` is sent
`--sweeps` times in a row; nothing changed, so each sweep walks, compares and reads
nothing, and the same calls are timed while they run.
With `--baseline DIR` the daemon from that checkout (e.g. `git archive main | tar -x -C
DIR`) runs the same first, on the same index. With `--steps MS` the daemons log each loop
step over MS ms with its CPU time (asyncio's debug mode, as the tests run it: every call
is slower, so take latencies from a run without it), and those logged during the sweeps
are summed up: the work a sweep does on the event loop, whatever else the machine runs.

    .venv/bin/python bench/sweep_lag.py                      # 100,000 files: ~7 min to index, ~3 min a daemon
    .venv/bin/python bench/sweep_lag.py --files 20000 --baseline /tmp/kenning-main
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE / "bench"))

from tree_daemon import daemon_from  # noqa: E402

from kenning.client import Client  # noqa: E402
from kenning.errors import KenningError  # noqa: E402

PROBES = ("status", "ping")
STEP = re.compile(r"loop step took (\d+\.\d+) s, (\d+\.\d+) s of it on the CPU")


@dataclass
class Lags:
    """Seconds each probe took, by method."""

    calls: dict[str, list[float]] = field(default_factory=lambda: {probe: [] for probe in PROBES})

    def probe(self, socket: Path, method: str, done: threading.Event) -> None:
        client = Client(socket, timeout=600)
        while not done.is_set():
            sent = time.monotonic()
            try:
                client.call(method)
            except KenningError:
                pass  # `ping` is answered with "unknown method": the answer is what is timed
            self.calls[method].append(time.monotonic() - sent)


@contextmanager
def probing(socket: Path) -> Iterator[Lags]:
    """Each probe asked in a tight loop of its own, one thread each, until the block ends:
    a slow `status` does not keep `ping` from being asked meanwhile."""
    lags, done = Lags(), threading.Event()
    threads = [threading.Thread(target=lags.probe, args=(socket, method, done)) for method in PROBES]
    for thread in threads:
        thread.start()
    try:
        yield lags
    finally:
        done.set()
        for thread in threads:
            thread.join()


@dataclass
class Run:
    idle: Lags
    sweeping: Lags
    durations: list[float]
    results: list[dict[str, int]]
    # (wall, CPU) seconds of each loop step the daemon logged during the sweeps (--steps).
    steps: list[tuple[float, float]]


def make_folder(folder: Path, files: int) -> None:
    """`files` notes of about 100 bytes, 1,000 to a subfolder, no two alike."""
    for index in range(files):
        sub = folder / f"d{index // 1000:03d}"
        if index % 1000 == 0:
            sub.mkdir(parents=True, exist_ok=True)
        (sub / f"note-{index}.md").write_text(f"# Note {index}\n\nharbour tide {index} word{index * 7 % 997}\n")


def write_config(work: Path, folder: Path, files: int) -> Path:
    config = work / "config.toml"
    # No periodic sweep or full near-duplicate pass during the measurement: only the sweeps
    # this script asks for run.
    config.write_text(
        f'[daemon]\ndata_dir = "{work / "data"}"\nsweep_interval = 36000\n'
        "[dedup]\nevery_n_sweeps = 0\n"
        f'[[sources]]\nname = "notes"\npath = "{folder}"\nmax_files = {files}\n'
    )
    return config


def settled(client: Client, files: int) -> bool:
    status = client.call("status")
    source = status["sources"][0]
    jobs = (status["embedder"]["job"], status["graph"]["job"])
    return (
        not source["scanning"]
        and source["last_sweep_at"] is not None
        and source["holds"] + source["failed"] + source["skipped"] >= files
        and (status["graph"]["pending"] or 0) == 0
        and all(job.get("state") in ("idle", "stopped", None) for job in jobs)
    )


def wait_settled(client: Client, files: int, what: str) -> float:
    # Polled often at first, then each second: a small index settles in a second or two,
    # and on 100,000 notes a `status` every 0.1 s for minutes would load the daemon timed.
    started, pause = time.monotonic(), 0.1
    while not settled(client, files):
        if time.monotonic() - started > 3600:
            raise SystemExit(f"{what}: not settled after an hour")
        time.sleep(pause)
        pause = min(pause * 2, 1.0)
    return time.monotonic() - started


def index(work: Path, folder: Path, files: int) -> None:
    config = write_config(work, folder, files)
    socket = work / "data" / "kenning.sock"
    with daemon_from(HERE, config, work, socket):
        took = wait_settled(Client(socket, timeout=600), files, "indexing")
    print(f"indexed {files} files in {took:.0f} s (embedded and mined)", file=sys.stderr)


def run(tree: Path, work: Path, folder: Path, args: argparse.Namespace, label: str) -> Run:
    config = write_config(work, folder, args.files)
    socket = work / "data" / "kenning.sock"
    with daemon_from(tree, config, work, socket):
        client = Client(socket, timeout=600)
        # The daemon's own start-up sweep, and whatever it wakes, end before the timing.
        wait_settled(client, args.files, label)
        time.sleep(2.0)
        with probing(socket) as idle:
            time.sleep(args.idle_seconds)
        durations, results = [], []
        log = work / "daemon.log"
        logged = log.stat().st_size
        with probing(socket) as sweeping:
            for _ in range(args.sweeps):
                started = time.monotonic()
                answer = client.call("sources.scan", {"name": "notes", "wait": True})
                durations.append(time.monotonic() - started)
                results.append({key: n for key, n in answer["result"].items() if n})
        with open(log, "rb") as lines:
            lines.seek(logged)
            during = lines.read().decode(errors="replace")
        steps = [(float(wall), float(cpu)) for wall, cpu in STEP.findall(during)]
        return Run(idle, sweeping, durations, results, steps)


def figures(seconds: list[float]) -> str:
    ms = sorted(s * 1000 for s in seconds)
    p99 = ms[min(len(ms) - 1, int(len(ms) * 0.99))]
    return f"n {len(ms):6d}  p50 {statistics.median(ms):7.1f}  p99 {p99:7.1f}  max {ms[-1]:7.1f} ms"


def report(label: str, result: Run) -> None:
    for probe in PROBES:
        print(f"{label:8}  {probe:6}  idle:         {figures(result.idle.calls[probe])}")
        print(f"{'':8}  {probe:6}  during sweep: {figures(result.sweeping.calls[probe])}")
    durations = ", ".join(f"{d:.2f}" for d in result.durations)
    print(f"{'':8}  sweep durations (s): {durations}  results: {result.results[0]}")
    if result.steps:
        cpu = sorted((cpu for _, cpu in result.steps), reverse=True)
        print(
            f"{'':8}  loop steps logged during the sweeps: {len(cpu)}, longest {max(w for w, _ in result.steps):.3f} s,"
            f" CPU of the longest three {', '.join(f'{c:.3f}' for c in cpu[:3])} s, all {sum(cpu):.3f} s"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--files", type=int, default=100_000, help="notes in the folder")
    parser.add_argument("--sweeps", type=int, default=3, help="sweeps timed, one after another")
    parser.add_argument("--idle-seconds", type=int, default=10, help="seconds of probes with no sweep")
    parser.add_argument("--baseline", type=Path, help="run the daemon from this checkout first, on the same index")
    parser.add_argument("--steps", type=int, help="log loop steps over this many ms (debug mode) and sum them")
    parser.add_argument("--work", type=Path, help="where the folder and index are kept (default: a temporary folder)")
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="kenning-sweeplag-"))
    folder = work / "notes"
    if args.steps:
        os.environ["KENNING_SLOW_CALLBACK_MS"] = str(args.steps)
    try:
        if not (work / "data" / "kenning.db").exists():
            make_folder(folder, args.files)
            index(work, folder, args.files)
        print(f"{args.files} notes indexed; {args.sweeps} sweeps that change nothing; probes: {', '.join(PROBES)}")
        for name, tree in (("baseline", args.baseline), ("kenning", HERE)):
            if tree is not None:
                report(name, run(tree.resolve(), work, folder, args, name))
    finally:
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
