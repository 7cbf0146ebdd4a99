"""Generate kenning's own multi-hop retrieval set: a fictional company wiki.

    .venv/bin/python bench/multihop/make_set.py           # rewrite bench/multihop/data/
    .venv/bin/python bench/multihop/make_set.py --check   # regenerate elsewhere, compare with the committed copy
    .venv/bin/python bench/multihop/make_set.py --out DIR # write somewhere else
    .venv/bin/python bench/multihop/make_set.py --out DIR --seed 7
                                                     # another world, unseen: a change
                                                     # built on the committed set is
                                                     # checked on it

A seeded world of people, projects, organisations, towns, software libraries, services
and datasets is written out as short markdown wiki pages. A multi-hop question names an
entity A and asks for an attribute of an entity B that A is linked to: one page states
the link ("Project Falcon is led by Maria Chen."), another states the attribute ("Maria
works from the Varnholm office."). The question shares its rare words with the first
page only; with the answer page it shares nothing but words that at least COMMON_DF
pages hold (like "office"), which this script checks with kenning's own FTS5 tokenizer.
Single-hop control questions name B itself. Distractor pages mention B in passing, use
the attribute words for other entities, and carry similar names.

Same seed, same bytes: nothing iterates over a set, and every random draw goes through
one `random.Random`.
"""

from __future__ import annotations

import argparse
import filecmp
import json
import random
import re
import shutil
import sqlite3
import sys
import tempfile
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from kenning.retrieval.query import STOPWORDS

SEED = 20250214
OUT = Path(__file__).resolve().parent / "data"
MULTI_HOP_QUESTIONS = 150
SINGLE_HOP_QUESTIONS = 50
# A question word the answer page also holds must be in at least this many pages, so it
# is no clue to which page answers: "office", "team", "license", not "Falcon".
COMMON_DF = 25
TOKENIZER = "porter unicode61 remove_diacritics 2"  # as kenning's items_fts

# --- name pools -------------------------------------------------------------------------

FIRST = """Maria David Ingrid Sanne Ivo Amara Kenji Lucia Tomasz Aisha Henrik Priya Mateo Noor Elif
Rafael Yuki Astrid Omar Chloe Jonas Fatima Luca Mei Bjørn Zainab Pavel Ines Kwame Sofia Arjun Leila
Nils Camila Tariq Hanna Diego Anouk Siddharth Greta Malik Rosa Emeka Ayla Finn Nadia Oskar Thandiwe
Julien Mira Rohan Vera Kofi Linnea Hamid Clara Tobias Sunita Marek Aiko Elena Bongani Freya Dmitri
Lotte Samir Carmen Erik Ama Viktor Ruth Hugo Keiko Magnus Zara Felipe Ingeborg Anil Marta Sven Nia
Pedro Helga Joon Alba Teodor Yara""".split()
LAST = """Chen Solberg Petrov Okafor Tanaka Moreau Kowalski Haddad Lindqvist Sharma Alvarez Rahman
Yilmaz Costa Nakamura Berg Farouk Dubois Andersen Ncube Rossi Wang Eriksen Mensah Novak Silva Adeyemi
Fischer Kaur Hansen Ortega Bakker Iyer Nyström Abara Laurent Hoffmann Castillo Sato Jensen Mwangi
Romano Virtanen Osei Kruger Patel Holm Ferreira Demir Strand Ibrahim Lund Mendes Kim Varga Aalto
Bianchi Sørensen Horvat Quispe Larsen Weber Park Nilsen Duarte Hakimi Falk Morales Brennan Ito
Vasquez Dahl Kader Marsh Tran Ekdahl Grünewald Obi Moretti Rask""".split()
SIMILAR_FIRST = {
    "Maria": ["Mario", "Mariam"],
    "Elena": ["Elina"],
    "Nils": ["Niels"],
    "Erik": ["Eric"],
    "Hanna": ["Hannah"],
    "Marta": ["Martha"],
    "Sven": ["Svea"],
    "Luca": ["Lucas"],
    "Carmen": ["Carmel"],
    "Jonas": ["Jonah"],
    "Ines": ["Inez"],
    "Freya": ["Freja"],
    "Clara": ["Klara"],
    "Omar": ["Omari"],
    "Nadia": ["Nadja"],
    "Viktor": ["Victor"],
}
SIMILAR_LAST = {
    "Chen": ["Cheng"],
    "Solberg": ["Solheim"],
    "Larsen": ["Larson"],
    "Lund": ["Lundh"],
    "Holm": ["Holmes"],
    "Dahl": ["Dahlin"],
    "Berg": ["Bergman"],
    "Costa": ["Acosta"],
    "Strand": ["Strandberg"],
    "Hansen": ["Hanssen"],
    "Park": ["Parker"],
    "Marsh": ["Marshall"],
    "Falk": ["Falck"],
    "Kim": ["Kimura"],
    "Patel": ["Patil"],
    "Silva": ["Silvestre"],
}
NEAR_NAMESAKES = 18
PEOPLE = 180
DIRECTORS, MANAGERS = 5, 25

