"""The quick benchmarks still run against the code as it is now.

Benchmarks call internal functions, and nothing else in the suite does: four of them had
stopped running before anyone noticed (stable_chunks.py, cjk_index.py,
preview_estimate.py, truth_speed.py, each behind a changed signature). Each is run here
at a size that takes seconds and must print its table. The figures are not checked:
they are the benchmark's to report at full size, not a test's to time. The slow ones
(ingest.py, faults.py, multihop.py, retrieval.py, hostile.py, agent_memory.py) and those
needing the public collections are not run here.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

# (script and arguments, a line the script prints once it has measured)
RUNS = [
    (["stable_chunks.py", "--edits", "1"], "one word changed in one line"),
    (["cjk_index.py"], "bigram"),
    (["truth.py", "--check"], "abstention"),
    (["truth.py", "--check", "--data", str(ROOT / "bench" / "truth_heldout")], "abstention"),
    (["truth.py", "--check", "--data", str(ROOT / "bench" / "truth_fresh")], "abstention"),
    (["truth_speed.py", "--chunks", "2000", "--queries", "10"], "hybrid, no truth stages"),
    (["small_libraries.py", "--only", "d01"], "expected marks seen"),
    (["vector_speed.py", "--sizes", "2000", "--queries", "10", "--reembed", "0"], "vector index search"),
    (["redact_speed.py", "--sizes", "0.02", "--show", "1", "--sample", str(ROOT / "kenning")], "pathological inputs"),
    (["redact_prose.py"], "heldout3"),
    (["hostile_search.py", "--sizes", "1200", "--only", "fuzzed"], "worst per reader"),
    (["preview_estimate.py", str(ROOT / "kenning"), "--max-files", "50"], "estimate"),
    (["dedup_sweep.py", "--sizes", "1000", "--changed", "10", "--baseline-max", "1000", "--repeat", "1"], "recall"),
    (["context_pack.py", "--budgets", "4000", "--questions", "5"], "budget 4000 bytes"),
    (["cli_start.py", "--runs", "1"], "ken search"),
    (["mcp_start.py", "--runs", "1"], "ken mcp -> initialize"),
    (
        ["status_speed.py", "--files", "30", "--idle-seconds", "0.5", "--quiet-seconds", "0", "--sweeps", "1"],
        "during sweep:",
    ),
    (["worker_start.py", "--runs", "1"], "page worker CPU"),
    (["watch_setup.py", "--link", str(ROOT / "kenning"), "--dirs", "3", "--settle", "1"], "ratio kenning/recursive"),
]


@pytest.mark.timeout(120)
@pytest.mark.parametrize(("args", "printed"), RUNS, ids=[args[0] for args, _ in RUNS])
def test_benchmark_runs(args: list[str], printed: str, tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / args[0]), *args[1:]],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=110,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert printed in done.stdout, done.stdout[-3000:]
