"""Cursors for the lists an agent pages through while others write (`memory.list`,
`archive.list`).

Paging by offset counts rows from the top: a capsule added while an agent reads page 2
pushes one it has seen onto page 3 (read twice), and one forgotten pulls an unseen one
back onto page 2 (never read). A cursor instead names the last entry returned, by a key
that never changes (when it was created, then its id), and the next page starts strictly
after it: entries added or removed meanwhile move nothing else, and the entry the cursor
names need not exist any more.

A cursor is opaque to clients but not secret: it is base64url of a small JSON object.
One forged by hand can only start a page at some position, which any client may ask for;
so it is checked for shape, not signed. It also names the list and the filters it was
given for, so a cursor from another list, or from the same list filtered otherwise, is
refused rather than quietly continuing some other walk.
"""

from __future__ import annotations

import base64
import binascii
import json
import math
from dataclasses import dataclass
from typing import Any

from kenning.errors import InvalidRequest

VERSION = 1
# Filters are scopes, kinds and flags; a cursor longer than this was not made here.
MAX_CURSOR_CHARS = 1000
_KEYS = {"v", "list", "filters", "at", "id"}


@dataclass(frozen=True)
class Position:
    """The last entry a page returned: the next page starts strictly after it."""

    created_at: float
    id: str


def encode(listing: str, filters: dict[str, Any], position: Position) -> str:
    state = {"v": VERSION, "list": listing, "filters": filters, "at": position.created_at, "id": position.id}
    raw = json.dumps(state, separators=(",", ":"), ensure_ascii=False).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode(cursor: str, listing: str, filters: dict[str, Any]) -> Position:
    """The position a cursor continues from; -32602 (InvalidRequest) for one this list
    did not give, or gave for other filters."""
    state = _state(cursor)
    if state is None:
        raise InvalidRequest(
            f"cursor is not one {listing} gave: pass back `next_cursor` exactly as it came, or leave cursor out"
            " to start from the newest"
        )
    if state["list"] != listing:
        raise InvalidRequest(f"cursor was given by another list, not {listing}: leave it out to start from the newest")
    changed = [name for name in filters if state["filters"].get(name) != filters[name]]
    if changed or set(state["filters"]) != set(filters):
        names = ", ".join(changed) or "set of filters"
        raise InvalidRequest(
            f"cursor continues {listing} with another {names}: ask with the same filters as the page it came"
            " with, or leave cursor out to start again"
        )
    return Position(state["at"], state["id"])


def _state(cursor: str) -> dict[str, Any] | None:
    """The decoded cursor when it has the shape `encode` gives, else None."""
    if len(cursor) > MAX_CURSOR_CHARS:
        return None
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        state = json.loads(raw.decode())
    except (binascii.Error, ValueError):
        return None
    if not isinstance(state, dict) or set(state) != _KEYS or type(state["v"]) is not int or state["v"] != VERSION:
        return None
    at, entry_id = state["at"], state["id"]
    if not isinstance(at, float) or not math.isfinite(at) or not isinstance(entry_id, str) or not entry_id:
        return None
    if not isinstance(state["list"], str) or not isinstance(state["filters"], dict):
        return None
    return state
