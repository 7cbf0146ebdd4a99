"""Following a folder as it changes: watchfiles events, filtered and debounced.

An event only marks the source dirty and asks for a sweep; the sweep's mtime check
makes that cheap, and it is what gets renames, directory moves, deletions and the cap
right without a second code path. The periodic sweep stays as the safety net for
anything the OS did not report (network mounts, a watcher restarted).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from pathlib import Path

from watchfiles import Change, awatch

from kenning.ingest.kiroignore import KiroIgnore
from kenning.ingest.walk import WalkRules, is_candidate

log = logging.getLogger(__name__)

RETRY_SECONDS = 30.0


class ChangeFilter:
    """Decides which events concern the index, without touching the disk.

    The root's .kiroignore is the one dot-file that matters: a change to it reloads the
    rules here and triggers a sweep, so newly ignored files leave the index.
    """

    def __init__(self, root: Path, rules: WalkRules) -> None:
        self.root = root
        self.rules = rules
        self.kiroignore_path = root / ".kiroignore"
        self.kiroignore = KiroIgnore.load(root)

    def __call__(self, change: Change, path: str) -> bool:
        candidate = Path(path)
        if candidate == self.kiroignore_path:
            self.kiroignore = KiroIgnore.load(self.root)
            return True
        return is_candidate(self.root, candidate, self.rules, self.kiroignore)


async def watch_folder(
    root: Path,
    rules: WalkRules,
    on_change: Callable[[], None],
    stop: asyncio.Event,
    debounce_ms: int,
    retry_seconds: float = RETRY_SECONDS,
) -> None:
    """Run until `stop` is set; a missing root is looked for every `retry_seconds`.

    The root is checked before watching because watchfiles, told to ignore permission
    errors, watches a missing path in silence instead of raising: a folder created
    after the daemon started would never be seen.
    """
    missing = False
    while not stop.is_set():
        if await asyncio.to_thread(root.is_dir):
            if missing:
                # The root appeared (a drive mounted, the folder created): sweep now
                # rather than at the next periodic sweep.
                missing = False
                on_change()
            try:
                async for _changes in awatch(
                    root,
                    watch_filter=ChangeFilter(root, rules),
                    stop_event=stop,
                    debounce=debounce_ms,
                    step=50,
                    recursive=True,
                    ignore_permission_denied=True,
                ):
                    on_change()
                    if not await asyncio.to_thread(root.is_dir):
                        # The root itself went (unmounted, moved away): its watch is
                        # dead, so look for it again.
                        break
            except FileNotFoundError:
                pass  # gone between the check and the watch
            if stop.is_set():
                return
        if not missing:
            log.warning("cannot watch %s: it does not exist; looking again every %.0fs", root, retry_seconds)
            missing = True
        try:
            await asyncio.wait_for(stop.wait(), timeout=retry_seconds)
        except TimeoutError:
            continue
