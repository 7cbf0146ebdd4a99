"""DOCX to Markdown-shaped text: what a person typed into the document, in the order they
would read it, with headings and lists marked as the Markdown reader marks them, so a
DOCX is chunked and cited like a note. This module walks a story's blocks; the other
`docx_*` modules open the package (`docx_package`), say what is read through
(`docx_wrappers`), read a paragraph's runs (`docx_runs`), choose the notes, comments,
headers and footers to read (`docx_notes`) and read imported parts (`docx_imports`).

python-docx gives paragraphs and tables their objects, but its lists of blocks, rows and
cells and its `paragraph.text` hold only direct children, and text boxes, notes and
comments have no object of its own. So the XML under it is walked (`_docx_blocks`,
`within`): through what Word wraps text in (content controls, tracked insertions,
fields), never into what the author deleted with changes tracked; and a text box Word
writes twice (DrawingML and its VML fallback) is read once. Ruby and equations
(`docx_runs`) python-docx skips too.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from docx.document import Document as DocxDocument
from docx.oxml.ns import qn
from docx.oxml.xmlchemy import BaseOxmlElement
from docx.table import Table
from docx.text.paragraph import Paragraph
from docx.types import ProvidesStoryPart

from kenning.errors import TextCapReached
from kenning.ingest.docx_imports import Imported, Imports, PartReader
from kenning.ingest.docx_notes import NoteLabels, comments, page_furniture
from kenning.ingest.docx_package import open_docx
from kenning.ingest.docx_runs import Fields, paragraph_text
from kenning.ingest.docx_wrappers import REMOVED, within

_HEADING_STYLE = re.compile(r"Heading ([1-9])$")
_PARAGRAPH = qn("w:p")
_TABLE = qn("w:tbl")
_TEXT_BOX = qn("w:txbxContent")
_ALT_CHUNK = qn("w:altChunk")
_BLOCKS = frozenset({_PARAGRAPH, _TABLE, _ALT_CHUNK})
# Word's "TOC 1" to "TOC 9" styles (python-docx names them "toc 1"): an entry of a table
# of contents whose field codes were removed is still one.
_TOC_ENTRY = re.compile(r"toc [1-9]$", re.IGNORECASE)
_ROWS = frozenset({qn("w:tr")})
_CELLS = frozenset({qn("w:tc")})
_MC = "{http://schemas.openxmlformats.org/markup-compatibility/2006}"
_MC_CHOICE = f"{_MC}Choice"
_MC_FALLBACK = f"{_MC}Fallback"


def read_docx(
    data: bytes, max_file_bytes: int, max_chars: int, read_part: PartReader
) -> tuple[str, str, list[str]]:
    """The text of a DOCX, the title its properties give (often none), and what of it
    could not be read: the body in reading order, a text box's paragraphs right after the
    paragraph that anchors it (where a reader's eye goes next); then footnotes, endnotes,
    comments, headers and footers, each kind under its own `##` heading.

    A part Word imported whole (`w:altChunk`: pasted HTML, a text file, another document)
    is read where it stands: HTML and text by `read_part`, kenning's reader for its type,
    a document by this reader (its body; `docx_imports`); one of a type there is no reader for
    (RTF, a web archive) is named in the warnings, not passed over.
    Tables of contents are left out: they are the headings again, and their one chunk
    outranked each section it points to.

    Those last go after the body, not where they show on a page, because a page is no
    line of the extracted text: in the body a footnote or a comment would split the
    paragraph it explains and a header repeated on every page would be read once per
    page; at the end they push none of the body's lines about. A note keeps the number
    Word shows (`[^n]`, a Markdown footnote; endnotes in Word's lower-case Roman, so the
    two never share a label), and the body has the same `[^n]` where it refers to it. A
    header linked to the previous section's is that same header, and headers with the
    same words (Word copies one when it is unlinked) are read once.
    """
    document = open_docx(data, max_file_bytes)
    notes = NoteLabels(document)
    styles: dict[str | None, str] = {}
    imports = Imports(read_part, _imported_body, max_file_bytes, max_chars)
    out = _DocxText(max_chars, styles, imports, notes)
    out.add_blocks(_docx_blocks(document.element.body, document))
    out.end_of_story()
    for kind in ("footnote", "endnote"):
        cited = notes.cited(kind)
        if cited:
            out.add([f"## {kind.capitalize()}s"])
        for label, note in cited:
            out.add([f"[^{label}]: {_docx_flat_text(note, document, None, imports)}".rstrip()], is_item=True)
    items = _comment_items(document, imports)
    if items:
        out.add(["## Comments"])
    for item in items:
        out.add([item], is_item=True)
    for kind in ("header", "footer"):
        seen: set[tuple[str, ...]] = set()
        for part in page_furniture(document, kind):
            lines = _DocxText(max_chars, styles, imports)
            # Not `part.iter_inner_content()`: a footer's page number is often a content control.
            lines.add_blocks(_docx_blocks(part.part.element, part))
            lines.end_of_story()
            if lines.lines and tuple(lines.lines) not in seen:
                if not seen:
                    out.add([f"## {kind.capitalize()}"])
                seen.add(tuple(lines.lines))
                out.add(lines.lines)
    return "\n".join(out.lines), (document.core_properties.title or "").strip(), imports.warnings


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

    def __init__(
        self, max_chars: int, styles: dict[str | None, str], imports: Imports, notes: NoteLabels | None = None
    ) -> None:
        self.lines: list[str] = []
        self._styles = styles
        self._imports = imports
        self._notes = notes
        self._fields = Fields()
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

    def add_blocks(self, blocks: Iterable[Paragraph | Table | Imported]) -> None:
        for block in blocks:
            if isinstance(block, Table):
                self.add(_docx_table_rows(block, self._notes, self._imports))
                continue
            if isinstance(block, Imported):
                text = self._imports.text(block)
                self.add(text.strip("\n").split("\n") if text.strip() else [])
                continue
            # Read even when it is left out: its runs open and close fields.
            text = paragraph_text(block, self._notes, self._fields)
            style = self._style(block)
            if not _TOC_ENTRY.match(style):
                self.add(*_docx_paragraph(text, style))
            for box in _text_boxes(block):
                self.add_blocks(_docx_blocks(box, block))

    def end_of_story(self) -> None:
        """A field of a table of contents that never ends (a damaged file) would hide all
        that follows it: that text is read after all, as body text."""
        for text in self._fields.unclosed():
            self.add(*_docx_paragraph(text, ""))

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


def _docx_blocks(element: BaseOxmlElement, parent: ProvidesStoryPart) -> Iterator[Paragraph | Table | Imported]:
    """The paragraphs, tables and imported parts of a story (the body, a cell, a text box,
    a note, a header), content controls' included; `parent` lends them the document part
    their styles and imported parts are looked up in."""
    for child in within(element, _BLOCKS):
        if child.tag == _PARAGRAPH:
            yield Paragraph(child, parent)
        elif child.tag == _TABLE:
            yield Table(child, parent)
        else:
            yield Imported(child, parent)


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
            if ancestor.tag == _TEXT_BOX or ancestor.tag in REMOVED:
                break
            if ancestor.tag == _MC_FALLBACK and any(
                True for choice in ancestor.itersiblings(_MC_CHOICE, preceding=True) for _ in choice.iter(_TEXT_BOX)
            ):
                break
    return boxes


def _imported_body(document: DocxDocument, imports: Imports) -> str:
    """An imported document's body, read as this one's is, with its own imports."""
    body = _DocxText(imports.max_chars, {}, imports)
    body.add_blocks(_docx_blocks(document.element.body, document))
    body.end_of_story()
    return "\n".join(body.lines)


def _comment_items(document: DocxDocument, imports: Imports) -> list[str]:
    """Each comment as a list item led by who wrote it, so "what did Ada say" finds it.
    Not python-docx's `Comment.text`: it misses what a comment's paragraphs wrap, as
    `paragraph.text` does, and a nested table."""
    items = []
    for author, comment in comments(document):
        text = _docx_flat_text(comment, document, None, imports)
        if text:
            items.append(f"- {author}: {text}" if author else f"- {text}")
    return items


def _docx_table_rows(table: Table, notes: NoteLabels | None, imports: Imports) -> list[str]:
    """One line per row, its cells' words joined by ` | `.

    Not python-docx's `table.rows` and `row.cells`: they hold only direct children, so a
    form's repeating section (rows in a content control) or a cell in one was lost, and
    `row.cells` gives a cell merged across columns once per column. A cell merged down
    from the row above repeats that cell's words, so each row reads whole on its own.
    """
    rows = []
    above: dict[int, str] = {}
    for tr in within(table._tbl, _ROWS):
        cells: dict[int, str] = {}
        column = tr.grid_before
        for tc in within(tr, _CELLS):
            if tc.vMerge == "continue":
                cells[column] = above.get(column, "")
            else:
                cells[column] = _docx_flat_text(tc, table, notes, imports)
            column += tc.grid_span
        if any(cells.values()):
            rows.append(" | ".join(cells.values()))
        above = cells
    return rows


def _docx_flat_text(
    element: BaseOxmlElement, parent: ProvidesStoryPart, notes: NoteLabels | None, imports: Imports
) -> str:
    """A cell's or note's words on one line, its tables and text boxes included:
    `cell.text` holds only its paragraphs, so a form laid out in nested tables lost every
    word of them."""
    parts = []
    fields = Fields()
    for block in _docx_blocks(element, parent):
        if isinstance(block, Table):
            parts.extend(_docx_table_rows(block, notes, imports))
        elif isinstance(block, Paragraph):
            parts.append(paragraph_text(block, notes, fields))
            parts.extend(_docx_flat_text(box, block, notes, imports) for box in _text_boxes(block))
        else:
            parts.append(imports.text(block))
    parts.extend(fields.unclosed())
    return " ".join(" ".join(parts).split())
