"""The mark redaction leaves where a secret was (ingest/redact.py writes it).

It is no word of the note's: the entity extractor passes over it, or every note that
held a secret would be linked to every other through one entity called "REDACTED".
"""

from __future__ import annotations

MARK = "[REDACTED]"
