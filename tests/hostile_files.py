"""Hostile and odd documents: tests make small ones, bench/hostile.py the full-size ones.

Each writer streams its payload, so building a 1 GiB bomb costs the bytes on disk
(about 1 MB), not the gigabyte.
"""

from __future__ import annotations

import io
import zipfile
import zlib
from collections.abc import Callable
from pathlib import Path

import docx

_BLOCK = 1 << 20
# zlib.adler32 or zlib.crc32: (data, running value) -> running value.
Checksum = Callable[[bytes, int], int]


def _docx_parts() -> dict[str, bytes]:
    """Every part of a blank python-docx document, to wrap a hostile document.xml."""
    buffer = io.BytesIO()
    docx.Document().save(buffer)
    with zipfile.ZipFile(buffer) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


_BODY_OPEN = (
    b'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
    b'<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>'
)
_BODY_CLOSE = b"</w:body></w:document>"


def _write_docx(path: Path, chunks) -> Path:
    parts = _docx_parts()
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
        for name, data in parts.items():
            if name == "word/document.xml":
                with archive.open(name, "w", force_zip64=True) as member:
                    member.write(_BODY_OPEN)
                    for chunk in chunks:
                        member.write(chunk)
                    member.write(_BODY_CLOSE)
            else:
                archive.writestr(name, data)
    return path


def docx_whitespace_bomb(path: Path, spaces: int) -> Path:
    """One paragraph of `spaces` spaces: deflate squeezes 1 GiB into about 1 MB."""

    def chunks():
        yield b'<w:p><w:r><w:t xml:space="preserve">'
        left = spaces
        while left:
            step = min(left, _BLOCK)
            yield b" " * step
            left -= step
        yield b"</w:t></w:r></w:p>"

    return _write_docx(path, chunks())


def docx_many_paragraphs(path: Path, paragraphs: int) -> Path:
    """`paragraphs` one-word paragraphs: small on disk, slow and huge to walk."""
    unit = b"<w:p><w:r><w:t>word</w:t></w:r></w:p>"

    def chunks():
        left = paragraphs
        while left:
            step = min(left, 10_000)
            yield unit * step
            left -= step

    return _write_docx(path, chunks())


def docx_missing_part(path: Path, name_length: int) -> Path:
    """A DOCX whose styles relationship names a part `name_length` characters long that
    the package does not hold: python-docx's KeyError quotes the whole name."""
    parts = _docx_parts()
    rels = "word/_rels/document.xml.rels"
    parts[rels] = parts[rels].replace(b'Target="styles.xml"', b'Target="%s.xml"' % (b"n" * name_length))
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in parts.items():
            archive.writestr(name, data)
    return path


def pdf_stream_bomb(path: Path, inflated: int) -> Path:
    """A one-page PDF whose content stream inflates to `inflated` bytes of spaces."""
    head = b"BT /F1 12 Tf 72 720 Td (bomb) Tj ET\n"
    deflated, checksum = _repeated_deflate(head, b" ", inflated - len(head))
    # A zlib stream: its header (deflate, best compression), the data, its Adler-32.
    stream = b"\x78\xda" + deflated + checksum(zlib.adler32, 1).to_bytes(4, "big")
    return write_pdf(path, stream, b" /Filter /FlateDecode")


def pdf_tex_spacing(path: Path, lines: list[list[str]], size: float, gap: int = 250) -> Path:
    """Words set as pdfTeX sets them: no space glyph, the gap a TJ offset of `gap`/1000 em."""
    body = [f"BT /F1 {size:g} Tf {size * 1.2:g} TL 50 760 Td"]
    for words in lines:
        body.append("[" + f" {-gap} ".join(f"({word})" for word in words) + "] TJ T*")
    body.append("ET")
    return write_pdf(path, "\n".join(body).encode())


def write_pdf(
    path: Path,
    content: bytes,
    stream_options: bytes = b"",
    boxes: bytes = b"/MediaBox [0 0 612 792]",
    more: tuple[bytes, ...] = (),
) -> Path:
    """A one-page PDF around a content stream, in Times-Roman (metrics every reader knows).
    `boxes` are the page's size entries, which a PDF must give and may botch (`b""` for
    none); `more` are objects after the fifth, for them to refer to."""
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R %s /Contents 4 0 R" % boxes + b" /Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length %d%s >>\nstream\n" % (len(content), stream_options) + content + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Times-Roman >>",
        *more,
    ]
    return write_pdf_objects(path, objects)


