"""Turning what a person typed into FTS5 expressions that cannot inject syntax.

Every token is double-quoted, so `NEAR`, `*`, `-`, `:` and parentheses are only ever
text. Stopwords are dropped and the rest OR-joined, so a question in plain words still
matches a document that answers it; bm25 then ranks documents holding more of the terms
first. Dropping stopwords also halves query latency, since they match nearly every row.

A phrase in double quotes (straight or curly) stays one FTS5 phrase, so it matches only
where its words stand together, in order; so do words joined by hyphens
("billing-exporter"), which name one thing. Words that ask about time ("current",
"latest") or only shape a question ("how many", "how often", the `s` of a possessive)
say nothing about which text answers, and are dropped like stopwords; the time they ask
about is read by retrieval/dates.py. The words naming the kind of answer ("which city",
"how many seats") are searched for but marked (`asked_for`): the text that answers may
name only the value. An ordinal up to the twelfth is searched for in its other written
forms too ("the third month" finds "month three" and "the 3rd month").

Runs of Chinese, Japanese or Korean script have no spaces between words, so the main
index sees a whole run as one token; `cjk_expression` cuts them as the CJK index does
(kenning/text/cjk.py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date

from kenning.text import cjk
from kenning.text.dates import MONTH_WORDS, find_date, named_periods
from kenning.text.stopwords import GENERIC_VERBS, STOPWORDS

MAX_TERMS = 32

_TOKEN = re.compile(r"\w+", re.UNICODE)
_LETTER_OR_DIGIT = re.compile(r"[^\W_]")
# A title before a person's name.
_HONORIFIC = re.compile(
    r"\b(Captain|Capt|Doctor|Dr|Mr|Mrs|Ms|Miss|Mx|Prof|Professor|Sir|Dame|Rev|Reverend)\.?\s+(?=[A-Z])"
)
_QUOTED = re.compile(r"[\"“”„]([^\"“”„]+)[\"“”„]")
# A question that asks for a fact ("Which port...", "When does...", "How many...", "How do
# I..."): one a note either states or does not. "Why", "should", "is X good for you" and
# "how to" ask about a topic, as a title does, and are left out.
_FACT_QUESTION = re.compile(
    r"\s*(?:(?:in|on|at|for|from|to|with|by|after|before|above|below|under|over|since|until|during|about|of)\s+)?"
    r"(?:what|what's|which|who|who's|whom|whose|when|where|how\s+(?:many|much|long|often|old|far|big|large|soon"
    r"|do|does|did|can|could|should|would|is|are|was|were)\b)\b",
    re.IGNORECASE,
)
# Keywords that name the kind of value they ask for ("crux day pass price", "cost of a
# hydraulic brake bleed", "vet phone number"): a fact question put as a search, which a
# note answers or does not, as "What does a day pass at Crux cost?" is.
# The word opens them, with "of" or "for" and an article ("price of a baguette"; a
# contact's kind needs none: "phone number for vets"), or ends them after two or more
# words that name the thing, none a function word ("crux day pass price", "wedding venue
# deposit"). "opportunity cost", "negotiating rent", "tips to reduce cost", "the cost of
# living" and "The Hidden Cost" are topics; a contact's kind is no topic after one word
# ("vet phone number").
_SUMS = r"price|cost|fee|fare|rent|deposit|salary|premium"
_CONTACTS = r"phone\s+number|e-?mail\s+address|postcode"
_KIND_FIRST = re.compile(
    rf"^\W*(?:(?P<kind>{_SUMS}|date)s?\s+(?:of|for)\s+(?:an?|the|my|our)\s+\w"
    rf"|(?P<contact>{_CONTACTS})s?\s+(?:of|for)\s+\w)",
    re.IGNORECASE,
)
# Or the kind ends its first part and what it is for follows, named or numbered
# ("registration fee for NMW 2027", "room hire fee for Hall 2"): then one word before it
# names the thing. "hidden cost of meetings", "Lisbon cost of living", "the real cost to
# the team" and "security deposit for the flat" are topics, or answered in words ("five
# weeks' rent").
_KIND_LAST = re.compile(
    rf"(?:^|\s)(?P<kind>(?P<sum>{_SUMS})|{_CONTACTS})s?"
    rf"(?:\s+(?P<for>for|to)\s+(?=[\w\s'-]*?(?-i:[A-Z])|[\w\s'-]*?\d)\w[\w\s'-]*?)?\W*$",
    re.IGNORECASE,
)
_OPENING_DETERMINERS = frozenset("the a an my our".split())
# A question asking how the asker does something ("How do I rotate the key?", "how can we
# speed up git status"): a fact question an instruction answers, not one about something
# a note links on to (retrieval/hop.py).
_PROCEDURE = re.compile(
    r"\s*how\s+(?:do|does|can|could|should|would|must|may|might)\s+(?:i|we|you|one)(?=\s)", re.IGNORECASE
)
# Words joined by hyphens ("billing-exporter", "pg-main", "Wi-Fi"): one name, searched as a
# phrase; a verb or noun with its particle ("shut-off", "follow-up", "out-of-hours") is a
# phrase but no name.
# Anchored at a word's start and possessive: tried at every position of a long word
# ("x" * 4000, a CJK run), `\w+` ran to its end and backed off one character at a time,
# which is quadratic, and held the daemon's loop for a third of a second. Where a match
# starts and ends is unchanged: the leftmost match always began at a word's start.
# A dotted number ("3.3", "5.3.1") is one too, a version or a figure: as the words "3" and
# "3" it matched any text writing a 3, and "What is new in firmware 3.3?" was answered
# from the notes on 3.2.
_COMPOUND = re.compile(r"(?<![\w.])\d++(?:\.\d++)+(?![.\w])|(?<!\w)\w++(?:-\w++)+")
_JOINS = re.compile(r"[-.]")
# A word written as a code, letters then a digit ("IC50", "T400", "SEV1") or joined by
# an underscore ("shared_buffers"): a name however the question is capitalised, where a
# title's capitals are no names ("What is the IC50 of K-17?" has one long word, which is
# capitalised). Not a version written "v2", which notes as often write "version 2".
_CODE = re.compile(r"(?![vV]\d+$)(?=[a-z]*[A-Z])[A-Za-z]+\d\w*|\w+_\w+")
# A code's letters and digits, which a note may write apart ("IC-50", "H.264").
_CODE_PARTS = re.compile(r"([a-z]+)(\d+)")
# A dotted number that is a version or a figure, not a time or a price ("9.30", "3.50"),
# a date ("12.03.2026", "1.2.26") or a decimal below one ("0.5"): a part of one digit
# after the first, or three parts or more. Nor is one beside a currency or a unit ("£3.5",
# "2.5 ml", "2.5 hour"), which notes write in other ways ("2.5ml", "two and a half").
_VERSION_LIKE = re.compile(r"(?!0\.)\d+(?:\.\d)+|\d+(?:\.\d+){2,}")
_CURRENCIES = frozenset("£$€¥")
_DAY_MONTH_YEAR = re.compile(r"(?:[012]?\d|3[01])\.(?:0?\d|1[0-2])\.(?:\d\d|\d{4})")
_MEASURED = re.compile(
    r"%|\s+(?:ml|mg|g|kg|lbs?|oz|km|m|cm|mm|l|litres?|liters?|miles?|hours?|hrs?|h|minutes?|mins?|seconds?"
    r"|secs?|s|days?|weeks?|months?|years?|gb|mb|kb|tb|ghz|mhz|kwh|kw|v|w|percent|per|times|x|stars?|points?|bar"
    r"|psi|degrees?|°c|°f|m²|sq)\b",
    re.IGNORECASE,
)
# Not stopwords everywhere (the extractor may take "Current" for part of a name), but in
# a question they carry no topic.
QUESTION_WORDS = frozenset(
    "current currently latest newest nowadays presently today many much often s t".split()
)
# What a question's first words say the answer is ("which city", "what year", "how many
# seats", "how long"): the kind of thing asked for, which the text that answers names by
# its value ("works from Tokyo", "joined in 2019") and need not name itself.
_ASKED_FOR = re.compile(
    r"\s*(?:(?:in|on|at|for|from|to|with|by|after|before|above|below|under|over|since|until|during|about|of)\s+)?"
    r"(?:(?:what|which)\s+|how\s+(?:many|much)\s+|how\s+(?=(?:long|often|old|far|big|large|soon)\b))",
    re.IGNORECASE,
)
_AHEAD = re.compile(r"[\w-]+")
_CARDINALS = "one two three four five six seven eight nine ten eleven twelve".split()
_ORDINALS = "first second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth".split()
_SUPERLATIVES = frozenset("best most least worst first last highest lowest".split())
# A second word belongs to the kind asked for only when the question goes on with one of
# these ("which message broker is", "what time zone does"); otherwise it is the verb
# ("which band played at", "which service crashed").
_AUXILIARIES = frozenset("is are was were does do did has have had will would can could should".split())
# A word after a modal or "do" and a person, after "who" and a modal, or after "was to"
# is a verb: "could I borrow", "do we park", "who will chair", "who was to draw up".
_RELATING = re.compile(
    r"\b(?:(?:can|could|do|does|did|should|would|will|must|may|might|shall)\s+(?:i|we|you|they|he|she|one)"
    r"|who\s+(?:can|could|should|would|will|must|may|might|shall)"
    r"|(?:was|were|is|are|am)\s+(?:to|going\s+to|supposed\s+to|meant\s+to))\s+"
    r"(?:\w+ly\s+)?(\w+)",
    re.IGNORECASE,
)
# And, after "did" and what it asks about, the first word a preposition follows: "did
# library visits grow in 2025", "did the Team plan cost per seat", "did the price of
# coffee rise in 2024". Not a word an article, a possessive or "of" makes a thing ("join
# the board in", "the number of visitors"), nor a last word: in "does the motorbike need
# tyres?" that is the object.
_DID = re.compile(
    r"\b(?:did|does|do)\s+(?!(?:i|we|you|they|he|she|one)\b)(?:[\w-]+\s+){1,4}?"
    r"(?<!\bthe )(?<!\ba )(?<!\ban )(?<!\bour )(?<!\bmy )(?<!\byour )(?<!\btheir )(?<!\bits )(?<!\bof )(\w+)"
    r"(?=\s+(?:in|on|at|to|from|for|with|by|about|into|during|per|since|before|after|over|across|between|within)\b)",
    re.IGNORECASE,
)
# So is the word before a preposition the question ends on, unless an article makes it
# a thing: "does billing-exporter listen on?", "is Brookfield Energy based in?", not
# "borrow a ladder from?".
_STRANDED = re.compile(
    r"(?<!\ba )(?<!\ban )(?<!\bthe )(?<!\bmy )(?<!\bour )(?<!\byour )\b(\w+)\s+"
    r"(?:on|in|at|to|from|for|with|by|about|into|onto|under|over|through)\W*$",
    re.IGNORECASE,
)


CALENDAR = MONTH_WORDS | {
    f"{day}{end}" for day in "monday tuesday wednesday thursday friday saturday sunday".split() for end in ("", "s")
}
# One word after "my", "our", "your" or "their" that is the whole of what is owned: the
# question's words go on with its possessive, a function word, a verb that can say
# anything, or stop ("my motorbike's", "my motorbike need"; not "my vegetable plot").
_OWNED = re.compile(
    r"\b(?:my|our|your|their)\s+(\w+)(?:(?P<possessive>['\u2019]s\b)|(?=\s*(?:[^\w\s]|$)|\s+(?:"
    + "|".join(sorted(STOPWORDS | GENERIC_VERBS))
    + r")\b))",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class KeywordQuery:
    """What the keyword leg searches for: single words and quoted phrases."""

    terms: tuple[str, ...]
    phrases: tuple[tuple[str, ...], ...]
    # Terms written capitalized inside the question (not as its first word), and words
    # joined by hyphens: names.
    names: frozenset[str] = frozenset()
    # Whether the text asks for a fact ("Which port...", "How many...") rather than
    # naming a topic; a CJK question is taken for one when it ends in a question mark.
    question: bool = False
    # Terms that say what kind of thing the answer is ("city" in "which city does...").
    asked_for: frozenset[str] = frozenset()
    # Terms in a verb's place ("borrow" in "could I borrow", "park" in "where do we
    # park"): the relation asked about, which the text that answers may say its own way.
    relating: frozenset[str] = frozenset()
    # The phrases the person put in quotes, words joined by spaces: what they want held.
    quoted: frozenset[str] = frozenset()
    # A thing of the asker's own, named by one word ("my motorbike", "our boat's"): a
    # name of theirs, which no note about something else answers for.
    owned: frozenset[str] = frozenset()
    # Whether the question asks how the asker does something ("How do I...").
    procedure: bool = False

    @property
    def probes(self) -> list[str]:
        """Each phrase and term as the keyword indexes are asked for it."""
        return [phrase_probe(phrase) for phrase in self.phrases] + [term_probe(term) for term in self.terms]

    @property
    def expression(self) -> str | None:
        """None when the query holds no searchable token at all (only punctuation)."""
        return " OR ".join(self.probes) or None


def quote(text: str) -> str:
    return '"' + text.replace('"', '""') + '"'


def _number_forms() -> dict[str, tuple[str, ...]]:
    """Each ordinal's other written forms: "third" and "3rd" and "three". "first" means
    the earliest and "second" a unit of time as often as a number: they keep only "1st"
    and "2nd". A cardinal keeps its own form: "3" for "three" as well cost SciFact's
    claims, full of digits, nDCG@10 0.7117 -> 0.7113 (bench/README.md), and gained
    nothing on the truth set."""
    forms: dict[str, tuple[str, ...]] = {}
    for n, (cardinal, ordinal) in enumerate(zip(_CARDINALS, _ORDINALS), 1):
        short = f"{n}{ {1: 'st', 2: 'nd', 3: 'rd'}.get(n, 'th')}"
        forms[ordinal] = (short,) if n <= 2 else (short, cardinal)
        forms[short] = (ordinal,) if n <= 2 else (ordinal, cardinal)
    return forms


_NUMBER_FORMS = _number_forms()


def term_probe(term: str) -> str:
    """A term as the keyword indexes are asked for it: quoted, or with its other written
    forms when it is an ordinal ("(\"third\" OR \"3rd\" OR \"three\")")."""
    forms = _NUMBER_FORMS.get(term)
    if forms is None and (parts := _CODE_PARTS.fullmatch(term)):
        # A code the question writes whole ("ic50") that a note writes apart ("IC-50").
        forms = (" ".join(parts.groups()),)
    if forms is None:
        return quote(term)
    return "(" + " OR ".join(quote(form) for form in (term, *forms)) + ")"


def phrase_probe(words: tuple[str, ...]) -> str:
    """A phrase as the keyword indexes are asked for it: a dotted number also as a
    version written "v2.1", which the index reads as "v2" and "1"."""
    if all(word.isdigit() for word in words):
        return f"({quote(' '.join(words))} OR {quote('v' + ' '.join(words))})"
    return quote(" ".join(words))


def _content(tokens: list[str], dropped: frozenset[str]) -> list[str]:
    kept = [token for token in tokens if token not in dropped]
    return kept or tokens


def has_words(text: str) -> bool:
    """A letter or digit somewhere: a query of quotes, punctuation or spaces alone asks for
    nothing, and no leg can tell that apart from a search that found nothing."""
    return _LETTER_OR_DIGIT.search(text) is not None


def terms(text: str) -> list[str]:
    """Distinct lower-cased tokens in order, stopwords dropped unless nothing else is left."""
    tokens = list(dict.fromkeys(token.lower() for token in _TOKEN.findall(text)))
    return _content(tokens, STOPWORDS)[:MAX_TERMS]


def _names_a_time(word: str) -> bool:
    """Words joined by hyphens that name a period or a day ("2025-Q3", "2025-W38",
    "2025-09", "2025-09-18"), not a thing: as a name, "What was revenue in 2025-Q3?" was
    refused for want of a text mentioning "2025 q3", where notes write "Q3 2025". An
    identifier holding a date ("FH-2025-07") stays a name."""
    return bool(named_periods(word, date.today())) or find_date(word) == word


def parse(text: str) -> KeywordQuery:
    phrases: list[tuple[str, ...]] = []
    for match in _QUOTED.finditer(text):
        words = tuple(token.lower() for token in _TOKEN.findall(match.group(1)))
        if len(words) > 1 and words not in phrases:
            phrases.append(words)
    quoted = list(phrases)
    rest = _QUOTED.sub(lambda match: " " if len(_TOKEN.findall(match.group(1))) > 1 else match.group(1), text)
    found = list(_COMPOUND.finditer(rest))
    # A time written with hyphens ("2025-Q3") is asked as it is written with spaces; the
    # rest are phrases, each word a part.
    times = {match.group() for match in found if _names_a_time(match.group())}
    compounds = {
        match.group(): tuple(part.lower() for part in _JOINS.split(match.group()))
        for match in found
        if match.group() not in times
    }
    # The dotted numbers that are versions or figures: names.
    versions = {
        match.group()
        for match in found
        if _VERSION_LIKE.fullmatch(match.group())
        and not _DAY_MONTH_YEAR.fullmatch(match.group())
        and find_date(match.group()) is None
        and rest[match.start() - 1 : match.start()] not in _CURRENCIES
        and not _MEASURED.match(rest, match.end())
    }
    phrases += [words for words in dict.fromkeys(compounds.values()) if words not in phrases]
    rest = _COMPOUND.sub(lambda match: _JOINS.sub(" ", match.group()) if match.group() in times else " ", rest)
    chosen = _content(terms(rest), QUESTION_WORDS)
    if phrases:
        # With a phrase to search for, stopwords and question words are not needed to
        # give the query something to match.
        chosen = [term for term in chosen if term not in STOPWORDS and term not in QUESTION_WORDS]
    names = {
        " ".join(words) for word, words in compounds.items() if not phrasal(words) and ("-" in word or word in versions)
    }
    words = [token for token in _TOKEN.findall(rest) if token.lower() in chosen]
    first = _TOKEN.search(text)
    inner = [token for token in words if first is None or token != first.group()]
    capitalized = [token for token in inner if token[0].isupper()]
    # In a title ("Breast Cancer Survival and Soy", "Flaxseeds vs. Chia Seeds") capitals
    # mark the style, not names; short words ("vs", "on") may stay lower case in one, and
    # a short word in capitals ("MV Guillemot", "the UK team") is an abbreviation, which a
    # sentence capitalises too.
    longer = [token for token in inner if len(token) > 3]
    if len([token for token in capitalized if len(token) > 3]) < len(longer):
        names |= {token.lower() for token in capitalized}
    names |= {token.lower() for token in words if _CODE.fullmatch(token) and not _names_a_time(token)}
    # "Captain" in "Captain Ally Munro" is the person's title, which a note may not use.
    names -= {match.group(1).lower() for match in _HONORIFIC.finditer(text)}
    # A month or a day of the week is a time, which notes write their own way ("Oct",
    # "Sat 9-5"), not a thing the library may lack: "what book are we reading in
    # October" was refused for want of a note writing "October".
    names -= CALENDAR
    kept = tuple(chosen[: max(MAX_TERMS - len(phrases), 0)])
    ahead = _ahead(text)
    kind = _asked_for(ahead)
    named_kind = kind_named(text)
    if named_kind is not None:
        kind = named_kind.lower().split()
    asked_for = frozenset(word for word in kind if word in kept and word not in names)
    return KeywordQuery(
        kept,
        tuple(phrases[:MAX_TERMS]),
        frozenset(names),
        bool(_FACT_QUESTION.match(text))
        or named_kind is not None
        or (bool(cjk.RUN.search(text)) and text.rstrip().endswith(("?", "？"))),
        asked_for,
        frozenset(word for word in _relating(text, ahead, kind) if word in kept) - names,
        frozenset(" ".join(words) for words in quoted),
        _owned(text, kept, asked_for),
        bool(_PROCEDURE.match(text)),
    )


def kind_named(text: str) -> str | None:
    """The words a keyword query names the kind of value it asks for by ("price" in
    "crux day pass price"); None for a question, or keywords naming none."""
    if _FACT_QUESTION.match(text):
        return None
    first = _KIND_FIRST.match(text)
    if first is not None:
        return first.group("kind") or first.group("contact")
    last = _KIND_LAST.search(text)
    if last is None:
        return None
    before = _TOKEN.findall(text[: last.start()])
    if before and before[0].lower() in _OPENING_DETERMINERS:
        before = before[1:]
    # Every word capitalised, the kind's too, is a title's style ("Household Energy Cost");
    # "Netflix Premium price" names things.
    title = last.group("kind")[0].isupper() and all(word[0].isupper() for word in before)
    naming = not title and all(word.lower() not in STOPWORDS for word in before)
    fewest = 2 if last.group("sum") and not last.group("for") else 1
    return last.group("kind") if naming and len(before) >= fewest else None


def _owned(text: str, kept: tuple[str, ...], asked_for: frozenset[str]) -> frozenset[str]:
    """The things of the asker's own the question asks something of: a word after "my"
    with its possessive ("my motorbike's MOT"), or in a question naming the kind of
    answer it wants ("What tyre pressure does my motorbike need?"). "my salary" and "our
    revenue" are what is asked for, which the notes may call otherwise ("Base pay")."""
    owned = set()
    for match in _OWNED.finditer(text):
        word = match.group(1).lower()
        if word in kept and word not in asked_for and (match.group("possessive") or asked_for):
            owned.add(word)
    return frozenset(owned)


