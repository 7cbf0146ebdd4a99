"""The `ken` command; its subcommands register on `main` as their modules load."""

from kenning.cli import agents, library, service
from kenning.cli.app import main

__all__ = ["agents", "library", "main", "service"]
