"""What registering a folder will cost, shown before anything is ingested.

The walk is the sweep's own (`walk` with the source's rules), so the counts describe
the files a sweep would actually take. The chunk figure comes from a sample: for a
couple of seconds, files of each type are read and chunked by the pipeline's own reader
and chunker, and each type's chunks-per-byte (with every file at least one chunk) is
fitted to what they gave and applied to the files not read. Size alone misses by a
factor of two on headed markdown and code, where sections and definitions end chunks
early (bench/preview_estimate.py measures both on real folders).

Each sampled file is read in a parse worker, as a sweep reads it, under the daemon's
memory limit and no longer than the sample's time: a file that never finishes parsing (a
PDF of a few hundred bytes whose page tree refers to itself) hung `ken sources add`, read
in the command itself, and a PDF bomb inflated in it.
"""

from __future__ import annotations

import asyncio
import math
import random
import time
from collections import defaultdict
from dataclasses import asdict, dataclass
from pathlib import Path

from kenning.config import ChunkingSettings, Settings, SourceSettings
from kenning.errors import KenningError, ShutDown, WorkerStopped
from kenning.ingest.convert import count_chunks
from kenning.ingest.parse_pool import ParsePool
from kenning.ingest.walk import CAPPED, Discovered, WalkReport, WalkRules, newest, walk
from kenning.text.controls import escaped
from kenning.text.counts import counted

# Share of a file's bytes that becomes text, by format, for a type no file of which
# could be sampled in time: rough, from typical files.
_TEXT_SHARE = {".pdf": 0.1, ".docx": 0.2, ".html": 0.4, ".htm": 0.4}
# Files of each type read for the sample (fewer of the slow-to-parse types), and a time
# limit on the whole sample for slow disks and machines.
SAMPLE_PER_TYPE = 40
SAMPLE_PER_SLOW_TYPE = 4
SLOW_TYPES = frozenset({".pdf", ".docx"})
SAMPLE_SECONDS = 5.0
# Slow types are read only in the first part of the time: a PDF can take seconds.
SLOW_SHARE = 1 / 3
# Larger files are not sampled: one big PDF would spend the whole budget.
SAMPLE_MAX_BYTES = 1 << 20


@dataclass(frozen=True)
class Preview:
    files: int
    over_cap: int
    too_large: int
    estimated_chunks: int
    estimated_llm_calls: int
    chunks_per_sweep: int  # 0 = no limit
    estimated_sweeps: int
    # Files the walk passed over, by reason (walk.WalkReport), and folders it skipped.
    skipped: dict[str, int]
    skipped_dirs: int
    # Of those folders, the system filesystems' mount points (proc/, sys/ in a chroot), by type.
    system_dirs: dict[str, str]

    def to_dict(self) -> dict:
        return asdict(self)


def kept_files(
    source: SourceSettings, settings: Settings, report: WalkReport
) -> tuple[list[Discovered], int, int]:
    """The files a sweep would read: (files, how many the cap leaves out, how many are too large)."""
    found = walk(source.path, WalkRules(ignore=source.ignore, confine_to_root=source.confine_to_root), report)
    kept = newest(found, source.max_files, report)
    max_bytes = settings.daemon.max_file_mb * 1024 * 1024
    readable = [item for item in kept if item.size <= max_bytes]
    return readable, len(found) - len(kept), len(kept) - len(readable)


def preview(source: SourceSettings, settings: Settings) -> Preview:
    report = WalkReport()
    kept, over_cap, too_large = kept_files(source, settings, report)
    max_bytes = int(settings.daemon.max_file_mb * 1024 * 1024)
    chunks = estimate_chunks(kept, settings.chunking, max_bytes, settings.limits.parse_memory_mb)
    per_sweep = settings.daemon.folder_chunk_budget if source.chunk_budget is None else source.chunk_budget
    if settings.daemon.sweep_chunk_budget:
        per_sweep = min(filter(None, (per_sweep, settings.daemon.sweep_chunk_budget)))
    return Preview(
        files=len(kept) + too_large,
        over_cap=over_cap,
        too_large=too_large,
        estimated_chunks=chunks,
        estimated_llm_calls=chunks if settings.llm.backend == "ollama" else 0,
        chunks_per_sweep=per_sweep,
        estimated_sweeps=max(1, math.ceil(chunks / per_sweep)) if per_sweep else 1,
        skipped={reason: count for reason, count in report.files.most_common() if reason != CAPPED},
        skipped_dirs=report.skipped_dirs,
        system_dirs=dict(report.system_dirs),
    )


def estimate_chunks(
    files: list[Discovered], chunking: ChunkingSettings, max_bytes: int, memory_mb: int, budget: float = SAMPLE_SECONDS
) -> int:
    """Chunks the files will make: sampled files count as they chunked, the rest by their
    type's fitted chunks-per-byte."""
    groups: dict[str, list[Discovered]] = defaultdict(list)
    for item in files:
        # By the name its reader goes by: a link's target's (walk.Discovered.reader_name).
        groups[Path(item.reader_name).suffix.lower()].append(item)
    sampled = asyncio.run(_sample(groups, chunking, max_bytes, ParsePool(1, memory_mb), budget))
    total = 0
    for suffix, items in groups.items():
        measured = sampled.get(suffix, {})
        rate, readable = _fit(list(measured.values()), [item.size for item in items if item.path in measured])
        for item in items:
            if item.path in measured:
                total += measured[item.path]
            elif item.size:
                total += _guess(item.size, suffix, chunking) if rate is None else readable * max(1.0, item.size * rate)
    return round(total)


