"""The typed Library API: what the socket server and the MCP server offer, in one place."""
