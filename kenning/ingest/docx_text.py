"""DOCX to Markdown-shaped text: what a person typed into the document, in the order they
would read it, with headings and lists marked as the Markdown reader marks them, so a
DOCX is chunked and cited like a note.

python-docx gives paragraphs and tables their objects, but its lists of blocks, rows and
cells and its `paragraph.text` hold only direct children, and text boxes, notes and
comments have no object of its own. So the XML under it is walked (`_docx_blocks`,
`_within`): through what Word wraps text in (content controls, tracked insertions,
fields), never into what the author deleted with changes tracked; and a text box Word
writes twice (DrawingML and its VML fallback) is read once.
"""

from __future__ import annotations

import io
import re
import zipfile
from collections.abc import Iterable, Iterator

import docx
from docx.blkcntnr import BlockItemContainer
from docx.document import Document as DocxDocument
from docx.opc.constants import RELATIONSHIP_TYPE as RT
from docx.opc.part import Part
from docx.oxml import parse_xml
from docx.oxml.ns import qn
from docx.oxml.xmlchemy import BaseOxmlElement
from docx.table import Table
from docx.text.paragraph import Paragraph
from docx.types import ProvidesStoryPart

from kenning.errors import ReaderError, TextCapReached

_HEADING_STYLE = re.compile(r"Heading ([1-9])$")
_PARAGRAPH = qn("w:p")
_TABLE = qn("w:tbl")
_TEXT_BOX = qn("w:txbxContent")
_BLOCKS = frozenset({_PARAGRAPH, _TABLE})
_RUNS = frozenset({qn("w:r")})
_ROWS = frozenset({qn("w:tr")})
_CELLS = frozenset({qn("w:tc")})
_NOTE_REFERENCES = {qn("w:footnoteReference"): "footnote", qn("w:endnoteReference"): "endnote"}
_ID = qn("w:id")
_CONTENT_CONTROL = qn("w:sdt")
_PLACEHOLDER_SHOWN = f"{qn('w:sdtPr')}/{qn('w:showingPlcHdr')}"
# Wrappers whose paragraphs, tables or runs are text as the document now reads: content
# controls (cover pages, forms, tables of contents, whole templated sections), custom XML
# and smart tags, simple fields, hyperlinks, tracked insertions and a tracked move's new
# place, bidirectional embeddings. Nothing else is read through: a tracked deletion
# (`w:del`, its words in `w:delText`) or a move's old place (`w:moveFrom`) is text the
# author removed.
_READ_THROUGH = frozenset(
    qn(f"w:{tag}")
    for tag in ("sdt", "sdtContent", "customXml", "smartTag", "fldSimple", "hyperlink", "ins", "moveTo", "dir", "bdo")
)
_REMOVED = frozenset({qn("w:del"), qn("w:moveFrom")})
_MC = "{http://schemas.openxmlformats.org/markup-compatibility/2006}"
_MC_CHOICE = f"{_MC}Choice"
_MC_FALLBACK = f"{_MC}Fallback"


