"""What a DOCX holds beyond runs of text: ruby, equations, tables of contents, parts Word
imported whole, comments on deleted text. Each file is built with python-docx and the
raw XML Word writes where python-docx has no API, then read as kenning reads it."""

import io
import logging
from pathlib import Path
from xml.sax.saxutils import escape

import docx
import pytest
from docx.enum.style import WD_STYLE_TYPE
from docx.opc.constants import RELATIONSHIP_TYPE as RT
from docx.opc.packuri import PackURI
from docx.opc.part import Part
from docx.oxml import parse_xml
from docx.text.paragraph import Paragraph

from kenning.config import ChunkingSettings, LimitsSettings, SourceSettings
from kenning.ingest.convert import ConvertLimits, convert_file
from kenning.ingest.parse_pool import ParsePool
from kenning.ingest.pipeline import IngestOptions
from kenning.ingest.readers import ReadLimits, read_file
from kenning.ingest.scan import FolderScanner
from kenning.store import documents, sources
from kenning.store.database import Database
from kenning.store.records import DocumentMeta
from tests.helpers import add_note_reference, add_notes, search, wrap_docx

_NS = (
    'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main" '
    'xmlns:m="http://schemas.openxmlformats.org/officeDocument/2006/math" '
    'xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"'
)
LIMITS = ConvertLimits(ReadLimits(), target_chars=1200, overlap_chars=150, max_chunks=1000)


def _xml(fragment: str):
    return parse_xml(f'<w:wrap {_NS}>{fragment}</w:wrap>')[0]


def _run(text: str) -> str:
    return f'<w:r><w:t xml:space="preserve">{escape(text)}</w:t></w:r>'


def _math_run(text: str) -> str:
    return f"<m:r><m:t>{escape(text)}</m:t></m:r>"


def _field_char(kind: str) -> str:
    return f'<w:r><w:fldChar w:fldCharType="{kind}"/></w:r>'


def _field_code(code: str) -> str:
    return f'<w:r><w:instrText xml:space="preserve"> {escape(code)} </w:instrText></w:r>'


def _append(paragraph: Paragraph, *fragments: str) -> None:
    for fragment in fragments:
        paragraph._p.append(_xml(fragment))


async def _index(db: Database, path: Path) -> None:
    """Store a file's chunks as the ingest pipeline reads them."""
    source_id = (await sources.sync_sources(db, [("notes", str(path.parent), "default")]))["notes"]
    converted = convert_file(path, path.stem, LIMITS)
    document_id = await documents.mark_scanning(db, source_id, path.name)
    meta = DocumentMeta(converted.title, converted.format, 1.0, 1, f"bytes:{path}", converted.text_digest)
    await documents.replace_items(db, document_id, meta, converted.items)


# --- ruby -------------------------------------------------------------------------------


def _ruby(base: str, reading: str) -> str:
    return (
        '<w:r><w:ruby><w:rubyPr><w:rubyAlign w:val="distributeSpace"/><w:hps w:val="10"/>'
        '<w:hpsRaise w:val="18"/><w:hpsBaseText w:val="21"/><w:lid w:val="ja-JP"/></w:rubyPr>'
        f"<w:rt>{_run(reading)}</w:rt><w:rubyBase>{_run(base)}</w:rubyBase></w:ruby></w:r>"
    )


async def test_docx_ruby_reads_the_base_in_line_and_a_search_by_its_reading_finds_it(
    tmp_path: Path, db: Database
) -> None:
    document = docx.Document()
    paragraph = document.add_paragraph("担当は")
    _append(paragraph, _ruby("東海林", "しょうじ"), _run("さんです。"), _ruby("漢字", "かんじ"), _run("の研修。"))
    document.save(tmp_path / "担当.docx")

    # The reading follows its base as plain Japanese text writes furigana.
    assert read_file(tmp_path / "担当.docx").text == "担当は東海林(しょうじ)さんです。漢字(かんじ)の研修。"
    await _index(db, tmp_path / "担当.docx")
    # A surname whose reading cannot be guessed from its kanji is found by its kana, and
    # the kanji still by themselves.
    for query in ("しょうじ", "東海林", "漢字の研修"):
        assert [Path(hit.path).name for hit in await search(db, query)] == ["担当.docx"], query


# --- equations --------------------------------------------------------------------------


