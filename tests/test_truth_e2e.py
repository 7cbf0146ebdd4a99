"""Answers that know what is true now, through a real daemon: one folder of notes holding
a correction, a retraction, a disagreement, last year's price next to this year's, a
proposal beside a fact, CJK notes, a quoted phrase, a long runbook and two copies of one
file; every question goes over the socket with all three legs, as a person asks it."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from datetime import date, timedelta
from pathlib import Path

import pytest

from tests.daemon_harness import DaemonProcess, library_of, wait_for

NOTES = {
    "ops/dead-letters.md": """
        # Dead letters

        The Field Ops team checks the dead letter queue for rota events every morning and
        re-drives what it can.
        """,
    "ops/ownership.md": """
        # Who owns what

        | service | owner team |
        |---|---|
        | rostering-api | Field Ops |
        | price-engine | Commerce |
        """,
    "runbooks/build-cache.md": """
        ---
        date: 2025-01-10
        ---
        # Build cache runbook

        The build cache holds CI artefacts for seven days. Where a build is stuck on a stale
        artefact, clear the build cache with `cache-clear --all` from any CI runner.
        """,
    "meetings/2025-03-04-infra-sync.md": """
        # Infra sync, 4 March 2025

        Present: Tomasz, Ines, Marek

        ## Build cache
        - Decided: the build cache moves to MinIO on the storage cluster next month.
        - Tomasz to write the migration plan for the build cache.
        """,
    "meetings/2025-03-18-infra-sync.md": """
        # Infra sync, 18 March 2025

        Present: Tomasz, Ines

        ## Build cache
        - Correction to the 4 March notes: the build cache moves to Ceph RGW instead of MinIO;
          MinIO was the option we turned down.
        """,
    "reports/2025-05-02-load-test.md": """
        ---
        title: Checkout load test
        date: 2025-05-02
        ---
        # Checkout load test

        The checkout service handled 4,800 requests per second at a p99 of 120 ms.
        """,
    "reports/2025-05-09-load-test-retraction.md": """
        ---
        title: "Retraction: checkout load test"
        date: 2025-05-09
        ---
        # Retraction: checkout load test

        The checkout load test figure of 4,800 requests per second is retracted: the load
        generator was misconfigured. Please disregard it until the rerun.
        """,
    "stock/2025-03-09-weeding.md": """
        ---
        title: Weeding guidance
        date: 2025-03-09
        ---
        # Weeding guidance, spring 2025

        Branches should take adult non-fiction off the shelves once it is more than eight
        years old and has had no loans in the last two years.
        """,
    "policies/collections.md": """
        ---
        title: Collections policy
        updated: 2025-04-20
        ---
        # Collections policy

        ## Donations
        - We take recent, clean paperbacks only; the rest goes to the Friends' sale.

        ## Weeding
        - Update, 20 April 2025: the weeding guidance of 9 March is withdrawn. Hold all
          weeding until the stock audit finishes.
        """,
    "ops/backup-policy.md": """
        ---
        title: Backup policy
        updated: 2025-06-10
        ---
        # Backup policy

        Nightly backups of the billing database are kept for 35 days in the backup bucket.
        The monthly billing export is kept for a year.
        """,
    "ops/backup-audit.md": """
        ---
        title: Backup audit
        date: 2025-06-20
        ---
        # Backup audit

        Finding: billing database backups are kept for 14 days, per the bucket lifecycle rule.
        """,
    "ops/2025-07-01-sensor-logs.md": """
        # Sensor logs, 1 July 2025

        From 1 July the van sensor logs ship to the Loki cluster through the Vector agent.
        """,
    "ops/2025-07-20-sensor-logs-check.md": """
        # Sensor logs check, 20 July 2025

        Checked on 20 July: the van sensor logs ship to the Loki cluster through the Vector agent.
        """,
    "pricing/2025-price-list.md": """
        ---
        title: Price list 2025
        date: 2025-01-01
        ---
        # Price list 2025

        - Team plan: £12 per seat per month.
        - Enterprise plan: priced per contract.
        """,
    "pricing/2026-price-list.md": """
        ---
        title: Price list 2026
        date: 2026-01-01
        ---
        # Price list 2026

        - Team plan: £15 per seat per month.
        - Enterprise plan: priced per contract.
        """,
    "events/2025-10-harbour-fair-report.md": """
        ---
        title: Harbour Fair 2025 report
        date: 2025-10-20
        ---
        # Harbour Fair 2025: report

        - Held 10 to 12 October 2025 on the quay.
        - Tickets: 1,800 sold, 300 more than in 2024.
        """,
    "events/2026-harbour-fair.md": """
        ---
        title: Harbour Fair 2026
        date: 2026-03-02
        ---
        # Harbour Fair 2026: save the date

        The Harbour Fair returns to the quay in October 2026. Tickets go on sale in September.
        """,
    "infra/dns.md": """
        ---
        title: DNS
        updated: 2025-02-01
        ---
        # DNS

        Our DNS is hosted on Route 53; the zones are managed in Terraform.
        """,
    "notes/2025-08-dns-idea.md": """
        ---
        title: "Idea: DNS hosting on Cloudflare"
        date: 2025-08-12
        ---
        # Idea: DNS hosting on Cloudflare

        What if we moved DNS hosting? If we were to switch, our DNS would be hosted on
        Cloudflare, and we might drop Route 53 entirely. Nothing decided.
        """,
    "runbooks/storage.md": """
        # Storage runbook

        ## Disks
        Check disk usage on the storage nodes every morning.
        Expand a volume when it passes 80 % full.

        ## Snapshots
        Snapshots run at 02:00 and are kept for a week.
        Restore a snapshot with `stctl restore --snapshot ID --target NODE`.

        ## Contacts
        The storage on-call is in #storage-oncall.
        """,
    "runbooks/archive-db.md": """
        # Archive database

        The archive database holds every closed ticket, old invoices and the audit records of
        the archive service. Restoring the archive database from a dump needs the DBA's key.

        ## Restore drill
        We restore last night's dump into a scratch server on the first Tuesday of each month.
        """,
    "fares/2026-02-20-supplement-notice.md": """
        ---
        date: 2026-02-20
        ---
        # Supplements from 1 April 2026

        From 1 April 2026 a campervan supplement of £15 per single journey applies.
        """,
    "suppliers/会议纪要.md": """
        # 供应商会议纪要

        供应商确认 RT-20 平板的最小订单量是 500 台，交货期为六周。
        """,
    "tokyo/オフィス.md": """
        # 東京オフィスの利用ルール

        東京オフィスは平日の夜十時までに退館してください。
        """,
    "seoul/배포.md": """
        # 배포 절차

        한국 리전 배포는 매주 목요일 오전에 진행합니다.
        """,
    "security/break-glass.md": """
        # Emergency access

        The break glass account for production lives in the sealed envelope in the safe.
        """,
    "office/kitchen.md": """
        # Kitchen

        Please do not break the glass jugs; glass goes in the glass recycling. Take a break
        away from your desk. Broken glass: tell the office manager. Glass, glass, glass.
        """,
    "office/coffee.md": """
        # Coffee breaks

        The coffee break is at eleven; a glass of water after the break keeps you going.
        """,
    "projects/heron/kickoff.md": """
        # Project Heron kickoff

        Project Heron moves the parts catalogue from the warehouse system to the
        catalog service.

        - Project lead: Dana Whitfield
        - Sponsor: Ruth Okonjo
        """,
    "projects/compost/pilot.md": """
        # Compost bins pilot

        - Lead: Morag Keir.
        - Start: April, at the Elm Street depot.
        """,
    "people/morag-keir.md": """
        # Morag Keir

        - Works Tuesday to Friday; Mondays off.
        """,
    "routes/route-9.md": """
        # Route 9 (summer only)

        - Vessel: MV Petrel
        - Calls only at Lochan pier; no other port is served by this summer route.
        """,
    "vessels/petrel.md": """
        # MV Petrel

        - Built 1998; 40 cars.
        """,
    "services/catalog.md": """
        # catalog

        Serves the parts catalogue to the technicians' app.

        - Database: the pg-parts cluster, in Frankfurt.
        """,
    "people/dana-whitfield.md": """
        # Dana Whitfield

        - Role: Head of Supply Engineering
        - Based in Glasgow; in Manchester one week a month.
        """,
    "people/ruth-okonjo.md": """
        # Ruth Okonjo

        - Role: Chief Operating Officer
        - Based in Leeds.
        - Phone: 0113 496 0571
        """,
    "teams/tablet-apps.md": """
        # Tablet Apps team

        We build the screens technicians use: job list, forms, signatures.

        - Releases every two weeks on Wednesday.
        """,
    "teams/tablet-platform.md": """
        # Tablet Platform team

        We build the device layer under the technician app: offline storage and sync.

        - Standup 09:45 on Google Meet.
        """,
    # Long enough that its "Rituals" section is a chunk of its own, under the page's title.
    "teams/route-apps.md": "# Route Apps team\n\nWe build the driver screens.\n\n"
    + "".join(
        f"- Screen {n}: the route list, stop detail, proof of delivery and signature capture for drivers.\n"
        for n in range(1, 13)
    )
    + "\n## Rituals\n\n- Standup 10:15 daily; on Fridays the Route Platform team joins it.\n",
    "teams/route-platform.md": """
        # Route Platform team

        - Standup 09:05 in the small meeting room.
        """,
    "data/job-events.md": """
        # job_events dataset

        One row per job status change.

        - Source system: dispatch-ledger (its Postgres database).
        - Loaded into the warehouse hourly.
        """,
    "services/dispatch-ledger.md": """
        # dispatch-ledger

        Keeps the history of every job.

        - Backups: hourly snapshots, kept for 14 days.
        """,
    "services/catalogue-label-printer.md": """
        # Service catalogue: label_printer

        - Service: label_printer, the service that prints depot labels
        - Owning project: Project Lapwing
        """,
    "services/label-printer.md": """
        # label_printer

        label_printer prints the parcel labels in the depots. It is written in Go.
        """,
    "projects/lapwing.md": """
        # Project Lapwing

        Project Lapwing replaces the depot scanners. Target launch is Q3 2026.
        """,
    "people/ines-varga.md": """
        # Ines Varga

        Ines Varga is a data engineer on the Billing team. Ines reports to Marta Quist.
        Before joining us, Ines worked at Orla Freight for six years.
        """,
    "people/marta-quist.md": """
        # Marta Quist

        Marta Quist leads the Billing team. She is based in Dublin.
        """,
    "partners/orla-freight.md": """
        # Orla Freight

        Orla Freight is a shipping company headquartered in Cork.
        """,
    "people/tove-lind.md": """
        # Tove Lind

        Tove Lind is a data engineer on the Growth team. Before joining, Tove spent seven
        years at Harbour Analytics.
        """,
    "partners/harbour-analytics.md": """
        # Harbour Analytics

        Harbour Analytics is a consultancy in Leith.
        """,
    "people/2025-02-org-chart-update.md": """
        # Org chart update, February 2025

        From now on Tove Lind is on ledger-core. Questions go to the people team.
        """,
    "teams/ledger-core.md": """
        # ledger-core

        Sits at Quayside House, fourth floor.
        """,
    "vessels/tern.md": """
        # MV Tern

        Passenger ferry, built 2004.

        - Summer: the island run.
        - Winter lay-up berth: Portnahaven inner basin, checked daily.
        """,
    "people/crew-list.md": """
        # Crew list

        | name | rank | vessel |
        |---|---|---|
        | Ailsa Grant | Engineer-mate | MV Petrel |
        | Ally Munro | Master | MV Skua |
        """,
    "vessels/skua.md": """
        # MV Skua

        Our newest ship, fitted out in 2020 and commanded by the island run's senior master.

        ## Particulars
        - Main engines: two Volvo Penta D13.
        """,
    "vessels/petrel.md": """
        # MV Petrel

        Main engines: one Caterpillar C18, fitted in 2016.
        """,
    "incidents/2026-03-03-bow-thruster.md": """
        # Bow thruster failure

        MV Skua's bow thruster failed while berthing at Portnahaven; she ran without it for a week.
        """,
    "yard/drydock-plan.md": """
        ---
        date: 2026-01-20
        ---
        # Dry dock plan

        - MV Skua: next dry dock 14 October 2026, at Leith.
        - MV Petrel: next dry dock 2 February 2027.
        """,
    "newsletters/2026-07-newsletter.md": """
        # Staff newsletter, July 2026

        ## Photo competition
        The staff photo competition was won by Ailsa Grant with a shot of the harbour at dawn.
        """,
    "reports/2026-q2-kpis.md": """
        # Q2 2026 KPIs

        - Active borrowers: 41,200.
        - Loans through self-service kiosks: 63%.
        """,
    "systems/kiosks.md": """
        # Kiosks

        The self-service kiosks run on the library system; borrowers sign in with their card.
        Each kiosk has a receipt printer, a card reader and a scanner for barcodes.
        Paper rolls are kept in the staff room; the supplier visits every quarter.
        A kiosk that shows a red light needs a restart from the switch at the back.
        """,
    "changelogs/rota-api-CHANGELOG.md": """
        # Changelog: rota-api

        All notable changes to the rota-api service. Dates are release dates to production.

        ## 2025.11.0 (2025-11-19)

        - Shift swaps can be approved from the mobile app by the duty manager on call.
        - Fix: overnight shifts crossing midnight were shown on the wrong day in exports.
        - Faster rota search for large depots, with a new index on shift references.

        ## 2025.07.0 (2025-07-15)

        - Availability endpoint for each technician, with holidays and training days.
        - Customer-specific shift templates that depots can copy and adapt.
        - Dependency updates across the board, and a newer base image for the service.

        ## 2025.04.0 (2025-04-08)

        - Shift attachments can be listed and deleted through the API by their owners.
        - Error responses now carry an error code and a request id for support tickets.
        - Webhook signing secrets can be rotated without downtime or lost deliveries.
        """,
    "home/car.md": """
        # Car

        - Estate car, bought used in 2023.
        - MOT and servicing at Brackenfield Motors; MOT due every May.
        """,
    "home/contacts.md": """
        # Contacts

        - Dr Lewis (surgery): 01632 960 555
        - Brackenfield Motors (garage): 01632 960 118
        """,
    "ports/portnahaven.md": """
        ---
        title: Portnahaven port and office
        ---
        # Portnahaven

        Island port with a fuel berth.

        - Harbour master: Ewan Rose
        """,
    "plans/support-roadmap.md": """
        ---
        title: Support desk roadmap, H2 2025
        date: 2025-06-18
        ---
        # Support desk roadmap, H2 2025

        - Hire two more support engineers.
        - Move the help centre articles into the portal.
        """,
    "finance/q3-2025-results.md": """
        ---
        date: 2025-10-10
        ---
        # Q3 2025 results

        - Revenue: £4.1m (Q2 2025: £3.8m).
        - Gross margin: 78 %.
        """,
    "home/house-manual.md": """
        # House manual

        - Stopcock: under the kitchen sink, behind the bin. Turn it off to shut the mains water.
        - Outside tap: isolate from the valve in the utility room before the first frost.
        """,
    "teams/a/charter.md": """
        # Charter

        The platform guild meets every second Thursday to review the golden paths.
        """,
    "news/2025-12-12-newsletter.md": """
        # Staff newsletter, December 2025

        The staff ceilidh at the Drill Hall drew 140 people, our biggest yet.
        Staff travel free on all routes; partners of staff pay half the adult fare.
        """,
    "news/2026-01-16-newsletter.md": """
        # Staff newsletter, January 2026

        ## Staff travel: correction
        Correction to the staff travel policy of January 2025: partners of staff now travel free
        instead of paying half the adult fare.
        """,
    "pilots/web-checkin.md": """
        # Web check-in pilot

        We are doing a soft launch of web check-in from 8 September: no posters, just a link.
        """,
    "notices/winter-service.md": """
        # Winter service withdrawn

        The winter service is withdrawn: the service will not run, and service updates follow.
        """,
    "teams/b/charter.md": """
        # Charter

        The platform guild meets every second Thursday to review the golden paths.
        """,
    "offices/ardnish-desk.md": """
        # Ardnish booking office

        Opening hours: Monday to Saturday 07:00-19:00, Sunday 09:30-16:00.

        Island tickets: the Lowmoor office sells them in its own hours.
        """,
    "offices/lowmoor.md": """
        # Lowmoor

        The Lowmoor office opens 08:00-17:00 on weekdays, by the slipway.
        """,
    "offices/carrick-pier.md": """
        # Carrick pier

        The Carrick booking office moves into the old waiting room next spring.
        """,
    "customers/kingsbridge-water.md": """
        # Kingsbridge Water

        Water utility in the South West, a customer since 2023. Main contact: Bea Lind.
        Their licences renew every May.
        """,
    "customers/licences.md": """
        # Licences

        Halden Rail: 250 seats, renewed each March.
        """,
    "customers/halden-rail.md": """
        # Halden Rail

        Rail maintenance contractor. Halden Rail licenses 250 seats for its technicians.
        """,
    "ports/kilbrannan.md": """
        ---
        updated: 2025-05-20
        ---
        # Kilbrannan pier

        Pier owned by the estate; berthing dues per call.

        ## Approach
        - The narrows run hard on the ebb: approach Kilbrannan at slack water, or on the flood with power in hand.
        - Leading lights on the hillside, white over white.
        """,
    "incidents/2025-06-02-kilbrannan-contact.md": """
        # Heavy contact at Kilbrannan pier, 2 June 2025

        MV Tern made heavy contact with the Kilbrannan pier face while berthing. Two fender panels damaged.
        Cause: the mate misjudged the approach speed. Retraining for the mate.
        """,
    "incidents/2025-07-10-kilbrannan-addendum.md": """
        # Addendum to the Kilbrannan contact report (2 June 2025)

        The statement in the original report that the mate misjudged the approach is retracted; the investigation is reopened.
        """,
    "2025-01-10-wren-kickoff.md": """
        # Project Wren kickoff

        Project lead: Tamsin Greer. We move the spares catalogue to the new warehouse system by June.
        """,
    "people/tamsin-greer.md": """
        ---
        date: 2024-05-02
        ---
        # Tamsin Greer

        Senior engineer on the stores team. Works from the Dundee office, three days a week.
        """,
    "2025-09-01-office-moves.md": """
        # Office moves, September

        Correction: Tamsin Greer no longer works from Dundee; from September she works from the Perth office.
        """,
}


def _write(root: Path) -> None:
    for name, text in NOTES.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip())


@pytest.fixture(scope="module")
def daemon(module_library):
    # Through module_library: a module's fixture is set up before isolated_home, and a
    # daemon started here on its own ran under the real HOME, recording itself in the
    # user's ~/.local/state/kenning, with its event loop unchecked.
    notes = module_library.root / "notes"
    _write(notes)
    module_library.configure([{"name": "notes", "path": notes}])
    process = module_library.daemon()
    process.notes = notes
    status = process.wait_idle("notes")

    def embedded() -> bool:
        embedder = process.call("status")["embedder"]
        return embedder["job"]["state"] == "idle" and embedder["vectors"] == status["chunks"]

    wait_for(embedded, timeout=60, what="every chunk to be embedded")
    yield process
    process.stop()


def ask(daemon: DaemonProcess, query: str, **params) -> dict:
    return daemon.call("search", {"query": query, **params})


def docs(result: dict) -> list[str]:
    return list(dict.fromkeys(Path(hit["path"]).name for hit in result["hits"]))


def wait_mined(daemon: DaemonProcess) -> None:
    def mined() -> bool:
        return daemon.call("status")["graph"]["job"]["state"] == "idle"

    wait_for(mined, timeout=60, what="entity extraction to finish")


def refused(daemon: DaemonProcess, query: str, why: str, **params) -> dict:
    """The answer to a question the floor refuses, for this reason."""
    result = ask(daemon, query, **params)
    assert result["hits"] == [] and why in result["abstained"], result["abstained"]
    return result


def first_hit(result: dict, name: str) -> dict:
    return next(hit for hit in result["hits"] if Path(hit["path"]).name == name)


def test_a_correction_outranks_the_note_it_corrects_which_stays_findable_and_marked(daemon):
    result = ask(daemon, "Where is the build cache moving to?")
    assert docs(result)[:2] == ["2025-03-18-infra-sync.md", "2025-03-04-infra-sync.md"]
    newer, older = first_hit(result, "2025-03-18-infra-sync.md"), first_hit(result, "2025-03-04-infra-sync.md")
    assert older["superseded_by"] == newer["item_id"]
    assert newer["superseded_by"] is None
    assert newer["date"] == "2025-03-18" and older["date"] == "2025-03-04"
    # An older page about the build cache that names nothing the correction names (the
    # March notes, MinIO, Ceph) is not what it corrects.
    runbook = first_hit(result, "build-cache.md")
    assert runbook["superseded_by"] is None
    assert not any("superseded" in reason for reason in runbook["reasons"])


def test_a_retraction_is_tied_to_the_claim_it_names_and_ranks_above_it(daemon):
    # With the graph mined the notice names the claim's page, and the hop to it must keep
    # the claim's marks.
    wait_mined(daemon)
    result = ask(daemon, "How many requests per second can the checkout service handle?")
    assert docs(result)[:2] == ["2025-05-09-load-test-retraction.md", "2025-05-02-load-test.md"]
    notice = first_hit(result, "2025-05-09-load-test-retraction.md")
    claim = first_hit(result, "2025-05-02-load-test.md")
    assert claim["retracted_by"] == notice["item_id"]
    assert any("retracted by" in reason for reason in claim["reasons"])


def test_a_notice_sharing_no_word_with_the_question_is_tied_to_the_claim_it_names(daemon):
    result = ask(daemon, "At what age should adult non-fiction be taken off the shelves?")
    assert docs(result)[:2] == ["collections.md", "2025-03-09-weeding.md"]
    notice, claim = first_hit(result, "collections.md"), first_hit(result, "2025-03-09-weeding.md")
    assert claim["retracted_by"] == notice["item_id"]
    assert "withdrawn" in notice["snippet"]
    assert any("naming it" in reason for reason in notice["reasons"])


def test_two_notes_that_disagree_both_show_and_name_each_other(daemon):
    result = ask(daemon, "How long are billing database backups kept?")
    assert {"backup-policy.md", "backup-audit.md"} <= set(docs(result)[:5])
    policy, audit = first_hit(result, "backup-policy.md"), first_hit(result, "backup-audit.md")
    assert audit["item_id"] in policy["conflicts_with"] and policy["item_id"] in audit["conflicts_with"]
    # Neither corrects the other: nothing is marked as replaced.
    assert policy["superseded_by"] is None and audit["superseded_by"] is None


def test_two_notes_saying_the_same_on_different_days_do_not_disagree(daemon):
    # The dates in their lines are when each was written, not a value they differ on.
    result = ask(daemon, "How do the van sensor logs ship?")
    assert {"2025-07-01-sensor-logs.md", "2025-07-20-sensor-logs-check.md"} <= set(docs(result)[:3])
    assert all(hit["conflicts_with"] == [] for hit in result["hits"][:3])


def test_a_correction_naming_only_the_year_asked_about_corrects_nothing_asked(daemon):
    # January's correction of December's travel line shares "staff" and "2025" with the
    # question: the year is the period asked about, not its subject, and the travel
    # rules are no ceilidh.
    result = ask(daemon, "How many people came to the December 2025 staff ceilidh?")
    assert docs(result)[0] == "2025-12-12-newsletter.md"
    assert first_hit(result, "2025-12-12-newsletter.md")["superseded_by"] is None


def test_now_prefers_the_newest_a_named_year_prefers_that_year_and_since_until_filter(daemon):
    now = ask(daemon, "What is the current price of the Team plan per seat?")
    assert docs(now)[0] == "2026-price-list.md"
    then = ask(daemon, "What did the Team plan cost per seat in 2025?")
    assert docs(then)[0] == "2025-price-list.md"
    assert first_hit(then, "2025-price-list.md")["date"] == "2025-01-01"
    since = ask(daemon, "Team plan price per seat", since="2026")
    assert "2026-price-list.md" in docs(since) and all(hit["date"] >= "2026" for hit in since["hits"])
    until = ask(daemon, "Team plan price per seat", until="2025-06")
    assert "2025-price-list.md" in docs(until) and "2026-price-list.md" not in docs(until)


def test_a_changelogs_entry_for_the_period_asked_is_cited(daemon):
    # The introduction holds the question's words; the July entry, dated by its heading,
    # holds none of them but says what the release added.
    result = ask(daemon, "Which rota-api release went to production in July 2025, and what did it add?")
    first = result["hits"][0]
    assert Path(first["path"]).name == "rota-api-CHANGELOG.md" and first["date"] == "2025-07-15"
    assert any("in the period asked about" in reason for reason in first["reasons"])
    # "true that" opens no relative clause: the period is the question's own.
    result = ask(daemon, "Is it true that a rota-api release went to production in July 2025?")
    assert result["hits"][0]["date"] == "2025-07-15"
    # No entry is dated in 2023: the period is still refused.
    refused(daemon, "Which rota-api release went to production in March 2023?", "period")


def test_a_date_a_note_looks_ahead_to_is_not_the_date_it_speaks_from(daemon):
    # Written on 20 February about April: its heading's date is not when it was written.
    result = ask(daemon, "campervan supplement per single journey")
    assert first_hit(result, "2026-02-20-supplement-notice.md")["date"] == "2026-02-20"
    until = ask(daemon, "campervan supplement per single journey", until="2026-02")
    assert "2026-02-20-supplement-notice.md" in docs(until)


def test_since_after_until_is_refused_with_a_clear_error(daemon):
    with pytest.raises(Exception, match="^until 2025 is before since 2026"):
        ask(daemon, "Team plan", since="2026", until="2025")
    with pytest.raises(Exception, match="^since: 'last tuesday' is not a date"):
        ask(daemon, "Team plan", since="last tuesday")


def test_a_proposal_ranks_below_the_plain_statement_of_the_same_thing(daemon):
    result = ask(daemon, "Where is our DNS hosted?")
    names = docs(result)
    assert names.index("dns.md") < names.index("2025-08-dns-idea.md")
    assert any("hedged" in reason for reason in first_hit(result, "2025-08-dns-idea.md")["reasons"])


def test_a_question_nothing_answers_gets_no_hits_and_says_why(daemon):
    result = ask(daemon, "What is the door code for the Madrid office?")
    assert result["hits"] == []
    assert "madrid" in result["abstained"]
    # A thing of the asker's own that no note names: the car's page is not about it.
    assert docs(ask(daemon, "When is my car's MOT due?"))[0] == "car.md"
    refused(daemon, "When is my motorbike's MOT due?", "motorbike")
    # A question about a period nothing is dated in or speaks of.
    refused(daemon, "What did the Team plan cost per seat in 2019?", "period")
    # A hyphenated name no text holds, though each of its words occurs somewhere.
    refused(daemon, "Who owns the price-catalog service?", "price catalog")
    # The index stems "billing-exporter" to "billing export", which a note holds: the
    # name is still nowhere as written.
    refused(daemon, "Which port does the billing-exporter service listen on?", "billing exporter")
    # Notes dated in the period asked about, but about other things.
    refused(daemon, "How often did the platform guild meet in 2025?", "period")
    # A note dated the day after the period, whose heading names its own year.
    refused(daemon, "What did the Team plan cost per seat in 2024?", "period")
    # A note written in the first half of 2025 whose title names the second half is
    # about the second.
    refused(daemon, "What is on the support desk roadmap for the first half of 2025?", "period")
    assert docs(ask(daemon, "What is on the support desk roadmap for H2 2025?"))[0] == "support-roadmap.md"
    # The Q3 results name Q2 only for its revenue.
    assert docs(ask(daemon, "What was revenue in Q2 2025?"))[0] == "q3-2025-results.md"
    refused(daemon, "What was the gross margin in Q2 2025?", "period")
    # A period written with a hyphen is the period, not a name no text holds.
    assert docs(ask(daemon, "What was the gross margin in 2025-Q3?"))[0] == "q3-2025-results.md"
    # "shut-off" is a word of the language, not a name no text holds.
    assert docs(ask(daemon, "Where is the shut-off valve for the mains water?"))[0] == "house-manual.md"
    # The same words without the missing name are answered.
    assert ask(daemon, "How do I restore a storage snapshot?")["hits"]
    assert ask(daemon, "How often does the platform guild meet?")["hits"]
    # Words no text holds that name the kind of answer ("city") or say the relation
    # ("work from") do not count against the page that answers.
    assert docs(ask(daemon, "Which city does Dana Whitfield work from?"))[0] == "dana-whitfield.md"
    # Her page is about her but states no year, and the backup notes hold numbers but
    # none of copies: neither question has an answer.
    refused(daemon, "What year did Dana Whitfield join?", "a year")
    assert docs(ask(daemon, "What is Ruth Okonjo's phone number?"))[0] == "ruth-okonjo.md"
    refused(daemon, "What is Dana Whitfield's phone number?", "a phone number")
    # Her page says nothing about time at all, so nothing says when she joined.
    refused(daemon, "When did Ruth Okonjo join?", "a date or time")
    # The Tablet Platform team's standup time is not the Tablet Apps team's.
    assert docs(ask(daemon, "What time is the Tablet Platform team's standup?"))[0] == "tablet-platform.md"
    refused(daemon, "What time is the Tablet Apps team's standup?", "a time of day")
    # A later chunk of the Route Apps page that names the Route Platform team is still
    # about the Route Apps team, under its title.
    assert docs(ask(daemon, "What time is the Route Apps team's standup?"))[0] == "route-apps.md"
    # Her page places her weeks in Manchester in time, and no note names a birthday.
    assert docs(ask(daemon, "When is Dana Whitfield in Manchester?"))[0] == "dana-whitfield.md"
    refused(daemon, "When is Dana Whitfield's birthday?", "a date or time")
    refused(daemon, "How many copies of the billing database backups are kept?", "a number")
    assert docs(ask(daemon, "How many days are billing database backups kept for?"))[0] in ("backup-policy.md", "backup-audit.md")
    # Last year's report counts last year's tickets; nothing counts this year's.
    assert docs(ask(daemon, "How many tickets were sold for the 2025 Harbour Fair?"))[0] == "2025-10-harbour-fair-report.md"
    question = "How many tickets were sold for the 2026 Harbour Fair?"
    result = refused(daemon, question, "a number for the period it names")
    # The hits the floor judged come back apart, for a second look.
    assert "2026-harbour-fair.md" in [Path(hit["path"]).name for hit in result["withheld"]]
    assert ask(daemon, "How many tickets were sold for the 2025 Harbour Fair?")["withheld"] == []
    # The Ardnish office's hours are not the Carrick office's, nor are those of the office
    # its page names.
    assert docs(ask(daemon, "What are the opening hours of the Ardnish booking office?"))[0] == "ardnish-desk.md"
    refused(daemon, "What are the opening hours of the Carrick booking office?", "opening or working hours")
    # Nor are Halden Rail's seats Kingsbridge Water's, though they stand beside "seats",
    # and "their licences" names no page titled "Licences".
    assert docs(ask(daemon, "How many seats does Halden Rail license?"))[0] == "halden-rail.md"
    refused(daemon, "How many seats does Kingsbridge Water license?", "a number")


def test_a_value_of_the_kind_asked_for_says_the_word_asking_for_it(daemon):
    # The notice never says "cost", nor anything close: its price says it.
    assert docs(ask(daemon, "How much does it cost to bring a campervan?"))[0] == "2026-02-20-supplement-notice.md"
    # Notes that give no colour gain nothing from the word "colour".
    refused(daemon, "What colour are the RT-20 tablets?", "a colour")


def test_a_hit_cites_the_lines_that_hold_the_answer(daemon):
    result = ask(daemon, "Which command restores a storage snapshot?")
    hit = first_hit(result, "storage.md")
    lines = (daemon.notes / "runbooks/storage.md").read_text().split("\n")[hit["line_start"] - 1 : hit["line_end"]]
    assert any("stctl restore" in line for line in lines)
    # Asked when, the runbook is cited at the lines that say when, not at its
    # introduction, which holds more of the question's words.
    result = ask(daemon, "When do we practise restoring the archive database?")
    hit = first_hit(result, "archive-db.md")
    assert hit["section"].endswith("Restore drill")
    assert any("states a date or time" in reason for reason in hit["reasons"])


@pytest.mark.parametrize(
    ("question", "note"),
    [
        ("RT-20 平板的最小订单量是多少？", "会议纪要.md"),
        ("東京オフィスは何時までに退館しますか？", "オフィス.md"),
        ("한국 리전 배포는 무슨 요일에 합니까?", "배포.md"),
    ],
)
def test_chinese_japanese_and_korean_questions_find_their_note_by_keyword(daemon, question, note):
    assert docs(ask(daemon, question, legs=["keyword"]))[0] == note


@pytest.mark.parametrize(("word", "note"), [("夜", "オフィス.md"), ("货", "会议纪要.md"), ('"夜', "オフィス.md")])
def test_a_word_of_one_chinese_or_japanese_character_finds_the_note_holding_it(daemon, word, note):
    # The CJK index holds pairs of characters; one character alone is a word too ("夜",
    # night), here inside a longer run, and with a stray quote as typed in a hurry.
    assert docs(ask(daemon, word, legs=["keyword"])) == [note]
    assert docs(ask(daemon, word))[0] == note


def test_a_quoted_phrase_matches_as_a_phrase(daemon):
    result = ask(daemon, 'Where is the "break glass" account?', legs=["keyword"])
    assert docs(result) == ["break-glass.md"]
    # Unquoted, the words match apart too.
    assert {"kitchen.md", "coffee.md"} <= set(docs(ask(daemon, "break glass", legs=["keyword"])))
    # Every leg's hit that lacks the quoted words goes below the one that holds them,
    # however often it says the question's other words.
    result = ask(daemon, 'Which service had a "soft launch"?')
    assert docs(result)[0] == "web-checkin.md"
    assert any("holds the quoted 'soft launch'" in reason for reason in result["hits"][0]["reasons"])


def test_identical_text_in_two_files_shows_once_with_its_other_location(daemon):
    result = ask(daemon, "When does the platform guild meet?")
    charters = [hit for hit in result["hits"] if hit["path"].endswith("charter.md")]
    assert len(charters) == 1
    assert [Path(other["path"]).parent.name for other in charters[0]["also_at"]] == [
        "b" if charters[0]["path"].endswith("a/charter.md") else "a"
    ]
    # What a refusal holds back shows the same way, and no more of it than asked for.
    refused = ask(daemon, "How many members does the platform guild have?", limit=1)
    assert refused["hits"] == [] and refused["abstained"]
    [held] = refused["withheld"]
    assert held["path"].endswith("charter.md") and len(held["also_at"]) == 1


def test_an_agent_document_can_say_which_document_it_supersedes(daemon):
    daemon.call(
        "documents.add",
        {"title": "Wifi", "text": "The guest wifi network is named heron-42.", "source_uri": "note://wifi-v1"},
    )
    added = daemon.call(
        "documents.add",
        {
            "title": "Wifi",
            "text": "The guest wifi network is named kestrel-77.",
            "source_uri": "note://wifi-v2",
            "supersedes": ["note://wifi-v1"],
            "date": "2025-09",
        },
    )
    daemon.wait_derived()
    result = ask(daemon, "What is the guest wifi network named?")
    old = next(hit for hit in result["hits"] if hit["path"] == "note://wifi-v1")
    new = next(hit for hit in result["hits"] if hit["path"] == "note://wifi-v2")
    assert result["hits"].index(new) < result["hits"].index(old)
    assert old["superseded_by"] == new["item_id"] and new["document_id"] == added["document_id"]
    assert new["date"] == "2025-09"


def test_the_current_document_of_a_chain_an_agent_stated_disagrees_with_none_it_replaced(daemon):
    """C, B replacing C, A replacing B, within weeks of each other: A and C were shown
    disagreeing, and a question then lifted the oldest value beside the current one."""
    for name, seconds, day, replaces in (("c", 10, "01", None), ("b", 20, "02", "c"), ("a", 30, "03", "b")):
        daemon.call("documents.add", {
            "title": f"Zorblax {name}", "source_uri": f"note://zorblax-{name}", "date": f"2025-{day}-01",
            "text": f"The zorblax relay timeout is {seconds} seconds.",
            **({"supersedes": [f"note://zorblax-{replaces}"]} if replaces else {}),
        })  # fmt: skip
    daemon.wait_derived()
    hits = {hit["path"]: hit for hit in ask(daemon, "What is the zorblax relay timeout?")["hits"]}
    current, middle, oldest = hits["note://zorblax-a"], hits["note://zorblax-b"], hits["note://zorblax-c"]
    assert (middle["superseded_by"], oldest["superseded_by"]) == (current["item_id"], middle["item_id"])
    assert current["conflicts_with"] == [] and oldest["conflicts_with"] == []


def test_a_correction_replacing_a_two_digit_value_supersedes_the_note_giving_it(daemon):
    """Each correction names the value it replaces: "instead of 20 MB" named none, its
    words being under three letters, so the newest showed disagreeing with the value it
    replaced, and the note giving that value was not marked superseded."""
    for name, month, text in (
        ("1", "01", "The tern upload limit is 10 MB per file."),
        ("2", "02", "Correction: the tern upload limit is 20 MB per file instead of 10 MB."),
        ("3", "03", "Correction: the tern upload limit is 30 MB per file instead of 20 MB."),
    ):
        daemon.call("documents.add", {
            "title": f"Tern limits {name}", "source_uri": f"note://tern-{name}", "date": f"2025-{month}-01", "text": text
        })  # fmt: skip
    daemon.wait_derived()
    hits = {hit["path"]: hit for hit in ask(daemon, "What is the tern upload limit?")["hits"]}
    newest, middle = hits["note://tern-3"], hits["note://tern-2"]
    assert middle["superseded_by"] == newest["item_id"]
    assert newest["conflicts_with"] == [] and middle["conflicts_with"] == []


def test_a_correction_replacing_a_two_digit_value_does_not_find_it_in_a_date(daemon):
    """The value a correction replaces ("instead of 18") was found in the "18" of an
    older correction's "2025-03-18", so the note saying which host the batch runs on
    showed superseded by one about its size."""
    for uri, day, title, text in (
        ("skua-host", "2025-04-01", "Skua batch host",
         "Correction to the 2025-03-18 skua batch notes: the skua batch runs on kestrel instead of osprey."),
        ("skua-size", "2025-05-01", "Skua batch size", "Correction: the skua batch size is 30 instead of 18."),
    ):  # fmt: skip
        daemon.call("documents.add", {"title": title, "source_uri": f"note://{uri}", "date": day, "text": text})
    daemon.wait_derived()
    hits = {hit["path"]: hit for hit in ask(daemon, "Which host does the skua batch run on?")["hits"]}
    assert hits["note://skua-host"]["superseded_by"] is None


def test_text_corrected_or_withdrawn_disagrees_with_nothing(daemon):
    """Disagreements were decided before corrections and notices were tied: "300 instead
    of 200" corrects "200 instead of 100", which corrects the first note's 100, and the
    newest, naming neither of its values, was shown disagreeing with it; the capacity
    page, with a load test its notice withdrew. A question lifted the text taken back
    beside the figure that holds. But a note whose timeout was corrected still disagrees
    with an older note giving another batch size."""
    for uri, day, title, text in (
        ("heron-batch-1", "2025-01-01", "Heron batch 1", "The heron batch size is 100."),
        ("heron-batch-2", "2025-01-20", "Heron batch 2", "Correction: the heron batch size is 200 instead of 100."),
        ("heron-batch-3", "2025-02-10", "Heron batch 3", "Correction: the heron batch size is 300 instead of 200."),
        ("puffin-test", "2025-05-02", "Puffin load test", "The puffin gateway handled 900 requests a second."),
        ("puffin-page", "2025-05-10", "Puffin capacity", "The puffin gateway handles 1,400 requests a second."),
        ("puffin-notice", "2025-05-20", "Puffin notice", "The puffin load test of 2 May is withdrawn: it was wrong."),
        ("gannet-a", "2025-01-10", "Gannet settings", "The gannet batch size is 150 and the gannet timeout is 45 seconds."),
        ("gannet-c", "2025-01-12", "Gannet runbook", "The gannet batch size is 250."),
        ("gannet-b", "2025-03-01", "Gannet timeout fix", "Correction: the gannet timeout is 75 seconds instead of 45 seconds."),
    ):
        daemon.call("documents.add", {"title": title, "source_uri": f"note://{uri}", "date": day, "text": text})
    daemon.wait_derived()
    hits = {hit["path"]: hit for hit in ask(daemon, "What is the heron batch size?")["hits"]}
    first, middle, newest = (hits[f"note://heron-batch-{name}"] for name in "123")
    assert (first["superseded_by"], middle["superseded_by"]) == (middle["item_id"], newest["item_id"])
    assert first["conflicts_with"] == [] and newest["conflicts_with"] == []
    result = ask(daemon, "How many requests a second can the puffin gateway handle?")
    hits = {hit["path"]: hit for hit in result["hits"]}
    withdrawn, page = hits["note://puffin-test"], hits["note://puffin-page"]
    assert withdrawn["retracted_by"] == hits["note://puffin-notice"]["item_id"]
    assert page["conflicts_with"] == [] and withdrawn["conflicts_with"] == []
    # A correction of one value leaves the note's other values disagreeing with a note
    # older than it: the batch sizes still disagree once the timeout is corrected.
    hits = {hit["path"]: hit for hit in ask(daemon, "What is the gannet batch size?")["hits"]}
    settings, runbook = hits["note://gannet-a"], hits["note://gannet-c"]
    assert settings["superseded_by"] == hits["note://gannet-b"]["item_id"]
    assert runbook["item_id"] in settings["conflicts_with"] and settings["item_id"] in runbook["conflicts_with"]


def test_a_notice_found_by_the_claims_title_retracts_nothing_ahead_of_today_and_can_be_taken_back(daemon):
    """Notices sharing no word with the question, found by the claim's title: one dated
    next year withdrew the claim now, and one taking back a withdrawal was passed over,
    so the claim stayed withdrawn."""
    def add(uri: str, title: str, day: str, text: str) -> None:
        daemon.call("documents.add", {"title": title, "source_uri": uri, "date": day, "text": text})

    ahead = date.today().year + 1
    add("note://glost-guide", "Glost kiln guidance", "2025-03-09", "Fire the glost kiln to cone 6 over 9 hours.")
    add("note://glost-notice", "Studio notices", f"{ahead}-05-01",
        "The glost kiln guidance of 9 March 2025 is withdrawn; do not follow it.")  # fmt: skip
    add("note://quire-guide", "Quire binding guidance", "2025-03-09", "Sew each quire with waxed linen thread.")
    add("note://quire-notice", "Bindery notices", "2025-05-01", "The quire binding guidance of 9 March is withdrawn.")
    add("note://quire-undo", "Bindery notices June", "2025-06-01",
        "Disregard the withdrawal of the quire binding guidance of 9 March; it stands.")  # fmt: skip
    daemon.wait_derived()
    kiln = {hit["path"]: hit for hit in ask(daemon, "How long should the glost kiln fire?")["hits"]}
    assert kiln["note://glost-guide"]["retracted_by"] is None
    hits = {hit["path"]: hit for hit in ask(daemon, "Which thread do we sew with?")["hits"]}
    assert hits["note://quire-guide"]["retracted_by"] is None
    assert hits["note://quire-notice"]["retracted_by"] == hits["note://quire-undo"]["item_id"]


def test_a_retraction_whose_title_dates_the_report_it_means_retracts_no_page_sharing_a_word(daemon):
    result = ask(daemon, "How hard do the narrows run at Kilbrannan pier?")
    notice = first_hit(result, "2025-07-10-kilbrannan-addendum.md")
    # Its line names no date; its title names the report's day, and that report is among
    # the hits: the pier's page, which shares "approach", is not what it takes back.
    assert first_hit(result, "2025-06-02-kilbrannan-contact.md")["retracted_by"] == notice["item_id"]
    assert all(hit["retracted_by"] is None for hit in result["hits"] if hit["path"].endswith("kilbrannan.md"))


def test_the_page_a_hop_puts_second_stays_below_the_correction_that_supersedes_it(daemon):
    wait_mined(daemon)
    result = ask(daemon, "Which city does the lead of Project Wren work from?")
    page, correction = first_hit(result, "tamsin-greer.md"), first_hit(result, "2025-09-01-office-moves.md")
    # The kickoff names the lead and her page goes after it, but the correction saying
    # she has moved goes with it, just above it.
    assert docs(result)[:3] == ["2025-01-10-wren-kickoff.md", "2025-09-01-office-moves.md", "tamsin-greer.md"]
    assert page["superseded_by"] == correction["item_id"]
    assert any("named by the hit above it" in reason for reason in page["reasons"])
    assert any("which it takes back" in reason for reason in correction["reasons"])
    assert [hit["score"] for hit in result["hits"]] == sorted((hit["score"] for hit in result["hits"]), reverse=True)


def test_a_question_through_a_named_person_finds_that_persons_page_next(daemon):
    wait_mined(daemon)
    result = ask(daemon, "Which city does the lead of Project Heron work from?")
    # The kickoff names the lead; her page, which never names the project, says the city.
    assert docs(result)[:2] == ["kickoff.md", "dana-whitfield.md"]
    assert any("named by the hit above it" in reason for reason in first_hit(result, "dana-whitfield.md")["reasons"])
    # "leading" is the "lead" of "Project lead: Dana Whitfield", told apart by an ending.
    assert docs(ask(daemon, "Which city does the person leading Project Heron work from?"))[:2] == [
        "kickoff.md",
        "dana-whitfield.md",
    ]
    # A question the best hit answers itself keeps it first, and takes no hop to a sponsor.
    assert docs(ask(daemon, "Who sponsors Project Heron?"))[0] == "kickoff.md"
    # The kickoff holds about half of this question and the lead's page the answer: a
    # multi-hop question holds little of itself, which the coverage floor allows for.
    result = ask(daemon, "How many weeks a month is the lead of Project Heron in Manchester?")
    assert docs(result)[:2] == ["kickoff.md", "dana-whitfield.md"]
    # Neither the kickoff nor the lead's page states a year.
    refused(daemon, "What year did the lead of Project Heron join?", "a year")
    # A service named by its identifier, which extraction reads as a plain word: the
    # page titled with it is the hop.
    result = ask(daemon, "How often is the source system of the job_events dataset backed up?")
    assert docs(result)[:2] == ["job-events.md", "dispatch-ledger.md"]
    # The page the question names itself is no hop: the catalogue row's project is.
    result = ask(daemon, "What is the target launch date of the owning project of the label_printer service?")
    assert docs(result)[:2] == ["catalogue-label-printer.md", "lapwing.md"]
    # The bridge's paragraph names two pages; its sentence that holds the question's words
    # says which one the question links to.
    result = ask(daemon, "Where is the company Ines Varga worked at before joining headquartered?")
    assert docs(result)[:2] == ["ines-varga.md", "orla-freight.md"]
    result = ask(daemon, "Which team does the person Ines Varga reports to lead?")
    assert docs(result)[:2] == ["ines-varga.md", "marta-quist.md"]
    # The link is in the note below the best hit: her own page names her old team, and
    # the org chart update her new one. Its page goes right after it.
    result = ask(daemon, "Where is the team Tove Lind works on based?")
    found = docs(result)
    assert found[found.index("2025-02-org-chart-update.md") + 1] == "ledger-core.md"
    [linked] = [reason for reason in first_hit(result, "ledger-core.md")["reasons"] if "named by" in reason]
    assert "2025-02-org-chart-update.md" in linked
    # A capitalised word after a colon, which extraction takes for a sentence opener,
    # still names the page titled with it.
    result = ask(daemon, "Who is the harbour master where MV Tern is laid up in winter?")
    assert docs(result)[:2] == ["tern.md", "portnahaven.md"]
    # Its front matter titles the port's page, and its heading still says what it is about.
    assert first_hit(result, "portnahaven.md")["title"] == "Portnahaven port and office"
    # The row naming the captain links to his ship; the engineer's row holds "engine" but
    # states the kind of answer, not where the question goes next.
    result = ask(daemon, "What engines are fitted to the ship Captain Ally Munro commands?")
    assert docs(result)[:2] == ["crew-list.md", "skua.md"]
    # Of the ship's page, the chunk that names the kind of thing asked is the one cited.
    assert first_hit(result, "skua.md")["section"].endswith("Particulars")
    # The period is named in a relative clause: it says which vessel, through the March
    # incident, and the plan that answers was written in January.
    result = ask(daemon, "When is the next dry dock for the vessel whose bow thruster failed in March 2026?")
    assert not result["abstained"] and "drydock-plan.md" in docs(result)[:3]
    # A period the question asks about itself still wants a note that speaks of it.
    refused(daemon, "When was MV Skua's dry dock in 2024?", "period")
    # A garage with no page of its own: the contacts list's row that names it, holds a
    # word of the question and gives a phone number is the hop.
    result = ask(daemon, "What's the phone number of the garage that does our car's MOT?")
    assert not result["abstained"] and docs(result)[:2] == ["car.md", "contacts.md"]
    assert any("names 'brackenfield motors'" in reason for reason in first_hit(result, "contacts.md")["reasons"])
    # The same without the keyword leg: the hop reads the kind of value from the wording.
    result = ask(daemon, "What's the phone number of the garage that does our car's MOT?", legs=["vector", "graph"])
    assert any("names 'brackenfield motors'" in reason for reason in first_hit(result, "contacts.md")["reasons"])
    # A person with no page: the crew list's row naming her, under a header that names
    # the kind of thing asked for, says which vessel.
    result = ask(daemon, "Which vessel does the winner of the staff photo competition work on?")
    assert docs(result)[:2] == ["2026-07-newsletter.md", "crew-list.md"]
    # The note says "Lead" where the question says "running": no line holding the
    # question's words names a page, and the page it names first is the link.
    result = ask(daemon, "Which days does the person running the compost bins pilot work?")
    assert docs(result)[:2] == ["pilot.md", "morag-keir.md"]
    # But not when the line holding the question names the link by no page's name.
    result = ask(daemon, "Who is the pier master at the port that only the summer route calls at?")
    assert docs(result)[0] == "route-9.md" and "petrel.md" not in docs(result)[:2]
    # "self-service" is a word of the language, not a name to follow to the kiosks note.
    result = ask(daemon, "How many active borrowers does the library service have?")
    assert docs(result)[0] == "2026-q2-kpis.md"
    assert not any("self-service" in reason for hit in result["hits"] for reason in hit["reasons"])
    # No row naming it gives an email address.
    refused(daemon, "What's the email address of the garage that does our car's MOT?", "an email")
    # "the catalog service", in a sentence wrapped over two lines, names the page titled
    # "catalog".
    result = ask(daemon, "Which database holds the service that Project Heron moves the parts catalogue to?")
    assert docs(result)[:2] == ["kickoff.md", "catalog.md"]
    # A team with no page of its own: the hop is the other note that names it and holds
    # what the best hit does not say ("service", "owned").
    result = ask(daemon, "Which service is owned by the team that checks the dead letter queue for rota events?")
    assert docs(result)[:2] == ["dead-letters.md", "ownership.md"]
    assert any("names 'field ops'" in reason for reason in first_hit(result, "ownership.md")["reasons"])
    # Nothing else naming the team holds what the line leaves out: no hop.
    result = ask(daemon, "Which laptop model does the team that checks the dead letter queue for rota events get?")
    assert not any("as the hit above it does" in reason for hit in result["hits"] for reason in hit["reasons"])


def test_a_question_asking_how_to_do_something_takes_no_hop(daemon):
    wait_mined(daemon)
    # An instruction answers it, not a page the best hit names: the catalog service's
    # page went second for the first, the route's vessel for the second.
    for question, best in [
        ("How do I kick off Project Heron?", "kickoff.md"),
        ("How can we route cars to Lochan pier?", "route-9.md"),
    ]:
        result = ask(daemon, question)
        assert docs(result)[0] == best
        assert not any("hit above it" in reason for hit in result["hits"] for reason in hit["reasons"])
    # Asked for a fact, the same note leads on to the vessel's page.
    assert docs(ask(daemon, "Which vessel calls at Lochan pier?"))[:2] == ["route-9.md", "petrel.md"]


def test_ken_search_explain_says_why_hits_moved(daemon):
    shown = subprocess.run(
        [sys.executable, "-m", "kenning", "--config", str(daemon.config), "search", "--explain",
         "Where is the build cache moving to?"],
        capture_output=True, text=True, timeout=60, check=True,
    ).stdout  # fmt: skip
    assert "superseded by #1" in shown
    assert "moved: supersedes item" in shown
    refused = subprocess.run(
        [sys.executable, "-m", "kenning", "--config", str(daemon.config), "search", "--explain",
         "What is the door code for the Madrid office?"],
        capture_output=True, text=True, timeout=60, check=True,
    ).stdout  # fmt: skip
    assert "no matches" in refused and "madrid" in refused
    # What the floor held back is there to look at, with --explain.
    held = [
        subprocess.run(
            [sys.executable, "-m", "kenning", "--config", str(daemon.config), "search", *explain,
             "How many tickets were sold for the 2026 Harbour Fair?"],
            capture_output=True, text=True, timeout=60, check=True,
        ).stdout  # fmt: skip
        for explain in ((), ("--explain",))
    ]
    assert "--explain shows the" in held[0] and "2026-harbour-fair.md" not in held[0]
    assert "held back:" in held[1] and "2026-harbour-fair.md" in held[1]
    dated = subprocess.run(
        [sys.executable, "-m", "kenning", "--config", str(daemon.config), "search", "--since", "2026", "--json",
         "Team plan price per seat"],
        capture_output=True, text=True, timeout=60, check=True,
    ).stdout  # fmt: skip
    assert '"2026-01-01"' in dated and '"2025-01-01"' not in dated


def test_a_search_scoped_to_a_namespace_names_no_superseder_outside_it(daemon):
    # An agent's note in another namespace says it replaces this one: a search scoped to
    # this namespace must neither point at it nor rank the old note down for it.
    daemon.call(
        "documents.add",
        {
            "title": "Server room door",
            "text": "The server room door code is 4471.",
            "source_uri": "note://door-v1",
            "namespace": "facilities",
            "date": "2025-03",
        },
    )
    daemon.call(
        "documents.add",
        {
            "title": "Server room door",
            "text": "The server room door code is now 9902.",
            "source_uri": "note://door-v2",
            "namespace": "private",
            "supersedes": ["note://door-v1"],
            "date": "2025-09",
        },
    )
    daemon.wait_derived()
    everywhere = ask(daemon, "What is the server room door code?")
    old = next(hit for hit in everywhere["hits"] if hit["path"] == "note://door-v1")
    new = next(hit for hit in everywhere["hits"] if hit["path"] == "note://door-v2")
    assert old["superseded_by"] == new["item_id"]
    for scope in ({"namespace": "facilities"}, {"source": "agent", "namespace": "facilities"}):
        scoped = ask(daemon, "What is the server room door code?", **scope)
        [hit] = [hit for hit in scoped["hits"] if hit["path"] == "note://door-v1"]
        assert hit["superseded_by"] is None, scope
        assert not any("superseded" in reason for reason in hit["reasons"]), scope


def test_a_question_opening_or_closing_a_period_counts_every_date_in_it(daemon):
    # The backup notes speak from June 2025: "since 2024" and "before 2026" take them in,
    # and none is outside what is asked; "before 2025" still takes nothing.
    for question in (
        "How long have billing database backups been kept since 2024?",
        "How long were billing database backups kept before 2026?",
        "How long have billing database backups been kept from 2025 on?",
    ):
        result = ask(daemon, question)
        assert result["abstained"] is None, (question, result["abstained"])
        assert {"backup-policy.md", "backup-audit.md"} <= set(docs(result)[:5]), question
        for name in ("backup-policy.md", "backup-audit.md"):
            assert not any("outside the period" in reason for reason in first_hit(result, name)["reasons"]), question
    refused(daemon, "How long were billing database backups kept before 2025?", "the period asked about")


def test_a_correction_replacing_a_number_ties_however_many_notes_hold_it(library):
    # The old port stands in every note here, so it names nothing in particular as a
    # word; as the value the correction replaces ("instead of 51820") it still ties.
    notes = library.root / "notes"
    notes.mkdir()
    (notes / "2025-04-01-vpn.md").write_text("# VPN setup\n\nThe home VPN runs WireGuard on port 51820.\n")
    (notes / "2025-05-01-vpn-change.md").write_text(
        "# VPN change\n\nCorrection: the home VPN no longer uses port 51820; it runs on port 51999 instead of 51820.\n"
    )
    (notes / "firewall.md").write_text("# Firewall\n\nThe router forwards UDP 51820 for the garage camera.\n")
    # Enough other notes that the new port, in one note of them all, names something.
    for n, chore in enumerate(["gutters", "boiler", "smoke alarms", "bike chain", "tyres", "shed roof"] * 2):
        (notes / f"chore-{n}.md").write_text(f"# Chore {n}\n\nCheck the {chore} in week {n + 1}.\n")
    library.configure([{"name": "notes", "path": notes}])
    daemon = library.daemon()
    status = daemon.wait_idle("notes")
    wait_for(lambda: daemon.call("status")["embedder"]["vectors"] == status["chunks"], timeout=60, what="embedding")
    result = ask(daemon, "Which port does the home VPN run on?")
    assert docs(result)[:2] == ["2025-05-01-vpn-change.md", "2025-04-01-vpn.md"]
    change, setup = first_hit(result, "2025-05-01-vpn-change.md"), first_hit(result, "2025-04-01-vpn.md")
    assert setup["superseded_by"] == change["item_id"]


def test_a_note_dated_after_today_is_not_what_holds_now(library):
    # A roadmap dated years ahead says what will be, not what is.
    ahead = date.today().year + 3
    notes = library.root / "notes"
    notes.mkdir()
    (notes / "archive-server.md").write_text(
        "---\ndate: 2025-06-01\n---\n# Archive server\n\nThe archive server is a Dell R720 in rack 3.\n"
    )
    (notes / "roadmap.md").write_text(
        f"---\ndate: {ahead}-06-01\n---\n# Roadmap for the archive\n\nThe archive server will be replaced by a NAS.\n"
    )
    library.configure([{"name": "notes", "path": notes}])
    daemon = library.daemon()
    status = daemon.wait_idle("notes")
    wait_for(lambda: daemon.call("status")["embedder"]["vectors"] == status["chunks"], timeout=60, what="embedding")
    result = ask(daemon, "What is the archive server now?")
    assert docs(result)[0] == "archive-server.md"
    assert first_hit(result, "archive-server.md")["superseded_by"] is None


def test_a_hugo_note_speaks_from_the_date_its_toml_front_matter_gives(library):
    # Hugo and Zola notes open with TOML between `+++` fences; read as body, the note was
    # dated by its file's mtime (today) and outranked newer notes for "latest".
    notes = library.root / "notes"
    notes.mkdir()
    (notes / "gate.md").write_text(
        '+++\ntitle = "Loading dock"\ndate = "2024-05-05"\n+++\n# Gate codes\n\nThe loading dock gate code is 4471.\n'
    )
    library.configure([{"name": "notes", "path": notes}])
    daemon = library.daemon()
    daemon.wait_idle("notes")
    [hit] = ask(daemon, "loading dock gate code", until="2024")["hits"]
    assert hit["date"] == "2024-05-05" and hit["title"] == "Loading dock"
    assert "+++" not in hit["snippet"] and "2024-05-05" not in hit["snippet"]


def test_a_note_speaks_from_the_day_its_file_name_writes_without_dashes(library):
    # Daily-note plugins and exports name files 20250918-standup.md or 2025_09_19 standup.md.
    notes = library.root / "notes"
    notes.mkdir()
    (notes / "20250918-standup.md").write_text("# Standup\n\nThe zebrafish tank pump was replaced.\n")
    (notes / "2025_09_19 standup.md").write_text("# Standup\n\nThe axolotl tank heater was replaced.\n")
    library.configure([{"name": "notes", "path": notes}])
    daemon = library.daemon()
    daemon.wait_idle("notes")
    result = ask(daemon, "tank pump heater", until="2025-09")
    assert first_hit(result, "20250918-standup.md")["date"] == "2025-09-18"
    assert first_hit(result, "2025_09_19 standup.md")["date"] == "2025-09-19"


def test_a_range_holding_a_day_among_a_logs_lines_finds_the_chunk_holding_it(library):
    """A log's chunk speaks from its last line: dated by it alone, a chunk holding the line
    of 10 March 2013 was left out of a search from 1 to 16 March, and the log's first
    chunk out of one for its first day."""
    notes = library.root / "notes"
    notes.mkdir()
    days = [date(2012, 1, 1) + timedelta(days=n) for n in range(900)]
    log = "".join(f"{day.isoformat()} heron pond water level {400 + n % 97} mm\n" for n, day in enumerate(days))
    (notes / "heron-log.md").write_text("# Heron pond water log\n\n" + log)
    library.configure([{"name": "notes", "path": notes}])
    daemon = library.daemon()
    daemon.wait_idle("notes")
    lines = ["", "", *log.splitlines()]
    for since, until, day in (("2013-03-01", "2013-03-16", "2013-03-10"), ("2012-01-01", "2012-01-01", "2012-01-01")):
        hits = ask(daemon, "heron pond water level", since=since, until=until, limit=50)["hits"]
        held = [lines[hit["line_start"] - 1 : hit["line_end"]] for hit in hits]
        assert any(line.startswith(day) for chunk in held for line in chunk), (since, until, hits)
    # A range before the log finds none of it.
    assert ask(daemon, "heron pond water level", since="2011-06", until="2011-12")["hits"] == []


def test_a_note_dated_by_its_quarter_is_found_by_a_range_overlapping_any_month_of_it(library):
    """`date: Q3 2025` was kept as July alone, so `since 2025-08` left out a note about
    July to September. The hit still shows the quarter's first month."""
    notes = library.root / "notes"
    notes.mkdir()
    (notes / "review.md").write_text("---\ndate: Q3 2025\n---\n# Review\n\nThe heron count fell by a third.\n")
    (notes / "2025-Q4 plan.md").write_text("# Plan\n\nThe heron hide gets a new roof.\n")
    (notes / "july.md").write_text("---\ndate: 2025-07\n---\n# July\n\nThe heron chicks fledged.\n")
    library.configure([{"name": "notes", "path": notes}])
    daemon = library.daemon()
    daemon.wait_idle("notes")
    daemon.call("documents.add", {
        "title": "Survey", "source_uri": "note://survey",
        "text": "---\ndate: 2025 Q2\n---\n# Survey\n\nThe heron survey ran in the spring.\n",
    })  # fmt: skip
    found = {
        bounds: sorted(Path(hit["path"]).name for hit in ask(daemon, "heron", **dict(bounds))["hits"])
        for bounds in (
            (("since", "2025-08"),), (("since", "2025-09-30"),), (("since", "2025-10"),), (("until", "2025-06"),),
            (("since", "2025-06"), ("until", "2025-06")), (("since", "2025-11"), ("until", "2025-11")),
        )
    }  # fmt: skip
    assert found == {
        (("since", "2025-08"),): ["2025-Q4 plan.md", "review.md"],
        (("since", "2025-09-30"),): ["2025-Q4 plan.md", "review.md"],
        (("since", "2025-10"),): ["2025-Q4 plan.md"],
        (("until", "2025-06"),): ["survey"],
        (("since", "2025-06"), ("until", "2025-06")): ["survey"],
        (("since", "2025-11"), ("until", "2025-11")): ["2025-Q4 plan.md"],
    }
    assert first_hit(ask(daemon, "heron count", since="2025-09"), "review.md")["date"] == "2025-07"



