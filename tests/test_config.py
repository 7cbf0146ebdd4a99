"""config.toml: typos are named, edits keep comments, the example stays true to the code."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from kenning.cli import main
from kenning.config import Settings, SourceSettings, add_source, config_path, load_settings
from kenning.config.locate import Locations, locate
from kenning.errors import ConfigError
from tests.fake_ollama import fake_ollama

REPO = Path(__file__).resolve().parent.parent


def test_the_example_config_states_every_setting_at_its_default(isolated_home, monkeypatch):
    # Its header says so; a user copies it and expects nothing to move. The data
    # directory's default follows XDG_DATA_HOME, so a value written out in the example
    # moved the library of anyone who sets it (and every macOS user's).
    monkeypatch.setenv("XDG_DATA_HOME", str(isolated_home / "elsewhere"))
    example = REPO / "config.example.toml"
    settings = load_settings(example)
    assert [s.name for s in settings.sources] == ["notes"]
    assert settings.model_copy(update={"sources": ()}) == Settings()
    text = example.read_text()
    for table, model in Settings.model_fields.items():
        keys = SourceSettings.model_fields if table == "sources" else model.annotation.model_fields
        for key in keys:
            assert re.search(rf"^#? ?{key} = ", text, re.M), f"[{table}] {key} is not in the example"


def test_a_daemon_runs_on_the_example_config(library, isolated_home):
    notes = isolated_home / "notes"
    notes.mkdir()
    (notes / "owls.md").write_text("# Owls\n\nBarn owls hunt voles at night.\n")
    library.config.write_text((REPO / "config.example.toml").read_text())
    library.data_dir = isolated_home / ".local" / "share" / "kenning"
    daemon = library.daemon()
    daemon.wait_idle("notes")
    assert [hit["path"] for hit in daemon.search("voles")] == [str(notes / "owls.md")]
    assert daemon.call("reload")["restart_needed"] == []


def test_a_missing_file_means_defaults_with_no_sources(tmp_path, isolated_home):
    settings = load_settings(tmp_path / "absent.toml")
    assert settings.sources == ()
    assert settings.daemon.data_dir == isolated_home / ".local" / "share" / "kenning"
    assert settings.daemon.socket_path == settings.daemon.data_dir / "kenning.sock"


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ('[daemon]\nlog_levl = "info"\n', "daemon.log_levl: unknown setting (did you mean log_level?)"),
        ('[[sources]]\nname = "a"\npath = "/x"\nmax_file = 3\n', "sources['a'].max_file: unknown setting (did you mean max_files?)"),
        ('[embeder]\nbackend = "ollama"\n', "embeder: unknown setting (did you mean embedder?)"),
        ('[[sources]]\nname = "a"\n', "sources['a'].path"),
        ('[[sources]]\npath = "/x"\n', "sources[0].name: Field required"),
        ('[[sources]]\nname = "a"\npath = "/x"\n[[sources]]\nname = "a"\npath = "/y"\n', "two sources are named 'a'"),
        # The walk never enters the data directory: such a source held nothing, and said nothing.
        ('[daemon]\ndata_dir = "/d"\n[[sources]]\nname = "a"\npath = "/d/notes"\n', "source 'a' (/d/notes) is in kenning's data directory"),
        ('[[sources]]\nname = "has space"\npath = "/x"\n', "sources['has space'].name"),
        ("[chunking]\ntarget_chars = 500\noverlap_chars = 600\n", "overlap_chars must be smaller"),
        ('[mcp]\nallow_writes = "yes please"\n', "mcp.allow_writes"),
        ("[daemon\n", "not valid TOML"),
        # TOML's inf and nan are floats, and inf passes every lower bound.
        ("[daemon]\nmax_file_mb = inf\n", "daemon.max_file_mb: Input should be a finite number"),
        ("[daemon]\nsweep_interval = inf\n", "daemon.sweep_interval: Input should be a finite number"),
        ("[archive]\nmax_age_days = inf\n", "archive.max_age_days: Input should be a finite number"),
        ("[retrieval]\nkeyword_weight = inf\n", "retrieval.keyword_weight: Input should be a finite number"),
        ("[memory]\nhalf_life_days = nan\n", "memory.half_life_days: Input should be a finite number"),
        # Past about 1e9 s a socket timeout overflows: the embedder failed to start.
        ("[embedder]\ntimeout = 1e10\n", "embedder.timeout: Input should be less than or equal to 86400"),
        # Past 2**63 bytes setrlimit overflows: no parse worker started, every file failed.
        ("[limits]\nparse_memory_mb = 99999999999999\n", "limits.parse_memory_mb: Input should be less than or equal to 1048576"),
        # An empty path would mean whichever directory the reading process runs in.
        ('[daemon]\ndata_dir = ""\n', "daemon.data_dir: is empty"),
        ('[daemon]\nsocket = ""\n', "daemon.socket: is empty"),
        ('[llm]\nmodel = " "\n', "llm.model: is empty; name the Ollama model"),
        ('[[sources]]\nname = "a"\npath = ""\n', "sources['a'].path: is empty"),
        ('[[sources]]\nname = "a"\npath = "  "\n', "sources['a'].path: is empty"),
        ('[daemon]\ndata_dir = "~nosuchuser/d"\n', "daemon.data_dir: ~nosuchuser/d: no home directory is known for ~nosuchuser"),
        ('[[sources]]\nname = "a"\npath = "~nosuchuser/x"\n', "sources['a'].path: ~nosuchuser/x: no home directory"),
        # Parsed by recursion, this raised RecursionError; a dotted key of n parts costs
        # tomllib n² (200 kB of `a.a.a` had the daemon killed for memory on reload).
        ("x = " + "[" * 5000 + "]" * 5000, "not valid TOML: arrays or inline tables nested too deeply"),
        ("[daemon]\n" + "a" + " . a" * 3000 + " = 1\n", "a dotted key of more than 32 parts (line 2)"),
        ("[" + "a." * 40 + "a]\n", "a dotted key of more than 32 parts (line 1)"),
    ],
)
def test_mistakes_are_refused_with_the_key_named(tmp_path, text, named):
    path = tmp_path / "config.toml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=re.escape(named)):
        load_settings(path)


@pytest.mark.parametrize(
    ("text", "wrong"),
    [
        (f'[daemon]\n{"k" * (1 << 20)} = 1\n', ": unknown setting"),
        (f'[[sources]]\nname = "{"n" * (1 << 20)}"\npath = "/x"\n', "'].name: String should match pattern"),
    ],
    ids=["key", "source name"],
)
def test_a_key_or_a_name_of_a_megabyte_is_named_by_its_start_and_what_is_wrong_is_said(tmp_path, text, wrong):
    """Quoted whole, the name filled the error, which is cut where it is shown (2,000
    characters): `ken reload` said 'sources['nnnn…' and never why."""
    config = tmp_path / "config.toml"
    config.write_text(text)
    with pytest.raises(ConfigError) as refused:
        load_settings(config)
    message = str(refused.value)
    assert f"… [cut from 1,048,576 characters]{wrong}" in message
    assert len(message) < len(str(config)) + 200


