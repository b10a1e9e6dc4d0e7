"""Issue 31: the play protocol of ``racing-demon serve`` (racing_demon.serve.protocol).

"Protocol documented in docs/protocol.md, versioned, every message with a schema in
schemas/ (and its copy in the package), every error with a code that explain knows; a
client can be written from the doc alone." And: "malformed JSON, an unknown message, an
oversized frame, a replayed message: each gets a protocol error or a refusal receipt with
its code, and the server keeps serving."
"""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from racing_demon.explanations import explain
from racing_demon.game.deal import MatchSeed, derive_pack
from racing_demon.game.flow import Seen
from racing_demon.log.records import FORMAT_VERSION, body_bytes, canonical_bytes, entropy_statement
from racing_demon.schema import load_schema, schema_errors
from racing_demon.serve import protocol
from racing_demon.serve.protocol import (
    CLIENT_TYPES,
    MAX_FRAME_BYTES,
    ClientAccept,
    ClientCosign,
    ClientEntropy,
    ClientSubmit,
    ClientSync,
    ServeCode,
    ServeError,
    parse_client_message,
)

ROOT = Path(__file__).resolve().parents[2]
LOG = ROOT / "sample_games" / "valid" / "nertz-4p-demon-empty-signed.jsonl"
RECEIPTS = ROOT / "sample_games" / "valid" / "nertz-4p-demon-empty-signed.seat0.receipts.jsonl"
PROTOCOL_DOC = ROOT / "docs" / "protocol.md"
SIG = "ab" * 64
HASH = "cd" * 32


def _lines() -> list[bytes]:
    return LOG.read_bytes().splitlines()


def _lobby_errors(shape: str, value: object) -> list[str]:
    """``value`` against one shape of the lobby schema (a ``$defs`` entry)."""
    from racing_demon.schema import EcmaValidator

    whole = load_schema(protocol.LOBBY_SCHEMA)
    schema = {"$defs": whole["$defs"], "$ref": f"#/$defs/{shape}"}
    return [error.message for error in EcmaValidator(schema).iter_errors(value)]


# -- the codes -------------------------------------------------------------------------


def test_the_codes_are_the_designs_and_explain_knows_each() -> None:
    """'every error with a code that explain knows' (FORK: issue 35, point 2)."""
    assert {code.value for code in ServeCode} == {
        "BAD_JSON", "NOT_OBJECT", "UNKNOWN_TYPE", "BAD_MESSAGE", "TOO_LARGE",
        "RATE_LIMITED", "SPECTATOR", "NOT_ASKED", "BAD_SIGNATURE", "NOT_SYNCED",
        "SLOW_READER", "REPLACED", "SERVER_STOPPING", "NO_SUCH_TABLE", "NO_SUCH_SEAT", "FORK",
        "SEAT_TAKEN", "BAD_TOKEN", "BAD_KEY", "BAD_REQUEST", "BAD_ORIGIN", "TABLE_CLOSED",
    }  # fmt: skip
    for code in ServeCode:
        families = [entry.family.codes for entry in explain(code.value)]
        assert ServeCode in families, code


def test_the_protocol_doc_lists_every_code_in_its_errors_section() -> None:
    section = PROTOCOL_DOC.read_text(encoding="utf-8").split("\n## 8. ")[1].split("\n## ")[0]
    for code in ServeCode:
        assert f"`{code}`" in section, code


# -- what a client sends: hostile frames, each refused with its code, in order ---------

SUBMIT: dict[str, Any] = {
    "type": "submit",
    "ref": "m1",
    "n": 0,
    "move": "2 w3>f+ AS",
    "seen": {"seq": 1, "hash": HASH},
    "signature": SIG,
}

