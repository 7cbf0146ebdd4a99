"""What a DOCX holds beside its body, and which of it is read: footnotes and endnotes by
the numbers the body's reading gives them, comments (not those on deleted text alone),
and the headers and footers its sections show. Their text is read as the body's is
(`docx_text`); this is the choosing."""

from __future__ import annotations

from collections.abc import Iterator

from docx.blkcntnr import BlockItemContainer
from docx.document import Document as DocxDocument
from docx.opc.constants import RELATIONSHIP_TYPE as RT
from docx.oxml import parse_xml
from docx.oxml.ns import qn
from docx.oxml.xmlchemy import BaseOxmlElement
from lxml import etree

from kenning.ingest.docx_package import docx_part
from kenning.ingest.docx_wrappers import M as _M
from kenning.ingest.docx_wrappers import REMOVED

NOTE_REFERENCES = {qn("w:footnoteReference"): "footnote", qn("w:endnoteReference"): "endnote"}
_ID = qn("w:id")


class NoteLabels:
    """The label of each footnote and endnote, given as the body's reading meets its
    reference: that is the order Word numbers them in, and the body's `[^n]` and the notes
    section's are one label by construction. A note the reading never meets (its
    reference deleted with changes tracked, or one of the separator notes Word keeps
    beside the others) gets no number and is not read. python-docx has no API for either
    part."""

    def __init__(self, document: DocxDocument) -> None:
        self._notes: dict[str, dict[str, BaseOxmlElement]] = {}
        for kind, reltype in (("footnote", RT.FOOTNOTES), ("endnote", RT.ENDNOTES)):
            part = docx_part(document, reltype)
            notes = parse_xml(part.blob).iterchildren(qn(f"w:{kind}")) if part else ()
            self._notes[kind] = {note.get(_ID): note for note in notes}
        self._labels: dict[str, dict[str, str]] = {"footnote": {}, "endnote": {}}

    def cite(self, reference: BaseOxmlElement) -> str:
        kind = NOTE_REFERENCES[reference.tag]
        note_id = reference.get(_ID)
        if note_id not in self._notes[kind]:
            # A damaged file's reference to no note: there is no text to label.
            return ""
        labels = self._labels[kind]
        if note_id not in labels:
            labels[note_id] = (str if kind == "footnote" else _roman)(len(labels) + 1)
        return f"[^{labels[note_id]}]"

    def cited(self, kind: str) -> list[tuple[str, BaseOxmlElement]]:
        """The notes cited so far with their labels, in the order of their numbers."""
        return [(label, self._notes[kind][note_id]) for note_id, label in self._labels[kind].items()]


def comments(document: DocxDocument) -> list[tuple[str, BaseOxmlElement]]:
    """Each comment to read, with who wrote it, in the order of the comments part (a reply
    is a comment of its own there, after the one it answers). A comment on text the author
    deleted alone is not read: it is about words the document no longer has, as a deleted
    reference's footnote is, and Word drops it when the deletion is accepted; so are the
    replies to it, which answer words no longer there (`_replies`)."""
    part = docx_part(document, RT.COMMENTS)
    if part is None:
        return []
    every = list(parse_xml(part.blob).iterchildren(qn("w:comment")))
    removed = _comments_on_removed_text(document.element.body)
    if removed:
        # A reply is anchored at its parent's range or nowhere; one anchored nowhere
        # would otherwise stand alone, an answer to a question the reader never sees.
        replies = _replies(document, every)
        unanswered = list(removed)
        while unanswered:
            for reply in replies.pop(unanswered.pop(), ()):
                removed.add(reply)
                unanswered.append(reply)
    return [
        (" ".join(comment.get(qn("w:author"), "").split()), comment)
        for comment in every
        if comment.get(_ID) not in removed
    ]


_COMMENTS_EXTENDED = "http://schemas.microsoft.com/office/2011/relationships/commentsExtended"
_W14_PARA_ID = "{http://schemas.microsoft.com/office/word/2010/wordml}paraId"
_W15 = "{http://schemas.microsoft.com/office/word/2012/wordml}"


