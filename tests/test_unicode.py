"""Folding letters to one written form (text/unicode.py), and what it does to a file's limits."""

from __future__ import annotations

import sys
import unicodedata
from dataclasses import replace

import pytest

from kenning.errors import ReaderError
from kenning.ingest.convert import ConvertLimits, convert_file
from kenning.ingest.readers import ReadLimits
from kenning.text.unicode import BLOCKS, normalized, same_value


def test_the_blocks_read_hold_every_character_that_is_folded():
    everywhere = {code for code in range(sys.maxunicode + 1) if same_value(code)}
    read = {code for first, last in BLOCKS for code in range(first, last + 1) if same_value(code)}
    assert everywhere == read


def test_letters_in_another_dress_are_folded_and_values_are_kept():
    assert normalized("ﬁrewall ｐｅｌｉｃａｎ gran\u00adite joi\u200bner ｶﾀｶﾅ") == "firewall pelican granite joiner カタカナ"
    # The joiners spell words.
    assert normalized("می\u200cخواهم") == "می\u200cخواهم"
    assert normalized(unicodedata.normalize("NFD", "résumé 프로젝트")) == "résumé 프로젝트"
    # What states a value is left as written.
    assert normalized("10⁶ rows, 3½ hours, 40 m², ① first") == "10⁶ rows, 3½ hours, 40 m², ① first"


def test_lines_are_kept():
    text = "ｅ\u0301\nline two\u2028same line\n\nﬁ"
    assert normalized(text).split("\n") == ["é", "line two\u2028same line", "", "fi"]


def test_a_file_whose_folded_text_passes_the_limit_fails_naming_it(tmp_path):
    # "ﷺ" folds to eighteen letters: 10 characters as written, 180 as stored.
    path = tmp_path / "blessing.txt"
    path.write_text("ﷺ" * 10)
    limits = ConvertLimits(ReadLimits(max_text_chars=100), target_chars=1200, overlap_chars=0, max_chunks=100)
    with pytest.raises(ReaderError, match="100-character limit once its letters are folded"):
        convert_file(path, "blessing", limits)
    assert convert_file(path, "blessing", replace(limits, read=ReadLimits(max_text_chars=200))).items
