"""Credential redaction before text reaches the store.

Each pattern replaces a secret inside its line and never adds or removes a newline, so
the line ranges that citations carry still point at the right place in the source.
"""

from __future__ import annotations

import re

MARK = "[REDACTED]"

_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    # PEM private key bodies: keep the armour lines, blank each base64 line.
    (
        re.compile(r"(-----BEGIN [A-Z ]*PRIVATE KEY-----)(.*?)(-----END [A-Z ]*PRIVATE KEY-----)", re.S),
        "pem",
    ),
    (re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"), MARK),
    (re.compile(r"\bgh[pousr]_[A-Za-z0-9]{36,}\b"), MARK),
    (re.compile(r"\bgithub_pat_[A-Za-z0-9_]{40,}\b"), MARK),
    (re.compile(r"\bxox[abpors]-[A-Za-z0-9-]{10,}\b"), MARK),
    (re.compile(r"\bsk-(?:ant-|proj-)?[A-Za-z0-9_-]{20,}\b"), MARK),
    (re.compile(r"\bAIza[0-9A-Za-z_-]{35}\b"), MARK),
    (re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\b"), MARK),
    # user:password@host in URLs
    (re.compile(r"(?<=://)([^/\s:@]+):([^/\s@]+)@"), r"\1:" + MARK + "@"),
    # key = value assignments whose key names a secret
    (
        re.compile(
            r"(?i)\b((?:api[_-]?key|secret[_-]?key|access[_-]?token|auth[_-]?token|client[_-]?secret|password|passwd)"
            r"\s*[:=]\s*)([\"']?)([^\s\"']{6,})\2"
        ),
        r"\1\2" + MARK + r"\2",
    ),
)


def _blank_pem(match: re.Match[str]) -> str:
    body = "\n".join(MARK if line.strip() else line for line in match.group(2).split("\n"))
    return match.group(1) + body + match.group(3)


def redact(text: str) -> str:
    for pattern, replacement in _PATTERNS:
        if replacement == "pem":
            text = pattern.sub(_blank_pem, text)
        else:
            text = pattern.sub(replacement, text)
    return text