HOSTILE: list[tuple[str, str, ServeCode, str | None]] = [
    # (what, frame, code, ref echoed)
    ("oversized frame", '{"type":"sync","from":0,"ref":"' + "x" * MAX_FRAME_BYTES + '"}',
     ServeCode.TOO_LARGE, None),
    ("oversized frame that is also malformed", "{" * (MAX_FRAME_BYTES + 1),
     ServeCode.TOO_LARGE, None),
    ("multi-byte characters over 16 KiB", json.dumps({"type": "é" * 9000}, ensure_ascii=False),
     ServeCode.TOO_LARGE, None),
    ("malformed JSON", '{"type":"sync",', ServeCode.BAD_JSON, None),
    ("two values", '{"type":"sync","from":0} {}', ServeCode.BAD_JSON, None),
    ("empty frame", "", ServeCode.BAD_JSON, None),
    ("duplicate key", '{"type":"sync","from":0,"from":5}', ServeCode.BAD_JSON, None),
    ("float", '{"type":"sync","from":0.0}', ServeCode.BAD_JSON, None),
    ("exponent", '{"type":"sync","from":1e3}', ServeCode.BAD_JSON, None),
    ("NaN", '{"type":"sync","from":NaN}', ServeCode.BAD_JSON, None),
    ("negative zero", '{"type":"sync","from":-0}', ServeCode.BAD_JSON, None),
    ("integer beyond 2^53", '{"type":"sync","from":9007199254740992}', ServeCode.BAD_JSON, None),
    ("deep nesting", '{"type":"sync","from":' + "[" * 40 + "]" * 40 + "}",
     ServeCode.BAD_JSON, None),
    ("lone surrogate", '{"type":"sync","ref":"\ud800"}', ServeCode.BAD_JSON, None),
    ("NUL", '{"type":"sync",\x00"from":0}', ServeCode.BAD_JSON, None),
    ("an array", "[1, 2]", ServeCode.NOT_OBJECT, None),
    ("a string", '"sync"', ServeCode.NOT_OBJECT, None),
    ("no type", '{"from":0,"ref":"r1"}', ServeCode.UNKNOWN_TYPE, "r1"),
    ("unknown message", '{"type":"hello","ref":"r2"}', ServeCode.UNKNOWN_TYPE, "r2"),
    ("a server message sent back", '{"type":"welcome"}', ServeCode.UNKNOWN_TYPE, None),
    ("type not a string", '{"type":["sync"],"from":0}', ServeCode.UNKNOWN_TYPE, None),
    ("type of another case", '{"type":"SYNC","from":0}', ServeCode.UNKNOWN_TYPE, None),
    ("unknown type, bad fields too", '{"type":"nope","from":-1}', ServeCode.UNKNOWN_TYPE, None),
    ("sync without from", '{"type":"sync","ref":"r3"}', ServeCode.BAD_MESSAGE, "r3"),
    ("negative from", '{"type":"sync","from":-1}', ServeCode.BAD_MESSAGE, None),
    ("extra member", '{"type":"sync","from":0,"to":9}', ServeCode.BAD_MESSAGE, None),
    ("uppercase signature", json.dumps({"type": "entropy", "signature": "AB" * 64}),
     ServeCode.BAD_MESSAGE, None),
    ("short signature", '{"type":"cosign","signature":"ab","ref":"c"}',
     ServeCode.BAD_MESSAGE, "c"),
    ("accept with false", '{"type":"accept","signature":false}', ServeCode.BAD_MESSAGE, None),
    ("submit without ref", json.dumps({k: v for k, v in SUBMIT.items() if k != "ref"}),
     ServeCode.BAD_MESSAGE, None),
    ("submit with a bad seen", json.dumps({**SUBMIT, "seen": {"seq": 1, "hash": "00"}}),
     ServeCode.BAD_MESSAGE, "m1"),
    ("submit with a short move", json.dumps({**SUBMIT, "move": "x"}), ServeCode.BAD_MESSAGE,
     "m1"),
    ("submit without signature", json.dumps({**SUBMIT, "signature": None}),
     ServeCode.BAD_MESSAGE, "m1"),
    ("ref too long is not echoed", json.dumps({**SUBMIT, "ref": "r" * 65}),
     ServeCode.BAD_MESSAGE, None),
    ("empty ref", '{"type":"sync","from":0,"ref":""}', ServeCode.BAD_MESSAGE, None),
]  # fmt: skip