def test_a_config_nested_too_deeply_is_one_line_from_a_command(tmp_path):
    """Read for the socket's path before anything else, it was a traceback of thousands
    of lines from every `ken` command."""
    config = tmp_path / "config.toml"
    config.write_text("x = " + "[" * 5000 + "]" * 5000)
    status = CliRunner().invoke(main, ["--config", str(config), "status"])
    assert status.exit_code == 1
    assert status.output.strip() == f"ken: {config}: not valid TOML: arrays or inline tables nested too deeply to read"


@pytest.mark.parametrize(
    ("url", "wrong"),
    [
        ("http://kenning:s3cret@127.0.0.1:11434", "holds a user name or password"),
        ("http://127.0.0.1:11434/?token=s3cret", "holds a query"),
    ],
)
def test_an_ollama_address_holding_a_secret_is_refused_without_showing_it(tmp_path, url, wrong):
    """The ollama client sends neither (it keeps host, port and path), and kenning quoted
    the address in search notes, its log and `ken doctor`."""
    config = tmp_path / "config.toml"
    config.write_text(f'[llm]\nbase_url = "{url}"\n')
    with pytest.raises(ConfigError, match=f"llm.base_url: {wrong}") as refused:
        load_settings(config)
    assert "s3cret" not in str(refused.value)


