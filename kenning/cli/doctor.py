"""`ken doctor`: what is wrong with this kenning, and what to do about each thing.

Each check looks at one thing a user can fix (the config, the data directory, the socket,
the daemon, the backends, disk space, the sources and the index) and says what it found
and, for a problem, the command or edit that fixes it. Problems make the exit status 1;
notes do not: a note is something to know (a drive that is not mounted, space to
reclaim), which nothing needs to be done about for kenning to work.
"""

from __future__ import annotations

import http.client
import json
import os
import re
import shutil
import stat
import time
import urllib.error
import urllib.request
from dataclasses import asdict, dataclass
from pathlib import Path

import click

from kenning import __version__, api
from kenning.cli.app import Context, main, pass_context
from kenning.cli.lifecycle import daemon_pid, moved_away, old_socket, pid_text, still_runs
from kenning.cli.status_view import ago, dimension_problem, left_out_line, megabytes
from kenning.config.paths import cannot_create, not_yours, shared_by_all, socket_path_too_long
from kenning.errors import ConfigError, DaemonNotRunning, KenningError, SocketNotYours, error_text
from kenning.store.damage import damage_in, what_to_do
from kenning.text.controls import escaped
from kenning.text.counts import counted

OK, NOTE, PROBLEM = "ok", "note", "problem"
# Below this, or below the database's own size (what `ken compact` needs), disk is short.
MIN_FREE_BYTES = 1 << 30
OLLAMA_TIMEOUT = 3.0
# Ollama's list of the models it has; thousands of them would be a few megabytes.
MAX_ANSWER_BYTES = 16 << 20


@dataclass
class Check:
    level: str
    what: str
    found: str
    fix: str = ""

    def __post_init__(self) -> None:
        # What a check found may quote an error's whole text: a config naming a source
        # with a megabyte made `ken doctor` print that megabyte, and `--json` hold it.
        self.found = error_text(self.found)


def run_checks(ctx: Context) -> list[Check]:
    checks: list[Check] = []
    settings = _config(ctx, checks)
    if settings is None:
        return checks
    daemon = settings.daemon
    _data_dir(daemon.data_dir, checks)
    _socket(daemon.socket_path, checks)
    roots_at = len(checks)
    # No daemon can listen on a socket path too long for one (reported above).
    status = _daemon(ctx, checks) if socket_path_too_long(daemon.socket_path) is None else None
    if status is None:
        _database(daemon.db_path, checks)
    # A folder gone with its drive is the daemon's to tell (`_index`: a drive away), and
    # is no problem; only the daemon knows the folder was on a drive.
    away = {source.name for source in status.sources if source.kept_unmounted} if status is not None else set()
    roots: list[Check] = []
    for source in settings.sources:
        if source.name not in away:
            _source_root(source.name, source.path, roots)
    checks[roots_at:roots_at] = roots
    if settings.embedder.backend == "ollama":
        _ollama("embedder", settings.embedder.base_url, settings.embedder.model_name, checks)
    if settings.llm.backend == "ollama":
        _ollama("entity extraction", settings.llm.base_url, settings.llm.model, checks)
    _disk(daemon.data_dir, status, checks)
    if status is not None:
        _index(status, settings, ctx, checks)
    return checks


def _config(ctx: Context, checks: list[Check]):
    if not ctx.config_path.exists() and not ctx.explicit:
        checks.append(
            Check(
                NOTE,
                "config",
                f"no file at {ctx.config_path}: the defaults apply, with no sources",
                "ken sources add PATH",
            )
        )
    try:
        settings = ctx.settings
    except ConfigError as exc:
        unreadable = ctx.config_path.exists() and not os.access(ctx.config_path, os.R_OK)
        fix = f"chmod u+r {ctx.config_path}" if unreadable else f"fix the named setting in {ctx.config_path}"
        checks.append(Check(PROBLEM, "config", str(exc), fix))
        return None
    if ctx.config_path.exists():
        checks.append(Check(OK, "config", f"{ctx.config_path} ({counted(len(settings.sources), 'source')})"))
        _config_writers(ctx.config_path, checks)
    return settings


