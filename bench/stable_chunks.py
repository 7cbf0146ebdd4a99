"""How much an edit costs: chunks re-embedded after small edits to a 100-chunk document.

A chunk whose text did not change keeps its item id, vector and extracted entities; only
the chunks an edit touched are embedded (and, with an LLM extractor, sent to the model)
again. For each edit this prints the document's chunk count, how many chunks' text the
edit changed (the least any scheme must redo: the baseline, computed in the same run by
diffing the chunk texts), how many items were new afterwards (what the embed job had to
embed), and whether a citation saved before the edit for an unchanged chunk still
resolves to the same text.

Target: a one-line edit in a 100-chunk document re-embeds at most 2 chunks.

    .venv/bin/python bench/stable_chunks.py [--edits N] [--json]

It runs kenning's own sweep and embed job in-process on a temporary folder.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import random
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from kenning.config import ChunkingSettings, EmbedderSettings, LimitsSettings, SourceSettings
from kenning.ingest.parse_pool import ParsePool
from kenning.ingest.pipeline import IngestOptions
from kenning.ingest.scan import FolderScanner
from kenning.store import lookup, sources
from kenning.store.database import Database
from kenning.workers.embed import EmbedJob
from kenning.workers.embedders import make_embedder

SEED = 11
TARGET_CHUNKS = 100
TARGET_REEMBEDDED = 2
WORDS = """
the index keeps every chunk of a document with its lines and section so a citation names the exact place
where an answer came from and an edit that changes one sentence should not make the whole document new
again because embedding and extraction cost time and with a local model they cost minutes per document
""".split()


def paragraph(rng: random.Random) -> str:
    words = rng.choices(WORDS, k=rng.randint(25, 45))
    return " ".join(words).capitalize() + "."


def markdown_document(rng: random.Random) -> list[str]:
    """About 100 chunks of 1200 characters: sections of several paragraphs each."""
    lines = ["# Operations handbook", ""]
    for section in range(1, 30):
        lines += [f"## Part {section}", ""]
        for _ in range(rng.randint(14, 20)):
            lines += [paragraph(rng), ""]
    return lines


def prose_document(rng: random.Random) -> list[str]:
    """The same kind of text with no headings at all: one long run of paragraphs."""
    lines: list[str] = []
    for _ in range(550):
        lines += [paragraph(rng), ""]
    return lines


def edit_word(lines: list[str], at: int) -> list[str]:
    target = next(n for n in range(at, len(lines)) if lines[n])
    changed = list(lines)
    changed[target] = changed[target].replace(" the ", " THE ", 1) + " (reviewed)"
    return changed


def insert_line(lines: list[str], at: int) -> list[str]:
    return [*lines[:at], "A sentence added by the edit, in a paragraph of its own.", "", *lines[at:]]


def delete_line(lines: list[str], at: int) -> list[str]:
    target = next(n for n in range(at, len(lines)) if lines[n])
    return [*lines[:target], *lines[target + 2 :]]


EDITS: dict[str, Callable[[list[str], int], list[str]]] = {
    "one word changed in one line": edit_word,
    "one line added": insert_line,
    "one line deleted": delete_line,
}


async def items(db: Database) -> dict[int, str]:
    return dict(await db.read("SELECT id, content FROM items"))


async def measure(root: Path, name: str, lines: list[str], edit: Callable[[list[str], int], list[str]]) -> dict:
    folder = root / "notes"
    folder.mkdir()
    path = folder / name
    path.write_text("\n".join(lines))
    db = Database(root / "kenning.db")
    await db.open()
    parsers = ParsePool(workers=1, memory_mb=512)
    try:
        ids = await sources.sync_sources(db, [("notes", str(folder), "default")])
        options = IngestOptions(ChunkingSettings(), LimitsSettings(), 1 << 26, parsers)
        scanner = FolderScanner(db, ids["notes"], SourceSettings(name="notes", path=folder), options)
        settings = EmbedderSettings()
        embedder = make_embedder(settings)
        job = EmbedJob(db, embedder, settings.max_chars)
        await scanner.sweep()
        await job.run_pass()
        before = await items(db)
        changed_lines = edit(lines, len(lines) // 2)
        path.write_text("\n".join(changed_lines))
        await scanner.sweep()
        after = await items(db)
        job.progress.begin(0)
        await job.run_pass()
        reembedded = job.progress.done
        unchanged = [item_id for item_id in before if item_id in after]
        cited = unchanged[len(unchanged) // 2] if unchanged else None
        resolved = cited is not None and (await lookup.get_item(db, cited)).content == before[cited]
    finally:
        await parsers.stop()
        await db.close()
    changed_texts = len(set(after.values()) - set(before.values()))
    return {
        "chunks_before": len(before),
        "chunks_after": len(after),
        "chunks_whose_text_changed": changed_texts,
        "new_items": len(set(after) - set(before)),
        "reembedded": reembedded,
        "saved_citation_resolves": resolved,
    }


async def run(edits: int) -> dict:
    results = {}
    for kind, document in (("markdown", markdown_document), ("prose", prose_document)):
        lines = document(random.Random(SEED))
        for label, edit in list(EDITS.items())[:edits]:
            with tempfile.TemporaryDirectory(prefix="kenning-stable-") as tmp:
                suffix = "md" if kind == "markdown" else "txt"
                results[f"{kind}: {label}"] = await measure(Path(tmp), f"handbook.{suffix}", lines, edit)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--edits", type=int, default=len(EDITS), help="the first N edits only (the first is the target's)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    logging.getLogger("kenning").setLevel(logging.WARNING)
    results = asyncio.run(run(args.edits))
    if args.json:
        print(json.dumps(results, indent=2))
        return
    print("== chunks re-embedded after an edit (kenning's sweep and embed job, in-process) ==")
    print(f"{'document: edit':44s} {'chunks':>7s} {'text changed':>13s} {'re-embedded':>12s}  citation kept")
    for label, result in results.items():
        verdict = ""
        if "one word" in label:
            ok = result["reembedded"] <= TARGET_REEMBEDDED and result["chunks_before"] >= TARGET_CHUNKS * 0.9
            verdict = f"  [{'PASS' if ok else 'FAIL'}] target <= {TARGET_REEMBEDDED} of ~{TARGET_CHUNKS}"
        print(
            f"{label:44s} {result['chunks_before']:>4d}->{result['chunks_after']:<3d}"
            f"{result['chunks_whose_text_changed']:>12d} {result['reembedded']:>12d}"
            f"  {'yes' if result['saved_citation_resolves'] else 'NO'}{verdict}"
        )
    print("text changed: chunks whose text is new after the edit (the baseline: what any scheme must redo)", file=sys.stderr)


if __name__ == "__main__":
    main()