def read_docx(data: bytes, max_file_bytes: int, max_chars: int) -> tuple[str, str]:
    """The text of a DOCX and the title its properties give (often none): the body in
    reading order, a text box's paragraphs right after the paragraph that
    anchors it (where a reader's eye goes next); then footnotes, endnotes, comments,
    headers and footers, each kind under its own `##` heading.

    Those last go after the body, not where they show on a page, because a page is no
    line of the extracted text: in the body a footnote or a comment would split the
    paragraph it explains and a header repeated on every page would be read once per
    page; at the end they push none of the body's lines about. A note keeps the number
    Word shows (`[^n]`, a Markdown footnote; endnotes in Word's lower-case Roman, so the
    two never share a label), and the body has the same `[^n]` where it refers to it. A
    header linked to the previous section's is that same header, and headers with the
    same words (Word copies one when it is unlinked) are read once.
    """
    # A DOCX is a zip that python-docx inflates whole; like a .gz, what it inflates to
    # is held to the file-size limit. zipfile stops each member at its declared size,
    # so the declared sizes are a bound, not a claim.
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        inflated = sum(member.file_size for member in archive.infolist())
    if inflated > max_file_bytes:
        raise ReaderError(f"DOCX inflates to {inflated} bytes, over the {max_file_bytes}-byte limit")
    document = docx.Document(io.BytesIO(data))
    notes = _NoteLabels(document)
    styles: dict[str | None, str] = {}
    out = _DocxText(max_chars, styles, notes)
    out.add_blocks(_docx_blocks(document.element.body, document))
    for kind in ("footnote", "endnote"):
        cited = notes.cited(kind)
        if cited:
            out.add([f"## {kind.capitalize()}s"])
        for label, note in cited:
            out.add([f"[^{label}]: {_docx_flat_text(note, document, None)}".rstrip()], is_item=True)
    comments = _docx_comments(document)
    if comments:
        out.add(["## Comments"])
    for comment in comments:
        out.add([comment], is_item=True)
    for kind in ("header", "footer"):
        seen: set[tuple[str, ...]] = set()
        for part in _docx_page_furniture(document, kind):
            lines = _DocxText(max_chars, styles)
            # Not `part.iter_inner_content()`: a footer's page number is often a content control.
            lines.add_blocks(_docx_blocks(part.part.element, part))
            if lines.lines and tuple(lines.lines) not in seen:
                if not seen:
                    out.add([f"## {kind.capitalize()}"])
                seen.add(tuple(lines.lines))
                out.add(lines.lines)
    return "\n".join(out.lines), (document.core_properties.title or "").strip()


class _DocxText:
    """The extracted lines as they grow, checked against the character cap as each block
    comes, so two million tiny paragraphs stop at the cap rather than after all of them
    are converted. `notes` labels the note references it meets; headers and footers, where
    Word allows none, are read without.

    `styles` holds each paragraph style's name by its id, for the whole document:
    python-docx looks a paragraph with no style of its own (most of them) up by scanning
    every style for the default, which made reading a DOCX cost a millisecond a paragraph,
    ten seconds for a long report.
    """

    def __init__(self, max_chars: int, styles: dict[str | None, str], notes: _NoteLabels | None = None) -> None:
        self.lines: list[str] = []
        self._styles = styles
        self._notes = notes
        self._max_chars = max_chars
        self._chars = 0
        self._previous_was_item = False

    def add(self, lines: list[str], is_item: bool = False) -> None:
        if not lines:
            return
        # Blank lines separate blocks, except between list items so they stay one list.
        if self.lines and not (is_item and self._previous_was_item):
            self.lines.append("")
        self.lines.extend(lines)
        self._previous_was_item = is_item
        self._chars += sum(len(line) + 1 for line in lines) + 1
        if self._chars > self._max_chars:
            raise TextCapReached(self._max_chars)

    def add_blocks(self, blocks: Iterable[Paragraph | Table]) -> None:
        for block in blocks:
            if isinstance(block, Table):
                self.add(_docx_table_rows(block, self._notes))
                continue
            self.add(*_docx_paragraph(_paragraph_text(block, self._notes), self._style(block)))
            for box in _text_boxes(block):
                self.add_blocks(_docx_blocks(box, block))

    def _style(self, paragraph: Paragraph) -> str:
        style_id = paragraph._p.style
        if style_id not in self._styles:
            style = paragraph.style
            self._styles[style_id] = (style.name or "") if style is not None else ""
        return self._styles[style_id]


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


def _docx_blocks(element: BaseOxmlElement, parent: ProvidesStoryPart) -> Iterator[Paragraph | Table]:
    """The paragraphs and tables of a story (the body, a cell, a text box, a note, a header),
    content controls' included; `parent` only lends them the document part their styles
    are looked up in."""
    for child in _within(element, _BLOCKS):
        yield Paragraph(child, parent) if child.tag == _PARAGRAPH else Table(child, parent)


