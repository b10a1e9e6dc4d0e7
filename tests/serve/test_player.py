"""The serve test client's own checks, against logs the package's ``Table`` writes in this
process (no server): the client keeps only lines that extend the table-signed chain,
signs entropy and the genesis only for its own game, seat, key, commitment and entropy,
and accepts a final record only when its copy, replayed, scores the same.

Issue 31: "the server pushes every record exactly as the log holds it (the line's bytes),
so a client can keep its own copy and check chain and signatures itself; the client sends
each move signed with its `seen`".
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from racing_demon.game.deal import commitment
from racing_demon.game.engine import legal_moves
from racing_demon.game.flow import HandStart, MatchFlow, Seen, Submission
from racing_demon.log.canonical import canonical_bytes
from racing_demon.log.keys import raw_public_bytes
from racing_demon.log.receipts import Receipt, SubmissionCode, seal_receipt, statement_bytes_of
from racing_demon.log.records import (
    ACCEPT,
    ENTROPY,
    FORMAT_VERSION,
    body_bytes,
    chain_hash,
    entropy_statement,
    event_of,
    parse_record,
    submission_statement,
)
from racing_demon.log.signing import verify
from racing_demon.log.writer import seal
from racing_demon.profiles import builtin_document, rules_from_document
from racing_demon.sim.bots import HARD, NORMAL
from racing_demon.sim.simulate import SimulationSeed, simulate
from racing_demon.table import Table, sign_submission
from racing_demon.table.errors import SubmissionError

from .player import (
    ClientCode,
    ClientRefusal,
    Copy,
    SeatView,
    check_receipt,
    checked_pack,
    entropy_answer,
    final_answer,
    genesis_answer,
)

TABLE_KEY = Ed25519PrivateKey.from_private_bytes(bytes([7]) * 32)
OTHER_KEY = Ed25519PrivateKey.from_private_bytes(bytes([8]) * 32)
PLAYER_KEYS = [Ed25519PrivateKey.from_private_bytes(bytes([70 + seat]) * 32) for seat in range(3)]
SEED = "serve client"


def one_hand_rules() -> dict[str, object]:
    """Nertz for one hand: the short match the server tests play too."""
    document = builtin_document("nertz")
    document["name"] = "nertz-one-hand"
    document["match"]["target"] = None
    document["match"]["max_hands"] = 1
    return document


@dataclass(frozen=True)
class Played:
    lines: list[bytes]
    receipts: list[list[bytes]]
    secret: bytes

    @property
    def table_pub(self) -> bytes:
        return raw_public_bytes(TABLE_KEY)

    def copy(self, upto: int | None = None) -> Copy:
        copy = Copy(self.table_pub)
        for line in self.lines[:upto]:
            copy.add(line)
        return copy


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> Played:
    """A whole keyed match of three bots, with every seat's receipts."""
    path = tmp_path_factory.mktemp("played") / "game.jsonl"
    simulation = simulate(
        path,
        rules_from_document(one_hand_rules()),
        (HARD, NORMAL, HARD),
        SEED,
        TABLE_KEY,
        player_keys=PLAYER_KEYS,
    )
    return Played(
        lines=path.read_bytes().splitlines(),
        receipts=[receipt.read_bytes().splitlines() for receipt in simulation.receipts],
        secret=SimulationSeed.from_text(SEED).dealer_secret,
    )


def body(line: bytes) -> dict[str, object]:
    value = json.loads(line)["body"]
    assert isinstance(value, dict)
    return value


def resealed(line: bytes, key: Ed25519PrivateKey = TABLE_KEY, **changes: object) -> bytes:
    """``line`` with its body changed and signed again by ``key``."""
    value = json.loads(line)
    record = parse_record({**value["body"], **changes})
    sigs = {name: sig for name, sig in value["sigs"].items() if name != "table"}
    return seal(record, key, sigs)


# -- the copy --------------------------------------------------------------------------


def test_the_copy_keeps_every_line_of_a_whole_match(played: Played) -> None:
    """ "a client can keep its own copy": every line the table wrote extends the chain."""
    copy = played.copy()
    assert copy.data() == b"".join(line + b"\n" for line in played.lines)
    assert copy.finished
    assert copy.hand == 1
    head = copy.head
    assert head is not None and head.seq == len(played.lines) - 1
    for seat in range(3):
        numbers = [
            int(str(body(line)["n"])) for line in played.lines if body(line).get("player") == seat
        ]
        assert copy.next_n(seat) == len(numbers) == max(numbers) + 1


