"""Chunker behaviour a reader of search results notices: sections, exact citations, sizes."""

import random
import time
from pathlib import Path

import pytest

from kenning.ingest.chunker import Chunk, chunk_document
from kenning.config import ChunkingSettings
from kenning.errors import InvalidRequest
from kenning.ingest.convert import ConvertLimits, convert_file
from kenning.ingest.readers import ReadLimits, ReadResult, read_file
from kenning.ingest.text_docs import TextDocument, add_text
from kenning.ingest.text_prep import Labels, prepare_text
from kenning.store import tallies as tally_store
from kenning.text.html import first_h1
from tests.helpers import make_pdf


def doc(text: str, kind: str = "markdown", page_starts: tuple[int, ...] = ()) -> ReadResult:
    return ReadResult(text, "t", kind, kind, page_starts)


def assert_exact(text: str, chunks: list[Chunk], target: int) -> None:
    """Each chunk is its cited line range verbatim, no non-blank line is lost, and each
    chunk reaches past the one before (pieces of one overlong line aside)."""
    lines = text.split("\n")
    covered: set[int] = set()
    for chunk in chunks:
        assert chunk.text.strip(), chunk
        assert 1 <= chunk.line_start <= chunk.line_end <= len(lines)
        source = "\n".join(lines[chunk.line_start - 1 : chunk.line_end])
        if chunk.line_start == chunk.line_end and len(source) > target:
            assert chunk.text in source  # a piece of one overlong line
        else:
            assert chunk.text == source
            assert chunk.text == chunk.text.strip("\n")
        assert len(chunk.text) <= target
        covered.update(range(chunk.line_start, chunk.line_end + 1))
    missing = [n for n, line in enumerate(lines, 1) if line.strip() and n not in covered]
    assert not missing
    for before, after in zip(chunks, chunks[1:]):
        if before.line_start == before.line_end == after.line_start == after.line_end:
            continue
        assert after.line_start > before.line_start and after.line_end > before.line_end, (before, after)


def sentence_paragraphs(count: int) -> list[str]:
    return [" ".join(f"p{n}w{i}" for i in range(30)) for n in range(count)]


MARKDOWN = """\
Preamble before any heading.

# Install

Run the installer.

## Linux

```sh
# this comment is not a heading
apt install kenning
```

### Arch
Use the AUR.

## Mac
brew install kenning

# Usage
Search with ken.
"""


def test_markdown_sections_carry_heading_paths() -> None:
    chunks = chunk_document(doc(MARKDOWN), target_chars=60, overlap_chars=0)
    by_section: dict[str, Chunk] = {}
    for chunk in chunks:
        by_section.setdefault(chunk.section, chunk)
    assert list(by_section) == ["", "Install", "Install > Linux", "Install > Linux > Arch",
                                "Install > Mac", "Usage"]  # fmt: skip
    assert by_section["Install > Linux"].text.startswith("## Linux")
    assert "# this comment is not a heading" in by_section["Install > Linux"].text
    assert by_section["Install > Mac"].text == "## Mac\nbrew install kenning"
    assert by_section["Usage"].line_start == MARKDOWN.split("\n").index("# Usage") + 1
    assert_exact(MARKDOWN, chunks, 60)


def test_hash_lines_in_tilde_fences_are_not_headings() -> None:
    text = "# Top\n\n~~~~python\n# not a heading\n~~~\n# still not\n~~~~\nafter\n"
    chunks = chunk_document(doc(text))
    assert [c.section for c in chunks] == ["Top"]
    assert chunks[0].text == text.rstrip("\n")


def test_heading_without_body_shares_its_first_subsection_chunk() -> None:
    text = "# Guide\n\n## Setup\nsteps here\n"
    chunks = chunk_document(doc(text))
    assert [(c.section, c.line_start, c.line_end) for c in chunks] == [("Guide > Setup", 1, 4)]


