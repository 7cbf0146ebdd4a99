"""Handing freed heap back to the operating system after bulk work.

An initial ingest or a re-embed allocates and frees hundreds of megabytes of small
Python objects; glibc keeps the freed pages in the process, so an idle daemon would
look as large as it was at its peak. malloc_trim returns them. Elsewhere (macOS, musl)
this is a no-op.

There is deliberately no `gc.collect()` here: a full collection is one C call that holds
the GIL throughout, and on a large heap it held the event loop for hundreds of
milliseconds even when run from a worker thread. malloc_trim is a foreign call, which
ctypes makes with the GIL released.
"""

from __future__ import annotations

import ctypes
import ctypes.util


def _load_trim():
    name = ctypes.util.find_library("c")
    if name is None:
        return None
    try:
        return ctypes.CDLL(name).malloc_trim
    except (OSError, AttributeError):
        return None


_malloc_trim = _load_trim()


def release_free_memory() -> None:
    if _malloc_trim is not None:
        _malloc_trim(0)