def _relating(text: str, ahead: list[str], kind: list[str]) -> list[str]:
    """The words in a verb's place, lower-cased: after a modal and a person, after "did"
    and its subject, before a stranded preposition, and right after a one-word kind of answer (`kind`, read from
    `ahead`) when no auxiliary comes between ("which company supplies", "which branch
    scored")."""
    words = [match.lower() for match in _RELATING.findall(text)]
    words += [match.group(1).lower() for match in _STRANDED.finditer(text)]
    words += [match.lower() for match in _DID.findall(text)]
    if len(kind) == 1 and (after := _after_kind(ahead)):
        words.append(after)
    return words


_PARTICLES = frozenset("off up in on out down over back away about through".split())
# The parts that make a compound a modifier of the language ("self-service", "full-time",
# "Polish-language", "cloud-based"), whichever words they join.
_MODIFIER_HEADS = frozenset(
    "self non multi cross semi anti well full part long short high low per pre post".split()
)
_MODIFIER_TAILS = frozenset(
    "based free related specific wide level friendly language style only like owned led made sized scale time term"
    " proof ready facing".split()
)


def phrasal(words: tuple[str, ...]) -> bool:
    """"shut-off", "check-in", "out-of-hours", "full-time", "Polish-language": a word of
    the language (a verb with its particle, a modifier), not a name ("orders-to-ledger",
    "node-a", "me-south-1", "invoice-archiver" are names)."""
    if any(any(ch.isdigit() for ch in word) or len(word) == 1 for word in words):
        return False
    return (
        (len(words) == 2 and words[1] in _PARTICLES)
        or words[0] in _PARTICLES
        or words[0] in _MODIFIER_HEADS
        or words[-1] in _MODIFIER_TAILS
    )


