"""The kind-narrowed record validation agrees with the whole log-record schema."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from racing_demon.game.rules import MAX_HANDS
from racing_demon.log.canonical import canonical_bytes
from racing_demon.log.reader import DEFAULT_LIMITS
from racing_demon.schema import load_schema, record_errors, schema_errors

GOLDEN = Path(__file__).resolve().parent / "golden" / "logs"


def records() -> list[dict[str, object]]:
    return [
        json.loads(line)
        for path in sorted(GOLDEN.glob("*.jsonl"))
        for line in path.read_bytes().splitlines()
    ]


def mutations(value: dict[str, object]) -> list[object]:
    body = dict(value["body"])  # type: ignore[call-overload]
    mutated: list[object] = [value, {**value, "extra": 1}, {"body": body}]
    for key in list(body):
        mutated.append({**value, "body": {k: v for k, v in body.items() if k != key}})
        mutated.append({**value, "body": {**body, key: "x"}})
        mutated.append({**value, "body": {**body, key: -1}})
    mutated.append({**value, "body": {**body, "kind": "nonsense"}})
    mutated.append({**value, "body": {**body, "surprise": True}})
    return mutated


@pytest.mark.parametrize(
    "kind", ["genesis", "hand_start", "move", "bounce", "stall", "hand_end", "final", "tie"]
)
def test_narrowed_validation_accepts_and_refuses_exactly_like_the_whole_schema(kind: str) -> None:
    sample = next((r for r in records() if r["body"]["kind"] == kind), None)  # type: ignore[index]
    if sample is None:
        pytest.skip(f"no {kind} record in the golden logs")
    for value in mutations(sample):
        whole = schema_errors("log-record", value)
        assert bool(record_errors(value)) == bool(whole), (value, whole)


def test_the_schemas_cap_hands_where_every_match_ends() -> None:
    """A log cannot number a hand past the cap and a profile cannot ask for more: one
    number, ``rules.MAX_HANDS``. (The final record's list of hands needs no bound of its
    own: it must be the hands played, or it is SCORE_MISMATCH.)"""
    profile = load_schema("rules-profile")["properties"]["match"]["properties"]
    assert profile["max_hands"]["oneOf"][1]["maximum"] == MAX_HANDS
    kinds = load_schema("log-record")["$defs"]
    numbered = [name for name, spec in kinds.items() if "hand" in spec.get("properties", {})]
    assert len(numbered) == 5
    assert {kinds[name]["properties"]["hand"]["maximum"] for name in numbered} == {MAX_HANDS}
    stall = next(r for r in records() if r["body"]["kind"] == "stall")  # type: ignore[index]
    for number, refused in ((MAX_HANDS, False), (MAX_HANDS + 1, True)):
        value = {**stall, "body": {**stall["body"], "hand": number}}  # type: ignore[dict-item]
        assert bool(record_errors(value)) is refused


def test_the_widest_final_record_fits_one_line() -> None:
    """The table must never write a record its verifier refuses: a final record of the most
    seats any profile allows, every one of the cap's hands scored as widely as a profile's
    scoring allows, is still shorter than the default line limit."""
    profile = load_schema("rules-profile")["properties"]
    seats = profile["players"]["properties"]["max"]["maximum"]
    scoring = profile["scoring"]["properties"]
    best = 52 * scoring["per_foundation_card"]["maximum"]
    worst = 13 * scoring["per_demon_card"]["minimum"]
    widest = max((best, worst), key=lambda score: len(str(score)))
    body = {
        "v": 1,
        "game": "f" * 32,
        "seq": DEFAULT_LIMITS.max_records,
        "prev": "f" * 64,
        "t_ms": 10**15,
        "kind": "final",
        "reason": "abandoned",
        "hands": [[widest] * seats] * MAX_HANDS,
        "totals": [widest * MAX_HANDS] * seats,
        "winners": list(range(seats)),
        "secret": "f" * 64,
        "records": DEFAULT_LIMITS.max_records,
    }
    line = canonical_bytes({"body": body, "sigs": {"table": "f" * 128}})
    assert len(line) < DEFAULT_LIMITS.max_line_bytes
    assert record_errors(json.loads(line)) == []
