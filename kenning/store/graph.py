"""The entity graph in SQLite: entities, aliases, mentions, relations, extraction state.

Mentions and relations belong to the chunk that states them and go with it by cascade;
the `mentions_ad` trigger drops an entity with its last mention. Writing one chunk's
extraction replaces that chunk's part of the graph in the same transaction that records
the extraction as done, so a crash never leaves a chunk half-mined.
"""

from __future__ import annotations

import math
import re
import sqlite3
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, TypeVar

import aiosqlite
import numpy as np

from kenning.api import EntityChunk, EntityRelation, EntityView
from kenning.store import until_commit
from kenning.store.database import Database, on_thread, read_until_cancelled
from kenning.store.lookup import display_path
from kenning.store.records import Extraction, ExtractionFailed
from kenning.store.scope import Scope
from kenning.text.names import normalize_name

RETRY_START, RETRY_MAX = 60.0, 6 * 3600.0
SQL_BATCH = 900
# Key phrases ("blood pressure", "data spans") are topics, not things: walking through
# them makes every chunk near every other. Measured on bench/multihop.py and the BEIR
# collections, leaving them out of the graph leg's walk helped both.
UNWALKED_KINDS = ("phrase",)
RELATIONS_SCANNED = 400
# The extraction signature of chunks whose graph a record's own fields define (ledger
# entries): no extractor re-mines them, whichever is configured.
STRUCTURED = "structured"
# Kept until the next commit (store/until_commit.py): the walk's reads (mentions,
# neighbours), bounded by the chunk and neighbour ids they hold, and the names
# queries looked up. A mention is 9 bytes of arrays: the walks of the 1,000 bench
# queries at 100k chunks (113,619 ids, 13,223 entities) add about 2 MB to the
# process, and with a quarter of this budget half of every walk's reads missed.
WALK_IDS = 200_000
NAMES = 10_000

T = TypeVar("T")


@dataclass(frozen=True)
class PendingItem:
    id: int
    title: str
    section: str
    content: str


_PENDING = (
    "FROM items i LEFT JOIN extractions e ON e.item_id = i.id"
    f" WHERE (e.item_id IS NULL OR (e.signature != ? AND e.signature != '{STRUCTURED}')"
    " OR (e.status = 'failed' AND e.retry_at <= ?))"
)


async def pending_page(db: Database, signature: str, after: int, limit: int) -> list[PendingItem]:
    """Chunks this extractor has not mined yet (or whose retry is due), in id order."""
    async with db.reader() as conn:
        rows = await conn.execute_fetchall(
            f"SELECT i.id, i.title, i.section, i.content {_PENDING} AND i.id > ? ORDER BY i.id LIMIT ?",
            (signature, time.time(), after, limit),
        )
    return [PendingItem(*row) for row in rows]


# The chunks `_PENDING` names, counted without the join over every chunk (30-200 ms at
# 100,000 chunks, paid by `status` after every write): every extraction row has its chunk
# (it goes with it by cascade), so the pending chunks are all chunks less those mined by
# this extractor or from structured fields, plus those of them whose retry is due. Both
# counts read the index on (signature, status, retry_at) alone (m021).
PENDING_COUNT_SQL = (
    "SELECT (SELECT count(*) FROM items)"
    f" - (SELECT count(*) FROM extractions WHERE signature IN (?1, '{STRUCTURED}'))"
    f" + (SELECT count(*) FROM extractions WHERE signature IN (?1, '{STRUCTURED}')"
    " AND status = 'failed' AND retry_at <= ?2)"
)


async def count_pending(db: Database, signature: str) -> int:
    """How many chunks `pending_page` would page through now."""
    async with db.reader() as conn:
        [(count,)] = await conn.execute_fetchall(PENDING_COUNT_SQL, (signature, time.time()))
    return count


async def unmined_page(db: Database, after: int, limit: int) -> list[PendingItem]:
    """Chunks no extractor has tried yet, in id order."""
    async with db.reader() as conn:
        rows = await conn.execute_fetchall(
            "SELECT i.id, i.title, i.section, i.content FROM items i WHERE i.id > ? AND NOT EXISTS"
            " (SELECT 1 FROM extractions e WHERE e.item_id = i.id) ORDER BY i.id LIMIT ?",
            (after, limit),
        )
    return [PendingItem(*row) for row in rows]


