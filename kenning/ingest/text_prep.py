"""A text's preparation for the store: redact → chunk → date, and the labels and state
row it is stored with. Agent text, kenning's own records and fetched pages all go
through `prepare_text`.

A fetched page is prepared in a parse worker (ingest/pages.py), which imports this
module for it, so it imports neither the store's database nor the config: a worker
paid 0.2-0.4 s of CPU for SQLite and pydantic it has no use for (bench/worker_start.py).
It takes and returns plain picklable values; storing what it makes is text_docs.py's.
"""

from __future__ import annotations

import hashlib
import json
import time
import unicodedata
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from typing import Protocol

from kenning.errors import InvalidRequest
from kenning.ingest.chunker import chunk_document
from kenning.ingest.convert import reading_of
from kenning.ingest.items import new_items
from kenning.ingest.readers import ReadResult
from kenning.ingest.redact import redact
from kenning.store.records import DocumentMeta, NewItem
from kenning.store.texthash import text_hash
from kenning.text import dates
from kenning.text.headings import MAX_TITLE_CHARS, cut

MAX_URI_CHARS = 2000
MAX_TAGS = 32
MAX_TAG_CHARS = 64
# What shows nothing on its own: spaces, controls, and format characters (zero-width
# space and joiners, direction marks, the byte order mark).
_INVISIBLE = frozenset({"Zs", "Zl", "Zp", "Cc", "Cf"})


class ChunkSizes(Protocol):
    """The chunk sizes a text is cut to: [chunking] in the config, or a page's
    PageLimits in a parse worker, which has no config."""

    @property
    def target_chars(self) -> int: ...

    @property
    def overlap_chars(self) -> int: ...


def visible(text: str) -> bool:
    """Whether some character of the text shows."""
    return any(unicodedata.category(char) not in _INVISIBLE for char in text)


def tidy_tags(tags: tuple[str, ...] | list[str], cut: bool = True) -> tuple[str, ...]:
    """Tags as stored: each on one line with its spaces collapsed, redacted, cut to
    length, without blank ones or repeats, at most MAX_TAGS.

    A tag is a label shown on one line after the title; a newline inside one broke
    every listing that showed it. Tags are redacted before they are cut, so a cut cannot
    break a secret's shape and let it through. With `cut` false none is cut and none
    dropped for the count: tags stored before the limits held are kept whole when what
    holds them is prepared again, since what is stored is their only copy.
    """
    tidy: dict[str, None] = {}
    for tag in tags:
        spaced = " ".join(tag.split())
        if visible(spaced):
            redacted = redact(spaced)
            tidy.setdefault(redacted[:MAX_TAG_CHARS].strip() if cut else redacted, None)
    return tuple(tidy)[:MAX_TAGS] if cut else tuple(tidy)


@dataclass(frozen=True)
class Labels:
    """What a document is shown and found by, besides its text."""

    title: str
    uri: str
    tags: tuple[str, ...] = ()
    namespace: str | None = None

    def redacted(self) -> Labels:
        # A fetched page's <title> may run to megabytes; an agent's is refused past this.
        title = cut(redact(self.title).strip(), MAX_TITLE_CHARS)
        return Labels(
            title if visible(title) else "untitled",
            redact(self.uri)[:MAX_URI_CHARS],
            tidy_tags(self.tags),
            None if self.namespace is None else redact(self.namespace),
        )


@dataclass(frozen=True)
class PreparedText:
    """A text document ready to store: redacted labels and text, its chunks, its state row."""

    labels: Labels
    text: str
    items: list[NewItem]
    meta: DocumentMeta


def prepare_text(
    labels: Labels,
    text: str,
    kind: str,
    chunking: ChunkSizes,
    *,
    format: str = "text",
    etag: str | None = None,
    last_modified: str | None = None,
    date: tuple[str, str] | None = None,
    added: float | None = None,
    max_chunks: int | None = None,
) -> PreparedText:
    """Redaction, chunking and dating: they cost CPU time, so callers run this in a
    worker thread. `added` is when the text first arrived, kept when it is prepared
    again (service/rereading.py); a text dated by nothing else speaks from then. A text
    making more than `max_chunks` chunks is refused as soon as chunking finds it does,
    before the rest is made (chunker.chunk_document)."""
    clean = redact(text)
    shown = labels.redacted()
    chunks = chunk_document(
        ReadResult(text=clean, title=shown.title, kind=kind, format="text"),
        target_chars=chunking.target_chars,
        overlap_chars=chunking.overlap_chars,
        max_chunks=max_chunks,
    )
    if max_chunks is not None and len(chunks) > max_chunks:
        raise InvalidRequest(
            f"the text makes more than {max_chunks} chunks, over the [limits] max_chunks_per_file limit"
            " that a file is held to"
        )
    stated, stated_end = dates.document_period(clean, labels.uri.rstrip("/").rsplit("/", 1)[-1])
    items = new_items(shown.title, chunks, dates.title_heading(clean, stated), clean)
    now = time.time() if added is None else added
    given = (date, stated) if format == "agent" else (stated, date)
    day, date_source = next((found for found in given if found), (dates.from_timestamp(now), "added"))
    date_end = stated_end if (day, date_source) == stated else None
    meta = DocumentMeta(
        shown.title, format, now, len(text.encode()), hashlib.sha256(clean.encode()).hexdigest(),
        text_hash(item.content for item in items), tags=json.dumps(shown.tags, ensure_ascii=False),
        namespace=shown.namespace, etag=etag, last_modified=last_modified, date=day, date_source=date_source,
        date_end=date_end, reading=reading_of(chunking.target_chars, chunking.overlap_chars),
    )  # fmt: skip
    return PreparedText(shown, clean, items, meta)


def header_date(last_modified: str | None) -> tuple[str, str] | None:
    if not last_modified:
        return None
    try:
        return parsedate_to_datetime(last_modified).date().isoformat(), "last-modified"
    except (TypeError, ValueError):  # a malformed header says nothing about the date
        return None