def _config_writers(path: Path, checks: list[Check]) -> None:
    """A config (or the folder holding it) that other users may write lets them choose
    what the daemon reads and where it sends text (an Ollama URL of theirs): older
    kennings made ~/.config/kenning 0777 under umask 000."""
    target = Path(os.path.realpath(path))
    for place in (target, target.parent):
        mode = place.stat().st_mode
        if mode & 0o002 and not (stat.S_ISDIR(mode) and mode & stat.S_ISVTX):
            checks.append(
                Check(PROBLEM, "config", f"{place} can be changed by other users", f"chmod o-w {place}")
            )


def _data_dir(path: Path, checks: list[Check]) -> None:
    try:
        info = path.stat()
    except (FileNotFoundError, NotADirectoryError):
        info = None
    except OSError as exc:
        checks.append(Check(PROBLEM, "data directory", not_yours(path, exc), _OWN_DIRECTORY.format("data_dir")))
        return
    if info is None:
        blocked = cannot_create(path)
        if blocked:
            checks.append(
                Check(PROBLEM, "data directory", f"{path} cannot be created: {blocked}", "set [daemon] data_dir elsewhere")
            )
        else:
            checks.append(Check(NOTE, "data directory", f"{path} does not exist yet; the daemon creates it", "ken start"))
        return
    if not stat.S_ISDIR(info.st_mode):
        checks.append(Check(PROBLEM, "data directory", f"{path} is not a directory", "set [daemon] data_dir elsewhere"))
    elif shared_by_all(info):
        checks.append(
            Check(PROBLEM, "data directory", f"{path} is shared with other users", _OWN_DIRECTORY.format("data_dir"))
        )
    elif info.st_uid != os.getuid():
        checks.append(
            Check(
                PROBLEM,
                "data directory",
                f"{path} belongs to another user (uid {info.st_uid})",
                f"chown -R {os.getuid()} {path}",
            )
        )
    elif info.st_mode & 0o077:
        checks.append(Check(PROBLEM, "data directory", f"{path} can be read by other users", f"chmod 700 {path}"))
    elif not os.access(path, os.W_OK | os.X_OK):
        checks.append(Check(PROBLEM, "data directory", f"{path} is not writable", f"chmod u+rwx {path}"))
    else:
        checks.append(Check(OK, "data directory", f"{path} (private)"))


def _socket(path: Path, checks: list[Check]) -> None:
    if socket_path_too_long(path):
        checks.append(
            Check(
                PROBLEM,
                "socket",
                f"{path} is longer than a unix socket path may be",
                "set [daemon] socket to a shorter path",
            )
        )
        return
    parent = path.parent
    try:
        info = parent.stat()
    except (FileNotFoundError, NotADirectoryError):
        return
    except OSError:
        # A folder this user cannot look into: the daemon check says what that means.
        return
    if shared_by_all(info):
        checks.append(Check(PROBLEM, "socket", f"{parent} is shared with other users", _OWN_DIRECTORY.format("socket")))
    elif info.st_mode & 0o077:
        checks.append(Check(PROBLEM, "socket", f"{parent} can be read by other users", f"chmod 700 {parent}"))


_OWN_DIRECTORY = "set [daemon] {} to a place in a directory of your own"


def _database(path: Path, checks: list[Check]) -> None:
    """A stopped daemon's database, which a start would refuse: `ken start` is not the
    fix then, and nothing else says so until it is tried."""
    try:
        present = path.is_file()
    except OSError:
        return
    if present and (exc := damage_in(path)) is not None:
        checks.append(
            Check(PROBLEM, "database", f"{path} is damaged ({exc}): the daemon cannot start on it", what_to_do())
        )


