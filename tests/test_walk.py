import errno
import logging
import os
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from kenning.ingest import mounts as mounts_module
from kenning.ingest.kiroignore import KiroIgnore
from kenning.ingest.mounts import FIXED, MOUNTINFO, Mounts, read_table
from kenning.ingest.walk import (
    HARD_SKIP_DIRS,
    SYSTEM_FS,
    Discovered,
    WalkReport,
    WalkRules,
    directories,
    is_candidate,
    _tree,
    newest,
    walk,
)


def make(root: Path, *rels: str) -> None:
    for rel in rels:
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"content of {rel}\n")


def rels(root: Path, rules: WalkRules = WalkRules()) -> set[str]:
    return {item.rel for item in walk(root, rules)}


@pytest.fixture
def root(tmp_path: Path) -> Path:
    path = tmp_path / "src"
    path.mkdir()
    return path


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    path = tmp_path / "outside"
    path.mkdir()
    return path


def test_lists_supported_files_with_stat(root: Path) -> None:
    make(root, "a.md", "sub/b.txt", "sub/deep/c.py", "README", "UPPER.MD", "photo.png", "blob.bin")
    os.utime(root / "a.md", (1_000_000, 1_000_000))
    found = {item.rel: item for item in walk(root, WalkRules())}
    assert set(found) == {"a.md", "sub/b.txt", "sub/deep/c.py", "README", "UPPER.MD"}
    item = found["a.md"]
    assert item == Discovered(
        path=root / "a.md", rel="a.md", mtime=1_000_000, size=len("content of a.md\n"),
        ctime=os.stat(root / "a.md").st_ctime, device=os.stat(root / "a.md").st_dev,
    )  # fmt: skip
    assert found["sub/deep/c.py"].path == root / "sub" / "deep" / "c.py"


def test_empty_root(root: Path) -> None:
    assert walk(root, WalkRules()) == []


@pytest.mark.parametrize("skip", sorted(HARD_SKIP_DIRS))
def test_hard_skip_dirs(root: Path, skip: str) -> None:
    make(root, "keep.md", f"{skip}/x.md", f"deep/{skip}/y.md")
    assert rels(root) == {"keep.md"}


def test_dot_paths_skipped(root: Path) -> None:
    make(root, "keep.md", ".notes.md", ".hidden/x.md", "sub/.obsidian/y.md", "sub/z.md", ".kiroignore")
    assert rels(root) == {"keep.md", "sub/z.md"}


@pytest.mark.parametrize(
    "name",
    [
        "~$report.docx",
        "desktop.ini",
        "DESKTOP.INI",
        "notes~",
        "#notes#",
        "package-lock.json",
        "Package-Lock.JSON",
        "npm-shrinkwrap.json",
        "pnpm-lock.yaml",
        "packages.lock.json",
    ],
)
def test_junk_and_lock_files_skipped(root: Path, name: str) -> None:
    make(root, "keep.md", name, f"sub/{name}")
    assert rels(root) == {"keep.md"}


def test_ignore_pattern_on_relative_path_and_name(root: Path) -> None:
    make(root, "a.md", "a.log", "sub/b.log", "exact/path.md", "exact/other.md", "x/exact/path.md")
    rules = WalkRules(ignore=("*.log", "exact/path.md"))
    assert rels(root, rules) == {"a.md", "exact/other.md", "x/exact/path.md"}


@pytest.mark.parametrize("pattern", ["drafts", "drafts/", "drafts/*", "drafts/**"])
def test_ignore_pattern_excludes_a_directory(root: Path, pattern: str) -> None:
    make(root, "a.md", "drafts/b.md", "drafts/deep/c.md", "drafts.md")
    assert rels(root, WalkRules(ignore=(pattern,))) == {"a.md", "drafts.md"}


def test_ignore_pattern_on_a_directory_name_at_any_depth(root: Path) -> None:
    make(root, "a.md", "x/scratch/b.md", "scratchpad/c.md")
    assert rels(root, WalkRules(ignore=("scratch",))) == {"a.md", "scratchpad/c.md"}


