"""Dates as notes write them: what a document speaks from, dated lines, periods asked about."""

from __future__ import annotations

from datetime import date

import pytest

from kenning.api import Hit
from kenning.ingest.chunker import Chunk
from kenning.ingest.items import new_items
from kenning.retrieval.dates import TimeIntent, speaks_of
from kenning.text.dates import (
    Period,
    chunk_date,
    chunk_dates,
    date_at,
    days_without_year,
    document_date,
    document_period,
    from_timestamp,
    named_periods,
    named_spans,
    parse_iso,
    period,
    periods_without_year,
    title_heading,
    written_days,
)

TODAY = date(2026, 12, 1)


@pytest.mark.parametrize(
    ("text", "name", "expected"),
    [
        ("---\ndate: 2025-04-10\nupdated: 2025-06-01\n---\n# Refunds", "refunds.md", ("2025-06-01", "front matter")),
        ("---\ncreated: 18 September 2025\n---\nbody", "x.md", ("2025-09-18", "front matter")),
        ("# Platform sync\n", "2025-09-18-platform-sync.md", ("2025-09-18", "file name")),
        ("# Channel export\n", "2025-11-payments-channel.md", ("2025-11", "file name")),
        ("plain\n", "energy-tariff-2026.md", ("2026", "file name")),
        ("# Results\n", "2025-q3-results.md", ("2025-07", "file name")),
        ("# Platform sync, 18 September 2025\n\nNotes.", "sync.md", ("2025-09-18", "heading")),
        ("# Sync (March 4, 2025)\n", "sync.md", ("2025-03-04", "heading")),
        ("# 供应商会议 2025年9月18日\n", "会议.md", ("2025-09-18", "heading")),
        ("# 2025년 9월 18일 출근 메모\n", "메모.md", ("2025-09-18", "heading")),
        ("---\ndate: 2025年9月18日\n---\n# 考核\n", "考核.md", ("2025-09-18", "front matter")),
        ("---\ndate: 2023-05-06\nlastmod: 2024-01-02\n---\nbody", "x.md", ("2024-01-02", "front matter")),
        ("---\npublished: 2023-05-06\ncreated: 2020-01-01\n---\nbody", "x.md", ("2023-05-06", "front matter")),
        # Eight digits, as some exporters write the day; not a day that does not exist.
        ("---\ndate: 20250305\n---\nbody", "x.md", ("2025-03-05", "front matter")),
        ("---\ndate: '20250305'\n---\nbody", "x.md", ("2025-03-05", "front matter")),
        ("---\ndate: 20251345\n---\nbody", "x.md", None),
        # A year first, then a month and a day of one digit each; a day first stays its year.
        ("---\ndate: 2025/3/5\n---\nbody", "x.md", ("2025-03-05", "front matter")),
        ("---\nupdated: '2025-3-15 09:30'\n---\nbody", "x.md", ("2025-03-15", "front matter")),
        ("---\ndate: 5/3/2025\n---\nbody", "x.md", ("2025", "front matter")),
        ("# Standup 2025/03/14\n", "standup.md", ("2025-03-14", "heading")),
        ("# Retro 2025.03.14\n", "retro.md", ("2025-03-14", "heading")),
        # Day first with dots, as German or Polish notes write it; not inside a version.
        ("# Standup 18.09.2025\n", "standup.md", ("2025-09-18", "heading")),
        ("# Protokoll vom 3.11.2025\n", "protokoll.md", ("2025-11-03", "heading")),
        ("# Firmware 1.18.09.2025\n", "fw.md", None),
        ("# Release v2.1.2025\n", "mixer.md", None),
        ("# Notes on release 3.10.2025\n", "wheel.md", None),
        ("# Version: 1.2.2025\n", "notes.md", None),
        ("# Git tag 3.10.2025\n", "tags.md", None),
        # After a version's word, a day and a month of two digits each are a date: a
        # version's numbers are not zero-padded. "v" or a fourth number keeps it a version.
        ("# Release 18.09.2025\n", "notes.md", ("2025-09-18", "heading")),
        ("# Version 03.10.2025\n", "notes.md", ("2025-10-03", "heading")),
        ("# Release 18.9.2025\n", "notes.md", None),
        ("# Release v18.09.2025\n", "notes.md", None),
        ("# Build 18.09.2025.1\n", "notes.md", None),
        ("# Build 18.09.1\n", "notes.md", None),
        # A version's word is a whole word: a German weekday ends in "tag", and Tag is day.
        ("# Montag 18.09.2025 Teamsitzung\n", "sitzung.md", ("2025-09-18", "heading")),
        ("# Stichtag: 30.09.2025\n", "frist.md", ("2025-09-30", "heading")),
        ("# Letzter Tag 30.09.2025\n", "abschied.md", ("2025-09-30", "heading")),
        # Han numerals, as Chinese writes a date as well as in Arabic digits.
        ("# 会议纪要 二〇二五年九月十八日\n", "纪要.md", ("2025-09-18", "heading")),
        ("# 年度总结 二零二五年\n", "总结.md", ("2025", "heading")),
        ("# 二〇二五年十二月三十一日 值班\n", "值班.md", ("2025-12-31", "heading")),
        ("# 2025年9月18号 例会\n", "例会.md", ("2025-09-18", "heading")),
        # A fiscal year, as the calendar year of its number.
        ("# FY24 results\n", "results.md", ("2024", "heading")),
        ("# Results\n", "fy25-results.md", ("2025", "file name")),
        # Two digits as POSIX reads them: from 69, of the 1900s.
        ("# Budget FY99\n", "budget.md", ("1999", "heading")),
        ("# Backlog: fy 20 items\n", "backlog.md", None),
        ("# Results\n", "FY68 results.md", ("2068", "file name")),
        ("# Runbook\n\nRestart it.", "runbook.md", None),
        ("---\ntitle: x\n---\n# Runbook v1.2\n", "notes.md", None),
        # A "Date:" line in the body (a quoted email) is no front matter.
        ("# Standup\nDate: 2024-03-05\nWe met.\n", "2025-01-10-standup.md", ("2025-01-10", "file name")),
        ("Some intro\nUpdated: 3 March 2023\nmore\n# Plan for 2025\n", "plan.md", ("2025", "heading")),
        # Front matter whose first key holds a space, opened by a comment, or running long.
        ("---\nDate Created: x\ndate: 2024-02-01\n---\nbody", "x.md", ("2024-02-01", "front matter")),
        ("---\n# exported\n\ndate: 2024-02-01\n---\nbody", "x.md", ("2024-02-01", "front matter")),
        ("---\n" + "tag: a\n" * 60 + "updated: 2024-02-01\n---\n# Notes 2019\n", "x.md", ("2024-02-01", "front matter")),
        ("---\ntitle: x\n---\n" + "line\n" * 30 + "# Plan for 2025\n", "plan.md", ("2025", "heading")),
        # Days as file names write them, not as text does; eight digits that are no day.
        ("# Standup\n", "20250918-standup.md", ("2025-09-18", "file name")),
        ("# Standup\n", "2025_09_19 standup.md", ("2025-09-19", "file name")),
        ("# Build\n", "build-20251399.md", None),
        # Hugo's and Zola's TOML front matter.
        ('+++\ntitle = "Gate codes"\ndate = "2024-05-05"\n+++\n# Gate codes', "x.md", ("2024-05-05", "front matter")),
        ("+++\ndate = 2024-05-05T10:00:00Z\nlastmod = 2024-06-01\n+++\nbody", "x.md", ("2024-06-01", "front matter")),
        # A short line among the first two that gives a whole date: a plain-text note's
        # first line, the line under a title. Not a log's first entry, nor a date in the
        # middle of a sentence, nor one further down.
        ("18 May 2026 — boiler\nHeatRight have closed down.\n", "boiler.txt", ("2026-05-18", "opening")),
        ("Quote from Northwind Paper — 14 January 2026\nA4: 4.20 a ream\n", "quote.txt", ("2026-01-14", "opening")),
        ("# Payments on-call\nUpdated 12 May 2026\n\nPrimary: Priya\n", "oncall.md", ("2026-05-12", "opening")),
        ("# Decisions\n\n2026-03-01: kickoff\n2026-04-01: review moved\n", "log.md", None),
        ("We agreed on 3 March 2026 that the vendor ships the panels before the quarter ends.\n", "n.md", None),
        ("# Notes\nAttendees: Ann, Bo\n3 March 2026\n", "notes.md", None),
        # Nor a date the line says is of something else.
        ("Passport\nExpires 31 December 2029\n", "passport.txt", None),
        ("# Biscuit\nBorn 12 April 2019\n", "biscuit.md", None),
    ],
)
def test_a_document_speaks_from_its_front_matter_then_its_name_then_its_first_heading(text, name, expected):
    assert document_date(text, name) == expected


