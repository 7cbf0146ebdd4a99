"""Following a folder as it changes: watchfiles events, filtered and debounced.

An event only marks the source dirty and asks for a sweep; the sweep's mtime check
makes that cheap, and it is what gets renames, directory moves, deletions and the cap
right without a second code path. The periodic sweep stays as the safety net for
anything the OS did not report (network mounts, a watcher restarted).

Each folder is watched from a thread of its own with watchfiles' blocking `watch`, not
`awatch`: setting up a watch adds an inotify watch per directory, and `awatch` does
that on the event loop (it held the loop for over a second on a folder of a few
thousand files). The thread hands each batch of events to the loop. The directories
watched are the ones a sweep enters, each on its own (`_watch`).

A file written to again and again (a log appended to every second) asks for a sweep at
most once every `BUSY_SECONDS` (`Pacer`): each sweep walks the folder and reads, hashes
and chunks that file whole again.
"""

from __future__ import annotations

import asyncio
import errno
import logging
import os
import stat
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import TypeVar

from watchfiles import Change, watch

from kenning.ingest.kiroignore import KiroIgnore
from kenning.ingest.walk import WalkRules, directories, is_candidate, link_targets

log = logging.getLogger(__name__)
T = TypeVar("T")

# How long a watch waits in silence before yielding nothing: the first such yield tells
# that a new watch is up.
SETTLED_MS = 1000
# A watch set up again is not set up sooner than this many times what listing its
# directories took after the last one was: on a folder of 20,000 directories each
# setting up costs a second of CPU and holds the interpreter for a third of one, and
# a directory arriving every second would otherwise cost that every second.
REWATCH_PACE = 10
# A file written to again less than this long after a change of it asked for a sweep
# waits until then for the next one. A log appended to once a second was read and chunked
# whole once a second (bench/growing_log.py); now its last lines reach search up to
# this much later, and a file changed once is swept as soon as it ever was.
BUSY_SECONDS = 10.0


class ChangeFilter:
    """Decides which events concern the index, without touching the disk.

    The root's .kiroignore is the one dot-file that matters: a change to it reloads the
    rules here and triggers a sweep, so newly ignored files leave the index.
    """

    def __init__(self, root: Path, rules: WalkRules, targets: frozenset[str] = frozenset()) -> None:
        self.root = root
        self.real_root = Path(os.path.realpath(root))
        # Files the folder's file links lead to in directories the walk does not enter
        # (`walk.directories`): a change to one is a change to its link.
        self.targets = targets
        # Events name paths under the root as given, which may be a link to the real
        # folder: what is excluded is compared in that form too.
        self.rules = replace(rules, exclude=(*rules.exclude, *_under(root, rules.exclude)))
        self.kiroignore_path = root / ".kiroignore"
        self.kiroignore = KiroIgnore.load_for_watching(root)

    def __call__(self, change: Change, path: str) -> bool:
        if path in self.targets:
            return True
        candidate = Path(path)
        if candidate == self.kiroignore_path:
            self.kiroignore = KiroIgnore.load_for_watching(self.root)
            return True
        return is_candidate(self.root, candidate, self.rules, self.kiroignore)