@pytest.mark.parametrize(
    ("line", "section", "h1"),
    [
        ("# Title", "Title", "Title"),
        ("## Title ##", "Title", ""),
        ("### Title ###   ", "Title", ""),
        ("# Title#", "Title#", "Title#"),
        ("# #", "#", "#"),
        ("# # #", "#", "#"),
        ("# ##", "##", "##"),
        ("####### seven", "", ""),
        ("    # indented four", "", ""),
        ("   # three", "three", "three"),
        ("#hashtag", "", ""),
        ("# a # b", "a # b", "a # b"),
        ("# C# notes", "C# notes", "C# notes"),
        ("#\tTabbed\t#\t", "Tabbed", "Tabbed"),
        ("## x  ##  y", "x  ##  y", ""),
        ("# trailing \u00a0", "trailing", "trailing"),
        ("# trailing \u00a0#", "trailing \u00a0#", "trailing \u00a0#"),
        ("# a ##x", "a ##x", "a ##x"),
        ("  ## Two ##", "Two", ""),
    ],
)
def test_a_heading_line_is_read_as_commonmark_writes_it(line: str, section: str, h1: str) -> None:
    """Closing hashes go when a space comes before them; four spaces or seven hashes make no heading."""
    chunks = chunk_document(doc(f"intro\n\n{line}\nbody\n"), target_chars=10, overlap_chars=0)
    assert chunks[-1].section == section
    assert first_h1(line) == h1


@pytest.mark.parametrize(
    "line",
    ["# a" + " " * 50_000 + "x", "# " + "# " * 100_000 + "x", "#\t" + "\t#" * 100_000 + "x"],
    ids=["spaces", "hash pairs", "tab hash pairs"],
)
def test_a_long_heading_line_is_read_in_time_linear_in_its_length(line: str, tmp_path: Path) -> None:
    """A heading line holding a long run of spaces or of ' #' took time quadratic in its
    length to match (50,000 spaces: 45 s): a 100 KB note failed at the parse time limit,
    and agent text, chunked in a daemon thread holding the GIL, stalled every request."""
    note = tmp_path / "note.md"
    note.write_text(line + "\nbody\n")
    started = time.monotonic()
    read = read_file(note)
    chunks = chunk_document(read)
    assert time.monotonic() - started < 3
    assert chunks[-1].text == "body" or chunks[-1].line_end == 2
    assert read.title.startswith(("a", "#"))


@pytest.mark.parametrize(
    ("name", "source"),
    [
        ("note.md", "# " + "tapir " * 60_000 + "\n\nbody\n"),
        ("page.html", "<title>" + "tapir " * 60_000 + "</title><h2>" + "okapi " * 60_000 + "</h2><p>body</p>"),
    ],
)
def test_a_long_heading_or_title_is_stored_cut_not_once_per_chunk(name: str, source: str, tmp_path: Path) -> None:
    """Every chunk stores its document's title and its section: a note whose first heading
    ran to 500 KB stored 400 copies of it (209 MB for one file) and took 86 s to chunk."""
    path = tmp_path / name
    path.write_text(source)
    started = time.monotonic()
    converted = convert_file(path, "fallback", ConvertLimits(ReadLimits(), 1200, 150, 10_000))
    assert time.monotonic() - started < 10
    assert len(converted.title) <= 500 and converted.title.startswith("tapir tapir") and converted.title.endswith("…")
    assert all(len(item.title) <= 500 and len(item.section) <= 200 for item in converted.items)
    assert converted.items[-1].content.endswith("body")
    page = prepare_text(Labels(source[:100_000], "notes://long"), "text", "markdown", ChunkingSettings())
    assert len(page.labels.title) <= 500 and len(page.items[0].title) <= 500


def test_front_matter_comments_are_not_headings() -> None:
    text = "---\ntitle: Notes\n# a yaml comment\n---\nbody\n# Real\ntext\n"
    assert [c.section for c in chunk_document(doc(text))] == ["", "Real"]


def test_front_matter_opens_the_first_headings_chunk_instead_of_being_a_hit_alone() -> None:
    text = "---\ntitle: Aisha Okafor\nupdated: 2025-02-14\n---\n# Aisha Okafor\n\n- Based in Leeds.\n\n## Hours\n08:00-16:30\n"
    chunks = chunk_document(doc(text))
    assert [(c.section, c.line_start, c.line_end) for c in chunks] == [("Aisha Okafor", 1, 7), ("Aisha Okafor > Hours", 9, 10)]
    assert chunks[0].text.startswith("---\ntitle: Aisha Okafor")


def test_leading_rule_is_not_mistaken_for_front_matter() -> None:
    text = "---\n\n# First\nbody\n\n---\n# Second\nmore\n"
    assert [c.section for c in chunk_document(doc(text))] == ["", "First", "Second"]