def test_a_file_time_outside_the_calendar_dates_it_at_the_nearest_end():
    # tmpfs, btrfs and XFS keep any 64-bit mtime; `touch -d @1e12` is the year 33658.
    assert from_timestamp(1e12) == "9999-12-31"
    assert from_timestamp(-7e10) == "0001-01-01"
    assert from_timestamp(0) == "1970-01-01"
    assert period("9999-12-31").start == date(9999, 12, 31)


def test_dated_lines_refine_a_chunk_to_its_newest_entry():
    changelog = "## 2.3.0 — 2025-06-10\n- Idempotency keys.\n\n## 2.2.0 (2025-03-01)\n- Retries."
    assert chunk_date(changelog, "Changelog") == "2025-06-10"
    chat = "**[2025-11-03 09:12] Marek:** morning\n**[2025-11-05 14:06] Marek:** update: it moved"
    assert chunk_date(chat, "") == "2025-11-05"
    log = "2025-06-10 — Drop iOS 15 support (Tomás)\n- 12 March 2025: kick-off"
    assert chunk_date(log, "Decisions") == "2025-06-10"
    assert chunk_date("Body text only.", "Releases > 1.4.0 — 2024-02-01") == "2024-02-01"
    assert chunk_date("- 03.11.2025: Umzug\n- 14.11.2025: Abnahme", "Log") == "2025-11-14"


