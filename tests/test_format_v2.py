"""Format v2 (docs/log-format.md §5-§7, docs/deal-spec.md step 2): entropy bound to the
commitment, submissions that name the record their player had seen, acceptance of the
result, one version per log; and v1 logs, which still verify.

Each attack of issue 15 that the log alone can refuse has its test here; the receipts'
are in tests/test_evidence.py.
"""

from __future__ import annotations

import functools
import json
from collections import deque
from dataclasses import replace
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from racing_demon.game.deal import commitment
from racing_demon.game.engine import legal_moves
from racing_demon.game.flow import SUBMISSION_KINDS, RecordKind, Seen, Submission
from racing_demon.log.canonical import canonical_bytes
from racing_demon.log.keys import raw_public_bytes
from racing_demon.log.records import (
    ACCEPT,
    FORMAT_VERSION,
    SEEN_WINDOW,
    Genesis,
    Record,
    entropy_statement,
    parse_record,
)
from racing_demon.log.signing import sign
from racing_demon.profiles import load_rules
from racing_demon.table import PlayerInfo, Table, TableError, player_signer
from racing_demon.verify import Settings, Step, Verdict, VerifyCode, verify_log
from racing_demon.verify.report import StepFailed
from racing_demon.verify.step04_chain import check_chain

from tampering import (
    PINNED,
    PLAYER_KEYS,
    SECRET,
    TABLE_KEY,
    TABLE_PUB,
    Value,
    assert_fails,
    first,
    seal,
    values_of,
    verify_lines,
)

V1_LOGS = sorted((Path(__file__).parent / "vectors" / "v1").glob("*.jsonl"))
V1_TABLE_KEY = Path(__file__).parent.parent / "sample_games" / "table.pub"


def _cosign(values: list[Value]) -> None:
    """The genesis co-signed again by every seat, as careless clients would sign whatever
    genesis the table shows them."""
    body = canonical_bytes(values[0]["body"])
    values[0]["sigs"]["players"] = [
        sign(key, "genesis", body, FORMAT_VERSION)
        for key in PLAYER_KEYS[: len(values[0]["body"]["players"])]
    ]


def _last_submission(values: list[Value]) -> int:
    return max(i for i, v in enumerate(values) if v["body"]["kind"] in SUBMISSION_KINDS)


# -- the deal: entropy bound to the commitment ----------------------------------------------


def test_every_log_the_table_writes_binds_each_keyed_seats_entropy() -> None:
    """docs/log-format.md §6: "Each seat's contribution `entropy[s]` is seat `s`'s
    signature (128 hex, 64 bytes), kind `entropy`, over the canonical bytes of
    `{"commitment": C, "game": G, "player": s}`", and §5: "always under version `2`", in
    the v4 logs the table writes."""
    values = values_of("short", keyed=True)
    genesis = values[0]["body"]
    assert {value["body"]["v"] for value in values} == {FORMAT_VERSION} == {4}
    for seat, contribution in enumerate(genesis["entropy"]):
        statement = entropy_statement(genesis["game"], seat, genesis["commitment"])
        assert contribution == sign(PLAYER_KEYS[seat], "entropy", canonical_bytes(statement), 2)


def test_a_dealer_who_grinds_secrets_after_seeing_the_entropy_is_caught(tmp_path: Path) -> None:
    """The attack of issue 15: the table tries other dealer secrets once it has seen the
    players' entropy and commits afterwards. Even with every seat co-signing the new
    genesis, the contributions answer the first commitment, not the published one."""
    values = values_of("short", keyed=True)
    ground = bytes(range(100, 132))  # the secret the dealer settled on afterwards
    values[0]["body"]["commitment"] = commitment(ground)
    values[-1]["body"]["secret"] = ground.hex()
    _cosign(values)
    finding = assert_fails(
        verify_lines(tmp_path, seal(values)), Step.SIGNATURES, VerifyCode.ENTROPY_NOT_BOUND, 1
    )
    assert (finding.seat, finding.rule) == (0, "BAD_SIGNATURE")


def test_a_contribution_bound_to_another_game_is_refused(tmp_path: Path) -> None:
    values = values_of("short", keyed=True)
    genesis = values[0]["body"]
    statement = entropy_statement("f" * 32, 1, genesis["commitment"])
    genesis["entropy"][1] = sign(PLAYER_KEYS[1], "entropy", canonical_bytes(statement), 2)
    _cosign(values)
    finding = assert_fails(
        verify_lines(tmp_path, seal(values)), Step.SIGNATURES, VerifyCode.ENTROPY_NOT_BOUND, 1
    )
    assert finding.seat == 1


