"""Small shared helpers for tests that run retrieval without a daemon."""

from __future__ import annotations

import itertools
from pathlib import Path
from xml.sax.saxutils import escape

from docx.document import Document as DocxDocument
from docx.opc.constants import CONTENT_TYPE as CT
from docx.opc.constants import RELATIONSHIP_TYPE as RT
from docx.opc.packuri import PackURI
from docx.opc.part import Part
from docx.oxml import parse_xml
from docx.text.paragraph import Paragraph
from fpdf import FPDF

from kenning.config import RetrievalSettings
from kenning.api import Hit, Stored
from kenning.retrieval.search import Retriever
from kenning.store import documents
from kenning.store.database import Database
from kenning.store.records import DocumentMeta, NewItem
from kenning.store.texthash import text_hash
from kenning.text import cjk


async def search(
    db: Database, query: str, limit: int = 10, source: str | None = None, namespace: str | None = None
) -> list[Hit]:
    """The keyword leg through the real retriever, as the daemon runs it before vectors exist."""
    result = await Retriever(db, RetrievalSettings()).search(
        query, limit, source=source, namespace=namespace, legs=("keyword",)
    )
    return result.hits


async def store_document(
    db: Database, source_id: int, path: str, *texts: str, title: str = "Title", mtime: float = 1.0,
    date: str | None = None,
) -> tuple[int, Stored]:
    """Index a document's chunks as the ingest pipeline does; returns its id and what became of it.
    `date`: the day it speaks from, as its front matter would give it."""
    document_id = await documents.mark_scanning(db, source_id, path)
    items = [
        NewItem(title, "Section", text, n + 1, n + 1, cjk=cjk.index_text(title, "Section", text))
        for n, text in enumerate(texts)
    ]
    meta = DocumentMeta(
        title, "markdown", mtime, 1, f"bytes:{path}:{texts}", text_hash(texts),
        date=date, date_source="front matter" if date else None,
    )
    stored, _ = await documents.replace_items(db, document_id, meta, items)
    return document_id, stored


def make_pdf(path: Path, pages: list[list[str]]) -> Path:
    pdf = FPDF()
    pdf.set_font("Helvetica", size=11)
    for lines in pages:
        pdf.add_page()
        for line in lines:
            pdf.cell(text=line)
            pdf.ln()
    pdf.output(str(path))
    return path


# --- DOCX parts python-docx cannot make -----------------------------------------------

_W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
_DOCX_NS = (
    f'xmlns:w="{_W}" '
    'xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/2006" '
    'xmlns:wp="http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing" '
    'xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" '
    'xmlns:wps="http://schemas.microsoft.com/office/word/2010/wordprocessingShape" '
    'xmlns:v="urn:schemas-microsoft-com:vml"'
)


_SHAPE_IDS = itertools.count(1)


def _docx_paragraphs_xml(lines: tuple[str, ...]) -> str:
    return "".join(f'<w:p><w:r><w:t xml:space="preserve">{escape(line)}</w:t></w:r></w:p>' for line in lines)


