"""kenning's configuration: the typed settings, the TOML file, where things live.

Names are loaded on first use (PEP 562): `ken` commands that only need the socket's
location import `kenning.config.locate`, and must not pay for pydantic on the way in.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kenning.config.editing import add_source, remove_source
    from kenning.config.loading import load_settings
    from kenning.config.paths import config_path
    from kenning.config.settings import (
        ArchiveSettings,
        ChunkingSettings,
        DaemonSettings,
        DedupSettings,
        EmbedderSettings,
        FetchSettings,
        LedgerSettings,
        LimitsSettings,
        LlmSettings,
        McpSettings,
        MemorySettings,
        RetrievalSettings,
        Settings,
        SourceSettings,
    )

_WHERE = {
    "add_source": "editing",
    "load_settings": "loading",
    "remove_source": "editing",
    "config_path": "paths",
    **{
        name: "settings"
        for name in (
            "ArchiveSettings",
            "ChunkingSettings",
            "DaemonSettings",
            "DedupSettings",
            "EmbedderSettings",
            "FetchSettings",
            "LedgerSettings",
            "LimitsSettings",
            "LlmSettings",
            "McpSettings",
            "MemorySettings",
            "RetrievalSettings",
            "Settings",
            "SourceSettings",
        )
    },
}

__all__ = [
    "ArchiveSettings",
    "ChunkingSettings",
    "DaemonSettings",
    "DedupSettings",
    "EmbedderSettings",
    "FetchSettings",
    "LedgerSettings",
    "LimitsSettings",
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


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'kenning.config' has no attribute {name!r}")
    return getattr(import_module(f"kenning.config.{module}"), name)
