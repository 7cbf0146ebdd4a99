"""How much of a question the best hits hold, read from a real index: the share the
abstention floor weighs, and the names no text holds."""

from __future__ import annotations

from datetime import date

import pytest

from kenning.retrieval.coverage import ABSENT_WEIGHT, Asked, idf, not_namesakes, weight, written, written_as_names
from kenning.retrieval.dates import TimeIntent
from kenning.retrieval.query import parse
from kenning.store import sources
from kenning.store.database import Database
from kenning.store.hits import chunk_texts
from tests.helpers import store_document

NOTES = {
    "dana.md": "Dana Whitfield, head of supply engineering, is based in Glasgow.",
    "stipend-2025.md": "# On-call stipend (2025)\nEngineers on the rota get £150 per week on call.",
    "log.md": "## 2024\nOn call rota moved to weekly handovers in 2024.",
    "retro.md": "Last year the team held a retro every quarter to agree on actions.",
    "herbs.md": "The herbs grow well on the kitchen windowsill.",
}


async def measure(db: Database, question: str, stored: bool = False):
    if not stored:
        ids = await sources.sync_sources(db, [("notes", "/n", "default")])
        for path, text in NOTES.items():
            await store_document(db, ids["notes"], path, text)
    async with db.reader() as conn:
        rows = await conn.execute_fetchall("SELECT i.id, d.path FROM items i JOIN documents d ON d.id = i.document_id")
    item = {path: item_id for item_id, path in rows}
    chunks = await chunk_texts(db, list(item.values()))
    asked = Asked(db, parse(question), question)
    period_words = TimeIntent.of(question, date.today()).words
    coverage = await asked.measure({item_id: ("", "", chunk.content) for item_id, chunk in chunks.items()}, period_words)
    return coverage, item


async def test_what_vouches_for_a_period_must_hold_the_rest_of_the_question(db: Database):
    coverage, item = await measure(db, "What was the on-call stipend in 2024?")
    # The log speaks of 2024 and of the rota, not of the stipend.
    assert coverage.beside_period[item["log.md"]] < 0.5
    assert coverage.beside_period[item["stipend-2025.md"]] == 1.0


async def test_the_verb_after_did_we_is_left_out_of_what_vouches_for_a_period(db: Database):
    # The stipend note says what was agreed without the word "agree".
    coverage, item = await measure(db, "What stipend did we agree for 2025?")
    assert coverage.beside_period[item["stipend-2025.md"]] == 1.0
    assert coverage.beside_period[item["retro.md"]] == 0.0


async def test_the_verb_after_did_and_its_subject_is_left_out_too(db: Database):
    # "£150 per week" says how much, not "grow".
    coverage, item = await measure(db, "By how much did the on-call stipend grow in 2025?")
    assert coverage.beside_period[item["stipend-2025.md"]] == 1.0
    assert coverage.beside_period[item["herbs.md"]] == 0.0


async def test_the_verb_is_kept_when_it_is_all_the_rest_of_the_question(db: Database):
    coverage, item = await measure(db, "What did we agree in 2025?")
    assert coverage.beside_period[item["stipend-2025.md"]] == 0.0


async def test_a_word_no_note_holds_weighs_little_more_than_the_rarest_held_in_a_few_notes(db: Database):
    # "Where is Dana based these days?": five notes, and "days" in none of them.
    coverage, item = await measure(db, "Where is Dana based these days?")
    assert coverage.shares["days"] == pytest.approx(ABSENT_WEIGHT * coverage.shares["dana"])
    assert coverage.held[item["dana.md"]] > 0.6


def test_in_a_library_of_hundreds_of_chunks_a_word_none_holds_keeps_bm25s_weight():
    assert weight(600, 0) == idf(600, 0)
    assert weight(5, 0) == pytest.approx(ABSENT_WEIGHT * idf(5, 1))
    assert weight(5, 2) == idf(5, 2)


async def test_a_period_s_own_name_is_not_a_name_no_text_holds(db: Database):
    coverage, _ = await measure(db, "What was the stipend in H1 2025?")
    assert coverage.unknown == []


async def test_a_hyphenated_name_matched_only_through_stemming_is_unknown(db: Database):
    ids = await sources.sync_sources(db, [("notes", "/n", "default")])
    await store_document(db, ids["notes"], "export.md", "The billing export runs nightly.")
    await store_document(db, ids["notes"], "router.md", "The edge-router listens on port 8443.")
    coverage, _ = await measure(db, "Which port does the billing-exporter service listen on?", stored=True)
    assert coverage.unknown == ["billing exporter"]
    # A plural of a name written in the singular is the same name.
    coverage, _ = await measure(db, "Which port do the edge-routers listen on?", stored=True)
    assert coverage.unknown == []


