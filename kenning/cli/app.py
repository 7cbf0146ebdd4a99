"""The `ken` command group: the shared context, and how errors reach the terminal.

Every subcommand but `daemon` and `sources add` talks to the daemon over its socket;
domain errors become one line on stderr and a non-zero exit.

Start-up time is part of the interface: `ken search` is typed many times a day. So a
command's module is loaded only when it runs (`COMMANDS`), this module imports only
click at load time, and the socket's location comes from `kenning.config.locate`
(tomllib only): the full settings model (pydantic) is loaded only by the commands that
need more of the config than that (bench/cli_start.py measures it).
"""

from __future__ import annotations

import os
import re
import sys
from importlib import import_module
from pathlib import Path
from types import EllipsisType
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

import click

from kenning import __version__
from kenning.config.paths import config_path
from kenning.errors import AnswerLost, ConfigError, DaemonNotRunning, DaemonTimeout, KenningError, error_text

if TYPE_CHECKING:
    from kenning.client import Client
    from kenning.config.locate import Locations
    from kenning.config.settings import Settings

T = TypeVar("T")
# Seconds, None for no limit, or `...` for CALL_TIMEOUT, read when the call is made.
Wait = float | None | EllipsisType
# How long a command waits for the daemon's answer unless it says otherwise.
CALL_TIMEOUT = 60.0


class Context:
    def __init__(self, config: str | None) -> None:
        self.config_path = config_path(config)
        # A file named by --config or KENNING_CONFIG must exist: silently running on the
        # defaults would hide the typo in its name.
        self.explicit = config is not None
        self._settings: Settings | None = None
        self._locations: Locations | None = None

    def creates_config(self) -> None:
        """For a command that writes the config (`sources add`): a missing file is made."""
        self.explicit = False

    def require_config(self) -> None:
        if self.explicit and not self.config_path.exists():
            raise ConfigError(
                f"config file {self.config_path} does not exist (named by --config or KENNING_CONFIG);"
                " create it (one holding `sources = []` runs on the defaults with no folders) or leave the option out"
            )

    @property
    def settings(self) -> Settings:
        if self._settings is None:
            from kenning.config.loading import load_settings

            self.require_config()
            self._settings = load_settings(self.config_path)
        return self._settings

    @property
    def locations(self) -> Locations:
        """Data directory and socket, without validating the whole config when it can be helped."""
        if self._locations is None:
            from kenning.config.locate import Locations, locate

            self.require_config()
            found = None if self._settings is not None else locate(self.config_path)
            if found is None:
                daemon = self.settings.daemon
                found = Locations(daemon.data_dir, daemon.socket_path)
            self._locations = found
        return self._locations

    def client(self, timeout: Wait = ...) -> Client:
        """`timeout`: seconds to wait for each answer, None for as long as it takes; left
        out, CALL_TIMEOUT."""
        from kenning.client import Client

        return Client(self.locations.socket, timeout=CALL_TIMEOUT if timeout is ... else timeout)

    def call(self, method: str, params: dict[str, Any] | None = None, timeout: Wait = ...) -> Any:
        return self.client(timeout).call(method, params)

    def fetch(
        self,
        method: str,
        result_type: type[T],
        params: dict[str, Any] | None = None,
        timeout: Wait = ...,
        *,
        progress: bool = False,
    ) -> T:
        """Call a daemon method and decode its answer into its kenning.api record
        (`progress`: see Client.call)."""
        return self.client(timeout).fetch(method, result_type, params, progress=progress)

    def daemon_reads_another(self) -> Path | None:
        """The config the running daemon reads, when it is not this command's: one found
        through the data directory another config names too, whose reload re-reads its
        own file. Raises DaemonNotRunning."""
        from kenning import api

        reads = Path(self.fetch("status", api.Status).daemon.config)
        return None if reads.resolve() == Path(self.config_path).resolve() else reads