def _asked_for(words: list[str]) -> list[str]:
    """Of the words after the question word (`_ahead`), those that name the kind of
    answer: one, or two when an auxiliary follows them ("which message broker is")."""
    if not words or words[0] in STOPWORDS:
        return []
    if len(words) > 2 and words[1] not in STOPWORDS and words[2] in _AUXILIARIES:
        return words[:2]
    return words[:1]


def _ahead(text: str) -> list[str]:
    """The words after the question word, lower-cased, from the kind of answer on.

    A hyphenated name there ("which dispatch-api endpoint") is what the question is about,
    and "what kind of" only leads to the kind; both are read past."""
    match = _ASKED_FOR.match(text)
    if match is None:
        return []
    words = [word.lower() for word in _AHEAD.findall(text, match.end())[:6]]
    if words and "-" in words[0]:
        words = words[1:]
    if words[1:2] == ["of"] and words[0] in ("kind", "kinds", "type", "types", "sort", "sorts"):
        words = words[2:]
    return words


def _after_kind(words: list[str]) -> str | None:
    """Of the words after the question word (`_ahead`), the verb right after a one-word
    kind of answer: "supplies" in "which company supplies the line", "scored" in "which
    branch scored best", where a function word or a superlative follows it; not
    "members" in "how many new members joined"."""
    if len(words) < 3 or words[1] in STOPWORDS or words[1] in _AUXILIARIES or "-" in words[1]:
        return None
    return words[1] if words[2] in STOPWORDS or words[2] in _SUPERLATIVES else None


def fts_expression(text: str) -> str | None:
    """The keyword leg's expression for a query; None when it has nothing to search for."""
    return parse(text).expression


def cjk_expression(text: str) -> str | None:
    """The query's CJK runs cut as the CJK index cuts them, OR-joined; None without any.

    A quoted phrase of CJK text is one FTS5 phrase of its pieces, which the index holds
    in order, so "鍵署名" matches only where those characters stand together. A quoted
    phrase that mixes in other words is left to the main index: this one holds only the
    CJK runs, and could not tell "部署脚本 deploy" from "deploy script 部署脚本"."""
    items: list[str] = []
    for match in _QUOTED.finditer(text):
        quoted = match.group(1)
        if cjk.RUN.search(quoted) and not _TOKEN.search(cjk.RUN.sub(" ", quoted)):
            items.append(" ".join(cjk.pieces(quoted)))
    items += cjk.pieces(_QUOTED.sub(" ", text))
    # A run of one character ("鍵", "猫": a word in Chinese and Japanese) is no piece the
    # index holds, since it holds pairs: it matches as the first of a pair, or alone.
    kept = list(dict.fromkeys(items))[:MAX_TERMS]
    return " OR ".join(quote(item) + (" *" if len(item) == 1 else "") for item in kept) or None
