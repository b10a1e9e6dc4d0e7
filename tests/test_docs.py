"""The documentation stands on its own: nothing sends a reader to files outside the repository.

The rule texts the profiles follow are named by their rule set ("Table rules", "Table rules
(French)", "peer2peer rules", "Nertz rules"), never by the numbers of the copies kept in
the development workspace, and no path leads into that workspace's ``shared/`` folder.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CHECKED = ("README.md", "docs", "src", "tests")

POINTERS = re.compile(
    "|".join(
        (
            r"\bshared/",  # a path into the workspace
            r"\bseeds? 00\d",  # "seed 003", "seeds 000 and 004"
            r"(?<![\w,.])00[0234](?::|'s) ",  # a rule text's number opening a quotation
        )
    ),
    re.IGNORECASE,
)


def _files() -> Iterator[Path]:
    for name in CHECKED:
        top = ROOT / name
        paths = [top] if top.is_file() else sorted(top.rglob("*"))
        # This file is left out: its own examples would match.
        yield from (
            p
            for p in paths
            if p.is_file() and "__pycache__" not in p.parts and p != Path(__file__).resolve()
        )


def _pointers(path: Path) -> list[str]:
    text = path.read_bytes().decode("utf-8", errors="replace")
    relative = path.relative_to(ROOT).as_posix()
    return [
        f"{relative}:{number}: {line.strip()[:100]}"
        for number, line in enumerate(text.splitlines(), start=1)
        if POINTERS.search(line)
    ]


def test_no_file_points_at_the_workspace_rule_texts() -> None:
    found = [hit for path in _files() for hit in _pointers(path)]
    assert found == [], "name the rule set in words instead:\n" + "\n".join(found)


def test_the_patterns_catch_what_they_are_for() -> None:
    for line in (
        "see shared/seeds/000_x.txt",
        "the profile follows seed 003",
        '"source": "seeds 000 (English) and 004 (French)"',
        '    """002: "Two to four players"',
        "    # 003: the bottom part of a run",
        """replace(rules, points_per_demon_card=-1)  # 003's "-1" variation""",
    ):
        assert POINTERS.search(line), line
    for line in (
        "def test_seed_003_worked_example() -> None:",
        "# About one pack in 80,000: a word might be rejected",
        'Nertz rules: "the card that lands first counts"',
        "archive/round-1/game-002.jsonl",
        "a shared foundation",
    ):
        assert not POINTERS.search(line), line
