"""What a log file growing inside a watched folder costs the daemon.

A real daemon (`ken daemon`, default settings, in-process embeddings) on a tmp HOME
watches one folder: --notes markdown notes and a log of --initial-lines lines. Once its
first sweep and the embedding of it are done, one scenario runs for --seconds:

  quiet      nothing is written: what the daemon costs doing nothing
  once       the lines `growing` appends are written in one go at the start (the
             baseline: what indexing them costs when the log is read once)
  growing    a line is appended to the log every 0.2-1 s (seeded, so each run and
             each tree appends at the same moments)

and then waits until the last line written is found by a keyword search and the
sweep, embedding and extraction jobs are idle again. For each it prints the CPU
seconds the daemon and its parse workers spent from the first append to then (from
/proc/PID/stat: the daemon's own time, its reaped children's, and the live workers'),
how many times the log was read again (the `N indexed` of each sweep the daemon logged),
and how long after the last write its line was searchable, and the ratio of each growing
run's CPU to `once`'s. `--baseline DIR` also runs
`growing` with the daemon from another checkout (e.g. `git worktree add /tmp/before
main`), in the same run.

    .venv/bin/python bench/growing_log.py                       # 60 s per scenario (~3 min)
    .venv/bin/python bench/growing_log.py --seconds 20 --baseline /tmp/before
"""

from __future__ import annotations

import argparse
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from kenning.client import Client  # noqa: E402
from kenning.errors import DaemonNotRunning  # noqa: E402

TICKS = os.sysconf("SC_CLK_TCK")
SETTLE_DEADLINE_S = 120.0
_SWEPT = re.compile(r"source log-folder: swept \d+ files \((\d+) indexed")


@dataclass
class Figures:
    scenario: str
    cpu_s: float
    reads: int
    appends: int
    searchable_after_s: float | None


