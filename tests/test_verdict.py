"""The steps after fusion on hits made by hand: one hit per place, crowding, the floor's
rules, and the truth signals without vectors (shared words stand in for cosine)."""

from __future__ import annotations

from datetime import date

import pytest

from kenning.api import Hit
from kenning.retrieval import coverage, cues, diversity, floors, truth, values
from kenning.retrieval.dates import TimeIntent
from kenning.retrieval.query import parse, quote
from kenning.store.fts import Probe
from kenning.store.hits import ChunkText


def hit(item_id: int, document_id: int, lines: tuple[int, int] = (1, 5), score: float = 1.0, **fields) -> Hit:
    start, end = lines
    return Hit(
        item_id, document_id, fields.pop("title", "Note"), "", "notes", "default", f"/n/{document_id}.md", "",
        start, end, 0.0, score=score, **fields,
    )  # fmt: skip


def test_nested_and_overlapping_chunks_of_one_document_show_once():
    hits = [hit(1, 7, (202, 205)), hit(2, 7, (203, 205)), hit(3, 7, (204, 205)), hit(4, 8, (203, 205))]
    hits.append(hit(5, 7, (206, 210)))
    assert [h.item_id for h in diversity.distinct(hits, {})] == [1, 4, 5]


def test_identical_text_in_two_files_shows_once_with_the_other_place():
    texts = {1: "The guild meets\non Thursdays.", 2: "The guild  meets on Thursdays.", 3: "Something else."}
    kept = diversity.distinct([hit(1, 1), hit(2, 2), hit(3, 3)], texts)
    assert [h.item_id for h in kept] == [1, 3]
    assert [(other.item_id, other.path) for other in kept[0].also_at] == [(2, "/n/2.md")]


def test_a_documents_later_hits_count_for_less_and_its_best_does_not():
    hits = [hit(1, 1, score=1.0), hit(2, 1, (6, 9), score=0.9), hit(3, 2, score=0.8), hit(4, 1, (10, 12), score=0.8)]
    diversity.spread(hits)
    assert [round(h.score, 3) for h in hits] == [1.0, 0.765, 0.8, 0.578]


def test_a_documents_chunk_holding_more_of_the_query_is_cited_first():
    # A chat export's first line names the channel and the month; the message that
    # answers holds the rest of the question.
    header, message = hit(1, 7, (1, 1), score=0.9), hit(2, 7, (3, 15), score=0.6)
    other, later = hit(3, 8, score=0.8), hit(4, 7, (16, 20), score=0.5)
    held = {1: 0.34, 2: 0.74, 3: 0.5, 4: 0.2}
    coverage.cite_fullest([header, other, message, later], coverage.Coverage(held, {}, {}, {}, [], []))
    assert [(h.item_id, h.score) for h in sorted([header, message, other, later], key=lambda h: -h.score)] == [
        (2, 0.9), (3, 0.8), (1, 0.6), (4, 0.5)
    ]
    assert "holds more of the query" in message.reasons[0]


def test_a_documents_chunk_stating_the_kind_of_value_asked_for_holds_the_word_naming_it():
    # "A learning budget of £1,000 a year" for "How much money...", against the rules'
    # "company money", which held more of the question's words as written.
    money, rules = hit(3, 9, (47, 50), score=0.5), hit(4, 9, (10, 16), score=0.7)
    measured = coverage.Coverage({3: 0.23, 4: 0.26}, {}, {}, {}, [], [])
    coverage.cite_fullest([rules, money], measured)
    assert (money.score, rules.score) == (0.5, 0.7)
    coverage.cite_fullest([rules, money], measured, held={3: 0.38, 4: 0.26})
    assert (money.score, rules.score) == (0.7, 0.5)


def test_a_chunk_the_coverage_did_not_measure_is_not_cited_for_stating_the_value():
    # The verdict counts the words naming the kind of value as held by any judged chunk
    # stating one (`_held_as_values`), measured or not: a chunk that rose into the judged
    # hits after the others were lowered for their period held only those words.
    best, unmeasured = hit(1, 9, (1, 5), score=0.7), hit(2, 9, (40, 44), score=0.5)
    measured = coverage.Coverage({1: 0.1}, {}, {}, {}, [], [])
    coverage.cite_fullest([best, unmeasured], measured, held={1: 0.1, 2: 0.2})
    assert (best.score, unmeasured.score) == (0.7, 0.5)

def test_a_documents_chunk_holding_the_querys_words_together_is_cited_first():
    # "send an `Idempotency-Key` header" against "created duplicate ... request ids",
    # which holds a little more of the question's words, one at a time.
    scattered, together = hit(1, 7, (51, 54), score=0.7), hit(2, 7, (29, 32), score=0.5)
    measured = coverage.Coverage({1: 0.33, 2: 0.31}, {}, {1: 0.0, 2: 0.2}, {}, [], [])
    coverage.cite_fullest([scattered, together], measured)
    assert (together.score, scattered.score) == (0.7, 0.5)

def test_the_floor_refuses_only_fact_questions_and_says_why():
    def refusal(**support) -> str | None:
        return floors.refusal(floors.Support(**{"coverage": 0.9, "similarity": 0.6, **support}), 0.6, 0.4)

    assert refusal() is None
    assert "'lisbon'" in refusal(unknown=["lisbon"], similarity=0.3)
    assert refusal(unknown=["lisbon"], similarity=0.8) is None  # very close in meaning
    assert "period" in refusal(period=False)
    assert "hold 30%" in refusal(coverage=0.3, similarity=0.35)
    assert refusal(coverage=0.3, similarity=0.45) is None  # a paraphrase close in meaning
    # A topic, a title, a claim: never refused.
    assert refusal(question=False, unknown=["lisbon"], similarity=0.1) is None
    # Without the vector leg only the outright refusals apply.
    assert refusal(coverage=0.1, similarity=None) is None
    assert refusal(unknown=["lisbon"], similarity=None) is not None
    # Without the keyword leg the vector leg's own floor decides, whatever the cosine.
    assert refusal(coverage=None, similarity=0.35) is None
    assert "'lisbon'" in refusal(coverage=None, unknown=["lisbon"], similarity=0.42)


def side(
    item_id: int, document_id: int, text: str, day: str, score: float, title: str = "Note", lead: str | None = None
) -> tuple[Hit, ChunkText]:
    chunk = ChunkText(text, text if lead is None else lead)
    return hit(item_id, document_id, score=score, date=day, title=title), chunk


def resolve(
    pairs: list[tuple[Hit, ChunkText]],
    keys: list[str],
    query: str = "where does the cache move",
    common: frozenset[str] = frozenset(),
) -> list[Hit]:
    hits = [h for h, _ in pairs]
    intent = TimeIntent.of(query, date(2026, 1, 1))
    wanted = values.wanted(query)
    answer_at = values.answers_at(query, wanted)
    asked = parse(query)
    names = asked.names - intent.words
    valued = wanted is not None and not asked.procedure
    kind = sorted(asked.asked_for, key=query.lower().find)
    naming = wanted.naming if wanted is not None else frozenset(kind[:-1])
    by_name = values.answered_by_name(query) if wanted is None else None
    chunks = {h.item_id: chunk for h, chunk in pairs}
    sides = truth.read(hits, chunks, keys, answer_at, names, valued, naming, asked.relating, by_name)
    truth.resolve(sides, intent, None, None, truth.Commonness(common), disagreeing=not parse(query).procedure)
    return sorted(hits, key=lambda h: -h.score)


def retracted(pairs: list[tuple[Hit, ChunkText]], keys: list[str], query: str = "where does the cache move") -> dict:
    """Each hit's `retracted_by` once the truth signals have read them."""
    return {h.item_id: h.retracted_by for h in resolve(pairs, keys, query)}


def superseded(pairs: list[tuple[Hit, ChunkText]], keys: list[str], query: str = "where does the cache move") -> dict:
    """Each hit's `superseded_by` once the truth signals have read them."""
    return {h.item_id: h.superseded_by for h in resolve(pairs, keys, query)}


def disagreeing(notes: list[tuple[str, str]], keys: list[str], query: str) -> list[list[int]]:
    """The `conflicts_with` of notes given as (text, date), ranked in that order."""
    pairs = [side(n, n, text, day, 1 - n / 10) for n, (text, day) in enumerate(notes, 1)]
    return [h.conflicts_with for h in resolve(pairs, keys, query)]


def test_without_vectors_a_newer_correction_still_goes_above_what_it_corrects():
    old = side(1, 1, "Decided: the build cache moves to MinIO next month.", "2025-03-04", 0.9)
    new = side(2, 2, "Correction: the build cache moves to Ceph instead of MinIO.", "2025-03-18", 0.7)
    ranked = resolve([old, new], ["cache", "build", "moves"])
    assert [h.item_id for h in ranked] == [2, 1]
    assert ranked[1].superseded_by == 2 and ranked[0].superseded_by is None


def test_a_note_dated_by_a_day_to_come_is_corrected_by_a_note_dated_before_that_day():
    """resolve's today is 1 January 2026: a booking dated by the wedding's day was not
    written on it, and the bride's later numbers correct it."""
    question = "how many day guests at the ellis wedding"
    keys = ["guests", "day", "ellis", "wedding"]
    numbers = "From: Hannah Ellis\nSubject: numbers\n\nSorry - update on numbers: we're now at 104 day guests."

    def ranked(booked: str) -> list[Hit]:
        text = f"# Booking - Ellis wedding\nDate: {booked}\nGuests: 96 (day)\nMenu: 3-course plated, £48/head"
        booking = side(1, 1, text, booked, 0.9, title="Booking - Ellis wedding")
        return resolve([booking, side(2, 2, numbers, "2025-11-30", 0.8)], keys, question)

    assert [(h.item_id, h.superseded_by) for h in ranked("2026-05-22")] == [(2, None), (1, 2)]
    # Dated today or before, the booking was written after the email; and a note of a
    # year before the day is about another year's.
    for booked in ("2025-12-15", "2027-05-22"):
        assert [(h.item_id, h.superseded_by) for h in ranked(booked)] == [(1, None), (2, None)]
    # Last spring's update, dated by its day or its year, is about last spring's concert.
    doors = "Update: doors now open at 6.30pm instead of 7pm."
    for written in ("2025-05-09", "2025"):
        notes = [side(1, 1, "# Spring concert\n\nDoors open at 7pm.", "2026-05-08", 0.9, title="Spring concert"),
                 side(2, 2, f"# Spring concert\n\n{doors}", written, 0.8, title="Spring concert")]  # fmt: skip
        assert [h.superseded_by for h in resolve(notes, ["doors", "open", "concert"], "When do doors open?")] == [
            None, None]  # fmt: skip


