"""The tournament plan (docs/tournament.md): the known answers, recomputed here from the spec
alone; every refusal of a plan file with its reason code and member; contributions; what the
rotation guarantees; the printable sheets."""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import hmac
import itertools
import json
import re
import struct
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
import rfc8785
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from hypothesis import given
from hypothesis import strategies as st

from racing_demon.game.deal import MatchSeed, commitment, derive_pack
from racing_demon.game.duplicate import Shape, entropy_digest
from racing_demon.log.keys import raw_public_bytes
from racing_demon.log.signing import sign
from racing_demon.profiles import load_rules
from racing_demon.schema import schema_errors
from racing_demon.tournament.contribute import (
    STATEMENT_V1,
    Contribution,
    Terms,
    check_contribution,
    contribution_document,
    sign_contribution,
    unsigned_contribution,
)
from racing_demon.tournament.plan import (
    Plan,
    PlanCode,
    PlanError,
    check_plan,
    load_contribution,
    load_plan,
    make_plan,
    make_terms,
    plan_from_document,
)
from racing_demon.tournament.sheets import render_sheets

from conftest import load_script

ROOT = Path(__file__).resolve().parents[1]
KAT_PATH = ROOT / "tests" / "vectors" / "tournament-kat.json"
GUIDE = ROOT / "docs" / "tournament.md"

SECRET = bytes(range(32))
KEY = Ed25519PrivateKey.from_private_bytes(bytes(range(32)))
OTHER_KEY = Ed25519PrivateKey.from_private_bytes(bytes(range(32, 64)))


def kat() -> dict[str, Any]:
    vectors: dict[str, Any] = json.loads(KAT_PATH.read_text(encoding="utf-8"))
    return vectors


def terms_of(
    tables: int = 3, seats: int = 4, hands: int = 2, name: str = "Test cup", rules: str = "table"
) -> Terms:
    return make_terms(SECRET, Shape(name, tables, seats, hands), load_rules(rules))


def a_plan(tables: int = 3, seats: int = 4, hands: int = 2, name: str = "Test cup") -> Plan:
    """A plan of an unsigned contribution (its bytes sort first) and alice's signed one."""
    terms = terms_of(tables, seats, hands, name)
    contributions = (
        sign_contribution(KEY, terms, "alice"),
        Contribution("organiser", b"\x00sixteen bytes!!"),
    )
    return make_plan(SECRET, terms.shape, load_rules("table"), contributions)


# -- the known answers, from the spec alone ------------------------------------------------


