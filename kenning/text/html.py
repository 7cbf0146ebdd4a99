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
_HTML_TITLE = re.compile(r"<title[^>]*>(.*?)</title\s*>", re.IGNORECASE | re.DOTALL)


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
    match = _HTML_TITLE.search(source)
    title = " ".join(html.unescape(match.group(1)).split()) if match else ""
    return text, title or first_h1(text)


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
