"""A sweep of one folder source: walk, cap, detect deletions, ingest what changed.

One sweep per source runs at a time: the service runs `sweep()` as a job (see
service/jobs.py), so a request that arrives while one runs makes it go round once more
instead of queueing many. While a sweep is reading files in, it says so through
`on_ingesting`, which is what the background jobs yield to.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from kenning.api import IGNORE_FILE_HOLDS
from kenning.config import SourceSettings
from kenning.errors import IgnoreFileUnusable, IndexUnwritable
from kenning.ingest.mounts import is_mount_point, mount_of
from kenning.ingest.pipeline import FileJob, IngestOptions, ingest, needs_look
from kenning.ingest.readers import reader_format
from kenning.ingest.walk import UNREADABLE, Discovered, WalkReport, WalkRules, newest, walk
from kenning.store import documents, sources
from kenning.store.database import Database, unwritable

log = logging.getLogger(__name__)

PARALLEL_FILES = 2

T = TypeVar("T")


@dataclass
class SweepBudget:
    """The chunk budget every source's sweeps share within one sweep interval.

    A source's own budget caps each of its sweeps; this caps them all together, and is
    renewed at each periodic sweep. 0 means no limit.
    """

    per_round: int = 0
    spent: int = 0

    def allowance(self, source_budget: int) -> int | None:
        """Chunks the next sweep may ingest: 0 for no limit, None for none at all."""
        if not self.per_round:
            return source_budget
        remaining = self.per_round - self.spent
        if remaining <= 0:
            return None
        return min(remaining, source_budget) if source_budget else remaining

    def spend(self, chunks: int) -> None:
        self.spent += chunks

    def renew(self, per_round: int) -> None:
        self.per_round, self.spent = per_round, 0


@dataclass
class SweepProgress:
    """What `status` shows about a source between and during sweeps."""

    running: bool = False
    discovered: int = 0
    capped: int = 0
    # Of the capped files, those the index holds from before the cap was lowered: they
    # stay searchable (lowering max_files deletes nothing) but are no longer read again.
    capped_kept: int = 0
    budget: int = 0
    # Files left for a later sweep because a chunk budget ran out.
    deferred: int = 0
    to_check: int = 0
    checked: int = 0
    pending: int = 0
    last_error: str | None = None
    # Why the last sweep kept files it did not find: "unmounted" (the drive is away,
    # `FolderScanner._drive_away`) or "unknown" (whether it is away is not known, see
    # `MountUnknown`).
    kept_unmounted: str | None = None
    # Why the last sweep stopped when the index could not be written (a full disk, a
    # read-only database): the error cannot be stored in the index, so it is kept here
    # until a sweep gets through.
    write_error: str | None = None
    last_duration: float | None = None
    last_result: dict[str, int] = field(default_factory=dict)
    # Files the last walk passed over, by reason, and the system filesystems' folders it
    # did not enter (see ingest/walk.py).
    passed_over: dict[str, int] = field(default_factory=dict)
    # Folders below the root the last walk could not list, with why; what the index
    # holds from them is kept.
    unreadable_dirs: dict[str, str] = field(default_factory=dict)
    unreadable_kept: int = 0
    # Indexed files the last sweep could not open, with why; they are kept as last read.
    unreadable_files: dict[str, str] = field(default_factory=dict)
    # Of those, the file links the walk could not follow and the files that refused it a
    # stat: the walk did not list them, so they count apart from `discovered` (see
    # `walk.LINK_SHUT`, `walk.STAT_SHUT`).
    links_kept: int = 0
    # When the running sweep began reading files in (monotonic): its rate is checked / elapsed.
    reading_since: float | None = None
    # How long the last sweep took to walk the folder and set it against the index before
    # reading anything: what a sweep costs when nothing changed (service/folders.py paces
    # the sweeps a watch asks for by it).
    listing_seconds: float | None = None


async def _writing(write: Awaitable[T]) -> T:
    """A write of the sweep's own; a store that refuses every write stops the sweep."""
    try:
        return await write
    except Exception as exc:
        if unwritable(exc):
            raise IndexUnwritable(f"cannot write the index: {exc}") from exc
        raise