def test_docx_equations_are_read_in_line_with_their_parts_apart(tmp_path: Path) -> None:
    document = docx.Document()
    inline = document.add_paragraph("Rest energy is ")
    einstein = (
        f"<m:oMath>{_math_run('E=m')}<m:sSup><m:sSupPr/><m:e>{_math_run('c')}</m:e>"
        f"<m:sup>{_math_run('2')}</m:sup></m:sSup></m:oMath>"
    )
    _append(inline, einstein, _run(", as Einstein wrote."))
    speed = (
        f"<m:oMathPara><m:oMath>{_math_run('velocity=')}<m:f><m:fPr/>"
        f"<m:num>{_math_run('distance')}</m:num><m:den>{_math_run('elapsed')}"
        f"<m:sSub><m:e>{_math_run('t')}</m:e><m:sub>{_math_run('max')}</m:sub></m:sSub></m:den></m:f>"
        f"{_math_run('+')}<m:d><m:e>{_math_run('a+b')}</m:e></m:d></m:oMath></m:oMathPara>"
    )
    _append(document.add_paragraph(), speed)
    document.save(tmp_path / "physics.docx")

    assert read_file(tmp_path / "physics.docx").text.split("\n") == [
        "Rest energy is E=m c^2, as Einstein wrote.",
        "",
        "velocity=distance/(elapsed t_max)+(a+b)",
    ]


# --- tables of contents -----------------------------------------------------------------

_HEADINGS = ("Mooring fees", "Dredging schedule", "Slipway repairs", "Harbour lights")
_BODY = (
    "The trust reviewed this at length, with the harbourmaster reporting on the state of the "
    "works, the costs set against the budget and the members' questions. "
)


def _toc_entry(paragraph: Paragraph, heading: str, page: int, first: bool = False, last: bool = False) -> None:
    """One entry of a table of contents as Word writes it: the whole table is one TOC
    field, begun in the first entry and ended in the last, each entry a link to its
    heading with a PAGEREF field for its page number."""
    if first:
        _append(paragraph, _field_char("begin"), _field_code('TOC \\o "1-3" \\h \\z \\u'), _field_char("separate"))
    bookmark = f"_Toc{page:08}"
    page_number = _field_char("begin") + _field_code(f"PAGEREF {bookmark} \\h") + _field_char("separate")
    _append(
        paragraph,
        f'<w:hyperlink w:anchor="{bookmark}" w:history="1">{_run(heading)}<w:r><w:tab/></w:r>'
        f"{page_number}{_run(str(page))}{_field_char('end')}</w:hyperlink>",
    )
    if last:
        _append(paragraph, _field_char("end"))


def _report(path: Path) -> Path:
    """A report whose sections name their subject in their headings alone, as a section
    under "Slipway repairs" talks of "the works"."""
    document = docx.Document()
    document.add_heading("Harbour Trust Annual Report", 0)
    document.add_paragraph("Contents")
    for n, heading in enumerate(_HEADINGS):
        _toc_entry(document.add_paragraph(), heading, n + 2, first=n == 0, last=n == len(_HEADINGS) - 1)
    for heading in _HEADINGS:
        document.add_heading(heading, 1)
        for _ in range(4):
            document.add_paragraph(_BODY)
    document.save(path)
    return path


def test_docx_table_of_contents_field_is_left_out_and_other_fields_are_read(tmp_path: Path) -> None:
    document = docx.Document()
    document.add_heading("Report", 0)
    for n, heading in enumerate(_HEADINGS[:2]):
        _toc_entry(document.add_paragraph(), heading, n + 2, first=n == 0, last=n == 1)
    # A table of contents in the content control Word keeps it in, one made by a simple
    # field, and one whose field codes were removed (its entries still in "toc 1" style).
    in_control = document.add_paragraph("Slipway repairs 4")
    gallery = '<w:docPartObj><w:docPartGallery w:val="Table of Contents"/><w:docPartUnique/></w:docPartObj>'
    wrap_docx([in_control._p], "sdt", properties=gallery)
    simple = document.add_paragraph()
    _append(simple, f'<w:fldSimple w:instr=" TOC \\o &quot;1-3&quot; ">{_run("Harbour lights 5")}</w:fldSimple>')
    document.styles.add_style("toc 1", WD_STYLE_TYPE.PARAGRAPH)
    document.add_paragraph("Mooring fees 2", style="toc 1")
    dated = document.add_paragraph("Printed ")
    _append(dated, _field_char("begin"), _field_code("DATE \\@ \"d MMMM yyyy\""), _field_char("separate"))
    _append(dated, _run("12 May 2026"), _field_char("end"))
    document.add_heading("Mooring fees", 1)
    document.add_paragraph("Forty berths were let.")
    document.save(tmp_path / "report.docx")

    assert read_file(tmp_path / "report.docx").text.split("\n") == [
        "# Report",
        "",
        "Printed 12 May 2026",
        "",
        "# Mooring fees",
        "",
        "Forty berths were let.",
    ]


