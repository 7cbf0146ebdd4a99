"""An error as a person or an agent sees it (kenning.errors.error_text, error_line): one
owner for the cut that `ken`, the socket, MCP replies, the log and failure reasons make."""

from __future__ import annotations

import logging
import sys

from kenning.errors import MAX_ERROR_CHARS, error_line, error_text
from kenning.logs import FORMAT, MAX_TRACEBACK_CHARS, BoundedFormatter


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


def test_a_logged_traceback_keeps_its_frames_and_cuts_what_the_error_quotes():
    """`log.exception` after a bug whose message quotes a whole document: the frames say
    where it happened, and the message each of its lines over again."""

    def place(chunk: str) -> None:
        raise ValueError(f"could not place {chunk!r}\n" * 100)

    try:
        place("bilbies " * 100_000)
    except ValueError:
        record = logging.LogRecord(
            "kenning.ingest", logging.ERROR, __file__, 1, "could not ingest %s", ("a.md",), sys.exc_info()
        )
    text = BoundedFormatter(FORMAT).format(record)
    assert text.splitlines()[0].endswith("ERROR kenning.ingest: could not ingest a.md")
    assert "in place" in text and "raise ValueError" in text
    assert len(text) <= 200 + MAX_TRACEBACK_CHARS
    assert max(len(line) for line in text.splitlines()) <= MAX_ERROR_CHARS
    assert text.endswith(" characters]")


def test_a_logged_traceback_too_long_to_keep_still_ends_with_what_was_raised():
    """Two functions calling each other until RecursionError (a parser walking a tree
    that leads back up it): no two frames repeat in a row, so the traceback runs to
    90,000 characters, and cut at its start it lost the line naming the error."""

    def walk(depth: int) -> int:
        return descend(depth + 1)

    def descend(depth: int) -> int:
        return walk(depth + 1)

    try:
        walk(0)
    except RecursionError:
        record = logging.LogRecord(
            "kenning.ingest", logging.ERROR, __file__, 1, "could not read a.pdf", (), sys.exc_info()
        )
    text = BoundedFormatter(FORMAT).format(record)
    assert len(text) <= 200 + MAX_TRACEBACK_CHARS
    assert text.splitlines()[1] == "Traceback (most recent call last):"
    assert text.splitlines()[-1].startswith("RecursionError: maximum recursion depth exceeded")
    assert "characters of frames cut] …" in text
