"""The kind of value a fact question asks for, and whether a hit states one
(kenning/retrieval/values.py): what the floor refuses when the page about the subject
never gives the value asked for."""

from __future__ import annotations

import pytest

from kenning.api import Hit
from kenning.retrieval.values import states, stating_first, value_at, wanted

PERSON = """---
title: Noor Haddad
updated: 2025-02-28
---
# Noor Haddad

- Job title: Staff Site Reliability Engineer
- Based in London, in Bristol every other week.
"""


@pytest.mark.parametrize(
    ("question", "kind"),
    [
        ("What year did Noor Haddad join Fernhill?", "a year"),
        ("Since which year has Cartotile been our supplier?", "a year"),
        ("What time is the Mobile Apps team's standup?", "a time of day"),
        ("What are the opening hours of the Carrick booking office?", "opening or working hours"),
        ("What hours does the head of engineering work?", "opening or working hours"),
        ("What colour is the hall painted?", "a colour"),
        ("Which port does the notifier service listen on?", "a port"),
        ("Which PostgreSQL version does pg-analytics run?", "a version"),
        ("What is the top speed of the Gannet?", "a speed"),
        ("How deep is the water alongside the pier?", "a length"),
        ("What is the gross tonnage of the Gannet?", "a weight"),
        ("What is the fuel tank capacity of the Fulmar?", "a volume"),
        ("What is the maximum attachment size?", "a size"),
        ("How much does the window cleaner cost?", "an amount"),
        ("What do we charge for the main hall per hour now?", "an amount"),
        ("What salary does the Operations Manager earn?", "an amount"),
        ("What was the yearly rent for the depot in 2024?", "an amount"),
        ("What is the chargeback fee on card payments?", "a fee or rate"),
        ("How many vans does the Leeds depot have?", "a number"),
        ("How much money does the owning project of session_store have?", "an amount"),
        ("What is the support phone number for Gold plan customers?", "a phone number"),
        ("Which email address do I send receipts to?", "an email address"),
        ("What is the street address of the Bristol office?", "a street address"),
        ("What is our Placely account ID?", "an identifier"),
        ("What date is the summer fair?", "a date"),
        ("Which day is the maritime museum closed?", "a date"),
        ("What week is the kitchen being delivered?", "a date"),
    ],
)
def test_the_form_of_a_question_names_the_kind_of_value_it_asks_for(question, kind):
    found = wanted(question)
    assert found is not None and found.kind == kind


@pytest.mark.parametrize(
    "question",
    [
        "Who approved ADR-0030?",
        "Which city is Brookfield Energy based in?",
        "What time zone does Kofi work in?",
        "What is the dispatch API rate limit per customer?",
        "What time range is covered by the main dataset of Project Fjord?",
        "Who is the escalation contact for the ledger outside business hours?",
        "What number do I call outside normal working hours?",
        "What hours did Priya log last week?",
        "What is the maximum number of working hours per week?",
    ],
)
def test_kinds_any_capitalised_word_could_answer_are_not_judged(question):
    assert wanted(question) is None


def test_a_note_s_own_date_is_not_a_year_it_states():
    year = wanted("What year did Noor Haddad join Fernhill?")
    assert not states(year, PERSON)
    assert states(year, PERSON + "- Joined Fernhill in 2019.\n")


def test_a_count_must_stand_near_what_is_counted_and_a_date_is_not_one():
    vans = wanted("How many vans does the Leeds depot have?")
    assert not states(vans, "# Leeds depot, 9 October 2025\n\n14 technicians work from the Leeds depot.")
    assert states(vans, "# Leeds depot\n\nThe depot runs 12 vans and two trailers.")
    assert states(vans, "# Leeds depot\n\n- Vans: twelve, all electric.")


def test_a_count_of_days_of_something_counts_that_thing_not_any_days():
    sick = wanted("How many days of sick pay do employees get?")
    assert not states(sick, "# Holiday\n\nEveryone gets 25 days of holiday a year plus bank holidays.")
    assert not states(sick, "# Pension\n\n- Fernhill pays a pension contribution of 5 % of salary.")
    assert states(sick, "# Sickness\n\nSick pay: 10 days a year at full pay.")
    lock = wanted("After how many minutes of inactivity must a laptop lock its screen?")
    assert states(lock, "Laptops must lock the screen after 5 minutes of inactivity.")