def pdf_odd_link(path: Path, url: bytes) -> Path:
    """A one-page PDF whose link's action dictionary has a key with no value: pdfminer
    refuses the page, quoting the dictionary, `url` and all."""
    content = b"BT /F1 12 Tf 72 720 Td (okapis graze) Tj ET"
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R"
        b" /Annots [<< /Type /Annot /Subtype /Link /A << /S /URI /URI (%s) /Next >> >>] >>" % url,
        b"<< /Length %d >>\nstream\n" % len(content) + content + b"\nendstream",
    ]
    return write_pdf_objects(path, objects)


def pdf_reference_loop(path: Path) -> Path:
    """A PDF whose page tree is a reference to a reference to ... itself: pdfminer
    follows the circle for ever, in a file of a few hundred bytes."""
    objects = [b"<< /Type /Catalog /Pages 3 0 R >>", b"4 0 R", b"2 0 R", b"3 0 R"]
    return write_pdf_objects(path, objects)


def pdf_reference_circle(path: Path, at: str) -> Path:
    """A one-page PDF in which the object `at` names ("root": the catalog, "kids": the
    page, "font": the page's font) is a reference to a reference to itself: pdfminer
    follows any such circle for ever, wherever it is."""
    content = b"BT /F1 12 Tf 72 720 Td (okapis graze) Tj ET"
    refs = {"root": b"1 0 R", "kids": b"3 0 R", "font": b"5 0 R"}
    refs[at] = b"6 0 R"
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [%s] /Count 1 >>" % refs["kids"],
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R"
        b" /Resources << /Font << /F1 %s >> >> >>" % refs["font"],
        b"<< /Length %d >>\nstream\n" % len(content) + content + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Times-Roman >>",
        b"7 0 R",
        b"8 0 R",
        b"6 0 R",
    ]
    return write_pdf_objects(path, objects, root=refs["root"])


def write_pdf_objects(path: Path, objects: list[bytes], root: bytes = b"1 0 R") -> Path:
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, obj in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + obj + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root %s >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, root, xref)
    path.write_bytes(bytes(out))
    return path


def nested_html(path: Path, depth: int) -> Path:
    """Lists nested `depth` deep, a word at each level: html2text indents every level."""
    path.write_text("<html><body>" + "<ul><li>deep " * depth + "</li></ul>" * depth + "</body></html>")
    return path


def html_comment_openers(path: Path, size: int, before: str = "", after: str = "") -> Path:
    """`size` bytes of `<!-- a >`, comments opened and never closed, between `before` and
    `after`: Python's html.parser sought each one's close to the end of the file."""
    path.write_text(f"<html><body>{before}" + "<!-- a >" * (size // 8) + f"{after}</body></html>")
    return path


def gzip_bomb(path: Path, inflated: int, byte: bytes = b"a") -> Path:
    """A .gz of `inflated` repeated bytes."""
    deflated, checksum = _repeated_deflate(b"", byte, inflated)
    # A gzip member: its header (deflate, no name, no time), the data, CRC-32 and size.
    trailer = checksum(zlib.crc32, 0).to_bytes(4, "little") + (inflated % (1 << 32)).to_bytes(4, "little")
    path.write_bytes(b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff" + deflated + trailer)
    return path


def _repeated_deflate(head: bytes, byte: bytes, count: int) -> tuple[bytes, Callable[[Checksum, int], int]]:
    """Raw deflate of `head` then `count` copies of `byte`, and a way to checksum that data.

    After a full flush the compressor starts afresh, so every whole block compresses to
    the same bytes: one block is compressed and its output repeated, and a gigabyte costs
    a millisecond of compression instead of seconds."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
    block = byte * _BLOCK
    whole, rest = divmod(count, _BLOCK)
    start = compressor.compress(head) + compressor.flush(zlib.Z_FULL_FLUSH)
    packed = compressor.compress(block) + compressor.flush(zlib.Z_FULL_FLUSH)
    end = compressor.compress(block[:rest]) + compressor.flush()

    def checksum(update: Checksum, value: int) -> int:
        value = update(head, value)
        for _ in range(whole):
            value = update(block, value)
        return update(block[:rest], value)

    return start + packed * whole + end, checksum