def test_the_copy_refuses_a_changed_line(played: Played) -> None:
    """A line whose bytes changed after the table signed them (a later time)."""
    copy = played.copy(5)
    changed = played.lines[5].replace(b'"t_ms":', b'"t_ms":1', 1)
    with pytest.raises(ClientRefusal) as refused:
        copy.add(changed)
    assert refused.value.code == "BAD_TABLE_SIGNATURE"
    assert len(copy.lines) == 5  # nothing kept


def test_the_copy_refuses_a_broken_chain(played: Played) -> None:
    """A line the table signed whose prev is not the previous line's hash, and a line that
    skips one: both break the chain."""
    copy = played.copy(5)
    forged = resealed(played.lines[5], prev="0" * 64)
    with pytest.raises(ClientRefusal) as refused:
        copy.add(forged)
    assert refused.value.code == "PREV_MISMATCH"
    with pytest.raises(ClientRefusal) as skipped:
        copy.add(played.lines[6])
    assert skipped.value.code == "SEQ_MISMATCH"
    copy.add(played.lines[5])  # the true line still extends it
    assert len(copy.lines) == 6


def test_the_copy_refuses_a_bad_table_signature(played: Played) -> None:
    """The next line exactly, but signed by another key than the welcome's table key."""
    copy = played.copy(5)
    other = resealed(played.lines[5], OTHER_KEY)
    with pytest.raises(ClientRefusal) as refused:
        copy.add(other)
    assert refused.value.code == "BAD_TABLE_SIGNATURE"


def test_the_copy_refuses_bytes_that_are_not_canonical_and_lines_after_the_final(
    played: Played,
) -> None:
    copy = played.copy(5)
    with pytest.raises(ClientRefusal) as spaced:
        copy.add(played.lines[5].replace(b":", b": ", 1))
    assert spaced.value.code == "NOT_CANONICAL"
    whole = played.copy()
    with pytest.raises(ClientRefusal) as after:
        whole.add(played.lines[-1])
    assert after.value.code == ClientCode.AFTER_FINAL


def test_each_seats_view_from_its_own_pack_is_the_tables_position(played: Played) -> None:
    """docs/protocol.md §5: "a client knows its own piles from its pack and its own moves,
    and the foundations from every record's move". Each seat's view, fed only its own
    packs and the records, matches the verifier's replay (every pack, from the secret) at
    every record: its own piles, the centre, the clock, phase and stall bookkeeping; the
    other seats' piles by size only; and its legal moves are the same."""
    copy = played.copy()
    genesis = copy.genesis
    assert genesis is not None
    rules = rules_from_document(genesis.rules)
    dealer = genesis.dealer(played.secret)
    flow = MatchFlow.begin(rules, dealer, 3)
    views = [SeatView(rules, seat, 3) for seat in range(3)]
    packs = [{1: dealer.pack(1, seat)} for seat in range(3)]
    compared = 0
    for count, record in enumerate(copy.records[1:], 2):
        event = event_of(record.payload)
        assert event is not None
        flow = flow.play(event, record.t_ms)
        for seat, view in enumerate(views):
            view.follow(copy.records[:count], packs[seat])
            if not flow.hand_open:
                assert view.state is None
                continue
            real, seen = flow.state, view.state
            assert real is not None and seen is not None
            assert seen.seats[seat] == real.seats[seat]
            assert seen.foundations == real.foundations
            shared = ("clock_ms", "phase", "last_centre_ms", "shifts_since_play", "agreed")
            assert [getattr(seen, name) for name in shared] == [
                getattr(real, name) for name in shared
            ]
            assert seen.turned_since_play == real.turned_since_play
            assert [
                (len(s.demon), [len(w) for w in s.work], len(s.stock), len(s.waste))
                for s in seen.seats
            ] == [
                (len(s.demon), [len(w) for w in s.work], len(s.stock), len(s.waste))
                for s in real.seats
            ]
            assert legal_moves(seen, seat) == legal_moves(real, seat)
            compared += 1
    assert compared > 3 * 100


def test_a_pack_is_kept_only_when_its_hand_start_names_it(played: Played) -> None:
    """docs/protocol.md §6: the pack's digest, with the hand and the seat, is
    ``packs[SEAT]`` of the hand's hand_start; another seat's pack or a changed order is
    refused, and so is a pack before its hand_start."""
    copy = played.copy(2)  # the genesis and hand 1's hand_start
    genesis = copy.genesis
    assert genesis is not None
    dealer = genesis.dealer(played.secret)
    faces = [card.face for card in dealer.pack(1, 1)]
    assert checked_pack(copy, 1, 1, faces) == dealer.pack(1, 1)
    swapped = [faces[1], faces[0], *faces[2:]]
    for seat, given in ((1, swapped), (2, faces), (1, faces[:51])):
        with pytest.raises(ClientRefusal) as refused:
            checked_pack(copy, seat, 1, given)
        assert refused.value.code == ClientCode.PACK_MISMATCH
    with pytest.raises(ClientRefusal) as early:
        checked_pack(played.copy(1), 1, 1, faces)
    assert early.value.code == ClientCode.PROTOCOL


