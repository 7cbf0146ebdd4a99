"""Archive and recall by handle: an agent parks a large text and gets a short handle back.

The text (a tool output, a transcript, a log) is redacted, stored whole and indexed as a
document of the `archive` source, so search finds it (`kind` archive) and cites it by its
uri, `kenning://archive/<handle>`. `recall(handle, offset, limit)` pages through the
stored text by characters: the pages concatenate back to it exactly. The handle comes
from the stored text's digest, so archiving the same output again returns the same
handle, with the title and tags it was first archived with, and a note saying so (and
naming a new title or tags given, which are not recorded); two texts whose short handles
clash get longer ones.

Retention: archives not archived for `[archive] max_age_days` go, and the least recently
archived go while the archives together exceed `max_total_mb`. The same text archived
again counts as archived now: its caller was just handed the handle and expects to
recall it, and by the time of its first archiving it was the first retention took.
Pruning runs after each archive and with the daemon's periodic round; a pruned handle
leaves a tombstone, so recall says when and why.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time

from kenning.api import Archived, ArchiveEntry, ArchiveList, ArchivePage
from kenning.config import Settings
from kenning.errors import InvalidRequest, NotFound
from kenning.ingest.redact import redact
from kenning.ingest.text_docs import check_title
from kenning.ingest.text_prep import Labels, PreparedText, prepare_text, visible
from kenning.service import paging
from kenning.service.handles import check_version, digest_handle
from kenning.store import archives, documents, sources
from kenning.store.archives import ArchiveRow
from kenning.store.database import Database
from kenning.text.controls import CONTROL

log = logging.getLogger(__name__)

URI_PREFIX = "kenning://archive/"
HANDLE_CHARS = 8
TITLE_CHARS = 120
DAY = 86400.0
MB = 1_000_000
# Rows read at a time while retention walks the oldest archives past max_total_mb.
PRUNE_PAGE = 200


# A character that shows: neither a space nor a control character or bidirectional
# override, which show nothing, or reorder what shows, where a title is printed on one line.
_SHOWN = re.compile(r"[^\s" + CONTROL.pattern[1:])
# Where str.splitlines() ends a line.
_LINE_END = re.compile(r"[\n\r\x0b\x0c\x1c-\x1e\x85\u2028\u2029]")
_WORD = re.compile(r"\S+")


def default_title(text: str) -> str:
    """The first line with words in it, as a tool output's first line usually says what it
    is; its first TITLE_CHARS characters, spaces collapsed. Found by a search for the
    first character that shows, and read word by word only as far as the title goes: it
    runs on the event loop, where going through every line of 10 MB of blank ones held
    it for 2.7 s."""
    shown = _SHOWN.search(text)
    if shown is None:
        return "archived text"
    end = _LINE_END.search(text, shown.start())
    line = CONTROL.sub(" ", text[shown.start() : end.start() if end else len(text)])
    words: list[str] = []
    length = -1
    for word in _WORD.finditer(line):
        words.append(word[0])
        length += len(word[0]) + 1
        if length >= TITLE_CHARS:
            break
    return " ".join(words)[:TITLE_CHARS]


def entry(row: ArchiveRow) -> ArchiveEntry:
    return ArchiveEntry(row.handle, row.title, row.chars, row.bytes, row.created_at)


class Archive:
    def __init__(self, db: Database, settings: Settings) -> None:
        self.db = db
        self.settings = settings
        self._lock = asyncio.Lock()

    async def add(self, text: str, title: str | None = None, tags: tuple[str, ...] = ()) -> Archived:
        if title is not None:
            check_title(title)
        # Text of spaces or zero-width characters alone was kept as an archive of no chunks,
        # which `get` of its uri called empty, or of no characters, recalled as "". Off the
        # loop: ten million zero-width spaces are a long walk.
        if not await asyncio.to_thread(visible, text):
            raise InvalidRequest("the text is blank: it holds nothing but spaces, line breaks or invisible characters")
        labels = Labels(title or default_title(text), "", tags)
        prepared = await asyncio.to_thread(
            prepare_text, labels, text, "prose", self.settings.chunking, format="archive"
        )
        size = len(prepared.text.encode())
        limit = self.settings.archive.max_total_mb * MB
        if limit and size > limit:
            raise InvalidRequest(
                f"the text is {size / MB:.1f} MB, more than all archives may hold ([archive] max_total_mb ="
                f" {self.settings.archive.max_total_mb:g})"
            )
        digest = prepared.meta.content_hash
        async with self._lock:
            known = await archives.by_digest(self.db, digest)
            if known is not None:
                await archives.keep_again(self.db, known.handle, time.time())
                note = await self._kept_note(known, prepared.labels, title is not None)
                return Archived(
                    known.handle, known.title, known.chars, known.bytes, 0, known.document_id,
                    URI_PREFIX + known.handle, existing=True, note=note,
                )  # fmt: skip
            handle = await self._handle(digest)
            now = time.time()
            document_id, chunks = await self._save(handle, prepared, digest, now, now)
            pruned = await self._prune(keep=handle)
        return Archived(
            handle, prepared.labels.title, len(prepared.text), size, chunks, document_id, URI_PREFIX + handle,
            existing=False, pruned=pruned,
        )  # fmt: skip

    async def _kept_note(self, known: ArchiveRow, asked: Labels, titled: bool) -> str:
        """What an archive of text already held kept, and what of this call it did not.

        The text is stored once, under the handle and title it was first archived with,
        which whoever holds that handle still expects. A new title or new tags are not
        written over them, and the caller is told so instead of getting the old title
        back as though it were theirs."""
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(known.created_at))
        note = f"this text was archived before, {when}, as {known.title!r}; it is kept once, as it was"
        record = await documents.text_record(self.db, known.document_id)
        held = set(record.tags) if record is not None else set()
        dropped = []
        if titled and asked.title != known.title:
            dropped.append(f"the title {asked.title!r}")
        if new_tags := [tag for tag in asked.tags if tag not in held]:
            dropped.append(f"the tag{'s' * (len(new_tags) > 1)} {', '.join(repr(tag) for tag in new_tags)}")
        if dropped:
            plural = len(dropped) > 1 or len(new_tags) > 1
            note += f", and {' and '.join(dropped)} {'were' if plural else 'was'} not recorded"
        return note

    async def prepare_again(self, document_id: int) -> bool:
        """Store an archive again as this code prepares text (rereading.py): its stored
        text and title redacted and folded by the newest rules, under the same handle,
        which the agent may still hold. Whether it was stored."""
        async with self._lock:
            row = await archives.by_document(self.db, document_id)
            record = await documents.text_record(self.db, document_id)
            if row is None or record is None:
                return False
            text = await archives.read(self.db, row.handle, 0, row.chars)
            prepared = await asyncio.to_thread(
                prepare_text, Labels(row.title, "", record.tags), text, "prose", self.settings.chunking,
                format="archive", added=row.created_at,
            )  # fmt: skip
            digest = prepared.meta.content_hash
            holder = await archives.by_digest(self.db, digest)
            if holder is not None and holder.handle != row.handle:
                # Another archive holds this text now: archiving it again finds that one.
                digest = row.digest
            await self._save(row.handle, prepared, digest, row.created_at, row.kept_at)
            return True

    async def _save(
        self, handle: str, prepared: PreparedText, digest: str, created_at: float, kept_at: float
    ) -> tuple[int, int]:
        """Store prepared text under `handle`, new or again; (document id, chunks)."""
        segments = await asyncio.to_thread(archives.segments, prepared.text)
        row = ArchiveRow(
            handle, 0, prepared.labels.title, len(prepared.text), len(prepared.text.encode()), digest, created_at,
            kept_at,
        )  # fmt: skip
        source_id = await sources.aggregate_source(self.db, "archive")
        return await archives.save(
            self.db, row, segments, source_id, URI_PREFIX + handle, prepared.meta, prepared.items
        )

    async def prepare_tombstones_again(self) -> int:
        """A pruned archive leaves its title behind, which `recall` of its handle shows:
        redact those by the newest rules too (rereading.py). How many changed."""
        async with self._lock:
            titles = await archives.tombstone_titles(self.db)
            changed = {handle: again for handle, title in titles.items() if (again := redact(title)) != title}
            if changed:
                await archives.retitle_tombstones(self.db, changed)
            return len(changed)

    async def _handle(self, digest: str) -> str:
        """The shortest handle from the digest that names no other text, live or pruned."""
        raw = bytes.fromhex(digest)
        length = HANDLE_CHARS
        while True:
            handle = digest_handle("a", raw, length)
            live = await archives.by_handle(self.db, handle)
            gone = await archives.tombstone(self.db, handle)
            if (live is None or live.digest == digest) and (gone is None or gone.digest == digest):
                return handle
            length += 2

    async def recall(
        self, handle: str, offset: int = 0, limit: int = 20_000, version: str | None = None
    ) -> ArchivePage:
        """`version`, from an earlier page: refused if the archive holds another text now
        (stored again, redacted by a newer kenning), whose offsets are not the old one's."""
        page = await archives.page(self.db, handle, offset, limit)
        if page is None:
            gone = await archives.tombstone(self.db, handle)
            if gone is not None:
                when = time.strftime("%Y-%m-%d %H:%M", time.localtime(gone.pruned_at))
                raise NotFound(f"archive {handle} ({gone.title!r}) was pruned {when}: {gone.reason}")
            raise NotFound(f"no archive {handle}; `ken archive list` shows them")
        row = page.row
        check_version(version)
        if version is not None and version != page.version:
            raise InvalidRequest(
                f"archive {handle} was stored again since version {version} (it is version {page.version} now, of"
                f" {row.chars} characters): pages of the two are not one text; read it again from offset 0"
            )
        if offset > row.chars or (offset == row.chars and row.chars > 0):
            raise InvalidRequest(f"offset {offset} is past the end: archive {handle} holds {row.chars} characters")
        end = offset + len(page.text)
        return ArchivePage(
            handle, row.title, offset, page.text, row.chars, end if end < row.chars else None, row.created_at,
            page.version,
        )  # fmt: skip

    async def listing(self, limit: int, offset: int, cursor: str | None) -> ArchiveList:
        after = None
        if cursor is not None:
            position = paging.decode(cursor, "archive.list", {})
            after = (position.created_at, position.id)
        rows, total, total_bytes, more = await archives.listing(self.db, limit, offset, after)
        following = None
        if more:
            following = paging.encode("archive.list", {}, paging.Position(rows[-1].created_at, rows[-1].handle))
        return ArchiveList([entry(row) for row in rows], total, total_bytes, following)

    async def prune(self) -> list[str]:
        async with self._lock:
            return await self._prune()

    async def _prune(self, keep: str | None = None) -> list[str]:
        """Apply retention; `keep` (the archive just written) is never chosen."""
        settings = self.settings.archive
        doomed: list[tuple[ArchiveRow, str]] = []
        # Read only the rows retention may take: every row on each add was a scan of
        # every archive, on each add, for a list that nearly always comes out empty.
        if settings.max_age_days:
            cutoff = time.time() - settings.max_age_days * DAY
            reason = f"not archived within [archive] max_age_days = {settings.max_age_days:g}"
            aged = await archives.oldest_first(self.db, before=cutoff)
            doomed = [(row, reason) for row in aged if row.handle != keep]
        if settings.max_total_mb:
            total = await archives.total_bytes(self.db) - sum(row.bytes for row, _ in doomed)
            reason = (
                "the least recently archived while archives exceeded [archive] max_total_mb ="
                f" {settings.max_total_mb:g}"
            )
            last = doomed[-1][0] if doomed else None
            after = (last.kept_at, last.handle) if last is not None else None
            while total > settings.max_total_mb * MB:
                page = await archives.oldest_first(self.db, after=after, limit=PRUNE_PAGE)
                if not page:
                    break
                after = (page[-1].kept_at, page[-1].handle)
                for row in page:
                    if total <= settings.max_total_mb * MB:
                        break
                    if row.handle != keep:
                        total -= row.bytes
                        doomed.append((row, reason))
        if doomed:
            await archives.prune(self.db, doomed)
            log.info("archive retention pruned %d archives", len(doomed))
        return [row.handle for row, _ in doomed]