def _source_root(name: str, path: Path, checks: list[Check]) -> None:
    if not path.exists():
        checks.append(
            Check(
                PROBLEM,
                f"source {name}",
                f"{path} is gone; its index is kept, and the daemon indexes it again once it is back",
                f"mount or restore it, or `ken sources remove {name}`",
            )
        )
    elif not path.is_dir():
        checks.append(Check(PROBLEM, f"source {name}", f"{path} is not a folder", f"ken sources remove {name}"))
    elif not os.access(path, os.R_OK | os.X_OK):
        checks.append(Check(PROBLEM, f"source {name}", f"{path} cannot be read", f"chmod u+rx {path}"))


def _daemon(ctx: Context, checks: list[Check]) -> api.Status | None:
    try:
        status = ctx.client(timeout=10).fetch("status", api.Status)
    except DaemonNotRunning:
        holder = daemon_pid(ctx.locations.data_dir)
        moved = moved_away(ctx)
        if holder is not None:
            where = old_socket(ctx, holder)
            checks.append(
                Check(
                    PROBLEM,
                    "daemon",
                    f"a daemon ({pid_text(holder)}) holds {ctx.locations.data_dir}"
                    f" but does not answer on {ctx.locations.socket}"
                    + (f": it listens on {where}" if where else ""),
                    "ken restart" if where else "ken stop, then ken start (its log: ken service status)",
                )
            )
        elif moved:
            checks.append(
                Check(
                    PROBLEM,
                    "daemon",
                    f"not running on {ctx.locations.data_dir}, but {still_runs(moved[0])}",
                    f"ken restart (stops it and starts one on {ctx.locations.data_dir})",
                )
            )
        else:
            checks.append(
                Check(PROBLEM, "daemon", "not running", "ken start (or ken service install, to start it at login)")
            )
        return None
    except SocketNotYours as exc:
        named = "data_dir" if ctx.locations.socket.parent == ctx.locations.data_dir else "socket"
        checks.append(Check(PROBLEM, "daemon", str(exc), _OWN_DIRECTORY.format(named)))
        return None
    except KenningError as exc:
        checks.append(Check(PROBLEM, "daemon", f"answers, but not as this ken expects: {exc}", "ken restart"))
        return None
    for record in moved_away(ctx):
        checks.append(
            Check(PROBLEM, "daemon", f"a second daemon runs: {still_runs(record)}", "ken restart (stops both, starts one)")
        )
    info = status.daemon
    if info.version != __version__:
        checks.append(
            Check(
                PROBLEM,
                "daemon",
                f"runs kenning {info.version}, this ken is {__version__}",
                "ken restart (it then runs this version)",
            )
        )
    else:
        checks.append(Check(OK, "daemon", f"pid {info.pid}, up {ago(info.uptime_seconds)}, kenning {info.version}"))
    if Path(info.config).resolve() != ctx.config_path.resolve():
        checks.append(
            Check(
                PROBLEM,
                "daemon config",
                f"the daemon reads {info.config}, this ken reads {ctx.config_path}",
                "give both the same --config (or KENNING_CONFIG), then ken restart",
            )
        )
    job = status.embedder.job
    if status.embedder.vectors is None and job.state == "waiting":
        # Bringing the index up failed (stored vectors it cannot read), not the embedder:
        # its config is no fix, and "cannot embed" was untrue.
        checks.append(
            Check(
                PROBLEM,
                "embedder",
                f"vector search is off: {job.last_error}",
                "the daemon's log says why; if its stored vectors cannot be read, `ken reembed` drops them"
                " and embeds every chunk again",
            )
        )
    elif job.state == "waiting" or (job.last_error and job.state != "embedding"):
        checks.append(
            Check(
                PROBLEM,
                "embedder",
                f"{status.embedder.backend} cannot embed: {job.last_error}",
                "see [embedder] in the config; new text stays keyword-searchable meanwhile",
            )
        )
    elif status.embedder.vectors is None:
        checks.append(Check(NOTE, "embedder", "the vector index is still loading"))
    else:
        checks.append(
            Check(
                OK,
                "embedder",
                f"{status.embedder.backend} {status.embedder.model}, {counted(status.embedder.vectors, 'vector')}, {job.state}",
            )
        )
    if status.embedder.left_out:
        # A note: the model fails on these texts whatever is done short of another model,
        # and the rest of the library is embedded.
        checks.append(Check(NOTE, "embedder", left_out_line(status.embedder.left_out)))
    # Apart from the job's state, which stays idle while the index holds vectors that no
    # query of the current model can be scored against.
    if problem := dimension_problem(status.embedder):
        checks.append(
            Check(PROBLEM, "vectors", problem, "ken reembed (embeds every chunk again with the current model)")
        )
    if status.graph.job.state == "waiting":
        checks.append(
            Check(
                PROBLEM,
                "entity extraction",
                f"waiting for its backend: {status.graph.job.last_error}",
                "see [llm] in the config; the offline extractor covers new chunks meanwhile",
            )
        )
    elif status.graph.failed:
        # The backend answers, but not usably for these chunks (a model that will not keep
        # to the JSON asked for): the job stays idle between retries, so only this shows
        # it; a problem while the latest answers still fail, a note once one has done well.
        last = status.graph.job.last_error
        checks.append(
            Check(
                PROBLEM if last else NOTE,
                "entity extraction",
                f"{counted(status.graph.failed, 'chunk')} failed with {status.graph.model}"
                + (f", the last with: {last}" if last else ""),
                "they have the offline extractor's entities meanwhile and are retried with backoff;"
                " if the count keeps growing, set another [llm] model (or backend = \"offline\")",
            )
        )
    return status


