"""Readers on real files: PDFs from fpdf2, DOCX from python-docx, raw bytes for encodings."""

import gzip
import os
import contextlib
import random
import threading
from concurrent.futures import Future
import time
from pathlib import Path

import docx
import pytest
from fpdf import FPDF

from kenning.errors import ReaderError
from kenning.ingest.chunker import chunk_document
from kenning.ingest.readers import SUPPORTED_EXTENSIONS, ReadLimits, decode_text, read_file, reader_suffix, reason_line
from kenning.text.html import html_to_markdown
from tests.helpers import add_note_reference, add_notes, add_text_box, make_pdf, wrap_docx
from tests.hostile_files import (
    docx_many_paragraphs,
    docx_whitespace_bomb,
    gzip_bomb,
    html_comment_openers,
    pdf_reference_circle,
    pdf_reference_loop,
    pdf_tex_spacing,
    write_pdf,
    write_pdf_objects,
)


def write(path: Path, data: str | bytes) -> Path:
    if isinstance(data, str):
        data = data.encode()
    path.write_bytes(data)
    return path


# --- decoding -------------------------------------------------------------------------


@pytest.mark.parametrize("encoding", ["utf-16-le", "utf-16-be"])
def test_utf16_with_bom_is_decoded_without_the_bom(encoding: str) -> None:
    bom = b"\xff\xfe" if encoding.endswith("le") else b"\xfe\xff"
    data = bom + "Grüße\r\nzweite Zeile".encode(encoding)
    assert decode_text(data) == "Grüße\nzweite Zeile"


@pytest.mark.parametrize("encoding", ["utf-32-le", "utf-32-be"])
def test_utf32_with_bom_is_text(encoding: str, tmp_path: Path) -> None:
    """Its BOM starts as UTF-16's does: read as UTF-16, it was refused as binary."""
    bom = b"\xff\xfe\x00\x00" if encoding.endswith("le") else b"\x00\x00\xfe\xff"
    path = write(tmp_path / "notes.txt", bom + "Grüße\r\nzweite Zeile 日本\n".encode(encoding))
    assert read_file(path).text == "Grüße\nzweite Zeile 日本\n"


def test_utf8_bom_is_stripped() -> None:
    assert decode_text(b"\xef\xbb\xbf# Title\n") == "# Title\n"


def test_invalid_utf8_falls_back_to_latin1() -> None:
    assert decode_text("café naïve".encode("latin-1")) == "café naïve"


def test_one_stray_byte_leaves_the_rest_of_a_utf8_file_as_written() -> None:
    data = "café in Zürich\n".encode() + b"price \x80 5\n" + "crème brûlée\n".encode()
    assert decode_text(data) == "café in Zürich\nprice € 5\ncrème brûlée\n"
    assert decode_text(b"\xef\xbb\xbf" + data).startswith("café in Zürich\nprice € 5")
    # A Windows-1252 file whose "ß“" happens to be a valid UTF-8 pair is still read whole.
    assert decode_text("„Das ist ein Fuß“ – Ölß\n".encode("cp1252")) == "„Das ist ein Fuß“ – Ölß\n"


def test_crlf_becomes_a_newline_and_a_lone_cr_breaks_lines_only_where_no_lf_does() -> None:
    # Lines are counted as sed, grep -n and vim count them, so a citation's line opens:
    # a lone CR inside an LF file is no line break to them.
    assert decode_text(b"a\r\nb\rc\n") == "a\nb c\n"
    assert decode_text(b"50%\r75%\r100%\ndone\n") == "50% 75% 100%\ndone\n"
    # A classic Mac file, with CR and no LF at all, keeps its lines.
    assert decode_text(b"a\rb\rc\r") == "a\nb\nc\n"


def test_utf16_file_reads_like_utf8(tmp_path: Path) -> None:
    path = write(tmp_path / "notes.txt", "\ufeffπ is 3.14\r\nsecond".encode("utf-16-le"))
    assert read_file(path).text == "π is 3.14\nsecond"


# --- kinds and titles -----------------------------------------------------------------


def test_markdown_title_is_first_h1_outside_code_fences(tmp_path: Path) -> None:
    path = write(
        tmp_path / "guide.md",
        "intro\n```sh\n# install deps\n```\n## Not a title\n# Real Title #\n\nbody\n",
    )
    result = read_file(path)
    assert (result.title, result.kind, result.format) == ("Real Title", "markdown", "markdown")
    assert result.text.endswith("body\n")


def test_markdown_front_matter_title_comes_before_the_first_h1(tmp_path: Path) -> None:
    path = write(tmp_path / "skerrivaig.md", '---\ntitle: "Skerrivaig port and office"\n---\n# Skerrivaig\n\nbody\n')
    assert read_file(path).title == "Skerrivaig port and office"
    # A rule and prose, then a "Title:" line, are no front matter.
    path = write(tmp_path / "notes.md", "---\nWe kept the old one.\nTitle: Harbour\n---\n# Harbour notes\n")
    assert read_file(path).title == "Harbour notes"


def test_markdown_without_h1_is_titled_by_stem(tmp_path: Path) -> None:
    assert read_file(write(tmp_path / "todo.markdown", "## only h2\n")).title == "todo"


@pytest.mark.parametrize(
    ("name", "kind", "fmt"),
    [
        ("notes.txt", "prose", "text"),
        ("README", "prose", "text"),
        ("paper.RST", "prose", "text"),
        ("tool.py", "code", "code"),
        ("deploy.PS1", "code", "code"),
        ("server.log", "data", "data"),
        ("config.yaml", "data", "data"),
    ],
)
def test_kind_follows_extension_case_insensitively(
    tmp_path: Path, name: str, kind: str, fmt: str
) -> None:
    result = read_file(write(tmp_path / name, "# heading-like line\ncontent\n"))
    assert (result.kind, result.format) == (kind, fmt)
    assert result.title == Path(name).stem  # only markdown-ish formats take a title from an H1


def test_empty_file_reads_as_empty_text(tmp_path: Path) -> None:
    assert read_file(write(tmp_path / "empty.md", b"")).text == ""


def test_extension_lists_are_lower_case_and_include_no_extension() -> None:
    assert "" in SUPPORTED_EXTENSIONS
    assert all(ext == ext.lower() for ext in SUPPORTED_EXTENSIONS)


# --- PDF ------------------------------------------------------------------------------


