"""A blocking JSON-RPC client for the daemon's socket, used by the CLI and the MCP server."""

from __future__ import annotations

import itertools
import json
import socket
from pathlib import Path
from typing import Any

from kenning.errors import DaemonNotRunning, RpcError

_ids = itertools.count(1)


class Client:
    def __init__(self, socket_path: Path, timeout: float | None = 60.0) -> None:
        self.socket_path = socket_path
        self.timeout = timeout

    def call(self, method: str, params: dict[str, Any] | None = None) -> Any:
        request = {"jsonrpc": "2.0", "id": next(_ids), "method": method, "params": params or {}}
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        conn.settimeout(self.timeout)
        try:
            try:
                conn.connect(str(self.socket_path))
            except (FileNotFoundError, ConnectionRefusedError):
                raise DaemonNotRunning(
                    f"kenning daemon is not running (no answer on {self.socket_path}); start it with `ken daemon`"
                ) from None
            conn.sendall(json.dumps(request).encode() + b"\n")
            with conn.makefile("rb") as stream:
                line = stream.readline()
        finally:
            conn.close()
        if not line:
            raise DaemonNotRunning("kenning daemon closed the connection without answering")
        response = json.loads(line)
        if "error" in response:
            raise RpcError(response["error"].get("code", 0), response["error"].get("message", "unknown error"))
        return response["result"]