def test_an_ollama_address_without_a_scheme_is_read_as_the_ollama_client_reads_it(tmp_path):
    """`127.0.0.1:11434` (OLLAMA_HOST's own form) served the daemon, while `ken doctor`
    said Ollama was not reachable there: 'unknown url type'."""
    config = tmp_path / "config.toml"
    with fake_ollama() as server:
        config.write_text(
            f'[daemon]\ndata_dir = "{tmp_path / "data"}"\n'
            f'[embedder]\nbackend = "ollama"\nmodel = "fake-embed"\nbase_url = "127.0.0.1:{server.port}"\n'
        )
        doctor = CliRunner().invoke(main, ["--config", str(config), "doctor"])
    assert f"ok      ollama (embedder): http://127.0.0.1:{server.port} serves fake-embed" in doctor.output
    assert load_settings(config.with_name("none.toml")).llm.base_url == "http://127.0.0.1:11434"
    config.write_text('[llm]\nbase_url = "localhost"\n')
    assert load_settings(config).llm.base_url == "http://localhost:11434"


@pytest.mark.parametrize(
    ("mode", "tags", "said"),
    [
        (None, ["fake-embed:latest"], "does not answer as Ollama does (JSON of another shape for /api/tags)"),
        (None, {"models": [None]}, "does not have fake-embed"),
        ("garbage", None, "does not answer as Ollama does (JSONDecodeError for /api/tags)"),
        # A byte every 0.1 s never trips a read timeout: doctor waited for good.
        ("trickle", None, "did not answer within 3 s"),
        # Followed, doctor said it served the model while the daemon refused it.
        ("redirect", None, "answered with a redirect (HTTP 307), which kenning does not follow"),
        # Half its Content-Length, then a closed connection: urllib ends the read without a
        # word, and the half answer was named JSON that is not Ollama's.
        ("cut_short", None, "answered, but the answer was cut short (54 bytes of the 109 it announced came"),
    ],
)
def test_doctor_names_an_ollama_that_answers_in_another_shape(tmp_path, mode, tags, said):
    """A list or a null where Ollama lists its models was a traceback from `ken doctor`,
    and an answer that is not JSON was called 'not reachable'."""
    config = tmp_path / "config.toml"
    with fake_ollama() as server:
        server.mode, server.tags_reply = mode, tags
        config.write_text(
            f'[daemon]\ndata_dir = "{tmp_path / "data"}"\n'
            f'[embedder]\nbackend = "ollama"\nmodel = "fake-embed"\nbase_url = "{server.url}"\n'
        )
        doctor = CliRunner().invoke(main, ["--config", str(config), "doctor"])
    assert doctor.exception is None or isinstance(doctor.exception, SystemExit)
    assert f"PROBLEM ollama (embedder): {server.url} {said}" in doctor.output
    assert "not reachable" not in doctor.output


def test_a_config_that_is_a_fifo_is_refused_at_once(tmp_path):
    """Opened to be read, it held every `ken` command (and a reload) until something
    wrote to it; `/dev/zero` was read until memory ran out."""
    config = tmp_path / "config.toml"
    os.mkfifo(config)
    status = CliRunner().invoke(main, ["--config", str(config), "status"])
    assert status.exit_code == 1
    assert status.output.strip() == f"ken: {config}: cannot read: not a regular file (a FIFO, a device or a socket)"


def test_relative_paths_are_taken_from_the_config_files_directory(tmp_path, monkeypatch):
    config = tmp_path / "lib" / "config.toml"
    config.parent.mkdir()
    config.write_text('[daemon]\ndata_dir = "data"\nsocket = "run/k.sock"\n[[sources]]\nname = "n"\npath = "../docs"\n')
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    settings = load_settings(Path("../lib/config.toml"))
    assert settings.daemon.data_dir == tmp_path / "lib" / "data"
    assert settings.daemon.socket_path == tmp_path / "lib" / "run" / "k.sock"
    # Shown and cited without the "..".
    assert settings.sources[0].path == tmp_path / "docs"
    # The light path every daemon-talking command takes finds the same socket.
    assert locate(Path("../lib/config.toml")) == Locations(tmp_path / "lib" / "data", tmp_path / "lib" / "run" / "k.sock")
    # A link to the config (a dotfiles checkout) names the same library as the file.
    link = elsewhere / "config.toml"
    link.symlink_to(config)
    assert load_settings(link).daemon.data_dir == tmp_path / "lib" / "data"
    assert locate(link) == locate(config)


