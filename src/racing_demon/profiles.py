"""Rule profiles: the built-in documents, and loading a profile from a file.

This is the edge where documents are validated (JSON Schema, then the checks a
schema cannot express); the engine only ever sees the resulting ``Rules``.
"""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import Any

from racing_demon.errors import RacingDemonError
from racing_demon.files import read_regular
from racing_demon.game.rules import Rules
from racing_demon.schema import schema_errors

BUILT_IN = ("table", "peer2peer", "nertz")
DEFAULT_PROFILE = "table"


class ProfileError(RacingDemonError, ValueError):
    """A profile document that cannot be used, with every reason found."""


def builtin_document(name: str) -> dict[str, Any]:
    if name not in BUILT_IN:
        raise ProfileError(f"unknown profile {name!r}: built-in profiles are {', '.join(BUILT_IN)}")
    text = resources.files("racing_demon").joinpath("profiles", f"{name}.json").read_text()
    document: dict[str, Any] = json.loads(text)
    return document


def rules_from_document(document: object) -> Rules:
    """Validate a profile document and build its ``Rules``."""
    problems = schema_errors("rules-profile", document)
    if not problems and isinstance(document, dict):
        players = document["players"]
        if players["min"] > players["max"]:
            problems.append(f"$.players: min {players['min']} is above max {players['max']}")
        per_card, match = document["scoring"]["per_foundation_card"], document["match"]
        if per_card < 1 and match["max_hands"] is None:
            # No hand scores above zero, so only the cap on hands would end the match.
            problems.append(
                f"$.match: target {match['target']} cannot be reached when a card in the "
                f"centre scores {per_card}: set max_hands"
            )
    if problems:
        raise ProfileError("invalid rules profile:\n  " + "\n  ".join(problems))
    assert isinstance(document, dict)
    return Rules.from_document(document)


def load_rules(name_or_path: str) -> Rules:
    """A built-in profile by name, or a profile document from a JSON file."""
    if name_or_path in BUILT_IN:
        return rules_from_document(builtin_document(name_or_path))
    path = Path(name_or_path)
    if not path.suffix == ".json":
        raise ProfileError(
            f"unknown profile {name_or_path!r}: use one of {', '.join(BUILT_IN)} "
            "or the path of a .json profile document"
        )
    try:
        document = json.loads(read_regular(path).decode("utf-8"))
    except OSError as error:
        raise ProfileError(f"cannot read profile {path}: {error.strerror}") from error
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ProfileError(f"profile {path} is not JSON: {error}") from error
    return rules_from_document(document)
