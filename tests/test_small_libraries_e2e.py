"""The truth signals in libraries of a few notes, through a real daemon: the kind of
library a person or a checker builds by hand (bench/small_libraries.py). In one of three
notes every word is in a good share of the library, and the files written a moment ago
are dated by their mtime, today, unless their text says otherwise."""

from __future__ import annotations

from datetime import date, timedelta
from pathlib import Path

from tests.daemon_harness import DaemonProcess, library_of


def _hits(daemon: DaemonProcess, question: str) -> dict[str, dict]:
    """Each file's best hit, by file name, in rank order."""
    hits: dict[str, dict] = {}
    for hit in daemon.call("search", {"query": question})["hits"]:
        hits.setdefault(Path(hit["path"]).name, hit)
    return hits


def _first(daemon: DaemonProcess, question: str) -> str | None:
    """The file of the best hit (None: no hits)."""
    return next(iter(_hits(daemon, question)), None)


def _refused(daemon: DaemonProcess, question: str) -> str:
    """Why the question got no hits."""
    answer = daemon.call("search", {"query": question})
    assert answer["hits"] == [], question
    return answer["abstained"]


def test_a_note_saying_one_office_no_longer_opens_corrects_no_other_office(library):
    daemon = library_of(library, derived=True, notes={
        "leeds.md": "---\ndate: 2026-01-05\n---\n# Office\n\nThe Leeds office opens at 8am on weekdays.\n",
        "leeds-news.md": "---\ndate: 2026-06-01\n---\n# Office news\n\nThe Leeds office no longer opens on Saturdays.\n",
        "york.md": "---\ndate: 2026-02-05\n---\n# York\n\nThe York office opens at 9am on weekdays.\n",
    })  # fmt: skip
    hits = _hits(daemon, "When does the York office open?")
    # "Leeds" and "Saturdays" are in a third of the library each: they still name Leeds.
    assert list(hits)[0] == "york.md"
    assert hits["york.md"]["superseded_by"] is None


def test_a_notice_retracting_one_vendors_quote_names_it_among_its_reasons(library):
    # Acme is named by three notes: the name the notice puts aside, not its rarity, ties it.
    daemon = library_of(library, derived=True, notes={
        "acme-contacts.md": "---\ndate: 2026-08-01\n---\n# Contacts\n\nOur account manager at Acme is Jo Park.\n",
        "acme.md": "---\ndate: 2026-09-01\n---\n# Acme vendor quote\n\nAcme quoted 40 euros per seat for the support plan.\n",
        "globex.md": "---\ndate: 2026-09-02\n---\n# Globex vendor quote\n\nGlobex quoted 55 euros per seat for the support plan.\n",
        "notice.md": "---\ndate: 2026-10-01\n---\n# Notice\n\nRetraction: disregard the Acme quote; their sales rep"
        " sent a figure for another region.\n",
    })  # fmt: skip
    hits = _hits(daemon, "What did the vendors quote per seat for the support plan?")
    assert hits["acme.md"]["retracted_by"] == hits["notice.md"]["item_id"]
    assert hits["globex.md"]["retracted_by"] is None
    # What was withdrawn disagrees with nothing.
    assert hits["globex.md"]["conflicts_with"] == []


def test_a_withdrawn_release_is_the_one_product_the_notice_names(library):
    release = "# {model} thermostat — firmware 3.2\nReleased 2 September 2026\n\n- Adds schedule sync\n"
    daemon = library_of(library, derived=True, notes={
        "t400-firmware-3.2.md": release.format(model="T400"),
        "t600-firmware-3.2.md": release.format(model="T600"),
        "t400-withdrawn.txt": "12 September 2026\nT400 firmware 3.2 has been withdrawn after reports of units"
        " failing to boot. Stay on 3.1.4.\n",
    })  # fmt: skip
    hits = _hits(daemon, "Which firmware should I install on the T400?")
    assert list(hits)[:2] == ["t400-withdrawn.txt", "t400-firmware-3.2.md"]
    assert hits["t400-firmware-3.2.md"]["retracted_by"] == hits["t400-withdrawn.txt"]["item_id"]
    # Its 3.2 is the T600's too, which is not withdrawn.
    assert hits["t600-firmware-3.2.md"]["retracted_by"] is None


def test_a_dated_correction_supersedes_house_notes_dated_only_by_their_mtime(library):
    daemon = library_of(library, derived=True, notes={
        "house-notes.txt": "House notes\n\nBoiler: Worcester combi in the kitchen cupboard. Serviced by HeatRight"
        " (0161 555 0192), annual service due every March.\nStopcock: under the kitchen sink.\n",
        "2026-05-18-boiler.txt": "18 May 2026 — boiler\nHeatRight have closed down. We now use Calder Heating"
        " instead (0161 555 0447, ask for Imran). They did the service today.\n",
        "car-notes.txt": "Car notes\n\nGolf. Serviced by Parkside Motors (0161 555 0311), annual service due every"
        " March, MOT in September.\n",
    })  # fmt: skip
    hits = _hits(daemon, "Who services the boiler?")
    assert list(hits)[:2] == ["2026-05-18-boiler.txt", "house-notes.txt"]
    assert hits["house-notes.txt"]["superseded_by"] == hits["2026-05-18-boiler.txt"]["item_id"]
    assert hits["house-notes.txt"]["date_source"] == "modified"
    assert (hits["2026-05-18-boiler.txt"]["date"], hits["2026-05-18-boiler.txt"]["date_source"]) == (
        "2026-05-18", "file name"
    )
    assert _hits(daemon, "When is the car's annual service due?")["car-notes.txt"]["superseded_by"] is None


