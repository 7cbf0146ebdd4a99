"""tomllib, held to what a config file can need: every reader of config.toml reads and
parses it here.

A config is user input, and two shapes of it cost far more than their size. Nesting
(`x = [[[[…`, or inline tables) is parsed by recursion: past Python's limit it raised
RecursionError, which every `ken` command printed as a traceback of thousands of lines.
A dotted key of n parts (`a.a.a.…`, as a key or a table header) makes tomllib keep n
tuples of up to n parts each: a 40 kB line took 10 s and 1.6 GB, and a 200 kB one had
the daemon killed for memory on `ken reload`. No setting is more than three parts deep.
"""

from __future__ import annotations

import errno
import os
import re
import stat
import tomllib
from pathlib import Path
from typing import Any

# Far past any config: the largest real ones are a few kilobytes.
MAX_CONFIG_BYTES = 16 << 20
MAX_KEY_PARTS = 32
_PART = r"""(?:[A-Za-z0-9_-]++|"[^"\n]*+"|'[^'\n]*+')"""
# A key of more than MAX_KEY_PARTS parts. The look-behind starts a match only where a
# part starts, so a long run of key characters is scanned once, not from each of them.
_DEEP_KEY = re.compile(rf"(?<![A-Za-z0-9_-]){_PART}(?:[ \t]*+\.[ \t]*+{_PART}){{{MAX_KEY_PARTS},}}")


def read_text(path: Path) -> str:
    """The file's text; OSError for one that is no regular file or is too large to be a
    config, UnicodeDecodeError for one that is not UTF-8.

    `--config /dev/zero` was read until memory ran out, and a FIFO (or a link to one)
    held every `ken` command, and the daemon's reload, until something wrote to it: it
    is opened without waiting for a writer, and refused."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    with os.fdopen(fd, "rb") as file:
        mode = os.fstat(file.fileno()).st_mode
        if stat.S_ISDIR(mode):
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR))
        if not stat.S_ISREG(mode):
            raise OSError(errno.EINVAL, "not a regular file (a FIFO, a device or a socket)")
        data = file.read(MAX_CONFIG_BYTES + 1)
    if len(data) > MAX_CONFIG_BYTES:
        raise OSError(errno.EFBIG, f"over {MAX_CONFIG_BYTES >> 20} MB, far more than a config holds")
    return data.decode("utf-8")


def parse(text: str) -> dict[str, Any]:
    """The TOML document `text`, or TOMLDecodeError saying where it is too deep to read."""
    _refuse_deep_keys(text)
    try:
        return tomllib.loads(text)
    except RecursionError:
        raise tomllib.TOMLDecodeError("arrays or inline tables nested too deeply to read") from None


def _refuse_deep_keys(text: str) -> None:
    for number, line in enumerate(text.splitlines(), start=1):
        # A key is what comes before the `=` (a table header has none), so a value that
        # is a dotted name of many parts is not taken for one; only a line with that
        # many dots can hold such a key, and the others cost a count.
        key = line.partition("=")[0]
        if key.count(".") >= MAX_KEY_PARTS and _DEEP_KEY.search(key):
            raise tomllib.TOMLDecodeError(
                f"a dotted key of more than {MAX_KEY_PARTS} parts (line {number}); no setting is that deep"
            )