PROJECT_WORDS = """Falcon Heron Kestrel Osprey Lynx Marten Basalt Quartz Cobalt Juniper Aurora Meridian
Tern Puffin Badger Otter Granite Obsidian Sable Cedar Harrier Plover Bittern Curlew Wren Starling
Fulmar Gannet Merlin Condor Ibis Pelican Egret Swift Raven Magpie Lark Finch Dunlin Ermine Stoat
Wolverine Bison Caribou Walrus Narwhal Beluga Orca Feldspar Garnet Jasper Onyx Topaz Beryl Zircon
Slate Flint Ember Tundra Fjord""".split()
GOALS = """rebuild the invoicing pipeline|move search indexing to a streaming design|add offline maps to the
mobile app|automate warehouse picking lists|speed up fraud scoring|consolidate the partner APIs|
modernise customer onboarding|shorten log retention and cut storage costs|rewrite tile rendering|
automate payroll exports|improve demand forecasting for stores|unify the notification channels|
make refunds self-service|bring route planning in-house|cut checkout latency in half|
replace paper delivery notes with scans|give support agents a single customer view|
detect sensor faults on the factory floor|open the booking system to travel agents|
translate the help centre into six languages|build a carbon report for every shipment|
predict parcel delays before they happen|let shops manage their own opening hours|
move nightly batch jobs to event-driven workers|score leads for the sales team|
archive old contracts in a searchable store|measure app accessibility on every release|
match invoices to bank statements automatically|recommend spare parts to field technicians|
put live stock levels on the public website""".replace("\n", " ").split("|")
GOALS = [goal.strip() for goal in GOALS]
ORGS = """Northwind Labs|Halvorsen Foundation|Bluewater Institute|Kestrel Capital|Heron Analytics|
Osprey Trust|Meridian Partners|Granite Ridge Ventures|Lindgren & Vale|Coastal Data Cooperative|
Ardent Systems|Solstice Research|Brightfield Group|Tidewater Logistics|Pinecrest University|
Ironbridge Engineering|Fenwick Health|Saltmarsh Energy|Redhill Media|Quill & Ledger|Skerry Robotics|
Veldt Agritech|Aurora Grid|Halcyon Maritime|Corbel Insurance|Marlowe Institute|Ostvik Shipping|
Nordlys Fund|Baywater Health Trust|Cinder Works|Orchard Lane Capital|Stellan Foundation|Tamsin Labs|
Eider Analytics|Vireo Systems|Copperleaf Bank|Greyfield Partners|Wendover Trust|Kallio Research|
Falcon Ridge Partners""".replace("\n", "").split("|")
SECTORS = """maritime logistics nonprofit|private research lab|regional development fund|university spin-off|
family-owned engineering firm|public data agency|venture fund|climate research institute|
cooperative of regional utilities|media company|robotics start-up|health-tech company|
insurance group|shipping line|agricultural technology company|charitable foundation|
software consultancy|public university""".replace("\n", "").split("|")
# The first OFFICE_CITIES are where the company has offices; the rest are homes of partners.
CITIES = """Varnholm|Kestrup|Port Aldous|Brekkestad|Lindqvara|Saltby|Eastfold|Nørreby|Søndervik|
Halden Cross|Marlow Bay|Tarnwick|Ostvik|Fellhaven|Ashcombe|Vintermark|Greyhaven|Skellig Point|
Corrin|Duneholm|Alderbrook|Kirkvall|Ravensund|Østerhavn|Brightwater""".replace("\n", "").split("|")
OFFICE_CITIES = 8
REGIONS = "Eskerland Valmora Northmere Haldane Corvessa Tiranor Westreach".split()
KNOWN_FOR = """its ferry harbour|a long textile tradition|the annual kite festival|its university hospital|
granite quarries|a protected wetland full of cranes|the old observatory on the hill|its salmon smokehouses|
a large container port|its wooden stave church|the winter light festival|a busy rail junction|
its cider orchards|the longest pier on the coast|a former silver mine turned museum|its jazz week|
the tidal island reachable on foot|boatbuilding yards|a car-free old town|its sea baths|
the lighthouse keepers' museum|a huge Saturday market|the glass works|a world-class climbing wall|
its puffin colony""".replace("\n", "").split("|")
TEAMS = """Data Platform|Payments|Search|Mobile|Infrastructure|Growth|Security|Developer Experience|
Observability|Billing|Maps|Identity|Fulfilment|Machine Learning""".replace("\n", "").split("|")
ROLES = """staff engineer|senior backend engineer|data scientist|product manager|site reliability engineer|
product designer|QA lead|technical writer|research scientist|frontend engineer|machine learning engineer|
security analyst|data engineer|mobile developer|platform engineer|engineering analyst""".replace("\n", "").split("|")
TOPICS = """schema migrations|load testing|accessibility reviews|SQL performance|incident reviews|
the release process|feature flags|GPU scheduling|map projections|cost reports|flaky tests|
API versioning|on-call handovers|dashboards|data retention rules|mobile crash reports|
caching strategy|contract testing|privacy reviews|the style guide""".replace("\n", "").split("|")
HOBBIES = """coaches a youth football team|restores old bicycles|sings in a choir|runs trail marathons|
bakes sourdough for the whole floor|plays the cello|builds mechanical keyboards|volunteers at a food bank|
keeps bees|sails small boats|paints watercolours|climbs indoors twice a week|collects vinyl records|
grows chillies on a balcony|referees handball matches""".replace("\n", "").split("|")
LANGUAGES = "Rust Go Python Kotlin TypeScript C++ Java Elixir Scala OCaml Zig Haskell C#".split()
CODE_LICENSES = ["MIT", "Apache-2.0", "BSD-3-Clause", "MPL-2.0", "GPL-3.0", "LGPL-2.1", "ISC"]
DATA_LICENSES = ["CC BY 4.0", "CC0", "ODbL", "CC BY-NC 4.0", "CC BY-SA 4.0"]
FORMATS = ["Parquet", "CSV", "JSON Lines", "GeoTIFF", "Avro", "NetCDF", "SQLite", "GeoPackage"]
STATUSES = [
    "in discovery",
    "in beta",
    "live",
    "paused",
    "in maintenance mode",
    "winding down",
    "on hold pending review",
    "in a closed pilot",
]
LIB_PREFIX = """Ledger Tile Queue Shard Packet Schema Token Vault Pixel Signal Route Cache Stream Batch
Metric Audit Index Flux Delta Beacon Cobalt Juniper Quartz Falcon Heron Orbit Prism Anchor""".split()
LIB_SUFFIX = (
    "Sync Forge Keeper Weaver Hub Gate Lens Pilot Smith Relay Scope Press Mill Loom Works Kit DB RPC QL".split()
)
SNAKE_LIBS = """geo_tiler retry_kit date_wrangler pdf_stamp rate_guard conf_loader bus_client json_mould
text_norm csv_hammer id_mint flag_switch hash_ring clock_sync diff_patch blob_pack mail_merge""".split()
LIB_WHAT = """library for double-entry bookkeeping records|client for the message bus|schema validation library|
HTTP retry helper|geospatial tiling library|feature flag SDK|date and time toolkit|PDF rendering library|
rate limiter|configuration loader|consistent hashing library|diffing and patching toolkit|
connection pool|template engine|serialisation library|secrets client|event sourcing framework|
columnar file reader|image decoding library|money and currency library""".replace("\n", "").split("|")
SERVICES = """auth_broker invoice_gateway tile_server route_planner search_indexer payment_router order_ledger
notification_hub geo_coder fraud_scorer report_builder session_store price_engine stock_sync
label_printer audit_trail export_worker image_resizer ticket_router user_directory webhook_relay
quote_service ledger_reconciler feature_gate metrics_collector log_shipper schedule_runner
address_validator tax_calculator refund_handler catalog_api cart_service consent_registry
dispatch_planner usage_meter media_transcoder sms_gateway doc_renderer backup_agent key_rotator""".split()
DATASETS = """harbor_traffic_2021=ship arrivals and departures logged by the harbour radar|
soil_moisture_v2=hourly soil moisture readings from farm sensors|
falcon_flight_paths=GPS tracks of delivery drones|lynx_camera_traps=labelled camera-trap photos|
retail_baskets_2019=anonymised shopping baskets from partner stores|street_trees_2020=a register of street trees with species and height|
ferry_tickets_2018=ferry ticket sales per route and hour|grid_load_hourly=hourly electricity load per substation|
clinic_visits_2022=anonymised clinic visit counts per week|parcel_scans_v3=barcode scans of parcels at each depot|
weather_stations_daily=daily weather station summaries|bike_counts_2021=counts from automatic bike counters|
tide_gauges=sea level readings from coastal tide gauges|app_sessions_2023=anonymised mobile app sessions|
support_tickets_v1=support tickets with their resolution codes|census_extract_2020=population counts per district from the census|
river_levels=river level readings from upstream stations|air_quality_2019=air quality measurements from roadside monitors|
shipping_manifests=container manifests from partner shipping lines|loyalty_cards_2022=anonymised loyalty card transactions|
Coastal Soil Survey=soil samples taken along the coast with lab results|Northern Bird Atlas=bird sightings mapped on a grid|
Urban Noise Panel=noise levels recorded on city streets|Harbour Crane Telemetry=sensor data from harbour cranes|
Household Energy Diaries=energy use diaries kept by volunteer households|Regional Bus Timetables=historical bus timetables with stop times|
Fjord Water Samples=water chemistry samples from fjord buoys|School Meals Survey=survey answers about school meals|
Road Surface Images=photos of road surfaces with damage labels|Warehouse Pick Logs=pick events from warehouse scanners|
Call Centre Transcripts=anonymised call centre transcripts|Street Lighting Inventory=an inventory of street lights and lamp types|
Parking Sensor Feed=occupancy events from parking sensors|Rail Delay Records=train delays with their recorded causes|
Forest Plot Measurements=tree measurements from forest sample plots|Invoice Samples=scanned invoices with labelled fields|
Hospital Bed Occupancy=daily bed occupancy per ward|Marine Litter Counts=litter counts from beach surveys|
Rooftop Solar Output=output of rooftop solar panels|Cargo Bike Trips=trip logs from a cargo bike pilot""".replace(
    "\n", ""
).split("|")
SERVICE_WHAT = """checks logins and issues session tokens|turns orders into invoices|serves map tiles to the apps|
plans delivery routes|keeps the search index fresh|sends payments to the right provider|records every order change|
fans out push, email and SMS messages|turns addresses into coordinates|scores transactions for fraud|
builds the monthly PDF reports|stores user sessions|computes prices and discounts|keeps stock levels in sync|
prints shipping labels|keeps the audit log|runs data exports for customers|resizes uploaded images|
routes support tickets to the right queue|answers lookups about users and groups""".replace("\n", "").split("|")
MONTHS = "January February March April May June July August September October November December".split()

# --- the world --------------------------------------------------------------------------


@dataclass
class Entity:
    kind: str  # person, project, org, city, library, service, dataset
    name: str
    attrs: dict[str, str] = field(default_factory=dict)
    links: dict[str, Entity] = field(default_factory=dict)
    doc: str = ""  # file name of its own page
    short: str = ""  # how later sentences of its page refer to it

    @property
    def mention(self) -> str:
        """How another page or a question names it."""
        if self.kind == "dataset" and "_" in self.name:
            return f"the {self.name} dataset"
        if self.kind == "service":
            return f"the {self.name} service"
        return self.name


@dataclass
class World:
    people: list[Entity]
    projects: list[Entity]
    orgs: list[Entity]
    cities: list[Entity]
    libraries: list[Entity]
    services: list[Entity]
    datasets: list[Entity]
    # (entity name, relation) -> "page" (stated on the entity's own page) or "note"
    placement: dict[tuple[str, str], str] = field(default_factory=dict)

    def all(self) -> list[Entity]:
        return self.people + self.projects + self.orgs + self.cities + self.libraries + self.services + self.datasets


def comma(n: int) -> str:
    return f"{n:,}"


