"""Discovery: which files under one folder source are documents kenning should index.

The walk is the only place that decides what exists, and a file it stops reporting is
treated as deleted. So it is strict about what it lets in, and it raises rather than
returning an empty list when the root itself cannot be read. Every file it passes over
is counted by reason in a WalkReport, so a user can see why a folder holds fewer
documents than files.
"""

import errno
import fnmatch
import logging
import os
import re
import stat
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from kenning.ingest.kiroignore import FILENAME as KIROIGNORE
from kenning.ingest.kiroignore import KiroIgnore
from kenning.ingest.mounts import Mounts
from kenning.ingest.readers import reader_suffix
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

# Why the walk passed over a file (unsupported and compressed reasons come from readers).
HIDDEN = "hidden"
JUNK = "junk, backup or lock file"
IGNORED = "ignored by a pattern or .kiroignore"
SENSITIVE = "sensitive"
OUTSIDE_ROOT = "link outside the root"
SPECIAL = "not a regular file"
UNREADABLE = "unreadable or vanished"
# A file link that leads, through itself or other links, back round to itself (ELOOP):
# told apart from UNREADABLE, which sends its owner looking for a missing file or a
# permission, since the stat that follows the link says so at no cost.
LINK_LOOP = "a symbolic link loop"
BAD_NAME = "name is not valid UTF-8"
OWN = "kenning's own file"
# Not passed over: the file is in a folder this user may list but not search (its x bit
# off: `chmod -R 644` on a tree), so it cannot even be stat'ed; the walk reports the
# folder as one it could not read, and what it held stays indexed.
UNSEARCHABLE = "in a folder that cannot be searched"
# Not passed over either: a file link this user may not follow, its target in a folder
# without the search bit (or one it cannot list). The same file reached directly keeps
# its text, so the link does too; the walk names it in `unreadable_links`.
LINK_SHUT = "its target cannot be reached"
# Not passed over either: a file that refuses a stat itself, in a folder that can be
# searched (EPERM on a protected file on macOS, a FUSE mount refusing one file). It is
# kept and named as a link that cannot be followed is.
STAT_SHUT = "it refuses to be looked at"
# Folders, not files: the mount points of the system's own filesystems (ingest/mounts.py).
SYSTEM_FS = "system filesystem not entered (proc, sysfs, /dev, /run...)"
# Folders too: one whose name is not UTF-8 is not entered, as no path under it can be
# stored or cited; what it holds is not counted file by file.
BAD_DIR_NAME = "folder not entered: its name is not valid UTF-8"
# Counted, not passed over: the sweep keeps these and marks them failed, with the size,
# without reading them; the cap leaves the oldest for when max_files allows.
TOO_BIG = "too big"
CAPPED = "over max_files"