class MountUnknown(Exception):
    """The root may be a drive's bare mount point, and its index must not read as every
    file deleted: the mount it was on is not known (m015, m018), and nothing in it says
    it is what was indexed (a drive known to be away is `FolderScanner._drive_away`'s)."""


def _placed(root: Path) -> tuple[bool, str]:
    """Whether the root holds anything (a drive's mount point is empty while the drive is
    not mounted), and the mount point it is on."""
    with os.scandir(root) as entries:
        holds = next(entries, None) is not None
    return holds, mount_of(os.path.realpath(root))


def _mount_point(root: Path) -> bool:
    # Asked of the folder a linked root names, as the walk reads it: ismount says False
    # of any link, and a source added as ~/drive -> /mnt/usb lost its index on unmount.
    return is_mount_point(os.path.realpath(root))


def _found_as_indexed(found: list[Discovered], states: dict[str, documents.FileState]) -> bool:
    """Whether the root is what was indexed, not a bare mount point something was written
    to: one of the files it holds is one the index holds, as it was indexed, or half of
    the indexed files at least are there by name. Judged by stamps alone, a plain folder
    whose every note was edited while the daemon was stopped for the upgrade (m018) was
    held for good, its edits never read; a stray file or two on a drive's mount point is
    not half of the drive."""
    named = 0
    for item in found:
        prior = states.get(item.rel)
        if prior is None:
            continue
        if (prior.mtime, prior.size) == (item.stamp, item.size):
            return True
        named += 1
    return 2 * named >= len(states)


def _away_message(root: Path, mount: str, missing: int) -> str:
    if os.path.realpath(mount) == os.path.realpath(root):
        gone, place = f"{root} is", "it"
    else:
        gone, place = f"{mount}, the mount point {root} is on, is", str(root)
    return (
        f"{gone} no longer a mount point (a drive or share not mounted?); the {missing} indexed files not found in"
        f" {place} are kept as last indexed until it is mounted again or the source is removed"
    )


def _identity(root: Path) -> tuple[int, int]:
    info = os.stat(root)
    return info.st_dev, info.st_ino


def _shut(settled: list[FileJob]) -> list[FileJob]:
    """The indexed files this user may no longer open (a file link: its target's mode counts).

    Asked with access(2), a path lookup (some 3 ms per thousand files), not by opening
    them: an open is dearer, and could wait on a FIFO swapped in since the walk."""
    return [job for job in settled if job.prior and job.prior.holds_text and not os.access(job.found.path, os.R_OK)]


@dataclass
class _Listing:
    """What a sweep makes of the walk and the index before it writes anything."""

    # Indexed files the walk did not find, nor hide in a folder or behind a link it
    # could not open: deleted, unless the drive is away.
    missing: list[str]
    unreadable_files: dict[str, str]
    unreadable_kept: int
    capped: int
    capped_kept: int
    passed_over: dict[str, int]
    # The files to look at (new, changed, interrupted, stored under another reading), and
    # those the mtime and size say are as last read.
    todo: list[FileJob]
    settled: list[FileJob]
    # Of `todo`, the files read again for another reading or other limits.
    again: int