def test_entropy_that_is_no_signature_at_all_is_refused(tmp_path: Path) -> None:
    values = values_of("short", keyed=True)
    values[0]["body"]["entropy"][0] = "ab" * 32  # 32 bytes: a v1-style contribution
    _cosign(values)
    finding = assert_fails(
        verify_lines(tmp_path, seal(values)), Step.SIGNATURES, VerifyCode.ENTROPY_NOT_BOUND, 1
    )
    assert (finding.seat, finding.rule) == (0, "BAD_SIGNATURE_ENCODING")


def test_the_table_asks_for_entropy_only_after_publishing_the_commitment(tmp_path: Path) -> None:
    asked: list[tuple[str, bytes]] = []

    def signer(key: Ed25519PrivateKey):  # type: ignore[no-untyped-def]
        sign_as = player_signer(key)

        def answer(kind: str, message: bytes, version: int) -> str | None:
            asked.append((kind, message))
            return sign_as(kind, message, version)

        return answer

    players = [
        PlayerInfo(f"p{seat}", f"b{seat}", raw_public_bytes(key))
        for seat, key in enumerate(PLAYER_KEYS[:2])
    ]
    signers = [signer(key) for key in PLAYER_KEYS[:2]]
    game = "ab" * 16
    Table.create(
        tmp_path / "g.jsonl",
        load_rules("table"),
        players,
        TABLE_KEY,
        SECRET,
        None,
        player_signers=signers,
        game_id=game,
    ).close()
    kinds = [kind for kind, _ in asked]
    assert kinds == ["entropy", "entropy", "genesis", "genesis"]
    first_question = json.loads(asked[0][1])
    assert first_question == {"commitment": commitment(SECRET), "game": game, "player": 0}


def test_the_table_never_writes_entropy_that_does_not_answer_its_commitment(
    tmp_path: Path,
) -> None:
    players = [
        PlayerInfo(f"p{seat}", "b", raw_public_bytes(key))
        for seat, key in enumerate(PLAYER_KEYS[:2])
    ]
    honest = player_signer(PLAYER_KEYS[0])

    def stale(kind: str, message: bytes, version: int) -> str | None:  # an old commitment's
        if kind == "entropy":
            old = entropy_statement("ab" * 16, 1, commitment(bytes(32)))
            return sign(PLAYER_KEYS[1], kind, canonical_bytes(old), 2)
        return player_signer(PLAYER_KEYS[1])(kind, message, version)

    path = tmp_path / "g.jsonl"
    with pytest.raises(TableError, match="seat 1: ENTROPY_NOT_BOUND"):
        Table.create(
            path,
            load_rules("table"),
            players,
            TABLE_KEY,
            SECRET,
            None,
            player_signers=[honest, stale],
            game_id="ab" * 16,
        )
    assert not path.exists()


# -- what each player had seen -------------------------------------------------------------


def test_a_table_that_showed_a_player_another_history_is_caught_by_the_log(
    tmp_path: Path,
) -> None:
    """docs/log-format.md §6: "line `k` of this log must hash to `H` (`SEEN_MISMATCH`)":
    the player signed what it had seen, so the table cannot repair it."""
    values = values_of("short", keyed=True)
    index = _last_submission(values)
    seen = values[index]["body"]["seen"]
    seen["hash"] = "ee" * 32  # the record this player was shown, of another history
    body = values[index]["body"]
    statement = {key: body[key] for key in ("game", "hand", "move", "n", "player", "seen")}
    values[index]["sigs"]["player"] = sign(
        PLAYER_KEYS[body["player"]], "submission", canonical_bytes(statement), 2
    )
    finding = assert_fails(
        verify_lines(tmp_path, seal(values, index, repoint_seen=False)),
        Step.CHAIN,
        VerifyCode.SEEN_MISMATCH,
        index + 1,
    )
    assert (finding.expected, finding.found) != (None, None) and finding.found == "ee" * 32