def test_an_older_note_cannot_correct_a_newer_one_and_a_draft_cannot_correct_at_all():
    older_correction = side(1, 1, "Correction: the build cache moves to Ceph instead.", "2025-01-01", 0.7)
    newer = side(2, 2, "The build cache moves to MinIO.", "2025-06-01", 0.9)
    assert all(h.superseded_by is None for h in resolve([older_correction, newer], ["cache", "build"]))
    draft = side(3, 3, "Draft proposal: the build cache moves to Ceph instead.", "2025-09-01", 0.8, title="Proposal")
    ranked = resolve([newer, draft], ["cache", "build"])
    assert ranked[0].item_id == 2 and all(h.superseded_by is None for h in ranked)


def test_a_correction_far_from_what_the_query_asks_about_is_not_one():
    old = side(1, 1, "The build cache moves to MinIO next month.", "2025-03-04", 0.9)
    text = "The build cache moves to Ceph.\nUnrelated: the canteen no longer opens on Fridays."
    aside = side(2, 2, text, "2025-03-18", 0.7, lead="# Weekly notes\n\nWhat happened this week.")
    assert all(h.superseded_by is None for h in resolve([old, aside], ["cache", "build"]))
    # In a document's opening lines the same words speak for the whole note.
    plan = side(1, 1, "March plan: the build cache moves to MinIO next month.", "2025-03-04", 0.9, title="Plan")
    opening = side(2, 2, text, "2025-03-18", 0.7, lead="# Weekly notes\n\nThis note supersedes the March plan.")
    assert resolve([plan, opening], ["cache", "build"])[1].superseded_by == 2


def test_a_correction_supersedes_only_what_names_something_its_line_names():
    keys = ["cache", "build", "moves"]

    def notes() -> tuple[Hit, ChunkText]:
        return side(1, 1, "Decided: the build cache moves to MinIO next month.", "2025-03-04", 0.9, title="Infra sync")

    def runbook() -> tuple[Hit, ChunkText]:
        text = "The build cache moves old artefacts out after seven days."
        return side(2, 2, text, "2025-01-10", 0.8, title="Runbook")

    def newer(text: str, title: str) -> tuple[Hit, ChunkText]:
        return side(3, 3, text, "2025-03-18", 0.7, title=title)

    def superseded(*pairs: tuple[Hit, ChunkText]) -> dict[int, int | None]:
        return {h.item_id: h.superseded_by for h in resolve(list(pairs), keys)}

    correction = newer("Correction to the 4 March notes: the build cache moves to Ceph instead of MinIO.", "Infra sync")
    assert superseded(notes(), runbook(), correction) == {1: 3, 2: None, 3: None}
    # A title naming nothing but the question's words may mean any older note about them;
    # the chunk's lines with a cue count with it ("not MinIO as written" names MinIO).
    plain = newer("The build cache moves to Ceph.", "Correction: build cache")
    assert superseded(runbook(), plain) == {2: 3, 3: None}
    told = newer("The build cache moves to Ceph, not MinIO as written.", "Correction: build cache")
    assert superseded(notes(), runbook(), told) == {1: 3, 2: None, 3: None}


def test_putting_aside_what_the_question_names_ties_however_far_apart_the_vectors_are():
    old = side(1, 1, "The build cache lives on MinIO in the storage rack.", "2025-03-04", 0.9, title="Build cache plan")
    new = side(2, 2, "Correction: the build cache moves to Ceph instead of MinIO.", "2025-10-01", 0.7, title="Infra notes")
    hits = [old[0], new[0]]
    sides = truth.read(hits, {1: old[1], 2: new[1]}, ["build", "cache", "minio"], None, frozenset({"minio"}))

    def far(a: int, b: int) -> float:
        return 0.2  # two short notes under other titles

    truth.resolve(sides, TimeIntent.of("build cache MinIO", date(2026, 1, 1)), far, None)
    assert old[0].superseded_by == 2


def test_a_proposal_goes_below_every_statement_of_the_same_thing_its_floor_allows():
    keys = ["tarsa", "boat", "crossing"]

    def idea() -> tuple[Hit, ChunkText]:
        text = "What if the boat to Tarsa were a fast craft? The crossing to Tarsa would take 55 minutes."
        return side(1, 1, text, "2026-03-01", 0.9, title="Route ideas")

    # The pier page holds the question's words; the route page states the crossing time.
    text = "Port Mhor pier: the boat to Tarsa berths at the north face; the crossing to Tarsa would end there."
    pier = side(2, 2, text, "2025-05-20", 0.8, title="Port Mhor")
    route = side(3, 3, "Route 2: the boat to Tarsa. Crossing time to Tarsa: 1 hour 40 minutes.", "2025-10-18", 0.5)
    assert [h.item_id for h in resolve([idea(), pier, route], keys)] == [2, 3, 1]
    # It keeps HEDGED_FLOOR of its score, above a statement further down than that.
    far = side(4, 4, "The boat to Tarsa: crossing to Tarsa notes.", "2025-01-10", 0.1, title="Notes")
    ranked = resolve([idea(), far], keys)
    assert ranked[0].item_id == 1 and ranked[0].score == pytest.approx(0.9 * truth.HEDGED_FLOOR)


def test_a_proposal_at_the_foot_of_the_scale_stays_below_the_statement():
    # Score fusion gives its last candidate a score of 0; a hedge found there once
    # failed the whole search with a division by zero.
    fact = side(1, 1, "The build cache lives on MinIO in the storage rack.", "2025-03-04", 0.9)
    idea = side(2, 2, "Proposal: what if the build cache lived on Ceph in the storage rack?", "2025-04-01", 0.0)
    ranked = resolve([fact, idea], ["cache", "build", "storage"])
    assert [(h.item_id, h.score) for h in ranked] == [(1, 0.9), (2, 0.0)]
    assert ranked[1].superseded_by is None


def test_a_correction_naming_the_time_of_the_note_it_corrects_is_tied_to_it():
    keys = ["saturday", "saltcote", "time"]

    def april() -> tuple[Hit, ChunkText]:
        text = "1. Saturday hours: Saltcote will close at 17:00 on Saturdays.\n2. Printers: no longer leased."
        return side(1, 1, text, "2025-04-02", 0.9, title="Branch managers")

    def newer(line: str) -> tuple[Hit, ChunkText]:
        return side(2, 2, f"1. {line}\n2. Summer reading starts in July.", "2025-05-07", 0.5, title="Branch managers")

    # The April note corrects something of its own (the printers), which alone would keep
    # it from being corrected in turn: naming April ties them.
    by_date = newer("Correction to the April notes: Saltcote will close at 16:00 on Saturdays.")
    assert superseded([april(), by_date], keys) == {1: 2, 2: None}
    other_year = newer("Correction: Saltcote will close at 16:00 on Saturdays from April 2027.")
    assert superseded([april(), other_year], keys) == {1: None, 2: None}


@pytest.mark.parametrize("month", ["October", "Oct"])
def test_a_month_a_retraction_names_ties_no_note_that_merely_names_the_month(month):
    keys = ["brodick", "depot", "old", "mill", "house"]
    question = "Is the Brodick depot moving to the Old Mill House?"
    june = side(1, 1, "1. Brodick depot: the move to the Old Mill House in October is agreed.", "2025-06-04", 0.9)
    cottage = side(2, 2, f"The Old Mill House cottage by the Brodick depot: boiler serviced every {month}.",
                   "2024-08-20", 0.8)  # fmt: skip
    july = side(
        3, 3, f"1. Brodick depot: the move to the Old Mill House is off. Please disregard the {month} relocation in"
        " the June minutes.", "2025-07-02", 0.7,
    )  # fmt: skip
    assert retracted([june, cottage, july], keys, question) == {1: 3, 2: None, 3: None}


def test_a_month_in_a_day_a_retraction_names_still_names_what_states_that_day():
    plan = side(1, 1, "The ferry app launches on 1 May 2025 with mobile boarding cards.", "2025-03-20", 0.9)
    pulled = side(2, 2, "Please disregard the 1 May launch date for the ferry app.", "2025-04-22", 0.7)
    assert retracted([plan, pulled], ["ferry", "app"], "When does the ferry app launch?") == {1: 2, 2: None}


@pytest.mark.parametrize("when", ["October", "Sunday"])
def test_a_retraction_naming_nothing_but_a_month_or_weekday_retracts_what_that_names(when):
    keys, question = ["brodick", "ferry", "timetable"], "What is the Brodick ferry timetable?"
    summer = side(1, 1, "Brodick ferry timetable, summer: departures 07:00, 09:30 and 16:00.", "2025-05-01", 0.9)
    named = side(2, 2, f"Brodick ferry timetable for {when}: two departures, 08:00 and 15:00.", "2025-09-15", 0.8)
    notice = side(3, 3, f"Brodick ferry: disregard the {when} timetable.", "2025-09-25", 0.7)
    assert retracted([summer, named, notice], keys, question) == {1: None, 2: 3, 3: None}


def test_a_notice_whose_title_names_the_day_of_what_it_retracts_ties_no_other_note_by_a_word():
    keys = ["kilbrannan", "pier", "narrows"]
    question = "How hard do the narrows run at Kilbrannan pier?"
    page = side(1, 1, "Kilbrannan pier approach: the narrows run hard on the ebb; approach at slack water.",
                "2025-05-20", 0.9)  # fmt: skip
    report = side(2, 2, "Heavy contact at Kilbrannan pier: the narrows ran hard and the mate misjudged the approach.",
                  "2025-06-02", 0.8)  # fmt: skip
    addendum = side(
        3, 3, "Kilbrannan pier: the statement that the mate misjudged the approach in the narrows is retracted.",
        "2025-07-10", 0.7, title="Addendum to the Kilbrannan contact report (2 June 2025)",
    )  # fmt: skip
    marks = retracted([page, report, addendum], keys, question)
    assert marks == {1: None, 2: 3, 3: None}