CJK_NOTES = {
    # A Japanese correction, a Chinese retraction naming the day of what it takes back, a
    # Korean correction; a Japanese draft beside the rule; a Japanese note and its later
    # restatement for a question asking what holds now.
    "2025-04-01-teirei.md": "# 定例会議について\n\n毎週の定例会議は3階の会議室Aで行います。\n",
    "2025-05-10-teisei.md": "# 訂正：定例会議の場所\n\n毎週の定例会議は3階の会議室Aではなく、5階の会議室Bで行います。\n",
    "2025-04-03-chuchai.md": "# 出差补贴标准\n\n出差补贴标准为每天三百元。\n",
    "2025-05-13-chexiao.md": "# 撤回：出差补贴标准\n\n4月3日发布的出差补贴标准已撤回，请勿使用。\n",
    "2025-04-01-jucha.md": "# 직원 주차장\n\n직원 주차장은 지하 2층에 있습니다.\n",
    "2025-05-10-jeongjeong.md": "# 정정: 직원 주차장\n\n직원 주차장은 더 이상 지하 2층이 아니고 지하 3층에 있습니다.\n",
    "2025-03-01-keihi.md": "# 経費精算\n\n経費精算の締め日は毎月25日です。\n",
    "2025-06-01-an.md": "# 経費精算の締め日（案）\n\n経費精算の締め日を毎月20日に変更する案です。\n",
    "2025-01-10-wifi.md": "# 事務所のWi-Fiパスワード\n\n事務所のWi-Fiパスワードはsakura2025です。\n",
    "2025-08-10-wifi.md": "# 事務所のWi-Fiパスワード\n\n事務所のWi-Fiパスワードはmomiji2025です。\n",
}


