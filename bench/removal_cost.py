"""What zeroing deleted content and purging removed words cost, on a copy of a library.

On copies of one kenning.db (a library `bench/ingest.py --keep DIR` left), for each
`secure_delete` setting (OFF, FAST, ON; the build's default is printed): a re-ingest's
writes (CHURN chunks deleted and written back, in transactions of 50, as sweeps of
edited files do), then one purge as a removal runs it (store/maintenance.py
`purge_removed`: both keyword indexes merged whole, the WAL truncated), then a second
purge right after (a removal in a library purged already). OFF is the baseline of the
same run.

    .venv/bin/python bench/removal_cost.py DIR/data/kenning.db [--churn 5000]
"""

from __future__ import annotations

import argparse
import shutil
import sqlite3
import tempfile
import time
from pathlib import Path

from kenning.store.maintenance import FTS_TABLES, MERGE_PAGES_PER_STEP


def purge(conn: sqlite3.Connection) -> float:
    started = time.perf_counter()
    for table in FTS_TABLES:
        while True:
            before = conn.total_changes
            conn.execute(f"INSERT INTO {table} ({table}, rank) VALUES ('merge', ?)", (-MERGE_PAGES_PER_STEP,))
            if conn.total_changes - before < 2:
                break
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return time.perf_counter() - started


def churn(conn: sqlite3.Connection, count: int) -> float:
    rows = conn.execute(
        "SELECT id, document_id, ord, title, section, content, line_start, line_end FROM items ORDER BY id LIMIT ?",
        (count,),
    ).fetchall()
    started = time.perf_counter()
    for at in range(0, len(rows), 50):
        batch = rows[at : at + 50]
        conn.execute("BEGIN IMMEDIATE")
        conn.executemany("DELETE FROM items WHERE id = ?", [(row[0],) for row in batch])
        conn.executemany(
            "INSERT INTO items (id, document_id, ord, title, section, content, line_start, line_end)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            batch,
        )
        conn.execute("COMMIT")
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("db", type=Path)
    parser.add_argument("--churn", type=int, default=5000)
    args = parser.parse_args()
    with sqlite3.connect(f"file:{args.db}?mode=ro", uri=True) as probe:
        [(chunks,)] = probe.execute("SELECT count(*) FROM items").fetchall()
        [(index_bytes,)] = probe.execute("SELECT sum(length(block)) FROM items_fts_data").fetchall()
        [(default,)] = probe.execute("PRAGMA secure_delete").fetchall()
    print(f"{chunks} chunks, keyword index {index_bytes / 1e6:.1f} MB; this build's secure_delete default: {default}")
    print(f"{'secure_delete':<14}{'churn ' + str(args.churn):>14}{'first purge':>14}{'second purge':>14}")
    with tempfile.TemporaryDirectory() as scratch:
        for mode in ("OFF", "FAST", "ON"):
            copy = Path(scratch) / f"{mode}.db"
            shutil.copy(args.db, copy)
            conn = sqlite3.connect(copy, isolation_level=None)
            for pragma in ("journal_mode = WAL", "synchronous = NORMAL", "foreign_keys = ON", f"secure_delete = {mode}"):
                conn.execute(f"PRAGMA {pragma}")
            written = churn(conn, args.churn)
            first = purge(conn)
            conn.execute("DELETE FROM documents WHERE id = (SELECT max(id) FROM documents)")
            second = purge(conn)
            conn.close()
            print(f"{mode:<14}{written:>12.2f} s{first:>12.2f} s{second:>12.2f} s")


if __name__ == "__main__":
    main()