def test_kiroignore_rules_apply(root: Path) -> None:
    make(root, "a.md", "a.log", "gen/x.md", "gen/keep.md", "docs/gen/y.md", "docs/z.md", "notes/old/w.md")
    (root / ".kiroignore").write_text("# generated\n*.log\ngen/\n!gen/keep.md\n/notes/old\n")
    assert rels(root) == {"a.md", "docs/z.md"}


def test_kiroignore_in_a_subdirectory_is_not_read(root: Path) -> None:
    make(root, "sub/a.md")
    (root / "sub" / ".kiroignore").write_text("*.md\n")
    assert rels(root) == {"sub/a.md"}


def test_kiroignore_is_read_each_walk(root: Path) -> None:
    make(root, "a.md", "b.md")
    assert rels(root) == {"a.md", "b.md"}
    (root / ".kiroignore").write_text("b.md\n")
    assert rels(root) == {"a.md"}


def test_sensitive_files_never_listed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    home = Path.home()
    make(home, "notes.md", ".ssh/id_ed25519", ".ssh/config", ".env", ".aws/credentials")
    make(home, "proj/id_rsa", "proj/credentials", "proj/secrets.yaml", "proj/.env", "proj/readme.md")
    make(home, "proj/Library/Keychains/login.md")
    assert rels(home) == {"notes.md", "proj/readme.md"}


def test_root_inside_a_sensitive_directory_lists_nothing(tmp_path: Path) -> None:
    ssh = tmp_path / ".ssh"
    make(ssh, "config", "known_hosts", "notes.md")
    assert walk(ssh, WalkRules()) == []


def test_root_linked_to_a_sensitive_directory_lists_nothing(tmp_path: Path) -> None:
    make(tmp_path, ".ssh/config", ".ssh/notes.md")
    alias = tmp_path / "keys"
    alias.symlink_to(tmp_path / ".ssh")
    assert walk(alias, WalkRules()) == []


def test_symlink_to_a_sensitive_file_is_skipped_even_unconfined(root: Path, tmp_path: Path) -> None:
    make(tmp_path, ".ssh/config")
    (root / "ssh-config.txt").symlink_to(tmp_path / ".ssh" / "config")
    make(root, "a.md")
    assert rels(root, WalkRules(confine_to_root=False)) == {"a.md"}


def test_symlink_escaping_the_root(root: Path, outside: Path) -> None:
    make(outside, "secret.md")
    os.utime(outside / "secret.md", (2_000_000, 2_000_000))
    (root / "link.md").symlink_to(outside / "secret.md")
    make(root, "a.md")
    assert rels(root) == {"a.md"}
    found = {item.rel: item for item in walk(root, WalkRules(confine_to_root=False))}
    assert set(found) == {"a.md", "link.md"}
    assert found["link.md"].path == root / "link.md"
    assert found["link.md"].mtime == 2_000_000


def test_symlink_within_the_root_is_listed(root: Path) -> None:
    make(root, "sub/a.md")
    (root / "alias.md").symlink_to(root / "sub" / "a.md")
    assert rels(root) == {"sub/a.md", "alias.md"}


def test_a_link_to_a_file_of_a_type_kenning_cannot_read_is_passed_over_as_that_type(root: Path) -> None:
    """The reader goes by the target's name, so `notes.md -> tool.bin` was listed as
    markdown and then failed when read; it is passed over as tool.bin is, and counted so."""
    (root / "tool.bin").write_bytes(b"\x00\x01")
    (root / "notes.md").symlink_to(root / "tool.bin")
    (root / "alias.md").symlink_to(root / "tool.bin")
    make(root, "a.md")
    report = WalkReport()
    assert {item.rel for item in walk(root, WalkRules(), report)} == {"a.md"}
    assert report.passed_over() == {"unsupported type": 3}