def test_a_records_title_naming_the_day_it_records_names_nothing_it_takes_back():
    keys = ["brodick", "depot", "saturday"]
    question = "Is the Brodick depot open on Saturdays?"
    page = side(1, 1, "Brodick depot: closed on Saturdays from May; weekday hours 07:30 to 17:00.", "2025-05-01", 0.9)
    agenda = side(2, 2, "Brodick depot meeting agenda: Saturday cover, the new forklift, the rota.", "2025-06-02", 0.8)
    minutes = side(
        3, 3, "Brodick depot: the Saturday closure notice is withdrawn; the depot stays closed on Saturdays only in"
        " winter.", "2025-06-04", 0.7, title="Minutes of the depot meeting, 2 June 2025",
    )  # fmt: skip
    marks = retracted([page, agenda, minutes], keys, question)
    assert marks == {1: 3, 2: None, 3: None}


def test_a_year_a_notice_names_dates_only_a_text_whose_title_writes_it():
    question = "Is the Ardnish terminal cafe closing?"
    keys = ["ardnish", "terminal", "cafe", "closing"]
    page = side(1, 1, "Ardnish terminal: long-stay parking, the booking office and the cafe.", "2024-09-01", 0.9,
                title="Ardnish terminal")  # fmt: skip
    statement = side(
        2, 2, "Please disregard the rumour: the Ardnish terminal cafe is not closing. (The Skerrivaig cafe closed in"
        " 2024.)", "2025-05-08", 0.7, title="Ardnish terminal cafe",
    )  # fmt: skip
    assert retracted([page, statement], keys, question) == {1: None, 2: None}
    # A year the older text's title writes names it.
    old = side(1, 1, "Parental leave: 16 weeks at full pay.", "2023-04-01", 0.9, title="Parental leave policy 2023")
    new = side(2, 2, "This policy supersedes the 2023 parental leave policy. Parental leave: 20 weeks at full pay.",
               "2025-04-01", 0.7, title="Parental leave policy")  # fmt: skip
    question = "How many weeks of parental leave?"
    assert superseded([old, new], ["parental", "leave", "weeks"], question) == {1: 2, 2: None}


def test_a_title_writes_a_year_as_of_its_own_date_and_not_by_the_day_it_was_written():
    # "This year's rota", written in 2023, is no 2025 rota.
    old = side(1, 1, "Rota: Alice on Mondays.", "2023-01-10", 0.9, title="This year's rota")
    notice = side(2, 2, "Disregard the 2025 rota: a new one follows.", "2025-06-01", 0.7, title="Office news")
    assert retracted([old, notice], ["rota"], "Who is on the rota?") == {
        1: None, 2: None
    }  # fmt: skip
    said, context = truth.Side(*notice, ["rota"], None), "disregard the 2026 goals: a new list follows."
    for title, path, day, named in [
        ("Goals for next year", "/n/1.md", "2025-11-20", True),
        ("Goals", "/n/fy-26-goals.md", "2025-12-01", True),
        # A day says when the text was written; its year names no subject.
        ("Goals, 5 January 2026", "/n/1.md", "2026-01-05", False),
        ("Goals", "/n/20260105-goals.md", "2026-01-05", False),
        ("Goals", "/n/2026-01-05-goals.md", "2026-01-05", False),
    ]:
        older, chunk = side(1, 1, "Goals: x", day, 0.9, title=title)
        older.path = path
        assert said.dates(context, truth.Side(older, chunk, ["rota"], None)) is named, (title, path)
    # A quarter without its year in the title is the one nearest the text's date.
    report, chunk = side(1, 1, "Revenue up 4%.", "2025-10-06", 0.9, title="Quarterly report Q3")
    said = truth.Side(*side(3, 3, "The Q3 2025 quarterly report is withdrawn.", "2025-11-20", 0.5), [], None)
    assert said.dates("the q3 2025 quarterly report is withdrawn.", truth.Side(report, chunk, [], None))


def test_a_notice_naming_many_things_ties_no_note_holding_only_one_of_them():
    question = "Is the parking fine cancelled?"
    keys = ["parking", "fine", "cancelled"]
    runbook = side(1, 1, "Parking fine procedure: if a sailing is cancelled, tell the community council contact.",
                   "2024-10-01", 0.9)  # fmt: skip
    fine = side(2, 2, "Parking fine from the council: loading bay, 12 February, £70. Kirsty has the photos.",
                "2025-02-12", 0.8)  # fmt: skip
    notice = side(
        3, 3, "Parking fine cancelled: the council has withdrawn the PCN from February; the loading bay signs were"
        " missing, Kirsty sent the photos and they admitted it.", "2025-03-03", 0.7,
    )  # fmt: skip
    marks = retracted([runbook, fine, notice], keys, question)
    assert marks == {1: None, 2: 3, 3: None}


def test_a_season_named_by_its_years_names_the_text_of_that_season():
    question = "When is the last weekday sailing this winter?"
    keys = ["last", "weekday", "sailing", "winter"]
    this = side(1, 1, "Winter timetable 2025-26, route 1: last weekday sailing 18:10.", "2025-10-18", 0.9)
    last = side(2, 2, "Winter timetable 2024-25, route 1: last weekday sailing 18:10.", "2024-10-20", 0.8)
    amendment = side(
        3, 3, "Correction to the winter 2025-26 timetable for route 1: the last weekday sailing is 17:40, as the"
        " crew hours changed. Printed leaflets are being replaced and the booking office told.", "2025-11-20", 0.7,
    )  # fmt: skip
    marks = superseded([this, last, amendment], keys, question)
    assert marks == {1: 3, 2: None, 3: None}


def test_a_season_is_one_however_its_years_are_written_and_a_month_is_no_season():
    question = "When is the last weekday sailing this winter?"
    keys = ["last", "weekday", "sailing", "winter"]
    amendment = side(
        3, 3, "Correction to the winter 2025-26 timetable for route 1: the last weekday sailing is 17:40, as the"
        " crew hours changed. Printed leaflets are being replaced and the booking office told.", "2025-11-20", 0.7,
    )  # fmt: skip
    # The same season with a slash, or a dash as typeset, is the season named.
    for written in ("2025/26", "2025\u201326", "2025-2026"):
        this = side(1, 1, f"Winter timetable {written}, route 1: last weekday sailing 18:10.", "2025-10-18", 0.9)
        marks = superseded([this, amendment], keys, question)
        assert marks == {1: 3, 3: None}, written
    # Last season's page naming the month it ends ("2025-03") or typesetting its years
    # names no season of the notice's.
    this = side(1, 1, "Winter timetable 2025-26, route 1: last weekday sailing 18:10.", "2025-10-18", 0.9)
    for text in ("Winter timetable 2024-25 (until 2025-03), route 1: last weekday sailing 18:10.",
                 "Winter timetable 2024\u201325, route 1: last weekday sailing 18:10."):  # fmt: skip
        last = side(2, 2, text, "2024-10-20", 0.8)
        marks = superseded([this, last, amendment], keys, question)
        assert marks == {1: 3, 2: None, 3: None}, text
    # Nor do a season's years name a year: the 2025/26 timetable is not last season's,
    # titled "2024/2025".
    for dash in ("/", "\u2013"):
        fix = amendment[1].content.replace("2025-26", f"2025{dash}26")
        said = side(3, 3, fix, "2025-11-20", 0.7)
        this = side(1, 1, "Route 1: last weekday sailing 18:10.", "2025-10-18", 0.9, title=f"Winter 2025{dash}2026")
        last = side(2, 2, "Route 1: last weekday sailing 18:10.", "2024-10-20", 0.8, title=f"Winter 2024{dash}2025")
        marks = superseded([this, last, said], keys, question)
        assert marks == {1: 3, 2: None, 3: None}, dash


def test_a_notice_naming_a_day_without_its_year_means_the_text_of_that_day():
    keys = ["oakridge", "shelving", "quote"]
    question = "Is the Oakridge shelving quote still open?"
    meeting = side(1, 1, "Oakridge shelving for the first floor: quotes due in October.", "2025-09-24", 0.9)
    quote = side(2, 2, "Fairweather quote for the Oakridge shelving, first floor: £18,400.", "2025-10-14", 0.8)
    notice = side(3, 3, "Fairweather have withdrawn their Oakridge shelving quote of 14 October for the first floor.",
                  "2025-11-03", 0.7)  # fmt: skip
    marks = retracted([meeting, quote, notice], keys, question)
    assert marks == {1: None, 2: 3, 3: None}


def test_a_chat_lines_speaker_names_nothing_it_takes_back():
    keys = ["central", "lift", "certificate"]
    question = "When does the Central lift certificate run out?"
    minutes = side(1, 1, "Central lift certificate: Tom Bradshaw keeps the file.", "2025-03-24", 0.9)
    chat = side(2, 2, "[2025-09-03 11:32] Tom Bradshaw: retracted: I misread the Central lift certificate, March"
                " 2027 is the next examination.", "2025-09-03", 0.7)  # fmt: skip
    marks = retracted([minutes, chat], keys, question)
    assert marks == {1: None, 2: None}


def test_a_correction_is_tied_to_the_older_note_that_says_the_value_it_replaces():
    keys = ["staff", "day", "autumn"]
    question = "Where is the autumn all-staff day?"

    def may() -> tuple[Hit, ChunkText]:
        # It corrects an item of its own, which alone would keep it from being corrected.
        text = (
            "1. Correction to the April notes: Saltcote closes at 16:00.\n"
            "2. Autumn all-staff day: Friday 24 October at the Oakridge community room."
        )
        return side(1, 1, text, "2025-05-07", 0.9, title="Branch managers")

    def september(old: str) -> tuple[Hit, ChunkText]:
        text = f"1. All-staff day update: the venue is now the Brackley community room instead of {old}."
        return side(2, 2, f"{text}\n2. Autumn stock check starts 1 October.", "2025-09-24", 0.6, title="Branch managers")

    ranked = resolve([may(), september("Oakridge")], keys, question)
    assert [h.item_id for h in ranked] == [2, 1] and ranked[1].superseded_by == 2
    # Replacing a value the older note does not say ties nothing.
    assert all(h.superseded_by is None for h in resolve([may(), september("Wrenfield")], keys, question))


