"""Commands for agents: `ken mcp`."""

from __future__ import annotations

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
    from kenning.mcp.server import serve

    serve(ctx.settings)