def test_a_replaced_quote_is_the_senders_not_every_quote_of_that_month(library):
    quote = "Quote from {firm} — {day} January 2026\nA4 copier paper, 80 gsm: €4.20 per ream\nContact: {contact}\n"
    daemon = library_of(library, derived=True, notes={
        "northwind-quote.txt": quote.format(firm="Northwind Paper Supplies", day=14, contact="Hanna Berg"),
        "brightleaf-quote.txt": quote.format(firm="Brightleaf Paper Co", day=16, contact="Olu Adeyemi"),
        "2026-06-03-revised-price.md": "From: Hanna Berg\nSubject: Revised price list\n\nOur A4 80 gsm price has"
        " changed to €4.65 per ream from 1 July. This replaces the January quote.\n\nHanna Berg, Northwind Paper"
        " Supplies\n",
    })  # fmt: skip
    hits = _hits(daemon, "How much does Northwind charge per ream of A4?")
    assert list(hits)[:2] == ["2026-06-03-revised-price.md", "northwind-quote.txt"]
    assert hits["northwind-quote.txt"]["superseded_by"] == hits["2026-06-03-revised-price.md"]["item_id"]
    assert (hits["northwind-quote.txt"]["date"], hits["northwind-quote.txt"]["date_source"]) == ("2026-01-14", "opening")
    assert hits["brightleaf-quote.txt"]["superseded_by"] is None


def test_results_retracted_by_their_day_are_that_days_results_only(library):
    result = "---\ndate: 2026-06-{day:02d}\n---\n# Viability screen, batch {batch}\n\nCompound {compound} reduced HeLa" \
        " cell viability by {share}% at 10 µM.\n"  # fmt: skip
    daemon = library_of(library, derived=True, notes={
        "2026-06-02-results.md": result.format(day=2, batch=4, compound="K-17", share=40),
        "2026-06-09-results.md": result.format(day=9, batch=5, compound="K-22", share=15),
        "2026-06-16-notice.md": "---\ndate: 2026-06-16\n---\nNotice: the viability results posted on 2 June are"
        " retracted. The plate reader was miscalibrated that week.\n",
    })  # fmt: skip
    hits = _hits(daemon, "What effect did K-22 have on cell viability?")
    assert hits["2026-06-02-results.md"]["retracted_by"] == hits["2026-06-16-notice.md"]["item_id"]
    assert hits["2026-06-09-results.md"]["retracted_by"] is None
    assert list(hits)[0] == "2026-06-09-results.md"


def test_a_cancelled_hike_is_retracted_and_the_other_hike_is_not(library):
    hike = "{day} hike: {hill}\n\n{day} {date} October. Meet 8:00 at the car park. Leader: {leader}.\n"
    daemon = library_of(library, derived=True, notes={
        "2026-10-05-ben-ledi.md": hike.format(day="Saturday", hill="Ben Ledi", date=10, leader="Fiona"),
        "2026-10-05-ben-vorlich.md": hike.format(day="Sunday", hill="Ben Vorlich", date=18, leader="Callum"),
        "2026-10-08-announcement.txt": "8 Oct 2026 — from Fiona\nSaturday's Ben Ledi hike is cancelled: Met Office"
        " amber wind warning for the hills. No replacement walk this weekend.\n",
    })  # fmt: skip
    hits = _hits(daemon, "Is the Ben Ledi hike still on?")
    assert list(hits)[:2] == ["2026-10-08-announcement.txt", "2026-10-05-ben-ledi.md"]
    assert hits["2026-10-05-ben-ledi.md"]["retracted_by"] == hits["2026-10-08-announcement.txt"]["item_id"]
    assert hits["2026-10-05-ben-vorlich.md"]["retracted_by"] is None


def test_the_desktop_apps_release_notes_do_not_disagree_with_the_mobile_apps(library):
    notes = "# {app} app release notes — {month} 2026\n\nVersion {version} ({systems})\n- Dark mode\n"
    daemon = library_of(library, derived=True, notes={
        "mobile-2026-07.md": notes.format(app="Mobile", month="July", version="4.6.0", systems="iOS and Android"),
        "mobile-2026-10.md": notes.format(app="Mobile", month="October", version="4.8.1", systems="iOS and Android"),
        "desktop-2026-11.md": notes.format(app="Desktop", month="November", version="4.9.0", systems="Windows"),
    })  # fmt: skip
    hits = _hits(daemon, "What is the latest version of the mobile app?")
    assert list(hits)[0] == "mobile-2026-10.md"
    assert hits["desktop-2026-11.md"]["conflicts_with"] == [] and hits["mobile-2026-10.md"]["conflicts_with"] == []


