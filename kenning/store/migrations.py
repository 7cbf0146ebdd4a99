"""Schema migrations, one named function each, applied in order on open.

PRAGMA user_version records how many have run. Each migration and its version bump
commit together, so a crash between two leaves the database at a clean earlier version.
"""

from __future__ import annotations

import itertools
import logging
import sqlite3
from collections.abc import Callable

from kenning.store.keys import page_key, path_key
from kenning.store.texthash import text_hash
from kenning.text import cjk, dates
from kenning.text.likeness import title_key

log = logging.getLogger(__name__)


_M001 = (
    """
    CREATE TABLE sources (
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL UNIQUE,
        kind TEXT NOT NULL DEFAULT 'folder',
        root TEXT NOT NULL,
        namespace TEXT NOT NULL DEFAULT 'default',
        active INTEGER NOT NULL DEFAULT 1,
        created_at REAL NOT NULL,
        last_sweep_at REAL,
        last_sweep_error TEXT
    )
    """,
    # One row per file: its scan state and what was last ingested from it.
    """
    CREATE TABLE documents (
        id INTEGER PRIMARY KEY,
        source_id INTEGER NOT NULL REFERENCES sources(id) ON DELETE CASCADE,
        path TEXT NOT NULL,
        title TEXT NOT NULL DEFAULT '',
        format TEXT NOT NULL DEFAULT '',
        status TEXT NOT NULL CHECK (status IN ('scanning', 'done', 'failed', 'skipped')),
        reason TEXT,
        mtime REAL NOT NULL DEFAULT 0,
        size INTEGER NOT NULL DEFAULT 0,
        content_hash TEXT,
        chunk_count INTEGER NOT NULL DEFAULT 0,
        updated_at REAL NOT NULL,
        UNIQUE (source_id, path)
    )
    """,
    """
    CREATE INDEX documents_status ON documents (source_id, status)
    """,
    # AUTOINCREMENT so an item id in a citation never comes to name other text.
    """
    CREATE TABLE items (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        document_id INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
        ord INTEGER NOT NULL,
        title TEXT NOT NULL,
        section TEXT NOT NULL DEFAULT '',
        content TEXT NOT NULL,
        line_start INTEGER NOT NULL,
        line_end INTEGER NOT NULL,
        UNIQUE (document_id, ord)
    )
    """,
    """
    CREATE VIRTUAL TABLE items_fts USING fts5 (
        title, section, content,
        content = 'items', content_rowid = 'id',
        tokenize = 'porter unicode61 remove_diacritics 2'
    )
    """,
    # Merging FTS segments less eagerly: bulk ingest measured 15-20 % faster, and the
    # index is merged in the background when the daemon is idle.
    "INSERT INTO items_fts (items_fts, rank) VALUES ('automerge', 16)",
    # Triggers keep the external-content index in the same transaction as the
    # rows, including deletes that arrive by foreign-key cascade.
    """
    CREATE TRIGGER items_ai AFTER INSERT ON items BEGIN
        INSERT INTO items_fts (rowid, title, section, content)
        VALUES (new.id, new.title, new.section, new.content);
    END
    """,
    """
    CREATE TRIGGER items_ad AFTER DELETE ON items BEGIN
        INSERT INTO items_fts (items_fts, rowid, title, section, content)
        VALUES ('delete', old.id, old.title, old.section, old.content);
    END
    """,
    """
    CREATE TRIGGER items_au AFTER UPDATE ON items BEGIN
        INSERT INTO items_fts (items_fts, rowid, title, section, content)
        VALUES ('delete', old.id, old.title, old.section, old.content);
        INSERT INTO items_fts (rowid, title, section, content)
        VALUES (new.id, new.title, new.section, new.content);
    END
    """,
)


def m001_initial(conn: sqlite3.Connection) -> None:
    for statement in _M001:
        conn.execute(statement)


def m002_vectors(conn: sqlite3.Connection) -> None:
    # One vector per item. `signature` names the embedder that made it (backend, model,
    # text recipe); a vector whose signature differs from the current embedder's is
    # stale and is overwritten by the background re-embed.
    conn.execute(
        """
        CREATE TABLE vectors (
            item_id INTEGER PRIMARY KEY REFERENCES items(id) ON DELETE CASCADE,
            signature TEXT NOT NULL,
            dim INTEGER NOT NULL,
            vector BLOB NOT NULL
        )
        """
    )
    conn.execute("CREATE INDEX vectors_signature ON vectors (signature)")