def make_people(rng: random.Random, cities: list[Entity], orgs: list[Entity]) -> list[Entity]:
    names: list[str] = []
    while len(names) < PEOPLE - NEAR_NAMESAKES:
        name = f"{rng.choice(FIRST)} {rng.choice(LAST)}"
        if name not in names:
            names.append(name)
    # Near-namesakes (Maria Chen / Mario Chen / Maria Cheng): a keyword leg that matches
    # one name token at a time finds both, and so does a careless entity matcher.
    bases = names[:]
    rng.shuffle(bases)
    added = 0
    for base in bases:
        if added == NEAR_NAMESAKES:
            break
        first, last = base.split(" ", 1)
        options = [f"{f} {last}" for f in SIMILAR_FIRST.get(first, [])]
        options += [f"{first} {l}" for l in SIMILAR_LAST.get(last, [])]
        options = [o for o in options if o not in names]
        if options:
            names.append(rng.choice(options))
            added += 1
    while len(names) < PEOPLE:
        name = f"{rng.choice(FIRST)} {rng.choice(LAST)}"
        if name not in names:
            names.append(name)
    rng.shuffle(names)
    people = []
    offices = cities[:OFFICE_CITIES]
    for index, name in enumerate(names):
        if index < DIRECTORS:
            role, joined = "director of engineering", rng.randint(2008, 2014)
        elif index < DIRECTORS + MANAGERS:
            role, joined = "engineering manager", rng.randint(2010, 2018)
        else:
            role, joined = rng.choice(ROLES), rng.randint(2012, 2023)
        person = Entity("person", name, short=name.split(" ", 1)[0])
        office = rng.choice(offices)
        person.attrs = {"office": office.name, "joined": str(joined), "team": rng.choice(TEAMS), "role": role}
        person.links["office"] = office
        if rng.random() < 0.75:
            employer = rng.choice(orgs)
            person.attrs["prev"] = employer.name
            person.links["prev"] = employer
        if index >= DIRECTORS:
            # Directors head the tree and managers report to directors: no cycles, so a
            # manager's page never names the person asking about them.
            pool = people[:DIRECTORS] if index < DIRECTORS + MANAGERS else people[DIRECTORS : DIRECTORS + MANAGERS]
            person.links["manager"] = rng.choice(pool)
        people.append(person)
    return people


def money(rng: random.Random) -> str:
    currency = rng.choice("€$£")
    if rng.random() < 0.5:
        return f"{currency}{comma(rng.randint(12, 95) * 10_000)}"
    return f"{currency}{rng.randint(11, 68) / 10:.1f} million"


def build_world(rng: random.Random) -> World:
    cities = []
    known = KNOWN_FOR[:]
    rng.shuffle(known)
    for index, name in enumerate(CITIES):
        city = Entity("city", name, short=name)
        population = rng.randint(60, 4800) * 100
        city.attrs = {"population": comma(population), "region": rng.choice(REGIONS), "known_for": known[index]}
        cities.append(city)

    orgs = []
    for name in ORGS:
        org = Entity("org", name, short=rng.choice(["It", "The organisation", name]))
        hq = rng.choice(cities[OFFICE_CITIES:] if rng.random() < 0.7 else cities)
        org.attrs = {
            "hq": hq.name,
            "founded": str(rng.randint(1952, 2019)),
            "headcount": comma(rng.choice([rng.randint(12, 400), rng.randint(400, 5200)])),
            "sector": rng.choice(SECTORS),
        }
        org.links["hq"] = hq
        orgs.append(org)

    people = make_people(rng, cities, orgs)
    staff = people[DIRECTORS:]

    libraries = []
    camel = [p + s for p in LIB_PREFIX for s in LIB_SUFFIX]
    rng.shuffle(camel)
    used_prefix: dict[str, int] = defaultdict(int)
    lib_names = []
    for name in camel:
        prefix = next(p for p in LIB_PREFIX if name.startswith(p))
        if used_prefix[prefix] < 1 and len(lib_names) < 28:
            used_prefix[prefix] += 1
            lib_names.append(name)
    lib_names += SNAKE_LIBS
    rng.shuffle(lib_names)
    for index, name in enumerate(lib_names):
        lib = Entity("library", name, short=rng.choice(["It", name]))
        lib.attrs = {
            "language": rng.choice(LANGUAGES),
            "license": rng.choice(CODE_LICENSES),
            "version": f"{rng.randint(0, 9)}.{rng.randint(0, 24)}.{rng.randint(0, 12)}",
        }
        lib.links["maintainer"] = rng.choice(staff)
        if index > 3 and rng.random() < 0.55:
            lib.links["dep"] = rng.choice(libraries[:index])
        libraries.append(lib)

    datasets = []
    for entry in DATASETS:
        name, what = entry.split("=")
        ds = Entity("dataset", name, short=rng.choice(["It", "The dataset"]))
        start = rng.randint(2005, 2019)
        kind = rng.random()
        if kind < 0.4:
            size = f"{rng.randint(11, 98) / 10:.1f} million rows"
        elif kind < 0.75:
            size = f"{comma(rng.randint(20, 990) * 1000)} records"
        else:
            size = f"{comma(rng.randint(3, 400) * 100)} files"
        ds.attrs = {
            "what": what,
            "size": size,
            "coverage": f"{start} to {start + rng.randint(1, 6)}",
            "format": rng.choice(FORMATS),
            "license": rng.choice(DATA_LICENSES),
        }
        ds.links["curator"] = rng.choice(staff)
        if rng.random() < 0.7:
            ds.links["publisher"] = rng.choice(orgs)
        datasets.append(ds)

    projects = []
    goals = GOALS * 2
    rng.shuffle(goals)
    leads = rng.sample(staff, len(PROJECT_WORDS))
    free_datasets = datasets[:]
    rng.shuffle(free_datasets)
    predecessors_taken: list[Entity] = []
    for index, word in enumerate(PROJECT_WORDS):
        name = f"Project {word}"
        project = Entity("project", name, short=rng.choice(["It", "The project", name]))
        project.attrs = {
            "goal": goals[index],
            "budget": money(rng),
            "launch": f"Q{rng.randint(1, 4)} {rng.randint(2023, 2026)}",
            "status": rng.choice(STATUSES),
        }
        project.links["lead"] = leads[index]
        if rng.random() < 0.65:
            project.links["funder"] = rng.choice(orgs)
        if rng.random() < 0.75:
            project.links["core"] = rng.choice(libraries)
        older = [p for p in projects if p not in predecessors_taken]
        if older and rng.random() < 0.4:
            old = rng.choice(older)
            predecessors_taken.append(old)
            project.links["predecessor"] = old
        if free_datasets and rng.random() < 0.55:
            project.links["dataset"] = free_datasets.pop()
        projects.append(project)

    services = []
    ports = rng.sample(range(7000, 9990), len(SERVICES))
    for index, name in enumerate(SERVICES):
        service = Entity("service", name, short=rng.choice(["It", "The service", name]))
        service.attrs = {
            "what": SERVICE_WHAT[index % len(SERVICE_WHAT)],
            "language": rng.choice(LANGUAGES),
            "port": str(ports[index]),
        }
        service.links["maintainer"] = rng.choice(staff)
        service.links["owner"] = rng.choice(projects)
        if index > 3 and rng.random() < 0.45:
            service.links["calls"] = rng.choice(services[:index])
        if rng.random() < 0.4:
            service.links["dep"] = rng.choice(libraries)
        services.append(service)

    world = World(people, projects, orgs, cities, libraries, services, datasets)
    # Where each link is stated: on the entity's own page, or in a separate note
    # (announcement, ADR, incident report, org-chart update...). Links that are also
    # attributes of the page's entity (office, previous employer, headquarters) stay on it.
    note_share = {
        "lead": 0.4,
        "funder": 0.4,
        "core": 0.4,
        "predecessor": 0.5,
        "dataset": 0.5,
        "maintainer": 0.4,
        "dep": 0.4,
        "owner": 0.4,
        "calls": 0.5,
        "manager": 0.5,
        "curator": 0.4,
    }
    for entity in world.all():
        for relation in entity.links:
            share = note_share.get(relation, 0.0)
            world.placement[(entity.name, relation)] = "note" if rng.random() < share else "page"
    return world


# --- pages ------------------------------------------------------------------------------


@dataclass
class Page:
    name: str  # file name
    title: str
    paragraphs: list[str]

    def text(self) -> str:
        return f"# {self.title}\n\n" + "\n\n".join(self.paragraphs) + "\n"


def slug(text: str) -> str:
    text = text.lower().replace("&", "and").replace("ø", "o").replace("å", "a").replace("æ", "ae")
    text = text.replace("ö", "o").replace("ü", "u").replace("ä", "a")
    return re.sub(r"[^a-z0-9]+", "-", text).strip("-")