def test_ken_run_from_another_directory_reaches_a_daemon_configured_with_relative_paths(library, monkeypatch):
    (library.root / "notes").mkdir()
    (library.root / "notes" / "owls.md").write_text("# Owls\n\nBarn owls hunt voles at night.\n")
    library.config.write_text('[daemon]\ndata_dir = "data"\n[[sources]]\nname = "notes"\npath = "notes"\n')
    for folder in ("daemon-cwd", "user-cwd"):
        (library.root / folder).mkdir()
    monkeypatch.chdir(library.root / "daemon-cwd")
    library.daemon().wait_idle("notes")
    found = subprocess.run(
        [sys.executable, "-m", "kenning", "--config", "../config.toml", "search", "voles", "--format", "paths"],
        cwd=library.root / "user-cwd", capture_output=True, text=True,
    )
    assert found.returncode == 0, found.stderr
    assert found.stdout.startswith(f"{library.root / 'notes' / 'owls.md'}:")
    assert not (library.root / "daemon-cwd" / "data").exists()


def test_an_unknown_users_home_is_a_config_error_for_the_cli_and_for_reload(library):
    library.configure([])
    daemon = library.daemon()
    library.config.write_text(library.config.read_text() + '[[sources]]\nname = "n"\npath = "~nosuchuser/docs"\n')
    reload = subprocess.run(
        [sys.executable, "-m", "kenning", "--config", str(library.config), "reload"], capture_output=True, text=True
    )
    assert reload.returncode == 1
    assert reload.stderr.count("\n") == 1 and "sources['n'].path: ~nosuchuser/docs: no home directory" in reload.stderr
    assert daemon.call("status")["sources"] == []
    library.config.write_text('[daemon]\ndata_dir = "~nosuchuser/data"\n')
    status = CliRunner().invoke(main, ["--config", str(library.config), "status"])
    assert status.exit_code == 1 and "daemon.data_dir: ~nosuchuser/data: no home directory" in status.output


def test_adding_a_source_keeps_comments_and_validates(tmp_path):
    path = tmp_path / "config.toml"
    path.write_text("# my library\n[daemon]\nlog_level = \"debug\"  # chatty\n")
    add_source(path, SourceSettings(name="notes", path=tmp_path, ignore=("*.bak",)))
    text = path.read_text()
    assert "# my library" in text and "# chatty" in text
    settings = load_settings(path)
    assert settings.daemon.log_level == "debug"
    assert settings.sources[0].ignore == ("*.bak",)
    with pytest.raises(ConfigError, match="a source named 'notes' already exists"):
        add_source(path, SourceSettings(name="notes", path=tmp_path / "other"))
    # Refused under the edit lock, where a source another `ken sources add` wrote is seen.
    with pytest.raises(ConfigError, match="is already a source"):
        add_source(path, SourceSettings(name="again", path=tmp_path))
    assert len(load_settings(path).sources) == 1


def test_config_path_resolves_argument_then_environment_then_default(monkeypatch, isolated_home):
    assert config_path() == isolated_home / ".config" / "kenning" / "config.toml"
    monkeypatch.setenv("KENNING_CONFIG", "/env/config.toml")
    assert config_path() == Path("/env/config.toml")
    assert config_path("/arg/config.toml") == Path("/arg/config.toml")


def test_ken_sources_add_without_a_daemon_writes_the_config(tmp_path):
    folder = tmp_path / "My Notes"
    folder.mkdir()
    config = tmp_path / "config.toml"
    result = CliRunner().invoke(
        main, ["--config", str(config), "sources", "add", str(folder), "--ignore", "tmp/**", "--yes"]
    )
    assert result.exit_code == 0, result.output
    assert "not running" in result.output
    [source] = load_settings(config).sources
    assert (source.name, source.path, source.ignore) == ("My-Notes", folder, ("tmp/**",))
    again = CliRunner().invoke(main, ["--config", str(config), "sources", "add", str(folder), "--name", "other"])
    assert again.exit_code == 1 and "already a source" in again.output


