"""The Unix-socket JSON-RPC server.

Requests on one connection are answered in order; connections are independent. Any
malformed input gets a JSON-RPC error and the connection stays usable, an oversized
line included: its rest is skipped up to the next newline.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec
from pydantic import BaseModel, ValidationError

from kenning.daemon import protocol
from kenning.errors import ConfigError, InvalidRequest, KenningError, NotFound

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Method:
    params: type[BaseModel]
    handler: Callable[[Any], Awaitable[Any]]


def _describe(error: ValidationError) -> str:
    parts = []
    for item in error.errors():
        where = ".".join(str(p) for p in item["loc"])
        message = "unknown parameter" if item["type"] == "extra_forbidden" else item["msg"]
        parts.append(f"{where}: {message}" if where else message)
    return "; ".join(parts)


class RpcServer:
    def __init__(self, path: Path, methods: dict[str, Method]) -> None:
        self.path = path
        self.methods = methods
        self._server: asyncio.Server | None = None
        self._connections: set[asyncio.Task] = set()

    async def start(self) -> None:
        self._server = await asyncio.start_unix_server(
            self._serve, path=str(self.path), limit=protocol.MAX_LINE_BYTES
        )
        os.chmod(self.path, 0o600)
        log.info("listening on %s", self.path)

    async def stop(self, timeout: float = 5.0) -> None:
        """Stop accepting, give open requests `timeout` to finish, then cut them off."""
        if self._server is None:
            return
        self._server.close()
        if self._connections:
            _, pending = await asyncio.wait(self._connections, timeout=timeout)
            for task in pending:
                task.cancel()
            await asyncio.gather(*pending, return_exceptions=True)
        await self._server.wait_closed()
        self._server = None
        self.remove_socket()

    def remove_socket(self) -> None:
        self.path.unlink(missing_ok=True)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._connections.add(task)
        try:
            while True:
                line = await self._read_line(reader)
                if line is None:
                    await self._send(writer, protocol.error_response(
                        None, protocol.INVALID_REQUEST, f"request larger than {protocol.MAX_LINE_BYTES} bytes"
                    ))
                    continue
                if not line:
                    break
                if not line.strip():
                    continue
                response = await self.handle_line(line)
                if response is not None:
                    await self._send(writer, response)
        except (ConnectionResetError, BrokenPipeError):
            pass
        finally:
            self._connections.discard(task)
            writer.close()

    @staticmethod
    async def _read_line(reader: asyncio.StreamReader) -> bytes | None:
        """One request line; b"" at end of input; None for a line over the limit.

        An oversized line is discarded up to and including its newline, and no further,
        so the request after it on the same connection is still served.
        """
        try:
            return await reader.readuntil(b"\n")
        except asyncio.IncompleteReadError as exc:
            return exc.partial
        except asyncio.LimitOverrunError as exc:
            skip = exc.consumed
        while True:
            try:
                await reader.readexactly(skip)
                await reader.readuntil(b"\n")
                return None
            except asyncio.LimitOverrunError as exc:
                skip = exc.consumed
            except asyncio.IncompleteReadError:
                return None

    @staticmethod
    async def _send(writer: asyncio.StreamWriter, message: dict) -> None:
        # Results are the Library's dataclasses; msgspec encodes them as they are.
        writer.write(msgspec.json.encode(message) + b"\n")
        await writer.drain()

    async def handle_line(self, line: bytes) -> dict | None:
        try:
            request = json.loads(line)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            return protocol.error_response(None, protocol.PARSE_ERROR, f"parse error: {exc}")
        if not isinstance(request, dict):
            return protocol.error_response(None, protocol.INVALID_REQUEST, "a request must be a JSON object")
        request_id = request.get("id")
        if request.get("jsonrpc") != "2.0" or not isinstance(request.get("method"), str):
            return protocol.error_response(
                request_id, protocol.INVALID_REQUEST, 'a request needs "jsonrpc": "2.0" and a string "method"'
            )
        response = await self._dispatch(request_id, request["method"], request.get("params", {}))
        # A request without an id is a notification: it runs, and nothing is sent back.
        return response if "id" in request else None

    async def _dispatch(self, request_id: Any, name: str, raw_params: Any) -> dict:
        method = self.methods.get(name)
        if method is None:
            known = ", ".join(sorted(self.methods))
            return protocol.error_response(
                request_id, protocol.METHOD_NOT_FOUND, f"unknown method {name!r}; methods: {known}"
            )
        if raw_params is None:
            raw_params = {}
        if not isinstance(raw_params, dict):
            return protocol.error_response(request_id, protocol.INVALID_PARAMS, "params must be a JSON object")
        try:
            params = method.params.model_validate(raw_params)
        except ValidationError as exc:
            return protocol.error_response(request_id, protocol.INVALID_PARAMS, _describe(exc))
        try:
            result = await method.handler(params)
        except NotFound as exc:
            return protocol.error_response(request_id, protocol.NOT_FOUND, str(exc))
        except ConfigError as exc:
            return protocol.error_response(request_id, protocol.CONFIG_ERROR, str(exc))
        except InvalidRequest as exc:
            return protocol.error_response(request_id, protocol.INVALID_PARAMS, str(exc))
        except KenningError as exc:
            return protocol.error_response(request_id, protocol.INTERNAL_ERROR, str(exc))
        except Exception as exc:
            log.exception("method %s failed", name)
            return protocol.error_response(
                request_id, protocol.INTERNAL_ERROR, f"internal error: {type(exc).__name__}: {exc}"
            )
        return protocol.result_response(request_id, result)
