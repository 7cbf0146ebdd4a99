"""The `ken` command. Subcommands live in modules of their own and are loaded when they
are run (see `COMMANDS` in app.py), so a command starts without importing the others."""

from kenning.cli.app import main

__all__ = ["main"]