def test_a_correction_replacing_a_value_the_question_names_supersedes_the_note_giving_it():
    # "Is it still Y?" names the old value: the correction replacing it still means the
    # note that gives it, however much every text about the question holds its words.
    keys = ["book", "club", "community", "hall"]
    old = side(1, 1, "The book club meets in the community hall on Thursdays.", "2025-01-10", 0.9)
    new = side(2, 2, "Update: the book club now meets in the library instead of the community hall.", "2025-06-10", 0.8)
    assert superseded([old, new], keys, "Does the book club still meet in the community hall?") == {1: 2, 2: None}


def test_a_correction_naming_nothing_more_than_the_question_means_only_a_text_close_to_it():
    # Its line names only the question's words: it means the note that says what it
    # says, not one that merely shares some of it.
    keys = ["billing", "database", "backups", "kept"]
    note = side(1, 1, "Billing database backups are kept in the vault.", "2025-01-10", 0.9)
    text = "The billing team keeps backups of invoices, receipts, ledgers and statements."
    team = side(2, 2, text, "2025-01-12", 0.8, title="Archives")
    new = side(3, 3, "Correction: where billing database backups are kept.", "2025-06-10", 0.7)
    ranked = resolve([note, team, new], keys, "Where are the billing database backups kept?")
    assert {h.item_id: h.superseded_by for h in ranked} == {1: 3, 2: None, 3: None}


def test_a_question_naming_what_a_correction_puts_aside_still_finds_the_correction():
    # "build cache MinIO": MinIO is the question's word, and what "instead of" puts aside.
    keys = ["cache", "build", "minio"]
    old = side(1, 1, "The build cache lives on MinIO in the storage rack.", "2025-03-04", 0.9, title="Build cache")
    other = side(2, 2, "MinIO buckets for the build cache are listed here.", "2025-01-10", 0.8, title="Buckets")
    text = "Correction: the build cache moves to Ceph instead of MinIO as of October."
    new = side(3, 3, text, "2025-10-01", 0.5, title="Infra")
    ranked = resolve([old, other, new], keys, "build cache MinIO")
    assert ranked[0].item_id == 3
    assert {h.item_id: h.superseded_by for h in ranked} == {1: 3, 2: 3, 3: None}


def test_a_word_much_of_the_library_holds_ties_no_correction_to_a_note():
    keys = ["cache", "build"]
    portal = "The build cache of the customer portal is emptied nightly."
    correction = "Correction: the build cache for customer uploads moves to Ceph."

    def marks_with(common: frozenset[str]) -> dict[int, int | None]:
        older = side(1, 1, portal, "2025-01-10", 0.9, title="Portal")
        newer = side(2, 2, correction, "2025-03-18", 0.7, title="Infra sync")
        return {h.item_id: h.superseded_by for h in resolve([older, newer], keys, common=common)}

    assert marks_with(frozenset()) == {1: 2, 2: None}
    # "customer" in every twelfth chunk names no note: the correction's own subject
    # (uploads, Ceph) is not the portal's.
    assert marks_with(frozenset({"customer"})) == {1: None, 2: None}
    newer, chunk = side(2, 2, correction, "2025-03-18", 0.7)
    assert truth.naming_words(truth.read([newer], {2: chunk}, keys)) == {"customer", "uploads", "moves", "ceph"}


def test_hits_holding_the_quoted_phrase_go_above_those_that_do_not_even_from_zero():
    # Score fusion's last candidate scores 0: the one holding the phrase still goes first.
    notice, pilot, other = hit(1, 10, score=0.8), hit(2, 20, score=0.0), hit(3, 30, score=0.5)
    phrase = Probe(quote("soft launch"))
    holds = {1: {Probe(quote("service")): 1.0}, 2: {phrase: 3.0}, 3: {}}
    measured = coverage.Coverage({1: 0.25, 2: 0.75, 3: 0.0}, holds, {}, {}, [], [])
    coverage.quoted_first([notice, pilot, other], measured, frozenset({"soft launch"}))
    assert pilot.score > notice.score > other.score
    assert "holds the quoted 'soft launch'" in pilot.reasons[0] and notice.reasons == []
    # Nothing moves when no hit holds the phrase.
    pilot.score = 0.0
    coverage.quoted_first([notice, pilot], coverage.Coverage({}, {1: {}, 2: {}}, {}, {}, [], []), frozenset({"soft launch"}))
    assert (notice.score, pilot.score) == (0.8, 0.0)


def test_what_a_cue_is_said_in():
    # In a title, the title and the chunk's lines with a cue of that kind.
    line = "refunds over £250 need finance approval, not £500 as written."
    said = cues.read("Update: refund threshold", line)
    assert said.correction_context.split("\n") == ["update: refund threshold", line]
    assert cues.cue_words(said.correction_context) == {"update", "not", "as", "written"}
    # In the front matter, without its key; in the body, the line as it stands.
    lead = '---\ntitle: "Correction: payout schedule"\n---\nPayouts run weekly.'
    assert cues.read("Payouts", "payouts run weekly.", lead).correction_context == '"correction: payout schedule"'
    body = cues.read("Notes", "intro\n\nthreshold: no longer £500, now £250", "", ["threshold"])
    assert (body.correction, body.correction_context) == ("no longer", "threshold: no longer £500, now £250")
    # A section under the title speaks for itself, not for the whole note: a
    # changelog's first entry and a newsletter's first item take nothing back for the
    # rest of it.
    changelog = "---\ntitle: Fares changelog\n---\n# Fares changelog\n\nNewest last.\n## 2024\n- family ticket withdrawn."
    assert cues.read("Fares changelog", "## 2025\n- staff travel rules rewritten.", changelog).retraction is None
    assert cues.read("Fares changelog", changelog, changelog, ["staff", "travel"]).retraction is None
    assert cues.read("Fares changelog", changelog, changelog, ["family", "ticket"]).retraction == "withdrawn"
    notice = "# Retraction: Q2 NPS\n\nThe Q2 NPS figure was wrong.\n## Details\nSee below."
    assert cues.read("Retraction: Q2 NPS", "## Details\nSee below.", notice).retraction == "retraction"
    # A line naming only the thing asked about corrects something else about it.
    cafe = "- d-14: cafe lease at skerrivaig not renewed; vending machines instead."
    assert cues.read("Decision log", cafe, "", ["skerrivaig", "office", "open"]).correction is None
    assert cues.read("Decision log", cafe, "", ["skerrivaig", "cafe"]).correction == "instead"
    # A hedge below a note's opening is about its own line: the draft timetable says
    # nothing of when the ops meeting is held. In the opening it speaks for the note.
    minutes = "# ops meeting, 4 sept\n\npresent: ewan, shona\n\n## items\n\n- ops meeting moves to thursdays.\n- winter timetable draft circulated."
    assert not cues.read("Ops meeting", minutes, minutes, ["ops", "meeting", "day"]).hedged
    assert cues.read("Ops meeting", minutes, minutes, ["winter", "timetable"]).hedged
    draft = "# draft: winter timetable\n\n- sailings at 07:00 and 16:00."
    assert cues.read("Winter timetable", draft, draft, ["sailings", "times"]).hedged


