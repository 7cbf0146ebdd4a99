"""The folder sources while the daemon runs: a scanner, a watcher and a sweep job each.

Config changes are applied here (a source whose settings changed is restarted), sweeps
are requested here (by the watcher, the periodic round, `ken scan`), and what each
sweep leaves behind is tidied here: the near-duplicate pass for the documents it
changed, a resumed sweep after a chunk budget ran out, FTS segment merging.
"""

from __future__ import annotations

import asyncio
import fcntl
import logging
import os
import stat
import time
from dataclasses import dataclass, field
from pathlib import Path

from kenning.config import Settings, SourceSettings
from kenning.heap import release_free_memory
from kenning.ingest.parse_pool import ParsePool
from kenning.ingest.pipeline import IngestOptions
from kenning.ingest.scan import FolderScanner, SweepBudget
from kenning.ingest.watch import BUSY_SECONDS, identity_of, watch_folder
from kenning.service.jobs import IngestActivity, NearDupJob, SweepJob
from kenning.store import sources as source_store
from kenning.store.database import Database
from kenning.store.maintenance import merge_fts_segments, reclaim

log = logging.getLogger(__name__)

STOP_TIMEOUT = 5.0
# A sweep that deleted at least this many documents gives their space back to the disk.
RECLAIM_AFTER_DELETED = 100
# A sweep a watch asks for starts no sooner than this many times what the last one took
# to list the folder after it ended (`Folder.changed`).
SWEEP_PACE = 4


@dataclass
class Folder:
    settings: SourceSettings
    scanner: FolderScanner
    job: SweepJob
    stop_watch: asyncio.Event = field(default_factory=asyncio.Event)
    watch_task: asyncio.Task | None = None
    # When a sweep stopped by its chunk budget goes on (wall clock), if one is due.
    resume_at: float | None = None
    resume_handle: asyncio.TimerHandle | None = None
    # Why its watch cannot be set up (an inotify limit reached), while it cannot: changes
    # then wait for the periodic sweep (ingest/watch.py `watch_failure`).
    not_watched: str | None = None
    # When its last sweep ended (the event loop's clock), and the sweep a change is
    # waiting for until `SWEEP_PACE` allows it.
    swept_at: float | None = None
    paced: asyncio.TimerHandle | None = None
    # When a hard-linked file changed in another folder last asked for a sweep of this one.
    linked_at: float | None = None

    def watch_failed(self, why: str | None) -> None:
        self.not_watched = why

    def changed(self) -> None:
        """The watch saw a change: sweep at once, unless the last sweep ended less than
        `SWEEP_PACE` times its listing ago; then once that time is over.

        Each sweep lists the whole folder, and a program making and removing files in it
        without a pause (a download, a build, temporary files) had it swept back to back:
        most of a CPU for as long as it ran, on a folder of 10,000 files. A change in a
        folder that lists in 20 ms waits 80 ms at most."""
        if self.paced is not None:
            return
        loop = asyncio.get_running_loop()
        listing = self.scanner.progress.listing_seconds
        if self.swept_at is None or listing is None or loop.time() >= self.swept_at + SWEEP_PACE * listing:
            self.job.wake()
            return
        self.paced = loop.call_at(self.swept_at + SWEEP_PACE * listing, self._paced_sweep)

    def linked_changed(self) -> None:
        """A hard-linked file changed in another folder's sweep, and may be here under
        another name: sweep, at most once every `BUSY_SECONDS` for this reason. A log
        linked into two folders and written to without a pause would otherwise have
        each folder's sweep ask for the other's, back to back, each reading it whole."""
        now = asyncio.get_running_loop().time()
        if self.linked_at is None or now >= self.linked_at + BUSY_SECONDS:
            self.linked_at = now
            self.changed()
        elif self.paced is None:
            self.linked_at += BUSY_SECONDS
            self.paced = asyncio.get_running_loop().call_at(self.linked_at, self._paced_sweep)

    def _paced_sweep(self) -> None:
        self.paced = None
        self.job.wake()

    def stop_pacing(self) -> None:
        if self.paced is not None:
            self.paced.cancel()
            self.paced = None


def own_output() -> tuple[tuple[Path, ...], frozenset[tuple[int, int]]]:
    """The files this process's stdout and stderr append to (the log `ken start` opens
    for it, or where `ken daemon >> file` sends it): their paths, for the watcher, which
    judges events by path, and their (device, inode), for the walk, which then skips
    them however it reaches them (a hard link, another spelling of the path). The path
    is asked of the open descriptor (macOS's F_GETPATH, Linux's /proc), since nothing
    else names a redirect's target."""
    paths: list[Path] = []
    identities: set[tuple[int, int]] = set()
    for fd in (1, 2):
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                continue
            identities.add((info.st_dev, info.st_ino))
            if hasattr(fcntl, "F_GETPATH"):
                paths.append(Path(os.fsdecode(fcntl.fcntl(fd, fcntl.F_GETPATH, bytes(1024)).rstrip(b"\0"))))
            else:
                paths.append(Path(os.readlink(f"/proc/self/fd/{fd}")))
        except OSError:
            continue
    return tuple(dict.fromkeys(paths)), frozenset(identities)


