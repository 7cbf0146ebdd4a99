"""A count and its noun, in the singular for one: "1 file", "2 files", "1 entity".

Messages print counts of files, chunks and documents that are as often one as many.
The nouns are kenning's own few, whose plurals are regular or given, so a grammar
library (inflect) would add a dependency for one rule.
"""

from __future__ import annotations


def counted(count: int, noun: str, plural: str | None = None) -> str:
    """`count` and `noun`, the noun in its plural (`plural`, else with an s) unless one."""
    return f"{count} {noun if count == 1 else plural or noun + 's'}"
