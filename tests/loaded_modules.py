"""Which heavy libraries a process holds; run inside parse workers, so stdlib only."""

from __future__ import annotations

import sys

# What neither the daemon nor a parse worker runs: detect-secrets' package and the
# `requests` it imports (the redactor reads a copy of its formats), and httpx's command
# line with the terminal libraries it imports (click, rich, pygments).
HEAVY = ("detect_secrets", "requests", "httpx._main", "rich", "pygments", "click")


def loaded(names: tuple[str, ...] = HEAVY) -> list[str]:
    return [name for name in names if sys.modules.get(name) is not None]
