"""User input can never become FTS5 syntax; natural questions still match."""

from __future__ import annotations

import sqlite3

import pytest

from kenning.retrieval.query import cjk_expression, fts_expression, parse, phrasal, terms


@pytest.fixture
def fts():
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE t USING fts5(body, tokenize='porter unicode61 remove_diacritics 2')")
    conn.executemany(
        "INSERT INTO t(body) VALUES (?)",
        [("How to rotate the signing key",), ("Running the daemon under systemd",), ("NEAR the col:x operator",)],
    )
    return conn


def matches(conn: sqlite3.Connection, query: str) -> list[str]:
    expression = fts_expression(query)
    if expression is None:
        return []
    return [row[0] for row in conn.execute("SELECT body FROM t WHERE t MATCH ? ORDER BY rank", (expression,))]


@pytest.mark.parametrize(
    "hostile",
    ['"unbalanced', "NEAR(a b)", "col:x", "-daemon", "rotate*", "a AND OR NOT b", "(((", "^start", "body:rotate", "'; DROP TABLE t; --"],
)
def test_operators_and_quotes_are_plain_text(fts, hostile):
    matches(fts, hostile)  # raises sqlite3.OperationalError if any syntax leaked through
    assert fts.execute("SELECT count(*) FROM t").fetchone()[0] == 3


def test_a_natural_question_matches_by_its_content_words(fts):
    assert matches(fts, "how do I rotate a key?")[0] == "How to rotate the signing key"
    assert matches(fts, "what runs daemons?") == ["Running the daemon under systemd"]


def test_stopwords_are_dropped_unless_nothing_else_is_left():
    assert terms("What is the signing key") == ["signing", "key"]
    assert terms("to be or not to be") == ["to", "be", "or", "not"]
    assert fts_expression("?!...") is None
    assert fts_expression("NEAR col:x") == '"near" OR "col" OR "x"'


def test_quoted_words_and_hyphenated_names_are_phrases(fts):
    query = parse('Where are the "break glass" credentials for pg-main kept?')
    assert query.phrases == (("break", "glass"), ("pg", "main"))
    assert query.terms == ("credentials", "kept")
    assert query.expression == '"break glass" OR "pg main" OR "credentials" OR "kept"'
    fts.executemany("INSERT INTO t(body) VALUES (?)", [("break the glass, then rotate",), ("the break glass account",)])
    assert matches(fts, '"break glass"') == ["the break glass account"]


def test_a_time_written_with_hyphens_is_words_not_a_name():
    for question, words in (
        ("What was revenue in 2025-Q3?", ("revenue", "2025", "q3")),
        ("What did we ship in 2025-W38?", ("ship", "2025", "w38")),
        ("Who was on call on 2025-09-18?", ("call", "2025", "09", "18")),
    ):
        query = parse(question)
        assert (query.terms, query.phrases) == (words, ()), question
        assert not {name for name in query.names if " " in name}, question
    # An identifier holding a date is still a name.
    assert parse("What does advisory FH-2025-07 cover?").phrases == (("fh", "2025", "07"),)


def test_an_ordinal_is_found_however_it_is_written(fts):
    fts.executemany(
        "INSERT INTO t(body) VALUES (?)",
        [("At the end of month three you have a probation review",), ("Reviews happen on the 3rd floor",),
         ("Pay day is the end of every month",), ("The third floor has the quiet room",)],
    )  # fmt: skip
    found = matches(fts, "What comes at the end of the third month?")
    assert found[0] == "At the end of month three you have a probation review"
    assert "Reviews happen on the 3rd floor" in found
    floors = {"The third floor has the quiet room", "Reviews happen on the 3rd floor"}
    assert set(matches(fts, "where is the 3rd floor")[:2]) == floors
    # A cardinal keeps its own form.
    assert parse("3 days").expression == '"3" OR "days"'
    # "first" as often means the earliest, "second" a unit of time: only "1st" and "2nd".
    assert parse("the first review").expression == '("first" OR "1st") OR "review"'
    assert parse("requests per second").expression == '"requests" OR "per" OR ("second" OR "2nd")'


def test_question_words_and_time_words_carry_no_topic():
    assert parse("How many employees does Fernhill have now?").terms == ("employees", "fernhill")
    assert parse("What is the latest version of the app?").terms == ("version", "app")
    assert parse("Fernhill's revenue").terms == ("fernhill", "revenue")
    assert parse("latest").terms == ("latest",)