pass_context = click.make_pass_decorator(Context)


# Which module defines each command. A command's module is imported when the command is
# run (or listed, for --help and completion), so `ken search` loads the search command
# and not the lifecycle, doctor or MCP code. A new command module adds its names here.
COMMANDS = {
    **dict.fromkeys(
        ("search", "show", "get", "open", "entities", "add-text", "remove", "add-url", "refresh-url"), "library"
    ),
    **dict.fromkeys(("daemon", "status", "reload", "dedup", "reembed", "compact"), "service"),
    **dict.fromkeys(("sources", "scan"), "sources"),
    **dict.fromkeys(("start", "stop", "restart", "service"), "lifecycle"),
    **dict.fromkeys(("memory", "archive", "recall", "ledger", "context"), "agent_memory"),
    "doctor": "doctor",
    "mcp": "agents",
}


class KenGroup(click.Group):
    """Loads each command's module when it is needed, and turns kenning's own errors into
    one line and exit status 1, anywhere below."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(super().list_commands(ctx)) | set(COMMANDS))

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name not in self.commands and name in COMMANDS:
            # The module registers its commands on `main` as it loads.
            import_module(f"kenning.cli.{COMMANDS[name]}")
        return super().get_command(ctx, name)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except AnswerLost as exc:
            # A write the daemon stopped on may have been done: saying why no daemon
            # answers would hide that, and send the user to do it again blind.
            _fail(_how_to_check(exc, exc.method) if exc.writes else str(_not_answering(ctx.obj) or exc))
        except DaemonTimeout as exc:
            # The daemon goes on with a write its client gave up on: as for one it
            # stopped on, the user is told how to see whether it was done.
            _fail(_how_to_check(exc, exc.method) if exc.writes else str(exc))
        except DaemonNotRunning as exc:
            _fail(str(_not_answering(ctx.obj) or exc))
        except KenningError as exc:
            # A message may quote the library: a file's name (`ken open`, `ken get`), a
            # failure's reason, the daemon's log when it would not start.
            _fail(str(exc))
        except click.ClickException as exc:
            # A usage error quotes the value it refuses whole: a 100 KB path given to
            # `ken sources add` filled the terminal. Click shows it, cut.
            exc.message = error_text(exc.message)
            raise


def _fail(message: str) -> NoReturn:
    """An error as `ken` ends on it: one message on stderr, cut as the daemon cuts its
    own (a config value, a path or a name it quotes may be any length), and status 1."""
    click.echo(for_terminal(f"ken: {error_text(message)}", err=True), err=True)
    sys.exit(1)


def _how_to_check(error: KenningError, method: str | None) -> str:
    return f"{error}: {_CHECK.get(method or '', _CHECK_STATUS)}"


# How a user tells whether a write the daemon stopped on (AnswerLost) or did not answer
# in time (DaemonTimeout) was done.
_CHECK_STATUS = "`ken status` shows where the library stands"
_CHECK = {
    "documents.add": "`ken get URI` shows whether it was stored; adding it again under that uri replaces it",
    "documents.remove": "`ken get URI` shows whether it is still there",
    "urls.add": "`ken get URL` shows the page once it is stored",
    "urls.refresh": "`ken get URL` shows the page as it is stored",
    "memory.add": "`ken memory list` shows whether it was kept; adding it again with the same title and scope"
    " updates that capsule",
    "memory.forget": "`ken memory show ID` shows whether it is still kept",
    "archive.add": "`ken archive list` shows whether it was stored; archiving the same text again gives the same handle",
    "ledger.add": "`ken ledger list` shows whether it was recorded; adding it again merges into the same entry",
    "ledger.remove": "`ken ledger list` shows whether it is still there",
    "sources.remove": "`ken sources list` shows whether it is still there",
    "sources.scan": "`ken status` shows the source's sweep and when it last ended",
    "reload": "`ken sources list` shows the sources the daemon took up",
    "reembed": "`ken status` shows the embedder's job re-embedding",
    "compact": "`ken status` shows the database's size",
}


def _not_answering(context: Context | None) -> str | None:
    """Why no daemon answered, when one started from this config runs all the same:
    "start it with `ken start`" would send the user to a command that refuses, or to a
    second daemon. It is still starting, or it listens where the config said when it
    started (`[daemon] socket` or `data_dir` was edited since), which `ken restart` moves."""
    if context is None:
        return None
    from kenning.cli.lifecycle import not_answering

    try:
        return not_answering(context)
    except KenningError:
        return None


def print_json(value: Any) -> None:
    """A kenning.api record (or plain data) as indented JSON, the shape docs/protocol.md gives."""
    import msgspec

    click.echo(msgspec.json.format(msgspec.json.encode(value), indent=2).decode())


# What a terminal would act on rather than show: C0 and C1 controls but tab and newline
# (an escape sequence can retitle the window, write a link, clear the screen), a carriage
# return that ends no line, and the bidirectional overrides that reorder what is shown.
_UNSHOWN = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]|\r(?!\n)")


def for_terminal(text: str, err: bool = False) -> str:
    """Text from the library as printed to stdout (stderr with `err`): on a terminal, what
    it would act on as escapes (`\\x1b`); piped, as stored, since `ken recall > file` must
    give the text back exactly. A note or an agent's document may hold anything."""
    if not (sys.stderr if err else sys.stdout).isatty():
        return text
    return _UNSHOWN.sub(lambda found: found[0].encode("unicode_escape").decode(), text)


