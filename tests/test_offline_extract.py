"""The offline extractor: the names a query would contain, linked when a sentence links them."""

from __future__ import annotations

import concurrent.futures
import os
import random
import subprocess
import sys

import pytest

from kenning.workers import offline_extract
from kenning.store.records import Extraction, ExtractionFailed
from kenning.text.names import normalize_name
from kenning.workers.offline_extract import (
    MAX_ENTITIES,
    MAX_NAME_CHARS,
    MAX_PHRASES,
    MAX_RELATIONS,
    OfflineExtractor,
    extract_text,
)


DETERMINISM_TEXT = (
    "# Project Falcon\n\nMaria Chen uses `os.path.join` and load_config at NASA with Bob Stone. "
    "The breast cancer study ran in Oslo, Bergen and Tromsø; breast cancer survival rose. "
    "Acme Corp, Orchard Lane Capital and Quill & Ledger paid. 東京タワーは日本の電波塔です。"
)


def names(text: str) -> dict[str, str]:
    """Entity name -> kind."""
    return {entity.name: entity.kind for entity in extract_text(text).entities}


def linked(extraction: Extraction, a: str, b: str, kind: str = "co_occurs") -> bool:
    return any({r.source, r.target} == {a, b} and r.kind == kind for r in extraction.relations)


def test_people_projects_and_organisations_are_found_and_linked() -> None:
    result = extract_text("Maria Chen leads Project Falcon at Acme Corp.")
    found = {entity.name: entity.kind for entity in result.entities}
    assert {"Maria Chen", "Project Falcon", "Acme Corp"} <= found.keys()
    assert found["Maria Chen"] == "name"
    assert linked(result, "Maria Chen", "Project Falcon")


def test_names_with_connectors_stay_whole() -> None:
    found = names("She moved from the Bank of England to play Ludwig van Beethoven at night.")
    assert {"Bank of England", "Ludwig van Beethoven"} <= found.keys()


def test_sentence_openers_are_not_entities() -> None:
    found = names("The results were clear. However, the team disagreed. Recent work helped. This is fine.")
    assert not {"The", "However", "Recent", "This"} & found.keys()


def test_a_name_at_a_sentence_start_counts_once_the_chunk_names_it_elsewhere() -> None:
    assert "Python" in names("Python is fast. Many teams use Python daily.")
    assert "Hanna" in names("Hanna Kaur joined in 2020. Hanna works from the Saltby office.")
    # Runs of capitals and acronyms need no second mention.
    assert {"Maria Chen", "NASA"} <= names("Maria Chen arrived. NASA called.").keys()


def test_a_heading_of_one_capitalised_word_names_what_the_page_is_about() -> None:
    assert "Skerrivaig" in names("# Skerrivaig\n\nIsland port and our second office.")
    # A section label is no name, nor is a heading's first word in a longer heading.
    assert not names("# Summary\n\nWe met twice.")
    assert "Build" not in names("# Build cache runbook\n\nClear it weekly.")


def test_common_words_split_a_run_of_capitals() -> None:
    found = names("We met at The Bank of England. However Maria Chen was late.")
    assert {"Bank of England", "Maria Chen"} <= found.keys()
    assert not any(name.startswith(("The ", "However ")) for name in found)


def test_code_identifiers_from_a_python_snippet() -> None:
    snippet = '''
def chunk_document(doc: ReadResult) -> list[Chunk]:
    """Split a document."""
    path = os.path.join(root, name)
    return FolderScanner(path).sweep()
'''
    result = extract_text(snippet)
    found = {entity.name: entity.kind for entity in result.entities}
    assert found["chunk_document"] == "code"
    assert found["ReadResult"] == "code"
    assert found["FolderScanner"] == "code"
    assert found["os.path.join"] == "code"
    assert linked(result, "os.path.join", "os.path", "member_of")
    # Local details are not entities: `self`, plain locals, dunders, builtins.
    assert not {"path", "root", "len", "__init__"} & found.keys()


def test_markdown_backticks_are_code() -> None:
    found = names("Run `ken daemon` first, then call `extract_text()` on each chunk.")
    assert found["ken daemon"] == "code"
    assert found["extract_text"] == "code"


def test_acronyms_and_their_long_forms() -> None:
    result = extract_text(
        "NASA published the HTTP/2 notes. The Food and Drug Administration (FDA) agreed. "
        "Randomized controlled trials (RCTs) were pooled."
    )
    found = {entity.name: entity for entity in result.entities}
    assert found["NASA"].kind == found["HTTP/2"].kind == "acronym"
    assert found["FDA"].aliases == ("Food and Drug Administration",)
    # The plural is the acronym a query names.
    assert found["RCT"].aliases == ("Randomized controlled trials",)
    assert "Q2" not in names("Launch is planned for Q2 2026.")


def test_lowercase_concept_phrases_favour_the_recurring_topic() -> None:
    text = (
        "Statins may lower breast cancer mortality among older women. The breast cancer "
        "recurrence rate also fell, and breast cancer survival rose in the cohort."
    )
    result = extract_text(text)
    phrases = [entity.name for entity in result.entities if entity.kind == "phrase"]
    assert "breast cancer" in phrases
    assert len(phrases) <= MAX_PHRASES
    assert all(phrase == phrase.lower() and 2 <= len(phrase.split()) <= 4 for phrase in phrases)