def test_cues_as_people_write_them_and_the_same_words_doing_other_work():
    def kinds(text: str) -> tuple[str | None, str | None, bool]:
        said = cues.read("Notes", text)
        return said.correction, said.retraction, said.hedged

    assert kinds("it turns out the replica port is 5433.") == ("it turns out", None, False)
    assert kinds("typo in yesterday's note: the cutoff is 17:00.") == ("typo in", None, False)
    assert kinds("scratch that, we keep the old vendor.") == ("scratch that", None, False)
    assert kinds("after the 10k pb she's changed my target: marathon pace now 8:30/mile.")[0] == "she's changed"
    assert kinds("dales roofing have moved the gutter clearing to mon 14 dec.")[0] == "have moved the"
    for unchanged in ("what has changed in gdb? the meaning of detach has changed.", "nothing's changed for saturday.",
                      "what's changed in 2.0", "prices have changed over the years.", "who's moved in next door?",
                      "if they've moved the dress rehearsal, let me know.", "tom has moved house."):  # fmt: skip
        assert kinds(unchanged)[0] is None, unchanged
    assert kinds("please ignore what i posted about the budget.") == (None, "ignore what", False)
    # Said as messages say them: a change from today, a sailing retimed, dates given wrong.
    assert kinds("just a heads up that from today group walks are £13.50.")[0] == "that from today"
    assert kinds("from today, the gym opens at 6am.")[0] == "from today"
    assert kinds("your sailing on 13 june has been retimed.")[0] == "has been retimed"
    assert kinds("sorry, i gave the wrong dates - it's 10-17 july.")[0] == "i gave the wrong"
    assert kinds("the earlier email had the wrong dates.")[0] == "email had the wrong"
    for news in ("the cafe is open from today, 9am to 4pm.", "fraudsters say you gave the wrong account number.",
                 "new members are 12 this year.", "the new teaching assistant is 2 days a week."):  # fmt: skip
        assert kinds(news)[0] is None, news
    assert kinds("the office move was shelved.") == (None, "was shelved", False)
    assert kinds("strawman for the new rota, not final.")[2]
    # Declaring an incident that turns out minor, a typo fix as a first task, consumers
    # that do not rely on order: no cue.
    assert kinds("declaring one that turns out to be minor is fine.") == (None, None, False)
    assert kinds("ship something small: a typo fix is perfect.") == (None, None, False)
    assert kinds("use it for topics whose consumers do not rely on order.") == (None, None, False)
    # What someone else has not agreed is a fact; what is not agreed yet is a hedge.
    notice = "the winter service is withdrawn. the council has not agreed winter use of the pier."
    assert kinds(notice) == (None, "withdrawn", False)
    assert kinds("the new rota is not agreed yet.")[2] and kinds("status: not decided.")[2]
    assert kinds("the rota is not yet agreed.")[2]
    # A hedge word said to be none states a fact; the same words otherwise still hedge.
    assert kinds("this is not a proposal: the standup moves to 09:30.") == (None, None, False)
    assert kinds("the draft was approved and is now policy.") == (None, None, False)
    assert kinds("this is a proposal: the standup moves to 09:30.")[2] and kinds("the draft rota.")[2]
    # So does one said to have been one, or to have lost its label; not a proposal yet to be.
    for settled in (
        "this was a proposal; it is now approved.", 'the "draft" label was removed on 2 october.',
        "this started as a draft and has since been adopted.", "the proposal has now been approved.",
        "we removed the draft label after the board met.", "this was a proposal, which was approved in may.",
    ):  # fmt: skip
        assert kinds(settled) == (None, None, False), settled
    for hedged in (
        "this was a proposal, not yet approved.", "this is a proposal, not yet approved.",
        "if approved, the draft label will be removed.", "this was a proposal; it is not approved.",
        "if approved, the draft becomes policy.",
    ):  # fmt: skip
        assert kinds(hedged)[2], hedged
    # Told not to draft something, a note says nothing of being a draft; said not to be
    # one, however the "not" is written, it is none.
    for plain in (
        "do not draft the budget yet; the budget is 40k.", "don't draft the budget yet; the budget is 40k.",
        "don’t draft replies from it.", "no need to draft a new order.", "this isn't a draft.",
        "we can't draft the budget yet; the budget is 40k.", "we can’t redraft it.",
    ):  # fmt: skip
        assert kinds(plain) == (None, None, False), plain
    assert cues.cue_words("do not draft the budget yet.") == set()
    assert kinds("this is not the final draft.")[2] and kinds("please review the draft.")[2]
    # Asked to draft something, a note says nothing of being a draft either.
    for asked in (
        "please draft the budget; the budget is 40k.", "kindly draft a reply to the council.",
        "can you draft the rota? the studio opens at 10:00.", "we asked noor to redraft the order.",
    ):  # fmt: skip
        assert kinds(asked) == (None, None, False), asked
    assert cues.cue_words("please draft the budget.") == set()
    # Told as people tell it in a chat or a diary.
    assert kinds("coach dave: scrap friday's extra training, the seniors have the pitch.")[1] == ": scrap friday's "
    assert kinds("scrap the 3pm call.")[1] == "scrap the "
    assert kinds("scrap that, we keep the old vendor.") == ("scrap that", None, False)
    for plain in ("use the scrap paper tray.", "the scrap dealer's offer was £200.", "the car went for scrap the next day."):
        assert kinds(plain) == (None, None, False), plain
    assert kinds("your flight on 3 oct has been rescheduled. new departure 09:40.")[0] == "has been rescheduled"
    assert kinds("the launch is postponed with no new date.")[0] == "is postponed"
    assert kinds("the deposit deadline has been pushed back to friday 13 february.")[0] == "has been pushed back"
    for plain in ("if the match is postponed, we play on sunday.", "when a flight is rescheduled, you get an email.",
                  "the final has not been postponed.", "if the deadline is pushed back we will tell you.",
                  "the deadline hasn't been pushed back.", "the spare key was put back under the pot.",
                  "the kitchen was extended in 1998."):  # fmt: skip
        assert kinds(plain) == (None, None, False), plain
    assert kinds("let's scrap the offsite and meet in the office.")[1] == "let's scrap the "
    # A cue is a whole word, not the start of a longer one.
    assert kinds("sign in on the tablet by the door.") == (None, None, False)
    assert kinds("the atm withdrawal limit is £500 a day.") == (None, None, False)
    assert kinds("a four-day week is on the table.")[2]


def test_two_statements_of_one_time_giving_different_values_conflict():
    a = side(1, 1, "Nightly backups of the billing database are kept for 35 days.", "2025-06-10", 0.9)
    b = side(2, 2, "Billing database backups are kept for 14 days.", "2025-06-20", 0.8)
    ranked = resolve([a, b], ["backups", "billing", "kept"], "How long are billing backups kept?")
    assert ranked[0].conflicts_with == [2] and ranked[1].conflicts_with == [1]


def test_a_question_asking_how_to_do_something_finds_no_disagreement():
    a = side(1, 1, "Nightly backups of the billing database are kept for 35 days.", "2025-06-10", 0.9)
    b = side(2, 2, "Billing database backups are kept for 14 days.", "2025-06-20", 0.8)
    keys = ["backups", "billing", "kept"]
    for procedure in ("How do I keep billing backups?", "how can we keep the billing backups longer"):
        assert all(h.conflicts_with == [] for h in resolve([a, b], keys, procedure)), procedure
    assert parse("How do I keep billing backups?").question
    assert parse("How should one keep billing backups?").procedure
    # How something was done, or how a thing called I/O works, is a fact asked.
    for fact in ("How long are billing backups kept?", "How did you configure billing backups?", "How does I/O work?"):
        assert not parse(fact).procedure, fact


def test_values_about_another_named_thing_are_no_disagreement():
    def conflicts(query: str, title: str = "Note") -> list[list[int]]:
        other = side(1, 1, "Postgres for payments, apart from pg-main.\n- Backups: every 4 hours.", "2025-06-10", 0.9, title)
        named = side(2, 2, "Base backups of pg-main are taken every 24 hours.", "2025-06-12", 0.8)
        return [h.conflicts_with for h in resolve([other, named], ["backups", "base"], query)]

    asked = "How often are base backups of pg-main taken?"
    assert conflicts(asked) == [[], []]
    # Under a title naming it, a page speaks of it throughout; asked of nothing named,
    # any page may disagree.
    assert conflicts(asked, title="pg-main") == [[2], [1]]
    assert conflicts("How often are base backups taken?") == [[2], [1]]


def test_dates_are_no_disagreement_unless_the_question_asks_for_one():
    def conflicts(texts: tuple[str, str], query: str) -> list[list[int]]:
        keys = [word for word in ("session", "cache", "job", "queue") if word in query]
        a = side(1, 1, texts[0], "2025-09-04", 0.9)
        b = side(2, 2, texts[1], "2025-09-20", 0.8)
        return [h.conflicts_with for h in resolve([a, b], keys, query)]

    written = "Session cache: 2 GB of Redis, reviewed on 4 Sept."
    same = "updated: 2025-09-20\nSession cache: 2 GB of Redis."
    bigger = "updated: 2025-09-20\nSession cache: 4 GB of Redis."
    assert conflicts((written, same), "How big is the session cache?") == [[], []]
    assert conflicts((written, bigger), "How big is the session cache?") == [[2], [1]]
    # Asked when, the dates are what differs; but not the day a note was updated.
    reviewed = "updated: 2025-09-20\nSession cache: 2 GB of Redis, reviewed on 18 Sept."
    assert conflicts((written, reviewed), "When was the session cache reviewed?") == [[2], [1]]
    assert conflicts((written, same), "When was the session cache reviewed?") == [[], []]
    # Asked where, the answer is a place's name: times beside the words are no disagreement.
    times = ("The job queue is checked every morning at 09:00 by support.", "The job queue is checked daily at 11:00.")
    assert conflicts(times, "Where is the job queue?") == [[], []]
    assert conflicts(times, "How often is the job queue checked?") == [[2], [1]]


def test_numbers_near_a_who_questions_words_are_not_a_disagreement_about_who():
    people = side(1, 1, "Ruth Okafor runs the billing team. Her phone is 0113 496 0571.", "2025-06-10", 0.9)
    service = side(2, 2, "The billing exporter listens on port 9187. Ruth Okafor's team runs it.", "2025-06-12", 0.8)
    keys = ["billing", "runs"]
    assert all(h.conflicts_with == [] for h in resolve([people, service], keys, "Who runs the billing exporter?"))
    # Nor about which team: its answer is a name too.
    assert all(h.conflicts_with == [] for h in resolve([people, service], keys, "Which team runs the billing exporter?"))
    # Asked for a number, the same two notes disagree.
    ranked = resolve([people, service], keys, "What number is given for the billing team?")
    assert ranked[0].conflicts_with == [2]


def test_only_values_of_the_kind_asked_for_disagree():
    people = side(1, 1, "Ruth Okafor runs the billing team. Her phone is 0113 496 0571.", "2025-06-10", 0.9)
    service = side(2, 2, "The billing exporter listens on port 9187 and runs at 02:00.", "2025-06-12", 0.8)
    keys = ["billing", "runs"]
    # A phone number and a port say nothing about when it runs.
    assert all(h.conflicts_with == [] for h in resolve([people, service], keys, "When does the billing exporter run?"))
    # Two times for it do disagree.
    other = side(3, 3, "The billing exporter runs at 04:00 since the move.", "2025-06-15", 0.7)
    ranked = resolve([service, other], keys, "When does the billing exporter run?")
    assert ranked[0].conflicts_with == [3] and ranked[1].conflicts_with == [2]


