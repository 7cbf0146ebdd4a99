"""Secrets are masked in place; line structure is untouched so citations stay exact."""

from __future__ import annotations

import pytest

from kenning.ingest.redact import MARK, redact


@pytest.mark.parametrize(
    "secret",
    [
        "AKIAABCDEFGHIJKLMNOP",
        "ghp_" + "a1" * 18,
        "github_pat_" + "B2" * 21,
        "xoxb-1234567890-abcdef",
        "sk-proj-" + "x9" * 12,
        "AIza" + "Q" * 35,
        "eyJhbGciOiJIUzI1.eyJzdWIiOiIxMjM0.SflKxwRJSMeKKF2QT4",
    ],
)
def test_known_token_shapes_are_masked(secret):
    assert redact(f"use {secret} here") == f"use {MARK} here"


def test_tokens_inside_longer_identifiers_are_left_alone():
    text = "variable MYAKIAABCDEFGHIJKLMNOPQ stays"
    assert redact(text) == text


def test_assignments_url_passwords_and_private_keys_keep_their_lines():
    text = (
        "DB_PASSWORD = 'correct-horse'\n"
        "api_key: abcdef123456\n"
        "clone https://alice:pa55word@git.example/repo\n"
        "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1r\nZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----\n"
        "the password policy is documented\n"
    )
    out = redact(text)
    assert out.count("\n") == text.count("\n")
    assert "correct-horse" not in out and "abcdef123456" not in out and "pa55word" not in out
    assert "b3BlbnNzaC1r" not in out and "https://alice:" + MARK + "@git.example" in out
    assert out.splitlines()[-1] == "the password policy is documented"
