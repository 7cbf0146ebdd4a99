from kenning.config.loading import add_source, load_settings, remove_source
from kenning.config.paths import config_path
from kenning.config.settings import (
    ArchiveSettings,
    ChunkingSettings,
    DaemonSettings,
    DedupSettings,
    EmbedderSettings,
    FetchSettings,
    LedgerSettings,
    LlmSettings,
    McpSettings,
    MemorySettings,
    RetrievalSettings,
    Settings,
    SourceSettings,
)

__all__ = [
    "ArchiveSettings",
    "ChunkingSettings",
    "DaemonSettings",
    "DedupSettings",
    "EmbedderSettings",
    "FetchSettings",
    "LedgerSettings",
    "LlmSettings",
    "McpSettings",
    "MemorySettings",
    "RetrievalSettings",
    "Settings",
    "SourceSettings",
    "add_source",
    "config_path",
    "load_settings",
    "remove_source",
]