def test_long_markdown_section_splits_on_paragraphs_without_crossing_headings() -> None:
    paragraphs = sentence_paragraphs(12)
    text = "# One\n\n" + "\n\n".join(paragraphs) + "\n\n# Two\n\n" + "\n\n".join(paragraphs)
    chunks = chunk_document(doc(text), target_chars=700, overlap_chars=0)
    assert_exact(text, chunks, 700)
    assert {c.section for c in chunks} == {"One", "Two"}
    assert len(chunks) > 4
    for chunk in chunks:
        body = chunk.text.removeprefix("# One\n\n").removeprefix("# Two\n\n")
        assert all(part in paragraphs for part in body.split("\n\n"))  # whole paragraphs only
    two = text.split("\n").index("# Two") + 1
    assert all(c.line_end < two or c.line_start >= two for c in chunks)


def test_overlap_repeats_trailing_lines_but_never_crosses_a_heading() -> None:
    long_paragraph = [f"line {i} " + "x" * 40 for i in range(60)]
    text = "# A\n" + "\n".join(long_paragraph) + "\n# B\n" + "\n".join(long_paragraph)
    chunks = chunk_document(doc(text), target_chars=500, overlap_chars=120)
    assert_exact(text, chunks, 500)
    for before, after in zip(chunks, chunks[1:]):
        if before.section == after.section:
            shared = before.line_end - after.line_start + 1
            assert shared >= 1
            overlap_text = "\n".join(text.split("\n")[after.line_start - 1 : before.line_end])
            assert len(overlap_text) <= 120
        else:
            assert after.line_start == before.line_end + 1  # the heading line starts fresh


def test_zero_overlap_gives_disjoint_chunks() -> None:
    text = "\n".join(f"row {i} " + "y" * 30 for i in range(100))
    chunks = chunk_document(doc(text, "prose"), target_chars=300, overlap_chars=0)
    assert_exact(text, chunks, 300)
    assert [c.line_start for c in chunks[1:]] == [c.line_end + 1 for c in chunks[:-1]]


def test_prose_packs_paragraphs_up_to_target() -> None:
    paragraphs = [f"{n:03d} " + "y" * 195 for n in range(10)]  # 199 chars each
    text = "\n\n".join(paragraphs)
    chunks = chunk_document(doc(text, "prose"), target_chars=650, overlap_chars=0)
    assert_exact(text, chunks, 650)
    assert [c.text.count("\n\n") + 1 for c in chunks] == [3, 3, 3, 1]
    assert all(c.section == "" for c in chunks)


def test_overlong_single_line_is_split_at_spaces_on_its_own_line_number() -> None:
    words = [f"token{i}" for i in range(1000)]
    text = "before\n\n" + " ".join(words) + "\n\nafter"
    chunks = chunk_document(doc(text, "prose"), target_chars=200, overlap_chars=50)
    assert_exact(text, chunks, 200)
    pieces = [c for c in chunks if c.line_start == c.line_end == 3]
    assert len(pieces) > 30
    assert " ".join(c.text for c in pieces).split() == words  # no word cut or lost
    assert chunks[0].text == "before" and chunks[-1].text == "after"


def test_overlong_line_without_spaces_is_cut_by_characters() -> None:
    text = "a" * 1000
    chunks = chunk_document(doc(text, "data"), target_chars=300)
    assert [len(c.text) for c in chunks] == [300, 300, 300, 100]
    assert all((c.line_start, c.line_end) == (1, 1) for c in chunks)


PYTHON = '''\
"""Module docstring."""
import os

LIMIT = 10


@dataclass(frozen=True)
class Store:
    path: str

    def open(self) -> None:
        return None


# Parses the command line.
@click.command(
    name="run",
)
def parse_args(argv):
{body}


async def serve():
    pass


if __name__ == "__main__":
    parse_args(None)
'''


