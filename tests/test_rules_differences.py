"""Why rules are custom: what a variant changes in its built-in profile (issue 29, items 14
and 16: reports say "custom" and what differs, not only the name)."""

import dataclasses
import json
from pathlib import Path

from click.testing import CliRunner

from racing_demon.cli import main
from racing_demon.game.rules import Rules
from racing_demon.profiles import (
    builtin_document,
    custom_variant,
    differences_from_builtin,
    load_rules,
)


def test_a_built_in_profile_differs_in_nothing() -> None:
    for name in ("table", "peer2peer", "nertz"):
        assert differences_from_builtin(load_rules(name)) == ()


def test_a_variant_names_each_field_it_changes_with_the_built_in_value() -> None:
    document = load_rules("nertz").to_document()
    document["match"]["target"] = 50
    document["stock"]["turn"] = 1
    variant = custom_variant(Rules.from_document(document))
    assert variant.name == "nertz-custom"
    assert differences_from_builtin(variant) == (
        "stock.turn: 1 (nertz: 3)",
        "match.target: 50 (nertz: 100)",
    )


def test_rules_named_after_no_built_in_profile_have_nothing_to_compare() -> None:
    assert differences_from_builtin(dataclasses.replace(load_rules("table"), name="house")) is None


def test_rules_command_warns_of_a_file_under_a_built_in_name(tmp_path: Path) -> None:
    """Issue 29, item 14 (say what differs from the built-in profile): `rules FILE`
    validated a document named `table` with another target in silence; every table then
    refused it (RESERVED_RULES_NAME). It stays valid (exit 0), with a note on standard
    error naming what differs and the name to give."""
    document = builtin_document("table")
    document["match"]["target"] = 20
    path = tmp_path / "short.json"
    path.write_text(json.dumps(document))
    result = CliRunner().invoke(main, ["rules", str(path)])
    assert result.exit_code == 0 and json.loads(result.stdout)["name"] == "table"
    assert result.stderr == (
        "note: these rules are named like the built-in profile 'table' but are not it "
        "(match.target: 20 (table: 100)): a table refuses to write a log with them "
        "(RESERVED_RULES_NAME); name them 'table-custom'\n"
    )
    assert CliRunner().invoke(main, ["rules", "table"]).stderr == ""