def test_chinese_japanese_and_korean_corrections_retractions_drafts_and_now(library):
    notes = library.root / "notes"
    notes.mkdir()
    for name, text in CJK_NOTES.items():
        (notes / name).write_text(text)
    # Enough other notes that a word two of these notes share names something.
    for n, chore in enumerate(["gutters", "boiler", "smoke alarms", "bike chain", "tyres", "shed roof"] * 3):
        (notes / f"chore-{n}.md").write_text(f"# Chore {n}\n\nCheck the {chore} in week {n + 1}.\n")
    library.configure([{"name": "notes", "path": notes}])
    daemon = library.daemon()
    status = daemon.wait_idle("notes")
    wait_for(lambda: daemon.call("status")["embedder"]["vectors"] == status["chunks"], timeout=60, what="embedding")

    for question, newer, older, link in [
        ("定例会議はどこで行いますか？", "2025-05-10-teisei.md", "2025-04-01-teirei.md", "superseded_by"),
        ("出差补贴标准是多少？", "2025-05-13-chexiao.md", "2025-04-03-chuchai.md", "retracted_by"),
        ("직원 주차장은 어디에 있습니까?", "2025-05-10-jeongjeong.md", "2025-04-01-jucha.md", "superseded_by"),
    ]:
        result = ask(daemon, question)
        assert docs(result)[:2] == [newer, older], question
        assert first_hit(result, older)[link] == first_hit(result, newer)["item_id"], question

    rule = ask(daemon, "経費精算の締め日は？")
    assert docs(rule)[:2] == ["2025-03-01-keihi.md", "2025-06-01-an.md"]
    # The title's "（案）" (a draft) is read as a person wrote it, full-width or not.
    assert any(reason.startswith("hedged ('(案)')") for reason in first_hit(rule, "2025-06-01-an.md")["reasons"])

    now = ask(daemon, "現在の事務所のWi-Fiパスワードは？")
    assert docs(now)[:2] == ["2025-08-10-wifi.md", "2025-01-10-wifi.md"]


