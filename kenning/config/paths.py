"""Where kenning keeps its files when the config does not say: XDG on Linux, the usual
Library folders on macOS. Resolved at call time so tests can point HOME and XDG_* at tmp.

The names of the files inside the data directory live here too, so the daemon, the
settings model and the light client path (`locate.py`) agree on them.
"""

from __future__ import annotations

import os
import pwd
import stat
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path

APP = "kenning"
SOCKET_NAME = "kenning.sock"
DB_NAME = "kenning.db"
# The daemon holds an flock on this file while it runs; it holds the daemon's pid.
LOCK_NAME = "daemon.lock"
# The key that fingerprints secrets in redaction marks (kenning/service/redaction_key.py).
REDACTION_KEY_NAME = "redaction.key"
# A daemon's log past this size is moved to `<log>.1` (one earlier log is kept): at
# `ken start`, and by the daemon itself while it runs (kenning/daemon/logfile.py).
LOG_ROTATE_BYTES = 10 << 20


# The bytes a unix socket's path may take: sockaddr_un's sun_path (Linux 108, macOS and
# the BSDs 104) less the NUL that ends it.
SOCKET_PATH_BYTES = (108 if sys.platform.startswith("linux") else 104) - 1


def socket_path_too_long(path: Path) -> str | None:
    """Why no socket can be bound or reached at `path`, when it is too long for one."""
    size = len(os.fsencode(path))
    if size <= SOCKET_PATH_BYTES:
        return None
    return (
        f"the socket path {path} is {size} bytes, longer than a unix socket path may be"
        f" ({SOCKET_PATH_BYTES}); set [daemon] socket to a shorter path"
    )


def xdg_value(var: str, environment: Mapping[str, str] = os.environ) -> str | None:
    """An XDG base directory variable's value in `environment` (the process's, or another
    process's, such as the user service manager's) when it counts: an absolute path.

    A relative one is to be ignored (the XDG spec says so): taken as it was, it named a
    library in whatever folder `ken` ran from, so `ken stop` in another folder said "not
    running" beside the daemon `ken start` left, and the service ran one in its own."""
    value = environment.get(var)
    return value if value and os.path.isabs(value) else None


def _xdg(var: str, fallback: str) -> Path:
    value = xdg_value(var)
    return Path(value) if value else Path.home() / fallback


def default_config_path() -> Path:
    if sys.platform == "darwin" and not xdg_value("XDG_CONFIG_HOME"):
        return Path.home() / "Library" / "Application Support" / APP / "config.toml"
    return _xdg("XDG_CONFIG_HOME", ".config") / APP / "config.toml"


def default_data_dir() -> Path:
    if sys.platform == "darwin" and not xdg_value("XDG_DATA_HOME"):
        return Path.home() / "Library" / "Application Support" / APP
    return _xdg("XDG_DATA_HOME", ".local/share") / APP


def state_dir() -> Path:
    """Where a daemon started by `ken start` writes its log (XDG state; ~/Library/Logs on macOS)."""
    if sys.platform == "darwin" and not xdg_value("XDG_STATE_HOME"):
        return Path.home() / "Library" / "Logs" / APP
    return _xdg("XDG_STATE_HOME", ".local/state") / APP


def user_path(value: str | os.PathLike[str], base: Path | None = None) -> Path:
    """A path from the config file as kenning uses it: `~` expanded, and a relative one
    taken from `base`, the config file's directory. Every process reading the config
    (the daemon, `ken` run from any directory) so finds the same place; without a base,
    from the current directory.

    Refused with ValueError, which the settings report as the key's error: an empty or
    blank path (it would quietly mean whichever directory the reader runs in, or a folder
    named by spaces beside the config), `~user` for a user this machine does not know,
    and a path longer than the system opens (PATH_MAX): a source of a megabyte-long path
    was taken, failed every sweep, and put that megabyte in every `ken status`."""
    if not os.fspath(value).strip():
        raise ValueError("is empty; name a directory (a relative path is taken from the config file's directory)")
    try:
        path = Path(value).expanduser()
    except RuntimeError:
        user = Path(value).parts[0]
        raise ValueError(f"{value}: no home directory is known for {user}") from None
    # abspath, not absolute(): `--config ../lib/config.toml` names the folder lib, not
    # other/../lib, and `data_dir = "../data"` is shown and cited without the "..".
    path = path.absolute() if base is None else Path(os.path.abspath(Path(base) / path))
    size, limit = len(os.fsencode(path)), os.pathconf("/", "PC_PATH_MAX")
    if size >= limit:
        raise ValueError(f"is {size:,} bytes long; this system opens paths of at most {limit - 1:,}")
    return path


def same_folder(one: Path, other: Path) -> bool:
    """Whether two paths name one folder: a source written as a link (`current ->
    releases/r1`) and the folder it names, added again, had each file indexed twice."""
    return os.path.realpath(one) == os.path.realpath(other)


