"""The records the Library API returns, as plain dataclasses.

The service fills them, the socket server encodes them (msgspec), and the clients (`ken`,
`ken mcp`) decode the answer back into the same types, so a field renamed on one side
and not the other fails loudly in the tests instead of reading as a missing key at run
time. Only the standard library is imported here: the CLI loads this module and must
start fast. docs/protocol.md describes the same shapes for other programs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

# What became of a document's new text: stored, taken over from a lower-ranked holder,
# or recorded as another location of a copy already stored.
Stored = Literal["indexed", "adopted", "merged"]


@dataclass
class Hit:
    """One chunk a search found, and where it sits in its source."""

    item_id: int
    document_id: int
    title: str
    snippet: str
    source: str
    namespace: str
    path: str
    section: str
    line_start: int
    line_end: int
    modified: float
    score: float = 0.0
    legs: list[str] = field(default_factory=list)
    ranks: dict[str, int] = field(default_factory=dict)


@dataclass
class SearchResult:
    hits: list[Hit]
    # Why a leg could not run (the embedder is down, the index is loading).
    warnings: list[str] = field(default_factory=list)


@dataclass
class JobStatus:
    state: str
    done: int = 0
    total: int = 0
    rate_per_second: float | None = None
    eta_seconds: float | None = None
    last_error: str | None = None
    # Extraction only: chunks still waiting, and chunks whose extraction failed this pass.
    pending: int | None = None
    failed_this_pass: int | None = None


@dataclass
class DaemonInfo:
    pid: int
    version: str
    uptime_seconds: float
    config: str
    data_dir: str
    socket: str
    db_bytes: int  # the database file and its WAL
    wal_bytes: int = 0
    free_bytes: int = 0  # pages inside the file that hold nothing; `compact` returns them


@dataclass
class EmbedderStatus:
    backend: str
    model: str
    signature: str
    vectors: int | None  # None while the index loads
    dimension: int | None
    job: JobStatus


@dataclass
class GraphStatus:
    backend: str
    extractor: str | None
    model: str | None
    entities: int
    relations: int
    failed: int
    pending: int | None
    job: JobStatus


@dataclass
class Failure:
    path: str
    reason: str


@dataclass
class SourceStatus:
    name: str
    kind: str
    path: str
    namespace: str
    active: bool
    done: int
    merged: int
    holds: int
    failed: int
    skipped: int
    in_progress: int
    chunks: int
    last_sweep_at: float | None
    last_error: str | None
    processed: int
    scanning: bool = False
    discovered: int | None = None
    capped: int = 0
    pending: int = 0
    total: int | None = None
    percent: float | None = None
    chunks_per_sweep: int | None = None
    deferred: int = 0
    next_sweep_at: float | None = None
    failures: list[Failure] = field(default_factory=list)
    # While a sweep reads files in: files per second so far, and the time the rest will take.
    rate_per_second: float | None = None
    eta_seconds: float | None = None
    # Files the last walk passed over, by reason (unsupported type, hidden, ignored, ...).
    passed_over: dict[str, int] = field(default_factory=dict)


@dataclass
class LibraryCounts:
    documents: int


@dataclass
class Status:
    daemon: DaemonInfo
    embedder: EmbedderStatus
    graph: GraphStatus
    library: LibraryCounts
    sources: list[SourceStatus]


@dataclass
class SourceEntry:
    name: str
    kind: str
    path: str
    namespace: str
    in_config: bool
    documents: int
    shared: int
    chunks: int
    # A configured folder's settings; absent for the agent and web sources.
    ignore: list[str] | None = None
    max_files: int | None = None
    chunk_budget: int | None = None
    confine_to_root: bool | None = None


@dataclass
class SourceList:
    sources: list[SourceEntry]
    library_documents: int


@dataclass
class ScanResult:
    name: str
    started: bool = False
    finished: bool = False
    result: dict[str, int] | None = None


@dataclass
class RemovedSource:
    name: str
    documents_removed: int
    bytes_freed: int = 0  # what the database file and its WAL shrank by afterwards


@dataclass
class Location:
    source: str
    path: str


@dataclass
class ItemView:
    """One chunk in full, with its citation."""

    item_id: int
    document_id: int
    ord: int
    title: str
    section: str
    content: str
    line_start: int
    line_end: int
    source: str
    namespace: str
    path: str
    format: str
    locations: list[Location] = field(default_factory=list)


@dataclass
class DocumentInfo:
    document_id: int
    title: str
    source: str
    namespace: str
    path: str
    format: str


@dataclass
class Fetched:
    """`documents.get`: one item (`item`), or a document and its items in order."""

    item: ItemView | None = None
    document: DocumentInfo | None = None
    items: list[ItemView] = field(default_factory=list)


@dataclass
class AddedDocument:
    document_id: int
    title: str
    uri: str
    stored: Stored
    chunks: int
    # Fetched pages: where the redirects ended, and (refresh) whether the page changed.
    url: str | None = None
    changed: bool | None = None


@dataclass
class EntityRelation:
    kind: str
    direction: Literal["out", "in"]
    other: str
    item_id: int  # the first chunk stating it
    chunks: int  # how many chunks state it


@dataclass
class EntityChunk:
    item_id: int
    title: str
    source: str
    path: str
    section: str
    line_start: int
    line_end: int


@dataclass
class EntityView:
    id: int
    name: str
    kind: str
    aliases: list[str]
    mentions: int
    relations: list[EntityRelation]
    chunks: list[EntityChunk]


@dataclass
class Entities:
    entities: list[EntityView]


@dataclass
class DedupResult:
    documents: int
    pairs: int
    collapsed: int
    seconds: float


@dataclass
class ReloadResult:
    sources: list[str]
    added: list[str]
    removed: list[str]


@dataclass
class ReembedResult:
    dropped: int


@dataclass
class DocumentText:
    """`documents.read`: lines of the text kenning extracted from a document, the text
    its citations' line numbers count in (for PDF, DOCX and HTML, not the file itself)."""

    document_id: int
    title: str
    source: str
    namespace: str
    path: str
    format: str
    line_start: int  # the first line in `lines`
    line_end: int  # the last line in `lines`
    last_line: int  # the last line of the document that holds indexed text
    lines: list[str]
    locations: list[Location] = field(default_factory=list)


@dataclass
class CompactResult:
    """`compact`: the database's size (file plus WAL) before and after, and how long it took."""

    bytes_before: int
    bytes_after: int
    seconds: float