def test_directory_symlinks_are_not_followed(root: Path, outside: Path) -> None:
    make(outside, "x.md")
    make(root, "sub/a.md")
    (root / "out-link").symlink_to(outside)
    (root / "in-link").symlink_to(root / "sub")
    assert rels(root, WalkRules(confine_to_root=False)) == {"sub/a.md"}


def test_root_given_through_a_symlink(root: Path, tmp_path: Path) -> None:
    make(root, "a.md")
    alias = tmp_path / "alias"
    alias.symlink_to(root)
    [item] = walk(alias, WalkRules())
    assert item.path == alias / "a.md"
    assert item.rel == "a.md"


def test_the_directories_watched_are_the_ones_the_walk_enters(root: Path, outside: Path, tmp_path: Path) -> None:
    make(root, "notes/2026/a.md", "node_modules/pkg/readme.md", ".cache/x.md", "drafts/b.md", "data/c.md")
    make(outside, "deep/x.md")
    (root / "usr").symlink_to(outside)
    rules = WalkRules(ignore=("drafts",), exclude=(root / "data",), confine_to_root=False)
    assert directories(root, rules) == [str(root), str(root / "notes"), str(root / "notes" / "2026")]
    alias = tmp_path / "alias"
    alias.symlink_to(root)
    # Written under the root as given, as the watcher's events are.
    assert directories(alias, rules)[1:] == [str(alias / "notes"), str(alias / "notes" / "2026")]
    # The folders the file links lead into are watched too (their targets named, so only
    # those count), when the walk does not enter them and the source may read there.
    (root / "notes" / "cached.md").symlink_to(root / ".cache" / "x.md")
    (root / "notes" / "far.md").symlink_to(outside / "deep" / "x.md")
    (root / "notes" / "near.md").symlink_to(root / "notes" / "2026" / "a.md")
    targets: set[str] = set()
    assert set(directories(root, rules, targets)[3:]) == {str(root / ".cache"), str(outside / "deep")}
    assert targets == {str(root / ".cache" / "x.md"), str(outside / "deep" / "x.md")}
    confined: set[str] = set()
    assert directories(root, replace(rules, confine_to_root=True), confined)[3:] == [str(root / ".cache")]
    assert confined == {str(root / ".cache" / "x.md")}


def test_a_tree_deeper_than_the_interpreter_recurses_is_walked(root: Path) -> None:
    deep = root
    for _ in range(1200):  # a 2,400-character path: Python 3.11's os.walk raised RecursionError
        deep /= "d"
        deep.mkdir()
    (deep / "bottom.md").write_text("found\n")
    make(root, "top.md")
    try:
        assert {item.path.name for item in walk(root, WalkRules())} == {"top.md", "bottom.md"}
        assert directories(root, WalkRules())[-1] == str(deep)
    finally:
        # pytest removes old temporary directories with shutil.rmtree, which recurses too.
        (deep / "bottom.md").unlink()
        while deep != root:
            deep.rmdir()
            deep = deep.parent


def test_non_regular_files_skipped(root: Path) -> None:
    make(root, "a.md")
    os.mkfifo(root / "pipe.md")
    (root / "broken.md").symlink_to(root / "missing.md")
    assert rels(root) == {"a.md"}


def test_a_link_loop_is_passed_over_as_one(root: Path) -> None:
    """`ken status` listed a link that leads round to itself as "unreadable or
    vanished", which sent its owner looking for a missing file or a permission."""
    make(root, "a.md")
    (root / "self.md").symlink_to(root / "self.md")
    (root / "there.md").symlink_to(root / "back.md")
    (root / "back.md").symlink_to(root / "there.md")
    (root / "broken.md").symlink_to(root / "missing.md")
    report = WalkReport()
    assert {item.rel for item in walk(root, WalkRules(), report)} == {"a.md"}
    assert report.passed_over() == {"a symbolic link loop": 3, "unreadable or vanished": 1}


