"""One written form for each word, in what is stored and indexed and in what is asked.

The keyword index's tokenizer (unicode61) folds case and diacritics but not the other
ways one word reaches a file: "résumé" typed with combining accents (as macOS writes
file text and Korean syllables), the ligatures of text taken out of a PDF ("ﬁrewall"),
full-width Latin from East Asian input methods ("ｓｅｒｖｅｒ"), half-width katakana,
Arabic presentation forms, a no-break space, and invisible marks inside a word (a soft
hyphen from HTML's `&shy;`, a zero-width space). Each made a word unfindable
by the same word typed plainly, and a secret's name spelled in full-width letters
escaped redaction.

Not NFKC: it also rewrites what states a value, "10⁶ rows" as "106 rows", "3½ hours"
as "31⁄2 hours", "40 m²" as "40 m2", and the text is what a citation shows. So text is
composed (NFC, which changes nothing a reader sees) and only the characters whose
compatibility mapping is a different width, a font, a ligature or a positional form
are replaced by it (their decomposition tags in the Unicode database); superscripts,
subscripts, fractions, circled and squared forms stay as written. Line by line, so a
citation's line numbers still count the file's lines.
"""

from __future__ import annotations

import unicodedata
from functools import cache

# Soft hyphen, zero-width space, word joiner, and a byte-order mark inside the text
# (zero-width no-break space). Not the zero-width joiner and non-joiner, which spell
# Persian and Indic words and join emoji.
_INVISIBLE = "\u00ad\u200b\u2060\ufeff"
# Decomposition tags whose mapping is the same letters or digits in another dress.
_SAME_VALUE = frozenset(
    "<wide> <narrow> <font> <compat> <initial> <medial> <final> <isolated> <noBreak> <vertical>".split()
)


# Where such characters are: reading only these blocks takes milliseconds where the
# whole code space takes 0.2 s, which the first search would spend on the event loop
# (tests/test_unicode.py checks that they hold every one).
BLOCKS = ((0xA0, 0x33FF), (0xA000, 0xABFF), (0xF900, 0xFFEF), (0x10000, 0x10FFF), (0x1D000, 0x1FFFF))


def same_value(code: int) -> bool:
    """Whether the character's compatibility mapping is the same letters in another dress."""
    return unicodedata.decomposition(chr(code)).split(" ", 1)[0] in _SAME_VALUE


@cache
def _table() -> dict[int, str | None]:
    """Every such character's plain form, and the invisible marks to drop."""
    table: dict[int, str | None] = dict.fromkeys(map(ord, _INVISIBLE))
    for first, last in BLOCKS:
        for code in range(first, last + 1):
            if same_value(code):
                table[code] = unicodedata.normalize("NFKC", chr(code))
    return table


def normalized(text: str) -> str:
    """`text` composed, each letter in its plain width and form, without invisible marks,
    with as many lines as it had."""
    if text.isascii():
        return text
    text = text.translate(_table())
    if unicodedata.is_normalized("NFC", text):
        return text
    return "\n".join(unicodedata.normalize("NFC", line) for line in text.split("\n"))
