"""How every kenning process writes its log: the daemon, its parse workers, `ken mcp`.

A record is one line of bounded length. Its message quotes what it is about, and that
may be anything a user or a file gives: a source path of a megabyte in the config (logged
at every sweep, a megabyte each time), a file name holding a newline (which wrote a line
of its own, one that reads as another record), a bug's exception quoting a whole chunk.
The log is rotated past a size (daemon/logfile.py), so a flood of such lines pushed out
what came before them, and `ken start` quotes the log's last lines when a daemon would
not start.
"""

from __future__ import annotations

import logging
import sys
from types import TracebackType

from kenning.errors import error_text
from kenning.text.controls import escaped

FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
# A traceback keeps its frames: each of its lines is cut as a message is, and the whole
# at this, its start and its end kept (where the work began, what was raised).
MAX_TRACEBACK_CHARS = 20_000

ExcInfo = tuple[type[BaseException], BaseException, TracebackType | None] | tuple[None, None, None]


class BoundedFormatter(logging.Formatter):
    """A record's message on one line (line breaks and other controls as escapes),
    cut as an error is where a user sees it (kenning.errors.error_text)."""

    def formatMessage(self, record: logging.LogRecord) -> str:
        record.message = error_text(escaped(record.message))
        return super().formatMessage(record)

    def formatException(self, ei: ExcInfo) -> str:
        lines = super().formatException(ei).splitlines()
        text = "\n".join(error_text(line) for line in lines)
        if len(text) <= MAX_TRACEBACK_CHARS:
            return text
        # Its start says where the work began, its end what was raised: cut at its start
        # alone, a recursion's thousand frames lost the "RecursionError" line itself.
        half = MAX_TRACEBACK_CHARS // 2
        return f"{text[:half]}\n… [{len(text) - 2 * half:,} characters of frames cut] …\n{text[-half:]}"


def configure(level: str) -> None:
    """Log records at `level` and above to stderr, which the daemon's log file is."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(BoundedFormatter(FORMAT))
    logging.basicConfig(level=level.upper(), handlers=[handler])