def test_exclude_dirs(root: Path, tmp_path: Path) -> None:
    make(root, "a.md", "data/x.md", "data/deep/y.md")
    assert rels(root, WalkRules(exclude=(root / "data",))) == {"a.md"}
    alias = tmp_path / "alias"
    alias.symlink_to(root / "data")
    assert rels(root, WalkRules(exclude=(alias,))) == {"a.md"}
    assert walk(root, WalkRules(exclude=(root,))) == []
    assert walk(root / "data", WalkRules(exclude=(root,))) == []


def test_missing_root_raises(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        walk(tmp_path / "gone", WalkRules())


def test_file_as_root_raises(tmp_path: Path) -> None:
    make(tmp_path, "a.md")
    with pytest.raises(NotADirectoryError):
        walk(tmp_path / "a.md", WalkRules())


@pytest.fixture
def unreadable(monkeypatch: pytest.MonkeyPatch) -> Iterator[set[str]]:
    """Directories whose listing fails with EACCES.

    Tests may run as root, which lists mode-000 directories anyway, so the refusal is
    injected where the operating system would give it.
    """
    denied: set[str] = set()
    real_scandir = os.scandir

    def scandir(path: str) -> object:
        if os.fspath(path) in denied:
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), path)
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    yield denied


def test_unreadable_subdirectory_is_skipped(
    root: Path, unreadable: set[str], caplog: pytest.LogCaptureFixture
) -> None:
    make(root, "a.md", "locked/b.md", "open/c.md")
    unreadable.add(str(root.resolve() / "locked"))
    with caplog.at_level(logging.WARNING, logger="kenning.ingest.walk"):
        assert rels(root) == {"a.md", "open/c.md"}
    assert "locked" in caplog.text


def test_unreadable_root_raises(root: Path, unreadable: set[str]) -> None:
    make(root, "a.md")
    unreadable.add(str(root.resolve()))
    with pytest.raises(PermissionError):
        walk(root, WalkRules())


@pytest.fixture
def refused(monkeypatch: pytest.MonkeyPatch) -> Iterator[set[str]]:
    """Paths whose lstat fails with EPERM.

    A file that refuses a stat in a folder that can be searched (a protected file on
    macOS, a file on a FUSE mount refusing it) is not something the Linux kernel gives
    for one local file, nor can these tests mount FUSE, so os.lstat is patched, for this
    test only, where the operating system would refuse.
    """
    denied: set[str] = set()
    real_lstat = os.lstat

    def lstat(path: str, *args: object, **kwargs: object) -> os.stat_result:
        if os.fspath(path) in denied:
            raise PermissionError(errno.EPERM, os.strerror(errno.EPERM), path)
        return real_lstat(path, *args, **kwargs)

    monkeypatch.setattr(os, "lstat", lstat)
    yield denied


def test_a_file_in_the_root_that_refuses_a_stat_is_kept_and_named_not_the_root_read_as_unreadable(
    root: Path, refused: set[str]
) -> None:
    make(root, "a.md", "shut.md", "sub/shut.md")
    refused.update({str(root.resolve() / "shut.md"), str(root.resolve() / "sub" / "shut.md")})
    report = WalkReport()
    assert {item.rel for item in walk(root, WalkRules(), report)} == {"a.md"}
    # Each is one file kept as last indexed (the sweep's `hides`), not a folder.
    assert set(report.unreadable_links) == {"shut.md", "sub/shut.md"}
    assert report.hides("shut.md") and report.unreadable_dirs == {}


def test_a_folder_that_can_be_listed_but_not_searched_is_still_a_folder_not_read(
    root: Path, refused: set[str]
) -> None:
    """chmod -x on a folder: every stat in it is refused, "." too."""
    make(root, "a.md", "locked/b.md", "locked/c.md")
    locked = root.resolve() / "locked"
    refused.update({str(locked / "b.md"), str(locked / "c.md"), os.path.join(locked, os.curdir)})
    report = WalkReport()
    assert {item.rel for item in walk(root, WalkRules(), report)} == {"a.md"}
    assert report.unreadable_dirs == {"locked": os.strerror(errno.EACCES)} and report.unreadable_links == {}
    refused.update({str(root.resolve() / "a.md"), os.path.join(root.resolve(), os.curdir)})
    with pytest.raises(PermissionError):
        walk(root, WalkRules())


