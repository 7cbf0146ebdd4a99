"""Opening a DOCX package: the zip held to the file-size limit before python-docx
inflates it, the part classes python-docx gives parts Word imports whole, and finding a
part of the document by its relationship."""

from __future__ import annotations

import io
import zipfile

import docx
from docx.document import Document as DocxDocument
from docx.opc.constants import RELATIONSHIP_TYPE as RT
from docx.opc.part import Part, PartFactory

from kenning.errors import ReaderError

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


def open_docx(data: bytes, max_file_bytes: int) -> DocxDocument:
    """A DOCX is a zip that python-docx inflates whole; like a .gz, what it inflates to
    is held to the file-size limit. zipfile stops each member at its declared size, so the
    declared sizes are a bound, not a claim."""
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        inflated = sum(member.file_size for member in archive.infolist())
    if inflated > max_file_bytes:
        raise ReaderError(f"DOCX inflates to {inflated} bytes, over the {max_file_bytes}-byte limit")
    return docx.Document(io.BytesIO(data))


def docx_part(document: DocxDocument, reltype: str) -> Part | None:
    """The document's part of one kind (its footnotes, its comments), if it has one."""
    rels = document.part.rels.values()
    return next((rel.target_part for rel in rels if rel.reltype == reltype and not rel.is_external), None)