def test_a_proposal_goes_below_the_agreements_list_that_states_the_time(library):
    daemon = library_of(library, derived=True, notes={
        "team-agreements.md": "# Platform team agreements\nLast updated 2 February 2026\n\n- Standup daily at 9:15,"
        " 15 minutes max, on Zoom.\n- Code review within one working day.\n- Retro every other Thursday at 14:00.\n",
        "proposal-standup-time.md": "---\ndate: 2026-11-10\nstatus: proposal\n---\n# Proposal: later standup\n\n"
        "If we moved standup to 10:30, people in Lisbon would not dial in during their commute. Not decided yet.\n",
        "design-team-agreements.md": "# Design team agreements\nLast updated 2 February 2026\n\n- Design crit every"
        " Thursday at 10:30, 45 minutes, in the Atrium room.\n- Retro monthly.\n",
    })  # fmt: skip
    hits = _hits(daemon, "What time is standup?")
    assert list(hits)[:2] == ["team-agreements.md", "proposal-standup-time.md"]
    assert any(reason.startswith("hedged") for reason in hits["proposal-standup-time.md"]["reasons"])


def test_a_version_question_is_answered_by_a_name_and_its_number(library):
    daemon = library_of(library, derived=True, notes={
        "standup.md": "---\ndate: 2026-03-01\n---\n# Standup\n\nThe staging database runs on Postgres 14.\n",
        "infra.md": "---\ndate: 2026-04-10\n---\n# Infra update\n\nCorrection: the staging database runs on"
        " Postgres 15, not 14.\n",
        "team.md": "---\ndate: 2026-02-01\n---\n# Analytics team\n\nThe analytics database runs on ClickHouse.\n",
    })  # fmt: skip
    hits = _hits(daemon, "What version does the staging database run?")
    assert list(hits)[:2] == ["infra.md", "standup.md"]
    assert hits["standup.md"]["superseded_by"] == hits["infra.md"]["item_id"]


def test_a_code_or_a_version_no_note_writes_is_refused_whatever_the_capitals(library):
    daemon = library_of(library, derived=True, notes={
        "results.md": "# Viability screen, batch 4\n\nCompound K-17 reduced HeLa cell viability by 40% at 10 µM.\n",
        "t400-firmware-3.2.md": "# T400 thermostat — firmware 3.2\nReleased 2 September 2026\n\n- Adds schedule sync\n",
        "db-runbook.md": "# Runbook: production Postgres\n\nPrimary: db-prod-1 (Postgres 15).\nmax_connections = 200\n",
        "app-release.md": "Release notes v2.1: adds dark mode.\n",
        "covid.md": "COVID-19 policy: masks are optional in the office.\n",
        "standup.md": "Team standup is at 9:30 in the big room.\n",
    })  # fmt: skip
    # "IC50" is the question's one long word and capitalised, as a title's words are.
    for question, unknown in [
        ("What is the IC50 of K-17?", "ic50"),
        ("What is new in T400 firmware 3.3?", "3 3"),
        ("What is shared_buffers set to on db-prod-1?", "shared_buffers"),
    ]:
        assert repr(unknown) in _refused(daemon, question), question
    assert _first(daemon, "What does T400 firmware 3.2 add?") == "t400-firmware-3.2.md"
    assert _first(daemon, "What is max_connections set to on db-prod-1?") == "db-runbook.md"
    # The same written otherwise: a version with its "v", a code apart, a time or a date.
    assert _first(daemon, "What does release 2.1 add?") == "app-release.md"
    assert _first(daemon, "What does the covid19 policy say?") == "covid.md"
    assert _first(daemon, "Who comes to standup at 9.30?") == "standup.md"


def test_words_every_note_shares_still_rank_the_note_holding_more_of_them(library):
    # Each word of the question is in two of the three notes, so FTS5 weighs each at
    # nothing; the art gallery's note is the closest in meaning ("closed on Mondays").
    daemon = library_of(library, derived=True, notes={
        "trip-plan.md": "# Harbourtown weekend — plan\n\nHarbour Maritime Museum: opens 10:00, closed on Mondays"
        " (from the guidebook, 2026 edition).\nFerry to the island: hourly from Pier 2, last one back 18:30.\n",
        "chat-with-sam.txt": "[14/11/2026 19:02] Sam: went to the maritime museum last year, it's shut on Tuesdays"
        " btw\n[14/11/2026 19:03] Sam: opens at 10 though\n[14/11/2026 19:05] me: thanks!\n",
        "art-gallery.md": "Harbour Art Gallery\n\nOpens 11:00, closed on Mondays. Free entry on the first Sunday of the"
        " month.\n",
    })  # fmt: skip
    assert _first(daemon, "Which day is the maritime museum closed?") == "trip-plan.md"