# is_candidate: judged on the path text alone, so the root need not exist.

ROOT = Path("/nowhere/src")


def candidate(target: str | Path, rules: WalkRules = WalkRules(), kiro: KiroIgnore | None = None) -> bool:
    """is_candidate with every disk access failing, for the span of the call only."""

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("is_candidate touched the disk")

    with pytest.MonkeyPatch.context() as patch:
        for name in ("stat", "lstat", "scandir", "listdir", "open"):
            patch.setattr(os, name, refuse)
        return is_candidate(ROOT, ROOT / target if isinstance(target, str) else target, rules, kiro)


@pytest.mark.parametrize("rel", ["a.md", "sub/deep/c.py", "README", "sub", "v1.2", "photo.png", ".kiroignore"])
def test_candidates(rel: str) -> None:
    assert candidate(rel)


@pytest.mark.parametrize(
    "rel",
    [
        "node_modules/x.md",
        "deep/build/x.md",
        "cdk.out/x.json",
        ".git/HEAD",
        ".hidden.md",
        "sub/.obsidian/x.md",
        "sub/.obsidian",
        "~$report.docx",
        "package-lock.json",
        "DESKTOP.INI",
        "id_rsa_old.txt",
        "secrets.yaml",
        "credentials.json",
        "Library/Keychains/x.md",
        "build/photo.png",
    ],
)
def test_not_candidates(rel: str) -> None:
    assert not candidate(rel)


def test_extensionless_secret_name_may_still_be_a_directory() -> None:
    # The walk would enter a directory called "credentials"; its files are judged alone.
    assert candidate("credentials")
    assert candidate("credentials/rotation.md")
    assert not candidate("credentials/secrets.yaml")


def test_candidate_root_and_outside() -> None:
    assert candidate(ROOT)
    assert not candidate(Path("/nowhere/other/a.md"))
    assert not candidate(Path("/nowhere/src2/a.md"))


def test_candidate_ignore_patterns() -> None:
    rules = WalkRules(ignore=("drafts", "*.log"))
    assert not candidate("drafts", rules)
    assert not candidate("drafts/a.md", rules)
    assert not candidate("x/a.log", rules)
    assert candidate("notes/a.md", rules)


def test_candidate_kiroignore() -> None:
    kiro = KiroIgnore.parse("gen/\n*.log\n!keep.log\n")
    assert not candidate("gen/x.md", kiro=kiro)
    assert not candidate("a/gen/x.md", kiro=kiro)
    assert not candidate("a.log", kiro=kiro)
    assert candidate("keep.log", kiro=kiro)
    # "gen/" names directories only, and an extensionless "gen" may be a file.
    assert candidate("gen", kiro=kiro)


def test_candidate_exclude() -> None:
    rules = WalkRules(exclude=(ROOT / "data",))
    assert not candidate("data", rules)
    assert not candidate("data/x.md", rules)
    assert candidate("database.md", rules)


def test_every_file_passed_over_is_counted_by_reason(root: Path, tmp_path: Path) -> None:
    make(root, "a.md", "b.txt", "photo.png", "clip.mp4", "src.tar.gz", "paper.pdf.gz", "notes.zip")
    make(root, "README.md.gz", ".hidden.md", "~$report.docx", "package-lock.json", "skip/me.md", "secrets.yaml")
    make(root, "node_modules/x.md", ".git/HEAD", "big.log")
    with open(root / "big.log", "wb") as handle:
        handle.truncate(5000)
    os.mkfifo(root / "pipe.md")
    (tmp_path / "outside.md").write_text("out\n")
    (root / "link.md").symlink_to(tmp_path / "outside.md")
    report = WalkReport()
    found = walk(root, WalkRules(ignore=("skip",), max_file_bytes=1000), report)
    assert {item.rel for item in found} == {"a.md", "b.txt", "README.md.gz", "big.log"}
    assert report.files == {
        "unsupported type": 2,
        "compressed (unsupported inside)": 3,
        "hidden": 1,
        "junk, backup or lock file": 2,
        "sensitive": 1,
        "not a regular file": 1,
        "link outside the root": 1,
        "too big": 1,
    }
    assert report.skipped_dirs == 3  # node_modules, .git, skip