class Folders:
    def __init__(
        self, db: Database, settings: Settings, activity: IngestActivity, dedup: NearDupJob, parsers: ParsePool
    ) -> None:
        self.db = db
        self.parsers = parsers
        self.settings = settings
        self.activity = activity
        self.dedup = dedup
        self.budget = SweepBudget(settings.daemon.sweep_chunk_budget)
        self.running: dict[str, Folder] = {}
        self.next_sweep_at = time.time() + settings.daemon.sweep_interval
        self._rounds = 0
        self._merge_lock = asyncio.Lock()
        self.output, self.output_files = own_output()

    async def apply(self, settings: Settings) -> None:
        """Start, restart or stop folders so that they match `settings`."""
        self.settings = settings
        self.dedup.settings = settings.dedup
        ids = await source_store.sync_sources(self.db, [(s.name, str(s.path), s.namespace) for s in settings.sources])
        wanted = {s.name: s for s in settings.sources}
        options = IngestOptions(
            chunking=settings.chunking,
            limits=settings.limits,
            max_file_bytes=int(settings.daemon.max_file_mb * 1024 * 1024),
            parsers=self.parsers,
        )
        for name in list(self.running):
            folder = self.running[name]
            if wanted.get(name) != folder.settings or folder.scanner.options != options:
                await self.stop(name)
        for name, source in wanted.items():
            if name in self.running or name not in ids:  # not in ids: an older namesake is still being removed
                continue
            scanner = FolderScanner(
                self.db,
                ids[name],
                source,
                options,
                exclude=(settings.daemon.data_dir, *self.output),
                own_files=self.output_files,
                on_ingesting=lambda busy, name=name: self.activity.report(name, busy),
                default_budget=settings.daemon.folder_chunk_budget,
                shared_budget=self.budget,
            )
            folder = Folder(source, scanner, SweepJob(scanner, self._after_sweep))
            self.running[name] = folder
            folder.watch_task = asyncio.create_task(
                watch_folder(
                    source.path,
                    scanner.rules,
                    folder.changed,
                    folder.stop_watch,
                    settings.daemon.debounce_ms,
                    settings.daemon.watch_retry,
                    on_failure=folder.watch_failed,
                ),
                name=f"watch {name}",
            )
            folder.job.start()

    async def stop(self, name: str) -> None:
        folder = self.running.pop(name, None)
        if folder is None:  # stopped already (a removal while a reload restarts it)
            return
        folder.stop_watch.set()
        folder.stop_pacing()
        if folder.resume_handle is not None:
            folder.resume_handle.cancel()
        # The file in flight rolls back; the next start picks it up from its `scanning` row.
        await folder.job.stop(STOP_TIMEOUT)
        self.activity.report(name, False)
        if folder.watch_task is not None:
            folder.watch_task.cancel()
            await asyncio.wait([folder.watch_task], timeout=STOP_TIMEOUT)

    async def stop_all(self) -> None:
        await asyncio.gather(*(self.stop(name) for name in list(self.running)))

    async def forget(self, name: str) -> None:
        """Stop watching and sweeping a source that is about to be removed."""
        self.settings = self.settings.model_copy(
            update={"sources": tuple(s for s in self.settings.sources if s.name != name)}
        )
        if name in self.running:
            await self.stop(name)

    def request_sweep(self, name: str) -> SweepJob | None:
        folder = self.running.get(name)
        if folder is None:
            return None
        folder.job.wake()
        return folder.job

    def periodic_round(self) -> bool:
        """The safety-net sweep of every source and a fresh shared budget; returns whether
        a full near-duplicate sweep is due this round."""
        self.budget.renew(self.settings.daemon.sweep_chunk_budget)
        for name in self.running:
            self.request_sweep(name)
        self._rounds += 1
        self.next_sweep_at = time.time() + self.settings.daemon.sweep_interval
        every = self.settings.dedup.every_n_sweeps
        return bool(every and self._rounds % every == 0)

    async def _after_sweep(self, scanner: FolderScanner, counts: dict[str, int]) -> None:
        self.dedup.note_changed(scanner.take_changed())
        if devices := scanner.take_linked():
            # A hard-linked file changed: saved through this folder, its other name in
            # another folder changed too, and inotify told only this folder's watch; that
            # folder cited the old text until the periodic sweep. Its sweep finds the new
            # stamp, and what it reads there is unchanged here, so this stops. Only the
            # folders on the file's device can hold another name of it (a snapshot tree
            # of `cp -al` links elsewhere swept every source).
            for other in list(self.running.values()):
                if other.scanner is scanner:
                    continue
                found = await asyncio.to_thread(identity_of, other.scanner.settings.path)
                if found is not None and found[0] in devices and self.running.get(other.scanner.settings.name) is other:
                    other.linked_changed()
        folder = self.running.get(scanner.settings.name)
        if folder is not None:
            folder.swept_at = asyncio.get_running_loop().time()
            folder.resume_at = None
            if scanner.progress.deferred and self.budget.allowance(scanner.source_budget) is not None:
                # The next budgeted sweep comes after a pause that lets embedding and
                # extraction catch up, not a whole interval later.
                pause = self.settings.daemon.budget_pause
                folder.resume_at = time.time() + pause
                folder.resume_handle = asyncio.get_running_loop().call_later(pause, folder.job.wake)
        if counts.get("indexed") or counts.get("deleted"):
            # One merge pass at a time; a sweep that ends while one runs leaves it to
            # pick up the new segments as it goes. Not the purge of a removal
            # (service/scrub.py): it rewrites the whole keyword index, and files come and
            # go by the hundred in a folder a user works in (a branch switched).
            if not self._merge_lock.locked():
                async with self._merge_lock:
                    await merge_fts_segments(self.db)
                    if counts.get("deleted", 0) >= RECLAIM_AFTER_DELETED:
                        await reclaim(self.db)
            await asyncio.to_thread(release_free_memory)
