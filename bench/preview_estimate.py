"""How close `ken sources add`'s chunk estimate comes to what indexing really makes.

For each folder (by default the system documentation tree and this Python's standard
library), it runs the preview exactly as `ken sources add` does (timed), then reads and
chunks every file the preview counted with the pipeline's own conversion (reader,
redaction, chunker, the per-file chunk limit: the real count) and prints both and the
error. Target: within ±15%. The baseline row is the old estimate (file size over the
chunk step), computed in the same run.

    .venv/bin/python bench/preview_estimate.py [FOLDER ...] [--max-files N]
"""

from __future__ import annotations

import argparse
import math
import sys
import sysconfig
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from kenning.config import Settings, SourceSettings  # noqa: E402
from kenning.errors import ReaderError  # noqa: E402
from kenning.ingest.convert import ConvertLimits, convert_file  # noqa: E402
from kenning.ingest.preview import kept_files, preview  # noqa: E402
from kenning.ingest.readers import ReadLimits  # noqa: E402
from kenning.ingest.walk import WalkReport  # noqa: E402

TARGET = 0.15


def real_chunks(paths: list[Path], settings: Settings, max_bytes: int) -> int:
    limits = ConvertLimits(
        read=ReadLimits(max_file_bytes=max_bytes, max_text_chars=settings.limits.max_text_chars),
        target_chars=settings.chunking.target_chars,
        overlap_chars=settings.chunking.overlap_chars,
        max_chunks=settings.limits.max_chunks_per_file,
    )
    total = 0
    for path in paths:
        try:
            total += len(convert_file(path, path.stem, limits).items)
        except ReaderError:
            continue
    return total


def size_only(sizes: list[int], settings: Settings) -> int:
    step = settings.chunking.target_chars - settings.chunking.overlap_chars
    share = {".pdf": 0.1, ".docx": 0.2, ".html": 0.4, ".htm": 0.4}
    return sum(max(1, math.ceil(size * share.get(suffix, 1.0) / step)) for suffix, size in sizes if size)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("folders", nargs="*", type=Path)
    parser.add_argument("--max-files", type=int, default=5000)
    args = parser.parse_args()
    folders = args.folders or [Path("/usr/share/doc"), Path(sysconfig.get_paths()["stdlib"])]
    settings = Settings()
    max_bytes = int(settings.daemon.max_file_mb * 1024 * 1024)
    print(
        f"{'folder':<40} {'files':>6} {'estimate':>9} {'real':>8} {'error':>7}  {'old est.':>8} {'old err':>7}  preview s"
    )
    for folder in folders:
        source = SourceSettings(name="bench", path=folder, max_files=args.max_files)
        started = time.perf_counter()
        result = preview(source, settings)
        seconds = time.perf_counter() - started
        kept, _, _ = kept_files(source, settings, WalkReport())
        real = real_chunks([item.path for item in kept], settings, max_bytes)
        old = size_only([(item.path.suffix.lower(), item.size) for item in kept if item.size <= max_bytes], settings)
        error = result.estimated_chunks / real - 1 if real else 0.0
        old_error = old / real - 1 if real else 0.0
        verdict = "PASS" if abs(error) <= TARGET else "FAIL"
        print(
            f"{str(folder):<40} {result.files:>6} {result.estimated_chunks:>9} {real:>8} {error:>+7.1%}"
            f"  {old:>8} {old_error:>+7.1%}  {seconds:6.2f}  [{verdict}: ±{TARGET:.0%}]"
        )


if __name__ == "__main__":
    main()