def _replies(document: DocxDocument, every: list[BaseOxmlElement]) -> dict[str, list[str]]:
    """The ids of the replies to each comment, by its id. Word names a reply's parent in
    the commentsExtended part by the `w14:paraId` of the parent's last paragraph, not by
    its comment id; other tools than Word chain a reply to a reply."""
    part = docx_part(document, _COMMENTS_EXTENDED)
    if part is None:
        return {}
    by_paragraph = {
        paragraph.get(_W14_PARA_ID): comment.get(_ID)
        for comment in every
        for paragraph in comment.iter(qn("w:p"))
        if paragraph.get(_W14_PARA_ID)
    }
    replies: dict[str, list[str]] = {}
    for entry in parse_xml(part.blob).iterchildren(f"{_W15}commentEx"):
        reply = by_paragraph.get(entry.get(f"{_W15}paraId"))
        parent = by_paragraph.get(entry.get(f"{_W15}paraIdParent"))
        if reply is not None and parent is not None:
            replies.setdefault(parent, []).append(reply)
    return replies


_COMMENT_START = qn("w:commentRangeStart")
_COMMENT_END = qn("w:commentRangeEnd")
_COMMENT_REFERENCE = qn("w:commentReference")
_TEXTS = frozenset({qn("w:t"), qn("w:delText"), f"{_M}t"})


def _comments_on_removed_text(body: BaseOxmlElement) -> set[str]:
    """The ids of the comments whose range holds words only in tracked deletions (or a
    move's old place), and of those marking a point inside one. A comment whose range
    also holds text that stands is about that text too."""
    open_ranges: set[str] = set()
    on_standing: set[str] = set()
    on_removed: set[str] = set()
    points: dict[str, bool] = {}
    removed_depth = 0
    for event, element in etree.iterwalk(body, events=("start", "end")):
        tag = element.tag
        if tag in REMOVED:
            removed_depth += 1 if event == "start" else -1
        elif event != "start":
            continue
        elif tag == _COMMENT_START:
            open_ranges.add(element.get(_ID))
        elif tag == _COMMENT_END:
            open_ranges.discard(element.get(_ID))
        elif tag == _COMMENT_REFERENCE:
            points[element.get(_ID)] = removed_depth > 0
        elif tag in _TEXTS and open_ranges and (element.text or "").strip():
            (on_removed if removed_depth else on_standing).update(open_ranges)
    ranged = on_standing | on_removed
    return (on_removed - on_standing) | {name for name, removed in points.items() if removed and name not in ranged}


def page_furniture(document: DocxDocument, kind: str) -> Iterator[BlockItemContainer]:
    """Each header (or footer) the document shows, in section order: a first-page one
    only where the section has a distinct first page, an even-page one only where the
    document sets them apart, and none linked to the previous section's."""
    even_pages = document.settings.odd_and_even_pages_header_footer
    for section in document.sections:
        if kind == "header":
            variants = (section.first_page_header, section.header, section.even_page_header)
        else:
            variants = (section.first_page_footer, section.footer, section.even_page_footer)
        shown = (section.different_first_page_header_footer, True, even_pages)
        for part, is_shown in zip(variants, shown):
            # Checked before the content is touched: python-docx gives a linked header
            # of the first section a new, empty definition.
            if is_shown and not part.is_linked_to_previous:
                yield part


def _roman(number: int) -> str:
    digits = []
    for value, numeral in ((1000, "m"), (900, "cm"), (500, "d"), (400, "cd"), (100, "c"), (90, "xc"),
                           (50, "l"), (40, "xl"), (10, "x"), (9, "ix"), (5, "v"), (4, "iv"), (1, "i")):  # fmt: skip
        count, number = divmod(number, value)
        digits.append(numeral * count)
    return "".join(digits)