def m003_graph(conn: sqlite3.Connection) -> None:
    # Entities live only while some chunk mentions them: the trigger drops an entity
    # with its last mention, and relations and aliases go with it by cascade. Mentions
    # and relations name the chunk that states them, so replacing or deleting a
    # document's items takes its part of the graph with it.
    for statement in (
        """
        CREATE TABLE entities (
            id INTEGER PRIMARY KEY,
            name TEXT NOT NULL,
            norm TEXT NOT NULL UNIQUE,
            kind TEXT NOT NULL DEFAULT 'concept'
        )
        """,
        """
        CREATE TABLE entity_aliases (
            norm TEXT PRIMARY KEY,
            entity_id INTEGER NOT NULL REFERENCES entities(id) ON DELETE CASCADE
        ) WITHOUT ROWID
        """,
        "CREATE INDEX entity_aliases_entity ON entity_aliases (entity_id)",
        """
        CREATE TABLE mentions (
            entity_id INTEGER NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
            item_id INTEGER NOT NULL REFERENCES items(id) ON DELETE CASCADE,
            -- 1 when the chunk's title is the entity's name: the page about it.
            about INTEGER NOT NULL DEFAULT 0,
            PRIMARY KEY (entity_id, item_id)
        ) WITHOUT ROWID
        """,
        "CREATE INDEX mentions_item ON mentions (item_id)",
        """
        CREATE TABLE relations (
            id INTEGER PRIMARY KEY,
            source_id INTEGER NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
            target_id INTEGER NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
            kind TEXT NOT NULL,
            item_id INTEGER NOT NULL REFERENCES items(id) ON DELETE CASCADE
        )
        """,
        "CREATE INDEX relations_source ON relations (source_id)",
        "CREATE INDEX relations_target ON relations (target_id)",
        "CREATE INDEX relations_item ON relations (item_id)",
        """
        CREATE TRIGGER mentions_ad AFTER DELETE ON mentions BEGIN
            DELETE FROM entities WHERE id = old.entity_id
                AND NOT EXISTS (SELECT 1 FROM mentions WHERE entity_id = old.entity_id);
        END
        """,
        # Which extractor last mined each chunk, and how its last attempt went. A chunk
        # with no row, or a row naming another extractor, is waiting for extraction.
        """
        CREATE TABLE extractions (
            item_id INTEGER PRIMARY KEY REFERENCES items(id) ON DELETE CASCADE,
            signature TEXT NOT NULL,
            status TEXT NOT NULL CHECK (status IN ('ok', 'failed')),
            attempts INTEGER NOT NULL DEFAULT 0,
            error TEXT,
            retry_at REAL
        )
        """,
        "CREATE INDEX extractions_retry ON extractions (status, retry_at)",
    ):
        conn.execute(statement)


def m004_locations(conn: sqlite3.Connection) -> None:
    """Documents gain the columns dedup, agent text and fetched pages need.

    SQLite cannot change a CHECK constraint in place, so the table is rebuilt the way
    its documentation prescribes (foreign keys are off while migrations run). `text_hash`
    is backfilled from each document's stored chunks, the same recipe new ingests use,
    so documents indexed before this migration take part in exact dedup too.
    """
    conn.execute(
        """
        CREATE TABLE documents_new (
            id INTEGER PRIMARY KEY,
            source_id INTEGER NOT NULL REFERENCES sources(id) ON DELETE CASCADE,
            path TEXT NOT NULL,
            uri TEXT,
            title TEXT NOT NULL DEFAULT '',
            format TEXT NOT NULL DEFAULT '',
            status TEXT NOT NULL CHECK (status IN ('scanning', 'done', 'failed', 'skipped', 'merged')),
            reason TEXT,
            mtime REAL NOT NULL DEFAULT 0,
            size INTEGER NOT NULL DEFAULT 0,
            content_hash TEXT,
            text_hash TEXT,
            merged_into INTEGER REFERENCES documents(id),
            chunk_count INTEGER NOT NULL DEFAULT 0,
            tags TEXT NOT NULL DEFAULT '[]',
            namespace TEXT,
            etag TEXT,
            last_modified TEXT,
            updated_at REAL NOT NULL,
            UNIQUE (source_id, path),
            CHECK ((status = 'merged') = (merged_into IS NOT NULL))
        )
        """
    )
    conn.execute(
        "INSERT INTO documents_new (id, source_id, path, title, format, status, reason, mtime, size,"
        " content_hash, chunk_count, updated_at)"
        " SELECT id, source_id, path, title, format, status, reason, mtime, size, content_hash, chunk_count,"
        " updated_at FROM documents"
    )
    conn.execute("DROP TABLE documents")
    conn.execute("ALTER TABLE documents_new RENAME TO documents")
    conn.execute("CREATE INDEX documents_status ON documents (source_id, status)")
    conn.execute("CREATE INDEX documents_text_hash ON documents (text_hash) WHERE chunk_count > 0")
    conn.execute("CREATE INDEX documents_merged ON documents (merged_into) WHERE merged_into IS NOT NULL")
    conn.execute("ALTER TABLE sources ADD COLUMN removing INTEGER NOT NULL DEFAULT 0")
    # Dedup moves items between documents by updating document_id: that must not
    # rewrite their index entries, so the trigger watches only the indexed columns.
    conn.execute("DROP TRIGGER items_au")
    conn.execute(
        """
        CREATE TRIGGER items_au AFTER UPDATE OF title, section, content ON items BEGIN
            INSERT INTO items_fts (items_fts, rowid, title, section, content)
            VALUES ('delete', old.id, old.title, old.section, old.content);
            INSERT INTO items_fts (rowid, title, section, content)
            VALUES (new.id, new.title, new.section, new.content);
        END
        """
    )
    rows = conn.execute("SELECT document_id, content FROM items ORDER BY document_id, ord")
    hashes = [
        (text_hash(content for _, content in group), document_id)
        for document_id, group in itertools.groupby(rows, key=lambda row: row[0])
    ]
    conn.executemany("UPDATE documents SET text_hash = ? WHERE id = ?", hashes)