async def write_results(
    db: Database,
    signature: str,
    results: list[tuple[int, Extraction | ExtractionFailed]],
    stand_ins: dict[int, Extraction] | None = None,
) -> int:
    """Record a page of extraction results in one transaction; returns how many chunks
    were still there to take them (a chunk replaced while it was mined takes nothing).

    `stand_ins` are other extractions (the offline extractor's) for chunks that failed
    here: a failed chunk that has no graph at all takes its stand-in's, so the graph leg
    finds it meanwhile, and stays failed, so it is retried and a good answer replaces it.

    The statements are per page, not per chunk or entity: every statement is a trip to
    the database thread, and those trips, not SQLite, would set the pace.
    """
    if not results:
        return 0
    now = time.time()
    async with db.transaction() as conn:
        alive = await _existing(conn, [item_id for item_id, _ in results])
        mined = [(item_id, r) for item_id, r in results if item_id in alive and isinstance(r, Extraction)]
        failed = [item_id for item_id, r in results if item_id in alive and isinstance(r, ExtractionFailed)]
        for item_id, result in results:
            if item_id in alive and isinstance(result, ExtractionFailed):
                await _record_failure(conn, item_id, signature, result.reason, now)
        if stand_ins and (bare := await _without_mentions(conn, [i for i in failed if i in stand_ins])):
            await _replace_graph(conn, [(item_id, stand_ins[item_id]) for item_id in bare])
        if mined:
            await _replace_graph(conn, mined)
            await conn.executemany(
                "INSERT INTO extractions (item_id, signature, status, attempts, error, retry_at)"
                " VALUES (?, ?, 'ok', 0, NULL, NULL) ON CONFLICT (item_id) DO UPDATE SET"
                " signature = excluded.signature, status = 'ok', attempts = 0, error = NULL, retry_at = NULL",
                [(item_id, signature) for item_id, _ in mined],
            )
    return len(alive)


async def write_structured(conn: aiosqlite.Connection, mined: list[tuple[int, Extraction]]) -> None:
    """Set these chunks' graph from structured fields, inside the caller's transaction,
    so a record and its entities commit together; extraction leaves them alone."""
    if not mined:
        return
    await _replace_graph(conn, mined)
    await conn.executemany(
        "INSERT INTO extractions (item_id, signature, status, attempts, error, retry_at)"
        " VALUES (?, ?, 'ok', 0, NULL, NULL) ON CONFLICT (item_id) DO UPDATE SET"
        " signature = excluded.signature, status = 'ok', attempts = 0, error = NULL, retry_at = NULL",
        [(item_id, STRUCTURED) for item_id, _ in mined],
    )


async def _existing(conn: aiosqlite.Connection, ids: list[int]) -> set[int]:
    found: set[int] = set()
    for start in range(0, len(ids), SQL_BATCH):
        part = ids[start : start + SQL_BATCH]
        rows = await conn.execute_fetchall(f"SELECT id FROM items WHERE id IN ({', '.join('?' * len(part))})", part)
        found.update(row[0] for row in rows)
    return found


async def _without_mentions(conn: aiosqlite.Connection, ids: list[int]) -> list[int]:
    held: set[int] = set()
    for start in range(0, len(ids), SQL_BATCH):
        part = ids[start : start + SQL_BATCH]
        rows = await conn.execute_fetchall(
            f"SELECT DISTINCT item_id FROM mentions WHERE item_id IN ({', '.join('?' * len(part))})", part
        )
        held.update(row[0] for row in rows)
    return [item_id for item_id in ids if item_id not in held]


async def _record_failure(conn: aiosqlite.Connection, item_id: int, signature: str, reason: str, now: float) -> None:
    """The chunk keeps whatever graph it had; it is tried again after a growing pause."""
    [(attempts,)] = await conn.execute_fetchall(
        "SELECT coalesce((SELECT attempts FROM extractions WHERE item_id = ? AND signature = ?), 0) + 1",
        (item_id, signature),
    )
    delay = min(RETRY_START * 2 ** (attempts - 1), RETRY_MAX)
    await conn.execute(
        "INSERT INTO extractions (item_id, signature, status, attempts, error, retry_at)"
        " VALUES (?, ?, 'failed', ?, ?, ?) ON CONFLICT (item_id) DO UPDATE SET signature = excluded.signature,"
        " status = 'failed', attempts = excluded.attempts, error = excluded.error, retry_at = excluded.retry_at",
        (item_id, signature, attempts, reason[:500], now + delay),
    )