def _ollama(role: str, base_url: str, model: str, checks: list[Check]) -> None:
    models = _served(base_url)
    if isinstance(models, tuple):
        checks.append(Check(PROBLEM, f"ollama ({role})", *models))
        return
    wanted = {model, f"{model}:latest"}
    if not wanted & models:
        checks.append(Check(PROBLEM, f"ollama ({role})", f"{base_url} does not have {model}", f"ollama pull {model}"))
    else:
        checks.append(Check(OK, f"ollama ({role})", f"{base_url} serves {model}"))


def _served(base_url: str) -> set[str] | tuple[str, str]:
    """The models Ollama at `base_url` lists, or what is wrong there and what to do."""
    try:
        listed = json.loads(_answer(base_url.rstrip("/") + "/api/tags"))
    except _Overdue:
        return (
            f"{base_url} did not answer within {OLLAMA_TIMEOUT:g} s",
            "restart Ollama (it answers, but never finishes); the daemon gives up on it the same way",
        )
    except _CutShort as exc:
        return (
            f"{base_url} answered, but the answer was cut short ({exc})",
            "see Ollama's own log (journalctl -u ollama), and any proxy between it and kenning",
        )
    except urllib.error.HTTPError as exc:
        if 300 <= exc.code < 400:
            return (
                f"{base_url} answered with a redirect (HTTP {exc.code}), which kenning does not follow",
                "set base_url to the address Ollama answers at",
            )
        return f"{base_url} answered HTTP {exc.code} ({exc.reason})", "see Ollama's own log (journalctl -u ollama)"
    except (urllib.error.URLError, OSError) as exc:
        return f"not reachable at {base_url}: {getattr(exc, 'reason', exc)}", "start it: ollama serve"
    except ValueError as exc:
        models, what = None, type(exc).__name__
    else:
        models, what = _model_names(listed), "JSON of another shape"
    if models is None:
        # Something answers there, but not as Ollama lists its models: a proxy's error
        # page, another program on the port. A list or a null there was a traceback.
        return (
            f"{base_url} does not answer as Ollama does ({what} for /api/tags)",
            "check that base_url names the Ollama server, not a proxy or another program",
        )
    return models


class _Overdue(Exception):
    """An answer still arriving at its deadline."""


class _CutShort(Exception):
    """An answer whose connection closed before all of it came. urllib ends the read
    early without a word when a Content-Length is not met, and the half answer was taken
    for one that is not Ollama's JSON."""


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: object, **kwargs: object) -> None:
        return None


