"""The typed settings object: read once at the entry point and passed down.

Pydantic sits here because this is an edge: the TOML file is user input, and a typo
must come back as one clear line naming the key, not as a traceback.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationInfo, field_validator, model_validator

from kenning.config.paths import DB_NAME, default_data_dir, socket_path, user_path

SOURCE_NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$"
# Kernel and device trees: their "files" are endless, blocking or live state, not documents.
PSEUDO_FILESYSTEMS = (Path("/proc"), Path("/sys"), Path("/dev"))
# A day. An HTTP client's timeout past about 1e9 s overflows the socket's time_t
# (OverflowError): `[embedder] timeout = 1e10`, meant as "never", was accepted by a
# reload and then left the daemon without vector search, its status "loading" for good.
MAX_HTTP_TIMEOUT = 86_400
# Agent-added text, fetched pages and agent records live in sources of these names.
RESERVED_SOURCE_NAMES = frozenset({"agent", "web", "memory", "archive", "ledger"})


def _config_path(value: object, info: ValidationInfo) -> object:
    """Resolve a path as written in the config file (`load_settings` passes the file's
    directory as `config_dir` in the validation context); anything but a path is left
    for pydantic to refuse."""
    if not isinstance(value, str | os.PathLike):
        return value
    base = (info.context or {}).get("config_dir")
    return user_path(value, base)


# A path from the config file: `~` expanded, relative to the config file's directory.
ConfigPath = Annotated[Path, BeforeValidator(_config_path)]


def _ollama_url(value: object) -> object:
    """An Ollama server's address as the ollama client reaches it: `host:port` with no
    scheme (Ollama's own OLLAMA_HOST form) gets `http://` and, without a port, 11434.

    A user name, password or query is refused: the client sends none of them (it keeps
    the host, port and path alone), and kenning shows the address in its errors, its log
    and `ken doctor`, where a token written into it was printed for anyone to read."""
    if not isinstance(value, str):
        return value
    text = value.strip()
    scheme_given = "://" in text
    parts = urlsplit(text if scheme_given else f"http://{text}")
    if parts.scheme not in ("http", "https"):
        raise ValueError("must be an http:// or https:// address")
    if "@" in parts.netloc:
        raise ValueError("holds a user name or password, which the ollama client never sends; leave them out")
    if parts.query or parts.fragment or text.endswith(("?", "#")):
        raise ValueError("holds a query or fragment (after ? or #), which the ollama client never sends; leave it out")
    try:
        port = parts.port
    except ValueError:
        raise ValueError("has a port that is not a number from 0 to 65535") from None
    if not parts.hostname:
        raise ValueError("names no host (write e.g. http://127.0.0.1:11434)")
    netloc = parts.netloc if port is not None or scheme_given else f"{parts.netloc}:11434"
    return f"{parts.scheme}://{netloc}{parts.path.rstrip('/')}"


# An Ollama server's address (see _ollama_url).
OllamaUrl = Annotated[str, BeforeValidator(_ollama_url)]


class _Strict(BaseModel):
    # TOML spells inf and nan. inf passes every lower bound (an infinite max_file_mb
    # crashed the daemon's start, an infinite weight emptied every search), and nan was
    # refused as below a bound. No setting here means anything by either.
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


class DaemonSettings(_Strict):
    data_dir: ConfigPath = Field(default_factory=default_data_dir)
    socket: ConfigPath | None = None
    log_level: str = "info"
    sweep_interval: Annotated[float, Field(gt=0)] = 300.0
    debounce_ms: Annotated[int, Field(ge=50, le=60_000)] = 800
    # A source that cannot be watched (its folder missing, an inotify limit reached) is
    # tried again this often; its changes are found by the periodic sweep meanwhile.
    watch_retry: Annotated[float, Field(gt=0)] = 30.0
    max_file_mb: Annotated[float, Field(gt=0)] = 50.0
    # Pacing: chunks a source may ingest per sweep (a source's own chunk_budget wins),
    # and chunks all sources together may ingest per sweep_interval. 0 = no limit.
    folder_chunk_budget: Annotated[int, Field(ge=0)] = 0
    sweep_chunk_budget: Annotated[int, Field(ge=0)] = 0
    # A source stopped by its budget sweeps again after this pause, not a whole interval.
    budget_pause: Annotated[float, Field(gt=0)] = 10.0
    # A socket connection with no request under way is closed after this many seconds,
    # and so is one whose client has not read its answer within as long (the rest of the
    # answer is dropped); a request line begun but not finished within
    # socket_line_timeout is dropped; time the daemon keeps it waiting for the line budget
    # other requests hold does not count (daemon/framing.py).
    socket_idle_timeout: Annotated[float, Field(gt=0)] = 60.0
    socket_line_timeout: Annotated[float, Field(gt=0)] = 30.0

    @field_validator("log_level")
    @classmethod
    def _level(cls, value: str) -> str:
        allowed = {"debug", "info", "warning", "error"}
        if value.lower() not in allowed:
            raise ValueError(f"must be one of {', '.join(sorted(allowed))}")
        return value.lower()

    @property
    def socket_path(self) -> Path:
        return socket_path(self.data_dir, self.socket)

    @property
    def db_path(self) -> Path:
        return self.data_dir / DB_NAME


class LimitsSettings(_Strict):
    """Where reading one file stops, so a hostile file costs that file and nothing more.

    Files are parsed in `parse_workers` worker processes, each with `parse_memory_mb` of
    address space and `parse_timeout` seconds per file; those three apply when the
    daemon starts. A file past any limit is marked failed with the reason. A fetched
    page is read in the same workers and held to the same limits, its add failing.
    """

    max_text_chars: Annotated[int, Field(ge=10_000)] = 10_000_000
    max_chunks_per_file: Annotated[int, Field(ge=10)] = 10_000
    parse_timeout: Annotated[float, Field(gt=0)] = 120.0
    # At most a terabyte: past 2**63 bytes the workers' address-space limit overflows
    # setrlimit, no worker started, and every file failed as "BrokenProcessPool".
    parse_memory_mb: Annotated[int, Field(ge=128, le=1 << 20)] = 512
    parse_workers: Annotated[int, Field(ge=1, le=16)] = 2


class ChunkingSettings(_Strict):
    target_chars: Annotated[int, Field(ge=200, le=20_000)] = 1200
    overlap_chars: Annotated[int, Field(ge=0, le=5_000)] = 150

    @model_validator(mode="after")
    def _overlap_smaller(self) -> "ChunkingSettings":
        if self.overlap_chars >= self.target_chars:
            raise ValueError("overlap_chars must be smaller than target_chars")
        return self


class EmbedderSettings(_Strict):
    backend: Literal["wordllama", "ollama"] = "wordllama"
    model: str | None = None
    dim: Annotated[int, Field(ge=16, le=4096)] = 256
    base_url: OllamaUrl = "http://127.0.0.1:11434"
    timeout: Annotated[float, Field(gt=0, le=MAX_HTTP_TIMEOUT)] = 30.0
    batch_size: Annotated[int, Field(ge=1, le=4096)] = 64
    max_chars: Annotated[int, Field(ge=100, le=100_000)] = 2000

    @model_validator(mode="after")
    def _wordllama_dims(self) -> "EmbedderSettings":
        if self.backend == "wordllama" and self.dim not in (64, 128, 256):
            raise ValueError("wordllama ships 256-d weights; dim must be 64, 128 or 256")
        return self

    @property
    def model_name(self) -> str:
        if self.model:
            return self.model
        return "l2_supercat" if self.backend == "wordllama" else "qwen3-embedding:0.6b"


class RetrievalSettings(_Strict):
    """Defaults set by bench/retrieval.py on public test collections (see bench/README.md)."""

    fusion: Literal["score", "rrf"] = "score"
    keyword_weight: Annotated[float, Field(ge=0)] = 0.5
    vector_weight: Annotated[float, Field(ge=0)] = 0.5
    graph_weight: Annotated[float, Field(ge=0)] = 0.25
    rrf_k: Annotated[int, Field(ge=1)] = 60
    min_similarity: Annotated[float, Field(ge=-1, le=1)] = 0.4
    min_score: Annotated[float, Field(ge=0)] = 0.0
    # The abstention floor (kenning/retrieval/floors.py): a query is answered when one of
    # its best hits holds this idf-weighted share of its terms, or is this close in meaning.
    min_coverage: Annotated[float, Field(ge=0, le=1)] = 0.3
    support_similarity: Annotated[float, Field(ge=-1, le=1)] = 0.5
    # Seconds a search waits for its query's embedding; past it the search answers from
    # the other legs and says why (a hung Ollama must not hold every search).
    query_embed_timeout: Annotated[float, Field(gt=0, le=60)] = 0.5


class LlmSettings(_Strict):
    """Entity extraction. `offline` needs nothing; `ollama` asks a local model."""

    backend: Literal["offline", "ollama"] = "offline"
    model: str = "qwen3:4b"
    base_url: OllamaUrl = "http://127.0.0.1:11434"
    extraction_pool_size: Annotated[int, Field(ge=1, le=16)] = 3
    timeout: Annotated[float, Field(gt=0, le=MAX_HTTP_TIMEOUT)] = 120.0
    max_chars: Annotated[int, Field(ge=200, le=100_000)] = 4000

    @field_validator("model")
    @classmethod
    def _named(cls, value: str) -> str:
        # Taken, an empty name had Ollama refuse every chunk (HTTP 400), one by one.
        if not value.strip():
            raise ValueError("is empty; name the Ollama model that extracts entities (the default is qwen3:4b)")
        return value.strip()


class FetchSettings(_Strict):
    """`ken add-url`: which hosts may be fetched, and how much of them."""

    allowed_hosts: tuple[str, ...] = ()
    timeout: Annotated[float, Field(gt=0, le=MAX_HTTP_TIMEOUT)] = 30.0
    max_mb: Annotated[float, Field(gt=0)] = 5.0
    max_redirects: Annotated[int, Field(ge=0, le=20)] = 5


class DedupSettings(_Strict):
    """The near-duplicate sweep (exact duplicates are caught at ingest, always)."""

    every_n_sweeps: Annotated[int, Field(ge=0)] = 12
    similarity: Annotated[float, Field(ge=0.5, le=1)] = 0.97
    name_similarity: Annotated[float, Field(ge=0, le=1)] = 0.8


class McpSettings(_Strict):
    """`ken mcp`: what agents may do through it, and how long a call may wait for the daemon."""

    allow_writes: bool = False
    # remember/forget, archive, ledger_add/remove: they write only to kenning's memory,
    # archive and ledger sources, never to the documents the user keeps.
    memory: bool = True
    timeout: Annotated[float, Field(gt=0, le=3600)] = 30.0


class MemorySettings(_Strict):
    """Memory capsules: write-time dedup and how disuse lowers a capsule's rank.

    Thresholds measured with bench/agent_memory.py (bench/README.md)."""

    # Same kind and scope, at least this alike: refused as a duplicate unless superseding
    # or forced. Cosine of the embedder's vectors (0.85 suits wordllama; a stronger model
    # separates better at a higher value); trigram Jaccard while vectors are not ready,
    # kept high because trigrams cannot tell two facts in the same words apart.
    duplicate_similarity: Annotated[float, Field(gt=0, le=1)] = 0.85
    duplicate_trigram: Annotated[float, Field(gt=0, le=1)] = 0.9
    # Rank falls towards half of its relevance as a capsule goes unused: this many days
    # without a use or an update halve the part that decays.
    half_life_days: Annotated[float, Field(gt=0)] = 30.0
    # `ken memory curate` lists capsules unused and unchanged for this long.
    stale_days: Annotated[float, Field(gt=0)] = 90.0


class ArchiveSettings(_Strict):
    """Archived outputs: retention by age and by total size (0 = no limit); the oldest go first."""

    max_age_days: Annotated[float, Field(ge=0)] = 30.0
    max_total_mb: Annotated[float, Field(ge=0)] = 500.0


class LedgerSettings(_Strict):
    """The facts ledger: the default size of its rendered block."""

    render_budget: Annotated[int, Field(ge=200, le=1_000_000)] = 16_000


class SourceSettings(_Strict):
    name: Annotated[str, Field(pattern=SOURCE_NAME_PATTERN)]
    path: ConfigPath
    namespace: str = "default"
    ignore: tuple[str, ...] = ()
    max_files: Annotated[int, Field(ge=1)] = 5000
    chunk_budget: Annotated[int, Field(ge=0)] | None = None
    confine_to_root: bool = True

    @field_validator("path", mode="after")
    @classmethod
    def _not_the_system(cls, path: Path) -> Path:
        # Checked as written and with links resolved, so /proc/self or a link to /
        # is refused too. Resolved by realpath, which leaves a link loop as it stands
        # (the sweep says the folder cannot be read): Path.resolve raised RuntimeError,
        # and `ken start` and a reload ended in a traceback.
        for form in (path, Path(os.path.realpath(path))):
            if form == Path(form.anchor):
                raise ValueError(f"{path} is the root folder; add the folders that hold your documents instead")
            for tree in PSEUDO_FILESYSTEMS:
                if form.is_relative_to(tree):
                    raise ValueError(f"{path} is in {tree}, a system pseudo-filesystem, not a folder of documents")
        return path


class Settings(_Strict):
    daemon: DaemonSettings = Field(default_factory=DaemonSettings)
    limits: LimitsSettings = Field(default_factory=LimitsSettings)
    chunking: ChunkingSettings = Field(default_factory=ChunkingSettings)
    embedder: EmbedderSettings = Field(default_factory=EmbedderSettings)
    retrieval: RetrievalSettings = Field(default_factory=RetrievalSettings)
    llm: LlmSettings = Field(default_factory=LlmSettings)
    fetch: FetchSettings = Field(default_factory=FetchSettings)
    dedup: DedupSettings = Field(default_factory=DedupSettings)
    mcp: McpSettings = Field(default_factory=McpSettings)
    memory: MemorySettings = Field(default_factory=MemorySettings)
    archive: ArchiveSettings = Field(default_factory=ArchiveSettings)
    ledger: LedgerSettings = Field(default_factory=LedgerSettings)
    sources: tuple[SourceSettings, ...] = ()

    @model_validator(mode="after")
    def _sources_usable(self) -> "Settings":
        seen: set[str] = set()
        for source in self.sources:
            if source.name in RESERVED_SOURCE_NAMES:
                raise ValueError(f"source name {source.name!r} is reserved for kenning's own sources; pick another")
            if source.name in seen:
                raise ValueError(f"two sources are named {source.name!r}; names must be unique")
            seen.add(source.name)
            if Path(os.path.realpath(source.path)).is_relative_to(os.path.realpath(self.daemon.data_dir)):
                # The walk never enters it (the index, its logs and socket are there): the
                # source held nothing, and nothing said why.
                raise ValueError(
                    f"source {source.name!r} ({source.path}) is in kenning's data directory"
                    f" {self.daemon.data_dir}, whose files are never indexed; keep your documents elsewhere"
                )
        return self

    def source(self, name: str) -> SourceSettings | None:
        return next((s for s in self.sources if s.name == name), None)