async def _replace_graph(conn: aiosqlite.Connection, mined: list[tuple[int, Extraction]]) -> None:
    """Swap these chunks' mentions and relations for the new ones."""
    ids = [item_id for item_id, _ in mined]
    for start in range(0, len(ids), SQL_BATCH):
        part = ids[start : start + SQL_BATCH]
        marks = ", ".join("?" * len(part))
        await conn.execute(f"DELETE FROM relations WHERE item_id IN ({marks})", part)
        await conn.execute(f"DELETE FROM mentions WHERE item_id IN ({marks})", part)
    # First spelling and kind seen for each name; aliases per name.
    names: dict[str, tuple[str, str]] = {}
    aliases: dict[str, set[str]] = {}
    for _, extraction in mined:
        for entity in extraction.entities:
            norm = normalize_name(entity.name)
            if norm:
                names.setdefault(norm, (entity.name.strip()[:200], entity.kind))
                aliases.setdefault(norm, set()).update(
                    alias_norm for alias in entity.aliases if (alias_norm := normalize_name(alias)) != norm and alias_norm
                )
    # A name this page also gives as another entity's alias is that entity ("TVA").
    alias_of = {alias: norm for norm, group in aliases.items() for alias in group}
    known = await _lookup(conn, list(names) + list(alias_of))
    new = [norm for norm in names if norm not in known and norm not in alias_of]
    await conn.executemany(
        "INSERT INTO entities (name, norm, kind) VALUES (?, ?, ?) ON CONFLICT (norm) DO NOTHING",
        [(names[norm][0], norm, names[norm][1]) for norm in new],
    )
    known.update(await _lookup(conn, new))
    fresh_aliases = [(alias, known[norm]) for alias, norm in alias_of.items() if alias not in known and norm in known]
    await conn.executemany(
        "INSERT INTO entity_aliases (norm, entity_id) VALUES (?, ?) ON CONFLICT DO NOTHING", fresh_aliases
    )
    known.update(fresh_aliases)
    titles = await _titles(conn, ids)
    mentions, relations = [], []
    for item_id, extraction in mined:
        local: dict[str, int] = {}
        for entity in extraction.entities:
            norm = normalize_name(entity.name)
            if norm in known:
                local[norm] = known[norm]
                for alias in aliases.get(norm, ()):
                    local.setdefault(alias, known[norm])
        about = next((known[norm] for norm in titles.get(item_id, ()) if norm in known), None)
        mentions.extend((entity_id, item_id, entity_id == about) for entity_id in set(local.values()))
        for relation in extraction.relations:
            source = local.get(normalize_name(relation.source))
            target = local.get(normalize_name(relation.target))
            # Both ends are mentioned by this chunk, so a relation never outlives them.
            if source is not None and target is not None and source != target:
                relations.append((source, target, relation.kind[:60], item_id))
    await conn.executemany(
        "INSERT INTO mentions (entity_id, item_id, about) VALUES (?, ?, ?) ON CONFLICT DO NOTHING", mentions
    )
    await conn.executemany("INSERT INTO relations (source_id, target_id, kind, item_id) VALUES (?, ?, ?, ?)", relations)


# Chunks read per identifier when looking for the page titled with it.
TITLED_ROWS = 200
# "Shenhe Electronics (vendor)": what the page is about, then what kind of thing it is.
_KIND_SUFFIX = re.compile(r"\s*\([^()]*\)$")


# Between the headings of a chunk's section path ("Skerrivaig > Access").
SECTION_SEPARATOR = " > "


def _title_norm(title: str) -> str:
    """A chunk's title without a trailing parenthesis, normalized like an entity name."""
    return normalize_name(_KIND_SUFFIX.sub("", title))


async def _titles(conn: aiosqlite.Connection, ids: list[int]) -> dict[int, tuple[str, str]]:
    """Each chunk's title and its document's first heading (the outermost heading of its
    first chunk), as `_title_norm` gives them: a note's front matter may title it
    "Skerrivaig port and office" over "# Skerrivaig"."""
    found: dict[int, tuple[str, str]] = {}
    for start in range(0, len(ids), SQL_BATCH):
        part = ids[start : start + SQL_BATCH]
        rows = await conn.execute_fetchall(
            "SELECT i.id, i.title, (SELECT f.section FROM items f WHERE f.document_id = i.document_id"
            f" ORDER BY f.ord LIMIT 1) FROM items i WHERE i.id IN ({', '.join('?' * len(part))})",
            part,
        )
        for item_id, title, first in rows:
            found[item_id] = (_title_norm(title), _title_norm((first or "").split(SECTION_SEPARATOR)[0]))
    return found