class Book:
    """Every page of the wiki, by unique file name."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.pages: dict[str, Page] = {}
        self.kinds: dict[str, str] = {}

    def add(self, stem: str, title: str, sentences: list[str], kind: str) -> str:
        name, copy = f"{slug(stem)}.md", 1
        while name in self.pages:
            copy += 1
            name = f"{slug(stem)}-{copy}.md"
        # One or two paragraphs, as a wiki page would have.
        if len(sentences) > 4 and self.rng.random() < 0.5:
            cut = self.rng.randint(2, len(sentences) - 2)
            paragraphs = [" ".join(sentences[:cut]), " ".join(sentences[cut:])]
        else:
            paragraphs = [" ".join(sentences)]
        self.pages[name] = Page(name, title, paragraphs)
        self.kinds[name] = kind
        return name

    def text(self, name: str) -> str:
        return self.pages[name].text()


def pick(rng: random.Random, options: list[str], **values: str) -> str:
    return rng.choice(options).format(**values)


def article(phrase: str) -> str:
    return ("an " if phrase[0] in "aeiouAEIOU" or phrase.startswith(("HTTP", "SDK")) else "a ") + phrase


def date(rng: random.Random) -> str:
    return f"{rng.randint(2022, 2024)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"


def on_page(world: World, entity: Entity, relation: str) -> bool:
    return relation in entity.links and world.placement[(entity.name, relation)] == "page"


def person_page(book: Book, world: World, p: Entity) -> None:
    rng, a, s = book.rng, p.attrs, p.short
    intro = pick(
        rng,
        [
            "{n} is {role} on the {team} team.",
            "{n} works as {role} in the {team} team.",
            "As {role}, {n} is part of the {team} team.",
        ],
        n=p.name,
        role=article(a["role"]),
        team=a["team"],
    )
    office = [
        "{s} works from the {c} office.",
        "{s} is based in our {c} office.",
        "{s} sits in the {c} office most days.",
    ]
    joined = ["{s} joined the company in {y}.", "{s} has been with us since {y}.", "{s} started here in {m} {y}."]
    facts = []
    if rng.random() < 0.3:
        facts.append(
            pick(
                rng,
                [
                    "{s} works from the {c} office and joined in {y}.",
                    "Based in the {c} office, {s} joined the company in {y}.",
                ],
                s=s,
                c=a["office"],
                y=a["joined"],
            )
        )
    else:
        facts.append(pick(rng, office, s=s, c=a["office"]))
        facts.append(pick(rng, joined, s=s, y=a["joined"], m=rng.choice(MONTHS)))
    if "prev" in a:
        facts.append(
            pick(
                rng,
                [
                    "Before joining, {s} spent {n} years at {o}.",
                    "{s} came to us from {o}.",
                    "Previously {s} worked at {o}.",
                ],
                s=s,
                o=a["prev"],
                n=str(rng.randint(2, 9)),
            )
        )
    if on_page(world, p, "manager"):
        facts.append(
            pick(
                rng,
                ["{s} reports to {m}.", "{s}'s manager is {m}.", "{s} is managed by {m}."],
                s=s,
                m=p.links["manager"].name,
            )
        )
    fillers = [
        pick(
            rng,
            ["Ask {s} about {t}.", "{s} is the go-to person for {t}.", "{s} knows a lot about {t}."],
            s=s,
            t=rng.choice(TOPICS),
        ),
        pick(rng, ["Outside work, {s} {h}.", "In spare time {s} {h}."], s=s, h=rng.choice(HOBBIES)),
        rng.choice(
            [
                "Prefers written updates over meetings.",
                "Usually online in the morning.",
                "Happy to pair on tricky reviews.",
                "On the on-call rotation every six weeks.",
            ]
        ),
    ]
    body = facts + rng.sample(fillers, rng.randint(1, 2))
    rng.shuffle(body)
    p.doc = book.add(p.name, p.name, [intro, *body], "person")


def project_page(book: Book, world: World, p: Entity) -> None:
    rng, a, s = book.rng, p.attrs, p.short
    intro = pick(
        rng, ["{n} aims to {g}.", "The goal of {n} is to {g}.", "{n} is our effort to {g}."], n=p.name, g=a["goal"]
    )
    facts = [
        pick(
            rng,
            ["The approved budget is {b}.", "{s} has a budget of {b}.", "Budget: {b} for the current plan."],
            s=s,
            b=a["budget"],
        ),
        pick(
            rng,
            ["Target launch is {q}.", "{s} is scheduled to launch in {q}.", "Launch is planned for {q}."],
            s=s,
            q=a["launch"],
        ),
        pick(
            rng,
            ["Current status: {st}.", "{s} is currently {st}.", "Status as of this month: {st}."],
            s=s,
            st=a["status"],
        ),
    ]
    links = p.links
    if on_page(world, p, "lead"):
        facts.append(
            pick(
                rng,
                ["{s} is led by {x}.", "{x} leads the project.", "The project lead is {x}."],
                s=s,
                x=links["lead"].name,
            )
        )
    if on_page(world, p, "funder"):
        facts.append(
            pick(
                rng,
                ["{s} is funded by {x}.", "Funding comes from {x}.", "{x} sponsors the work."],
                s=s,
                x=links["funder"].name,
            )
        )
    if on_page(world, p, "core"):
        facts.append(
            pick(
                rng,
                ["{s} is built on {x}.", "The core library is {x}.", "Under the hood it relies on {x}."],
                s=s,
                x=links["core"].name,
            )
        )
    if on_page(world, p, "predecessor"):
        facts.append(
            pick(
                rng,
                ["{s} replaces {x}.", "{s} is the successor of {x}.", "It takes over from {x}."],
                s=s,
                x=links["predecessor"].name,
            )
        )
    if on_page(world, p, "dataset"):
        facts.append(
            pick(
                rng,
                ["{s} uses {x}.", "The main input data is {x}.", "Its models are trained on {x}."],
                s=s,
                x=links["dataset"].mention,
            )
        )
    filler = rng.choice(
        [
            "Weekly updates are posted in the project channel.",
            "The roadmap is reviewed every quarter.",
            "Design documents live in the shared drive.",
            "Demos happen every second Friday.",
        ]
    )
    body = facts + ([filler] if len(facts) < 7 else [])
    rng.shuffle(body)
    p.doc = book.add(p.name, p.name, [intro, *body], "project")


def org_page(book: Book, world: World, o: Entity) -> None:
    rng, a, s = book.rng, o.attrs, o.short
    intro = pick(rng, ["{n} is {x}.", "{n} describes itself as {x}."], n=o.name, x=article(a["sector"]))
    facts = [
        pick(
            rng, ["{s} is headquartered in {c}.", "Its head office is in {c}.", "{s} is based in {c}."], s=s, c=a["hq"]
        ),
        pick(
            rng,
            ["{s} was founded in {y}.", "It has been around since {y}.", "Founded in {y}, it has grown steadily."],
            s=s,
            y=a["founded"],
        ),
        pick(
            rng,
            ["{s} employs around {n} people.", "About {n} people work there.", "Staff: roughly {n}."],
            s=s,
            n=a["headcount"],
        ),
    ]
    filler = rng.choice(
        [
            "Our partnerships team is the main contact.",
            "They publish an annual report every spring.",
            "Contracts with them are handled by legal.",
            "Their public data portal is well documented.",
        ]
    )
    body = facts + [filler]
    rng.shuffle(body)
    o.doc = book.add(o.name, o.name, [intro, *body], "org")


def city_page(book: Book, world: World, c: Entity, office: bool) -> None:
    rng, a = book.rng, c.attrs
    intro = pick(rng, ["{n} is a town in the province of {r}.", "{n} lies in {r} province."], n=c.name, r=a["region"])
    facts = [
        pick(
            rng,
            [
                "It has a population of about {p}.",
                "About {p} people live there.",
                "The town has roughly {p} inhabitants.",
            ],
            p=a["population"],
        ),
        pick(rng, ["{n} is known for {k}.", "Visitors come for {k}."], n=c.name, k=a["known_for"]),
    ]
    fillers = [
        f"Trains from the capital take about {rng.randint(2, 7)} hours.",
        rng.choice(
            [
                "The old town is walkable in an afternoon.",
                "Winters are long and dark.",
                "The airport is small but has daily flights.",
                "Summers bring a lot of tourists.",
            ]
        ),
    ]
    if office:
        fillers.append("Our office there is a short walk from the station.")
    body = facts + fillers
    rng.shuffle(body)
    c.doc = book.add(f"{c.name} town guide", c.name, [intro, *body], "city")


def library_page(book: Book, world: World, l: Entity) -> None:
    rng, a, s = book.rng, l.attrs, l.short
    what = rng.choice(LIB_WHAT)
    facts = []
    if rng.random() < 0.5:
        intro = pick(
            rng,
            ["{n} is {w} written in {lang}.", "{n} is {w}, written in {lang}."],
            n=l.name,
            w=article(what),
            lang=a["language"],
        )
    else:
        intro = pick(rng, ["{n} is {aw}.", "{n} is our in-house {w}."], n=l.name, w=what, aw=article(what))
        facts.append(pick(rng, ["{s} is written in {lang}.", "The code is {lang}."], s=s, lang=a["language"]))
    facts += [
        pick(
            rng,
            ["{s} is licensed under {x}.", "License: {x}.", "It is released under the {x} license."],
            s=s,
            x=a["license"],
        ),
        pick(
            rng,
            ["The current release is {v}.", "The latest version is {v}.", "{s} is at version {v}."],
            s=s,
            v=a["version"],
        ),
    ]
    if on_page(world, l, "maintainer"):
        facts.append(
            pick(
                rng,
                ["{s} is maintained by {x}.", "Maintainer: {x}.", "{x} looks after it."],
                s=s,
                x=l.links["maintainer"].name,
            )
        )
    if on_page(world, l, "dep"):
        facts.append(pick(rng, ["{s} depends on {x}.", "It is built on top of {x}."], s=s, x=l.links["dep"].name))
    filler = rng.choice(
        [
            "Bug reports go to the issue tracker.",
            "The test suite runs on every merge.",
            "See the examples folder for usage.",
            "Breaking changes are announced a month ahead.",
        ]
    )
    body = facts + [filler]
    rng.shuffle(body)
    l.doc = book.add(l.name, l.name, [intro, *body], "library")


def service_page(book: Book, world: World, v: Entity) -> None:
    rng, a, s = book.rng, v.attrs, v.short
    intro = pick(rng, ["{n} is the service that {w}.", "{n} {w}."], n=v.name, w=a["what"])
    facts = [
        pick(rng, ["{s} is written in {lang}.", "The code is {lang}."], s=s, lang=a["language"]),
        pick(rng, ["{s} listens on port {p}.", "It is served on port {p}.", "Port: {p}."], s=s, p=a["port"]),
    ]
    links = v.links
    if on_page(world, v, "maintainer"):
        facts.append(pick(rng, ["{s} is maintained by {x}.", "Maintainer: {x}."], s=s, x=links["maintainer"].name))
    if on_page(world, v, "owner"):
        facts.append(
            pick(
                rng,
                ["{s} was built for {x}.", "It belongs to {x}.", "Owning project: {x}."],
                s=s,
                x=links["owner"].name,
            )
        )
    if on_page(world, v, "calls"):
        facts.append(pick(rng, ["{s} calls {x} on every request.", "Its upstream is {x}."], s=s, x=links["calls"].name))
    if on_page(world, v, "dep"):
        facts.append(pick(rng, ["{s} depends on {x}.", "It uses {x} internally."], s=s, x=links["dep"].name))
    filler = rng.choice(
        [
            "The runbook is in the ops wiki.",
            "Alerts page the on-call engineer.",
            "Deploys go out several times a day.",
            "Dashboards are linked from the service catalogue.",
        ]
    )
    body = facts + [filler]
    rng.shuffle(body)
    v.doc = book.add(v.name, v.name, [intro, *body], "service")


def dataset_page(book: Book, world: World, d: Entity) -> None:
    rng, a, s = book.rng, d.attrs, d.short
    intro = pick(rng, ["{n} holds {w}.", "The {n} dataset contains {w}."], n=d.name, w=a["what"])
    facts = [
        pick(rng, ["{s} has {x}.", "Size: {x}."], s=s, x=a["size"]),
        pick(rng, ["{s} covers {x}.", "The data spans {x}."], s=s, x=a["coverage"]),
        pick(rng, ["Files are stored as {x}.", "{s} is distributed as {x}."], s=s, x=a["format"]),
        pick(rng, ["{s} is released under {x}.", "License: {x}."], s=s, x=a["license"]),
    ]
    if "publisher" in d.links:
        facts.append(pick(rng, ["{s} was collected by {x}.", "Publisher: {x}."], s=s, x=d.links["publisher"].name))
    if on_page(world, d, "curator"):
        facts.append(pick(rng, ["{s} is curated by {x}.", "Curator: {x}."], s=s, x=d.links["curator"].name))
    body = facts
    rng.shuffle(body)
    d.doc = book.add(d.name, d.name, [intro, *body], "dataset")


# Separate notes that state one link each (org-chart updates may state several). The
# note is the bridge page for that link.
def link_notes(book: Book, world: World) -> dict[tuple[str, str], str]:
    rng = book.rng
    where: dict[tuple[str, str], str] = {}
    staff = world.people

    def other_person(*avoid: Entity) -> Entity:
        while True:
            person = rng.choice(staff)
            if person not in avoid:
                return person

    chart: list[tuple[Entity, Entity]] = []
    for entity in world.all():
        for relation, target in entity.links.items():
            if world.placement[(entity.name, relation)] != "note":
                continue
            a, b = entity, target
            if relation == "manager":
                chart.append((a, b))
                continue
            if relation == "lead":
                if rng.random() < 0.5:
                    scribe = other_person(b)
                    name = book.add(
                        f"{a.name} kickoff notes",
                        f"{a.name} kickoff notes",
                        [
                            f"The kickoff for {a.name} took place on {date(rng)}.",
                            pick(rng, ["{b} will lead the project.", "{b} was named project lead."], b=b.name),
                            "The first milestone is a working prototype.",
                            f"Notes were taken by {scribe.name}.",
                        ],
                        "note",
                    )
                else:
                    name = book.add(
                        f"new lead for {a.name}",
                        f"New lead for {a.name}",
                        [
                            f"{b.name} takes over as lead of {a.name} from this sprint.",
                            "The previous lead has moved on to other work.",
                            f"Please send questions about {a.name} to {b.short} from now on.",
                        ],
                        "note",
                    )
            elif relation == "funder":
                name = book.add(
                    f"grant agreement {a.name}",
                    f"Grant agreement: {a.name}",
                    [
                        f"{b.name} has agreed to fund {a.name} for the next two years.",
                        f"The agreement was signed on {date(rng)}.",
                        "Progress reports go to the funder twice a year.",
                        "Finance tracks the payments.",
                    ],
                    "note",
                )
            elif relation == "core":
                number = rng.randint(10, 240)
                name = book.add(
                    f"adr {number} {a.name} core library",
                    f"ADR-{number}: core library for {a.name}",
                    [
                        f"Context: {a.name} needs a dependable foundation instead of home-grown code.",
                        f"Decision: {a.name} builds on {b.name}.",
                        f"Consequences: upgrades of {b.name} are tested against the {a.name} test suite first.",
                    ],
                    "note",
                )
            elif relation == "predecessor":
                name = book.add(
                    f"migration {b.name} to {a.name}",
                    f"Migration note: {b.name} to {a.name}",
                    [
                        f"{a.name} is the successor of {b.name}.",
                        f"Remaining users of {b.name} are being moved over in stages.",
                        "Old data has been archived and stays readable.",
                    ],
                    "note",
                )
            elif relation == "dataset":
                name = book.add(
                    f"data access request {b.name}",
                    f"Data access request: {b.name}",
                    [
                        f"{a.name} asked for read access to {b.mention}.",
                        f"The data governance group approved the request on {date(rng)}.",
                        f"It is now the main dataset of {a.name}.",
                    ],
                    "note",
                )
            elif relation == "maintainer":
                name = book.add(
                    f"ownership change {a.name}",
                    f"Ownership change: {a.name}",
                    [
                        f"{b.name} is now the maintainer of {a.name}.",
                        "Open issues have been triaged and handed over.",
                        f"Ask {b.short} for reviews from now on.",
                    ],
                    "note",
                )
            elif relation == "dep":
                name = book.add(
                    f"{a.name} changelog notes",
                    f"{a.name} changelog notes",
                    [
                        f"The latest rework moved the internals of {a.name} onto {b.name}.",
                        f"{a.name} now depends on {b.name}; the old in-house code was removed.",
                        "Callers see no API changes.",
                    ],
                    "note",
                )
            elif relation == "owner":
                name = book.add(
                    f"service catalogue {a.name}",
                    f"Service catalogue: {a.name}",
                    [
                        f"{a.name} was built for {b.name}.",
                        f"It is a tier-{rng.randint(1, 3)} service.",
                        "The runbook lives in the ops wiki.",
                    ],
                    "note",
                )
            elif relation == "calls":
                minutes = rng.randint(8, 95)
                name = book.add(
                    f"incident {a.name} errors",
                    f"Incident: {a.name} errors",
                    [
                        f"{a.name} returned errors for {minutes} minutes on {date(rng)}.",
                        f"The cause was its upstream, {b.name}, which was overloaded; {a.name} calls {b.name} on every request.",
                        "A retry budget was added as a follow-up.",
                    ],
                    "note",
                )
            elif relation == "curator":
                name = book.add(
                    f"data stewardship {a.name}",
                    f"Data stewardship: {a.name}",
                    [
                        f"{b.name} is the curator of {a.mention}.",
                        f"Change requests for {a.name} go through {b.short}.",
                        "The schema is described in the data catalogue.",
                    ],
                    "note",
                )
            else:
                raise ValueError(f"no note template for {relation}")
            where[(a.name, relation)] = name
    rng.shuffle(chart)
    while chart:
        batch = chart[: rng.randint(1, 3)]
        chart = chart[len(batch) :]
        month, year = rng.choice(MONTHS), rng.randint(2022, 2024)
        lines = [rng.choice(["A few reporting lines change this month.", "These reporting changes take effect now."])]
        for a, b in batch:
            lines.append(
                pick(
                    rng,
                    ["{a} now reports to {b}.", "{a} moves under {b}.", "From now on {a} reports to {b}."],
                    a=a.name,
                    b=b.name,
                )
            )
        lines.append("Questions go to the people team.")
        name = book.add(f"org chart update {month} {year}", f"Org chart update, {month} {year}", lines, "note")
        for a, _ in batch:
            where[(a.name, "manager")] = name
    return where


def distractors(book: Book, world: World) -> None:
    """Pages that mention entities in passing and use the attribute words for others."""
    rng = book.rng
    by_team: dict[str, list[Entity]] = defaultdict(list)
    for person in world.people:
        by_team[person.attrs["team"]].append(person)
    things = world.projects + world.libraries + world.services
    offices = world.cities[:OFFICE_CITIES]

    for _ in range(72):
        team = rng.choice(TEAMS)
        people = rng.sample(by_team[team], min(len(by_team[team]), rng.randint(3, 4)))
        day = date(rng)
        first, second, third = (people + people)[:3]
        thing = rng.choice(things)
        lines = [
            f"Attendees: {', '.join(p.name for p in people)}.",
            pick(
                rng,
                ["{a} gave an update on {x}.", "{a} walked through the open issues in {x}."],
                a=first.short,
                x=thing.mention,
            ),
            pick(
                rng,
                ["{a} raised a concern about {t}.", "{a} asked for help with {t}."],
                a=second.short,
                t=rng.choice(TOPICS),
            ),
            pick(
                rng,
                ["Action: {a} to follow up before the next sync.", "Action: {a} to write up a proposal."],
                a=third.short,
            ),
        ]
        book.add(f"{team} weekly sync {day}", f"{team} weekly sync, {day}", lines, "distractor")

    for _ in range(40):
        person = rng.choice(world.people)
        city = rng.choice([c for c in offices if c.name != person.attrs["office"]])
        lines = [
            pick(
                rng,
                ["{p} spent a week at the {c} office to {w}.", "{p} visited the {c} office to {w}."],
                p=person.name,
                c=city.name,
                w=rng.choice(
                    [
                        "run a workshop on " + rng.choice(TOPICS),
                        "meet the local team",
                        "help with hiring interviews",
                        "plan the next quarter",
                    ]
                ),
            ),
            f"{person.short} met several colleagues from the {rng.choice(TEAMS)} team.",
            rng.choice(
                [
                    "The next visit is planned for the spring.",
                    "Travel costs came in under budget.",
                    "Slides are in the shared drive.",
                ]
            ),
        ]
        book.add(f"visit to {city.name} {person.name}", f"Visit to the {city.name} office", lines, "distractor")

    news = [
        [
            "The kitchen on the second floor of the {c} office is closed for renovation next week.",
            "Coffee is available on the ground floor in the meantime.",
        ],
        ["The {c} office gets new bike racks this month.", "Please move old bikes before Friday."],
        ["There is a fire drill at the {c} office on Thursday at ten.", "It takes about fifteen minutes."],
        ["The {c} office will be closed on the public holiday.", "Remote work is fine that day."],
        ["Meeting rooms in the {c} office can now be booked from the calendar.", "Walk-ins are still welcome."],
        ["The {c} office hosts a meetup on {t} next month.", "Guests need to register at reception."],
    ]
    for city in offices:
        for template in rng.sample(news, 3):
            lines = [line.format(c=city.name, t=rng.choice(TOPICS)) for line in template]
            lines.append(
                rng.choice(
                    [
                        "Facilities can answer questions.",
                        "Thanks for your patience.",
                        "Details are on the office noticeboard.",
                    ]
                )
            )
            book.add(f"{city.name} office news {template[0][:20]}", f"{city.name} office news", lines, "distractor")

    for _ in range(22):
        entries = rng.sample(world.people, 3)
        shown = rng.sample(things, 3)
        month = rng.choice(MONTHS)
        lines = [f"Demo day in {month} had a full room."]
        for person, thing in zip(entries, shown):
            lines.append(
                pick(
                    rng,
                    ["{p} showed the latest work on {x}.", "{p} demoed {x}.", "{p} presented {x}."],
                    p=person.name,
                    x=thing.mention,
                )
            )
        lines.append("Recordings are on the intranet.")
        book.add(f"demo day {month} {rng.randint(2022, 2024)}", f"Demo day recap, {month}", lines, "distractor")

    for _ in range(18):
        parts = rng.sample(world.libraries + world.services, 3)
        captain = rng.choice(world.people)
        day = date(rng)
        lines = [
            f"This release train ships updated builds of {parts[0].name}, {parts[1].name} and {parts[2].name}.",
            f"{captain.name} is the release captain.",
            "Rollback instructions are in the runbook.",
        ]
        book.add(f"release train {day}", f"Release train {day}", lines, "distractor")

    for _ in range(16):
        service = rng.choice(world.services)
        person = rng.choice(world.people)
        day = date(rng)
        lines = [
            f"{service.name} was slow for {rng.randint(5, 60)} minutes on {day}.",
            f"{person.name} was on call and rolled back the last deploy.",
            "No data was lost; a follow-up review is scheduled.",
        ]
        book.add(f"incident {service.name} slow {day}", f"Incident: {service.name} latency", lines, "distractor")

    for team in TEAMS:
        year = rng.randint(2023, 2025)
        lines = [
            f"The {team} team asks for a travel budget of {money(rng)} for {year}.",
            f"Training and conference tickets add {money(rng)}.",
            "The hardware budget stays flat.",
            "Finance reviews the request at the end of the month.",
        ]
        book.add(f"{team} budget {year}", f"{team} team budget {year}", lines, "distractor")

    for _ in range(14):
        team, role = rng.choice(TEAMS), rng.choice(ROLES)
        first, second = rng.sample(offices, 2)
        lines = [
            f"The {team} team is hiring {article(role)}.",
            f"The role can be based in the {first.name} or the {second.name} office.",
            f"Candidates should know about {rng.choice(TOPICS)}.",
            "Referrals get the usual bonus.",
        ]
        book.add(f"hiring {role} {team}", f"Hiring: {role}, {team}", lines, "distractor")

    book.add(
        "open source license policy",
        "Open source license policy",
        [
            "We accept dependencies under MIT, Apache-2.0, BSD-3-Clause and ISC without review.",
            "GPL-3.0 and LGPL-2.1 code needs a review by legal before it ships.",
            "Every library must state its license in its README.",
            "Data licenses such as CC BY 4.0 and ODbL have their own checklist.",
        ],
        "distractor",
    )
    book.add(
        "data license checklist",
        "Data license checklist",
        [
            "Before using a dataset, check its license and who published it.",
            "CC0 and CC BY 4.0 data can be used in products; CC BY-NC 4.0 data cannot.",
            "Record the dataset version and the date it was downloaded.",
        ],
        "distractor",
    )
    book.add(
        "firewall changes",
        "Firewall changes",
        [
            "Port 22 is now closed on all application hosts; use the bastion instead.",
            "Internal services keep their own ports; the service catalogue lists them.",
            "Requests to open a port go through the security team.",
        ],
        "distractor",
    )
    book.add(
        "population figures for planning",
        "Population figures for planning",
        [
            "Market sizing uses population figures from the latest census.",
            "Towns under twenty thousand inhabitants are grouped by province.",
            "The figures are refreshed once a year.",
        ],
        "distractor",
    )


# --- questions --------------------------------------------------------------------------

ATTR_QUESTIONS = {
    "person": {
        "office": ["Which office does {r} work from?", "Where is {r} based?", "In which city does {r} work?"],
        "joined": ["When did {r} join the company?", "What year did {r} join?", "Since when has {r} worked here?"],
        "team": ["Which team is {r} on?", "What team does {r} belong to?", "Which team does {r} work in?"],
        "role": ["What is the job title of {r}?", "What role does {r} have?", "What position does {r} hold?"],
        "prev": [
            "Where did {r} work before joining?",
            "Which company did {r} come from?",
            "What was the previous employer of {r}?",
        ],
    },
    "org": {
        "hq": ["Where is {r} headquartered?", "In which city is {r} based?", "Where does {r} have its head office?"],
        "founded": ["When was {r} founded?", "What year was {r} established?", "How old is {r}, when was it founded?"],
        "headcount": [
            "How many people does {r} employ?",
            "How many employees does {r} have?",
            "What is the headcount of {r}?",
        ],
        "sector": [
            "What kind of organisation is {r}?",
            "What sector does {r} work in?",
            "What type of organisation is {r}?",
        ],
    },
    "library": {
        "language": [
            "What language is {r} written in?",
            "Which programming language is {r} implemented in?",
            "What is {r} written in?",
        ],
        "license": ["What license does {r} use?", "Under which license is {r} released?", "How is {r} licensed?"],
        "version": [
            "What is the current version of {r}?",
            "Which release of {r} is the latest?",
            "What version is {r} at?",
        ],
    },
    "service": {
        "language": ["What language is {r} written in?", "Which programming language is {r} implemented in?"],
        "port": ["Which port does {r} listen on?", "What port is {r} served on?", "On which port does {r} run?"],
    },
    "project": {
        "budget": [
            "What is the budget of {r}?",
            "How much budget was approved for {r}?",
            "How much money does {r} have?",
        ],
        "launch": [
            "When is {r} scheduled to launch?",
            "What is the target launch date of {r}?",
            "When should {r} launch?",
        ],
        "status": [
            "What is the current status of {r}?",
            "What state is {r} in right now?",
            "Is {r} still going, what is its status?",
        ],
    },
    "dataset": {
        "size": ["How many records does {r} contain?", "How big is {r}?", "What is the size of {r}?"],
        "format": [
            "What file format is {r} stored in?",
            "In which format is {r} distributed?",
            "What format does {r} come in?",
        ],
        "coverage": ["Which years does {r} cover?", "What period does {r} span?", "What time range is covered by {r}?"],
        "license": [
            "What license does {r} use?",
            "Under which license is {r} released?",
            "What are the license terms of {r}?",
        ],
    },
    "city": {
        "population": [
            "What is the population of {r}?",
            "How many people live in {r}?",
            "How large is the population of {r}?",
        ],
        "region": ["Which region is {r} in?", "In which province is {r}?", "What province does {r} belong to?"],
        "known_for": ["What is {r} known for?", "What is {r} famous for?", "What is special about {r}?"],
    },
}
# How a question names B through A ({a} is A as other pages name it).
REFERENCES = {
    "lead": [
        "the lead of {a}",
        "~the person leading {a}",
        "~whoever leads {a}",
        "the project lead of {a}",
        "the person in charge of {a}",
    ],
    "maintainer": [
        "the maintainer of {a}",
        "~the person who maintains {a}",
        "~whoever looks after {a}",
        "the engineer responsible for {a}",
    ],
    "manager": ["{a}'s manager", "the manager of {a}", "~the person {a} reports to", "{a}'s line manager"],
    "curator": ["the curator of {a}", "~the person who curates {a}", "the person responsible for {a}"],
    "funder": [
        "the funder of {a}",
        "~the organisation that funds {a}",
        "the sponsor of {a}",
        "~the organisation paying for {a}",
    ],
    "publisher": ["the publisher of {a}", "~the organisation that collected {a}", "~the group that published {a}"],
    "prev": ["{a}'s previous employer", "~the company {a} worked for before joining", "the former employer of {a}"],
    "core": ["the core library of {a}", "~the library {a} is built on", "the main library behind {a}"],
    "dep": ["~the library {a} depends on", "the dependency of {a}", "~the library that {a} is built on top of"],
    "calls": ["the upstream service of {a}", "~the service that {a} calls", "~the service {a} sends its requests to"],
    "predecessor": ["~the project {a} replaced", "the predecessor of {a}", "~the project that came before {a}"],
    "owner": ["~the project that owns {a}", "~the project {a} was built for", "the owning project of {a}"],
    "dataset": ["~the dataset {a} uses", "the dataset behind {a}", "the main dataset of {a}"],
    "hq": ["~the city where {a} is headquartered", "the home town of {a}", "~the city {a} is based in"],
    "office": ["~the city where {a} works", "~the town {a} works from", "the office town of {a}"],
}
# A reference marked "~" is a clause ("the person who maintains X"); it reads well only
# at the end of a question, so it is used only with templates ending in "{r}?".


def fits(reference: str, template: str) -> bool:
    return not reference.startswith("~") or template.endswith("{r}?")


@dataclass
class Question:
    id: str
    text: str
    hops: int
    kind: str
    answer: str
    judged: dict[str, int]  # file name -> grade


class Vocabulary:
    """Document frequencies and per-page terms under kenning's own FTS5 tokenizer."""

    def __init__(self, book: Book) -> None:
        self.conn = sqlite3.connect(":memory:")
        self.conn.execute(f"CREATE VIRTUAL TABLE pages USING fts5 (body, tokenize = '{TOKENIZER}')")
        self.conn.execute("CREATE VIRTUAL TABLE pages_row USING fts5vocab (pages, 'row')")
        self.conn.execute("CREATE VIRTUAL TABLE pages_instance USING fts5vocab (pages, 'instance')")
        self.conn.execute(f"CREATE VIRTUAL TABLE words USING fts5 (body, tokenize = '{TOKENIZER}')")
        self.conn.execute("CREATE VIRTUAL TABLE words_instance USING fts5vocab (words, 'instance')")
        self.names = list(book.pages)
        self.conn.executemany(
            "INSERT INTO pages (rowid, body) VALUES (?, ?)", [(i, book.text(name)) for i, name in enumerate(self.names)]
        )
        self.df = dict(self.conn.execute("SELECT term, doc FROM pages_row"))
        self.terms: dict[str, set[str]] = defaultdict(set)
        for term, doc in self.conn.execute("SELECT DISTINCT term, doc FROM pages_instance"):
            self.terms[self.names[doc]].add(term)
        self._stems: dict[str, str] = {}

    def query_terms(self, text: str) -> list[str]:
        """The stemmed terms kenning's keyword leg would search for."""
        tokens = [t.lower() for t in re.findall(r"\w+", text)]
        tokens = [t for t in dict.fromkeys(tokens) if t not in STOPWORDS]
        out = []
        for token in tokens:
            if token not in self._stems:
                self.conn.execute("DELETE FROM words")
                self.conn.execute("INSERT INTO words (rowid, body) VALUES (1, ?)", (token,))
                stems = [row[0] for row in self.conn.execute("SELECT term FROM words_instance ORDER BY offset")]
                self._stems[token] = " ".join(stems)
            out.extend(self._stems[token].split())
        return list(dict.fromkeys(out))

    def rare_overlap(self, question: str, page: str) -> list[str]:
        """Question terms the page shares that fewer than COMMON_DF pages hold."""
        return [t for t in self.query_terms(question) if t in self.terms[page] and self.df.get(t, 0) < COMMON_DF]