class Pacer:
    """Asks for a sweep for each batch of changes, holding back those of busy files.

    A batch of files written to that names any path that did not ask for a sweep in the
    last `interval` seconds asks at once. One naming only paths that did is held back
    until the earliest of them has waited that long, on a timer of the event loop's own,
    so the last change of a file that goes quiet is swept at most `interval` late, never
    dropped. Any sweep reads every file changed since the last, held ones included, so
    each sweep asked for counts for every path held. Runs on the event loop only.
    """

    def __init__(self, on_change: Callable[[], None], interval: float = BUSY_SECONDS) -> None:
        self.on_change = on_change
        self.interval = interval
        # Paths whose change asked for a sweep less than `interval` ago, with when.
        self.asked: dict[str, float] = {}
        self.held: set[str] = set()
        self._timer: asyncio.TimerHandle | None = None

    def ask(self, paths: set[str], now: float, force: bool = False) -> bool:
        """Whether a sweep is due now, for these paths' changes (none: time has passed)."""
        self.asked = {path: at for path, at in self.asked.items() if now - at < self.interval}
        self.held |= paths
        if not force and all(path in self.asked for path in self.held):
            return False
        self.asked.update(dict.fromkeys(self.held, now))
        self.held.clear()
        return True

    def changes(self, paths: set[str], force: bool = False) -> None:
        """These files were written to (`force`: a sweep is wanted whatever they are)."""
        loop = asyncio.get_running_loop()
        if self.ask(paths, loop.time(), force):
            self.close()
            self.on_change()
        elif self.held and self._timer is None:
            due = min(self.asked[path] for path in self.held) + self.interval
            self._timer = loop.call_at(due, self._due)

    def _due(self) -> None:
        self._timer = None
        self.changes(set())

    def close(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None


def _under(root: Path, paths: tuple[Path, ...]) -> list[Path]:
    """These paths, those inside the root's real folder written under the root as given."""
    real_root = os.path.realpath(root)
    real = [os.path.realpath(path) for path in paths]
    return [root / os.path.relpath(path, real_root) for path in real if Path(path).is_relative_to(real_root)]


# The inotify limits a watch runs into, by what watchfiles 1.x says when it does:
# inotify_add_watch failing with ENOSPC (notify's MaxFilesWatch, an OSError) is the
# per-user limit on watches, one per directory; inotify_init1 failing with EMFILE ("Error
# creating recommended watcher: Too many open files", an internal RuntimeError) the
# per-user limit on inotify instances, one per watched folder. What to raise each to,
# at least: twice the present value otherwise.
INOTIFY_LIMITS = (
    ("MaxFilesWatch", "inotify watches", "fs.inotify.max_user_watches", 524288),
    ("Too many open files", "inotify instances", "fs.inotify.max_user_instances", 1024),
)


def watch_failure(error: BaseException) -> str:
    """What `ken status` says about a watch that cannot be set up: why, and for an inotify
    limit the command that raises it. Reads the limit from /proc: not on the event loop."""
    text = str(error)
    for sign, what, sysctl, floor in INOTIFY_LIMITS:
        if sign not in text:
            continue
        try:
            now = int(Path("/proc/sys", *sysctl.split(".")).read_text())
        except (OSError, ValueError):
            now = 0
        wanted = max(floor, 2 * now)
        return (
            f"the system's limit on {what} is reached ({sysctl} = {now or 'unknown'}); raise it with"
            f" `sudo sysctl {sysctl}={wanted}`, and keep it across reboots with"
            f" `echo {sysctl}={wanted} | sudo tee -a /etc/sysctl.d/90-kenning.conf`"
        )
    return text


async def watch_folder(
    root: Path,
    rules: WalkRules,
    on_change: Callable[[], None],
    stop: asyncio.Event,
    debounce_ms: int,
    retry_seconds: float,
    on_failure: Callable[[str | None], None] | None = None,
) -> None:
    """Run until `stop` is set; a missing root is looked for every `retry_seconds`, and
    at once when its name changes in the folder above it (`_root_named_again`).

    The root is checked before watching because watchfiles, told to ignore permission
    errors, watches a missing path in silence instead of raising: a folder created
    after the daemon started would never be seen.

    `on_failure` hears why the folder cannot be watched (an inotify limit reached) each
    time setting a watch up fails, and None once a watch is up or the folder is gone (the
    sweep says that): until then changes wait for the periodic sweep, and the user is
    the one who can fix it.
    """
    halt = threading.Event()
    relay = asyncio.ensure_future(_relay(stop, halt))
    # Outlives each watch: a change held back when the watch is set up again is still due.
    pacer = Pacer(on_change)
    try:
        missing = False
        while not stop.is_set():
            error: BaseException | None = None
            if await asyncio.to_thread(root.is_dir):
                if missing:
                    # The root appeared (a drive mounted, the folder created): sweep now
                    # rather than at the next periodic sweep.
                    missing = False
                    pacer.changes(set(), force=True)
                error = await _watch_in_thread(root, rules, pacer, halt, debounce_ms, on_failure)
                if stop.is_set():
                    return
                if error is not None:
                    why = await asyncio.to_thread(watch_failure, error)
                    log.warning("watching %s failed: %s; watching again in %.0fs", root, why, retry_seconds)
                    if on_failure is not None:
                        on_failure(why)
            if error is None and not missing:
                why = await asyncio.to_thread(_not_a_folder, root)
                log.warning("cannot watch %s: %s; looking again every %.0fs", root, why, retry_seconds)
                missing = True
                if on_failure is not None:
                    # A limit that kept it unwatched is no longer the news: the folder is
                    # gone, which the sweep reports.
                    on_failure(None)
            if missing:
                await _in_thread(f"wait {root}", partial(_root_named_again, root, halt, retry_seconds))
                continue
            try:
                async with asyncio.timeout(retry_seconds):
                    await stop.wait()
            except TimeoutError:
                continue
    finally:
        halt.set()
        relay.cancel()
        pacer.close()


def _not_a_folder(root: Path) -> str:
    """Why the root cannot be watched as a folder. A link that leads back round to itself
    is named with its round: the root's own name may be a folder below the link that
    loops, and "not a folder" left the user to find which of the path's links it was."""
    try:
        os.stat(root)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return f"its path goes round a symbolic link loop: {' -> '.join(_round(_looping(root)))}"
    return "it is not a folder now"


def _looping(root: Path) -> Path:
    """The first folder of the path, from the top, that is a link loop."""
    for place in (*reversed(root.parents), root):
        try:
            os.stat(place)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                return place
    return root


def _round(start: Path, most: int = 40) -> list[str]:
    """The links from `start` until one comes round again (as the kernel, at most 40)."""
    seen = [str(start)]
    place = str(start)
    for _ in range(most):
        try:
            place = os.path.normpath(os.path.join(os.path.dirname(place), os.readlink(place)))
        except OSError:
            break
        seen.append(place)
        if seen.count(place) > 1:
            break
    return seen


def _root_named_again(root: Path, halt: threading.Event, seconds: float) -> None:
    """Wait until the root's name changes in the folder above it, `seconds` pass or
    `halt` is set.

    A root that is not a folder now (a link looping back on itself, a folder moved away)
    was looked for again only every `watch_retry`, and until then `ken status` kept the
    sweep's "cannot read" after the link was pointed at a folder or the folder moved
    back. Watching the one folder above for that name sees it at once; a change further
    up (a drive mounted, a link's target made) waits for the time to pass, which other
    names' changes do not put off (each wait of watchfiles' starts its timeout again)."""
    deadline = time.monotonic() + seconds
    try:
        for _ in watch(
            root.parent,
            watch_filter=lambda _change, path: os.path.basename(path) == root.name or time.monotonic() >= deadline,
            stop_event=halt,
            step=50,
            rust_timeout=int(seconds * 1000),
            yield_on_timeout=True,
            recursive=False,
            raise_interrupt=False,
        ):
            return
    except Exception:  # the folder above is gone too, or cannot be watched: wait the time out
        halt.wait(seconds)


async def _in_thread(name: str, function: Callable[[], T]) -> T:
    """What `function`, a wait of minutes, returns, run in a thread of its own: in the
    loop's default executor, a few folders watched or waited for at once took every
    thread that `to_thread` calls wait for."""
    loop = asyncio.get_running_loop()
    done: asyncio.Future[T] = loop.create_future()

    def settle(outcome: Callable[[], None]) -> None:
        if not done.done():  # (a wait cancelled meanwhile)
            outcome()

    def run() -> None:
        try:
            outcome = partial(done.set_result, function())
        except BaseException as exc:
            outcome = partial(done.set_exception, exc)
        try:
            loop.call_soon_threadsafe(settle, outcome)
        except RuntimeError:
            pass  # the loop has closed: nobody is waiting any more

    # Starting a thread waits until it runs, which on a busy machine can take a while:
    # not on the event loop.
    await asyncio.to_thread(threading.Thread(target=run, name=name, daemon=True).start)
    return await done


async def _relay(stop: asyncio.Event, halt: threading.Event) -> None:
    await stop.wait()
    halt.set()


async def _watch_in_thread(
    root: Path,
    rules: WalkRules,
    pacer: Pacer,
    halt: threading.Event,
    debounce_ms: int,
    on_failure: Callable[[str | None], None] | None = None,
) -> BaseException | None:
    """Watch until the root goes or `halt` is set; returns what stopped it, if not those."""
    loop = asyncio.get_running_loop()

    def changed(paths: set[str], force: bool) -> None:
        loop.call_soon_threadsafe(pacer.changes, paths, force)

    def up() -> None:
        if on_failure is not None:
            loop.call_soon_threadsafe(on_failure, None)

    def run() -> BaseException | None:
        try:
            # The first watch asks for no sweep of its own: the one the daemon starts
            # with, or the one whatever stopped the last watch asked for, is under way.
            again = tolerant = False
            stumbled: float | None = None  # when a name that is not UTF-8 last ended a watch
            while True:
                try:
                    going = _watch(root, rules, changed, halt, debounce_ms, again, up, tolerant)
                except PermissionError:
                    if tolerant:
                        raise
                    # A directory closed to this user between being listed and being
                    # watched: the rest are watched without it this once (watchfiles then
                    # passes over every error, which is why it is not the rule).
                    again = tolerant = True
                    continue
                except _UndecodableName:
                    # Such a file written to again and again (a log with a Latin-1 name)
                    # ended every watch at each write, and each setting up again listed
                    # the folder and asked for a sweep: most of a CPU, for good, on a
                    # folder of 2,000 directories. The second within `BUSY_SECONDS` waits
                    # until they are over, as a busy file's sweep does; the sweep the next
                    # watch asks for finds what changed meanwhile.
                    if stumbled is not None:
                        halt.wait(max(0.0, stumbled + BUSY_SECONDS - time.monotonic()))
                    stumbled = time.monotonic()
                    going = not halt.is_set()
                if not going:
                    break
                again, tolerant = True, False  # watched again at once, over the directories there are now
        except FileNotFoundError:
            pass  # gone between the check and the watch
        except Exception as exc:  # a watcher error costs this folder's watch, not the daemon
            return exc
        return None

    return await _in_thread(f"watch {root}", run)


def _watch(
    root: Path,
    rules: WalkRules,
    changed: Callable[[set[str], bool], None],
    halt: threading.Event,
    debounce_ms: int,
    again: bool,
    up: Callable[[], None] = lambda: None,
    tolerant: bool = False,
) -> bool:
    """Watch the directories a sweep would enter until the root goes or `halt` is set
    (False), or until they are no longer the ones to watch (True); `up` is called once
    every directory is watched.

    Errors setting a watch up raise unless `tolerant`: watchfiles told to ignore
    permission errors ignores every error then, an inotify limit reached included, and
    the folder went unwatched with nothing said (watchfiles 1.3.0).

    Each directory is watched on its own, not the root recursively: see
    `walk.directories`. The cost is that a new directory is not watched until the
    watch is set up again, so one arriving ends this watch. The first yield after a
    watch is set up `again` asks for a sweep: whatever changed while no watch was up (a
    file written into the new directory before it was watched) is found by that sweep.
    It also lists the directories again: one made while the watch was being set up, in
    a directory not yet watched, reported nothing.
    """
    started = time.monotonic()
    identity = identity_of(root)
    targets: set[str] = set()
    folders = directories(root, rules, targets)
    # A new directory waits until then to be watched; the sweep the next watch asks
    # for finds what was written into it meanwhile.
    earliest = started + REWATCH_PACE * (time.monotonic() - started)
    if not folders:
        halt.wait()  # the root is inside kenning's own data directory: nothing to index
        return False
    watch_filter = ChangeFilter(root, rules, frozenset(targets))
    fresh = True
    moved = False
    watched = set(folders)
    try:
        for changes in watch(
            *folders,
            watch_filter=watch_filter,
            stop_event=halt,
            debounce=debounce_ms,
            step=50,
            rust_timeout=SETTLED_MS,
            yield_on_timeout=True,
            recursive=False,
            ignore_permission_denied=tolerant,
            raise_interrupt=False,
        ):
            if changes or (fresh and again):
                # Only a file written to again is held back: one that arrived, went or
                # moved is swept at once, and its change does not repeat.
                modified = {path for change, path in changes if change == Change.modified}
                changed(modified, (fresh and again) or any(change != Change.modified for change, _ in changes))
            if fresh:
                fresh = False
                up()
                # A directory made between the listing above and its parent's watch
                # being set up gave no event and has no watch of its own: list again
                # now that every watch is up, and watch again if the list grew.
                moved = bool(set(directories(root, rules, set())) - watched)
            if not root.is_dir():
                # The root itself went (unmounted, moved away): its watch is dead, so it
                # is looked for again.
                return False
            if identity_of(root) != identity:
                # A drive mounted on the root (or unmounted from it), or a linked root
                # pointed elsewhere: the watch is on a directory no longer there to see,
                # and nothing on the drive was seen but by the periodic sweep.
                return True
            moved = moved or any(_moves_the_watch(change, path, watch_filter, watched) for change, path in changes)
            if moved and time.monotonic() >= earliest:
                return True
    except FileNotFoundError:
        # A directory went between being listed and being watched.
        return root.is_dir() and not halt.is_set()
    except RuntimeError as exc:
        # watchfiles raises on an event naming a path that is not UTF-8 ("Unable to
        # decode path", an internal RuntimeError it does not export, 1.3.0), and its
        # watch is over; one odd file name must not leave the rest of the folder unwatched.
        if "decode path" not in str(exc):
            raise
        log.info("watching %s: a file name that is not UTF-8 (%s); watching again", root, exc)
        raise _UndecodableName from exc
    return False


class _UndecodableName(Exception):
    """A watch ended on an event naming a path that is not UTF-8 (`_watch`)."""


def identity_of(root: Path) -> tuple[int, int] | None:
    """Which directory the root names now, as (device, inode); None when it names none.
    Checked each time the watch yields (a second when nothing happens)."""
    try:
        info = os.stat(root)
    except OSError:
        return None
    return info.st_dev, info.st_ino


def _moves_the_watch(change: Change, path: str, watch_filter: ChangeFilter, watched: set[str]) -> bool:
    """A directory arrived (made, or moved in), one not watched changed (made readable
    again by chmod), the .kiroignore that decides which directories are entered changed,
    or a file link arrived, whose target may lie in a directory not watched."""
    if Path(path) == watch_filter.kiroignore_path:
        return True
    if change == Change.deleted or (change == Change.modified and path in watched):
        return False
    try:
        mode = os.lstat(path).st_mode
    except OSError:
        return False  # gone again already
    if not stat.S_ISLNK(mode):
        return stat.S_ISDIR(mode)
    confined = watch_filter.rules.confine_to_root
    target = next(link_targets([path], watch_filter.real_root, confined), None)
    if target is None or target in watch_filter.targets:
        return False
    # A folder below the root is watched under the root as given, which may be a link
    # (`current -> releases/42`); one a link led out to, under its real path.
    folder = os.path.dirname(target)
    below = os.path.relpath(folder, watch_filter.real_root)
    root = os.path.abspath(watch_filter.root)
    as_given = root if below == "." else os.path.join(root, below)
    outside = below == os.pardir or below.startswith(os.pardir + os.sep)
    return folder not in watched and (outside or as_given not in watched)
