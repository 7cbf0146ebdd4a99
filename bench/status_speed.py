"""How long `status` (what `ken status`, `ken doctor` and polling scripts ask) takes on a
large index, idle and while a sweep that changes nothing runs.

The index is sweep_lag.py's (`--work`, built there on first use: `--files` notes, embedded
and mined). Each daemon (`--baseline DIR` first, e.g. `git archive main | tar -x -C DIR`,
then this checkout) is started on it in turn; once its start-up sweep has settled, one
client asks `status` in a tight loop, a connection per call as `ken` does, for
`--idle-seconds`, then for as long again while another client adds an agent document
over and over (each a commit: no count kept from before it may be shown, so every status
reads the counts afresh), then through `--sweeps` sweeps in a row. Its answer's counts
are checked against the index: a fast status that counts wrong is no use. Each daemon
runs on a copy of the index, which is left as it was.

    .venv/bin/python bench/status_speed.py --work /tmp/sweeplag --baseline /tmp/kenning-main
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE / "bench"))

from sweep_lag import figures, make_folder, wait_settled, write_config  # noqa: E402
from tree_daemon import daemon_from  # noqa: E402

from kenning.client import Client  # noqa: E402


def timed(socket: Path, done: threading.Event, lags: list[float]) -> None:
    """Asked once at least, so that a phase shorter than one status (a sweep of a small
    folder) still has its row."""
    client = Client(socket, timeout=600)
    while True:
        sent = time.monotonic()
        client.call("status")
        lags.append(time.monotonic() - sent)
        if done.is_set():
            return


def probe(socket: Path, body: Callable[[], object]) -> list[float]:
    """`status` asked in a tight loop from a thread of its own while `body()` runs."""
    lags: list[float] = []
    done = threading.Event()
    thread = threading.Thread(target=timed, args=(socket, done, lags))
    thread.start()
    try:
        body()
    finally:
        done.set()
        thread.join()
    return lags


def adding(socket: Path, seconds: float) -> None:
    """One agent document written again and again, changed each time, for `seconds`."""
    client = Client(socket, timeout=600)
    ends = time.monotonic() + seconds
    written = 0
    while time.monotonic() < ends:
        written += 1
        client.call("documents.add", {"title": "tide log", "source_uri": "bench://tide-log", "text": f"entry {written}"})


PHASES = ("idle", "while writing", "during sweep")


def index(tree: Path, work: Path, files: int) -> None:
    """The index built by `tree`'s daemon: the baseline's, when there is one, as a newer
    schema would be refused by an older daemon."""
    config = write_config(work, work / "notes", files)
    socket = work / "data" / "kenning.sock"
    with daemon_from(tree, config, work, socket):
        took = wait_settled(Client(socket, timeout=600), files, "indexing")
    print(f"indexed {files} files in {took:.0f} s (embedded and mined)", file=sys.stderr)


def run(tree: Path, work: Path, args: argparse.Namespace, label: str) -> None:
    # Each daemon runs on a copy of the index: a newer schema's migration would leave it
    # unreadable to the baseline's next run (and to sweep_lag.py's).
    scratch = Path(tempfile.mkdtemp(prefix=f"kenning-status-{label}-"))
    try:
        (scratch / "data").mkdir(mode=0o700)
        shutil.copy2(work / "data" / "kenning.db", scratch / "data" / "kenning.db")
        config = write_config(scratch, work / "notes", args.files)
        phases = measure(tree, config, scratch, args, label)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    for n, (phase, lags) in enumerate(zip(PHASES, phases)):
        if lags:
            print(f"{label if n == 0 else '':8}  {phase + ':':14} {figures(lags)}")


def measure(
    tree: Path, config: Path, scratch: Path, args: argparse.Namespace, label: str
) -> tuple[list[float], list[float], list[float]]:
    socket = scratch / "data" / "kenning.sock"
    with daemon_from(tree, config, scratch, socket):
        client = Client(socket, timeout=600)
        wait_settled(client, args.files, label)
        time.sleep(args.quiet_seconds)
        [source] = [entry for entry in client.call("status")["sources"] if entry["name"] == "notes"]
        if source["holds"] != args.files or source["chunks"] < args.files:
            raise SystemExit(f"{label}: status counts {source['holds']} files, {source['chunks']} chunks")
        idle = probe(socket, lambda: time.sleep(args.idle_seconds))
        writing = probe(socket, lambda: adding(socket, args.idle_seconds))

        def sweeps() -> None:
            for _ in range(args.sweeps):
                client.call("sources.scan", {"name": "notes", "wait": True})

        sweeping = probe(socket, sweeps) if args.sweeps else []
    return idle, writing, sweeping


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--files", type=int, default=100_000, help="notes in the folder")
    parser.add_argument("--sweeps", type=int, default=3, help="sweeps timed, one after another (0: idle only)")
    parser.add_argument("--idle-seconds", type=float, default=10, help="seconds of status calls idle, and while writing")
    parser.add_argument(
        "--quiet-seconds", type=float, default=2.0, help="seconds each daemon is left alone once settled, before timing"
    )
    parser.add_argument("--baseline", type=Path, help="run the daemon from this checkout first, on the same index")
    parser.add_argument("--work", type=Path, help="sweep_lag.py's folder and index (built there when missing)")
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="kenning-status-"))
    try:
        if not (work / "data" / "kenning.db").exists():
            make_folder(work / "notes", args.files)
            index((args.baseline or HERE).resolve(), work, args.files)
        print(
            f"{args.files} notes indexed; status asked idle and while writing, {args.idle_seconds:g} s each, then"
            f" through {args.sweeps} sweeps"
        )
        for name, tree in (("baseline", args.baseline), ("kenning", HERE)):
            if tree is not None:
                run(tree.resolve(), work, args, name)
    finally:
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