def test_how_often_a_thing_happens_counts_no_things_but_a_length_asked_for_is_the_amount():
    laptops = wanted("How many staff laptops are there?")
    assert not states(laptops, "Staff laptops are replaced every four years.")
    assert states(laptops, "We have 40 staff laptops, replaced every 4 years.")
    assert states(wanted("How much annual leave do staff get?"), "Staff get 25 days of annual leave a year.")
    assert states(wanted("How much notice must staff give?"), "Staff must give four weeks' notice.")
    assert states(wanted("How many days of sick pay do employees get?"), "Staff get 10 days of sick pay.")


def test_a_count_stands_on_the_same_line_as_what_it_counts():
    floors = wanted("How many floors does the Kanda Square building have?")
    itinerary = "## Tokyo (5 nights)\n\n- Hotel: Mitsui Garden Ginza, 13th floor, river view."
    assert not states(floors, itinerary)
    assert states(floors, "The Kanda Square building has 14 floors above ground.")
    # A sentence wrapped over two lines is one line.
    assert states(floors, "The Kanda Square building has\n14 floors above ground.")
    # A table's header row, or a list's lead-in, names what the rows count.
    vans = wanted("How many vans does the Leeds depot have?")
    assert states(vans, "| Depot | Vans |\n|---|---|\n| Leeds | 12 |")
    port = wanted("Which port does the metrics endpoint use?")
    assert states(port, "Ports:\n- 9187 (metrics)\n- 9188 (admin)")
    # A row whose first cell names them gives its value, however long the label.
    borrowers = wanted("How many active borrowers does the library service have?")
    kpis = "| Measure | Value |\n|---|---|\n| Active borrowers (used a card in the last 12 months) | 18,240 |"
    assert states(borrowers, kpis)
    assert not states(borrowers, "| Measure | Value |\n|---|---|\n| New members | 1,515 |")


def test_how_much_with_nothing_counted_asks_for_no_kind():
    assert wanted("How much of that is left?") is None
    assert wanted("How much is in the ISA currently?") is None
    assert wanted("How many are on the rota?") is None
    assert wanted("How many vans does the Leeds depot have?") is not None
    # A verb right after "how much" says the question measures a change, not a number of
    # libraries.
    assert wanted("By how much did library visits grow in 2025?") is None
    assert wanted("How many people did we hire in 2025?").kind == "a number"
    assert wanted("How much are tickets for the festival?").kind == "a number"


def test_how_much_a_thing_is_counts_the_thing_past_the_verb_and_its_article():
    assert wanted("how much is the coach to spurn point").near == ("coach",)
    assert wanted("How much was the deposit on the new flat?").near == ("deposit",)
    assert wanted("How much is my mobile phone contract a month now?").near == ("mobile", "phone")
    # Answered by a number beside it, not only by a sum: "a storage quota of 50 GB".
    quota = wanted("how much is the storage quota")
    assert quota.near == ("storage", "quota") and states(quota, "Each user has a storage quota of 50 GB.")


@pytest.mark.parametrize(
    ("keywords", "kind"),
    [
        ("crux day pass price", "an amount"),
        ("cost of a hydraulic brake bleed", "an amount"),
        ("Price for a half plot?", "an amount"),
        ("annual membership fee", "a fee or rate"),
        ("vet phone number", "a phone number"),
        ("date of the PTA summer fair", "a date"),
        ("registration fee for NMW 2027", "a fee or rate"),
        ("room hire fee for the Scout Hut", "a fee or rate"),
    ],
)
def test_keywords_naming_a_kind_of_value_ask_for_it_as_a_question_does(keywords, kind):
    assert wanted(keywords).kind == kind


@pytest.mark.parametrize(
    "question",
    [
        "What date format does the export use?", "What day-to-day tasks does Sam do?", "Which day nursery did we pick?",
        "which day shift does Tom work", "What do I need to pay attention to?", "What does the charge light mean?",
        "What should I do if the laptop won't charge?", "What did the cost review conclude?",
        "What days of annual leave do I have left?", "What should I spend time on?", "What do I pay with at the car park?",
    ],
)  # fmt: skip
def test_a_date_or_a_sum_is_not_asked_for_by_words_naming_other_things(question):
    assert wanted(question) is None


