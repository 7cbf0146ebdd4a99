"""DOCX to Markdown-shaped text: what a person typed into the document, in the order they
would read it, with headings and lists marked as the Markdown reader marks them, so a
DOCX is chunked and cited like a note.

python-docx gives paragraphs and tables their objects, but its lists of blocks, rows and
cells and its `paragraph.text` hold only direct children, and text boxes, notes and
comments have no object of its own. So the XML under it is walked (`_docx_blocks`,
`_within`): through what Word wraps text in (content controls, tracked insertions,
fields), never into what the author deleted with changes tracked; and a text box Word
writes twice (DrawingML and its VML fallback) is read once. Ruby and equations
(`_run_text`, `_math_text`) python-docx skips too.
"""

from __future__ import annotations

import io
import re
import zipfile
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

import docx
from docx.blkcntnr import BlockItemContainer
from docx.document import Document as DocxDocument
from docx.opc.constants import RELATIONSHIP_TYPE as RT
from docx.opc.exceptions import PackageNotFoundError
from docx.opc.part import Part, PartFactory
from docx.oxml import parse_xml
from docx.oxml.ns import qn
from docx.oxml.xmlchemy import BaseOxmlElement
from docx.table import Table
from docx.text.paragraph import Paragraph
from docx.types import ProvidesStoryPart
from lxml import etree

from kenning.errors import ReaderError, TextCapReached

_HEADING_STYLE = re.compile(r"Heading ([1-9])$")
_PARAGRAPH = qn("w:p")
_TABLE = qn("w:tbl")
_TEXT_BOX = qn("w:txbxContent")
_ALT_CHUNK = qn("w:altChunk")
_BLOCKS = frozenset({_PARAGRAPH, _TABLE, _ALT_CHUNK})
_RUNS = frozenset({qn("w:r")})
_RUBY = qn("w:ruby")
_RUBY_BASE = qn("w:rubyBase")
_RUBY_TEXT = qn("w:rt")
_M = "{http://schemas.openxmlformats.org/officeDocument/2006/math}"
_MATH = frozenset({f"{_M}oMath", f"{_M}oMathPara"})
_INLINE = _RUNS | _MATH
_FIELD_CHAR = qn("w:fldChar")
_FIELD_CODE = qn("w:instrText")
_FIELD_CHAR_TYPE = qn("w:fldCharType")
# Fields whose result is navigation built from the document's own words (a table of
# contents or of figures, an index, a table of authorities): every heading or indexed
# term again, packed into a few lines that outrank the sections themselves in a search.
_NAVIGATION_FIELD = re.compile(r"\s*(TOC|INDEX|TOA)\b", re.IGNORECASE)
# Word's "TOC 1" to "TOC 9" styles (python-docx names them "toc 1"): an entry of a table
# of contents whose field codes were removed is still one.
_TOC_ENTRY = re.compile(r"toc [1-9]$", re.IGNORECASE)
_GALLERY = f"{qn('w:sdtPr')}/{qn('w:docPartObj')}/{qn('w:docPartGallery')}"
_FIELD = qn("w:fldSimple")
_ROWS = frozenset({qn("w:tr")})
_CELLS = frozenset({qn("w:tc")})
_NOTE_REFERENCES = {qn("w:footnoteReference"): "footnote", qn("w:endnoteReference"): "endnote"}
_ID = qn("w:id")
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
_REMOVED = frozenset({qn("w:del"), qn("w:moveFrom")})
_MC = "{http://schemas.openxmlformats.org/markup-compatibility/2006}"
_MC_CHOICE = f"{_MC}Choice"
_MC_FALLBACK = f"{_MC}Fallback"


_DOCX_PART_CLASS = PartFactory.part_class_selector


def _part_class(content_type: str, reltype: str) -> type[Part] | None:
    """A part Word imports whole is bytes to hand to a reader, whatever its type says:
    python-docx parses a part typed as a Word document as XML, so a DOCX with another
    imported into it (as document assembly tools merge them) could not be opened at all.
    python-docx's own choice (images) stands for every other part."""
    if reltype == RT.A_F_CHUNK:
        return Part
    return _DOCX_PART_CLASS(content_type, reltype) if _DOCX_PART_CLASS else None


# python-docx's documented hook for choosing part classes.
PartFactory.part_class_selector = _part_class

# What reads a part Word imported whole (`w:altChunk`): its content type, name and bytes
# to text, or None for a type kenning has no reader for.
PartReader = Callable[[str, str, bytes], "str | None"]


