"""Parts Word imported whole (`w:altChunk`: pasted HTML, a text file, another document),
read where they stand: HTML and text by kenning's reader for their type, a Word document
by the DOCX reader itself, one of a type there is no reader for named in the warnings."""

from __future__ import annotations

import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field

from docx.document import Document as DocxDocument
from docx.opc.exceptions import PackageNotFoundError
from docx.opc.part import Part
from docx.oxml.ns import qn
from docx.oxml.xmlchemy import BaseOxmlElement
from docx.types import ProvidesStoryPart

from kenning.errors import ReaderError, TextCapReached
from kenning.ingest.docx_notes import NOTE_REFERENCES
from kenning.ingest.docx_package import open_docx

# What reads a part Word imported whole (`w:altChunk`): its content type, name and bytes
# to text, or None for a type kenning has no reader for.
PartReader = Callable[[str, str, bytes], "str | None"]
# What reads an imported Word document's body as the DOCX reader reads one, given the
# imports of that document (one level deeper).
BodyReader = Callable[[DocxDocument, "Imports"], str]


@dataclass(frozen=True)
class Imported:
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
_REFERENCES = (*NOTE_REFERENCES, qn("w:commentReference"))


@dataclass
class Imports:
    """Reads the imported parts of one document, and says which it could not."""

    read_part: PartReader
    read_body: BodyReader
    max_file_bytes: int
    max_chars: int
    depth: int = 0
    warnings: list[str] = field(default_factory=list)

    def text(self, imported: Imported) -> str:
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
        say so when it has any. Its headers and footers are not read, nor warned of: Word
        drops them when it converts the part, and the pages the body fills show the
        host's, which are read after the host's body."""
        if self.depth >= _MAX_NESTING:
            self.warnings.append(f"{named} is not read: imported documents nest more than {_MAX_NESTING} deep")
            return ""
        try:
            document = open_docx(part.blob, self.max_file_bytes)
        except TextCapReached:
            raise
        except (ReaderError, zipfile.BadZipFile, PackageNotFoundError, KeyError, ValueError) as exc:
            # A damaged part leaves the document holding it worth reading.
            self.warnings.append(f"{named} is not read: {exc}")
            return ""
        inner = Imports(
            self.read_part, self.read_body, self.max_file_bytes, self.max_chars, self.depth + 1, self.warnings
        )
        body = self.read_body(document, inner)
        if next(document.element.body.iter(*_REFERENCES), None) is not None:
            self.warnings.append(f"{named}: its body is read, its footnotes, endnotes and comments are not")
        return body
