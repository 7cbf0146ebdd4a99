"""Short notes as people write them when something changes or might: a real daemon on a
small folder, every leg."""

from __future__ import annotations

from pathlib import Path

NOTES = {
    "2025-02-03-standup.md": (
        "---\ndate: 2025-02-03\n---\n# Team rituals\n\n"
        "The platform team standup is at 09:30 every weekday in room Fjord. Retro is every second Friday.\n"
    ),
    "2025-09-01-standup-change.md": (
        "---\ndate: 2025-09-01\n---\n# Calendar changes\n\n"
        "From 1 September the platform team standup moves to 10:15, in room Delta.\n"
    ),
    "2025-09-01-data-team.md": (
        "---\ndate: 2025-09-01\n---\n# Data team calendar\n\n"
        "From 1 September the data team standup moves to 11:00, in room Atlas.\n"
    ),
    "2025-05-02-laptop-policy.md": "---\ndate: 2025-05-02\n---\n# Laptop policy\n\nStaff laptops are replaced every four years.\n",
    "2025-05-06-laptop-options.md": (
        "---\ndate: 2025-05-06\n---\n# Laptop refresh options\n\n"
        "Option B: staff laptops replaced every three years. Under evaluation by finance.\n"
    ),
    "2025-05-07-laptop-costs.md": (
        "---\ndate: 2025-05-07\n---\n# Laptop costs\n\n"
        "In a scenario where staff laptops are replaced every two years, the hardware budget would double.\n"
    ),
}


def test_a_change_note_answers_now_and_options_and_scenarios_rank_as_what_they_are(library, tmp_path):
    notes = tmp_path / "notes"
    notes.mkdir()
    for name, text in NOTES.items():
        (notes / name).write_text(text)
    library.configure([{"name": "notes", "path": notes}])
    daemon = library.daemon()
    daemon.wait_idle("notes")

    def first(query: str) -> str:
        return Path(daemon.call("search", {"query": query})["hits"][0]["path"]).name

    # A short note of a change, titled otherwise, says what holds now.
    assert first("Which room is the platform team standup in now?") == "2025-09-01-standup-change.md"
    assert first("What time is the platform team standup now?") == "2025-09-01-standup-change.md"
    # The data team's standup moving says nothing of the platform team's.
    assert first("When is the data team standup now?") == "2025-09-01-data-team.md"
    hits = daemon.call("search", {"query": "Which room is the platform team standup in now?"})["hits"]
    names = [Path(hit["path"]).name for hit in hits]
    assert names.index("2025-02-03-standup.md") < names.index("2025-09-01-data-team.md")
    # An option under evaluation and a scenario are not the policy.
    assert first("How often are staff laptops replaced?") == "2025-05-02-laptop-policy.md"
    # "every four years" counts years: no note says how many laptops there are, and
    # three notes giving other periods do not disagree about a count of laptops.
    result = daemon.call("search", {"query": "How many staff laptops are there?"})
    assert result["hits"] == [] and "a number" in result["abstained"]
    assert not any(hit["conflicts_with"] for hit in result["withheld"])
    daemon.stop()