@pytest.mark.parametrize(("what", "frame", "code", "ref"), HOSTILE, ids=[c[0] for c in HOSTILE])
def test_each_hostile_frame_gets_its_code_in_the_order_of_the_checks(
    what: str, frame: str, code: ServeCode, ref: str | None
) -> None:
    """'malformed JSON, an unknown message, an oversized frame ...: each gets a protocol
    error ... with its code': TOO_LARGE, BAD_JSON, NOT_OBJECT, UNKNOWN_TYPE, BAD_MESSAGE,
    the first that applies."""
    with pytest.raises(ServeError) as caught:
        parse_client_message(frame)
    assert caught.value.code is code, caught.value.message
    assert caught.value.ref == ref
    answer = protocol.error_of(caught.value)
    assert answer["code"] == code.value
    assert schema_errors(protocol.SERVER_SCHEMA, answer) == []  # bounded, whatever was sent


def test_a_refusal_names_the_failing_path_and_the_readers_rule() -> None:
    with pytest.raises(ServeError) as caught:
        parse_client_message(json.dumps({**SUBMIT, "seen": {"seq": 1, "hash": "00"}}))
    assert caught.value.message == "submit: $.seen.hash: '00' does not match '^[0-9a-f]{64}$'"
    assert str(caught.value) == f"BAD_MESSAGE: {caught.value.message}"
    with pytest.raises(ServeError) as caught:
        parse_client_message('{"type":"sync","from":0,"from":5}')
    assert caught.value.message == 'DUPLICATE_KEY: duplicate key "from" in $'
    with pytest.raises(ServeError) as caught:
        parse_client_message("[]")
    assert caught.value.message == "top level is an array: a message is a JSON object"


def test_a_replayed_message_reads_as_the_same_value_for_the_table_to_refuse() -> None:
    """'a replayed message': the parser keeps no state, so a frame sent twice is the same
    typed value twice; the table refuses the second submission by its number
    (WRONG_NUMBER, a refusal receipt) and the host the second entropy, co-signature or
    acceptance (NOT_ASKED)."""
    frame = json.dumps(SUBMIT)
    assert parse_client_message(frame) == parse_client_message(frame)


# -- what a client sends: the typed values ---------------------------------------------


@pytest.mark.parametrize(
    ("message", "value"),
    [
        ({"type": "sync", "from": 0}, ClientSync(from_seq=0)),
        ({"type": "sync", "from": 42, "ref": "s"}, ClientSync(from_seq=42, ref="s")),
        ({"type": "entropy", "signature": SIG}, ClientEntropy(signature=SIG)),
        ({"type": "cosign", "signature": SIG, "ref": "c"}, ClientCosign(signature=SIG, ref="c")),
        (
            SUBMIT,
            ClientSubmit(
                ref="m1", n=0, move="2 w3>f+ AS", seen_seq=1, seen_hash=HASH, signature=SIG
            ),
        ),
        ({"type": "accept", "signature": SIG}, ClientAccept(signature=SIG)),
        ({"type": "accept", "signature": None}, ClientAccept(signature=None)),
    ],
)
def test_each_client_message_reads_into_its_typed_value(
    message: dict[str, Any], value: protocol.ClientMessage
) -> None:
    read = parse_client_message(json.dumps(message))
    assert read == value
    assert not hasattr(read, "__dict__")  # slotted
    with pytest.raises(dataclasses.FrozenInstanceError):
        read.ref = "other"  # type: ignore[misc]
    with pytest.raises(TypeError):
        type(read)(*dataclasses.astuple(read))  # keyword-only


def test_a_submission_carries_its_seen_as_the_flows_value() -> None:
    submit = parse_client_message(json.dumps(SUBMIT))
    assert isinstance(submit, ClientSubmit)
    assert submit.seen.seq == 1 and submit.seen.hash == HASH


