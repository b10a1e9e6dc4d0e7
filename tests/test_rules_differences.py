"""Why rules are custom: what a variant changes in its built-in profile (issue 29, items 14
and 16: reports say "custom" and what differs, not only the name)."""

import dataclasses

from racing_demon.game.rules import Rules
from racing_demon.profiles import custom_variant, differences_from_builtin, load_rules


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