def test_now_prefers_the_newest_note_about_what_is_asked_not_the_newest_note(library):
    # Two VPNs, each with its own later update; the office's is the newest of all.
    notes = {
        "2025-01-10-office-vpn.md": "# Office VPN\n\nThe office VPN uses OpenVPN on the Fortigate firewall; connect to"
        " vpn.example.com with your SSO login.\n",
        "2025-03-01-home-vpn.md": "# Home VPN\n\nThe home VPN runs WireGuard on the Raspberry Pi in the hall cupboard,"
        " port 51820.\n",
        "2025-06-01-home-vpn-update.md": "# Home VPN update\n\nThe home VPN now runs WireGuard on the router itself,"
        " port 51821; the Raspberry Pi is retired.\n",
        "2025-09-01-office-vpn-update.md": "# Office VPN update\n\nThe office VPN moved to Tailscale; OpenVPN on the"
        " Fortigate is switched off.\n",
    }
    for n, chore in enumerate(["gutters", "boiler", "smoke alarms", "bike chain", "tyres", "shed roof"] * 3):
        notes[f"chore-{n}.md"] = f"# Chore {n}\n\nCheck the {chore} in week {n + 1}.\n"
    daemon = library_of(library, notes)

    home = ask(daemon, "what is the home VPN now")
    assert docs(home)[:2] == ["2025-06-01-home-vpn-update.md", "2025-03-01-home-vpn.md"]
    # The office's update is still the newest about the office VPN, not about the home one.
    office = first_hit(home, "2025-09-01-office-vpn-update.md")
    home_ids = {first_hit(home, name)["item_id"] for name in ("2025-06-01-home-vpn-update.md", "2025-03-01-home-vpn.md")}
    assert not [reason for reason in office["reasons"] if any(f"item {item}," in reason for item in home_ids)]
    # What it says of the office's page ("moved to Tailscale; OpenVPN on the Fortigate is
    # switched off") corrects it.
    assert first_hit(home, "2025-01-10-office-vpn.md")["superseded_by"] == office["item_id"]
    assert docs(ask(daemon, "what is the office VPN now"))[0] == "2025-09-01-office-vpn-update.md"


