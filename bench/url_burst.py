"""A burst of `ken add-url` against slow pages: how long the last of them waits.

A real daemon and a page server on 127.0.0.1 that takes `--delay` seconds over each page;
`--calls` `ken add-url` processes are started at once, each for its own URL, and each is
timed from start to exit; the report gives the median and the last answer, and how many
calls failed, by why (`client gave up`: no answer within the client's wait). With `--baseline DIR` the daemon and CLI from that checkout
(e.g. `git archive main | tar -x -C DIR`) run the same first.

    .venv/bin/python bench/url_burst.py                          # ~1 min
    .venv/bin/python bench/url_burst.py --baseline /tmp/kenning-main
    .venv/bin/python bench/url_burst.py --delay 8 --fetch-timeout 10 --parse-timeout 10   # client waits 50 s
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(HERE / "bench"))

from tree_daemon import daemon_from  # noqa: E402

PAGE = "<html><head><title>Page {n}</title></head><body><h1>Page {n}</h1>" + "<p>Harbour tides, page {n}.</p>" * 40


class SlowPages(BaseHTTPRequestHandler):
    delay = 2.0

    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        time.sleep(self.delay)
        body = PAGE.format(n=self.path.strip("/")).encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        try:
            self.end_headers()
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            pass  # a daemon stopped mid-fetch; what the bench measures is its answers


def run(tree: Path, work: Path, base: str, calls: int, label: str, limits: str) -> list[tuple[float, int, str]]:
    """(seconds, exit code, stderr) of each add-url, in the order they were started."""
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    data, config = work / "data", work / "config.toml"
    config.write_text(f'[daemon]\ndata_dir = "{data}"\n[fetch]\nallowed_hosts = ["127.0.0.1"]\n{limits}')
    env = {**os.environ, "PYTHONPATH": str(tree)}
    ken = [sys.executable, "-m", "kenning", "--config", str(config)]
    with daemon_from(tree, config, work, data / "kenning.sock"):
        started = time.monotonic()
        procs = [
            subprocess.Popen(
                [*ken, "add-url", f"{base}/{label}-{n}"],
                cwd=tree, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
            )  # fmt: skip
            for n in range(calls)
        ]
        # Read as they end, so each is timed when it answers, not when the loop reaches it.
        ended: dict[int, tuple[float, int, str]] = {}
        while len(ended) < len(procs):
            for n, proc in enumerate(procs):
                if n not in ended and proc.poll() is not None:
                    ended[n] = (time.monotonic() - started, proc.returncode, proc.stderr.read())
            time.sleep(0.05)
        for proc in procs:
            proc.stderr.close()
        return [ended[n] for n in range(len(procs))]


def why(stderr: str) -> str:
    """A failure's reason without its URL: the client gave up, or the daemon refused."""
    if "no answer from the daemon" in stderr or "no word from the daemon" in stderr:
        return "client gave up"
    return stderr.strip().split(" http")[0][:60] or "?"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=10, help="add-url processes started at once")
    parser.add_argument("--delay", type=float, default=2.0, help="seconds the server takes over each page")
    parser.add_argument("--fetch-timeout", type=float, help="[fetch] timeout (the client waits it + parse + 30 s)")
    parser.add_argument("--parse-timeout", type=float, help="[limits] parse_timeout")
    parser.add_argument("--baseline", type=Path, help="run the daemon and CLI from this checkout first")
    args = parser.parse_args()
    SlowPages.delay = args.delay
    server = ThreadingHTTPServer(("127.0.0.1", 0), SlowPages)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    work = Path(tempfile.mkdtemp(prefix="kenning-urlburst-"))
    limits = f"timeout = {args.fetch_timeout}\n" if args.fetch_timeout else ""
    if args.parse_timeout:
        limits += f"[limits]\nparse_timeout = {args.parse_timeout}\n"
    print(f"{args.calls} add-url at once, each page taking {args.delay:g} s")
    try:
        for name, tree in (("baseline", args.baseline), ("kenning", HERE)):
            if tree is None:
                continue
            ended = run(tree.resolve(), work / name, base, args.calls, name, limits)
            failures = Counter(why(err) for _, code, err in ended if code != 0)
            seconds = [s for s, _, _ in ended]
            print(
                f"{name:8}  median answer {statistics.median(seconds):6.1f} s  last {max(seconds):6.1f} s"
                f"  added {args.calls - sum(failures.values())} of {args.calls}"
                + "".join(f"; {count} {reason}" for reason, count in failures.items())
            )
    finally:
        server.shutdown()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
