"""What setting up a folder's watch costs: inotify watches, and how long the event loop
stalls meanwhile.

The folder is what made the recursive watch hurt: a few dozen note directories, a
build tree the walk skips (node_modules) and a link to a large directory elsewhere
(default /usr). Two watches are set up on it, each in a thread with the event loop
timing itself in 10 ms sleeps, as the daemon runs it:

  recursive   watchfiles watching the root recursively (the baseline: it follows the
              link and enters the build tree)
  kenning     ingest.watch.watch_folder: one watch per directory the walk enters

and it prints, for each, the inotify watches held and the worst loop stall.

    .venv/bin/python bench/watch_setup.py [--link /usr] [--dirs 50] [--settle 6]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import threading
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from watchfiles import watch  # noqa: E402

from kenning.ingest.walk import WalkRules  # noqa: E402
from kenning.ingest.watch import watch_folder  # noqa: E402


def inotify_watches() -> int:
    """Watches held by this process, from the kernel's own account of its inotify fds."""
    count = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            if os.readlink(f"/proc/self/fd/{fd}") != "anon_inode:inotify":
                continue
            with open(f"/proc/self/fdinfo/{fd}") as info:
                count += sum(1 for line in info if line.startswith("inotify wd:"))
        except OSError:
            continue  # closed meanwhile
    return count


def make_folder(base: Path, link: Path, dirs: int) -> Path:
    root = base / "notes"
    for index in range(dirs):
        folder = root / f"project-{index}"
        folder.mkdir(parents=True)
        (folder / "notes.md").write_text(f"# Project {index}\n\nMeeting notes.\n")
    modules = root / "node_modules" / "left-pad" / "lib"
    modules.mkdir(parents=True)
    (modules / "index.md").write_text("generated\n")
    (root / "system").symlink_to(link)
    return root


async def measure(start: Callable[[asyncio.Event], Awaitable[None]], settle: float) -> tuple[int, float]:
    stop = asyncio.Event()
    task = asyncio.create_task(start(stop))
    worst = 0.0
    ends = time.monotonic() + settle
    while time.monotonic() < ends:
        began = time.monotonic()
        await asyncio.sleep(0.01)
        worst = max(worst, time.monotonic() - began - 0.01)
    watches = inotify_watches()
    stop.set()
    await task
    return watches, worst


def recursive(root: Path) -> Callable[[asyncio.Event], Awaitable[None]]:
    async def run(stop: asyncio.Event) -> None:
        halt = threading.Event()

        def follow() -> None:
            for _ in watch(root, stop_event=halt, recursive=True, ignore_permission_denied=True):
                pass

        thread = threading.Thread(target=follow, daemon=True)
        thread.start()
        await stop.wait()
        halt.set()
        await asyncio.to_thread(thread.join)

    return run


def kenning(root: Path) -> Callable[[asyncio.Event], Awaitable[None]]:
    async def run(stop: asyncio.Event) -> None:
        await watch_folder(root, WalkRules(), lambda: None, stop, debounce_ms=800, retry_seconds=30)

    return run


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--link", type=Path, default=Path("/usr"), help="the large directory the folder links to")
    parser.add_argument("--dirs", type=int, default=50, help="note directories in the folder")
    parser.add_argument("--settle", type=float, default=6.0, help="seconds each watch is given to set up")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as base:
        root = make_folder(Path(base), args.link, args.dirs)
        print(f"folder: {args.dirs} note directories, node_modules, a link to {args.link}")
        print(f"{'watch':<10} {'inotify watches':>16} {'worst loop stall':>17}")
        figures = {}
        for name, start in (("recursive", recursive(root)), ("kenning", kenning(root))):
            watches, stall = await measure(start, args.settle)
            figures[name] = (watches, stall)
            print(f"{name:<10} {watches:>16} {stall * 1000:>14.0f} ms")
        base_watches, base_stall = figures["recursive"]
        watches, stall = figures["kenning"]
        print(f"ratio kenning/recursive: watches {watches / base_watches:.4f}, stall {stall / base_stall:.4f}")


if __name__ == "__main__":
    asyncio.run(main())