def add_text_box(paragraph: Paragraph, *lines: str, legacy: bool = False) -> None:
    """A text box anchored in `paragraph`, written as Word writes one: a DrawingML shape,
    and the same text again in a VML fallback for readers of Word 2007's format; or, if
    `legacy`, the VML alone, as Word 2003 and its converters wrote it."""
    content = f"<w:txbxContent>{_docx_paragraphs_xml(lines)}</w:txbxContent>"
    # Word can report a document whose drawings share an id as damaged.
    shape = next(_SHAPE_IDS)
    vml = (
        '<w:pict><v:shape type="#_x0000_t202" style="width:144pt;height:36pt">'
        f"<v:textbox>{content}</v:textbox></v:shape></w:pict>"
    )
    if legacy:
        paragraph._p.append(parse_xml(f"<w:r {_DOCX_NS}>{vml}</w:r>"))
        return
    paragraph._p.append(
        parse_xml(
            f"<w:r {_DOCX_NS}><mc:AlternateContent>"
            '<mc:Choice Requires="wps"><w:drawing><wp:inline distT="0" distB="0" distL="0" distR="0">'
            f'<wp:extent cx="1828800" cy="457200"/><wp:docPr id="{shape}" name="Text Box {shape}"/>'
            '<a:graphic><a:graphicData uri="http://schemas.microsoft.com/office/word/2010/wordprocessingShape">'
            '<wps:wsp><wps:cNvSpPr txBox="1"/><wps:spPr><a:xfrm><a:off x="0" y="0"/>'
            '<a:ext cx="1828800" cy="457200"/></a:xfrm><a:prstGeom prst="rect"><a:avLst/></a:prstGeom></wps:spPr>'
            f"<wps:txbx>{content}</wps:txbx><wps:bodyPr/></wps:wsp>"
            "</a:graphicData></a:graphic></wp:inline></w:drawing></mc:Choice>"
            f"<mc:Fallback>{vml}</mc:Fallback></mc:AlternateContent></w:r>"
        )
    )


def add_notes(document: DocxDocument, kind: str, notes: dict[int, str]) -> None:
    """A footnotes or endnotes part (`kind` "footnote" or "endnote") holding `notes` by
    id, after the two separator notes Word always writes."""
    separators = (
        f'<w:{kind} w:type="separator" w:id="-1"><w:p><w:r><w:separator/></w:r></w:p></w:{kind}>'
        f'<w:{kind} w:type="continuationSeparator" w:id="0"><w:p><w:r><w:continuationSeparator/></w:r></w:p></w:{kind}>'
    )
    bodies = "".join(
        f'<w:{kind} w:id="{note_id}"><w:p><w:r><w:{kind}Ref/></w:r>'
        f'<w:r><w:t xml:space="preserve"> {escape(text)}</w:t></w:r></w:p></w:{kind}>'
        for note_id, text in notes.items()
    )
    declaration = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
    blob = f"{declaration}<w:{kind}s {_DOCX_NS}>{separators}{bodies}</w:{kind}s>"
    content_type = CT.WML_FOOTNOTES if kind == "footnote" else CT.WML_ENDNOTES
    reltype = RT.FOOTNOTES if kind == "footnote" else RT.ENDNOTES
    part = Part(PackURI(f"/word/{kind}s.xml"), content_type, blob.encode(), document.part.package)
    document.part.relate_to(part, reltype)


def add_note_reference(paragraph: Paragraph, kind: str, note_id: int) -> None:
    paragraph._p.append(parse_xml(f'<w:r {_DOCX_NS}><w:{kind}Reference w:id="{note_id}"/></w:r>'))


def wrap_docx(elements: list, tag: str, attributes: str = "", properties: str = "") -> None:
    """Moves `elements` (siblings, in order) into a `w:{tag}` wrapper standing where the
    first stood, as Word wraps what python-docx cannot: a content control (`sdt`, whose
    `w:sdtPr` holds `properties`) keeps them in its `w:sdtContent`, and a tracked deletion
    or a move's old place holds its runs' words in `w:delText`, as Word writes them (a
    deleted text box's own words stay as they were)."""
    if tag == "sdt":
        wrapper = parse_xml(f"<w:sdt {_DOCX_NS}><w:sdtPr>{properties}</w:sdtPr><w:sdtContent/></w:sdt>")
        content = wrapper[-1]
    else:
        wrapper = content = parse_xml(f"<w:{tag} {_DOCX_NS} {attributes}/>")
    elements[0].addprevious(wrapper)
    for element in elements:
        content.append(element)
    if tag in ("del", "moveFrom"):
        for run in elements:
            for text in run.iterchildren(f"{{{_W}}}t"):
                text.tag = f"{{{_W}}}delText"
