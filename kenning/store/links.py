"""Links an agent states between documents: this document supersedes that one.

An agent adding a document may say it supersedes others, naming each by the uri it gave
them, a fetched page's URL, or a file's absolute path. The link is stored with the
document that states it, under the key the named document is stored by (an agent key,
a page key, or a file's path key: each a hash of the name, store/keys.py), so it holds
whether the named document arrives before or after, and it goes when the stating
document goes. Nothing is deleted: the superseded document stays searchable, and its
hits carry `superseded_by`. Two documents
that each say they supersede the other leave the later word standing: the one updated
last is current.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

from kenning.store.database import Database

SUPERSEDES = "supersedes"


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


async def superseders(db: Database, document_ids: list[int]) -> dict[int, Superseder]:
    """For each given document that another states it supersedes, that other (the latest
    one added, when several do)."""
    if not document_ids:
        return {}
    # A document is named by its own key or by any copy's merged into it: the same file in
    # a second folder is stored once, and an agent may name either path. A file's key is
    # the hash of its absolute path (store/keys.py `path_key`, a function of every
    # connection), as the link holds it.
    rows = await db.read(
        "SELECT d.id, l.document_id, (SELECT i.id FROM items i WHERE i.document_id = coalesce(by.merged_into, by.id)"
        " ORDER BY i.ord LIMIT 1)"
        " FROM documents d JOIN documents n ON n.id = d.id OR n.merged_into = d.id JOIN sources s ON s.id = n.source_id"
        " JOIN document_links l ON l.kind = ? AND l.target ="
        " (CASE WHEN s.kind = 'folder' THEN path_key(rtrim(s.root, '/') || '/' || n.path) ELSE n.path END)"
        " JOIN documents by ON by.id = l.document_id JOIN sources bs ON bs.id = by.source_id"
        f" WHERE d.id IN ({', '.join('?' * len(document_ids))}) AND l.document_id != d.id"
        # Two that each say they supersede the other: the later word stands.
        " AND NOT EXISTS (SELECT 1 FROM document_links back WHERE back.document_id = d.id AND back.kind = ?"
        " AND d.updated_at > by.updated_at AND back.target ="
        " (CASE WHEN bs.kind = 'folder' THEN path_key(rtrim(bs.root, '/') || '/' || by.path) ELSE by.path END))"
        " ORDER BY by.updated_at",
        [SUPERSEDES, *document_ids, SUPERSEDES],
    )
    return {document_id: Superseder(by, item_id) for document_id, by, item_id in rows if item_id is not None}