def contains(text: str, value: str) -> bool:
    return re.search(r"(?<![\w+#])" + re.escape(value) + r"(?![\w+#])", text) is not None


def multi_hop(
    rng: random.Random, book: Book, world: World, vocab: Vocabulary, bridges: dict[tuple[str, str], str]
) -> list[Question]:
    groups: dict[tuple[str, str, str], list[tuple[Entity, str, Entity, str]]] = defaultdict(list)
    for a in world.all():
        for relation, b in a.links.items():
            for attr in ATTR_QUESTIONS[b.kind]:
                if attr not in b.attrs:
                    continue
                groups[(a.kind, relation, attr)].append((a, relation, b, attr))
    keys = sorted(groups)
    rng.shuffle(keys)
    for key in keys:
        rng.shuffle(groups[key])
    used_a: list[str] = []
    used_b: list[str] = []
    chosen: list[Question] = []
    rejected = defaultdict(int)
    # Round-robin over (A kind, relation, attribute) so no template dominates.
    while len(chosen) < MULTI_HOP_QUESTIONS and any(groups[k] for k in keys):
        for key in keys:
            if len(chosen) == MULTI_HOP_QUESTIONS:
                break
            while groups[key]:
                a, relation, b, attr = groups[key].pop()
                if a.name in used_a or b.name in used_b:
                    continue
                bridge = bridges.get((a.name, relation)) or a.doc
                answer_page, value = b.doc, b.attrs[attr]
                bridge_text, answer_text = book.text(bridge), book.text(answer_page)
                if bridge == answer_page or not contains(bridge_text, b.name):
                    rejected["bridge"] += 1
                    continue
                if contains(answer_text, a.name) or contains(bridge_text, value):
                    rejected["leak"] += 1
                    continue
                text = None
                forms = [
                    (r.lstrip("~"), q) for r in REFERENCES[relation] for q in ATTR_QUESTIONS[b.kind][attr] if fits(r, q)
                ]
                rng.shuffle(forms)
                for reference, template in forms:
                    candidate = template.format(r=reference.format(a=a.mention))
                    if not vocab.rare_overlap(candidate, answer_page):
                        text = candidate
                        break
                if text is None:
                    rejected["overlap"] += 1
                    continue
                used_a.append(a.name)
                used_b.append(b.name)
                chosen.append(
                    Question("", text, 2, f"{a.kind}.{relation}>{b.kind}.{attr}", value, {answer_page: 2, bridge: 1})
                )
                break
    if len(chosen) < MULTI_HOP_QUESTIONS:
        raise SystemExit(f"only {len(chosen)} multi-hop questions pass the checks ({dict(rejected)})")
    return chosen


