"""A folder the daemon cannot watch because an inotify limit is reached: the user is told
which limit and how to raise it, and its changes are still found by sweeps. The limit is
met in a user namespace of the daemon's own (`inotify_limited`), never by lowering the
machine's, which every other process shares."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.daemon_harness import inotify_limited, wait_for


def ken(config: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "kenning", "--config", str(config), *args], capture_output=True, text=True, timeout=60
    )


@pytest.mark.parametrize(
    ("limit", "value", "sysctl"),
    [("max_inotify_watches", 2, "fs.inotify.max_user_watches"), ("max_inotify_instances", 0, "fs.inotify.max_user_instances")],
)
def test_a_folder_an_inotify_limit_keeps_unwatched_says_so_with_the_fix(library, tmp_path, limit, value, sysctl):
    wrapper = inotify_limited(limit, value)
    if wrapper is None:
        pytest.skip("cannot make a user namespace here to set an inotify limit in")
    notes = tmp_path / "notes"
    for folder in ("trips", "recipes", "work"):  # four directories to watch, the root's included
        (notes / folder).mkdir(parents=True)
        (notes / folder / "plan.md").write_text(f"# {folder}\n\nThe ferry leaves at nine.\n")
    # Tried again every 2 s, not 30: the test waits for the next try once the limit is raised.
    library.configure([{"name": "notes", "path": str(notes)}], "watch_retry = 2")
    daemon = library.daemon(wrapper=wrapper)
    daemon.wait_idle("notes")

    status = wait_for(lambda: daemon.source_status("notes")["not_watched"], timeout=30, what="the watch to fail")
    assert sysctl in status and f"sudo sysctl {sysctl}=" in status
    shown = ken(library.config, "status").stdout
    assert "notes" in shown and "(not watched: changes wait for the periodic sweep)" in shown
    assert "not watched: the system's limit on" in shown and sysctl in shown

    doctor = ken(library.config, "doctor", "--json")
    assert doctor.returncode == 1
    [check] = [check for check in json.loads(doctor.stdout) if "not watched" in check["found"]]
    assert check["what"] == "source notes"
    assert check["level"] == "problem" and f"sudo sysctl {sysctl}=" in check["fix"]
    assert check["fix"].endswith("the watch is set up again within 2 s")  # watch_retry, not a fixed 30

    # Not followed as it happens, but not lost: a sweep still finds the change.
    (notes / "trips" / "plan.md").write_text("# trips\n\nThe barge leaves at ten.\n")
    daemon.call("sources.scan", {"name": "notes", "wait": True})
    assert daemon.search("barge")

    # The limit raised (in the daemon's namespace, as `sudo sysctl` would for the machine):
    # the watch is set up again at its next try, and the source is followed again.
    raised = ["nsenter", "--user", f"--target={daemon.proc.pid}", "sh", "-c", f"echo 64 > /proc/sys/user/{limit}"]
    subprocess.run(raised, check=True, timeout=30)
    wait_for(lambda: daemon.source_status("notes")["not_watched"] is None, timeout=60, what="the watch to be set up")
    (notes / "work" / "plan.md").write_text("# work\n\nThe kayak leaves at noon.\n")
    wait_for(lambda: daemon.search("kayak"), timeout=30, what="the change to be followed")


def test_a_watched_folder_is_not_said_to_be_unwatched(library, tmp_path):
    wrapper = inotify_limited("max_inotify_watches", 64)
    if wrapper is None:
        pytest.skip("cannot make a user namespace here to set an inotify limit in")
    notes = tmp_path / "notes"
    (notes / "trips").mkdir(parents=True)
    (notes / "trips" / "plan.md").write_text("# trips\n\nThe ferry leaves at nine.\n")
    library.configure([{"name": "notes", "path": str(notes)}])
    daemon = library.daemon(wrapper=wrapper)
    daemon.wait_idle("notes")
    (notes / "trips" / "plan.md").write_text("# trips\n\nThe barge leaves at ten.\n")
    wait_for(lambda: daemon.search("barge"), timeout=30, what="the change to be followed")
    assert daemon.source_status("notes")["not_watched"] is None
    assert "not watched" not in ken(library.config, "status").stdout


def test_a_folder_gone_since_its_watch_failed_is_not_said_to_be_held_by_the_limit(library, tmp_path):
    """The limit kept the folder unwatched; then the folder went (a drive unplugged, a
    rename). Status and doctor went on blaming the inotify limit, and told the user to
    raise it, for a folder that is not there: what the sweep says of it is the news."""
    wrapper = inotify_limited("max_inotify_watches", 2)
    if wrapper is None:
        pytest.skip("cannot make a user namespace here to set an inotify limit in")
    notes = tmp_path / "notes"
    for folder in ("trips", "recipes", "work"):
        (notes / folder).mkdir(parents=True)
        (notes / folder / "plan.md").write_text(f"# {folder}\n\nThe ferry leaves at nine.\n")
    library.configure([{"name": "notes", "path": str(notes)}], "watch_retry = 2")
    daemon = library.daemon(wrapper=wrapper)
    daemon.wait_idle("notes")
    wait_for(lambda: daemon.source_status("notes")["not_watched"], timeout=30, what="the watch to fail")

    notes.rename(tmp_path / "notes.away")
    wait_for(lambda: daemon.source_status("notes")["not_watched"] is None, timeout=30, what="the limit to be let go")
    daemon.call("sources.scan", {"name": "notes", "wait": True})
    doctor = json.loads(ken(library.config, "doctor", "--json").stdout)
    assert not [check for check in doctor if "not watched" in check["found"]]
    assert [check for check in doctor if check["what"] == "source notes" and "cannot read" in check["found"]]