def test_a_heading_is_linked_to_what_its_page_says() -> None:
    page = "# Urban Noise Panel\n\nThe dataset was collected by Quill & Ledger. Its curator is David Quispe."
    result = extract_text(page)
    assert linked(result, "Urban Noise Panel", "Quill & Ledger")
    assert linked(result, "Urban Noise Panel", "David Quispe")
    # Without the heading, two sentences do not link their entities.
    body = extract_text("Quill & Ledger collected it. Its curator is David Quispe.")
    assert not linked(body, "Quill & Ledger", "David Quispe")


def test_cjk_runs_become_phrases_a_cjk_query_can_name() -> None:
    found = names("東京タワーは日本の電波塔です。机器学习是人工智能的一个分支。")
    assert {"東京", "タワー", "日本", "電波塔", "机器学习", "人工智能"} <= found.keys()
    assert all(2 <= len(name) <= 8 for name in found)


def test_same_text_same_result_in_any_process() -> None:
    # Set order changes with the hash seed, so a result built by iterating a set would
    # differ between daemon runs while the signature stayed the same.
    script = (
        "import sys; from kenning.workers.offline_extract import extract_text; "
        "print(repr(extract_text(sys.stdin.read())))"
    )
    outputs = {
        subprocess.run(
            [sys.executable, "-c", script],
            input=DETERMINISM_TEXT,
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, "PYTHONHASHSEED": seed},
        ).stdout
        for seed in ("1", "2", "3")
    }
    assert outputs == {repr(extract_text(DETERMINISM_TEXT)) + "\n"}


def test_empty_text_gives_an_empty_extraction() -> None:
    assert extract_text("") == Extraction()
    assert extract_text(" \n\t ") == Extraction()


def test_every_name_is_normalisable_and_relations_only_join_its_entities() -> None:
    text = "Maria Chen met Bob Stone at Acme Corp in Oslo. They discussed `load_config` and HTTP/2."
    result = extract_text(text)
    entity_names = {entity.name for entity in result.entities}
    keys = [normalize_name(name) for name in entity_names]
    assert all(keys) and len(set(keys)) == len(keys)
    assert all({r.source, r.target} <= entity_names and r.source != r.target for r in result.relations)


ADVERSARIAL = {
    "capitalised words": "Aa " * 17_000,
    "one capitalised word": "A" * 50_000,
    "connectors": "Bank of " * 6_000 + "end",
    "snake": "a_" * 25_000,
    "dots": "a." * 25_000,
    "backticks": "`" * 50_000,
    "open backticks": "`a" * 25_000,
    "parentheses": "(" * 50_000,
    "calls": "x(" * 25_000,
    "hashes": "#" * 50_000,
    "full stops": ". " * 25_000,
    "initials": "A. " * 17_000,
    "han": "東" * 50_000,
    "spaces then kana": " " * 50_000 + "の",
    "url": "http://" + "a" * 50_000,
    "many distinct entities": " ".join(f"fn_{i} Name{i}x Person{chr(65 + i % 26)} NS{i}" for i in range(3_000)),
    "soup": "".join(random.Random(1).choice("aA_.`(){}[] \n#:;-'\"é東の1") for _ in range(50_000)),
}


@pytest.mark.parametrize("text", ADVERSARIAL.values(), ids=ADVERSARIAL.keys())
def test_a_huge_adversarial_chunk_is_read_quickly_within_the_caps(text: str) -> None:
    # Linear regexes read 50,000 characters in milliseconds; catastrophic backtracking
    # would take minutes, so a generous deadline tells the two apart on any machine.
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        result = pool.submit(extract_text, text).result(timeout=5)
    assert len(result.entities) <= MAX_ENTITIES
    assert len(result.relations) <= MAX_RELATIONS
    assert all(len(entity.name) <= MAX_NAME_CHARS for entity in result.entities)
    assert sum(entity.kind == "phrase" for entity in result.entities) <= MAX_PHRASES + offline_extract.MAX_CJK


async def test_the_extractor_returns_one_result_per_text() -> None:
    extractor = OfflineExtractor()
    texts = ["Maria Chen leads Project Falcon.", "", "def load_config(path): ..."]
    results = await extractor.extract(texts)
    await extractor.close()
    assert len(results) == len(texts)
    assert [type(result) for result in results] == [Extraction] * 3
    assert results[0] == extract_text(texts[0])
    assert results[1] == Extraction()
    assert extractor.signature == "offline:v3"


async def test_one_failing_chunk_does_not_fail_the_batch(monkeypatch: pytest.MonkeyPatch) -> None:
    real = offline_extract.extract_text

    def fragile(text: str) -> Extraction:
        if "boom" in text:
            raise ValueError("boom")
        return real(text)

    monkeypatch.setattr(offline_extract, "extract_text", fragile)
    results = await OfflineExtractor().extract(["Maria Chen leads.", "boom", "NASA called."])
    assert isinstance(results[0], Extraction) and isinstance(results[2], Extraction)
    assert isinstance(results[1], ExtractionFailed)
    assert not results[1].retryable  # the same text would fail the same way again
