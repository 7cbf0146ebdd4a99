"""Documents that arrive as text rather than as files: agent text and fetched pages.

Both go through the same redact → chunk → duplicate gate → store path as files do, in
one transaction per document (`documents.store_text`).

An agent document's identity is a hash of its raw `source_uri`, never its title (two
unrelated documents are both called "README") and never its redacted form (redaction
is lossy, so two different uris could redact to the same string). The uri is a label:
it is redacted and stored, and never opened, resolved or fetched.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
from dataclasses import dataclass

from kenning.api import AddedDocument
from kenning.config import ChunkingSettings
from kenning.ingest.chunker import chunk_document
from kenning.ingest.readers import ReadResult
from kenning.ingest.redact import redact
from kenning.store import documents, sources
from kenning.store.database import Database
from kenning.store.documents import DocumentMeta, NewItem
from kenning.store.texthash import text_hash
from kenning.store.records import FetchedPage

MAX_URI_CHARS = 2000
MAX_TAGS = 32
MAX_TAG_CHARS = 64


@dataclass(frozen=True)
class TextDocument:
    title: str
    text: str
    source_uri: str
    tags: tuple[str, ...] = ()
    namespace: str | None = None


def agent_key(source_uri: str) -> str:
    return "uri:" + hashlib.sha256(source_uri.encode()).hexdigest()


async def add_text(db: Database, document: TextDocument, chunking: ChunkingSettings) -> AddedDocument:
    source_id = await sources.aggregate_source(db, "agent")
    tags = [tag.strip()[:MAX_TAG_CHARS] for tag in document.tags if tag.strip()][:MAX_TAGS]
    return await _store(
        db,
        source_id,
        agent_key(document.source_uri),
        redact(document.source_uri)[:MAX_URI_CHARS],
        document.title,
        document.text,
        "markdown",
        chunking,
        format="agent",
        tags=json.dumps(tags, ensure_ascii=False),
        namespace=document.namespace,
    )


def page_key(url: str) -> str:
    return "url:" + url


async def add_page(db: Database, requested_url: str, page: FetchedPage, chunking: ChunkingSettings) -> AddedDocument:
    """A fetched page, keyed by the URL the user asked for (redirects may move the final one)."""
    source_id = await sources.aggregate_source(db, "url")
    return await _store(
        db,
        source_id,
        page_key(requested_url),
        requested_url,
        page.title,
        page.text,
        "markdown" if page.format != "text" else "prose",
        chunking,
        format=page.format,
        etag=page.etag,
        last_modified=page.last_modified,
    )


async def _store(
    db: Database,
    source_id: int,
    key: str,
    uri: str,
    title: str,
    text: str,
    kind: str,
    chunking: ChunkingSettings,
    *,
    format: str = "text",
    tags: str = "[]",
    namespace: str | None = None,
    etag: str | None = None,
    last_modified: str | None = None,
) -> AddedDocument:
    items, clean_title, digest, text_digest = await asyncio.to_thread(_prepare, title, text, kind, chunking)
    meta = DocumentMeta(
        clean_title, format, time.time(), len(text.encode()), digest, text_digest,
        tags=tags, namespace=namespace, etag=etag, last_modified=last_modified,
    )  # fmt: skip
    document_id, stored = await documents.store_text(db, source_id, key, uri, meta, items)
    return AddedDocument(document_id, clean_title, uri, stored, len(items) if stored != "merged" else 0)


def _prepare(title: str, text: str, kind: str, chunking: ChunkingSettings) -> tuple[list[NewItem], str, str, str]:
    clean = redact(text)
    clean_title = redact(title).strip() or "untitled"
    chunks = chunk_document(
        ReadResult(text=clean, title=clean_title, kind=kind, format="text"),
        target_chars=chunking.target_chars,
        overlap_chars=chunking.overlap_chars,
    )
    items = [NewItem(clean_title, chunk.section, chunk.text, chunk.line_start, chunk.line_end) for chunk in chunks]
    digest = hashlib.sha256(clean.encode()).hexdigest()
    return items, clean_title, digest, text_hash(item.content for item in items)
