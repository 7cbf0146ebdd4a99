"""``.kiroignore``: a user's own exclusions for one folder source, in a gitignore subset.

Supported: ``#`` comments, blank lines, a trailing ``/`` (directories only), a leading
``/`` or any other inner ``/`` (anchored at the root; a pattern without ``/`` matches a
name at any depth), ``*`` and ``?`` (never crossing ``/``), ``**`` as a whole segment
(``**/x``, ``a/**/b``, ``a/**``), ``!`` negation where the last matching rule wins, and
a leading ``\\#`` or ``\\!`` for a literal first character. Trailing spaces are dropped.
Matching is case-sensitive, as in git.

Not supported: ``[...]`` classes (brackets match themselves), other backslash escapes
(a backslash matches itself), nested ``.kiroignore`` files, and re-including a path
under an excluded directory (the walk prunes that directory, so nothing inside returns).

``.gitignore`` is deliberately not read: a file that stops being discovered is treated
as deleted, so honouring it implicitly would drop indexed documents from every source
whose root is a repository. Writing a ``.kiroignore`` is an explicit act.

The file is user-authored and re-read every sweep. An unusable line is dropped and the
rest apply. A file that cannot be used as a whole (too large, too many rules, not a regular
file, unreadable) raises `IgnoreFileUnusable`: read as "no exclusions", it let into the
index every file it was written to keep out, so the sweep reports it and waits instead.
"""

import logging
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path

from kenning.errors import IgnoreFileUnusable
from kenning.ingest.redact import redact

log = logging.getLogger(__name__)

FILENAME = ".kiroignore"
MAX_FILE_BYTES = 64 * 1024
MAX_RULES = 1000

# Any number of whole path segments, each followed by its "/" (see _compile).
_ANY_SEGMENTS = "(?:[^/]*/)*"


@dataclass(frozen=True, slots=True)
class _Rule:
    regex: re.Pattern[str]
    negate: bool
    dir_only: bool


class KiroIgnore:
    """Compiled rules of one ``.kiroignore``; every rule is turned into a regex once."""

    def __init__(self, rules: tuple[_Rule, ...] = ()) -> None:
        self._rules = rules

    @classmethod
    def load(cls, root: Path) -> "KiroIgnore":
        """Rules from ``root/.kiroignore``; none when there is no such file.

        Raises `IgnoreFileUnusable` when the file is there but cannot be used."""
        path = root / FILENAME
        try:
            info = os.stat(path)
            if not stat.S_ISREG(info.st_mode):
                # A directory or a FIFO here would fail or block on open.
                raise IgnoreFileUnusable(f"{path} is not a regular file")
            if info.st_size > MAX_FILE_BYTES:
                raise IgnoreFileUnusable(f"{path} is larger than {MAX_FILE_BYTES} bytes")
            with open(path, "rb") as handle:
                # Bounded read: the file may have grown since the stat.
                data = handle.read(MAX_FILE_BYTES + 1)
        except FileNotFoundError:
            if os.path.lexists(path):
                # A link to a shared ignore file on a drive that is away: its rules
                # still stand, they just cannot be read now.
                raise IgnoreFileUnusable(f"{path} links to a file that is not there") from None
            return cls()
        except OSError as exc:
            if not os.path.isdir(root) or not os.access(root, os.X_OK):
                # The folder itself cannot be searched, or is not one: the walk says so.
                return cls()
            raise IgnoreFileUnusable(f"cannot read {path}: {exc.strerror or exc}") from None
        if len(data) > MAX_FILE_BYTES:
            raise IgnoreFileUnusable(f"{path} is larger than {MAX_FILE_BYTES} bytes")
        # utf-8-sig: Windows editors prepend a BOM that would otherwise join the first
        # pattern. A byte that is not UTF-8 (a comment saved as Latin-1) costs nothing:
        # a rule holding one can only match a name that is not UTF-8, and the walk
        # passes those over anyway.
        return cls.parse(data.decode("utf-8-sig", "surrogateescape"), path)

    @classmethod
    def load_for_watching(cls, root: Path) -> "KiroIgnore":
        """The rules a watch goes by: none when the file cannot be used. Watching a path
        the file may exclude costs an event or a watch; the sweep that asks for stops on
        the same file and says why."""
        try:
            return cls.load(root)
        except IgnoreFileUnusable:
            return cls()

    @classmethod
    def parse(cls, text: str, path: Path | str = FILENAME) -> "KiroIgnore":
        """Compile rules from file text; unusable lines are logged and dropped.

        More than `MAX_RULES` rules raise `IgnoreFileUnusable`: the ones past the cap
        would not apply, and what they keep out would be indexed."""
        rules: list[_Rule] = []
        for number, line in enumerate(text.splitlines(), start=1):
            try:
                rule = _parse_line(line)
            except ValueError as exc:
                # The message quotes the line, which is the user's and may hold anything.
                log.warning("%s line %d: %s; rule dropped", path, number, redact(str(exc)))
                continue
            if rule is not None:
                if len(rules) == MAX_RULES:
                    raise IgnoreFileUnusable(f"{path} has more than {MAX_RULES} rules")
                rules.append(rule)
        return cls(tuple(rules))

    def ignores(self, rel_path: str, is_dir: bool) -> bool:
        """True when the path or any directory above it is excluded.

        An excluded directory is pruned by the walk, so a rule can never bring back
        anything beneath it; answering the same way for a deep path keeps the file
        watcher's filter in step with what a sweep finds.
        """
        if not self._rules:
            return False
        parts = rel_path.split("/")
        for depth in range(1, len(parts)):
            if self.matches("/".join(parts[:depth]), is_dir=True):
                return True
        return self.matches(rel_path, is_dir)

    def matches(self, rel_path: str, is_dir: bool) -> bool:
        """The verdict of the last rule matching this path itself, ignoring its parents.

        For a walk that has already pruned every excluded parent this equals
        ``ignores`` at a fraction of the cost.
        """
        subject = rel_path + "/"
        verdict = False
        for rule in self._rules:
            if rule.dir_only and not is_dir:
                continue
            if rule.regex.fullmatch(subject):
                verdict = not rule.negate
        return verdict

    def __bool__(self) -> bool:
        return bool(self._rules)


