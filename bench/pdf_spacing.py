"""PDF word spacing: how often pdfplumber glues words together, per extraction setting.

Real tools (pdfTeX, for one) often draw no space glyph between words: they move the pen
with a kerning offset in a TJ array. pdfplumber then decides from the gap alone whether
a space was meant, by default when it is wider than 3 points, so small type comes out
glued (`asn1DecodinggeneratesanASN.1structure`).

Two kinds of input, each run through every setting in SETTINGS:

- generated PDFs with known words: TJ arrays like pdfTeX's (word gaps of 0.25-0.33 em,
  kerning inside words of up to 0.08 em) at 6-12 pt, plus fpdf2 text with real space
  glyphs as a control. Glued = share of true words that come out joined to a neighbour;
  split = share of true words that come out broken apart.
- the PDFs found on this machine (`find / -name '*.pdf'`). With no ground truth, the
  reference is PDFium's own text extraction (pypdfium2, which pdfplumber ships with):
  a token absent from PDFium's vocabulary that splits into two or more of its words
  counts as glued; one whose join with the next token is a PDFium word counts as split.
  Rates are per 1,000 tokens.

    .venv/bin/python bench/pdf_spacing.py
    .venv/bin/python bench/pdf_spacing.py --pdf some.pdf --pdf other.pdf
"""

from __future__ import annotations

import argparse
import random
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import pdfplumber
import pypdfium2
from fpdf import FPDF

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from kenning.ingest.pdf_text import pdf_page_text  # noqa: E402  (the setting kenning ships)
from tests.hostile_files import write_pdf  # noqa: E402

SETTINGS = {
    "default (x_tolerance=3)": lambda page: page.extract_text(),
    "x_tolerance=1.5": lambda page: page.extract_text(x_tolerance=1.5),
    "x_tolerance=1": lambda page: page.extract_text(x_tolerance=1),
    "x_tolerance_ratio=0.15": lambda page: page.extract_text(x_tolerance_ratio=0.15),
    "x_tolerance_ratio=0.2": lambda page: page.extract_text(x_tolerance_ratio=0.2),
    "use_text_flow": lambda page: page.extract_text(use_text_flow=True),
    "layout": lambda page: page.extract_text(layout=True),
    "kenning (pdf_text.pdf_page_text)": pdf_page_text,
}

WORDS = (
    "asn decoding generates structure element value type field string integer boolean sequence choice "
    "library function returns error pointer buffer length encoding definition module parser tree node "
    "access name object identifier version option section constraint size check table index reference"
).split()
KERNED = ["AVATAR", "WAVE", "Tower", "Type", "Value", "Year", "Vowel", "LATTE"]


def tj_pdf(path: Path, size: float, rng: random.Random, lines: int = 40) -> list[str]:
    """A page of TeX-style text: no space glyphs, word gaps as TJ offsets; returns its words."""
    truth: list[str] = []
    body = [f"BT /F1 {size:g} Tf {size * 1.2:g} TL 50 760 Td"]
    for _ in range(lines):
        words = [rng.choice(WORDS + KERNED) for _ in range(rng.randint(5, 9))]
        truth.extend(words)
        parts = []
        for index, word in enumerate(words):
            if index:
                # The interword gap in 1/1000 em: TeX's space is 333, shrinking to 222
                # on a tight justified line.
                parts.append(str(-rng.randint(222, 333)))
            if word in KERNED:
                # Kerning inside a word (A-V, W-a, T-o): must not read as a space.
                parts.append(f"({word[:2]}) {rng.randint(40, 80)} ({word[2:]})")
            else:
                parts.append(f"({word})")
        body.append(f"[{' '.join(parts)}] TJ T*")
    body.append("ET")
    write_pdf(path, "\n".join(body).encode())
    return truth


def tracked_pdf(path: Path, size: float, rng: random.Random, lines: int = 20) -> list[str]:
    """Letter-spaced text (headings, small caps): 0.08 em between letters, 0.4 em between words."""
    truth: list[str] = []
    body = [f"BT /F1 {size:g} Tf {size * 1.3:g} TL 50 760 Td"]
    for _ in range(lines):
        words = [rng.choice(WORDS).upper() for _ in range(rng.randint(3, 6))]
        truth.extend(words)
        spaced = [" -80 ".join(f"({letter})" for letter in word) for word in words]
        body.append(f"[{' -400 '.join(spaced)}] TJ T*")
    body.append("ET")
    write_pdf(path, "\n".join(body).encode())
    return truth


def fpdf_control(path: Path, rng: random.Random) -> list[str]:
    """Ordinary text with space glyphs, justified: the case every setting should get right."""
    pdf = FPDF()
    pdf.add_page()
    truth: list[str] = []
    for size in (7, 9, 11):
        pdf.set_font("Helvetica", size=size)
        words = [rng.choice(WORDS) for _ in range(120)]
        truth.extend(words)
        pdf.multi_cell(0, size * 0.5, " ".join(words), align="J", new_x="LMARGIN", new_y="NEXT")
    pdf.output(str(path))
    return truth


