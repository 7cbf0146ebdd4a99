"""A PDF's text layer, page by page: the PDF reader of kenning.ingest.readers.

Its own module so that pdfplumber and pdfminer (0.1 s of CPU to import) are loaded by
the first PDF a process reads, not by every daemon and parse worker at start.
"""

from __future__ import annotations

import io

import pdfplumber
from pdfminer.pdfdocument import PDFPasswordIncorrect
from pdfplumber.utils.exceptions import PdfminerException

from kenning.errors import ReaderError, TextCapReached
from kenning.ingest.readers import ReadResult


# A gap wider than this share of the type size is a space between words (see
# `pdf_page_text`).
WORD_GAP_RATIO = 0.15


def read_pdf(stem: str, data: bytes, max_chars: int) -> ReadResult:
    pages: list[str] = []
    page_starts: list[int] = []
    line = 1
    chars = 0
    try:
        opened = pdfplumber.open(io.BytesIO(data))
    except PdfminerException as exc:
        # A PDF that opens only with a user password; one locked for editing or printing
        # alone (an owner password) opens without one and is read.
        if any(isinstance(cause, PDFPasswordIncorrect) for cause in (*exc.args, exc.__context__)):
            raise ReaderError("PDF is locked with a password; kenning reads only PDFs that open without one") from None
        raise
    with opened as pdf:
        for page in pdf.pages:
            try:
                page_text = pdf_page_text(page)
            finally:
                # pdfplumber caches every parsed character object on the page; without
                # this a 2,000-page manual holds all of them until the file is closed.
                page.close()
            chars += len(page_text) + 1
            if chars > max_chars:
                raise TextCapReached(max_chars)
            page_starts.append(line)
            line += page_text.count("\n") + 1
            pages.append(page_text)
    text = "\n".join(pages)
    # Returned, not logged: this runs in a parse worker, which has no log of its own; the
    # pipeline logs a reader's warnings with the file's path.
    warnings: tuple[str, ...] = ()
    if pages and not text.strip():
        warnings = (f"its {len(pages)} pages have no text layer (scanned? kenning does no OCR)",)
    return ReadResult(text, stem, "prose", "pdf", tuple(page_starts), warnings)


def pdf_page_text(page: pdfplumber.page.Page) -> str:
    """The page's text, with a word gap judged relative to the type size.

    pdfTeX and others draw no space glyph between words, only a gap, and pdfplumber's
    default calls a gap a space past a fixed 3 points, which glues 9-point text into
    `asn1DecodinggeneratesanASN.1structure`. 0.15 of the type size sits below the
    narrowest word gap (0.22 em on a tight justified line) and above kerning and
    letter-spacing; bench/pdf_spacing.py measured the alternatives.
    """
    text = page.extract_text(x_tolerance_ratio=WORD_GAP_RATIO) or ""
    return text.replace("\r\n", "\n").replace("\r", "\n")
