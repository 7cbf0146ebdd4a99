"""Short names agents pass back: `m-…` capsules, `a-…` archives, `l-…` ledger entries.

Lower-case base32 (no 0/1/8/9 to misread) keeps them short, unambiguous when read
aloud or retyped, and safe in a uri. A capsule's or ledger entry's id is random: its
identity is the record, not its text, which changes. An archive's handle comes from its
stored text, so archiving the same output twice gives the same handle.
"""

from __future__ import annotations

import base64
import secrets

RANDOM_BYTES = 5  # 8 base32 characters: 2^40 ids, collisions checked anyway


def random_handle(prefix: str) -> str:
    return f"{prefix}-{base64.b32encode(secrets.token_bytes(RANDOM_BYTES)).decode().lower()}"


def digest_handle(prefix: str, digest: bytes, length: int) -> str:
    """The first `length` base32 characters of a digest: the caller lengthens it on a clash."""
    return f"{prefix}-{base64.b32encode(digest).decode().lower().rstrip('=')[:length]}"
