"""What the tools answer: their output schemas, published in tools/list.

Pydantic sits here because this is an edge (the MCP protocol). The daemon's answers carry
more fields than an agent needs; validating them into these models keeps the listed ones
and drops the rest, so a field the daemon adds later changes nothing here.
"""

from __future__ import annotations

from pydantic import BaseModel, Field


class Elsewhere(BaseModel):
    item_id: int
    document_id: int
    path: str
    line_start: int
    line_end: int


class Hit(BaseModel):
    item_id: int = Field(description="the chunk; get(item_id=...) returns it in full")
    document_id: int = Field(description="the document; get(document_id=...) pages through it")
    title: str
    source: str = Field(description="the source that holds the document")
    path: str = Field(description="absolute path of the file, or the uri of agent text and fetched pages")
    section: str = Field(description="heading path, enclosing definition for code, or page for PDF")
    line_start: int = Field(description="first line of the chunk, 1-based, in the extracted text")
    line_end: int = Field(description="last line of the chunk, inclusive")
    snippet: str = Field(description="the matching passage, matched terms in **bold**")
    score: float = Field(description="fused relevance, higher is better")
    date: str | None = Field(None, description="the date the text speaks from: YYYY, YYYY-MM or YYYY-MM-DD")
    superseded_by: int | None = Field(None, description="item_id of newer text that corrects or replaces this")
    retracted_by: int | None = Field(None, description="item_id of a notice that retracts or withdraws this")
    conflicts_with: list[int] = Field([], description="item_ids of hits that state something else about it")
    also_at: list[Elsewhere] = Field([], description="the same text in other files or scopes, shown once here")


class SearchResult(BaseModel):
    hits: list[Hit] = Field(description="best first; empty when nothing in the library matches")
    warnings: list[str] = Field(default=[], description="retrieval legs that could not run, and why")
    abstained: str | None = Field(
        None, description="why no hits came back although some text matched: none of it supported an answer"
    )
    withheld: list[Hit] = Field(
        [],
        description="when it abstained, the best matches it held back: to look at, not to answer from",
    )


class Chunk(BaseModel):
    item_id: int
    ord: int = Field(description="position in the document, from 0; use as get's offset")
    section: str
    line_start: int
    line_end: int
    content: str = Field(description="the chunk's full text")


class Location(BaseModel):
    source: str
    path: str


class Document(BaseModel):
    document_id: int
    title: str
    source: str
    namespace: str
    path: str = Field(description="absolute path of the file, or the uri of agent text and fetched pages")
    format: str
    locations: list[Location] = Field(
        [], description="every file holding this same text, stored once; the path asked for first"
    )


class Lines(BaseModel):
    line_start: int
    line_end: int
    text: str = Field(description="the lines, joined by newlines")
    total_lines: int
    next_line: int | None = Field(description="first line of the rest of the range asked for; null when done")


class Page(BaseModel):
    document: Document
    chunks: list[Chunk] = Field(description="in document order (empty when lines were asked for)")
    total_chunks: int | None = Field(description="chunks in the document (null when one chunk was asked for by item_id)")
    next_offset: int | None = Field(description="offset of the next page, null at the end")
    lines: Lines | None = Field(default=None, description="the range of lines asked for with line_start/line_end")
    version: str | None = Field(
        default=None,
        description="the document's version (null for one chunk): pass it with the next page to be told if the"
        " document changed in between",
    )


class Removed(BaseModel):
    document_id: int
    title: str
    uri: str


class Added(BaseModel):
    document_id: int
    title: str
    uri: str
    stored: str = Field(description="indexed, adopted, or merged (the same text is already stored elsewhere)")
    chunks: int


class Fetched(Added):
    url: str | None = Field(description="where the redirects ended (the page's address after them)")
    changed: bool | None = Field(
        None, description="refresh_url: false when the server said the page is unchanged (nothing was re-read)"
    )