def test_pdf_pages_are_read_in_order_with_page_starts(tmp_path: Path) -> None:
    pages = [
        ["Alpha page one", "second line of one"],
        ["Bravo page two"],
        ["Charlie page three", "more three", "last three"],
    ]
    result = read_file(make_pdf(tmp_path / "report.pdf", pages))
    assert (result.kind, result.format, result.title) == ("prose", "pdf", "report")
    lines = result.text.split("\n")
    assert len(result.page_starts) == 3
    bounds = [*result.page_starts, len(lines) + 1]
    for number, expected in enumerate(pages):
        page_lines = lines[bounds[number] - 1 : bounds[number + 1] - 1]
        assert page_lines == expected


def test_a_pdf_of_pages_with_no_text_layer_says_so(tmp_path: Path) -> None:
    """A scanned PDF indexes nothing, and says why in the daemon's log with its path (the
    warnings a reader returns are logged so): said by the reader in the parse worker,
    where nothing sets up logging, the line never reached the log."""
    result = read_file(make_pdf(tmp_path / "scan.pdf", [[], [], []]))
    assert not result.text.strip()
    assert result.warnings == ("its 3 pages have no text layer (scanned? kenning does no OCR)",)


def test_corrupt_pdf_raises_reader_error(tmp_path: Path) -> None:
    path = write(tmp_path / "broken.pdf", b"%PDF-1.4\nthis is not really a pdf\n%%EOF")
    with pytest.raises(ReaderError, match="PDF") as info:
        read_file(path)
    assert "\n" not in str(info.value)


