"""The role a "who is the ..." question asks about, and whether a line of a hit says who
holds it (kenning/retrieval/roles.py): what the floor refuses when the notes name the
role only of someone else, or not as filled."""

from __future__ import annotations

import pytest

from kenning.retrieval.roles import Role, asked, owners_named, pending, states


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
        ("who's the Club treasurer", ("treasurer",), ("club",)),
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
        "Who is the harbour master where MV Tern is laid up in winter?",
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
    """The notes may call the accompanist "pianist": a word no chunk holds is no word the
    line must write."""
    role = asked("Who is the choir's accompanist?")
    assert role is not None
    subs = "Choir subs 2026: £75 per term. Pay treasurer Ruth Abbott.\n"
    assert states(role, subs, ("subs", ""), frozenset(), frozenset({"accompanist"}))
    assert not states(role, subs, ("subs", ""), frozenset(), frozenset())


def test_roles_are_read_as_notes_write_them():
    """Each was refused while the notes named the holder: a table's header over its row,
    a heading over a heading, a short form, the place on a line above, and words saying
    which holder or when ("the new treasurer", "this sunday")."""
    table = "| Site | Facilities manager | Reception |\n|---|---|---|\n| Bristol | Gary Hughes | Amy Cole |\n"
    assert _states("Who is the facilities manager in Bristol?", table, names=frozenset({"bristol"}))
    assert _states("who's the deputy welfare officer", "# Club\n## Welfare officer\n### Deputy\nTom Ellis\n")
    assert _states("who's the ops manager", "Office manager: Claire Dunn\nOps mgr: Raj Patel\n")
    school = "# School\nMaya started Year 3 at Oakfield in September.\nClass teacher: Mr Bell\n"
    assert _states("who is Maya's teacher", school)
    assert _states("who is the new treasurer", "AGM\nTreasurer: Ali Khan (took over in May)\n")
    assert _states("who's the race officer this sunday?", "Rota\nSun 5 Apr: race officer Helen Ashby\n")
    # A heading naming the role says no one holds it when what stands under it says so.
    assert not _states("who's the welfare lead", "# Club\n## Welfare lead\nVacant - volunteers please!\n")
    assert not _states("who's the secretary", "AGM\nSecretary: to be elected at the next meeting\n")


def test_roles_said_as_prose_says_them():
    """Each was refused after the first review's changes, the notes naming the holder:
    a role wrapped over two lines of an email, said by a verb or a plural, a variant of
    its word, a class's number, and a club the committee's note never names."""
    email = "Hello and welcome! Our musical\ndirector is Helen Ashby, and the membership\nsecretary is Ruth Hale.\n"
    assert _states("who is the musical director", email)
    assert _states("who is the membership secretary", email)
    assert _states("who is the U11s manager", "U11s\nDan Hughes manages the U11s on Saturdays.\n")
    assert _states("who is the junior coach", "# Junior section 2026\nCoaches: Dan Hughes and Mo Ali\n")
    assert _states("who's the vice chair", "Committee\nVice-chairman: Jo Bright\n")
    assert _states("who is the year 3 teacher", "Maya\nMaya is in Year 3 this year.\nHer teacher is Mr Bell\n")
    assert _states("who is the club's treasurer", "Committee 2026\nTreasurer: Jo Bright\n", names=frozenset({"club"}))


def test_a_role_not_filled_for_what_it_is_of_outweighs_another_things_holder():
    """The spring concert's accompanist is no answer for the Christmas concert's, which the
    minutes say is still to be confirmed: only a line naming the Christmas concert would
    be."""
    role = asked("who is the accompanist for the christmas concert")
    assert role is not None
    names = frozenset({"christmas"})
    minutes = "Committee minutes\n- Accompanist for Christmas concert still TBC - Linda asking around\n"
    spring = "Spring concert 2026 - wrap-up\nAccompanist: Derek Fell (fee £120, paid)\n"
    assert pending(role, minutes, ("minutes", ""), names)
    assert not pending(role, spring, ("spring", ""), names)
    # The spring concert's line names no Christmas: only a chunk that writes it must.
    assert states(role, spring, ("spring", ""), names, frozenset())
    assert not states(role, spring, ("spring", ""), names, frozenset(), strict=True)


def test_an_owner_the_document_names_elsewhere_must_stand_over_the_line():
    """The client list cut into a chunk per dog: Otis's chunk never writes "Bramble", but
    the list does, and Otis's vet is not Bramble's."""
    role = asked("who is bramble's vet")
    assert role is not None
    otis = "## Otis (black lab)\nOwner: Mr Pratt. Tue/Thu 1pm.\nOtis's vet: Moorview Vets, Ilkley\n"
    bramble = "## Bramble (springer spaniel)\nOwner: Claire Dunn. Walks Mon/Wed/Fri 11am.\n"
    names = frozenset({"bramble"})
    assert states(role, otis, ("clients", "Otis (black lab)"), names, frozenset())
    assert not states(role, otis, ("clients", "Otis (black lab)"), names, frozenset(), document=bramble + otis)