def m005_agent_records(conn: sqlite3.Connection) -> None:
    """What agents keep besides documents: memory capsules, archives, ledger entries.

    Each is also a document (in the `memory`, `archive` or `ledger` source), so search,
    redaction and citations treat it like any other; these tables hold what a document
    row has no column for. A record row and its document are written in one transaction.
    A superseded capsule keeps its row (history, `superseded_by`) but loses its document,
    so it is never found again; a row whose document goes (a source removal) goes with it.
    """
    for statement in (
        """
        CREATE TABLE capsules (
            id TEXT PRIMARY KEY,
            document_id INTEGER UNIQUE REFERENCES documents(id) ON DELETE CASCADE,
            kind TEXT NOT NULL,
            scope TEXT NOT NULL,
            title TEXT NOT NULL,
            title_key TEXT NOT NULL,
            body TEXT NOT NULL,
            tags TEXT NOT NULL DEFAULT '[]',
            confidence REAL NOT NULL,
            source_ref TEXT,
            created_at REAL NOT NULL,
            updated_at REAL NOT NULL,
            last_used_at REAL,
            uses INTEGER NOT NULL DEFAULT 0,
            supersedes TEXT,
            superseded_by TEXT,
            superseded_at REAL,
            vector BLOB,
            signature TEXT,
            CHECK ((superseded_by IS NULL) = (document_id IS NOT NULL))
        )
        """,
        # One current capsule per title in a scope: the same title again updates it.
        "CREATE UNIQUE INDEX capsules_title ON capsules (scope, title_key) WHERE superseded_by IS NULL",
        "CREATE INDEX capsules_scope_kind ON capsules (scope, kind) WHERE superseded_by IS NULL",
        """
        CREATE TABLE archives (
            handle TEXT PRIMARY KEY,
            document_id INTEGER NOT NULL UNIQUE REFERENCES documents(id) ON DELETE CASCADE,
            title TEXT NOT NULL,
            chars INTEGER NOT NULL,
            bytes INTEGER NOT NULL,
            digest TEXT NOT NULL UNIQUE,
            created_at REAL NOT NULL
        )
        """,
        "CREATE INDEX archives_created ON archives (created_at)",
        # The stored text in fixed runs of characters, so a page reads only its runs.
        """
        CREATE TABLE archive_segments (
            handle TEXT NOT NULL REFERENCES archives(handle) ON DELETE CASCADE,
            seq INTEGER NOT NULL,
            text TEXT NOT NULL,
            PRIMARY KEY (handle, seq)
        )
        """,
        # What retention removed, so recalling a pruned handle says so instead of "unknown".
        """
        CREATE TABLE archive_pruned (
            handle TEXT PRIMARY KEY,
            digest TEXT NOT NULL,
            title TEXT NOT NULL,
            bytes INTEGER NOT NULL,
            created_at REAL NOT NULL,
            pruned_at REAL NOT NULL,
            reason TEXT NOT NULL
        )
        """,
        "CREATE INDEX archive_pruned_at ON archive_pruned (pruned_at)",
        """
        CREATE TABLE ledger_entries (
            id TEXT PRIMARY KEY,
            document_id INTEGER NOT NULL UNIQUE REFERENCES documents(id) ON DELETE CASCADE,
            section TEXT NOT NULL,
            identity TEXT NOT NULL,
            fields TEXT NOT NULL,
            owner TEXT NOT NULL,
            evidence TEXT NOT NULL DEFAULT '[]',
            created_at REAL NOT NULL,
            updated_at REAL NOT NULL
        )
        """,
        "CREATE INDEX ledger_entries_section ON ledger_entries (section, created_at)",
        # Every identity key and alias of an entry: an add matching any of them merges.
        """
        CREATE TABLE ledger_keys (
            section TEXT NOT NULL,
            key TEXT NOT NULL,
            entry_id TEXT NOT NULL REFERENCES ledger_entries(id) ON DELETE CASCADE,
            PRIMARY KEY (section, key)
        ) WITHOUT ROWID
        """,
        "CREATE INDEX ledger_keys_entry ON ledger_keys (entry_id)",
        # `documents.get` by uri: records, agent text and pages are read by the uri a hit shows.
        "CREATE INDEX documents_uri ON documents (uri) WHERE uri IS NOT NULL",
    ):
        conn.execute(statement)