def single_hop(rng: random.Random, book: Book, world: World, taken: list[str]) -> list[Question]:
    by_kind = {kind: [e for e in world.all() if e.kind == kind and e.name not in taken] for kind in ATTR_QUESTIONS}
    kinds = list(ATTR_QUESTIONS)
    chosen: list[Question] = []
    while len(chosen) < SINGLE_HOP_QUESTIONS:
        for kind in kinds:
            if len(chosen) == SINGLE_HOP_QUESTIONS or not by_kind[kind]:
                continue
            entity = by_kind[kind].pop(rng.randrange(len(by_kind[kind])))
            attr = rng.choice([attr for attr in ATTR_QUESTIONS[kind] if attr in entity.attrs])
            text = rng.choice(ATTR_QUESTIONS[kind][attr]).format(r=entity.mention)
            chosen.append(Question("", text, 1, f"{kind}.{attr}", entity.attrs[attr], {entity.doc: 2}))
    return chosen


# --- output -----------------------------------------------------------------------------

README = """# kenning multi-hop set

A small retrieval test collection made for kenning's own benchmark
(`bench/multihop.py`): a fictional company wiki in which most questions can only be
answered by joining two pages through an entity. Generated by
`bench/multihop/make_set.py` (seed {seed}); regenerate with that script, never edit by
hand. `make_set.py --check` confirms the committed copy is what the script makes.

| file | content |
|---|---|
| `docs/*.md` | {docs} markdown pages, one per file, 3-8 sentences each ({kb} KB in all) |
| `queries.jsonl` | {questions} questions: `id`, `text`, `hops` (2 = multi-hop, 1 = single-hop control), `kind`, `answer` |
| `qrels.tsv` | `query_id`, `doc` (file name in `docs/`), `grade`; tab-separated, with a header |

## Construction

A seeded world: {people} people (with {near} near-namesakes of the kind Maria Chen / Mario
Chen / Maria Cheng), {projects} projects named "Project <Word>", {orgs} organisations,
{cities} fictional towns ({offices} of them company offices), {libraries} libraries with
CamelCase or snake_case names, {services} snake_case services and {datasets} datasets.
Entities are linked (project lead, funder, core library, predecessor, dataset; library
and service maintainer and dependency; service owner project and upstream; person
manager, previous employer, office town; dataset curator and publisher; organisation
headquarters), and each has attributes (office, year joined, team, role; founding year,
headcount, sector; language, license, version, port; budget, launch quarter, status;
size, format, years covered; population, province, what a town is known for).

Each entity has one page stating its attributes. A link is stated either on the linking
entity's page or in a separate note (kickoff notes, ADRs, grant agreements, ownership
changes, changelogs, incident reports, org-chart updates, data access requests). Each
attribute is stated on exactly one page.

**Multi-hop questions** ({multi}, `hops` 2) name an entity A and ask for an attribute of
the entity B it links to ("Which office does the lead of Project Falcon work from?").
The page stating B's attribute is graded 2, the page stating the A-B link graded 1. The
script keeps a question only if the answer page does not name A, the bridge page names
B but not the answer, and every question term (kenning's own stopwords and FTS5 porter
tokenizer) that the answer page holds is one at least {common} pages hold ("office",
"team", "license"), so keyword overlap gives no hint of which page answers. Questions
spread evenly over the {chains} (relation, attribute) pairings that have candidates,
with {refs} ways of naming B through A ({ref_range} per relation) and 2-3 phrasings per
attribute question; each A and each B is used once. Examples: {multi_examples}.

**Single-hop controls** ({single}, `hops` 1) name the entity itself ({single_example});
only its page is judged (grade 2). They check that a graph leg does not hurt plain
lookups.

**Distractors**: weekly-sync notes, office visits, demo-day recaps, release trains and
incident reports mention people, projects and components in passing; office news,
hiring posts, team budgets and policy pages use the attribute words (office, budget,
license, port, population) for other things; similar names recur across kinds
(Project Heron / Heron Analytics, Project Falcon / Falcon Ridge Partners /
falcon_flight_paths, Ostvik the town / Ostvik Shipping).

Page counts by kind: {kinds}.

## License

Generated by the kenning project; every name, place and fact is fictional. Dedicated to
the public domain under CC0 1.0
(https://creativecommons.org/publicdomain/zero/1.0/).
"""