def test_ken_sources_add_refuses_a_folder_the_config_names_through_a_link(tmp_path):
    """The check compared the folder, resolved, with the paths as the config writes them:
    a source written as a link was added again, and each of its files indexed twice."""
    folder = tmp_path / "notes"
    folder.mkdir()
    (tmp_path / "current").symlink_to(folder)
    config = tmp_path / "config.toml"
    config.write_text('[[sources]]\nname = "mine"\npath = "current"\n')
    for path in (str(tmp_path / "current"), str(folder)):
        result = CliRunner().invoke(main, ["--config", str(config), "sources", "add", path, "--name", "again", "--yes"])
        assert result.exit_code == 1 and "already a source" in result.output, result.output
    assert [source.name for source in load_settings(config).sources] == ["mine"]


def test_ken_sources_add_takes_a_quoted_tilde_as_the_config_does(tmp_path, isolated_home):
    """Quoted for its space, `~/My Notes` reached the command as written and was refused
    as a folder that does not exist; the config file expands it."""
    (isolated_home / "My Notes").mkdir()
    config = tmp_path / "config.toml"
    added = CliRunner().invoke(main, ["--config", str(config), "sources", "add", "~/My Notes", "--yes"])
    assert added.exit_code == 0, added.output
    assert [source.path for source in load_settings(config).sources] == [isolated_home / "My Notes"]
    missing = CliRunner().invoke(main, ["--config", str(config), "sources", "add", "~/later", "--yes"])
    assert missing.exit_code == 1 and f"{isolated_home / 'later'} does not exist" in missing.output


def test_ken_sources_add_and_remove_keep_sources_written_inline_inline(tmp_path):
    for name in ("one", "two"):
        (tmp_path / name).mkdir()
    config = tmp_path / "config.toml"
    config.write_text(f'sources = [{{name = "n1", path = "{tmp_path / "one"}"}}]  # mine\n[daemon]\nlog_level = "debug"\n')
    added = CliRunner().invoke(main, ["--config", str(config), "sources", "add", str(tmp_path / "two"), "--yes"])
    assert added.exit_code == 0, added.output
    settings = load_settings(config)
    assert [s.name for s in settings.sources] == ["n1", "two"] and settings.daemon.log_level == "debug"
    assert config.read_text().startswith("sources = [") and "# mine" in config.read_text()
    CliRunner().invoke(main, ["--config", str(config), "sources", "remove", "n1", "--yes"])
    assert [s.name for s in load_settings(config).sources] == ["two"]
    assert "[[sources]]" not in config.read_text()


def test_removing_the_last_source_leaves_a_config_a_running_daemon_takes(tmp_path):
    """An emptied file is what an editor leaves mid-save, and a daemon refuses to reload it;
    the edit that removes the last source says `sources = []` instead."""
    (tmp_path / "notes").mkdir()
    config = tmp_path / "config.toml"
    config.write_text(f'[[sources]]\nname = "notes"\npath = "{tmp_path / "notes"}"\n')
    removed = CliRunner().invoke(main, ["--config", str(config), "sources", "remove", "notes", "--yes"])
    assert "removed 'notes' from" in removed.output
    assert load_settings(config, missing_ok=False).sources == ()
    config.write_text("")
    with pytest.raises(ConfigError, match="the config file is empty .* keeps its settings .*`sources = \\[\\]`"):
        load_settings(config, missing_ok=False)


def test_ken_sources_add_and_remove_write_through_a_linked_config_and_keep_its_mode(tmp_path):
    folder = tmp_path / "notes"
    folder.mkdir()
    real = tmp_path / "dotfiles" / "kenning.toml"
    real.parent.mkdir()
    real.write_text("# mine\n[daemon]\nlog_level = \"info\"\n")
    real.chmod(0o600)
    link = tmp_path / "config.toml"
    link.symlink_to(real)
    added = CliRunner().invoke(main, ["--config", str(link), "sources", "add", str(folder), "--yes"])
    assert added.exit_code == 0, added.output
    assert link.is_symlink() and [s.name for s in load_settings(real).sources] == ["notes"]
    assert real.stat().st_mode & 0o777 == 0o600 and "# mine" in real.read_text()
    removed = CliRunner().invoke(main, ["--config", str(link), "sources", "remove", "notes", "--yes"])
    assert "removed 'notes' from" in removed.output
    assert link.is_symlink() and load_settings(real).sources == ()
    assert real.stat().st_mode & 0o777 == 0o600
    assert sorted(p.name for p in real.parent.iterdir()) == ["kenning.toml"]
    # A config the command creates is private from the start.
    fresh = tmp_path / "fresh.toml"
    CliRunner().invoke(main, ["--config", str(fresh), "sources", "add", str(folder), "--yes"])
    assert fresh.stat().st_mode & 0o777 == 0o600


