"""HTML to markdown, and a document's title: shared by HTML files and fetched pages.

One conversion for both, so a page fetched with `ken add-url` and the same page saved
in a watched folder chunk, cite and deduplicate alike.
"""

from __future__ import annotations

import codecs
import html
import re

import html2text

from kenning.text.headings import heading_title

# A fence, or the opening of a level-one heading; its title is read by `heading_title`.
_H1_OR_FENCE = re.compile(r"^ {0,3}(?:(```|~~~)|#[ \t]+)", re.MULTILINE)
# The title element's tags, looked for one after the other: one pattern for the whole
# element, `<title[^>]*>(.*?)</title\s*>`, searched to the end of the page again at each
# unclosed `<title`, and 420 KB of them took over a minute (a fetched page held the
# daemon's GIL for it).
# `<meta charset="...">` or `<meta http-equiv="Content-Type" content="...; charset=...">`.
_META_CHARSET = re.compile(rb"<meta[^>]+charset\s*=\s*[\"']?\s*([A-Za-z0-9_.:-]+)", re.IGNORECASE)
# How far into a page its <meta charset> is looked for (HTML puts it in the first 1024 bytes).
META_BYTES = 4096
_TITLE_OPEN = re.compile(r"<title", re.IGNORECASE)
_TITLE_CLOSE = re.compile(r"</title\s*>", re.IGNORECASE)


def html_to_markdown(source: str) -> tuple[str, str]:
    """Markdown text and title (from <title>, else the first heading; may be empty).

    Shared by HTML files and fetched pages, so both are chunked and cited alike.
    """
    converter = _Converter()
    converter.ignore_images = True
    converter.ignore_links = False
    converter.body_width = 0
    # Entities as the characters they name ("caf&eacute;" is "café", as written literally),
    # not html2text's ASCII stand-ins ("cafe", "--" for an em dash).
    converter.unicode_snob = True
    converter.tag_callback = _cell_block_gap
    text = converter.handle(source).replace("\r\n", "\n").replace("\r", "\n").strip("\n")
    title = " ".join(html.unescape(_title_element(source)).split())
    return text, title or first_h1(text)


class _Converter(html2text.HTML2Text):
    """html2text, with the end of the file read as HTML5 reads it.

    Python's html.parser, until its fix for CVE-2025-6069, gives a comment, declaration,
    processing instruction or tag still open at the end of the file one character or up
    to the next `>` as text, and tries the next `<` again, each try seeking a close to
    the end of the file: 200 KB of `<!-- a >` took 9.5 s, and 1 MB ran past [limits]
    parse_timeout (bench/hostile.py part 4). HTML5, browsers and Python's fixed parser
    make such a construct run to the end of the file (a comment hides the rest; a tag is
    dropped): one step, and the page reads as a browser shows it.
    """

    _at_end = False

    def goahead(self, end: bool) -> None:
        self._at_end = bool(end)
        super().goahead(end)

    def parse_comment(self, i: int, report: int = 1) -> int:
        return self._or_to_end(super().parse_comment(i, report))

    def parse_pi(self, i: int) -> int:
        return self._or_to_end(super().parse_pi(i))

    def parse_starttag(self, i: int) -> int:
        return self._or_to_end(super().parse_starttag(i))

    def parse_endtag(self, i: int) -> int:
        return self._or_to_end(super().parse_endtag(i))

    def parse_html_declaration(self, i: int) -> int:
        if self.rawdata.startswith("<![", i):
            # A marked section is XML's: in HTML `<![CDATA[` or `<![if` opens a bogus
            # comment that ends at the first `>`. The parser's own reading of it raised
            # AssertionError on a keyword it did not know (`<![foo[`), failing the file.
            return self._or_to_end(self.parse_bogus_comment(i))
        return self._or_to_end(super().parse_html_declaration(i))

    def _or_to_end(self, end: int) -> int:
        return len(self.rawdata) if end < 0 and self._at_end else end


def _title_element(source: str) -> str:
    """What the first `<title>` holds, or "" when it is not closed. Only the first is
    tried: a later one's `>` and closing tag lie inside the stretch the first's were
    looked for in."""
    opening = _TITLE_OPEN.search(source)
    if opening is None:
        return ""
    start = source.find(">", opening.end())
    if start < 0:
        return ""
    closing = _TITLE_CLOSE.search(source, start + 1)
    return source[start + 1 : closing.start()] if closing else ""


def _cell_block_gap(parser: html2text.HTML2Text, tag: str, attrs: dict[str, str | None], start: bool) -> bool:
    """Inside a table cell html2text drops the break that ends a paragraph or a div, so
    the last word of one ran into the first of the next ("onebeta", as Google Docs and
    wiki exports lay cells out): a space keeps them two words. Never handles the tag."""
    if not start and tag in ("p", "div") and parser.split_next_td:
        parser.space = True
    return False


def first_h1(text: str) -> str:
    """First '# ' heading outside fenced code, so a shell comment in a snippet is no title."""
    fence = None
    for match in _H1_OR_FENCE.finditer(text):
        marker = match.group(1)
        if marker:
            fence = None if fence == marker else (fence or marker)
        elif fence is None:
            end = text.find("\n", match.end())
            if heading := heading_title(text[match.end() : end if end >= 0 else len(text)]):
                return heading
    return ""


# Labels browsers read as a superset, as the WHATWG Encoding standard has them: pages
# declared Latin-1 or ASCII are written in Windows-1252 (curly quotes, dashes), and
# Python's strict codecs would turn those bytes into control characters.
_AS_BROWSERS_READ = {
    "ascii": "cp1252",
    "iso8859-1": "cp1252",
    "iso8859-9": "cp1254",
    "iso8859-11": "cp874",
    "tis-620": "cp874",
    "shift_jis": "cp932",
    "gb2312": "gb18030",
    "gbk": "gb18030",
    "euc_kr": "cp949",
}


def meta_charset(page: bytes) -> str | None:
    """The codec a page's `<meta>` declares, when Python knows it, as browsers read it;
    not UTF-16 or UTF-32, which bytes read as ASCII cannot be (HTML reads such a
    declaration as UTF-8)."""
    meta = _META_CHARSET.search(page[:META_BYTES])
    name = browser_codec(meta.group(1).decode("ascii")) if meta else None
    return None if name is None or name.startswith(("utf-16", "utf-32")) else name


def browser_codec(label: str | None) -> str | None:
    """`text_codec`, with a legacy label read as the superset browsers read it as: a page
    said to be Latin-1 is Windows-1252 in every browser, and its quotes and dashes
    (0x80-0x9F) would be control characters read as Latin-1."""
    name = text_codec(label)
    return _AS_BROWSERS_READ.get(name, name) if name else None


def text_codec(label: str | None) -> str | None:
    """Python's name for the text encoding `label` names, or None. Its codecs also know
    bytes-to-bytes and str-to-str ones ("base64", "rot13") and ones that decode nothing
    ("undefined"; "idna" without errors="strict"): a page declaring one made decoding
    raise, a saved page failed and a fetched one was an internal error."""
    if not label:
        return None
    try:
        name = codecs.lookup(label).name
        b"a".decode(name, errors="replace")
    except (LookupError, UnicodeError):
        return None
    return name
