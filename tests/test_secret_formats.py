"""The redactor's copy of detect-secrets' formats is the installed library's, and its
entropy test gives the library's figure.

kenning/ingest/secret_formats.py is written from the installed library by running this
file (`python tests/test_secret_formats.py`); the test below fails when an upgrade of
detect-secrets changes a token format, a key name or the entropy test, so a new format
is not missed for long.
"""

from __future__ import annotations

import random
import re
import string
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
from detect_secrets.plugins.base import RegexBasedDetector
from detect_secrets.plugins.high_entropy_strings import Base64HighEntropyString
from detect_secrets.plugins.ip_public import IPPublicDetector
from detect_secrets.plugins.keyword import DENYLIST
from detect_secrets.plugins.private_key import PrivateKeyDetector

SNAPSHOT = Path(__file__).resolve().parent.parent / "kenning" / "ingest" / "secret_formats.py"
# A public IP address is not a credential; a private key's header line is not the
# secret (its body is, see redact.py's `_pem_spans`).
_NOT_TOKENS = (IPPublicDetector, PrivateKeyDetector)


@dataclass(frozen=True)
class Formats:
    version: str
    token_patterns: tuple[tuple[str, str, int], ...]
    keywords: tuple[str, ...]
    entropy_charset: str
    entropy_limit: float


def library_formats() -> Formats:
    """What the installed detect-secrets knows, as the redactor uses it."""
    from detect_secrets.__version__ import VERSION

    entropy = Base64HighEntropyString()
    return Formats(
        version=VERSION,
        token_patterns=tuple(
            (detector.secret_type, pattern.pattern, pattern.flags)
            for detector in get_mapping_from_secret_type_to_class().values()
            if issubclass(detector, RegexBasedDetector) and not issubclass(detector, _NOT_TOKENS)
            for pattern in detector.denylist
        ),
        keywords=tuple(DENYLIST),
        entropy_charset=entropy.charset,
        entropy_limit=entropy.entropy_limit,
    )


def snapshot_formats() -> Formats:
    # Imported here, not at the top: this file writes that module when run.
    from kenning.ingest import secret_formats

    return Formats(
        version=secret_formats.VERSION,
        token_patterns=secret_formats.TOKEN_PATTERNS,
        keywords=secret_formats.KEYWORDS,
        entropy_charset=secret_formats.ENTROPY_CHARSET,
        entropy_limit=secret_formats.ENTROPY_LIMIT,
    )


def render(formats: Formats) -> str:
    """secret_formats.py's text for `formats`."""
    rows = "".join(
        f"    ({kind!r}, {pattern!r}, {re.RegexFlag(flags)!r}),\n" for kind, pattern, flags in formats.token_patterns
    )
    keywords = "".join(f"    {keyword!r},\n" for keyword in formats.keywords)
    return f'''"""detect-secrets' token formats, key names and entropy test, copied from the library.

Written by `python tests/test_secret_formats.py` from detect-secrets {formats.version}; do
not edit by hand. tests/test_secret_formats.py fails when the installed library differs.

Why a copy: detect-secrets' plugins cannot be imported without its whole package, whose
`__init__` loads its scanner, filters and settings, and whose plugin base imports
`requests` (for its verification step, which kenning never runs): 60-120 ms of CPU on
every daemon start and every parse worker start, for a table of regexes.
"""

import re

VERSION = {formats.version!r}

# Each `RegexBasedDetector` plugin's deny-list but the public-IP and private-key ones (a
# public address is not a credential; a private key's secret is its body, not the BEGIN
# line the plugin finds): (secret type, pattern, flags).
TOKEN_PATTERNS: tuple[tuple[str, str, int], ...] = (
{rows})

# The keyword plugin's `DENYLIST`: names that make an assignment secret.
KEYWORDS: tuple[str, ...] = (
{keywords})

# `Base64HighEntropyString`: the characters its Shannon entropy counts, and the limit
# above which a value is random-looking.
ENTROPY_CHARSET = {formats.entropy_charset!r}
ENTROPY_LIMIT = {formats.entropy_limit!r}
'''


def test_the_redactor_s_formats_are_the_installed_library_s() -> None:
    assert snapshot_formats() == library_formats(), (
        "detect-secrets' formats changed: rewrite kenning/ingest/secret_formats.py with "
        "`python tests/test_secret_formats.py` and check the redaction tests and benches"
    )
    assert SNAPSHOT.read_text() == render(library_formats())


def _values() -> list[str]:
    rng = random.Random(47)
    alphabet = string.ascii_letters + string.digits + "+/=_-"
    values = ["", "a", "aaaa", "password", "correct-horse-battery-staple", "AKIAABCDEFGHIJKLMNOP"]
    values += ["".join(rng.choice(alphabet) for _ in range(rng.randrange(1, 80))) for _ in range(300)]
    values += ["ünïcode-ß" * 3, "tab\tand space"]
    return values


@pytest.mark.parametrize("value", _values())
def test_the_entropy_test_gives_the_library_s_figure(value: str) -> None:
    from kenning.ingest.redact import _shannon_entropy

    assert _shannon_entropy(value) == Base64HighEntropyString().calculate_shannon_entropy(value)


if __name__ == "__main__":
    SNAPSHOT.write_text(render(library_formats()))
    print(f"wrote {SNAPSHOT} from detect-secrets {library_formats().version}", file=sys.stderr)
