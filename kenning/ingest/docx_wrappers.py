"""Which of the XML Word wraps text in is read through, and which is text the document no
longer shows: python-docx's lists of blocks, rows, cells and runs hold only direct
children, so every part of the DOCX reader walks the XML under it with `within`."""

from __future__ import annotations

import re
from collections.abc import Iterator

from docx.oxml.ns import qn
from docx.oxml.xmlchemy import BaseOxmlElement

M = "{http://schemas.openxmlformats.org/officeDocument/2006/math}"
# Fields whose result is navigation built from the document's own words (a table of
# contents or of figures, an index, a table of authorities): every heading or indexed
# term again, packed into a few lines that outrank the sections themselves in a search.
NAVIGATION_FIELD = re.compile(r"\s*(TOC|INDEX|TOA)\b", re.IGNORECASE)
_GALLERY = f"{qn('w:sdtPr')}/{qn('w:docPartObj')}/{qn('w:docPartGallery')}"
_FIELD = qn("w:fldSimple")
_CONTENT_CONTROL = qn("w:sdt")
_PLACEHOLDER_SHOWN = f"{qn('w:sdtPr')}/{qn('w:showingPlcHdr')}"
# Wrappers whose paragraphs, tables or runs are text as the document now reads: content
# controls (cover pages, forms, whole templated sections), custom XML and smart tags,
# simple fields, hyperlinks, tracked insertions and a tracked move's new place,
# bidirectional embeddings. Nothing else is read through: a tracked deletion (`w:del`, its
# words in `w:delText`) or a move's old place (`w:moveFrom`) is text the author removed,
# and a table of contents (`_skipped`) is the headings again.
_READ_THROUGH = frozenset(
    qn(f"w:{tag}")
    for tag in ("sdt", "sdtContent", "customXml", "smartTag", "fldSimple", "hyperlink", "ins", "moveTo", "dir", "bdo")
)
REMOVED = frozenset({qn("w:del"), qn("w:moveFrom")})


def within(element: BaseOxmlElement, tags: frozenset[str]) -> Iterator[BaseOxmlElement]:
    """The children of `element` with one of `tags`, in document order, and those of the
    wrappers it is read through (`_READ_THROUGH`).

    A content control still showing its placeholder ("Click or tap here to enter text.")
    holds the template's prompt, not anything the author typed: it is not read.
    """
    for child in element.iterchildren():
        if child.tag in tags:
            yield child
        elif child.tag in _READ_THROUGH and not _skipped(child):
            yield from within(child, tags)


def _skipped(wrapper: BaseOxmlElement) -> bool:
    """A content control still showing its placeholder ("Click or tap here to enter text.")
    holds the template's prompt, not anything the author typed; one Word keeps a table of
    contents in, and a simple field making one, hold the headings again."""
    if wrapper.tag == _CONTENT_CONTROL:
        gallery = wrapper.find(_GALLERY)
        shows_toc = gallery is not None and gallery.get(qn("w:val")) == "Table of Contents"
        return shows_toc or wrapper.find(_PLACEHOLDER_SHOWN) is not None
    return wrapper.tag == _FIELD and bool(NAVIGATION_FIELD.match(wrapper.get(qn("w:instr"), "")))