def test_the_client_types_are_the_schemas() -> None:
    schema = load_schema(protocol.CLIENT_SCHEMA)
    assert tuple(schema["properties"]["type"]["enum"]) == CLIENT_TYPES


@settings(max_examples=300)
@given(st.one_of(st.text(max_size=200), st.binary(max_size=200).map(lambda b: b.decode("latin-1"))))
def test_any_text_reads_as_a_message_or_a_serve_error(text: str) -> None:
    """'nothing a client sends can crash the server'."""
    try:
        parse_client_message(text)
    except ServeError as refusal:
        assert schema_errors(protocol.SERVER_SCHEMA, protocol.error_of(refusal)) == []


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53) + 1, 2**53 - 1) | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=12,
)


@settings(max_examples=300)
@given(
    st.sampled_from(CLIENT_TYPES),
    st.dictionaries(st.sampled_from(["from", "signature", "ref", "n", "move", "seen"]), _JSON),
)
def test_any_object_of_a_known_type_reads_or_is_a_bad_message(
    kind: str, members: dict[str, Any]
) -> None:
    try:
        value = parse_client_message(json.dumps({"type": kind, **members}))
    except ServeError as refusal:
        assert refusal.code is ServeCode.BAD_MESSAGE
    else:
        assert type(value).__name__.lower() == f"client{kind}"


# -- what the server sends: every builder's output validates ---------------------------


def _built() -> list[dict[str, Any]]:
    lines = _lines()
    genesis = json.loads(lines[0])["body"]
    game = genesis["game"]
    statement = canonical_bytes(entropy_statement(game, 0, genesis["commitment"]))
    receipt = RECEIPTS.read_bytes().splitlines()[0]
    seats = [
        {"seat": p["seat"], "name": p["name"], "kind": "bot", "key": p["key"]}
        for p in genesis["players"]
    ]
    hand_start = json.loads(lines[1])["body"]
    secret = json.loads(lines[-1])["body"]["secret"]
    seed = MatchSeed.from_secret(
        bytes.fromhex(secret), [bytes.fromhex(e) for e in genesis["entropy"]]
    )
    faces = [card.face for card in derive_pack(seed, hand_start["hand"], 2)]
    return [
        protocol.pack(hand=hand_start["hand"], faces=faces),
        protocol.welcome(
            game=game,
            seat=0,
            table_key=HASH,
            seats=seats,
            rules=genesis["rules"],
            state="playing",
        ),
        protocol.welcome(
            game=game,
            seat=None,
            table_key=HASH,
            seats=[{**seats[0], "name": None, "key": None, "kind": "person"}, *seats[1:]],
            rules=genesis["rules"],
            state="waiting",
        ),
        protocol.record(lines[2]),
        protocol.record(lines[-1].decode()),
        protocol.commitment(game=game, commitment=genesis["commitment"], statement=statement),
        protocol.genesis(body_bytes(lines[0])),
        protocol.receipt(ref="m1", receipt=receipt),
        protocol.final(body_bytes(lines[-1])),
        protocol.ended(verdict="verified", log=f"/games/{game}.jsonl"),
        protocol.ended(
            verdict="verified",
            log=f"/games/{game}.jsonl",
            receipts=f"/games/{game}/seat0.receipts.jsonl",
        ),
        protocol.seat(seat=3, connected=False),
        protocol.stopping(in_ms=30_000),
        protocol.ping(nonce="0123456789abcdef" * 2),
        protocol.piles(
            seq=12,
            hand=1,
            phase="called",
            clock_ms=5120,
            full=False,
            changed={
                "s0.demon": {"cards": [], "n": 0},
                "s1.waste": {"cards": ["4C", "9H", "KD"], "n": 20},
                "s1.stock": {"n": 9},
                "s2.w4": {"cards": ["KS", "QH", "JC"]},
                "f3": {"suit": "S", "levels": [["AS@2"], ["2S@0", "2S@1"]], "complete": False},
            },
        ),
        protocol.piles(seq=0, hand=None, phase=None, clock_ms=0, full=True, changed={}),
        protocol.moves(seq=12, moves=["2 recycle", "2 demon>f+ AD", "2 resign"]),
        protocol.moves(seq=13, moves=[]),
        protocol.error_message(ServeCode.NOT_SYNCED, "send sync first"),
        protocol.error_message(ServeCode.NOT_ASKED, "no entropy asked now", "e1"),
    ]