def test_docx_table_of_contents_that_never_ends_hides_nothing(tmp_path: Path) -> None:
    document = docx.Document()
    # A damaged file: the field's end was lost, and all after its start would be hidden.
    entry = document.add_paragraph()
    _append(entry, _field_char("begin"), _field_code("TOC \\o"), _field_char("separate"), _run("Moorings 2"))
    document.add_paragraph("Forty berths were let.")
    document.save(tmp_path / "damaged.docx")

    assert read_file(tmp_path / "damaged.docx").text.split("\n") == ["Moorings 2", "", "Forty berths were let."]


async def test_a_heading_query_cites_the_section_not_the_table_of_contents(tmp_path: Path, db: Database) -> None:
    await _index(db, _report(tmp_path / "report.docx"))

    for heading in _HEADINGS:
        for query in (heading.lower(), heading.split()[-1]):
            hits = await search(db, query)
            # Each heading is in the body once: the table of contents put its words in
            # the first chunk too, and that chunk came first for every one of them.
            assert hits[0].section == heading, (query, hits[0])
            opening = [hit for hit in hits if hit.section == "Harbour Trust Annual Report"]
            assert not any(heading in hit.snippet for hit in opening), query


# --- parts imported whole ---------------------------------------------------------------


def _import(document: docx.Document, anchor: Paragraph, name: str, content_type: str, blob: bytes) -> None:
    """A part Word imports whole (`w:altChunk`), standing after `anchor`, as a mail merge
    or a web app pastes HTML into a document."""
    part = Part(PackURI(f"/word/{name}"), content_type, blob, document.part.package)
    rel_id = document.part.relate_to(part, RT.A_F_CHUNK)
    anchor._p.addnext(_xml(f'<w:altChunk r:id="{rel_id}"/>'))


def test_docx_imported_html_and_text_are_read_in_place_and_other_parts_are_named(tmp_path: Path) -> None:
    document = docx.Document()
    document.add_heading("Berth offer", 1)
    intro = document.add_paragraph("Dear member,")
    html = "<html><body><h2>Terms</h2><p>The berth at <b>pontoon C</b> is yours from April.</p></body></html>"
    _import(document, intro, "afchunk1.htm", "text/html", html.encode())
    table = document.add_table(rows=1, cols=2)
    table.cell(0, 0).text = "Fee"
    _import(document, table.cell(0, 1).paragraphs[0], "afchunk2.txt", "text/plain", "£310 a year".encode())
    closing = document.add_paragraph("Yours, the harbourmaster.")
    _import(document, closing, "afchunk3.rtf", "application/rtf", rb"{\rtf1\ansi Slipway rules}")
    _import(document, closing, "afchunk4.txt", "application/txt", bytes(range(256)))
    document.save(tmp_path / "offer.docx")

    result = read_file(tmp_path / "offer.docx")

    assert result.text.split("\n") == [
        "# Berth offer",
        "",
        "Dear member,",
        "",
        "## Terms",
        "",
        "The berth at **pontoon C** is yours from April.",
        "",
        "Fee | £310 a year",
        "",
        "Yours, the harbourmaster.",
    ]
    # The RTF part and a text part holding no text are not read, and the reading says so.
    assert result.warnings == (
        "imported part /word/afchunk4.txt (application/txt) is not read: binary content (NUL bytes), not text",
        "imported part /word/afchunk3.rtf (application/rtf) is not read:"
        " kenning reads imported HTML, text and Word documents",
    )
    assert convert_file(tmp_path / "offer.docx", "offer", LIMITS).warnings == result.warnings


def test_docx_a_warning_naming_a_part_is_redacted_as_the_text_is(tmp_path: Path) -> None:
    """A warning is logged, and it names the part, whose name the file chose."""
    token = "ghp_" + "a1B2" * 9
    document = docx.Document()
    intro = document.add_paragraph("Dear member,")
    _import(document, intro, f"{token}.rtf", "application/rtf", rb"{\rtf1\ansi Slipway rules}")
    document.save(tmp_path / "offer.docx")

    [warning] = convert_file(tmp_path / "offer.docx", "offer", LIMITS).warnings
    assert warning.startswith("imported part /word/[REDACTED]") and token not in warning