def test_a_record_a_player_saw_cannot_be_rewritten(tmp_path: Path) -> None:
    """A table re-signing a record after a player saw it must point that player's `seen`
    at the new record, which breaks the player's signature over the old one."""
    values = values_of("short", keyed=True)
    index = next(
        i
        for i in range(2, len(values))
        if values[i]["body"]["kind"] == "move"
        and values[i]["body"]["t_ms"] > values[i - 1]["body"]["t_ms"]
    )
    values[index]["body"]["t_ms"] -= 1  # the table places the move a millisecond earlier
    watcher = next(
        i
        for i in range(index + 1, len(values))
        if values[i]["body"]["kind"] in SUBMISSION_KINDS
        and values[i]["body"]["seen"]["seq"] >= index
    )
    assert_fails(
        verify_lines(tmp_path, seal(values, index)),
        Step.SIGNATURES,
        VerifyCode.BAD_PLAYER_SIGNATURE,
        watcher + 1,
    )
    # Left pointing at the old record, the chain itself refuses it.
    values = values_of("short", keyed=True)
    values[index]["body"]["t_ms"] -= 1
    assert_fails(
        verify_lines(tmp_path, seal(values, index, repoint_seen=False)),
        Step.CHAIN,
        VerifyCode.SEEN_MISMATCH,
        watcher + 1,
    )


def test_seen_must_name_a_record_before_its_own(tmp_path: Path) -> None:
    values = values_of("short")
    index = _last_submission(values)
    values[index]["body"]["seen"]["seq"] = index  # itself (the window's far edge: below)
    assert_fails(
        verify_lines(tmp_path, seal(values, index, repoint_seen=False)),
        Step.CHAIN,
        VerifyCode.SEEN_OUT_OF_RANGE,
        index + 1,
    )


def test_a_submission_without_seen_is_off_the_v2_schema(tmp_path: Path) -> None:
    values = values_of("short")
    index = first(values, "move")
    del values[index]["body"]["seen"]
    assert_fails(
        verify_lines(tmp_path, seal(values, index)), Step.SCHEMA, VerifyCode.SCHEMA, index + 1
    )


def test_the_table_refuses_a_seen_record_it_never_wrote(tmp_path: Path) -> None:
    players = [PlayerInfo("a", "r"), PlayerInfo("b", "g")]
    entropy = [bytes([seat + 1]) * 16 for seat in range(2)]
    with Table.create(
        tmp_path / "g.jsonl", load_rules("table"), players, TABLE_KEY, SECRET, entropy
    ) as table:
        head = table.head
        assert head.seq == table.records - 1
        move = str(legal_moves(table.state, 0)[0])
        with pytest.raises(ValueError, match="not one of the last"):
            table.submit(0, move, 1, 0, None, Seen(seq=head.seq, hash="0" * 64))


# -- acceptance of the result ----------------------------------------------------------------


def test_a_keyed_table_asks_every_seat_to_accept_the_final_record() -> None:
    values = values_of("short", keyed=True)
    final = values[-1]
    body = canonical_bytes(final["body"])
    accepts = final["sigs"]["accepts"]
    assert accepts == [
        sign(key, ACCEPT, body, FORMAT_VERSION) for key in PLAYER_KEYS[: len(accepts)]
    ]


def test_a_seat_that_declines_is_listed_as_not_accepting(tmp_path: Path) -> None:
    values = values_of("short", keyed=True)
    values[-1]["sigs"]["accepts"][1] = None
    report = verify_lines(tmp_path, seal(values, len(values), keep_accepts=True))
    assert report.verdict is Verdict.VERIFIED, report.finding
    assert report.accepted_by == (0,)


def test_an_acceptance_that_does_not_verify_is_refused(tmp_path: Path) -> None:
    values = values_of("short", keyed=True)
    accepts = values[-1]["sigs"]["accepts"]
    accepts[0], accepts[1] = accepts[1], accepts[0]
    finding = assert_fails(
        verify_lines(tmp_path, seal(values, len(values), keep_accepts=True)),
        Step.SIGNATURES,
        VerifyCode.BAD_ACCEPTANCE,
        len(values),
    )
    assert (finding.seat, finding.rule) == (0, "BAD_SIGNATURE")
    values[-1]["sigs"]["accepts"] = [*accepts, None]  # one entry more than there are seats
    assert_fails(
        verify_lines(tmp_path, seal(values, len(values), keep_accepts=True)),
        Step.SIGNATURES,
        VerifyCode.BAD_ACCEPTANCE,
        len(values),
    )