def test_a_month_or_weekday_the_notes_abbreviate_is_no_name_the_library_lacks(library):
    daemon = library_of(library, derived=True, notes={
        "reading-list-2026.md": "Book club 2026\nSep - Tomorrow, and Tomorrow, and Tomorrow\nOct - The Covenant of Water\n",
        "rota-week-48.txt": "Shop rota, week 48\nMon: Priya\nTue: Sam and Olu\nWed: Priya\n",
        "offsite.md": "---\ndate: 2026-11-03\n---\nOffsite planning: budget is EUR 180 per head incl. dinner.\n",
    })  # fmt: skip
    assert _first(daemon, "what book are we reading in October") == "reading-list-2026.md"
    assert _first(daemon, "who's working Tuesday in week 48") == "rota-week-48.txt"
    # "per-person" is a phrase of the language, not a name no note writes.
    result = daemon.call("search", {"query": "What's the per-person budget for the offsite?"})
    assert "per person" not in (result["abstained"] or "")


def test_a_note_saying_what_it_replaces_supersedes_the_note_that_names_it(library):
    daemon = library_of(library, derived=True, notes={
        "2025-11-03-vpn-setup.md": "VPN setup (3 Nov 2025)\nAll staff connect with the OpenVPN client.\n"
        "Profile download: vpn.example-co.net, port 1194.\n",
        "2026-03-16-vpn-migration.md": "16 March 2026 - We now use WireGuard instead of OpenVPN for remote access.\n"
        "Import your config from the IT portal.\n",
        "printer-setup.txt": "Office printer: Brother HL-L8360CDW, IP 10.0.4.20.\n",
    })  # fmt: skip
    # The two share little of the question: the newer holds "use", the older "staff",
    # "client" and "connect"; it names the older's OpenVPN as what it replaces.
    hits = _hits(daemon, "What VPN client do staff use to connect?")
    assert list(hits)[:2] == ["2026-03-16-vpn-migration.md", "2025-11-03-vpn-setup.md"]
    assert hits["2025-11-03-vpn-setup.md"]["superseded_by"] == hits["2026-03-16-vpn-migration.md"]["item_id"]


def test_a_question_asking_whether_one_thing_may_stand_instead_of_another_replaces_nothing(library):
    daemon = library_of(library, derived=True, notes={
        "vpn-setup.md": "---\ndate: 2026-11-05\n---\nVPN setup\nAll staff connect with the OpenVPN client.\n",
        "vpn-faq.md": "VPN questions\n\nCan I use WireGuard instead of OpenVPN, e.g. at home? Only on the test"
        " network.\n",
        "printer-setup.txt": "Office printer: Brother HL-L8360CDW, IP 10.0.4.20.\n",
    })  # fmt: skip
    hits = _hits(daemon, "What VPN client do staff use to connect?")
    assert list(hits)[0] == "vpn-setup.md"
    assert hits["vpn-setup.md"]["superseded_by"] is None


def test_a_rescheduled_flight_supersedes_the_itinerary_naming_it_and_no_other_trip(library):
    daemon = library_of(library, derived=True, notes={
        "lisbon-itinerary.md": "---\ndate: 2026-08-20\n---\nLisbon 3-7 Oct 2026\nFlight TP1363 LHR -> LIS, 3 Oct,"
        " departs 07:05.\nHotel: Casa do Largo, Alfama, 4 nights.\n",
        "2026-09-15-tap-email.txt": "From: TAP Air Portugal\nDate: 15 Sep 2026\nSubject: Schedule change\n\nYour flight"
        " TP1363 on 3 Oct has been rescheduled. New departure 09:40 from LHR T2, arriving 12:25.\n",
        "porto-2024.md": "Porto, May 2024: flight TP1331 departed 06:50. Stayed at Hotel Carris Ribeira.\n",
        "lisbon-food.md": "Lisbon to try: Cervejaria Ramiro for seafood, Manteigaria for pasteis de nata.\n",
    })  # fmt: skip
    hits = _hits(daemon, "What time does my flight to Lisbon leave?")
    assert list(hits)[:2] == ["2026-09-15-tap-email.txt", "lisbon-itinerary.md"]
    assert hits["lisbon-itinerary.md"]["superseded_by"] == hits["2026-09-15-tap-email.txt"]["item_id"]
    # The email's flight number is the itinerary's; the Porto trip shares only "departed".
    assert hits["porto-2024.md"]["superseded_by"] is None