def score_truth(text: str, truth: list[str]) -> tuple[float, float]:
    """(glued, split) as shares of the true words."""
    glued = split = 0
    position, rest, broken = 0, "", False  # rest: what is left of a word broken apart
    for token in text.split():
        if position >= len(truth):
            break
        word = rest or truth[position]
        if token == word:
            position, rest, broken = position + 1, "", False
            continue
        if word.startswith(token):
            split += 0 if broken else 1
            rest, broken = word[len(token):], True
            continue
        joined, count = word, 1
        while position + count < len(truth) and len(joined) < len(token):
            joined += truth[position + count]
            count += 1
        if joined == token:
            glued += count
        position, rest, broken = position + count, "", False
    return glued / len(truth), split / len(truth)


_WORD = re.compile(r"[A-Za-z]{2,}")


def segmentable(token: str, vocabulary: set[str]) -> bool:
    """Whether token is two or more vocabulary words run together."""
    lower = token.lower()
    reach = [0] + [None] * len(lower)  # reach[i]: fewest words covering lower[:i]
    for end in range(1, len(lower) + 1):
        for start in range(max(0, end - 30), end):
            if reach[start] is not None and lower[start:end] in vocabulary:
                count = reach[start] + 1
                if reach[end] is None or count < reach[end]:
                    reach[end] = count
    return reach[len(lower)] is not None and reach[len(lower)] >= 2


def score_reference(text: str, vocabulary: set[str]) -> tuple[float, float, int]:
    """(glued, split) per 1,000 tokens, and the token count, against PDFium's vocabulary."""
    tokens = [match.group() for raw in text.split() if (match := _WORD.search(raw))]
    glued = split = 0
    for token, following in zip(tokens, [*tokens[1:], ""]):
        if token.lower() in vocabulary:
            continue
        if (token + following).lower() in vocabulary:
            split += 1
        elif segmentable(token, vocabulary):
            glued += 1
    count = max(len(tokens), 1)
    return glued * 1000 / count, split * 1000 / count, len(tokens)


def extract(path: Path, setting) -> str:
    with pdfplumber.open(path) as pdf:
        return "\n".join(setting(page) or "" for page in pdf.pages)


def reference_vocabulary(path: Path) -> set[str]:
    document = pypdfium2.PdfDocument(str(path))
    words: set[str] = set()
    for page in document:
        words.update(match.group().lower() for match in _WORD.finditer(page.get_textpage().get_text_range()))
    return words


def machine_pdfs() -> list[Path]:
    found = subprocess.run(
        ["find", "/", "-xdev", "-name", "*.pdf", "-not", "-path", "/proc/*", "-not", "-path", "/tmp/*"],
        capture_output=True, text=True, check=False,
    ).stdout.split()
    return [Path(path) for path in found[:10]]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pdf", type=Path, action="append", help="real PDFs to score (default: find / -name '*.pdf')")
    args = parser.parse_args()
    rng = random.Random(11)
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        generated = [(f"TJ gaps, {size} pt", folder / f"tj{size}.pdf", size) for size in (6, 8, 10, 12)]
        cases = [(name, path, tj_pdf(path, size, rng)) for name, path, size in generated]
        cases.append(("fpdf2 spaces, 7-11 pt", folder / "fpdf.pdf", fpdf_control(folder / "fpdf.pdf", rng)))
        cases.append(("tracked 0.08 em, 16 pt", folder / "tracked.pdf", tracked_pdf(folder / "tracked.pdf", 16, rng)))
        print("Generated PDFs with known words: glued % / split % of the true words\n")
        print(f"{'setting':<34}" + "".join(f"{name:>24}" for name, _, _ in cases))
        for label, setting in SETTINGS.items():
            cells = []
            for _, path, truth in cases:
                glued, split = score_truth(extract(path, setting), list(truth))
                cells.append(f"{glued * 100:>11.1f} / {split * 100:<10.1f}")
            print(f"{label:<34}" + "".join(f"{cell:>24}" for cell in cells))

    real = args.pdf or machine_pdfs()
    print("\nPDFs on this machine, against PDFium's extraction: glued / split per 1,000 tokens\n")
    for path in real:
        vocabulary = reference_vocabulary(path)
        print(f"{path}")
        for label, setting in SETTINGS.items():
            glued, split, tokens = score_reference(extract(path, setting), vocabulary)
            print(f"  {label:<34}{glued:>8.1f} glued{split:>8.1f} split   ({tokens} tokens)")


if __name__ == "__main__":
    main()