def test_a_hedge_word_said_to_be_no_hedge_hedges_nothing(library):
    """"This is not a proposal" and "the draft was approved and is now policy" state a
    fact; read as hedged, the newer note went below the old one for "now"."""
    daemon = library_of(library, {
        "standup.md": "---\ndate: 2025-06-01\n---\n# Standup\n\nThe platform standup is at 10:00 every weekday.\n",
        "standup-change.md": "---\ndate: 2025-09-01\n---\n# Standup time\n\n"
        "This is not a proposal: from Monday the platform standup moves to 09:30.\n",
        "leave.md": "---\ndate: 2024-10-01\n---\n# Leave\n\nStaff carry over up to 3 days of annual leave.\n",
        "leave-policy.md": "---\ndate: 2025-10-01\n---\n# Leave policy\n\n"
        "The draft was approved and is now policy: staff carry over up to 5 days of annual leave.\n",
    })  # fmt: skip
    for question, newer, older in (
        ("When is the platform standup now?", "standup-change.md", "standup.md"),
        ("How many days of annual leave can staff carry over now?", "leave-policy.md", "leave.md"),
    ):
        result = ask(daemon, question)
        assert docs(result)[:2] == [newer, older], question
        assert not any("hedged" in reason for reason in first_hit(result, newer)["reasons"]), question


