"""An error as a person or an agent sees it (kenning.errors.error_text, error_line): one
owner for the cut that `ken`, the socket, MCP replies, the log and failure reasons make."""

from __future__ import annotations

from kenning.errors import MAX_ERROR_CHARS, error_line, error_text


def test_a_long_error_keeps_its_start_and_says_it_was_cut():
    text = "no source named " + "x" * 1_000_000
    shown = error_text(text)
    assert len(shown) == MAX_ERROR_CHARS
    assert shown.startswith("no source named xxx")
    assert shown.endswith("… [cut from 1,000,016 characters]")


def test_a_short_error_and_one_cut_already_are_kept_as_they_are():
    assert error_text("no capsule c-12") == "no capsule c-12"
    once = error_text("y" * 50_000)
    # The daemon cuts its reply and `ken` cuts what it prints: the count stays the first.
    assert error_text(once) == once


def test_an_exception_is_one_line_naming_its_type():
    exc = ValueError("could not place the chunk\n" + "bilbies burrow\n" * 10_000)
    line = error_line(exc)
    assert line.startswith("ValueError: could not place the chunk bilbies burrow bilbies")
    assert "\n" not in line and len(line) <= len("ValueError: ") + 300
    assert line.endswith("[cut from 150,025 characters]")
    assert error_line(KeyError()) == "KeyError"
