"""Split a ReadResult into index chunks that cite exact line ranges.

Everything works on the list of source lines and prefix sums of their lengths, so a chunk
boundary is found with a bisect instead of by building strings, and a chunk's text is
always a slice of the source: that is what makes a citation's line range exact.
"""

from __future__ import annotations

import itertools
import re
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from kenning.ingest.readers import ReadResult
from kenning.text.frontmatter import front_matter_lines
from kenning.text.headings import MAX_HEADING_CHARS, atx_heading, cut

# One pattern for every language family: the chunker only sees a ReadResult, not the
# file's extension, and a keyword at column 0 means "definition" in all of them.
_KEYWORD_DEF = re.compile(
    r"(?:(?:export|default|pub(?:\([\w:]+\))?|public|private|protected|internal|static|final"
    r"|abstract|sealed|partial|async|unsafe|extern|inline|open|data|local)[ \t]+)*"
    r"(?:def|class|function|func|fn|impl|struct|enum|trait|interface|type|mod|module"
    r"|object|fun|sub|record|namespace)\b\*?(?:<[^>]*>)?[ \t]+"
    r"(?:\([^)]*\)[ \t]*)?"  # Go method receiver
    r"[A-Za-z_$][\w$.:~-]*"
)
# C, C++, Java-style function headers at column 0: a return type, a name, an open paren,
# and no ';' at the end (which would make it a prototype or a statement).
_C_FUNCTION = re.compile(
    r"(?!(?:if|elif|else|for|while|switch|return|do|case|goto|typedef|using|assert|raise"
    r"|await|yield|with|from|import|print|echo|throw|new|delete|sizeof|not)\b)"
    r"[A-Za-z_][\w:<>,*&\s]*?[\s*&]\**[A-Za-z_~][\w:~]*(?=\s*\()(?![^;]*;\s*$)"
)
# Column-0 lines that attach to the definition below them (decorators, annotations,
# attributes, comments) or close a multi-line decorator.
_LEADING = ("@", "#", "//", "/*", "--")
# Column-0 lines that continue the definition above rather than ending its scope.
_CONTINUATION = ("}", ")", "]", "{", "end", *_LEADING)


@dataclass(frozen=True)
class Chunk:
    """One index entry; line_start..line_end (1-based, inclusive) is what a citation shows."""

    text: str
    section: str
    line_start: int
    line_end: int


def chunk_document(
    doc: ReadResult, target_chars: int = 1200, overlap_chars: int = 150, max_chunks: int | None = None
) -> list[Chunk]:
    """Chunk by document kind; sizes are soft targets in characters, not tokens.

    With `max_chunks`, a markdown text stops being chunked once it makes more than that
    (`max_chunks` + 1 are returned), since the caller refuses it: agent text is chunked
    in a daemon thread, and 10 MB of empty headings made five million chunks (41 s and
    2 GB) before the refusal. The other kinds are not cut short: text given in a request
    is read as markdown or as prose, which makes about one chunk per target's worth."""
    if target_chars < 1 or overlap_chars < 0:
        raise ValueError("target_chars must be positive and overlap_chars not negative")
    chunker = _Chunker(doc.text.split("\n"), target_chars, overlap_chars, max_chunks)
    if doc.kind == "markdown":
        return chunker.markdown()
    if doc.kind == "prose":
        return chunker.prose(doc.page_starts)
    if doc.kind == "code":
        return chunker.code()
    if doc.kind == "data":
        return chunker.data()
    raise ValueError(f"unknown document kind {doc.kind!r}")