@dataclass
class WalkReport:
    """Files the walk did not list, by reason, and the too-big files it did.

    ``skipped_dirs`` counts the directories it did not enter (build trees, dot
    directories, ignored or unreadable ones); the files inside them are not counted.
    ``unreadable_dirs`` names the directories below the root it could not list, with
    why: what they held may still be there, so it must not read as deleted.
    ``system_dirs`` names the mount points of system filesystems (/proc, /sys, /dev in a
    chroot) it did not enter, with their type; they count in ``skipped_dirs`` too.
    ``unreadable_links`` names the file links it could not follow for want of permission,
    and the files that refused a stat in a folder it could search, with why: like the
    files of an unreadable folder, they must not read as deleted.
    """

    files: Counter[str] = field(default_factory=Counter)
    skipped_dirs: int = 0
    unreadable_dirs: dict[str, str] = field(default_factory=dict)
    system_dirs: dict[str, str] = field(default_factory=dict)
    unreadable_links: dict[str, str] = field(default_factory=dict)
    bad_name_dirs: int = 0

    def to_dict(self) -> dict:
        return {"files": dict(self.files), "skipped_dirs": self.skipped_dirs, "system_dirs": dict(self.system_dirs)}

    def passed_over(self) -> dict[str, int]:
        """What the walk passed over by reason, most first, as status shows it: the files
        (the cap's aside: those are counted apart), the system filesystems' folders, and
        the folders not entered for a name that is not UTF-8."""
        reasons = {reason: n for reason, n in self.files.most_common() if reason != CAPPED}
        if self.system_dirs:
            reasons[SYSTEM_FS] = len(self.system_dirs)
        if self.bad_name_dirs:
            reasons[BAD_DIR_NAME] = self.bad_name_dirs
        return reasons

    def hides(self, rel: str) -> bool:
        """Whether the file at `rel` is a link the walk could not follow or lies in a
        directory it could not list."""
        return rel in self.unreadable_links or any(rel.startswith(folder + "/") for folder in self.unreadable_dirs)


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
    # kenning's own directories and files (its data directory, the log it writes to),
    # which a watched folder may hold: the walk does not enter the directories, and the
    # watcher ignores events under any of them. Indexing its own log would log a sweep,
    # which changes the log, which asks for another sweep.
    exclude: tuple[Path, ...] = ()
    # The (device, inode) of the files kenning writes to, which the walk skips however
    # it reaches them.
    own_files: frozenset[tuple[int, int]] = frozenset()
    # Files larger than this are still listed but counted as too big in the report;
    # 0 counts none.
    max_file_bytes: int = 0


@dataclass(frozen=True, slots=True)
class Discovered:
    path: Path  # under the root as given, not resolved
    rel: str  # POSIX, relative to the root
    mtime: float  # of the target when the file is a symlink
    size: int
    # A file link's own mtime: when it was made or last re-pointed (`ln -sfn`), or a
    # link's on the way to the root if that is later (`walk._linked_since`).
    link_mtime: float | None = None
    # When its inode last changed (of the target for a link): set by the kernel from
    # this machine's clock on every write, chmod or utime, and by no program to a time
    # of its choosing, as mtime can be. See `pipeline.needs_look`.
    ctime: float | None = None
    # When a folder on the way from the root to it was last moved in or renamed (see
    # `_moved_since`): the files that came with it keep their own ctime.
    moved: float | None = None
    # How many names the file has (of the target for a link): one changed through a name
    # in another folder is a change no watch of this folder hears of.
    names: int = 1
    # The device it is on (of the target for a link): a hard link's other names are too.
    device: int = 0
    # A file link's target's name: the reader goes by it (the pipeline opens the resolved
    # path), so `a.md -> b.docx` is read, and versioned, as DOCX.
    target_name: str | None = None

    @property
    def reader_name(self) -> str:
        """The name whose suffix picks the reader (`readers.reader_format`)."""
        return self.target_name or self.path.name

    @property
    def stamp(self) -> float:
        """The time its change is judged by: a link re-pointed at a file of the same size
        and mtime as its old target has changed all the same."""
        return self.mtime if self.link_mtime is None else max(self.mtime, self.link_mtime)


def _real(root: Path) -> Path:
    """The root with its links resolved. Not `Path.resolve`: on Python 3.11 a link loop
    makes it raise RuntimeError, which no sweep reads as a root it cannot open; the
    loop's OSError comes when the root is listed."""
    return Path(os.path.realpath(root))


