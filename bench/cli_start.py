"""How long `ken` takes before it does anything: start-up next to a bare interpreter.

Runs, each --runs times, in one interleaved sequence (so load on the machine hits them
alike), with this interpreter:

  python -c pass           the floor every Python program pays (baseline)
  ken --version            kenning's own start-up: imports and argument parsing
  ken search QUERY         a real search against a real daemon on a small folder
  socket call              the same search straight over the socket from this process
                           (what the daemon itself takes)

and prints medians. Client overhead = command - baseline (- the daemon's time, for
search). Target: <= 150 ms for both. It also lists the heaviest modules `import
kenning.cli` loads, so a regression names its cause.

    .venv/bin/python bench/cli_start.py [--runs 15]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from kenning.client import Client  # noqa: E402
from kenning.errors import DaemonNotRunning  # noqa: E402

TARGET_MS = 150.0
QUERY = "sweep interval budget"


def timed(command: list[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    subprocess.run(command, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return (time.perf_counter() - started) * 1000


def heaviest_imports(
    env: dict[str, str], top: int = 8, modules: str = "kenning.cli", cwd: Path | None = None
) -> list[tuple[int, str]]:
    """The `top` imports of `modules` by their own time (µs), as `python -X importtime` says."""
    command = [sys.executable, "-X", "importtime", "-c", f"import {modules}"]
    done = subprocess.run(command, env=env, cwd=cwd, capture_output=True, text=True)
    rows = []
    for line in done.stderr.splitlines():
        parts = line.split("|")
        if len(parts) == 3 and parts[1].strip().isdigit():
            rows.append((int(parts[1]), parts[2].rstrip()))
    return sorted(rows, reverse=True)[:top]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    root = Path(__file__).resolve().parent.parent
    env = {**os.environ, "PYTHONPATH": str(root)}
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        notes = home / "notes"
        notes.mkdir()
        for path in (root / "docs").glob("*.md"):
            (notes / path.name).write_text(path.read_text())
        data = home / "data"
        config = home / "config.toml"
        config.write_text(f'[daemon]\ndata_dir = "{data}"\n[[sources]]\nname = "notes"\npath = "{notes}"\n')
        ken = [sys.executable, "-m", "kenning", "--config", str(config)]
        daemon = subprocess.Popen([*ken, "daemon"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        client = Client(data / "kenning.sock", timeout=10)
        try:
            deadline = time.monotonic() + 60
            while True:
                try:
                    status = client.call("status")
                    if status["sources"] and status["sources"][0]["last_sweep_at"]:
                        break
                except DaemonNotRunning:
                    pass
                if time.monotonic() > deadline:
                    raise SystemExit("the daemon did not come up")
                time.sleep(0.2)
            samples: dict[str, list[float]] = {"pass": [], "version": [], "search": [], "socket": []}
            for _ in range(args.runs):
                samples["pass"].append(timed([sys.executable, "-c", "pass"], env))
                samples["version"].append(timed([*ken, "--version"], env))
                samples["search"].append(timed([*ken, "search", QUERY], env))
                started = time.perf_counter()
                client.call("search", {"query": QUERY})
                samples["socket"].append((time.perf_counter() - started) * 1000)
        finally:
            daemon.terminate()
            daemon.wait(30)
    median = {name: statistics.median(values) for name, values in samples.items()}
    version_overhead = median["version"] - median["pass"]
    search_overhead = median["search"] - median["pass"] - median["socket"]
    print(f"runs: {args.runs} each, interleaved; medians in ms ({os.cpu_count()} cores, load {os.getloadavg()[0]:.1f})")
    print(f"  python -c pass (baseline)   {median['pass']:7.1f}")
    print(
        f"  ken --version               {median['version']:7.1f}   overhead {version_overhead:6.1f}"
        f"  [{'PASS' if version_overhead <= TARGET_MS else 'FAIL'}: <= {TARGET_MS:.0f}]"
    )
    print(
        f"  ken search                  {median['search']:7.1f}   overhead {search_overhead:6.1f}"
        f"  [{'PASS' if search_overhead <= TARGET_MS else 'FAIL'}: <= {TARGET_MS:.0f}]"
    )
    print(f"  socket search (daemon time) {median['socket']:7.1f}")
    print("heaviest imports of `import kenning.cli` (cumulative µs):")
    for micros, name in heaviest_imports(env):
        print(f"  {micros:8d}  {name}")


if __name__ == "__main__":
    main()