async def _lookup(conn: aiosqlite.Connection, norms: list[str]) -> dict[str, int]:
    """Entity ids by normalized name or alias (a name wins over an alias)."""
    found: dict[str, int] = {}
    for start in range(0, len(norms), SQL_BATCH):
        part = norms[start : start + SQL_BATCH]
        marks = ", ".join("?" * len(part))
        rows = await conn.execute_fetchall(
            f"SELECT norm, entity_id, 1 FROM entity_aliases WHERE norm IN ({marks})"
            f" UNION ALL SELECT norm, id, 0 FROM entities WHERE norm IN ({marks}) ORDER BY 3 DESC",
            [*part, *part],
        )
        found.update((norm, entity_id) for norm, entity_id, _ in rows)
    return found


@dataclass(frozen=True)
class EntityMatch:
    id: int
    name: str
    kind: str
    mentions: int


class GraphReads:
    """The graph walk's reads, on one reader connection's own thread.

    A walk asks for names, then mentions and neighbours depth by depth, each step
    depending on the last. Run as awaits, each step was a trip to a reader's thread and
    back through the event loop, and the walk's arithmetic ran on the loop, which a
    hybrid search's other stages need: on bench/ingest.py's 100k-chunk library the
    loop's CPU per hybrid search went from 12.8 to 10.6 ms with the walk in one trip.
    What is read is kept until the next commit, as before (store/until_commit.py)."""

    def __init__(
        self, conn: sqlite3.Connection, names: until_commit.UntilCommit, walked: until_commit.UntilCommit
    ) -> None:
        self.conn = conn
        self._names = names
        self._walked = walked

    def resolve_names(self, norms: list[str]) -> dict[str, EntityMatch]:
        """Entities for the given normalized names (own names or aliases), with mention counts."""
        if not norms:
            return {}
        found = self._names.get_now(norms, self._resolve)
        return {norm: match for norm, match in found.items() if match is not None}

    def mentions(self, entity_ids: list[int], per_entity: int) -> dict[int, Mentions]:
        """How many chunks mention each entity, and the newest `per_entity` of them."""
        return self._cached("mentions", entity_ids, per_entity, self._mentions)

    def neighbours(self, entity_ids: list[int], per_entity: int) -> dict[int, list[tuple[int, int]]]:
        """Each entity's strongest neighbours (either direction), as (neighbour, relation count)."""
        return self._cached("neighbours", entity_ids, per_entity, self._neighbours)

    def _cached(
        self, kind: str, entity_ids: list[int], per_entity: int, read: Callable[[list[int], int], dict[int, Any]]
    ) -> dict[int, Any]:
        """`read` for the entities the walk cache does not hold, in the order asked (the walk
        breaks ties by it)."""

        def fetch(keys: list[tuple[str, int, int]]) -> dict[tuple[str, int, int], Any]:
            found = read([entity_id for _, entity_id, _ in keys], per_entity)
            return {key: found[key[1]] for key in keys}

        answers = self._walked.get_now([(kind, entity_id, per_entity) for entity_id in entity_ids], fetch)
        return {key[1]: value for key, value in answers.items()}

    def _resolve(self, norms: list[str]) -> dict[str, EntityMatch | None]:
        marks = ", ".join("?" * len(norms))
        rows = self.conn.execute(
            f"SELECT q.norm, e.id, e.name, e.kind, (SELECT count(*) FROM mentions m WHERE m.entity_id = e.id)"
            f" FROM (SELECT norm, id AS entity_id FROM entities WHERE norm IN ({marks})"
            f"       UNION ALL SELECT norm, entity_id FROM entity_aliases WHERE norm IN ({marks})) q"
            " JOIN entities e ON e.id = q.entity_id",
            [*norms, *norms],
        ).fetchall()
        found: dict[str, EntityMatch | None] = dict.fromkeys(norms)
        found.update((norm, EntityMatch(entity_id, name, kind, count)) for norm, entity_id, name, kind, count in rows)
        return found

    def _neighbours(self, entity_ids: list[int], per_entity: int) -> dict[int, list[tuple[int, int]]]:
        """At most RELATIONS_SCANNED relations are read per entity and direction, so an
        entity stated alongside thousands of others costs the same as a quieter one."""
        if not entity_ids:
            return {}
        scans = " UNION ALL ".join(
            f"SELECT * FROM (SELECT {entity_id} AS entity, target_id AS other FROM relations"
            f" WHERE source_id = {entity_id} LIMIT {RELATIONS_SCANNED})"
            f" UNION ALL SELECT * FROM (SELECT {entity_id}, source_id FROM relations"
            f" WHERE target_id = {entity_id} LIMIT {RELATIONS_SCANNED})"
            for entity_id in map(int, entity_ids)
        )
        rows = self.conn.execute(
            "SELECT entity, other, n FROM ("
            "  SELECT entity, other, count(*) AS n,"
            "         row_number() OVER (PARTITION BY entity ORDER BY count(*) DESC, other) AS place"
            f"  FROM ({scans}) JOIN entities e ON e.id = other"
            f"  WHERE e.kind NOT IN ({', '.join('?' * len(UNWALKED_KINDS))})"
            "  GROUP BY entity, other)"
            " WHERE place <= ?",
            [*UNWALKED_KINDS, per_entity],
        ).fetchall()
        found: dict[int, list[tuple[int, int]]] = {entity_id: [] for entity_id in entity_ids}
        for entity, other, count in rows:
            found[entity].append((other, count))
        return found

    def _mentions(self, entity_ids: list[int], per_entity: int) -> dict[int, Mentions]:
        """One row per entity: its count, and its newest mentions packed in one string as
        item id * 2 + about. Read a row per mention, a frontier of 32 entities came back as
        6,400 tuples built under the GIL, which the keyword leg's reader needs as well: 4-7
        ms against 2 for the packed rows."""
        if not entity_ids:
            return {}
        # Each entity's newest mentions through its own walk of the primary key backwards,
        # so a hub named by thousands of chunks costs `per_entity` rows, not all of them.
        newest = " UNION ALL ".join(
            f"SELECT {entity_id}, (SELECT count(*) FROM mentions WHERE entity_id = {entity_id}),"
            f" (SELECT group_concat(item_id * 2 + (about != 0)) FROM (SELECT item_id, about FROM mentions"
            f"  WHERE entity_id = {entity_id} ORDER BY item_id DESC LIMIT {int(per_entity)}))"
            for entity_id in map(int, entity_ids)
        )
        found: dict[int, Mentions] = {}
        for entity_id, count, packed in self.conn.execute(newest).fetchall():
            # group_concat keeps no promised order: newest first again by sorting.
            codes = np.sort(np.fromstring(packed, dtype=np.int64, sep=","))[::-1] if packed else np.zeros(0, np.int64)
            found[entity_id] = Mentions(count, codes >> 1, (codes & 1) != 0)
        return found


