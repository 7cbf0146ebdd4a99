"""Which sources a search may return hits from: active ones, narrowed by name or namespace."""

from __future__ import annotations

from dataclasses import dataclass

import aiosqlite


@dataclass(frozen=True)
class Scope:
    source: str | None = None
    namespace: str | None = None

    def where(self) -> tuple[str, list[object]]:
        """A SQL condition on the sources table aliased `s`, with its parameters."""
        clauses, params = ["s.active = 1"], []
        if self.source is not None:
            clauses.append("s.name = ?")
            params.append(self.source)
        if self.namespace is not None:
            clauses.append("s.namespace = ?")
            params.append(self.namespace)
        return " AND ".join(clauses), params

    async def source_ids(self, conn: aiosqlite.Connection) -> set[int]:
        where, params = self.where()
        rows = await conn.execute_fetchall(f"SELECT s.id FROM sources s WHERE {where}", params)
        return {row[0] for row in rows}