def test_python_chunks_break_before_definitions_and_name_them() -> None:
    body = "\n".join(f"    x{i} = compute({i})  # step" for i in range(40))
    text = PYTHON.format(body=body)
    lines = text.split("\n")
    chunks = chunk_document(doc(text, "code"), target_chars=400, overlap_chars=80)
    assert_exact(text, chunks, 400)
    store = next(c for c in chunks if "class Store:" in c.text)
    assert "@dataclass(frozen=True)" in store.text  # the decorator stayed with its class
    assert store.section == "class Store"  # module preamble before it is not a definition
    # The comment and the multi-line decorator above a def start its chunk.
    parse = next(c for c in chunks if "def parse_args(argv):" in c.text)
    assert parse.line_start == lines.index("# Parses the command line.") + 1
    body_chunks = [c for c in chunks if "x39 = " in c.text or "x20 = " in c.text]
    assert {c.section for c in body_chunks} == {"def parse_args"}
    # The end of a long function does not drag the next definition into its chunk.
    serve = next(c for c in chunks if "async def serve" in c.text)
    assert serve.line_start == lines.index("async def serve():") + 1
    assert serve.section == "async def serve"


def test_go_and_rust_definitions_are_sections() -> None:
    go = "package main\n\nfunc (s *Server) Start() error {\n\treturn nil\n}\n\nfunc main() {\n\trun()\n}\n"
    rust = "use std::io;\n\npub fn parse(x: &str) -> u32 {\n    0\n}\n\nimpl<T> Display for Wrap<T> {\n}\n"
    go_chunks = chunk_document(doc(go, "code"), target_chars=60, overlap_chars=0)
    rust_chunks = chunk_document(doc(rust, "code"), target_chars=60, overlap_chars=0)
    assert [c.section for c in go_chunks] == ["", "func (s *Server) Start", "func main"]
    # The `use` line fits with the function after it; the chunk is named after that function.
    assert [(c.line_start, c.section) for c in rust_chunks] == [(1, "pub fn parse"), (7, "impl<T> Display")]
    assert_exact(go, go_chunks, 60)
    assert_exact(rust, rust_chunks, 60)


def test_data_is_cut_into_line_windows() -> None:
    text = "id,name\n" + "\n".join(f"{i},name-{i}" for i in range(500))
    chunks = chunk_document(doc(text, "data"), target_chars=256, overlap_chars=0)
    assert_exact(text, chunks, 256)
    assert all(len(c.text) > 256 - 20 for c in chunks[:-1])  # windows are filled


def test_pdf_chunks_are_labelled_by_page(tmp_path: Path) -> None:
    pages = [[f"page {p} line {i} " + "z" * 30 for i in range(12)] for p in (1, 2, 3)]
    result = read_file(make_pdf(tmp_path / "manual.pdf", pages))
    chunks = chunk_document(result, target_chars=300, overlap_chars=0)
    assert_exact(result.text, chunks, 300)
    assert {c.section for c in chunks} == {"page 1", "page 2", "page 3"}  # cuts at page starts
    for chunk in chunks:
        page = chunk.section.removeprefix("page ")
        assert all(line.startswith(f"page {page} ") for line in chunk.text.split("\n"))


def test_short_pages_are_not_packed_together() -> None:
    two_pages = doc("a\nb\nc\nd", "prose", page_starts=(1, 3))
    chunks = chunk_document(two_pages, target_chars=1200, overlap_chars=150)
    assert [(c.section, c.text) for c in chunks] == [("page 1", "a\nb"), ("page 2", "c\nd")]


def test_overlap_stays_within_a_page() -> None:
    page = [f"line {i} " + "w" * 40 for i in range(20)]
    text = "\n".join(page + page)
    chunks = chunk_document(doc(text, "prose", page_starts=(1, 21)), target_chars=300)
    assert_exact(text, chunks, 300)
    assert all(c.line_end <= 20 for c in chunks if c.section == "page 1")
    assert all(c.line_start >= 21 for c in chunks if c.section == "page 2")
    page_one = [c for c in chunks if c.section == "page 1"]
    assert page_one[1].line_start <= page_one[0].line_end  # overlap inside the page


def test_split_line_on_a_page_keeps_the_page() -> None:
    text = "first page is long\nsecond"
    chunks = chunk_document(doc(text, "prose", page_starts=(1, 2)), target_chars=12)
    assert [(c.section, c.text) for c in chunks] == [
        ("page 1", "first page"),
        ("page 1", "is long"),
        ("page 2", "second"),
    ]


