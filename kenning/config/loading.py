"""Reading and editing config.toml.

Loading validates the whole file before anything uses it, so a typo during a reload
leaves the running daemon on its previous settings. Editing goes through tomlkit so the
user's comments and layout survive `ken sources add`.
"""

from __future__ import annotations

import difflib
import fcntl
import os
import stat
import tempfile
import tomllib
import typing
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import tomlkit
from pydantic import ValidationError
from tomlkit.items import Array

from kenning.config.paths import config_dir, make_private_dirs, user_path
from kenning.config.settings import Settings, SourceSettings
from kenning.errors import ConfigError


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
            parts[-1] += f"[{name!r}]" if isinstance(name, str) else f"[{part}]"
            node = entry
        else:
            parts.append(str(part))
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
        text = path.read_text(encoding="utf-8")
        if not text and not missing_ok:
            raise ConfigError(
                f"{path}: the config file is empty (an editor part way through saving it?); the daemon"
                " keeps its settings (to run with no sources, write `sources = []` in it)"
            )
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    except (OSError, UnicodeDecodeError) as exc:
        # strerror alone: the OSError's own text names the path a second time.
        raise ConfigError(f"{path}: cannot read: {getattr(exc, 'strerror', None) or exc}") from None
    return _validate(raw, path)


def _validate(raw: dict, path: Path) -> Settings:
    try:
        return Settings.model_validate(raw, context={"config_dir": config_dir(path)})
    except ValidationError as exc:
        raise ConfigError(_describe(exc, path, raw)) from None


def add_source(path: Path, source: SourceSettings) -> None:
    """Append a [[sources]] table (an inline one where the file writes its sources inline),
    validating the result before the file is replaced.

    The file is read again under the edit lock, so a source of that name or folder added
    by another `ken sources add` since the caller looked is refused here, not doubled."""
    with _editing(path):
        document = tomlkit.parse(path.read_text(encoding="utf-8")) if path.exists() else tomlkit.document()
        existing = document.get("sources")
        for entry in existing if isinstance(existing, list) else ():
            if isinstance(entry, dict) and entry.get("name") == source.name:
                raise ConfigError(f"a source named {source.name!r} already exists in {path}; pick another with --name")
            if _source_path(entry, path) == source.path:
                raise ConfigError(f"{source.path} is already a source in {path}")
        _append(document, source)
        _replace(path, document)


def _source_path(entry: object, config: Path) -> Path | None:
    """The folder a [[sources]] entry of the file names, as the settings resolve it."""
    value = entry.get("path") if isinstance(entry, dict) else None
    try:
        return user_path(value, config_dir(config)) if isinstance(value, str) else None
    except ValueError:
        return None


def _append(document: tomlkit.TOMLDocument, source: SourceSettings) -> None:
    sources = document.get("sources")
    if sources is None:
        sources = tomlkit.aot()
        document["sources"] = sources
    # Sources written inline (`sources = [{name = ...}]`) take an inline table: a
    # [[sources]] table appended into that array would not be TOML.
    entry = tomlkit.inline_table() if isinstance(sources, Array) else tomlkit.table()
    entry["name"] = source.name
    entry["path"] = str(source.path)
    entry["namespace"] = source.namespace
    if source.ignore:
        entry["ignore"] = list(source.ignore)
    entry["max_files"] = source.max_files
    if source.chunk_budget is not None:
        entry["chunk_budget"] = source.chunk_budget
    entry["confine_to_root"] = source.confine_to_root
    sources.append(entry)


def remove_source(path: Path, name: str) -> bool:
    """Drop the source of that name; returns whether the file had one."""
    if not path.exists():
        return False
    with _editing(path):
        return _remove(path, name)


def _remove(path: Path, name: str) -> bool:
    document = tomlkit.parse(path.read_text(encoding="utf-8"))
    sources = document.get("sources")
    if sources is None:
        return False
    kept = [entry for entry in sources if entry.get("name") != name]
    if len(kept) == len(sources):
        return False
    if isinstance(sources, Array):
        # Inline, edited in place: the array keeps its layout, and the rest their comments.
        for index in reversed([i for i, entry in enumerate(sources) if entry.get("name") == name]):
            del sources[index]
    elif kept:
        table = tomlkit.aot()
        for entry in kept:
            table.append(entry)
        document["sources"] = table
    else:
        # Said, not left out: a file emptied by the edit would read as an editor mid-save.
        del document["sources"]
        document["sources"] = tomlkit.array()
    _replace(path, document)
    return True


@contextmanager
def _editing(path: Path) -> Iterator[None]:
    """Hold the config's edit lock from reading the file to replacing it.

    Each edit reads the file, changes it and puts a new one in its place: two `ken
    sources add` run at once (a script adding several folders) would each write the file
    they read, and the first one's source would be gone from the config though it said
    "added". The lock is an flock on the folder that holds the config's target: the file
    itself is replaced by each edit, and a lock file beside it would be left in a
    dotfiles checkout."""
    folder = Path(os.path.realpath(path)).parent
    try:
        make_private_dirs(folder)
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError as exc:
        raise ConfigError(f"cannot write {path}: {exc.strerror or exc} in {folder}") from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _replace(path: Path, document: tomlkit.TOMLDocument) -> None:
    """Validate the edited config, then swap it in atomically: a bad edit changes nothing.

    The swap happens at a symlink's target (a config kept in a dotfiles repository and
    linked into place stays linked, and its target is what changes), and the file keeps
    its mode: a config made 0600 stays private."""
    text = tomlkit.dumps(document)
    _validate(tomllib.loads(text), path)
    target = Path(os.path.realpath(path))
    try:
        make_private_dirs(target.parent)
        # mkstemp makes the file 0600: the text is never readable by more than the result
        # allows, and a config this command creates is the user's alone, like the data directory.
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    except OSError as exc:
        # The config is edited by replacing it, so its folder must be writable too.
        raise ConfigError(f"cannot write {target}: {exc.strerror or exc} in {target.parent}") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        if target.exists():
            os.chmod(tmp, stat.S_IMODE(target.stat().st_mode))
        os.replace(tmp, target)
    except BaseException:
        os.unlink(tmp)
        raise
