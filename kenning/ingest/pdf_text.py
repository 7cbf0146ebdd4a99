"""A PDF's text layer, page by page: the PDF reader of kenning.ingest.readers.

Its own module so that pdfplumber and pdfminer (0.1 s of CPU to import) are loaded by
the first PDF a process reads, not by every daemon and parse worker at start.
"""

from __future__ import annotations

import io
from collections.abc import Iterator

import pdfplumber
from pdfminer.pdfdocument import PDFDocument, PDFObjectNotFound, PDFPasswordIncorrect
from pdfminer.pdftypes import PDFObjRef, resolve1
from pdfplumber.utils.exceptions import PdfminerException

from kenning.errors import ReaderError, TextCapReached
from kenning.ingest.readers import ReadResult


# A gap wider than this share of the type size is a space between words (see
# `pdf_page_text`).
WORD_GAP_RATIO = 0.15
# The page size a viewer assumes when a PDF gives none, in points.
_US_LETTER = [0, 0, 612, 792]
# The boxes a page (or a node above it) gives, which pdfplumber reads as rectangles.
_BOXES = ("MediaBox", "CropBox", "TrimBox", "BleedBox", "ArtBox")


class _ReferenceCircle(ReaderError):
    """An indirect object whose value is a reference to a reference ... to itself."""


_getobj = PDFDocument.getobj


def _getobj_refusing_circles(self: PDFDocument, objid: int) -> object:
    """pdfminer's `getobj`, refusing an object that is a reference leading back to itself.

    pdfminer resolves a reference by following it while the value it finds is another
    reference (`pdftypes.resolve1`), with no bound, and every catalog, page tree, page
    and font lookup goes through it: `3 0 obj 2 0 R`, `2 0 obj 4 0 R`, `4 0 obj 3 0 R`, a
    few hundred bytes, kept a parse worker going round for its whole `parse_timeout`.
    Installed on the class, since pdfplumber builds the document (and resolves its
    catalog) itself; it costs a normal object one type check, and walks a chain only
    when a value is a bare reference, which real files hardly hold.
    """
    obj = _getobj(self, objid)
    seen = {objid}
    target = obj
    while isinstance(target, PDFObjRef):
        if target.objid in seen:
            raise _ReferenceCircle(
                f"damaged PDF: its object {objid} is a reference that leads round in a circle back to itself"
            )
        seen.add(target.objid)
        try:
            target = _getobj(self, target.objid)
        except PDFObjectNotFound:
            break
    return obj


PDFDocument.getobj = _getobj_refusing_circles  # type: ignore[method-assign]


def read_pdf(stem: str, data: bytes, max_chars: int) -> ReadResult:
    pages: list[str] = []
    page_starts: list[int] = []
    line = 1
    chars = 0
    try:
        for page_text in _page_texts(data):
            chars += len(page_text) + 1
            if chars > max_chars:
                raise TextCapReached(max_chars)
            page_starts.append(line)
            line += page_text.count("\n") + 1
            pages.append(page_text)
    except _ReferenceCircle as exc:
        # A plain ReaderError leaves the parse worker: unpickling this one would import
        # pdfplumber into the daemon.
        raise ReaderError(str(exc)) from None
    except PdfminerException as exc:
        # pdfplumber wraps what pdfminer raises, on opening the file, listing its pages
        # and reading one alike.
        causes = (*exc.args, exc.__context__)
        if circle := next((cause for cause in causes if isinstance(cause, _ReferenceCircle)), None):
            raise ReaderError(str(circle)) from None
        # A PDF that opens only with a user password; one locked for editing or printing
        # alone (an owner password) opens without one and is read.
        if any(isinstance(cause, PDFPasswordIncorrect) for cause in causes):
            raise ReaderError("PDF is locked with a password; kenning reads only PDFs that open without one") from None
        raise
    text = "\n".join(pages)
    # Returned, not logged: this runs in a parse worker, which has no log of its own; the
    # pipeline logs a reader's warnings with the file's path.
    warnings: tuple[str, ...] = ()
    if pages and not text.strip():
        warnings = (f"its {len(pages)} pages have no text layer (scanned? kenning does no OCR)",)
    return ReadResult(text, stem, "prose", "pdf", tuple(page_starts), warnings)


def _page_texts(data: bytes) -> Iterator[str]:
    # Not closed by `with`: pdfplumber's close() lists the pages again, and a page tree
    # that failed to list would fail there a second time. The stream is ours and each
    # page is closed once read, so close() has nothing left to do.
    pdf = pdfplumber.open(io.BytesIO(data))
    _sound_page_boxes(pdf.doc)
    for page in pdf.pages:
        try:
            yield pdf_page_text(page)
        finally:
            # pdfplumber caches every parsed character object on the page; without
            # this a 2,000-page manual holds all of them until the file is closed.
            page.close()


def _sound_page_boxes(doc: PDFDocument) -> None:
    """Give every page a size pdfminer and pdfplumber can read, as viewers do.

    A page must have a MediaBox, its own or one inherited from a node of the page tree
    above it: four numbers. Where none is given, the tree's root gets US Letter, which
    every page inherits. Where one is malformed (`[0 0 612]`, `[0 0 a b]`, a reference to
    a string or to nothing), the node's is US Letter too, as pdfminer and pdf.js read it;
    a malformed CropBox, TrimBox, BleedBox or ArtBox is dropped, which pdfplumber reads
    as the MediaBox. Each failed the whole file (`IndexError`, `TypeError: 'PSKeyword'
    object is not iterable`) though its text reads as any other page's. pdfminer caches
    the objects it parsed, so the pages it lists next find the boxes set here.
    """
    root = resolve1(doc.catalog.get("Pages"))
    if isinstance(root, dict):
        root.setdefault("MediaBox", _US_LETTER)
    # A node is known by its object number where it has one, so a tree whose kids lead
    # back up it is walked once.
    nodes, seen = [doc.catalog.get("Pages")], set()
    while nodes:
        item = nodes.pop()
        key = ("ref", item.objid) if isinstance(item, PDFObjRef) else ("direct", id(item))
        node = resolve1(item)
        if key in seen or not isinstance(node, dict):
            continue
        seen.add(key)
        for name in _BOXES:
            if name in node and not _is_rectangle(node[name]):
                if name == "MediaBox":
                    node[name] = _US_LETTER
                else:
                    del node[name]
        kids = resolve1(node.get("Kids"))
        if isinstance(kids, list):
            nodes.extend(kids)


def _is_rectangle(box: object) -> bool:
    """Whether a box is four numbers, as a PDF must give it (each may be a reference)."""
    corners = resolve1(box)
    if not isinstance(corners, list) or len(corners) != 4:
        return False
    return all(isinstance(value, int | float) and not isinstance(value, bool) for value in map(resolve1, corners))


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