def walk(root: Path, rules: WalkRules, report: WalkReport | None = None) -> list[Discovered]:
    """Every indexable file under ``root``; raises when ``root`` cannot be listed, and
    `IgnoreFileUnusable` when its .kiroignore is there but cannot be used.

    What it passes over is counted in ``report`` when one is given.
    """
    report = report if report is not None else WalkReport()
    skipped = report.files
    root = root.absolute()
    real_root = _real(root)
    ignored = _ignore_regex(rules.ignore)
    kiro = KiroIgnore.load(real_root)
    linked = _linked_since(root) if root != real_root else None
    found: list[Discovered] = []
    moves: dict[str, float | None] = {}
    for dirpath, prefix, filenames in _descend(root, real_root, rules, ignored, kiro, report):
        moved = _moved_since(dirpath, prefix, moves)
        for name in filenames:
            rel = prefix + name
            # The store and every citation hold paths as text; a name that is not
            # UTF-8 (odd\xff.md) cannot be one, so it is reported instead of failing
            # the sweep at the first write.
            reason = _refusal(name, rel, ignored, kiro) if _utf8(name) else BAD_NAME
            if reason is None:
                item = _inspect(root, real_root, dirpath, name, rel, rules, linked, moved)
                if item == UNSEARCHABLE:
                    if not prefix:
                        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(root))
                    report.unreadable_dirs.setdefault(prefix.rstrip("/"), os.strerror(errno.EACCES))
                    continue
                if item in (LINK_SHUT, STAT_SHUT):
                    report.unreadable_links[rel] = f"{item}: {os.strerror(errno.EACCES)}"
                    continue
                if isinstance(item, str):
                    reason = item
                else:
                    found.append(item)
                    if rules.max_file_bytes and item.size > rules.max_file_bytes:
                        skipped[TOO_BIG] += 1
            if reason is not None:
                skipped[reason] += 1
    return found


def directories(root: Path, rules: WalkRules, targets: set[str] | None = None) -> list[str]:
    """The directories the walk enters, the root first, written under ``root`` as given.

    These are what the watcher watches, one by one: a recursive watch of the root would
    follow directory links the walk never follows (a link to /usr cost tens of
    thousands of inotify watches and held the interpreter for seconds) and enter the
    build trees and dot directories the walk skips. Raises when ``root`` cannot be listed.
    Strings, as watchfiles takes them: a folder may hold tens of thousands.

    With ``targets``, the files the walk's file links lead to that lie in a directory
    it does not enter (`notes/plan.md -> .drafts/plan.md`, or outside the root when it
    is not confined) are added to it, and their directories to the list: a target saved
    there told no watch, and its link cited the old text until the periodic sweep.
    """
    root = root.absolute()
    real_root = _real(root)
    kiro = KiroIgnore.load_for_watching(real_root)
    links: list[str] | None = None if targets is None else []
    descent = _descend(root, real_root, rules, _ignore_regex(rules.ignore), kiro, WalkReport(), links)
    top = str(root)
    prefixes = [prefix for _dirpath, prefix, _files in descent]
    entered = [os.path.join(top, prefix).rstrip(os.sep) if prefix else top for prefix in prefixes]
    if targets is None or not links:
        return entered
    real_entered = {os.path.normpath(os.path.join(real_root, prefix)) for prefix in prefixes}
    for target in link_targets(links, real_root, rules.confine_to_root):
        if os.path.dirname(target) not in real_entered:
            targets.add(target)
    return entered + sorted({os.path.dirname(target) for target in targets})


def link_targets(links: list[str], real_root: Path, confined: bool) -> Iterator[str]:
    """The files these links lead to, as the walk would read them: regular files, inside
    the root when the source is confined to it. Only those in a folder this user may
    list: watching one that refuses it (mode 711) fails the whole watch."""
    for link in links:
        target = os.path.realpath(link)
        if confined and not Path(target).is_relative_to(real_root):
            continue
        if os.path.isfile(target) and os.access(os.path.dirname(target), os.R_OK):
            yield target


