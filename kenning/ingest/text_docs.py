"""Documents that arrive as text rather than as files: agent text and fetched pages.

Both go through the same redact → chunk → duplicate gate → store path as files do, in
one transaction per document (`documents.store_text`). The preparation itself, which a
parse worker runs for a fetched page (ingest/pages.py), is text_prep.py's; what is
checked and stored is here.

An agent document's identity is a hash of its raw `source_uri`, never its title (two
unrelated documents are both called "README") and never its redacted form (redaction
is lossy, so two different uris could redact to the same string). The uri is a label:
it is redacted and stored, and never opened, resolved or fetched. A fetched page is
keyed by the URL asked for, raw, and shown by its redacted form. Everything stored for
display or search (text, title, uri, tags, namespace) is redacted.
"""

from __future__ import annotations

import asyncio
import os
import re
from dataclasses import dataclass, replace

from kenning.api import AddedDocument
from kenning.config import ChunkingSettings
from kenning.errors import InvalidRequest
from kenning.ingest.redact import redact
from kenning.ingest.text_prep import Labels, PreparedText, prepare_text, visible
from kenning.store import document_text, documents, sources
from kenning.store.database import Database
from kenning.store.keys import agent_key, page_key, path_key
from kenning.text.controls import CONTROL
from kenning.text.unicode import normalized


@dataclass(frozen=True)
class TextDocument:
    title: str
    text: str
    source_uri: str
    tags: tuple[str, ...] = ()
    namespace: str | None = None
    # The date the text speaks from, when the agent knows it (an ISO prefix).
    date: str | None = None
    # Documents this one replaces: other agent documents' uris, page URLs, file paths.
    supersedes: tuple[str, ...] = ()


def check_title(title: str) -> None:
    """A title is one line of plain text. Hits, citations, MCP answers and `ken search
    --format paths` show it on one line, where a newline would print a line of its own (a
    forged `path:line:` for `vim -q`) and an escape sequence would reach a terminal.
    The CLI escapes what it prints, but not every reader of a title does, so an agent's
    is refused here, and the agent learns why, where cleaning it quietly would store a
    title it never sent."""
    check_line("title", title)


def check_line(what: str, text: str) -> None:
    """Refuse a label shown on one line (a title, a namespace) holding a control
    character. A namespace is echoed in errors: `ken search --namespace nosuch` listed
    them as stored, and one holding "\\x1b]0;x\\x07" set the terminal's title."""
    if found := CONTROL.search(text):
        raise InvalidRequest(
            f"a {what} is one line of text without control characters; this one holds U+{ord(found[0]):04X}"
        )


def check_namespace(namespace: str) -> None:
    """As check_line; and a namespace that shows nothing could not be asked for again."""
    check_line("namespace", namespace)
    if not visible(namespace):
        raise InvalidRequest("a namespace cannot be blank; leave it out for the default")


def check_uri(uri: str) -> None:
    """An agent document's uri is a label shown where a citation's path is: a file path
    or a `file:` URL would cite a file that does not hold the text (`ken search --format
    paths` printing a real note's path beside an agent's words), and `kenning:` names
    what kenning itself keeps (capsules, archives, the ledger). A control character is
    refused as in a title. The uri is judged as it would be stored, folded (redact folds
    it): "ｋｅｎｎｉｎｇ://..." or "\u200b/etc/passwd" is stored as the plain form."""
    if found := CONTROL.search(uri):
        raise InvalidRequest(f"a uri is one line without control characters; this one holds U+{ord(found[0]):04X}")
    if not visible(uri):
        raise InvalidRequest("a uri cannot be blank: it is the label the document is cited and removed by")
    lowered = normalized(uri).strip().lower()
    # "/notes/keys.md", "~/notes", "file:///...", "C:\\notes" or "C:/notes"; and a place
    # relative to where one stands, "../notes" or "./notes", which `ken get` resolves there.
    drive = re.match(r"[a-z]:[\\/](?!/)", lowered)
    relative = re.match(r"\.\.?([\\/]|$)", lowered)
    if lowered.startswith(("/", "~", "file:")) or drive or relative:
        raise InvalidRequest(
            f"{redact(uri)!r} is a file's place; an agent document's uri is a label of its own"
            " (e.g. notes://standup/2024-05-02), and a file is indexed by adding its folder as a source"
        )
    if lowered.startswith("kenning:"):
        raise InvalidRequest(f"{redact(uri)!r}: kenning:// uris name what kenning keeps itself; choose another scheme")


def check_supersedes(named: str) -> None:
    """A `kenning:` uri names one of kenning's own records, and each has its own way of
    being replaced, which a link from agent text would contradict: a capsule stays
    current to recall_memory until a capsule supersedes it, a ledger entry is corrected
    by adding its identity again, and an archive is a record of what a tool printed,
    kept as it was. `kenning://document/N` names a document by an id, not by a key a
    link can hold. Stored as a link, such a name was accepted and never took effect."""
    lowered = normalized(named).strip().lower()
    if not lowered.startswith("kenning:"):
        return
    kind = lowered.removeprefix("kenning:").lstrip("/").split("/", 1)[0]
    instead = {
        "memory": "a capsule is replaced by remembering one with supersedes=<its id>",
        "ledger": "a ledger entry is corrected by adding its identity again with the new fields",
        "archive": "an archive is kept as it was printed; archive the new output instead",
    }.get(kind, "name the document by its uri, URL or file path, as search hits cite it")
    raise InvalidRequest(f"supersedes {named!r}: a document cannot supersede one of kenning's own records; {instead}")