def config_dir(config: Path) -> Path:
    """The directory a config's relative paths are taken from: its target's, when the
    config is a link (a dotfiles checkout), so the link and the file name one library."""
    return Path(os.path.realpath(config)).parent


def socket_path(data_dir: Path, socket: Path | None) -> Path:
    return socket or data_dir / SOCKET_NAME


def config_path(explicit: str | os.PathLike[str] | None = None) -> Path:
    """The config file in force: the --config argument, then KENNING_CONFIG, then the default."""
    if explicit:
        return Path(explicit).expanduser()
    env = os.environ.get("KENNING_CONFIG")
    if env:
        return Path(env).expanduser()
    return default_config_path()


def shared_by_all(info: os.stat_result) -> bool:
    """A directory everyone may write in, kept so by its sticky bit (/tmp and its kin):
    the data directory or socket does not belong there, and no chmod of it is the fix,
    since it would break everyone else's use of it."""
    return bool(info.st_mode & stat.S_ISVTX and info.st_mode & 0o002)


def make_private_dirs(path: Path) -> None:
    """Create `path` mode 0700, and each missing directory above it without write access
    for others (0755 at most), whatever the umask.

    `mkdir -p` makes them by the umask, and under umask 000 another user could then
    rename kenning's folders away and put files of their own in their place: a config
    that sends the notes to a server of theirs, a log they read, a unit file that runs
    their program. Directories that already exist are left as they are."""
    missing = []
    while not path.exists():
        missing.append(path)
        path = path.parent
    for directory in reversed(missing):
        # The umask can only take bits away from the mode, never add write for others.
        directory.mkdir(mode=0o700 if directory == missing[0] else 0o755, exist_ok=True)


def write_privately(path: Path, text: str, keep_mode: bool = False) -> None:
    """Put `text` at `path` whole, in folders `make_private_dirs` makes: written beside it
    and renamed over it, so no reader (the daemon reloading a config, a service manager
    reading its unit, `ken stop` a daemon's record) sees half of it, and a failed write
    leaves what was there. The new file is 0600 (mkstemp's mode: never readable by more
    than the result allows), or with `keep_mode` the mode of the file it replaces, so a
    config made readable by a group stays so."""
    make_private_dirs(path.parent)
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        if keep_mode and path.exists():
            os.chmod(temporary, stat.S_IMODE(path.stat().st_mode))
        os.replace(temporary, path)
    except BaseException:
        os.unlink(temporary)
        raise


def not_yours(path: Path, exc: OSError) -> str:
    """The one line for a library path (the data directory, its lock, the socket) this
    user may not open, naming the folder or file in the way and whose it is: another
    user's library named by a shared config, or one that `sudo ken` left owned by root."""
    blocker = _blocker(path)
    if blocker is None:
        why = "it or a folder above it is not open to you"
    elif blocker[1].st_uid != os.getuid():
        why = f"{blocker[0]} belongs to {_user_name(blocker[1].st_uid)}"
    else:
        why = f"{blocker[0]} is yours but mode {stat.S_IMODE(blocker[1].st_mode):03o}"
    return (
        f"cannot open {path}: {exc.strerror or exc}: {why}; run ken as its owner (chown it back if `sudo ken`"
        " made it), or set [daemon] data_dir to a directory of your own"
    )


def served_by_another(path: Path, uid: int) -> str:
    """The one line for a socket whose daemon runs as another user: a `[daemon] socket`
    in a shared folder such as /tmp can be bound by anyone before kenning's daemon is."""
    return (
        f"the daemon on {path} runs as {_user_name(uid)}, not as you: ken sends it nothing, since what"
        " you ask and what agents save would be theirs to read; set [daemon] socket to a path in a"
        " folder of your own"
    )


def _blocker(path: Path) -> tuple[Path, os.stat_result] | None:
    """The last part of `path`, from the top, this user can still look at: the folder it
    may not enter, or `path` itself when only opening it is refused."""
    seen = None
    for part in [*reversed(path.absolute().parents), path.absolute()]:
        try:
            seen = (part, os.stat(part))
        except PermissionError:
            return seen
        except OSError:
            return None
    return seen


def _user_name(uid: int) -> str:
    try:
        return f"{pwd.getpwuid(uid).pw_name} (uid {uid})"
    except KeyError:
        return f"uid {uid}"


def cannot_create(path: Path) -> str | None:
    """Why the directory `path` cannot be made, as far as can be told without trying:
    the nearest part of it that exists is a file, or a directory this user may not
    write in. None when nothing is seen in the way."""
    existing = next(parent for parent in path.absolute().parents if parent.exists())
    if not existing.is_dir():
        return f"{existing} is a file, not a directory"
    if not os.access(existing, os.W_OK | os.X_OK):
        return f"{existing} is not writable by this user"
    return None
