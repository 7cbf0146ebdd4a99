"""The `ken` command; its subcommands register on `main` as their modules load."""

from kenning.cli import agent_memory, agents, library, service
from kenning.cli.app import main

__all__ = ["agent_memory", "agents", "library", "main", "service"]
