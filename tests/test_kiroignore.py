import logging
import os
from pathlib import Path

import pytest

from kenning.errors import IgnoreFileUnusable
from kenning.ingest.kiroignore import MAX_FILE_BYTES, MAX_RULES, KiroIgnore


def rules(*lines: str) -> KiroIgnore:
    return KiroIgnore.parse("\n".join(lines) + "\n")


def test_empty_text_has_no_rules() -> None:
    assert not KiroIgnore.parse("")
    assert not KiroIgnore.parse("\n\n   \n")
    assert not KiroIgnore().ignores("a.md", is_dir=False)


def test_comments_and_blank_lines() -> None:
    kiro = rules("# a comment", "", "   ", "*.log", "#*.md")
    assert kiro
    assert kiro.ignores("x.log", is_dir=False)
    assert not kiro.ignores("x.md", is_dir=False)
    assert not kiro.ignores("# a comment", is_dir=False)


def test_crlf_and_trailing_spaces() -> None:
    kiro = KiroIgnore.parse("drafts  \r\n*.log\t\r\n")
    assert kiro.ignores("drafts", is_dir=True)
    assert kiro.ignores("a.log", is_dir=False)


def test_bom_is_not_part_of_the_first_pattern(tmp_path: Path) -> None:
    (tmp_path / ".kiroignore").write_bytes(b"\xef\xbb\xbfdrafts\n")
    assert KiroIgnore.load(tmp_path).ignores("drafts", is_dir=True)


def test_name_without_slash_matches_at_any_depth() -> None:
    kiro = rules("scratch")
    assert kiro.ignores("scratch", is_dir=True)
    assert kiro.ignores("scratch", is_dir=False)
    assert kiro.ignores("a/b/scratch", is_dir=False)
    assert not kiro.ignores("scratchpad", is_dir=False)
    assert not kiro.ignores("a/myscratch", is_dir=False)


def test_trailing_slash_matches_directories_only() -> None:
    kiro = rules("cache/")
    assert kiro.ignores("cache", is_dir=True)
    assert kiro.ignores("a/cache", is_dir=True)
    assert not kiro.ignores("cache", is_dir=False)
    assert not kiro.ignores("a/cache", is_dir=False)


def test_leading_slash_anchors_at_root() -> None:
    kiro = rules("/todo.md")
    assert kiro.ignores("todo.md", is_dir=False)
    assert not kiro.ignores("sub/todo.md", is_dir=False)


def test_embedded_slash_anchors_at_root() -> None:
    kiro = rules("docs/internal")
    assert kiro.ignores("docs/internal", is_dir=True)
    assert not kiro.ignores("x/docs/internal", is_dir=True)


def test_star_does_not_cross_slash() -> None:
    kiro = rules("notes/*.md")
    assert kiro.ignores("notes/a.md", is_dir=False)
    assert kiro.ignores("notes/.md", is_dir=False)
    assert not kiro.ignores("notes/sub/a.md", is_dir=False)
    assert not kiro.ignores("notes/a.txt", is_dir=False)


def test_star_inside_a_name() -> None:
    kiro = rules("draft-*-v*.md")
    assert kiro.ignores("draft-plan-v2.md", is_dir=False)
    assert kiro.ignores("x/draft--v.md", is_dir=False)
    assert not kiro.ignores("draft-plan.md", is_dir=False)


def test_question_mark_is_one_character_not_slash() -> None:
    kiro = rules("/log?.txt", "/a?b")
    assert kiro.ignores("log1.txt", is_dir=False)
    assert not kiro.ignores("log.txt", is_dir=False)
    assert not kiro.ignores("log12.txt", is_dir=False)
    assert not kiro.ignores("a/b", is_dir=False)


def test_leading_double_star() -> None:
    kiro = rules("**/generated")
    assert kiro.ignores("generated", is_dir=True)
    assert kiro.ignores("a/b/generated", is_dir=True)


def test_middle_double_star() -> None:
    kiro = rules("docs/**/old")
    assert kiro.ignores("docs/old", is_dir=True)
    assert kiro.ignores("docs/a/b/old", is_dir=True)
    assert not kiro.ignores("x/docs/old", is_dir=True)
    assert not kiro.ignores("docs/a/older", is_dir=True)