@pytest.mark.parametrize("message", _built(), ids=lambda message: str(message["type"]))
def test_every_server_message_a_builder_makes_validates(message: dict[str, Any]) -> None:
    assert schema_errors(protocol.SERVER_SCHEMA, message) == []


def test_the_builders_cover_every_server_type_and_carry_bytes_exactly() -> None:
    built = _built()
    schema = load_schema(protocol.SERVER_SCHEMA)
    assert {m["type"] for m in built} == {ref["$ref"].split("/")[-1] for ref in schema["oneOf"]}
    lines = _lines()
    record = next(m for m in built if m["type"] == "record")
    assert record["line"].encode() == lines[2]  # the log's line exactly
    welcome = next(m for m in built if m["type"] == "welcome")
    assert welcome["protocol"] == protocol.PROTOCOL_VERSION == 1
    assert "ref" not in protocol.error_message(ServeCode.NOT_SYNCED, "x")


def test_every_server_message_is_sent_as_the_frame_json_dumps_made_of_it() -> None:
    """The frames' bytes did not change when the encoder became one built once
    (``protocol.encode``): compact separators, non-ASCII escaped, member order kept."""
    for message in _built():
        assert protocol.encode(message) == json.dumps(message, separators=(",", ":"))


@given(
    st.dictionaries(
        st.text(max_size=8),
        st.recursive(
            st.none() | st.booleans() | st.integers() | st.text(),
            lambda children: (
                st.lists(children, max_size=3)
                | st.dictionaries(st.text(max_size=4), children, max_size=3)
            ),
            max_leaves=12,
        ),
        max_size=6,
    )
)
def test_any_message_is_encoded_as_json_dumps_encodes_it(message: dict[str, Any]) -> None:
    assert protocol.encode(message) == json.dumps(message, separators=(",", ":"))


_FACES = [rank + suit for suit in "CDHS" for rank in "A23456789TJQK"]


def test_a_seats_pack_checks_against_its_hand_start_digest_as_the_doc_says() -> None:
    """docs/protocol.md, ``pack``: the faces' indices (suit-major, ace to king) hashed as
    docs/deal-spec.md step 8 says give the hand_start record's digest for the seat."""
    import hashlib

    message = next(m for m in _built() if m["type"] == "pack")
    hand_start = json.loads(_lines()[1])["body"]
    indices = bytes(_FACES.index(face) for face in message["cards"])
    label = b"racing-demon/pack/v1"
    digest = hashlib.sha256(
        len(label).to_bytes(4, "big") + label + (1).to_bytes(4, "big") + (2).to_bytes(4, "big")
        + indices
    ).hexdigest()  # fmt: skip
    assert digest == hand_start["packs"][2]
    assert message["hand"] == hand_start["hand"] == 1


def test_a_server_message_that_breaks_its_shape_is_refused_by_the_schema() -> None:
    assert schema_errors(protocol.SERVER_SCHEMA, {**protocol.seat(seat=1, connected=True),
                                                  "seat": 16})  # fmt: skip
    assert schema_errors(protocol.SERVER_SCHEMA, {**protocol.record(b'{"body":{}}'), "x": 1})
    assert schema_errors(
        protocol.SERVER_SCHEMA, protocol.error_message(ServeCode.BAD_JSON, "m" * 1001)
    )