def test_docx_an_imported_document_has_its_body_read_in_place(tmp_path: Path) -> None:
    merged = docx.Document()
    merged.add_heading("Season papers", 1)
    cover = merged.add_paragraph("Three letters follow.")
    letter = docx.Document()
    letter.add_paragraph("Dear Ewan, the crane is booked for the fourth.")
    add_note_reference(letter.paragraphs[0], "footnote", 1)
    add_notes(letter, "footnote", {1: "Weather permitting."})
    inner = docx.Document()
    inner.add_paragraph("Enclosed: the crane driver's certificate.")
    _import(letter, letter.add_paragraph("Yours, Ada"), "afchunk1.txt", "text/plain", "P.S. bring gloves".encode())
    _import(letter, letter.paragraphs[-1], "chunk2.docx", _DOCX_MAIN, _saved(inner))
    _import(merged, cover, "chunk1.docx", _DOCX_MAIN, _saved(letter))
    _import(merged, merged.add_paragraph("End of papers."), "chunk3.docx", _DOCX_MAIN, b"PK\x03\x04 damaged")
    merged.save(tmp_path / "papers.docx")

    result = read_file(tmp_path / "papers.docx")

    assert result.text.split("\n") == [
        "# Season papers",
        "",
        "Three letters follow.",
        "",
        "Dear Ewan, the crane is booked for the fourth.",
        "",
        "Yours, Ada",
        "",
        "Enclosed: the crane driver's certificate.",
        "",
        "P.S. bring gloves",
        "",
        "End of papers.",
    ]
    assert result.warnings == (
        f"imported part /word/chunk1.docx ({_DOCX_MAIN}):"
        " its body is read, its footnotes, endnotes and comments are not",
        f"imported part /word/chunk3.docx ({_DOCX_MAIN}) is not read: File is not a zip file",
    )


def test_docx_an_imported_documents_headers_and_footers_are_not_read_and_the_hosts_are(tmp_path: Path) -> None:
    # Word shows the host's headers on the pages an imported document fills, and drops the
    # imported one's own when it converts the part: the contractor's letterhead is no line
    # a reader of the minutes ever sees.
    minutes = docx.Document()
    minutes.sections[0].header.paragraphs[0].text = "Harbour board minutes"
    opening = minutes.add_paragraph("The contractor's letter is attached.")
    letter = docx.Document()
    letter.sections[0].header.paragraphs[0].text = "Bain and Sons, crane hire"
    letter.sections[0].footer.paragraphs[0].text = "Registered in Leith"
    letter.add_paragraph("The crane is serviced each spring.")
    _import(minutes, opening, "chunk1.docx", _DOCX_MAIN, _saved(letter))
    minutes.save(tmp_path / "minutes.docx")

    result = read_file(tmp_path / "minutes.docx")

    assert result.text.split("\n") == [
        "The contractor's letter is attached.",
        "",
        "The crane is serviced each spring.",
        "",
        "## Header",
        "",
        "Harbour board minutes",
    ]
    assert result.warnings == ()


def _saved(document: docx.Document) -> bytes:
    buffer = io.BytesIO()
    document.save(buffer)
    return buffer.getvalue()


_DOCX_MAIN = "application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"


# --- comments on deleted text -----------------------------------------------------------


def test_docx_a_comment_on_deleted_text_alone_is_not_read(tmp_path: Path) -> None:
    document = docx.Document()
    change = 'w:id="{}" w:author="Ada Okafor" w:date="2026-03-01T09:00:00Z"'
    paragraph = document.add_paragraph("The slipway ")
    withdrawn = paragraph.add_run("closes in March")
    document.add_comment([withdrawn], "Surely not before Easter?", author="Ewan Bain")
    wrap_docx([withdrawn._r], "del", change.format(1))
    paragraph.add_run(" reopens ")
    kept = paragraph.add_run("in April")
    document.add_comment([kept], "Confirmed by the contractor.", author="Ada Okafor")
    # A comment on deleted and standing words together is about the words that stand.
    both = document.add_paragraph("Dredging ")
    gone, staying = both.add_run("next winter"), both.add_run(" in June")
    document.add_comment([gone, staying], "Which budget pays?", author="Morag Sinclair")
    wrap_docx([gone._r], "del", change.format(2))
    document.save(tmp_path / "works.docx")

    text = read_file(tmp_path / "works.docx").text
    assert "Easter" not in text
    assert text.split("\n")[-4:] == [
        "## Comments",
        "",
        "- Ada Okafor: Confirmed by the contractor.",
        "- Morag Sinclair: Which budget pays?",
    ]