class _Chunker:
    def __init__(self, lines: list[str], target: int, overlap: int, most: int | None = None) -> None:
        self.lines = lines
        self.target = target
        self.overlap = overlap
        self.most = most
        # prefix[i] is the length of lines[:i] joined, each line counted with its '\n'.
        self.prefix = [0, *itertools.accumulate(len(line) + 1 for line in lines)]

    def markdown(self) -> list[Chunk]:
        lines = self.lines
        paragraphs: list[int] = []
        # (first line, heading path) for each section; a heading starts its section.
        sections: list[tuple[int, str]] = [(0, "")]
        path: list[tuple[int, str]] = []
        fence = ""
        blank_before = True
        body_seen = False
        last = len(lines)
        for i in range(front_matter_lines(lines), len(lines)):
            line = lines[i]
            if not line or line.isspace():
                blank_before = True
                continue
            stripped = line.lstrip(" ") if line[0] == " " else line
            if fence:
                if stripped.startswith(fence) and not stripped.rstrip().strip(fence[0]):
                    fence = ""
                    paragraphs.append(i + 1)
            elif stripped[:3] in ("```", "~~~") and len(line) - len(stripped) < 4:
                marker = stripped[0]
                fence = marker * (len(stripped) - len(stripped.lstrip(marker)))
                if body_seen:
                    paragraphs.append(i)
            elif stripped[0] == "#" and (heading := atx_heading(line)):
                level, title = heading
                # A heading with nothing under it before a deeper heading shares that
                # child's chunk rather than becoming a chunk of one line.
                if not body_seen and path and path[-1][0] < level:
                    first = sections.pop()[0]
                elif not body_seen and not path:
                    # Only front matter above the first heading: it opens that
                    # heading's chunk rather than making a hit of its own.
                    first = sections.pop()[0]
                else:
                    first = i
                while path and path[-1][0] >= level:
                    path.pop()
                path.append((level, cut(title, MAX_HEADING_CHARS)))
                sections.append((first, " > ".join(title for _, title in path if title)))
                if self.most is not None and len(sections) > self.most + 1:
                    # Each section after the first opens at its heading's line, so each
                    # makes a chunk at least: the text makes too many already.
                    last = i + 1
                    break
                body_seen = False
                blank_before = False
                continue
            elif blank_before and body_seen:
                # Not the first block under a heading: a cut there would leave the
                # heading alone in a chunk.
                paragraphs.append(i)
            body_seen = True
            blank_before = False

        chunks: list[Chunk] = []
        bounds = [first for first, _ in sections[1:]] + [last]
        for (first, section), end in zip(sections, bounds):
            chunks.extend(self._pack(first, end, [], paragraphs, lambda s, e, t=section: t))
            if self.most is not None and len(chunks) > self.most:
                return chunks[: self.most + 1]
        return chunks

    def prose(self, page_starts: tuple[int, ...] = ()) -> list[Chunk]:
        lines = self.lines
        paragraphs = [
            i
            for i in range(1, len(lines))
            if lines[i] and not lines[i].isspace() and (not lines[i - 1] or lines[i - 1].isspace())
        ]
        if not page_starts:
            return self._pack(0, len(lines), [], paragraphs, lambda s, e: "")
        # Each page is chunked on its own, without overlap from the page before, so every
        # citation names exactly one page, even when two short pages would fit one chunk.
        bounds = [0, *(start - 1 for start in page_starts[1:]), len(lines)]
        chunks: list[Chunk] = []
        for number, (first, end) in enumerate(zip(bounds, bounds[1:]), start=1):
            label = f"page {number}"
            chunks.extend(self._pack(first, end, [], paragraphs, lambda s, e, t=label: t))
        return chunks

    def code(self) -> list[Chunk]:
        lines = self.lines
        definitions: list[int] = []
        # (line, label) events; label '' marks top-level code that ends a definition.
        scopes: list[tuple[int, str]] = []
        paragraphs: list[int] = []
        lead: int | None = None  # first decorator/comment line of the run above
        blank_before = True
        for i, line in enumerate(lines):
            if not line or line.isspace():
                blank_before, lead = True, None
                continue
            if blank_before:
                paragraphs.append(i)
            blank_before = False
            if line[0] in " \t":
                continue  # indented: a body, a decorator's arguments, or a doc comment
            head = line[:240]  # definitions are short; this bounds regex work on minified code
            match = _KEYWORD_DEF.match(head)
            if match is None and "(" in head:
                match = _C_FUNCTION.match(head)
            if match:
                start = i if lead is None else lead
                definitions.append(start)
                scopes.append((start, " ".join(match.group().rstrip(":").split())))
                lead = None
            elif line.startswith(_LEADING):
                lead = i if lead is None else lead
            elif not line.startswith(_CONTINUATION):
                scopes.append((i, ""))
                lead = None
        scope_lines = [line for line, _ in scopes]

        def section(start: int, end: int) -> str:
            at = bisect_right(scope_lines, start) - 1
            if at >= 0 and scopes[at][1]:
                return scopes[at][1]
            # The chunk opens with module-level code; name the first definition it holds.
            for j in range(at + 1, len(scopes)):
                line, label = scopes[j]
                if line >= end:
                    break
                if label:
                    return label
            return ""

        return self._pack(0, len(lines), definitions, paragraphs, section)

    def data(self) -> list[Chunk]:
        return self._pack(0, len(self.lines), [], [], lambda s, e: "")

    def _pack(
        self,
        first: int,
        end: int,
        hard: list[int],
        soft: list[int],
        section: Callable[[int, int], str],
    ) -> list[Chunk]:
        chunks: list[Chunk] = []
        for start, stop in self._ranges(first, end, hard, soft):
            while self.lines[stop - 1].strip() == "":
                stop -= 1
            label = section(start, stop)
            if stop - start == 1 and len(self.lines[start]) > self.target:
                chunks.extend(
                    Chunk(piece, label, start + 1, start + 1)
                    for piece in _split_line(self.lines[start], self.target)
                )
            else:
                text = "\n".join(self.lines[start:stop])
                chunks.append(Chunk(text, label, start + 1, stop))
        return chunks

    def _ranges(
        self, first: int, end: int, hard: list[int], soft: list[int]
    ) -> Iterator[tuple[int, int]]:
        """Yield half-open line ranges over lines[first:end], greedily filled to target.

        A range that starts at a hard boundary (a definition) ends before the last hard
        boundary that fits; one that starts mid-way (the rest of a split function) ends
        at the first, so the next definition starts a chunk of its own and is named
        after itself. Failing that, a range ends at the last soft boundary
        (paragraph), else after the last whole line that fits. Overlap is added only
        after a soft or line break: a hard break starts something new.

        A range that starts in the overlap ends past the previous range's end: cut at
        the same paragraph boundary again, it would only repeat a tail of the range
        before it (lines 202-205, then 203-205, then 204-205).
        """
        lines, prefix, target = self.lines, self.prefix, self.target
        start = first
        # Where the last range was cut, and where its text ends once trailing blank
        # lines are trimmed (what its citation shows).
        previous_cut = previous_end = first
        while True:
            while start < end and (not lines[start] or lines[start].isspace()):
                start += 1
            if start >= end:
                return
            stop = bisect_right(prefix, prefix[start] + target + 1, start + 1, end + 1) - 1
            if stop == start:
                # This one line alone is longer than the target; the caller splits it.
                yield start, start + 1
                start = previous_cut = previous_end = start + 1
                continue
            at = bisect_left(hard, start)
            aligned = start == first or (at < len(hard) and hard[at] == start)
            if aligned:
                cut = 0 if stop >= end else _last_between(hard, start, stop)
            else:
                cut = hard[at] if at < len(hard) and hard[at] <= stop else 0
            fresh = bool(cut) or stop >= end  # the next range starts at the cut, no overlap
            if not cut:
                cut = end if stop >= end else _last_between(soft, max(start, previous_cut), stop) or stop
            text_end = self._text_end(start, cut)
            if start < previous_cut and text_end <= previous_end:
                # Begun in the overlap, this range reaches no line the last one did not
                # (only blank lines lie past it): start after the last one instead.
                start = previous_cut
                continue
            yield start, cut
            previous_cut, previous_end = cut, text_end
            if cut >= end:
                return
            if fresh:
                start = cut
                continue
            resume = bisect_left(prefix, prefix[cut] - self.overlap, start + 1, cut)
            # Drop the overlap if it would leave no room for the next line.
            start = resume if prefix[cut + 1] - prefix[resume] <= target + 1 else cut

    def _text_end(self, start: int, stop: int) -> int:
        """`stop` moved back over trailing blank lines, as `_pack` trims a range."""
        while stop > start + 1 and self.lines[stop - 1].strip() == "":
            stop -= 1
        return stop


def _last_between(boundaries: list[int], start: int, stop: int) -> int:
    """Last boundary in (start, stop], or 0 (never a valid cut, since cuts exceed start)."""
    at = bisect_right(boundaries, stop) - 1
    return boundaries[at] if at >= 0 and boundaries[at] > start else 0


def _split_line(line: str, target: int) -> Iterator[str]:
    """Cut an overlong line (minified text, a huge table row) at spaces where possible."""
    pos, length = 0, len(line)
    while pos < length:
        while pos < length and line[pos].isspace():
            pos += 1
        stop = pos + target
        if stop < length:
            space = line.rfind(" ", pos + target // 2, stop + 1)
            if space > pos:
                stop = space
        piece = line[pos:stop].rstrip()
        if piece:
            yield piece
        pos = stop
