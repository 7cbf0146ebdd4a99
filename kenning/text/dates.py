"""Dates written in text: the date a note speaks from, dated lines, and periods a question names.

Ingest reads a document's date from its front matter, its file name or its first
heading, and refines a chunk's date from dated lines inside it (a changelog entry, the
line signing a Debian changelog's entry, a decision log line, a chat message); the
store's migration backfills the same from stored chunks; the query side reads the
periods a question names ("in 2025", "Q3 2025", "March 2026", "last year"). One parser
serves all three, so a date found at ingest and one asked for at query time always mean
the same span.

Hand-written rather than dateparser/dateutil: those find a date in almost any digits
(a version, a port, a ticket number), and here only a few unambiguous written forms
count, each with a known precision (a year, a quarter, a month, a day).

A date is kept as an ISO prefix — `2025`, `2025-09`, `2025-09-18` — whose length is its
precision, so dates sort and compare as text in SQL and in Python. A quarter is kept as
its first month, where it sorts among notes; a document dated by one also keeps its last
month (`document_period`), so a `since` range overlapping any month of it finds it. An ISO
week ("W38 2025", "2025-W38") is kept as its Monday, and its Sunday as its last day.
"""

from __future__ import annotations

import calendar
import re
from bisect import bisect_left
from dataclasses import dataclass
from datetime import date, datetime, timedelta, timezone

from kenning.text import cjk
from kenning.text.frontmatter import MAX_LINES, front_matter_lines
from kenning.text.headings import MAX_HEADING_CHARS, cut

_MONTHS = {
    name: number
    for number in range(1, 13)
    for name in {calendar.month_name[number].lower(), calendar.month_abbr[number].lower()}
}
_MONTHS["sept"] = 9
# The months' names as written out or cut short, lower-cased.
MONTH_WORDS = frozenset(_MONTHS)
_MONTH_NAMES = "|".join(sorted(_MONTHS, key=len, reverse=True))
_MONTH = rf"(?P<month>{_MONTH_NAMES})\.?"
_YEAR = r"(?P<year>(?:19|20)\d\d)"
_DAY = r"(?P<day>[0-3]?\d)(?:st|nd|rd|th)?"
# Chinese writes a date's numbers in Han numerals as well: a year digit by digit
# ("二〇二五年", "二零二五年"), a month and a day as counted ("九月", "十八日").
_HAN_DIGITS = {**{digit: n for n, digit in enumerate("〇一二三四五六七八九")}, "零": 0, "○": 0}
_YEAR_HAN = r"(?P<year_han>(?:一九|二[〇○零])[〇○零一二三四五六七八九]{2})"
_MONTH_HAN = r"十[一二]?|[一二三四五六七八九]"
_DAY_HAN = r"三十一?|二十[一二三四五六七八九]?|十[一二三四五六七八九]?|[一二三四五六七八九]"
# The words before a version's number; a lookbehind is of fixed width, so one for each.
# Whole words: German weekdays end in "tag", and "Montag 18.09.2025" (as "Stichtag" or
# "Geburtstag" before one) is a date. "Tag" capitalised is the German for day ("Letzter
# Tag 30.09.2025"), so only a lower-case "tag" names a version.
_NOT_A_VERSION = "".join(
    rf"(?<!\b{word}{after})"
    for word in [
        *(f"(?i:{re.escape(word)})" for word in ("version", "ver.", "release", "rel.", "build", "firmware", "patch")),
        "tag",
    ]
    for after in (" ", ": ")
)