async def reading_graph(db: Database, body: Callable[[GraphReads], T]) -> T:
    """`body` run with the graph's reads on one reader's thread, in one trip; a search
    whose client hung up stops it part-way."""
    names = until_commit.cache(db, "names", NAMES)
    walked = until_commit.cache(db, "graph walk", WALK_IDS, _size)
    async with db.reader() as conn:
        return await read_until_cancelled(conn, lambda raw: body(GraphReads(raw, names, walked)))


async def resolve_names(db: Database, norms: list[str]) -> dict[str, EntityMatch]:
    """Entities for the given normalized names (own names or aliases), with mention counts."""
    if not norms:
        return {}
    return await reading_graph(db, lambda reads: reads.resolve_names(norms))


@dataclass(frozen=True)
class Mentions:
    """How many chunks mention an entity, and the newest of them (ids, newest first) with
    whether each is the page about it (its title is the entity's name). Arrays, so the
    walk spreads an entity's weight over its chunks in one step rather than a Python
    loop per chunk."""

    count: int
    items: np.ndarray
    about: np.ndarray


def _size(value: Any) -> int:
    return max(len(value.items) if isinstance(value, Mentions) else len(value), 1)


def specificity(mentions: int) -> float:
    """An entity named by a handful of chunks says more than one named by thousands."""
    return 1.0 / math.log2(2 + mentions)


