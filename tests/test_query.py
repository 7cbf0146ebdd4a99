"""User input can never become FTS5 syntax; natural questions still match."""

from __future__ import annotations

import sqlite3

import pytest

from kenning.retrieval.query import fts_expression, terms


@pytest.fixture
def fts():
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE t USING fts5(body, tokenize='porter unicode61 remove_diacritics 2')")
    conn.executemany(
        "INSERT INTO t(body) VALUES (?)",
        [("How to rotate the signing key",), ("Running the daemon under systemd",), ("NEAR the col:x operator",)],
    )
    return conn


def matches(conn: sqlite3.Connection, query: str) -> list[str]:
    expression = fts_expression(query)
    if expression is None:
        return []
    return [row[0] for row in conn.execute("SELECT body FROM t WHERE t MATCH ? ORDER BY rank", (expression,))]


@pytest.mark.parametrize(
    "hostile",
    ['"unbalanced', "NEAR(a b)", "col:x", "-daemon", "rotate*", "a AND OR NOT b", "(((", "^start", "body:rotate", "'; DROP TABLE t; --"],
)
def test_operators_and_quotes_are_plain_text(fts, hostile):
    matches(fts, hostile)  # raises sqlite3.OperationalError if any syntax leaked through
    assert fts.execute("SELECT count(*) FROM t").fetchone()[0] == 3


def test_a_natural_question_matches_by_its_content_words(fts):
    assert matches(fts, "how do I rotate a key?")[0] == "How to rotate the signing key"
    assert matches(fts, "what runs daemons?") == ["Running the daemon under systemd"]


def test_stopwords_are_dropped_unless_nothing_else_is_left():
    assert terms("What is the signing key") == ["signing", "key"]
    assert terms("to be or not to be") == ["to", "be", "or", "not"]
    assert fts_expression("?!...") is None
    assert fts_expression("NEAR col:x") == '"near" OR "col" OR "x"'