# Written dates, most precise first; each names its own groups. Digits must not touch
# other digits, so "12025-01" or a version "2.2025" is not a date.
_FORMS = [
    re.compile(rf"(?<!\d){_YEAR}(?P<sep>[-/.])(?P<month>0[1-9]|1[0-2])(?P=sep)(?P<day>[0-3]\d)(?!\d)"),
    re.compile(rf"(?<![\w]){_DAY}\s+{_MONTH},?\s+{_YEAR}(?!\d)", re.IGNORECASE),
    re.compile(rf"(?<![\w]){_MONTH}\s+{_DAY},?\s+{_YEAR}(?!\d)", re.IGNORECASE),
    # Day first with dots, as German, Polish, Russian and Scandinavian notes write it
    # ("18.09.2025"); with slashes the order is a guess, so only dots count. Not a
    # version, which is written so too ("v2.1.2025", "release 3.10.2025"): a note about
    # one spoke from 2 January or 3 October 2025. After a version's word, a day and a
    # month of two digits each are still a date ("Release 18.09.2025"): a version's
    # numbers are not zero-padded (SemVer forbids it) and seldom two digits twice over,
    # so one digit in either ("release 3.10.2025", "18.9.2025") keeps it a version.
    re.compile(
        rf"(?<![A-Za-z\d._])(?:(?=[0-3]\d\.(?:0[1-9]|1[0-2])\.)|{_NOT_A_VERSION})"
        rf"(?P<day>[0-3]?\d)\.(?P<month>1[0-2]|0?[1-9])\.{_YEAR}(?!\.?\d)"
    ),
    re.compile(
        rf"(?:{_YEAR}|{_YEAR_HAN})\s*[年년]\s*(?P<month>1[0-2]|0?[1-9]|{_MONTH_HAN})\s*[月월]"
        rf"(?:\s*(?P<day>[0-3]?\d|{_DAY_HAN})\s*[日일号號])?"
    ),
    re.compile(rf"(?<!\d){_YEAR}-(?P<month>0[1-9]|1[0-2])(?![\d])"),
    re.compile(rf"(?<![\w]){_MONTH},?\s+{_YEAR}(?!\d)", re.IGNORECASE),
    re.compile(rf"(?<![A-Za-z0-9])[Qq](?P<quarter>[1-4])[\s_-]*{_YEAR}(?!\d)"),
    re.compile(rf"(?<!\d){_YEAR}[\s_-]*[Qq](?P<quarter>[1-4])(?![A-Za-z0-9])"),
    # An ISO week, as sprint and standup notes write it ("Sprint review W38 2025",
    # "2025-W38"): its Monday, through its Sunday (`_find_span`). Last, so the slices of
    # day and month forms above keep their places. A week alone ("W38") or in an
    # identifier ("ISO-W38", "W3C") names no year and dates nothing.
    re.compile(rf"(?<![A-Za-z0-9-])W(?P<week>0?[1-9]|[1-4]\d|5[0-3])[\s_-]*{_YEAR}(?!\d)"),
    re.compile(rf"(?<![\w-]){_YEAR}[\s_-]*W(?P<week>0[1-9]|[1-4]\d|5[0-3])(?![A-Za-z0-9])"),
]
# Text shaped as one of the forms above whose numbers name no day, week or quarter
# ("2026-99-99", "2026-13-01", "2026-W60", "Q5 2026"): the forms above pass it over, and
# what they or a year alone then read of it ("2026" of "2026-99-99") is no date its
# writer gave. Read as the forms are (`_from_match`), so a real date so shaped
# ("2025/3/5") is not taken for one (see `_impossible`).
_MALFORMED = [
    re.compile(rf"(?<!\d){_YEAR}(?P<sep>[-/.])(?P<month>\d\d?)(?P=sep)(?P<day>\d\d?)(?!\d)"),
    re.compile(rf"(?<![A-Za-z0-9-])W(?P<week>\d\d?)[\s_-]*{_YEAR}(?!\d)"),
    re.compile(rf"(?<![\w-]){_YEAR}[\s_-]*W(?P<week>\d\d?)(?![A-Za-z0-9])"),
    re.compile(rf"(?<![A-Za-z0-9])[Qq](?P<quarter>\d)[\s_-]*{_YEAR}(?!\d)"),
    re.compile(rf"(?<!\d){_YEAR}[\s_-]*[Qq](?P<quarter>\d)(?![A-Za-z0-9])"),
]
# A full stop after it ends the sentence ("up from £3.2m in 2024."); one before a digit
# makes it part of a number or a version ("2025.1").
_YEAR_ALONE = re.compile(rf"(?<![\d.]){_YEAR}(?!\d|\.\d)|{_YEAR_HAN}(?=\s*年)")
# A fiscal year ("FY2025", "FY25", "FY 2025", "fiscal year 2025", "fiscal 2025") is read as
# the calendar year of its number. When a fiscal year starts, and which of its two
# calendar years names it, differ by company and country (the US government's FY2025
# began in October 2024, Japan's FY2025 begins in April 2025), and a note seldom says;
# the calendar year is exact for the many whose year is the calendar's and overlaps
# most of any other's. Ahead of a year alone, which it holds: "FY2025" in a question was
# a name no note holds, and "FY25" no period at all.
# Two digits only after "FY": "a fiscal 20% cut" names no year. And only after "FY" as
# finance writes it, upper case or joined to its number ("FY 25", "fy25", `fy-25-plan.md`,
# as file names and tags are written in lower case): a lower-case "fy" a space apart from
# two digits is a word of its own before a count ("fy 20 items"), no year 2020.
_FISCAL = re.compile(
    r"(?<![A-Za-z0-9-])(?:(?i:fy)[_-]?|FY\s|(?i:fy\s|fiscal\s+(?:year\s+)?)(?=(?:19|20)\d\d))"
    r"(?P<year>(?:19|20)\d\d|\d\d)(?![\d.%])"
)
# Half years, which a question may name ("H1 2026", "2025 H2", "the second half of 2025")
# but a note is not dated by.
_HALVES = [
    re.compile(rf"(?<![A-Za-z0-9])[Hh](?P<half>[12])[\s_-]*{_YEAR}(?!\d)"),
    re.compile(rf"(?<!\d){_YEAR}[\s_-]*[Hh](?P<half>[12])(?![A-Za-z0-9])"),
    re.compile(rf"\b(?P<half>first|second)\s+half\s+of\s+{_YEAR}(?!\d)", re.IGNORECASE),
]
# A quarter in words ("the second quarter of 2025"), which a question may name.
_QUARTER_WORDS = re.compile(
    rf"\b(?P<nth>first|second|third|fourth|1st|2nd|3rd|4th)\s+quarter\s+(?:of\s+)?{_YEAR}(?!\d)", re.IGNORECASE
)
_NTH = {"first": 1, "second": 2, "third": 3, "fourth": 4, "1st": 1, "2nd": 2, "3rd": 3, "4th": 4}

