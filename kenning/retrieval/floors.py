"""Abstention: a question nothing in the library supports gets no hits.

The keyword leg matches any chunk sharing one word with the query, and score fusion
stretches every query's best candidate to the top of the scale, so neither a hit nor
its fused score says an answer exists. What decides instead, on the best few hits,
does not depend on the query's own scale:

- names no chunk holds: a question naming something the library never mentions ("the
  Lisbon office", "Project Falcon", the "invoice-archiver" service, which "invoice
  archive" does not name), or a thing of the asker's own in one word ("my motorbike":
  the car's page gives a tyre pressure too) is refused unless a hit is very close in
  meaning (STRONG_SIMILARITY). Any other word no chunk holds is left to the coverage
  floor below: it is as often the asker's own word for what the notes call otherwise
  ("diesel" for marine gas oil, "hourly rate" for "£/hr") as a thing the library lacks.
  Refusing those unless a hit was close in meaning refused 4 answerable questions of the
  held-out set's blind half and 7 of a third set for every one or two unanswerable ones
  it caught (bench/README.md);
- a period asked about ("revenue in Q3 2024") that no best hit both speaks of and holds
  the rest of the question in (a decision log of 2024 does not say what the stipend was);
  a word naming the kind of value asked for is held by a hit stating one, as below
  ("Postgres 16" on the log's line of February 2026 for "Postgres versions");
- a kind of value asked for ("What year did...", "How many vans...") that no best hit
  about the question's subject (and the period it names, if any) states
  (retrieval/values.py): the page about a person holds the question's words and meaning
  whether or not it says when she joined;
- a role a "who is the ..." question asks about that no line of the best hits gives,
  with what it is of, as held by someone (retrieval/roles.py): the lab handbook's
  "FACS: superuser Dr Omar Haddad" holds both words of "who's the confocal superuser";
- otherwise it is answered when a best hit holds `[retrieval] min_coverage` of its
  idf-weighted terms (retrieval/coverage.py), or is `support_similarity` close in
  meaning: a multi-hop question shares few words with the page that answers it, and a
  paraphrase none. Here the word asking for a kind of value ("cost", "year", "colour")
  is held by a best hit that states a value of that kind ("Bicycles: £2.50"), and
  otherwise counts like any other word: excused outright, it let "What colour are the
  RT-10 tablets?" through over notes that never give one.

Only a question that asks for a fact ("Which port...", "How many...", "When does...")
is judged. A topic, a title, a claim or an open question ("why...", "is X good for
you?") is left to the legs: a person exploring a topic wants what is closest, and such
queries share fewer words with what answers them (on NFCorpus dev a floor on every
query cost ten times what it costs on fact questions alone; on SciFact claims name
genes the abstracts spell otherwise). The floors were chosen on the truth set's dev
and `tune` splits (abstention, clean, multi-hop and citation questions), as the most
refusal that keeps 0.95 of the answerable questions (bench/README.md has the curve), and
checked on NFCorpus dev and bench/multihop.py.
When a leg did not run, only the outright refusals apply: without the vector leg
nothing can vouch for a paraphrase, and without the keyword leg (a vector-only search)
the vector leg's own `min_similarity` is the floor.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kenning.api import Hit

# How many of the best hits may carry the support.
DEPTH = 3
# A name no chunk holds is answered only by a hit this close in meaning.
STRONG_SIMILARITY = 0.7
# A best hit speaking of the period asked about must hold this share of the question's
# weight to vouch for it.
PERIOD_COVERAGE = 0.5


@dataclass(frozen=True)
class Support:
    coverage: float | None  # None: the keyword leg did not run
    similarity: float | None  # None: no query vector
    unknown: list[str] = field(default_factory=list)  # names (or things of the asker's own) no chunk holds
    period: bool | None = None  # None: no period asked; else whether a best hit speaks of it and holds the question
    unstated: str | None = None  # the kind of value asked for ("a year") when no best hit about it states one
    question: bool = True  # False: a topic or keywords, which the coverage floor leaves alone


def best_support(
    hits: list[Hit], coverage: dict[int, float] | None, similarity: dict[int, float] | None
) -> tuple[float | None, float | None]:
    """The best coverage and the best cosine among the hits (None where not measured)."""
    top = [hit.item_id for hit in hits[:DEPTH]]
    return (
        None if coverage is None else max((coverage.get(item_id, 0.0) for item_id in top), default=0.0),
        None if similarity is None else max((similarity.get(item_id, -1.0) for item_id in top), default=-1.0),
    )


def refusal(support: Support, min_coverage: float, support_similarity: float) -> str | None:
    """Why the query gets no hits, or None when its best hits support an answer."""
    coverage, similarity = support.coverage, support.similarity
    if not support.question:
        return None
    if support.unknown and (similarity is None or similarity < STRONG_SIMILARITY):
        return "nothing supports an answer: no text mentions " + ", ".join(repr(name) for name in support.unknown)
    if support.period is False:
        return "nothing supports an answer: no hit about the question is dated in, or names, the period asked about"
    if support.unstated:
        return f"nothing supports an answer: the question asks for {support.unstated} and no best hit about it states one"
    if similarity is None:
        # Without the vector leg (the embedder is down, or only the keyword leg was
        # asked for) nothing can vouch for a paraphrase: only the outright refusals apply.
        return None
    if coverage is None:
        # Without the keyword leg (a vector-only search) nothing says how much of the
        # question a hit holds, and the vector leg's own `min_similarity` is the floor.
        return None
    if coverage >= min_coverage or similarity >= support_similarity:
        return None
    return (
        f"nothing supports an answer: the best hits hold {coverage:.0%} of the query's weight"
        f" (floor {min_coverage:.0%}); their closest meaning is cosine {similarity:.2f}"
        f" (floor {support_similarity:.2f})"
    )