def test_a_note_speaks_from_a_day_written_day_first_with_dots(library):
    """"18.09.2025", as German or Polish notes head a page, was no date: the note took its
    file's mtime, today, and came first for "latest" over notes written since."""
    daemon = library_of(library, {
        "standup-a.md": "# Standup 18.09.2025\n\nThe bandsaw blade in the workshop was swapped.\n",
        "standup-b.md": "---\ndate: 2025-10-02\n---\n# Standup\n\nThe workshop bandsaw blade was swapped again.\n",
    })  # fmt: skip
    assert first_hit(ask(daemon, "workshop bandsaw blade", until="2025-09"), "standup-a.md")["date"] == "2025-09-18"
    assert docs(ask(daemon, "What is the latest on the workshop bandsaw blade?"))[0] == "standup-b.md"


def test_a_later_entry_of_a_log_corrects_an_earlier_entry_of_the_same_log(library):
    """Only separate documents were compared: a decision log's June entry correcting its
    April one ranked below it and left it unmarked. What the log's opening says speaks for
    every entry alike and ties none to another."""
    daemon = library_of(library, {
        "decisions.md": "# Platform decision log\n\n## 2025-04-01\n- The session store uses Redis on the cache hosts.\n\n"
        "## 2025-06-01\n- Correction: the session store uses Valkey instead of Redis, since the licence change.\n\n"
        "## 2025-07-15\n- The metrics pipeline keeps raw samples for 10 days.\n",
        "changelog.md": "# Export changelog\n\nThis changelog supersedes the wiki page on exports.\n\n"
        "## 2025-03-01\n- The nightly export job runs at 02:00 from the batch host.\n\n"
        "## 2025-05-01\n- The nightly export job retries twice before it pages anyone.\n",
    })  # fmt: skip
    result = ask(daemon, "What does the session store use?")
    assert [hit["line_start"] for hit in result["hits"][:2]] == [6, 1], result["hits"][:2]
    assert result["hits"][1]["superseded_by"] == result["hits"][0]["item_id"]
    exports = ask(daemon, "When does the nightly export job run?")["hits"]
    entries = [hit for hit in exports if hit["path"].endswith("changelog.md")]
    assert len(entries) > 1 and not any(hit["superseded_by"] for hit in entries)


def test_a_document_an_agent_says_replaces_another_does_not_disagree_with_it(library):
    """Nine days apart, two values for one thing read as a disagreement even where the
    agent said the newer replaces the older: each hit named the other both as its
    superseder and as what it conflicts with."""
    daemon = library_of(library, {"garden.md": "# Garden\n\nThe hedge is trimmed in late August.\n"})
    daemon.call("documents.add", {
        "title": "Lawn", "source_uri": "note://lawn", "date": "2025-05-01",
        "text": "Mow the back lawn every 7 days in summer.",
    })  # fmt: skip
    daemon.call("documents.add", {
        "title": "Lawn care", "source_uri": "note://lawn-care", "date": "2025-05-10", "supersedes": ["note://lawn"],
        "text": "Mow the back lawn every 10 days in summer.",
    })  # fmt: skip
    result = ask(daemon, "How often should the back lawn be mowed?")
    newer, older = result["hits"][:2]
    assert (newer["path"], older["path"]) == ("note://lawn-care", "note://lawn")
    assert older["superseded_by"] == newer["item_id"]
    assert newer["conflicts_with"] == [] and older["conflicts_with"] == []


@pytest.mark.parametrize("named", ["the kiln peak figure", "the glaze firing report of 2 May"])
def test_a_retraction_taken_back_leaves_the_claim_standing(library, named):
    """"Disregard the withdrawal" takes back the withdrawal, not the claim: the claim
    kept `retracted_by` pointing at a notice that no longer stood, and the notice that
    took it back was tied to nothing, or, naming the claim by its title and date, was
    taken for one more retraction of it."""
    daemon = library_of(library, {
        "2025-05-02-kiln.md": "# Glaze firing report\n\nThe studio kiln reached 1,280 °C at peak in the glaze firing.\n",
        "2025-05-09-kiln-withdrawn.md": "# Withdrawn: glaze firing figure\n\n"
        "The kiln peak figure of 1,280 °C is withdrawn: the thermocouple looked faulty. Disregard it.\n",
        "2025-05-20-kiln-reinstated.md": f"# Kiln figure reinstated\n\nDisregard the withdrawal of {named}: "
        "the thermocouple was checked and is fine, so the 1,280 °C peak stands.\n",
    })  # fmt: skip
    result = ask(daemon, "What peak temperature did the studio kiln reach?")
    assert docs(result)[0] == "2025-05-20-kiln-reinstated.md"
    claim, notice = first_hit(result, "2025-05-02-kiln.md"), first_hit(result, "2025-05-09-kiln-withdrawn.md")
    assert claim["retracted_by"] is None
    assert notice["retracted_by"] == first_hit(result, "2025-05-20-kiln-reinstated.md")["item_id"]


NPS_SURVEY = {
    "2025-07-08-survey.md": "# Q2 2025 customer survey\n\n- Responses: 412\n- Q2 NPS: 61 (Q1: 48)\n",
    "2025-07-30-nps-retraction.md": "---\ntitle: \"Retraction: Q2 NPS\"\n---\n# Retraction: Q2 NPS figure\n\n"
    "The Q2 NPS of 61 in the Q2 2025 customer survey is retracted. The survey export included about 90 responses\n"
    "from internal test accounts, which all scored 10. The report is withdrawn pending recalculation; do not use\n"
    "the 61 figure in decks or customer material.\n",
}


def test_a_retraction_titled_as_one_over_its_heading_retracts_the_claim(library):
    """A notice whose title ("Retraction: Q2 NPS") stands over its heading ("# Retraction:
    Q2 NPS figure") read as retracting a retraction, "retraction" twice in a row: it was
    tied to no claim, and the survey it retracts carried no `retracted_by`."""
    result = ask(library_of(library, NPS_SURVEY), "What was our NPS score in Q2 2025?")
    assert docs(result)[:2] == ["2025-07-30-nps-retraction.md", "2025-07-08-survey.md"]
    notice = first_hit(result, "2025-07-30-nps-retraction.md")
    assert first_hit(result, "2025-07-08-survey.md")["retracted_by"] == notice["item_id"]


def test_a_report_written_after_the_period_its_title_names_is_not_moved_down_for_it(library):
    """The Q2 2025 survey's report, written on 8 July, went down as "dated 2025-07-08,
    outside the period asked about" for a question about Q2 2025, though its title names
    it (and the floor counted it as speaking of Q2)."""
    result = ask(library_of(library, NPS_SURVEY), "How many responses did the Q2 2025 customer survey get?")
    survey = first_hit(result, "2025-07-08-survey.md")
    assert not any("outside the period" in reason for reason in survey["reasons"]), survey["reasons"]


def test_a_report_whose_title_names_a_longer_period_goes_below_a_note_of_the_month_asked(library):
    """"Annual report 2025", written in February 2026, names 2025, not January 2025: kept
    up for it, it went above the January minutes giving January's fee."""
    daemon = library_of(library, {
        "minutes-jan.md": "---\ndate: 2025-01-10\n---\n# Committee minutes\n\nMembership fee is £40 a year.\n",
        "annual-report.md": "---\ndate: 2026-02-05\n---\n# Annual report 2025\n\n"
        "Membership fee is now £55 a year after the September increase.\n",
        "newsletter.md": "---\ndate: 2025-06-01\n---\n# Summer newsletter\n\nThe barbecue is on 12 July.\n",
    })  # fmt: skip
    assert docs(ask(daemon, "what was the membership fee in January 2025?"))[0] == "minutes-jan.md"


def test_a_notice_headed_withdrawal_rescinded_takes_the_withdrawal_back(library):
    daemon = library_of(library, {
        "2025-05-02-kiln.md": "# Glaze firing report\n\nThe studio kiln reached 1,280 °C at peak in the glaze firing.\n",
        "2025-05-09-kiln-withdrawn.md": "# Withdrawn: glaze firing figure\n\n"
        "The kiln peak figure of 1,280 °C is withdrawn: the thermocouple looked faulty. Disregard it.\n",
        "2025-05-20-kiln-rescinded.md": "# Withdrawal rescinded\n\n"
        "The thermocouple was checked and is fine, so the kiln peak figure of 1,280 °C stands.\n",
    })  # fmt: skip
    result = ask(daemon, "What peak temperature did the studio kiln reach?")
    notice = first_hit(result, "2025-05-09-kiln-withdrawn.md")
    assert notice["retracted_by"] == first_hit(result, "2025-05-20-kiln-rescinded.md")["item_id"]
    assert first_hit(result, "2025-05-02-kiln.md")["retracted_by"] is None


@pytest.mark.parametrize("title", ["Product recall - withdrawn from sale", "Product recall: withdrawn from sale"])
def test_a_recall_titled_withdrawn_from_sale_retracts_the_release(library, title):
    """A title reading "recall ... withdrawn" was taken for a recall taken back."""
    daemon = library_of(library, {
        "2025-05-02-batch.md": "# Batch 42 release\n\nBatch 42 of the oat biscuits is released for sale.\n",
        "2025-05-09-recall.md": f"# {title}\n\nBatch 42 of the oat biscuits is recalled: possible nut contamination."
        " Do not sell.\n",
    })  # fmt: skip
    result = ask(daemon, "can batch 42 of the oat biscuits be sold?")
    assert docs(result)[0] == "2025-05-09-recall.md"
    assert first_hit(result, "2025-05-02-batch.md")["retracted_by"] == first_hit(result, "2025-05-09-recall.md")["item_id"]