@pytest.mark.parametrize("where", ["unkeyed", "not-final"])
def test_acceptances_belong_on_the_final_record_of_a_keyed_game(tmp_path: Path, where: str) -> None:
    values = values_of("short", keyed=where != "unkeyed")
    index = len(values) - 1 if where == "unkeyed" else first(values, "move")
    values[index]["sigs"]["accepts"] = ["ab" * 64, None]
    assert_fails(
        verify_lines(tmp_path, seal(values, len(values), keep_accepts=True)),
        Step.SIGNATURES,
        VerifyCode.UNEXPECTED_SIGNATURE,
        index + 1,
    )


# -- versions ---------------------------------------------------------------------------------


@pytest.mark.parametrize("log", V1_LOGS, ids=[path.stem for path in V1_LOGS])
def test_v1_logs_still_verify(log: Path) -> None:
    from racing_demon.log.keys import load_public_key

    key = raw_public_bytes(load_public_key(V1_TABLE_KEY))
    report = verify_log(log, Settings(table_key=key))
    assert report.verdict is Verdict.VERIFIED, report.finding
    assert report.format_version == 1 and report.accepted_by == ()


def test_a_v2_record_signed_as_v1_is_refused(tmp_path: Path) -> None:
    """docs/log-format.md §5: "The type binds both the record kind and the format version" """
    values = values_of("short")
    lines = seal(values)
    index = first(values, "move")
    body = values[index]["body"]
    values[index]["sigs"]["table"] = sign(TABLE_KEY, body["kind"], canonical_bytes(body), 1)
    from racing_demon.log.records import line_bytes

    lines[index] = line_bytes(body, values[index]["sigs"])
    finding = assert_fails(
        verify_lines(tmp_path, lines, PINNED),
        Step.SIGNATURES,
        VerifyCode.BAD_TABLE_SIGNATURE,
        index + 1,
    )
    assert finding.rule == "BAD_SIGNATURE"
    assert TABLE_PUB  # the pinned key is the one that signed both


# -- the docs' worked example, and the window's edge -------------------------------------------


DEAL_SPEC = Path(__file__).parent.parent / "docs" / "deal-spec.md"


def test_the_deal_specs_worked_entropy_example_is_what_the_code_signs() -> None:
    text = DEAL_SPEC.read_text(encoding="utf-8")
    begin = "<!-- worked example: entropy contribution (begin) -->"
    end = "<!-- worked example: entropy contribution (end) -->"
    block = text[text.index(begin) + len(begin) : text.index(end)]
    fields = dict(
        line.split(": ", 1) for line in block.splitlines() if ": " in line and "```" not in line
    )
    key = Ed25519PrivateKey.from_private_bytes(bytes.fromhex(fields["private key hex"]))
    assert raw_public_bytes(key).hex() == fields["public key hex"]
    assert fields["commitment"] == commitment(bytes(range(32)))  # deal-spec step 1's secret
    statement = entropy_statement(fields["game"], int(fields["seat"]), fields["commitment"])
    assert canonical_bytes(statement).decode() == fields["statement bytes"]
    assert sign(key, "entropy", canonical_bytes(statement), 2) == fields["signature hex"]


def _submission_record(seq: int, seen: Seen) -> Record:
    event = Submission(kind=RecordKind.MOVE, hand=1, seat=0, n=0, move="0 turn", seen=seen)
    return Record(game="ab" * 16, seq=seq, t_ms=5, prev="h" * 64, payload=event)


@pytest.mark.parametrize(("back", "holds"), [(4096, True), (4097, False)])
def test_seen_may_name_a_record_at_most_4096_back(back: int, holds: bool) -> None:
    """docs/log-format.md §6: "It must be one of the 4,096 records before this one" """
    seq = 5000
    recent: deque[str] = deque((f"{index:064x}" for index in range(seq)), maxlen=SEEN_WINDOW)
    genesis = Record(game="ab" * 16, seq=0, t_ms=0, prev=None, payload=values_genesis())
    seen = Seen(seq=seq - back, hash=f"{seq - back:064x}")
    record = replace(_submission_record(seq, seen), prev=recent[-1])
    check = functools.partial(
        check_chain,
        seq + 1,
        record,
        genesis=genesis,
        final_line=None,
        recent_hashes=recent,
        last_t_ms=0,
        wanted_game=None,
    )
    if holds:
        check()
    else:
        with pytest.raises(StepFailed) as failed:
            check()
        assert failed.value.finding.code is VerifyCode.SEEN_OUT_OF_RANGE


def values_genesis() -> Genesis:
    body = values_of("short")[0]["body"]
    return parse_record(body).payload  # type: ignore[return-value]