@pytest.mark.parametrize("keywords", ["code for the communal shed", "price", "price list 2026", "pricing page"])
def test_keywords_naming_no_kind_at_their_ends_ask_for_none(keywords):
    assert wanted(keywords) is None


def test_how_much_of_a_thing_is_a_number_beside_it_or_a_sum_of_money_anywhere():
    grant = wanted("How much grant was awarded for the new slipway?")
    assert states(grant, "The Fund has withdrawn the £1.2m award for the new slipway.")
    assert states(grant, "Grant: 1.2 million.")
    assert not states(grant, "The slipway opens in 2027; 40 cars a day may land there.")
    # "How many" counts things, which a sum of money does not.
    assert not states(wanted("How many slipways were awarded?"), "The £1.2m award for the new slip.")
    # The sum is a value the truth signals compare, wherever it stands.
    rent, line = wanted("How much is the rent for a full plot?"), "Rent for a full plot is £58."
    assert value_at(rent, line, line.index("£")) and not value_at(rent, line, line.index("full"))


def test_a_headcount_is_read_in_whichever_word_the_note_uses():
    employees = wanted("How many employees does the funder of Project Condor have?")
    assert states(employees, "Kallio Research is a regional fund. About 3,615 people work there.")
    assert states(wanted("How many people does Stellan Foundation employ?"), "Staff: roughly 2,306.")
    assert not states(employees, "Kallio Research was founded in 1979 and has 4 offices in the north of England.")
    # A rota or a team counts its people by their role.
    people = wanted("How many people are on the platform on-call rota?")
    assert states(people, "- 2026-01-20 — Platform on-call grows to 8 engineers (Priya)")
    assert not states(people, "- 2026-01-20 — Platform on-call moves to 8-hour shifts (Priya)")
    # People coming to a place are counted as its visitors, visits or attendance.
    came = wanted("How many people came through the door at the Leeds branch in May?")
    assert states(came, "| Month | Visits |\n|---|---|\n| May | 3,210 |")
    assert states(came, "Attendance: 2,300 across 24 events.")
    assert not states(came, "The Leeds branch has 3 meeting rooms and 40 public PCs.")
    # Who works somewhere is not counted by who comes: the staff are not the visitors.
    assert not states(wanted("How many staff work at the Leeds branch?"), "Visits: 3,210 in May. 40 public PCs.")
    assert not states(wanted("How many customers does the Leeds depot serve?"), "Leeds: 12 technicians, 8 vans.")
    assert states(wanted("How many staff work at the Leeds branch?"), "Leeds: 12 technicians, 8 vans.")
    # Who lives somewhere is its population, which counts no one working there.
    assert states(wanted("How many people live in Østerhavn?"), "It has a population of about 351,700.")
    depot = "Leeds depot. The city has a population of 812,000."
    assert not states(wanted("How many people work at the Leeds depot?"), depot)


def test_a_version_and_a_port_are_numbers_beside_their_names():
    assert states(wanted("What version is TileKit at?"), "The latest version is 0.19.11.")
    version = wanted("Which PostgreSQL version runs on pg-pay-2?")
    assert states(version, "pg-pay-2 runs PostgreSQL 15.4 on three nodes.")
    assert not states(version, "pg-pay-2 runs PostgreSQL on three nodes, updated 2025-03-01.")
    assert not states(wanted("Which Java version does rota-service run on?"), "| rota-service | Workforce | 2 | Java |")
    decided = wanted("What did we decide about Postgres versions in February 2026?")
    assert decided.kind == "a version" and "versions" in decided.said_by_any_value
    assert states(decided, "- 2026-02-02 — Postgres 16 everywhere by March; 17 evaluated in Q3 (Marco)")
    assert not states(decided, "- 2026-02-02 — Postgres failover drill on 12 March (Marco)")
    # The thing whose version is asked may follow the word: its name says the version.
    node = wanted("Which version of Node does the CI use?")
    assert states(node, "CI runs on Node 20 since March.")
    assert not states(node, "CI runs 20 jobs at once since March.")
    # Asked for without its thing's name, a version is a name and the number after it.
    unnamed = wanted("What version does the staging database run?")
    assert states(unnamed, "Correction: the staging database runs on Postgres 15, not 14.")
    assert not states(unnamed, "The staging database runs on Postgres. The 3 replicas moved on March 15.")
    assert not states(unnamed, "The staging database moved to Room 12; see Ticket 4521, Step 3.")
    port = wanted("Which port does the notifier listen on?")
    assert states(port, "The notifier listens on port 8443.")
    assert not states(port, "The notifier sends 4000 emails an hour to customers across the UK. Its port is set by the platform team.")