def test_a_chunk_of_dated_lines_holds_them_from_its_earliest_to_its_latest():
    log = "2015-03-10 heron pond 412 mm\n2015-03-02 heron pond 400 mm\n2015-03-20 heron pond 420 mm"
    assert chunk_dates(log, "Heron log") == ("2015-03-02", "2015-03-20")
    [item] = new_items("Heron log", [Chunk(log, "Heron log", 1, 3)], text=log)
    assert (item.date_first, item.date) == ("2015-03-02", "2015-03-20")
    assert chunk_dates("Body text only.", "") is None


DEBIAN_CHANGELOG = """dpkg (1.17.6) unstable; urgency=low

  * Set default compression options per format.
  * Add support for uniform members.

 -- Guillem Jover <guillem@debian.org>  Sat, 25 Jan 2014 11:00:00 +0100

dpkg (1.0.1) unstable; urgency=low

  * Second.

 -- Ian Jackson <ian@debian.org>  Mon, 31 Feb 2000 10:00:00 +0100
 -- Ian Jackson <ian@debian.org>  Wed, 22 May 1996 10:00:00 +0100

Local variables:
"""


def test_a_chunk_of_a_debian_changelog_speaks_from_the_line_signing_its_entry():
    lines = DEBIAN_CHANGELOG.split("\n")

    def chunk(start: int, end: int) -> Chunk:
        return Chunk("\n".join(lines[start - 1 : end]), "", start, end)

    # The second chunk repeats the first's signature (overlap) and opens with it past
    # that: it holds 1996's changes, signed below. An impossible date signs nothing.
    chunks = [chunk(1, 6), chunk(5, 12), chunk(13, 14), chunk(15, 16)]
    dated = [item.date for item in new_items("changelog", chunks, text=DEBIAN_CHANGELOG)]
    assert dated == ["2014-01-25", "1996-05-22", "1996-05-22", None]
    # Text that merely quotes an entry is no changelog: nothing in it is dated so.
    quoted = "# Packaging notes\n\nAn entry is signed like this:\n\n" + lines[5]
    assert [item.date for item in new_items("notes", [Chunk(quoted, "", 1, 5)], text=quoted)] == [None]