# -- entropy and genesis -----------------------------------------------------------------


def genesis_of(played: Played) -> dict[str, object]:
    return body(played.lines[0])


def test_the_entropy_answer_is_the_seats_signature_over_the_commitment(played: Played) -> None:
    """deal-spec step 3: a keyed seat's entropy is its signature over the commitment."""
    genesis = genesis_of(played)
    game, promise = str(genesis["game"]), str(genesis["commitment"])
    assert promise == commitment(played.secret)
    statement = canonical_bytes(entropy_statement(game, 1, promise)).decode()
    answered: dict[str, str] = {}
    signature = entropy_answer(
        PLAYER_KEYS[1], statement, game=game, seat=1, commitment=promise, answered=answered
    )
    assert signature == genesis["entropy"][1]  # type: ignore[index]
    assert (
        verify(raw_public_bytes(PLAYER_KEYS[1]), ENTROPY, statement.encode(), signature, 2) is None
    )


@pytest.mark.parametrize(
    ("change", "code"),
    [
        ({"game": "0" * 32}, ClientCode.WRONG_GAME),
        ({"player": 2}, ClientCode.WRONG_SEAT),
        ({"commitment": "1" * 64}, ClientCode.WRONG_COMMITMENT),
    ],
)
def test_the_entropy_answer_refuses_another_statement(
    played: Played, change: dict[str, object], code: ClientCode
) -> None:
    genesis = genesis_of(played)
    game, promise = str(genesis["game"]), str(genesis["commitment"])
    statement = {**entropy_statement(game, 1, promise), **change}
    with pytest.raises(ClientRefusal) as refused:
        entropy_answer(
            PLAYER_KEYS[1],
            canonical_bytes(statement).decode(),
            game=game,
            seat=1,
            commitment=promise,
            answered={},
        )
    assert refused.value.code == code


def test_the_entropy_answer_refuses_a_second_commitment_for_one_game(played: Played) -> None:
    """deal-spec: "a second statement for the same game, which a client should refuse"."""
    game = str(genesis_of(played)["game"])
    answered: dict[str, str] = {}
    for promise in ("1" * 64, "2" * 64):
        statement = canonical_bytes(entropy_statement(game, 0, promise)).decode()
        if promise == "1" * 64:
            entropy_answer(
                PLAYER_KEYS[0], statement, game=game, seat=0, commitment=promise, answered=answered
            )
            continue
        with pytest.raises(ClientRefusal) as refused:
            entropy_answer(
                PLAYER_KEYS[0], statement, game=game, seat=0, commitment=promise, answered=answered
            )
        assert refused.value.code == ClientCode.SECOND_COMMITMENT


def cosign(played: Played, genesis: dict[str, object], seat: int = 1, **given: object) -> str:
    options: dict[str, object] = {
        "game": genesis_of(played)["game"],
        "seat": seat,
        "commitment": genesis_of(played)["commitment"],
        "entropy": genesis_of(played)["entropy"][seat],  # type: ignore[index]
        "rules_digest": rules_from_document(one_hand_rules()).digest(),
        "table_key": played.table_pub,
        **given,
    }
    return genesis_answer(
        PLAYER_KEYS[seat],
        canonical_bytes(genesis).decode(),
        **options,  # type: ignore[arg-type]
    )


def test_the_genesis_answer_cosigns_the_true_genesis(played: Played) -> None:
    """deal-spec step 5: the seat co-signs the genesis body; the same signature the log holds."""
    signature = cosign(played, genesis_of(played))
    assert signature == json.loads(played.lines[0])["sigs"]["players"][1]


def test_the_genesis_answer_refuses_a_genesis_without_its_key(played: Played) -> None:
    """A genesis that seats another key at this seat (the server swapped the player out)."""
    genesis = genesis_of(played)
    players = [dict(entry) for entry in genesis["players"]]  # type: ignore[attr-defined]
    players[1]["key"] = raw_public_bytes(OTHER_KEY).hex()
    with pytest.raises(ClientRefusal) as refused:
        cosign(played, {**genesis, "players": players})
    assert refused.value.code == ClientCode.KEY_MISSING


