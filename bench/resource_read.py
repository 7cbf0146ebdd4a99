"""Reading a long document whole, a page of lines at a time, as the MCP resource
`kenning://document/{id}` does: the time from the first page to the last.

One archive of `--lines` short lines (3,300,000 by default, about 10 MB) is added with
`archive.add` and left to be embedded and extracted; then `documents.get` is asked from
line 1 on, each page from the `next_line` the last one named, until there is none. With
`--baseline DIR` the daemon from that checkout runs the same first, so the ratio is
measured in one run.

    .venv/bin/python bench/resource_read.py                        # ~2 min on 2 cores
    .venv/bin/python bench/resource_read.py --baseline /tmp/kenning-old
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE / "bench"))

from tree_daemon import daemon_from  # noqa: E402

from kenning.client import Client  # noqa: E402


def archive(lines: int) -> str:
    return "".join(f"{n % 100:02d}\n" for n in range(lines))


def settled(client: Client, chunks: int) -> bool:
    """Embedded and extracted: the read is timed alone, not against that work."""
    status = client.call("status")
    graph = status["graph"]
    return status["embedder"]["vectors"] >= chunks and graph["pending"] == 0 and graph["job"]["state"] == "idle"


def run(tree: Path, work: Path, text: str) -> tuple[float, int, bool]:
    """Seconds to read the archive whole, the pages it took, and whether the text read is
    the text added."""
    data = work / "data"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    config = work / "config.toml"
    # Large chunks: few to embed, the lines as many.
    config.write_text(f'[daemon]\ndata_dir = "{data}"\nsweep_interval = 3600\n[chunking]\ntarget_chars = 20000\n')
    socket = data / "kenning.sock"
    with daemon_from(tree, config, work, socket):
        client = Client(socket, timeout=600)
        added = client.call("archive.add", {"text": text})
        deadline = time.monotonic() + 600
        while not settled(client, added["chunks"]):
            if time.monotonic() > deadline:
                raise SystemExit(f"the archive was not embedded and extracted in 10 min; see {work / 'daemon.log'}")
            time.sleep(0.5)
        pages: list[str] = []
        line: int | None = 1
        began = time.monotonic()
        while line is not None:
            found = client.call("documents.get", {"document_id": added["document_id"], "line_start": line})
            pages.append(found["lines"]["text"])
            line = found["lines"]["next_line"]
        took = time.monotonic() - began
    return took, len(pages), "\n".join(pages) == text.rstrip("\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lines", type=int, default=3_300_000)
    parser.add_argument("--baseline", type=Path, help="run the daemon from this checkout first, on the same archive")
    parser.add_argument("--work", type=Path, help="where the daemons keep their data (default: a temporary folder)")
    args = parser.parse_args()
    text = archive(args.lines)
    work = args.work or Path(tempfile.mkdtemp(prefix="kenning-resource-"))
    print(f"one archive of {args.lines:,} lines ({len(text.encode()) / (1 << 20):.1f} MB), read whole a page at a time")
    runs = {}
    for name, tree in (("baseline", args.baseline), ("kenning", HERE)):
        if tree is None:
            continue
        runs[name] = took, pages, whole = run(tree.resolve(), work / name, text)
        print(f"{name:8}  read in {took:6.1f} s  {pages} pages  {'whole' if whole else 'NOT THE TEXT ADDED'}")
    if "baseline" in runs:
        print(f"time ratio kenning/baseline: {runs['kenning'][0] / runs['baseline'][0]:.2f}")
    if args.work is None:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