def read_docx(
    data: bytes, max_file_bytes: int, max_chars: int, read_part: PartReader
) -> tuple[str, str, list[str]]:
    """The text of a DOCX, the title its properties give (often none), and what of it
    could not be read: the body in reading order, a text box's paragraphs right after the
    paragraph that anchors it (where a reader's eye goes next); then footnotes, endnotes,
    comments, headers and footers, each kind under its own `##` heading.

    A part Word imported whole (`w:altChunk`: pasted HTML, a text file, another document)
    is read where it stands: HTML and text by `read_part`, kenning's reader for its type,
    a document by this reader (its body; `_Imports`); one of a type there is no reader for
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
    # A DOCX is a zip that python-docx inflates whole; like a .gz, what it inflates to
    # is held to the file-size limit. zipfile stops each member at its declared size,
    # so the declared sizes are a bound, not a claim.
    document = _open(data, max_file_bytes)
    notes = _NoteLabels(document)
    styles: dict[str | None, str] = {}
    imports = _Imports(read_part, max_file_bytes, max_chars)
    out = _DocxText(max_chars, styles, imports, notes)
    out.add_blocks(_docx_blocks(document.element.body, document))
    out.end_of_story()
    for kind in ("footnote", "endnote"):
        cited = notes.cited(kind)
        if cited:
            out.add([f"## {kind.capitalize()}s"])
        for label, note in cited:
            out.add([f"[^{label}]: {_docx_flat_text(note, document, None, imports)}".rstrip()], is_item=True)
    comments = _docx_comments(document, imports)
    if comments:
        out.add(["## Comments"])
    for comment in comments:
        out.add([comment], is_item=True)
    for kind in ("header", "footer"):
        seen: set[tuple[str, ...]] = set()
        for part in _docx_page_furniture(document, kind):
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


def _open(data: bytes, max_file_bytes: int) -> DocxDocument:
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        inflated = sum(member.file_size for member in archive.infolist())
    if inflated > max_file_bytes:
        raise ReaderError(f"DOCX inflates to {inflated} bytes, over the {max_file_bytes}-byte limit")
    return docx.Document(io.BytesIO(data))


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
        self, max_chars: int, styles: dict[str | None, str], imports: _Imports, notes: _NoteLabels | None = None
    ) -> None:
        self.lines: list[str] = []
        self._styles = styles
        self._imports = imports
        self._notes = notes
        self._fields = _Fields()
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

    def add_blocks(self, blocks: Iterable[Paragraph | Table | _Imported]) -> None:
        for block in blocks:
            if isinstance(block, Table):
                self.add(_docx_table_rows(block, self._notes, self._imports))
                continue
            if isinstance(block, _Imported):
                text = self._imports.text(block)
                self.add(text.strip("\n").split("\n") if text.strip() else [])
                continue
            # Read even when it is left out: its runs open and close fields.
            text = _paragraph_text(block, self._notes, self._fields)
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


def _docx_blocks(element: BaseOxmlElement, parent: ProvidesStoryPart) -> Iterator[Paragraph | Table | _Imported]:
    """The paragraphs, tables and imported parts of a story (the body, a cell, a text box,
    a note, a header), content controls' included; `parent` lends them the document part
    their styles and imported parts are looked up in."""
    for child in _within(element, _BLOCKS):
        if child.tag == _PARAGRAPH:
            yield Paragraph(child, parent)
        elif child.tag == _TABLE:
            yield Table(child, parent)
        else:
            yield _Imported(child, parent)


@dataclass(frozen=True)
class _Imported:
    """A part Word imported whole (`w:altChunk`), which it converts only when the document
    is opened and saved again: until then its words are in that part alone."""

    element: BaseOxmlElement
    parent: ProvidesStoryPart


# The content types of a Word document imported whole into another, as document
# assembly tools merge one: a document, a template, their macro-enabled kin.
_WORD_DOCUMENTS = frozenset(
    f"application/vnd.{kind}.main+xml"
    for kind in (
        "openxmlformats-officedocument.wordprocessingml.document",
        "openxmlformats-officedocument.wordprocessingml.template",
        "ms-word.document.macroEnabled",
        "ms-word.template.macroEnabledTemplate",
    )
)
_WORD_SUFFIXES = (".docx", ".docm", ".dotx", ".dotm")
# Each imported document is smaller than the one holding it, yet a chain of them could
# nest deeper than Python's recursion goes.
_MAX_NESTING = 3
_REFERENCES = (*_NOTE_REFERENCES, qn("w:commentReference"))


@dataclass
class _Imports:
    """Reads the imported parts of one document, and says which it could not."""

    read_part: PartReader
    max_file_bytes: int
    max_chars: int
    depth: int = 0
    warnings: list[str] = field(default_factory=list)

    def text(self, imported: _Imported) -> str:
        rel_id = imported.element.get(qn("r:id"))
        part = imported.parent.part.related_parts.get(rel_id) if rel_id else None
        if part is None:
            self.warnings.append(f"an imported part ({rel_id}) is missing from the file; its text is not read")
            return ""
        named = f"imported part {part.partname} ({part.content_type})"
        if part.content_type in _WORD_DOCUMENTS or part.partname.lower().endswith(_WORD_SUFFIXES):
            return self._document(part, named)
        try:
            text = self.read_part(part.content_type, part.partname, part.blob)
        except ReaderError as exc:
            # The rest of the document is worth finding all the same.
            self.warnings.append(f"{named} is not read: {exc}")
            return ""
        if text is None:
            self.warnings.append(f"{named} is not read: kenning reads imported HTML, text and Word documents")
            return ""
        return text

    def _document(self, part: Part, named: str) -> str:
        """An imported document's body, read as this one's is. Its notes and comments
        are not read (their numbers would clash with this document's), and the warnings
        say so when it has any."""
        if self.depth >= _MAX_NESTING:
            self.warnings.append(f"{named} is not read: imported documents nest more than {_MAX_NESTING} deep")
            return ""
        try:
            document = _open(part.blob, self.max_file_bytes)
        except TextCapReached:
            raise
        except (ReaderError, zipfile.BadZipFile, PackageNotFoundError, KeyError, ValueError) as exc:
            # A damaged part leaves the document holding it worth reading.
            self.warnings.append(f"{named} is not read: {exc}")
            return ""
        inner = _Imports(self.read_part, self.max_file_bytes, self.max_chars, self.depth + 1, self.warnings)
        body = _DocxText(self.max_chars, {}, inner)
        body.add_blocks(_docx_blocks(document.element.body, document))
        body.end_of_story()
        if next(document.element.body.iter(*_REFERENCES), None) is not None:
            self.warnings.append(f"{named}: its body is read, its footnotes, endnotes and comments are not")
        return "\n".join(body.lines)


def _within(element: BaseOxmlElement, tags: frozenset[str]) -> Iterator[BaseOxmlElement]:
    """The children of `element` with one of `tags`, in document order, and those of the
    wrappers it is read through (`_READ_THROUGH`).

    A content control still showing its placeholder ("Click or tap here to enter text.")
    holds the template's prompt, not anything the author typed: it is not read.
    """
    for child in element.iterchildren():
        if child.tag in tags:
            yield child
        elif child.tag in _READ_THROUGH and not _skipped(child):
            yield from _within(child, tags)


def _skipped(wrapper: BaseOxmlElement) -> bool:
    """A content control still showing its placeholder ("Click or tap here to enter text.")
    holds the template's prompt, not anything the author typed; one Word keeps a table of
    contents in, and a simple field making one, hold the headings again."""
    if wrapper.tag == _CONTENT_CONTROL:
        gallery = wrapper.find(_GALLERY)
        shows_toc = gallery is not None and gallery.get(qn("w:val")) == "Table of Contents"
        return shows_toc or wrapper.find(_PLACEHOLDER_SHOWN) is not None
    return wrapper.tag == _FIELD and bool(_NAVIGATION_FIELD.match(wrapper.get(qn("w:instr"), "")))


def _paragraph_text(paragraph: Paragraph, notes: _NoteLabels | None, fields: _Fields) -> str:
    """What `paragraph.text` would be if python-docx read runs inside wrappers: it reads
    only the paragraph's own runs and hyperlinks, so a tracked insertion or a filled-in
    form field was lost, and neither ruby nor equations. A note's reference is its
    `[^n]`, where Word shows the number. What a table of contents' field shows is held
    back (`fields`)."""
    parts = []
    held = []
    for run in _within(paragraph._p, _INLINE):
        if run.tag in _MATH:
            (held if fields.hiding else parts).append(_math_text(run))
            continue
        fields.step(run)
        text = _run_text(run)
        if fields.hiding:
            held.append(text)
            continue
        parts.append(text)
        if notes is not None:
            # Word writes a reference in a run of its own, so it goes after the run's text.
            parts.extend(notes.cite(reference) for reference in run.iterchildren(*_NOTE_REFERENCES))
    if held:
        fields.hold("".join(held))
    return "".join(parts)


def _run_text(run: BaseOxmlElement) -> str:
    """A run's text with its ruby: python-docx's `run.text` has neither the base nor the
    reading. The reading follows the base in brackets, "漢字(かんじ)", as plain Japanese
    text writes furigana: it is what the author put on the page, and the only place a
    name's reading is written, so a search by the reading in kana finds the word in kanji.
    """
    parts = [run.text]
    for ruby in run.iterchildren(_RUBY):
        base, reading = (
            "".join(_run_text(inner) for part in ruby.iterchildren(tag) for inner in _within(part, _RUNS))
            for tag in (_RUBY_BASE, _RUBY_TEXT)
        )
        parts.append(f"{base}({reading})" if reading.strip() and reading != base else base)
    return "".join(parts)


class _Fields:
    """The complex fields open as a story's runs are read, to hold back what a table of
    contents shows (`_NAVIGATION_FIELD`). Such a field begins in its first entry's
    paragraph and ends in its last's, its entries' page numbers fields inside it; the
    text of a field (`w:instrText`) comes before its result (`separate`).

    What is held back is kept until the field ends, so a damaged file whose field never
    does loses nothing (`unclosed`)."""

    def __init__(self) -> None:
        # Each open field's code so far and whether its result has begun.
        self._open: list[tuple[str, bool]] = []
        self._held: list[str] = []

    @property
    def hiding(self) -> bool:
        # Most paragraphs are in no field: checked for each run, so kept cheap for them.
        return bool(self._open) and any(shown and _NAVIGATION_FIELD.match(code) for code, shown in self._open)

    def step(self, run: BaseOxmlElement) -> None:
        for child in run.iterchildren(_FIELD_CHAR, _FIELD_CODE):
            if child.tag == _FIELD_CODE:
                if self._open:
                    code, shown = self._open[-1]
                    self._open[-1] = (code + (child.text or ""), shown)
                continue
            kind = child.get(_FIELD_CHAR_TYPE)
            if kind == "begin":
                self._open.append(("", False))
            elif kind == "separate" and self._open:
                self._open[-1] = (self._open[-1][0], True)
            elif kind == "end" and self._open:
                self._open.pop()
                if not self.hiding:
                    self._held.clear()

    def hold(self, text: str) -> None:
        if text.strip() and self.hiding:
            self._held.append(text)

    def unclosed(self) -> list[str]:
        return self._held if self.hiding else []


# How an equation's parts are laid out in a line, by the layout's tag: its arguments in
# order with what goes before and between them. Anything else (an equation, an argument,
# a matrix, an accent, a box) is its parts one after another.
_MATH_LAYOUTS: dict[str, tuple[tuple[str, str], ...]] = {
    "f": (("", "num"), ("/", "den")),
    "sSup": (("", "e"), ("^", "sup")),
    "sSub": (("", "e"), ("_", "sub")),
    "sSubSup": (("", "e"), ("_", "sub"), ("^", "sup")),
    "sPre": (("_", "sub"), ("^", "sup"), ("", "e")),
    "rad": (("", "deg"), ("√", "e")),
    "nary": (("_", "sub"), ("^", "sup"), (" ", "e")),
    "func": (("", "fName"), (" ", "e")),
}
# Where parts are lines or cells of their own, a space keeps their words apart.
_MATH_SPACED = frozenset({"oMathPara", "eqArr", "m", "mr"})


def _math_text(element: BaseOxmlElement) -> str:
    """An equation (OMML) as a line of text, "x^2", "(a+b)/c": its letters in Word's `m:t`
    runs, which python-docx skips, laid out so that a variable named in a fraction's
    numerator and one in its denominator stay two words."""
    name = etree.QName(element).localname
    if element.tag in _REMOVED or name.endswith("Pr"):
        return ""
    if element.tag == qn("w:r"):
        return _run_text(element)
    if element.tag == f"{_M}r":
        return "".join(text.text or "" for text in element.iterchildren(f"{_M}t"))
    if element.tag == f"{_M}d":
        # Brackets, Word's default round ones unless its properties say others.
        properties = element.find(f"{_M}dPr")
        chars = {"begChr": "(", "sepChr": "|", "endChr": ")"}
        for key in chars:
            given = properties.find(f"{_M}{key}") if properties is not None else None
            if given is not None:
                chars[key] = given.get(f"{_M}val", "")
        inside = chars["sepChr"].join(_math_text(part) for part in element.iterchildren(f"{_M}e"))
        return f"{chars['begChr']}{inside}{chars['endChr']}"
    layout = _MATH_LAYOUTS.get(name) if element.tag.startswith(_M) else None
    if layout is None:
        spaced = name in _MATH_SPACED
        line = ""
        # Elements only: a comment in the XML is no part of the equation.
        for part in (_math_text(child) for child in element.iterchildren(etree.Element)):
            # Side by side, "elapsed" and "t_max" are two names, not "elapsedt".
            if part and line and (spaced or (line[-1].isalnum() and part[0].isalnum())):
                line += " "
            line += part
        return line
    parts = []
    if name == "nary":
        properties = element.find(f"{_M}naryPr")
        sign = properties.find(f"{_M}chr") if properties is not None else None
        parts.append(sign.get(f"{_M}val", "∫") if sign is not None else "∫")
    for before, tag in layout:
        argument = element.find(f"{_M}{tag}")
        text = _math_text(argument) if argument is not None else ""
        if text:
            grouped = text if len(text) == 1 or text.isalnum() or text[0] + text[-1] == "()" else f"({text})"
            parts.append(before + grouped)
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


def _docx_comments(document: DocxDocument, imports: _Imports) -> list[str]:
    """Each comment as a list item led by who wrote it, so "what did Ada say" finds it, in
    the order of the comments part (a reply is a comment of its own there, after the one
    it answers). Not python-docx's `Comment.text`: it misses what a comment's paragraphs
    wrap, as `paragraph.text` does, and a nested table. A comment on text the author
    deleted alone is not read: it is about words the document no longer has, as a deleted
    reference's footnote is, and Word drops it when the deletion is accepted."""
    part = _docx_part(document, RT.COMMENTS)
    if part is None:
        return []
    removed = _comments_on_removed_text(document.element.body)
    items = []
    for comment in parse_xml(part.blob).iterchildren(qn("w:comment")):
        if comment.get(_ID) in removed:
            continue
        text = _docx_flat_text(comment, document, None, imports)
        author = " ".join(comment.get(qn("w:author"), "").split())
        if text:
            items.append(f"- {author}: {text}" if author else f"- {text}")
    return items


_COMMENT_START = qn("w:commentRangeStart")
_COMMENT_END = qn("w:commentRangeEnd")
_COMMENT_REFERENCE = qn("w:commentReference")
_TEXTS = frozenset({qn("w:t"), qn("w:delText"), f"{_M}t"})


def _comments_on_removed_text(body: BaseOxmlElement) -> set[str]:
    """The ids of the comments whose range holds words only in tracked deletions (or a
    move's old place), and of those marking a point inside one. A comment whose range
    also holds text that stands is about that text too."""
    open_ranges: set[str] = set()
    on_standing: set[str] = set()
    on_removed: set[str] = set()
    points: dict[str, bool] = {}
    removed_depth = 0
    for event, element in etree.iterwalk(body, events=("start", "end")):
        tag = element.tag
        if tag in _REMOVED:
            removed_depth += 1 if event == "start" else -1
        elif event != "start":
            continue
        elif tag == _COMMENT_START:
            open_ranges.add(element.get(_ID))
        elif tag == _COMMENT_END:
            open_ranges.discard(element.get(_ID))
        elif tag == _COMMENT_REFERENCE:
            points[element.get(_ID)] = removed_depth > 0
        elif tag in _TEXTS and open_ranges and (element.text or "").strip():
            (on_removed if removed_depth else on_standing).update(open_ranges)
    ranged = on_standing | on_removed
    return (on_removed - on_standing) | {name for name, removed in points.items() if removed and name not in ranged}


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


def _docx_table_rows(table: Table, notes: _NoteLabels | None, imports: _Imports) -> list[str]:
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
                cells[column] = _docx_flat_text(tc, table, notes, imports)
            column += tc.grid_span
        if any(cells.values()):
            rows.append(" | ".join(cells.values()))
        above = cells
    return rows


def _docx_flat_text(
    element: BaseOxmlElement, parent: ProvidesStoryPart, notes: _NoteLabels | None, imports: _Imports
) -> str:
    """A cell's or note's words on one line, its tables and text boxes included:
    `cell.text` holds only its paragraphs, so a form laid out in nested tables lost every
    word of them."""
    parts = []
    fields = _Fields()
    for block in _docx_blocks(element, parent):
        if isinstance(block, Table):
            parts.extend(_docx_table_rows(block, notes, imports))
        elif isinstance(block, Paragraph):
            parts.append(_paragraph_text(block, notes, fields))
            parts.extend(_docx_flat_text(box, block, notes, imports) for box in _text_boxes(block))
        else:
            parts.append(imports.text(block))
    parts.extend(fields.unclosed())
    return " ".join(" ".join(parts).split())
