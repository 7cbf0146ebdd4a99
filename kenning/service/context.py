"""Context packs: what to put in a prompt for a task, under a byte budget.

The library is searched with the task description; the hits are reduced to documents,
best first. The decision rule, measured on the truth set (bench/context_pack.py):

1. Only the `MAX_DOCUMENTS` best documents are considered at all.
2. A document is inlined whole only if its best hit scores at least `RELATIVE_FLOOR`
   of the top document's, so a weakly related note never takes a place in the prompt
   because it happens to be short.
3. Going down the list, a document is inlined if the pack, with it inlined and every
   other document past the floor listed in one line, still fits the budget. A document
   too large for what is left is listed and the next one is tried: size decides only
   after relevance, and one large document does not shut smaller relevant ones out.
   Documents under the floor get no room kept for them: eleven weak notes with long
   titles kept the one note that answered out of a 4,000-byte pack. And the lines kept
   room for never take more than `LIST_SHARE` of the budget: eleven relevant notes with
   long names needed more than a 1,500-byte pack, so nothing was inlined, and then the
   list was cut to what fitted anyway. The best document keeps no room at all: it is
   inlined whenever it fits the budget on its own, and the list gets what is left (a
   600-byte pack kept half its room for the list and inlined nothing).
4. Every other considered document is listed with one line: title, path and the lines
   of its best hit, its document id and size, so the agent can `get` or `search` it.
   If the list does not fit, its least relevant lines are dropped, and a last line
   says how many.

The format is fixed and the order is the search's (ties by document id), so the same
library, task and budget give the same bytes.
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass

from kenning.api import ContextPack, PackedDocument
from kenning.retrieval.search import Retriever
from kenning.service.semantic import Semantic
from kenning.store import document_text, lookup
from kenning.store.database import Database
from kenning.text.controls import escaped
from kenning.text.counts import counted

MAX_DOCUMENTS = 12
RELATIVE_FLOOR = 0.5
SEARCH_HITS = 60
TASK_BYTES = 200
LIST_SHARE = 0.5


@dataclass
class _Candidate:
    packed: PackedDocument
    block: str | None = None
    gone: bool = False


def _header(task: str) -> str:
    shown = " ".join(task.split()).encode()[:TASK_BYTES].decode(errors="ignore")
    return f"# Context for: {shown}\n\n"


# A line of a document's text that reads as one of the pack's own: a block's header or
# the list's heading (a pack archived, or saved in a note, then inlined in a later one).
_PACK_LINE = (
    r"(?=[ \t]*(?:=== .* \(document \d+(?:;[^()]*)?\) ===[ \t]*(?:{end})|## Also relevant, not inlined))"
)
_AFTER_NEWLINE = re.compile("^" + _PACK_LINE.format(end=r"\r?$"), re.MULTILINE)
# A form feed, U+2028 or a lone carriage return ends a line for str.splitlines, and for
# a client reading the pack by it, as a newline does. Looked for only in text holding
# one: at every character it took three times as long.
_BREAKS = r"[\r\n\x0b\x0c\x1c-\x1e\x85\u2028\u2029]"
_ODD_BREAKS = "\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
_AFTER_ANY_BREAK = re.compile(f"(^|{_BREAKS})" + _PACK_LINE.format(end=rf"{_BREAKS}|\Z"))


# A title or a path may hold a newline (a file's name, a front matter title): escaped,
# a block's header and a listed document stay one line each, and no document's name can
# open a block of its own in the pack. Nor can its text: such a line is inlined with a
# backslash before it, or it would cite the text after it to a document never read.
# Run in a worker thread: the search for such lines through megabytes of text took 90 ms.
def _block(document: PackedDocument, text: str) -> str:
    marked = text.rstrip()
    if "(document " in marked or "## Also relevant" in marked:
        if any(mark in marked for mark in _ODD_BREAKS) or marked.count("\r") != marked.count("\r\n"):
            marked = _AFTER_ANY_BREAK.sub(lambda line: f"{line[1]}\\", marked)
        else:
            marked = _AFTER_NEWLINE.sub(lambda _: "\\", marked)
    return (
        f"=== {escaped(document.title)} — {escaped(document.path)}"
        f" (document {document.document_id}{_taken_back(document)}) ===\n{marked}\n\n"
    )


def _list_line(document: PackedDocument) -> str:
    return (
        f"- {escaped(document.title)} — {escaped(document.path)}:{document.line_start}-{document.line_end}"
        f" (document {document.document_id}, {document.bytes} bytes, score {document.score:.2f}"
        f"{_taken_back(document)})\n"
    )


def _taken_back(document: PackedDocument) -> str:
    """What says its best hit no longer holds, as a search marks that hit: a pack gave a
    replaced note's old figure as plainly as the note replacing it. Only those lines are
    named: a correction may replace one paragraph of a long page."""
    marks = [f"superseded by item {document.superseded_by}"] if document.superseded_by is not None else []
    if document.retracted_by is not None:
        marks.append(f"retracted by item {document.retracted_by}")
    return f"; lines {document.line_start}-{document.line_end} {', '.join(marks)}" if marks else ""


LIST_HEADER = "## Also relevant, not inlined (get(document_id=...) reads one; search finds more)\n"


def _left_out(count: int) -> str:
    """The pack's last line when documents did not fit even as a line each."""
    if not count:
        return ""
    return f"[{counted(count, 'more document')} left out; a larger budget or search shows them]\n"


