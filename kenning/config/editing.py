"""Editing config.toml for `ken sources add` and `ken sources remove`.

Editing goes through tomlkit so the user's comments and layout survive; the result is
validated as loading validates it before it replaces the file. Kept apart from
config/loading.py: tomlkit was most of what importing that cost every `ken mcp`, daemon
and command that only reads the file.
"""

from __future__ import annotations

import fcntl
import os
import tomllib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import tomlkit
from tomlkit.items import Array

from kenning.config import toml
from kenning.config.loading import validate
from kenning.config.paths import config_dir, make_private_dirs, same_folder, user_path, write_privately
from kenning.config.settings import SourceSettings
from kenning.errors import ConfigError


def add_source(path: Path, source: SourceSettings) -> None:
    """Append a [[sources]] table (an inline one where the file writes its sources inline),
    validating the result before the file is replaced.

    The file is read again under the edit lock, so a source of that name or folder added
    by another `ken sources add` since the caller looked is refused here, not doubled."""
    with _editing(path):
        document = tomlkit.parse(toml.read_text(path)) if path.exists() else tomlkit.document()
        existing = document.get("sources")
        for entry in existing if isinstance(existing, list) else ():
            if isinstance(entry, dict) and entry.get("name") == source.name:
                raise ConfigError(f"a source named {source.name!r} already exists in {path}; pick another with --name")
            if (named := _source_path(entry, path)) is not None and same_folder(named, source.path):
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
    document = tomlkit.parse(toml.read_text(path))
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


# What to do about a config folder that cannot be written (a read-only ~/.config, kept by
# a dotfiles tool or an image): the bare error left the folder's text unindexed.
ELSEWHERE = "; keep a config where you can write, named by `ken --config FILE` or KENNING_CONFIG=FILE"


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
        raise ConfigError(f"cannot write {path}: {exc.strerror or exc} in {folder}{ELSEWHERE}") from None
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
    validate(tomllib.loads(text), path)
    target = Path(os.path.realpath(path))
    try:
        write_privately(target, text, keep_mode=True)
    except OSError as exc:
        # The config is edited by replacing it, so its folder must be writable too.
        raise ConfigError(f"cannot write {target}: {exc.strerror or exc} in {target.parent}{ELSEWHERE}") from None
