"""A paragraph's text from its runs, as python-docx's `paragraph.text` would give it if it
read runs inside wrappers: ruby and equations (which python-docx skips), a note's
reference as its `[^n]`, and a table of contents' field held back (`Fields`)."""

from __future__ import annotations

from docx.oxml.ns import qn
from docx.oxml.xmlchemy import BaseOxmlElement
from docx.text.paragraph import Paragraph
from lxml import etree

from kenning.ingest.docx_notes import NOTE_REFERENCES, NoteLabels
from kenning.ingest.docx_wrappers import M as _M
from kenning.ingest.docx_wrappers import NAVIGATION_FIELD, REMOVED, within

_RUNS = frozenset({qn("w:r")})
_RUBY = qn("w:ruby")
_RUBY_BASE = qn("w:rubyBase")
_RUBY_TEXT = qn("w:rt")
_MATH = frozenset({f"{_M}oMath", f"{_M}oMathPara"})
_INLINE = _RUNS | _MATH
_FIELD_CHAR = qn("w:fldChar")
_FIELD_CODE = qn("w:instrText")
_FIELD_CHAR_TYPE = qn("w:fldCharType")


def paragraph_text(paragraph: Paragraph, notes: NoteLabels | None, fields: Fields) -> str:
    """What `paragraph.text` would be if python-docx read runs inside wrappers: it reads
    only the paragraph's own runs and hyperlinks, so a tracked insertion or a filled-in
    form field was lost, and neither ruby nor equations. A note's reference is its
    `[^n]`, where Word shows the number. What a table of contents' field shows is held
    back (`fields`)."""
    parts = []
    held = []
    for run in within(paragraph._p, _INLINE):
        if run.tag in _MATH:
            (held if fields.hiding else parts).append(_math_text(run))
            continue
        fields.step(run)
        text = _run_text(run)
        if fields.hiding:
            held.append(text)
            continue
        parts.append(text)
        if notes is not None:
            # Word writes a reference in a run of its own, so it goes after the run's text.
            parts.extend(notes.cite(reference) for reference in run.iterchildren(*NOTE_REFERENCES))
    if held:
        fields.hold("".join(held))
    return "".join(parts)


def _run_text(run: BaseOxmlElement) -> str:
    """A run's text with its ruby: python-docx's `run.text` has neither the base nor the
    reading. The reading follows the base in brackets, "漢字(かんじ)", as plain Japanese
    text writes furigana: it is what the author put on the page, and the only place a
    name's reading is written, so a search by the reading in kana finds the word in kanji.
    """
    parts = [run.text]
    for ruby in run.iterchildren(_RUBY):
        base, reading = (
            "".join(_run_text(inner) for part in ruby.iterchildren(tag) for inner in within(part, _RUNS))
            for tag in (_RUBY_BASE, _RUBY_TEXT)
        )
        parts.append(f"{base}({reading})" if reading.strip() and reading != base else base)
    return "".join(parts)


class Fields:
    """The complex fields open as a story's runs are read, to hold back what a table of
    contents shows (`NAVIGATION_FIELD`). Such a field begins in its first entry's
    paragraph and ends in its last's, its entries' page numbers fields inside it; the
    text of a field (`w:instrText`) comes before its result (`separate`).

    What is held back is kept until the field ends, so a damaged file whose field never
    does loses nothing (`unclosed`)."""

    def __init__(self) -> None:
        # Each open field's code so far and whether its result has begun.
        self._open: list[tuple[str, bool]] = []
        self._held: list[str] = []

    @property
    def hiding(self) -> bool:
        # Most paragraphs are in no field: checked for each run, so kept cheap for them.
        return bool(self._open) and any(shown and NAVIGATION_FIELD.match(code) for code, shown in self._open)

    def step(self, run: BaseOxmlElement) -> None:
        for child in run.iterchildren(_FIELD_CHAR, _FIELD_CODE):
            if child.tag == _FIELD_CODE:
                if self._open:
                    code, shown = self._open[-1]
                    self._open[-1] = (code + (child.text or ""), shown)
                continue
            kind = child.get(_FIELD_CHAR_TYPE)
            if kind == "begin":
                self._open.append(("", False))
            elif kind == "separate" and self._open:
                self._open[-1] = (self._open[-1][0], True)
            elif kind == "end" and self._open:
                self._open.pop()
                if not self.hiding:
                    self._held.clear()

    def hold(self, text: str) -> None:
        if text.strip() and self.hiding:
            self._held.append(text)

    def unclosed(self) -> list[str]:
        return self._held if self.hiding else []