def test_a_name_that_is_not_utf8_is_passed_over_and_counted(root: Path) -> None:
    make(root, "good.md")
    raw = os.fsencode(root)
    for name in (b"odd\xff\xfe.md", b"bad\xe9dir"):
        path = os.path.join(raw, name)
        if name.endswith(b".md"):
            open(path, "w").close()
        else:
            os.mkdir(path)
            open(os.path.join(path, b"inside.md"), "w").close()
    report = WalkReport()
    assert {item.rel for item in walk(root, WalkRules(), report)} == {"good.md"}
    assert report.files == {"name is not valid UTF-8": 1}
    assert report.skipped_dirs == 1
    # What status shows: the folder too, whose files were passed over unsaid.
    assert report.passed_over() == {"name is not valid UTF-8": 1, "folder not entered: its name is not valid UTF-8": 1}


def test_newest_keeps_the_most_recent_and_counts_the_rest_as_capped(root: Path) -> None:
    make(root, "a.md", "b.md", "c.md")
    for age, name in enumerate(("c.md", "a.md", "b.md")):
        os.utime(root / name, (1000 - age, 1000 - age))
    report = WalkReport()
    kept = newest(walk(root, WalkRules(), report), 2, report)
    assert [item.rel for item in kept] == ["c.md", "a.md"]
    assert report.files == {"over max_files": 1}


@pytest.mark.parametrize("rel", ["notes.md.gz", "changelog.Debian.gz", "README.Debian"])
def test_gzip_and_debian_notes_are_candidates(rel: str) -> None:
    assert candidate(rel)



def test_a_directory_that_becomes_a_link_during_the_walk_is_not_entered(tmp_path: Path) -> None:
    root, outside = tmp_path / "root", tmp_path / "outside"
    make(root, "a/note.md", "b/note.md")
    make(outside, "private/secret.md")
    steps = _tree(str(root), lambda error: None)
    assert next(steps)[0] == str(root)
    first = next(steps)[0]
    # The directory the walk has not reached yet is swapped for a link while it walks
    # the first one (`rm -r b && ln -s ~ b`): as with os.walk, the link is not followed.
    later = root / ("b" if first.endswith("a") else "a")
    (later / "note.md").unlink()
    later.rmdir()
    later.symlink_to(outside, target_is_directory=True)
    assert [dirpath for dirpath, _dirs, _files in steps] == []


def linux_mounts() -> None:
    if not os.path.exists(MOUNTINFO):
        pytest.skip(f"no {MOUNTINFO} here: the mount table is Linux's")


def test_the_real_proc_and_sys_are_system_filesystems_and_the_root_disk_and_tmp_are_not(tmp_path: Path) -> None:
    linux_mounts()
    mounts = Mounts()
    assert mounts.system_type("/proc", os.stat("/proc").st_dev) == "proc"
    assert mounts.system_type("/sys", os.stat("/sys").st_dev) == "sysfs"
    assert mounts.system_type("/", os.stat("/").st_dev) is None
    # Whatever holds the test's files (a disk, or a tmpfs for /tmp) holds the user's.
    assert mounts.system_type(str(tmp_path), os.stat(tmp_path).st_dev) is None


