"""How long `ken add-url` waits while large folders are being swept.

A fetched page is converted in the parse workers that also read a sweep's files, so a
page asked for during a first sweep can queue behind them: each folder being swept has
two files in flight. A real daemon is given `--files` notes (markdown of `--kb` KB, or
PDFs of `--pdf-pages` pages) dealt over `--sources` folders, and a page server on
127.0.0.1 (listed in [fetch] allowed_hosts); `urls.add` is sent `--pages` times while the
sweeps run, each for its own URL, and timed from send to answer. The same calls once the
sweeps have ended (embedding and extraction still catching up) are the baseline of the
same run. With `--baseline DIR` the daemon from that checkout (e.g. `git archive main |
tar -x -C DIR`) runs the same first.

    .venv/bin/python bench/fetch_wait.py                                 # ~2 min on 2 cores
    .venv/bin/python bench/fetch_wait.py --files 600 --pdf-pages 3 --baseline /tmp/kenning-main
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE / "bench"))

from fpdf import FPDF  # noqa: E402

from tree_daemon import daemon_from  # noqa: E402

from kenning.client import Client  # noqa: E402

PAGE = (
    "<html><head><title>Page {n}</title></head><body><h1>Page {n}</h1>"
    + "<p>A fetched page about harbour tides, number {n}.</p>" * 40
    + "</body></html>"
)


class Pages(BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        body = PAGE.format(n=self.path.strip("/")).encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@dataclass
class Run:
    during: list[float]
    idle: list[float]
    swept_during: list[int]


def make_folders(root: Path, files: int, sources: int, kb: int, pdf_pages: int) -> list[Path]:
    """`files` notes of about `kb` KB (or PDFs of `pdf_pages` pages), dealt out over
    `sources` folders."""
    folders = [root / f"source-{number}" for number in range(sources)]
    for index in range(files):
        folder = folders[index % sources] / f"d{index // 200}"
        folder.mkdir(parents=True, exist_ok=True)
        lines = [f"note{index} word{(index * 7 + k) % 997} " * 8 for k in range(40 * pdf_pages)]
        if pdf_pages:
            pdf = FPDF()
            pdf.set_font("Helvetica", size=9)
            for page in range(pdf_pages):
                pdf.add_page()
                for line in lines[page * 40 : (page + 1) * 40]:
                    pdf.cell(text=line)
                    pdf.ln()
            pdf.output(str(folder / f"note-{index}.pdf"))
            continue
        paragraphs = []
        while sum(map(len, paragraphs)) < kb * 1024:
            k = len(paragraphs)
            paragraphs.append(" ".join(f"note{index} word{(index * 7 + k * 13 + j) % 997}" for j in range(60)))
        (folder / f"note-{index}.md").write_text(f"# Note {index}\n\n" + "\n\n".join(paragraphs) + "\n")
    return folders


def sweeping(client: Client) -> tuple[int, int]:
    """Files processed so far over all sources, and how many sources are still sweeping."""
    sources = [s for s in client.call("status")["sources"] if s["kind"] == "folder"]
    done = sum(s.get("processed") or 0 for s in sources)
    busy = sum(1 for s in sources if s["scanning"] or s["last_sweep_at"] is None)
    return done, busy


def timed_add(client: Client, url: str) -> float:
    sent = time.monotonic()
    client.call("urls.add", {"url": url})
    return time.monotonic() - sent


def run(tree: Path, work: Path, folders: list[Path], base: str, pages: int, label: str) -> Run:
    data = work / "data"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    config = work / "config.toml"
    config.write_text(
        f'[daemon]\ndata_dir = "{data}"\nsweep_interval = 3600\n'
        '[fetch]\nallowed_hosts = ["127.0.0.1"]\n'
        + "".join(f'[[sources]]\nname = "{folder.name}"\npath = "{folder}"\n' for folder in folders)
    )
    socket = data / "kenning.sock"
    with daemon_from(tree, config, work, socket):
        client = Client(socket, timeout=900)
        # Into the sweep proper: past the walk, files being read.
        while sweeping(client)[0] <= 20 * len(folders):
            time.sleep(0.05)
        during, swept = [], []
        for n in range(pages):
            during.append(timed_add(client, f"{base}/{label}-busy-{n}"))
            done, busy = sweeping(client)
            swept.append(done)
            if busy < len(folders):
                print(f"  {label}: a sweep ended during page {n + 1}; use more --files", file=sys.stderr)
                break
        while sweeping(client)[1]:
            time.sleep(0.2)
        idle = [timed_add(client, f"{base}/{label}-idle-{n}") for n in range(pages)]
        return Run(during, idle, swept)


def figures(seconds: list[float]) -> str:
    return f"median {statistics.median(seconds) * 1000:8.0f} ms  max {max(seconds) * 1000:8.0f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--files", type=int, default=4000, help="notes in the folder being swept")
    parser.add_argument("--sources", type=int, default=4, help="folders the notes are dealt over, each a source")
    parser.add_argument("--kb", type=int, default=20, help="size of each note")
    parser.add_argument("--pdf-pages", type=int, default=0, help="make each note a PDF of this many pages")
    parser.add_argument("--pages", type=int, default=5, help="add-url calls during the sweep, and again after")
    parser.add_argument("--baseline", type=Path, help="run the daemon from this checkout first, on the same load")
    parser.add_argument("--work", type=Path, help="where the daemons keep their data (default: a temporary folder)")
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="kenning-fetchwait-"))
    folders = make_folders(work / "notes", args.files, args.sources, args.kb, args.pdf_pages)
    server = ThreadingHTTPServer(("127.0.0.1", 0), Pages)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    kind = f"PDFs of {args.pdf_pages} pages" if args.pdf_pages else f"notes of {args.kb} KB"
    print(f"{args.files} {kind} in {args.sources} sources; {args.pages} add-url calls during the sweeps and after them")
    runs = {}
    try:
        for name, tree in (("baseline", args.baseline), ("kenning", HERE)):
            if tree is None:
                continue
            runs[name] = result = run(tree.resolve(), work / name, folders, base, args.pages, name)
            print(f"{name:8}  during sweeps: {figures(result.during)}  (files read by then: {result.swept_during})")
            print(f"{'':8}  after them:    {figures(result.idle)}")
            ratio = statistics.median(result.during) / statistics.median(result.idle)
            print(f"{'':8}  ratio during/after (median): {ratio:.1f}")
        if "baseline" in runs:
            ratio = statistics.median(runs["kenning"].during) / statistics.median(runs["baseline"].during)
            print(f"during-sweep median ratio kenning/baseline: {ratio:.2f}")
    finally:
        server.shutdown()
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
