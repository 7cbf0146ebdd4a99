"""What registering a folder will cost, shown before anything is ingested.

The walk is the sweep's own (`walk` with the source's rules), so the counts describe
the files a sweep would actually take. The chunk figure is an estimate from file sizes
and the chunker's target size — it shows the order of magnitude before the user
confirms, and nothing treats it as a bound.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

from kenning.config import Settings, SourceSettings
from kenning.ingest.walk import CAPPED, WalkReport, WalkRules, newest, walk

# Share of a file's bytes that becomes text, by format: rough, from typical files.
_TEXT_SHARE = {".pdf": 0.1, ".docx": 0.2, ".html": 0.4, ".htm": 0.4}


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

    def to_dict(self) -> dict:
        return asdict(self)


def preview(source: SourceSettings, settings: Settings) -> Preview:
    report = WalkReport()
    found = walk(source.path, WalkRules(ignore=source.ignore, confine_to_root=source.confine_to_root), report)
    kept = newest(found, source.max_files, report)
    max_bytes = settings.daemon.max_file_mb * 1024 * 1024
    step = max(settings.chunking.target_chars - settings.chunking.overlap_chars, 1)
    chunks = 0
    too_large = 0
    for item in kept:
        if item.size > max_bytes:
            too_large += 1
            continue
        text_bytes = item.size * _TEXT_SHARE.get(item.path.suffix.lower(), 1.0)
        chunks += max(1, math.ceil(text_bytes / step)) if item.size else 0
    per_sweep = settings.daemon.folder_chunk_budget if source.chunk_budget is None else source.chunk_budget
    if settings.daemon.sweep_chunk_budget:
        per_sweep = min(filter(None, (per_sweep, settings.daemon.sweep_chunk_budget)))
    return Preview(
        files=len(kept),
        over_cap=len(found) - len(kept),
        too_large=too_large,
        estimated_chunks=chunks,
        estimated_llm_calls=chunks if settings.llm.backend == "ollama" else 0,
        chunks_per_sweep=per_sweep,
        estimated_sweeps=max(1, math.ceil(chunks / per_sweep)) if per_sweep else 1,
        skipped={reason: count for reason, count in report.files.most_common() if reason != CAPPED},
        skipped_dirs=report.skipped_dirs,
    )


def describe(result: Preview, source: SourceSettings, settings: Settings) -> list[str]:
    """The lines `ken sources add` shows before it asks."""
    lines = [f"{source.path}: {result.files} files to index"]
    if result.over_cap:
        lines.append(f"  {result.over_cap} more files are over max_files = {source.max_files} (the oldest are left out)")
    if result.too_large:
        lines.append(f"  {result.too_large} files are larger than max_file_mb = {settings.daemon.max_file_mb:g} and will be skipped")
    if result.skipped:
        reasons = ", ".join(f"{count} {reason}" for reason, count in result.skipped.items())
        lines.append(f"  {sum(result.skipped.values())} files passed over: {reasons}")
    if result.skipped_dirs:
        lines.append(f"  {result.skipped_dirs} folders not entered (hidden, build or dependency trees, ignored)")
    lines.append(f"  about {result.estimated_chunks} chunks (estimated from file sizes)")
    if settings.llm.backend == "ollama":
        lines.append(f"  about {result.estimated_llm_calls} LLM calls to {settings.llm.model} for entity extraction")
    else:
        lines.append("  no LLM calls: entities come from the offline extractor")
    if result.chunks_per_sweep:
        lines.append(
            f"  {result.chunks_per_sweep} chunks per sweep, so about {result.estimated_sweeps} sweeps to finish"
        )
    else:
        lines.append("  no chunk budget: everything is indexed in the first sweep")
    return lines