def build(out: Path, seed: int = SEED) -> dict[str, int]:
    rng = random.Random(seed)
    world = build_world(rng)
    book = Book(rng)
    for person in world.people:
        person_page(book, world, person)
    for project in world.projects:
        project_page(book, world, project)
    for org in world.orgs:
        org_page(book, world, org)
    for index, city in enumerate(world.cities):
        city_page(book, world, city, office=index < OFFICE_CITIES)
    for library in world.libraries:
        library_page(book, world, library)
    for service in world.services:
        service_page(book, world, service)
    for dataset in world.datasets:
        dataset_page(book, world, dataset)
    bridges = link_notes(book, world)
    distractors(book, world)

    vocab = Vocabulary(book)
    multi = multi_hop(rng, book, world, vocab, bridges)
    single = single_hop(rng, book, world, _answers(multi, book))
    questions = multi + single
    rng.shuffle(questions)
    multi_n = single_n = 0
    for question in questions:
        if question.hops == 2:
            multi_n += 1
            question.id = f"mh{multi_n:03d}"
        else:
            single_n += 1
            question.id = f"sh{single_n:03d}"
    questions.sort(key=lambda q: q.id)

    docs = out / "docs"
    if docs.exists():
        shutil.rmtree(docs)
    docs.mkdir(parents=True)
    total = 0
    for name in sorted(book.pages):
        data = book.text(name).encode()
        (docs / name).write_bytes(data)
        total += len(data)
    with (out / "queries.jsonl").open("w", encoding="utf-8", newline="\n") as stream:
        for q in questions:
            record = {"id": q.id, "text": q.text, "hops": q.hops, "kind": q.kind, "answer": q.answer}
            stream.write(json.dumps(record, ensure_ascii=False) + "\n")
    with (out / "qrels.tsv").open("w", encoding="utf-8", newline="\n") as stream:
        stream.write("query_id\tdoc\tgrade\n")
        for q in questions:
            for name, grade in sorted(q.judged.items(), key=lambda item: -item[1]):
                stream.write(f"{q.id}\t{name}\t{grade}\n")
    kinds: dict[str, int] = defaultdict(int)
    for kind in book.kinds.values():
        kinds[kind] += 1
    chains = len({q.kind for q in multi})
    (out / "README.md").write_text(
        README.format(
            seed=seed,
            docs=len(book.pages),
            kb=round(total / 1000),
            questions=len(questions),
            people=PEOPLE,
            near=NEAR_NAMESAKES,
            projects=len(world.projects),
            orgs=len(world.orgs),
            cities=len(world.cities),
            offices=OFFICE_CITIES,
            libraries=len(world.libraries),
            services=len(world.services),
            datasets=len(world.datasets),
            multi=len(multi),
            single=len(single),
            common=COMMON_DF,
            chains=chains,
            kinds=", ".join(f"{kind} {count}" for kind, count in sorted(kinds.items())),
            refs=sum(len(forms) for forms in REFERENCES.values()),
            ref_range=f"{min(map(len, REFERENCES.values()))}-{max(map(len, REFERENCES.values()))}",
            multi_examples="; ".join(f'"{q.text}"' for q in multi[:3]),
            single_example=f'"{single[0].text}"',
        ),
        encoding="utf-8",
    )
    return {
        "docs": len(book.pages),
        "bytes": total,
        "multi_hop": len(multi),
        "single_hop": len(single),
        "chains": chains,
    }