def _answer(url: str) -> bytes:
    """The body at `url`, whole within OLLAMA_TIMEOUT. urllib's timeout bounds each read
    alone: a server sending a byte at a time held `ken doctor` for good. Asked as the
    daemon asks (workers/ollama_http.py): of `url` itself, through no proxy of the
    environment and following no redirect, so the two agree on whether it answers."""
    deadline = time.monotonic() + OLLAMA_TIMEOUT
    body = bytearray()
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}), _NoRedirect())
    with opener.open(url, timeout=OLLAMA_TIMEOUT) as answer:
        try:
            while chunk := answer.read1(1 << 16):
                body += chunk
                if time.monotonic() > deadline:
                    raise _Overdue
                if len(body) > MAX_ANSWER_BYTES:
                    raise ValueError(f"an answer over {MAX_ANSWER_BYTES >> 20} MB")
        except http.client.IncompleteRead:
            raise _CutShort(f"{len(body):,} bytes came before the connection closed") from None
        if answer.length:
            # Bytes it announced that never came.
            raise _CutShort(
                f"{len(body):,} bytes of the {len(body) + answer.length:,} it announced came before the connection closed"
            )
    return bytes(body)


def _model_names(listed: object) -> set[str] | None:
    """The names in an /api/tags answer; None when it is not Ollama's model list."""
    entries = listed.get("models") if isinstance(listed, dict) else None
    if not isinstance(entries, list):
        return None
    return {entry["name"] for entry in entries if isinstance(entry, dict) and isinstance(entry.get("name"), str)}


def _disk(data_dir: Path, status: api.Status | None, checks: list[Check]) -> None:
    where = data_dir
    # os.path.exists: a folder this user cannot look into (another user's) counts as
    # missing, and the disk is judged from the nearest one above it.
    while not os.path.exists(where) and where != where.parent:
        where = where.parent
    free = shutil.disk_usage(where).free
    db = status.daemon.db_bytes if status is not None else 0
    if free < max(MIN_FREE_BYTES, db):
        checks.append(
            Check(
                PROBLEM,
                "disk",
                f"{megabytes(free)} free on the disk of {data_dir}",
                "free some space: indexing stops when the disk is full, and `ken compact` needs the database's size",
            )
        )
    else:
        checks.append(Check(OK, "disk", f"{megabytes(free)} free"))