_W14 = "http://schemas.microsoft.com/office/word/2010/wordml"
_W15 = "http://schemas.microsoft.com/office/word/2012/wordml"


def _thread(document: docx.Document, comments: list[tuple]) -> None:
    """Gives each comment a paragraph id and writes the commentsExtended part naming the
    comment each reply (comment, parent) answers by its last paragraph's `w14:paraId`, as
    Word 2013 and later thread them."""
    ids = {}
    for number, (comment, _) in enumerate(comments, start=1):
        ids[comment.comment_id] = f"{number:08X}"
        comment.paragraphs[-1]._p.set(f"{{{_W14}}}paraId", ids[comment.comment_id])
    entries = "".join(
        f'<w15:commentEx w15:paraId="{ids[comment.comment_id]}" w15:done="0"'
        + (f' w15:paraIdParent="{ids[parent.comment_id]}"/>' if parent is not None else "/>")
        for comment, parent in comments
    )
    blob = f'<w15:commentsEx xmlns:w15="{_W15}">{entries}</w15:commentsEx>'.encode()
    content_type = "application/vnd.openxmlformats-officedocument.wordprocessingml.commentsExtended+xml"
    part = Part(PackURI("/word/commentsExtended.xml"), content_type, blob, document.part.package)
    document.part.relate_to(part, "http://schemas.microsoft.com/office/2011/relationships/commentsExtended")


def test_docx_replies_to_a_comment_that_is_not_read_are_not_read_either(tmp_path: Path) -> None:
    document = docx.Document()
    paragraph = document.add_paragraph("The slipway ")
    withdrawn = paragraph.add_run("closes in March")
    question = document.add_comment([withdrawn], "Surely not before Easter?", author="Ewan Bain")
    wrap_docx([withdrawn._r], "del", 'w:id="1" w:author="Ada Okafor" w:date="2026-03-01T09:00:00Z"')
    kept = paragraph.add_run(" and reopens in April")
    confirmed = document.add_comment([kept], "Confirmed by the contractor.", author="Ada Okafor")
    # Replies are anchored nowhere in the body: the commentsExtended part threads them.
    answer = document.comments.add_comment("Easter falls in March this year.", author="Ada Okafor")
    # Word threads a reply to a reply under the first comment; other tools chain them.
    follow_up = document.comments.add_comment("Then the regatta moves.", author="Ewan Bain")
    thanks = document.comments.add_comment("Thanks, noted for the regatta.", author="Morag Sinclair")
    threads = [(question, None), (confirmed, None), (answer, question), (follow_up, answer), (thanks, confirmed)]
    _thread(document, threads)
    document.save(tmp_path / "works.docx")

    text = read_file(tmp_path / "works.docx").text
    assert text.split("\n")[-4:] == [
        "## Comments",
        "",
        "- Ada Okafor: Confirmed by the contractor.",
        "- Morag Sinclair: Thanks, noted for the regatta.",
    ]
    assert "Easter" not in text and "regatta moves" not in text


async def test_a_sweep_indexes_a_docx_with_a_part_it_cannot_read_and_logs_which(
    tmp_path: Path, db: Database, parsers: ParsePool, caplog: pytest.LogCaptureFixture
) -> None:
    folder = tmp_path / "notes"
    folder.mkdir()
    document = docx.Document()
    intro = document.add_paragraph("Berth offer for the coming season.")
    _import(document, intro, "afchunk1.htm", "text/html", b"<p>Pontoon C is yours from April.</p>")
    _import(document, intro, "afchunk2.mht", "message/rfc822", b"MIME-Version: 1.0\r\n\r\nSlipway rules")
    document.save(folder / "offer.docx")
    ids = await sources.sync_sources(db, [("notes", str(folder), "default")])
    options = IngestOptions(ChunkingSettings(), LimitsSettings(), max_file_bytes=1 << 20, parsers=parsers)

    with caplog.at_level(logging.WARNING, logger="kenning.ingest.pipeline"):
        counts = await FolderScanner(db, ids["notes"], SourceSettings(name="notes", path=folder), options).sweep()

    assert counts["indexed"] == 1
    assert [Path(hit.path).name for hit in await search(db, "pontoon")] == ["offer.docx"]
    [warning] = [record.getMessage() for record in caplog.records if record.levelno == logging.WARNING]
    assert warning == (
        f"{folder / 'offer.docx'}: imported part /word/afchunk2.mht (message/rfc822) is not read: "
        "kenning reads imported HTML, text and Word documents"
    )
