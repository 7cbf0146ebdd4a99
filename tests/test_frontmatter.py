"""Where a note's front matter ends, as every stage that sets it apart reads it."""

from __future__ import annotations

import pytest

from kenning.text.frontmatter import body, front_matter_lines, title


@pytest.mark.parametrize(
    ("text", "lines"),
    [
        ("---\ntitle: Boiler\ndate: 2025-01-01\n---\n# Boiler", 4),
        ("---\r\ntitle: Boiler\r\n---\r\nbody", 3),
        ("---\nDate Created: 2025-01-01\n...\nbody", 3),
        ('---\n"title": Boiler\n---\nbody', 3),
        ("---\ndate:2025-01-01\n---\nbody", 3),
        ("---\n# exported by the wiki\n\ntitle: Boiler\n---\nbody", 5),
        ("---\ntags:\n  - home\n  - boiler\nsummary: >\n  Two lines\n  of it.\n---\nbody", 8),
        # A rule, not front matter: no key follows it, prose stands before the fence, or
        # the block never closes.
        ("---\nWe moved the boiler.\n---\nbody", 0),
        ("---\n# Weekly notes\n\nAgenda: budget, hiring\n\n## Budget\nThe office has 14 staff.\n\n---\nmore", 0),
        ("---\nWe met on Tuesday at 10:30 to plan.\n---\nbody", 0),
        ("---\ntitle: Boiler\nbody without a closing fence", 0),
        ("# Boiler\n---\ntitle: x\n---", 0),
        ("", 0),
        # TOML between `+++` fences (Hugo, Zola): keys, tables, arrays over lines.
        ('+++\ntitle = "Boiler"\ndate = 2024-05-05\n+++\nbody', 4),
        ('+++\ntags = [\n  "home",\n]\n[extra]\n"og.title" = "x"\n+++\nbody', 7),
        ("+++\nWe moved the boiler.\n+++\nbody", 0),
        ('+++\ntitle = "Boiler"\n---\nbody', 0),
    ],
)
def test_front_matter_ends_at_its_closing_fence(text, lines):
    assert front_matter_lines(text.split("\n")) == lines


def test_the_body_is_what_follows_the_front_matter_or_the_whole_text():
    assert body("---\ntitle: Boiler\n---\nThe boiler is a Vaillant.") == "The boiler is a Vaillant."
    assert body("---\ntitle: Boiler\n---") == ""
    assert body("The boiler is a Vaillant.\n---\n") == "The boiler is a Vaillant.\n---\n"
    assert body('+++\ndate = 2024-05-05\n+++\nThe boiler is a Vaillant.') == "The boiler is a Vaillant."


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("---\ntitle: Boiler service\ndate: 2025-01-01\n---\n# Boiler", "Boiler service"),
        ("---\r\n\"title\": 'Boiler: the 2025 service'\r\n---\r\nbody", "Boiler: the 2025 service"),
        # A folded block, an empty title, a nested one, and no front matter: the heading decides.
        ("---\ntitle: >\n  Boiler\n  service\n---\nbody", None),
        ('---\ntitle: ""\n---\nbody', None),
        ("---\nog:\n  title: Boiler\n---\nbody", None),
        ("We kept the title: Boiler.\n", None),
        # A rule, then prose: no front matter, whatever line starts with "title:".
        ("---\nIntro prose.\ntitle: Wrong\n---\n# Boiler", None),
        ('+++\ntitle = "Boiler service"\ndate = "2024-05-05"\n+++\n# Boiler', "Boiler service"),
    ],
)
def test_the_title_front_matter_gives(text, expected):
    assert title(text) == expected
