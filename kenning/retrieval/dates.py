"""What a question asks about time, and how well a hit's date answers it.

A question asking for the current state ("now", "current", "latest", "still") wants the
newest of the hits that say something about the same thing (retrieval/truth.py orders
those pairs). A question naming a period ("in 2023", "Q3 2025", "last March") prefers
hits dated in it: a hit from outside keeps a share of its score that shrinks with its
distance from the period. Reports come after the period they cover ("Q3 results" are
written in October), so a hit dated shortly after the period loses less than one dated
before it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date

from kenning.api import Hit
from kenning.text.dates import Period, named_periods, named_spans, period, periods_without_year, written_days
from kenning.text.statements import framed, holds_any

# And in Chinese, Japanese and Korean, read without word boundaries (there are none
# between their words): "今" only as "now" stands ("今の", "今は"), not in 今日, 今年 or
# 今回, which name a day, a year, a time.
_RECENT = re.compile(
    r"\b(?:now|nowadays|current(?:ly)?|latest|newest|most recent(?:ly)?|these days|at the moment|at present"
    r"|presently|today|up to date|still)\b"
    r"|現在|现在|目前|当前|當前|最新|現時点|现阶段|現行|现行|如今|今(?:の|は|も|でも)|현재|최신|지금|요즘",
    re.IGNORECASE,
)
_WORD = re.compile(r"\w+")
# A relative clause on a thing the question goes through: "the vessel whose bow thruster
# failed", "the ferry that runs": a noun phrase opened by a determiner, then the
# pronoun. Not "that" after a preposition ("the minutes of that meeting"), where it
# points, nor a second question ("and who leads it"), nor "true that", "tell me which".
_CLAUSE = re.compile(
    r"\b(?:the|a|an|our|their|its|my|your|his|her|each|every)\s+(?:[\w'-]+\s+){0,2}([\w'-]+)\s+"
    r"(?:whose|that|which|who)\b",
    re.IGNORECASE,
)
_NOT_A_CLAUSE = frozenset("at in on of for from to by about with and or but".split())
# A period a question opens or closes rather than names: "since 2024" asks about 2024 and
# every year after, "before 2026" about any time up to it. Read as the bare period, the
# notes of 2025 were outside what "How long have backups been kept since 2024?" asked,
# and the question was refused for want of a note dated in 2024.
# "After" and "before" leave the period out, so only when it is what they bound: "after
# the 2024 offsite" may mean a day late in 2024.
_FROM = re.compile(r"\b(?:(?:since|from)\s+(?:the\s+)?|after\s+)$", re.IGNORECASE)
_ON = re.compile(r"^\s*(?:on|onwards?)\b", re.IGNORECASE)
_TO = re.compile(r"\b(?:(?:until|till|up\s+to)\s+(?:the\s+)?|(?:before|prior\s+to)\s+)$", re.IGNORECASE)
# How far before a period its opener or closer can start ("prior to the ", with room for
# spaces): only that much of the question is searched, or a question naming hundreds
# of periods is read again whole for each.
_BOUND_REACH = 40
# The share of its score a hit dated far from the period keeps; set on the truth set's
# dev split (bench/README.md).
OUTSIDE_KEEPS = 0.7
# A hit dated after the period, within this share of the period's length (at most
# GRACE_MAX_DAYS), counts as written about it.
GRACE_SHARE = 0.5
GRACE_MAX_DAYS = 45
# A period a title names counts as what the note is about when it lies this close to the
# note's date.
TITLE_REACH_DAYS = 366


@dataclass(frozen=True)
class TimeIntent:
    recent: bool
    periods: tuple[Period, ...]
    # The query's words that name its periods, lower-cased ("q3", "2025", "last", "year").
    words: frozenset[str] = frozenset()
    # When every period is named in a relative clause ("the vessel whose bow thruster
    # failed in March 2026"), the clause's other words, lower-cased: the period tells
    # which thing the question goes through, not when its answer was written.
    clause: frozenset[str] = frozenset()
    # The day the question is asked: a note dated after it (a roadmap dated years ahead)
    # says what will be, not what holds now.
    today: date = date.max

    @classmethod
    def of(cls, query: str, today: date) -> TimeIntent:
        named = named_spans(query, today)
        periods = tuple(_opened(query, where, span) for where, span in named)
        words = frozenset(word.lower() for (start, end), _ in named for word in _WORD.findall(query, start, end))
        opened = [match.end() for match in _CLAUSE.finditer(query) if match.group(1).lower() not in _NOT_A_CLAUSE]
        clause: frozenset[str] = frozenset()
        if named and opened and all(start >= opened[0] for (start, _), _ in named):
            clause = frozenset(word.lower() for word in _WORD.findall(query, opened[0])) - words
        # A period named wins over "current": "the current price in 2025" asks about 2025.
        recent = not periods and bool(_RECENT.search(query))
        return cls(recent=recent, periods=periods, words=words, clause=clause, today=today)


def _opened(query: str, where: tuple[int, int], span: Period) -> Period:
    """The period as the question bounds it: "since 2024" and "from 2024 on" run from
    2024's start, "after 2024" from its end, on to any later date; "before 2026" runs
    up to 2026's start, "until 2025" and "up to 2025" to its end, from any earlier date.
    A period named with "from" and no "on" is that period ("the report from 2024")."""
    before, after = query[: where[0]], query[where[1] :]
    reach = max(0, len(before) - _BOUND_REACH)
    opener = _FROM.search(before, reach)
    if opener is not None and (not opener.group().lower().startswith("from") or _ON.match(after)):
        starts_after = opener.group().lower().startswith("after")
        return Period(span.end if starts_after else span.start, date.max)
    closer = _TO.search(before, reach)
    if closer is not None:
        return Period(date.min, span.start if closer.group().lower().startswith(("before", "prior")) else span.end)
    return span


def affinity(iso: str, periods: tuple[Period, ...]) -> float:
    """1 for a date inside one of the periods, falling towards 0 with distance."""
    stated = period(iso)
    best = 0.0
    for asked in periods:
        if stated.start < asked.end and asked.start < stated.end:
            return 1.0
        if stated.start >= asked.end:
            grace = min(asked.days * GRACE_SHARE, GRACE_MAX_DAYS)
            late = (stated.start - asked.end).days
            best = max(best, 0.5 if late <= grace else 0.0)
    return best


def speaks_of(hit: Hit, text: str, periods: tuple[Period, ...], today: date, words: tuple[str, ...] = ()) -> bool:
    """The hit's title or heading names a period that overlaps one of them, or a line of
    its text does that also holds one of `words` (the rest of the question), read with
    the heading, table header or lead-in that frames it (a day it writes out counts: "as
    of 1 January 2026"): the Q3 results say "Revenue:
    £4.1m (Q2 2025: £3.8m)", which tells Q2's revenue but not its margin. A quarter or
    month named without a year is the one nearest the hit's date (the September
    meeting's "rota for Q4"). Else, its title names no period of its own
    (not "Data team plan, H2 2026", written in June, for H1) and it is dated in one of
    them, or just after one with no period named anywhere in it ("On-call stipend
    (2025)", dated 1 January 2025, is not about 2024; a report of 6 January with no year
    in it may be). A report dated just after the period that names only other periods
    ("January 2025 report", "Q1 2025 targets") is taken not to speak of it: what it says
    about the period asked it says by naming it."""
    heading = f"{hit.title}\n{hit.section}"
    # "This quarter" and "last month" are read from the day the note was written.
    written = period(hit.date).start if hit.date else today
    if _headed_in(hit, written, periods):
        return True
    # Dates are read (what costs here) only on the lines holding the rest of the question.
    lines = [f"{frame}\n{unit}" for frame, unit in framed(text)] if words else [text]
    for line in lines:
        if holds_any(line, words) and _overlap(_named_in_text(line, written, hit.date), periods):
            return True
    if _titled(hit):
        # "Data team plan, H2 2026", written in June, is about the second half.
        return False
    near = affinity(hit.date, periods) if hit.date is not None else 0.0
    return near >= 1.0 or (near > 0 and not named_periods(f"{heading}\n{text}", written))


def _headed_in(hit: Hit, written: date, periods: tuple[Period, ...], narrow: bool = False) -> bool:
    """Whether the hit's title or heading names a period overlapping one of them. One
    named without its year counts only for what it overlaps: a report of 6 January that
    mentions "the April review" still speaks of the year before. With `narrow`, only a
    period no longer than the one it overlaps: "Annual report 2025" speaks of 2025, not
    of January 2025 above the January minutes."""
    heading = f"{hit.title}\n{hit.section}"
    named = named_periods(heading, written) + _without_year(heading, hit.date)
    if not narrow:
        return _overlap(named, periods)

    def within(span: Period) -> bool:
        overlapping = [asked for asked in periods if _overlap([span], (asked,))]
        return bool(overlapping) and all(span.end - span.start <= asked.end - asked.start for asked in overlapping)

    return any(map(within, named))


def _named_in_text(line: str, written: date, dated: str | None) -> list[Period]:
    """The periods a note's line names, and the days it writes out: "As of 1 January
    2026, the tooling budget is £6,000" speaks of 2026 as "from January 2026" does. A
    question naming a day asks about the day (`named_spans`); a note naming one says
    what holds from or on it."""
    return named_periods(line, written) + _without_year(line, dated) + written_days(line)


def _titled(hit: Hit) -> list[Period]:
    """The periods the title names that lie within a year of the note's date, "this" and
    "last" read from that date: "Price list 2025" names its year, "SQL Server 2019
    upgrade" a product, and "This quarter's priorities" the quarter it was written in."""
    if hit.date is None:
        return []
    written = period(hit.date)
    return [
        span
        for span in named_periods(hit.title, written.start) + _without_year(hit.title, hit.date)
        if (written.start - span.end).days <= TITLE_REACH_DAYS and (span.start - written.end).days <= TITLE_REACH_DAYS
    ]


def _without_year(text: str, dated: str | None) -> list[Period]:
    """The quarters, halves and months the text names without a year, each the one
    nearest the note's date (when it has a month or a day)."""
    return periods_without_year(text, period(dated).start) if dated and len(dated) >= 7 else []


def _overlap(named: list[Period], periods: tuple[Period, ...]) -> bool:
    return any(s.start < p.end and p.start < s.end for s in named for p in periods)


def favour_periods(hits: list[Hit], intent: TimeIntent) -> None:
    if not intent.periods:
        return
    for hit in hits:
        # The Q2 survey's report, written in July, is about Q2 by its title.
        if hit.date is None or _headed_in(hit, period(hit.date).start, intent.periods, narrow=True):
            continue
        near = affinity(hit.date, intent.periods)
        if near < 1.0:
            keep = OUTSIDE_KEEPS + (1 - OUTSIDE_KEEPS) * near
            hit.score *= keep
            hit.reasons.append(f"dated {hit.date}, outside the period asked about (x{keep:.2f})")
