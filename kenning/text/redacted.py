"""The mark redaction leaves where a secret was (ingest/redact.py writes it).

It is no word of the note's: the entity extractor passes over it, or every note that
held a secret would be linked to every other through one entity called "REDACTED".

Where text is an identity (a ledger entry's fields, a capsule's title) the mark carries
a fingerprint of the secret, `[REDACTED:3f9a]`, so two titles apart only in their
secrets stay two things (service/redaction_key.py says how it is keyed).
"""

from __future__ import annotations

import re

MARK = "[REDACTED]"
# Hex digits of the keyed digest a fingerprinted mark shows.
FINGERPRINT_CHARS = 4
# Either mark, as redaction writes them.
MARKS = re.compile(r"\[REDACTED(?::[0-9a-f]{%d})?\]" % FINGERPRINT_CHARS)


def fingerprinted(digest: str) -> str:
    """The mark for a secret whose keyed digest (hex) is `digest`."""
    return f"[REDACTED:{digest[:FINGERPRINT_CHARS]}]"
