"""One file through the pipeline: change check → read → redact → chunk → store.

Everything that touches the disk or burns CPU runs in a worker thread; the store calls
run on the database threads. The event loop only sequences the steps.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from kenning.config import ChunkingSettings
from kenning.errors import ReaderError
from kenning.ingest.chunker import chunk_document
from kenning.ingest.readers import ReadResult, read_file
from kenning.ingest.redact import redact
from kenning.ingest.sensitive import is_sensitive_path
from kenning.ingest.walk import Discovered
from kenning.store import documents
from kenning.store.database import Database
from kenning.store.documents import DocumentMeta, FileState, NewItem
from kenning.store.texthash import text_hash

log = logging.getLogger(__name__)

HASH_BLOCK = 1 << 20

Result = Literal["indexed", "merged", "unchanged", "failed", "skipped"]


@dataclass(frozen=True)
class FileJob:
    source_id: int
    root: Path
    found: Discovered
    prior: FileState | None
    confine_to_root: bool


@dataclass(frozen=True)
class Outcome:
    result: Result
    chunks: int = 0
    reason: str | None = None
    document_id: int | None = None


@dataclass(frozen=True)
class IngestOptions:
    chunking: ChunkingSettings
    max_file_bytes: int


def needs_look(job: FileJob) -> bool:
    """mtime and size first: the cheap test that keeps an idle sweep from reading files.

    A row left in `scanning` is a file a crash interrupted, so it is always looked at.
    """
    prior = job.prior
    if prior is None or prior.status == "scanning":
        return True
    return prior.mtime != job.found.mtime or prior.size != job.found.size


async def ingest(db: Database, job: FileJob, options: IngestOptions) -> Outcome:
    if not needs_look(job):
        return Outcome("unchanged")
    found, prior = job.found, job.prior
    if prior is not None and prior.status in ("done", "merged"):
        # A file indexed before: hash first, since an editor that rewrites the same
        # bytes changes the mtime and nothing else.
        try:
            digest = await asyncio.to_thread(_guarded_hash, job)
        except ReaderError as exc:
            document_id = await documents.mark_scanning(db, job.source_id, found.rel)
            return await _fail(db, document_id, found, str(exc))
        if prior.content_hash == digest:
            await documents.touch(db, prior.id, found.mtime, found.size)
            return Outcome("unchanged")

    document_id = await documents.mark_scanning(db, job.source_id, found.rel)
    try:
        digest, parsed, items, text_digest = await asyncio.to_thread(_read_and_chunk, job, options)
    except ReaderError as exc:
        log.info("failed %s: %s", found.path, exc)
        return await _fail(db, document_id, found, str(exc))
    except Exception as exc:  # a reader or chunker bug must cost one file, not the sweep
        log.exception("unexpected error on %s", found.path)
        return await _fail(db, document_id, found, f"internal error: {type(exc).__name__}: {exc}")
    if not items:
        reason = "no text to index"
        await documents.mark_unindexed(db, document_id, "skipped", reason, found.mtime, found.size)
        return Outcome("skipped", reason=reason)
    meta = DocumentMeta(parsed.title, parsed.format, found.mtime, found.size, digest, text_digest)
    stored = await documents.replace_items(db, document_id, meta, items)
    if stored == "merged":
        return Outcome("merged", document_id=document_id)
    return Outcome("indexed", chunks=len(items), document_id=document_id)


async def _fail(db: Database, document_id: int, found: Discovered, reason: str) -> Outcome:
    await documents.mark_unindexed(db, document_id, "failed", reason, found.mtime, found.size)
    return Outcome("failed", reason=reason)


def _check_path(job: FileJob) -> Path:
    """Resolve links again at open time: the walk's verdict may be stale by now."""
    path = job.found.path
    try:
        resolved = path.resolve(strict=True)
    except OSError as exc:
        raise ReaderError(f"cannot open: {exc.strerror or exc}") from None
    if is_sensitive_path(path) or is_sensitive_path(resolved):
        raise ReaderError("refused: sensitive path")
    if job.confine_to_root and not resolved.is_relative_to(job.root.resolve()):
        raise ReaderError("refused: resolves outside the source root")
    return resolved


def _guarded_hash(job: FileJob) -> str:
    resolved = _check_path(job)
    digest = hashlib.sha256()
    try:
        with open(resolved, "rb") as handle:
            while block := handle.read(HASH_BLOCK):
                digest.update(block)
    except OSError as exc:
        raise ReaderError(f"cannot read: {exc.strerror or exc}") from None
    return digest.hexdigest()


def _read_and_chunk(job: FileJob, options: IngestOptions) -> tuple[str, ReadResult, list[NewItem], str]:
    """Hash, read, redact, chunk and hash the text in one worker-thread trip."""
    digest = _guarded_hash(job)
    parsed = read_file(_check_path(job), max_bytes=options.max_file_bytes)
    text = redact(parsed.text)
    # The redacted form is what gets stored, the document's title included, even when
    # that title is the file's name: the path itself stays as it is, since it is the
    # document's identity and what a citation must open.
    title = redact(parsed.title.strip() or job.found.path.stem)
    parsed = ReadResult(text=text, title=title, kind=parsed.kind, format=parsed.format, page_starts=parsed.page_starts)
    chunks = chunk_document(
        parsed,
        target_chars=options.chunking.target_chars,
        overlap_chars=options.chunking.overlap_chars,
    )
    items = [NewItem(title, chunk.section, chunk.text, chunk.line_start, chunk.line_end) for chunk in chunks]
    return digest, parsed, items, text_hash(item.content for item in items)