def test_trailing_double_star_matches_inside_not_the_dir() -> None:
    kiro = rules("archive/**")
    assert not kiro.ignores("archive", is_dir=True)
    assert kiro.ignores("archive/a.md", is_dir=False)
    assert kiro.ignores("archive/x/y/z.md", is_dir=False)
    assert kiro.ignores("archive/x", is_dir=True)


def test_double_star_alone_matches_everything() -> None:
    kiro = rules("**")
    assert kiro.ignores("a.md", is_dir=False)
    assert kiro.ignores("a/b", is_dir=True)


def test_double_star_inside_a_segment_is_a_single_star() -> None:
    kiro = rules("/a**b")
    assert kiro.ignores("axxb", is_dir=False)
    assert not kiro.ignores("ax/xb", is_dir=False)


def test_negation_last_matching_rule_wins() -> None:
    kiro = rules("*.md", "!keep.md")
    assert kiro.ignores("a.md", is_dir=False)
    assert not kiro.ignores("keep.md", is_dir=False)
    assert not kiro.ignores("sub/keep.md", is_dir=False)

    reversed_order = rules("!keep.md", "*.md")
    assert reversed_order.ignores("keep.md", is_dir=False)


def test_negation_cannot_reinclude_under_an_excluded_directory() -> None:
    kiro = rules("build/", "!build/keep.md")
    assert kiro.ignores("build", is_dir=True)
    assert kiro.ignores("build/keep.md", is_dir=False)
    # The walk never asks about build/keep.md because it prunes build; the
    # single-level check alone would let it through, which is why ignores() exists.
    assert not kiro.matches("build/keep.md", is_dir=False)


def test_negation_of_a_directory_under_excluded_contents() -> None:
    kiro = rules("docs/*", "!docs/keep/")
    assert not kiro.ignores("docs", is_dir=True)
    assert kiro.ignores("docs/other", is_dir=True)
    assert not kiro.ignores("docs/keep", is_dir=True)
    assert not kiro.ignores("docs/keep/a.md", is_dir=False)


def test_escaped_hash_and_bang_are_literal() -> None:
    kiro = rules("\\#notes#", "\\!important.md")
    assert kiro.ignores("#notes#", is_dir=False)
    assert kiro.ignores("!important.md", is_dir=False)
    assert not kiro.ignores("important.md", is_dir=False)


def test_other_backslashes_match_themselves() -> None:
    kiro = rules("a\\*b")
    assert kiro.ignores("a\\xb", is_dir=False)
    assert not kiro.ignores("a*b", is_dir=False)


def test_brackets_are_literal() -> None:
    kiro = rules("[ab].md")
    assert kiro.ignores("[ab].md", is_dir=False)
    assert not kiro.ignores("a.md", is_dir=False)


def test_regex_metacharacters_are_literal() -> None:
    kiro = rules("a+b(1).md", "x.y")
    assert kiro.ignores("a+b(1).md", is_dir=False)
    assert not kiro.ignores("aab(1).md", is_dir=False)
    assert not kiro.ignores("xzy", is_dir=False)


def test_matching_is_case_sensitive() -> None:
    assert not rules("*.MD").ignores("a.md", is_dir=False)


@pytest.mark.parametrize("bad", ["!", "/", "!/", "//x", "a//b", "a/b//"])
def test_unusable_pattern_is_dropped_and_the_rest_apply(bad: str, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="kenning.ingest.kiroignore"):
        kiro = rules("*.log", bad, "*.tmp")
    assert kiro.ignores("a.log", is_dir=False)
    assert kiro.ignores("a.tmp", is_dir=False)
    assert not kiro.ignores("a.md", is_dir=False)
    assert "line 2" in caplog.text


def test_a_dropped_rule_is_logged_redacted(caplog: pytest.LogCaptureFixture) -> None:
    """The warning quotes the line, which may hold anything the user wrote."""
    token = "ghp_" + "a1B2" * 9
    with caplog.at_level(logging.WARNING, logger="kenning.ingest.kiroignore"):
        rules(f"builds/{token}//cache")
    assert "line 1" in caplog.text and "[REDACTED]" in caplog.text and token not in caplog.text