def test_the_title_of_a_note_dated_elsewhere_dates_no_chunk():
    note = "---\ndate: 2025-07-10\n---\n# Addendum to the contact report (2 June 2025)\n\nThe cause is retracted.\n"
    title = title_heading(note, document_date(note, "addendum"))
    assert title == "Addendum to the contact report (2 June 2025)"
    body = note.split("---\n", 2)[2]
    assert chunk_date(body, title, title) is None
    assert chunk_date(body, title) == "2025-06-02"
    # A note dated by its heading alone has no other date for its title to contradict.
    meeting = "# Ops meeting 2025-09-04\n\n- Thursdays from now on.\n"
    assert title_heading(meeting, document_date(meeting, "ops")) is None


@pytest.mark.parametrize(
    "text",
    ["# Q2 2025 customer survey\n- NPS 61", "# Security advisory FH-SEC-2025-07\nPatch it.", "Version 2025-01 ships.",
     "Revenue was up in 2025."],
)
def test_a_period_a_chunk_is_about_does_not_date_it(text):
    assert chunk_date(text, "") is None


def test_an_iso_week_dates_a_note_by_its_days_and_a_question_asks_about_them():
    """"Sprint review W38 2025", "2025-W38": the week's Monday, through its Sunday; a week
    without its year, in an identifier, or that its year has not, names no week."""
    w38 = Period(date(2025, 9, 15), date(2025, 9, 22))
    assert document_period("# Sprint review W38 2025\n", "review.md") == (("2025-09-15", "heading"), "2025-09-21")
    assert document_period("# Review\n", "2025-W38-review.md") == (("2025-09-15", "file name"), "2025-09-21")
    assert document_period("# Standup 2025W01\n", "s.md") == (("2024-12-30", "heading"), "2025-01-05")
    assert named_periods("what did we ship in W38 2025?", TODAY) == [w38]
    assert named_periods("what did we ship in 2025-W38?", TODAY) == [w38]
    assert named_periods("what did we ship in W38?", TODAY) == []
    for heading in ("# ISO-W38 tracker 2025", "# W3C audit 2025", "# W53 retro 2025", "# Ticket FH-2025-W38"):
        assert document_date(heading + "\n", "x.md") == ("2025", "heading"), heading
    assert named_periods("is FH-2025-W38 fixed?", TODAY) == []


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("---\ndate: 2026-02-30\n---\n# Pangolins\n", "pangolins.md"),
        ("---\ndate: 2026-02-29\n---\n# Pangolins\n", "pangolins.md"),
        ("---\ndate: 2026-99-99\n---\n# Pangolins\n", "pangolins.md"),
        ("---\ndate: 2026-13-01\n---\n# Pangolins\n", "pangolins.md"),
        ("---\ndate: 2026-W60\n---\n# Pangolins\n", "pangolins.md"),
        ("---\ndate: Q5 2026\n---\n# Pangolins\n", "pangolins.md"),
        ("# 30 February 2026\n\nThe scale count is 1,200.\n", "pangolins.md"),
        ("# Standup 2026-02-30\n", "standup.md"),
        ("# Impossible date pangolin\n", "2026-02-30-notes.md"),
        ("# Pangolins\n", "2026-W60-review.md"),
    ],
)
def test_an_impossible_date_dates_nothing(text, name):
    """A day, week or quarter that does not exist states no date: read as the month or
    year left of it, it dated the note by one its writer never gave alone, while
    `since 2026-02-30` is refused as no date."""
    assert document_period(text, name) == (None, None)


def test_a_document_whose_date_field_is_impossible_falls_through_to_its_next_source():
    impossible = "---\nupdated: 2026-02-30\n---\n# Standup\n"
    assert document_date(impossible, "2026-02-27-standup.md") == ("2026-02-27", "file name")
    assert document_date(impossible + "date: x\n", "standup.md") is None
    assert document_date("---\nupdated: 2026-02-30\ndate: 2026-02-20\n---\n", "x.md") == ("2026-02-20", "front matter")
    assert document_date("# Standup 12 March 2026\n", "2026-02-30-standup.md") == ("2026-03-12", "heading")
    # A real day written with one-digit numbers is not taken for an impossible one.
    assert document_date("---\ndate: 2025/3/5\n---\n", "x.md") == ("2025-03-05", "front matter")