def test_keywords_or_a_question_asking_a_price_no_note_about_the_thing_gives_are_refused(library):
    daemon = library_of(library, derived=True, notes={
        "crux-hours.md": "# Crux climbing wall\n\nOpen weekdays 12-10pm, weekends 9am-8pm. Day pass holders must"
        " do the safety induction first.\n",
        "the-arch.md": "# The Arch bouldering\n\nDay pass £14, students £11. Shoe hire £4.\n",
        "spurn-trip.md": "# Birders' trip to Spurn Point\n\nSunday 25 October. The coach leaves the library car park"
        " at 7am.\n",
        "bempton-trip.md": "# RSPB group trip to Bempton Cliffs\n\nSaturday 7 November, coach £28.\n",
        "it.md": "# Club IT\n\nEach member has a storage quota of 50 GB on the club drive.\n",
    })  # fmt: skip
    for asked in ("crux day pass price", "how much is the coach to spurn point"):
        assert "nothing supports an answer" in _refused(daemon, asked), asked
    assert _first(daemon, "the arch day pass price") == "the-arch.md"
    assert _first(daemon, "how much is the coach to bempton cliffs") == "bempton-trip.md"
    # "How much is" a thing is not always a price.
    assert _first(daemon, "how much is the storage quota") == "it.md"
    for topic in ("opportunity cost", "negotiating rent"):
        assert daemon.call("search", {"query": topic})["abstained"] is None, topic


def test_notices_and_corrections_said_as_people_say_them_take_back_what_they_mean(library):
    daemon = library_of(library, derived=True, notes={
        "2026-08-20-bottling-workshop.md": "Bottling & pasteurising workshop, Wednesday 30 September, 6.30pm at"
        " Orchard Barn. £12, numbers limited to 10.\n",
        "2026-09-01-pressing-days.md": "Pressing days 2026 — Orchard Barn\nSat 3 October and Sat 17 October,"
        " 9am-3pm. Bring apples washed, in crates.\n",
        "2026-09-15-whatsapp.txt": "Cider co-op WhatsApp, 15 Sep 2026\n19:04 Gwen: please disregard the bottling"
        " workshop announcement, it's not happening this year - Pete's pasteuriser is broken. sorry all\n",
        "2026-05-20-bulletin.md": "Kingsmere ARC bulletin, 20 May 2026\nThe weekly 2m net moves to Wednesdays at"
        " 8pm on 145.550 MHz from 27 May.\nFoundation exam 13 June, 2 candidates.\n",
        "2026-05-24-retraction.md": "24 May 2026 — Please disregard the item in the 20 May bulletin about the 2m"
        " net moving to Wednesdays. It was posted by mistake from an old draft. Apologies — Ed.\n",
        "spring-2026-programme.md": "Lowfield Film Society — Spring 2026 season\nThursdays 7.45pm, Lowfield Arts"
        " Centre\n15 Jan  Aftersun\n29 Jan  Past Lives\n12 Feb  The Zone of Interest\n26 Feb  Perfect Days\n",
        "2026-02-05-members-notice.md": "Members' notice — 5 February 2026\nThe 12 February screening of The Zone"
        " of Interest has been withdrawn: the distributor's licence fell through.\n",
        "2026-02-01-session-recap.md": "Session 3 recap (1 Feb 2026): the party reached Saltmarsh.\nNext session"
        " (session 4): Sunday 15 Feb, 2pm, usual place.\n",
        "2026-02-08-discord.txt": "[19:02] Priyanka: scratch that, session 4 is now saturday 14th, 2pm - the"
        " café's closed on the 15th for a private party\n[19:05] Dev: fine by me\n",
    })  # fmt: skip
    taken_back = {
        "Is the bottling workshop on 30 Sept still happening?": (
            "2026-09-15-whatsapp.txt", "2026-08-20-bottling-workshop.md", "retracted_by"),
        "2m net moving to wednesdays 8pm?": ("2026-05-24-retraction.md", "2026-05-20-bulletin.md", "retracted_by"),
        "is lowfield still showing zone of interest on 12 feb": (
            "2026-02-05-members-notice.md", "spring-2026-programme.md", "retracted_by"),
        "When is session 4 happening?": ("2026-02-08-discord.txt", "2026-02-01-session-recap.md", "superseded_by"),
    }  # fmt: skip
    for asked, (newer, older, mark) in taken_back.items():
        hits = _hits(daemon, asked)
        assert list(hits).index(newer) < list(hits).index(older), asked
        assert hits[older][mark] == hits[newer]["item_id"], asked
    # The workshop's notice names nothing of the pressing days.
    hits = _hits(daemon, "When are the pressing days?")
    assert hits["2026-09-01-pressing-days.md"]["retracted_by"] is None


