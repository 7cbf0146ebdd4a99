"""Turn a file on disk into text plus the hints the chunker needs.

Every failure becomes a ReaderError whose message is stored as the file's reason, so the
ingest loop can record it and move on instead of dying on one bad document. The one
exception is MemoryError, which propagates: the parse pool that runs these readers under
an address-space limit turns it into a reason that names the limit.

Readers stop at `ReadLimits`: a file is opened only if it is a regular file (a FIFO
swapped in after the walk would block the open forever), its size is checked before a
byte is read, gzip is inflated only up to the file-size limit, and extracted text stops
at the character cap, so a small hostile file cannot grow without bound.

What the rich formats give: a PDF its text layer, page by page; a DOCX its body
(headings, lists, tables, text boxes, content controls, ruby, equations, imported HTML
and text; no table of contents), then its footnotes, endnotes and comments, then its
headers and footers; HTML its text as Markdown, without scripts.
"""

from __future__ import annotations

import codecs
import collections
import gzip
import io
import os
import re
import stat
import unicodedata
import zlib
from dataclasses import dataclass
from pathlib import Path

from kenning.errors import MAX_DETAIL_CHARS, AccessDenied, ReaderError, TextCapReached
from kenning.ingest.redact import redact
from kenning.text import frontmatter
from kenning.text.html import first_h1, html_to_markdown, meta_charset

_MARKDOWN_EXTENSIONS = frozenset({".md", ".markdown"})
_PROSE_EXTENSIONS = frozenset({"", ".txt", ".org", ".rst", ".text"})
CODE_EXTENSIONS: frozenset[str] = frozenset(
    {
        ".py", ".js", ".mjs", ".cjs", ".ts", ".tsx", ".jsx", ".java", ".go", ".rs",
        ".c", ".cc", ".cpp", ".h", ".hpp", ".cs", ".rb", ".sh", ".bash", ".zsh",
        ".ps1", ".psm1", ".psd1", ".php", ".swift", ".kt", ".scala", ".lua", ".sql",
        ".r", ".pl",
    }
)  # fmt: skip
_DATA_EXTENSIONS = frozenset(
    {
        ".csv", ".tsv", ".log", ".json", ".jsonl", ".ndjson", ".yaml", ".yml",
        ".toml", ".ini", ".cfg", ".xml",
    }
)  # fmt: skip
_HTML_EXTENSIONS = frozenset({".html", ".htm"})
_TEXT_EXTENSIONS = _MARKDOWN_EXTENSIONS | _PROSE_EXTENSIONS | CODE_EXTENSIONS | _DATA_EXTENSIONS | _HTML_EXTENSIONS
SUPPORTED_EXTENSIONS: frozenset[str] = _TEXT_EXTENSIONS | {".docx", ".pdf"}
# Read through gzip when the name under it is a text type (README.md.gz, changelog.gz);
# a PDF or DOCX is already compressed inside, and gzipping one is rare.
GZIP_SUFFIX = ".gz"
# Archives and other compressors: counted by the walk, never opened.
OTHER_COMPRESSED_SUFFIXES = frozenset(
    {
        ".bz2", ".xz", ".lz", ".lzma", ".lz4", ".zst", ".z", ".zip", ".7z", ".rar", ".tar",
        ".tgz", ".tbz", ".tbz2", ".txz", ".tzst",
    }
)  # fmt: skip
UNSUPPORTED_TYPE = "unsupported type"
COMPRESSED_UNSUPPORTED = "compressed (unsupported inside)"

_READ_STEP = 1 << 20
# How much of a file the binary and encoding sniffers look at.
_SNIFF_BYTES = 8192
# Control characters (category Cc) and the replacement character, less the controls that
# ordinary text carries: backspace (overstrike in old manuals), tab, newlines, form feed
# and escape (ANSI colour in logs).
_NOT_TEXT = re.compile("[\x00-\x07\x0e-\x1a\x1c-\x1f\x7f-\x9f\ufffd]")
# More of those than this share of the sniffed text means it was never text: random
# bytes that happen to hold no NUL decode to about a tenth controls.
_MAX_CONTROL_SHARE = 0.02


@dataclass(frozen=True)
class ReadLimits:
    """Where a reader stops; a file past a limit fails with a reason naming it."""

    max_file_bytes: int = 50 * 1024 * 1024
    max_text_chars: int = 10_000_000


