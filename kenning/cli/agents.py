"""Commands for agents: `ken mcp`."""

from __future__ import annotations

import gc

from kenning.cli.app import Context, main, pass_context


@main.command()
@pass_context
def mcp(ctx: Context) -> None:
    """Serve MCP on stdin/stdout for an agent's MCP client (register it as `ken mcp`).

    \b
    Examples:
      claude mcp add kenning -- ~/.local/bin/ken mcp
      ken --config ~/work/kenning.toml mcp     # an MCP client's "args": ["--config", "...", "mcp"]
    """
    # Imported here: the SDK takes about a second to import, which no other command should pay.
    # The cyclic collector is off until the server is built (serve() turns it on again):
    # the SDK makes tens of thousands of objects that live as long as the process, and
    # collections going over them again and again while they were made were a tenth of
    # the CPU `ken mcp` spent before it answered `initialize` (bench/mcp_start.py).
    gc.disable()
    from kenning.mcp.server import serve

    serve(ctx.settings)
