"""One file through the pipeline: change check → read → redact → chunk → store.

The cheap checks and the content hash run in a worker thread (in the parse worker itself
for a file seen for the first time); reading, redacting and chunking run in the parse
pool's processes, under its memory and time limits; the store calls run on the database
threads. The event loop only sequences the steps.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from kenning.config import ChunkingSettings, LimitsSettings
from kenning.errors import AccessDenied, IndexUnwritable, ReaderError
from kenning.ingest.convert import ConvertLimits, Converted, guarded_hash, read_unseen
from kenning.ingest.parse_pool import ParseInterrupted, ParsePool
from kenning.ingest.readers import ReadLimits, reason_line
from kenning.ingest.walk import Discovered
from kenning.store import documents
from kenning.store.database import Database, unwritable
from kenning.store.documents import FileState
from kenning.store.records import DocumentMeta
from kenning.text import dates

log = logging.getLogger(__name__)

# The coarsest file time a file system keeps (FAT's two seconds); see `needs_look`.
RACY_SECONDS = 2.0

# "deferred": the parse was interrupted from outside (not the file's fault); the file
# stays `scanning`, so the next sweep takes it again. "unreadable": an indexed file this
# user may no longer open; it stays as last read, and each sweep tries it again.
Result = Literal["indexed", "merged", "unchanged", "failed", "skipped", "deferred", "unreadable"]


@dataclass(frozen=True)
class FileJob:
    source_id: int
    root: Path
    found: Discovered
    prior: FileState | None
    confine_to_root: bool
    # How the file would be read now (`ConvertLimits.reading_for`), and with which limits
    # (`IngestOptions.retry_for`): a file that failed or was skipped is read again when
    # either changes, one that is indexed only when the first does.
    reading: str
    retry: str
    # Looked at whatever its stamp says: the root now names another folder than the
    # last sweep's that looked at every file (`sources.root_identity`).
    recheck: bool = False

    @property
    def expected(self) -> str:
        """What its row must record for it to be left alone."""
        indexed = self.prior is not None and self.prior.status in ("done", "merged")
        return self.reading if indexed else self.retry


@dataclass(frozen=True)
class Outcome:
    result: Result
    chunks: int = 0
    reason: str | None = None
    document_id: int | None = None


@dataclass(frozen=True)
class IngestOptions:
    chunking: ChunkingSettings
    limits: LimitsSettings
    max_file_bytes: int
    parsers: ParsePool

    def retry_for(self, form: str | None) -> str:
        """A failed or skipped file's reading with every limit that can make it fail:
        raising one reads again the files it failed (a parse timeout, a PDF past the
        memory limit), as a reader that now reads what it refused does."""
        limits = self.limits
        return (
            f"{self.convert_limits.reading_for(form, failed=True)}"
            f":{self.max_file_bytes}/{limits.max_text_chars}/{limits.max_chunks_per_file}"
            f":{limits.parse_timeout}/{limits.parse_memory_mb}"
        )

    @property
    def convert_limits(self) -> ConvertLimits:
        return ConvertLimits(
            read=ReadLimits(max_file_bytes=self.max_file_bytes, max_text_chars=self.limits.max_text_chars),
            target_chars=self.chunking.target_chars,
            overlap_chars=self.chunking.overlap_chars,
            max_chunks=self.limits.max_chunks_per_file,
        )


def needs_look(job: FileJob) -> bool:
    """mtime and size first: the cheap test that keeps an idle sweep from reading files
    (a file link's mtime too: see `Discovered.stamp`).

    A row left in `scanning` is a file a crash interrupted, and one stored under another
    reading (an older kenning's redaction, other chunk sizes) holds what this one would
    not store, and one that failed under other limits may pass now, so all are looked at.
    So is an indexed one whose time was less than `RACY_SECONDS` before its row was
    written: a file system keeps times to a second or two (FAT, HFS+, many network
    shares), so a second save of the same size within that time leaves the same stamp,
    and only its hash tells. Once the hash matches, the row's new write time settles it.
    A failed file is not: looking at it again means parsing it.

    A file dated ahead of the clock (copied with its date from a machine whose clock runs
    fast, or given a date to come) is timed by its inode's last change instead, which the
    kernel set from this machine's clock: timed by its date, it was hashed at every sweep
    until the clock caught up, a day or a year later. A rewrite that keeps the date
    changes the inode again, so it is still looked at. On a share whose server's clock
    runs fast both times are ahead, and such a file is hashed at every sweep as before:
    nothing tells when that clock's second is over. Only such a file: a file system
    that reports its creation time as the change time would weaken the rule for others.

    An indexed file whose inode changed after its row was written is looked at too: a
    file moved or hard-linked over it (`mv v2.md v1.md`, two versions unpacked from one
    archive with one mtime and size) keeps the stamp and size the row holds, and was
    cited for text that was no longer in it. A chmod or a new hard link changes the
    inode as well; that costs one hash, and the matching hash settles it. On a share
    whose server's clock runs fast, a file changed within that lead of its last read is
    hashed at each sweep until this clock passes its change time. So is one below a folder
    moved or renamed since its row was written (`walk._moved_since`): the files a folder
    swapped in brings keep their own ctime.
    """
    prior = job.prior
    if prior is None or prior.status == "scanning" or prior.reading != job.expected or job.recheck:
        return True
    written = prior.mtime
    if job.found.ctime is not None and prior.mtime > prior.updated_at:
        written = min(prior.mtime, job.found.ctime)
    if prior.status in ("done", "merged") and prior.updated_at - written < RACY_SECONDS:
        return True
    if prior.status in ("done", "merged") and max(job.found.ctime or 0.0, job.found.moved or 0.0) > prior.updated_at:
        return True
    return prior.mtime != job.found.stamp or prior.size != job.found.size


async def ingest(db: Database, job: FileJob, options: IngestOptions) -> Outcome:
    if not needs_look(job):
        return Outcome("unchanged")
    try:
        return await _ingest(db, job, options)
    except Exception as exc:
        _stop_if_unwritable(exc)
        # A bug or a store error on one file (a name the database cannot hold, say)
        # costs that file, never the sweep: the rest of the folder goes on.
        log.exception("could not ingest %s", job.found.path)
        reason = f"internal error: {reason_line(exc)}"
    # Recorded as failed under the limits it was tried with, so it is not parsed again
    # by every sweep, only once it changes or kenning reads files otherwise (an
    # upgrade); what it held from before stays searchable.
    found = job.found
    try:
        await documents.mark_broken(db, job.source_id, found.rel, reason, found.stamp, found.size, job.retry)
    except Exception as exc:
        _stop_if_unwritable(exc)
        # The store error that failed the file may fail this write too: the file is
        # then tried again by the next sweep, and the rest of this one goes on.
        log.exception("could not record the failure of %s", found.path)
    return Outcome("failed", reason=reason)


def _stop_if_unwritable(exc: Exception) -> None:
    if unwritable(exc):
        # A full disk or a read-only database would fail every file after this one
        # too, and could not even record why: the sweep stops and retries later.
        raise IndexUnwritable(f"cannot write the index: {exc}") from exc


async def _ingest(db: Database, job: FileJob, options: IngestOptions) -> Outcome:
    found, prior = job.found, job.prior
    timeout = options.limits.parse_timeout
    if prior is None:
        # Nothing to compare the hash with: the worker that parses the file hashes it
        # too, which saves a trip to a hashing thread for every file of a first sweep.
        document_id = await documents.mark_scanning(db, job.source_id, found.rel)
        args = (found.path, job.root, job.confine_to_root, options.max_file_bytes, options.convert_limits)
        reading = options.parsers.read(read_unseen, args, timeout)
    else:
        try:
            digest, resolved = await asyncio.to_thread(
                guarded_hash, found.path, job.root, job.confine_to_root, options.max_file_bytes
            )
        except ReaderError as exc:
            if isinstance(exc, AccessDenied) and prior.holds_text:
                # A chmod, or a file another user owns and closed: the text read before is
                # not known to be wrong, and dropping it would lose a note from search
                # until someone notices. Its row is left as it was, so the next sweep
                # looks again. So for text a failure of kenning's own kept: marked
                # failed for want of permission, it went.
                if prior.status == "scanning":
                    # A stop cut its last read short: left `scanning`, no sweep would
                    # settle. Failed for want of permission, not read (no reading, so
                    # every sweep tries it), it keeps that text as a failure of kenning's
                    # own does.
                    await documents.mark_broken(db, job.source_id, found.rel, str(exc), found.stamp, found.size, None)
                log.info("cannot read %s: %s; its last indexed text is kept", found.path, exc)
                return Outcome("unreadable", reason=str(exc))
            if isinstance(exc, AccessDenied) and prior.status == "failed" and prior.reading is None:
                if (prior.mtime, prior.size) == (found.stamp, found.size):
                    # Still shut, and its row says so already: each sweep tries it, and a
                    # folder of such files must not cost two writes each every time.
                    return Outcome("failed", reason=str(exc))
            document_id = await documents.mark_scanning(db, job.source_id, found.rel)
            return await _fail(db, document_id, job, exc)
        if prior.status in ("done", "merged") and prior.content_hash == digest and prior.reading == job.reading:
            # An editor that rewrites the same bytes changes the mtime and nothing else.
            await documents.touch(db, prior.id, found.stamp, found.size, dated=found.mtime)
            return Outcome("unchanged")
        document_id = await documents.mark_scanning(db, job.source_id, found.rel)
        reading = _hashed(digest, options.parsers.convert(resolved, found.path.stem, options.convert_limits, timeout))
    try:
        digest, converted = await reading
    except ReaderError as exc:
        log.info("failed %s: %s", found.path, exc)
        return await _fail(db, document_id, job, exc)
    except ParseInterrupted as exc:
        log.info("deferred %s: %s", found.path, exc)
        return Outcome("deferred", reason=str(exc))
    for warning in converted.warnings:
        # Indexed all the same: the rest of the file is worth finding, and the log says
        # what part of it a search will not find.
        log.warning("%s: %s", found.path, warning)
    if not converted.items:
        reason = "no text to index"
        await documents.mark_unindexed(db, document_id, "skipped", reason, found.stamp, found.size, job.retry)
        return Outcome("skipped", reason=reason)
    date, date_source = converted.stated or (dates.from_timestamp(found.mtime), "modified")
    meta = DocumentMeta(
        converted.title, converted.format, found.stamp, found.size, digest, converted.text_digest,
        date=date, date_source=date_source, date_end=converted.date_end, reading=job.reading,
    )  # fmt: skip
    stored, fresh = await documents.replace_items(db, document_id, meta, converted.items)
    if stored == "merged":
        return Outcome("merged", document_id=document_id)
    if stored == "indexed" and not fresh and job.prior is not None and job.prior.status == "done":
        # Read again and come out the same (an upgrade's re-read): nothing to embed, to
        # spend a budget on, or to look for near-duplicates of.
        return Outcome("unchanged", document_id=document_id)
    return Outcome("indexed", chunks=fresh, document_id=document_id)


async def _fail(db: Database, document_id: int, job: FileJob, exc: ReaderError) -> Outcome:
    found, reason = job.found, str(exc)
    # A file this user may not open was never read: recorded so (no reading), it is
    # looked at again by every sweep, so a chmod that lets it in is enough (a chmod
    # changes no mtime, which is all an idle sweep compares).
    reading = None if isinstance(exc, AccessDenied) else job.retry
    await documents.mark_unindexed(db, document_id, "failed", reason, found.stamp, found.size, reading)
    return Outcome("failed", reason=reason)


async def _hashed(digest: str, converting: Awaitable[Converted]) -> tuple[str, Converted]:
    return digest, await converting
