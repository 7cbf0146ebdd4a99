"""Discovery: which files under one folder source are documents kenning should index.

The walk is the only place that decides what exists, and a file it stops reporting is
treated as deleted. So it is strict about what it lets in, and it raises rather than
returning an empty list when the root itself cannot be read.
"""

import errno
import fnmatch
import logging
import os
import re
import stat
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from kenning.ingest.kiroignore import FILENAME as KIROIGNORE
from kenning.ingest.kiroignore import KiroIgnore
from kenning.ingest.readers import SUPPORTED_EXTENSIONS
from kenning.ingest.sensitive import is_sensitive_path

log = logging.getLogger(__name__)

# Never descended. Build and dependency trees are regenerated wholesale, so indexing
# them would present hundreds of rebuilt files as changed content on every sweep.
# Dot names are pruned anyway; they are listed so the set reads as complete.
HARD_SKIP_DIRS = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        "node_modules",
        "bower_components",
        "__pycache__",
        ".venv",
        "venv",
        "site-packages",
        "dist",
        "build",
        "out",
        "target",
        # AWS CDK synth output: its dot is not leading, so the dot rule misses it.
        "cdk.out",
        ".tox",
        ".nox",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        "htmlcov",
        ".idea",
        ".vscode",
        ".gradle",
        ".next",
        ".terraform",
    }
)

# Matched case-insensitively against the file name.
IGNORE_GLOBS: tuple[str, ...] = (
    # OS junk, editor swap and backup files, Office and LibreOffice lock files, partial
    # downloads. They carry document extensions but are unreadable or transient; a
    # failed file is not retried automatically, so one would stall a source short of
    # fully indexed.
    "._*",
    ".ds_store",
    "~$*",
    ".~lock.*",
    "thumbs.db",
    "desktop.ini",
    "*.tmp",
    "*.swp",
    "*.swo",
    "*~",
    "*.bak",
    "*.orig",
    "#*#",
    "*.crdownload",
    "*.part",
    "*.partial",
    # Dependency lock files ingest fine, which is the problem: large machine-generated
    # text that costs extraction again every time it is regenerated.
    "package-lock.json",
    "npm-shrinkwrap.json",
    "yarn.lock",
    "pnpm-lock.yaml",
    "bun.lockb",
    "bun.lock",
    "poetry.lock",
    "uv.lock",
    "pipfile.lock",
    "cargo.lock",
    "gemfile.lock",
    "composer.lock",
    "packages.lock.json",
    "gradle.lockfile",
    "flake.lock",
)

_JUNK = re.compile("|".join(fnmatch.translate(glob) for glob in IGNORE_GLOBS), re.IGNORECASE)


@dataclass(frozen=True)
class WalkRules:
    """Per-source discovery settings.

    ``ignore`` holds fnmatch patterns (``*`` crosses ``/``) tried against a path
    relative to the root and against its name. A directory is pruned when a pattern
    matches its relative path, its name, or its relative path with a trailing ``/``,
    so ``drafts``, ``drafts/`` and ``drafts/*`` all keep the walk out of ``drafts``.
    """

    ignore: tuple[str, ...] = ()
    confine_to_root: bool = True
    exclude: tuple[Path, ...] = ()


@dataclass(frozen=True, slots=True)
class Discovered:
    path: Path  # under the root as given, not resolved
    rel: str  # POSIX, relative to the root
    mtime: float  # of the target when the file is a symlink
    size: int


def walk(root: Path, rules: WalkRules) -> list[Discovered]:
    """Every indexable file under ``root``; raises when ``root`` cannot be listed."""
    root = root.absolute()
    real_root = root.resolve()
    info = os.stat(real_root)
    if not stat.S_ISDIR(info.st_mode):
        raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), str(root))
    exclude = {os.path.realpath(path) for path in rules.exclude}
    if any(real_root.is_relative_to(path) for path in exclude):
        return []
    ignored = _ignore_regex(rules.ignore)
    kiro = KiroIgnore.load(real_root)
    top = str(real_root)

    def onerror(error: OSError) -> None:
        # The root failing here (unreadable, or gone since the stat) must reach the
        # caller: an empty result would read as every file having been deleted.
        if error.filename == top:
            raise error
        log.warning("skipping unreadable directory %s: %s", error.filename, error.strerror or error)

    found: list[Discovered] = []
    for dirpath, dirnames, filenames in os.walk(top, onerror=onerror):
        prefix = "" if dirpath == top else os.path.relpath(dirpath, top).replace(os.sep, "/") + "/"
        dirnames[:] = [
            name
            for name in dirnames
            if _enters(name, prefix + name, ignored, kiro)
            and os.path.join(dirpath, name) not in exclude
        ]
        for name in filenames:
            rel = prefix + name
            if not _admits(name, rel, ignored, kiro):
                continue
            item = _inspect(root, real_root, dirpath, name, rel, rules.confine_to_root)
            if item is not None:
                found.append(item)
    return found