def m006_dates(conn: sqlite3.Connection) -> None:
    """The date each document speaks from, and the dated lines that refine a chunk's.

    Dates are ISO prefixes (`2025`, `2025-09`, `2025-09-18`), so they compare as text.
    Documents already stored get theirs from what the store holds — the first chunk
    (front matter, first heading), the file name, the file time — and each chunk from
    its own dated lines, the same recipe ingest uses, so nothing has to be read again.
    """
    conn.execute("ALTER TABLE documents ADD COLUMN date TEXT")
    conn.execute("ALTER TABLE documents ADD COLUMN date_source TEXT")
    conn.execute("ALTER TABLE items ADD COLUMN date TEXT")
    rows = conn.execute(
        "SELECT d.id, d.path, d.uri, d.mtime, (SELECT content FROM items WHERE document_id = d.id ORDER BY ord LIMIT 1)"
        " FROM documents d"
    ).fetchall()
    for document_id, path, uri, mtime, first in rows:
        stated = dates.document_date(first or "", (uri or path).rstrip("/").rsplit("/", 1)[-1])
        date, source = stated or (dates.from_timestamp(mtime), "modified")
        conn.execute("UPDATE documents SET date = ?, date_source = ? WHERE id = ?", (date, source, document_id))
    refined = (
        (found, item_id)
        for item_id, section, content in conn.execute("SELECT id, section, content FROM items")
        if (found := dates.chunk_date(content, section))
    )
    conn.executemany("UPDATE items SET date = ? WHERE id = ?", list(refined))


def m007_cjk_index(conn: sqlite3.Connection) -> None:
    """A second keyword index for Chinese, Japanese and Korean runs, cut into bigrams.

    Only chunks holding CJK text have a row, so a library without any pays nothing. Rows
    are written with their items (store/documents.py) and leave with them by trigger.
    """
    conn.execute("CREATE VIRTUAL TABLE items_cjk USING fts5 (text, tokenize = 'unicode61')")
    conn.execute(
        "CREATE TRIGGER items_cjk_ad AFTER DELETE ON items BEGIN DELETE FROM items_cjk WHERE rowid = old.id; END"
    )
    rows = conn.execute("SELECT id, title, section, content FROM items")
    conn.executemany(
        "INSERT INTO items_cjk (rowid, text) VALUES (?, ?)",
        [(item_id, text) for item_id, *fields in rows if (text := cjk.index_text(*fields))],
    )


def m008_document_links(conn: sqlite3.Connection) -> None:
    """Links an agent states from its document to others (store/links.py), by the key the
    other is stored under, so a link can name a document that has not arrived yet."""
    conn.execute(
        """
        CREATE TABLE document_links (
            document_id INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
            kind TEXT NOT NULL CHECK (kind IN ('supersedes')),
            target TEXT NOT NULL,
            PRIMARY KEY (document_id, kind, target)
        ) WITHOUT ROWID
        """
    )
    conn.execute("CREATE INDEX document_links_target ON document_links (target, kind)")