def test_notes_answering_a_question_for_a_value_differently_disagree_or_correct_what_they_answer(library):
    daemon = library_of(library, derived=True, notes={
        "2025-10-15-rehearsal-schedule.md": "Christmas concert - extra rehearsals\nSat 6 Dec 10am-1pm - Methodist"
        " Hall (full choir)\nThu 11 Dec 7pm - DRESS REHEARSAL at St Oswald's\n",
        "2025-09-03-committee-minutes.md": "Choir committee minutes\n- Christmas concert confirmed: Sat 13 Dec,"
        " 7pm, in the parish church\n- Tickets £8, from the library\n",
        "2025-11-24-email-linda.txt": "From: Linda Marsh\nDate: 24 Nov 2025\nSubject: Dress rehearsal - change of"
        " day\n\nHi all,\nUpdate: the dress rehearsal has moved to Friday 12 Dec, 6:30pm, still at St Oswald's.\n",
        "volunteer-handbook-v3.md": "---\ndate: 2025-09-01\n---\nNorthside Food Bank - volunteer handbook v3\n"
        "Saturday sessions: volunteers arrive 8:30 for sorting, doors open to clients at 10:00.\n",
        "rota-email-2025-09-01.txt": "From: Janet Mills (coordinator)\nDate: 1 Sep 2025\nSubject: September rota"
        "\n\nSaturday volunteers please arrive at 9:15; clients from 10:00. Rota attached.\n",
    })  # fmt: skip
    hits = _hits(daemon, "when is the dress rehearsal for the christmas concert")
    assert list(hits)[0] == "2025-11-24-email-linda.txt"
    assert hits["2025-10-15-rehearsal-schedule.md"]["superseded_by"] == hits["2025-11-24-email-linda.txt"]["item_id"]
    # The minutes' date is the concert's, which the rehearsal moving does not change.
    assert hits["2025-09-03-committee-minutes.md"]["superseded_by"] is None
    # The handbook's 8:30 stands beside "volunteers arrive", the rota's 9:15 beside "arrive".
    hits = _hits(daemon, "What time should Saturday volunteers arrive at the food bank?")
    handbook, rota = hits["volunteer-handbook-v3.md"], hits["rota-email-2025-09-01.txt"]
    assert handbook["conflicts_with"] == [rota["item_id"]] and rota["conflicts_with"] == [handbook["item_id"]]


def test_asked_which_band_now_the_newest_diary_goes_first_though_it_leaves_out_book(library):
    daemon = library_of(library, derived=True, notes={
        "2026-01-16-reading-diary.md": "16 Jan 2026 - Mrs Hale: Maya is now on Turquoise book band.\n",
        "2026-05-08-reading-diary.md": "8 May 2026 - Mrs Hale: Maya moved up to Purple band, reads with lovely"
        " expression.\n",
        "2026-10-02-reading-diary.md": "2 Oct 2026 - Mr Osei (Year 3): Maya is on Gold band now. Keep reading 10"
        " min a night.\n",
        "pe-days.txt": "Year 3 PE days (autumn 2026): Tuesday and Thursday. Children come to school in PE kit.\n",
    })  # fmt: skip
    # "book band" says what the answer is; the newest diary says which band all the same.
    hits = _hits(daemon, "which book band is Maya on now?")
    assert list(hits)[:3] == ["2026-10-02-reading-diary.md", "2026-05-08-reading-diary.md",
                              "2026-01-16-reading-diary.md"]  # fmt: skip


def test_a_booking_dated_by_its_day_to_come_is_corrected_and_two_places_named_disagree(library):
    # Dated around today, whenever the test runs: the booking names a day four months on.
    today = date.today()
    booked, emailed = today + timedelta(days=120), today - timedelta(days=7)
    daemon = library_of(library, derived=True, notes={
        "booking-ellis-wedding.md": f"# Booking - Ellis/Marsh wedding\nDate: {booked:%a %d %B %Y}\nVenue: Hawkstone"
        " Barn\nGuests: 96 (day)\nMenu: 3-course plated, £48/head\n",
        "email-hannah.txt": f"From: Hannah Ellis\nDate: {emailed:%a, %d %b %Y}\nSubject: numbers!!\n\nHi Kate, sorry -"
        " update on numbers: we're now at 104 day guests (Joe's cousins all said yes).\n",
        "email-anna.txt": f"From: Anna Price\nDate: {emailed:%d %b %Y}\nSubject: November book club\n\nNext meeting"
        " Thursday, 7:30pm at The Fox & Hound (back room). Book: Klara and the Sun.\n",
        "whatsapp.txt": "[21:15] Beth: Reminder - November book club is at my house, 12 Elm Road, Thursday 7:30. Bring"
        " wine!\n[21:17] Dora: lovely\n",
    })  # fmt: skip
    hits = _hits(daemon, "how many day guests at the ellis wedding")
    assert list(hits)[0] == "email-hannah.txt"
    assert hits["booking-ellis-wedding.md"]["superseded_by"] == hits["email-hannah.txt"]["item_id"]
    hits = _hits(daemon, "Where is the November book club meeting?")
    assert hits["email-anna.txt"]["conflicts_with"] == [hits["whatsapp.txt"]["item_id"]]
    assert hits["whatsapp.txt"]["conflicts_with"] == [hits["email-anna.txt"]["item_id"]]


