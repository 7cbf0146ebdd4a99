"""Hostile text on the paths that run in daemon threads: what each stage costs.

Files are parsed in killable worker processes (ingest/parse_pool.py), but agent text
(`documents.add`), memory capsules, archive entries, ledger entries and text prepared
again after an upgrade (service/rereading.py) are redacted, chunked and dated in a
thread of the daemon (`text_prep.prepare_text` under `asyncio.to_thread`), which no
limit can kill and whose pure-Python work holds the GIL the event loop needs. So every
stage has to stay linear in the text whatever the text is.

Each input is built at the given size in characters and run through each stage on its
own, timed with one clock:

| stage | what runs |
|---|---|
| visible | `text_prep.visible`, the blank-text check `documents.add` runs first |
| redact | `ingest.redact.redact` on the whole text |
| chunk | `chunker.chunk_document` (markdown, as agent text and capsules are; `--kind prose` as archives and ledger entries); markdown is held to [limits] max_chunks_per_file's default as agent text is: past it the text is refused and the later stages show `-` |
| doc-date | `dates.document_date` and `dates.title_heading` on the whole text |
| items | `items.new_items`: each chunk's date and CJK pieces |
| periods | `dates.written_days`, `named_spans`, `periods_without_year` on each chunk: not ingest, but what a search reads off each hit's text (retrieval/dates.py, truth.py); the rest of what it reads, values, truth signals, sentences and the query, is timed by bench/hostile_search.py |
| extract | `offline_extract.extract_text` on each chunk (runs in a worker process in the daemon, killable) |
| store | `documents.store_text` into a fresh SQLite file: rows, FTS5, CJK index, one transaction |

Times are CPU seconds of the process (waiting for a core on a busy machine is not
counted; the store stage's database thread is). The ratio column is the input's total over plain prose of the same size in the same
run: it says how much worse than ordinary text an input is, on any machine. A stage
that is linear shows about the same ratio at every size; run two sizes to see growth.

    .venv/bin/python bench/hostile_text.py                        # 1 MB (~2 min on 2 cores)
    .venv/bin/python bench/hostile_text.py --sizes 1e6 2e6        # growth: time ratio 2 is linear
    .venv/bin/python bench/hostile_text.py --sizes 1e7 --only prose 'one line'   # the socket's maximum
    .venv/bin/python bench/hostile_text.py --stages redact chunk  # some stages only

Sizes are in characters (protocol.MAX_TEXT_CHARS is 10,000,000). Progress goes to stderr.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from kenning.config import ChunkingSettings, LimitsSettings  # noqa: E402
from kenning.ingest import text_prep  # noqa: E402
from kenning.ingest.chunker import chunk_document  # noqa: E402
from kenning.ingest.items import new_items  # noqa: E402
from kenning.ingest.readers import ReadResult  # noqa: E402
from kenning.ingest.redact import redact  # noqa: E402
from kenning.store import documents, sources  # noqa: E402
from kenning.store.database import Database  # noqa: E402
from kenning.text import dates  # noqa: E402
from kenning.workers.offline_extract import extract_text  # noqa: E402

# [limits] max_chunks_per_file's default: agent text past it is refused once chunked.
MAX_CHUNKS = LimitsSettings().max_chunks_per_file
STAGES = ("visible", "redact", "chunk", "doc-date", "items", "periods", "extract", "store")
WORDS = (
    "the of and to in is that for it as was with be by on not he this are or his from at which but have an they "
    "you were her all she there would their we him been has when who will more no if out so said what up its "
    "about into than them can only other new some could time these two may then do first any my now such like "
    "our over man me even most made after also did many before must through back years where much your way well "
    "down should because each just those people how too little state good very make world still own see men work "
    "long get here between both life being under never day same another know while last might us great old year "
    "off come since against go came right used take three Maria Chen Oslo Kenning March 2024"
).split()


def prose(size: int, rng: random.Random) -> str:
    """Sentences of common words in paragraphs, with a heading now and then."""
    parts: list[str] = []
    total = 0
    while total < size:
        sentence = " ".join(rng.choice(WORDS) for _ in range(rng.randint(6, 20))).capitalize() + ". "
        if rng.random() < 0.15:
            sentence += "\n\n"
        if rng.random() < 0.01:
            sentence += f"## Section {total}\n\n"
        parts.append(sentence)
        total += len(sentence)
    return "".join(parts)[:size]


def repeat(piece: str) -> Callable[[int, random.Random], str]:
    def build(size: int, rng: random.Random) -> str:
        return (piece * (size // len(piece) + 1))[:size]

    return build


def lines_of(make: Callable[[int], str]) -> Callable[[int, random.Random], str]:
    """Line i is make(i), until the size."""

    def build(size: int, rng: random.Random) -> str:
        parts: list[str] = []
        total = i = 0
        while total < size:
            line = make(i) + "\n"
            parts.append(line)
            total += len(line)
            i += 1
        return "".join(parts)[:size]

    return build


def random_run(alphabet: str, length: int) -> Callable[[int, random.Random], str]:
    """Runs of `length` random characters, one space apart."""

    def build(size: int, rng: random.Random) -> str:
        parts, total = [], 0
        while total < size:
            run = "".join(rng.choices(alphabet, k=length)) + " "
            parts.append(run)
            total += len(run)
        return "".join(parts)[:size]

    return build


B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
CJK = "的一是不了人我在有他这中大来上国个到说们为子和你地出道也时年得就那要下以生会自着去之过家学对可她里后小么心多天而能好都然没日于起还发成事只作当想看文无开手十用主行方又如前所本见经头面公同三已老从动两长知民样现分将外但身些与高意进把法此实回二理美点月明其种声全工己话"
INPUTS: dict[str, Callable[[int, random.Random], str]] = {
    "prose": prose,
    # One line, nothing to cut at.
    "one line, no spaces": repeat("a"),
    "one line of words": repeat("lorem "),
    "one line of digits": repeat("7"),
    # Punctuation runs.
    "'!' repeated": repeat("!"),
    "'.' repeated": repeat("."),
    "'*' repeated": repeat("*"),
    "'_' repeated": repeat("_"),
    "'`' repeated": repeat("`"),
    "'[' repeated": repeat("["),
    "'(' repeated": repeat("("),
    "'|' repeated": repeat("|"),
    "'-' repeated": repeat("-"),
    "'=' repeated": repeat("="),
    "':' repeated": repeat(":"),
    "'/' repeated": repeat("/"),
    "'@' repeated": repeat("@"),
    "'#' repeated": repeat("#"),
    "'<' repeated": repeat("<"),
    "'\"' repeated": repeat('"'),
    "'\\'' repeated": repeat("'"),
    "'$' repeated": repeat("$"),
    "'%' repeated": repeat("%"),
    "'.a' repeated": repeat(".a"),
    "'a.' repeated": repeat("a."),
    "'-a' repeated": repeat("-a"),
    "'a_' repeated": repeat("a_"),
    "'A.' repeated": repeat("A."),
    "'A-' repeated": repeat("A-"),
    "'a(' repeated": repeat("a("),
    "'(a' repeated": repeat("(a"),
    "'A ' repeated": repeat("A "),
    "'Ab ' repeated": repeat("Ab "),
    "'AB ' repeated": repeat("AB "),
    "'A.B' repeated": repeat("A.B"),
    "'Aa.' repeated": repeat("Aa."),
    "'a`' lines": lines_of(lambda i: "`a" * 20),
    # Nested markers.
    "'>' nested, one line": repeat(">"),
    "'> ' nested, one line": repeat("> "),
    "'- ' nested, one line": repeat("- "),
    "'1. ' nested, one line": repeat("1. "),
    "quote depth lines": lines_of(lambda i: "> " * (i % 200) + "quoted"),
    "list indent lines": lines_of(lambda i: "  " * (i % 500) + "- item"),
    "'**' repeated": repeat("**"),
    "'**a' repeated": repeat("**a"),
    "'[a](' repeated": repeat("[a]("),
    "'![' repeated": repeat("!["),
    # Tables.
    "one table row, many cells": repeat("| a "),
    "wide table": lines_of(lambda i: "| " + " | ".join(str(i + j) for j in range(300)) + " |"),
    "tall table": lines_of(lambda i: "|---|---|" if i == 1 else f"| cell {i} | value {i} |"),
    # Headings.
    "'# h' lines": lines_of(lambda i: "# h"),
    "'#' alone lines": lines_of(lambda i: "#"),
    "heading levels 1-6 lines": lines_of(lambda i: "#" * (i % 6 + 1) + f" h{i}"),
    "deepening headings, no body": lines_of(lambda i: "#" * (i % 6 + 1) + " " + "x" * 190),
    "'# ' + spaces": lambda size, rng: "# " + " " * (size - 3) + "x",
    "'#' run + space": lambda size, rng: "#" * (size - 2) + " x",
    "heading then '#' run": lambda size, rng: "# a " + "#" * (size - 4),
    "heading, many ' #'": repeat("# "),
    "'## a ##' lines": lines_of(lambda i: "## a " + "#" * 50),
    # Links and URLs.
    "markdown links": repeat("[link](https://example.com/a/b?c=d) "),
    "URLs, no spaces": repeat("https://example.com/"),
    "one URL, long path": lambda size, rng: "https://example.com/" + "a/" * (size // 2),
    "'http://' repeated": repeat("http://"),
    "'www.' repeated": repeat("www."),
    "'a@b.' repeated": repeat("a@b."),
    "emails": repeat("user.name@example.com "),
    "'://user:' repeated": repeat("://user:"),
    "'?sig=' repeated": repeat("?sig="),
    # Whitespace.
    "spaces": lambda size, rng: "x" + " " * (size - 1),
    "tabs": lambda size, rng: "x" + "\t" * (size - 1),
    "newlines": lambda size, rng: "x" + "\n" * (size - 1),
    "' \\n' repeated": repeat(" \n"),
    "'\\r\\n' repeated": repeat("x\r\n"),
    "'\\r' repeated": repeat("\r"),
    "nbsp": lambda size, rng: "x" + "\u00a0" * (size - 1),
    "zero-width spaces": lambda size, rng: "x" + "\u200b" * (size - 1),
    "' \\t' repeated": repeat(" \t"),
    "'x ' + blank lines": repeat("x\n\n\n\n\n\n\n\n\n\n"),
    "one long line then blank lines": lambda size, rng: "x" * (size // 2) + "\n" * (size // 2),
    "fence opened, never closed": lambda size, rng: "```\n" + prose(size - 4, rng),
    "'```' lines": lines_of(lambda i: "```"),
    "'~~~~' runs": repeat("~~~~ "),
    "front matter, never closed": lambda size, rng: "---\n" + "".join(f"k{i}: v\n" for i in range(size // 7))[: size - 4],
    # What looks almost like a secret.
    "'eyJ' repeated": repeat("eyJ"),
    "'AKIA' repeated": repeat("AKIA"),
    "'ghp_' repeated": repeat("ghp_"),
    "'sk-' repeated": repeat("sk-"),
    "'xoxb-' repeated": repeat("xoxb-"),
    "'password=' repeated": repeat("password="),
    "'password: ' repeated": repeat("password: "),
    "'token ' repeated": repeat("token "),
    "'the password is ' repeated": repeat("the password is "),
    "'key=' repeated": repeat("key="),
    "'\"key\": [' repeated": repeat('"key": ['),
    "'\"token\": {\"a\": ' repeated": repeat('"token": {"a": '),
    "'secret: |' lines": lines_of(lambda i: "secret: |" if i % 2 == 0 else "  v"),
    "BEGIN PRIVATE KEY lines": lines_of(lambda i: "-----BEGIN RSA PRIVATE KEY-----"),
    "'Bearer ' repeated": repeat("Bearer "),
    "'Authorization: ' repeated": repeat("Authorization: "),
    "'-p' repeated": repeat("-p"),
    "'mysql -p' repeated": repeat("mysql -p"),
    "'curl -u a:' repeated": repeat("curl -u a:"),
    "'<password>' repeated": repeat("<password>"),
    "'machine h password ' lines": lines_of(lambda i: "machine h password x " * 20),
    "'a:1:b:c:' lines": repeat("a:1:b:c:"),
    "'| password |' table": lines_of(lambda i: "| password | user |" if i == 0 else "| x | y |"),
    "base64 run": lambda size, rng: "".join(rng.choices(B64, k=size)),
    "base64 tokens 40": random_run(B64, 40),
    "hex run": lambda size, rng: "".join(rng.choices("0123456789abcdef", k=size)),
    "'a=b ' repeated": repeat("a=b "),
    "'a.b.c' identifier": lambda size, rng: ".".join(["ab"] * (size // 3)),
    "'Cookie: ' lines": lines_of(lambda i: "Cookie: " + "a=b; " * 50),
    # What looks almost like a date.
    "'2024-13-45 ' repeated": repeat("2024-13-45 "),
    "'2024-01-' repeated": repeat("2024-01-"),
    "'2024-' repeated": repeat("2024-"),
    "'2024 ' repeated": repeat("2024 "),
    "'20242024' digits": repeat("2024"),
    "'12 March ' repeated": repeat("12 March "),
    "'March ' repeated": repeat("March "),
    "'March 12, ' repeated": repeat("March 12, "),
    "'Q1 ' repeated": repeat("Q1 "),
    "'Q1-' repeated": repeat("Q1-"),
    "'2024 Q' repeated": repeat("2024 Q"),
    "'H1 ' repeated": repeat("H1 "),
    "'first half of ' repeated": repeat("first half of "),
    "'2024年' repeated": repeat("2024年"),
    "'2024年1月' repeated": repeat("2024年1月"),
    "'last ' repeated": repeat("last "),
    "'date: ' lines": lines_of(lambda i: "date: 2024-13-01"),
    "'2024.01.01.' repeated": repeat("2024.01.01."),
    # Scripts.
    "CJK run": lambda size, rng: "".join(rng.choices(CJK, k=size)),
    "one CJK char repeated": repeat("的"),
    "Hangul run": lambda size, rng: "".join(chr(rng.randint(0xAC00, 0xD7A3)) for _ in range(size)),
    "kana run": lambda size, rng: "".join(chr(rng.randint(0x3041, 0x3096)) for _ in range(size)),
    "combining marks on one letter": lambda size, rng: "a" + "\u0301" * (size - 1),
    "'e' + combining repeated": repeat("e\u0301"),
    "zalgo words": lambda size, rng: "".join(rng.choice("abcdef") + "\u0301\u0308\u0327" for _ in range(size // 4)),
    "RTL override repeated": repeat("\u202e a"),
    "emoji ZWJ repeated": repeat("\U0001f468\u200d"),
    "fullwidth letters": repeat("ｋｅｙ＝"),
    "Arabic words": repeat("كلمة "),
    # Names for the entity extractor.
    "capitalised words": repeat("Alpha Beta Gamma Delta "),
    "capitalised, no stop": lambda size, rng: " ".join(rng.choice(["Alpha", "Beta", "Gamma", "Delta", "Omega"]) for _ in range(size // 6)),
    "'Foo (FB) ' repeated": repeat("Foo Bar (FB) "),
    "'(A' repeated": repeat("(A"),
    "'A (' repeated": repeat("A ("),
    "dotted names": repeat("Foo.bar.Baz.qux "),
    "'a.b(' calls": repeat("a.b("),
    "camelCase run": repeat("aB"),
    "ALLCAPS run": repeat("AB"),
    "snake_case run": repeat("a_b"),
}


def timed(function: Callable[[], object]) -> float:
    """CPU seconds of this process (its database thread's too), not wall time: on a
    shared machine a wait for a core is no cost of the input's."""
    start = time.process_time()
    function()
    return time.process_time() - start


def stage_times(text: str, kind: str, stages: tuple[str, ...], work: Path, loop: asyncio.AbstractEventLoop) -> dict[str, float]:
    chunking = ChunkingSettings()
    times: dict[str, float] = {}
    results: dict[str, object] = {}
    if "visible" in stages:
        times["visible"] = timed(lambda: text_prep.visible(text))

    def redacting() -> None:
        results["clean"] = redact(text)

    times["redact"] = timed(redacting)
    clean = results["clean"]
    assert isinstance(clean, str)

    # Only agent text is held to the limit; an archive (prose) is stored however many it makes.
    most = MAX_CHUNKS if kind == "markdown" else None

    def chunking_() -> None:
        results["chunks"] = chunk_document(
            ReadResult(text=clean, title="hostile", kind=kind, format="text"),
            target_chars=chunking.target_chars, overlap_chars=chunking.overlap_chars, max_chunks=most,
        )

    times["chunk"] = timed(chunking_)
    chunks = results["chunks"]
    assert isinstance(chunks, list)

    if most is not None and len(chunks) > most:
        # Refused once chunking finds too many (text_prep.prepare_text): nothing is dated,
        # extracted or written.
        return {stage: times[stage] for stage in stages if stage in times}

    def dating() -> None:
        stated = dates.document_date(clean, "hostile")
        results["heading"] = dates.title_heading(clean, stated)

    times["doc-date"] = timed(dating)

    def itemising() -> None:
        results["items"] = new_items("hostile", chunks, results["heading"])  # type: ignore[arg-type]

    times["items"] = timed(itemising)
    if "periods" in stages:
        from datetime import date

        today = date(2026, 12, 1)

        def periods() -> None:
            for chunk in chunks:
                dates.written_days(chunk.text)
                dates.named_spans(chunk.text, today)
                dates.periods_without_year(chunk.text, today)

        times["periods"] = timed(periods)
    if "extract" in stages:
        times["extract"] = timed(lambda: [extract_text(chunk.text) for chunk in chunks])
    if "store" in stages:
        prepared = text_prep.prepare_text(text_prep.Labels("hostile", "bench://hostile"), text, kind, chunking)

        # Each input into a library of its own, so no input pays for what the ones
        # before it left in the index.
        path = work / f"kenning-{time.time_ns()}.db"
        db = Database(path)
        loop.run_until_complete(db.open())

        async def storing() -> None:
            source_id = await sources.aggregate_source(db, "agent")
            await documents.store_text(db, source_id, "uri:hostile", "bench://hostile", prepared.meta, prepared.items)

        try:
            times["store"] = timed(lambda: loop.run_until_complete(storing()))
        finally:
            loop.run_until_complete(db.close())
            for leftover in work.glob(path.name + "*"):
                leftover.unlink()
    return {stage: times[stage] for stage in stages if stage in times}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=float, nargs="+", default=[1e6], help="sizes in characters (default 1e6)")
    parser.add_argument("--kind", choices=("markdown", "prose"), default="markdown")
    parser.add_argument("--stages", nargs="+", choices=STAGES, default=list(STAGES))
    parser.add_argument("--only", nargs="+", default=[], help="inputs whose name holds one of these")
    parser.add_argument("--top", type=int, default=0, help="print only the N worst inputs by total")
    args = parser.parse_args()
    stages = tuple(stage for stage in STAGES if stage in args.stages)
    names = [name for name in INPUTS if name == "prose" or not args.only or any(word in name for word in args.only)]
    loop = asyncio.new_event_loop()
    with tempfile.TemporaryDirectory(prefix="hostile-text-") as work:
        try:
            for size in (int(s) for s in args.sizes):
                rows: list[tuple[str, dict[str, float]]] = []
                for name in names:
                    text = INPUTS[name](size, random.Random(7))
                    print(f"{size:,} chars: {name} ...", file=sys.stderr, flush=True)
                    rows.append((name, stage_times(text, args.kind, stages, Path(work), loop)))
                base = sum(rows[0][1].values())
                shown = rows if not args.top else [rows[0], *sorted(rows[1:], key=lambda r: -sum(r[1].values()))[: args.top]]
                header = f"{'input':<36}" + "".join(f"{stage:>9}" for stage in stages) + f"{'total':>9}{'ratio':>8}"
                print(f"\n{size:,} characters, {args.kind}; seconds per stage, ratio = total / prose's total")
                print(header)
                for name, times in shown:
                    total = sum(times.values())
                    cells = "".join(f"{times[stage]:>9.3f}" if stage in times else f"{'-':>9}" for stage in stages)
                    print(f"{name[:36]:<36}{cells}{total:>9.3f}{total / base:>8.2f}")
                worst = {stage: max(rows, key=lambda r: r[1].get(stage, 0.0)) for stage in stages}
                print("worst per stage: " + "; ".join(f"{stage} {row[1][stage]:.3f} s ({row[0]})" for stage, row in worst.items()))
        finally:
            loop.close()


if __name__ == "__main__":
    main()