def test_lobby_error_has_the_lobby_shape() -> None:
    body = protocol.lobby_error(ServeCode.SEAT_TAKEN, "seat 1 is taken")
    assert body == {"error": {"code": "SEAT_TAKEN", "message": "seat 1 is taken"}}
    assert _lobby_errors("error", body) == []
    assert schema_errors(protocol.LOBBY_SCHEMA, body) == []


def test_each_lobby_code_has_the_status_the_doc_gives() -> None:
    text = " ".join(PROTOCOL_DOC.read_text("utf-8").split("\n## 3. ")[1].split("###")[0].split())
    for status in sorted(set(protocol.LOBBY_STATUS.values())):
        codes = [f"`{c}`" for c, s in protocol.LOBBY_STATUS.items() if s == status]
        assert f"{status} for {' and '.join(codes)}" in text, status


def test_a_create_request_names_a_profile_or_rules_not_both() -> None:
    seats = [{"kind": "person"}, {"kind": "bot", "bot": "easy"}]
    assert _lobby_errors("create_request", {"name": "t", "profile": "nertz", "seats": seats}) == []
    assert _lobby_errors("create_request", {"name": "t", "rules": {}, "seats": seats}) == []
    assert _lobby_errors("create_request", {"name": "t", "seats": seats})
    assert _lobby_errors(
        "create_request", {"name": "t", "profile": "nertz", "rules": {}, "seats": seats}
    )
    assert _lobby_errors("create_request", {"name": "t", "profile": "nertz", "seats": seats[:1]})
    assert _lobby_errors(
        "create_request", {"name": "t", "profile": "nertz", "seats": [{"kind": "bot"}] * 2}
    )


# -- the document a client is written from ---------------------------------------------

_BLOCK = re.compile(r"```json\n(.*?)```", re.DOTALL)


def _examples() -> list[Any]:
    return [json.loads(block) for block in _BLOCK.findall(PROTOCOL_DOC.read_text("utf-8"))]


def test_every_json_example_of_the_protocol_doc_validates() -> None:
    """'a client can be written from the doc alone': its examples are real messages."""
    examples = _examples()
    seen_types = set()
    for example in examples:
        kind = example.get("type") if isinstance(example, dict) else None
        if kind in CLIENT_TYPES:
            parse_client_message(json.dumps(example))  # raises on a wrong example
        elif kind is not None:
            assert schema_errors(protocol.SERVER_SCHEMA, example) == [], example
        else:
            assert schema_errors(protocol.LOBBY_SCHEMA, example) == [], example
        seen_types.add(kind)
    server = {ref["$ref"].split("/")[-1] for ref in load_schema(protocol.SERVER_SCHEMA)["oneOf"]}
    assert set(CLIENT_TYPES) | server <= seen_types  # an example of every message


def test_the_worked_submission_example_is_what_the_reference_code_computes() -> None:
    """The doc's worked example, recomputed: the statement a client builds from its
    ``submit``'s members (and the hand), the signature with the fixture key, the hash a
    receipt names it by."""
    import hashlib

    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    from racing_demon.game.flow import Seen
    from racing_demon.log.records import submission_statement
    from racing_demon.log.signing import pae, sign, verify

    text = PROTOCOL_DOC.read_text("utf-8")
    block = text.split("<!-- worked example: submission (begin) -->")[1].split(
        "<!-- worked example: submission (end) -->"
    )[0]
    shown = dict(
        line.split(": ", 1) for line in block.splitlines() if ": " in line and "```" not in line
    )
    submit = parse_client_message(json.dumps(next(e for e in _examples() if e.get("n") == 0)))
    assert isinstance(submit, ClientSubmit)
    statement = canonical_bytes(
        submission_statement(
            "00112233445566778899aabbccddeeff", 1, 1, submit.n, submit.move, submit.seen
        )
    )
    assert submit.seen == Seen(
        seq=1, hash=hashlib.sha256(b"racing-demon protocol example").hexdigest()
    )
    assert shown["statement bytes"] == statement.decode()
    assert (
        pae("submission", statement, FORMAT_VERSION)
        .decode()
        .startswith(shown["signed bytes start"])
    )
    key = Ed25519PrivateKey.from_private_bytes(bytes(range(32)))
    assert (
        shown["signature hex"]
        == submit.signature
        == sign(key, "submission", statement, FORMAT_VERSION)
    )
    public = "03a107bff3ce10be1d70dd18e74bc09967e4d6309ba50d5f1ddc8664125531b8"
    assert public in text
    assert (
        verify(bytes.fromhex(public), "submission", statement, submit.signature, FORMAT_VERSION)
        is None
    )
    assert shown["statement SHA-256 (the receipt's submission)"] == (
        hashlib.sha256(statement).hexdigest()
    )


