"""Which chunks a search may return: from active sources, narrowed by source name,
namespace or kind of document (files, pages, agent text, capsules, archives, ledger
entries), and by the date a chunk speaks from.

A source holds a document it owns and a document it is a location of (its own copy was
collapsed into another source's), so a scoped search matches either. A document's kind
is its source's kind: every aggregate source holds one kind of document. Dates are ISO
prefixes whose length is their precision (see kenning/text/dates.py): a chunk dated
`2025` overlaps `since 2025-06`, so each bound is compared at the coarser of the two
precisions; a quarter, kept as its first month, is compared with `since` by its last.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass

from kenning.store import until_commit
from kenning.store.database import Database, read_until_cancelled
from kenning.store.sources import SOURCE_KIND_OF

# Scopes whose sources are kept until the next commit.
SCOPES = 256
# A scope holding at most this many chunks is searched among them alone (store/fts.py,
# store/vector_index.py); a wider one is searched over the library and filtered.
FEW_CHUNKS = 5_000

# The date a chunk `i` of document `d` speaks from: its dated lines' (a changelog entry, a
# chat message), unless they come after the date its document states it was written,
# which makes them dates it looks ahead to (a notice of 20 February headed "Supplements
# from 1 April"); else its document's.
_OWN_LINES = (
    "i.date IS NOT NULL AND (d.date IS NULL OR d.date_source = 'modified'"
    " OR substr(i.date, 1, length(d.date)) <= d.date)"
)
CHUNK_DATE = f"(CASE WHEN {_OWN_LINES} THEN i.date ELSE d.date END)"
# How that date was found: "line" for a dated line's that is not its document's date,
# else its document's date_source.
CHUNK_DATE_SOURCE = f"(CASE WHEN {_OWN_LINES} AND i.date IS NOT d.date THEN 'line' ELSE d.date_source END)"
# Where that date starts, for `until`: a log's chunk speaks from its last dated line and
# holds its lines from its first (items.date_first; NULL in a chunk stored before it).
CHUNK_DATE_START = f"(CASE WHEN {_OWN_LINES} THEN coalesce(i.date_first, i.date) ELSE d.date END)"
# Where that period ends, for `since`: a document dated `Q3 2025` speaks from `2025-07`
# through `2025-09` (store/records.py `date_end`).
CHUNK_DATE_END = f"(CASE WHEN {_OWN_LINES} THEN i.date ELSE coalesce(d.date_end, d.date) END)"


@dataclass(frozen=True)
class Scope:
    source: str | None = None
    namespace: str | None = None
    kinds: tuple[str, ...] = ()
    since: str | None = None
    until: str | None = None

    def _kind_clause(self, source: str) -> tuple[str, list[object]]:
        return f"{source}.kind IN ({', '.join('?' * len(self.kinds))})", [SOURCE_KIND_OF[k] for k in self.kinds]

    def _conditions(self, source: str, document: str) -> tuple[str, list[object]]:
        # A document's own namespace (agent text may name one) overrides its source's.
        clauses, params = [f"{source}.active = 1"], []
        if self.source is not None:
            clauses.append(f"{source}.name = ?")
            params.append(self.source)
        if self.kinds:
            clause, kind_params = self._kind_clause(source)
            clauses.append(clause)
            params += kind_params
        if self.namespace is not None:
            clauses.append(f"coalesce({document}.namespace, {source}.namespace) = ?")
            params.append(self.namespace)
        return " AND ".join(clauses), params

    def where(self) -> tuple[str, list[object]]:
        """A SQL condition on items `i`, their documents `d` and owning sources `s`, with its parameters."""
        owner, owner_params = self._conditions("s", "d")
        located, located_params = self._conditions("ls", "ld")
        clause = (
            f"(({owner}) OR EXISTS (SELECT 1 FROM documents ld JOIN sources ls ON ls.id = ld.source_id"
            f" WHERE ld.merged_into = d.id AND {located}))"
        )
        params = [*owner_params, *located_params]
        if self.since is not None:
            clause += f" AND {CHUNK_DATE_END} >= substr(?, 1, length({CHUNK_DATE_END}))"
            params.append(self.since)
        if self.until is not None:
            clause += f" AND substr({CHUNK_DATE_START}, 1, length(?)) <= ?"
            params += [self.until, self.until]
        return clause, params

    def _holders(self) -> tuple[str, list[object]] | None:
        """A statement whose rows `(id, merged_into)` name every document that may hold
        the scope's chunks, found by index: those its source or namespace names, and each
        one's owner when it is only a location of another's copy (`where` keeps which).
        None when the scope names neither, and so may hold anything."""
        if self.source is not None:
            return (
                "SELECT d.id, d.merged_into FROM documents d"
                " WHERE d.source_id = (SELECT id FROM sources WHERE name = ?)",
                [self.source],
            )
        if self.namespace is not None:
            # A document's own namespace (m026's index), else its source's.
            return (
                "SELECT d.id, d.merged_into FROM documents d WHERE d.namespace = ? UNION ALL"
                " SELECT d.id, d.merged_into FROM documents d WHERE d.namespace IS NULL"
                " AND d.source_id IN (SELECT id FROM sources WHERE namespace = ?)",
                [self.namespace, self.namespace],
            )
        return None

    async def few_chunks(self, db: Database) -> list[int] | None:
        """`few_chunks_now` on a reader, stopped if its caller is cancelled; a scope that
        names no source or namespace takes none."""
        if self._holders() is None:
            return None
        async with db.reader() as conn:
            return await read_until_cancelled(conn, self.few_chunks_now)

    def few_chunks_now(self, conn: sqlite3.Connection) -> list[int] | None:
        """The ids of the scope's chunks, ascending, when it names a source or namespace
        whose documents hold at most FEW_CHUNKS; None when it names neither (it may hold
        anything) or holds more: the whole library searched and filtered finds its best
        sooner than a list of them would. Every read is by index and bounded."""
        holders = self._holders()
        if holders is None:
            return None
        sql, params = holders
        rows = conn.execute(f"{sql} LIMIT ?", [*params, FEW_CHUNKS + 1]).fetchall()
        if len(rows) > FEW_CHUNKS:
            return None
        documents = json.dumps(sorted({document_id for row in rows for document_id in row if document_id is not None}))
        [(held,)] = conn.execute(
            "SELECT count(*) FROM (SELECT 1 FROM items WHERE document_id IN (SELECT value FROM json_each(?)) LIMIT ?)",
            [documents, FEW_CHUNKS + 1],
        ).fetchall()
        if held > FEW_CHUNKS:
            return None
        where, where_params = self.where()
        chunks = conn.execute(
            "SELECT i.id FROM items i JOIN documents d ON d.id = i.document_id JOIN sources s ON s.id = d.source_id"
            f" WHERE i.document_id IN (SELECT value FROM json_each(?)) AND {where} ORDER BY i.id",
            [documents, *where_params],
        ).fetchall()
        return [item_id for (item_id,) in chunks]

    def cited_location(self) -> tuple[str, list[object]]:
        """A join naming, as `at_d` and `at_s`, the location a hit on document `d` cites when
        its owner `s` is out of scope (another source, or one no longer configured) and
        one of the copies it holds is in: a search scoped to a source cites that source's
        file. Both are NULL when the owner is in scope."""
        owner, owner_params = self._conditions("s", "d")
        located, located_params = self._conditions("cs", "cd")
        join = (
            f"LEFT JOIN documents at_d ON NOT ({owner}) AND at_d.id = (SELECT cd.id FROM documents cd"
            f" JOIN sources cs ON cs.id = cd.source_id WHERE cd.merged_into = d.id AND {located}"
            " ORDER BY cd.id LIMIT 1) LEFT JOIN sources at_s ON at_s.id = at_d.source_id"
        )
        return join, [*owner_params, *located_params]

    async def source_ids(self, db: Database) -> set[int]:
        """Sources whose items may be in scope: a superset, which the hit loader narrows.

        Matching sources, sources with a document in the namespace, and owners of
        documents a matching source holds as a location. Every vector search asks, and
        the answer only changes when something is written: it is kept until the writer
        commits again.
        """

        async def read(scopes: list[Scope]) -> dict[Scope, set[int]]:
            return {scope: await scope._read_source_ids(db) for scope in scopes}

        return (await until_commit.cache(db, "scope sources", SCOPES).get([self], read))[self]

    async def _read_source_ids(self, db: Database) -> set[int]:
        clauses, params = ["s.active = 1"], []
        if self.source is not None:
            clauses.append("s.name = ?")
            params.append(self.source)
        if self.kinds:
            clause, kind_params = self._kind_clause("s")
            clauses.append(clause)
            params += kind_params
        if self.namespace is not None:
            clauses.append(
                "(s.namespace = ? OR EXISTS (SELECT 1 FROM documents n WHERE n.source_id = s.id AND n.namespace = ?))"
            )
            params += [self.namespace, self.namespace]
        matching = " AND ".join(clauses)
        sql = (
            f"WITH matching AS (SELECT s.id FROM sources s WHERE {matching})"
            " SELECT id FROM matching UNION SELECT d.source_id FROM documents ld"
            " JOIN documents d ON d.id = ld.merged_into"
            " WHERE ld.merged_into IS NOT NULL AND ld.source_id IN (SELECT id FROM matching)"
        )
        async with db.reader() as conn:
            rows = await read_until_cancelled(conn, lambda raw: raw.execute(sql, params).fetchall())
        return {row[0] for row in rows}