def test_more_rules_than_the_cap_make_the_file_unusable_not_cut_short() -> None:
    # Cut short, the rules past the cap did not apply, and what they kept out was indexed.
    lines = [f"f{i}.md" for i in range(MAX_RULES)] + ["over.md"]
    with pytest.raises(IgnoreFileUnusable, match=f"more than {MAX_RULES} rules"):
        KiroIgnore.parse("\n".join(lines))
    assert KiroIgnore.parse("\n".join(lines[:-1])).ignores(f"f{MAX_RULES - 1}.md", is_dir=False)


def test_comments_do_not_count_towards_the_cap() -> None:
    lines = ["# c"] * (MAX_RULES + 5) + ["kept.md"]
    assert KiroIgnore.parse("\n".join(lines)).ignores("kept.md", is_dir=False)


def test_pathological_pattern_does_not_backtrack() -> None:
    # Naively translated, each extra star multiplies the work on a non-match.
    kiro = rules("*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b", "**/a/**/a/**/a/**/a/**/a/**/a/**/b")
    assert not kiro.ignores("a" * 300, is_dir=False)
    assert not kiro.ignores("/".join(["a"] * 200), is_dir=False)


def test_load_absent_file_has_no_rules(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        assert not KiroIgnore.load(tmp_path)
    assert caplog.text == ""


def test_load_reads_rules(tmp_path: Path) -> None:
    (tmp_path / ".kiroignore").write_text("drafts/\n")
    assert KiroIgnore.load(tmp_path).ignores("drafts", is_dir=True)


def test_load_oversized_file_is_unusable(tmp_path: Path) -> None:
    body = "drafts/\n" + "#" * MAX_FILE_BYTES
    (tmp_path / ".kiroignore").write_text(body)
    with pytest.raises(IgnoreFileUnusable, match="larger than"):
        KiroIgnore.load(tmp_path)


def test_load_file_at_the_size_limit_is_read(tmp_path: Path) -> None:
    body = "drafts/\n"
    body += "#" * (MAX_FILE_BYTES - len(body))
    (tmp_path / ".kiroignore").write_text(body)
    assert KiroIgnore.load(tmp_path).ignores("drafts", is_dir=True)


def test_load_keeps_every_rule_of_a_file_with_bytes_that_are_not_utf8(tmp_path: Path) -> None:
    # A comment saved as Latin-1 dropped the whole file, and "drafts/" with it.
    (tmp_path / ".kiroignore").write_bytes(b"# caf\xe9 notes\ndrafts/\n\xff\xfe bad\n*.log\n")
    kiro = KiroIgnore.load(tmp_path)
    assert kiro.ignores("drafts", is_dir=True) and kiro.ignores("a/b.log", is_dir=False)
    assert not kiro.ignores("notes.md", is_dir=False)


def test_load_unreadable_file_is_unusable(tmp_path: Path) -> None:
    path = tmp_path / ".kiroignore"
    if os.geteuid() != 0:
        path.write_text("drafts/\n")
        path.chmod(0)
    else:
        # Root reads through mode 000, so provoke a real open-time OSError another
        # way: a symlink that points at itself fails with ELOOP.
        path.symlink_to(path)
    with pytest.raises(IgnoreFileUnusable, match="cannot read"):
        KiroIgnore.load(tmp_path)


def test_load_link_to_a_file_that_is_not_there_is_unusable(tmp_path: Path) -> None:
    (tmp_path / ".kiroignore").symlink_to(tmp_path / "drive" / "shared-ignore")
    with pytest.raises(IgnoreFileUnusable, match="links to a file that is not there"):
        KiroIgnore.load(tmp_path)
    assert not KiroIgnore.load_for_watching(tmp_path)


def test_load_directory_in_place_of_the_file_is_unusable(tmp_path: Path) -> None:
    (tmp_path / ".kiroignore").mkdir()
    with pytest.raises(IgnoreFileUnusable, match="not a regular file"):
        KiroIgnore.load(tmp_path)


def test_load_fifo_does_not_block(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / ".kiroignore")
    with pytest.raises(IgnoreFileUnusable, match="not a regular file"):
        KiroIgnore.load(tmp_path)
