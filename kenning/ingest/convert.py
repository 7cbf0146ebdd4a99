"""A file's bytes to stored chunks: read → redact → chunk, the CPU part of ingest.

It runs inside a parse worker (kenning.ingest.parse_pool), so it takes and returns
only picklable values, and what comes back to the daemon is the chunks alone, never the
parser's intermediate structures. What a worker runs lives here and below, never beside
the store's code (ingest/pipeline.py): each worker imports it when it starts, and the
store, aiosqlite and pydantic cost it 0.2-0.4 s of CPU it has no use for.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

from kenning.errors import AccessDenied, ReaderError
from kenning.ingest.chunker import chunk_document
from kenning.ingest.items import new_items
from kenning.ingest.readers import ReadLimits, ReadResult, open_regular, read_file
from kenning.ingest.redact import redact
from kenning.ingest.sensitive import is_sensitive_path
from kenning.store.records import NewItem
from kenning.store.texthash import text_hash
from kenning.text import dates
from kenning.text.headings import MAX_TITLE_CHARS, cut

# Read and hashed this much at a time.
HASH_BLOCK = 1 << 20

# Every document records the reading it was stored under (`reading_of`), and a sweep reads
# again the files stored under another, and the daemon's start prepares again the text
# agents gave (service/rereading.py), so an upgrade that redacts more leaves no secret in
# text stored before it. A chunk whose text comes out the same keeps its id, its vector
# and its CJK index rows, and takes its date anew: a change to CJK indexing alone needs a
# migration. Reading again costs a large library hours (a PDF's parse), so bump only what
# changed what a document's chunks hold:
# - READER_VERSION, for what every format shares and text agents gave goes through too:
#   the redactor, the chunker, the dates a text states, titles. Every file is read again
#   and everything agents gave prepared again.
# - FORMAT_VERSIONS[format], when one format's reader changed (`readers.reader_format`
#   names a file's format from its name): only that format's files are read again. Add
#   the format at 1 if it has no entry; when READER_VERSION is bumped, empty the map, since
#   every file is read again anyway.
# - RETRY_VERSIONS[format], when a reader now reads files it refused (failed or skipped)
#   and reads the others as before: only that format's failed and skipped files are read
#   again (pipeline.FileJob.expected). Emptied with READER_VERSION too.
# 11: the redactor masks a URL's password written without its scheme
# (`admin:X@intranet.local/admin`), which every stored text may hold. Not 10: a development
# build recorded that for a while, and what it stored must be read again too.
# 12: TOML front matter between `+++` fences (Hugo, Zola) dates and titles a note, which
# was dated by its file's mtime and titled by its heading; agents' text may open so too.
# A file named by a day without dashes (`20250918-standup.md`) speaks from that day. The
# redactor masks a URL's password of plain words before a private or a machine's host
# (`svc:letmein@intranet.local`), and a token that is a path's segment no longer takes
# the rest of the path with it (`/home/u/[REDACTED]/x`, not `/home/u/[REDACTED]`).
# It masks a token run into the word before it when its prefix is one no word holds
# (`ownghp_...`, `x_ghp_...`, `scAKIA...`, `mysk-proj-...`), and Slack's `xoxe-`.
# 13: a heading or line writing a day first with dots (`18.09.2025`) dates a note and
# its dated lines; such notes spoke from their file's mtime. Text in UTF-32 with a
# byte-order mark, refused as binary before, is read (readers.decode_text). A PDF whose
# pages give no size (no MediaBox), failed before, is read as US Letter (pdf_text).
# A heading, file name or front matter naming an ISO week ("Sprint review W38 2025",
# `2025-W38-review.md`) dates a note by the week's Monday through its Sunday (`date_end`);
# such notes were dated by the year alone.
# 14: a version written with dots ("v2.1.2025", "release 3.10.2025") dates nothing; such
# notes spoke from 2 January and 3 October 2025. A date in Han numerals ("二〇二五年九月十八日",
# "二零二五年") and a fiscal year ("FY25 results", `fy25-results.md`, as the calendar year)
# date a note; such notes spoke from their file's mtime.
# And HTML read as browsers read its end (text.html._Converter): a comment, declaration or
# tag still open at the end of a page runs to it, where its text up to the next `>` was
# read and the rest after it; pages of such markup failed at parse_timeout, and `<![foo[`
# failed the page. A PDF page with a malformed MediaBox or CropBox, failed before, is read
# (pdf_text). UTF-16 cut short by a byte, refused as binary when short or with no NUL, is
# read with its last character replaced (readers.decode_text). A year that ends a sentence
# ("# Plan for 2025.") dates a note; the full stop hid it. A bracket closed after a
# masked value ("[docs](/u?access_token=…)") stays in the text; it was masked with it.
# 15: a day first with dots after a version's word, of two digits each ("Release
# 18.09.2025"), dates a note; such notes spoke from their file's mtime. A lower-case "fy"
# a space apart from two digits ("fy 20 items") is no fiscal year; such notes spoke from
# 2020. Every ledger entry is prepared again too, so one keyed with its free text's
# closing bracket cut off ("see [rfc 9110") answers to its whole text (ledger_schema.py).
# 16: a secret's name with a number after it (`password2 = "x"`, `DB_PASSWORD2=x`,
# `webhookSecret2: x`) hides its value as the name alone does; such values were stored in
# clear (redact._is_secret_name); and so do the password options of `docker login -p`,
# `redis-cli -a`, `ldapsearch -w`, `zip -P`, `7z a -p`, `smbclient -U user%X` and
# `openssl -pass pass:X` or `openssl enc -k X`, `htpasswd -b`, `echo X | sudo -S`
# (redact._COMMAND_PASSWORDS), and `admin_pw = X` as `admin_pass = X`. A ledger
# credentials field named with a credential's word in it (`root_pw`, `ssh_key`,
# `nt_hash`, `creds`) keeps none of its value, and every ledger entry is prepared again,
# so none is left holding one (service/ledger.py).
# 17: the password of Windows' `net use \\srv\share X /user:ann` (or `/user:ann X`) and
# a legacy Vault service token (`s.` and 24 characters) where Vault is named as taking it
# (`X-Vault-Token:`, `VAULT_TOKEN=`, `vault login s.X`) are masked; they were stored in
# clear (redact._NET_USE, redact._VAULT_TOKEN).
# 18: the word after a `net use` share that is one of its answers, not a password
# (`net use Z: \\srv\share yes`), is kept; it was masked (redact._NET_USE_ANSWERS). And a
# front matter date of eight digits (`date: 20250305`) dates its note (text/dates.py).
# 19: so does a front matter date of a year, then a month and a day of one digit each
# (`date: 2025/3/5`); it dated its note by the year alone.
# 20: a Debian changelog's chunks speak from the line signing their entry (" -- Name <mail>
# Thu, 25 May 2023 ...", text/dates.py `changelog_dates`); they spoke from the file's mtime.
# 21: a short line among a document's first two that gives a whole date ("18 May 2026 —
# boiler", "Updated 12 May 2026") dates it where no heading does (text/dates.py
# `_opening_date`); such notes spoke from their file's mtime.
# 22: a day, week or quarter that does not exist (`date: 2026-02-30`, `2026-W60`, `Q5
# 2026`, `2026-02-30-notes.md`) dates nothing, and the note falls through to its next
# source; it was dated by the month or year left of it. Front matter takes an ISO date in
# the years `since` takes (`date: 2199-12-31`); such notes spoke from their file's mtime.
# A chunk keeps the earliest of its dated lines as well as the latest (items.date_first),
# so a search until a day among a log's lines finds the chunk holding it.
READER_VERSION = 22
FORMAT_VERSIONS: dict[str, int] = {}
RETRY_VERSIONS: dict[str, int] = {}


def reading_of(target_chars: int, overlap_chars: int, form: str | None = None, failed: bool = False) -> str:
    """What a document's chunks depend on besides its text: this code's reading of its
    format `form` (None for text agents gave, which no reader reads) and the chunk sizes
    (a larger size changes every chunk). `failed` for a file that failed or was skipped:
    its reader's retry version counts too. A reader with no version of its own reads as
    the last release did: its files keep the reading they were stored under."""
    marks = [f"v{READER_VERSION}"]
    if form is not None and (own := FORMAT_VERSIONS.get(form)):
        marks.append(f"{form}{own}")
    if form is not None and failed and (retry := RETRY_VERSIONS.get(form)):
        marks.append(f"{form}-retry{retry}")
    return f"{'+'.join(marks)}:{target_chars}/{overlap_chars}"


@dataclass(frozen=True)
class ConvertLimits:
    """Everything a conversion needs besides the path; one picklable value per job."""

    read: ReadLimits
    target_chars: int
    overlap_chars: int
    max_chunks: int

    def reading_for(self, form: str | None, failed: bool = False) -> str:
        """The reading a file of this format (`readers.reader_format`) is stored under.
        The limits are not in it: they only ever make a file fail (see
        `IngestOptions.retry_for`)."""
        return reading_of(self.target_chars, self.overlap_chars, form, failed)


@dataclass(frozen=True)
class Converted:
    title: str
    format: str
    items: list[NewItem]
    text_digest: str
    # The date the text states (front matter, file name, first heading) and where from.
    stated: tuple[str, str] | None = None
    # The last month of the period it names, when wider than the date shows (a quarter).
    date_end: str | None = None
    # What of the file could not be read though the rest was (ReadResult.warnings).
    warnings: tuple[str, ...] = ()


def convert_file(path: Path, fallback_title: str, limits: ConvertLimits) -> Converted:
    parsed = read_file(path, limits.read)
    # The redacted form (folded, text/unicode.py) is what gets stored, the document's
    # title included, even when that title is the file's name: the path itself stays as
    # it is, since it is the document's identity and what a citation must open.
    text = redact(parsed.text)
    if len(text) > limits.read.max_text_chars:
        # Folding can lengthen it: "ﷺ" is eighteen letters.
        raise ReaderError(f"text passes the {limits.read.max_text_chars}-character limit once its letters are folded")
    # Cut once redacted, so the cut cannot break a secret's shape and let it through.
    title = cut(redact(parsed.title.strip() or fallback_title), MAX_TITLE_CHARS)
    redacted = ReadResult(text=text, title=title, kind=parsed.kind, format=parsed.format, page_starts=parsed.page_starts)
    chunks = chunk_document(redacted, target_chars=limits.target_chars, overlap_chars=limits.overlap_chars)
    if len(chunks) > limits.max_chunks:
        raise ReaderError(f"makes {len(chunks)} chunks, over the {limits.max_chunks}-chunk limit per file")
    # The fallback title is the file's stem as the walk found it (not a link's target).
    stated, date_end = dates.document_period(text, fallback_title)
    items = new_items(title, chunks, dates.title_heading(text, stated), text)
    digest = text_hash(item.content for item in items)
    # Logged, and a warning may name what the file holds (a part's name, a parser's
    # quote of it): redacted as the text is.
    warnings = tuple(redact(warning) for warning in parsed.warnings)
    return Converted(title, parsed.format, items, digest, stated, date_end, warnings)


def count_chunks(path: Path, max_bytes: int, target_chars: int, overlap_chars: int) -> int:
    """In a parse worker, for `ken sources add`'s estimate (ingest/preview.py): the chunks
    a file makes, read as a sweep reads it; a ReaderError for one a sweep would fail."""
    parsed = read_file(path, ReadLimits(max_file_bytes=max_bytes))
    return len(chunk_document(parsed, target_chars=target_chars, overlap_chars=overlap_chars))


def read_unseen(
    path: Path, root: Path, confine_to_root: bool, max_bytes: int, limits: ConvertLimits
) -> tuple[str, Converted]:
    """In a parse worker: the hash and the chunks of a file with no state row yet."""
    digest, resolved = guarded_hash(path, root, confine_to_root, max_bytes)
    return digest, convert_file(resolved, path.stem, limits)


def guarded_hash(path: Path, root: Path, confine_to_root: bool, max_bytes: int) -> tuple[str, Path]:
    """The content hash and the path to read, checked again at open time.

    The size limit is checked on the open file before a byte is hashed, so a file over
    it (a 20 GB log, say) is refused at the cost of a stat, however often it changes.
    """
    resolved = check_path(path, root, confine_to_root)
    digest = hashlib.sha256()
    try:
        with open(open_regular(resolved, max_bytes), "rb") as handle:
            while block := handle.read(HASH_BLOCK):
                digest.update(block)
    except OSError as exc:
        raise ReaderError(f"cannot read: {exc.strerror or exc}") from None
    return digest.hexdigest(), resolved


def check_path(path: Path, root: Path, confine_to_root: bool) -> Path:
    """Resolve links again at open time: the walk's verdict may be stale by now.

    `os.path.realpath`, not `Path.resolve`: on Python 3.11 a link loop made since the walk
    makes the latter raise RuntimeError, which failed the file as an internal error."""
    try:
        resolved = Path(os.path.realpath(path, strict=True))
    except PermissionError:
        # A folder on the way closed since the walk (`chmod -R 644` takes the search bit
        # off): refused for want of permission, an indexed file keeps its text, as one
        # whose own mode shuts it does. Failed as unreadable, its text went.
        raise AccessDenied("permission denied") from None
    except OSError as exc:
        raise ReaderError(f"cannot open: {exc.strerror or exc}") from None
    if is_sensitive_path(path) or is_sensitive_path(resolved):
        raise ReaderError("refused: sensitive path")
    if confine_to_root and not resolved.is_relative_to(root.resolve()):
        raise ReaderError("refused: resolves outside the source root")
    return resolved