async def summary(db: Database, signature: str | None = None) -> dict[str, int | None]:
    """The graph's counts, with the chunks `signature`'s extractor has still to mine
    (`count_pending`; None without one), in one trip to a reader: `status` asks for them
    after every write, and while an agent writes each trip waits for the loop behind the
    embedding and mining threads."""
    async with db.reader() as conn:
        return await on_thread(conn, _summary, signature, time.time())


def _summary(conn: sqlite3.Connection, signature: str | None, now: float) -> dict[str, int | None]:
    [(entities, relations, failed)] = conn.execute(
        "SELECT (SELECT count(*) FROM entities), (SELECT count(*) FROM relations),"
        " (SELECT count(*) FROM extractions WHERE status = 'failed')"
    ).fetchall()
    pending = conn.execute(PENDING_COUNT_SQL, (signature, now)).fetchone()[0] if signature else None
    return {"entities": entities, "relations": relations, "failed": failed, "pending": pending}


async def find_entities(db: Database, query: str, limit: int, chunks_per_entity: int = 10) -> list[EntityView]:
    """Entities whose name or alias matches the query (exact first, then containing it),
    each with its relations and the chunks that mention it.

    Only what a search may return counts: an entity, a relation or a chunk known only
    from a source taken out of the config (kept in case it comes back) is left out, as
    its chunks are left out of search.
    """
    norm = normalize_name(query)
    if not norm:
        return []
    pattern = "%" + norm.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
    visible, visible_params = Scope().where()
    # The chunk `i` an item id names, with its document `d` and source `s`.
    chunk = "JOIN items i ON i.id = {} JOIN documents d ON d.id = i.document_id JOIN sources s ON s.id = d.source_id"
    async with db.reader() as conn:
        rows = await conn.execute_fetchall(
            "SELECT e.id, e.name, e.kind, count(*) AS n FROM entities e"
            f" JOIN mentions m ON m.entity_id = e.id {chunk.format('m.item_id')}"
            " WHERE e.id IN ("
            "  SELECT id FROM entities WHERE norm LIKE ? ESCAPE '\\'"
            "  UNION SELECT entity_id FROM entity_aliases WHERE norm LIKE ? ESCAPE '\\')"
            f" AND {visible} GROUP BY e.id ORDER BY e.norm = ? DESC, n DESC, e.norm LIMIT ?",
            (pattern, pattern, *visible_params, norm, limit),
        )
        found = []
        for entity_id, name, kind, count in rows:
            aliases = [r[0] for r in await conn.execute_fetchall(
                "SELECT norm FROM entity_aliases WHERE entity_id = ? ORDER BY norm LIMIT 20", (entity_id,)
            )]
            # One line per (kind, direction, other entity), strongest first, citing the
            # first chunk that states it and how many do.
            relations = await conn.execute_fetchall(
                "SELECT f.kind, f.direction, f.other, min(f.item_id), count(*) AS n FROM ("
                " SELECT r.kind, 'out' AS direction, o.name AS other, r.item_id FROM relations r"
                " JOIN entities o ON o.id = r.target_id WHERE r.source_id = ?"
                " UNION ALL SELECT r.kind, 'in', o.name, r.item_id FROM relations r"
                f" JOIN entities o ON o.id = r.source_id WHERE r.target_id = ?) AS f {chunk.format('f.item_id')}"
                f" WHERE {visible}"
                " GROUP BY f.kind, f.direction, f.other ORDER BY n DESC, f.other LIMIT 50",
                (entity_id, entity_id, *visible_params),
            )
            chunks = await conn.execute_fetchall(
                "SELECT i.id, i.title, s.name, s.root, d.path, d.uri, i.section, i.line_start, i.line_end"
                f" FROM mentions m {chunk.format('m.item_id')} WHERE m.entity_id = ? AND {visible}"
                " ORDER BY i.id LIMIT ?",
                (entity_id, *visible_params, chunks_per_entity),
            )
            found.append(
                EntityView(
                    id=entity_id,
                    name=name,
                    kind=kind,
                    aliases=aliases,
                    mentions=count,
                    relations=[EntityRelation(k, d, other, item, n) for k, d, other, item, n in relations],
                    chunks=[
                        EntityChunk(item_id, title, source, display_path(root, path, uri), section, start, end)
                        for item_id, title, source, root, path, uri, section, start, end in chunks
                    ],
                )
            )
    return found