def test_taking_back_a_withdrawal_leaves_another_things_retraction_alone(library):
    """"Disregard the withdrawal of the tortoise kiln figure" takes back a withdrawal of
    the kiln figure, which the library does not hold: the NPS retraction, which says the
    survey "is withdrawn", was marked retracted by it, since every retraction is a
    withdrawal."""
    # Among a dozen notes, where "withdrawal" is no word every other note holds.
    notes = dict(NPS_SURVEY) | {
        f"{topic}.md": f"# {topic.title()}\n\nThe {topic} is checked every {weeks} weeks by the office team.\n"
        for weeks, topic in enumerate(("boiler", "hedge", "printer", "van", "fridge", "alarm", "roof", "gate"), 2)
    }
    notes["2026-08-03-kiln.md"] = (
        "---\ntitle: Withdrawal retracted\n---\n# Withdrawal retracted\n\n"
        "Disregard the withdrawal of the tortoise kiln figure of 1,280 °C. The figure stands; use it again.\n"
    )
    result = ask(library_of(library, notes), "kiln figure")
    assert first_hit(result, "2025-07-30-nps-retraction.md")["retracted_by"] is None


def test_a_page_whose_answering_line_names_nothing_asked_disagrees_with_no_other_things_page(library):
    """The dispatch-api runbook's "Listens on port 8080", under its own title, gives no
    port of the notifier's and names no notifier anywhere: it disagreed with the notifier
    runbook's "notifier listens on port 7312". A wiki page giving the notifier another
    port does disagree."""
    notes = {
        "notifier.md": "---\ndate: 2025-11-04\n---\n# notifier runbook\n\n## Where it runs\n\n"
        "- Nomad job `notifier` in the `prod-eu` namespace, 3 allocations.\n"
        "- notifier listens on port 7312 (HTTP, internal only).\n",
        "dispatch-api.md": "---\ndate: 2025-10-20\n---\n# dispatch-api runbook\n\n"
        "dispatch-api is the public REST API for jobs, technicians and schedules.\n\n"
        "- Listens on port 8080 behind the API gateway; the admin port is 8081 (internal).\n",
        "ops-wiki.md": "---\ndate: 2025-11-02\n---\n# Ops wiki: services\n\nThe notifier listens on port 7313.\n",
        "garden.md": "---\ndate: 2025-06-01\n---\n# Garden\n\nThe hedge is trimmed in late August.\n",
    }
    result = ask(library_of(library, notes), "What port does the notifier service listen on?")
    wiki, runbook = first_hit(result, "ops-wiki.md"), first_hit(result, "notifier.md")
    assert (wiki["conflicts_with"], runbook["conflicts_with"]) == ([runbook["item_id"]], [wiki["item_id"]])
    assert first_hit(result, "dispatch-api.md")["conflicts_with"] == []


def test_notes_headed_by_the_day_they_were_written_do_not_disagree_about_when(library):
    """For a question asking when, the day in each standup note's heading was read as its
    answer: a week of notes each carried `conflicts_with` every other."""
    notes = {
        f"2025-09-{day}-platform-standup.md": f"# Platform standup, {day} September 2025\n\n"
        "- Ines: finishing the billing export.\n- Marek: on call, two pages overnight.\n"
        for day in range(15, 20)
    }
    notes["rituals.md"] = "---\ndate: 2025-06-01\n---\n# Team rituals\n\nThe platform standup is at 10:00 every weekday.\n"
    hits = ask(library_of(library, notes), "When is the platform standup?")["hits"]
    assert len([hit for hit in hits if "standup.md" in hit["path"]]) == 5
    assert [hit["conflicts_with"] for hit in hits] == [[]] * len(hits)


def test_a_note_saying_what_holds_from_a_day_speaks_of_that_days_year(library):
    """"As of 1 January 2026" in a note written in September 2025 says what holds in 2026,
    as "from January 2026" did; a day a note wrote out named no period, and a question
    about 2026 was refused for want of a note speaking of it."""
    daemon = library_of(library, {
        "tooling.md": "---\ndate: 2025-09-01\n---\n# Tooling\n\n"
        "As of 1 January 2026, the workshop tooling budget is 6,000 pounds a year.\n",
        "garden.md": "---\ndate: 2025-09-01\n---\n# Garden\n\nThe hedge is trimmed in late August.\n",
    })  # fmt: skip
    result = ask(daemon, "What is the workshop tooling budget in 2026?")
    assert result["abstained"] is None and docs(result)[0] == "tooling.md"
    refused(daemon, "What was the workshop tooling budget in 2024?", "the period asked about")


def test_documents_saying_in_a_ring_that_each_replaces_the_next_leave_the_last_word_standing(library):
    """A says it replaces C (not yet written), B replaces A, C replaces B: each hit was
    superseded by another, so nothing was current and the oldest came first. Two that
    name each other already left the later word standing; a ring does so too."""
    daemon = library_of(library, {"garden.md": "# Garden\n\nThe hedge is trimmed in late August.\n"})
    for name, bar, replaces in (("a", "1.2", "c"), ("b", "1.5", "a"), ("c", "1.8", "b")):
        daemon.call("documents.add", {
            "title": f"Boiler {name}", "source_uri": f"note://boiler-{name}", "supersedes": [f"note://boiler-{replaces}"],
            "text": f"The boiler pressure should sit at {bar} bar when the heating is on.",
        })  # fmt: skip
    hits = ask(daemon, "What should the boiler pressure be?")["hits"][:3]
    ids = {hit["path"]: hit["item_id"] for hit in hits}
    assert [hit["path"] for hit in hits] == ["note://boiler-c", "note://boiler-b", "note://boiler-a"]
    assert [hit["superseded_by"] for hit in hits] == [None, ids["note://boiler-c"], ids["note://boiler-b"]]


def test_a_ring_of_replacements_with_one_member_not_among_the_hits_still_leaves_the_last_word_standing(library):
    """A says it replaces C, B replaces A, C replaces B, but only A and C answer the
    question: the ring was looked for among the hits alone, so C (the last word) stayed
    superseded by A, whose link was stated first, and the oldest value came first."""
    daemon = library_of(library, {"garden.md": "# Garden\n\nThe hedge is trimmed in late August.\n"})
    texts = {
        "a": "The boiler pressure should sit at 1.2 bar when the heating is on.",
        "b": "Gutters are cleared of leaves every October.",
        "c": "The boiler pressure should sit at 1.8 bar when the heating is on.",
    }
    for name, replaces in (("a", "c"), ("b", "a"), ("c", "b")):
        daemon.call("documents.add", {
            "title": f"House note {name}", "source_uri": f"note://house-{name}", "supersedes": [f"note://house-{replaces}"],
            "text": texts[name],
        })  # fmt: skip
    hits = [hit for hit in ask(daemon, "What should the boiler pressure be?")["hits"] if hit["path"] != "garden.md"]
    assert [hit["path"] for hit in hits] == ["note://house-c", "note://house-a"]
    assert hits[0]["superseded_by"] is None and hits[1]["superseded_by"] is not None


def test_a_note_dated_by_its_iso_week_speaks_from_that_weeks_days(library):
    """Sprint and standup notes write the week ("Sprint review W40 2025", a file named
    2025-W38-review.md): such a note was dated only to its year, so a question naming
    the week could not tell it from the year's other sprints. "W38" alone, "ISO-W38" and
    "W3C" name no week."""
    daemon = library_of(library, {
        "2025-W38-review.md": "# Sprint review W38\n\nThe payments team shipped the refund export to finance.\n",
        "sprint-40.md": "# Sprint review W40 2025\n\nThe payments team shipped the refund export retry button.\n",
        "refund-plan.md": "---\ndate: 2025-03-04\n---\n# Refund export plan\n\n"
        "The payments team will build the refund export in W38.\n",
        "tracker.md": "# ISO-W38 tracker 2025\n\nThe kiln booking ticket sits in the ISO-W38 tracker.\n",
        "w3c.md": "# W3C 2025 audit\n\nThe kiln booking page passed the W3C audit.\n",
    })  # fmt: skip
    hits = [hit for query in ("refund export", "kiln booking") for hit in ask(daemon, query)["hits"]]
    dated = {Path(hit["path"]).name: hit["date"] for hit in hits}
    assert dated["2025-W38-review.md"] == "2025-09-15" and dated["sprint-40.md"] == "2025-09-29"
    assert dated["tracker.md"] == dated["w3c.md"] == "2025"
    # A week's note speaks through its Sunday.
    assert "2025-W38-review.md" in docs(ask(daemon, "refund export", since="2025-09-21"))
    assert "2025-W38-review.md" not in docs(ask(daemon, "refund export", since="2025-09-22"))
    result = ask(daemon, "What did the payments team ship in W38 2025?")
    assert docs(result)[0] == "2025-W38-review.md"
    assert any("outside the period" in reason for reason in first_hit(result, "sprint-40.md")["reasons"])


def test_a_hedge_word_said_to_have_been_one_hedges_nothing_and_a_real_proposal_still_does(library):
    """"This was a proposal; it is now approved" and 'the "draft" label was removed' say
    the decision stands; read as hedged, it ranked below the rule it replaced. "A
    proposal, not yet approved" and "if approved, the draft label will be removed" are
    still proposals."""
    daemon = library_of(library, {
        "meals.md": "---\ndate: 2025-03-01\n---\n# Travel meals\n\nThe meal allowance on trips is £25 a day.\n",
        "meals-2025.md": "---\ndate: 2025-09-01\n---\n# Travel meals\n\n"
        "This was a proposal; it is now approved: the meal allowance on trips is £30 a day.\n",
        "remote.md": "---\ndate: 2024-10-01\n---\n# Remote work\n\nStaff may work from home two days a week.\n",
        "remote-policy.md": "---\ndate: 2025-10-01\n---\n# Remote work policy\n\n"
        'The "draft" label was removed on 2 October: staff may work from home three days a week.\n',
        "parking.md": "---\ndate: 2025-01-10\n---\n# Visitor parking\n\nVisitors park their cars in bay C.\n",
        "parking-2025.md": "---\ndate: 2025-06-10\n---\n# Visitor parking\n\n"
        "This was a proposal, not yet approved: visitors park their cars in bay F.\n",
        "lockers.md": "---\ndate: 2025-02-01\n---\n# Lockers\n\nBike lockers are emptied every Friday.\n",
        "lockers-2025.md": "---\ndate: 2025-07-01\n---\n# Lockers\n\n"
        "If approved, the draft label will be removed: bike lockers are emptied every Monday.\n",
    })  # fmt: skip
    for question, first, second in (
        ("What is the meal allowance on trips now?", "meals-2025.md", "meals.md"),
        ("How many days a week may staff work from home now?", "remote-policy.md", "remote.md"),
        ("Where do visitors park their cars now?", "parking.md", "parking-2025.md"),
        ("When are the bike lockers emptied now?", "lockers.md", "lockers-2025.md"),
    ):
        result = ask(daemon, question)
        assert docs(result)[:2] == [first, second], question
        hedged = [any("hedged" in reason for reason in first_hit(result, name)["reasons"]) for name in (first, second)]
        assert hedged == [False, first in ("parking.md", "lockers.md")], question


def test_a_cjk_notice_naming_the_claim_by_its_title_retracts_it(library):
    """「出張規程（2025年4月版）を撤回します」 names the rule by its title, but a run of
    Chinese or Japanese was one word to the title's pairs, so for a question sharing no
    word with the notice none was looked for and the withdrawn rule answered alone."""
    daemon = library_of(library, {
        "2025-04-01-kitei.md": "# 出張規程（2025年4月版）\n\n国内出張の日当は一日3000円です。\n",
        "2025-06-10-oshirase.md": "# 総務からのお知らせ\n\n出張規程（2025年4月版）を撤回します。\n",
        "2025-04-03-buchong.md": "# 差旅报销办法\n\n差旅报销的住宿上限为每晚五百元。\n",
        "2025-06-12-tongzhi.md": "# 行政通知\n\n差旅报销办法已撤回，请勿使用。\n",
        # Part of the title names the subject, not the note: no retraction of the rules.
        "2025-06-20-xitong.md": "# 系统通知\n\n旧的差旅报销系统已撤回，请使用新系统。\n",
    })  # fmt: skip
    for question, claim, notice in (
        ("日当はいくらですか？", "2025-04-01-kitei.md", "2025-06-10-oshirase.md"),
        ("住宿上限是多少？", "2025-04-03-buchong.md", "2025-06-12-tongzhi.md"),
    ):
        result = ask(daemon, question)
        assert docs(result)[:2] == [notice, claim], question
        assert first_hit(result, claim)["retracted_by"] == first_hit(result, notice)["item_id"], question