def _answers(questions: list[Question], book: Book) -> list[str]:
    """Entities already asked about (as B) in a multi-hop question, by page title."""
    return [book.pages[name].title for q in questions for name, grade in q.judged.items() if grade == 2]


def compare(left: Path, right: Path) -> list[str]:
    """Files that differ between two generated sets (relative paths)."""
    differ = []
    for path in sorted(p for p in left.rglob("*") if p.is_file()):
        other = right / path.relative_to(left)
        if not other.exists() or not filecmp.cmp(path, other, shallow=False):
            differ.append(str(path.relative_to(left)))
    differ += [
        str(p.relative_to(right))
        for p in sorted(right.rglob("*"))
        if p.is_file() and not (left / p.relative_to(right)).exists()
    ]
    return differ


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=OUT, help=f"where to write (default {OUT})")
    parser.add_argument("--check", action="store_true", help="regenerate in a temp dir and compare with --out")
    parser.add_argument("--seed", type=int, default=SEED, help=f"the world's seed (default {SEED}, the committed set)")
    args = parser.parse_args()
    if args.check:
        with tempfile.TemporaryDirectory() as tmp:
            build(Path(tmp), args.seed)
            differ = compare(Path(tmp), args.out)
        if differ:
            sys.exit(f"{len(differ)} files differ from a fresh build, e.g. {', '.join(differ[:5])}")
        print(f"{args.out}: identical to a fresh build")
        return
    stats = build(args.out, args.seed)
    print(
        f"wrote {stats['docs']} pages ({stats['bytes'] / 1000:.0f} KB), {stats['multi_hop']} multi-hop questions"
        f" over {stats['chains']} relation/attribute pairings, {stats['single_hop']} single-hop, to {args.out}"
    )


if __name__ == "__main__":
    main()
