"""Which CJK index: overlapping pairs of characters (bigrams) or triples (trigrams)?

kenning keeps a second keyword index for Chinese, Japanese and Korean runs
(kenning/text/cjk.py). This bench ingests the truth set's corpus once through the real
pipeline (bench/truth/corpus; every file, no embedding), then for each variant refills
that index from the stored chunks and asks CJK questions through the keyword leg alone,
so the figures are the index's own:

- none: no CJK index (the main index's unicode61 sees a whole run as one token);
- bigram: pairs, as shipped;
- trigram: triples (what an FTS5 `trigram` tokenizer would match; a two-character
  word such as 订单 or 東京 has no triple of its own).

Questions: the truth set's CJK dev questions, and QUESTIONS below, written for this
bench over CJK notes that no test question names. Latin-script searches never touch the
CJK index (the query has no CJK run), so their latency is unchanged by construction.

    .venv/bin/python bench/cjk_index.py [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

from kenning.config import ChunkingSettings, LimitsSettings, RetrievalSettings, SourceSettings
from kenning.ingest.parse_pool import ParsePool
from kenning.ingest.pipeline import IngestOptions
from kenning.ingest.scan import FolderScanner
from kenning.retrieval.search import Retriever
from kenning.store import sources
from kenning.store.database import Database
from kenning.text import cjk

SET = Path(__file__).resolve().parent / "truth"
# (question, the note that answers it), over notes no truth-set test question names.
QUESTIONS = [
    ("下单时要付多少定金？", "shenzhen/2025-付款条件.md"),
    ("逾期付款多久工厂可以暂停发货？", "shenzhen/2025-付款条件.md"),
    ("新固件要在测试平板上验证多久？", "shenzhen/固件更新流程.md"),
    ("外箱每箱装几台平板？", "shenzhen/包装与标签要求.md"),
    ("本月返修了多少台？", "shenzhen/2025-10-09-周会记录.md"),
    ("東京オフィスの年末年始の休業はいつからですか？", "tokyo/年末年始休業.md"),
    ("出張の宿泊費の上限はいくらですか？", "tokyo/経費精算ルール.md"),
    ("紹介制度の報酬はいくらですか？", "tokyo/採用メモ.md"),
    ("日本語の問い合わせは何時まで対応しますか？", "tokyo/日本語サポート体制.md"),
    ("한빛시스템즈의 수수료는 얼마입니까?", "seoul/계약-메모.md"),
    ("2차 교육은 언제 어디서 합니까?", "seoul/교육-일정.md"),
    ("고객 공지는 몇 분마다 업데이트합니까?", "seoul/장애-대응-절차.md"),
    # Two-character words searched alone, as people search: a trigram index has no piece for them.
    ("定金", "shenzhen/2025-付款条件.md"),
    ("叉车", "shenzhen/包装与标签要求.md"),
    ("会食", "tokyo/経費精算ルール.md"),
    ("국문", "seoul/계약-메모.md"),
]
VARIANTS = {"none": None, "bigram": 2, "trigram": 3}
TOP = 5


def log(message: str) -> None:
    print(f"[cjk] {message}", file=sys.stderr, flush=True)


def questions() -> list[tuple[str, str]]:
    rows = [json.loads(line) for line in (SET / "questions.jsonl").open(encoding="utf-8") if line.strip()]
    dev = [(row["question"], row["relevant"][0]) for row in rows if row["class"] == "cjk" and row["split"] == "dev"]
    return dev + QUESTIONS


async def ingest(root: Path) -> Path:
    docs = root / "docs"
    shutil.copytree(SET / "corpus", docs)
    db = Database(root / "kenning.db")
    await db.open()
    try:
        [source_id] = (await sources.sync_sources(db, [("truth", str(docs), "default")])).values()
        settings = SourceSettings(name="truth", path=docs, max_files=10**6)
        parsers = ParsePool(workers=2, memory_mb=512)
        options = IngestOptions(ChunkingSettings(), LimitsSettings(), 50 * 1024 * 1024, parsers)
        try:
            await FolderScanner(db, source_id, settings, options).sweep()
        finally:
            await parsers.stop()
    finally:
        await db.close()
    return docs


def refill(path: Path, piece: int | None) -> None:
    """The CJK index as ingest would have written it with pieces of `piece` characters."""
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("BEGIN")
    conn.execute("DELETE FROM items_cjk")
    if piece is not None:
        cjk.PIECE = piece
        rows = conn.execute("SELECT id, title, section, content FROM items").fetchall()
        conn.executemany(
            "INSERT INTO items_cjk (rowid, text) VALUES (?, ?)",
            [(item_id, text) for item_id, *fields in rows if (text := cjk.index_text(*fields))],
        )
    conn.execute("COMMIT")
    conn.close()


async def ask(path: Path, docs: Path, asked: list[tuple[str, str]]) -> dict:
    db = Database(path)
    await db.open()
    retriever = Retriever(db, RetrievalSettings())
    first = top = 0
    samples = []
    try:
        for text, relevant in asked:
            started = time.perf_counter()
            result = await retriever.search(text, 10, legs=("keyword",))
            samples.append((time.perf_counter() - started) * 1000)
            found = list(dict.fromkeys(Path(hit.path).relative_to(docs).as_posix() for hit in result.hits))
            top += relevant in found[:TOP]
            first += found[:1] == [relevant]
    finally:
        await db.close()
    return {
        "questions": len(asked),
        "hit@5": round(top / len(asked), 3),
        "hit@1": round(first / len(asked), 3),
        "p50_ms": round(statistics.median(samples), 2),
    }


async def measure(root: Path) -> dict:
    log("ingesting the truth corpus")
    docs = await ingest(root)
    asked = questions()
    result = {}
    for name, piece in VARIANTS.items():
        path = root / f"{name}.db"
        shutil.copy(root / "kenning.db", path)
        refill(path, piece)
        result[name] = await ask(path, docs.resolve(), asked)
        log(f"{name}: {result[name]}")
    cjk.PIECE = 2
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="kenning-cjk-") as work:
        result = asyncio.run(measure(Path(work)))
    if args.json:
        print(json.dumps(result, indent=2))
        return
    print(f"{'index':<10}{'n':>4}{'hit@5':>8}{'hit@1':>8}{'p50 ms':>9}   (keyword leg only)")
    for name, row in result.items():
        print(f"{name:<10}{row['questions']:>4}{row['hit@5']:>8.2f}{row['hit@1']:>8.2f}{row['p50_ms']:>9.2f}")


if __name__ == "__main__":
    main()
