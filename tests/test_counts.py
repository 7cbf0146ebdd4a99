"""Counts in messages read as English: one file, two files."""

from kenning.text.counts import counted


def test_one_is_singular_and_any_other_count_plural():
    assert counted(1, "file") == "1 file"
    assert counted(0, "file") == "0 files"
    assert counted(2, "entity", "entities") == "2 entities"
    assert counted(1, "entity", "entities") == "1 entity"
