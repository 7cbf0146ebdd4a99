"""The daemon and its parse workers load only what they run.

Every parse worker pays its imports when it starts (one per `parse_workers`, started
again after a minute idle), and the daemon on every start: a library loaded for nothing
is CPU and memory each time (bench/worker_start.py).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from kenning.config import ChunkingSettings, LimitsSettings
from kenning.ingest.convert import ConvertLimits, convert_file
from kenning.ingest.pages import PageLimits, prepare_page
from kenning.ingest.parse_pool import ParsePool
from kenning.ingest.readers import ReadLimits
from kenning.store.records import FetchedPage
from tests import loaded_modules

ROOT = Path(__file__).resolve().parent.parent
PAGE = b"<html><head><title>A page</title></head><body><h1>A page</h1><p>password = hunter2x</p></body></html>"


def _python(script: str, cwd: Path | None = None, check: bool = False) -> subprocess.CompletedProcess[str]:
    """`script` in a new interpreter that imports this checkout's kenning and tests."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-c", script], env=env, cwd=cwd, capture_output=True, text=True, check=check, timeout=120
    )


async def test_a_parse_worker_reads_a_file_and_a_page_without_the_libraries_it_does_not_run(tmp_path: Path) -> None:
    note = tmp_path / "note.md"
    note.write_text("# A note\n\napi_key = 'AKIAABCDEFGHIJKLMNOP'\n")
    pool = ParsePool(1, 1024)
    try:
        converted = await pool.read(
            convert_file, (note, "note", ConvertLimits(ReadLimits(), 1200, 150, 10_000)), 60
        )
        page = FetchedPage("http://127.0.0.1/a", "http://127.0.0.1/a", PAGE, None, "html", None, None)
        await pool.read(prepare_page, (page, PageLimits.of(ChunkingSettings(), LimitsSettings())), 60, urgent=True)
        held = await pool.read(loaded_modules.loaded, (), 60)
    finally:
        await pool.stop()
    # It did redact: the worker is the one that ran the conversion.
    assert "AKIAABCDEFGHIJKLMNOP" not in repr(converted)
    assert held == []


def test_the_daemon_starts_without_the_libraries_it_does_not_run(tmp_path: Path) -> None:
    # The daemon's own modules, as `ken daemon` imports them once it holds the library
    # (click is the `ken` command's own, so it is not asked about here); the wordllama
    # model, loaded once they are, brings `requests` with it.
    script = (
        "from kenning.daemon.run import serve\n"
        "from kenning.daemon.supervisor import Daemon\n"
        "from kenning.workers.embedders import load_wordllama\n"
        "from tests.loaded_modules import loaded\n"
        "print(loaded(('detect_secrets', 'httpx._main', 'rich', 'pygments')))\n"
    )
    done = _python(script, tmp_path, check=True)
    assert done.stdout.strip() == "[]"


def test_ken_mcp_reads_its_config_and_builds_its_server_without_the_config_editor(tmp_path: Path) -> None:
    # tomlkit, which only `ken sources add` and `remove` use, was most of what loading the
    # settings cost `ken mcp` (bench/mcp_start.py) and every daemon start.
    config = tmp_path / "config.toml"
    config.write_text(f'[daemon]\ndata_dir = "{tmp_path / "data"}"\n')
    script = (
        "from pathlib import Path\n"
        "from kenning.config import load_settings\n"
        "from kenning.mcp.server import build_server\n"
        "from tests.loaded_modules import loaded\n"
        f"build_server(load_settings(Path({str(config)!r})))\n"
        "print(loaded(('tomlkit',)))\n"
    )
    done = _python(script, tmp_path, check=True)
    assert done.stdout.strip() == "[]"


def test_a_second_daemon_on_a_library_refuses_before_it_loads_the_daemon(library, tmp_path: Path) -> None:
    """A `ken daemon` started while one already serves the library imported all of
    kenning, numpy and SQLite and loaded the embedding model (a second of CPU) before it
    said "already using", and logged a shutdown of a daemon that never started."""
    library.configure([])
    first = library.daemon()
    script = (
        "import sys\n"
        "from kenning.cli import main\n"
        "try:\n"
        f"    main(['--config', {str(library.config)!r}, 'daemon'])\n"
        "except SystemExit as exit:\n"
        "    print(exit.code)\n"
        "print(sorted(n for n in ('kenning.daemon.supervisor', 'numpy', 'aiosqlite') if n in sys.modules))\n"
    )
    done = _python(script, tmp_path)
    assert done.stdout.split("\n")[:2] == ["1", "[]"], done.stdout + done.stderr
    refusal = f"ken: another kenning daemon (pid {first.proc.pid}) is already using {library.data_dir}"
    assert done.stderr.strip() == refusal


def test_a_ken_command_that_only_asks_the_daemon_does_not_load_the_settings_model(tmp_path: Path) -> None:
    # pydantic was half of what `ken search` cost in CPU (0.27 s against 0.13 s): the
    # client named the settings model only for a type hint. The command runs to its end
    # (no daemon, so it says so) and the modules it loaded on the way are listed.
    config = tmp_path / "config.toml"
    config.write_text(f'[daemon]\ndata_dir = "{tmp_path / "data"}"\n')
    script = (
        "import atexit, sys\n"
        "from tests.loaded_modules import loaded\n"
        "atexit.register(lambda: print(loaded(('pydantic',)), file=sys.stderr))\n"
        "from kenning.cli import main\n"
        f"main(['--config', {str(config)!r}, 'search', 'wombat'])\n"
    )
    done = _python(script, tmp_path)
    assert "not running" in done.stderr
    assert done.stderr.strip().splitlines()[-1] == "[]"


def test_the_daemon_does_not_build_the_entity_tokenizer_its_parse_workers_run() -> None:
    # Its letter classes walk the whole BMP: 40-60 ms of every daemon start's CPU.
    script = (
        "from kenning.daemon.run import serve\n"
        "from kenning.daemon.supervisor import Daemon\n"
        "from kenning.workers import offline_extract\n"
        "print(offline_extract._tokenizer.cache_info().currsize)\n"
    )
    done = _python(script, check=True)
    assert done.stdout.strip() == "0"