def stored_keys(named: str) -> list[str]:
    """The keys a document named by `named` may be stored under: agent text given that
    uri, a page fetched from that URL, or (a path) the file at that place. Each is a
    hash of the name (store/keys.py), so a token in it is never stored."""
    keys = [agent_key(named), page_key(named)]
    if named.startswith(("/", "~")):
        keys.append(path_key(os.path.normpath(os.path.expanduser(named))))
    return keys


async def add_text(
    db: Database, document: TextDocument, chunking: ChunkingSettings, max_chunks: int | None = None
) -> AddedDocument:
    """`max_chunks` is [limits] max_chunks_per_file: a file past it fails, and agent text
    past it is refused. Without it 8 MB of empty headings was stored as two million
    chunks (a 1 GB database, and minutes of embedding and extraction behind it)."""
    check_title(document.title)
    check_uri(document.source_uri)
    if document.namespace is not None:
        check_namespace(document.namespace)
    for named in document.supersedes:
        check_supersedes(named)
        if agent_key(named) == agent_key(document.source_uri):
            # Accepted, it was stored as a link from the document to itself: a mistake the
            # caller never heard of.
            raise InvalidRequest(f"supersedes {named!r}: a document cannot supersede itself; name the one it replaces")
    # Text of spaces alone was stored as a document of no chunks, which documents.get then
    # called not found. Off the loop: ten million zero-width spaces are a long walk.
    if not await asyncio.to_thread(visible, document.text):
        raise InvalidRequest("the text is blank: it holds nothing but spaces, line breaks or invisible characters")
    source_id = await sources.aggregate_source(db, "agent")
    return await _store(
        db,
        source_id,
        agent_key(document.source_uri),
        Labels(document.title, document.source_uri, document.tags, document.namespace),
        document.text,
        "markdown",
        chunking,
        format="agent",
        date=(document.date, "given") if document.date else None,
        supersedes=[key for named in document.supersedes for key in stored_keys(named)],
        max_chunks=max_chunks,
    )


async def add_page(db: Database, requested_url: str, prepared: PreparedText) -> AddedDocument:
    """A fetched page prepared in a parse worker (ingest/pages.py), keyed by the URL the
    user asked for (redirects may move the final one)."""
    source_id = await sources.aggregate_source(db, "url")
    return await _store_prepared(db, source_id, page_key(requested_url), prepared)


async def _store(
    db: Database,
    source_id: int,
    key: str,
    labels: Labels,
    text: str,
    kind: str,
    chunking: ChunkingSettings,
    *,
    format: str = "text",
    date: tuple[str, str] | None = None,
    supersedes: list[str] | None = None,
    max_chunks: int | None = None,
) -> AddedDocument:
    """`date` is one the agent gave; it comes before a date the text states."""
    prepared = await asyncio.to_thread(
        prepare_text, labels, text, kind, chunking, format=format, date=date, max_chunks=max_chunks
    )
    return await _store_prepared(db, source_id, key, prepared, supersedes, max_chunks)


async def _store_prepared(
    db: Database,
    source_id: int,
    key: str,
    prepared: PreparedText,
    supersedes: list[str] | None = None,
    max_chunks: int | None = None,
) -> AddedDocument:
    if max_chunks is not None and len(prepared.items) > max_chunks:
        raise InvalidRequest(
            f"the text makes {len(prepared.items)} chunks, over the [limits] max_chunks_per_file limit of"
            f" {max_chunks} that a file is held to"
        )
    shown, items = prepared.labels, prepared.items
    document_id, stored = await documents.store_text(db, source_id, key, shown.uri, prepared.meta, items, supersedes)
    return AddedDocument(document_id, shown.title, shown.uri, stored, len(items) if stored != "merged" else 0)


async def prepare_again(db: Database, document_id: int, chunking: ChunkingSettings) -> bool:
    """Store agent text or a fetched page again as this code reads it: redacted and
    folded by the newest rules, chunked by the configured sizes. Its text is rebuilt
    from its chunks, the only copy kept (store/document_text.py), and was redacted when
    it arrived, so the newer rules only ever take more out. It keeps its identity, its
    labels (redacted anew), when it arrived and a date it was given; a document an agent
    added again meanwhile is left as the agent left it. Whether it was stored."""
    record = await documents.text_record(db, document_id)
    if record is None:
        return False
    # A location of another document's copy takes only its labels anew: the text is the
    # holder's, which its own owner prepares again (documents.restore_text).
    text = "" if record.merged else await document_text.whole_text(db, record.id)
    kind = "markdown" if record.kind == "agent" or record.format != "text" else "prose"
    known = record.date_source in ("given", "last-modified") and record.date is not None
    prepared = await asyncio.to_thread(
        prepare_text,
        Labels(record.title, record.uri, record.tags, record.namespace),
        text,
        kind,
        chunking,
        format=record.format,
        etag=record.etag,
        last_modified=record.last_modified,
        date=(record.date, record.date_source) if known else None,
        added=record.mtime,
    )
    # The size is of the text as given, which only the first preparation saw.
    meta = replace(prepared.meta, size=record.size)
    return await documents.restore_text(db, record, prepared.labels.uri, meta, prepared.items)