def test_names_are_capitalised_words_inside_a_sentence_and_hyphenated_words():
    assert parse("Who is the lead of Project Falcon?").names == {"project", "falcon"}
    assert parse("Which port does billing-exporter use?").names == {"billing exporter"}
    # With a function word in it, a hyphenated word is the language's, not a name.
    shut_off = parse("Where is the shut-off valve for the mains water?")
    assert shut_off.names == frozenset() and shut_off.phrases == (("shut", "off"),)
    assert parse("Which port does orders-to-ledger use?").names == {"orders to ledger"}
    assert parse("Is node-a in me-south-1?").names == {"node a", "me south 1"}
    # So is a modifier: "full-time", "self-service", "Polish-language".
    assert parse("How many full-time staff use self-service kiosks?").names == frozenset()
    assert parse("Which release got a Polish-language interface?").names == frozenset()
    assert parse("When does the invoice-archiver run?").names == {"invoice archiver"}
    # A title capitalises every word: that is style, not names.
    assert parse("Breast Cancer Survival and Soy").names == frozenset()
    assert parse("Flaxseeds vs. Chia Seeds").names == frozenset()
    # A sentence capitalises an abbreviation too: a ship's prefix is no sign of a title.
    assert parse("Who is the master of MV Guillemot?").names == {"mv", "guillemot"}
    # A title before a person's name is no part of the name a note gives.
    assert parse("Which ship does Captain Ally Munro command?").names == {"ally", "munro"}


def test_a_thing_of_the_askers_own_named_by_one_word_is_told_from_a_longer_one():
    assert parse("What tyre pressure does my motorbike need?").owned == {"motorbike"}
    assert parse("When is our boat's next service?").owned == {"boat"}
    assert parse("When is my motorbike's MOT due?").owned == {"motorbike"}
    # "vegetable" says which plot, and "car" which insurance.
    assert parse("When is the yearly payment for my vegetable plot due?").owned == frozenset()
    assert parse("When is my car insurance due for renewal?").owned == frozenset()
    # What is asked for is no thing the asker owns: the notes may say "Base pay".
    for asked in ("What is my salary?", "What was our revenue in Q3 2025?", "How do I reset my password?"):
        assert parse(asked).owned == frozenset(), asked


def test_a_question_for_a_fact_is_told_from_a_topic():
    for asked in ("How do I restart the ledger?", "Which port does it use", "When is payday?", "How many seats?"):
        assert parse(asked).question, asked
    assert parse("通勤手当の上限はいくらですか？").question
    for topic in ("Living Longer by Reducing Leucine Intake", "Is Kimchi Good For You?", "How to Get Kids to Eat",
                  "Why Prevention is Worth a Ton of Cure", "restart ledger?", "Eating Healthy on a Budget",
                  "price list 2026", "opportunity cost", "negotiating rent", "tips to reduce cost",
                  "argument over the deposit", "cost of living crisis", "price of salt", "Household Energy Cost",
                  "hidden cost of meetings", "Lisbon cost of living", "total cost of ownership laptops",
                  "budget price per head ideas", "shipping cost to australia", "the real cost to the team",
                  "security deposit for the flat"):  # fmt: skip
        assert not parse(topic).question, topic
    # Keywords naming the kind of value they ask for are a fact question put as a search.
    for keywords in ("crux day pass price", "Harbury cinema club membership price", "cost of a hydraulic brake bleed",
                     "vet phone number", "phone number for the vet", "wedding venue deposit", "Netflix Premium price",
                     "registration fee for NMW 2027", "room hire fee for Hall 2"):  # fmt: skip
        assert parse(keywords).question, keywords
    assert parse("crux day pass price").asked_for == {"price"}


