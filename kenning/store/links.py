"""Links an agent states between documents: this document supersedes that one.

An agent adding a document may say it supersedes others, naming each by the uri it gave
them, a fetched page's URL, or a file's absolute path. The link is stored with the
document that states it, under the key the named document is stored by (an agent key,
a page key, or a file's path key: each a hash of the name, store/keys.py), so it holds
whether the named document arrives before or after, and it goes when the stating
document goes. Nothing is deleted: the superseded document stays searchable, and its
hits carry `superseded_by`. Two documents
that each say they supersede the other leave the later word standing: the one updated
last is current; so do documents saying so in a ring (A replaces C, B replaces A, C
replaces B).
"""

from __future__ import annotations

import dataclasses
import sqlite3
from dataclasses import dataclass
from typing import TYPE_CHECKING

from kenning.store.database import Database

if TYPE_CHECKING:
    # scope.py imports sources.py, which imports documents.py, which imports this module.
    from kenning.store.scope import Scope

SUPERSEDES = "supersedes"
# How many links beyond the hits a ring of supersessions is followed (`superseders`).
RING_DEPTH = 8


def replace_links(conn: sqlite3.Connection, document_id: int, kind: str, targets: list[str]) -> None:
    """The document's links of this kind become `targets` (keys), inside the caller's transaction."""
    conn.execute("DELETE FROM document_links WHERE document_id = ? AND kind = ?", (document_id, kind))
    conn.executemany(
        "INSERT OR IGNORE INTO document_links (document_id, kind, target) VALUES (?, ?, ?)",
        [(document_id, kind, target) for target in targets],
    )


@dataclass(frozen=True)
class Superseder:
    """The newest document that states it supersedes another, and its first chunk."""

    document_id: int
    item_id: int


async def superseders(db: Database, document_ids: list[int], scope: Scope) -> dict[int, Superseder]:
    """For each given document that another states it supersedes, that other (the latest
    one added, when several do), cited at its first chunk in the source, namespace and
    kinds the search is scoped to. One outside them is no superseder there: a search
    scoped to one namespace would otherwise hand out an item id in another, and rank
    its own hit down for text it may not show. The dates asked about do not count: text
    superseded after them was still replaced, and says so."""
    found: dict[int, tuple[int, float, int]] = {}
    # The superseders' own superseders too, so that a ring is seen whole though some of it
    # answered no question (A and C among the hits, B not), a few links deep at most.
    asked = set(document_ids)
    asking = list(asked)
    for _ in range(RING_DEPTH):
        if not asking:
            break
        found.update(await _stated_over(db, asking, scope))
        asking = list({by for by, _, _ in found.values()} - asked)
        asked.update(asking)
    _break_cycles(found)
    return {
        document_id: Superseder(found[document_id][0], found[document_id][2])
        for document_id in document_ids
        if document_id in found
    }


async def _stated_over(db: Database, document_ids: list[int], scope: Scope) -> dict[int, tuple[int, float, int]]:
    """For each given document that another states it supersedes: that other, when it was
    updated, and its first chunk in the scope."""
    where, scope_params = dataclasses.replace(scope, since=None, until=None).where()
    # A document is named by its own key or by any copy's merged into it: the same file in
    # a second folder is stored once, and an agent may name either path. A file's key is
    # the hash of its absolute path (store/keys.py `path_key`, a function of every
    # connection), as the link holds it.
    rows = await db.read(
        "SELECT o.id, l.document_id, by.updated_at, (SELECT i.id FROM items i JOIN documents d ON d.id = i.document_id"
        f" JOIN sources s ON s.id = d.source_id WHERE d.id = coalesce(by.merged_into, by.id) AND {where}"
        " ORDER BY i.ord LIMIT 1)"
        " FROM documents o JOIN documents n ON n.id = o.id OR n.merged_into = o.id JOIN sources ns ON ns.id = n.source_id"
        " JOIN document_links l ON l.kind = ? AND l.target ="
        " (CASE WHEN ns.kind = 'folder' THEN path_key(rtrim(ns.root, '/') || '/' || n.path) ELSE n.path END)"
        " JOIN documents by ON by.id = l.document_id JOIN sources bs ON bs.id = by.source_id"
        f" WHERE o.id IN ({', '.join('?' * len(document_ids))}) AND l.document_id != o.id"
        # Two that each say they supersede the other: the later word stands.
        " AND NOT EXISTS (SELECT 1 FROM document_links back WHERE back.document_id = o.id AND back.kind = ?"
        " AND o.updated_at > by.updated_at AND back.target ="
        " (CASE WHEN bs.kind = 'folder' THEN path_key(rtrim(bs.root, '/') || '/' || by.path) ELSE by.path END))"
        " ORDER BY by.updated_at",
        [*scope_params, SUPERSEDES, *document_ids, SUPERSEDES],
    )
    return {document_id: (by, said_at, item_id) for document_id, by, said_at, item_id in rows if item_id is not None}


def _break_cycles(found: dict[int, tuple[int, float, int]]) -> None:
    """Documents that say in a ring that each supersedes the next (A replaces C, B
    replaces A, C replaces B) leave the later words standing, as two that name each
    other do: the link stated first goes, so the document updated last is current.
    `found` maps a document to the one that says it supersedes it, when that one was
    updated, and its item."""
    for start in list(found):
        ring = [start]
        while ring[-1] in found:
            following = found[ring[-1]][0]
            if following == start:
                del found[min(ring, key=lambda document_id: found[document_id][1])]
                break
            if following in ring:
                break
            ring.append(following)