def m009_covering_relations(conn: sqlite3.Connection) -> None:
    """The graph walk lists an entity's neighbours from its relations in both directions;
    with the other end in the index, each relation is read from the index alone, not
    looked up again in the table (a fifth less of the walk's neighbour reads)."""
    conn.execute("DROP INDEX relations_source")
    conn.execute("DROP INDEX relations_target")
    conn.execute("CREATE INDEX relations_source ON relations (source_id, target_id)")
    conn.execute("CREATE INDEX relations_target ON relations (target_id, source_id)")


def m010_capsule_title_keys(conn: sqlite3.Connection) -> None:
    """Capsule title keys that keep punctuation (`likeness.title_key`): under the old
    ones "C++" and "C#" were one title, so adding either overwrote the other. A new key
    tells apart only titles an old key joined, never joins two an old key told apart, so
    the current capsules of a scope, whose old keys all differ, keep keys that differ."""
    keys = [(title_key(title), capsule_id) for capsule_id, title in conn.execute("SELECT id, title FROM capsules")]
    conn.executemany("UPDATE capsules SET title_key = ? WHERE id = ?", keys)


def m011_document_readings(conn: sqlite3.Connection) -> None:
    """How each file was read (ingest/convert.py `ConvertLimits.reading_for`). Rows stored
    before have none, so the first sweep after the upgrade reads every file again under
    the current redaction; chunks whose text comes back the same keep their ids, vectors
    and extractions."""
    conn.execute("ALTER TABLE documents ADD COLUMN reading TEXT")


def m012_document_ids_autoincrement(conn: sqlite3.Connection) -> None:
    """Document ids are never given out twice, as item ids never are.

    A citation (`ken get 5`, `kenning://document/5`) names a document by id; with a plain
    INTEGER PRIMARY KEY, SQLite hands a deleted file's id (or a forgotten capsule's) to
    the next document stored, so the citation silently came to name other text. The
    table is rebuilt as m004 rebuilt it (foreign keys are off while migrations run), every
    row keeping its id, so the items, capsules, archives, ledger entries, links and
    `merged_into` that name a document still name it. Copying the rows in seeds
    sqlite_sequence with the largest id stored; ids freed above it before this migration
    ran are not recorded anywhere, so those alone may be given out once more.
    """
    conn.execute(
        """
        CREATE TABLE documents_new (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            source_id INTEGER NOT NULL REFERENCES sources(id) ON DELETE CASCADE,
            path TEXT NOT NULL,
            uri TEXT,
            title TEXT NOT NULL DEFAULT '',
            format TEXT NOT NULL DEFAULT '',
            status TEXT NOT NULL CHECK (status IN ('scanning', 'done', 'failed', 'skipped', 'merged')),
            reason TEXT,
            mtime REAL NOT NULL DEFAULT 0,
            size INTEGER NOT NULL DEFAULT 0,
            content_hash TEXT,
            text_hash TEXT,
            merged_into INTEGER REFERENCES documents(id),
            chunk_count INTEGER NOT NULL DEFAULT 0,
            tags TEXT NOT NULL DEFAULT '[]',
            namespace TEXT,
            etag TEXT,
            last_modified TEXT,
            updated_at REAL NOT NULL,
            date TEXT,
            date_source TEXT,
            reading TEXT,
            UNIQUE (source_id, path),
            CHECK ((status = 'merged') = (merged_into IS NOT NULL))
        )
        """
    )
    columns = (
        "id, source_id, path, uri, title, format, status, reason, mtime, size, content_hash, text_hash, merged_into,"
        " chunk_count, tags, namespace, etag, last_modified, updated_at, date, date_source, reading"
    )
    conn.execute(f"INSERT INTO documents_new ({columns}) SELECT {columns} FROM documents")
    conn.execute("DROP TABLE documents")
    conn.execute("ALTER TABLE documents_new RENAME TO documents")
    conn.execute("CREATE INDEX documents_status ON documents (source_id, status)")
    conn.execute("CREATE INDEX documents_text_hash ON documents (text_hash) WHERE chunk_count > 0")
    conn.execute("CREATE INDEX documents_merged ON documents (merged_into) WHERE merged_into IS NOT NULL")
    conn.execute("CREATE INDEX documents_uri ON documents (uri) WHERE uri IS NOT NULL")


def m013_refusals_unread(conn: sqlite3.Connection) -> None:
    """Files refused for want of permission are recorded as never read (no reading), so
    every sweep tries them again and a chmod that lets one in is enough (ingest/pipeline.py
    `_fail`). An older kenning recorded the limits they were tried with, as for any other
    failure, and a sweep looked at them again only once their mtime or size changed,
    which a chmod does not do."""
    conn.execute("UPDATE documents SET reading = NULL WHERE status = 'failed' AND reason = 'permission denied'")


