"""The role a "who is the ..." question asks about, and whether a line of a hit says who
holds it (kenning/retrieval/roles.py): what the floor refuses when the notes name the
role only of someone else, or not as filled."""

from __future__ import annotations

import pytest

from kenning.retrieval.roles import Role, asked, owners_named, states


@pytest.mark.parametrize(
    ("question", "words", "of"),
    [
        ("who's the confocal superuser", ("confocal", "superuser"), ()),
        ("Who is the facilities manager in Bristol?", ("facilities", "manager"), ("bristol",)),
        ("who is bramble's vet", ("vet",), ("bramble",)),
        ("Who is Aisha Okafor's manager?", ("manager",), ("aisha", "okafor")),
        ("Who is the kids' dentist?", ("dentist",), ("kids",)),
        # "on-call" is one word of the role, not the preposition "on".
        ("Who is primary on-call for the payments service?", ("primary", "call"), ("payments", "service")),
        ("who is primary on-call currently?", ("primary", "call"), ()),
        ("whos the treasurer", ("treasurer",), ()),
        ("who is the accompanist for the christmas concert", ("accompanist",), ("christmas", "concert")),
    ],
)
def test_a_question_naming_a_role_asks_who_holds_it(question, words, of):
    assert asked(question) == Role(words, of)


@pytest.mark.parametrize(
    "question",
    [
        # An act or a state, which a rota says by its day.
        "who's hosting the february tasting",
        "Who is on call in December 2026?",
        "who's in charge on saturday 19 dec on 7b",
        "who is playing the genie?",
        # A relation, and a person's name.
        "Who is the Golf insured with?",
        "Who is Priya?",
        # Through another page: what the role is of is described by a clause.
        "Who is the manager of the comms lead for INC-2291?",
        "Who is the out-of-hours escalation contact for the service Project Lantern moves billing to?",
        # Not "who is".
        "who runs the french conversation group",
        "Who leads the sales team?",
        "What is the treasurer's email?",
    ],
)
def test_other_questions_ask_about_no_role(question):
    assert asked(question) is None


HANDBOOK = """Hassan Lab - induction (2024 edition)
Confocal (Zeiss LSM 880): room B1.07, book on the paper sheet on the door
FACS: Aria III, superuser Dr Omar Haddad
"""
CLIENTS = """## Bramble (springer spaniel)
Owner: Claire Dunn. Walks Mon/Wed/Fri 11am.
## Otis (black lab)
Owner: Mr Pratt. Tue/Thu 1pm.
Otis's vet: Moorview Vets, Ilkley
"""


def _states(question: str, text: str, title: str = "", names: frozenset[str] = frozenset()) -> bool:
    role = asked(question)
    assert role is not None
    return states(role, text, (title, ""), names | owners_named(role, [text]), frozenset())


def test_the_role_is_stated_on_a_line_writing_all_of_its_words_or_under_them():
    # Each word on a line of its own is no superuser of the confocal.
    assert not _states("who's the confocal superuser", HANDBOOK, "lab-induction-handbook")
    assert _states("who's the FACS superuser", HANDBOOK, "lab-induction-handbook")
    # Under the heading of another dog, and a dog the notes write as a name.
    assert not _states("who is bramble's vet", CLIENTS, "clients")
    assert _states("who is otis's vet", CLIENTS, "clients")
    # The note's first line is its title; a label ending a line names the next one.
    rota = "Sunday race officers - spring series 2026\n12 Apr  Dave Mottram\n19 Apr  Helen Ashby\n"
    assert _states("who's race officer on 19 april?", rota, "race-officer-rota")
    assert _states("Who is the accompanist?", "Spring concert\nAccompanist:\nDerek Fell\n")


def test_a_role_not_filled_yet_is_stated_by_no_one():
    minutes = "Committee minutes\n- Accompanist for Christmas concert still TBC - Linda asking around\n"
    names = frozenset({"christmas"})
    assert not _states("who is the accompanist for the christmas concert", minutes, names=names)
    assert not _states("who's the secretary", "AGM\nSecretary: vacant\nTreasurer: Femi Adeyemi\n")
    assert _states("who's the treasurer", "AGM\nSecretary: vacant\nTreasurer: Femi Adeyemi\n")


def test_a_role_word_no_note_holds_is_left_to_the_coverage_floor():
    """The notes may call the footpaths councillor "Cllr": a word no chunk holds is no
    word the line must write."""
    role = asked("who's the footpaths councillor")
    assert role is not None
    contacts = "Footpaths & rights of way - Cllr Sue Oduya\n"
    assert states(role, contacts, ("contacts", ""), frozenset(), frozenset({"councillor"}))
    assert not states(role, contacts, ("contacts", ""), frozenset(), frozenset())
