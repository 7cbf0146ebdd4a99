"""Keeping the daemon's heap small after bulk work.

An initial ingest or a re-embed allocates and frees hundreds of megabytes of small
Python objects across the daemon's threads. glibc gives each thread that allocates its
own arena (up to eight per core), and freed memory in those arenas mostly stays in the
process: measured with bench/ingest.py-sized libraries, a re-embed of 24,500 chunks left
134 MB behind with the default arenas and 32 MB with two. So the daemon caps the arenas
before it starts any thread, and returns free pages with malloc_trim after bulk passes.
Elsewhere (macOS, musl) both are no-ops.

There is deliberately no `gc.collect()` here: a full collection is one C call that holds
the GIL throughout, and on a large heap it held the event loop for hundreds of
milliseconds even when run from a worker thread. malloc_trim is a foreign call, which
ctypes makes with the GIL released.
"""

from __future__ import annotations

import ctypes
import ctypes.util


# mallopt's parameter numbers (malloc.h).
M_MMAP_THRESHOLD = -3
M_ARENA_MAX = -8
ARENAS = 2
# Blocks at least this large get pages of their own, returned when freed. Setting it
# also stops glibc raising the threshold as large blocks come and go, which otherwise
# lets the embedder's and the index's multi-megabyte arrays land in (and bloat) the heap.
MMAP_THRESHOLD = 256 * 1024


def _libc_function(name: str):
    library = ctypes.util.find_library("c")
    if library is None:
        return None
    try:
        return getattr(ctypes.CDLL(library), name)
    except (OSError, AttributeError):
        return None


_malloc_trim = _libc_function("malloc_trim")
_mallopt = _libc_function("mallopt")


def limit_arenas() -> None:
    """Cap glibc's malloc arenas and fix the mmap threshold; to be called before the
    process starts any thread."""
    if _mallopt is not None:
        _mallopt(M_ARENA_MAX, ARENAS)
        _mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD)


def release_free_memory() -> None:
    if _malloc_trim is not None:
        _malloc_trim(0)