def m014_source_root_mounted(conn: sqlite3.Connection) -> None:
    """Whether a folder source's root was a mount point when a sweep last found files in
    it: once the drive is unmounted its mount point is an empty folder, which must not
    read as every file deleted (ingest/scan.py), even after a restart."""
    conn.execute("ALTER TABLE sources ADD COLUMN root_mounted INTEGER NOT NULL DEFAULT 0")


def m015_source_root_mount_unknown(conn: sqlite3.Connection) -> None:
    """A root's mount state may be unknown (NULL): m014 gave every source `0`, "not a
    mount point", so a library upgraded while a drive was unmounted read the drive's
    empty mount point as every file deleted at its first sweep, and dropped its index.

    A `1` was written by a sweep and is kept. A `0` may have been written by a sweep
    since m014 or be m014's default, and nothing recorded when m014 ran tells them
    apart, so every `0` becomes unknown: the next sweep that finds the root holding
    anything records it again, and until then an empty root keeps its index and says
    so (ingest/scan.py). The column is rebuilt because SQLite cannot drop NOT NULL."""
    conn.execute("ALTER TABLE sources ADD COLUMN root_mount INTEGER CHECK (root_mount IN (0, 1))")
    conn.execute("UPDATE sources SET root_mount = 1 WHERE root_mounted = 1")
    conn.execute("ALTER TABLE sources DROP COLUMN root_mounted")
    conn.execute("ALTER TABLE sources RENAME COLUMN root_mount TO root_mounted")


def m016_hashed_keys(conn: sqlite3.Connection) -> None:
    """A fetched page was keyed by its raw URL and a supersedes link held a raw URL or
    path, so `?access_token=...` reached the database that redaction keeps it out of.
    Both become the hashes kenning keys them by now (store/keys.py); an agent key was a
    hash already. A link that is neither an agent nor a page key names a file's path.

    secure_delete zeroes what the old keys leave in freed cells and pages, as it would
    not otherwise: the rewrite must not leave the token readable in the file."""
    [(secure,)] = conn.execute("PRAGMA secure_delete").fetchall()
    conn.execute("PRAGMA secure_delete = ON")
    pages = conn.execute(
        "SELECT id, path FROM documents WHERE path LIKE 'url:%'"
        " AND source_id IN (SELECT id FROM sources WHERE kind = 'url')"
    ).fetchall()
    conn.executemany(
        "UPDATE documents SET path = ? WHERE id = ?",
        [(page_key(path.removeprefix("url:")), document_id) for document_id, path in pages],
    )
    links = conn.execute("SELECT document_id, kind, target FROM document_links WHERE target NOT LIKE 'uri:%'").fetchall()
    conn.executemany(
        "UPDATE document_links SET target = ? WHERE document_id = ? AND kind = ? AND target = ?",
        [
            (page_key(target.removeprefix("url:")) if target.startswith("url:") else path_key(target), *link, target)
            for *link, target in links
        ],
    )
    conn.execute(f"PRAGMA secure_delete = {int(secure)}")


def m017_source_sweep_kept(conn: sqlite3.Connection) -> None:
    """Why the last sweep kept indexed files it did not find, as a value `status` can
    carry (ingest/scan.py): `unmounted` (the root was a mount point and is no longer one:
    the drive is away) or `unknown` (the root is empty and whether it is one is not known, m015). `ken status` told them apart by
    matching the error's words, which any rewording of the message broke. A sweep
    recorded before this migration is read from its error once; the next sweep writes it."""
    conn.execute("ALTER TABLE sources ADD COLUMN last_sweep_kept TEXT CHECK (last_sweep_kept IN ('unmounted', 'unknown'))")
    conn.execute("UPDATE sources SET last_sweep_kept = 'unmounted' WHERE last_sweep_error LIKE '%no longer a mount point%'")
    conn.execute("UPDATE sources SET last_sweep_kept = 'unknown' WHERE last_sweep_error LIKE '%mount point is not known%'")


