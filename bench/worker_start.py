"""What starting the daemon and its parse workers costs, next to another checkout's.

Every daemon start, and every parse worker the daemon spawns (one per `parse_workers`,
started again with the first file after a minute idle), pays its imports before it does
any work; on a loaded two-core machine a few hundred milliseconds of CPU each become
seconds. For each checkout, --runs times, interleaved (so load on the machine hits them
alike), with this interpreter:

  daemon to socket     wall time from starting `python -m kenning daemon` until its socket
                       answers a connect, and the daemon's CPU by then (/proc, so Linux)
  worker CPU           the CPU time of the one parse worker (`parse_workers = 1`) once the
                       first sweep, which started it to read the folder's one small file,
                       is over: its imports are most of it
  page worker CPU      the same for a worker started for a fetched page, as `ken add-url`
                       starts one: a small page read through a ParsePool as the daemon
                       reads it (no daemon: its extraction would run in that worker next)

and prints medians. It also lists the heaviest modules a worker imports, named by
`python -X importtime`.

    .venv/bin/python bench/worker_start.py [--runs 5] [--baseline /path/to/other/checkout]
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from cli_start import heaviest_imports  # noqa: E402

from kenning.client import Client  # noqa: E402

TICKS = os.sysconf("SC_CLK_TCK")
# What a worker imports before its first file or page: pebble's initializer is in the
# pool's module, a file's task in the conversion's, a page's in pages.py (as of this
# change; see heaviest_imports).
WORKER_MODULES = "kenning.ingest.parse_pool, kenning.ingest.convert, kenning.ingest.pages"
# Run by the checkout's interpreter: one page through a one-worker pool, then it waits on
# stdin while its worker's CPU is read, and stops the pool.
PAGE_TASK = """
import asyncio, sys
from kenning.config import ChunkingSettings, LimitsSettings
from kenning.ingest import pages
from kenning.ingest.parse_pool import ParsePool
from kenning.store.records import FetchedPage

async def main():
    body = b"<html><head><title>A page</title></head><body><h1>A page</h1><p>Read in a worker.</p></body></html>"
    page = FetchedPage("http://127.0.0.1/a", "http://127.0.0.1/a", body, None, "html", None, None)
    if hasattr(pages, "PageLimits"):
        args = (page, pages.PageLimits.of(ChunkingSettings(), LimitsSettings()))
    else:  # a checkout from before prepare_page took PageLimits
        args = (page, ChunkingSettings(), LimitsSettings())
    pool = ParsePool(1, 4096)
    try:
        await pool.read(pages.prepare_page, args, 120, urgent=True)
        print("read", flush=True)
        await asyncio.to_thread(sys.stdin.readline)
    finally:
        await pool.stop()