def test_a_note_told_not_to_draft_something_or_said_to_be_no_draft_is_not_hedged(library):
    """"Don't draft the kiln budget yet; the kiln budget is £40k" and "This isn't a
    draft" were read as drafts, below the older figure they replace. "Do not draft" was
    read as "not a draft" and so hedged nothing; now as what it is, an instruction. So
    was "Please draft the reply to the council", a request."""
    daemon = library_of(library, {
        "pier.md": "---\ndate: 2025-03-01\n---\n# Pier fee\n\nThe pier fee is £30 a day.\n",
        "pier-new.md": "---\ndate: 2025-09-01\n---\n# Pier fee\n\n"
        "Please draft the reply to the council; the pier fee is £45 a day.\n",
        "budget.md": "---\ndate: 2025-03-01\n---\n# Kiln budget\n\nThe kiln budget is £30k.\n",
        "budget-new.md": "---\ndate: 2025-09-01\n---\n# Kiln budget\n\n"
        "Don't draft the kiln budget yet; the kiln budget is £40k.\n",
        "store.md": "---\ndate: 2025-03-01\n---\n# Glaze store\n\nThe glaze store opens at 08:00.\n",
        "store-new.md": "---\ndate: 2025-09-01\n---\n# Glaze store\n\n"
        "This isn't a draft: the glaze store opens at 09:00.\n",
        "clay.md": "---\ndate: 2025-03-01\n---\n# Clay order\n\nThe clay order is 200 kg a month.\n",
        "clay-new.md": "---\ndate: 2025-09-01\n---\n# Clay order\n\n"
        "Do not draft a new clay order; the clay order is 300 kg a month.\n",
        "wage.md": "---\ndate: 2025-03-01\n---\n# Studio wage\n\nThe studio wage is £12 an hour.\n",
        "wage-new.md": "---\ndate: 2025-09-01\n---\n# Studio wage\n\n"
        "We can't draft the rota yet; the studio wage is £13 an hour.\n",
    })  # fmt: skip
    for question, newer, older in (
        ("How much is the kiln budget now?", "budget-new.md", "budget.md"),
        ("What is the studio wage now?", "wage-new.md", "wage.md"),
        ("When does the glaze store open now?", "store-new.md", "store.md"),
        ("How big is the clay order now?", "clay-new.md", "clay.md"),
        ("What is the pier fee now?", "pier-new.md", "pier.md"),
    ):
        result = ask(daemon, question)
        assert docs(result)[:2] == [newer, older], question
        assert not any("hedged" in reason for reason in first_hit(result, newer)["reasons"]), question


def test_a_version_written_with_dots_dates_no_note(library):
    """"v2.1.2025" and "release 3.10.2025" were read as 2 January and 3 October 2025, as
    "18.09.2025" is, and the release notes spoke from days they never name. A day and a
    month of two digits each after "Release" are a date all the same: that note took its
    file's mtime, today, and a question about September 2025 missed it."""
    daemon = library_of(library, {
        "rollout.md": "# Release 18.09.2025\n\nThe glost kiln firmware rolls out to every studio.\n",
        "mixer.md": "# Release v2.1.2025\n\nThe glaze mixer firmware adds a slow stir mode.\n",
        "wheel.md": "# Notes on release 3.10.2025\n\nThe pottery wheel firmware fixes a speed bug.\n",
        "standup.md": "# Standup 18.09.2025\n\nThe kiln firmware was flashed again.\n",
        # A version's word is a whole word: German weekdays end in "tag".
        "sitzung.md": "# Montag 22.09.2025 Teamsitzung\n\nDie Ofen-Firmware läuft.\n",
    })  # fmt: skip
    dated = {Path(hit["path"]).name: hit["date"] for hit in ask(daemon, "firmware")["hits"]}
    assert dated["standup.md"] == "2025-09-18"
    assert dated["sitzung.md"] == "2025-09-22"
    assert dated["rollout.md"] == "2025-09-18"
    # By their files' mtime, today.
    assert min(dated["mixer.md"], dated["wheel.md"]) > "2026", dated
    assert sorted(docs(ask(daemon, "firmware", until="2025"))) == ["rollout.md", "sitzung.md", "standup.md"]


def test_a_note_dated_in_chinese_numerals_speaks_from_that_day(library):
    """"二〇二五年九月十八日" and "二零二五年" were no dates, where "2025年9月18日" is one: the
    notes took their files' mtime, today, and a question naming the month missed them."""
    daemon = library_of(library, {
        "jiyao.md": "# 会议纪要 二〇二五年九月十八日\n\n陶艺工作室的窑炉检修完成。\n",
        "zongjie.md": "# 年度总结 二零二五年\n\n陶艺工作室的釉料供应商更换。\n",
        "2025-03-02-tongzhi.md": "# 通知\n\n陶艺工作室的窑炉暂停使用。\n",
    })  # fmt: skip
    dated = {Path(hit["path"]).name: hit["date"] for hit in ask(daemon, "陶艺工作室")["hits"]}
    assert dated == {"jiyao.md": "2025-09-18", "zongjie.md": "2025", "2025-03-02-tongzhi.md": "2025-03-02"}
    assert docs(ask(daemon, "二〇二五年九月窑炉怎么样？"))[0] == "jiyao.md"


def test_a_question_naming_a_fiscal_year_prefers_the_notes_of_that_calendar_year(library):
    """"FY2025" was a name no note holds, so the question was refused, and "FY25" no
    period at all. A fiscal year is read as the calendar year of its number; a note
    headed "FY24 results" speaks from 2024. One headed "fy 20 items", a count, spoke
    from 2020, and a question about it looked for notes of 2020."""
    daemon = library_of(library, {
        "backlog.md": "# Glaze shop backlog: fy 20 items\n\nThe glaze shop reorders cobalt oxide.\n",
        "reorder.md": "---\ndate: 2025-11-03\n---\n# Cobalt reorder\n\nThe glaze shop reorders fy 20 items of cobalt.\n",
        "rev-2024.md": "---\ndate: 2024-12-15\n---\n# Revenue review\n\nThe kiln workshop revenue was £310k.\n",
        "rev-2025.md": "---\ndate: 2025-12-15\n---\n# Revenue review\n\nThe kiln workshop revenue was £420k.\n",
        "rev-2026.md": "---\ndate: 2026-11-15\n---\n# Revenue review\n\nThe kiln workshop revenue was £505k.\n",
        "results.md": "# FY24 results\n\nThe glaze shop revenue was £90k.\n",
    })  # fmt: skip
    for named in ("FY2025", "FY25", "FY 2025", "fiscal year 2025", "fiscal 2025"):
        result = ask(daemon, f"What was the kiln workshop revenue in {named}?")
        assert result["abstained"] is None and docs(result)[0] == "rev-2025.md", (named, result["abstained"])
        assert any("outside the period" in reason for reason in first_hit(result, "rev-2026.md")["reasons"]), named
    assert first_hit(ask(daemon, "glaze shop revenue"), "results.md")["date"] == "2024"
    # By its file's mtime, today.
    assert first_hit(ask(daemon, "glaze shop backlog"), "backlog.md")["date"] > "2026"
    counted = ask(daemon, "Which cobalt reorder has fy 20 items?")
    assert counted["abstained"] is None and docs(counted)[0] == "reorder.md", counted["abstained"]
    assert not any("period" in reason for reason in first_hit(counted, "reorder.md")["reasons"]), counted


def test_a_year_that_ends_a_sentence_is_the_period_it_names(library):
    """"Up from £3.2m in 2024." names 2024 as much as "in 2024, up" does: the full stop
    after the year hid it, and the year's question was refused because no hit about it
    seemed to speak of the period."""
    daemon = library_of(library, {
        "review.md": "---\ndate: 2025-12-15\n---\n# Annual review\n\n"
        "Kiln workshop revenue was £4.1m this year, up from £3.2m in 2024.\n",
        "kilns.md": "---\ndate: 2025-03-02\n---\n# Kilns\n\nThe workshop has two electric kilns.\n",
    })  # fmt: skip
    result = ask(daemon, "What was the kiln workshop revenue in 2024?")
    assert result["abstained"] is None and "review.md" in docs(result), result["abstained"]


def test_a_log_entry_of_the_period_giving_a_things_versions_answers_what_was_decided_about_them(library):
    """"Postgres 16 everywhere by March" on a decision log's line of 2 February 2026 says
    what was decided about Postgres versions then, without the word "versions": as the
    rest of the question beside its period it held only "Postgres", less than half of
    it, and the question was refused as if nothing spoke of February."""
    daemon = library_of(library, {
        "decisions.md": "# Engineering decision log\n\nNewest at the bottom.\n\n## 2025\n\n"
        "- 2025-09-18 — Job queue moves to NATS JetStream (Marco)\n\n## 2026\n\n"
        "- 2026-01-12 — Platform on-call grows to 8 engineers (Priya)\n"
        "- 2026-02-02 — Postgres 16 everywhere by March; 17 evaluated in Q3 (Marco)\n",
        "backups.md": "# Backups\n\nPostgres backups run nightly from the batch host.\n",
        "failover.md": "# Failover\n\nPostgres failover is manual; page the platform on-call first.\n",
        "replicas.md": "# Replicas\n\nEach Postgres primary has two streaming replicas.\n",
        "api.md": "# API\n\nOld API versions are switched off a year after their successor ships.\n",
    })  # fmt: skip
    result = ask(daemon, "What did we decide about Postgres versions in February 2026?")
    assert result["abstained"] is None, result["abstained"]
    assert docs(result)[0] == "decisions.md" and result["hits"][0]["date"] == "2026-02-02"
    # A thing no entry of the period gives a version of is still refused.
    refused(daemon, "What did we decide about NATS versions in February 2026?", "period")


def test_a_question_about_a_things_versions_answered_by_no_number_is_not_refused(library):
    """"What is the rule about API versions?" is answered by a rule that gives no version
    ("Old API versions are switched off..."), and "Which versions of Python..." by
    "Python 3.11", which stands after no word "versions": both were refused as asking
    for a version that no best hit states."""
    daemon = library_of(library, {
        "api.md": "# API\n\nOld API versions are switched off a year after their successor ships.\n",
        "billing.md": "# Billing service\n\nThe billing service supports Python 3.11 and Python 3.12 only.\n",
        "android.md": "# Android app\n\nWe keep the two newest releases of the Android app in the store.\n",
    })  # fmt: skip
    for question, answer in (
        ("What is the rule about API versions?", "api.md"),
        ("What did we decide about versions of the Android app?", "android.md"),
        ("Which versions of Python does the billing service support?", "billing.md"),
    ):
        result = ask(daemon, question)
        assert result["abstained"] is None and docs(result)[0] == answer, (question, result["abstained"])

def test_a_section_stating_the_sum_asked_for_is_cited_before_one_naming_the_word(library):
    """"A learning budget of £1,000 a year for courses" answers "How much money does each
    person get for courses?" without the word "money", as the floor counts it; the
    section saying "company money" held more of the question's words and was cited."""
    daemon = library_of(library, {
        "expenses.md": "# Expenses policy\n\nHow to claim what you spend for work.\n\n## General rules\n\n"
        "- Spend company money as if it were your own: the reasonable option, not the cheapest.\n"
        "- Get approval from your manager before booking anything over £500.\n"
        "- Alcohol is not expensed, except at team events approved by a director.\n\n"
        "## Booking travel\n\nBook trains and hotels through TravelPerk so they are paid centrally.\n"
        "Standard class for trains; economy for flights under six hours.\n\n"
        "## Mileage\n\n- Using your own car: 45p a mile for the first 10,000 miles, then 25p.\n"
        "- Taxis are fine when there is no reasonable public transport.\n\n"
        "## Training and books\n\nEach person has a learning budget of £1,000 a year for courses and books.\n"
        "Agree conferences with your manager; books need no approval.\n",
        "leave.md": "# Leave\n\nEach person gets 25 days of holiday a year, plus bank holidays.\n",
        "laptops.md": "# Laptops\n\nLaptops are replaced every four years for each person.\n",
    })  # fmt: skip
    result = ask(daemon, "How much money does each person get for courses?")
    assert result["abstained"] is None, result["abstained"]
    hit = first_hit(result, "expenses.md")
    assert hit["line_start"] <= 23 <= hit["line_end"], (hit["line_start"], hit["line_end"], hit["reasons"])


def test_a_documents_section_holding_the_questions_words_together_is_cited(library):
    """"Which header should I send...?" is answered by the changelog's entry saying "send
    an `Idempotency-Key` header"; an older entry holding a little more of the question's
    words one at a time ("created duplicate schedule slots") was cited."""
    daemon = library_of(library, {
        "CHANGELOG.md": "# Changelog: dispatch-api\n\nAll notable changes to the dispatch-api service.\n\n"
        "## 2025.05.2 (2025-05-21)\n\n"
        "- Idempotency keys: send an `Idempotency-Key` header on every POST to make retries safe.\n"
        "- Fix: pagination cursors expired after 10 minutes; they now last 24 hours.\n\n"
        "## 2025.04.0 (2025-04-08)\n\n- Attachments can be listed and deleted through the API.\n"
        "- Webhook signing secrets can be rotated without downtime.\n\n"
        "## 2024.11.3 (2024-11-27)\n\n"
        "- Fix: a daylight saving change created duplicate schedule slots for night shifts.\n",
        "jobs.md": "# Jobs\n\nRepeating jobs are created each morning; job creation is open to dispatchers.\n",
        "webhooks.md": "# Webhooks\n\nWe send a signature header with every webhook, naming the jobs it is about.\n",
        "rota.md": "# Rota\n\nWeekend jobs are created on Fridays and shared out.\n",
    })  # fmt: skip
    result = ask(
        daemon, "Which header should I send so that repeating a job-creation request does not create duplicate jobs?"
    )
    assert result["abstained"] is None, result["abstained"]
    hit = first_hit(result, "CHANGELOG.md")
    assert hit["line_start"] <= 7 <= hit["line_end"], (hit["line_start"], hit["line_end"], hit["reasons"])
