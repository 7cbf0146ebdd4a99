"""A fetched page's bytes to a text document ready to store: decode → HTML to markdown →
redact → chunk, the CPU part of `ken add-url`.

It runs inside a parse worker (kenning.ingest.parse_pool), as a file's conversion does:
a page is whatever a server chose to send, and Python's html.parser is quadratic on some
markup (60 KB of unclosed `<a <a <a` took 33 s, 450 KB half an hour). In a thread of the
daemon that work could not be stopped once the fetch had given up on it, and it held a
core and part of the GIL until it ended; in a worker it is held to the [limits]
parse_timeout and parse_memory_mb, and killed there. So it takes and returns only
picklable values, and nothing is stored here: the daemon stores what comes back. A
worker imports this module for its first page, so it imports neither the store's
database nor the config (pydantic): PageLimits carries what the settings say.
"""

from __future__ import annotations

import codecs
from dataclasses import dataclass
from typing import TYPE_CHECKING

from kenning.errors import ReaderError
from kenning.ingest.text_prep import Labels, PreparedText, header_date, prepare_text
from kenning.store.records import FetchedPage
from kenning.text.html import browser_codec, first_h1, html_to_markdown, meta_charset

if TYPE_CHECKING:
    from kenning.config import ChunkingSettings, LimitsSettings


@dataclass(frozen=True)
class PageLimits:
    """The [chunking] sizes and the [limits] a page is held to, as a file is: made from the
    settings in the daemon, since a worker has no config."""

    target_chars: int
    overlap_chars: int
    max_text_chars: int
    max_chunks_per_file: int

    @classmethod
    def of(cls, chunking: ChunkingSettings, limits: LimitsSettings) -> PageLimits:
        return cls(chunking.target_chars, chunking.overlap_chars, limits.max_text_chars, limits.max_chunks_per_file)


def prepare_page(page: FetchedPage, limits: PageLimits) -> PreparedText:
    """The page as a document keyed by the URL asked for, titled by its <title> or first
    heading, else by the URL the redirects ended at.

    Held to a file's `max_text_chars` and `max_chunks_per_file` (ReaderError past
    either): [fetch] max_mb bounds the bytes, not what they make, and a 5 MB page of
    empty headings made a million chunks, each embedded and mined."""
    text, title = page_text(page.body, page.charset, page.format)
    if len(text) > limits.max_text_chars:
        raise ReaderError(f"text passes the [limits] max_text_chars limit of {limits.max_text_chars} characters")
    prepared = prepare_text(
        Labels(title or page.url, page.requested_url),
        text,
        "markdown" if page.format != "text" else "prose",
        limits,
        format=page.format,
        etag=page.etag,
        last_modified=page.last_modified,
        date=header_date(page.last_modified),
    )
    if len(prepared.text) > limits.max_text_chars:
        # Folding can lengthen it: "ﷺ" is eighteen letters.
        raise ReaderError(
            f"text passes the [limits] max_text_chars limit of {limits.max_text_chars} characters"
            " once its letters are folded"
        )
    if len(prepared.items) > limits.max_chunks_per_file:
        raise ReaderError(
            f"makes {len(prepared.items)} chunks, over the [limits] max_chunks_per_file limit of"
            f" {limits.max_chunks_per_file}"
        )
    return prepared


def page_text(body: bytes, charset: str | None, page_format: str) -> tuple[str, str]:
    """Text and title of a page body; the title may be empty."""
    source = _decode(body, charset, page_format)
    if page_format == "html":
        return html_to_markdown(source)
    return source, first_h1(source)


def _decode(body: bytes, charset: str | None, page_format: str) -> str:
    """Header charset, else <meta charset> for HTML (each read as browsers read it), else
    UTF-8; a BOM beats both."""
    if body.startswith(codecs.BOM_UTF8):
        encoding = "utf-8-sig"
    elif body.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        encoding = "utf-16"
    else:
        sniffed = meta_charset(body) if page_format == "html" else None
        encoding = browser_codec(charset) or sniffed or "utf-8"
    return body.decode(encoding, errors="replace").replace("\r\n", "\n").replace("\r", "\n")