def _descend(
    root: Path,
    real_root: Path,
    rules: WalkRules,
    ignored: re.Pattern[str] | None,
    kiro: KiroIgnore,
    report: WalkReport,
    links: list[str] | None = None,
) -> Iterator[tuple[str, str, list[str]]]:
    """Each directory entered, as (path, path relative to the root with a trailing slash
    or empty, file names), pruning what the walk does not enter and counting it."""
    info = os.stat(real_root)
    if not stat.S_ISDIR(info.st_mode):
        raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), str(root))
    exclude = {os.path.realpath(path) for path in rules.exclude}
    if any(real_root.is_relative_to(path) for path in exclude):
        return
    top = str(real_root)

    mounts = Mounts()

    def system(path: str, device: int) -> bool:
        kind = mounts.system_type(path, device)
        if kind is None:
            return False
        report.skipped_dirs += 1
        report.system_dirs[os.path.relpath(path, top).replace(os.sep, "/")] = kind
        log.debug("not entering %s: a %s filesystem", path, kind)
        return True

    def onerror(error: OSError) -> None:
        # The root failing here (unreadable, or gone since the stat) must reach the
        # caller: an empty result would read as every file having been deleted.
        if error.filename == top:
            raise error
        report.skipped_dirs += 1
        log.warning("skipping unreadable directory %s: %s", error.filename, error.strerror or error)
        # A directory that went away (or became a file) since its parent was listed holds
        # nothing now; one that cannot be listed (no permission, an I/O error) may.
        if not isinstance(error, (FileNotFoundError, NotADirectoryError)):
            rel = os.path.relpath(error.filename, top).replace(os.sep, "/")
            report.unreadable_dirs[rel] = error.strerror or str(error)

    for dirpath, dirnames, filenames in _tree(top, onerror, system, info.st_dev, links):
        prefix = "" if dirpath == top else os.path.relpath(dirpath, top).replace(os.sep, "/") + "/"
        named = [name for name in dirnames if _utf8(name)]
        # Counted on its own: a folder of notes copied from an old disk in Latin-1
        # (caf\xe9/) held files that were not indexed, and nothing said so.
        report.bad_name_dirs += len(dirnames) - len(named)
        entered = [
            name
            for name in named
            if _enters(name, prefix + name, ignored, kiro) and os.path.join(dirpath, name) not in exclude
        ]
        report.skipped_dirs += len(dirnames) - len(entered)
        dirnames[:] = entered
        yield dirpath, prefix, filenames


def _tree(
    top: str,
    onerror: Callable[[OSError], None],
    passes: Callable[[str, int], bool] | None = None,
    top_device: int | None = None,
    links: list[str] | None = None,
) -> Iterator[tuple[str, list[str], list[str]]]:
    """os.walk's top-down walk without following links, on a stack of its own.

    Python 3.11's os.walk recurses once per level, so a tree a thousand directories deep
    (a path of 2,400 characters is enough) raised RecursionError and failed the whole
    sweep. As with os.walk, names removed from the directory list are not entered, and
    a link to a directory is listed with the directories but never entered. Nor is a
    directory on another device than its parent (`top_device` for the top's children)
    when `passes(path, device)` says so: only those, mount points, are asked about.
    `links` gains the path of each link listed with the files, known from the listing
    alone (no stat).
    """
    stack: list[tuple[str, int | None]] = [(top, top_device)]
    while stack:
        dirpath, device = stack.pop()
        if dirpath != top:
            try:
                info = os.lstat(dirpath)
            except OSError:
                info = None  # gone or unreachable: listing it below fails and says why
            # Looked at just before it is entered, as os.walk does: a directory that
            # became a link while the directories listed before it were walked (seconds,
            # on a large folder) is not followed.
            if info is not None and stat.S_ISLNK(info.st_mode):
                continue
            if info is not None and info.st_dev != device:
                if passes is not None and passes(dirpath, info.st_dev):
                    continue
                device = info.st_dev
        dirnames: list[str] = []
        filenames: list[str] = []
        try:
            with os.scandir(dirpath) as entries:
                for entry in entries:
                    try:
                        is_dir = entry.is_dir()
                    except OSError:
                        is_dir = False
                    (dirnames if is_dir else filenames).append(entry.name)
                    if links is not None and not is_dir and entry.is_symlink():
                        links.append(entry.path)
        except OSError as error:
            onerror(error)
            continue
        yield dirpath, dirnames, filenames
        stack.extend((os.path.join(dirpath, name), device) for name in reversed(dirnames))