def test_times_colours_and_amounts_are_read_in_their_written_forms():
    assert states(wanted("What time is the data team standup?"), "Standup moved to 09:45.")
    assert states(wanted("What time is the data team standup?"), "Standup is at 10am on Meet.")
    assert not states(wanted("What time is the data team standup?"), "Standup is on Google Meet.")
    assert states(wanted("What colour is the hall painted?"), "The hall is painted sage green.")
    assert not states(wanted("What colour is Biscuit's coat?"), "Biscuit hurt his tail on the walk.")
    # A colour's word in a set phrase gives no thing's colour.
    car = wanted("What colour is the family's Skoda Octavia?")
    assert not states(car, "- Winter tyres in the loft; black ice on the hill road most of January.")
    assert not states(car, "The gearbox is a black box to us.") and states(car, "The Octavia is black.")
    assert states(wanted("How much does the window cleaner cost?"), "He charges £25 a visit.")
    assert not states(wanted("How much does the window cleaner cost?"), "He comes every 4 weeks.")
    # Pounds and pence with a dot are a price, not half past two.
    bicycle = wanted("How much does it cost to bring a bicycle on the ferry?")
    assert states(bicycle, "- Bicycles: £2.50 per single journey.") and states(bicycle, "Bikes: 12.50 euros.")
    assert not states(wanted("What time does the office open?"), "A locker costs £9.15 a day.")
    technicians = wanted("How many technicians does Marlow Gas have?")
    assert not states(technicians, "# Marlow Gas call, 9 October 2025\n\nTechnicians joined the call on 12 May.")
    assert states(technicians, "Marlow Gas may add 40 technicians in May.")


def test_contact_details_and_identifiers_are_read_in_their_written_forms():
    phone = wanted("What is the support phone number for Gold plan customers?")
    assert states(phone, "Gold plan: call 0117 496 0123, 24 hours a day.")
    assert states(phone, "Gold plan: call (415) 555-2014.")
    # A date has as many digits as a phone number.
    assert not states(phone, "Gold plan launched on 2025-09-18 with 4 seats.")
    email = wanted("Which email address do I send receipts to?")
    assert states(email, "Send receipts to expenses@fernhill.example within a month.")
    assert not states(email, "Receipts go to the finance team.")
    address = wanted("What is the street address of the Bristol office?")
    assert states(address, "Bristol office: 4 Temple Quay, BS1 6DZ.")
    assert states(address, "Berlin: Torstraße 12, 10119 Berlin.")
    assert not states(address, "The Bristol office is by the station, on the third floor.")
    assert not states(address, "It took 2 days to close the ticket on the way out.")
    account = wanted("What is our Placely account ID?")
    assert states(account, "- Account: PLC-20417 (billing contact Kofi).")
    assert not states(account, "- Rate limit on the Placely API: 2 requests per second.")
    assert states(account, "- Account: INV-2025-0042")
    assert not states(account, "- Account opened 2025-01-10")
    # A rent's review date is a date, not a sum.
    assert wanted("What is the rent review date for the depot?") is None
    # An email provider, or what an email said, is not an address.
    assert wanted("What email provider do we use?") is None
    assert wanted("What did Priya's email say about the launch?") is None