def _listing(
    found: list[Discovered],
    states: dict[str, documents.FileState],
    report: WalkReport,
    source_id: int,
    settings: SourceSettings,
    options: IngestOptions,
    swapped: bool,
) -> _Listing:
    """The walk set against the index, file by file: run in a thread, since it is a few
    passes over every file found and every row, and on the event loop a folder of
    100,000 files held every request for 0.7 s of CPU at each sweep, one that changed
    nothing included (bench/sweep_lag.py). It reads no database and writes nothing;
    `report` is the sweep's own, and gains the capped and unreadable counts. `swapped`:
    the root is another folder than at the last full sweep, and every file is looked at."""
    # Deletions are judged on everything the walk saw, before the cap, so lowering
    # max_files never reads as files having vanished; nor does a folder made
    # unreadable (a chmod, an unmounted share inside the tree): its files stay
    # searchable as last indexed, as the root's do when the root cannot be read.
    present = {item.rel for item in found}
    missing = [path for path in states if path not in present and not report.hides(path)]
    # A link that cannot be followed is named as an indexed file that cannot be
    # opened is, and only when it is indexed: nothing is kept of one that is not.
    unreadable_files = {rel: why for rel, why in report.unreadable_links.items() if rel in states}
    unreadable_kept = sum(
        1 for path in states if path not in present and report.hides(path) and path not in report.unreadable_links
    )
    kept = newest(found, settings.max_files, report)
    kept_paths = {item.rel for item in kept}
    capped_kept = sum(1 for rel in present - kept_paths if rel in states and states[rel].status != "scanning")
    # One never indexed has nothing to keep: it is passed over, and says so.
    if unindexed := sum(1 for rel in report.unreadable_links if rel not in states):
        report.files[UNREADABLE] += unindexed
    # Each file is read as its format's reader reads it (a link by its target's name);
    # the strings are made once a format.
    forms = [reader_format(item.reader_name) for item in kept]
    limits = options.convert_limits
    readings = {form: (limits.reading_for(form), options.retry_for(form)) for form in set(forms)}
    todo: list[FileJob] = []
    settled: list[FileJob] = []
    for item, form in zip(kept, forms):
        job = FileJob(
            source_id, settings.path, item, states.get(item.rel), settings.confine_to_root, *readings[form], swapped
        )
        (todo if needs_look(job) else settled).append(job)
    again = sum(1 for job in todo if _read_again(job.prior, job.expected))
    return _Listing(
        missing, unreadable_files, unreadable_kept, len(found) - len(kept), capped_kept, report.passed_over(),
        todo, settled, again,
    )  # fmt: skip


def _read_again(prior: documents.FileState | None, expected: str) -> bool:
    """Whether a file is looked at for having been stored under another reading. One
    refused for want of permission recorded none: it is tried at every sweep, for a
    chmod that lets it in, and no reading of it is stale."""
    if prior is None or prior.status == "scanning" or prior.reading == expected:
        return False
    return not (prior.status == "failed" and prior.reading is None)


def _let_go(found: list[Discovered], states: dict[str, documents.FileState], listing: _Listing) -> None:
    """Empty the sweep's per-file lists a slice at a time, in a thread. Freed whole when
    the sweep returned, 100,000 files' worth held the event loop 0.1 s: freeing a list
    is one C call, which no thread switch interrupts, so it is done in small steps."""
    for files in (listing.todo, listing.settled, found):
        while files:
            del files[-1000:]
    while states:
        states.popitem()