def _within(element: BaseOxmlElement, tags: frozenset[str]) -> Iterator[BaseOxmlElement]:
    """The children of `element` with one of `tags`, in document order, and those of the
    wrappers it is read through (`_READ_THROUGH`).

    A content control still showing its placeholder ("Click or tap here to enter text.")
    holds the template's prompt, not anything the author typed: it is not read.
    """
    for child in element.iterchildren():
        if child.tag in tags:
            yield child
        elif child.tag in _READ_THROUGH and not (
            child.tag == _CONTENT_CONTROL and child.find(_PLACEHOLDER_SHOWN) is not None
        ):
            yield from _within(child, tags)


def _paragraph_text(paragraph: Paragraph, notes: _NoteLabels | None) -> str:
    """What `paragraph.text` would be if python-docx read runs inside wrappers: it reads
    only the paragraph's own runs and hyperlinks, so a tracked insertion or a filled-in
    form field was lost. A note's reference is its `[^n]`, where Word shows the number."""
    parts = []
    for run in _within(paragraph._p, _RUNS):
        parts.append(run.text)
        if notes is not None:
            # Word writes a reference in a run of its own, so it goes after the run's text.
            parts.extend(notes.cite(reference) for reference in run.iterchildren(*_NOTE_REFERENCES))
    return "".join(parts)


def _text_boxes(paragraph: Paragraph) -> list[BaseOxmlElement]:
    """The text boxes anchored in a paragraph, each once.

    Word writes a shape twice, as DrawingML in `mc:Choice` and as VML in `mc:Fallback`
    for older readers; the fallback's copy is read only when no choice holds a text box.
    A text box inside another is read with the paragraph that anchors it there, and one in
    a tracked deletion is not read at all.
    """
    boxes = []
    for box in paragraph._p.iter(_TEXT_BOX):
        for ancestor in box.iterancestors():
            if ancestor is paragraph._p:
                boxes.append(box)
                break
            if ancestor.tag == _TEXT_BOX or ancestor.tag in _REMOVED:
                break
            if ancestor.tag == _MC_FALLBACK and any(
                True for choice in ancestor.itersiblings(_MC_CHOICE, preceding=True) for _ in choice.iter(_TEXT_BOX)
            ):
                break
    return boxes


class _NoteLabels:
    """The label of each footnote and endnote, given as the body's reading meets its
    reference: that is the order Word numbers them in, and the body's `[^n]` and the notes
    section's are one label by construction. A note the reading never meets (its
    reference deleted with changes tracked, or one of the separator notes Word keeps
    beside the others) gets no number and is not read. python-docx has no API for either
    part."""

    def __init__(self, document: DocxDocument) -> None:
        self._notes: dict[str, dict[str, BaseOxmlElement]] = {}
        for kind, reltype in (("footnote", RT.FOOTNOTES), ("endnote", RT.ENDNOTES)):
            part = _docx_part(document, reltype)
            notes = parse_xml(part.blob).iterchildren(qn(f"w:{kind}")) if part else ()
            self._notes[kind] = {note.get(_ID): note for note in notes}
        self._labels: dict[str, dict[str, str]] = {"footnote": {}, "endnote": {}}

    def cite(self, reference: BaseOxmlElement) -> str:
        kind = _NOTE_REFERENCES[reference.tag]
        note_id = reference.get(_ID)
        if note_id not in self._notes[kind]:
            # A damaged file's reference to no note: there is no text to label.
            return ""
        labels = self._labels[kind]
        if note_id not in labels:
            labels[note_id] = (str if kind == "footnote" else _roman)(len(labels) + 1)
        return f"[^{labels[note_id]}]"

    def cited(self, kind: str) -> list[tuple[str, BaseOxmlElement]]:
        """The notes cited so far with their labels, in the order of their numbers."""
        return [(label, self._notes[kind][note_id]) for note_id, label in self._labels[kind].items()]


