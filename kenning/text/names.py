"""The key under which two spellings of one entity meet.

The extractors write entities under it, the graph store looks them up by it, and the
graph leg turns query words into it: one definition, or a name found at ingest could
never be matched at query time.
"""

from __future__ import annotations

import re
import unicodedata

_SPACES = re.compile(r"\s+")
_EDGE_PUNCTUATION = " \t\n\"'`.,;:!?()[]{}<>*_#|"


def normalize_name(name: str) -> str:
    """NFKC, case-folded, spaces collapsed.

    Punctuation inside a name is kept (`C++`, `node.js`, `foo_bar`); quotes, brackets
    and sentence punctuation at its edges are not part of it.
    """
    text = unicodedata.normalize("NFKC", name)
    return _SPACES.sub(" ", text).strip(_EDGE_PUNCTUATION).casefold()