def _index(status: api.Status, settings, ctx: Context, checks: list[Check]) -> None:
    configured = {source.name for source in settings.sources}
    now = time.time()
    for source in status.sources:
        if source.kind != "folder":
            continue
        if source.name not in configured:
            checks.append(
                Check(
                    PROBLEM,
                    f"source {source.name}",
                    f"removed from the config, but its index ({counted(source.holds, 'document')}) is kept and not searched",
                    f"ken sources remove {source.name} (or add it back to the config)",
                )
            )
            continue
        if source.kept_unmounted:
            checks.append(_kept_away(source))
        elif source.last_error:
            checks.append(
                Check(PROBLEM, f"source {source.name}", source.last_error, f"ken scan {source.name} once it is fixed")
            )
        if source.not_watched:
            # A problem, not a note: following changes as they happen is what a source is
            # for, the periodic sweep only its safety net (edits wait up to
            # sweep_interval), and the fix is the user's, one command.
            checks.append(
                Check(
                    PROBLEM,
                    f"source {source.name}",
                    f"not watched, its changes wait for the periodic sweep: {source.not_watched}",
                    _raise_limit(source.not_watched, settings.daemon.watch_retry),
                )
            )
        for folder, reason in source.unreadable_folders.items():
            path = Path(source.path) / folder
            checks.append(
                Check(PROBLEM, f"source {source.name}", f"cannot read folder {path}: {reason}", f"chmod u+rx {path}")
            )
        for rel, reason in source.unreadable_files.items():
            path = Path(source.path) / rel
            fix = f"chmod u+r {path}"
            if path.is_symlink():
                # chmod follows a link to its target; what shuts a link is as often the
                # folder its target is in, which needs its search bit back.
                target = Path(os.path.realpath(path))
                fix = f"chmod u+x {target.parent}; chmod u+r {target}"
            checks.append(
                Check(PROBLEM, f"source {source.name}", f"cannot read {path}: {reason}; kept as last indexed", fix)
            )
        overdue = 3 * settings.daemon.sweep_interval
        if source.last_sweep_at and now - source.last_sweep_at > overdue and status.daemon.uptime_seconds > overdue:
            checks.append(
                Check(
                    PROBLEM,
                    f"source {source.name}",
                    f"last swept {ago(now - source.last_sweep_at)} ago",
                    f"ken scan {source.name} --wait; if it hangs, ken restart",
                )
            )
        if source.failed:
            checks.append(
                Check(
                    NOTE,
                    f"source {source.name}",
                    f"{counted(source.failed, 'file')} could not be read",
                    "ken status lists them with the reason",
                )
            )
    if status.daemon.free_bytes >= max(status.daemon.db_bytes // 4, 64 << 20):
        checks.append(
            Check(
                NOTE,
                "database",
                f"{megabytes(status.daemon.free_bytes)} of {megabytes(status.daemon.db_bytes)} is unused space",
                "ken compact",
            )
        )


def _raise_limit(why: str, retry: float) -> str:
    """The command the daemon named for the limit reached (ingest/watch.py
    `watch_failure`), or a restart once the cause is gone. `retry`: [daemon] watch_retry."""
    if commands := re.findall(r"`(sudo [^`]+)`", why):
        return "; ".join(commands) + f"; the watch is set up again within {retry:g} s"
    return "ken restart once the cause is fixed"


def _kept_away(source: api.SourceStatus) -> Check:
    """A drive or share that is not mounted (a USB disk unplugged, a share off the
    network) is everyday life, not a fault: its index is kept and nothing is deleted while
    it is away, so it is a note, which leaves the exit status alone."""
    held = f"{counted(source.holds, 'document')} {'stays' if source.holds == 1 else 'stay'} searchable as last indexed"
    if source.kept_unmounted == "unmounted":
        return Check(
            NOTE,
            f"source {source.name}",
            f"{source.path} is on a drive or share that is not mounted; its {held}, and none is deleted until it is back",
            f"mount it to bring its index up to date, or `ken sources remove {source.name}` if it is gone for good",
        )
    # "unknown": since an upgrade, whether it is on a drive is not known (ingest/scan.py).
    return Check(
        NOTE,
        f"source {source.name}",
        f"{source.path} may be on a drive or share that is not mounted (not known since kenning was upgraded);"
        f" its {held}, and nothing in it is read until that is settled",
        f"mount it; if its files were deleted on purpose, `ken sources remove {source.name}` and add the folder again",
    )


_MARK = {OK: ("ok", "green"), NOTE: ("note", "yellow"), PROBLEM: ("PROBLEM", "red")}


@main.command()
@click.option("--json", "as_json", is_flag=True, help="Print the checks as a JSON list.")
@pass_context
def doctor(ctx: Context, as_json: bool) -> None:
    """Check the config, data directory, socket, daemon, backends, disk, sources and index.

    Each problem comes with what to do about it; the exit status is 1 when there is one.
    Notes (a source whose drive is not mounted, space to reclaim) leave it 0.

    \b
    Examples:
      ken doctor
      ken doctor --json
    """
    checks = run_checks(ctx)
    if as_json:
        click.echo(json.dumps([asdict(check) for check in checks], indent=2))
    else:
        for check in checks:
            label, colour = _MARK[check.level]
            # What a check found may name a file in a source (a folder it cannot read), the
            # source's own folder, or quote a sweep's error: escaped as `ken status` shows
            # them, so each check stays one line and no escape sequence reaches the terminal.
            click.echo(
                f"{click.style(f'{label:<8}', fg=colour, bold=check.level == PROBLEM)}{check.what}:"
                f" {escaped(check.found)}"
            )
            if check.fix:
                click.echo(f"{'':8}→ {escaped(check.fix)}")
        problems = sum(check.level == PROBLEM for check in checks)
        click.echo(f"\n{problems} problem{'s' if problems != 1 else ''} found" if problems else "\nno problems found")
    if any(check.level == PROBLEM for check in checks):
        raise SystemExit(1)