def _lp(data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + data


def _pae(kind: str, body: bytes) -> bytes:
    payload = f"application/vnd.racing-demon.log.v2.{kind}".encode()
    return b"DSSEv1 %d %b %d %b" % (len(payload), payload, len(body), body)


def test_the_kat_file_is_what_the_script_generates() -> None:
    regen = load_script("regen_tournament_vectors")
    assert KAT_PATH.read_text(encoding="utf-8") == regen.render(regen.build_vectors())


def test_the_regen_check_fails_on_a_stale_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    regen = load_script("regen_tournament_vectors")
    stale = tmp_path / "tournament-kat.json"
    stale.write_text(KAT_PATH.read_text(encoding="utf-8").replace('"KAT cup"', '"KAT cap"', 1))
    monkeypatch.setattr(regen, "VECTORS_PATH", stale)
    assert regen.main(["--check"]) == 1
    assert regen.main([]) == 0
    assert regen.main(["--check"]) == 0


@pytest.mark.parametrize("index", [0, 1])
def test_the_known_answers_follow_from_the_spec_alone(index: int) -> None:
    """docs/tournament.md steps 1-7, written again here with hashlib, hmac and rfc8785:
    only the pack shuffle (docs/deal-spec.md steps 4-6, KAT-tested on its own) is the
    package's."""
    vector = kat()["tournaments"][index]
    name, tables, seats, hands = (vector[k] for k in ("name", "tables", "seats", "hands"))
    secret = bytes.fromhex(vector["secret"])
    # Step 1: C = SHA-256(lp("racing-demon/commit/v1") || lp(secret)).
    assert (
        vector["commitment"]
        == hashlib.sha256(_lp(b"racing-demon/commit/v1") + _lp(secret)).hexdigest()
    )
    # Step 2: E over every contribution, in the canonical order (by their bytes); a signed
    # one is its key's signature over the terms.
    entropies = [bytes.fromhex(c["entropy"]) for c in vector["contributions"]]
    assert entropies == sorted(entropies)
    parts = _lp(b"racing-demon/tournament-entropy/v1") + struct.pack(">I", len(entropies))
    entropy = hashlib.sha256(parts + b"".join(map(_lp, entropies))).digest()
    assert vector["entropy"] == entropy.hex()
    for item in vector["contributions"]:
        if item["key"] is None:
            continue
        stated = {
            "commitment": vector["commitment"],
            "contributor": item["by"],
            "tournament": name,
            "tables": tables,
            "seats": seats,
            "hands": hands,
            "rules_sha256": vector["rules_sha256"],
        }
        statement = json.dumps(
            stated,
            separators=(",", ":"),
            sort_keys=True,
            ensure_ascii=False,
        ).encode()
        assert item["statement"].encode() == statement
        public = Ed25519PrivateKey.from_private_bytes(bytes(range(32))).public_key()
        assert public.public_bytes_raw().hex() == item["key"]
        public.verify(bytes.fromhex(item["entropy"]), _pae("entropy", statement))
    # Step 3: PRK = HMAC(key = label, lp(secret) || lp(name) || u32 T, S, H || E).
    shape_bytes = _lp(name.encode()) + struct.pack(">III", tables, seats, hands)
    prk = hmac.digest(
        b"racing-demon/tournament-seed/v1", _lp(secret) + shape_bytes + entropy, "sha256"
    )
    assert vector["prk"] == prk.hex()
    # Step 4: pack k of hand h is deal-spec's pack of "seat" k.
    seed = MatchSeed(prk)
    packs = {
        (hand, index): derive_pack(seed, hand, index)
        for hand in range(1, hands + 1)
        for index in range(seats)
    }
    for pack in vector["packs"]:
        assert pack["number"] == (pack["hand"] - 1) * seats + pack["index"] + 1
        assert pack["faces"] == [card.face for card in packs[pack["hand"], pack["index"]]]
    # Step 5: seat s of table t plays pack (s + t - 1) mod S, its cards owned by seat s.
    for entry in vector["schedule"]:
        table = entry["table"]
        for scheduled in entry["hands"]:
            hand = scheduled["hand"]
            assert scheduled["packs"] == [
                (hand - 1) * seats + (seat + table - 1) % seats + 1 for seat in range(seats)
            ]
    for entry in vector["hand_start"]:
        table, hand = entry["table"], entry["hand"]
        for seat, digest in enumerate(entry["digests"]):
            index = (seat + table - 1) % seats
            owned = bytes(card.index for card in packs[hand, index])
            label = _lp(b"racing-demon/pack/v1") + struct.pack(">II", hand, seat)
            assert digest == hashlib.sha256(label + owned).hexdigest()
    # Step 6: D over every pack, hand by hand, index by index.
    deal_set = hashlib.sha256(_lp(b"racing-demon/deal-set/v1") + shape_bytes)
    for hand in range(1, hands + 1):
        for index in range(seats):
            deal_set.update(bytes(card.index for card in packs[hand, index]))
    assert vector["deal_set"] == deal_set.hexdigest()
    # Step 7: P over the plan body's RFC 8785 bytes (rfc8785 is an independent encoder).
    plan = make_plan(
        secret,
        Shape(name, tables, seats, hands),
        load_rules(vector["profile"]),
        tuple(
            Contribution(
                c["by"],
                bytes.fromhex(c["entropy"]),
                None if c["key"] is None else bytes.fromhex(c["key"]),
            )
            for c in vector["contributions"]
        ),
    )
    body = plan.body()
    assert body["schedule"] == vector["schedule"] and body["rules_sha256"] == vector["rules_sha256"]
    label = b"racing-demon/plan/v1"
    assert vector["plan"] == hashlib.sha256(_lp(label) + rfc8785.dumps(body)).hexdigest()


def test_the_guides_worked_example_is_the_first_known_answer() -> None:
    """docs/tournament.md's worked example: every value it prints is the KAT's."""
    text = GUIDE.read_text(encoding="utf-8")
    begin = "<!-- worked example: tournament (begin) -->"
    end = "<!-- worked example: tournament (end) -->"
    block = text[text.index(begin) + len(begin) : text.index(end)]
    fields = dict(
        line.split(": ", 1) for line in block.splitlines() if ": " in line and "```" not in line
    )
    vector = kat()["tournaments"][0]
    organiser, alice = vector["contributions"]
    expected = {
        "name": vector["name"],
        "tables, seats, hands": f"{vector['tables']}, {vector['seats']}, {vector['hands']}",
        "profile": vector["profile"],
        "secret": vector["secret"],
        "commitment C": vector["commitment"],
        "contribution 1 (organiser, unsigned)": organiser["entropy"],
        "contribution 2 (alice) statement": alice["statement"],
        "contribution 2 (alice) key": alice["key"],
        "contribution 2 (alice) entropy": alice["entropy"],
        "entropy E": vector["entropy"],
        "PRK": vector["prk"],
        "deal set D": vector["deal_set"],
        "rules_sha256": vector["rules_sha256"],
        "plan P": vector["plan"],
        "pack 1 (hand 1, index 0)": " ".join(vector["packs"][0]["faces"]),
        "table 2, hand 1, seat 0 plays pack": "2",
        "table 2, hand 1, seat 0 hand_start digest": vector["hand_start"][2]["digests"][0],
    }
    assert vector["hand_start"][2]["table"] == 2 and vector["hand_start"][2]["hand"] == 1
    assert fields == expected


# -- reading a plan file: the round trip and every refusal ---------------------------------


def write(tmp_path: Path, document: object, name: str = "plan.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(document, indent=2, ensure_ascii=False), encoding="utf-8")
    return path


def test_a_plan_file_reads_back_as_the_plan_it_was_written_from(tmp_path: Path) -> None:
    plan = a_plan()
    document = plan.to_document()
    assert schema_errors("tournament-plan", document) == []
    loaded = load_plan(write(tmp_path, document))
    assert loaded == plan
    assert loaded.to_document() == document
    check_plan(loaded)
    check_plan(loaded, SECRET)


def _redigest(document: dict[str, Any]) -> dict[str, Any]:
    """``document`` with its plan commitment recomputed, as a dishonest writer would."""
    body = {key: value for key, value in document.items() if key != "plan"}
    label = b"racing-demon/plan/v1"
    return {**body, "plan": hashlib.sha256(_lp(label) + rfc8785.dumps(body)).hexdigest()}


def _set(path: tuple[str | int, ...], value: object) -> Any:
    def change(document: dict[str, Any]) -> dict[str, Any]:
        changed = copy.deepcopy(document)
        target: Any = changed
        for step in path[:-1]:
            target = target[step]
        target[path[-1]] = value
        return changed

    return change


def _drop(key: str) -> Any:
    return lambda document: {k: v for k, v in document.items() if k != key}


def _swap_packs(document: dict[str, Any]) -> dict[str, Any]:
    changed = copy.deepcopy(document)
    packs = changed["schedule"][1]["hands"][0]["packs"]
    packs[0], packs[1] = packs[1], packs[0]
    return _redigest(changed)


def _redigested(change: Any) -> Any:
    return lambda document: _redigest(change(document))


def _rules_with(section: str, key: str, value: object) -> Any:
    def change(document: dict[str, Any]) -> dict[str, Any]:
        changed = copy.deepcopy(document)
        changed["rules"][section][key] = value
        return changed

    return change


def _contribution_by(index: int, by: str) -> Any:
    return _set(("contributions", index, "by"), by)


REFUSALS = [
    # (name, change, code, member)
    ("a member missing", _drop("deal_set"), PlanCode.BAD_SCHEMA, "$"),
    ("a member added", _set(("extra",), 1), PlanCode.BAD_SCHEMA, "$"),
    ("tables as text", _set(("tables",), "3"), PlanCode.BAD_SCHEMA, "$.tables"),
    (
        "another format",
        _set(("format",), "racing-demon/tournament-plan/v3"),
        PlanCode.BAD_SCHEMA,
        "$.format",
    ),
    ("no contribution", _set(("contributions",), []), PlanCode.BAD_SCHEMA, "$.contributions"),
    ("upper-case hex", _set(("entropy",), "AB" * 32), PlanCode.BAD_SCHEMA, "$.entropy"),
    ("a name of 300 bytes", _set(("name",), "♠" * 100), PlanCode.BAD_SHAPE, "$.name"),
    ("rules no profile accepts", _rules_with("stock", "turn", 0), PlanCode.BAD_RULES, "$.rules"),
    ("rules with a target", _rules_with("match", "target", 100), PlanCode.BAD_RULES, "$.rules"),
    (
        "rules playing another count of hands",
        _rules_with("match", "max_hands", 3),
        PlanCode.BAD_RULES,
        "$.rules",
    ),
    (
        "rules with a default written out",
        _rules_with("end", "resign", "ends_match"),
        PlanCode.BAD_RULES,
        "$.rules",
    ),
    ("more seats than the rules seat", _set(("seats",), 9), PlanCode.BAD_RULES, "$.seats"),
    (
        "another rules digest",
        _set(("rules_sha256",), "0" * 64),
        PlanCode.RULES_DIGEST_MISMATCH,
        "$.rules_sha256",
    ),
    (
        "a signed contribution renamed",
        _contribution_by(1, "mallory"),
        PlanCode.BAD_CONTRIBUTION,
        "$.contributions[1]",
    ),
    (
        "a signature changed",
        _set(("contributions", 1, "entropy"), "00" * 64),
        PlanCode.BAD_CONTRIBUTION,
        "$.contributions[1]",
    ),
    (
        "a contributor twice",
        _contribution_by(0, "alice"),
        PlanCode.BAD_CONTRIBUTION,
        "$.contributions[1]",
    ),
    (
        "another commitment",
        _set(("commitment",), commitment(bytes(32))),
        PlanCode.BAD_CONTRIBUTION,
        "$.contributions[1]",
    ),
    (
        "another entropy digest",
        _set(("entropy",), "ab" * 32),
        PlanCode.ENTROPY_MISMATCH,
        "$.entropy",
    ),
    (
        "an unsigned contribution changed",
        _set(("contributions", 0, "entropy"), "00" + "cd" * 15),
        PlanCode.ENTROPY_MISMATCH,
        "$.entropy",
    ),
    (
        "two seats' packs swapped",
        _swap_packs,
        PlanCode.SCHEDULE_MISMATCH,
        "$.schedule[1].hands[0].packs",
    ),
    (
        "a table left out",
        _redigested(lambda d: {**d, "schedule": d["schedule"][:-1]}),
        PlanCode.SCHEDULE_MISMATCH,
        "$.schedule",
    ),
    (
        "tables out of order",
        _redigested(lambda d: {**d, "schedule": d["schedule"][::-1]}),
        PlanCode.SCHEDULE_MISMATCH,
        "$.schedule[0].table",
    ),
    (
        "a hand left out",
        _set(("schedule", 2, "hands"), [{"hand": 1, "packs": [3, 4, 1, 2]}]),
        PlanCode.SCHEDULE_MISMATCH,
        "$.schedule[2].hands",
    ),
    (
        "a hand renumbered",
        _set(("schedule", 0, "hands", 1, "hand"), 3),
        PlanCode.SCHEDULE_MISMATCH,
        "$.schedule[0].hands[1].hand",
    ),
    ("another plan commitment", _set(("plan",), "0" * 64), PlanCode.PLAN_MISMATCH, "$.plan"),
    (
        "another deal set, same commitment",
        _set(("deal_set",), "0" * 64),
        PlanCode.PLAN_MISMATCH,
        "$.plan",
    ),
    (
        "the name changed",
        _set(("name",), "Other cup"),
        PlanCode.BAD_CONTRIBUTION,
        "$.contributions[1]",
    ),
    (
        "the tables changed",
        _set(("tables",), 4),
        PlanCode.BAD_CONTRIBUTION,
        "$.contributions[1]",
    ),
    (
        "the contributions swapped",
        lambda d: {**d, "contributions": d["contributions"][::-1]},
        PlanCode.CONTRIBUTION_ORDER,
        "$.contributions[1]",
    ),
]


@pytest.mark.parametrize(
    ("change", "code", "member"),
    [pytest.param(change, code, member, id=name) for name, change, code, member in REFUSALS],
)
def test_every_member_is_checked_and_a_refusal_names_it(
    tmp_path: Path, change: Any, code: PlanCode, member: str
) -> None:
    """docs/tournament.md, "Checking a plan": each recomputation, with its code."""
    document = change(a_plan().to_document())
    with pytest.raises(PlanError) as refused:
        load_plan(write(tmp_path, document))
    assert refused.value.code is code, refused.value
    assert refused.value.member == member, refused.value
    assert str(refused.value).startswith(f"{code}: {member}: ")


def test_the_swapped_schedule_is_named_by_table_and_hand(tmp_path: Path) -> None:
    with pytest.raises(PlanError) as refused:
        load_plan(write(tmp_path, _swap_packs(a_plan().to_document())))
    assert "table 2 hand 1: packs [3, 2, 4, 1] where the rotation gives [2, 3, 4, 1]" in str(
        refused.value
    )


@pytest.mark.parametrize(
    ("text", "detail"),
    [
        (b'{"format": 1, "format": 2}', "DUPLICATE_KEY"),
        (b'{"tables": 3.0}', "FLOAT"),
        (b'{"name": "\\ud800"}', "LONE_SURROGATE"),
        (b"[1, 2]", "NOT_OBJECT"),
        (b"not json", "BAD_JSON"),
        (b"\xff{}", "NOT_UTF8"),
    ],
)
def test_a_plan_file_is_strict_json(tmp_path: Path, text: bytes, detail: str) -> None:
    path = tmp_path / "plan.json"
    path.write_bytes(text)
    with pytest.raises(PlanError) as refused:
        load_plan(path)
    assert refused.value.code is PlanCode.NOT_JSON
    assert detail in str(refused.value)


def test_a_missing_or_odd_file_is_unreadable(tmp_path: Path) -> None:
    for path in (tmp_path / "missing.json", tmp_path):
        with pytest.raises(PlanError) as refused:
            load_plan(path)
        assert refused.value.code is PlanCode.UNREADABLE


def test_with_the_secret_the_commitment_opens_and_the_deal_set_recomputes() -> None:
    """Step 1 and step 6: a plan that checks from the file alone can still lie about D,
    with a P recomputed over the lie; only the secret shows it."""
    plan = a_plan()
    with pytest.raises(PlanError) as refused:
        check_plan(plan, bytes(32))
    assert refused.value.code is PlanCode.SECRET_MISMATCH
    assert refused.value.member == "$.commitment"
    lying = dataclasses.replace(plan, deal_set="0" * 64)
    reread = plan_from_document(lying.to_document())  # consistent: P covers the lie
    check_plan(reread)
    with pytest.raises(PlanError) as refused:
        check_plan(reread, SECRET)
    assert refused.value.code is PlanCode.DEAL_SET_MISMATCH
    assert refused.value.member == "$.deal_set"


def test_make_plan_refuses_what_load_plan_would() -> None:
    shape = Shape("Test cup", 2, 5, 1)
    with pytest.raises(PlanError) as refused:
        make_plan(SECRET, shape, load_rules("peer2peer"), (unsigned_contribution("o"),))
    assert refused.value.code is PlanCode.BAD_RULES and refused.value.member == "$.seats"
    elsewhere = sign_contribution(KEY, terms_of(2, 4, 1, "Other cup"), "alice")
    with pytest.raises(PlanError) as refused:
        make_plan(SECRET, Shape("Test cup", 2, 4, 1), load_rules("table"), (elsewhere,))
    assert refused.value.code is PlanCode.BAD_CONTRIBUTION
    with pytest.raises(PlanError) as refused:
        make_plan(SECRET, Shape("Test cup", 2, 4, 1), load_rules("table"), ())
    assert refused.value.code is PlanCode.BAD_CONTRIBUTION


def test_every_table_plays_exactly_the_planned_hands() -> None:
    """Spec rule 8: no target, max_hands H, a tie for the lead shares; renamed when it
    alters a built-in profile."""
    plan = a_plan(hands=3)
    assert (plan.rules.target, plan.rules.max_hands, str(plan.rules.lead_tie)) == (None, 3, "share")
    assert plan.rules.name == "table-custom"


# -- contributions ---------------------------------------------------------------------------


def test_a_signed_contribution_answers_exactly_its_statement() -> None:
    """Step 2: the signature over {commitment, contributor, hands, rules_sha256, seats,
    tables, tournament}, PAE type application/vnd.racing-demon.log.v2.entropy."""
    terms = terms_of()
    committed = commitment(SECRET)
    signed = sign_contribution(KEY, terms, "alice")
    assert signed == sign_contribution(KEY, terms, "alice")  # deterministic
    assert len(signed.entropy) == 64
    assert check_contribution(signed, terms) is None
    assert terms.statement_bytes("alice") == (
        b'{"commitment":"' + committed.encode() + b'","contributor":"alice","hands":2,'
        b'"rules_sha256":"' + terms.rules.digest().encode() + b'","seats":4,"tables":3,'
        b'"tournament":"Test cup"}'
    )
    for other in (
        terms_of(name="Other cup"),
        dataclasses.replace(terms, commitment=commitment(bytes(32))),
        terms_of(tables=4),
        terms_of(seats=3),
        terms_of(hands=3),
        terms_of(rules="nertz"),
    ):
        problem = check_contribution(signed, other)
        assert problem is not None and problem.code == "BAD_SIGNATURE"
    problem = check_contribution(dataclasses.replace(signed, by="bob"), terms)
    assert problem is not None and problem.code == "BAD_SIGNATURE"
    forged = dataclasses.replace(signed, key=sign_contribution(OTHER_KEY, terms, "y").key)
    assert check_contribution(forged, terms) is not None
    assert check_contribution(unsigned_contribution("org"), terms) is None


def test_unsigned_contributions_are_fresh_random_bytes() -> None:
    first, second = unsigned_contribution("org"), unsigned_contribution("org")
    assert len(first.entropy) == 32 and first.key is None and first.entropy != second.entropy


def _contribution_file(tmp_path: Path, document: dict[str, Any]) -> Path:
    return write(tmp_path, document, "contribution.json")


def test_a_contribution_file_is_read_for_its_terms(tmp_path: Path) -> None:
    terms = terms_of()
    signed = sign_contribution(KEY, terms, "alice")
    document = contribution_document(signed, terms)
    assert schema_errors("tournament-contribution", document) == []
    path = _contribution_file(tmp_path, document)
    assert load_contribution(path, terms) == signed
    for other, member in (
        (terms_of(name="Other cup"), "$.tournament"),
        (terms_of(tables=4), "$.tables"),
        (terms_of(seats=3), "$.seats"),
        (terms_of(hands=3), "$.hands"),
        (terms_of(rules="nertz"), "$.rules_sha256"),
        (dataclasses.replace(terms, commitment=commitment(bytes(32))), "$.commitment"),
    ):
        with pytest.raises(PlanError) as refused:
            load_contribution(path, other)
        assert refused.value.code is PlanCode.BAD_CONTRIBUTION and refused.value.member == member
    renamed = _contribution_file(tmp_path, {**document, "by": "mallory"})
    with pytest.raises(PlanError) as refused:
        load_contribution(renamed, terms)
    assert refused.value.code is PlanCode.BAD_CONTRIBUTION and "BAD_SIGNATURE" in str(refused.value)
    odd = _contribution_file(tmp_path, {**document, "key": "zz"})
    with pytest.raises(PlanError) as refused:
        load_contribution(odd, terms)
    assert refused.value.code is PlanCode.BAD_SCHEMA and refused.value.member == "$.key"


# -- issue 28, point 5: everything that feeds the deal set is fixed before anyone contributes


FOUR_KEYS = tuple(
    Ed25519PrivateKey.from_private_bytes(hashlib.sha256(b"contributor %d" % n).digest())
    for n in range(4)
)


def _as_published(plan: Plan) -> dict[str, Any]:
    """``plan``'s document with its entropy digest, schedule and commitment recomputed, as
    an organiser who chose what the plan lists would write it."""
    document = plan.to_document()
    entropy = entropy_digest([contribution.entropy for contribution in plan.contributions])
    return _redigest({**document, "entropy": entropy.hex()})


def test_only_the_canonical_order_of_four_signed_contributions_checks() -> None:
    """Issue 28, point 5: 'four signed contributions give 24 plans that all pass
    `tournament check`, each with its own deal set ... Make the order canonical (refuse a
    plan whose contributions are not in it).' Every order deals another set; only the
    canonical one (by entropy bytes) is a plan."""
    terms = terms_of(tables=2, seats=2, hands=1)
    signed = tuple(sign_contribution(key, terms, f"player {n}") for n, key in enumerate(FOUR_KEYS))
    honest = make_plan(SECRET, terms.shape, load_rules("table"), signed)
    shape = terms.shape
    deal_sets = set()
    accepted = []
    for order in itertools.permutations(signed):
        # The organiser's choice: the same signed contributions in another order, the
        # plan's E, D and P recomputed so that every digest holds.
        entropy = entropy_digest([contribution.entropy for contribution in order])
        chosen = dataclasses.replace(
            honest, contributions=order, deal_set=shape.deal_set(shape.seed(SECRET, entropy))
        )
        deal_sets.add(chosen.deal_set)
        try:
            accepted.append(plan_from_document(_as_published(chosen)))
        except PlanError as error:
            assert error.code is PlanCode.CONTRIBUTION_ORDER, error
    assert len(deal_sets) == 24  # each order its own deal set: 24 to choose from
    assert accepted == [honest]
    assert [c.entropy for c in honest.contributions] == sorted(c.entropy for c in signed)


@pytest.mark.parametrize(
    "other",
    [
        pytest.param({"tables": 3}, id="tables"),
        pytest.param({"seats": 3}, id="seats"),
        pytest.param({"hands": 2}, id="hands"),
        pytest.param({"rules": "nertz"}, id="rules"),
    ],
)
def test_a_shape_or_rules_chosen_after_the_contributions_is_refused(other: dict[str, Any]) -> None:
    """Issue 28, point 5: 'The shape (tables, seats, hands) and the rules also feed the
    deal, and no contribution binds them.' An organiser who sees the signed contributions
    and then plans another shape or rules (every digest recomputed) gets another deal set,
    and a plan that is refused: each signature covers the terms published before it."""
    terms = terms_of(tables=2, seats=2, hands=1)
    signed = tuple(sign_contribution(key, terms, f"player {n}") for n, key in enumerate(FOUR_KEYS))
    honest = make_plan(SECRET, terms.shape, load_rules("table"), signed)
    chosen_terms = terms_of(**{"tables": 2, "seats": 2, "hands": 1, **other})
    shape = chosen_terms.shape
    chosen = Plan(
        shape,
        chosen_terms.rules,
        honest.commitment,
        honest.contributions,
        shape.deal_set(shape.seed(SECRET, honest.entropy)),
    )
    if "rules" not in other:
        assert chosen.deal_set != honest.deal_set  # the shape feeds the deal
    with pytest.raises(PlanError) as refused:
        plan_from_document(_as_published(chosen))
    assert refused.value.code is PlanCode.BAD_CONTRIBUTION, refused.value
    assert "shape, rules and commitment" in refused.value.message


def _v1_signed(key: Ed25519PrivateKey, terms: Terms, by: str) -> Contribution:
    """A contribution as format v1 had it signed: over the name and commitment only."""
    signature = sign(key, "entropy", terms.statement_bytes(by, STATEMENT_V1), 2)
    return Contribution(by, bytes.fromhex(signature), raw_public_bytes(key))


OLD_PLAN = ROOT / "tests" / "vectors" / "tournament-v1" / "plan.json"


def test_an_older_plan_still_checks_and_says_what_it_does_not_bind() -> None:
    """Issue 28, point 5: 'Old plans still check, and their report says what they do not
    bind.' The sample cup's plan as format v1 wrote it (kept frozen) lists its four
    signed contributions out of the canonical order: it checks, with its secret, and says
    that neither the order, the shape nor the rules is bound."""
    plan = load_plan(OLD_PLAN)
    check_plan(plan, bytes(range(64, 96)))  # the sample cup's published fixture secret
    assert plan.version == STATEMENT_V1 and plan.unbound == ("order", "shape", "rules")
    entropies = [contribution.entropy for contribution in plan.contributions]
    assert entropies != sorted(entropies)
    assert plan.unsigned == 0
    assert plan.to_document() == json.loads(OLD_PLAN.read_text(encoding="utf-8"))


def test_a_new_signature_does_not_stand_in_an_older_plan() -> None:
    """The downgrade: a contribution signed over the whole terms is no v1 statement, so an
    organiser cannot move it into a plan of format v1 (which would free the order, the
    shape and the rules); a v1 signature is not a v2 one either."""
    terms = terms_of(tables=2, seats=2, hands=1)
    current = make_plan(
        SECRET, terms.shape, load_rules("table"), (sign_contribution(KEY, terms, "a"),)
    )
    downgraded = dataclasses.replace(current, version=STATEMENT_V1)
    with pytest.raises(PlanError) as refused:
        plan_from_document(_as_published(downgraded))
    assert refused.value.code is PlanCode.BAD_CONTRIBUTION
    old = dataclasses.replace(
        current, version=STATEMENT_V1, contributions=(_v1_signed(KEY, terms, "a"),)
    )
    assert plan_from_document(_as_published(old)).unbound == ("order", "shape", "rules")
    upgraded = dataclasses.replace(old, version=current.version)
    with pytest.raises(PlanError) as refused:
        plan_from_document(_as_published(upgraded))
    assert refused.value.code is PlanCode.BAD_CONTRIBUTION


# -- the rotation: what it guarantees, and what it cannot -------------------------------------


@pytest.mark.parametrize(("tables", "seats"), [(1, 2), (3, 4), (4, 4), (7, 3), (2, 6)])
def test_what_the_rotation_guarantees(tables: int, seats: int) -> None:
    """docs/tournament.md, "What the rotation guarantees": every table plays every pack of
    every hand once; a pack is played from a different seat at each of the first S tables
    (and the positions repeat after S); at every table a pack races the same packs."""
    plan = a_plan(tables=tables, seats=seats, hands=2)
    for hand in (1, 2):
        every = set(range((hand - 1) * seats + 1, hand * seats + 1))
        positions: dict[int, list[int]] = {number: [] for number in every}
        for table in range(1, tables + 1):
            packs = plan.packs(table, hand)
            assert set(packs) == every and len(packs) == seats  # each pack once per table
            for seat, number in enumerate(packs):
                positions[number].append(seat)
        for seats_of_pack in positions.values():
            first = seats_of_pack[:seats]
            assert len(set(first)) == len(first)  # a different seat at each of S tables
            assert seats_of_pack == [seats_of_pack[t % seats] for t in range(tables)]  # repeat


def test_a_pack_races_the_same_packs_at_every_table() -> None:
    """What it cannot do: a pack's opponents are the other packs of the hand, at every
    table (by design: each result on a pack is compared over the same deal)."""
    plan = a_plan(tables=4, seats=4, hands=1)
    for table in range(1, 5):
        assert sorted(plan.packs(table, 1)) == [1, 2, 3, 4]
        # the seat to the left (seat + 1) holds the next pack: the order round the table
        # is the same at every table, only turned
        packs = plan.packs(table, 1)
        assert [packs[(seat + 1) % 4] for seat in range(4)] == [
            (number % 4) + 1 for number in packs
        ]


# -- the sheets -----------------------------------------------------------------------------


class _Sheets(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.sections: list[str] = []
        self.tags: set[str] = set()
        self.attributes: list[tuple[str, str | None]] = []
        self.cells: dict[str, list[str]] = {}
        self._pack = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.add(tag)
        self.attributes.extend(attrs)
        values = dict(attrs)
        if tag == "section":
            self.sections.append(values.get("id") or "")
            self.cells[self.sections[-1]] = []
        self._pack = tag == "td" and values.get("class") == "pack"

    def handle_data(self, data: str) -> None:
        if self._pack:
            self.cells[self.sections[-1]].append(data)
            self._pack = False


def test_the_sheets_are_one_page_per_table_with_each_seats_packs() -> None:
    plan = a_plan(tables=5, seats=3, hands=2)
    html = render_sheets(plan)
    parsed = _Sheets()
    parsed.feed(html)
    assert parsed.sections == [f"table-{table}" for table in range(1, 6)]
    for table in range(1, 6):
        expected = [str(plan.packs(table, hand)[seat]) for seat in range(3) for hand in (1, 2)]
        assert parsed.cells[f"table-{table}"] == expected
    assert "break-after: page" in html and "@page" in html
    for figure in (plan.commitment, plan.deal_set, plan.digest):
        assert html.count(figure) == 5


def test_the_sheets_load_nothing_and_escape_every_text() -> None:
    name = '<script>alert("x")</script> & <img src=x>'
    plan = a_plan(tables=2, seats=2, hands=1, name=name)
    html = render_sheets(plan)
    parsed = _Sheets()
    parsed.feed(html)
    assert not parsed.tags & {"script", "img", "link", "iframe", "object"}
    assert all(key not in ("src", "href") for key, _ in parsed.attributes)
    assert not re.search(r"https?:|url\(|@import", html)
    assert "default-src 'none'" in html
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &lt;img src=x&gt;" in html


def _leaves(
    value: Any, path: tuple[str | int, ...] = ()
) -> list[tuple[tuple[str | int, ...], Any]]:
    if isinstance(value, dict):
        return [leaf for key, item in value.items() for leaf in _leaves(item, (*path, key))]
    if isinstance(value, list):
        return [leaf for index, item in enumerate(value) for leaf in _leaves(item, (*path, index))]
    return [(path, value)]


def _changed(value: object) -> object:
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + 1
    if isinstance(value, str):
        # Hex stays hex (so the schema passes and a later check must catch it).
        return ("1" if value[0] == "0" else "0") + value[1:]
    return "00" * 32  # null: a key where there was none


def test_changing_any_value_of_a_plan_is_refused() -> None:
    """Fail closed: whatever single value of a plan file changes, rules included, the
    plan is refused with a code (the digests bind every member)."""
    document = a_plan(tables=2, seats=2, hands=2).to_document()
    leaves = _leaves(document)
    assert len(leaves) > 50
    for path, value in leaves:
        changed = _set(path, _changed(value))(document)
        with pytest.raises(PlanError) as refused:
            plan_from_document(changed)
        assert refused.value.code in PlanCode, path


@given(
    tables=st.integers(1, 12),
    seats=st.integers(2, 6),
    hands=st.integers(1, 3),
    entropies=st.lists(st.binary(min_size=16, max_size=64), min_size=1, max_size=3, unique=True),
    name=st.text(min_size=1, max_size=20).filter(lambda text: text.isprintable()),
)
def test_every_plan_reads_back_from_its_file(
    tables: int, seats: int, hands: int, entropies: list[bytes], name: str
) -> None:
    """A plan's document, through JSON text, reads back as the same plan, and its schedule
    is the rotation of step 5."""
    contributions = tuple(Contribution(f"c{i}", e) for i, e in enumerate(entropies))
    plan = make_plan(SECRET, Shape(name, tables, seats, hands), load_rules("table"), contributions)
    text = json.dumps(plan.to_document(), indent=2, ensure_ascii=False)
    assert plan_from_document(json.loads(text)) == plan
    for table in range(1, tables + 1):
        for hand in range(1, hands + 1):
            assert plan.packs(table, hand) == tuple(
                (hand - 1) * seats + (seat + table - 1) % seats + 1 for seat in range(seats)
            )