def test_ken_sources_add_names_a_folder_in_ascii_dropping_accents(tmp_path):
    folder = tmp_path / "Café Notes"
    folder.mkdir()
    config = tmp_path / "config.toml"
    result = CliRunner().invoke(main, ["--config", str(config), "sources", "add", str(folder), "--yes"])
    assert result.exit_code == 0, result.output
    assert [s.name for s in load_settings(config).sources] == ["Cafe-Notes"]


@pytest.mark.parametrize(
    ("folder", "name", "message"),
    [
        ("Документы", None, "cannot make a source name from the folder name 'Документы'; give one with --name"),
        ("メモ", None, "cannot make a source name from the folder name 'メモ'; give one with --name"),
        ("memory", None, "the name 'memory' is reserved for kenning's own sources; pick another with --name"),
        ("agent", None, "the name 'agent' is reserved for kenning's own sources; pick another with --name"),
        ("notes", "ledger", "the name 'ledger' is reserved for kenning's own sources; pick another with --name"),
        ("notes", "my notes", "'my notes' cannot be a source name: it must start with a letter or digit"),
        # An empty --name was taken for none: the source was added under the folder's name.
        ("notes", "", "'' cannot be a source name: it must start with a letter or digit"),
    ],
)
def test_ken_sources_add_asks_for_name_before_the_preview_when_it_cannot_use_one(tmp_path, folder, name, message):
    (tmp_path / folder).mkdir()
    (tmp_path / folder / "a.md").write_text("# A note\n")
    config = tmp_path / "config.toml"
    args = ["--config", str(config), "sources", "add", str(tmp_path / folder), "--yes"]
    result = CliRunner().invoke(main, [*args, *(["--name", name] if name is not None else [])])
    assert result.exit_code == 1
    # One line, before the preview: the folder is not walked for a name that cannot be used.
    assert result.output.startswith(f"ken: {message}") and result.output.count("\n") == 1
    assert "--name" in result.output
    assert not config.exists()


def test_ken_sources_add_previews_the_cost_and_adds_nothing_until_confirmed(tmp_path):
    folder = tmp_path / "big"
    folder.mkdir()
    for index in range(12):
        (folder / f"note{index}.md").write_text("a paragraph about owls. " * 300)
    (folder / "skip.log.tmp").write_text("junk")
    config = tmp_path / "config.toml"
    config.write_text('[daemon]\nfolder_chunk_budget = 10\n[llm]\nbackend = "ollama"\nmodel = "m1"\n')
    args = ["--config", str(config), "sources", "add", str(folder), "--max-files", "10"]

    refused = CliRunner().invoke(main, args, input="n\n")
    assert refused.exit_code == 1
    assert "12 files" not in refused.output and "10 files to index" in refused.output
    assert "2 more files are over max_files = 10" in refused.output
    # Ten small files: the sample reads every one, so the estimate is what chunking makes.
    assert "about 60 chunks" in refused.output and "about 60 LLM calls to m1" in refused.output
    assert "10 chunks per sweep, so about 6 sweeps" in refused.output
    assert "--yes" in refused.output
    assert load_settings(config).sources == ()

    accepted = CliRunner().invoke(main, [*args, "--yes"])
    assert accepted.exit_code == 0, accepted.output
    assert [s.name for s in load_settings(config).sources] == ["big"]


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("/", "is the root folder"),
        ("/proc", "in /proc, a system pseudo-filesystem"),
        ("/proc/self/cwd/..", "a system pseudo-filesystem"),
        ("/sys/kernel", "in /sys"),
        ("/dev", "in /dev"),
    ],
)
def test_the_root_and_pseudo_filesystems_are_refused_as_sources(tmp_path, path, message):
    config = tmp_path / "config.toml"
    config.write_text(f'[[sources]]\nname = "x"\npath = "{path}"\n')
    with pytest.raises(ConfigError, match=f"sources\\[.x.\\]\\.path: .*{message}"):
        load_settings(config)


