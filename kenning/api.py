"""The records the Library API returns, as msgspec Structs.

The service fills them, the socket server encodes them (msgspec), and `ken` decodes the
answer back into the same types (`ken mcp` into its tools' own models, mcp/models.py),
so a field renamed on one side and not the other fails loudly in the tests instead of
reading as a missing key at run time. The CLI loads this module and must start fast:
as dataclasses these 52 records cost 29 ms of CPU to import, the code generated for each
class, paid by every daemon start and every `ken` command that asks the daemon; as
Structs, 2 ms, and msgspec is what the client decodes with anyway. They behave as the
dataclasses did (mutable, made by keyword or by position in field order, the same JSON),
but `dataclasses.replace` and `asdict` do not take them: `msgspec.structs.replace` and
`msgspec.structs.asdict` do.
docs/protocol.md describes the same shapes for other programs.
"""

from __future__ import annotations

from typing import Literal

from msgspec import Struct, field

# What became of a document's new text: stored, taken over from a lower-ranked holder,
# or recorded as another location of a copy already stored.
Stored = Literal["indexed", "adopted", "merged"]
# How a folder's `last_error` begins when its .kiroignore cannot be used and its sweeps
# index and drop nothing until it is fixed (ingest/scan.py); `ken status` says so.
IGNORE_FILE_HOLDS = "cannot use its .kiroignore"
# What a search's `kind` filter names: folder files, fetched pages, agent text, and the
# agent records (memory capsules, archived outputs, ledger entries).
DocumentKind = Literal["file", "page", "agent", "capsule", "archive", "ledger"]
DOCUMENT_KINDS: tuple[str, ...] = ("file", "page", "agent", "capsule", "archive", "ledger")
CapsuleKind = Literal["fact", "decision", "gotcha", "pattern", "anti-pattern", "recipe", "principle"]
CAPSULE_KINDS: tuple[str, ...] = ("fact", "decision", "gotcha", "pattern", "anti-pattern", "recipe", "principle")


class Elsewhere(Struct):
    """Another place that holds exactly the text of a hit."""

    item_id: int
    document_id: int
    path: str
    line_start: int
    line_end: int


class Hit(Struct):
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
    # The date the chunk speaks from, as an ISO prefix whose length is its precision
    # (`2025`, `2025-09`, `2025-09-18`): its document's, or a dated line's inside it
    # that is not later than the date its document states.
    date: str | None = None
    # How `date` was found: "front matter", "file name", "heading", "opening" (a short
    # line among the first two), "line" (a dated line of the chunk's own, when it refines
    # the document's date), "given" (by an agent), "modified" (the file's mtime),
    # "last-modified" (a fetched page's header) or "added" (when it was stored).
    date_source: str | None = None
    score: float = 0.0
    legs: list[str] = field(default_factory=list)
    ranks: dict[str, int] = field(default_factory=dict)
    # Item ids of the newer chunk that corrects or replaces this one, of the notice that
    # retracts it, and of hits that state something else about the same thing.
    superseded_by: int | None = None
    retracted_by: int | None = None
    conflicts_with: list[int] = field(default_factory=list)
    # The same text in other files, shown once here.
    also_at: list[Elsewhere] = field(default_factory=list)
    # Why the hit moved from where the legs put it (`ken search --explain`).
    reasons: list[str] = field(default_factory=list)
    # Cited at a copy of the stored text that another source's file holds (the search was
    # scoped to the copy's source, or the owner is out of scope): the item id alone names
    # that other file, and `source` names this one (`ken open ITEM --source SOURCE`).
    copy: bool = False


class SearchResult(Struct):
    hits: list[Hit]
    # Why a leg could not run (the embedder is down, the index is loading).
    warnings: list[str] = field(default_factory=list)
    # Why nothing came back although some chunks matched: no hit supported an answer.
    abstained: str | None = None
    # When it abstained, the best hits the floor judged and held back: what matched,
    # for a person or an agent to look at, not to answer from.
    withheld: list[Hit] = field(default_factory=list)


class JobStatus(Struct):
    state: str
    done: int = 0
    total: int = 0
    rate_per_second: float | None = None
    eta_seconds: float | None = None
    last_error: str | None = None
    # Extraction only: chunks still waiting, and chunks whose extraction failed this pass.
    pending: int | None = None
    failed_this_pass: int | None = None


class DaemonInfo(Struct):
    pid: int
    version: str
    uptime_seconds: float
    config: str
    data_dir: str
    socket: str
    db_bytes: int  # the database file and its WAL
    wal_bytes: int = 0
    free_bytes: int = 0  # pages inside the file that hold nothing; `compact` returns them


class EmbedderStatus(Struct):
    backend: str
    model: str
    signature: str
    vectors: int | None  # None while the index loads
    dimension: int | None
    job: JobStatus
    # The length of the vectors the model makes now, once the embedder has learnt it, and
    # the stored vectors left out of the index for another length: either differing from
    # `dimension` means the vector leg cannot score them until they are embedded again.
    model_dimension: int | None = None
    mismatched: int = 0
    # Items whose text this embedder failed on, left to keyword search until `ken reembed`.
    left_out: int = 0


