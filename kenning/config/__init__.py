from kenning.config.loading import add_source, load_settings, remove_source
from kenning.config.paths import config_path
from kenning.config.settings import (
    ChunkingSettings,
    DaemonSettings,
    DedupSettings,
    EmbedderSettings,
    FetchSettings,
    LimitsSettings,
    LlmSettings,
    RetrievalSettings,
    Settings,
    SourceSettings,
)

__all__ = [
    "ChunkingSettings",
    "DaemonSettings",
    "DedupSettings",
    "EmbedderSettings",
    "FetchSettings",
    "LimitsSettings",
    "LlmSettings",
    "RetrievalSettings",
    "Settings",
    "SourceSettings",
    "add_source",
    "config_path",
    "load_settings",
    "remove_source",
]