async def test_a_relative_period_is_left_out_like_a_named_one(db: Database):
    coverage, item = await measure(db, "What was the on-call stipend last year?")
    # "last" and "year" are the period, which the note holding them does not answer for.
    assert coverage.beside_period[item["stipend-2025.md"]] == 1.0
    assert coverage.beside_period[item["retro.md"]] == 0.0


def test_a_page_about_a_namesake_is_not_about_what_the_question_names():
    texts = {
        1: "# Mobile Platform team\nWe build the device layer under the technician app.\n- Standup 09:45.",
        2: "# Mobile Apps team\nWe build the screens technicians use.",
        3: "# Release train\nThe release train leaves every other Wednesday.",
    }
    question = "What time is the Mobile Apps team's standup?"
    names = parse(question).names
    assert not_namesakes([1, 2, 3], texts, question, names) == [2, 3]
    # With no page holding the name whole, nothing tells a namesake from a paraphrase.
    assert not_namesakes([1, 3], texts, question, names) == [1, 3]
    # A later chunk of the Apps team's page, under its title, that names the other team.
    texts[4] = "Mobile Apps team\nMobile Apps team > Rituals\nStandup 10:00, with the Mobile Platform team on Fridays."
    assert not_namesakes([1, 2, 4], texts, question, names) == [2, 4]
    # A plural the page writes in the singular is still the name.
    texts[2] = "# Mobile App team\nWe build the screens technicians use."
    assert not_namesakes([1, 2, 3], texts, question, names) == [2, 3]


def test_a_page_naming_the_thing_asked_about_under_another_name_is_about_that_one():
    texts = {
        1: "# Ardnish booking office\nOpening hours: 07:00-19:00.\nThe Lowmoor office sells island tickets.",
        2: "# Carrick pier\nThe Carrick booking office moves next spring.",
        3: "# Booking\nEvery booking office takes cards.",
    }
    question = "What are the opening hours of the Carrick booking office?"
    assert not_namesakes([1, 2, 3], texts, question, parse(question).names) == [2, 3]
    # A page naming it too is about it as well.
    texts[1] += "\nCarrick tickets are sold here."
    assert not_namesakes([1, 2, 3], texts, question, parse(question).names) == [1, 2, 3]
    # The same name in the plural or singular is no other name.
    question = "What time does the Harbours team meet?"
    texts[4] = "# Harbour team\nWe meet at 09:00."
    assert not_namesakes([4], texts, question, parse(question).names) == [4]
    # Nor is the name with or without its accents, and a verb after a name names no thing.
    question = "What are the opening hours of the Zürich booking office?"
    texts[5] = "# Zurich booking office\nOpen 9-5."
    assert not_namesakes([5], texts, question, parse(question).names) == [5]
    question = "Which port does Redis listen on?"
    texts[6] = "Valkey listens on 6380."
    assert not_namesakes([6], texts, question, parse(question).names) == [6]


def test_a_question_in_lower_case_names_what_the_notes_write_as_a_name():
    notes = [
        "# Birders' trip\n\nWetherby Birders: coach trip to Spurn Point on Sunday. The coach leaves at 7am.",
        "Riverside Community Choir — Spring Concert\nSaturday 21 March. Tickets for the concert at the door.",
        "SPURN POINT WALK. Coach parking by the Discovery Centre.",
    ]
    asked = "how much is the coach to spurn point for the spring concert"
    assert written_as_names(asked, parse(asked), notes) == {"spurn", "point"}
    # A question that capitalises a word of its own meant its lower-case words so.
    asked = "how much is the coach to spurn point for the Riverside concert"
    assert written_as_names(asked, parse(asked), notes) == frozenset()


def test_a_capital_after_a_time_a_bullet_or_a_lists_comma_names_nothing():
    asked = "how much is the coach ticket for the rspb trip"
    for line in ("07:00 Coach leaves the library.", "- [ ] Coach booked", "• Coach £28 return", "a) Coach firm",
                 "Sat 7 June Coach trip", "Bring: water, snacks, Ticket and a raincoat", "“Coach leaves at 7,” said Jo"):  # fmt: skip
        assert written_as_names(asked, parse(asked), [line]) == frozenset(), line
    assert written_as_names(asked, parse(asked), ["We booked with the RSPB group. Tickets from Coach Co."]) == {"coach"}
    # A title's capitals, or a word in capitals, name nothing.
    asked = "what time does the parish council meet, bring your passport"
    notes = ["# Minutes of the Parish Council\n\nThe council meets at 7pm. Bring your PASSPORT."]
    assert written_as_names(asked, parse(asked), notes) == frozenset()


def test_a_name_of_no_words_is_written_nowhere():
    assert written("").search("any text at all") is None
    assert written("edge routers").search("the Edge-Router in rack 4") is not None