asyncio.run(main())
"""


def cpu_seconds(pid: int) -> float:
    """User plus system CPU of a live process, from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def workers_of(pid: int) -> list[int]:
    """The daemon's parse workers: its children started by multiprocessing's spawn."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            command = (entry / "cmdline").read_bytes()
        except (OSError, IndexError, ValueError):
            continue
        if parent == pid and b"spawn_main" in command:
            found.append(int(entry.name))
    return found


def answers(path: Path) -> bool:
    with socket.socket(socket.AF_UNIX) as sock:
        try:
            sock.connect(str(path))
        except OSError:
            return False
    return True


def one_run(root: Path, home: Path) -> dict[str, float]:
    """Start a daemon of the checkout at `root` on a folder of one note; its figures."""
    data = home / "data"
    notes = home / "notes"
    notes.mkdir(parents=True)
    (notes / "note.md").write_text("# A note\n\nThe sweep reads this one file in its one worker.\n")
    config = home / "config.toml"
    config.write_text(
        f'[daemon]\ndata_dir = "{data}"\n[limits]\nparse_workers = 1\n'
        f'[[sources]]\nname = "notes"\npath = "{notes}"\n'
    )
    env = {**os.environ, "PYTHONPATH": str(root)}
    command = [sys.executable, "-m", "kenning", "--config", str(config), "daemon"]
    started = time.perf_counter()
    # Run from the temporary folder: `-m` puts the working directory first on sys.path,
    # where a checkout would shadow the one PYTHONPATH names.
    daemon = subprocess.Popen(command, env=env, cwd=home, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        while not answers(data / "kenning.sock"):
            if daemon.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"the daemon of {root} did not come up")
            time.sleep(0.01)
        to_socket = time.perf_counter() - started
        daemon_cpu = cpu_seconds(daemon.pid)
        # The worker starts with the sweep's first file and stays a minute once idle:
        # once the sweep is over, it has started and read the one file.
        client = Client(data / "kenning.sock", timeout=30)
        while not client.call("status")["sources"][0]["last_sweep_at"]:
            if time.monotonic() > deadline:
                raise SystemExit(f"the daemon of {root} did not finish its sweep")
            time.sleep(0.1)
        workers = workers_of(daemon.pid)
        if len(workers) != 1:
            raise SystemExit(f"the daemon of {root} has {len(workers)} parse workers, not the one configured")
        worker_cpu = cpu_seconds(workers[0])
        return {"socket": to_socket * 1000, "daemon_cpu": daemon_cpu * 1000, "worker_cpu": worker_cpu * 1000}
    finally:
        daemon.terminate()
        daemon.wait(30)


def page_run(root: Path, home: Path) -> float:
    """The CPU, in ms, of a parse worker of the checkout at `root` once it read one page."""
    env = {**os.environ, "PYTHONPATH": str(root)}
    pipe = subprocess.PIPE
    with subprocess.Popen([sys.executable, "-c", PAGE_TASK], env=env, cwd=home, stdin=pipe, stdout=pipe, text=True) as task:
        assert task.stdin is not None and task.stdout is not None
        try:
            if task.stdout.readline().strip() != "read":
                raise SystemExit(f"the page task of {root} failed")
            workers = workers_of(task.pid)
            if len(workers) != 1:
                raise SystemExit(f"the page task of {root} has {len(workers)} parse workers, not one")
            return cpu_seconds(workers[0]) * 1000
        finally:
            # Its end of line lets it stop its pool and exit.
            task.stdin.close()
            task.wait(30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--baseline", type=Path, help="another checkout (say, main) measured alongside")
    args = parser.parse_args()
    checkouts = {"this": Path(__file__).resolve().parent.parent}
    if args.baseline is not None:
        checkouts["baseline"] = args.baseline.resolve()
    samples: dict[str, list[dict[str, float]]] = {name: [] for name in checkouts}
    with tempfile.TemporaryDirectory() as tmp:
        for run in range(args.runs):
            for name, root in checkouts.items():
                samples[name].append(one_run(root, Path(tmp) / f"{name}{run}"))
                samples[name][-1]["page_cpu"] = page_run(root, Path(tmp))
        heaviest = {
            name: heaviest_imports({**os.environ, "PYTHONPATH": str(root)}, modules=WORKER_MODULES, cwd=Path(tmp))
            for name, root in checkouts.items()
        }
    print(f"runs: {args.runs} each, interleaved; medians in ms ({os.cpu_count()} cores, load {os.getloadavg()[0]:.1f})")
    print(f"  {'checkout':<10} {'daemon to socket':>17} {'daemon CPU':>11} {'worker CPU':>11} {'page worker CPU':>16}")
    for name, runs in samples.items():
        median = {key: statistics.median(run[key] for run in runs) for key in runs[0]}
        print(
            f"  {name:<10} {median['socket']:17.0f} {median['daemon_cpu']:11.0f} {median['worker_cpu']:11.0f}"
            f" {median['page_cpu']:16.0f}"
        )
    for name, root in checkouts.items():
        print(f"heaviest imports of `import {WORKER_MODULES}` in {name} ({root}), cumulative µs:")
        for micros, module in heaviest[name]:
            print(f"  {micros:8d}  {module}")

if __name__ == "__main__":
    main()