def is_candidate(root: Path, path: Path, rules: WalkRules, kiroignore: KiroIgnore | None = None) -> bool:
    """Whether a change at ``path`` could matter to a sweep, judged on the path alone.

    Meant as the file watcher's filter: an event may name something already deleted,
    so nothing is read from disk. ``path`` is compared with ``root`` and
    ``rules.exclude`` as text; pass them in the same form. A name with a supported
    suffix is judged as a file; any other name may also be a directory the walk
    would enter (a new ``v1.2`` folder arrives as one event, not one per file).
    """
    if path == root:
        return True
    if not path.is_relative_to(root) or any(path.is_relative_to(ex) for ex in rules.exclude):
        return False
    rel = path.relative_to(root).as_posix()
    if rel == KIROIGNORE:
        # Editing the rules changes what a sweep finds.
        return True
    ignored = _ignore_regex(rules.ignore)
    kiro = kiroignore if kiroignore is not None else KiroIgnore()
    *parents, name = rel.split("/")
    for depth, parent in enumerate(parents, start=1):
        if not _enters(parent, "/".join(parents[:depth]), ignored, kiro):
            return False
    as_file = _admits(name, rel, ignored, kiro) and not is_sensitive_path(path)
    suffix = _suffix(name)
    if as_file or (suffix and suffix in SUPPORTED_EXTENSIONS):
        return as_file
    return _enters(name, rel, ignored, kiro)


def _enters(name: str, rel: str, ignored: re.Pattern[str] | None, kiro: KiroIgnore) -> bool:
    """The walk descends this directory (its parents already entered)."""
    if name in HARD_SKIP_DIRS or name.startswith("."):
        return False
    if ignored is not None and (ignored.match(rel) or ignored.match(name) or ignored.match(rel + "/")):
        return False
    return not kiro.matches(rel, is_dir=True)


def _admits(name: str, rel: str, ignored: re.Pattern[str] | None, kiro: KiroIgnore) -> bool:
    """The file passes every rule that needs only its name (parents already entered)."""
    # Dot files include .kiroignore itself, which has no suffix and would otherwise be
    # read as a plain-text document.
    if name.startswith(".") or _suffix(name) not in SUPPORTED_EXTENSIONS or _JUNK.match(name):
        return False
    if ignored is not None and (ignored.match(rel) or ignored.match(name)):
        return False
    return not kiro.matches(rel, is_dir=False)


def _inspect(root: Path, real_root: Path, dirpath: str, name: str, rel: str, confine: bool) -> Discovered | None:
    """Stat one file and apply the checks that need the disk; None skips it.

    Works on strings until a file is kept: path objects cost more than the stat.
    """
    real = os.path.join(dirpath, name)
    try:
        info = os.lstat(real)
        linked = stat.S_ISLNK(info.st_mode)
        if linked:
            info = os.stat(real)
            real = os.path.realpath(real)
    except OSError as exc:
        # Broken links and files deleted mid-walk: one file, not the sweep.
        log.debug("skipping %s: %s", real, exc.strerror or exc)
        return None
    if not stat.S_ISREG(info.st_mode):
        return None
    path = root / rel
    # Without a link on the way (directory links are never followed), the real path
    # is the resolved root plus rel, so only linked files or a linked root need more.
    resolved = Path(real) if linked or root != real_root else path
    if is_sensitive_path(path) or (resolved is not path and is_sensitive_path(resolved)):
        log.debug("skipping sensitive path %s", path)
        return None
    if confine and linked and not resolved.is_relative_to(real_root):
        log.debug("skipping %s: it resolves outside the source root", path)
        return None
    return Discovered(path=path, rel=rel, mtime=info.st_mtime, size=info.st_size)


@lru_cache(maxsize=64)
def _ignore_regex(patterns: tuple[str, ...]) -> re.Pattern[str] | None:
    if not patterns:
        return None
    return re.compile("|".join(fnmatch.translate(pattern) for pattern in patterns))


def _suffix(name: str) -> str:
    """``Path(name).suffix``, lower-cased, without building a path per file."""
    dot = name.rfind(".")
    return name[dot:].lower() if 0 < dot < len(name) - 1 else ""