def test_two_notes_answering_a_question_for_a_value_differently_disagree_whatever_words_they_use():
    # Two people's notes of one call: the dates stand beside "deadline" and "relaunch",
    # not beside the question's rarest words.
    question = "When is the Halvorsen website relaunch deadline?"
    keys = ["halvorsen", "website", "relaunch", "deadline"]
    alice = "Call with Halvorsen (2 Nov 2026) - Alice\n\n- They confirmed the deadline for the website relaunch:" \
        " 15 January.\n- Contact: Sigrid."  # fmt: skip
    ben = "Halvorsen call, 2 Nov 2026 (Ben's notes)\n\n- Relaunch deadline: 31 January, per Sigrid.\n- Budget" \
        " unchanged."  # fmt: skip
    # Another client's page names no Halvorsen: its deadline answers nothing about it.
    kessler = "Kessler project\nDeadline for the website relaunch: 31 January."

    def conflicts(*texts: str) -> list[list[int]]:
        return disagreeing([(text, "2026-11-02") for text in texts], keys, question)

    assert conflicts(alice, ben, kessler) == [[2], [1], []]
    # The same day written long and short is one answer, and with its weekday or its
    # year; another month is another day.
    assert conflicts(alice, ben.replace("31 January", "Jan 15")) == [[], []]
    assert conflicts(alice, ben.replace("31 January", "Thursday 15 January 2027")) == [[], []]
    assert conflicts(alice, ben.replace("31 January", "15 March")) == [[2], [1]]
    def apart(first: str, second: str, keys: list[str], asked: str) -> list[list[int]]:
        """Conflicts between two notes at cosine 0.3, where two short notes in other words
        sit: below a disagreement in the words beside the question's (SAME_CLAIM), above
        one in their answers."""
        notes = [side(1, 1, first, "2026-11-02", 0.9), side(2, 2, second, "2026-11-03", 0.8)]
        wanted = values.wanted(asked)
        sides = truth.read([h for h, _ in notes], {h.item_id: chunk for h, chunk in notes}, keys,
                           values.answers_at(asked, wanted), valued=True, naming=wanted.naming,
                           relating=parse(asked).relating)  # fmt: skip
        truth.resolve(sides, TimeIntent.of(asked, date(2026, 12, 7)), lambda a, b: 0.3, None)
        return [h.conflicts_with for h, _ in notes]

    # Notes about other things in the same words answer about those.
    assert apart("The gym opens at 6am on Saturday.", "The library opens at 9am on Saturday.", ["gym", "open",
                 "saturday"], "What time does the gym open on Saturday?") == [[], []]  # fmt: skip
    assert apart("The heron batch size is 100.", "The gannet batch size is 150 and the gannet timeout is 45 seconds.",
                 ["heron", "batch", "size"], "What is the heron batch size?") == [[], []]  # fmt: skip
    heron = ["heron", "batch", "size"], "What is the heron batch size?"
    assert apart("Heron: batch size 100", "Gannet: batch size 150", *heron) == [[], []]
    assert apart("Batch size (heron): 100", "Batch size (gannet): 150", *heron) == [[], []]
    # A subject line in a note's body is no email's subject.
    assert apart("Heron batch size: 100", "Notes\nSubject: heron migration\nBatch 150", *heron) == [[], []]
    assert apart("Heron batch size: 100", "From: Ana\nSubject: heron migration\n\nBatch 150", *heron) == [[2], [1]]
    # A verb of the question is no answer's only word: the library's hours are not the gym's.
    gym = ["gym", "open", "saturday"], "What time does the gym open on Saturday?"
    assert apart("The gym opens at 6am on Saturday.", "Library hours\nOpens 9am, closes 5pm.", *gym) == [[], []]
    # A heading over a line holding one word of the question may name another thing.
    bins = ["bin", "collection"], "When is the bin collection?"
    assert apart("# Bins\n\nBin collection: Tuesday", "# Recycling\n\nCollection every other Friday", *bins) == [
        [], []]  # fmt: skip
    assert apart("# Bins\n\nBin collection: Tuesday", "# Bins\n\nCollection every other Friday", *bins) == [
        [2], [1]]  # fmt: skip
    # A verb of the question is said each note's own way, and a sentence's end stands
    # between its words and the next one's.
    coach = ["coach", "spurn", "leave"], "what time does the coach leave for spurn"
    assert apart("Birders - coach trip to Spurn\nCoach leaves the library car park at 7am.", "Subject: Spurn on the"
                 " 25th\n\nMorning all - the coach departs at 7.30am from the car park.", *coach) == [[2], [1]]  # fmt: skip
    manual = ["manual", "due", "hoffmann"], "when is the hoffmann manual due"
    assert apart("Call with Hoffmann re HX-200 manual. Due Wed 28 Oct.", "From: k.berger@hoffmann.example\nThanks for"
                 " the HX-200 manual. Please deliver the translation by Friday 23 October?", *manual) == [[2], [1]]  # fmt: skip
    # A note holding one word of the question answers on the line holding it.
    prices = ["adult", "panto", "ticket", "price"], "adult panto ticket price"
    assert apart("Cinderella - panto tickets\nAdult tickets £13, child £8", "Box office (Sue)\nShows 14-17 Jan\n"
                 "Adult £12, child £8", *prices) == [[2], [1]]  # fmt: skip
    assert apart("Cinderella - panto tickets\nAdult tickets £13, child £8", "Box office (Sue)\nShows 14-17 Jan\n"
                 "Adult £13, child £8", *prices) == [[], []]  # fmt: skip
    # A time or a sum written two ways is one answer.
    def at(first: str, second: str) -> list[list[int]]:
        rehearsal = "Choir notes\nThe dress rehearsal is on {}."
        return apart(rehearsal.format(first), rehearsal.format(second), ["dress", "rehearsal"], "What time is the"
                     " dress rehearsal?")  # fmt: skip

    assert at("Thu 10 Dec at 7pm", "Thursday 10 December, 19:00") == [[], []]
    assert at("Thu 10 Dec at 7.30pm", "Thursday 10 December at 7:30pm") == [[], []]
    assert at("Thu 10 Dec at 7pm", "Thursday 10 December at 6:30pm") == [[2], [1]]
    # A title holding the question's words speaks for a line holding one of them too,
    # not for every dated line under it.
    planning = "Summer fair - planning\nCommittee meeting: Tue 5 May\nLeaflets out by 1 June\nThe fair: Saturday 20 June."
    plain = "Summer fair is on Saturday 20 June. Setup from Sat 20 June at 9am."
    assert apart(planning, plain, ["summer", "fair", "date"], "What date is the summer fair?") == [[], []]
    # The day an email was sent is no answer, asked for a date.
    fair = side(1, 1, "From: PTA\nDate: 4 May 2026\nSubject: Summer fair\n\nThe summer fair needs volunteers.",
                "2026-05-04", 0.9)  # fmt: skip
    date_given = side(2, 2, "Summer fair date: Sat 20 June, on the field.", "2026-05-06", 0.8)
    keys = ["summer", "fair", "date"]
    assert [h.conflicts_with for h in resolve([fair, date_given], keys, "What date is the summer fair?")] == [[], []]


def test_a_correction_answering_the_question_otherwise_means_the_note_whose_answer_is_about_as_much():
    question = "when is the dress rehearsal for the christmas concert"
    keys = ["christmas", "concert", "dress", "rehearsal"]
    schedule = side(1, 1, "Christmas concert - extra rehearsals\nSat 5 Dec 10am-1pm - Methodist Hall (full choir)\n"
                    "Thu 10 Dec 7pm - DRESS REHEARSAL at St Oswald's", "2025-10-15", 0.9)  # fmt: skip
    # The minutes answer about the concert only: the rehearsal moving says nothing of them.
    minutes = side(2, 2, "Choir committee minutes\n- Christmas concert confirmed: Sat 12 Dec, 7pm, in the parish"
                   " church", "2025-09-03", 0.8)  # fmt: skip
    email = side(3, 3, "From: Linda Marsh\nDate: 24 Nov 2025\nSubject: Dress rehearsal - change of day\n\nUpdate:"
                 " the dress rehearsal has moved to Friday 11 Dec, 6:30pm, still at St Oswald's.", "2025-11-24", 0.7)  # fmt: skip
    hits = [schedule[0], minutes[0], email[0]]
    chunks = {h.item_id: chunk for h, chunk in (schedule, minutes, email)}
    sides = truth.read(hits, chunks, keys, values.answers_at(question, values.wanted(question)), valued=True)
    # Vectors of short notes about one rehearsal sit about this close, and in a choir's
    # few notes the month and the church are common words, which name nothing.
    common = truth.Commonness(frozenset({"dec", "oswald"}))
    truth.resolve(sides, TimeIntent.of(question, date(2026, 1, 1)), lambda a, b: 0.46, None, common)
    assert [h.superseded_by for h in hits] == [3, None, None]


def test_asked_for_now_the_newer_page_answering_otherwise_goes_first_whatever_else_the_older_holds():
    question = "what do we charge for the main hall per hour now"
    keys = ["charge", "main", "hall", "hour"]
    rates = "# Church hall - hire rates {year}\n- Main hall: £{main} per hour\n- Small meeting room: £{small} per hour\n"
    # The older page's "no charge" for Sunday school holds a word of the question the
    # newer one does not.
    older = side(1, 1, rates.format(year=2025, main=18, small=10) + "- Sunday school: no charge", "2025-01-06", 1.0)
    newer = side(2, 2, rates.format(year=2026, main=21, small=12), "2026-01-05", 0.5)
    hits = [older[0], newer[0]]
    sides = truth.read(hits, {1: older[1], 2: newer[1]}, keys, values.answers_at(question, values.wanted(question)),
                       valued=True)  # fmt: skip
    truth.resolve(sides, TimeIntent.of(question, date(2026, 12, 7)), lambda a, b: 0.6, None)
    assert newer[0].score > older[0].score and "asked for now" in newer[0].reasons[0]


def test_a_page_dated_by_its_year_speaks_from_the_time_of_a_note_written_inside_it():
    question = "when's the oxalic acid treatment at the apiary"
    keys = ["oxalic", "acid", "treatment", "apiary"]
    rota = "Teaching apiary - winter jobs\nOxalic acid treatment: Sat 19 Dec, 11am, led by Carol"
    newsletter = "BKA newsletter - December\nOxalic acid treatment at the teaching apiary: Sunday 20 December, 11am."

    def conflicts(year: str) -> list[list[int]]:
        return disagreeing([(rota, year), (newsletter, "2025-12-01")], keys, question)

    assert conflicts("2025") == [[2], [1]]
    # Last year's page speaks of last winter.
    assert conflicts("2024") == [[], []]


def test_a_weekday_answers_a_question_asking_which_day_by_any_of_its_spellings():
    question = "Which day is the maritime museum closed?"
    keys = ["day", "maritime", "museum", "closed"]
    plan = "Harbourtown weekend - plan\n\nMaritime Museum: opens 10:00, closed on Mondays."
    chat = "[14/11/2026 19:02] Sam: the maritime museum is shut on Tuesdays btw\n[14/11/2026 19:03] Sam: opens at 10"

    def conflicts(other: str) -> list[list[int]]:
        return disagreeing([(plan, "2026-11-10"), (other, "2026-11-14")], keys, question)

    assert conflicts(chat) == [[2], [1]]
    # The chat's own date is no answer, and "Mon" is Monday.
    assert conflicts(chat.replace("Tuesdays", "Mon")) == [[], []]
    assert values.wanted(question).kind == "a date"
    assert values.wanted("date of the PTA summer fair").kind == "a date"