def test_front_matter_takes_a_date_in_the_years_a_search_takes():
    """`since 2199` is a date the API takes; `date: 2199-12-31` dated the note by its file's time."""
    assert document_date("---\ndate: 2199-12-31\n---\n# Zebras\n", "z.md") == ("2199-12-31", "front matter")
    assert document_date("---\ndate: 2150-06\n---\n", "z.md") == ("2150-06", "front matter")
    assert document_date("---\ndate: 9999-12-31\n---\n", "z.md") is None


def test_periods_a_question_names():
    assert named_periods("What was revenue in Q3 2025?", TODAY) == [Period(date(2025, 7, 1), date(2025, 10, 1))]
    assert named_periods("Where was the 2024 offsite?", TODAY) == [period("2024")]
    assert named_periods("rota in March 2026", TODAY) == [period("2026-03")]
    assert named_periods("what changed last year", TODAY) == [period("2025")]
    assert named_periods("the deploys last March", TODAY) == [period("2026-03")]
    assert named_periods("the deploys last March", date(2026, 2, 1)) == [period("2025-03")]
    h1 = Period(date(2026, 1, 1), date(2026, 7, 1))
    assert named_periods("the data team's plan for H1 2026", TODAY) == [h1]
    assert named_periods("hires in 2025 H2", TODAY) == [Period(date(2025, 7, 1), date(2026, 1, 1))]
    assert named_periods("in the first half of 2026", TODAY) == [h1]
    q2 = Period(date(2025, 4, 1), date(2025, 7, 1))
    assert named_periods("self-service in the second quarter of 2025", TODAY) == [q2]
    assert named_periods("new members in the 2nd quarter 2025", TODAY) == [q2]
    # A day is asked about, not a period notes are written in; an identifier is no date.
    assert named_periods("Is the office closed on 2 January 2026?", TODAY) == []
    assert named_periods("Is nginx affected by FH-SEC-2025-07?", TODAY) == []
    assert named_periods("Who curates the air_quality_2019 dataset?", TODAY) == []
    # "may" and "mar" after "this" are a verb and a noun, not months.
    assert named_periods("Who said this may break the payroll export?", TODAY) == []
    assert named_periods("this mar on the hull", TODAY) == []
    assert named_periods("the deploys this May", TODAY) == [period("2026-05")]
    assert named_periods("invoices last may", TODAY) == [period("2026-05")]
    # A fiscal year is its number's calendar year, the whole of what names it.
    for fiscal in ("FY2025", "FY25", "fy 2025", "FY-2025", "fiscal year 2025", "Fiscal 2025"):
        assert named_spans(f"What was revenue in {fiscal}?", TODAY) == [((20, 20 + len(fiscal)), period("2025"))]
    assert named_periods("Is nginx affected by SEC-FY25?", TODAY) == []
    assert named_periods("Who proposed a fiscal 20% cut?", TODAY) == []
    assert named_periods("Who proposed an FY 20% cut?", TODAY) == []
    # A lower-case "fy" a space apart from two digits is a word before a count; upper
    # case, or joined to its number as file names write it, it is a fiscal year.
    assert named_periods("Who owns the fy 20 items?", TODAY) == []
    for fiscal in ("FY 20", "fy20", "fy-20", "fy 2020"):
        assert named_periods(f"Who owns the {fiscal} items?", TODAY) == [period("2020")], fiscal
    # Han numerals.
    assert named_periods("二〇二五年九月的窑炉检修", TODAY) == [period("2025-09")]
    assert named_periods("二零二五年的收入", TODAY) == [period("2025")]


