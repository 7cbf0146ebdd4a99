"""Short names agents pass back: `m-…` capsules, `a-…` archives, `l-…` ledger entries;
and the `version` a page of a document or an archive carries, to pass with the next.

Lower-case base32 (no 0/1/8/9 to misread) keeps them short, unambiguous when read
aloud or retyped, and safe in a uri. A capsule's or ledger entry's id is random: its
identity is the record, not its text, which changes. An archive's handle comes from its
stored text, so archiving the same output twice gives the same handle.
"""

from __future__ import annotations

import base64
import re
import secrets

from kenning.errors import InvalidRequest

RANDOM_BYTES = 5  # 8 base32 characters: 2^40 ids, collisions checked anyway
# A page's version: a digest of what its text is cut from, cut to 16 hex digits.
_VERSION = re.compile(r"[0-9a-f]{16}")


def random_handle(prefix: str) -> str:
    return f"{prefix}-{base64.b32encode(secrets.token_bytes(RANDOM_BYTES)).decode().lower()}"


def digest_handle(prefix: str, digest: bytes, length: int) -> str:
    """The first `length` base32 characters of a digest: the caller lengthens it on a clash."""
    return f"{prefix}-{base64.b32encode(digest).decode().lower().rstrip('=')[:length]}"


def check_version(version: str | None) -> None:
    """Refuse a version no page gives: compared as it is, it was reported as a text
    changed since that version ("changed since version zz"), which it never had."""
    if version is not None and not _VERSION.fullmatch(version):
        raise InvalidRequest(f"{version!r} is no page's version: pass back the `version` a page gave")