def test_a_notice_names_a_claim_by_two_words_of_its_title_and_its_time_or_all_of_a_long_title():
    from kenning.retrieval import notices

    assert notices.title_pairs("Weeding guidance, spring 2026") == [("weeding", "guidance"), ("guidance", "spring")]
    assert notices.title_pairs("Visits 2025") == []
    title = "Weeding guidance, spring 2026"
    claim_hit, claim_text = side(1, 1, "Weed adult non-fiction older than eight years.", "2026-03-09", 0.9, title=title)
    claim = truth.Side(claim_hit, claim_text, ["weeding", "guidance"], None)

    def names(line: str, of: truth.Side = claim) -> bool:
        hit, text = side(2, 2, f"## Weeding\n- {line}", "2026-04-20", 0.5)
        keys = [word for pair in notices.title_pairs(of.hit.title) for word in pair]
        return notices.names_claim(truth.Side(hit, text, keys, None), of, notices.title_pairs(of.hit.title))

    assert names("Update: the weeding guidance of 9 March is withdrawn.")
    assert names("Update, 20 April 2026: the weeding guidance of 9 March 2026 is withdrawn.")
    assert names("The weeding guidance of 2026-03-09 is withdrawn.")
    assert names("The spring weeding guidance is withdrawn until the audit.")  # every word of its title
    assert not names("The weeding guidance is withdrawn until the audit.")  # which one?
    assert not names("Update: the weeding guidance of 2 February is withdrawn.")  # another note
    assert not names("The guidance on weeding of 9 March is withdrawn.")  # not what the note is called
    assert not names("Update: the weeding guidance of 9 March is now on the intranet.")  # takes nothing back
    assert not names("If we were to withdraw the weeding guidance of 9 March, what then?")  # a hedge
    # A title of two words is named by its time: the pair alone may name the subject.
    page_hit, page_text = side(3, 3, "Runs on pg-main.", "2026-03-09", 0.9, title="Billing service")
    page = truth.Side(page_hit, page_text, ["billing", "service"], None)
    assert not names("Disregard the billing service alert from last night.", page)
    assert names("Disregard the billing service page of 9 March: it is out of date.", page)
    # A year names a claim whose title writes no time by its date, and one whose title
    # writes a time by that time.
    handbook_hit, handbook_text = side(4, 4, "25 days of leave.", "2026-02-01", 0.9, title="Staff handbook")
    handbook = truth.Side(handbook_hit, handbook_text, ["staff", "handbook"], None)
    assert names("The 2026 staff handbook is withdrawn.", handbook)
    assert not names("The 2025 staff handbook is withdrawn.", handbook)
    assert not names("The 2027 weeding guidance is withdrawn.")
    # Not a year further along the line, which says when something else happened.
    assert not names("The staff handbook rumour is withdrawn: the canteen closed in 2026, not the library.", handbook)


def test_crowding_never_puts_a_retraction_below_the_claim_it_takes_back():
    # The policy's "Weeding" line (its second hit) withdraws the guidance.
    policy_best, notice, claim = hit(1, 1, score=0.9), hit(2, 1, (17, 19), score=0.71), hit(3, 2, score=0.7)
    claim.retracted_by = notice.item_id
    hits = [policy_best, notice, claim]
    diversity.spread(hits)
    assert notice.score < claim.score
    truth.keep_above(hits)
    assert notice.score > claim.score
    assert any("which it takes back" in reason for reason in notice.reasons)


def test_crowding_keeps_a_chain_of_corrections_in_order():
    # a corrects b, which corrects c; a and b are each their document's second hit.
    first_a, a, first_b, b, c = hit(1, 1, score=1.0), hit(2, 1, (9, 12), score=0.99), hit(3, 2, score=0.995), hit(
        4, 2, (9, 12), score=0.985), hit(5, 3, score=0.98)  # fmt: skip
    b.superseded_by, c.superseded_by = a.item_id, b.item_id
    hits = [first_a, first_b, a, b, c]
    diversity.spread(hits)
    truth.keep_above(hits)
    assert a.score > b.score > c.score


def test_cjk_cues_as_people_write_them_and_the_same_characters_in_other_words():
    def kinds(title: str, text: str = "") -> tuple[str | None, str | None, bool]:
        said = cues.read(title, text)
        return said.correction, said.retraction, said.hedged

    # Corrections, retractions and drafts in the titles Japanese, Chinese and Korean notes use.
    assert kinds("訂正：定例会議の場所") == ("訂正", None, False)
    assert kinds("更正：数据库备份时间") == ("更正", None, False)
    assert kinds("勘误：报销流程") == ("勘误", None, False)
    assert kinds("정정: 직원 주차장") == ("정정", None, False)
    assert kinds("更新：VPNの設定") == ("更新：", None, False)
    assert kinds("取り消し：夏季休暇の方針") == (None, "取り消し", False)
    assert kinds("撤回：出差补贴标准") == (None, "撤回", False)
    assert kinds("철회: 보안 교육 일정") == (None, "철회", False)
    assert kinds("経費精算規程（案）")[2] and kinds("案：経費精算の締め日")[2]
    assert kinds("草案：打印机采购")[2] and kinds("초안: 회의실 예약 규칙")[2]
    # In a line of the text, as the English cues are read there.
    assert kinds("メモ", "定例会議は会議室aではなく、会議室bで行います。")[0] == "ではなく"
    assert kinds("备注", "数据库备份不再在凌晨两点运行，改为凌晨四点。")[0] == "不再"
    assert kinds("메모", "직원 주차장은 더 이상 지하 2층이 아닙니다.")[0] == "더 이상"
    assert kinds("メモ", "旧手順は使用しないでください。")[1] == "使用しないで"
    # The same characters doing other work: guidance (案内), an answer (答案), a plan
    # (方案), "or" (もしくは), an event cancelled (取消), software updated (更新しました),
    # a variable undefined (未定義), Amazon (아마존).
    for title, text in [
        ("会議室のご案内", "受付で案内を受けてください。"),
        ("答案", "答案是四十二。"),
        ("实施方案", "按照实施方案执行。"),
        ("連絡先", "電話もしくはメールで連絡してください。"),
        ("会议", "周五的会议取消了。"),
        ("作業記録", "サーバーのosを更新しました。"),
        ("エラー", "未定義の変数を参照しています。"),
        ("구매", "아마존에서 주문했습니다."),
    ]:
        said = cues.read(title, text.lower())
        assert (said.correction, said.retraction, said.hedge) == (None, None, 0), title
    # "If" opens a runbook's condition in any language: weak, as in English.
    assert not kinds("手順", "もしサーバーが応答しない場合は再起動してください。")[2]
    assert not kinds("步骤", "如果服务器无响应，请重启。")[2]


def test_telling_apart_many_hits_of_one_document_does_not_ask_every_pair():
    """Each hit was checked against every line range its document had kept, on the event
    loop: 350,000 comparisons for a search of 200 hits in one long document (1,800
    candidates), growing with the square of the candidates; these took minutes."""
    hits = [hit(i, 1, (10 * i + 1, 10 * i + 5)) for i in range(100_000)]
    hits += [hit(-i, 1, (10 * i + 3, 10 * i + 4)) for i in range(1_000)]  # each inside a kept one
    kept = diversity.distinct(hits, {})
    assert [h.item_id for h in kept] == list(range(100_000))


def test_what_is_cancelled_retracts_and_what_is_not_or_is_a_condition_does_not():
    def retraction(line: str, keys: list[str]) -> str | None:
        return cues.read("", line, "", keys).retraction

    assert retraction("Saturday's Ben Ledi hike is cancelled: wind warning.", ["ledi", "hike"]) == "is cancelled"
    assert retraction("please note that the ben ledi hike is cancelled.", ["ledi", "hike"]) == "is cancelled"
    for line in (
        "The standup has not been cancelled today.",
        "The standup hasn't been cancelled today.",
        "Orders that are cancelled before dispatch are refunded.",
        "Orders which have been cancelled today are refunded.",
        "## When a sailing is cancelled, refund the fare",
    ):
        assert retraction(line.lower(), ["standup", "today", "orders", "refunded", "sailing", "refund"]) is None, line



def test_a_notice_saying_what_it_takes_back_came_from_an_old_draft_is_no_hedge():
    notice = "Please disregard the item about the 2m net moving to Wednesdays. It was posted by mistake from an old draft."
    said = cues.read("Note", notice, notice, ["net", "wednesdays"])
    assert not said.hedged and said.retraction == "disregard"
    draft = "Draft: the 2m net moves to Wednesdays."
    assert cues.read("Note", draft, draft, ["net"]).hedged


def test_disregarding_a_message_names_what_it_announced_and_advice_to_ignore_a_thing_names_nothing():
    assert truth._taken_back("gwen: please disregard the bottling workshop announcement, it's off") == {
        "bottling",
        "workshop",
    }
    for advice in ("dad: ignore the red light on the router, it blinks after every update",
                   "ignore the background noise in the first minute", "ignore the old wifi password"):  # fmt: skip
        assert truth._taken_back(advice) == frozenset(), advice


def test_a_reply_saying_to_ignore_my_last_email_retracts_the_email_it_replies_to():
    question = "is someone coming to fit the thermostat on thursday"
    keys = ["thermostat", "fit", "coming"]
    first = "From: Mark Ellis\nDate: 7 Jan 2025\nSubject: Heating - new smart thermostat\n\nI've arranged for a Hive" \
        " thermostat to be fitted on Thursday 15 January, between 9 and 12."  # fmt: skip
    boiler = "From: Mark Ellis\nDate: 3 Jan 2025\nSubject: Boiler service\n\nThe boiler service is on Thursday 22" \
        " January; the engineer will check the thermostat too."  # fmt: skip
    reply = "From: Mark Ellis\nDate: 12 Jan 2025\nSubject: RE: Heating - new smart thermostat\n\nSorry, please ignore" \
        " my last email - I've decided against it for now."  # fmt: skip

    def marks(answer: str, *earlier: str) -> dict:
        notes = [side(1, 1, first, "2025-01-07", 0.9), side(2, 2, boiler, "2025-01-03", 0.8)]
        notes += [side(4 + n, 4 + n, text, "2025-01-02", 0.6) for n, text in enumerate(earlier)]
        return retracted([*notes, side(3, 3, answer, "2025-01-12", 0.7)], keys, question)

    assert marks(reply) == {1: 3, 2: None, 3: None}
    assert marks(reply.replace("ignore my last email", "disregard my last email about it")) == {1: 3, 2: None, 3: None}
    # Not another sender's reply, a forward, nor a reply saying the last email stands.
    for changed in (reply.replace("From: Mark Ellis", "From: Ana Ruiz"), reply.replace("RE:", "Fwd:"),
                    reply.replace("please ignore my last email", "my last email still stands, but ignore the rest")):  # fmt: skip
        assert marks(changed)[1] is None, changed
    # Of two emails of the thread, the last.
    assert marks(reply, first.replace("7 Jan", "2 Jan")) == {1: 3, 2: None, 3: None, 4: None}