def _size(text: str) -> int:
    return len(text.encode())


class ContextPacker:
    def __init__(self, db: Database, retriever: Retriever, semantic: Semantic) -> None:
        self.db = db
        self.retriever = retriever
        self.semantic = semantic

    async def pack(
        self,
        task: str,
        budget: int,
        source: str | None = None,
        namespace: str | None = None,
        kinds: tuple[str, ...] = (),
    ) -> ContextPack:
        found = await self.retriever.search(
            task, SEARCH_HITS, source=source, namespace=namespace, kinds=kinds,
            vectors=self.semantic.vectors, vectors_off=self.semantic.off, snippets=False,
        )  # fmt: skip
        candidates: dict[int, _Candidate] = {}
        for hit in found.hits:
            if hit.document_id not in candidates and len(candidates) < MAX_DOCUMENTS:
                packed = PackedDocument(
                    hit.document_id, hit.title, hit.path, hit.source, round(hit.score, 4), 0, hit.item_id,
                    hit.line_start, hit.line_end, hit.superseded_by, hit.retracted_by,
                )  # fmt: skip
                candidates[hit.document_id] = _Candidate(packed)
        sizes = await lookup.text_sizes(self.db, list(candidates))
        # A document forgotten or removed since the search (another client, at the same
        # moment) has no chunks left: it was inlined as an empty block under its title.
        ordered = [c for c in candidates.values() if c.packed.document_id in sizes]
        top = ordered[0].packed.score if ordered else 0.0
        header = _header(task)
        for candidate in ordered:
            candidate.packed.bytes = sizes.get(candidate.packed.document_id, 0)
        # The list line of each document past the floor that is not inlined, by id.
        lines_kept = {
            c.packed.document_id: _size(_list_line(c.packed)) for c in ordered if c.packed.score >= RELATIVE_FLOOR * top
        }
        most_kept = int(budget * LIST_SHARE)
        used = _size(header)
        for candidate in ordered:
            document = candidate.packed
            if document.score < RELATIVE_FLOOR * top or document.bytes > budget:
                continue
            text = await document_text.whole_text(self.db, document.document_id)
            if not text:
                # Gone since its size was read: blank text is never stored.
                candidate.gone = True
                del lines_kept[document.document_id]
                continue
            document.bytes = _size(text)
            # Its line now states the exact size, should it stay listed.
            lines_kept[document.document_id] = _size(_list_line(document))
            block = await asyncio.to_thread(_block, document, text)
            others = sum(size for key, size in lines_kept.items() if key != document.document_id)
            kept = min(_size(LIST_HEADER) + others, most_kept) if others and candidate is not ordered[0] else 0
            if used + _size(block) + kept <= budget:
                candidate.block = block
                used += _size(block)
                del lines_kept[document.document_id]
        inlined = [c for c in ordered if c.block is not None]
        listed = [c for c in ordered if c.block is None and not c.gone]
        body = header + "".join(c.block for c in inlined if c.block)
        lines = [_list_line(c.packed) for c in listed]
        # Without room for the whole list, its least relevant lines go, and a line says so.
        left_out = 0
        while lines and _size(body) + _size(LIST_HEADER) + sum(map(_size, lines)) + _size(_left_out(left_out)) > budget:
            lines.pop()
            listed.pop()
            left_out += 1
        text = body + (LIST_HEADER + "".join(lines) if lines else "")
        if left_out and _size(text) + _size(_left_out(left_out)) <= budget:
            text += _left_out(left_out)
        return ContextPack(
            text, _size(text), budget, [c.packed for c in inlined], [c.packed for c in listed], found.warnings
        )