def test_a_replayed_submission_gets_a_refusal_receipt_with_its_code(tmp_path: Path) -> None:
    """'a replayed message: each gets a protocol error or a refusal receipt with its code':
    a client builds its submit as docs/protocol.md §5 says (the hand of the last
    hand_start, its next n, seen = its last line and that line's SHA-256), the real table
    logs it; the same frame sent again reads as the same value and the table refuses it,
    WRONG_NUMBER, with a receipt the protocol carries back."""
    import hashlib

    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    from racing_demon.game.engine import legal_moves
    from racing_demon.log.keys import raw_public_bytes
    from racing_demon.log.receipts import SubmissionCode
    from racing_demon.log.records import submission_statement
    from racing_demon.log.signing import sign
    from racing_demon.profiles import load_rules
    from racing_demon.table import PlayerInfo, SubmissionError, Table, player_signer

    keys = [Ed25519PrivateKey.from_private_bytes(bytes([70 + seat]) * 32) for seat in range(2)]
    players = [PlayerInfo(f"p{s}", "b", raw_public_bytes(key)) for s, key in enumerate(keys)]
    path = tmp_path / "g.jsonl"
    table = Table.create(
        path,
        load_rules("peer2peer"),
        players,
        Ed25519PrivateKey.from_private_bytes(bytes([3]) * 32),
        bytes(32),
        None,
        player_signers=[player_signer(key) for key in keys],
        game_id="ef" * 16,
    )
    table.advance(5_000)  # the hand's first moves become legal
    copy = path.read_bytes().splitlines()  # what the client was pushed
    hand = max(json.loads(line)["body"].get("hand", 0) for line in copy)
    move = str(legal_moves(table.state, 0)[0])
    seen = Seen(seq=len(copy) - 1, hash=hashlib.sha256(copy[-1]).hexdigest())
    statement = canonical_bytes(submission_statement(table.game, hand, 0, 0, move, seen))
    frame = json.dumps(
        {
            "type": "submit",
            "ref": "m1",
            "n": 0,
            "move": move,
            "seen": {"seq": seen.seq, "hash": seen.hash},
            "signature": sign(keys[0], "submission", statement, FORMAT_VERSION),
        }
    )
    submit = parse_client_message(frame)
    assert isinstance(submit, ClientSubmit)
    logged = table.submit(0, submit.move, 5_000, submit.n, submit.signature, submit.seen)
    assert json.loads(logged.receipt)["body"]["submission"] == hashlib.sha256(statement).hexdigest()
    replay = parse_client_message(frame)
    assert replay == submit
    with pytest.raises(SubmissionError) as refused:
        table.submit(0, replay.move, 5_001, replay.n, replay.signature, replay.seen)
    assert refused.value.code is SubmissionCode.WRONG_NUMBER
    receipt = refused.value.receipt
    assert receipt is not None
    answer = protocol.receipt(ref=replay.ref, receipt=receipt)
    assert schema_errors(protocol.SERVER_SCHEMA, answer) == []
    body = json.loads(answer["receipt"])["body"]
    assert (body["outcome"], body["reason"], answer["ref"]) == ("refused", "WRONG_NUMBER", "m1")
    table.close()