@dataclass(frozen=True)
class ReadResult:
    """A file's text plus what the chunker needs; page_starts saves it re-reading a PDF."""

    text: str
    title: str
    kind: str
    format: str
    page_starts: tuple[int, ...] = ()
    # What of the file could not be read though the rest was (a part of a DOCX of a type
    # kenning has no reader for), each naming that part.
    warnings: tuple[str, ...] = ()


def reader_suffix(name: str) -> tuple[str, bool] | str:
    """The suffix that picks a file's reader and whether it is gzipped, or why it has none.

    Debian's notes (README.Debian, changelog.Debian.amd64.gz) carry the distribution in
    their suffix; they are plain text, so they read as extensionless files.
    """
    lower = name.lower()
    compressed = lower.endswith(GZIP_SUFFIX) and len(lower) > len(GZIP_SUFFIX)
    if compressed:
        lower = lower[: -len(GZIP_SUFFIX)]
    suffix = _suffix(lower)
    if suffix not in SUPPORTED_EXTENSIONS and "debian" in lower.split(".")[1:]:
        suffix = ""
    if compressed:
        return (suffix, True) if suffix in _TEXT_EXTENSIONS else COMPRESSED_UNSUPPORTED
    if suffix in SUPPORTED_EXTENSIONS:
        return suffix, False
    return COMPRESSED_UNSUPPORTED if suffix in OTHER_COMPRESSED_SUFFIXES else UNSUPPORTED_TYPE


def reader_format(name: str) -> str | None:
    """The format (`ReadResult.format`) whose reader reads a file of this name, or None
    when none does: told before a byte is read, so a sweep knows from the name alone
    which format's reading a stored file must match (ingest/convert.py)."""
    kind = reader_suffix(name)
    return None if isinstance(kind, str) else _format_of(kind[0])


def _format_of(suffix: str) -> str:
    if suffix in (".pdf", ".docx"):
        return suffix[1:]
    if suffix in _HTML_EXTENSIONS:
        return "html"
    if suffix in _MARKDOWN_EXTENSIONS:
        return "markdown"
    if suffix in CODE_EXTENSIONS:
        return "code"
    if suffix in _DATA_EXTENSIONS:
        return "data"
    return "text"


def decode_text(data: bytes) -> str:
    """Decode bytes of unknown encoding, or raise ReaderError when they are not text.

    UTF-16 without a BOM is recognised by its NUL bytes. In Latin-script text they fall
    on one side of most pairs, and it is kept if it decodes to printable text; Greek,
    Cyrillic or CJK text has them only in its spaces, digits and line ends, and is kept
    only if it reads as the text of one or two scripts (`_non_latin_utf16`). Any other
    NUL-bearing data is binary. Such text with no space, digit or line end has no NUL at
    all (a line of Japanese): bytes that are no UTF-8 are read as it when they pass the
    same test, and failed as binary before. Of an odd count (a file cut short), the last
    byte is read as U+FFFD, as a character cut short is in any encoding. A byte that is not part of UTF-8 is read as Windows-1252,
    the usual legacy encoding, else latin-1, which maps every byte; so the share of
    control characters is what tells text from noise.
    """
    if data.startswith((codecs.BOM_UTF32_LE, codecs.BOM_UTF32_BE)):
        # Before UTF-16's: the little-endian marks share their first two bytes.
        text = data.decode("utf-32", errors="replace")
    elif data.startswith((b"\xff\xfe", b"\xfe\xff")):
        text = data.decode("utf-16", errors="replace")
    elif data.startswith(b"\xef\xbb\xbf"):
        text = _decode_legacy(data[3:])
    elif b"\0" in data[:_SNIFF_BYTES]:
        encoding = _utf16_without_bom(data[:_SNIFF_BYTES])
        if encoding is None:
            raise ReaderError("binary content (NUL bytes), not text")
        text = data.decode(encoding, errors="replace")
    elif encoding := _utf16_without_nuls(data):
        text = data.decode(encoding, errors="replace")
    else:
        text = _decode_legacy(data)
    # A character cut short at the end of a file (UTF-16 of an odd byte count) is one
    # U+FFFD, no sign of binary: counted, it refused a short note cut so.
    if _mostly_controls(text[:_SNIFF_BYTES].removesuffix("\ufffd")):
        raise ReaderError("binary content (control characters), not text")
    return _line_breaks(text)