def test_a_period_named_without_its_year_is_the_one_nearest_the_note():
    september = date(2025, 9, 4)
    assert periods_without_year("- Noor: incident commander rota for Q4.", september) == [
        Period(date(2025, 10, 1), date(2026, 1, 1))
    ]
    assert periods_without_year("Renewal is due in January.", date(2025, 11, 20)) == [period("2026-01")]
    assert periods_without_year("The H2 plan", september) == [Period(date(2025, 7, 1), date(2026, 1, 1))]
    assert periods_without_year("Q3 2024 numbers", september) == []
    # "may" and "March" in other senses are not months.
    assert periods_without_year("We may ship it; Marching band; mar", september) == []
    # A month or quarter that has its year, or sits in a date or an identifier, is not bare.
    for written in ("Signed on March 3, 2024.", "Due 15 January 2027.", "Q4 of 2024", "see sales_q1", "report-Q3.pdf"):
        assert periods_without_year(written, september) == [], written
    # A day without its year names that day, not its month: a notice retracting "the
    # results posted on 2 June" means no report of 9 June.
    june = date(2026, 6, 16)
    assert periods_without_year("The results posted on 2 June are retracted.", june) == [period("2026-06-02")]
    assert periods_without_year("Rerun on Sept 4th", june) == [period("2026-09-04")]
    assert periods_without_year("we may 5 times", june) == []


def _hit(day: str) -> Hit:
    return Hit(1, 1, "Platform sync", "", "notes", "default", "sync.md", "", 14, 16, 0.0, date=day)


def test_a_note_speaks_of_a_quarter_it_names_without_its_year():
    q4 = (Period(date(2025, 10, 1), date(2026, 1, 1)),)
    text = "- Noor: incident commander rota for Q4."
    assert speaks_of(_hit("2025-09-04"), text, q4, TODAY)
    # The same line in a note of 2024 speaks of 2024's Q4, and a note naming none of it
    # does not speak of it.
    assert not speaks_of(_hit("2024-09-04"), text, q4, TODAY)
    assert not speaks_of(_hit("2025-09-04"), "- Noor: incident commander rota.", q4, TODAY)
    # A report written just after the period still speaks of it when what it names
    # without a year lies elsewhere ("the April review").
    y2024 = (period("2024"),)
    assert speaks_of(_hit("2025-01-06"), "Year closed with 40 signups; see the April review.", y2024, TODAY)


def test_a_note_whose_title_names_another_period_does_not_speak_of_the_one_it_was_written_in():
    h1 = (Period(date(2026, 1, 1), date(2026, 7, 1)),)
    plan = Hit(1, 1, "Data team plan, H2 2026", "", "notes", "default", "plan.md", "", 1, 9, 0.0, date="2026-06-22")
    assert not speaks_of(plan, "- Forecasting model for technician demand.", h1, TODAY)
    # Unless its text names the period asked about too.
    assert speaks_of(plan, "- Carried over from H1 2026: the forecasting model.", h1, TODAY)
    assert speaks_of(_hit("2026-06-22"), "- Forecasting model for technician demand.", h1, TODAY)
    # A year far from the note's date names a product, and "this quarter" in a title was
    # not written today.
    for title in ("SQL Server 2019 upgrade plan", "This quarter's priorities"):
        note = Hit(1, 1, title, "", "notes", "default", "n.md", "", 1, 9, 0.0, date="2026-03-02")
        assert speaks_of(note, "- Move the reporting database first.", h1, TODAY), title


def test_a_note_names_a_period_for_what_the_same_line_says():
    q2 = (Period(date(2025, 4, 1), date(2025, 7, 1)),)
    results = Hit(1, 1, "Q3 2025 results", "", "notes", "default", "q3.md", "", 1, 4, 0.0, date="2025-10-10")
    text = "- Revenue: £4.1m (Q2 2025: £3.8m).\n- Gross margin: 78 %."
    assert speaks_of(results, text, q2, TODAY, ("revenue",))
    assert not speaks_of(results, text, q2, TODAY, ("gross", "margin"))
    # A sentence wrapped over two lines is read as one.
    wrapped = "Revenue rose to £4.1m, up from\n£3.8m in Q2 2025."
    assert speaks_of(results, wrapped, q2, TODAY, ("revenue",))
    # A heading or a table's header row frames the lines under it.
    assert speaks_of(results, "### Q2 2025\n\n- Margin: 71 %", q2, TODAY, ("margin",))
    table = "| Quarter | Revenue | Margin |\n|---|---|---|\n| Q2 2025 | £3.8m | 71 % |"
    assert speaks_of(results, table, q2, TODAY, ("margin",))