def test_a_chat_message_split_over_two_lines_answers_and_disagrees_with_an_email(library):
    daemon = library_of(library, derived=True, notes={
        "2026-11-02-whatsapp.txt": "[19:40] Gaz: lads quiz night confirmed\n[19:41] Gaz: thu 12 nov, 8pm, table 4\n"
        "[19:45] Mo: get in\n[19:52] Dean: who's bringing pens\n",
        "2026-11-02-email-quiz.txt": "From: Pat Doyle (League Secretary)\nSubject: Quiz night\n\nHi"
        " captains, the 2026 charity quiz night will be held on Friday 13 November, start 7:30pm. Teams of six, £2 a"
        " head, prizes for the top three.\nPat\n",
        "subs.md": "Darts team subs: £30 for the season, due by week 2.\n",
    })  # fmt: skip
    hits = _hits(daemon, "when's the quiz night?")
    chat, email = hits["2026-11-02-whatsapp.txt"], hits["2026-11-02-email-quiz.txt"]
    assert chat["conflicts_with"] == [email["item_id"]] and email["conflicts_with"] == [chat["item_id"]]


def test_a_ferry_retimed_by_the_operator_supersedes_the_itinerary_time(library):
    daemon = library_of(library, derived=True, notes={
        "2026-04-20-itinerary.md": "Scotland trip - plan as of 20 April 2026\nFerry: Oban - Craignure, CalMac, Sat 13"
        " June, departs 09:55 (booking CM-40712)\nThen up to Tobermory for three nights.\n",
        "2026-05-03-calmac-email.txt": "From: CalMac <bookings@calmac.example>\nDate: 3 May 2026\nSubject: Change to"
        " booking CM-40712\n\nDear customer, your sailing Oban-Craignure on 13 June has been retimed. New sailing time:"
        " 11:10. Please arrive 30 minutes before.\n",
        "2026-04-28-cottage.md": "28 Apr 2026 - booked Tobermory cottage 13-16 June, £95/night. Ref TC-118.\n",
    })  # fmt: skip
    hits = _hits(daemon, "what time does our ferry to craignure leave")
    assert list(hits)[0] == "2026-05-03-calmac-email.txt"
    assert hits["2026-04-20-itinerary.md"]["superseded_by"] == hits["2026-05-03-calmac-email.txt"]["item_id"]


def test_an_email_giving_the_wrong_dates_is_corrected_by_the_next_whatever_last_summer_said(library):
    daemon = library_of(library, derived=True, notes={
        "email-2026-03-02-cottage.txt": "From: Tom Hale\nDate: 2 Mar 2026\nSubject: Summer cottage\n\nBooked Seaview"
        " Cottage, Whitby for 3-10 July. £980 total, deposit paid.\n",
        "email-2026-03-04-cottage.txt": "From: Tom Hale\nDate: 4 Mar 2026\nSubject: Re: Summer cottage\n\nSorry, my"
        " last email gave the wrong dates - Seaview Cottage is 10-17 July, Friday to Friday. Nothing else changes.\n",
        "holiday-2025.md": "Summer 2025: Bay Cottage, Filey, 5-12 July. Lovely, would rebook.\n",
    })  # fmt: skip
    # The new dates are a stay, not the day of a note they point at, and the writer's last
    # email is the one they correct: last July's cottage is not meant.
    hits = _hits(daemon, "what dates are we at the cottage?")
    assert list(hits)[0] == "email-2026-03-04-cottage.txt"
    assert hits["email-2026-03-02-cottage.txt"]["superseded_by"] == hits["email-2026-03-04-cottage.txt"]["item_id"]
    assert hits["holiday-2025.md"]["superseded_by"] is None


def test_a_chat_message_taken_back_by_its_writer_and_a_day_to_scrap_are_retracted(library):
    daemon = library_of(library, derived=True, notes={
        "whatsapp-2026-10-02.txt": "[10:15] Dev: new allotment gate code is 5519\n[10:16] Ann: ta\n",
        "whatsapp-2026-10-04.txt": "[09:02] Dev: sorry, ignore my message about the gate code - the lock was never"
        " changed. Still 2307\n[09:05] Ann: ok\n",
        "pool-news-2026-06-01.md": "---\ndate: 2026-06-01\n---\n# Pool news\nThe main pool will be closed for"
        " cleaning on Thursday 18 June, 06:00-14:00. Lane swimming moves to the learner pool.\n",
        "pool-news-2026-06-10.md": "---\ndate: 2026-06-10\n---\n# Pool news\nScrap the 18 June cleaning – the"
        " contractor pulled out. The pool is open as normal that day.\n",
        "prices.txt": "Swim prices: adult £5.20, junior £3.10, family £14.\n",
    })  # fmt: skip
    hits = _hits(daemon, "allotment gate code")
    assert list(hits)[0] == "whatsapp-2026-10-04.txt"
    assert hits["whatsapp-2026-10-02.txt"]["retracted_by"] == hits["whatsapp-2026-10-04.txt"]["item_id"]
    hits = _hits(daemon, "is the pool closed for cleaning on 18 june")
    assert list(hits)[0] == "pool-news-2026-06-10.md"
    assert hits["pool-news-2026-06-01.md"]["retracted_by"] == hits["pool-news-2026-06-10.md"]["item_id"]