class GraphStatus(Struct):
    backend: str
    extractor: str | None
    model: str | None
    entities: int
    relations: int
    failed: int
    pending: int | None
    job: JobStatus


class Failure(Struct):
    path: str
    reason: str


class SourceStatus(Struct):
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
    # Of `capped`, files the index holds from before max_files was lowered.
    capped_kept: int = 0
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
    # Files the last walk passed over, by reason (unsupported type, hidden, ignored, ...),
    # and the mount points of system filesystems inside it (/proc in a chroot) it did not enter.
    passed_over: dict[str, int] = field(default_factory=dict)
    # Folders inside it the last walk could not list (path relative to the source: why),
    # and how many files the index keeps from them as last read.
    unreadable_folders: dict[str, str] = field(default_factory=dict)
    unreadable_kept: int = 0
    # Indexed files it could not open at the last sweep (path: why), kept as last read.
    unreadable_files: dict[str, str] = field(default_factory=dict)
    # Set when the last sweep kept indexed files it did not find as last indexed:
    # "unmounted" (the mount the root was on is gone: the drive is away) or "unknown"
    # (whether the root is on a drive is not known since an upgrade, and it does not show);
    # `last_error` says so in words.
    kept_unmounted: str | None = None
    # Set while the folder is not watched, why and what fixes it (an inotify limit
    # reached): its changes wait for the periodic sweep until then.
    not_watched: str | None = None
    # Being removed (`sources.remove`): its documents go in batches until it is gone.
    removing: bool = False


class LibraryCounts(Struct):
    documents: int


class AgentRecords(Struct):
    """What agents keep: capsules, archives (with retention) and ledger entries."""

    capsules: int
    superseded_capsules: int
    archives: int
    archive_bytes: int
    archive_max_age_days: float
    archive_max_total_mb: float
    archives_pruned: int
    last_pruned_at: float | None
    ledger_entries: int


class Status(Struct):
    daemon: DaemonInfo
    embedder: EmbedderStatus
    graph: GraphStatus
    library: LibraryCounts
    sources: list[SourceStatus]
    agent: AgentRecords | None = None


class SourceEntry(Struct):
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
    # Being removed: listed until its removal ends, whatever the config now says.
    removing: bool = False


class SourceList(Struct):
    sources: list[SourceEntry]
    library_documents: int


class ScanResult(Struct):
    name: str
    started: bool = False
    finished: bool = False
    result: dict[str, int] | None = None


class RemovedSource(Struct):
    name: str
    documents_removed: int
    bytes_freed: int = 0  # what the database file and its WAL shrank by afterwards


class RemovedDocument(Struct):
    """`documents.remove`: the agent document or fetched page that went."""

    document_id: int
    title: str
    uri: str


class Location(Struct):
    source: str
    path: str


class ItemView(Struct):
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


class DocumentInfo(Struct):
    document_id: int
    title: str
    source: str
    namespace: str
    path: str
    format: str
    locations: list[Location] = field(default_factory=list)


class LineRange(Struct):
    """Lines of a document's extracted text, rebuilt from its chunks (1-based, inclusive)."""

    line_start: int
    line_end: int
    text: str
    total_lines: int
    next_line: int | None  # where the next page of lines starts; None at the end


class Fetched(Struct):
    """`documents.get`: one item (`item`), or a document and a page of its items in order,
    or (`lines`) a range of its lines."""

    item: ItemView | None = None
    document: DocumentInfo | None = None
    items: list[ItemView] = field(default_factory=list)
    total_chunks: int | None = None
    next_offset: int | None = None
    lines: LineRange | None = None
    # The document's version (store/document_text.py `version`), with a page or lines.
    version: str | None = None


class AddedDocument(Struct):
    document_id: int
    title: str
    uri: str
    stored: Stored
    chunks: int
    # Fetched pages: where the redirects ended, and (refresh) whether the page changed.
    url: str | None = None
    changed: bool | None = None


class EntityRelation(Struct):
    kind: str
    direction: Literal["out", "in"]
    other: str
    item_id: int  # the first chunk stating it
    chunks: int  # how many chunks state it


class EntityChunk(Struct):
    item_id: int
    title: str
    source: str
    path: str
    section: str
    line_start: int
    line_end: int


class EntityView(Struct):
    id: int
    name: str
    kind: str
    aliases: list[str]
    mentions: int
    relations: list[EntityRelation]
    chunks: list[EntityChunk]


class Entities(Struct):
    entities: list[EntityView]


class DedupResult(Struct):
    documents: int
    pairs: int
    collapsed: int
    seconds: float


class ReloadResult(Struct):
    sources: list[str]
    added: list[str]
    removed: list[str]
    # Changed settings (`daemon.sweep_interval`, `limits.parse_workers`) the running
    # daemon keeps its old values of until `ken restart`.
    restart_needed: list[str] = field(default_factory=list)


