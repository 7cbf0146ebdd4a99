"""The daemon's lifecycle and folder ingest under hostile conditions: limits lowered under
an indexed folder, socket paths that cannot be bound, sources removed and restarted midway."""

from __future__ import annotations

import os
import subprocess
import sys

from tests.daemon_harness import wait_for


def ken(library, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "kenning", "--config", str(library.config), *args],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip


def test_lowering_max_files_under_an_indexed_folder_never_shows_more_done_than_total(library, tmp_path):
    notes = tmp_path / "notes"
    notes.mkdir()
    for index in range(10):
        (notes / f"n{index}.md").write_text(f"note {index} about zebra{index}\n")
        os.utime(notes / f"n{index}.md", (1e9 + index, 1e9 + index))
    library.configure([{"name": "notes", "path": notes}])
    daemon = library.daemon()
    daemon.wait_idle("notes")

    library.configure([{"name": "notes", "path": notes, "max_files": 3}])
    assert ken(library, "reload").returncode == 0
    status = wait_for(
        lambda: (s := daemon.source_status("notes"))["capped"] == 7 and not s["scanning"] and s,
        timeout=20, what="the capped sweep",
    )  # fmt: skip
    # Lowering the cap deletes nothing: the seven oldest stay searchable, and are counted.
    assert daemon.search("zebra0")
    assert status["holds"] == 10 and status["capped_kept"] == 7
    assert status["processed"] <= status["total"] == 10 and status["percent"] == 100.0
    shown = ken(library, "status").stdout
    assert "files: 10/10 done" in shown and "7 of them indexed before the cap" in shown


def test_a_socket_path_too_long_to_bind_is_refused_in_one_line_before_the_index_is_opened(library, tmp_path):
    deep = tmp_path / ("d" * 60) / ("e" * 60)
    deep.mkdir(parents=True, mode=0o700)
    library.configure([], extra=f'socket = "{deep / "kenning.sock"}"')
    result = subprocess.run(
        [sys.executable, "-m", "kenning", "--config", str(library.config), "daemon"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert "longer than a unix socket path may be" in result.stderr.splitlines()[-1]
    assert not (library.data_dir / "kenning.db").exists()