def _docx_comments(document: DocxDocument) -> list[str]:
    """Each comment as a list item led by who wrote it, so "what did Ada say" finds it, in
    the order of the comments part (a reply is a comment of its own there, after the one
    it answers). Not python-docx's `Comment.text`: it misses what a comment's paragraphs
    wrap, as `paragraph.text` does, and a nested table."""
    part = _docx_part(document, RT.COMMENTS)
    if part is None:
        return []
    items = []
    for comment in parse_xml(part.blob).iterchildren(qn("w:comment")):
        text = _docx_flat_text(comment, document, None)
        author = " ".join(comment.get(qn("w:author"), "").split())
        if text:
            items.append(f"- {author}: {text}" if author else f"- {text}")
    return items


def _docx_part(document: DocxDocument, reltype: str) -> Part | None:
    rels = document.part.rels.values()
    return next((rel.target_part for rel in rels if rel.reltype == reltype and not rel.is_external), None)


def _docx_page_furniture(document: DocxDocument, kind: str) -> Iterator[BlockItemContainer]:
    """Each header (or footer) the document shows, in section order: a first-page one
    only where the section has a distinct first page, an even-page one only where the
    document sets them apart, and none linked to the previous section's."""
    even_pages = document.settings.odd_and_even_pages_header_footer
    for section in document.sections:
        if kind == "header":
            variants = (section.first_page_header, section.header, section.even_page_header)
        else:
            variants = (section.first_page_footer, section.footer, section.even_page_footer)
        shown = (section.different_first_page_header_footer, True, even_pages)
        for part, is_shown in zip(variants, shown):
            # Checked before the content is touched: python-docx gives a linked header
            # of the first section a new, empty definition.
            if is_shown and not part.is_linked_to_previous:
                yield part


def _roman(number: int) -> str:
    digits = []
    for value, numeral in ((1000, "m"), (900, "cm"), (500, "d"), (400, "cd"), (100, "c"), (90, "xc"),
                           (50, "l"), (40, "xl"), (10, "x"), (9, "ix"), (5, "v"), (4, "iv"), (1, "i")):  # fmt: skip
        count, number = divmod(number, value)
        digits.append(numeral * count)
    return "".join(digits)


def _docx_table_rows(table: Table, notes: _NoteLabels | None) -> list[str]:
    """One line per row, its cells' words joined by ` | `.

    Not python-docx's `table.rows` and `row.cells`: they hold only direct children, so a
    form's repeating section (rows in a content control) or a cell in one was lost, and
    `row.cells` gives a cell merged across columns once per column. A cell merged down
    from the row above repeats that cell's words, so each row reads whole on its own.
    """
    rows = []
    above: dict[int, str] = {}
    for tr in _within(table._tbl, _ROWS):
        cells: dict[int, str] = {}
        column = tr.grid_before
        for tc in _within(tr, _CELLS):
            if tc.vMerge == "continue":
                cells[column] = above.get(column, "")
            else:
                cells[column] = _docx_flat_text(tc, table, notes)
            column += tc.grid_span
        if any(cells.values()):
            rows.append(" | ".join(cells.values()))
        above = cells
    return rows


def _docx_flat_text(element: BaseOxmlElement, parent: ProvidesStoryPart, notes: _NoteLabels | None) -> str:
    """A cell's or note's words on one line, its tables and text boxes included:
    `cell.text` holds only its paragraphs, so a form laid out in nested tables lost every
    word of them."""
    parts = []
    for block in _docx_blocks(element, parent):
        if isinstance(block, Table):
            parts.extend(_docx_table_rows(block, notes))
            continue
        parts.append(_paragraph_text(block, notes))
        parts.extend(_docx_flat_text(box, block, notes) for box in _text_boxes(block))
    return " ".join(" ".join(parts).split())