def test_a_measure_is_a_number_beside_what_it_measures_or_one_written_in_its_units():
    speed = wanted("How fast is the internet connection at Central?")
    assert speed.near == ("fast", "speed")
    assert states(speed, "- Millhaven Central: 500 Mbps leased line from Westnet Fibre.")
    assert states(speed, "Line speed: 500 down, 50 up.")
    # A ship's page giving its length and tonnage says nothing of its top speed.
    ship = "# MV Gannet\n\n| Gross tonnage | 1,860 |\n- Built 1998, 49.9 m long."
    assert not states(wanted("What is the top speed of MV Gannet?"), ship)
    assert states(wanted("What is the gross tonnage of MV Gannet?"), ship)
    assert states(wanted("How long is MV Gannet, and how wide?"), ship)
    # "How long" asks for a time as often as a length, so it is not judged; a million
    # is no metre.
    assert wanted("How long is MV Gannet?") is None
    # A dataset's size is its rows or records.
    assert states(wanted("What is the size of Hospital Bed Occupancy?"), "The dataset has 1.3 million rows.")
    hours = wanted("What are the opening hours of the Carrick booking office?")
    assert states(hours, "Monday to Saturday: 07:00-19:00") and states(hours, "Open 9am to 5pm, closed Sundays.")
    assert states(hours, "Open Mon-Fri 9-5.") and states(hours, "Open 0900-1700 on weekdays.")
    assert states(hours, "Sundays: closed") and states(hours, "Open 24/7.")
    assert not states(hours, "The booking office is on the ground floor, left of the main doors.")
    assert not states(hours, "The ticket was closed by Priya within 24 hours.")
    assert not states(hours, "There will be no winter sailings to Carrick in 2025-26.")
    assert not states(wanted("How deep is the harbour?"), "The harbour cost 5 million to dredge.")


def test_when_is_answered_by_a_date_a_recurrence_or_an_event_but_not_by_nothing_about_time():
    when = wanted("When can I run the billing migration?")
    assert when is not None and when.kind == "a date or time"
    assert states(when, "# Billing migration\n\nNever during the nightly invoice batch.")
    assert states(when, "Migrations: we run them on the first Monday of every month.")
    assert states(when, "The billing contract ends on 30 June 2026.")
    assert not states(when, "# Billing migration\n\n- Owner: Chief Operating Officer\n- Based in Leeds.")
    # Any word that may place it in time keeps the question answered; what is cited
    # first must surely say when, a word that can count time only where it does.
    vague = "The billing database keeps every order and each refund; see the end-to-end test."
    assert states(when, vague) and not states(when, vague, surely=True)
    for prose in ("Named after the river.", "Spring Boot 3 and a second replica.", "See the start of the file."):
        assert not states(when, prose, surely=True)
    for sure in (
        "Billing backups are kept for 3 years, and checked every other week.",
        "At the end of the month you have a billing review.",
        "Migrations run nightly.",
        "The billing job runs twice a week, for 30 seconds.",
    ):
        # What surely says when may say it too: a page the citation prefers is never refused.
        assert states(when, sure, surely=True) and states(when, sure)
    # What is to be placed in time: the question's words but its names (the floor
    # refuses when no text holds any of them).
    assert wanted("When is Priya Raman's birthday?").event == ("birthday",)
    assert when.event == ("run", "billing", "migration")
    # A "when" question that names a narrower kind asks for that one.
    assert wanted("When is the standup, what time?").kind == "a time of day"
    # The note's own date says when it was written, not when the thing happens.
    assert not states(when, "---\ndate: 2025-06-10\n---\n# Billing migration\n\nOwned by the payments team.")


def _hit(item_id: int, document_id: int, score: float) -> Hit:
    return Hit(item_id, document_id, "", "", "notes", "", f"/n/{document_id}.md", "", 1, 5, 0.0, score=score)


def test_a_document_s_chunk_that_states_the_value_asked_for_is_cited_before_one_that_does_not():
    when = wanted("When do we practise restoring the archive database?")
    intro, drill, other = _hit(1, 10, 0.9), _hit(2, 10, 0.6), _hit(3, 20, 0.7)
    texts = {
        1: "# Archive database\n\nThe archive database holds every closed ticket.",
        2: "## Restore drill\n\nWe restore it on the first Tuesday of each month.",
        3: "# Archive service\n\nThe archive service writes to the archive database.",
    }
    stating_first([intro, other, drill], texts, when)
    assert (drill.score, intro.score, other.score) == (0.9, 0.6, 0.7)
    assert "states a date or time" in drill.reasons[0] and "below item 2" in intro.reasons[0]
    # A document whose best chunk states it already keeps its order.
    stating_first([drill, intro], texts, when)
    assert (drill.score, intro.score) == (0.9, 0.6)