MIXED_LINES = [
    "# H", "## Sub", "", "", "   ", "```", "~~~", "# inside a fence?", "plain text line",
    "x" * 300, "word " * 120, "def f(x):", "    return x", "@decorator", "class A:", "}",
    "func main() {", "\tindented", "---", "- item", "#hashtag", "int main(void)", "// note",
]  # fmt: skip


@pytest.mark.parametrize("seed", range(40))
def test_citations_stay_exact_on_mixed_input(seed: int) -> None:
    rng = random.Random(seed)
    text = "\n".join(rng.choice(MIXED_LINES) for _ in range(rng.randint(1, 80)))
    target = rng.choice([10, 80, 200, 1200])
    overlap = rng.choice([0, 50, 150, 5000])
    for kind in ("markdown", "prose", "code", "data"):
        assert_exact(text, chunk_document(doc(text, kind), target, overlap), target)


@pytest.mark.parametrize("text", ["", "\n\n", "   \n\t\n"])
def test_blank_documents_give_no_chunks(text: str) -> None:
    for kind in ("markdown", "prose", "code", "data"):
        assert chunk_document(doc(text, kind)) == []


def test_unknown_kind_is_rejected() -> None:
    with pytest.raises(ValueError, match="kind"):
        chunk_document(doc("x", "spreadsheet"))


def test_markdown_file_end_to_end_cites_exact_lines(tmp_path: Path) -> None:
    source = MARKDOWN.replace("\n", "\r\n") * 20
    path = tmp_path / "guide.md"
    path.write_bytes(source.encode("utf-8"))
    result = read_file(path)
    chunks = chunk_document(result, target_chars=120, overlap_chars=40)
    assert_exact(result.text, chunks, 120)
    assert result.text.split("\n")[chunks[-1].line_end - 1] == "Search with ken."


def paragraphs_of_code(*sizes: int) -> str:
    blocks = ["\n".join(f"        value_{n}_{i} = compute(value_{n}_{i - 1}, {i})" for i in range(size)) for n, size in enumerate(sizes)]
    return "class Parser:\n    def parse(self):\n" + "\n\n".join(blocks) + "\n"


@pytest.mark.parametrize("sizes", [(20, 2, 40), (3, 1, 1, 60), (22, 30, 2, 2, 50)])
def test_no_chunk_repeats_the_tail_of_the_one_before(sizes: tuple[int, ...]) -> None:
    # A method of blank-separated paragraphs, one longer than a chunk: cut at the same
    # paragraph start again from inside the overlap, the chunker used to emit the tail
    # of a chunk once more per overlap line (lines 202-205, 203-205, 204-205).
    text = paragraphs_of_code(*sizes)
    chunks = chunk_document(doc(text, "code"), target_chars=1200, overlap_chars=150)
    assert_exact(text, chunks, 1200)
    spans = [(c.line_start, c.line_end) for c in chunks]
    assert all(b[0] > a[0] and b[1] > a[1] for a, b in zip(spans, spans[1:])), spans


@pytest.mark.parametrize(
    "text",
    ["# h\n" * 300, "#\n\n" * 300, "intro\n\n" + "## a\nbody\n\n### b\n" * 150, "# t\n" + "para\n\n" * 3000],
    ids=["headings", "blank-separated", "nested", "one long section"],
)
def test_chunking_stops_once_a_text_makes_more_chunks_than_allowed(text: str) -> None:
    whole = chunk_document(doc(text))
    assert chunk_document(doc(text), max_chunks=len(whole)) == whole
    cut = chunk_document(doc(text), max_chunks=len(whole) - 5)
    assert cut == whole[: len(whole) - 4]


# 10 MB of empty headings made five million chunks in a daemon thread (41 s, 2 GB) before
# agent text past [limits] max_chunks_per_file was refused; the old code takes over 30 s.
@pytest.mark.timeout(30)
async def test_agent_text_of_millions_of_headings_is_refused_without_chunking_it_all(db) -> None:
    with pytest.raises(InvalidRequest, match="more than 10000 chunks"):
        await add_text(db, TextDocument("Headings", "#\n" * 5_000_000, "t://headings"), ChunkingSettings(), 10_000)
    assert (await tally_store.tallies(db)).library_documents == 0
    added = await add_text(db, TextDocument("Headings", "#\n" * 10_000, "t://headings"), ChunkingSettings(), 10_000)
    assert added.chunks == 10_000