def echo_notes(warnings: list[str]) -> None:
    """Why a search behind an answer ran short (a retrieval leg skipped, the index
    loading), on stderr so the answer on stdout stays as it is. A warning may quote a
    backend's own error text, which may hold anything: escaped, as status shows it."""
    from kenning.text.controls import escaped

    for warning in warnings:
        click.echo(click.style(f"note: {escaped(warning)}", fg="yellow"), err=True)


def stdin_text(missing: str) -> str:
    """Standard input exactly as given: read as bytes, so CRLF line endings stay as they
    were (an archive promises the text back as stored), and decoded as UTF-8 strictly,
    so other bytes are an error rather than a traceback or a silent substitution.
    `missing` is the error when it holds no text, or when there is none (`<&-`: Python
    then has no sys.stdin at all)."""
    if sys.stdin is None:
        raise KenningError(missing)
    data = sys.stdin.buffer.read()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise KenningError(
            f"standard input is not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start});"
            " convert it first, e.g. iconv -f latin1 -t utf-8"
        ) from None
    if not text.strip():
        raise KenningError(missing)
    return text


def json_option(function: Any) -> Any:
    return click.option("--json", "as_json", is_flag=True, help="Print the daemon's answer as JSON.")(function)


def no_color() -> bool:
    """NO_COLOR (no-color.org): present and not empty turns colour off."""
    return bool(os.environ.get("NO_COLOR"))


@click.group(
    cls=KenGroup,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
    epilog="Run `ken COMMAND --help` for a command's options and examples. Start here: `ken doctor`.",
)
@click.option(
    "--config",
    "config",
    envvar="KENNING_CONFIG",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Config file (default: ~/.config/kenning/config.toml; env KENNING_CONFIG). It must exist.",
)
@click.version_option(__version__, "--version", "-V", prog_name="kenning")
@click.pass_context
def main(ctx: click.Context, config: Path | None) -> None:
    """kenning: a local knowledge library. Search the folders you register, with citations.

    \b
    Examples:
      ken start                        run the daemon in the background
      ken sources add ~/notes --wait   index a folder and follow it until it is searchable
      ken search "rotate the signing key"
      ken get ~/notes/keys.md --lines 10-40
    """
    if no_color():
        ctx.color = False
    ctx.obj = Context(str(config) if config is not None else None)
