"""`ken mcp`: the MCP server agents use, a client of the daemon's socket like the CLI.

Client side only: this package imports kenning.client, kenning.config and kenning.errors,
never the daemon or anything under it. Its modules import the `mcp` SDK absolutely; the
package's own name never shadows it.
"""