def test_a_path_longer_than_the_system_opens_is_refused_without_quoting_it(tmp_path):
    """A source of a megabyte-long path was taken, failed every sweep and put that
    megabyte in every `ken status`; the error says how long it is, not what it says."""
    config = tmp_path / "config.toml"
    config.write_text(f'[[sources]]\nname = "x"\npath = "/tmp/{"p" * (1 << 20)}"\n')
    with pytest.raises(ConfigError) as refused:
        load_settings(config)
    assert str(refused.value) == (
        f"{config}: sources['x'].path: is 1,048,581 bytes long; this system opens paths of at most"
        f" {os.pathconf('/', 'PC_PATH_MAX') - 1:,}"
    )


def test_a_link_to_the_root_folder_is_refused_too(tmp_path):
    link = tmp_path / "everything"
    link.symlink_to("/")
    with pytest.raises(ValueError, match="is the root folder"):
        SourceSettings(name="x", path=link)


def test_a_source_whose_root_is_a_link_loop_is_taken_not_a_traceback(tmp_path):
    """Resolving the root to check it was not the system's raised RuntimeError on a loop:
    `ken start` printed a traceback, and a reload of such a config answered an internal
    error. The folder is the user's to fix; until then its sweep says it cannot be read."""
    loop = tmp_path / "notes"
    loop.symlink_to(loop)
    config = tmp_path / "config.toml"
    config.write_text(f'[[sources]]\nname = "notes"\npath = "{loop}"\n')
    assert [s.path for s in load_settings(config).sources] == [loop]


def test_ken_sources_add_refuses_a_pseudo_filesystem_and_writes_nothing(tmp_path):
    config = tmp_path / "config.toml"
    result = CliRunner().invoke(main, ["--config", str(config), "sources", "add", "/proc", "--yes"])
    assert result.exit_code == 1
    assert "invalid source: path: /proc is in /proc, a system pseudo-filesystem" in result.output
    assert not config.exists()


def test_ken_sources_add_counts_the_files_it_will_pass_over(tmp_path):
    folder = tmp_path / "mixed"
    folder.mkdir()
    for name in ("a.md", "b.md", "photo.png", "clip.mov", "backup.tar.gz", ".hidden.md"):
        (folder / name).write_text("text\n")
    (folder / "node_modules").mkdir()
    config = tmp_path / "config.toml"
    result = CliRunner().invoke(main, ["--config", str(config), "sources", "add", str(folder), "--yes"])
    assert result.exit_code == 0, result.output
    assert "2 files to index" in result.output
    [line] = [line for line in result.output.splitlines() if "passed over" in line]
    assert line.startswith("  4 files passed over: ")
    assert {"2 unsupported type", "1 compressed (unsupported inside)", "1 hidden"} == set(line.split(": ")[1].split(", "))
    assert "1 folder not entered" in result.output


def test_sources_added_at_once_by_several_ken_commands_all_stay_in_the_config(tmp_path):
    config = tmp_path / "config.toml"
    config.write_text("# my library\n")
    folders = [tmp_path / f"folder{i}" for i in range(8)]
    for folder in folders:
        folder.mkdir()
    adds = [
        subprocess.Popen(
            [sys.executable, "-m", "kenning", "--config", str(config), "sources", "add", str(folder), "--yes"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        for folder in folders
    ]
    for add in adds:
        out, err = add.communicate(timeout=120)
        assert add.returncode == 0 and "added source" in out, err

    assert sorted(source.path for source in load_settings(config).sources) == folders
    assert config.read_text().startswith("# my library\n")


def test_doctor_names_a_damaged_database_in_a_data_directory_whose_name_holds_a_hash(tmp_path):
    """The file was opened by a URI, and a '#' in its path began the URI's fragment: doctor
    opened (and made, empty) a file named "C" beside "C#lib", and saw nothing wrong."""
    data_dir = tmp_path / "C#lib"
    data_dir.mkdir()
    (data_dir / "kenning.db").write_bytes(b"<html>not a database</html>\n" * 100)
    config = tmp_path / "config.toml"
    config.write_text(f'[daemon]\ndata_dir = "{data_dir}"\n')
    doctor = CliRunner().invoke(main, ["--config", str(config), "doctor"])
    assert f"database: {data_dir / 'kenning.db'} is damaged" in doctor.output, doctor.output
    assert not (tmp_path / "C").exists()