def test_the_words_naming_the_kind_of_answer_are_told_apart():
    assert parse("Which city does the lead of Project Lantern work from?").asked_for == {"city"}
    assert parse("What time zone does the maintainer work in?").asked_for == {"time", "zone"}
    assert parse("How many days of sick pay do employees get?").asked_for == {"days"}
    assert parse("How long are audit logs retained?").asked_for == {"long"}
    assert parse("In which dispatch-api release were idempotency keys added?").asked_for == {"release"}
    # The word after the kind is the question's verb unless an auxiliary follows it.
    assert parse("Which band played at the party?").asked_for == {"band"}
    # A name is what the question is about, not the kind of answer.
    assert parse("Which VPN client do new starters install?").asked_for == {"client"}
    assert parse("Which service crashed?").asked_for == {"service"}
    # A name right after the question word is its subject; "what kind of" leads to the kind.
    assert parse("Which dispatch-api endpoint returns 404?").asked_for == {"endpoint"}
    assert parse("What kind of database does the ledger use?").asked_for == {"database"}
    for asked in ("What is the policy on dogs?", "When is payday?", "How much did the offsite cost?",
                  "Whose laptop was stolen?"):  # fmt: skip
        assert parse(asked).asked_for == frozenset(), asked


def test_a_word_in_a_verbs_place_is_the_relation_asked_about():
    assert parse("Which neighbours could I borrow a ladder from?").relating == {"borrow"}
    assert parse("Where do we park bikes at the Bristol office?").relating == {"park"}
    assert parse("What time do we usually meet?").relating == {"meet"}
    assert parse("Who was to draw up the incident commander rota for Q4?").relating == {"draw"}
    assert parse("Who will chair the review board?").relating == {"chair"}
    # Before the preposition a question ends on, and right after a one-word kind of answer.
    assert parse("Which port does the notifier listen on?").relating == {"listen"}
    assert parse("What city is Brookfield Energy based in?").relating == {"based"}
    assert parse("Which company supplies the internet line at Millhaven Central?").relating == {"supplies"}
    # After "did" and its subject, before a preposition: the period rule does not ask the
    # note dated in 2025 to say "grow" ("Visits: up 18% on 2024").
    assert parse("By how much did library visits grow in 2025?").relating == {"grow"}
    assert parse("What did the Team plan cost per seat in 2019?").relating == {"cost"}
    assert parse("By how much did the number of visitors grow in 2025?").relating == {"grow"}
    assert parse("How much did the price of coffee rise in 2024?").relating == {"rise"}
    assert parse("When did Ruth join the board in 2021?").relating == frozenset()
    # Not a subject or an object: "motorbike", "tyres", "ladder" after its article, "lead".
    assert parse("When does Dana's motorbike need tyres?").relating == frozenset()
    assert parse("When does the motorbike need tyres?").relating == frozenset()
    assert parse("Who is the lead of the board?").relating == frozenset()
    assert parse("Which message broker is used for jobs?").relating == frozenset()


def test_cjk_runs_are_cut_into_overlapping_pairs():
    assert cjk_expression("最小订单量") == '"最小" OR "小订" OR "订单" OR "单量"'
    assert cjk_expression("RT-12 平板") == '"平板"'
    assert cjk_expression("no cjk here") is None
    # Quoted, the pieces are one phrase; mixed with other words, the main index judges it.
    assert cjk_expression('"鍵署名" 設定') == '"鍵署 署名" OR "設定"'
    assert cjk_expression('"部署脚本 deploy"') is None


@pytest.mark.parametrize(
    ("words", "expected"),
    [
        (("self", "service"), True),
        (("full", "time"), True),
        (("check", "in"), True),
        (("invoice", "archiver"), False),
        (("me", "south", "1"), False),
    ],
)
def test_a_hyphenated_word_of_the_language_is_told_from_a_name(words: tuple[str, ...], expected: bool) -> None:
    assert phrasal(words) is expected


def test_a_code_or_a_version_is_a_name_and_a_time_a_price_or_a_date_is_not():
    assert {"ic50", "3 3", "shared_buffers", "5 3 1"} <= parse("Is the IC50 in 3.3, shared_buffers or 5.3.1?").names
    assert "3 3" in parse("Is the T400 on 3.3 a problem?").names
    for question in ("When is standup, 9.30?", "Is a coffee 3.50?", "What is on for 12.03.2026?", "Is it 0.5 mg?",
                     "What does the covid19 policy say?", "What changed in v2?", "What is the per-person budget?",
                     "What are we reading in October?", "Who works on Tuesdays?", "Is the dose 2.5 ml?",
                     "How long is the 2.5 hour hike?", "Is it £3.5?", "What is on at 1.2.26?", "What does App V2 add?"):  # fmt: skip
        assert parse(question).names == frozenset(), question