def test_a_chat_line_giving_nothing_goes_on_in_its_writers_next_line_and_no_further():
    email = ("From: Pat Doyle\nSubject: Quiz night\n\nThe quiz night is on Friday 13 November, 7:30pm.", "2025-11-02")
    keys, question = ["quiz", "night"], "what time is the quiz night?"
    split = "[19:40] Gaz: lads quiz night confirmed\n[19:41] Gaz: thu 12 nov, 8pm, table 4"
    assert disagreeing([email, (split, "2025-11-02")], keys, question) == [[2], [1]]
    # A line giving a day is no line waiting for its value: the next is about darts.
    dated = "[19:40] Gaz: lads quiz night confirmed for fri 13 nov\n[19:41] Gaz: darts moved to 8pm thurs btw"
    assert disagreeing([email, (dated, "2025-11-02")], keys, question) == [[], []]
    # Nor a line naming it in passing, before the writer's next news.
    passing = "[19:40] Gaz: quiz night tickets are sorted\n[19:41] Gaz: darts is 8pm thurs this week"
    assert disagreeing([email, (passing, "2025-11-02")], keys, question) == [[], []]
    # Nor does another writer's line go on with it.
    other = "[19:40] Gaz: lads quiz night confirmed\n[19:41] Mo: darts is thu 12 nov, 8pm"
    assert disagreeing([email, (other, "2025-11-02")], keys, question) == [[], []]


def test_a_chat_writer_taking_back_my_message_means_their_line_about_it_and_not_one_in_the_same_export():
    keys, question = ["shed", "code"], "what is the shed code?"
    first = "[19:40] Imran: new shed code is 4721\n[19:41] Sue: thanks Imran"
    between = "[08:00] Sue: the shed code gets changed every month\n[08:02] Imran: I'll bring the mower back"
    taken_back = "[08:15] Imran: ignore my message about the new shed code, I mixed it up\n[08:16] Imran: it's 4712"
    notes = [side(1, 1, first, "2025-03-01", 0.7), side(2, 2, between, "2025-03-05", 0.9),
             side(3, 3, taken_back, "2025-03-08", 0.8)]  # fmt: skip
    # Imran's line of 5 March is about the mower: his message about the code is of 1 March.
    assert retracted(notes, keys, question) == {1: 3, 2: None, 3: None}
    # Said of a line above it in the same export, it takes back nothing else.
    wrong_group = "[18:02] Imran: the shed code at my work is 0090\n[18:03] Imran: sorry ignore my message, wrong group!"
    notes = [side(1, 1, first, "2025-03-01", 0.9), side(3, 3, wrong_group, "2025-03-08", 0.8)]
    assert retracted(notes, keys, question) == {1: None, 3: None}


def test_a_notice_cancelling_a_hike_and_saying_what_else_to_scrap_retracts_the_hike():
    keys, question = ["ben", "ledi", "hike", "meet"], "when does the ben ledi hike meet?"
    programme = side(1, 1, "Saturday 9 May, Ben Ledi hike: meet 8am at Callander main street car park.", "2025-05-01",
                     0.9)  # fmt: skip
    notice = side(2, 2, "Saturday's Ben Ledi hike is cancelled because of the storm warning, so scrap the minibus"
                  " booking.", "2025-05-07", 0.8)  # fmt: skip
    assert retracted([programme, notice], keys, question) == {1: 2, 2: None}


def test_a_reply_correcting_the_writers_own_email_means_that_one_of_the_thread():
    question = "what dates are we at the cottage?"
    keys = ["cottage", "dates"]

    def email(day: str, subject: str, body: str, sender: str = "Tom Hale") -> str:
        return f"From: {sender}\nDate: {day}\nSubject: {subject}\n\n{body}"

    opening = email("1 Mar 2025", "Summer cottage", "Cottage thread: ideas welcome, nothing booked.")
    booked = email("3 Mar 2025", "Re: Summer cottage", "Booked the cottage in Whitby for 3-10 July, £980.")
    last_summer = "Summer 2024 cottage: Bay Cottage, Filey, 5-12 July. Lovely."

    def marks(reply: str) -> dict:
        notes = [side(1, 1, opening, "2025-03-01", 0.6), side(2, 2, booked, "2025-03-03", 0.9),
                 side(3, 3, last_summer, "2024-07-05", 0.5), side(4, 4, reply, "2025-03-05", 0.8)]  # fmt: skip
        return superseded(notes, keys, question)

    # A reply's "my last email" is the writer's latest of the thread, "Re:" or not, and
    # only that one: not the thread's opening, nor last summer's cottage.
    fixed = email("5 Mar 2025", "Re: Summer cottage", "Sorry, my last email gave the wrong dates - the cottage is"
                  " 10-17 July.")  # fmt: skip
    assert marks(fixed) == {1: None, 2: 4, 3: None, 4: None}
    # "The first email" is the thread's first.
    first = fixed.replace("my last email", "the first email")
    assert marks(first)[1] == 4 and marks(first)[2] is None
    # The last email from someone else is not the writer's.
    other = fixed.replace("my last email", "the last email from the agency")
    assert marks(other)[1] is None
    # "The previous email" says not whose: of a thread of several, none is meant by it alone.
    previous = fixed.replace("my last email", "the previous email")
    assert marks(previous)[1] is None


def test_another_number_beside_the_words_of_a_how_to_question_replaces_nothing():
    question = "how do I change the default editor"
    changelog = side(1, 1, "tmux 2.1: change default formats; the default editor is read from EDITOR, 2 panes.",
                     "2022-06-09", 0.9)  # fmt: skip
    readme = side(2, 2, "The default mode of home directories was changed to 0700 to keep the default editor files"
                  " private.", "2023-05-25", 0.8)  # fmt: skip
    assert superseded([changelog, readme], ["default", "editor", "change"], question) == {1: None, 2: None}


def test_asked_which_thing_now_a_newer_note_must_name_such_a_thing_to_go_first():
    def ranked(older: str, newer: str, keys: list[str], question: str) -> list[int]:
        pairs = [side(1, 1, older, "2025-03-10", 0.9), side(2, 2, newer, "2025-10-02", 0.8)]
        return [h.item_id for h in resolve(pairs, keys, question)]

    band = ["maya", "book", "band"], "which book band is Maya on now?"
    assert ranked("Maya is now on Turquoise book band.", "Maya is on Gold band now.", *band) == [2, 1]
    laptop = ["priya", "laptop", "uses"], "which laptop does priya use now?"
    assert ranked("Priya uses a ThinkPad X1 laptop for work.", "Priya uses the standing desk at the office for"
                  " work.", *laptop) == [1, 2]  # fmt: skip
    broker = ["billing", "message", "broker", "use"], "which message broker does billing use now?"
    assert ranked("Billing uses RabbitMQ as its message broker.", "Billing message templates now use Markdown.",
                  *broker) == [1, 2]  # fmt: skip


def test_asked_where_or_who_notes_naming_no_name_in_common_disagree():
    question = "Where is the November book club meeting?"
    keys = ["meeting", "november", "book", "club"]
    email = "From: Anna Price\nSubject: November book club\n\nNext meeting Thursday 19 Nov, 7:30pm at The Fox & Hound" \
        " (back room). Book: Klara and the Sun."  # fmt: skip
    chat = "[28/10/2026 21:15] Beth: Reminder - November book club is at my house, 12 Elm Road, Thu 19 Nov. Bring wine!"
    same = "[28/10/2026 21:15] Beth: Reminder - November book club meeting at the Fox & Hound, 7:30. Bring wine!"
    assert disagreeing([(email, "2026-10-28"), (chat, "2026-10-28")], keys, question) == [[2], [1]]
    # Both naming the pub agree, whatever else each names; a title is no name ("Dr").
    assert disagreeing([(email, "2026-10-28"), (same, "2026-10-28")], keys, question) == [[], []]
    # Names written with a capital anywhere else answer nothing: who writes, "I", a
    # heading's words, the rota's tool, a weekday.
    pub = "# Book club\n\nNovember book club meeting is at The Fox & Hound, 7.30pm."
    for other in ("[28/11/2026 21:15] Beth: November book club meeting is postponed a week, Sarah is ill.",
                  "November book club meeting is Sat 21 Nov, 7.30pm"):  # fmt: skip
        assert disagreeing([(pub, "2026-11-28"), (other, "2026-11-28")], keys, question) == [[], []]
    offsite = ["team", "offsite"], "where is the team offsite?"
    assert disagreeing([("# Team Offsite Planning\n\nTeam offsite location: Lisbon", "2026-11-02"),
                        ("The team offsite is in Lisbon this year.", "2026-11-02")], *offsite) == [[], []]  # fmt: skip
    on_call = ["call", "saturday"], "who is on call saturday"
    for other in ("[27/11/2026 17:06] Priya: yes I'm on call saturday, ping me",
                  "On call Saturday - check the rota in PagerDuty"):  # fmt: skip
        assert disagreeing([("# Weekend on-call\n\nOn call Saturday: Priya Shah.", "2026-11-27"),
                            (other, "2026-11-27")], *on_call) == [[], []]  # fmt: skip
    rota = "# Weekend on-call\n- Saturday 12 December: Dr Hughes"
    assert disagreeing([(rota, "2026-11-30"), ("[17:06] Carla: on call Saturday is Dr Amin", "2026-11-30")],
                       ["call", "saturday", "december"], "who is on call saturday 12 december") == [[2], [1]]  # fmt: skip