def test_a_moments_time_or_a_walks_length_no_note_about_it_gives_is_refused(library):
    daemon = library_of(library, derived=True, notes={
        "hike-ben-ledi.md": "# Saturday hike: Ben Ledi\n\nSaturday 10 October. Meet 8:00 at the Stank car park."
        " Leader: Fiona.\n",
        "hike-schiehallion.md": "# Sunday hike: Schiehallion\n\nSunday 11 October, 10 km and about 5 hours. Meet"
        " 9:00 at Braes of Foss.\n",
        "lisbon.md": "# Lisbon, 3-7 October\n\nHotel: Casa Azul in Alfama, 4 nights, deposit paid.\n",
        "rose-cottage.md": "# Rose Cottage\n\nCheck-in from 4pm; the keys are in the key safe by the door.\n",
        "scout-hut.md": "# Scout Hut\n\nKeys from Mrs Patel; the heating is on a timer.\n",
        "village-hall.md": "# Village Hall\n\nRoom hire £18 an hour, tables included.\n",
        "church-hall.md": "# Church Hall\n\nRoom hire £15 an hour, book through the parish office.\n",
        "ferry.md": "# Ferry to Mull\n\nThe ferry leaves at 7 from the north pier; cars £40 return.\n",
    })  # fmt: skip
    for asked in ("How long is the Ben Ledi route?", "What's the check-in time at Casa Azul?",
                  "room hire fee for the Scout Hut"):  # fmt: skip
        assert "nothing supports an answer" in _refused(daemon, asked), asked
    assert _first(daemon, "How long is the Schiehallion route?") == "hike-schiehallion.md"
    assert _first(daemon, "What's the check-in time at Rose Cottage?") == "rose-cottage.md"
    assert _first(daemon, "room hire fee for the Village Hall") == "village-hall.md"
    # An hour written bare after "leaves at" is a time of day.
    assert _first(daemon, "What is the departure time of the ferry to Mull?") == "ferry.md"


def test_a_question_over_a_few_notes_is_not_refused_for_the_askers_own_words(library):
    # In five notes, "go out" and "episode" (the notes write "Ep" and "Publish") weighed
    # nearly twice what "12" does, and the plan that answers held too little of the question.
    daemon = library_of(library, derived=True, notes={
        "ep-12-plan.md": "# Ep 12 – plan\nGuest: Amira Haddad\nTopic: city beekeeping\nRecord: 3 March (studio B)\n"
        "Publish: Tue 17 March\n",
        "ep-11-runsheet.md": "# Ep 11 – runsheet\nGuest: Tom Ellis\nRecord: Mon 16 Feb, 14:00\nPublish: 2 March\n",
        "sponsors.txt": "Spring sponsor - Hillside Tea\n$300 per episode, invoice monthly\n",
        "checklist.txt": "- loudness -16 LUFS\n- cut long pauses\n- upload to Buzzsprout, schedule 6am\n",
        "guests.md": "Guests to ask: a bat ecologist, the canal trust, Amira's allotment society.\n",
    })  # fmt: skip
    assert _first(daemon, "when does episode 12 go out") == "ep-12-plan.md"


def test_who_holds_a_role_is_answered_only_by_a_line_giving_it(library):
    """"Who is the confocal superuser?" over a handbook naming the FACS's superuser on the
    line after the confocal's room, "who is bramble's vet" over a client list giving only
    Otis's, and the accompanist of a concert the minutes say is still to be confirmed:
    each was answered by the note holding the question's words on other lines."""
    daemon = library_of(library, derived=True, notes={
        "lab-induction-handbook.md": "Hassan Lab - induction (2024 edition)\n"
        "Confocal (Zeiss LSM 880): room B1.07, book on the paper sheet on the door\n"
        "FACS: Aria III, superuser Dr Omar Haddad\nWaste: yellow bins for clinical, blue for sharps\n",
        "clients.md": "## Bramble (springer spaniel)\nOwner: Claire Dunn. Walks Mon/Wed/Fri 11am.\n"
        "## Otis (black lab)\nOwner: Mr Pratt. Tue/Thu 1pm.\nOtis's vet: Moorview Vets, Ilkley\n",
        "committee-minutes.md": "# Choir committee minutes\n- Christmas concert confirmed: Sat 12 Dec, 7:30pm\n"
        "- Accompanist for Christmas concert still TBC - Linda asking around\n",
        "spring-concert-2026.md": "Spring concert 2026 - wrap-up\nTickets £8, sold 92\n"
        "Accompanist: Derek Fell (fee £120, paid)\n",
    })  # fmt: skip
    unstated = ("who's the confocal superuser", "who is bramble's vet", "who is the accompanist for the christmas concert")
    for question in unstated:
        assert "the person who is its" in _refused(daemon, question)
    assert _first(daemon, "who's the FACS superuser") == "lab-induction-handbook.md"
    assert _first(daemon, "who is otis's vet") == "clients.md"
    assert _first(daemon, "who is the accompanist for the spring concert") == "spring-concert-2026.md"
