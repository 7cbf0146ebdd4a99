"""Chinese, Japanese and Korean text as the CJK index sees it.

unicode61 cuts words at spaces and punctuation, so a run of Han or kana (no spaces) is
one token, and a Korean word keeps its particle (파일럿에 is not 파일럿): a question
written in those scripts matched nothing. The CJK index holds each chunk's CJK runs cut
into overlapping pairs of characters (bigrams), the usual segmentation-free approach for
these scripts, and a question is cut the same way. A pair is the shortest piece that
still names something in Chinese and Japanese (订单, 平板, 東京), which a trigram index
cannot match at all; bench/README.md has the two measured against each other.
"""

from __future__ import annotations

import re

# Han, kana, Hangul syllables and jamo.
RUN = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af\u1100-\u11ff\u3130-\u318f]+")
PIECE = 2


def pieces(text: str) -> list[str]:
    """Overlapping PIECE-character pieces of every CJK run, in order (a shorter run whole)."""
    out: list[str] = []
    if text.isascii():
        # Most text has no CJK at all, which isascii() tells in nanoseconds and RUN in
        # microseconds a kilobyte.
        return out
    for run in RUN.findall(text):
        if len(run) <= PIECE:
            out.append(run)
        else:
            out.extend(run[start : start + PIECE] for start in range(len(run) - PIECE + 1))
    return out


def index_text(*fields: str) -> str:
    """What the CJK index stores for a chunk: its pieces, space-separated ('' when none)."""
    return " ".join(piece for text in fields for piece in pieces(text))