# A page of its own is one document, of at most this many chunks, about the thing: a
# name that titles many documents ("README", "NEWS") is the page of none of them, and a
# long document titled with it ("Process", "File system" in a manual) is a manual on a
# subject, whose chunk for a question a search finds by the question's own words. Every
# page the multi-hop sets go through is one chunk; in a Debian system's documentation,
# pages of 23 to 8,995 chunks put a manual's page second for questions they do not
# answer (bench/README.md).
PAGE_CHUNKS = 12
# Counted in the document's chunks, not in those extraction found about the name.
_OWN_PAGE = (
    "count(DISTINCT pi.document_id) = 1"
    f" AND (SELECT count(*) FROM items d WHERE d.document_id = min(pi.document_id)) <= {PAGE_CHUNKS}"
)


async def pages_named_by(db: Database, item_id: int) -> list[tuple[str, list[str], list[int]]]:
    """The entities a chunk mentions that have a page of their own in another document:
    each entity's normalized name and aliases, and the chunks of the page about it."""
    rows = await db.read(
        "SELECT e.norm, (SELECT group_concat(a.norm, char(31)) FROM entity_aliases a WHERE a.entity_id = e.id),"
        " group_concat(p.item_id) FROM mentions m JOIN entities e ON e.id = m.entity_id"
        " JOIN mentions p ON p.entity_id = m.entity_id AND p.about = 1 AND p.item_id != m.item_id"
        " JOIN items pi ON pi.id = p.item_id JOIN items mi ON mi.id = m.item_id"
        f" WHERE m.item_id = ? AND pi.document_id != mi.document_id GROUP BY e.id HAVING {_OWN_PAGE}",
        (item_id,),
    )
    return _pages(rows)


async def pages_called(db: Database, norms: list[str], document_id: int) -> list[tuple[str, list[str], list[int]]]:
    """The entities with these normalized names or aliases that have a page of their
    own outside this document, as `pages_named_by` gives them: a name a chunk writes
    where extraction did not take it for one ("Winter lay-up berth: Skerrivaig inner
    basin", a capitalised word after a colon) still names the page."""
    if not norms:
        return []
    marks = ", ".join("?" * len(norms))
    rows = await db.read(
        "SELECT e.norm, (SELECT group_concat(a.norm, char(31)) FROM entity_aliases a WHERE a.entity_id = e.id),"
        " group_concat(p.item_id) FROM entities e JOIN mentions p ON p.entity_id = e.id AND p.about = 1"
        " JOIN items pi ON pi.id = p.item_id"
        f" WHERE (e.norm IN ({marks}) OR e.id IN (SELECT entity_id FROM entity_aliases WHERE norm IN ({marks})))"
        f" AND pi.document_id != ? GROUP BY e.id HAVING {_OWN_PAGE}",
        [*norms, *norms, document_id],
    )
    return _pages(rows)


def _pages(rows: Iterable[Any]) -> list[tuple[str, list[str], list[int]]]:
    return [
        (norm, aliases.split("\x1f") if aliases else [], [int(page) for page in pages.split(",")])
        for norm, aliases, pages in rows
    ]


async def _chunk_count(db: Database, document_id: int) -> int:
    [(count,)] = await db.read("SELECT count(*) FROM items WHERE document_id = ?", (document_id,))
    return count


async def pages_titled(db: Database, names: list[str], document_id: int) -> list[tuple[str, list[int]]]:
    """For each identifier ("rota-service", "pg-pay-2"), the chunks of the other
    document titled with it: a page a line names by its title, as a wiki link does,
    whether or not extraction took the identifier for an entity. Only a page of its own
    (PAGE_CHUNKS) counts."""
    found: list[tuple[str, list[int]]] = []
    for name in names:
        words = " ".join(re.findall(r"\w+", name))
        if not words:
            continue
        rows = await db.read(
            "SELECT i.id, i.document_id, i.title FROM items_fts JOIN items i ON i.id = items_fts.rowid"
            f" WHERE items_fts MATCH ? AND i.document_id != ? LIMIT {TITLED_ROWS}",
            ('title : "' + words + '"', document_id),
        )
        titled = [(item_id, document) for item_id, document, title in rows if _title_norm(title) == name]
        documents = {document for _, document in titled}
        if len(documents) == 1 and await _chunk_count(db, documents.pop()) <= PAGE_CHUNKS:
            found.append((name, [item_id for item_id, _ in titled]))
    return found