def test_periods_cover_their_whole_span():
    assert period("2025") == Period(date(2025, 1, 1), date(2026, 1, 1))
    assert period("2025-12") == Period(date(2025, 12, 1), date(2026, 1, 1))
    assert period("2025-02-28").days == 1


def test_since_and_until_take_only_dates():
    assert [parse_iso(value) for value in ("2025", "2025-06", "2025-06-30")] == ["2025", "2025-06", "2025-06-30"]
    for bad in ("2025-13", "2025-02-30", "June", "25", "2025/06"):
        with pytest.raises(ValueError, match="not a date"):
            parse_iso(bad)
    # Years that look right but are out of range are told the range, not just "not a date".
    for far in ("9999", "0001", "1899", "2200-01"):
        with pytest.raises(ValueError, match="years 1900 to 2199"):
            parse_iso(far)
    with pytest.raises(ValueError) as caught:
        parse_iso("2" * 100_000)
    assert len(str(caught.value)) < 200


def test_days_written_out_name_a_time_but_not_the_day_a_line_opens_with():
    days = written_days("Update, 20 April 2026: the guidance of 9 March 2026 (and of 2026-03-02) is withdrawn.")
    assert sorted(str(day.start) for day in days) == ["2026-03-02", "2026-03-09", "2026-04-20"]
    assert written_days("- 2026-03-02: the cache moves to Ceph instead of MinIO") == []
    assert written_days("see advisory FH-2026-03-09") == []
    assert written_days("due 31 February 2026") == []


def test_a_day_without_its_year_is_the_last_before_the_note_but_a_range_names_no_day():
    written = date(2026, 2, 12)
    assert days_without_year("their quote of 14 october", written) == [period("2025-10-14")]
    assert days_without_year("the report of 19 january is withdrawn", written) == [period("2026-01-19")]
    assert days_without_year("the quote of 14 october - 2 corrections", written) == [period("2025-10-14")]
    assert days_without_year("the minutes of 3 february - 10:30 start", written) == [period("2026-02-03")]
    for stay in ("gull cottage is 8-15 august", "august 8 to 15", "15 august - 22 august", "3rd–10th july"):
        assert days_without_year(stay, written) == [], stay


@pytest.mark.parametrize(
    ("question", "clause"),
    [
        # The period says which vessel the question goes through.
        (
            "When is the next dry dock for the vessel whose bow thruster failed in March 2026?",
            {"bow", "thruster", "failed", "in"},
        ),
        ("What was the budget of the project that launched in 2024?", {"launched", "in"}),
        # "that" after a preposition points; the period is the question's own.
        ("What did we decide at that meeting in March 2025?", set()),
        # A second question, not a clause.
        ("Which team owns billing and who led it in 2024?", set()),
        # The period stands outside the clause.
        ("In 2025, what did the team that runs billing spend?", set()),
    ],
)
def test_a_period_in_a_relative_clause_is_read_as_the_clause(question: str, clause: set[str]) -> None:
    assert TimeIntent.of(question, TODAY).clause == clause


@pytest.mark.parametrize(
    "question",
    [
        "Is it true that a rota-api release went to production in March 2023?",
        "Tell me which rota-api release went out in July 2025",
        "What did the minutes of that meeting in March 2025 say?",
    ],
)
def test_that_or_which_outside_a_noun_phrase_opens_no_clause(question: str) -> None:
    assert TimeIntent.of(question, TODAY).clause == frozenset()


# Each year found was compared with every one found before it, and each bare quarter
# with every written date: 80,000 characters of "2024 " took 13 s, 160,000 of
# "2024-01-01; Q1; " 17 s, and a hit's text is read so at each search. Each input here
# took the old code over a minute; now well under a second.
@pytest.mark.timeout(30)
def test_a_long_text_of_years_is_read_in_time_linear_in_it():
    text = "2024 " * 40_000
    spans = named_spans(text, TODAY)
    assert len(spans) == 40_000
    assert spans[-1] == ((199_995, 199_999), period("2024"))
    # A span already read is not read again as part of another: "last March 2023" is March 2023.
    assert [span for _, span in named_spans("last year 2024; last March 2023", TODAY)] == [
        period("2023-03"), period("2024"), period("2025")
    ]