def test_truncated_pdf_raises_reader_error(tmp_path: Path) -> None:
    good = make_pdf(tmp_path / "good.pdf", [["some text"]]).read_bytes()
    path = write(tmp_path / "cut.pdf", good[: len(good) // 3])
    with pytest.raises(ReaderError, match="PDF"):
        read_file(path)


def test_a_pdf_locked_with_a_password_fails_saying_so_and_one_only_owner_locked_is_read(tmp_path: Path) -> None:
    """`ken status` showed "cannot read PDF: PdfminerException: PDFPasswordIncorrect"."""
    for name, passwords in (("locked.pdf", {"user_password": "open-sesame"}), ("owner.pdf", {})):
        pdf = FPDF()
        pdf.set_font("Helvetica", size=11)
        pdf.add_page()
        pdf.cell(text="minutes of the lemur committee")
        pdf.set_encryption(owner_password="owner", **passwords)
        pdf.output(str(tmp_path / name))
    with pytest.raises(ReaderError) as failure:
        read_file(tmp_path / "locked.pdf")
    assert str(failure.value) == "PDF is locked with a password; kenning reads only PDFs that open without one"
    assert "lemur committee" in read_file(tmp_path / "owner.pdf").text


# --- DOCX -----------------------------------------------------------------------------


def test_docx_headings_lists_and_tables_become_markdown(tmp_path: Path) -> None:
    document = docx.Document()
    document.add_heading("Quarterly Report", 0)
    document.add_heading("Summary", 1)
    document.add_paragraph("Revenue grew.")
    document.add_paragraph("first point", style="List Bullet")
    document.add_paragraph("second point", style="List Bullet")
    document.add_heading("Numbers", 2)
    table = document.add_table(rows=2, cols=2)
    for (row, col), value in {(0, 0): "Region", (0, 1): "Sales", (1, 0): "North", (1, 1): "42"}.items():
        table.cell(row, col).text = value
    document.add_paragraph("closing words")
    document.save(tmp_path / "q3.docx")

    result = read_file(tmp_path / "q3.docx")

    assert (result.kind, result.format) == ("markdown", "docx")
    assert result.title == "Quarterly Report"  # no core title set: the Title paragraph
    assert result.text.split("\n") == [
        "# Quarterly Report",
        "",
        "# Summary",
        "",
        "Revenue grew.",
        "",
        "- first point",
        "- second point",
        "",
        "## Numbers",
        "",
        "Region | Sales",
        "North | 42",
        "",
        "closing words",
    ]


def test_docx_nested_tables_keep_their_words_and_a_merged_cell_reads_once(tmp_path: Path) -> None:
    document = docx.Document()
    form = document.add_table(rows=2, cols=2)
    form.cell(0, 0).text = "Applicant"
    details = form.cell(0, 1).add_table(rows=1, cols=2)
    details.cell(0, 0).text = "Name: Ada Okafor"
    details.cell(0, 1).text = "Badge 7741"
    form.cell(1, 0).merge(form.cell(1, 1)).text = "Signed on arrival"
    document.save(tmp_path / "form.docx")

    assert read_file(tmp_path / "form.docx").text.split("\n") == [
        "Applicant | Name: Ada Okafor | Badge 7741",
        "Signed on arrival",
    ]


def test_docx_text_boxes_read_once_after_the_paragraph_anchoring_them(tmp_path: Path) -> None:
    document = docx.Document()
    document.add_heading("Harbour Open Day", 1)
    add_text_box(document.add_paragraph("Come down to the quay."), "Free ferry rides", "Bring the kids")
    add_text_box(document.add_paragraph("Stalls open at nine."), "Cake stall by the slipway", legacy=True)
    form = document.add_table(rows=1, cols=2)
    form.cell(0, 0).text = "Contact"
    add_text_box(form.cell(0, 1).paragraphs[0], "Harbour office, 01234 567")
    document.save(tmp_path / "flyer.docx")

    # Word writes each box twice (DrawingML and a VML fallback): its words come once.
    assert read_file(tmp_path / "flyer.docx").text.split("\n") == [
        "# Harbour Open Day",
        "",
        "Come down to the quay.",
        "",
        "Free ferry rides",
        "",
        "Bring the kids",
        "",
        "Stalls open at nine.",
        "",
        "Cake stall by the slipway",
        "",
        "Contact | Harbour office, 01234 567",
    ]


def test_docx_headers_and_footers_come_once_at_the_end(tmp_path: Path) -> None:
    document = docx.Document()
    document.add_paragraph("Minutes of the March meeting.")
    first = document.sections[0]
    first.header.paragraphs[0].text = "Skerrivaig Harbour Trust"
    first.footer.paragraphs[0].text = "Confidential to trustees"
    first.different_first_page_header_footer = True
    first.first_page_header.paragraphs[0].text = "Draft for approval"
    # Not shown: the document does not set even pages apart.
    first.even_page_header.paragraphs[0].text = "Unseen even header"
    document.add_section()
    document.add_paragraph("Appendix: the tide tables.")
    second = document.sections[1]
    # The second section's header is linked to the first's; its footer is a copy.
    second.footer.is_linked_to_previous = False
    second.footer.paragraphs[0].text = "Confidential to trustees"
    document.save(tmp_path / "minutes.docx")

    assert read_file(tmp_path / "minutes.docx").text.split("\n") == [
        "Minutes of the March meeting.",
        "",
        "Appendix: the tide tables.",
        "",
        "## Header",
        "",
        "Draft for approval",
        "",
        "Skerrivaig Harbour Trust",
        "",
        "## Footer",
        "",
        "Confidential to trustees",
    ]


def test_docx_notes_are_numbered_as_word_shows_them_and_cited_where_they_are(tmp_path: Path) -> None:
    document = docx.Document()
    document.add_heading("Tide Report", 1)
    opening = document.add_paragraph("Spring tides reached the quay.")
    add_note_reference(opening, "footnote", 2)
    add_note_reference(opening, "endnote", 1)
    add_text_box(document.add_paragraph("Readings were taken hourly."), "See the gauge log.")
    add_note_reference(document.paragraphs[-1], "footnote", 1)
    add_notes(document, "footnote", {1: "Gauge recalibrated in May.", 2: "Measured at the north pier."})
    add_notes(document, "endnote", {1: "Data from the harbour trust."})
    document.save(tmp_path / "tides.docx")

    result = read_file(tmp_path / "tides.docx")

    lines = result.text.split("\n")
    # Numbered by where the body refers to them, as Word numbers them, and the body shows
    # that number where Word does; the separator notes Word keeps beside them are no text.
    assert lines == [
        "# Tide Report",
        "",
        "Spring tides reached the quay.[^1][^i]",
        "",
        "Readings were taken hourly.[^2]",
        "",
        "See the gauge log.",
        "",
        "## Footnotes",
        "",
        "[^1]: Measured at the north pier.",
        "[^2]: Gauge recalibrated in May.",
        "",
        "## Endnotes",
        "",
        "[^i]: Data from the harbour trust.",
    ]
    [chunk] = [c for c in chunk_document(result, target_chars=60, overlap_chars=0) if "north pier" in c.text]
    assert chunk.section == "Tide Report > Footnotes"
    assert "[^1]: Measured at the north pier." in lines[chunk.line_start - 1 : chunk.line_end]


def test_docx_note_numbers_follow_the_text_as_it_now_reads(tmp_path: Path) -> None:
    document = docx.Document()
    change = 'w:id="9" w:author="Ada Okafor" w:date="2026-03-01T09:00:00Z"'
    # A reference deleted with changes tracked takes no number, and its note is not read.
    withdrawn = document.add_paragraph("The old gauge was retired.")
    add_note_reference(withdrawn, "footnote", 1)
    wrap_docx([withdrawn._p[-1]], "del", change)
    table = document.add_table(rows=1, cols=2)
    table.cell(0, 0).text = "High water"
    add_note_reference(table.cell(0, 0).paragraphs[0], "footnote", 2)
    table.cell(0, 1).text = "5.2 m"
    filled_in = document.add_paragraph("Observer: ")
    observer = filled_in.add_run("Ewan Bain")
    add_note_reference(filled_in, "footnote", 3)
    wrap_docx([observer._r, filled_in._p[-1]], "sdt")
    add_notes(document, "footnote", {1: "Scrapped in 2019.", 2: "Chart datum.", 3: "Harbourmaster."})
    document.save(tmp_path / "gauge.docx")

    assert read_file(tmp_path / "gauge.docx").text.split("\n") == [
        "The old gauge was retired.",
        "",
        "High water[^1] | 5.2 m",
        "",
        "Observer: Ewan Bain[^2]",
        "",
        "## Footnotes",
        "",
        "[^1]: Chart datum.",
        "[^2]: Harbourmaster.",
    ]


def test_docx_comments_come_after_the_notes_with_who_wrote_them(tmp_path: Path) -> None:
    document = docx.Document()
    document.add_heading("Budget", 1)
    paragraph = document.add_paragraph("Dredging will cost £40,000.")
    add_note_reference(paragraph, "footnote", 1)
    add_notes(document, "footnote", {1: "Quote from Clyde Marine."})
    question = document.add_comment(paragraph.runs, "Is VAT included?", author="Ada Okafor", initials="AO")
    question.add_paragraph("The last quote was without it.")
    document.add_comment(paragraph.runs, "Yes, it is.", author="", initials="")
    document.sections[0].footer.paragraphs[0].text = "Draft"
    document.save(tmp_path / "budget.docx")

    lines = read_file(tmp_path / "budget.docx").text.split("\n")

    assert lines == [
        "# Budget",
        "",
        "Dredging will cost £40,000.[^1]",
        "",
        "## Footnotes",
        "",
        "[^1]: Quote from Clyde Marine.",
        "",
        "## Comments",
        "",
        "- Ada Okafor: Is VAT included? The last quote was without it.",
        "- Yes, it is.",
        "",
        "## Footer",
        "",
        "Draft",
    ]


def test_docx_content_controls_are_read_where_they_stand(tmp_path: Path) -> None:
    document = docx.Document()
    # A cover page is a content control around its paragraphs; a template wraps whole
    # sections, tables and all, in others, content controls inside them too.
    cover = [document.add_paragraph("Annual Review", style="Title")._p, document.add_paragraph("Skerrivaig Trust")._p]
    wrap_docx(cover, "sdt", properties='<w:docPartObj><w:docPartGallery w:val="Cover Pages"/></w:docPartObj>')
    section = [document.add_heading("Moorings", 1)._p, document.add_paragraph("Forty berths were let.")._p]
    fees = document.add_table(rows=1, cols=2)
    fees.cell(0, 0).text = "Berth fee"
    fees.cell(0, 1).text = "£310"
    section.append(fees._tbl)
    wrap_docx(section, "sdt")
    wrap_docx([section[1]], "sdt")
    signed = document.add_paragraph("Approved by ")
    wrap_docx([signed.add_run("Morag Sinclair")._r], "sdt")
    wrap_docx([document.add_paragraph("Click or tap here to enter text.")._p], "sdt", properties="<w:showingPlcHdr/>")
    wrap_docx([document.add_paragraph("Prepared for the members.")._p], "customXml", 'w:element="note"')
    form = document.add_table(rows=1, cols=2)
    form.cell(0, 0).text = "Harbourmaster"
    form.cell(0, 1).text = "Ewan Bain"
    wrap_docx([form.cell(0, 1).paragraphs[0]._p], "sdt")
    footer = document.sections[0].footer.paragraphs[0]
    footer.text = "Page 1"
    gallery = '<w:docPartObj><w:docPartGallery w:val="Page Numbers (Bottom of Page)"/></w:docPartObj>'
    wrap_docx([footer._p], "sdt", properties=gallery)
    document.save(tmp_path / "review.docx")

    assert read_file(tmp_path / "review.docx").text.split("\n") == [
        "# Annual Review",
        "",
        "Skerrivaig Trust",
        "",
        "# Moorings",
        "",
        "Forty berths were let.",
        "",
        "Berth fee | £310",
        "",
        "Approved by Morag Sinclair",
        "",
        "Prepared for the members.",
        "",
        "Harbourmaster | Ewan Bain",
        "",
        "## Footer",
        "",
        "Page 1",
    ]


def test_docx_table_rows_and_cells_in_content_controls_are_read(tmp_path: Path) -> None:
    document = docx.Document()
    table = document.add_table(rows=4, cols=2)
    cells = {(0, 0): "Item", (0, 1): "Cost", (1, 1): "£310", (2, 1): "£95", (3, 0): "Slipway"}
    for (row, col), value in cells.items():
        table.cell(row, col).text = value
    table.cell(1, 0).merge(table.cell(2, 0)).text = "Moorings"
    fee = table.cell(3, 1)
    fee.text = "£40"
    # A form's repeating section is a content control around rows; a cell can be one too.
    rows = table._tbl.tr_lst
    wrap_docx([rows[1], rows[2]], "sdt")
    wrap_docx([fee._tc], "sdt")
    document.save(tmp_path / "fees.docx")

    # A cell merged down repeats in each row it spans, so each row reads whole.
    assert read_file(tmp_path / "fees.docx").text.split("\n") == [
        "Item | Cost",
        "Moorings | £310",
        "Moorings | £95",
        "Slipway | £40",
    ]


def test_docx_reads_tracked_insertions_and_wrapped_runs_but_not_deletions(tmp_path: Path) -> None:
    document = docx.Document()
    change = 'w:id="{}" w:author="Ada Okafor" w:date="2026-03-01T09:00:00Z"'
    paragraph = document.add_paragraph("The slipway ")
    wrap_docx([paragraph.add_run("was closed")._r], "del", change.format(1))
    wrap_docx([paragraph.add_run("reopens in April")._r], "ins", change.format(2))
    paragraph.add_run(" after repairs.")
    moved = document.add_paragraph("Dredging ")
    wrap_docx([moved.add_run("next winter")._r], "moveFrom", change.format(3))
    wrap_docx([moved.add_run("starts in June")._r], "moveTo", change.format(4))
    fields = document.add_paragraph("See ")
    wrap_docx([fields.add_run("the berth register")._r], "hyperlink", 'w:anchor="register"')
    fields.add_run(", updated ")
    wrap_docx([fields.add_run("12 May")._r], "fldSimple", 'w:instr=" DATE "')
    fields.add_run(", by ")
    wrap_docx([fields.add_run("Ewan Bain")._r], "smartTag", 'w:uri="urn:schemas-microsoft-com" w:element="PersonName"')
    fields.add_run(" at ")
    wrap_docx([fields.add_run("Skerrivaig")._r], "customXml", 'w:element="place"')
    fields.add_run(" (")
    arabic = fields.add_run("مرفأ")._r
    wrap_docx([arabic], "dir", 'w:val="rtl"')
    wrap_docx([arabic.getparent()], "bdo", 'w:val="rtl"')
    fields.add_run(").")
    # A whole paragraph deleted, and a text box deleted with the run that anchored it.
    withdrawn = document.add_paragraph("Old tariff withdrawn.")
    wrap_docx([withdrawn.runs[0]._r], "del", change.format(5))
    boxed = document.add_paragraph("Notice board:")
    add_text_box(boxed, "Removed notice")
    wrap_docx([boxed._p[-1]], "del", change.format(6))
    document.save(tmp_path / "works.docx")

    text = read_file(tmp_path / "works.docx").text
    assert not any(removed in text for removed in ("closed", "next winter", "tariff", "Removed notice"))
    assert text.split("\n") == [
        "The slipway reopens in April after repairs.",
        "",
        "Dredging starts in June",
        "",
        "See the berth register, updated 12 May, by Ewan Bain at Skerrivaig (مرفأ).",
        "",
        "Notice board:",
    ]


def test_docx_core_title_wins(tmp_path: Path) -> None:
    document = docx.Document()
    document.core_properties.title = "Official Name"
    document.add_heading("Body Heading", 1)
    document.save(tmp_path / "named.docx")
    assert read_file(tmp_path / "named.docx").title == "Official Name"


def test_corrupt_docx_raises_reader_error(tmp_path: Path) -> None:
    path = write(tmp_path / "broken.docx", b"PK\x03\x04 definitely not a zip archive")
    with pytest.raises(ReaderError, match="DOCX"):
        read_file(path)


# --- HTML -----------------------------------------------------------------------------


def test_html_paragraphs_in_a_table_cell_stay_separate_words(tmp_path: Path) -> None:
    # A Google Docs or wiki export: every cell's text sits in <p> or <div> elements.
    path = write(
        tmp_path / "rota.html",
        "<table><tr><td><p>Monday</p><p>Tuesday</p></td><td><div>Priya</div><div>Tomasz</div></td></tr>"
        "<tr><td><p>Wednesday</p></td><td><p>Lena</p></td></tr></table>",
    )
    words = read_file(path).text.split()
    assert {"Monday", "Tuesday", "Priya", "Tomasz", "Wednesday", "Lena"} <= set(words)


def test_html_title_links_kept_images_dropped_lines_unwrapped(tmp_path: Path) -> None:
    long_paragraph = " ".join(f"word{i}" for i in range(200))
    path = write(
        tmp_path / "page.html",
        "<html><head><title>  Fish &amp; Chips\n</title></head><body>"
        "<h1>Menu</h1><p>See <a href='https://example.org/menu'>the menu</a>"
        "<img src='logo.png' alt='logo'></p>"
        f"<p>{long_paragraph}</p></body></html>",
    )
    result = read_file(path)
    assert (result.title, result.kind, result.format) == ("Fish & Chips", "markdown", "html")
    assert "# Menu" in result.text.split("\n")
    assert "[the menu](https://example.org/menu)" in result.text
    assert "logo" not in result.text
    assert long_paragraph in result.text.split("\n")


def test_html_entities_are_the_characters_they_name(tmp_path: Path) -> None:
    result = read_file(write(tmp_path / "e.html", "<p>caf&eacute; &uuml;ber &mdash; &ldquo;q&rdquo; and café</p>"))
    assert "café über — “q” and café" in result.text


@pytest.mark.parametrize(
    ("source", "title"),
    [
        ("<TITLE lang=en>A &amp;\n B</title >", "A & B"),
        ("<title>first</title><title>second</title>", "first"),
        ("<title>never closed<h1>Heading</h1>", "Heading"),
        ("<title data-x='1'>quoted</TITLE>", "quoted"),
        ("<p>no title</p>", ""),
    ],
)
def test_an_html_title_is_the_first_title_element(source: str, title: str) -> None:
    assert html_to_markdown(source)[1] == title


def test_a_page_of_unclosed_title_tags_is_read_in_time_linear_in_its_length() -> None:
    """Each unclosed <title> was searched to the end of the page for its closing tag: 420 KB
    of them took over a minute, a saved page failed at the parse time limit, and a fetched
    one held the daemon's GIL, and so every request, as long."""
    started = time.monotonic()
    html_to_markdown("<title>" * 60_000)
    assert time.monotonic() - started < 5


def _read_in_a_thread(path: Path) -> Future:
    """read_file(path) in a daemon thread: a test waits on it with a bound, so that a
    parse that runs for minutes fails the test rather than holding it to pytest's timeout."""
    outcome: Future = Future()

    def read() -> None:
        try:
            outcome.set_result(read_file(path))
        except Exception as exc:  # the test reports it
            outcome.set_exception(exc)

    threading.Thread(target=read, daemon=True).start()
    return outcome


def test_a_page_of_comments_never_closed_is_read_in_time_and_to_where_they_open(tmp_path: Path) -> None:
    """1 MB of `<!-- a >` ran for minutes (html.parser sought each comment's close to the
    end of the file, at each `<!--`), and a saved page failed at [limits] parse_timeout.
    A comment still open at the end of the file runs to it, as browsers read it: the text
    before it and between closed comments is read, what follows it is inside it."""
    before = "<p>Zanzibar ledger</p><!-- a closed comment --><p>between comments</p>"
    path = html_comment_openers(tmp_path / "openers.html", 1 << 20, before, after="<p>inside it</p>")
    assert _read_in_a_thread(path).result(timeout=30).text == "Zanzibar ledger\n\nbetween comments"


@pytest.mark.parametrize(
    "unclosed",
    ["<!-- a ", "<? a ", "<!x a ", "</x a ", "<a x", "<![CDATA[ a >", "<!DOCTYPE a "],
)
def test_markup_left_open_at_the_end_of_a_page_is_read_in_time(unclosed: str, tmp_path: Path) -> None:
    """Each of these, repeated with no close after it, was retried at every `<`; `<a x`
    is a tag whose attributes run to the end of the file (16 s for 50 KB before)."""
    path = write(tmp_path / "open.html", "<p>Zanzibar ledger</p>" + unclosed * (400_000 // len(unclosed)))
    assert _read_in_a_thread(path).result(timeout=30).text == "Zanzibar ledger"


def test_a_marked_section_with_a_keyword_xml_does_not_know_is_a_bogus_comment(tmp_path: Path) -> None:
    """`<![foo[` failed the page: html.parser read it as an SGML marked section and raised
    AssertionError ("unknown status keyword 'foo' in marked section"). HTML reads any
    `<![` as a comment that ends at the first `>`."""
    path = write(tmp_path / "marked.html", "<p>quokka ledger</p><![foo[ x ]]><![ x><p>more</p><![CDATA[ y ]]><p>end</p>")
    assert read_file(path).text == "quokka ledger\n\nmore\n\nend"


@pytest.mark.parametrize(
    ("encoding", "words"),
    [
        ("windows-1251", "Заметка о погоде в Москве"),
        ("shift_jis", "これは東京の天気についてのメモです"),
        ("gb2312", "这是关于北京天气的笔记"),
        ("iso-8859-7", "Σημειώσεις για τον καιρό"),
    ],
)
def test_a_saved_page_is_read_in_the_encoding_its_meta_declares(encoding: str, words: str, tmp_path: Path) -> None:
    """A page a browser saved keeps its encoding and its <meta charset>, which was not read:
    Cyrillic came out as 'Çàìåòêà', and Shift_JIS was refused as binary."""
    page = tmp_path / "saved.html"
    declared = f'<meta http-equiv="Content-Type" content="text/html; charset={encoding}">'
    page.write_bytes(f"<html><head>{declared}<title>{words}</title></head><p>{words}.</p></html>".encode(encoding))
    read = read_file(page)
    assert words in read.text and read.title == words


@pytest.mark.parametrize(
    ("declared", "written", "words"),
    [
        ("iso-8859-1", "cp1252", "“quoted” — naïve"),
        ("us-ascii", "cp1252", "“quoted” café"),
        ("shift_jis", "cp932", "①番目のメモ"),
        ("gb2312", "gbk", "喆的笔记"),
        ("euc-kr", "cp949", "똠방각하 메모"),
    ],
)
def test_a_declared_charset_is_read_as_browsers_read_it(declared: str, written: str, words: str, tmp_path: Path) -> None:
    """Browsers read a page declared Latin-1 or ASCII as Windows-1252, Shift_JIS as Windows'
    superset of it, GB2312 as GBK, EUC-KR as Windows' superset: pages are written so."""
    page = tmp_path / "saved.html"
    page.write_bytes(f'<meta charset="{declared}"><p>{words}</p>'.encode(written))
    assert words in read_file(page).text


@pytest.mark.parametrize("declared", ["iso-8859-1", "utf-16", "no-such-charset"])
def test_a_meta_charset_that_utf8_bytes_belie_is_not_believed(declared: str, tmp_path: Path) -> None:
    page = tmp_path / "page.html"
    page.write_bytes(f'<meta charset="{declared}"><p>café in Москва</p>'.encode())
    assert "café in Москва" in read_file(page).text


@pytest.mark.parametrize("declared", ["base64", "rot13", "undefined", "idna"])
def test_a_meta_charset_python_knows_only_as_no_text_encoding_is_not_believed(declared: str, tmp_path: Path) -> None:
    """Python's codecs also name bytes-to-bytes and str-to-str codecs; a saved page
    declaring one, read until the <meta> was believed, failed: "cannot read HTML: 'base64'
    is not a text encoding"."""
    page = tmp_path / "page.html"
    page.write_bytes(f'<meta charset="{declared}"><p>café naïve</p>'.encode("cp1252"))
    assert "café naïve" in read_file(page).text


def test_a_page_declared_utf8_but_written_in_windows_1252_is_read_as_written(tmp_path: Path) -> None:
    """A template's <meta charset="utf-8"> over text an old editor saved: its accents are
    read as Windows-1252, as any text file's are, not replaced by U+FFFD."""
    page = tmp_path / "page.html"
    page.write_bytes('<meta charset="utf-8"><p>café naïve résumé</p>'.encode("cp1252"))
    assert "café naïve résumé" in read_file(page).text


def test_html_without_title_uses_first_heading(tmp_path: Path) -> None:
    result = read_file(write(tmp_path / "x.htm", "<h1>Only Heading</h1><p>t</p>"))
    assert result.title == "Only Heading"


# --- failures -------------------------------------------------------------------------


def test_oversized_file_raises_reader_error(tmp_path: Path) -> None:
    path = write(tmp_path / "big.txt", b"x" * 101)
    with pytest.raises(ReaderError, match="limit"):
        read_file(path, ReadLimits(max_file_bytes=100))
    assert read_file(path, ReadLimits(max_file_bytes=101)).text == "x" * 101


def test_unsupported_extension_raises_reader_error(tmp_path: Path) -> None:
    with pytest.raises(ReaderError, match="unsupported"):
        read_file(write(tmp_path / "photo.jpg", b"\xff\xd8\xff"))


def test_missing_file_and_directory_raise_reader_error(tmp_path: Path) -> None:
    with pytest.raises(ReaderError, match="not found"):
        read_file(tmp_path / "gone.md")
    (tmp_path / "folder.md").mkdir()
    with pytest.raises(ReaderError):
        read_file(tmp_path / "folder.md")


def test_a_file_that_cannot_be_opened_raises_reader_error(tmp_path: Path) -> None:
    # A symlink to itself fails to open for every user, root included (ELOOP), which
    # chmod 000 does not when the tests run as root.
    path = tmp_path / "loop.md"
    path.symlink_to(path)
    with pytest.raises(ReaderError, match="cannot"):
        read_file(path)


# --- hostile and odd input ------------------------------------------------------------


@pytest.mark.parametrize("encoding", ["utf-16-le", "utf-16-be"])
def test_utf16_without_bom_is_detected(tmp_path: Path, encoding: str) -> None:
    text = "Grüße aus Köln\nzweite Zeile über UTF-16\n" * 20
    path = write(tmp_path / "notes.md", text.encode(encoding))
    assert read_file(path).text == text


@pytest.mark.parametrize("encoding", ["utf-16-le", "utf-16-be"])
@pytest.mark.parametrize(
    "text",
    [
        "会议纪要\n第二行：下周二上午九点开会，讨论预算。\n",
        "Πρακτικά συνεδρίασης\nΗ επόμενη συνάντηση είναι τη Δευτέρα.\n",
        "Протокол встречи\nСледующая встреча в понедельник, 10:00.\n",
        "会議の議事録\n次の会議は月曜日です。カタカナとひらがな。\n",
    ],
)
def test_utf16_without_bom_in_another_script_is_detected(tmp_path: Path, text: str, encoding: str) -> None:
    # Only its spaces, digits and line ends hold a NUL, too few to tell it by alone.
    path = write(tmp_path / "notes.txt", text.encode(encoding))
    assert read_file(path).text == text


@pytest.mark.parametrize("bom", [False, True])
@pytest.mark.parametrize("encoding", ["utf-16-le", "utf-16-be"])
@pytest.mark.parametrize(
    "text",
    [
        "会議の議事録。次の会議は月曜日の午前です。予算と日程を話し合います。",
        "会议纪要：下周二上午讨论预算和日程安排。",
        "회의록입니다다음회의는월요일오전입니다예산과일정을논의합니다",
    ],
)
def test_utf16_with_no_nul_at_all_is_read_as_written(tmp_path: Path, text: str, encoding: str, bom: bool) -> None:
    # No space, digit or line end: not one NUL byte to tell it by. Without a BOM such a
    # file was refused as binary, or read as Windows-1252.
    data = text.encode(encoding)
    assert b"\0" not in data
    if bom:
        data = "\ufeff".encode(encoding) + data
    path = write(tmp_path / "notes.txt", data)
    assert read_file(path).text == text


@pytest.mark.parametrize("bom", [False, True])
@pytest.mark.parametrize("encoding", ["utf-16-le", "utf-16-be"])
@pytest.mark.parametrize(
    "text",
    [
        "Numbat survey notes from the Perth trip.\nSecond line of the field report.\n",
        "Заметки о поездке в Пермь. Вторая строка отчёта.\n",
        "会議の議事録。次の会議は月曜日の午前です。予算と日程を話し合います。",
        "회의록입니다다음회의는월요일오전입니다예산과일정을논의합니다",
    ],
)
def test_utf16_cut_short_by_a_byte_is_read_with_its_last_character_replaced(
    tmp_path: Path, text: str, encoding: str, bom: bool
) -> None:
    """A file cut off after an odd number of bytes (a copy or download that stopped) ends
    inside a character: it is read, that character replaced, as every decoder reads a
    character cut short. UTF-16 with no NUL at all (a line of CJK) was refused as binary."""
    data = ("\ufeff" if bom else "").encode(encoding) + text.encode(encoding) + b"\x21"
    path = write(tmp_path / "cut.txt", data)
    assert read_file(path).text == text + "\ufffd"


@pytest.mark.parametrize("encoding", ["shift_jis", "gb2312", "euc-jp", "euc-kr", "big5"])
def test_a_line_in_a_legacy_east_asian_encoding_is_not_taken_for_utf16(encoding: str) -> None:
    # It holds no NUL either, and Shift_JIS reads as UTF-16 ideographs, GB2312 as Hangul.
    text = {"shift_jis": "日本語の文章を書きました。東京都渋谷区の天気は晴れです。明日も良い天気でしょう。",
            "gb2312": "今天天气很好我们去公园散步吧明天也是好天气", "big5": "今天天氣很好我們去公園散步吧明天也是好天氣",
            "euc-kr": "한국어로쓴글입니다서울의날씨는맑습니다내일도좋은날씨일것입니다",
            "euc-jp": "日本語の文章を書きました。東京都渋谷区の天気は晴れです。"}[encoding]  # fmt: skip
    data = text.encode(encoding)
    for decoder in ("utf-16-le", "utf-16-be"):
        try:
            wrong = data.decode(decoder)
        except UnicodeDecodeError:
            continue
        with contextlib.suppress(ReaderError):
            assert decode_text(data) != wrong


@pytest.mark.parametrize(
    ("text", "encoding"),
    [
        ("Le café était fermé, très étrange à Noël.\n" * 5, "cp1252"),
        ("Grüße aus Köln, die Straße ist nass.\n" * 5, "cp1252"),
        ("Πρακτικά συνεδρίασης, η επόμενη συνάντηση.\n" * 3, "utf-8"),
    ],
)
def test_text_with_a_stray_nul_is_not_taken_for_utf16(tmp_path: Path, text: str, encoding: str) -> None:
    data = text.encode(encoding)
    for at in range(1, 60):
        # A NUL anywhere, inside a UTF-8 character too: refused as before, never misread.
        with pytest.raises(ReaderError, match="binary"):
            decode_text(data[:at] + b"\0" + data[at:])


def test_random_bytes_are_refused_as_binary(tmp_path: Path) -> None:
    noise = random.Random(7).randbytes(20_000)
    with pytest.raises(ReaderError, match="binary"):
        read_file(write(tmp_path / "noise.md", noise))


def test_random_bytes_without_nul_are_refused_as_binary(tmp_path: Path) -> None:
    noise = bytes(b for b in random.Random(8).randbytes(4000) if b)
    with pytest.raises(ReaderError, match="binary"):
        read_file(write(tmp_path / "noise.txt", noise))


def test_binary_with_a_text_extension_is_refused(tmp_path: Path) -> None:
    elf = b"\x7fELF\x02\x01\x01" + b"\x00" * 9 + bytes(range(256)) * 8
    with pytest.raises(ReaderError, match="binary"):
        read_file(write(tmp_path / "tool.sh", elf))


def test_windows_1252_text_is_decoded(tmp_path: Path) -> None:
    text = "“Smart quotes” – and a dash… in a café\n" * 30
    assert read_file(write(tmp_path / "memo.txt", text.encode("cp1252"))).text == text


def test_ansi_colours_in_a_log_are_text(tmp_path: Path) -> None:
    text = "\x1b[32mINFO\x1b[0m service started\n" * 200
    assert read_file(write(tmp_path / "run.log", text)).text == text


def test_gzipped_markdown_is_read_with_its_own_title(tmp_path: Path) -> None:
    path = tmp_path / "README.md.gz"
    path.write_bytes(gzip.compress(b"# Release Notes\n\nversion two adds caching\n"))
    result = read_file(path)
    assert (result.title, result.kind, result.format) == ("Release Notes", "markdown", "markdown")
    assert "caching" in result.text


def test_gzipped_debian_changelog_is_read_as_prose(tmp_path: Path) -> None:
    path = tmp_path / "changelog.Debian.gz"
    path.write_bytes(gzip.compress(b"pkg (1.2-1) unstable; urgency=low\n\n  * New upstream release.\n"))
    result = read_file(path)
    assert (result.title, result.kind) == ("changelog", "prose")
    assert "New upstream release" in result.text


def test_a_gzip_bomb_stops_at_the_size_limit(tmp_path: Path) -> None:
    path = gzip_bomb(tmp_path / "bomb.log.gz", 64 * 1024 * 1024)
    assert path.stat().st_size < 200_000
    with pytest.raises(ReaderError, match="decompresses to more than"):
        read_file(path, ReadLimits(max_file_bytes=1024 * 1024))


def test_a_damaged_gzip_is_a_reader_error(tmp_path: Path) -> None:
    whole = gzip.compress(b"some text\n" * 1000)
    with pytest.raises(ReaderError, match="decompress"):
        read_file(write(tmp_path / "cut.txt.gz", whole[: len(whole) // 2]))


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("README.md.gz", (".md", True)),
        ("changelog.gz", ("", True)),
        ("changelog.Debian.amd64.gz", ("", True)),
        ("README.Debian", ("", False)),
        ("paper.pdf.gz", "compressed (unsupported inside)"),
        ("src.tar.gz", "compressed (unsupported inside)"),
        ("notes.zip", "compressed (unsupported inside)"),
        ("photo.png", "unsupported type"),
        ("Guide.MD", (".md", False)),
    ],
)
def test_reader_suffix_names_the_reader_or_the_reason(name: str, expected: object) -> None:
    assert reader_suffix(name) == expected


def test_a_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "swapped.md"
    os.mkfifo(fifo)
    outcome: list[BaseException] = []

    def attempt() -> None:
        try:
            read_file(fifo)
        except ReaderError as exc:
            outcome.append(exc)

    # A blocked open would hang this thread forever; the join bounds the wait.
    thread = threading.Thread(target=attempt, daemon=True)
    thread.start()
    thread.join(10)
    assert not thread.is_alive(), "opening a FIFO blocked"
    assert "not a regular file" in str(outcome[0])


def test_extracted_text_past_the_cap_is_refused(tmp_path: Path) -> None:
    path = write(tmp_path / "long.txt", "word " * 5000)
    with pytest.raises(ReaderError, match="24999-character limit"):
        read_file(path, ReadLimits(max_text_chars=25_000 - 1))
    assert len(read_file(path, ReadLimits(max_text_chars=25_000)).text) == 25_000


def test_a_docx_of_many_paragraphs_stops_at_the_text_cap(tmp_path: Path) -> None:
    path = docx_many_paragraphs(tmp_path / "many.docx", 50_000)
    with pytest.raises(ReaderError, match="character limit"):
        read_file(path, ReadLimits(max_text_chars=10_000))


@pytest.mark.parametrize("at", ["pages", "root", "kids", "font"])
def test_a_pdf_whose_reference_leads_round_in_a_circle_is_refused_at_once(tmp_path: Path, at: str) -> None:
    """pdfminer followed `6 0 R` -> `7 0 R` -> `8 0 R` -> `6 0 R` for ever, wherever the
    circle was (the catalog, its page tree, a page's font): each such file of a few
    hundred bytes held a parse worker for its whole `parse_timeout` (120 s) and then
    failed as timed out. Read in a thread so that, were it to hang again, the test fails
    after 30 s rather than at pytest's timeout."""
    path = tmp_path / "circle.pdf"
    pdf_reference_loop(path) if at == "pages" else pdf_reference_circle(path, at)
    outcome: Future = Future()

    def read() -> None:
        try:
            read_file(path)
        except ReaderError as exc:
            outcome.set_result(str(exc))

    threading.Thread(target=read, daemon=True).start()
    assert "damaged PDF: its object " in outcome.result(timeout=30)
    assert "is a reference that leads round in a circle back to itself" in outcome.result()


def test_a_pdf_whose_pages_give_no_size_is_read_as_letter_size(tmp_path: Path) -> None:
    """A page must have a MediaBox (its own or its page tree's); viewers and pdfminer
    take US Letter where none is, and pdfplumber failed the file with `cannot read PDF:
    TypeError: 'NoneType' object is not iterable`."""
    path = write_pdf(tmp_path / "sizeless.pdf", b"BT /F1 12 Tf 72 720 Td (okapis graze) Tj ET", boxes=b"")
    assert read_file(path).text == "okapis graze"


@pytest.mark.parametrize(
    ("boxes", "more"),
    [
        (b"/MediaBox [0 0 612]", ()),
        (b"/MediaBox [0 0 a b]", ()),
        (b"/MediaBox [0 0 (x) (y)]", ()),
        (b"/MediaBox []", ()),
        (b"/MediaBox 5", ()),
        (b"/MediaBox << >>", ()),
        (b"/MediaBox 6 0 R", (b"garbage",)),
        (b"/MediaBox 6 0 R", ()),
        (b"/MediaBox [0 0 612 6 0 R]", (b"(x)",)),
        (b"/MediaBox [0 0 612 792] /CropBox [0 0 612]", ()),
        (b"/MediaBox [0 0 612 792] /CropBox [0 0 a b]", ()),
        (b"/MediaBox [0 0 612 792] /TrimBox [0 0 a b]", ()),
    ],
)
def test_a_pdf_page_whose_size_is_malformed_is_read_as_letter_size(
    boxes: bytes, more: tuple[bytes, ...], tmp_path: Path
) -> None:
    """A MediaBox that is not four numbers failed the whole file (`cannot read PDF:
    IndexError: list index out of range`, `... not 'PSKeyword'`), as a missing one did:
    it is read as US Letter, as viewers and pdfminer read it, and a malformed CropBox (or
    trim, bleed or art box) as the MediaBox."""
    path = write_pdf(tmp_path / "botched.pdf", b"BT /F1 12 Tf 72 720 Td (okapis graze) Tj ET", boxes=boxes, more=more)
    assert read_file(path).text == "okapis graze"


def test_a_malformed_size_a_page_inherits_is_read_as_letter_size(tmp_path: Path) -> None:
    """A page takes its MediaBox from the page tree above it when it gives none."""
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 /MediaBox [0 0 a] >>",
        b"<< /Type /Pages /Parent 2 0 R /Kids [4 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 3 0 R /Contents 5 0 R /Resources << /Font << /F1 6 0 R >> >> >>",
        b"<< /Length 43 >>\nstream\nBT /F1 12 Tf 72 720 Td (okapis graze) Tj ET\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Times-Roman >>",
    ]
    assert read_file(write_pdf_objects(tmp_path / "inherited.pdf", objects)).text == "okapis graze"


def test_a_page_tree_whose_kids_lead_back_up_it_is_read_once(tmp_path: Path) -> None:
    """The boxes are checked node by node down the tree before pdfminer lists its pages:
    a node listing itself among its kids is looked at once, as pdfminer does."""
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R 2 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 a] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length 43 >>\nstream\nBT /F1 12 Tf 72 720 Td (okapis graze) Tj ET\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Times-Roman >>",
    ]
    assert read_file(write_pdf_objects(tmp_path / "looped.pdf", objects)).text == "okapis graze"


def test_a_pdf_past_the_text_cap_is_refused(tmp_path: Path) -> None:
    path = make_pdf(tmp_path / "long.pdf", [[f"page {n} line {i} of words" for i in range(40)] for n in range(5)])
    assert read_file(path).page_starts
    with pytest.raises(ReaderError, match="character limit"):
        read_file(path, ReadLimits(max_text_chars=2000))


def test_a_docx_that_inflates_past_the_size_limit_is_refused_before_parsing(tmp_path: Path) -> None:
    path = docx_whitespace_bomb(tmp_path / "spaces.docx", 64 * 1024 * 1024)
    assert path.stat().st_size < 200_000
    with pytest.raises(ReaderError, match="DOCX inflates to .* over the 1048576-byte limit"):
        read_file(path, ReadLimits(max_file_bytes=1024 * 1024))


@pytest.mark.parametrize("size", [7, 9, 11])
def test_pdf_words_set_without_space_glyphs_keep_their_spaces(tmp_path: Path, size: int) -> None:
    # pdfTeX moves the pen instead of drawing a space; at 9 pt a quarter-em gap is 2.25
    # points, under pdfplumber's fixed 3-point default, and the words used to run together.
    lines = [["asn1Decoding", "generates", "an", "ASN.1", "structure"], ["from", "DER", "encoded", "bytes"]]
    result = read_file(pdf_tex_spacing(tmp_path / "manual.pdf", lines, size))
    assert result.text.split("\n") == [" ".join(words) for words in lines]



def test_an_error_quoting_a_token_is_one_redacted_line_whatever_its_length():
    token = "ghp_" + "Pq8V" * 9
    assert reason_line(ValueError(f"no part\n named {token}")) == "ValueError: no part named [REDACTED]"
    # Megabytes are read no further than a few lines' worth, a word or not.
    line = reason_line(ValueError(f"part {token} " + "tail " * 1_000_000))
    assert line.startswith("ValueError: part [REDACTED] tail") and line.endswith("… [cut from 5,000,045 characters]")
    assert len(line) <= len("ValueError: ") + 300
    assert reason_line(ValueError("x" * 1_000_000)).startswith("ValueError: xxx")
