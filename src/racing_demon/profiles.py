"""Rule profiles: the built-in documents, and loading a profile from a file.

This is the edge where documents are validated (JSON Schema, then the checks a
schema cannot express); the engine only ever sees the resulting ``Rules``.

The built-in names are reserved (docs/rules.md §9): a document under one of them is that
built-in profile, digest for digest, or it is a custom profile that must be named
otherwise (``custom_variant``); a format-2 log that breaks this is refused.
"""

from __future__ import annotations

import dataclasses
import json
import re
from importlib import resources
from pathlib import Path
from typing import Any

from racing_demon.errors import RacingDemonError
from racing_demon.files import read_regular
from racing_demon.game.rules import Rules
from racing_demon.schema import checked_errors

BUILT_IN = ("table", "peer2peer", "nertz")
DEFAULT_PROFILE = "table"
CUSTOM_SUFFIX = "-custom"
_DIGEST = re.compile(r"[0-9a-f]{64}")


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
    problems = checked_errors("rules-profile", document)
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


def builtin_digest(name: str) -> str:
    """``Rules.digest()`` of the built-in profile ``name``."""
    # Package data, validated by the tests: no schema check needed to take its digest.
    return Rules.from_document(builtin_document(name)).digest()


def builtin_named(rules: Rules) -> str | None:
    """The built-in profile ``rules`` is exactly (by digest), or None for a custom one."""
    if rules.name in BUILT_IN and rules.digest() == builtin_digest(rules.name):
        return rules.name
    return None


def custom_variant(rules: Rules) -> Rules:
    """``rules``, renamed ``<name>-custom`` when it is a built-in profile altered but still
    under the built-in's name (which is reserved); any other rules as they are.

    Every tool that changes a built-in profile (a shorter match, a hand limit) and writes
    a log with it calls this, so that no log names altered rules as the built-in ones.
    """
    if rules.name not in BUILT_IN or builtin_named(rules) is not None:
        return rules
    return dataclasses.replace(rules, name=rules.name + CUSTOM_SUFFIX)


def pinned_digest(value: str) -> str:
    """The digest ``--rules NAME|FILE|SHA256`` pins: a built-in profile's, a profile
    document's from a .json file, or a SHA-256 digest (64 hex, either case; passed on in
    lowercase, as logs and reports write it)."""
    if _DIGEST.fullmatch(value.lower()):
        return value.lower()
    if value not in BUILT_IN and Path(value).suffix != ".json":
        raise ProfileError(
            f"{value!r} is neither a built-in profile ({', '.join(BUILT_IN)}), nor a .json "
            "profile document, nor a rules digest (64 hex)"
        )
    return load_rules(value).digest()


def differences_from_builtin(rules: Rules) -> tuple[str, ...] | None:
    """What ``rules`` change in the built-in profile they are a variant of, a field a line
    (``"match.target: 50 (table: 100)"``), in the document's order; None when they name no
    built-in profile (``table``, ``table-custom``), and ``()`` when they are the built-in.

    This is how a report says why rules are custom, not merely that they are."""
    base = rules.name.removesuffix(CUSTOM_SUFFIX)
    if base not in BUILT_IN:
        return None
    ours, theirs = rules.to_document(), Rules.from_document(builtin_document(base)).to_document()
    return tuple(
        f"{path}: {_shown(mine)} ({base}: {_shown(built_in)})"
        for path, mine, built_in in _changed("", ours, theirs)
        if path != "name"
    )


def _changed(path: str, ours: object, theirs: object) -> list[tuple[str, object, object]]:
    if isinstance(ours, dict) and isinstance(theirs, dict):
        return [
            change
            for key in [*ours, *(key for key in theirs if key not in ours)]
            for change in _changed(f"{path}.{key}" if path else key, ours.get(key), theirs.get(key))
        ]
    return [] if ours == theirs else [(path, ours, theirs)]


def _shown(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True)
