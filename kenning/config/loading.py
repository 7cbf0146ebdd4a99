"""Reading config.toml.

Loading validates the whole file before anything uses it, so a typo during a reload
leaves the running daemon on its previous settings. Editing it is config/editing.py's.
"""

from __future__ import annotations

import difflib
import tomllib
import typing
from pathlib import Path

from pydantic import ValidationError

from kenning.config import toml
from kenning.config.paths import config_dir
from kenning.config.settings import Settings
from kenning.errors import ConfigError, error_text

# A key or a source's name, as an error names where it is wrong, is cut past this many
# characters; a valid name is at most 64. A name (or an unknown key) of a megabyte was
# quoted whole ahead of what was wrong with it, and the error, cut where it is shown,
# told only the name's first 2,000 characters.
SHOWN_NAME_CHARS = 100


def _describe(error: ValidationError, path: Path, raw: object = None) -> str:
    """One line naming each bad key as the user wrote it: a source by its name, not its
    index, and an unknown key with the closest known one."""
    problems = []
    for item in error.errors():
        loc = item["loc"]
        where = _where(loc, raw) or "(top level)"
        message = item["msg"].removeprefix("Value error, ")
        if item["type"] == "extra_forbidden":
            message = "unknown setting"
            close = difflib.get_close_matches(str(loc[-1]), _known_keys(loc[:-1]), n=1)
            if close:
                message += f" (did you mean {close[0]}?)"
        problems.append(f"{where}: {message}")
    return f"{path}: " + "; ".join(problems)


def _where(loc: tuple, raw: object) -> str:
    parts: list[str] = []
    node = raw
    for part in loc:
        if isinstance(part, int):
            entry = node[part] if isinstance(node, list) and part < len(node) else None
            name = entry.get("name") if isinstance(entry, dict) else None
            parts[-1] += f"[{error_text(name, SHOWN_NAME_CHARS)!r}]" if isinstance(name, str) else f"[{part}]"
            node = entry
        else:
            parts.append(error_text(str(part), SHOWN_NAME_CHARS))
            node = node.get(part) if isinstance(node, dict) else None
    return ".".join(parts)


def _known_keys(loc: tuple) -> list[str]:
    """The settings a table at `loc` accepts ([daemon], a [[sources]] entry, the top level)."""
    model: object = Settings
    for part in loc:
        if isinstance(part, int):
            continue
        fields = getattr(model, "model_fields", {})
        if part not in fields:
            return []
        model = fields[part].annotation
        # tuple[SourceSettings, ...] holds the model that the next index points into.
        args = [arg for arg in typing.get_args(model) if hasattr(arg, "model_fields")]
        if args:
            model = args[0]
    return list(getattr(model, "model_fields", {}))


def load_settings(path: Path, *, missing_ok: bool = True) -> Settings:
    """Load and validate; a missing file means the embedded defaults (no sources).

    Not so for a daemon re-reading the file it runs on (`missing_ok=False`): the file is
    missing for a moment while an editor that moves the old one aside saves, or for good
    when a dotfiles link breaks, and the defaults would drop every source from search.
    Nor is a file of zero bytes, what an editor that truncates before it writes leaves
    for a moment; a config meant to hold no sources says so (`sources = []`)."""
    if not path.exists():
        if not missing_ok:
            raise ConfigError(
                f"{path}: the config file is gone (moved, deleted, or a link to it broken); the daemon keeps"
                " its settings (to run with no sources, leave a file there that says `sources = []`)"
            )
        return Settings()
    try:
        text = toml.read_text(path)
        if not text and not missing_ok:
            raise ConfigError(
                f"{path}: the config file is empty (an editor part way through saving it?); the daemon"
                " keeps its settings (to run with no sources, write `sources = []` in it)"
            )
        raw = toml.parse(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    except (OSError, UnicodeDecodeError) as exc:
        # strerror alone: the OSError's own text names the path a second time.
        raise ConfigError(f"{path}: cannot read: {getattr(exc, 'strerror', None) or exc}") from None
    return validate(raw, path)


def validate(raw: dict, path: Path) -> Settings:
    """The settings `raw` (config.toml at `path`, as read) holds, or ConfigError naming each bad key."""
    try:
        return Settings.model_validate(raw, context={"config_dir": config_dir(path)})
    except ValidationError as exc:
        raise ConfigError(_describe(exc, path, raw)) from None
