"""Turn a file on disk into text plus the hints the chunker needs.

Every failure becomes a ReaderError whose message is stored as the file's reason, so the
ingest loop can record it and move on instead of dying on one bad document.
"""

from __future__ import annotations

import io
import logging
import re
from dataclasses import dataclass
from pathlib import Path

import docx
import pdfplumber
from docx.table import Table

from kenning.errors import ReaderError
from kenning.text.html import first_h1, html_to_markdown

logger = logging.getLogger(__name__)

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
SUPPORTED_EXTENSIONS: frozenset[str] = (
    _MARKDOWN_EXTENSIONS
    | _PROSE_EXTENSIONS
    | CODE_EXTENSIONS
    | _DATA_EXTENSIONS
    | _HTML_EXTENSIONS
    | {".docx", ".pdf"}
)

# Scanned with finditer so a title is found without splitting a large file into lines.
_HEADING_STYLE = re.compile(r"Heading ([1-9])$")


@dataclass(frozen=True)
class ReadResult:
    """A file's text plus what the chunker needs; page_starts saves it re-reading a PDF."""

    text: str
    title: str
    kind: str
    format: str
    page_starts: tuple[int, ...] = ()


def decode_text(data: bytes) -> str:
    """Decode bytes of unknown encoding; never fails, because latin-1 maps every byte.

    UTF-16 is only trusted with a BOM: without one, sniffing it from NUL patterns
    misfires on binary junk more often than it helps.
    """
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        text = data.decode("utf-16", errors="replace")
    elif data.startswith(b"\xef\xbb\xbf"):
        text = data[3:].decode("utf-8", errors="replace")
    else:
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            text = data.decode("latin-1")
    return text.replace("\r\n", "\n").replace("\r", "\n")


def read_file(path: Path, max_bytes: int = 50 * 1024 * 1024) -> ReadResult:
    """Read one file; any failure surfaces as ReaderError so one bad file cannot stop ingest."""
    suffix = path.suffix.lower()
    if suffix not in SUPPORTED_EXTENSIONS:
        raise ReaderError(f"unsupported file type {suffix!r}")
    try:
        size = path.stat().st_size
        if size > max_bytes:
            raise ReaderError(f"file is {size} bytes, over the {max_bytes}-byte limit")
        data = path.read_bytes()
    except PermissionError:
        raise ReaderError("permission denied") from None
    except FileNotFoundError:
        raise ReaderError("file not found") from None
    except IsADirectoryError:
        raise ReaderError("is a directory, not a file") from None
    except OSError as exc:
        raise ReaderError(f"cannot read file: {exc.strerror or exc}") from None
    try:
        return _convert(path, suffix, data)
    except ReaderError:
        raise
    except Exception as exc:
        # Parsers for PDF/DOCX raise a zoo of their own types on damaged input; the
        # contract is that only ReaderError leaves this function.
        raise ReaderError(f"cannot read {_format_name(suffix)}: {_one_line(exc)}") from exc


def _convert(path: Path, suffix: str, data: bytes) -> ReadResult:
    if suffix == ".pdf":
        return _read_pdf(path, data)
    if suffix == ".docx":
        return _read_docx(path, data)
    if suffix in _HTML_EXTENSIONS:
        return _read_html(path, data)
    text = decode_text(data)
    if suffix in _MARKDOWN_EXTENSIONS:
        return ReadResult(text, first_h1(text) or path.stem, "markdown", "markdown")
    if suffix in CODE_EXTENSIONS:
        return ReadResult(text, path.stem, "code", "code")
    if suffix in _DATA_EXTENSIONS:
        return ReadResult(text, path.stem, "data", "data")
    return ReadResult(text, path.stem, "prose", "text")


def _read_pdf(path: Path, data: bytes) -> ReadResult:
    pages: list[str] = []
    page_starts: list[int] = []
    line = 1
    with pdfplumber.open(io.BytesIO(data)) as pdf:
        for page in pdf.pages:
            try:
                page_text = (page.extract_text() or "").replace("\r\n", "\n").replace("\r", "\n")
            finally:
                # pdfplumber caches every parsed character object on the page; without
                # this a 2,000-page manual holds all of them until the file is closed.
                page.close()
            page_starts.append(line)
            line += page_text.count("\n") + 1
            pages.append(page_text)
    text = "\n".join(pages)
    if pages and not text.strip():
        logger.info("%s: PDF has %d pages but no text layer (scanned?)", path, len(pages))
    return ReadResult(text, path.stem, "prose", "pdf", tuple(page_starts))


def _read_docx(path: Path, data: bytes) -> ReadResult:
    document = docx.Document(io.BytesIO(data))
    out: list[str] = []
    previous_was_item = False
    for block in document.iter_inner_content():
        if isinstance(block, Table):
            lines, is_item = _docx_table_rows(block), False
        else:
            lines, is_item = _docx_paragraph(block.text, block.style.name if block.style else "")
        if not lines:
            continue
        # Blank lines separate blocks, except between list items so they stay one list.
        if out and not (is_item and previous_was_item):
            out.append("")
        out.extend(lines)
        previous_was_item = is_item
    text = "\n".join(out)
    title = (document.core_properties.title or "").strip()
    return ReadResult(text, title or first_h1(text) or path.stem, "markdown", "docx")


def _docx_paragraph(raw: str, style: str) -> tuple[list[str], bool]:
    text = raw.strip()
    if not text:
        return [], False
    # A soft line break inside a heading or list item would leave its tail as a plain
    # line; body paragraphs keep their breaks.
    flat = " ".join(text.split())
    heading = _HEADING_STYLE.match(style)
    if style == "Title":
        return [f"# {flat}"], False
    if heading:
        return [f"{'#' * min(int(heading.group(1)), 6)} {flat}"], False
    if style.startswith("List"):
        return [f"- {flat}"], True
    return text.split("\n"), False


def _docx_table_rows(table: Table) -> list[str]:
    rows = []
    for row in table.rows:
        cells = [" ".join(cell.text.split()) for cell in row.cells]
        if any(cells):
            rows.append(" | ".join(cells))
    return rows


def _read_html(path: Path, data: bytes) -> ReadResult:
    text, title = html_to_markdown(decode_text(data))
    return ReadResult(text, title or path.stem, "markdown", "html")


def _format_name(suffix: str) -> str:
    return {".pdf": "PDF", ".docx": "DOCX"}.get(suffix, f"{suffix or 'extensionless'} file")


def _one_line(exc: Exception) -> str:
    detail = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {detail}" if detail else type(exc).__name__