# Front matter keys that date a note, by rank: a revised note speaks from its revision.
# Site generators and editors write the same three under other names.
_FRONT_KEYS = {
    **dict.fromkeys(("updated", "last_updated", "last_modified", "modified", "lastmod"), 0),
    **dict.fromkeys(("date", "published"), 1),
    "created": 2,
}
_FRONT_LINE = re.compile(r"(?P<key>[A-Za-z_-]+)[ \t]*[:=][ \t]*['\"]?(?P<value>[^'\"\n]*)")
_HEADING = re.compile(r"#{1,6}[ \t]+(?P<text>.+)")
# A line that opens with a date: a decision-log entry, a chat message, a dated list item.
_LINE_OPENING = re.compile(r"[ \t]*(?:\*\*|__)?(?:[-*+>|][ \t]*|\d{1,3}\.[ \t]+)?(?:\*\*|__)?\[?")
# A Debian changelog (every package's on a Debian or Ubuntu system, every debian/changelog
# in a source tree) opens each entry with a line naming the package, its version and its
# urgency, and signs it below its changes with the only date it gives (" -- Name <mail>
# Thu, 25 May 2023 16:11:37 +0200").
# Matched at the text's start, it reads past blank lines and its first line, no further.
_DEBIAN_OPENING = re.compile(r"(?:[ \t\r\f\v]*\n)*[a-z0-9][a-z0-9+.-]* \([^()\s]+\) [^;\n]+;[^\n]*\burgency=", re.IGNORECASE)
_SIGNED = re.compile(r" -- [^<\n]*<[^>\n]*>[ \t]+(?:[A-Za-z]{3},[ \t]*)?(?P<date>.*)")
# How far past the front matter the first heading is looked for.
HEADING_SCAN_LINES = 40
# A short line among a document's first few that gives a whole date dates it as a heading
# would, where no heading does: a plain-text note's first line ("18 May 2026 — boiler",
# "Quote from Northwind Paper Supplies — 14 January 2026") or the line under a title
# ("Updated 12 May 2026").
OPENING_LINES = 2
OPENING_CHARS = 60
# Unless the line says the date is of something else: "Passport\nExpires 31 December 2029",
# "# Biscuit\nBorn 12 April 2019".
_NOT_WRITTEN = re.compile(
    r"\b(?:expir\w*|due|born|birthday|deadline|until|till|valid|renew\w*|ends?|ending|closes?|closing|before|after"
    r"|starts?|starting|opens?|launch\w*)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Period:
    """A span of days, [start, end)."""

    start: date
    end: date

    @property
    def days(self) -> int:
        return (self.end - self.start).days


def _iso(year: int, month: int | None = None, day: int | None = None) -> str | None:
    if month is None:
        return f"{year:04d}"
    if not 1 <= month <= 12:  # a fifth quarter's month: not a date
        return None
    if day is None:
        return f"{year:04d}-{month:02d}"
    try:
        return date(year, month, day).isoformat()
    except ValueError:  # 31 February: not a date
        return None


def _year_of(match: re.Match[str]) -> str:
    """A match's year in four Arabic digits: a fiscal year's "FY25" is 2025, and
    "二〇二五" is 2025. Two digits from 69 are of the 1900s, as POSIX reads a year
    so written (strptime's %y): an archived "FY99 budget" is of 1999, not 2099."""
    year = match.group("year")
    if year is None:
        return str(_number(match.group("year_han")))
    if len(year) == 2:
        return f"19{year}" if int(year) >= 69 else f"20{year}"
    return year


def _number(text: str) -> int:
    """A number in Arabic digits or in Han numerals: a year digit by digit ("二〇二五"),
    a month or a day as counted ("十二", "二十八")."""
    if text.isdigit():
        return int(text)
    tens, ten, ones = text.partition("十")
    if not ten:
        return int("".join(str(_HAN_DIGITS[digit]) for digit in text))
    return _HAN_DIGITS.get(tens, 1) * 10 + _HAN_DIGITS.get(ones, 0)


def _from_match(match: re.Match[str]) -> str | None:
    groups = match.groupdict()
    year = int(_year_of(match))
    if groups.get("week"):
        monday = _monday(year, int(groups["week"]))
        return None if monday is None else monday.isoformat()
    if groups.get("quarter"):
        return _iso(year, 3 * int(groups["quarter"]) - 2)
    month_text = groups.get("month")
    if month_text is None:
        return _iso(year)
    month = _month_of(month_text)
    if month is None:
        return None
    day = groups.get("day")
    return _iso(year, month, _number(day) if day else None)


def _month_of(text: str) -> int | None:
    """The month a matched name or number gives; None for a name a case-blind match
    took from other letters ("Aprıl": under IGNORECASE the dotless ı matches i)."""
    name = text.lower().rstrip(".")
    if name in _MONTHS:
        return _MONTHS[name]
    try:
        return _number(text)
    except (KeyError, ValueError):
        return None


def _monday(year: int, week: int) -> date | None:
    """The Monday of an ISO week; None for a week 53 its year has not."""
    try:
        return date.fromisocalendar(year, week, 1)
    except ValueError:
        return None


def _week(match: re.Match[str]) -> Period | None:
    """The days of the ISO week a match names, or None when it names none."""
    monday = _monday(int(match.group("year")), int(match.group("week"))) if match.groupdict().get("week") else None
    return None if monday is None else Period(monday, monday + timedelta(days=7))


def find_date(text: str) -> str | None:
    """The first written date in the text at the best precision offered, or None."""
    found = _find_span(text)
    return None if found is None else found[0]


def _find_span(text: str) -> tuple[str, str | None] | None:
    """`find_date`, with where the period ends when it is wider than the date's precision
    shows (a quarter's last month; an ISO week's Sunday), else None."""
    best: tuple[int, str, re.Match[str]] | None = None
    for form in _FORMS:
        match = form.search(text)
        if match and (found := _from_match(match)) and (best is None or match.start() < best[0]):
            best = (match.start(), found, match)
    if best is None:
        return None
    if week := _week(best[2]):
        return best[1], (week.end - timedelta(days=1)).isoformat()
    quarter = best[2].groupdict().get("quarter")
    return best[1], _iso(int(best[2].group("year")), 3 * int(quarter)) if quarter else None


def date_at(text: str, position: int) -> str | None:
    """The date written across `position` of `text` ("15" in "15 September 2025"), or None."""
    for form in _FORMS:
        for match in form.finditer(text):
            if match.start() <= position < match.end():
                return _from_match(match)
    return None


def written_days(text: str) -> list[Period]:
    """The days a text writes out in full ("9 March 2026", "March 9, 2026", "2026-03-09",
    "09.03.2026", "2026年3月9日"): a notice names the note it takes back by its day as
    often as by its month. Not the day a line opens with, which dates that line (a log's
    entry, "- 2026-03-02: cache moves to Ceph"), nor one inside an identifier
    ("FH-2026-03-09")."""
    days = []
    # The first four forms are days; the fifth ("2025年4月2日", "2025년 4월 2일") is one
    # when it writes the day.
    for form in _FORMS[:5]:
        for match in form.finditer(text):
            if match.group("day") is None:
                continue
            start = text.rfind("\n", 0, match.start()) + 1
            opening = _LINE_OPENING.match(text, start)
            if match.start() == (opening.end() if opening else start) or _in_identifier(text, match):
                continue
            if (found := _from_match(match)) is not None:
                days.append(period(found))
    return days


# A day named by its day and month, with or without a year after ("14 october", "may
# 1st", "1st of may", "sept. 3"), in lower-cased text.
_DAY_AND_MONTH = re.compile(
    rf"\b(?P<day>\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?(?P<month>{_MONTH_NAMES})\b"
    rf"|\b(?P<month2>{_MONTH_NAMES})\.?\s+(?P<day2>\d{{1,2}})(?:st|nd|rd|th)?\b"
)


# What stands before a day closing a range, or after one opening it: "8-15", "8 to 15
# august", "15 august - 22 august", "august 8-15". The day after a dash or "to" must end
# there or have its month, and be no time: "the quote of 14 october - 2 corrections" and
# "the minutes of 3 may - 10:30 start" name the day.
_RANGE_BEFORE = re.compile(rf"(?:\b\d{{1,2}}(?:st|nd|rd|th)?|\b(?:{_MONTH_NAMES})\.?)\s*(?:[-–]|to)\s*$")
_RANGE_AFTER = re.compile(
    rf"\s*(?:[-–]|to\b)\s*\d{{1,2}}(?:st|nd|rd|th)?(?![:.]\d)(?:\s+(?:of\s+)?(?:{_MONTH_NAMES})\b|(?=\s*(?:[,.;:)!?]|$)))"
)

# The same, as a text writes it.
_DAY_AND_MONTH_WRITTEN = re.compile(_DAY_AND_MONTH.pattern, re.IGNORECASE)


def _day(year: int, month: int, day: int) -> Period | None:
    try:
        found = date(year, month, day)
    except ValueError:
        return None
    return Period(found, found + timedelta(days=1))


def _month_day(match: re.Match[str]) -> tuple[str, int, int]:
    """A day named by day and month: the month's word as written, its number, the day."""
    word = match.group("month") or match.group("month2")
    return word, _MONTHS[word], int(match.group("day") or match.group("day2"))


def days_of_month(text: str) -> list[tuple[str, tuple[int, int]]]:
    """The days a lower-cased text names by their day and month, each as the month's
    word as written and (month, day)."""
    found = []
    for match in _DAY_AND_MONTH.finditer(text):
        word, month, day = _month_day(match)
        if 1 <= day <= 31:
            found.append((word, (month, day)))
    return found


def days_without_year(text: str, written: date) -> list[Period]:
    """The days a lower-cased text names by day and month ("their quote of 14 October"),
    each the last one on or before `written`, as `periods_without_year` takes a month.
    Not a day opening or closing a range ("Gull Cottage is 8-15 August", "August 8 to
    15"): that is how long something lasts, a stay or a booking, not a day a text was
    written on."""
    days = []
    for match in _DAY_AND_MONTH.finditer(text):
        if _RANGE_BEFORE.search(text, 0, match.start()) or _RANGE_AFTER.match(text, match.end()):
            continue
        _, month, day = _month_day(match)
        for year in (written.year, written.year - 1):
            found = _day(year, month, day)
            if found is None:
                break
            if found.start <= written:
                days.append(found)
                break
    return days


def without_days(text: str) -> str:
    """The text with the days it writes out in full (the forms `written_days` reads, and
    a file name's "20260112") blanked wherever they stand: a title's day says when its
    text was written, and the year in it then names no subject ("Platform planning, 12
    January 2026" is no plan for 2026)."""
    for form in (*_FORMS[:5], _NAME_DAY):
        text = form.sub(lambda match: match.group() if match.group("day") is None else " " * len(match.group()), text)
    return text


# A day as file names write it besides the forms text uses: "20250918-standup",
# "2025_09_18 standup" (cameras, exports, daily-note plugins). In a file's name only: in
# text, eight digits are as often an order number.
_NAME_DAY = re.compile(rf"(?<![\d]){_YEAR}(?P<sep>_?)(?P<month>0[1-9]|1[0-2])(?P=sep)(?P<day>[0-3]\d)(?!\d)")
# A front matter value that opens with a year can only be a day with its month next,
# however few its digits (`2025/3/5`); in running text such a run is as likely a version
# (`2024.1.2`), so only here.
_FRONT_DAY = re.compile(rf"{_YEAR}(?P<sep>[-/.])(?P<month>0?[1-9]|1[0-2])(?P=sep)(?P<day>[0-3]?\d)(?![\d.])")


def _impossible(text: str) -> bool:
    """Whether the first date a text writes names no day, week or quarter ("2026-02-30",
    "30 February 2026", "2026-99-99", "2026-W60", "Q5 2026"). A front matter value, a
    file name or a heading that writes one states no date, and the document falls through
    to its next source: a less precise form read what was left of it, and dated the note
    `2026-02` or `2026` by a month or a year its writer never gave on its own, while
    `since 2026-02-30` is refused as no date."""
    found = [
        (match.start(), order, match)
        for order, form in enumerate((*_FORMS, *_MALFORMED))
        if (match := form.search(text)) is not None
    ]
    # At one place the most precise form speaks: "2026-02-30" is no day, not February.
    return bool(found) and _from_match(min(found, key=lambda candidate: candidate[:2])[2]) is None


def _date_in_name(name: str) -> tuple[str, str | None] | None:
    if _impossible(name):
        return None
    if (span := _find_span(name)) is not None:
        return span
    found = None
    if day := _NAME_DAY.search(name):
        found = _from_match(day)
    return None if (found := found or _year_only(name)) is None else (found, None)


def document_date(text: str, name: str) -> tuple[str, str] | None:
    """(date, where it was found) for a document, or None when it states none.

    Front matter `updated`, `date`, `created` or one of their other names (in that order:
    a revised note speaks from its revision), then a date in the file name, then one in
    the first heading.
    """
    return document_period(text, name)[0]


def document_period(text: str, name: str) -> tuple[tuple[str, str] | None, str | None]:
    """`document_date`, and the last month of the period it names when that is wider than
    the date shows: `date: Q3 2025` is kept as `2025-07` (where a note about the quarter
    sorts among notes), through `2025-09` (so a search since August still finds it)."""
    lines, body = _opening(text)
    found: dict[str, tuple[str, str | None]] = {}
    for line in lines[1 : body - 1] if body else ():
        match = _FRONT_LINE.match(line)
        if match and match.group("key").lower() in _FRONT_KEYS:
            value = _front_value(match.group("value"))
            if value:
                found.setdefault(match.group("key").lower(), value)
    if found:
        day, end = found[min(found, key=_FRONT_KEYS.__getitem__)]
        return (day, "front matter"), end
    if named := _date_in_name(name.rsplit(".", 1)[0] if "." in name else name):
        return (named[0], "file name"), named[1]
    heading = _first_heading(lines, body)
    stated = None if heading is None or _impossible(heading) else _find_span(heading) or _year_span(heading)
    if stated:
        return (stated[0], "heading"), stated[1]
    opening = _opening_date(lines, body)
    return ((opening, "opening"), None) if opening else (None, None)


def _front_value(value: str) -> tuple[str, str | None] | None:
    """The date a front matter date key gives. Eight digits alone are a day there, as in
    a file's name (`date: 20250305`, as some exporters write it): passed over, the file's
    mtime dated the note, and a correction written before that copy was made counted as
    older than it. So is a year, month and day of one digit each (`2025/3/5`), which
    dated the note by its year alone."""
    value = value.strip().strip("'\"")
    # A date as `since` takes it, in its years up to 2199: running text's forms read only
    # years 1900 to 2099, as a number past them is seldom a year there, and a note dated
    # `2199-12-31` fell to its file's time while a search for it since 2199 was taken.
    if _is_iso_param(value):
        return value, None
    if _impossible(value):
        return None
    if (day := _NAME_DAY.fullmatch(value) or _FRONT_DAY.match(value)) is not None and (found := _from_match(day)):
        return found, None
    return _find_span(value) or _year_span(value)


def _year_span(text: str) -> tuple[str, None] | None:
    year = _year_only(text)
    return None if year is None else (year, None)


def _opening(text: str) -> tuple[list[str], int]:
    """A document's first lines, and where its body starts after any front matter."""
    lines = text.split("\n", MAX_LINES + HEADING_SCAN_LINES)[: MAX_LINES + HEADING_SCAN_LINES]
    return lines, front_matter_lines(lines)


def _first_heading(lines: list[str], body: int) -> str | None:
    for line in lines[body : body + HEADING_SCAN_LINES]:
        if heading := _HEADING.match(line):
            return heading.group("text")
    return None


def _opening_date(lines: list[str], body: int) -> str | None:
    """The whole date a short line among the first OPENING_LINES of the body gives, when
    no other of its first lines opens with a date: a log's first entry ("2026-03-01: kickoff")
    dates that entry, and its later ones their own."""
    scanned = lines[body : body + HEADING_SCAN_LINES]
    opening = [line.strip() for line in scanned if line.strip()][:OPENING_LINES]
    found = next(
        (
            day
            for line in opening
            if len(line) <= OPENING_CHARS and not _NOT_WRITTEN.search(line) and (day := find_date(line)) and len(day) == 10
        ),
        None,
    )
    if found is None:
        return None
    entries = {day for line in scanned if (day := line_date(line))}
    return found if entries <= {found} else None


def _year_only(text: str) -> str | None:
    """The first year the text names, alone or as a fiscal year."""
    found = [match for match in (_FISCAL.search(text), _YEAR_ALONE.search(text)) if match]
    return _year_of(min(found, key=lambda match: match.start())) if found else None


def _entry_date(text: str) -> str | None:
    """A heading's date when it dates an entry: a full date anywhere in it ("2.3.0 —
    2025-06-10"), or a month or year that is all the heading says ("June 2025"). A period
    a heading is about ("Q2 2025 survey", "advisory FH-SEC-2025-07") dates nothing."""
    found = find_date(text)
    if found and len(found) == 10:
        return found
    bare = text.strip(" \t#*_[]():.-—")
    for form in (*_FORMS[5:7], _YEAR_ALONE):
        match = form.fullmatch(bare)
        if match:
            return _from_match(match)
    return None


def line_date(line: str) -> str | None:
    """The date a line opens with (or a heading's entry date), or None."""
    heading = _HEADING.match(line)
    if heading:
        return _entry_date(heading.group("text"))
    opening = _LINE_OPENING.match(line)
    rest = line[opening.end() if opening else 0 :]
    if not rest[:1].isalnum():
        return None
    for form in _FORMS[:7]:
        match = form.match(rest)
        if match:
            return _from_match(match)
    return None


def changelog_dates(text: str, spans: list[tuple[int, int]]) -> list[str | None] | None:
    """For a Debian changelog, the date each span of its lines speaks from (1-based and
    inclusive: a chunk's lines past the overlap it repeats): that of the line signing
    the entry its first line of changes belongs to, the first signature at or after
    it (a span of signatures alone speaks from its first). None where no entry is signed
    after it; None for the whole of any other text (a manual quoting an example entry
    is no changelog)."""
    if not _DEBIAN_OPENING.match(text):
        return None
    lines = text.split("\n")
    signed: list[tuple[int, str]] = []
    for number, line in enumerate(lines, 1):
        if (signature := _SIGNED.match(line)) and (match := _FORMS[1].match(signature.group("date"))):
            if day := _from_match(match):
                signed.append((number, day))
    numbers = [number for number, _ in signed]
    found: list[str | None] = []
    for start, end in spans:
        changes = (
            number
            for number in range(start, min(end, len(lines)) + 1)
            if lines[number - 1].strip() and not _SIGNED.match(lines[number - 1])
        )
        at = bisect_left(numbers, next(changes, start))
        found.append(signed[at][1] if at < len(signed) else None)
    return found


def chunk_date(text: str, section: str, title: str | None = None) -> str | None:
    """The latest date among a chunk's dated lines and its section heading, or None.

    A changelog or decision-log chunk speaks from its newest entry; a chunk with no
    dated line speaks from its document's date. `title` is the document's first heading
    when the document states its date elsewhere (`title_heading`): a date in it names
    what the note is about, not an entry ("Addendum to the Port Mhor contact report (2
    June 2025)", written in July).
    """
    found = chunk_dates(text, section, title)
    return None if found is None else found[1]


def chunk_dates(text: str, section: str, title: str | None = None) -> tuple[str, str] | None:
    """The earliest and the latest of the dates `chunk_date` reads, or None. A log's chunk
    speaks from its last entry and holds every entry from its first: dated by the last
    alone, a chunk holding 10 March's line was left out of a search until 16 March."""
    dates = [found for line in text.split("\n") if not _is_heading(line, title) and (found := line_date(line))]
    entry = section.rsplit(" > ", 1)[-1] if section else ""
    if entry and entry != title and (found := _entry_date(entry)):
        dates.append(found)
    return (min(dates), max(dates)) if dates else None


def _is_heading(line: str, text: str | None) -> bool:
    heading = _HEADING.match(line) if text else None
    return heading is not None and cut(heading.group("text").strip(), MAX_HEADING_CHARS) == text


def title_heading(text: str, stated: tuple[str, str] | None) -> str | None:
    """The document's first heading, when the document states its date in its front
    matter or file name (for `chunk_date`); None otherwise."""
    if stated is None or stated[1] == "heading":
        return None
    heading = _first_heading(*_opening(text))
    # Cut as a section's heading is (ingest/chunker.py), which `chunk_date` compares it with.
    return cut(heading.strip(), MAX_HEADING_CHARS) if heading is not None else None


def from_timestamp(seconds: float) -> str:
    """A file time as a day, in UTC, so the same file gets the same date on any machine.

    A time outside the calendar's years 1 to 9999 (file systems such as tmpfs, btrfs and
    XFS keep any 64-bit mtime; `touch -d @1e12` sets year 33658) is the nearest end of it:
    a file's odd mtime must not keep the file out of the index.
    """
    try:
        return datetime.fromtimestamp(seconds, tz=timezone.utc).date().isoformat()
    except (OverflowError, ValueError, OSError):
        return (date.max if seconds > 0 else date.min).isoformat()


def period(iso: str) -> Period:
    """The span an ISO prefix (`2025`, `2025-09`, `2025-09-18`) covers."""
    parts = [int(part) for part in iso.split("-")]
    if len(parts) == 1:
        return Period(date(parts[0], 1, 1), _day_after(date(parts[0], 12, 31)))
    if len(parts) == 2:
        year, month = parts
        last = date(year, month, calendar.monthrange(year, month)[1])
        return Period(date(year, month, 1), _day_after(last))
    start = date(*parts)
    return Period(start, _day_after(start))


def _day_after(day: date) -> date:
    """The next day; the calendar's last day for its last (a file dated 9999-12-31 by its
    mtime), which has no next day to end a span at."""
    return day if day == date.max else date.fromordinal(day.toordinal() + 1)


_ISO_PARAM = re.compile(r"(19|20|21)\d\d(-(0[1-9]|1[0-2])(-[0-3]\d)?)?")


def parse_iso(text: str) -> str:
    """A `since`/`until` value as an ISO prefix; ValueError names what is wrong. Taken as
    given, spaces and all: the protocol converts nothing."""
    value = text
    if not _is_iso_param(value):
        shown = repr(text) if len(text) <= 40 else f"{text[:40]!r}..."
        raise ValueError(f"{shown} is not a date: use YYYY, YYYY-MM or YYYY-MM-DD, in the years 1900 to 2199")
    return value


def _is_iso_param(text: str) -> bool:
    """Whether `parse_iso` takes the text as a date."""
    return bool(_ISO_PARAM.fullmatch(text)) and (len(text) != 10 or _iso(*map(int, text.split("-"))) is not None)


_RELATIVE = re.compile(r"\b(?P<which>last|this|next|past)\s+(?P<unit>year|month|quarter)\b", re.IGNORECASE)
# "last March", "this Sept", "last may"; but "this may" and "this mar" in lower case are
# a verb and a noun ("this may break the export").
_LAST_MONTH_NAME = re.compile(
    rf"\b(?P<which>last|this(?!\s+(?-i:may|mar)\b))\s+{_MONTH}(?![\w])", re.IGNORECASE
)


def named_spans(text: str, today: date) -> list[tuple[tuple[int, int], Period]]:
    """The periods a question names, each with where it is named: years, fiscal years
    (as calendar years), halves, quarters, months, and "last year" style spans.

    A full date (a day) is not a period a document speaks from: "is the office closed on
    2 January" asks about the day, not for notes written on it.
    """
    found: list[tuple[tuple[int, int], Period]] = []
    taken = _Marks(len(text))

    def add(match: re.Match[str], span: Period) -> None:
        taken.hold(match)
        found.append((match.span(), span))

    free = taken.free
    for form in _FORMS:
        for match in form.finditer(text):
            if _in_identifier(text, match):
                continue
            if free(match) and (iso := _from_match(match)):
                if week := _week(match):
                    add(match, week)
                    continue
                if len(iso) == 10:
                    taken.hold(match)
                    continue
                span = period(iso)
                if match.groupdict().get("quarter"):
                    span = Period(span.start, period(_iso(span.start.year, span.start.month + 2) or iso).end)
                add(match, span)
    for form in _HALVES:
        for match in form.finditer(text):
            if free(match) and not _in_identifier(text, match):
                first = 1 if match.group("half").lower() in ("1", "first") else 7
                add(match, _months(int(match.group("year")), first, first + 5))
    for match in _QUARTER_WORDS.finditer(text):
        if free(match):
            first = _NTH[match.group("nth").lower()] * 3 - 2
            add(match, _months(int(match.group("year")), first, first + 2))
    for match in _FISCAL.finditer(text):
        if free(match):
            add(match, period(_year_of(match)))
    for match in _YEAR_ALONE.finditer(text):
        if free(match) and not _in_identifier(text, match):
            add(match, period(_year_of(match)))
    for match in _RELATIVE.finditer(text):
        add(match, _relative(match.group("which").lower(), match.group("unit").lower(), today))
    for match in _LAST_MONTH_NAME.finditer(text):
        if free(match) and (month := _month_of(match.group("month"))) is not None:
            year = today.year - (1 if match.group("which").lower() == "last" and month >= today.month else 0)
            add(match, period(_iso(year, month) or str(year)))
    return found


def named_periods(text: str, today: date) -> list[Period]:
    """The periods a question names (see `named_spans`)."""
    return [span for _, span in named_spans(text, today)]


# A quarter, a half or a month named without its year ("the rota for Q4", "in March"). A
# month counts only capitalised and written out, and never "May", which starts sentences
# as a verb.
_BARE = re.compile(
    r"(?<![\w-])(?:H(?P<half>[12])|[Qq](?P<quarter>[1-4])"
    r"|(?P<month>January|February|March|April|June|July|August|September|October|November|December))"
    r"(?![\w-])(?!,?\s+(?:of\s+)?(?:19|20)\d\d)"
)
# A month as Chinese, Japanese and Korean write it without a year ("4月2日の方針",
# "4월 2일에 공지한"): a number and 月 or 월, not "3ヶ月" or "3개월" (three months).
_BARE_CJK = re.compile(r"(?<!\d)(?P<number>1[0-2]|0?[1-9])\s*[月월]")


def periods_without_year(text: str, written: date) -> list[Period]:
    """The quarters, halves, months and days a note names without a year, each taken as
    the one nearest the day the note was written: the September meeting's "rota for Q4"
    is for that year's Q4, a November note's "due in January" for the next January. A
    day names that day, not its month: a notice of 16 June retracting "the results
    posted on 2 June" means no report of 9 June."""
    # Written dates of any precision, days included: "March 3, 2024" names no bare March.
    named = _Marks(len(text))
    for form in _FORMS:
        for match in form.finditer(text):
            named.hold(match)
    found: list[Period] = []
    for match in _DAY_AND_MONTH_WRITTEN.finditer(text):
        word = match.group("month") or match.group("month2")
        month = _month_of(word)
        # A month's name as a name is written: "may 5" is no day.
        if not named.free(match) or not word[0].isupper() or month is None:
            continue
        named.hold(match)
        day = int(match.group("day") or match.group("day2"))
        days = [_day(year, month, day) for year in (written.year - 1, written.year, written.year + 1)]
        found += [min((day for day in days if day), key=lambda day: _distance(day, written))] if any(days) else []
    for match in [*_BARE.finditer(text), *_BARE_CJK.finditer(text)]:
        if not named.free(match):
            continue
        if match.groupdict().get("number"):
            first = last = int(match.group("number"))
        elif match.group("month"):
            first, last = (_MONTHS[match.group("month").lower()],) * 2
        elif match.group("quarter"):
            first = int(match.group("quarter")) * 3 - 2
            last = first + 2
        else:
            first = int(match.group("half")) * 6 - 5
            last = first + 5
        spans = [_months(year, first, last) for year in (written.year - 1, written.year, written.year + 1)]
        found.append(min(spans, key=lambda span: _distance(span, written)))
    return found


class _Marks:
    """The characters of a text that spans already found hold. Whether a match overlaps
    any of them is a look at its own characters: it was a comparison with every span
    found, time quadratic in their number. 80,000 characters of "2024-01-01; Q1; " took
    2.7 s in `named_spans` and 4.3 s in `periods_without_year`, and a search reads its
    hits' text so, each a chunk of up to [chunking] target_chars (20,000)."""

    def __init__(self, length: int) -> None:
        self._held = bytearray(length)

    def hold(self, match: re.Match[str]) -> None:
        start, end = match.span()
        self._held[start:end] = b"\x01" * (end - start)

    def free(self, match: re.Match[str]) -> bool:
        return self._held.find(1, *match.span()) < 0


def _months(year: int, first: int, last: int) -> Period:
    """The months `first` to `last` of a year, as one span: a quarter, a half."""
    return Period(period(f"{year}-{first:02d}").start, period(f"{year}-{last:02d}").end)


def _distance(span: Period, day: date) -> int:
    if day < span.start:
        return (span.start - day).days
    return max((day - span.end).days + 1, 0)


def _in_identifier(text: str, match: re.Match[str]) -> bool:
    """"FH-SEC-2025-07" names an advisory, not July 2025; "RT-2025" a product;
    "air_quality_2019" a dataset. Chinese, Japanese and Korean put no space before a
    number: "我们在2025年的收入", "売上は2025年3月に" name the year and the month."""
    before = text[match.start() - 1] if match.start() else " "
    after = text[match.end() : match.end() + 2]
    named = before.isalnum() and not cjk.RUN.match(before)
    return before in "-_" or named or (after[:1] in ("-", "_") and after[1:].isalnum())


def _relative(which: str, unit: str, today: date) -> Period:
    step = {"last": -1, "past": -1, "this": 0, "next": 1}[which]
    if unit == "year":
        return period(str(today.year + step))
    size = 3 if unit == "quarter" else 1
    first = (today.month - 1) // size * size  # months since January at the current unit's start
    index = today.year * 12 + first + step * size
    start = date(index // 12, index % 12 + 1, 1)
    end_index = index + size
    return Period(start, date(end_index // 12, end_index % 12 + 1, 1))