class ReembedResult(Struct):
    dropped: int


class DocumentText(Struct):
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


class CompactResult(Struct):
    """`compact`: the database's size (file plus WAL) before and after, and how long it took."""

    bytes_before: int
    bytes_after: int
    seconds: float


# -- agent records: memory capsules, archives, the ledger, context packs ----------------


class Capsule(Struct):
    """A piece of knowledge kept for later: `memory.*`. `document_id` is None once it is
    superseded (then it is kept for its history but never found by search)."""

    id: str
    kind: str
    scope: str
    title: str
    body: str
    tags: list[str]
    confidence: float
    source: str | None  # where the knowledge came from (a path:line, a url, a handle)
    created_at: float
    updated_at: float
    last_used_at: float | None
    uses: int
    supersedes: str | None
    superseded_by: str | None
    document_id: int | None
    uri: str


class Remembered(Struct):
    """`memory.add`: what became of the capsule. `refused` names the near-identical
    capsule already kept (`id`) and how alike they are; nothing was written then."""

    status: Literal["created", "updated", "superseded", "refused"]
    id: str
    title: str
    message: str
    similarity: float | None = None
    method: str | None = None  # how similarity was judged: "vector" or "trigram"
    superseded: str | None = None


class CapsuleHit(Struct):
    capsule: Capsule
    score: float  # relevance x freshness x confidence weight, higher is better
    relevance: float  # the search's fused score for its best chunk
    freshness: float  # 1 when just written or used, decaying towards 0.5 with disuse
    item_id: int


class Recalled(Struct):
    capsules: list[CapsuleHit]
    warnings: list[str] = field(default_factory=list)


class CapsuleList(Struct):
    """`memory.list`: `next_cursor` continues strictly after the last capsule (None at the end)."""

    capsules: list[Capsule]
    total: int
    next_cursor: str | None = None


class Forgotten(Struct):
    id: str
    title: str


class StaleCapsule(Struct):
    id: str
    title: str
    scope: str
    idle_days: float
    uses: int
    confidence: float


class CapsulePair(Struct):
    first: str
    second: str
    first_title: str
    second_title: str
    scope: str
    similarity: float
    method: str
    reason: str


class Curation(Struct):
    """`memory.curate`: capsules to look at; it changes nothing."""

    stale: list[StaleCapsule]
    duplicates: list[CapsulePair]
    contradictions: list[CapsulePair]
    # What was not checked, and why: empty lists above must not pass for "none found".
    warnings: list[str] = field(default_factory=list)


class Archived(Struct):
    handle: str
    title: str
    chars: int
    bytes: int
    chunks: int
    document_id: int
    uri: str
    existing: bool  # the same text was archived before; this is its handle
    pruned: list[str] = field(default_factory=list)  # handles retention removed to make room
    # With `existing`: when and as what it was archived, and a title or tags given now
    # that were not recorded (the text is kept once, labelled as it was first archived).
    note: str | None = None


class ArchivePage(Struct):
    """`archive.recall`: characters [offset, offset + len(text)) of the stored text."""

    handle: str
    title: str
    offset: int
    text: str
    total_chars: int
    next_offset: int | None
    created_at: float
    # The stored text's version: passed back with the next page, refused once the archive
    # holds another text (stored again by a newer redactor), whose offsets are not these.
    version: str


class ArchiveEntry(Struct):
    handle: str
    title: str
    chars: int
    bytes: int
    created_at: float


class ArchiveList(Struct):
    """`archive.list`: `next_cursor` continues strictly after the last archive (None at the end)."""

    archives: list[ArchiveEntry]
    total: int
    total_bytes: int
    next_cursor: str | None = None


class LedgerEntry(Struct):
    id: str
    section: str
    identity: str
    fields: dict[str, str]
    aliases: list[str]  # every identity key it answers to
    owner: str
    evidence: list[str]
    created_at: float
    updated_at: float
    document_id: int


class LedgerAdded(Struct):
    status: Literal["created", "merged"]
    entry: LedgerEntry
    folded: list[str] = field(default_factory=list)  # entries this add showed to be the same one


class LedgerRemoved(Struct):
    id: str
    section: str
    identity: str


class LedgerRender(Struct):
    text: str
    bytes: int
    budget: int
    entries: int
    omitted: dict[str, int]  # entries left out, per section


class LedgerList(Struct):
    entries: list[LedgerEntry]


class PackedDocument(Struct):
    document_id: int
    title: str
    path: str
    source: str
    score: float
    bytes: int
    item_id: int  # its best chunk
    line_start: int
    line_end: int
    # What takes its best chunk back, as that hit carries it in a search.
    superseded_by: int | None = None
    retracted_by: int | None = None


class ContextPack(Struct):
    """`context.pack`: `text` is the pack; `inlined` are in it whole, `listed` by one line."""

    text: str
    bytes: int
    budget: int
    inlined: list[PackedDocument]
    listed: list[PackedDocument]
    warnings: list[str] = field(default_factory=list)