@pytest.mark.parametrize(
    ("field", "value", "code"),
    [
        ("commitment", "3" * 64, ClientCode.WRONG_COMMITMENT),
        ("game", "4" * 32, ClientCode.WRONG_GAME),
        ("kind", "hand_start", ClientCode.NOT_A_GENESIS),
        ("table_key", "5" * 16, ClientCode.WRONG_TABLE_KEY),
    ],
)
def test_the_genesis_answer_refuses_another_genesis(
    played: Played, field: str, value: object, code: ClientCode
) -> None:
    with pytest.raises(ClientRefusal) as refused:
        cosign(played, {**genesis_of(played), field: value})
    assert refused.value.code == code


def test_the_genesis_answer_refuses_other_entropy_and_other_rules(played: Played) -> None:
    genesis = genesis_of(played)
    entropy = list(genesis["entropy"])  # type: ignore[call-overload]
    entropy[1] = "ab" * 64
    with pytest.raises(ClientRefusal) as swapped:
        cosign(played, {**genesis, "entropy": entropy})
    assert swapped.value.code == ClientCode.ENTROPY_MISSING
    nertz = rules_from_document(builtin_document("nertz")).digest()
    with pytest.raises(ClientRefusal) as rules:
        cosign(played, genesis, rules_digest=nertz)
    assert rules.value.code == ClientCode.WRONG_RULES


def test_a_body_that_is_not_canonical_is_refused(played: Played) -> None:
    text = json.dumps(genesis_of(played))  # spaces after separators
    with pytest.raises(ClientRefusal) as refused:
        genesis_answer(
            PLAYER_KEYS[0],
            text,
            game="",
            seat=0,
            commitment="",
            entropy="",
            rules_digest=None,
            table_key=played.table_pub,
        )
    assert refused.value.code == ClientCode.NOT_CANONICAL


# -- the final record ------------------------------------------------------------------


def test_the_final_answer_accepts_the_final_its_copy_replays_to(played: Played) -> None:
    """The seat accepts the final record after recomputing the scores from its copy: the
    same acceptance as the log holds (Ed25519 signs deterministically)."""
    copy = played.copy(len(played.lines) - 1)
    final = body_bytes(played.lines[-1]).decode()
    for seat in range(3):
        signature = final_answer(PLAYER_KEYS[seat], copy, final)
        assert signature == json.loads(played.lines[-1])["sigs"]["accepts"][seat]
        assert (
            verify(
                raw_public_bytes(PLAYER_KEYS[seat]),
                ACCEPT,
                final.encode(),
                signature,
                FORMAT_VERSION,
            )
            is None
        )


@pytest.mark.parametrize(
    ("change", "code"),
    [
        ("totals", ClientCode.SCORES_DIFFER),
        ("winners", ClientCode.SCORES_DIFFER),
        ("secret", ClientCode.SECRET_MISMATCH),
        ("prev", ClientCode.NOT_THE_NEXT_FINAL),
        ("records", ClientCode.NOT_THE_NEXT_FINAL),
    ],
)
def test_the_final_answer_declines_a_final_its_copy_does_not_give(
    played: Played, change: str, code: ClientCode
) -> None:
    copy = played.copy(len(played.lines) - 1)
    final = body(played.lines[-1])
    changed: object
    if change == "totals":
        changed = [total + 1 for total in final["totals"]]  # type: ignore[attr-defined]
    elif change == "winners":
        changed = [seat for seat in range(3) if seat not in final["winners"]]  # type: ignore[operator]
    elif change == "secret":
        changed = "00" * 32
    elif change == "prev":
        changed = "0" * 64
    else:
        changed = final["records"] + 1  # type: ignore[operator]
    with pytest.raises(ClientRefusal) as refused:
        final_answer(PLAYER_KEYS[0], copy, canonical_bytes({**final, change: changed}).decode())
    assert refused.value.code == code


def test_the_final_answer_declines_when_its_copy_lacks_a_record(played: Played) -> None:
    """A copy that missed the hand_end: the final body does not follow it."""
    copy = played.copy(len(played.lines) - 2)
    with pytest.raises(ClientRefusal) as refused:
        final_answer(PLAYER_KEYS[0], copy, body_bytes(played.lines[-1]).decode())
    assert refused.value.code == ClientCode.NOT_THE_NEXT_FINAL


# -- receipts ----------------------------------------------------------------------------


def submission_lines(played: Played, seat: int) -> list[tuple[int, bytes]]:
    return [
        (number, line)
        for number, line in enumerate(played.lines)
        if body(line).get("player") == seat and "n" in body(line)
    ]