def _parse_line(line: str) -> _Rule | None:
    pattern = line.rstrip(" \t")
    if not pattern or pattern.startswith("#"):
        return None
    negate = pattern.startswith("!")
    if negate:
        pattern = pattern[1:]
    elif pattern.startswith(("\\#", "\\!")):
        pattern = pattern[1:]
    dir_only = pattern.endswith("/")
    if dir_only:
        pattern = pattern[:-1]
    anchored = "/" in pattern
    if pattern.startswith("/"):
        pattern = pattern[1:]
    if not pattern:
        raise ValueError(f"empty pattern {line!r}")
    segments = pattern.split("/")
    if "" in segments:
        raise ValueError(f"empty path segment in {line!r}")
    if not anchored:
        segments.insert(0, "**")
    return _Rule(_compile(segments), negate, dir_only)


def _compile(segments: list[str]) -> re.Pattern[str]:
    """Translate glob segments into a regex over ``rel_path + "/"``.

    Each segment consumes its trailing "/", so ``**`` is simply "any number of whole
    segments". A ``**`` between fixed segments takes the earliest place where the
    segments after it fit, inside an atomic group: a later place can only leave less
    path for the rest, so trying it is wasted work, and refusing to try keeps a
    pathological pattern from backtracking exponentially.
    """
    groups: list[list[str]] = [[]]
    for segment in segments:
        if segment == "**":
            if groups[-1] or len(groups) == 1:
                groups.append([])
        else:
            groups[-1].append(_segment(segment))
    head, *tails = ["".join(group) for group in groups]
    regex = head
    for index, tail in enumerate(tails):
        if index < len(tails) - 1:
            regex += f"(?>{_ANY_SEGMENTS}?{tail})"
        elif tail:
            regex += _ANY_SEGMENTS + tail
        else:
            # A trailing "a/**" matches everything inside a, but not a itself.
            regex += "(?:[^/]*/)+"
    return re.compile(regex)


def _segment(glob: str) -> str:
    """Regex for one segment and its "/"; ``*`` runs between fixed text are atomic."""
    chunks = re.sub(r"\*+", "*", glob).split("*")
    regex = _fixed(chunks[0])
    for chunk in chunks[1:-1]:
        regex += f"(?>[^/]*?{_fixed(chunk)})"
    if len(chunks) > 1:
        regex += "[^/]*" + _fixed(chunks[-1])
    return regex + "/"


def _fixed(text: str) -> str:
    return "".join("[^/]" if char == "?" else re.escape(char) for char in text)