def test_the_mount_table_is_read_with_its_escapes_and_a_tmpfs_is_the_systems_only_where_the_system_mounts_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    table = tmp_path / "mountinfo"
    table.write_text(
        "22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n"
        "23 22 0:21 / /proc rw,nosuid shared:12 - proc proc rw\n"
        "24 22 0:5 / /dev rw,nosuid shared:2 - devtmpfs udev rw,size=8G\n"
        "25 22 0:25 / /run rw,nosuid shared:5 - tmpfs tmpfs rw\n"
        "26 22 0:26 / /tmp rw,nosuid shared:6 - tmpfs tmpfs rw\n"
        "27 22 0:27 / /home/ana/my\\040chroot/proc rw master:3 - proc proc rw\n"
        "28 22 0:28 / /srv/nfs rw - nfs4 host:/export rw\n"
        "29 22 0:25 / /srv/snapshot/run rw - tmpfs tmpfs rw\n"
        "not a mountinfo line\n"
    )
    listed = read_table(str(table))
    assert ("/home/ana/my chroot/proc", "proc", os.makedev(0, 27)) in listed
    assert ("/srv/nfs", "nfs4", os.makedev(0, 28)) in listed and len(listed) == 8
    monkeypatch.setattr(mounts_module, "read_table", lambda: listed)
    mounts = Mounts()
    assert mounts.system_type("/home/ana/my chroot/proc", os.makedev(0, 27)) == "proc"
    assert mounts.system_type("/run", os.makedev(0, 25)) == "tmpfs"
    # The system's /run bound elsewhere is the same tmpfs; /tmp's is the user's.
    assert mounts.system_type("/srv/snapshot/run", os.makedev(0, 25)) == "tmpfs"
    assert mounts.system_type("/tmp", os.makedev(0, 26)) is None
    assert mounts.system_type("/srv/nfs", os.makedev(0, 28)) is None
    # A bind mount of /proc listed nowhere by its path is known by its device.
    assert mounts.system_type("/elsewhere/proc", os.makedev(0, 21)) == "proc"
    assert read_table(str(tmp_path / "missing")) == list(FIXED)


@pytest.fixture
def table_reads(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts the walk's reads of the mount table."""
    reads: list[int] = []

    def counted_read() -> list[tuple[str, str, int | None]]:
        reads.append(1)
        return read_table()

    monkeypatch.setattr(mounts_module, "read_table", counted_read)
    return reads


def test_a_folder_with_no_mount_below_it_never_reads_the_mount_table(root: Path, table_reads: list[int]) -> None:
    make(root, "a.md", "sub/b.md", "sub/deep/c.md")
    assert rels(root) == {"a.md", "sub/b.md", "sub/deep/c.md"}
    assert table_reads == []


def test_proc_and_sys_mounted_in_a_folder_are_passed_over_and_counted(
    root: Path, mount, table_reads: list[int]
) -> None:
    linux_mounts()
    make(root, "etc/motd.md", "home/notes.md")
    for name in ("proc", "sys", "ram"):
        (root / name).mkdir()
    # A chroot's /proc and /sys as a system mounts them, and a RAM disk of the user's.
    mount("-t", "proc", "proc", root / "proc")
    mount("--bind", "/sys", root / "sys")
    mount("-t", "tmpfs", "tmpfs", root / "ram")
    (root / "ram" / "scratch.md").write_text("kept in a RAM disk\n")
    report = WalkReport()
    found = walk(root, WalkRules(), report)
    assert {item.rel for item in found} == {"etc/motd.md", "home/notes.md", "ram/scratch.md"}
    assert report.system_dirs == {"proc": "proc", "sys": "sysfs"}
    assert report.skipped_dirs == 2
    assert report.passed_over() == {SYSTEM_FS: 2}
    # Read once, for the walk's first mount point; and the watcher watches none of them.
    assert table_reads == [1]
    assert {os.path.relpath(path, root) for path in directories(root, WalkRules())} == {".", "etc", "home", "ram"}


def test_a_tmpfs_registered_as_the_root_itself_is_walked(tmp_path: Path, mount) -> None:
    ram = tmp_path / "run"
    ram.mkdir()
    mount("-t", "tmpfs", "tmpfs", ram)
    make(ram, "notes.md", "sub/more.md")
    assert rels(ram) == {"notes.md", "sub/more.md"}
