"""docs/protocol.md against what the daemon serves: a client is written from that page, so a
method, a param or an error code missing from it is one no client knows to use."""

from __future__ import annotations

import re
from pathlib import Path
from typing import cast

import pytest

from kenning.daemon import protocol
from kenning.daemon.methods import build_methods
from kenning.errors import RpcError
from kenning.service.library import Library

DOC = (Path(__file__).resolve().parent.parent / "docs" / "protocol.md").read_text()


def _method_sections() -> dict[str, str]:
    """Each `### `name`` heading's text, under every method the heading names."""
    sections = {}
    for heading, body in re.findall(r"^### ([^\n]+)\n(.*?)(?=^#{1,3} |\Z)", DOC, re.M | re.S):
        for name in re.findall(r"`([^`]+)`", heading):
            sections[name] = body
    return sections


def test_every_method_the_daemon_serves_is_documented_and_no_other(library):
    library.configure([])
    daemon = library.daemon()
    with pytest.raises(RpcError) as unknown:
        daemon.call("no.such.method")
    assert unknown.value.code == protocol.METHOD_NOT_FOUND
    served = set(str(unknown.value).split("methods: ", 1)[1].split(", "))
    assert set(_method_sections()) == served
    # The table the daemon dispatches on (its handlers are not called here, so it needs
    # no library) is the one whose params are checked below.
    assert set(build_methods(cast(Library, None))) == served


def test_every_param_of_every_method_is_documented_under_it():
    sections = _method_sections()
    missing = [
        f"{name}: {field}"
        for name, method in build_methods(cast(Library, None)).items()
        for field in method.params.model_fields
        if f"`{field}`" not in sections[name]
    ]
    assert missing == []


def test_the_error_table_lists_every_code_the_daemon_answers_with():
    documented = {int(code) for code in re.findall(r"^\| (-32\d{3}) \|", DOC, re.M)}
    codes = {
        value
        for name, value in vars(protocol).items()
        if name.isupper() and isinstance(value, int) and -32768 <= value <= -32000
    }
    assert documented == codes
