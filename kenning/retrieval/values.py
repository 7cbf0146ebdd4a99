"""The kind of value a fact question asks for, and whether a hit states one.

"What year did Noor Haddad join?", "How many vans does the Leeds depot have?", "What
colour is Biscuit's coat?": each is answered only by text that states a value of its
kind (a year, a number of vans, a colour). The floors' other measures cannot see that:
the page about Noor Haddad holds most of the question's words and is close to it in
meaning whether or not it says when she joined. So when a question asks for one of the
kinds below, the best hits about its subject must state one, or the floor refuses.

Only kinds a value's written form gives away are judged: a year, a time of day, opening
or working hours, a colour, a port, a version, a fee or rate, an amount of money, a
phone number, an email address, a street address, an account or customer identifier, a
count, a measure (a length, speed, weight, volume or size: a number beside the word for
it, "Gross tonnage: 1,860", or one written in its units, "500 Mbps"), how long a walk or
a route is (a distance or a length of time), and what answers "when". "Who", "where" and
"which city" are left alone, since any capitalised word could be their answer. A time of
day is written as a clock does ("19:30", "7pm"), as people say it ("half seven",
"1045hrs") or as a bare hour after the moment it is of ("leaves at 7"). "When" is
answered by an event as often as by a date ("When can I run the billing migration?":
"never during the nightly invoice batch"), so any word that may place a thing in time
counts (a date, a day, a recurrence, "after", "during"): only a page that says nothing
about time is refused, or a question about a thing no text names at all. That thing is
the question's words but its names (`Wanted.event`): a person's page that dates when she
joined says nothing of "When is Priya Raman's birthday?" if no note names a birthday. A
page that names none of those words while some other note does may still say it its own
way: "It has been around since 1990" answers "When was Falcon Ridge Partners founded?"
(bench/multihop.py); requiring the page to name one refused that and no more abstention
questions than this does. Which of a document's chunks is cited first asks more: that it
surely says when (`surely`). The note's own date in its front matter is not a statement,
and a count or a port is not a date: "9 October 2025" holds no number of technicians. A
count and a port must stand within NEAR_TOKENS of the words naming what is counted, on
the same line or under them ("12 vans", "vans: 12", a table's "Vans" column; a headcount
may say people, staff, visits or attendance whichever the question said; a port may
instead follow its host and a colon, "db1.corp:5432"), and a version just after its name
("PostgreSQL 15"), since most notes hold some number.

Which hits may state it is retrieval/verdict.py's to say: the best few about the
question's subject, and the page the best hit names (the far page of a question through
a link). Within one document, the chunk that states it is cited before one that does
not (`stating_first`). The forms were chosen on the truth set's dev and tune splits
(bench/truth.py) and checked on bench/multihop.py, whose questions ask for the same kinds
through a link.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import lru_cache, partial

from kenning.api import Hit
from kenning.retrieval import diversity
from kenning.retrieval.query import QUESTION_WORDS, kind_named, parse
from kenning.text.frontmatter import body
from kenning.text.statements import framed
from kenning.text.stopwords import STOPWORDS

NEAR_TOKENS = 6
VERSION_TOKENS = 2
# How much of a question its form is read from. The patterns asking for a kind ("what
# ... fee") try every "what" the question holds against all that follows it: a query of
# 4,000 characters, most of them "What", held the event loop 0.66 s. The truth set's
# longest question has 105 characters.
QUESTION_CHARS = 600

_NUMBER_WORDS = (
    "one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen"
    " eighteen nineteen twenty thirty forty fifty sixty seventy eighty ninety hundred thousand million dozen"
    " half quarter single couple"
).split()
_COLOURS = (
    "red orange yellow green blue purple violet pink brown black white grey gray beige cream navy teal turquoise"
    " magenta silver gold golden ivory maroon olive charcoal lilac lavender tan khaki sage mustard coral amber"
    " ginger tabby tortoiseshell brindle chocolate copper bronze indigo cyan crimson scarlet burgundy mint peach"
).split()
# A colour's word in a set phrase that gives no thing's colour: "black ice on the hill road".
_NOT_A_COLOUR = r"(?![\s-]+(?:ice|tape|box|list|market|friday|belt|paper|noise|chip|standard|lining|sheep|spots?)\b)"
# "May" only with its capital: the verb is far commoner.
_MONTH_NAMES = (
    "january february march april june july august september october november december"
    " jan feb mar apr jun jul aug sep sept oct nov dec"
).split()
_WEEKDAYS = "monday tuesday wednesday thursday friday saturday sunday weekday weekend".split()

_YEAR = r"(?<![\d.])(?:19|20)\d\d(?!\d|\.\d)"
_MONTH = rf"(?:\b(?:{'|'.join(_MONTH_NAMES)})\b\.?|\b(?-i:May)\b)"
_DATES = re.compile(
    rf"{_YEAR}(?:-\d\d(?:-\d\d)?)?|\b[0-3]?\d(?:st|nd|rd|th)?\s+{_MONTH}|{_MONTH}\s+[0-3]?\d(?:st|nd|rd|th)?\b|{_MONTH}"
    rf"|\b(?:{'|'.join(_WEEKDAYS)})s?\b|\b[0-3]?\d(?:st|nd|rd|th)\b|\bQ[1-4]\b",
    re.IGNORECASE,
)
# "£2.50" and "12.50 euros" are prices, not times; "6:30pm" is one.
_TIME = re.compile(
    r"(?<![£$€¥])\b[0-2]?\d[:.][0-5]\d\b(?!\s?(?:gbp|usd|eur|euros?|dollars?|pounds?|pence|p)\b)"
    r"|\b1?\d(?:[:.][0-5]\d)?\s*(?:am|pm|a\.m\.|p\.m\.)|\b(?:noon|midday|midnight|morning|afternoon|evening|lunchtime)s?\b",
    re.IGNORECASE,
)
# The hours of a clock in words, and a time said as people say it: "7 o'clock", "half
# seven", "quarter past 8", "8ish", "1045hrs", "19h", "9h30".
_HOURS = r"one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve"
_SAID_TIME = (
    rf"\b(?:\d\d?|{_HOURS})\s?o'?clock\b|\b(?:half|quarter\s+(?:past|to))\s+(?:1[0-2]|[1-9]|{_HOURS})\b"
    r"|\b(?:1[0-2]|[1-9])ish\b|\b(?:[01]\d|2[0-3])[0-5]\d\s?hrs?\b|\b(?:1\d|2[0-3])h\b|\b(?:[01]?\d|2[0-3])h[0-5]\d\b"
)
# An hour written bare, in words or as four digits after a word placing a moment at it,
# at the end of what is said of it ("The ferry leaves at 7", "Check in from 4", "Dep
# 0705, arrives 0912", "Meet at seven", "curfew is 11", "starts at 10 sharp"): not "Meet
# at 10 Downing St", "weighed in at 9 kilos", "from 2 suppliers". A time of day only
# there, and never a value the truth signals compare, as a value starts where its digits do.
_AT_HOUR = (
    r"\b(?:starts?|starting|leaves?|leaving|departs?|departing|dep|arrives?|arriving|arr|opens?|closes?|meet"
    r"|meeting|tee|curfew|kick[-\s]?off|doors|check[-\s]?in|check[-\s]?out|pick[-\s]?up|collection|boarding)"
    r"(?:\s+(?:is|at|from|by|around|about))?\s*:?\s+"
    rf"(?:half\s+)?(?:(?!(?:19|20)\d\d)(?:[01]\d|2[0-3])[0-5]\d|1[0-2]|[1-9]|{_HOURS})"
    r"(?=\s*(?:$|[.,;!?)\]\n]|-\s?\d"
    r"|(?:sharp|prompt|latest|onwards|for|till|until|to|and|or|on|at|from|in|by|then)\b))"
)
_NUMBER = re.compile(rf"(?<![\w.])\d[\d,.]*|\b(?:{'|'.join(_NUMBER_WORDS)})\b", re.IGNORECASE)
# A figure is read to the end of its run of digits, commas and points, once: only a
# letter or a space can follow it, so nothing read is given back. A start deep inside a
# run (`_INSIDE_RUN`) would read to the same end again from each digit of "1,1,1,...".
_INSIDE_RUN = r"(?<![\d,.]{16})"
_MONEY = re.compile(
    rf"[£$€¥]\s?\d|{_INSIDE_RUN}\d[\d,.]*+\s?(?:k|m|bn)?\s?(?:gbp|usd|eur|euros?|dollars?|pounds?|pence|p)\b"
    r"|\b(?:gbp|usd|eur)\s?\d"
    r"|\bfree\b",
    re.IGNORECASE,
)
_WHEN = re.compile(f"{_DATES.pattern}|{_TIME.pattern}", re.IGNORECASE)
_TOKEN = re.compile(r"\w+")
# A headcount is written in other words than the question's: "how many people" is
# answered by "8 engineers", and "how many people came" by "Visits: 3,210". A word for
# people in general takes either group; one for who works somewhere, or for who comes
# or uses something, only its own: the staff are not counted by the visitors.
_ANYONE = frozenset("people persons headcount members".split())
_PEOPLE = (
    frozenset("employees staff workers engineers developers technicians hires".split()),
    frozenset("visitors visits footfall attendees attendance participants guests users customers".split()),
)
# Who lives somewhere, counted only when the question says so ("How many people live
# in Østerhavn?"): a city's population is no depot's workforce.
_RESIDENTS = frozenset("population inhabitants residents".split())
_LIVING = frozenset("live lives living inhabit".split()) | _RESIDENTS


@dataclass(frozen=True)
class _Kind:
    name: str
    asks: re.Pattern[str]
    value: re.Pattern[str]
    # How many tokens from the words naming what it measures the value may stand (0:
    # anywhere in the hit), and whether it must follow them: a version follows its name
    # ("PostgreSQL 15", "Java 17").
    distance: int = 0
    after: bool = False
    # Written forms that cannot be the value and are read past: a date or a time is no
    # count, port or price; a date is no version ("0.19" may be a time, not "5.2").
    unlike: re.Pattern[str] | None = None
    # A narrower form that surely states the value where `value` only may (see "when").
    surely: re.Pattern[str] | None = None
    # A form that states the value wherever it stands in the hit, near the words or not.
    anywhere: re.Pattern[str] | None = None
    # A form that states the value anywhere in the hit when the question names nothing
    # but the kind, its group "name" no stopword nor a word numbering things of its kind
    # (`_NUMBERING`): "What version does the staging
    # database run?" is answered by "Postgres 15", which names no version.
    unnamed: re.Pattern[str] | None = None
    # Whether the question's words but its names say what is to be placed in time
    # (`Wanted.event`).
    event: bool = False
    # Whether a question of this form is refused when no hit states such a value.
    refuses: bool = True


# A host name, an IPv4 address or a bracketed IPv6 one, then a colon and a port: a
# time ("10:30") has no host before it. A name without a dot is a host only in lower
# case, as hosts are written ("redis:6379"): "Chapter:12" or "Room:14" is a label.
_HOST_PORT = re.compile(
    r"(?<![\w.:-])(?:\d{1,3}(?:\.\d{1,3}){3}|[a-z][\w-]*(?:\.[\w-]+)+|(?-i:[a-z][a-z0-9_-]*)|\[[0-9a-f:]+\])"
    r":\d{2,5}(?![\w:]|\.\d)",
    re.I,
)
# Not a date written with hyphens ("2025-09-18"), which has as many digits.
_PHONE = re.compile(r"(?<![\w.+-])(?!\d{4}-\d\d-\d\d(?!\d))\+?\(?\d(?:[ ()-]*\d){6,14}(?!\w|\.\d)")
# The name before "@" is read whole, once ("@" cannot be part of it), and not again from
# a start deep inside it: at most 64 characters, a longer run names no mailbox.
_EMAIL = re.compile(r"(?<![\w.+-]{64})[\w.+-]++@[\w-]+(?:\.[\w-]+)+")
_STREET_WORDS = (
    "street st road rd avenue ave lane ln way place square sq drive dr court ct row hill terrace crescent close"
    " gardens parade walk quay wharf boulevard blvd strasse straße"
).split()
# A number and a capitalised street name ("4 Temple Quay", "1600 Pennsylvania Ave"), a
# German-style street and number, a UK postcode, a Japanese postal mark. A German street
# is not looked for from a capital deep inside a hyphenated run ("A1-A1-..."), each of
# which would read to the run's end again; its first capital reads all it could.
_ADDRESS = re.compile(
    rf"\b\d+[a-z]?,?\s+(?:[A-Z][\w'-]*\s+){{1,3}}(?i:{'|'.join(_STREET_WORDS)})\b\.?"
    r"|(?<![\w-]{32})\b[A-ZÄÖÜ][\w-]*(?:straße|strasse|weg|platz|gasse|allee|gracht)\s+\d+"
    r"|\b[A-Z]{1,2}\d[A-Z\d]?\s*\d[A-Z]{2}\b|〒\s?\d{3}-?\d{4}"
)
# An identifier: letters and digits together ("ACC-20417", "cus_8812", "INV-2025-0042"),
# or a run of five digits or more ("4471-0093"); not a date.
_IDENTIFIER = re.compile(
    r"(?<![\w.-])(?!\d{4}-\d\d-\d\d(?![\w-]))"
    r"(?:(?=[\w-]*[A-Za-z])(?=[\w-]*\d)[A-Za-z0-9][\w-]{3,}|\d[\d-]{3,}\d)(?![\w-])"
)

# What places a thing in time, surely: a date, a day, a time, a recurrence ("every
# month", "twice a week"), a duration ("for two weeks", "3 days"), "nightly", "during
# the batch", "the end of the month". A unit of time counts only as one ("every order",
# "the end of the file" and "Spring Boot" place nothing). The lines to cite for "when"
# must say it this surely.
_UNITS = r"(?:minutes?|hours?|days?|nights?|weeks?|fortnights?|months?|years?|mornings?|afternoons?|evenings?|weekends?)"
# A length of time: "four years", "3-day".
_DURATION = rf"(?<![\w.])(?:\d+|{'|'.join(_NUMBER_WORDS)})[\s-]+(?:{_UNITS}|seconds?|quarters?)\b"
_PLACES_IN_TIME = re.compile(
    rf"{_WHEN.pattern}"
    rf"|\b(?:every|each|this|next|last|per|for|within)\s+(?:an?\s+|other\s+|few\s+|couple\s+of\s+)?{_UNITS}\b"
    rf"|\b(?:once|twice|\w+\s+times)\s+an?\s+{_UNITS}\b"
    rf"|{_DURATION}"
    r"|\b(?:hourly|daily|nightly|weekly|fortnightly|monthly|quarterly|yearly|annually|overnight|today|tomorrow"
    r"|tonight|yesterday|during|until|till)\b"
    rf"|\b(?:end|start|beginning|middle)\s+of\s+(?:the\s+|each\s+|every\s+|this\s+|next\s+|last\s+)?{_UNITS}\b",
    re.IGNORECASE,
)
# What may place it in time: any of the above, or any word that can ("after the
# freeze", "when CI is green", "months"). An event answers "when" as often as a date
# does, and a refusal must be sure, so only a page with none of these is refused.
_MAY_PLACE_IN_TIME = re.compile(
    rf"{_PLACES_IN_TIME.pattern}"
    r"|\b(?:after|before|once|while|when|whenever|since|upon|every|each|never|always|now|soon|later"
    r"|spring|summer|autumn|fall|winter|seconds?|quarters?|end|start|beginning)\b"
    rf"|\b{_UNITS}\b",
    re.IGNORECASE,
)
_TIME_UNIT = re.compile(rf"{_UNITS}|seconds?|quarters?", re.IGNORECASE)
_VERSION = re.compile(r"(?<![\w.-])v?\d+(?:\.\d+)*(?![\w-])", re.I)
# A name and its version after it: "Postgres 15", "Ubuntu 22.04". Not a word that
# numbers things of its kind ("Room 12", "Ticket 4521", "Step 3").
_NAMED_VERSION = re.compile(r"\b(?P<name>[A-Z][\w+#.-]*)\s+v?\d+(?:\.\d+)*(?![\w-])")
_NUMBERING = frozenset(
    "room ticket step page floor level chapter section table figure line item issue order case invoice platform"
    " gate bay unit week day sprint phase stage part row column box building block flat suite door desk seat"
    " lane route bus train flight pier dock ward bed lot number no team group class grade year month hour"
    " question task test batch plate tier zone area exit track bin slot port house pr ref rev appendix".split()
)
# Moments a day's plan names, whose time is a time of day; not a finish, whose time is
# as often a race's length ("my finish time in the Bristol 10K": "52:40").
_MOMENTS = (
    r"check[-\s]?in|check[-\s]?out|departure|arrival|start|starting|kick[-\s]?off|pick[-\s]?up"
    r"|collection|drop[-\s]?off|meeting|boarding|call|tee|curfew"
)
# Ways on foot, whose length is a distance or a time; a swim, a drive or a crossing is
# as often told in laps, or by when one leaves and arrives.
_JOURNEYS = r"route|walk|hike|trail|loop|circuit|ramble"
_WHEN_OR_RECURRENCE = re.compile(rf"{_WHEN.pattern}|\b(?:every|each)\s+{_DURATION}", re.IGNORECASE)
# A measure, by what it measures: the nouns and adjectives that ask for it ("What is the
# top speed...", "How deep...") and the units it is written in ("12 knots", "4.5 m").
# "How long" is left out: it asks for a time as often as a length.
_LENGTH_UNITS = (
    r"mm|cm|m|metres?|meters?|km|kilometres?|ft|feet|foot|inch(?:es)?|miles?|nm|nautical\s+miles?|fathoms?|yards?"
)
_MEASURES = (
    ("a length", "length|depth|draught|draft|height|width|breadth|beam|thickness|diameter|distance",
     "deep|tall|high|wide|thick", _LENGTH_UNITS),
    ("a speed", "speed", "fast", r"knots?|kts|kn|mph|km/h|kph|m/s|mbps|gbps|mb/s|gb/s|rpm"),
    ("a weight", "weight|tonnage|displacement", "heavy", r"kg|kilos?|kilograms?|g|grams?|t|tonnes?|tons?|lbs?|gt|dwt"),
    ("a volume", "capacity|volume", "", r"litres?|liters?|l|ml|m3|m³|gallons?|cubic\s+\w+"),
    ("a size", "size", "",
     rf"kb|mb|gb|tb|bytes?|kib|mib|gib|m2|m²|sq\.?\s?(?:m|ft)|square\s+\w+|acres?|hectares?|{_LENGTH_UNITS}"
     r"|(?:thousand|million|billion|k|m|bn)?\s?(?:rows|records|entries)"),
)
# What the adjective of a measure asks for, by the noun a note may write it with.
_MEASURED = {
    "deep": "depth", "tall": "height", "high": "height", "wide": "width", "thick": "thickness", "fast": "speed",
    "heavy": "weight",
}
# What "how many" or "how much" counts: the word or two after it, unless a verb stands
# there; after a unit of time, the first word of what it is of ("How many days of sick
# pay...": "25 days" of holiday, or what Fernhill "pays" into a pension, is no count of
# them; "15 minutes of inactivity" is).
_COUNTED = (
    r"\s+(?!(?:did|does|do|has|have|had|will|would|can|could|should)\b)"
    # "How much is the coach to Spurn Point?" counts the coach (a number beside it, or a
    # sum anywhere): read past the verb and the article, which left nothing counted.
    # Not always a price: "How much is the storage quota?" is answered by "50 GB".
    r"(?:(?:is|are|was|were)\s+(?:the\s+|an?\s+|my\s+|our\s+|your\s+|their\s+)?)?"
    rf"(?:{_UNITS}\s+of\s+(?:the\s+|an?\s+)?(?P<of>[\w-]+)|(?P<near>[\w-]+(?:\s+[\w-]+)?))"
)
_KINDS = (
    _Kind(
        "a year",
        re.compile(r"\b(?:what|which)\s+(?P<kind>year)\b|\bsince\s+(?:when|which\s+(?P<kind2>year))\b", re.I),
        re.compile(_YEAR),
    ),
    # Or the time of a moment named as such ("What's the check-in time at Casa do
    # Largo?"); not a length of time ("the journey time", "the running time").
    _Kind(
        "a time of day",
        re.compile(
            r"\b(?:what|which)\s+(?P<kind>time)\b(?!\s+(?:zones?|ranges?|periods?|frames?|spans?)\b)"
            r"|\bwhat(?:'s|\s+is|\s+are|\s+was)\s+(?:the|our|my|your|their)\s+(?:\w+\s+)?"
            rf"(?:{_MOMENTS})\s+(?P<kind2>time)s?\b",
            re.I,
        ),
        re.compile(f"{_TIME.pattern}|{_SAID_TIME}|{_AT_HOUR}", re.I | re.M),
    ),
    # Opening or working hours, asked for as such ("What are the opening hours of...",
    # "What hours does Aisha work?"; not "the overtime rate for working hours" or "What
    # hours did Priya log?"), are written as times or a range of them ("07:00-19:00",
    # "9 to 5", "0900-1700"), round the clock, or the days the place is shut.
    _Kind(
        "opening or working hours",
        re.compile(
            r"^\W*(?:what|which)\s+(?:are\s+(?:the\s+|its\s+|their\s+)?)?"
            r"(?P<kind>(?:(?:opening|working|core)\s+)?hours)\b(?!\s+(?:did|was|were|has|have|had)\b)"
            r"|^\W*(?:what|which)\s+(?:are|were)\b[^?]*?"
            r"(?<!outside\s)(?<!before\s)(?<!after\s)(?<!during\s)(?<!beyond\s)(?<!of\s)(?<!for\s)(?<!in\s)"
            r"\b(?P<kind2>(?:opening|working|core)\s+(?:hours|times))\b",
            re.I,
        ),
        re.compile(
            rf"{_TIME.pattern}|\b\d{{1,2}}(?:[:.h]?\d\d)?\s*(?:-|–|to|until|till)\s*\d{{1,2}}(?:[:.h]?\d\d)?\b"
            r"|\b24\s?(?:/|x)\s?7\b|\b24\s+hours\s+a\s+day\b|\bround\s+the\s+clock\b"
            rf"|\b(?:{'|'.join(_WEEKDAYS)}|weekends?|(?:bank\s+)?holidays?)s?\W{{0,3}}closed\b"
            rf"|\bclosed\s+(?:on\s+|at\s+)?(?:{'|'.join(_WEEKDAYS)}|weekends?|(?:bank\s+)?holidays?)",
            re.I,
        ),
        # A year or a span of years is no time ("no winter sailings in 2025-26").
        unlike=re.compile(rf"{_YEAR}(?:\s*[-–/]\s*(?:\d\d){{1,2}}(?!\d))?"),
    ),
    _Kind(
        "a colour",
        re.compile(r"\bwhat\s+(?P<kind>colou?rs?)\b", re.I),
        re.compile(rf"\b(?:{'|'.join(_COLOURS)})\b{_NOT_A_COLOUR}|#[0-9a-f]{{6}}\b", re.I),
    ),
    _Kind(
        "a port",
        re.compile(r"\b(?:what|which)\s+(?P<near>port)\b", re.I),
        re.compile(r"(?<![\w.-])\d{2,5}(?![\w-]|\.\d)"),
        NEAR_TOKENS,
        unlike=_WHEN,
        # A host and its port, as the ledger's services and many notes write them
        # ("db1.corp:5432", "10.0.0.5:8443", "[::1]:8080"), name no "port" beside them.
        anywhere=_HOST_PORT,
    ),
    # The thing may also follow ("Which version of Node does CI use?": "Node 20").
    _Kind(
        "a version",
        re.compile(
            r"\b(?:what|which)\s+(?P<near>(?:[\w-]+\s+)?(?P<kind>version))\b(?:\s+of\s+(?:the\s+)?(?P<thing>[\w.-]+))?",
            re.I,
        ),
        _VERSION,
        VERSION_TOKENS,
        after=True,
        unlike=_DATES,
        unnamed=_NAMED_VERSION,
    ),
    # What was said or decided about a thing's versions ("What did we decide about
    # Postgres versions?"): "Postgres 16" says it. But the answer is as often a rule
    # that gives no number ("Old API versions are switched off a year after their
    # successor ships"), so no question of this form is refused for want of one.
    _Kind(
        "a version",
        re.compile(r"\b(?:what|which)\b.*\babout\s+(?P<near>(?:[\w-]+\s+)?(?P<kind>versions?))\b", re.I),
        _VERSION,
        VERSION_TOKENS,
        after=True,
        unlike=_DATES,
        refuses=False,
    ),
    _Kind(
        "a fee or rate",
        re.compile(r"\b(?:what|which)\b.*\b(?P<kind>fee|fees|rate|commission)\b(?!\s+limits?\b)", re.I),
        re.compile(f"{_MONEY.pattern}|\\d\\s?%", re.I),
        unlike=_WHEN,
    ),
    # A sum asked as such ("How much does it cost...", "What do we charge for...") or named
    # by what it pays for ("What salary...", "the yearly rent"); not what merely concerns
    # it ("the rent review date").
    _Kind(
        "an amount",
        re.compile(
            r"\bhow\s+much\b.*\b(?P<kind>cost|costs|charge|charges|pay|paid|spend|spent|money|budget)\b"
            # "What do we charge...", "What does Nadia pay...": not "What do I need to pay
            # attention to" nor "What should I do if the laptop won't charge".
            r"|\bwhat\s+(?:do|does|did|will|would|should)\s+(?:we|you|they|i|he|she|(?-i:[A-Z])\w*)\s+(?:\w+\s+)?"
            r"(?P<kind3>charge|pay|cost|spend)\b(?!\s+(?:attention|time|with|my)\b)"
            r"|\b(?:what|which)\b.*\b"
            r"(?P<kind2>price|cost|bill|budget|salary|wages?|rent|fares?|stipend|allowance|premium|deposit)\b"
            r"(?!\s+(?:review|date|day|deadline|zones?|increase|rise|cap|policy|rules?)\b)",
            re.I,
        ),
        _MONEY,
        unlike=_WHEN,
    ),
    _Kind(
        "a phone number",
        re.compile(r"\b(?P<kind>(?:phone|telephone|mobile|fax)\s+(?:number|no))\b", re.I),
        _PHONE,
    ),
    _Kind(
        "an email address",
        re.compile(r"\b(?P<kind>e-?mail\s+address)\b|(?:'s|s')\s+(?P<kind2>e-?mail)\b(?!\s+(?:say|said|says)\b)", re.I),
        _EMAIL,
    ),
    _Kind(
        "a street address",
        re.compile(r"\b(?P<kind>(?:street|postal|post|home|office|delivery|shipping)\s+address|post\s*code)\b", re.I),
        _ADDRESS,
    ),
    _Kind(
        "an identifier",
        re.compile(
            r"\b(?:what|which)\b.*\b(?P<near>account|customer|client|merchant|member(?:ship)?|policy|vat|tax|registration)"
            r"\s+(?P<kind>id|number|no\.|reference|ref)(?!\w)",
            re.I,
        ),
        _IDENTIFIER,
        NEAR_TOKENS,
    ),
    *(
        _Kind(
            name,
            re.compile(
                rf"\b(?:what|which)\b.*?\b(?P<near>{nouns})\b"
                + (rf"|\bhow\s+(?P<adjective>{adjectives})\b" if adjectives else ""),
                re.I,
            ),
            _NUMBER,
            NEAR_TOKENS,
            unlike=_WHEN,
            anywhere=re.compile(rf"(?<![\w.]){_INSIDE_RUN}\d[\d,.]*+\s?(?:{units})(?![\w/²³])", re.I),
        )
        for name, nouns, adjectives, units in _MEASURES
    ),
    # How long a walk or a route is: a distance ("14 km", "half a mile") or a length of
    # time ("about 5 hours", "2h30", "over a long weekend"). What else "how long" asks of
    # is as often answered by dates ("How long is the exhibition on?": "until 3 March").
    _Kind(
        "a distance or a length of time",
        re.compile(
            r"\bhow\s+long\s+(?:is|was|are|were)\s+(?:the|our|my|this|that|a)\s+(?:[\w-]+\s+){0,3}?"
            rf"(?:{_JOURNEYS})s?\b",
            re.I,
        ),
        re.compile(
            rf"{_DURATION}|(?<![\w.])\d+(?:[.,]\d+)?\s?(?:{_LENGTH_UNITS}|k|mi|h|hrs?|mins?)(?![a-z/²³])"
            r"|\b(?:an?|half\s+an?|quarter\s+of\s+an?)\s+(?:hour|day|mile|kilometre|kilometer)\b"
            r"|\b(?:half\s+)?marathon\b"
            r"|\b(?:an?|one|two|three|the\s+whole|all)\s+(?:long\s+)?"
            r"(?:days?|weekends?|mornings?|afternoons?|evenings?)\b"
            r"|(?<![\w.])\d+\s+(?:laps?|lengths|stages|legs)\b"
            r"|\b[0-2]?\d[:.][0-5]\d\s*(?:-|–|to|until)\s*[0-2]?\d[:.][0-5]\d\b",
            re.I,
        ),
    ),
    # A verb right after "how much" or "how many" leaves nothing counted: "By how much
    # did library visits grow?" measures a change, not a number of libraries.
    _Kind(
        "a number",
        re.compile(rf"\bhow\s+many{_COUNTED}", re.I),
        _NUMBER,
        NEAR_TOKENS,
        unlike=_WHEN,
    ),
    # "How much" of a thing is a number beside it, or a sum of money anywhere: "How much
    # grant was awarded?" is answered by "withdrawn the £1.2m award".
    _Kind(
        "a number",
        re.compile(rf"\bhow\s+much{_COUNTED}", re.I),
        _NUMBER,
        NEAR_TOKENS,
        unlike=_WHEN,
        anywhere=_MONEY,
    ),
    # A day or week asked for as such ("What date is the summer fair?", "Which day is the
    # museum closed?"), written as a date or a weekday, short ("Sat 12th", "Wed 3 Feb") or long.
    _Kind(
        "a date",
        re.compile(
            r"\b(?:what|which)\s+(?P<kind>date|day|week)s?\b"
            r"(?![-‐]|\s+(?:rates?|pass(?:es)?|trips?|tickets?|formats?|nurser(?:y|ies)|shifts?|jobs?|care|centres?)\b"
            r"|\s+of\s+(?:annual|paid|unpaid|sick|holiday|leave)\b)",
            re.I,
        ),
        re.compile(rf"{_DATES.pattern}|\b(?:mon|tue|tues|wed|thu|thur|thurs|fri|sat|sun)\b\.?", re.I),
    ),
    # Last: a "when" question that also names a narrower kind ("When is standup, what
    # time?") asks for that one.
    _Kind("a date or time", re.compile(r"^\W*when\b", re.I), _MAY_PLACE_IN_TIME, surely=_PLACES_IN_TIME, event=True),
)


# A question asking for a person, or for a team, a place or another thing known by its
# name: its answer is a name, never a number.
_ANSWERED_BY_NAME = re.compile(
    r"^\W*(?:who|whom|whose|where)\b"
    r"|^\W*(?:which|what)\s+(?:team|person|people|service|city|town|country|office|company"
    r"|vendor|supplier|provider|tool|customer|manager|engineer|owner)s?\b",
    re.I,
)


# A question whose answer names a place.
_ASKED_WHERE = re.compile(r"^\W*where\b|^\W*(?:which|what)\s+(?:city|town|country|office)s?\b", re.I)


def answered_by_name(question: str) -> str | None:
    """What the name a question's answer is names: a "place" (where, which city or
    office), a "person" or a thing (who, which team or vendor); None for another
    question."""
    if _ANSWERED_BY_NAME.search(question) is None:
        return None
    return "place" if _ASKED_WHERE.search(question) else "person"


def answers_at(question: str, wanted: Wanted | None) -> Callable[[str, int], bool]:
    """Which of a text's values can answer the question, for the truth signals to compare:
    those of the kind it asks for (`value_at`); none for a question asking who or which
    team, place or the like (a phone number beside "billing" in one note and a port
    beside it in another do not disagree about who runs billing; "every morning at
    09:00" and "daily at 11:00" do not about which team checks a queue); for the rest,
    any but a date (`_beside_dates`)."""
    if wanted is not None:
        return partial(value_at, wanted)
    if _ANSWERED_BY_NAME.search(question):
        return lambda text, position: False
    return _beside_dates


def _beside_dates(text: str, position: int) -> bool:
    """Whether the value at `position` is no date nor part of one ("2025-09-03", "4 Sept",
    "Q3"): when a note was written or a thing happened is not what two notes disagree
    about for a question that asks for no date ("Where is the job queue moving to?" is
    not answered by the meeting note's "4 Sept" against the queue page's "updated:
    2025-09-03")."""
    return not _within(_DATES, text, position)


# Words asking for a kind of value without saying what the value is of.
_GENERIC_NAMING = frozenset(
    "cost costs charge charges pay paid spend spent money price fee fees rate year time colour color colours colors"
    " hours version versions".split()
)


@dataclass(frozen=True)
class Wanted:
    """The kind of value a question asks for, and the words it must stand near (none:
    anywhere in the hit)."""

    kind: str
    near: tuple[str, ...]
    form: _Kind
    # The question's words that name the kind ("phone number", "cost", "year"): not
    # what it is about, and held by a text that states a value of the kind in its own
    # words ("How much does it cost to bring a bicycle?": "Bicycles: £2.50").
    naming: frozenset[str] = frozenset()
    # For "when", the words naming what is to be placed in time ("birthday" of "When is
    # Priya Raman's birthday?"): when no text holds any of them, no text says when it is.
    event: tuple[str, ...] = ()

    @property
    def said_by_any_value(self) -> frozenset[str]:
        """The naming words any value of the kind says: "£2.50" says what something costs,
        but no sum says it is a deposit or a salary (a rent is neither)."""
        return self.naming & _GENERIC_NAMING


def wanted(question: str) -> Wanted | None:
    """What the question asks for, when its form gives one away; None otherwise. Keywords
    naming a kind ("crux day pass price") ask for it as "what" does."""
    question = question[:QUESTION_CHARS]
    if kind_named(question) is not None:
        question = f"what {question}"
    for kind in _KINDS:
        match = kind.asks.search(question)
        if match is None:
            continue
        near: tuple[str, ...] = ()
        groups = match.groupdict()
        if kind.distance:
            adjective = groups.get("adjective")
            found = f"{adjective} {_MEASURED[adjective.lower()]}" if adjective else groups.get("near") or groups["of"]
            found = f"{found} {groups.get('thing') or ''}"
            words = [word.lower() for word in _TOKEN.findall(found)]
            near = tuple(word for word in words if word not in STOPWORDS)
            if not near:
                # "How much of that is left?" names no thing counted: its answer may be
                # a price, a size or a share, so no kind is judged.
                continue
            near = _headcount(near)
            if kind.name == "a number" and not groups.get("of") and not any(map(_TIME_UNIT.fullmatch, near)):
                # "replaced every four years" says how often, and counts no laptops beside
                # it; a length of time that is itself the amount asked ("25 days of annual
                # leave" for "How much annual leave...") stays.
                kind = replace(kind, unlike=_WHEN_OR_RECURRENCE)
        named = groups.get("kind") or groups.get("kind2") or groups.get("kind3") or ""
        naming = frozenset(word.lower() for word in _TOKEN.findall(named))
        event = _event(question) if kind.event else ()
        return Wanted(kind.name, near, kind, naming, event)
    return None


def _event(question: str) -> tuple[str, ...]:
    """The question's words but its names and the words shaping it: what a "when"
    question asks to place in time."""
    query = parse(question)
    return tuple(
        dict.fromkeys(
            word
            for word in (token.lower() for token in _TOKEN.findall(question))
            if word not in STOPWORDS and word not in QUESTION_WORDS and word not in query.names and word != "when"
        )
    )


def _headcount(near: tuple[str, ...]) -> tuple[str, ...]:
    """The words a count of the people the question names may be written with."""
    groups = [group for group in _PEOPLE if group.intersection(near)]
    if _ANYONE.intersection(near):
        groups = list(_PEOPLE)
    if _LIVING.intersection(near):
        groups.append(_RESIDENTS)
    if not groups:
        return near
    return tuple(dict.fromkeys((*near, *_ANYONE, *(word for group in groups for word in sorted(group)))))


def states(wanted: Wanted, text: str, surely: bool = False) -> bool:
    """Whether the text may state a value of the kind wanted (near its words, on the same
    line, where it must be); with `surely`, whether it surely does."""
    form = wanted.form
    text = body(text)
    if form.unlike is not None:
        text = form.unlike.sub(" ", text)
    if not wanted.near:
        value = form.surely if surely and form.surely is not None else form.value
        return value.search(text) is not None
    if form.anywhere is not None and form.anywhere.search(text):
        return True
    if form.unnamed is not None and set(wanted.near) <= wanted.naming:
        named = (match.group("name").lower() for match in form.unnamed.finditer(text))
        if any(name not in STOPWORDS and name not in _NUMBERING for name in named):
            return True
    # "Tokyo (5 nights)" over "Hotel: ..., 13th floor" counts no floors; "| Depot | Vans |"
    # over "| Leeds | 12 |" counts Leeds's vans.
    return any(_near(form, wanted.near, frame, unit) for frame, unit in framed(text))


def _near(form: _Kind, near: tuple[str, ...], frame: str, unit: str) -> bool:
    """A value in the unit near the words, which the unit or its frame may hold; in a
    table row, any value of the row whose first cell names them ("| Active borrowers
    (used a card in the last 12 months) | 18,240 |")."""
    cells = unit.strip().strip("|").split("|") if unit.lstrip().startswith("|") else []
    if len(cells) > 1 and any(_same_word(token.lower(), word) for token in _TOKEN.findall(cells[0]) for word in near):
        return any(form.value.search(cell) for cell in cells[1:])
    line = f"{frame}\n{unit}" if frame else unit
    skip = len(line) - len(unit)
    values = [skip + match.start() for match in form.value.finditer(unit)]
    if not values:
        return False
    tokens = list(_TOKEN.finditer(line))
    offsets = [token.start() for token in tokens]
    spots = [n for n, token in enumerate(tokens) if any(_same_word(token.group().lower(), word) for word in near)]
    # The words stand before the value, within the distance, or after it too when the
    # value may come first: the nearest of them at or past the closest place they may
    # stand says it, looked up rather than read against every value.
    for start in values:
        position = bisect_left(offsets, start)
        last = position - 1 if form.after else position + form.distance
        nearest = bisect_left(spots, position - form.distance)
        if nearest < len(spots) and spots[nearest] <= last:
            return True
    return False


def _same_word(token: str, word: str) -> bool:
    """"van" and "vans", "technician" and "technicians": the same word, told apart by an
    ending only."""
    return stem(token) == stem(word)


def stem(word: str) -> str:
    """A word without a plural's ending: "officers" is "officer", "duties" "duty"."""
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith("s") and not word.endswith("ss") and len(word) > 3:
        return word[:-1]
    return word


def value_at(wanted: Wanted, text: str, position: int) -> bool:
    """Whether a value of the kind wanted is written from `position` on: "14 June" or
    "02:00" for "When...", not the first digits of "0113 496 0571"; or a form stating it
    wherever it stands ("£62" for "How much is the rent...?", a count beside nothing)."""
    form = wanted.form
    if form.unlike is not None and _within(form.unlike, text, position):
        return False
    if form.anywhere is not None and form.anywhere.match(text, position) is not None:
        return True
    return form.value.match(text, position) is not None


def _within(pattern: re.Pattern[str], text: str, position: int) -> bool:
    """Whether `position` falls inside a match of `pattern` ("four" inside "every four
    years", "09" inside "2025-09-03"). The matches do not overlap and come in order, so
    the one starting last at or before it is the only one it may fall in."""
    spans = _spans(pattern, text)
    at = bisect_right(spans, (position, len(text) + 1)) - 1
    return at >= 0 and spans[at][0] <= position < spans[at][1]


@lru_cache(maxsize=64)
def _spans(pattern: re.Pattern[str], text: str) -> list[tuple[int, int]]:
    """Where a pattern matches a text, read once per text for all the values in it."""
    return [match.span() for match in pattern.finditer(text)]


def stating_first(hits: list[Hit], texts: dict[int, str], wanted: Wanted) -> None:
    """Within one document, the best chunk that states the kind of value asked for takes
    the place of the document's best chunk when that one states none: the runbook's
    "Restore drill" section, not its introduction, answers "When do we practise
    restoring...?", and a citation must point at the lines that say it. Other documents
    keep their places. `hits` is best first (the caller sorts again)."""

    def better(hit: Hit, best: Hit) -> bool:
        if best.item_id not in texts or hit.item_id not in texts:
            return False
        return states(wanted, texts[hit.item_id], surely=True) and not states(wanted, texts[best.item_id], surely=True)

    diversity.lead_with(hits, better, f"states {wanted.kind}")
