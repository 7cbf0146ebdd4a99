"""`ken` and the MCP server send nothing to a socket another user's process listens on.

A `[daemon] socket` in a shared folder (/tmp, say) can be bound by anyone before kenning's
daemon is; whoever did would read every question and every text an agent saves. The
tests run as root, so the squatter runs as nobody through setpriv."""

from __future__ import annotations

import asyncio
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from kenning.client import AsyncClient, Client
from kenning.errors import RpcError, SocketNotYours

NOBODY = 65534
# Listens on the path, and logs how many bytes each connection sent before it closed.
SQUATTER = textwrap.dedent(
    """
    import socket, sys
    path, log = sys.argv[1], sys.argv[2]
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    server.listen(8)
    open(log + ".ready", "w").close()
    while True:
        conn, _ = server.accept()
        conn.settimeout(5)
        received = 0
        try:
            while chunk := conn.recv(65536):
                received += len(chunk)
        except OSError:
            pass
        with open(log, "a") as out:
            out.write(f"{received}\\n")
        conn.close()
    """
)


@pytest.fixture
def squatted() -> Iterator[tuple[Path, Path]]:
    """A socket path in a folder anyone may write to, already bound by another user."""
    shared = Path(tempfile.mkdtemp(prefix="kshared", dir="/tmp"))
    os.chmod(shared, 0o777)
    path, log = shared / "kenning.sock", shared / "received.log"
    python = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
    as_nobody = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"]
    squatter = subprocess.Popen([*as_nobody, python, "-c", SQUATTER, str(path), str(log)])
    try:
        deadline = time.monotonic() + 30
        while not Path(f"{log}.ready").exists():
            assert squatter.poll() is None and time.monotonic() < deadline, "the squatter did not start"
            time.sleep(0.05)
        assert path.stat().st_uid == NOBODY
        yield path, log
    finally:
        squatter.kill()
        squatter.wait()
        shutil.rmtree(shared, ignore_errors=True)


def test_a_socket_another_user_listens_on_gets_nothing(squatted, tmp_path: Path):
    path, log = squatted
    config = tmp_path / "config.toml"
    config.write_text(f'[daemon]\ndata_dir = "{tmp_path / "data"}"\nsocket = "{path}"\n')
    answer = subprocess.run(
        [sys.executable, "-m", "kenning", "--config", str(config), "search", "the staging database password"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert answer.returncode == 1
    assert answer.stderr.startswith(f"ken: the daemon on {path} runs as nobody (uid {NOBODY}), not as you")
    assert answer.stderr.count("\n") == 1, answer.stderr
    # The MCP server's client refuses the same way.
    with pytest.raises(SocketNotYours, match="not as you"):
        asyncio.run(AsyncClient(path, timeout=10).call("documents.add", {"text": "a secret to keep"}))
    with pytest.raises(SocketNotYours):
        Client(path, timeout=10).call("status")
    assert _received(log, connections=3) == [0, 0, 0]


def _received(log: Path, connections: int) -> list[int]:
    """The bytes each connection brought the squatter, once it has logged them all."""
    deadline = time.monotonic() + 10
    while not log.exists() or len(log.read_text().split()) < connections:
        assert time.monotonic() < deadline, "the squatter never saw the connections close"
        time.sleep(0.05)
    return [int(count) for count in log.read_text().split()]


@pytest.mark.parametrize(
    "answer",
    [b"SSH-2.0-OpenSSH_9.6\n", b"[1, 2]\n", b'"ok"\n', b'{"jsonrpc": "2.0", "id": 1}\n', b'{"error": "denied"}\n'],
)
def test_an_answer_that_is_no_json_rpc_answer_is_one_error(answer: bytes, tmp_path: Path):
    """Something of this user's other than kenning's daemon on the socket (a stale path in
    the config, another program's socket) answers what is not kenning's: `ken` printed
    msgspec's DecodeError, a KeyError or a TypeError as a Python traceback."""
    path = tmp_path / "kenning.sock"
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(path))
    server.listen(1)

    def answer_once() -> None:
        conn, _ = server.accept()
        with conn:
            conn.recv(65536)
            conn.sendall(answer)

    listener = threading.Thread(target=answer_once)
    listener.start()
    try:
        with pytest.raises(RpcError, match="is not an answer kenning's daemon gives") as raised:
            Client(path, timeout=10).call("status")
        assert "\n" not in str(raised.value)
    finally:
        listener.join(30)
        server.close()