def test_the_time_of_a_moment_named_as_such_is_a_time_of_day_and_a_length_of_time_is_not():
    assert wanted("What's the check-in time at Casa do Largo?").kind == "a time of day"
    assert wanted("what is the kick-off time on saturday").kind == "a time of day"
    for question in ("What is the journey time to Leeds?", "what's the running time", "What's the best time to go?",
                     "What was my finish time in the Bristol 10K?"):  # fmt: skip
        assert wanted(question) is None, question
    # An hour written bare or in four digits is a time after a word placing a moment at it.
    departure = wanted("What is the departure time of the ferry?")
    for said in ("The ferry leaves at 7.", "Dep 0705, arrives 0912", "Check in from 4", "Meet at 8 at the car park",
                 "curfew is 11", "tee 0810", "Meet at seven", "starts half seven", "steps off 1045hrs",
                 "7 o'clock till late", "quarter past 8", "8ish", "9h30"):  # fmt: skip
        assert states(departure, said), said
    # Not an address, a weight, a count, a day or a year.
    for said in ("Founded in 2019", "open from 2026", "Room for 6 people", "leaves at 10 minutes past",
                 "Forms back by 1 May.", "from 8 to 10 June", "meeting: Thursday 12 March at 4 Elm Grove",
                 "Meet at 10 Downing St", "weighed in at 9 kilos", "quotes from 3 firms", "kids from 7 up",
                 "passed by 3 votes to 2", "Tickets from 8", "meeting 2: budget review"):  # fmt: skip
        assert not states(departure, said), said
    # Opening times are opening hours, which "closed on Mondays" also states.
    assert wanted("What are the opening times of the pool?").kind == "opening or working hours"


def test_how_long_a_walk_is_is_a_distance_or_a_length_of_time():
    route = wanted("How long is the Ben Vorlich route?")
    assert route.kind == "a distance or a length of time" and route.naming == frozenset()
    for said in ("Route: 14 km", "about 5 hours", "a 3-hour walk", "2h30 up, 1h 50m down", "ferry 09:10-10:55",
                 "12.5 miles", "half an hour", "10k return", "half a mile", "6mi", "a half marathon",
                 "over a long weekend", "the whole day", "4 laps of the lake"):  # fmt: skip
        assert states(route, said), said
    for said in ("Sunday 18 October. Meet 8:00 at the car park.", "Top speed 4 mph"):
        assert not states(route, said), said
    # Other things "how long" asks of are as often answered by dates.
    # A swim or a drive is as often told in laps, or by when one leaves and arrives.
    for question in ("How long is the exhibition on?", "How long are audit logs retained?",
                     "How long is the open-water swim?", "How long is the drive to Granny's?"):  # fmt: skip
        assert wanted(question) is None, question


def test_a_value_in_a_long_run_of_digits_or_marks_is_still_read_from_where_it_starts():
    # The forms read a run of digits, commas and points (or a mailbox's name, or a
    # hyphenated street) once, from its start: what they found before is still found,
    # and a run of them with nothing after it states nothing.
    cost = wanted("How much does the ferry cost?")
    assert states(cost, "A return is 1,250.50 GBP.") and states(cost, "Bikes go for .5 pounds extra.")
    assert states(cost, "Fares: " + "1," * 40 + "5 euros")
    assert not states(cost, "1" * 5000) and not states(cost, "1.1." * 2000)
    assert value_at(cost, "A1,5 pounds", 3)
    size = wanted("What size is the disk?")
    assert states(size, "The data disk holds 1,000.5 GB.")
    assert not states(size, "1," * 5000)
    email = wanted("What is Bob's email address?")
    assert states(email, "Write to bob.smith+billing@example.co.uk today.")
    assert not states(email, "a_1" * 5000)
    street = wanted("What is the office street address?")
    assert states(street, "Our office is at Lindenweg 4, Berlin.")
    assert states(street, "Our office: Ost-Lindenweg 4.")
    assert not states(street, "A1-" * 5000)


def test_a_count_is_a_number_within_reach_of_what_it_counts():
    vans = wanted("How many vans does the depot have?")
    assert states(vans, "The depot has 12 vans.") and states(vans, "Vans: 12 in Leeds.")
    assert not states(vans, "12 " + "word " * 30 + "vans")
    assert states(vans, "1 " * 2000 + "vans " * 2000)