def newest(found: list[Discovered], max_files: int, report: WalkReport | None = None) -> list[Discovered]:
    """The `max_files` most recently modified files, newest first; the rest count as capped."""
    ordered = sorted(found, key=lambda item: item.mtime, reverse=True)
    kept = ordered[:max_files]
    if report is not None and len(ordered) > len(kept):
        report.files[CAPPED] += len(ordered) - len(kept)
    return kept


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
    as_file = _refusal(name, rel, ignored, kiro) is None and not is_sensitive_path(path)
    kind = reader_suffix(name)
    # An extensionless name (README, or a folder) could be either.
    if as_file or (isinstance(kind, tuple) and kind[0]):
        return as_file
    return _enters(name, rel, ignored, kiro)


def _enters(name: str, rel: str, ignored: re.Pattern[str] | None, kiro: KiroIgnore) -> bool:
    """The walk descends this directory (its parents already entered)."""
    if name in HARD_SKIP_DIRS or name.startswith("."):
        return False
    if ignored is not None and (ignored.match(rel) or ignored.match(name) or ignored.match(rel + "/")):
        return False
    return not kiro.matches(rel, is_dir=True)


def _refusal(name: str, rel: str, ignored: re.Pattern[str] | None, kiro: KiroIgnore) -> str | None:
    """Why a file fails a rule that needs only its name (parents already entered), or None."""
    # Dot files include .kiroignore itself, which has no suffix and would otherwise be
    # read as a plain-text document.
    if name.startswith("."):
        return HIDDEN
    kind = reader_suffix(name)
    if isinstance(kind, str):
        return kind
    if _JUNK.match(name):
        return JUNK
    if ignored is not None and (ignored.match(rel) or ignored.match(name)):
        return IGNORED
    return IGNORED if kiro.matches(rel, is_dir=False) else None


def _utf8(name: str) -> bool:
    """False for a name os.walk could only decode with surrogate escapes."""
    if name.isascii():
        return True
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _linked_since(root: Path) -> float | None:
    """When a link on the way to the root was last made or re-pointed, if one is.

    A root reached through a link (`current -> releases/r1`) re-pointed at another
    folder holds other files at the same paths; ones of the same size and mtime as the
    files they replace (releases unpacked from archives) looked unchanged, and their
    text was never read. This time joins each file's stamp as a file link's own does,
    so every file is looked at once (hashed, and read if its bytes differ)."""
    latest = None
    for path in (root, *root.parents):
        try:
            info = os.lstat(path)
        except OSError:
            continue
        if stat.S_ISLNK(info.st_mode):
            latest = max(latest or info.st_mtime, info.st_mtime)
    return latest


def _moved_since(dirpath: str, prefix: str, moves: dict[str, float | None]) -> float | None:
    """When a folder below the root on the way to `dirpath`, itself included, was last
    moved or renamed, if one was since it last changed; `moves` holds what its parents said.

    `mv docs docs.old && mv ../docs.new docs` puts files at the same paths that keep their
    own mtime, size and ctime (a rename changes the ctime of the folder moved alone): a
    folder restored earlier from a backup that keeps mtimes looked unchanged file by file,
    and the old folder's text stayed cited under its paths. A rename changes a folder's
    ctime and not its mtime, which an entry made or removed changes too, so only a folder
    whose ctime is past its mtime counts: a file added beside a thousand others does not
    have all of them hashed. So does a chmod, or a `tar x` or `rsync -a` setting the
    folder's mtime back: that costs a hash of each file below it once. The root is
    another folder's business (`sources.root_identity`)."""
    if not prefix:
        return None
    parent = prefix[:-1].rpartition("/")[0]
    inherited = moves.get(parent + "/" if parent else "")
    try:
        info = os.lstat(dirpath)
    except OSError:
        own = None
    else:
        own = info.st_ctime if info.st_ctime > info.st_mtime else None
    moved = max(inherited or 0.0, own or 0.0) or None
    moves[prefix] = moved
    return moved


