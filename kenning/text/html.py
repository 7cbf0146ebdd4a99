"""HTML to markdown, and a document's title: shared by HTML files and fetched pages.

One conversion for both, so a page fetched with `ken add-url` and the same page saved
in a watched folder chunk, cite and deduplicate alike.
"""

from __future__ import annotations

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
_TITLE_OPEN = re.compile(r"<title", re.IGNORECASE)
_TITLE_CLOSE = re.compile(r"</title\s*>", re.IGNORECASE)


def html_to_markdown(source: str) -> tuple[str, str]:
    """Markdown text and title (from <title>, else the first heading; may be empty).

    Shared by HTML files and fetched pages, so both are chunked and cited alike.
    """
    converter = html2text.HTML2Text()
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
