"""The identity of a document's text, for exact dedup across sources.

It is computed over the stored chunks, not the raw bytes, so a PDF and the same PDF
copied elsewhere agree, and so it can be recomputed from the database alone (the
migration that introduced it backfilled every existing document this way).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

# Joins chunk texts so that ["ab", "c"] and ["a", "bc"] hash differently.
_SEPARATOR = b"\x1e"


def text_hash(chunks: Iterable[str]) -> str:
    digest = hashlib.sha256()
    for chunk in chunks:
        digest.update(chunk.encode())
        digest.update(_SEPARATOR)
    return digest.hexdigest()
