"""Text agents gave, prepared again when this code would store it otherwise.

A folder's files are read again by the next sweep when their format's reader, the
redactor or the chunk sizes change (ingest/convert.py). Agent text, fetched pages,
capsules, archives and ledger entries have no file to read again: what kenning stored
is the only copy. So at each start, after a reload that changes `[chunking]`, and with
the daemon's periodic round, every such document stored under another reading is
prepared again by its owner from what is stored, redacted and folded by the newest
rules. No format's reader reads it again, so only `READER_VERSION` and the chunk sizes
make it stale: an upgrade whose redactor catches more leaves no secret in what agents gave
before it, and a query folded the newest way finds it. With nothing stale, a round is
one read of those sources' rows.

Only what the older rules let through can change, since the stored text was redacted
when it arrived. Each document is stored in its own transaction, so a kill mid-way
leaves the rest for the next start. A document an agent changes meanwhile is left as
the agent left it.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from functools import partial

from kenning.config import ChunkingSettings
from kenning.errors import IndexUnwritable, InvalidRequest
from kenning.ingest import text_docs
from kenning.ingest.convert import reading_of
from kenning.service.archive import Archive
from kenning.service.ledger import Ledger
from kenning.service.memory import Memory
from kenning.store import documents
from kenning.store.database import Database, unwritable

log = logging.getLogger(__name__)


async def prepare_again(
    db: Database,
    chunking: Callable[[], ChunkingSettings],
    memory: Memory,
    archive: Archive,
    ledger: Ledger,
    failed: set[int],
) -> int:
    """Prepare again every stale document of the agent, web, capsule, archive and ledger
    sources; returns how many were stored. `chunking` gives the configured sizes, read
    anew each round, since a reload may change them mid-way. `failed` holds the
    documents that could not be stored in an earlier run since the start: they are not
    tried again (and logged again) each periodic round, but at the next start. A store
    that refuses every write (IndexUnwritable) stops the run, for the caller to run again.

    It goes round until no document it has not tried is stale: a sweep running beside
    it can hand a copy prepared under an older reading to agent text (a folder's file
    that held the same text read again, `ownership.release`)."""
    earlier = set(failed)
    tried = set(earlier)
    stored = 0
    while True:
        sizes = chunking()
        owners: dict[str, Callable[[int], Awaitable[bool]]] = {
            "agent": partial(text_docs.prepare_again, db, chunking=sizes),
            "url": partial(text_docs.prepare_again, db, chunking=sizes),
            "capsule": memory.prepare_again,
            "archive": archive.prepare_again,
            "ledger": ledger.prepare_again,
        }
        stale = await documents.stale_texts(db, reading_of(sizes.target_chars, sizes.overlap_chars), tuple(owners))
        stale = [(document_id, kind) for document_id, kind in stale if document_id not in tried]
        if not stale:
            break
        log.info("preparing again %d documents agents gave, stored under an older reading or chunk sizes", len(stale))
        if tried == earlier:
            # What has no document of its own but is still shown: replaced capsules and
            # pruned archives' titles.
            for again in (memory.prepare_superseded_again, archive.prepare_tombstones_again):
                try:
                    await again()
                except Exception:
                    log.exception("could not redact %s again", again.__name__)
        for document_id, kind in stale:
            tried.add(document_id)
            try:
                stored += await owners[kind](document_id)
            except InvalidRequest as exc:
                # Stored before the newest rules refused its like (a ledger host of dots
                # alone): it is kept as it was, readable and removable.
                failed.add(document_id)
                log.warning(
                    "document %d (%s) is kept as stored: the current rules refuse it: %s", document_id, kind, exc
                )
            except Exception as exc:
                if unwritable(exc):
                    # A full disk, a read-only file, a lock held elsewhere: no record is at
                    # fault, and every one after it would fail too. Marked failed, they
                    # were left unprepared (a secret a newer redactor masks, kept) until
                    # the next start, though the disk had room again a minute later.
                    raise IndexUnwritable(f"cannot write the index: {exc}") from exc
                # One record that cannot be stored again must not leave the others as they
                # were; it is tried at the next start.
                failed.add(document_id)
                log.exception("could not prepare document %d (%s) again", document_id, kind)
    if tried != earlier:
        log.info("prepared %d of %d documents again", stored, len(tried - earlier))
    return stored