def note(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def schedule(seconds: float, seed: int) -> list[float]:
    """The pauses before each append: 0.2-1 s each, as many as fit in `seconds`."""
    rng = random.Random(seed)
    pauses: list[float] = []
    while sum(pauses) + (pause := rng.uniform(0.2, 1.0)) <= seconds:
        pauses.append(pause)
    return pauses


def log_line(number: int) -> str:
    # `seqN` is one token the keyword index holds for this line alone.
    return (
        f"2026-12-05T12:{number // 60 % 60:02d}:{number % 60:02d} INFO worker-{number % 7}: request served"
        f" in {number % 97} ms, queue depth {number % 13}, seq{number}\n"
    )


def make_folder(root: Path, notes: int, initial_lines: int) -> Path:
    root.mkdir(parents=True)
    for index in range(notes):
        (root / f"note-{index:04d}.md").write_text(
            f"# Note {index}\n\nMeeting about project {index % 17}: the budget, the timeline and who owns"
            f" the follow-up. Decision {index}: ship on the {index % 28 + 1}th.\n"
        )
    log = root / "service.log"
    log.write_text("".join(log_line(number) for number in range(initial_lines)))
    return log


def cpu_seconds(pid: int) -> float:
    """The daemon's CPU time, its reaped children's, and its live descendants' (the parse
    workers), from /proc."""
    total = 0.0
    pending = [(pid, True)]
    while pending:
        current, with_reaped = pending.pop()
        try:
            fields = Path(f"/proc/{current}/stat").read_text().rsplit(")", 1)[1].split()
            # Fields 14-17 of stat(5), counted from after the command name (field 3 first).
            utime, stime, cutime, cstime = (int(value) for value in fields[11:15])
            total += (utime + stime + (cutime + cstime if with_reaped else 0)) / TICKS
            for task in Path(f"/proc/{current}/task").iterdir():
                children = (task / "children").read_text().split()
                pending.extend((int(child), True) for child in children)
        except (OSError, ValueError):
            continue  # exited meanwhile: its time is in its parent's reaped children now
    return total


def reads(log_path: Path, offset: int) -> int:
    text = log_path.read_text(errors="replace")[offset:]
    return sum(int(match.group(1)) for match in _SWEPT.finditer(text))


def wait(check, what: str, limit: float = SETTLE_DEADLINE_S, interval: float = 0.2):
    started = time.monotonic()
    while time.monotonic() - started < limit:
        value = check()
        if value:
            return value
        time.sleep(interval)
    raise RuntimeError(f"timed out after {limit:.0f} s waiting for {what}")


def idle(client: Client) -> bool:
    status = client.call("status")
    source = status["sources"][0]
    jobs = (status["embedder"]["job"], status["graph"]["job"])
    settled = source["holds"] + source["failed"] + source["skipped"] >= (source["discovered"] or 1)
    return (
        not source["scanning"]
        and source["last_sweep_at"] is not None
        and settled
        and all(job.get("state") in ("idle", "stopped", None) for job in jobs)
    )


def found(client: Client, token: str) -> bool:
    hits = client.call("search", {"query": token, "legs": ["keyword"]})["hits"]
    return any(hit["path"].endswith("service.log") for hit in hits)


def run(scenario: str, tree: Path, work: Path, args: argparse.Namespace) -> Figures:
    home = work / scenario
    folder = home / "folder"
    log = make_folder(folder, args.notes, args.initial_lines)
    data = home / "data"
    config = home / "kenning.toml"
    config.write_text(
        f'[daemon]\ndata_dir = "{data}"\nsweep_interval = 3600\nlog_level = "info"\n'
        f'[[sources]]\nname = "log-folder"\npath = "{folder}"\n'
    )
    daemon_log = home / "daemon.log"
    env = {**os.environ, "HOME": str(home), "PYTHONPATH": str(tree), "PYTHONUNBUFFERED": "1"}
    for name in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_RUNTIME_DIR"):
        env.pop(name, None)
    with open(daemon_log, "ab") as output:
        daemon = subprocess.Popen(
            [sys.executable, "-m", "kenning", "--config", str(config), "daemon"],
            stdout=output, stderr=subprocess.STDOUT, env=env, cwd=tree,
        )  # fmt: skip
    client = Client(data / "kenning.sock", timeout=60)
    try:

        def answers() -> bool:
            if daemon.poll() is not None:
                raise RuntimeError(f"daemon exited with {daemon.returncode}; see {daemon_log}")
            try:
                return idle(client)
            except (DaemonNotRunning, ConnectionError, OSError):
                return False

        note(f"{scenario}: first sweep and embedding")
        wait(answers, "the first sweep and embedding", limit=300)
        offset = len(daemon_log.read_text(errors="replace"))
        pauses = schedule(args.seconds, args.seed)
        number = args.initial_lines
        before = cpu_seconds(daemon.pid)
        started = time.monotonic()
        note(f"{scenario}: {args.seconds:.0f} s")
        searchable_after = None
        if scenario == "once":
            with open(log, "a") as handle:
                handle.write("".join(log_line(number + index) for index in range(len(pauses))))
            number += len(pauses)
            wait(lambda: found(client, f"seq{number - 1}"), "the last line to be searchable")
            searchable_after = time.monotonic() - started
        for pause in pauses if scenario.startswith("growing") else ():
            time.sleep(pause)
            with open(log, "a") as handle:
                handle.write(log_line(number))
            number += 1
        last_write = time.monotonic()
        if not scenario.startswith("growing"):
            time.sleep(max(0.0, args.seconds - (time.monotonic() - started)))
        else:
            wait(lambda: found(client, f"seq{number - 1}"), "the last line to be searchable")
            searchable_after = time.monotonic() - last_write
        # Let a trailing sweep start before asking whether everything is idle.
        time.sleep(2.0)
        wait(lambda: idle(client), "the daemon to be idle again")
        cpu = cpu_seconds(daemon.pid) - before
        return Figures(scenario, cpu, reads(daemon_log, offset), number - args.initial_lines, searchable_after)
    finally:
        daemon.send_signal(signal.SIGTERM)
        try:
            daemon.wait(30)
        except subprocess.TimeoutExpired:
            daemon.kill()
            daemon.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=60.0, help="how long each scenario appends (or waits)")
    parser.add_argument("--notes", type=int, default=200, help="notes beside the log in the watched folder")
    parser.add_argument("--initial-lines", type=int, default=5000, help="lines the log holds before it grows")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--baseline", type=Path, help="also run `growing` with the daemon from this checkout")
    parser.add_argument("--keep", type=Path, help="keep folders, databases and daemon logs here (empty or absent)")
    args = parser.parse_args()
    runs = [("quiet", ROOT), ("once", ROOT), ("growing", ROOT)]
    if args.baseline is not None:
        runs.append(("growing-baseline", args.baseline.resolve()))
    with tempfile.TemporaryDirectory() as scratch:
        work = args.keep or Path(scratch)
        work.mkdir(parents=True, exist_ok=True)
        results = [run(scenario, tree, work, args) for scenario, tree in runs]
    print(f"a log of {args.initial_lines} lines beside {args.notes} notes; {args.seconds:.0f} s per scenario")
    print(f"{'scenario':<18} {'appends':>8} {'re-reads':>9} {'CPU s':>7} {'searchable after':>17}")
    for figures in results:
        after = "-" if figures.searchable_after_s is None else f"{figures.searchable_after_s:.1f} s"
        print(f"{figures.scenario:<18} {figures.appends:>8} {figures.reads:>9} {figures.cpu_s:>7.1f} {after:>17}")
    once = results[1].cpu_s
    for figures in results[2:]:
        print(f"ratio {figures.scenario}/once CPU: {figures.cpu_s / max(once, 0.01):.1f}")


if __name__ == "__main__":
    main()