def _line_breaks(text: str) -> str:
    """Lines as the tools a citation is read with count them: sed, grep -n, less and vim
    end a line at LF (CRLF included), and a lone CR inside a line (a progress bar redrawn
    in a log, a stray one pasted in) is no break to them, so it becomes a space; were it a
    break, every line cited after it would be off. Only a file with no LF at all (a
    classic Mac file) has its lines ended by CR."""
    text = text.replace("\r\n", "\n")
    if "\n" in text:
        return text.replace("\r", " ")
    return text.replace("\r", "\n")


def _utf16_without_bom(sample: bytes) -> str | None:
    """'utf-16-le' or 'utf-16-be' when the sample reads as UTF-16, else None.

    Latin-script UTF-16 has a NUL as the high byte of most characters; binary data has
    NULs on both sides. Greek, Cyrillic or CJK text has a NUL only in its spaces, digits
    and line ends, too few to tell it by; unless it is UTF-8 text with a stray NUL, it
    is told by reading it (`_non_latin_utf16`), the side holding more NULs first, since
    a character such as "一" (U+4E00) puts a NUL on the other.
    """
    sample = sample[: len(sample) // 2 * 2]
    pairs = len(sample) // 2
    if not pairs:
        return None
    even_nuls = sample[0::2].count(0)
    odd_nuls = sample[1::2].count(0)
    if odd_nuls > pairs * 0.3 and even_nuls < pairs * 0.02:
        return "utf-16-le"
    if even_nuls > pairs * 0.3 and odd_nuls < pairs * 0.02:
        return "utf-16-be"
    if _utf8_text(sample):
        return None
    order = ("utf-16-le", "utf-16-be") if odd_nuls >= even_nuls else ("utf-16-be", "utf-16-le")
    return next((encoding for encoding in order if _non_latin_utf16(sample, encoding)), None)


def _utf16_without_nuls(data: bytes) -> str | None:
    """'utf-16-le' or 'utf-16-be' when `data`, which holds no NUL, is non-Latin text in
    UTF-16; little-endian first, as Windows writes it.

    Text in a legacy East Asian encoding holds no NUL either, and a line of it can read
    as UTF-16 of one or two scripts (`_non_latin_utf16`): Shift_JIS as ideographs, GB2312
    as Hangul. Those come out as characters the region's everyday character sets mostly
    lack (`_everyday_east_asian`), which the text of a person rarely does."""
    if _utf8_text(data[:_SNIFF_BYTES]):
        return None
    sample = data[:_SNIFF_BYTES]
    return next(
        (
            encoding
            for encoding in ("utf-16-le", "utf-16-be")
            if _non_latin_utf16(sample, encoding) and _everyday_east_asian(sample.decode(encoding, errors="replace"))
        ),
        None,
    )


# The everyday character sets of Chinese, Japanese and Korean text, and how much of a
# text's East Asian letters must be in one of them. Not GBK nor CP949: they hold every
# ideograph and syllable, and so tell nothing.
_EVERYDAY_SETS = ("gb2312", "big5", "cp932", "euc_kr")
_MIN_EVERYDAY_SHARE = 0.95


def _everyday_east_asian(text: str) -> bool:
    """Whether the ideographs, kana and Hangul of `text`, if any, are mostly ones the
    everyday character sets hold. euc_kr writes a syllable outside KS X 1001 as eight
    bytes: only two-byte ones count."""
    letters = [char for char in text if char >= "\u0100" and _script(char) in (*_EAST_ASIAN, "HANGUL")]
    everyday = sum(any(_in_set(char, name) for name in _EVERYDAY_SETS) for char in letters)
    return everyday >= len(letters) * _MIN_EVERYDAY_SHARE


def _in_set(char: str, encoding: str) -> bool:
    try:
        return len(char.encode(encoding)) <= 2
    except UnicodeEncodeError:
        return False


# Fewer characters past Latin-1 than this are too few to tell text from noise by.
_MIN_NON_LATIN = 16
# Letters of these share one writing system: Japanese mixes kanji and both kana. Hangul
# is a script of its own, as Korean is written with little Han, while bytes that are no
# UTF-16 read as Han and Hangul mixed.
_EAST_ASIAN = frozenset({"CJK", "HIRAGANA", "KATAKANA", "KATAKANA-HIRAGANA", "BOPOMOFO", "FULLWIDTH", "HALFWIDTH"})


def _non_latin_utf16(sample: bytes, encoding: str) -> bool:
    """Whether a sample holding NULs, and no UTF-8 text, is text of a non-Latin script
    in `encoding`.

    Anything else that holds NULs comes out as characters from all over the table. So
    the sample must decode with no half surrogate pair (random bytes hold one every 32
    characters), and past Latin-1 must hold nothing unassigned or private, almost only
    letters, marks, punctuation and spaces, and letters of one or two scripts.
    Windows-1252 text read so fails on its spaces and accents (U+2065, U+E9xx), Greek read
    with the wrong byte order on its line ends (U+0A00).
    """
    try:
        text = codecs.getincrementaldecoder(encoding)().decode(sample)
    except UnicodeDecodeError:
        return False
    if _mostly_controls(text):
        return False
    wide = [char for char in text if char >= "\u0100"]
    categories = [unicodedata.category(char) for char in wide]
    if len(wide) < _MIN_NON_LATIN or any(category in ("Cn", "Co") for category in categories):
        return False
    if sum(category[0] in "LMPZ" for category in categories) < len(wide) * 0.9:
        return False
    scripts = collections.Counter(_script(char) for char, category in zip(wide, categories) if category[0] == "L")
    return sum(count for _, count in scripts.most_common(2)) >= sum(scripts.values()) * 0.9


def _script(letter: str) -> str:
    """The script a letter is written in, as the first word of its Unicode name says."""
    word = unicodedata.name(letter, "").partition(" ")[0]
    return "CJK" if word in _EAST_ASIAN else word


def _utf8_text(sample: bytes) -> bool:
    """Whether `sample` is UTF-8 text but for its NULs (a NUL dropped inside a character
    breaks it), though it may end inside a character. Russian in UTF-16 is valid UTF-8
    too (U+0430 is the bytes 0x30 0x04), but a control character every other byte is no
    text."""
    try:
        text = codecs.getincrementaldecoder("utf-8")().decode(sample.replace(b"\0", b""))
    except UnicodeDecodeError:
        return False
    return not _mostly_controls(text)


# A byte that is no part of UTF-8, as surrogateescape leaves it, to what it is in
# Windows-1252 (or in latin-1, for the five bytes Windows-1252 leaves undefined).
_LEGACY = {0xDC80 + i: bytes([0x80 + i]).decode("cp1252", errors="ignore") or chr(0x80 + i) for i in range(128)}
# The same, for text decoded as latin-1 (which maps every byte to the code point of its value).
_LATIN1_TO_CP1252 = {0x80 + i: _LEGACY[0xDC80 + i] for i in range(128)}
_STRAY = re.compile("[\udc80-\udcff]")


def _decode_legacy(data: bytes) -> str:
    """UTF-8; failing that, Windows-1252, unless it is mostly UTF-8 with a few stray
    bytes (a paste from an old file), which are read as Windows-1252 one by one: one
    such byte must not turn every "é" of the file into "Ã©". A file written in
    Windows-1252 holds more bytes that are no UTF-8 than pairs that happen to be ("ß“"
    is a valid two-byte sequence), and is read whole as such."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        pass
    escaped = data.decode("utf-8", errors="surrogateescape")
    stray = len(_STRAY.findall(escaped))
    multibyte = len(escaped) - len(escaped.encode("ascii", errors="ignore")) - stray
    if multibyte > stray:
        return escaped.translate(_LEGACY)
    return data.decode("latin-1").translate(_LATIN1_TO_CP1252)


def _mostly_controls(sample: str) -> bool:
    return len(_NOT_TEXT.findall(sample)) > len(sample) * _MAX_CONTROL_SHARE


def open_regular(path: Path, max_bytes: int) -> int:
    """An open descriptor on `path`, which must be a regular file of at most `max_bytes`.

    O_NONBLOCK keeps the open itself from waiting on a FIFO (one could replace the file
    after the walk saw it); the type and size are then checked on the open descriptor,
    so nothing is read from a file that is not a regular one or is too large.
    """
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except PermissionError:
        raise AccessDenied("permission denied") from None
    except FileNotFoundError:
        raise ReaderError("file not found") from None
    except IsADirectoryError:
        raise ReaderError("is a directory, not a file") from None
    except OSError as exc:
        raise ReaderError(f"cannot read file: {exc.strerror or exc}") from None
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise ReaderError("is a directory, not a file")
        if not stat.S_ISREG(info.st_mode):
            raise ReaderError("not a regular file (a FIFO, socket or device)")
        if info.st_size > max_bytes:
            raise ReaderError(f"file is {info.st_size} bytes, over the {max_bytes}-byte limit")
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_file(path: Path, limits: ReadLimits = ReadLimits()) -> ReadResult:
    """Read one file; any failure surfaces as ReaderError so one bad file cannot stop ingest."""
    kind = reader_suffix(path.name)
    if isinstance(kind, str):
        raise ReaderError(f"{kind} {_suffix(path.name)!r}")
    suffix, compressed = kind
    data = _read_bytes(path, limits.max_file_bytes, compressed)
    stem = path.name[: -len(GZIP_SUFFIX)] if compressed else path.name
    stem = stem[: len(stem) - len(_suffix(stem))] or stem
    try:
        result = _convert(stem, suffix, data, limits)
    except (ReaderError, MemoryError):
        raise
    except Exception as exc:
        if _caused_by_memory(exc):
            raise MemoryError(str(exc)) from exc
        # Parsers for PDF/DOCX raise a zoo of their own types on damaged input; the
        # contract is that only ReaderError leaves this function.
        raise ReaderError(f"cannot read {_format_name(suffix)}: {reason_line(exc)}") from exc
    if len(result.text) > limits.max_text_chars:
        raise TextCapReached(limits.max_text_chars)
    return result


def _read_bytes(path: Path, max_bytes: int, compressed: bool) -> bytes:
    fd = open_regular(path, max_bytes)
    try:
        with open(fd, "rb") as handle:
            if compressed:
                with gzip.GzipFile(fileobj=handle) as inflating:
                    data = _read_at_most(inflating, max_bytes + 1)
                if len(data) > max_bytes:
                    raise ReaderError(f"decompresses to more than the {max_bytes}-byte limit")
                return data
            # Sized to the file, not the limit: a read buffer is allocated whole, and
            # against the parse worker's address-space limit.
            size = os.fstat(handle.fileno()).st_size
            data = handle.read(size + 1)
            if len(data) > size:
                data += _read_at_most(handle, max_bytes + 1 - len(data))
    except (OSError, EOFError, zlib.error) as exc:
        if compressed:
            raise ReaderError(f"cannot decompress: {reason_line(exc)}") from None
        raise ReaderError(f"cannot read file: {getattr(exc, 'strerror', None) or exc}") from None
    if len(data) > max_bytes:
        raise ReaderError(f"file grew past the {max_bytes}-byte limit while being read")
    return data


def _read_at_most(stream: io.BufferedIOBase, limit: int) -> bytes:
    """Up to `limit` bytes in steps: a gzip bomb inflates only as far as the limit."""
    parts: list[bytes] = []
    total = 0
    while total < limit:
        block = stream.read(min(_READ_STEP, limit - total))
        if not block:
            break
        parts.append(block)
        total += len(block)
    return b"".join(parts)


def _convert(stem: str, suffix: str, data: bytes, limits: ReadLimits) -> ReadResult:
    # Picked as `reader_format` names it, so the reading a file is stored under is its
    # reader's.
    form = _format_of(suffix)
    # The PDF and DOCX readers are imported with the first file of their format: pdfplumber
    # and python-docx cost the daemon and every parse worker 0.1-0.2 s of CPU at start,
    # and a folder of notes has no use for them.
    if form == "pdf":
        from kenning.ingest.pdf_text import read_pdf

        return read_pdf(stem, data, limits.max_text_chars)
    if form == "docx":
        from kenning.ingest.docx_text import read_docx

        text, title, warnings = read_docx(data, limits.max_file_bytes, limits.max_text_chars, _imported_text)
        return ReadResult(text, title or first_h1(text) or stem, "markdown", "docx", warnings=tuple(warnings))
    if form == "html":
        return _read_html(stem, data)
    text = decode_text(data)
    if form == "markdown":
        return ReadResult(text, frontmatter.title(text) or first_h1(text) or stem, "markdown", "markdown")
    if form in ("code", "data"):
        return ReadResult(text, stem, form, form)
    return ReadResult(text, stem, "prose", "text")


# The parts a DOCX imports whole (`w:altChunk`) that kenning reads, by content type or
# name: the standard leaves the types to the writer, and names "application/html" and
# "application/txt" where most write "text/html" and "text/plain".
_IMPORTED_HTML = frozenset({"text/html", "application/html", "application/xhtml+xml"})
_IMPORTED_TEXT = frozenset({"text/plain", "application/txt"})


def _imported_text(content_type: str, name: str, data: bytes) -> str | None:
    """A part a DOCX imported whole, read as the file it was would be: an HTML snippet
    pasted by a mail merge or a web app, a text file. None for other types (RTF, a web
    archive), which the reader names in its warnings; another DOCX it reads itself."""
    suffix = _suffix(name)
    if content_type in _IMPORTED_HTML or suffix in (*_HTML_EXTENSIONS, ".xhtml"):
        return html_to_markdown(_decode_html(data))[0]
    if content_type in _IMPORTED_TEXT or suffix == ".txt":
        return decode_text(data)
    return None


def _read_html(stem: str, data: bytes) -> ReadResult:
    text, title = html_to_markdown(_decode_html(data))
    return ReadResult(text, title or stem, "markdown", "html")


def _decode_html(data: bytes) -> str:
    """A page as its `<meta charset>` says, as a fetched one is read: a browser saves a
    page in the encoding it came in, which for Cyrillic, Greek, Chinese or Japanese is
    often no UTF-8, and read as Windows-1252 its words were never found (Shift_JIS was
    refused as binary). Bytes that are UTF-8 are read so whatever the page declares (a
    page re-saved by an editor keeps its old declaration), and a BOM comes first. A page
    declared UTF-8 that is not is read as any text file is (a template's declaration over
    text an old editor saved in Windows-1252)."""
    declared = meta_charset(data) if not data.startswith((b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff")) else None
    if declared is None or declared.startswith("utf") or _is_utf8(data):
        return decode_text(data)
    text = data.decode(declared, errors="replace")
    if _mostly_controls(text[:_SNIFF_BYTES]):
        raise ReaderError("binary content (control characters), not text")
    return _line_breaks(text)


def _is_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _caused_by_memory(exc: BaseException) -> bool:
    """A parser that wraps the MemoryError it hit (pdfminer does), or libxml2 reporting
    it as a syntax error (python-docx), still ran out of memory."""
    # Imported here, as the DOCX reader is: only python-docx raises lxml's errors.
    from lxml import etree

    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, MemoryError):
            return True
        if isinstance(current, etree.XMLSyntaxError) and current.code == etree.ErrorTypes.ERR_NO_MEMORY:
            return True
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return False


def _suffix(name: str) -> str:
    """``Path(name).suffix``, lower-cased, without building a path."""
    dot = name.rfind(".")
    return name[dot:].lower() if 0 < dot < len(name) - 1 else ""


def _format_name(suffix: str) -> str:
    return {".pdf": "PDF", ".docx": "DOCX"}.get(suffix, f"{suffix or 'extensionless'} file")


# How much of an error is redacted before it is cut: what could still show once the
# marks have shortened it.
_REDACTED_CHARS = 4 * MAX_DETAIL_CHARS


def reason_line(exc: BaseException) -> str:
    """`errors.error_line` for a file's reason, redacted. A parser may quote what it
    choked on (python-docx names a missing part, which a DOCX can make a megabyte long;
    pdfminer a malformed dictionary whole, a link's URL and its token with it), as may a
    bug anywhere in ingest, and the reason is stored, logged and shown by every `ken
    status`, to agents too. Redacted before it is cut, and after a first cut at a word's
    end, so no token is cut into a piece the redactor no longer knows and a megabyte
    costs little."""
    whole = " ".join(str(exc).split())
    detail = whole
    if len(whole) > _REDACTED_CHARS:
        head, space, _ = whole[:_REDACTED_CHARS].rpartition(" ")
        detail = head if space else whole[:_REDACTED_CHARS]
    detail = redact(detail)
    if len(whole) > _REDACTED_CHARS or len(detail) > MAX_DETAIL_CHARS:
        # As errors.error_text marks a cut: how long the message was, not its first part.
        mark = f"… [cut from {len(whole):,} characters]"
        detail = detail[: MAX_DETAIL_CHARS - len(mark)].rstrip() + mark
    return f"{type(exc).__name__}: {detail}" if detail else type(exc).__name__
