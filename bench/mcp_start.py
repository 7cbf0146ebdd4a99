"""How long `ken mcp` takes from its start to its answer to `initialize`, next to what the
MCP SDK costs any program that imports it.

Runs, each --runs times, in one interleaved sequence (so load on the machine hits them
alike), with this interpreter:

  python -c pass                  the floor every Python program pays (baseline)
  import mcp_types.methods        the protocol's wire types for both its eras (pydantic
                                  models), which the SDK validates every message with
  import mcp.types                the SDK as it loads: any `mcp.*` import runs the
                                  package's __init__, which loads its client and its
                                  servers, and they their HTTP transports (starlette,
                                  uvicorn, httpx2, OAuth), though stdio uses none of them
  import mcp.types, gc off        the same with the cyclic collector off, as `ken mcp`
                                  imports it
  ken mcp -> initialize           `python -m kenning mcp`, started, sent `initialize` on
                                  stdin, timed to its answer (no daemon is needed for it);
                                  with --baseline, also that of another checkout (say, main)

and prints the median wall time and the median CPU time (user + system, read from
/proc/PID/stat the moment the child says it is ready, so neither a loaded machine's
waiting nor the child's exit is counted) of each: the baselines say so once their
import is done, `ken mcp` by answering. kenning's own share
is `ken mcp` less `import mcp.types, gc off`. It also sums `python -X importtime` of `import
kenning.mcp.server` by top-level package, so a regression names its cause.

    .venv/bin/python bench/mcp_start.py [--runs 9] [--baseline /path/to/other/checkout]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}},
}


# A baseline says it is ready, then waits for the end of its stdin, as `ken mcp` does.
READY = "import sys; sys.stdout.write('ready\\n'); sys.stdout.flush(); sys.stdin.read()"


def _cpu_ms(pid: int) -> float:
    """The process's user + system CPU time so far (Linux)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) * 1000 / os.sysconf("SC_CLK_TCK")


def until_ready(command: list[str], env: dict[str, str], first: bytes = b"") -> tuple[float, float, bytes]:
    """Wall and CPU milliseconds from starting `command` (sent `first` on stdin) to its
    first line on stdout, and that line."""
    started = time.perf_counter()
    child = subprocess.Popen(command, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert child.stdin is not None and child.stdout is not None
    child.stdin.write(first)
    child.stdin.flush()
    line = child.stdout.readline()
    wall, cpu = (time.perf_counter() - started) * 1000, _cpu_ms(child.pid)
    child.stdin.close()
    child.wait(60)
    return wall, cpu, line


def baseline(code: str, env: dict[str, str]) -> tuple[float, float]:
    wall, cpu, line = until_ready([sys.executable, "-c", f"{code}; {READY}"], env)
    if line != b"ready\n":
        raise SystemExit(f"{code!r} did not run")
    return wall, cpu


def initialized(command: list[str], env: dict[str, str]) -> tuple[float, float]:
    """From starting `ken mcp` to its answer to `initialize`."""
    wall, cpu, line = until_ready(command, env, json.dumps(INITIALIZE).encode() + b"\n")
    answer = json.loads(line)
    if answer.get("id") != 1 or "result" not in answer:
        raise SystemExit(f"ken mcp did not answer initialize: {answer}")
    return wall, cpu


def imports_by_package(env: dict[str, str], top: int = 12) -> list[tuple[int, str]]:
    """The `top` top-level packages by the import time (µs) of their own modules, as
    `python -X importtime -c 'import kenning.mcp.server'` says."""
    command = [sys.executable, "-X", "importtime", "-c", "import kenning.mcp.server"]
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=True)
    totals: dict[str, int] = defaultdict(int)
    for line in done.stderr.splitlines():
        parts = line.split("|")
        if len(parts) == 3 and parts[1].strip().isdigit():
            name = parts[2].strip()
            totals[".".join(name.split(".")[:3]) if name.startswith("mcp.") else name.split(".")[0]] += int(
                parts[0].split(":")[1]
            )
    return sorted(((micros, name) for name, micros in totals.items()), reverse=True)[:top]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument(
        "--baseline", type=Path, help="another checkout (say, main) whose ken mcp is measured alongside"
    )
    args = parser.parse_args()
    root = Path(__file__).resolve().parent.parent
    env = {**os.environ, "PYTHONPATH": str(root)}
    with tempfile.TemporaryDirectory() as tmp:
        config = Path(tmp) / "config.toml"
        config.write_text(f'[daemon]\ndata_dir = "{Path(tmp) / "data"}"\n')
        rows = {
            "python -c pass (baseline)": lambda: baseline("pass", env),
            "import mcp_types.methods": lambda: baseline("import mcp_types.methods", env),
            "import mcp.types": lambda: baseline("import mcp.types", env),
            "import mcp.types, gc off": lambda: baseline("import gc; gc.disable(); import mcp.types", env),
            "ken mcp -> initialize": lambda: initialized(
                [sys.executable, "-m", "kenning", "--config", str(config), "mcp"], env
            ),
        }
        if args.baseline is not None:
            other = {**os.environ, "PYTHONPATH": str(args.baseline.resolve())}
            rows["ken mcp -> initialize, baseline"] = lambda: initialized(
                [sys.executable, "-m", "kenning", "--config", str(config), "mcp"], other
            )
        samples: dict[str, list[tuple[float, float]]] = {name: [] for name in rows}
        for _ in range(args.runs):
            for name, run in rows.items():
                samples[name].append(run())
    wall = {name: statistics.median(w for w, _ in values) for name, values in samples.items()}
    cpu = {name: statistics.median(c for _, c in values) for name, values in samples.items()}
    base = "python -c pass (baseline)"
    print(f"runs: {args.runs} each, interleaved; medians in ms ({os.cpu_count()} cores, load {os.getloadavg()[0]:.1f})")
    print(f"  {'':32s} {'wall':>8s} {'cpu':>8s} {'cpu/baseline':>13s}")
    for name in rows:
        # CPU is counted in clock ticks (10 ms): one run of the bare interpreter may take none.
        ratio = f"{cpu[name] / cpu[base]:12.1f}x" if cpu[base] else f"{'(base < tick)':>13s}"
        print(f"  {name:32s} {wall[name]:8.1f} {cpu[name]:8.1f} {ratio}")
    sdk, ours = cpu["import mcp.types, gc off"], cpu["ken mcp -> initialize"]
    print(
        f"ken mcp CPU to initialize: {ours:.0f} ms; the SDK's import {sdk / ours:.0%} of it"
        f" (its wire types alone {cpu['import mcp_types.methods'] / ours:.0%}), kenning's own {1 - sdk / ours:.0%}"
    )
    print("import time of `import kenning.mcp.server` by package (own modules, µs):")
    for micros, name in imports_by_package(env):
        print(f"  {micros:8d}  {name}")


if __name__ == "__main__":
    main()
