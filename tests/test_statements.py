"""Reading a chunk as statements and sentences: what the hop, the period rule and the
value check read line by line."""

from kenning.text.statements import sentences, statements, word_among


def test_a_hard_wrapped_paragraph_is_one_statement_and_a_list_item_its_own():
    content = "# Kickoff\n\nProject Heron moves the catalogue to the\ncatalog service.\n- Lead: Dana\n- Sponsor: Ruth\n"
    assert statements(content) == [
        "# Kickoff",
        "Project Heron moves the catalogue to the catalog service.",
        "- Lead: Dana",
        "- Sponsor: Ruth",
    ]


def test_a_paragraph_splits_into_sentences_but_not_at_an_abbreviation_or_a_version():
    paragraph = "Ines reports to Dr. Quist. Before joining, Ines worked at Orla Freight. Version 1.2 ships in May."
    assert sentences(paragraph) == [
        "Ines reports to Dr. Quist.",
        "Before joining, Ines worked at Orla Freight.",
        "Version 1.2 ships in May.",
    ]
    assert sentences("It is built on top of e.g. Kafka or J. R. Smith's queue.") == [
        "It is built on top of e.g. Kafka or J. R. Smith's queue."
    ]


def test_words_told_apart_by_an_ending_are_one_word():
    among = word_among(["project", "lead", "maintains", "running"])
    assert among("leading") and among("maintainer") and among("run") and among("project")
    assert not among("lean") and not among("main") and not among("runway")


def test_an_abbreviation_ends_no_sentence_however_long_the_sentence_joined_before_it():
    assert sentences("It took approx. 5 hours. The ferry was late.") == ["It took approx. 5 hours.", "The ferry was late."]
    assert sentences("A. " * 500 + "Then B.")[0].startswith("A. A. A.")
    assert len(sentences("A. " * 500 + "Then B.")) == 1
