"""One written form for each word, in what is indexed and in what is asked.

The keyword index's tokenizer (unicode61) folds case and diacritics but not the other
ways one word reaches a file: "résumé" typed with combining accents (as macOS writes
file text and Korean syllables), the ligatures of text taken out of a PDF ("ﬁrewall"),
full-width Latin from East Asian input methods ("ｓｅｒｖｅｒ"), and invisible marks
inside a word (a soft hyphen from HTML's `&shy;`, zero-width spaces and joiners). Each
made a word unfindable by the same word typed plainly. NFKC gives each of these one
form; the invisible marks are dropped. Text is normalised line by line, so a citation's
line numbers still count the file's lines; the cost is that a stored chunk shows "fi"
for "ﬁ" and "2" for "²".
"""

from __future__ import annotations

import unicodedata

# Soft hyphen, zero-width space, non-joiner and joiner, word joiner, and a byte-order
# mark inside the text (zero-width no-break space).
_INVISIBLE = dict.fromkeys(map(ord, "\u00ad\u200b\u200c\u200d\u2060\ufeff"))


def normalized(text: str) -> str:
    """`text` in NFKC without the invisible marks, with as many lines as it had."""
    text = text.translate(_INVISIBLE)
    if unicodedata.is_normalized("NFKC", text):
        return text
    return "\n".join(unicodedata.normalize("NFKC", line) for line in text.split("\n"))
