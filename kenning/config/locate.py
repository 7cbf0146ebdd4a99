"""The daemon's socket and data directory, read from the config without validating all of it.

Every `ken` command that only talks to the daemon needs just these two paths, and the
full settings model (pydantic) costs more to import than the rest of such a command
takes. So they are read here with tomllib alone, with the same defaults and the same
handling of `~` and of relative paths as `DaemonSettings` (both come from paths.py). A
file this cannot make sense of is left to `load_settings`, whose error names the bad key.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

from kenning.config import toml
from kenning.config.paths import config_dir, default_data_dir, socket_path, user_path


@dataclass(frozen=True)
class Locations:
    data_dir: Path
    socket: Path


def locate(config: Path) -> Locations | None:
    """The paths `config` sets (defaults for a missing file); None when the file needs
    full validation to say what is wrong with it."""
    if not config.exists():
        return Locations(default_data_dir(), socket_path(default_data_dir(), None))
    try:
        table = toml.parse(toml.read_text(config)).get("daemon", {})
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return None
    if not isinstance(table, dict):
        return None
    data_dir, socket = table.get("data_dir"), table.get("socket")
    if not isinstance(data_dir, str | None) or not isinstance(socket, str | None):
        return None
    try:
        home = user_path(data_dir, config_dir(config)) if data_dir is not None else default_data_dir()
        return Locations(home, socket_path(home, user_path(socket, config_dir(config)) if socket is not None else None))
    except ValueError:
        return None