def m018_source_root_mount(conn: sqlite3.Connection) -> None:
    """The mount point a folder source's root is on, not only whether the root is one
    (ingest/scan.py): a folder on a drive mounted above it (/media/usb/notes, the drive at
    /media/usb) was recorded as "not a mount point", so while the drive was away a folder
    of that name made on the bare mount point read as every file of the drive's deleted.

    NULL is unknown, as m015 made it; '' names no mount to wait for (a source pointed at
    another folder, store/sources.py). A `1` was the root itself. A `0` does not say which
    mount the root was on, nor whether it was recorded while a drive mounted above the
    root was away, so it becomes unknown too: the next sweep that finds one of the indexed
    files as indexed, or half of them by name, records the mount, which for a folder in
    use is its first (ingest/scan.py `_found_as_indexed`)."""
    conn.execute("ALTER TABLE sources ADD COLUMN root_mount TEXT")
    conn.execute("UPDATE sources SET root_mount = root WHERE root_mounted = 1")
    conn.execute("ALTER TABLE sources DROP COLUMN root_mounted")


def m019_source_root_identity(conn: sqlite3.Connection) -> None:
    """Which folder a folder source's root named (`device:inode`) when a sweep last looked
    at every file it listed (ingest/scan.py). Kept only in memory, a folder renamed over
    the root while the daemon was stopped (`mv notes.new notes`) went unnoticed, and its
    files of the same size and mtime at the same paths kept the old folder's text.

    NULL is unknown: no swap is judged against it (an upgrade does not read every library
    again), and the next sweep that looks at every file records it."""
    conn.execute("ALTER TABLE sources ADD COLUMN root_identity TEXT")


def m020_status_tallies_covered(conn: sqlite3.Connection) -> None:
    """Each source's documents by state with their chunks, as `status` counts them, read
    from the index alone: the index on (source_id, status) sent the count to every row for
    its chunk_count, 25 ms of each `ken status` at 100,000 documents (8 ms from the index).
    The same prefix still serves every lookup the old index did."""
    conn.execute("DROP INDEX documents_status")
    conn.execute("CREATE INDEX documents_status ON documents (source_id, status, chunk_count)")


def m021_extractions_pending(conn: sqlite3.Connection) -> None:
    """The chunks waiting for an extractor, counted from the extractions by signature
    (store/graph.py `count_pending`): counted by joining every chunk to its extraction,
    each `ken status` after a write took 30-200 ms at 100,000 chunks (4 ms from this index)."""
    conn.execute("CREATE INDEX extractions_pending ON extractions (signature, status, retry_at)")


def m022_document_date_ends(conn: sqlite3.Connection) -> None:
    """Where a document's date names a wider period than it shows (`date: Q3 2025`, kept as
    `2025-07`), the period's last month, so `since 2025-08` finds it. Documents stored
    already get theirs as m006 got their dates, from the first chunk and the name; only
    those dated by their text to a quarter's first month are looked at."""
    conn.execute("ALTER TABLE documents ADD COLUMN date_end TEXT")
    rows = conn.execute(
        "SELECT d.id, d.path, d.uri, d.date, d.date_source,"
        " (SELECT content FROM items WHERE document_id = d.id ORDER BY ord LIMIT 1) FROM documents d"
        " WHERE d.date_source IN ('front matter', 'file name', 'heading') AND length(d.date) = 7"
        " AND substr(d.date, 6, 2) IN ('01', '04', '07', '10')"
    ).fetchall()
    for document_id, path, uri, date, source, first in rows:
        stated, end = dates.document_period(first or "", (uri or path).rstrip("/").rsplit("/", 1)[-1])
        if end is not None and stated == (date, source):
            conn.execute("UPDATE documents SET date_end = ? WHERE id = ?", (end, document_id))


def m023_purge_removed_words(conn: sqlite3.Connection) -> None:
    """The words of what was removed before this kenning purged after every removal
    (store/maintenance.py `purge_removed`) leave the keyword indexes: each is merged into
    one segment, and the pages that frees are zeroed (secure_delete is on for every
    connection, this one included). In a file made with incremental auto-vacuum the free
    pages older removals left are handed back to the file system as well; an older file's
    stay until `ken compact` rewrites it."""
    for table in ("items_fts", "items_cjk"):
        conn.execute(f"INSERT INTO {table} ({table}) VALUES ('optimize')")
    if conn.execute("PRAGMA auto_vacuum").fetchone()[0] == 2:
        conn.execute("PRAGMA incremental_vacuum")


def m024_owed_work(conn: sqlite3.Connection) -> None:
    """Work a stop may cut short that the next start must finish (store/maintenance.py
    `owe_purge`). A library with text in it starts owing a purge: one that a stop
    cancelled before this version, past the shutdown deadline, left its words behind
    with nothing to say so."""
    conn.execute("CREATE TABLE owed (work TEXT PRIMARY KEY) WITHOUT ROWID")
    conn.execute("INSERT INTO owed (work) SELECT 'purge' WHERE EXISTS (SELECT 1 FROM items)")