def _inspect(
    root: Path,
    real_root: Path,
    dirpath: str,
    name: str,
    rel: str,
    rules: WalkRules,
    root_linked: float | None,
    moved: float | None = None,
) -> Discovered | str:
    """Stat one file and apply the checks that need the disk; a string is why it is skipped.

    Works on strings until a file is kept: path objects cost more than the stat.
    `root_linked` is when a link on the way to the root was last re-pointed
    (`_linked_since`), `moved` when a folder on the way was moved (`_moved_since`).
    """
    real = os.path.join(dirpath, name)
    try:
        info = os.lstat(real)
    except PermissionError:
        # A folder this user may list but not search refuses a stat of every entry, and
        # a lookup of "." in it too; a file that refuses one alone is that file's doing,
        # not its folder's (the root's would make the whole sweep read as unreadable).
        return UNSEARCHABLE if _unsearchable(dirpath) else STAT_SHUT
    except OSError as exc:
        # A file deleted mid-walk: one file, not the sweep.
        log.debug("skipping %s: %s", real, exc.strerror or exc)
        return UNREADABLE
    linked = stat.S_ISLNK(info.st_mode)
    link_mtime = info.st_mtime if linked else None
    if root_linked is not None:
        link_mtime = max(link_mtime or root_linked, root_linked)
    if linked:
        try:
            info = os.stat(real)
            real = os.path.realpath(real)
        except PermissionError:
            # A folder on the way to the target refuses the lookup: the target may be
            # there still, as a file in a folder that cannot be searched may be.
            return LINK_SHUT
        except OSError as exc:
            # A broken link: one file, not the sweep.
            log.debug("skipping %s: %s", real, exc.strerror or exc)
            return LINK_LOOP if exc.errno == errno.ELOOP else UNREADABLE
    if not stat.S_ISREG(info.st_mode):
        return SPECIAL
    # The reader goes by the target's name (`Discovered.reader_name`): `a.md -> b.bin` is
    # passed over as b.bin would be, not listed as markdown and then failed when read.
    if linked and isinstance(refused := reader_suffix(os.path.basename(real)), str):
        return refused
    if (info.st_dev, info.st_ino) in rules.own_files:
        return OWN
    path = root / rel
    # Without a link on the way (directory links are never followed), the real path
    # is the resolved root plus rel, so only linked files or a linked root need more.
    resolved = Path(real) if linked or root != real_root else path
    if is_sensitive_path(path) or (resolved is not path and is_sensitive_path(resolved)):
        log.debug("skipping sensitive path %s", path)
        return SENSITIVE
    if rules.confine_to_root and linked and not resolved.is_relative_to(real_root):
        log.debug("skipping %s: it resolves outside the source root", path)
        return OUTSIDE_ROOT
    return Discovered(
        path=path,
        rel=rel,
        mtime=info.st_mtime,
        size=info.st_size,
        link_mtime=link_mtime,
        ctime=info.st_ctime,
        moved=moved,
        names=info.st_nlink,
        device=info.st_dev,
        target_name=os.path.basename(real) if linked else None,
    )


def _unsearchable(dirpath: str) -> bool:
    """Asked only once an entry refused a stat, so a folder of thousands costs nothing more."""
    try:
        os.lstat(os.path.join(dirpath, os.curdir))
    except PermissionError:
        return True
    except OSError:
        pass
    return False


@lru_cache(maxsize=64)
def _ignore_regex(patterns: tuple[str, ...]) -> re.Pattern[str] | None:
    if not patterns:
        return None
    return re.compile("|".join(fnmatch.translate(pattern) for pattern in patterns))

