"""Credential redaction before text reaches the store.

Each pattern replaces a secret inside its line and never adds or removes a newline, so
the line ranges that citations carry still point at the right place in the source.

Speed matters here: this runs over every byte ingested. Python's regex engine scans fast
only for a pattern that starts with a literal, so the token patterns are one alternation
with no leading `\\b` (word boundaries are checked in the replacement instead), and the
case-insensitive `password = ...` pattern runs only on text that holds one of its words.
"""

from __future__ import annotations

import re

MARK = "[REDACTED]"

_PEM = re.compile(r"(-----BEGIN [A-Z ]*PRIVATE KEY-----)(.*?)(-----END [A-Z ]*PRIVATE KEY-----)", re.S)
_TOKENS = re.compile(
    r"(?:AKIA|ASIA)[0-9A-Z]{16}"
    r"|gh[pousr]_[A-Za-z0-9]{36,}"
    r"|github_pat_[A-Za-z0-9_]{40,}"
    r"|xox[abpors]-[A-Za-z0-9-]{10,}"
    r"|sk-(?:ant-|proj-)?[A-Za-z0-9_-]{20,}"
    r"|AIza[0-9A-Za-z_-]{35}"
    r"|eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"
)
_URL_CREDENTIALS = re.compile(r"://([^/\s:@]+):([^/\s@]+)@")
_ASSIGNMENT_WORDS = ("apikey", "api_key", "api-key", "secret", "token", "passw")
_ASSIGNMENT = re.compile(
    r"(?i)(?<![a-z0-9])((?:api[_-]?key|secret[_-]?key|access[_-]?token|auth[_-]?token|client[_-]?secret|password|passwd)"
    r"\s*[:=]\s*)([\"']?)([^\s\"']{6,})\2"
)


def _is_word_char(char: str) -> bool:
    return char.isalnum() or char == "_"


def _token(match: re.Match[str]) -> str:
    text, start, end = match.string, match.start(), match.end()
    # Part of a longer identifier (e.g. "MYAKIA..."): not a key, leave it.
    if (start and _is_word_char(text[start - 1])) or (end < len(text) and _is_word_char(text[end])):
        return match.group(0)
    return MARK


def _pem(match: re.Match[str]) -> str:
    body = "\n".join(MARK if line.strip() else line for line in match.group(2).split("\n"))
    return match.group(1) + body + match.group(3)


def redact(text: str) -> str:
    if "PRIVATE KEY-----" in text:
        text = _PEM.sub(_pem, text)
    text = _TOKENS.sub(_token, text)
    if "://" in text:
        text = _URL_CREDENTIALS.sub(r"://\1:" + MARK + "@", text)
    lowered = text.lower()
    if any(word in lowered for word in _ASSIGNMENT_WORDS):
        text = _ASSIGNMENT.sub(r"\1\2" + MARK + r"\2", text)
    return text