def m025_capsules_newest(conn: sqlite3.Connection) -> None:
    """`memory.list` pages through capsules newest created first (store/capsules.py
    `listing`). Within a scope the scope's index finds the few rows to sort; without one
    no index held that order, so every page sorted every capsule: 26 ms a page at 20,000.
    In the index's order a page reads its own rows, and a cursor seeks to where the last
    page ended. Not partial: `--superseded` walks the replaced capsules too."""
    conn.execute("CREATE INDEX capsules_created ON capsules (created_at DESC, id)")


def m026_documents_namespace(conn: sqlite3.Connection) -> None:
    """The documents an agent put in a namespace (each memory scope is one), found without
    reading every document: a search in a namespace ranks among its own chunks
    (store/fts.py), and which those are was a scan of the whole table."""
    conn.execute("CREATE INDEX documents_namespace ON documents (namespace) WHERE namespace IS NOT NULL")


def m027_archives_kept_at(conn: sqlite3.Connection) -> None:
    """When each archive's text was last given to `archive` (service/archive.py): the same
    text again returns the handle it was first archived under, and retention went by that
    first time, so the handle an agent was just given was the first an archive pruned."""
    conn.execute("ALTER TABLE archives ADD COLUMN kept_at REAL NOT NULL DEFAULT 0")
    conn.execute("UPDATE archives SET kept_at = created_at")
    conn.execute("CREATE INDEX archives_kept ON archives (kept_at)")


def m028_items_date_first(conn: sqlite3.Connection) -> None:
    """The earliest of a chunk's dated lines, beside its latest (`date`): a search until a
    day among a log's lines finds the chunk holding it (store/scope.py). Stored chunks get
    theirs when they are read again (ingest/convert.py READER_VERSION 22); until then the
    latest stands for both, as it did."""
    conn.execute("ALTER TABLE items ADD COLUMN date_first TEXT")


MIGRATIONS: tuple[Callable[[sqlite3.Connection], None], ...] = (
    m001_initial,
    m002_vectors,
    m003_graph,
    m004_locations,
    m005_agent_records,
    m006_dates,
    m007_cjk_index,
    m008_document_links,
    m009_covering_relations,
    m010_capsule_title_keys,
    m011_document_readings,
    m012_document_ids_autoincrement,
    m013_refusals_unread,
    m014_source_root_mounted,
    m015_source_root_mount_unknown,
    m016_hashed_keys,
    m017_source_sweep_kept,
    m018_source_root_mount,
    m019_source_root_identity,
    m020_status_tallies_covered,
    m021_extractions_pending,
    m022_document_date_ends,
    m023_purge_removed_words,
    m024_owed_work,
    m025_capsules_newest,
    m026_documents_namespace,
    m027_archives_kept_at,
    m028_items_date_first,
)


def schema_version(conn: sqlite3.Connection) -> int:
    return conn.execute("PRAGMA user_version").fetchone()[0]


def migrate(conn: sqlite3.Connection, migrations: tuple[Callable[[sqlite3.Connection], None], ...] = MIGRATIONS) -> int:
    """Bring the schema up to date; returns the version reached.

    A database newer than this code is refused rather than written to, because an older
    writer would not know the invariants the newer schema keeps.
    """
    version = schema_version(conn)
    if version > len(migrations):
        raise RuntimeError(
            f"database schema version {version} is newer than this kenning ({len(migrations)}); upgrade kenning"
        )
    # Foreign keys off while tables are rebuilt (SQLite's documented procedure), and
    # checked before each migration commits, so a rebuild can never orphan a row.
    conn.execute("PRAGMA foreign_keys = OFF")
    try:
        for number, migration in enumerate(migrations[version:], start=version + 1):
            log.info("applying migration %s", migration.__name__)
            conn.execute("BEGIN IMMEDIATE")
            try:
                migration(conn)
                if violation := conn.execute("PRAGMA foreign_key_check").fetchone():
                    raise RuntimeError(f"migration {migration.__name__} broke a foreign key: {violation}")
                conn.execute(f"PRAGMA user_version = {number}")
                conn.execute("COMMIT")
            except BaseException:
                # SQLite has rolled back already on some errors (a full disk): the
                # error to report is that one, not a ROLLBACK with nothing to undo.
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
    finally:
        conn.execute("PRAGMA foreign_keys = ON")
    return len(migrations)

