"""The `ken` command group: the shared context, and how errors reach the terminal.

Every subcommand but `daemon` and `sources add` talks to the daemon over its socket;
domain errors become one line on stderr and a non-zero exit.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import click

from kenning import __version__
from kenning.client import Client
from kenning.config import Settings, config_path, load_settings
from kenning.errors import KenningError


class Context:
    def __init__(self, config: str | None) -> None:
        self.config_path = config_path(config)
        self._settings: Settings | None = None

    @property
    def settings(self) -> Settings:
        if self._settings is None:
            self._settings = load_settings(self.config_path)
        return self._settings

    def call(self, method: str, params: dict[str, Any] | None = None, timeout: float | None = 60.0) -> Any:
        return Client(self.settings.daemon.socket_path, timeout=timeout).call(method, params)


pass_context = click.make_pass_decorator(Context)


class KenGroup(click.Group):
    """Turns kenning's own errors into one line and exit status 1, anywhere below."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except KenningError as exc:
            click.echo(f"ken: {exc}", err=True)
            sys.exit(1)


def print_json(value: Any) -> None:
    click.echo(json.dumps(value, indent=2, ensure_ascii=False))


@click.group(cls=KenGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--config",
    "config",
    envvar="KENNING_CONFIG",
    type=click.Path(dir_okay=False),
    help="Config file (default: ~/.config/kenning/config.toml; env KENNING_CONFIG).",
)
@click.version_option(__version__, prog_name="kenning")
@click.pass_context
def main(ctx: click.Context, config: str | None) -> None:
    """kenning: a local knowledge library. Search the folders you register, with citations."""
    ctx.obj = Context(config)


