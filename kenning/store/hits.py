"""Loading the chunks a search found: citation fields, for the ids that are still there
and in scope, with the chunk's opening as a fallback snippet; and, for the best few, the
full text the truth signals read."""

from __future__ import annotations

from dataclasses import dataclass

from kenning.api import Hit
from kenning.store.database import Database
from kenning.store.lookup import display_path
from kenning.store.scope import CHUNK_DATE, CHUNK_DATE_SOURCE, Scope
from kenning.text.frontmatter import body

EXCERPT_CHARS = 200
# Read past a front matter block this long, so the fallback snippet opens with the body.
FRONT_MATTER_CHARS = 600
SQL_BATCH = 900

# Columns selected for a hit, in the order `_hit` reads them.
# The source, namespace and file cited are the owner's, or the in-scope copy's that
# `Scope.cited_location` joins as `at_d`, `at_s`.
_COLUMNS = (
    "i.id, d.id, i.title, coalesce(at_s.name, s.name),"
    " CASE WHEN at_d.id IS NULL THEN coalesce(d.namespace, s.namespace) ELSE coalesce(at_d.namespace, at_s.namespace) END,"
    " coalesce(at_s.root, s.root), coalesce(at_d.path, d.path), i.section, i.line_start, i.line_end,"
    " coalesce(at_d.mtime, d.mtime), CASE WHEN at_d.id IS NULL THEN d.uri ELSE at_d.uri END,"
    f" substr(i.content, 1, {EXCERPT_CHARS + FRONT_MATTER_CHARS}), {CHUNK_DATE}, at_d.id IS NOT NULL,"
    f" {CHUNK_DATE_SOURCE}"
)
_JOINS = "items i JOIN documents d ON d.id = i.document_id JOIN sources s ON s.id = d.source_id"


def _hit(row: tuple) -> Hit:
    return Hit(
        item_id=row[0],
        document_id=row[1],
        title=row[2],
        snippet=_opening(row[12]),
        source=row[3],
        namespace=row[4],
        path=display_path(row[5], row[6], row[11]),
        section=row[7],
        line_start=row[8],
        line_end=row[9],
        modified=row[10],
        date=row[13],
        date_source=row[15],
        copy=bool(row[14]),
    )


def _opening(lead: str) -> str:
    """A chunk's first words, after its front matter ("title: ... date: ... ---" says
    nothing the hit's title and date do not), on one line. A chunk longer than that is
    cut after a whole word and marked "…" as keyword snippets are: "ind" shown for "india"
    is a word the cited lines do not hold."""
    text = body(lead).strip() or lead
    if len(text) <= EXCERPT_CHARS:
        return " ".join(text.split())
    cut = text[: EXCERPT_CHARS + 1]
    space = max(cut.rfind(" "), cut.rfind("\n"), cut.rfind("\t"))
    return " ".join((cut[:space] if space > 0 else cut[:EXCERPT_CHARS]).split()) + "…"


async def load_hits(db: Database, ids: list[int], scope: Scope) -> dict[int, Hit]:
    """Hits for the item ids still present and in scope; the rest are left out."""
    if not ids:
        return {}
    where, params = scope.where()
    cited, cited_params = scope.cited_location()
    found: dict[int, Hit] = {}
    async with db.reader() as conn:
        for start in range(0, len(ids), SQL_BATCH):
            part = ids[start : start + SQL_BATCH]
            rows = await conn.execute_fetchall(
                f"SELECT {_COLUMNS} FROM {_JOINS} {cited} WHERE i.id IN ({', '.join('?' * len(part))}) AND {where}",
                [*cited_params, *part, *params],
            )
            found.update((row[0], _hit(row)) for row in rows)
    return found


# Dated chunks read for one search's period entries, at most: a chat export has one a day.
OWN_DATES = 200


async def own_dates(db: Database, document_ids: list[int], first_year: int, last_year: int) -> list[tuple[int, int, str]]:
    """(item id, document id, date as a hit shows it) for the chunks of these documents
    that carry a date of their own (a changelog's entry, a decision log's dated line) in
    these years, in document order, at most OWN_DATES."""
    if not document_ids:
        return []
    rows = await db.read(
        f"SELECT i.id, i.document_id, {CHUNK_DATE} AS dated FROM items i JOIN documents d ON d.id = i.document_id"
        f" WHERE i.document_id IN ({', '.join('?' * len(document_ids))}) AND i.date IS NOT NULL"
        f" AND substr(dated, 1, 4) BETWEEN ? AND ? ORDER BY i.document_id, i.ord LIMIT {OWN_DATES}",
        [*document_ids, f"{first_year:04d}", f"{last_year:04d}"],
    )
    return [(row[0], row[1], row[2]) for row in rows]


# A document's first chunks: its front matter often makes a chunk of its own.
LEAD_CHUNKS = 2


@dataclass(frozen=True)
class ChunkText:
    content: str
    # The document's opening chunks: what the whole document says it is.
    lead: str


async def chunk_texts(db: Database, ids: list[int]) -> dict[int, ChunkText]:
    """Full text of the given items (those still there) and their documents' openings, in one query."""
    if not ids:
        return {}
    rows = await db.read(
        "SELECT i.id, i.content, (SELECT group_concat(content, char(10)) FROM (SELECT l.content FROM items l"
        f" WHERE l.document_id = i.document_id ORDER BY l.ord LIMIT {LEAD_CHUNKS})) FROM items i"
        f" WHERE i.id IN ({', '.join('?' * len(ids))})",
        ids,
    )
    return {row[0]: ChunkText(row[1], row[2] or "") for row in rows}