@pytest.mark.timeout(30)
def test_bare_quarters_among_many_dates_are_read_in_time_linear_in_them():
    text = "2024-01-01; Q1; " * 20_000
    assert periods_without_year(text, date(2025, 9, 4)) == [Period(date(2026, 1, 1), date(2026, 4, 1))] * 20_000
    # A quarter inside a written date is still not bare.
    assert periods_without_year("Q1 2024; 3 March 2024, Q2.", date(2025, 9, 4)) == [
        Period(date(2025, 4, 1), date(2025, 7, 1))
    ]


def test_a_question_opening_or_closing_a_period_asks_about_every_date_on_that_side():
    def asked(question: str) -> list[Period]:
        return list(TimeIntent.of(question, TODAY).periods)

    assert asked("What has changed since 2024?") == [Period(date(2024, 1, 1), date.max)]
    assert asked("Who joined from March 2025 onwards?") == [Period(date(2025, 3, 1), date.max)]
    assert asked("What shipped after Q3 2025?") == [Period(date(2025, 10, 1), date.max)]
    assert asked("What did it cost before 2026?") == [Period(date.min, date(2026, 1, 1))]
    assert asked("Who led it until March 2025?") == [Period(date.min, date(2025, 4, 1))]
    # "After" and "before" a noun the period dates bound that thing, not the period.
    assert asked("What changed after the 2024 offsite?") == [period("2024")]
    assert asked("Who led it until the 2025 audit?") == [Period(date.min, date(2026, 1, 1))]
    # "from" with no "on" names the period itself.
    assert asked("What does the report from 2024 say?") == [period("2024")]
    assert asked("What was revenue in Q3 2025?") == [Period(date(2025, 7, 1), date(2025, 10, 1))]


def test_periods_and_now_as_chinese_japanese_and_korean_questions_write_them():
    # No space stands between a year and the word before it.
    assert named_periods("我们在2025年的出差补贴标准", TODAY) == [period("2025")]
    assert named_periods("売上は2025年3月にいくら", TODAY) == [period("2025-03")]
    assert named_periods("작년 말 2025년 3월 매출", TODAY) == [period("2025-03")]
    for asked in ("現在の事務所のWi-Fiパスワードは？", "今のwi-fiパスワード", "目前办公室的打印机", "最新的报销流程", "현재 직원 주차장은?"):
        assert TimeIntent.of(asked, TODAY).recent, asked
    # 今 in today, this year, this time names a day, a year, an occasion; not "now".
    for asked in ("今日の定例会議は？", "今年の予算は？", "今回の議題は？"):
        assert not TimeIntent.of(asked, TODAY).recent, asked
    # A month written without its year, as a notice names the note it takes back.
    assert periods_without_year("4月2日の夏季休暇の方針は取り消します。", date(2025, 5, 12)) == [period("2025-04")]
    assert periods_without_year("4월 4일에 공지한 일정", date(2025, 5, 14)) == [period("2025-04")]
    assert periods_without_year("3ヶ月ごと、3개월마다", date(2025, 5, 14)) == []
    assert written_days("夏季休暇の方針（2025年4月2日付）は取り消します。") == [period("2025-04-02")]


def test_the_date_written_across_a_place_in_a_line():
    line = "# Release 2.3.0, 15 September 2025"
    assert [date_at(line, line.index(part)) for part in ("15", "2025", "2.3.0")] == ["2025-09-15", "2025-09-15", None]


def test_a_month_a_case_blind_match_took_from_other_letters_dates_nothing():
    # Under IGNORECASE the dotless ı matches i: "Aprıl" is no month, and no error.
    assert periods_without_year("Due 2 Aprıl", date(2026, 6, 16)) == []
    assert document_period("2 Aprıl 2026 — boiler\nHeatRight closed down.\n", "boiler.txt") == (None, None)