# How an equation's parts are laid out in a line, by the layout's tag: its arguments in
# order with what goes before and between them. Anything else (an equation, an argument,
# a matrix, an accent, a box) is its parts one after another.
_MATH_LAYOUTS: dict[str, tuple[tuple[str, str], ...]] = {
    "f": (("", "num"), ("/", "den")),
    "sSup": (("", "e"), ("^", "sup")),
    "sSub": (("", "e"), ("_", "sub")),
    "sSubSup": (("", "e"), ("_", "sub"), ("^", "sup")),
    "sPre": (("_", "sub"), ("^", "sup"), ("", "e")),
    "rad": (("", "deg"), ("√", "e")),
    "nary": (("_", "sub"), ("^", "sup"), (" ", "e")),
    "func": (("", "fName"), (" ", "e")),
}
# Where parts are lines or cells of their own, a space keeps their words apart.
_MATH_SPACED = frozenset({"oMathPara", "eqArr", "m", "mr"})


def _math_text(element: BaseOxmlElement) -> str:
    """An equation (OMML) as a line of text, "x^2", "(a+b)/c": its letters in Word's `m:t`
    runs, which python-docx skips, laid out so that a variable named in a fraction's
    numerator and one in its denominator stay two words."""
    name = etree.QName(element).localname
    if element.tag in REMOVED or name.endswith("Pr"):
        return ""
    if element.tag == qn("w:r"):
        return _run_text(element)
    if element.tag == f"{_M}r":
        return "".join(text.text or "" for text in element.iterchildren(f"{_M}t"))
    if element.tag == f"{_M}d":
        # Brackets, Word's default round ones unless its properties say others.
        properties = element.find(f"{_M}dPr")
        chars = {"begChr": "(", "sepChr": "|", "endChr": ")"}
        for key in chars:
            given = properties.find(f"{_M}{key}") if properties is not None else None
            if given is not None:
                chars[key] = given.get(f"{_M}val", "")
        inside = chars["sepChr"].join(_math_text(part) for part in element.iterchildren(f"{_M}e"))
        return f"{chars['begChr']}{inside}{chars['endChr']}"
    layout = _MATH_LAYOUTS.get(name) if element.tag.startswith(_M) else None
    if layout is None:
        spaced = name in _MATH_SPACED
        line = ""
        # Elements only: a comment in the XML is no part of the equation.
        for part in (_math_text(child) for child in element.iterchildren(etree.Element)):
            # Side by side, "elapsed" and "t_max" are two names, not "elapsedt".
            if part and line and (spaced or (line[-1].isalnum() and part[0].isalnum())):
                line += " "
            line += part
        return line
    parts = []
    if name == "nary":
        properties = element.find(f"{_M}naryPr")
        sign = properties.find(f"{_M}chr") if properties is not None else None
        parts.append(sign.get(f"{_M}val", "∫") if sign is not None else "∫")
    for before, tag in layout:
        argument = element.find(f"{_M}{tag}")
        text = _math_text(argument) if argument is not None else ""
        if text:
            grouped = text if len(text) == 1 or text.isalnum() or text[0] + text[-1] == "()" else f"({text})"
            parts.append(before + grouped)
    return "".join(parts)