@dataclass
class FolderScanner:
    db: Database
    source_id: int
    settings: SourceSettings
    options: IngestOptions
    exclude: tuple[Path, ...] = ()
    own_files: frozenset[tuple[int, int]] = frozenset()
    on_ingesting: Callable[[bool], None] | None = None
    default_budget: int = 0
    shared_budget: SweepBudget = field(default_factory=SweepBudget)
    progress: SweepProgress = field(default_factory=SweepProgress)
    # Documents the sweeps indexed since the last `take_changed()`: the targeted
    # near-duplicate pass looks at these.
    changed: set[int] = field(default_factory=set)
    # The devices of the files with another name (a hard link) that changed since
    # `take_linked()`: the other name may be in another folder on that device, whose
    # watch heard nothing of it.
    linked: set[int] = field(default_factory=set)
    # The mount point the root is on, as the sweep under way found it when the root held
    # anything; recorded with the sweep, except while the drive is away (`_drive_away`).
    root_mount: str | None = None
    # Why the sweep under way deletes nothing it does not find: the mount the root was on
    # is gone (see `_drive_away`).
    away: str | None = None
    # The (device, inode) of the folder the root names, when the sweep under way looked
    # at every file it listed; recorded with the sweep (`sources.root_identity`), so a
    # folder swapped in while the daemon was stopped is noticed at the next start.
    root_identity: tuple[int, int] | None = None

    @property
    def rules(self) -> WalkRules:
        return WalkRules(
            ignore=self.settings.ignore,
            confine_to_root=self.settings.confine_to_root,
            exclude=self.exclude,
            own_files=self.own_files,
        )

    @property
    def source_budget(self) -> int:
        budget = self.settings.chunk_budget
        return self.default_budget if budget is None else budget

    def take_changed(self) -> set[int]:
        changed, self.changed = self.changed, set()
        return changed

    def take_linked(self) -> set[int]:
        linked, self.linked = self.linked, set()
        return linked

    async def sweep(self) -> dict[str, int]:
        """One pass over the folder; returns its counts.

        It is running until its outcome is recorded: a status asked in between read "not
        scanning, every file done" with the error of a sweep a full disk stopped before."""
        self.progress.running = True
        try:
            return await self._sweep_and_record()
        finally:
            self.progress.running = False

    async def _sweep_and_record(self) -> dict[str, int]:
        progress = self.progress
        self.root_mount = self.away = self.root_identity = None
        started = time.monotonic()
        counts = {
            "indexed": 0, "merged": 0, "unchanged": 0, "failed": 0, "skipped": 0, "deleted": 0, "chunks": 0,
            "deferred": 0, "unreadable": 0,
        }  # fmt: skip
        error: str | None = None
        kept: str | None = None
        try:
            counts = await self._sweep_body(counts)
        except IndexUnwritable as exc:
            progress.write_error = str(exc)
            log.warning("source %s: %s; the sweep stops and is tried again", self.settings.name, exc)
            raise
        except MountUnknown as exc:
            error, kept = str(exc), "unknown"
            log.warning("source %s: %s", self.settings.name, error)
        except IgnoreFileUnusable as exc:
            # What the user wrote it to keep out is unknown: read as "nothing", it let
            # those files in. The index stays as it was until the file is fixed.
            error = f"{IGNORE_FILE_HOLDS} ({exc}); nothing in the folder is indexed or dropped until it is fixed"
            log.warning("source %s: %s", self.settings.name, error)
        except OSError as exc:
            # The root is gone or unreadable (an unmounted drive, a typo, a dead network
            # mount, a link loop): report it and keep the index, which must not read as
            # "every file was deleted". Gone with the mount it was on, it is a drive
            # away, as its bare mount point would be (/media/usb/notes, the drive at
            # /media/usb, or a mount point an automounter removes).
            error = f"cannot read {self.settings.path}: {exc.strerror or exc}"
            if await sources.root_identity(self.db, self.source_id) == sources.REPOINTED:
                counts["deleted"] = await self._drop_old_folder()
            elif away := await self._gone_with_its_mount():
                error, kept = away, "unmounted"
            log.warning("source %s: %s", self.settings.name, error)
        finally:
            progress.last_duration = time.monotonic() - started
        if self.away:
            log.warning("source %s: %s", self.settings.name, self.away)
            if error is None:
                error, kept = self.away, "unmounted"
        progress.last_error = error
        progress.kept_unmounted = kept
        progress.last_result = counts
        swept = str(self.settings.path)
        await _writing(
            sources.record_sweep(self.db, self.source_id, swept, error, self.root_mount, kept, self.root_identity)
        )
        self.root_mount = self.away = self.root_identity = None
        progress.write_error = None
        return counts

    async def _sweep_body(self, counts: dict[str, int]) -> dict[str, int]:
        progress = self.progress
        root = self.settings.path
        report = WalkReport()
        started = time.monotonic()
        identity = await asyncio.to_thread(_identity, root)
        found = await asyncio.to_thread(walk, root, self.rules, report)
        states = await documents.file_states(self.db, self.source_id)
        # Another folder on the same device than at the last sweep that looked at every
        # file (`mv notes.new notes`, a link re-pointed, while the daemon ran or not) may
        # hold files of the same size and mtime at the same paths, so each is looked at
        # once. Only on the same device: a drive mounted again on the root is the same
        # drive as far as anyone can tell, and is not hashed whole each time. Unknown
        # (since the upgrade, m019) judges no swap. A root the config re-pointed is
        # another folder wherever it is (`sources.REPOINTED`).
        last = await sources.root_identity(self.db, self.source_id)
        swapped = last == sources.REPOINTED or (
            isinstance(last, tuple) and last[0] == identity[0] and last[1] != identity[1]
        )
        # Recorded whenever the root holds anything, not only files the walk lists: a
        # drive holding nothing indexable, or only a folder that cannot be listed, is a
        # drive all the same.
        holds, on = await asyncio.to_thread(_placed, root)
        recorded = await sources.root_mount(self.db, self.source_id)
        away = await self._drive_away(root, on, recorded)  # the mount that went, if it did
        if recorded is None and states:
            # Since the upgrade (m015, m018) the mount the root was on is not known, and a
            # drive's mount point is an empty folder while the drive is away, or holds what
            # was written there meanwhile. Only the drive mounted on the root, or the
            # indexed files found there (`_found_as_indexed`), says the root is what was
            # indexed: until then nothing in it is read, since a file indexed from it
            # would say so at the next sweep.
            mounted = on == os.path.realpath(root)
            if not holds or not (mounted or _found_as_indexed(found, states)):
                raise MountUnknown(self._unknown_message(root, holds, len(states)))
        # While the drive is away, the bare mount point is not the drive: its state stays
        # the drive's, and a stray file written there does not make it "not on a drive".
        self.root_mount = on if holds and not away else None

        listing = await asyncio.to_thread(
            _listing, found, states, report, self.source_id, self.settings, self.options, swapped
        )
        # A chmod changes no mtime, so an indexed file closed to this user since looks
        # unchanged: only asking tells, and one that cannot be opened is kept as last
        # read and named, as a changed one is when its read is refused.
        shut = await asyncio.to_thread(_shut, listing.settled)
        progress.unreadable_dirs = dict(report.unreadable_dirs)
        progress.links_kept = len(listing.unreadable_files)
        # A file named unreadable by the last sweep stays named until this one reads it:
        # published without it, `ken status` lost it for the length of the sweep.
        to_read = {job.found.rel for job in listing.todo}
        progress.unreadable_files = {
            **{rel: why for rel, why in progress.unreadable_files.items() if rel in to_read},
            **listing.unreadable_files,
            **{job.found.rel: "permission denied" for job in shut},
        }
        # A drive that is away deletes nothing: what its mount point holds meanwhile (a
        # .DS_Store, a swap file, a note saved there by mistake) is indexed, and the
        # drive's files are kept as last indexed until it is mounted again.
        missing = listing.missing
        gone = [] if away else missing
        if away:
            self.away = _away_message(root, away, len(missing))
        progress.unreadable_kept = listing.unreadable_kept
        counts["deleted"] = await _writing(documents.delete_documents(self.db, self.source_id, gone))

        progress.discovered = len(found)
        progress.capped = listing.capped
        progress.capped_kept = listing.capped_kept
        progress.passed_over = listing.passed_over
        todo, settled = listing.todo, listing.settled
        if swapped:
            log.info(
                "source %s: %s is another folder than at the last sweep; looking at every file", self.settings.name, root
            )
        if listing.again:
            log.info(
                "source %s: reading %d files again, stored by an older kenning, other chunk sizes or other limits",
                self.settings.name,
                listing.again,
            )
        counts["unreadable"] = len(shut)
        counts["unchanged"] = len(settled) - len(shut)
        progress.to_check, progress.checked, progress.pending = len(todo), 0, len(todo)
        progress.reading_since = time.monotonic()
        progress.listing_seconds = progress.reading_since - started
        if todo and self.on_ingesting is not None:
            self.on_ingesting(True)
        try:
            await self._ingest_all(todo, counts)
        finally:
            if todo and self.on_ingesting is not None:
                self.on_ingesting(False)
        if not counts["deferred"]:
            # Files a budget left for later have not been looked at in the new folder.
            self.root_identity = identity
        # A sweep that changed nothing is not news, and a line logged for it would be a
        # change in any watched folder the log sits in, asking for another sweep.
        changed = any(counts[key] for key in ("indexed", "merged", "failed", "deleted"))
        log.log(
            logging.INFO if changed else logging.DEBUG,
            "source %s: swept %d files (%d indexed, %d failed, %d deleted, %d chunks) in %.2fs, %.2fs of it listing",
            self.settings.name,
            len(found),
            counts["indexed"],
            counts["failed"],
            counts["deleted"],
            counts["chunks"],
            time.monotonic() - started,
            progress.listing_seconds,
        )
        await asyncio.to_thread(_let_go, found, states, listing)
        return counts

    async def _drive_away(self, root: Path, on: str, recorded: str | None) -> str | None:
        """The mount the root was on when last seen holding anything, when it is gone and
        the root is not a mount point now: the drive is away, and the root (its bare mount
        point, or a folder of that name made there), an ordinary folder meanwhile, says
        nothing about which of the drive's files were deleted. A root on the system's own
        disk was on / (or /home), which does not go.

        Judged by the mount point alone, not by device ids: a USB disk's device number
        follows the order disks were plugged in, and a tmpfs or a share gets a new one at
        each mount, so the same drive back would read as another. A drive that was
        mounted on the root and is now mounted a level up (the root a folder on it) is
        taken for away too: the root is another folder of the drive then, or of another
        drive. Its files are all kept and its new ones indexed, deletions wait until it is
        mounted at the root again or the source is pointed at the new place, and nothing
        indexed is lost."""
        if not recorded or on == os.path.realpath(root) or await asyncio.to_thread(_mount_point, Path(recorded)):
            return None
        return recorded

    async def _drop_old_folder(self) -> int:
        """Drop what the source held, read in the folder the config named before its root
        (which cannot be read): kept, as a drive that is away keeps its files, it was cited
        at paths in the folder named now (a typo in it: a folder that does not exist)."""
        states = await documents.file_states(self.db, self.source_id)
        return await _writing(documents.delete_documents(self.db, self.source_id, list(states)))

    async def _gone_with_its_mount(self) -> str | None:
        """Why the root, which cannot be read, is kept as a drive away: the mount it was
        on is gone too; None when it is not."""
        recorded = await sources.root_mount(self.db, self.source_id)
        if not recorded or await asyncio.to_thread(_mount_point, Path(recorded)):
            return None
        return _away_message(self.settings.path, recorded, await documents.state_rows(self.db, self.source_id))

    def _unknown_message(self, root: Path, holds: bool, indexed: int) -> str:
        if holds:
            found = (
                f"{root} is not a mount point, and it holds none of its {indexed} indexed files unchanged and not half"
                " of them by name; whether it was a drive's or a share's mount point is not known (it has not been"
                " seen holding them since kenning was upgraded), so they are kept and nothing in it is read"
            )
        else:
            found = (
                f"{root} is empty, and whether it is a drive's or a share's mount point is not known (it has not been"
                f" seen holding its files since kenning was upgraded); its {indexed} indexed files are kept"
            )
        return (
            f"{found} until the drive is mounted there again; if they were deleted on purpose, `ken sources remove"
            f" {self.settings.name}` and add the folder again"
        )

    async def _ingest_all(self, todo: list[FileJob], counts: dict[str, int]) -> None:
        """Two files in flight: one parses in a thread while the other is written.

        Files are taken newest first (the walk's order), so a budget spends itself on
        what the user touched last; files not reached wait, unindexed rather than
        half-done, and the next sweep resumes with them.
        """
        allowance = self.shared_budget.allowance(self.source_budget)
        progress = self.progress
        progress.budget = allowance or 0
        progress.deferred = 0
        if allowance is None:
            counts["deferred"] = progress.deferred = len(todo)
            return
        budget = allowance
        queue = iter(todo)

        async def worker() -> None:
            for job in queue:
                if budget and counts["chunks"] >= budget:
                    counts["deferred"] += 1
                    continue
                outcome = await ingest(self.db, job, self.options)
                counts[outcome.result] += 1
                if outcome.result == "unreadable":
                    progress.unreadable_files[job.found.rel] = outcome.reason or "cannot be read"
                else:
                    progress.unreadable_files.pop(job.found.rel, None)
                counts["chunks"] += outcome.chunks
                self.shared_budget.spend(outcome.chunks)
                if outcome.document_id is not None and outcome.result == "indexed":
                    self.changed.add(outcome.document_id)
                if job.found.names > 1 and outcome.result in ("indexed", "merged", "failed", "skipped"):
                    self.linked.add(job.found.device)
                progress.checked += 1
                progress.pending -= 1

        # With a budget, one file at a time, so the sweep stops right where the budget
        # is spent instead of overshooting by whatever the other worker had in flight.
        try:
            async with asyncio.TaskGroup() as group:
                for _ in range(1 if budget else PARALLEL_FILES):
                    group.create_task(worker())
        except* IndexUnwritable as stopped:
            # The other file in flight was cancelled and rolled back; the job retries.
            raise stopped.exceptions[0] from None
        progress.deferred = counts["deferred"]