async def _sample(
    groups: dict[str, list[Discovered]], chunking: ChunkingSettings, max_bytes: int, parsers: ParsePool, budget: float
) -> dict[str, dict]:
    """Read and chunk a random few files of each type, one type after another in turn,
    until each has its quota or the time is spent. A file the time ran out on is not
    measured; one the sweep would fail (its parse out of memory included) gives none."""
    rng = random.Random(0)
    queues = {}
    for suffix, items in groups.items():
        candidates = [item for item in items if 0 < item.size <= SAMPLE_MAX_BYTES]
        rng.shuffle(candidates)
        queues[suffix] = candidates[: SAMPLE_PER_SLOW_TYPE if suffix in SLOW_TYPES else SAMPLE_PER_TYPE]
    measured: dict[str, dict] = defaultdict(dict)
    started = time.monotonic()
    deadline = started + budget
    try:
        while any(queues.values()) and time.monotonic() < deadline:
            for suffix, queue in queues.items():
                now = time.monotonic()
                if suffix in SLOW_TYPES and now > started + budget * SLOW_SHARE:
                    queue.clear()
                if not queue or now >= deadline:
                    continue
                item = queue.pop()
                # A link is read at its target, as a sweep reads it (convert.check_path).
                target = item.path.resolve() if item.target_name else item.path
                args = (target, max_bytes, chunking.target_chars, chunking.overlap_chars)
                try:
                    count = await parsers.run(count_chunks, args, deadline - now)
                except (TimeoutError, WorkerStopped, ShutDown):
                    continue
                except (KenningError, MemoryError):
                    count = 0
                measured[suffix][item.path] = count
    finally:
        await parsers.stop()
    return measured


def _fit(chunks: list[int], sizes: list[int]) -> tuple[float | None, float]:
    """The chunks-per-byte r for which sum(max(1, size * r)) over the files that gave text
    equals the chunks they gave, and the share of files that gave any; None without a sample."""
    pairs = [(size, count) for size, count in zip(sizes, chunks) if count]
    if not chunks:
        return None, 1.0
    readable = len(pairs) / len(chunks)
    if not pairs:
        return 0.0, 0.0
    target = sum(count for _, count in pairs)
    low, high = 0.0, target / min(size for size, _ in pairs)
    for _ in range(60):
        middle = (low + high) / 2
        if sum(max(1.0, size * middle) for size, _ in pairs) < target:
            low = middle
        else:
            high = middle
    return high, readable


def _guess(size: int, suffix: str, chunking: ChunkingSettings) -> int:
    step = max(chunking.target_chars - chunking.overlap_chars, 1)
    return max(1, math.ceil(size * _TEXT_SHARE.get(suffix, 1.0) / step))


def describe(result: Preview, source: SourceSettings, settings: Settings) -> list[str]:
    """The lines `ken sources add` shows before it asks."""
    lines = [f"{escaped(str(source.path))}: {counted(result.files, 'file')} to index"]
    if result.over_cap:
        are = "is" if result.over_cap == 1 else "are"
        lines.append(
            f"  {counted(result.over_cap, 'more file')} {are} over max_files = {source.max_files} (the oldest are left out)"
        )
    if result.too_large:
        are = "is" if result.too_large == 1 else "are"
        lines.append(
            f"  {counted(result.too_large, 'file')} {are} larger than max_file_mb = {settings.daemon.max_file_mb:g}"
            " and will be skipped"
        )
    if result.skipped:
        reasons = ", ".join(f"{count} {reason}" for reason, count in result.skipped.items())
        lines.append(f"  {counted(sum(result.skipped.values()), 'file')} passed over: {reasons}")
    if result.skipped_dirs:
        lines.append(f"  {counted(result.skipped_dirs, 'folder')} not entered (hidden, build or dependency trees, ignored)")
    if result.system_dirs:
        shown = sorted(result.system_dirs.items())
        named = ", ".join(f"{escaped(rel)}/ ({kind})" for rel, kind in shown[:5])
        more = f" and {len(shown) - 5} more" if len(shown) > 5 else ""
        lines.append(f"  of them, system filesystems holding no documents: {named}{more}")
    lines.append(f"  about {counted(result.estimated_chunks, 'chunk')} (estimated from a sample of the files)")
    if settings.llm.backend == "ollama":
        lines.append(f"  about {counted(result.estimated_llm_calls, 'LLM call')} to {settings.llm.model} for entity extraction")
    else:
        lines.append("  no LLM calls: entities come from the offline extractor")
    if result.chunks_per_sweep:
        lines.append(
            f"  {counted(result.chunks_per_sweep, 'chunk')} per sweep, so about {counted(result.estimated_sweeps, 'sweep')} to finish"
        )
    else:
        lines.append("  no chunk budget: everything is indexed in the first sweep")
    return lines