def test_a_receipt_is_kept_only_for_the_statement_the_seat_signed(played: Played) -> None:
    copy = played.copy()
    game = str(genesis_of(played)["game"])
    (seq, line), *_ = submission_lines(played, 2)
    record = parse_record(body(line))
    statement = statement_bytes_of(record)
    receipt_line = played.receipts[2][0]
    receipt = check_receipt(copy, 1, receipt_line, game=game, seat=2, n=0, statement=statement)
    assert receipt.seq == seq and receipt.logged
    with pytest.raises(ClientRefusal) as other_statement:
        check_receipt(copy, 1, receipt_line, game=game, seat=2, n=0, statement=statement + b" ")
    assert other_statement.value.code == ClientCode.RECEIPT_REFUSED
    with pytest.raises(ClientRefusal) as other_seat:
        check_receipt(copy, 1, receipt_line, game=game, seat=1, n=0, statement=statement)
    assert other_seat.value.code == ClientCode.RECEIPT_REFUSED
    value = json.loads(receipt_line)["body"]
    forged = seal_receipt(
        Receipt(
            game=value["game"],
            seat=value["player"],
            n=value["n"],
            submission=value["submission"],
            t_ms=value["t_ms"],
            outcome=value["outcome"],
            reason=value.get("reason"),
            seq=value["seq"],
            record=value["record"],
            v=value["v"],
        ),
        OTHER_KEY,
    )
    with pytest.raises(ClientRefusal) as unsigned:
        check_receipt(copy, 1, forged, game=game, seat=2, n=0, statement=statement)
    assert unsigned.value.code == ClientCode.RECEIPT_REFUSED
    assert "BAD_TABLE_SIGNATURE" in unsigned.value.message


def test_a_refusal_across_a_hand_boundary_names_the_statement_as_the_table_read_it(
    tmp_path: Path,
) -> None:
    """A seat's move signed in hand 1 that reaches the table after hand 2's hand_start: "a
    move signed for a hand that has just ended fails its signature" (docs/protocol.md §5),
    and "its refusal's `submission` hashes the statement as the table read it", with the
    hand in play (docs/log-format.md §9). The client took that receipt for one naming
    another statement and stopped playing: the bench's 50-table runs counted 8-25 such
    client problems (issue 31). It keeps the receipt now, and still refuses a refusal
    that names another move."""
    rules = one_hand_rules()
    rules["match"]["max_hands"] = 2  # type: ignore[index]
    log = tmp_path / "two-hands.jsonl"
    simulate(
        log,
        rules_from_document(rules),
        (HARD, NORMAL, HARD),
        SEED,
        TABLE_KEY,
        player_keys=PLAYER_KEYS,
    )
    lines = log.read_bytes().splitlines()
    records = [parse_record(body(line)) for line in lines]
    second_deal = next(
        number
        for number, record in enumerate(records)
        if isinstance(record.payload, HandStart) and record.payload.hand == 2
    )
    prefix = tmp_path / "prefix.jsonl"
    prefix.write_bytes(b"".join(line + b"\n" for line in lines[: second_deal + 1]))
    table = Table.resume(
        prefix, TABLE_KEY, SimulationSeed.from_text(SEED).dealer_secret, durable=False
    )
    copy = Copy(raw_public_bytes(TABLE_KEY))
    for line in lines[: second_deal + 1]:
        copy.add(line)
    game = records[0].game
    seat = 0
    move = next(
        record.payload.move
        for record in reversed(records[:second_deal])
        if isinstance(record.payload, Submission) and record.payload.seat == seat
    )
    seen = Seen(seq=second_deal - 1, hash=chain_hash(lines[second_deal - 1]))  # in hand 1
    n = copy.next_n(seat)
    signature = sign_submission(PLAYER_KEYS[seat], game, 1, seat, n, move, seen)
    statement = canonical_bytes(submission_statement(game, 1, seat, n, move, seen))
    try:
        with pytest.raises(SubmissionError) as refused:
            table.submit(seat, move, records[second_deal].t_ms, n, signature, seen)
    finally:
        table.close()
    assert refused.value.code is SubmissionCode.BAD_SIGNATURE
    receipt_line = refused.value.receipt
    assert receipt_line is not None

    receipt = check_receipt(copy, 1, receipt_line, game=game, seat=seat, n=n, statement=statement)
    assert (receipt.outcome, receipt.reason) == ("refused", "BAD_SIGNATURE")

    other_move = canonical_bytes(submission_statement(game, 1, seat, n, move + " ", seen))
    with pytest.raises(ClientRefusal) as other:
        check_receipt(copy, 1, receipt_line, game=game, seat=seat, n=n, statement=other_move)
    assert other.value.code == ClientCode.RECEIPT_REFUSED
