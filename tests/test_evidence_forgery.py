"""Evidence nobody can forge against an honest table (issue 28, points 1-4 and 7).

Each test plays an honest match at a real keyed ``Table`` (``honest``), then attacks what it
wrote as a player, a holder of the log, or a dishonest table holding its key would: the
audit must judge each attack for what the table itself signed, and nothing else.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from hypothesis import given, settings
from hypothesis import strategies as st

from racing_demon.evidence import EvidenceCode, EvidenceReport, gather_evidence
from racing_demon.game.deal import MatchSeed
from racing_demon.game.duplicate import Shape
from racing_demon.game.engine import legal_moves
from racing_demon.log.canonical import canonical_bytes
from racing_demon.log.keys import public_pem, raw_public_bytes
from racing_demon.log.receipts import (
    Receipt,
    SubmissionCode,
    parse_receipt,
    record_reference,
    refused_receipt,
    seal_receipt,
    statement_bytes_of,
)
from racing_demon.log.records import SUBMISSION, body_hash, chain_hash, parse_record
from racing_demon.log.signing import pae, sign, verify
from racing_demon.profiles import load_rules
from racing_demon.schema import schema_errors
from racing_demon.table import (
    PlayerInfo,
    SubmissionError,
    Table,
    player_signer,
    sign_submission,
)
from racing_demon.testing.randomplay import play_on, word_chooser
from racing_demon.testing.tamper import reseal
from racing_demon.tournament.plan import Contribution, make_plan
from racing_demon.verify import Settings, Verdict, VerifyCode, verify_log

from conftest import invoke

TABLE_KEY = Ed25519PrivateKey.from_private_bytes(bytes([5]) * 32)
TABLE_PUB = raw_public_bytes(TABLE_KEY)
OTHER_KEY = Ed25519PrivateKey.from_private_bytes(bytes([6]) * 32)
KEYS = [Ed25519PrivateKey.from_private_bytes(bytes([70 + seat]) * 32) for seat in range(2)]
HOUR = 60 * 60_000
# The sample tournament's table 1, signed with the golden logs' table key: its final record
# was held until the organiser's reveal (scripts/regen_sample_games.py).
SAMPLES = Path(__file__).resolve().parents[1] / "sample_games"


@dataclass(frozen=True)
class Match:
    """An honest keyed match: its log, each seat's receipts as the table handed them out,
    and the MATCH_OVER refusal it gave seat 0 after the final record."""

    log: bytes
    receipts: tuple[tuple[bytes, ...], ...]
    refusal: bytes

    @property
    def lines(self) -> list[bytes]:
        return self.log.splitlines()

    @property
    def game(self) -> str:
        return str(json.loads(self.lines[0])["body"]["game"])

    def line_of(self, kind: str, player: int | None = None) -> int:
        """The 1-based number of the first line of ``kind`` (of seat ``player``)."""
        for number, line in enumerate(self.lines, 1):
            body = json.loads(line)["body"]
            if body["kind"] == kind and player in (None, body.get("player")):
                return number
        raise LookupError(kind)


def _play(directory: Path) -> Match:
    players = [PlayerInfo(f"p{seat}", "b", raw_public_bytes(key)) for seat, key in enumerate(KEYS)]
    path = directory / "honest.jsonl"
    table = Table.create(
        path,
        load_rules("peer2peer"),
        players,
        TABLE_KEY,
        bytes(32),
        None,
        player_signers=[player_signer(key) for key in KEYS],
        game_id="ab" * 16,
    )
    receipts: list[list[bytes]] = [[], []]
    t_ms = 0
    for step in range(12):
        seat = step % 2
        t_ms += 700
        table.advance(t_ms)
        moves = legal_moves(table.state, seat)
        if not moves:
            continue
        n, seen, text = table.next_n(seat), table.head, str(moves[0])
        signature = sign_submission(KEYS[seat], table.game, table.state.hand, seat, n, text, seen)
        receipts[seat].append(table.submit(seat, text, t_ms, n, signature, seen).receipt)
    table.advance(t_ms + HOUR)  # an hour of silence abandons the match
    assert table.finished
    with pytest.raises(SubmissionError) as refused:
        table.submit(0, "0 call", t_ms + HOUR, table.next_n(0))
    assert refused.value.code is SubmissionCode.MATCH_OVER and refused.value.receipt
    assert verify_log(path, Settings(TABLE_PUB)).verdict is Verdict.VERIFIED
    return Match(path.read_bytes(), tuple(tuple(seat) for seat in receipts), refused.value.receipt)


@pytest.fixture(scope="module")
def honest(tmp_path_factory: pytest.TempPathFactory) -> Match:
    return _play(tmp_path_factory.mktemp("honest"))


def _write(path: Path, lines: list[bytes]) -> Path:
    path.write_bytes(b"".join(line + b"\n" for line in lines))
    return path


def _edited(line: bytes, edit: Callable[[dict[str, dict[str, object]]], None]) -> bytes:
    value = json.loads(line)
    edit(value)
    return canonical_bytes(value)


def _resigned(line: bytes, **fields: object) -> bytes:
    """``line`` with ``fields`` of its body changed and the body signed again by the table's
    key: what only the table can make."""
    value = json.loads(line)
    value["body"].update(fields)
    body = value["body"]
    value["sigs"]["table"] = sign(TABLE_KEY, body["kind"], canonical_bytes(body), body["v"])
    return canonical_bytes(value)


def _evidence(
    tmp_path: Path,
    log: list[bytes],
    receipts: Sequence[bytes] = (),
    copies: Sequence[list[bytes]] = (),
) -> EvidenceReport:
    path = _write(tmp_path / "game.jsonl", log)
    files = [_write(tmp_path / "seat.receipts.jsonl", list(receipts))] if receipts else []
    against = [_write(tmp_path / f"copy{i}.jsonl", copy) for i, copy in enumerate(copies)]
    return gather_evidence(path, TABLE_PUB, files, against)


def _without_an_acceptance(match: Match) -> list[bytes]:
    """The log with seat 1's acceptance of the final record set to null: anyone holding the
    log can do it, and it still verifies."""

    def drop(value: dict[str, dict[str, object]]) -> None:
        accepts = value["sigs"]["accepts"]
        assert isinstance(accepts, list) and accepts[1] is not None
        accepts[1] = None

    return [*match.lines[:-1], _edited(match.lines[-1], drop)]


# -- 1. a fork is two different bodies the table signed -------------------------------------


def test_a_copy_with_an_acceptance_dropped_is_no_fork(tmp_path: Path, honest: Match) -> None:
    """Issue 28, point 1: "an acceptance set to null (which anyone may do, and the copy
    still verifies)" was reported as FORK; the bodies are equal, so it is no finding."""
    copy = _without_an_acceptance(honest)
    verified = verify_log(_write(tmp_path / "check.jsonl", copy), Settings(TABLE_PUB))
    assert verified.verdict is Verdict.VERIFIED and verified.accepted_by == (0,)
    assert _evidence(tmp_path, honest.lines, copies=[copy]).findings == ()


def test_a_copy_with_a_garbage_player_signature_is_invalid_not_a_fork(
    tmp_path: Path, honest: Match
) -> None:
    """Issue 28, point 1: "a player signature replaced by garbage" was reported as FORK; the
    copy is judged by the verifier's steps and is COPY_INVALID with the verifier's code."""
    number = honest.line_of("move", player=1)

    def garbage(value: dict[str, dict[str, object]]) -> None:
        value["sigs"]["player"] = "ab" * 64

    copy = list(honest.lines)
    copy[number - 1] = _edited(copy[number - 1], garbage)
    report = _evidence(tmp_path, honest.lines, copies=[copy])
    (finding,) = report.findings
    verdict = verify_log(tmp_path / "copy0.jsonl", Settings(TABLE_PUB))
    assert verdict.finding is not None
    assert verdict.finding.code is VerifyCode.BAD_PLAYER_SIGNATURE
    assert (finding.code, finding.line, finding.rule) == (
        EvidenceCode.COPY_INVALID,
        number,
        verdict.finding.code,
    )
    assert not finding.is_evidence and verdict.finding.message in finding.message


def test_a_body_the_table_signed_twice_is_a_fork_naming_what_differs(
    tmp_path: Path, honest: Match
) -> None:
    """Issue 28, point 1: "Bodies that differ at one seq, each with a valid table signature,
    are a FORK; say which members differ"."""
    number = honest.line_of("move", player=0)
    line = honest.lines[number - 1]
    t_ms = json.loads(line)["body"]["t_ms"]
    copy = [*honest.lines[: number - 1], _resigned(line, t_ms=t_ms + 1)]
    (fork,) = _evidence(tmp_path, honest.lines, copies=[copy]).findings
    assert (fork.code, fork.line, fork.seat, fork.members) == (
        EvidenceCode.FORK,
        number,
        0,
        ("t_ms",),
    )
    assert fork.said is not None and fork.compared is not None
    assert (fork.said.record, fork.compared.record) == (body_hash(copy[-1]), body_hash(line))
    assert "the bodies differ in t_ms" in fork.message and fork.is_evidence


def test_a_body_the_table_signed_is_a_fork_even_where_the_copy_fails_the_verifier(
    tmp_path: Path, honest: Match
) -> None:
    """A second body dated back in time fails the verifier's step 4, but the table signed
    it for that game and seq: a careful auditor calls that a fork, and says both."""
    number = honest.line_of("move", player=1)
    copy = [*honest.lines[: number - 1], _resigned(honest.lines[number - 1], t_ms=1)]
    (fork,) = _evidence(tmp_path, honest.lines, copies=[copy]).findings
    assert (fork.code, fork.members) == (EvidenceCode.FORK, ("t_ms",))
    assert "TIME_BACKWARDS" in fork.message


def test_a_record_of_another_game_spliced_into_a_copy_is_no_fork(
    tmp_path: Path, honest: Match
) -> None:
    """docs/log-format.md §10, copies, step 4: a body the table signed is a fork only as a
    record of the log's game. The same table signs many games; a player who splices into
    a copy a record of another game at the same seq shows two games, not two histories."""
    number = honest.line_of("move", player=1)
    spliced = _resigned(honest.lines[number - 1], game="cd" * 16)
    copy = [*honest.lines[: number - 1], spliced]
    (finding,) = _evidence(tmp_path, honest.lines, copies=[copy]).findings
    assert (finding.code, finding.is_evidence, finding.rule) == (
        EvidenceCode.COPY_INVALID,
        False,
        VerifyCode.GAME_ID_MISMATCH,
    )


def _another_signature(seed: bytes, message: bytes, nonce: int) -> bytes:
    """An Ed25519 signature of ``message`` by the key of ``seed``, made with ``nonce`` instead
    of the deterministic one (RFC 8032, section 5.1.6, step 2 replaced): as valid as the
    signature the key's holder gave the table, and other bytes. Any signer may make one."""
    q, order = 2**255 - 19, 2**252 + 27742317777372353535851937790883648493
    d = -121665 * pow(121666, q - 2, q) % q

    def add(a: tuple[int, int], b: tuple[int, int]) -> tuple[int, int]:
        (x1, y1), (x2, y2) = a, b
        t = d * x1 * x2 * y1 * y2
        return (
            (x1 * y2 + x2 * y1) * pow(1 + t, q - 2, q) % q,
            (y1 * y2 + x1 * x2) * pow(1 - t, q - 2, q) % q,
        )

    def times(point: tuple[int, int], scalar: int) -> tuple[int, int]:
        total = (0, 1)
        while scalar:
            if scalar & 1:
                total = add(total, point)
            point, scalar = add(point, point), scalar >> 1
        return total

    def encoded(point: tuple[int, int]) -> bytes:
        return (point[1] | (point[0] & 1) << 255).to_bytes(32, "little")

    y = 4 * pow(5, q - 2, q) % q
    xx = (y * y - 1) * pow(d * y * y + 1, q - 2, q) % q
    x = pow(xx, (q + 3) // 8, q)
    if (x * x - xx) % q:
        x = x * pow(2, (q - 1) // 4, q) % q
    base = (q - x if x % 2 else x, y)
    digest = hashlib.sha512(seed).digest()
    secret = int.from_bytes(digest[:32], "little") & (2**254 - 8) | 2**254
    public, r = encoded(times(base, secret)), encoded(times(base, nonce))
    k = int.from_bytes(hashlib.sha512(r + public + message).digest(), "little") % order
    return r + ((nonce + k * secret) % order).to_bytes(32, "little")


def test_a_copy_whose_player_signed_a_move_again_is_invalid_not_agreeing(
    tmp_path: Path, honest: Match
) -> None:
    """docs/log-format.md §10, copies, step 4. A keyed player may sign its own move again
    (Ed25519 with another nonce): the copy's line passes the verifier, its body the log's,
    its line another, and every later line, the log's own, fails the chain there. That is
    the copy's damage, not the log's: COPY_INVALID, where the audit said nothing, so the
    summary read "all agree" for a copy the verifier refuses."""
    number = honest.line_of("move", player=0)
    line = honest.lines[number - 1]
    record = parse_record(json.loads(line)["body"])
    statement = statement_bytes_of(record)
    message = pae(SUBMISSION, statement, record.v)
    again = _another_signature(bytes([70]) * 32, message, nonce=12345).hex()  # seat 0's key
    assert again != json.loads(line)["sigs"]["player"]
    assert verify(raw_public_bytes(KEYS[0]), SUBMISSION, statement, again, record.v) is None
    copy = list(honest.lines)
    copy[number - 1] = _edited(line, lambda value: value["sigs"].update(player=again))
    (finding,) = _evidence(tmp_path, honest.lines, copies=[copy]).findings
    assert (finding.code, finding.line, finding.rule) == (
        EvidenceCode.COPY_INVALID,
        number + 1,
        VerifyCode.PREV_MISMATCH,
    )


def test_a_copy_ending_in_a_torn_line_is_a_prefix(tmp_path: Path, honest: Match) -> None:
    """docs/log-format.md §10: a copy cut mid-line, as a crash leaves it, is read as the
    verifier reads it, a prefix: no finding."""
    path = tmp_path / "torn.jsonl"
    path.write_bytes(b"".join(line + b"\n" for line in honest.lines[:5]) + honest.lines[5][:40])
    report = gather_evidence(_write(tmp_path / "game.jsonl", honest.lines), TABLE_PUB, (), [path])
    assert report.findings == ()


# -- 2. a receipt names a record by what nobody else can change -------------------------------


def _v2(receipt: bytes, line: bytes) -> bytes:
    """``receipt`` as a v2 receipt: naming its record ``line`` by the line's chain hash."""
    made = parse_receipt(json.loads(receipt)["body"])
    assert made.v == 3 and made.record == body_hash(line)
    return seal_receipt(replace(made, v=2, record=chain_hash(line)), TABLE_KEY)


def test_an_honest_match_over_receipt_is_no_fork_when_an_acceptance_is_dropped(
    tmp_path: Path, honest: Match
) -> None:
    """Issue 28, point 2: "drop one acceptance (the copy still verifies) and the honest
    receipt becomes FORK evidence". A v3 receipt names the final record's body: no
    finding. A v2 one names the whole line, which nothing fixes on the last line: said so,
    and no evidence."""
    log = _without_an_acceptance(honest)
    receipt = parse_receipt(json.loads(honest.refusal)["body"])
    assert (receipt.v, receipt.reason, receipt.record) == (
        3,
        "MATCH_OVER",
        body_hash(honest.lines[-1]),
    )
    assert _evidence(tmp_path, log, [honest.refusal]).findings == ()
    report = _evidence(tmp_path, log, [_v2(honest.refusal, honest.lines[-1])])
    (finding,) = report.findings
    assert (finding.code, finding.is_evidence) == (EvidenceCode.LAST_LINE_CHANGED, False)
    assert "no evidence" in finding.message
    assert report.versions == ((2, 1),)


def test_a_v2_receipt_still_proves_a_fork_before_the_last_line(
    tmp_path: Path, honest: Match
) -> None:
    """v2 receipts keep the guarantee they had: a line that a later record fixes."""
    number = honest.line_of("move", player=0)
    receipt = _v2(honest.receipts[0][0], honest.lines[number - 1])
    values = [json.loads(line) for line in honest.lines]
    values[number - 1]["body"]["t_ms"] += 1
    forked = reseal(values, number - 1, key=TABLE_KEY)  # re-chained: the line is fixed
    report = _evidence(tmp_path, forked, [receipt])
    assert EvidenceCode.FORK in {finding.code for finding in report.findings}
    # Two v2 refusals naming one last line by two hashes are no evidence either.
    final = parse_receipt(json.loads(_v2(honest.refusal, honest.lines[-1]))["body"])
    other = replace(final, record=chain_hash(_without_an_acceptance(honest)[-1]), n=final.n + 1)
    both = [seal_receipt(final, TABLE_KEY), seal_receipt(other, TABLE_KEY)]
    cut = honest.lines[:-1]  # a copy of the log from before the final record
    codes = [finding.code for finding in _evidence(tmp_path, cut, both).findings]
    assert EvidenceCode.FORK not in codes and EvidenceCode.LAST_LINE_CHANGED in codes


def test_a_resumed_table_names_its_head_by_its_body(tmp_path: Path) -> None:
    """The table writes v3 receipts, a refusal naming its head by the head's body hash, also
    once resumed from its log (the writer learns the head's body from the log)."""
    players = [PlayerInfo(f"p{seat}", "b") for seat in range(2)]
    path = tmp_path / "resumed.jsonl"
    entropy = [bytes([seat + 1]) * 16 for seat in range(2)]
    Table.create(path, load_rules("peer2peer"), players, TABLE_KEY, bytes(32), entropy).close()
    with (
        Table.resume(path, TABLE_KEY, bytes(32)) as table,
        pytest.raises(SubmissionError) as refused,
    ):
        table.submit(0, "0 call", 10, 7)
    assert refused.value.code is SubmissionCode.WRONG_NUMBER and refused.value.receipt
    receipt = parse_receipt(json.loads(refused.value.receipt)["body"])
    last = path.read_bytes().splitlines()[-1]
    assert (receipt.v, receipt.seq, receipt.record) == (3, 1, body_hash(last))


# -- 3. FINAL_HELD is founded exactly at the held end ---------------------------------------


def _tournament_refusal(seq: int, reason: str, t_ms: int) -> tuple[bytes, list[bytes]]:
    from receipting import TABLE_KEY as GOLDEN_KEY

    lines = (SAMPLES / "tournament" / "table-1.jsonl").read_bytes().splitlines()
    game = str(json.loads(lines[0])["body"]["game"])
    refusal = refused_receipt(
        game, 0, 10_000, b"{}", t_ms, reason, seq, record_reference(lines[seq])
    )
    return seal_receipt(refusal, GOLDEN_KEY), lines


@pytest.mark.parametrize(
    ("reason", "named", "expected"),
    [
        ("FINAL_HELD", "last hand_end", set()),
        ("FINAL_HELD", "first hand_end", {EvidenceCode.REFUSAL_UNFOUNDED}),
        ("FINAL_HELD", "a move", {EvidenceCode.REFUSAL_UNFOUNDED}),
        ("MATCH_OVER", "final", set()),
        ("MATCH_OVER", "last hand_end", {EvidenceCode.REFUSAL_UNFOUNDED}),
    ],
)
def test_a_final_held_refusal_is_founded_exactly_at_the_held_end(
    tmp_path: Path, reason: str, named: str, expected: set[EvidenceCode]
) -> None:
    """Issue 28, point 3: a FINAL_HELD refusal is founded "exactly when the named record is
    the last hand_end and the next is the final". The refusals come after the last hand,
    while the final record was held: it was written at the reveal, dated at the hand's end,
    which is no stale head."""
    from receipting import TABLE_PUB as GOLDEN_PUB

    lines = (SAMPLES / "tournament" / "table-1.jsonl").read_bytes().splitlines()
    kinds = [json.loads(line)["body"]["kind"] for line in lines]
    seq = {
        "last hand_end": len(lines) - 2,
        "first hand_end": kinds.index("hand_end"),
        "a move": kinds.index("move"),
        "final": len(lines) - 1,
    }[named]
    t_ms = json.loads(lines[seq + (named != "final")])["body"]["t_ms"]
    if named in ("last hand_end", "final"):
        t_ms += 5_000  # after the last hand, before the reveal
    receipt, _ = _tournament_refusal(seq, reason, t_ms)
    log = _write(tmp_path / "table-1.jsonl", lines)
    receipts = _write(tmp_path / "seat0.receipts.jsonl", [receipt])
    report = gather_evidence(log, GOLDEN_PUB, [receipts])
    assert {finding.code for finding in report.findings} == expected


def test_a_v2_tables_match_over_while_holding_its_final_is_founded(tmp_path: Path) -> None:
    """Issue 28, points 2 and 3: "every v1 and v2 ... receipt file keeps ... auditing with
    the guarantees it has", and "an honest tournament table's refusals are founded". Before
    FINAL_HELD existed, an honest tournament table that held its final record refused with
    MATCH_OVER, naming its last hand_end, in a v2 receipt. Such a receipt is judged as a
    FINAL_HELD one; a v3 receipt, whose table had FINAL_HELD, is held to MATCH_OVER's rule."""
    secret = bytes(range(32))
    shape = Shape("Held cup", tables=1, seats=2, hands=1)
    plan = make_plan(secret, shape, load_rules("peer2peer"), (Contribution("me", b"m" * 32),))
    path = tmp_path / "table-1.jsonl"
    table = Table.create(
        path,
        plan.rules,
        [PlayerInfo(f"p{seat}", "b") for seat in range(2)],
        TABLE_KEY,
        secret,
        [bytes([seat + 1]) * 16 for seat in range(2)],
        tournament=plan.tag(1),
    )
    play_on(table, word_chooser(MatchSeed.from_plain("held")))
    assert table.played_out and not table.finished
    with pytest.raises(SubmissionError) as refused:
        table.submit(0, "0 call", table.t_ms + 1_000, table.next_n(0))
    assert refused.value.code is SubmissionCode.FINAL_HELD and refused.value.receipt
    table.reveal()
    lines = path.read_bytes().splitlines()
    held = parse_receipt(json.loads(refused.value.receipt)["body"])
    head = lines[held.seq]  # the last hand_end
    as_v2 = replace(held, v=2, reason="MATCH_OVER", record=chain_hash(head))
    assert _evidence(tmp_path, lines, [seal_receipt(as_v2, TABLE_KEY)]).findings == ()
    as_v3 = replace(held, reason="MATCH_OVER")
    (finding,) = _evidence(tmp_path, lines, [seal_receipt(as_v3, TABLE_KEY)]).findings
    assert finding.code is EvidenceCode.REFUSAL_UNFOUNDED


def test_a_tournament_final_dated_early_excuses_no_stale_head(tmp_path: Path) -> None:
    """Issue 28, point 4 and the review's "use the tournament exemption": the held final
    record's time is no evidence, but neither may it excuse a refusal. A dishonest table
    that dates its final record before the records it follows (the log then fails its
    verification, TIME_BACKWARDS) made that final the earliest record after every seq, and
    a WRONG_NUMBER refusal naming seq 1 long after the log had moved on read as founded."""
    from receipting import TABLE_KEY as GOLDEN_KEY
    from receipting import TABLE_PUB as GOLDEN_PUB

    values = [
        json.loads(line)
        for line in (SAMPLES / "tournament" / "table-1.jsonl").read_bytes().splitlines()
    ]
    values[-1]["body"]["t_ms"] = values[1]["body"]["t_ms"]  # before seq 2's move
    lines = reseal(values, len(values) - 1, key=GOLDEN_KEY)
    late = values[-2]["body"]["t_ms"]  # when the last hand ended
    refusal = refused_receipt(
        str(values[0]["body"]["game"]), 0, 3, b"{}", late, "WRONG_NUMBER", 1, body_hash(lines[1])
    )
    log = _write(tmp_path / "table-1.jsonl", lines)
    receipts = _write(tmp_path / "seat0.receipts.jsonl", [seal_receipt(refusal, GOLDEN_KEY)])
    (finding,) = gather_evidence(log, GOLDEN_PUB, [receipts]).findings
    assert finding.code is EvidenceCode.STALE_HEAD
    assert finding.compared is not None and finding.compared.seq == 2


# -- 4. a refusal must name the table's real head -------------------------------------------


def _refusal(honest: Match, seq: int, t_ms: int, n: int, seat: int = 1) -> bytes:
    """A WRONG_NUMBER refusal the table signs for seat ``seat``'s submission ``n`` at
    ``t_ms``, saying the log ended at ``seq``."""
    made = refused_receipt(
        honest.game, seat, n, b"{}", t_ms, "WRONG_NUMBER", seq, body_hash(honest.lines[seq])
    )
    return seal_receipt(made, TABLE_KEY)


def test_a_refusal_naming_an_old_head_is_a_stale_head(tmp_path: Path, honest: Match) -> None:
    """Issue 28, point 4: a table drops a seat's correct submission with a WRONG_NUMBER
    refusal saying the log ended at seq 1, when it held many later records."""
    last_move = max(i for i, line in enumerate(honest.lines) if b'"kind":"move"' in line)
    late = json.loads(honest.lines[last_move])["body"]["t_ms"]
    n = len(honest.receipts[1])  # seat 1's next number, the one it sent
    report = _evidence(tmp_path, honest.lines, [_refusal(honest, 1, late + 1, n)])
    (finding,) = report.findings
    assert (finding.code, finding.is_evidence, finding.seat, finding.n) == (
        EvidenceCode.STALE_HEAD,
        True,
        1,
        n,
    )
    assert finding.compared is not None and finding.compared.seq == 2
    assert "before the refusal" in finding.message


def test_a_record_of_the_refusals_own_millisecond_is_no_stale_head(
    tmp_path: Path, honest: Match
) -> None:
    """docs/log-format.md §10: the boundary of equal times. A record written in the same
    millisecond as the refusal may have come after it."""
    after = json.loads(honest.lines[2])["body"]["t_ms"]
    assert _evidence(tmp_path, honest.lines, [_refusal(honest, 1, after, 99)]).findings == ()
    later = _evidence(tmp_path, honest.lines, [_refusal(honest, 1, after + 1, 99)])
    assert [finding.code for finding in later.findings] == [EvidenceCode.STALE_HEAD]


def test_a_fork_hidden_behind_an_old_common_record_is_a_stale_head(
    tmp_path: Path, honest: Match
) -> None:
    """Issue 28, point 4: "The same trick hides a fork behind a refusal naming an old common
    record". The table showed seat 1 another history from a move on, and refused its
    submissions naming a record both histories share: the log proves the head was later."""
    number = honest.line_of("move", player=0)
    line = honest.lines[number - 1]
    t_ms = json.loads(line)["body"]["t_ms"]
    other = [*honest.lines[: number - 1], _resigned(line, t_ms=t_ms + 1)]
    common = number - 2  # the seq before the fork
    refusal = _refusal(honest, common, t_ms + 600, len(honest.receipts[1]))
    report = _evidence(tmp_path, honest.lines, [refusal], copies=[other])
    codes = [finding.code for finding in report.findings]
    assert codes == [EvidenceCode.STALE_HEAD, EvidenceCode.FORK]


# -- 7. every evidence code through the command line, on its schema ------------------------


def _case(tmp_path: Path, honest: Match, code: EvidenceCode) -> tuple[list[bytes], list[str]]:
    """A log and the audit options that produce ``code``."""
    log = list(honest.lines)
    receipt = parse_receipt(json.loads(honest.receipts[0][0])["body"])
    options: list[str] = []

    def receipts(*made: Receipt | bytes, key: Ed25519PrivateKey = TABLE_KEY) -> None:
        lines = [r if isinstance(r, bytes) else seal_receipt(r, key) for r in made]
        options.extend(["--receipts", str(_write(tmp_path / f"{code}.jsonl", lines))])

    def copy(lines: list[bytes]) -> None:
        options.extend(["--against", str(_write(tmp_path / f"{code}.copy.jsonl", lines))])

    moved = honest.line_of("move", player=0)
    if code is EvidenceCode.FORK:
        copy([*log[: moved - 1], _resigned(log[moved - 1], t_ms=receipt.t_ms + 1)])
    elif code is EvidenceCode.DELAYED:
        receipts(replace(receipt, t_ms=receipt.t_ms - 1))
    elif code is EvidenceCode.DROPPED:
        receipts(replace(receipt, n=500, seq=500))
    elif code is EvidenceCode.RECEIPT_MISMATCH:
        receipts(replace(receipt, outcome="bounce", reason="FOUNDATION_TAKEN"))
    elif code is EvidenceCode.REFUSAL_UNFOUNDED:
        receipts(refused_receipt(honest.game, 0, 9, b"{}", 1, "MATCH_OVER", 0, body_hash(log[0])))
    elif code is EvidenceCode.STALE_HEAD:
        receipts(_refusal(honest, 1, receipt.t_ms + 10_000, 0))
    elif code is EvidenceCode.RECEIPT_INVALID:
        receipts(receipt, key=OTHER_KEY)
    elif code is EvidenceCode.OTHER_GAME:
        receipts(replace(receipt, game="cd" * 16))
    elif code is EvidenceCode.NOT_YET_LOGGED:
        log = log[: receipt.seq]
        receipts(receipt)
    elif code is EvidenceCode.UNCHECKED:
        log[1] = _edited(log[1], lambda value: value["body"].update(t_ms=1))
        receipts(receipt)
    elif code is EvidenceCode.COPY_INVALID:
        copy([*log[:2], _edited(log[2], lambda value: value["body"].update(t_ms=1))])
    elif code is EvidenceCode.LAST_LINE_CHANGED:
        log = _without_an_acceptance(honest)
        receipts(_v2(honest.refusal, honest.lines[-1]))
    return log, options


@pytest.mark.parametrize("code", list(EvidenceCode))
def test_every_evidence_code_comes_out_of_the_cli_on_the_schema(
    tmp_path: Path, honest: Match, code: EvidenceCode
) -> None:
    """Issue 28, point 7: "A test produces every evidence code through the CLI and
    validates each document against its schema"."""
    log, options = _case(tmp_path, honest, code)
    pub = tmp_path / "table.pub"
    pub.write_bytes(public_pem(TABLE_KEY))
    path = _write(tmp_path / "game.jsonl", log)
    exit_code, out = invoke("audit", str(path), "--table-key", str(pub), *options, "--json")
    assert exit_code == 1, out
    document = json.loads(out)
    assert schema_errors("audit-report", document) == []
    assert code.value in {finding["code"] for finding in document["evidence"]}


# -- issue 29, item 11: a file of another table's receipts ----------------------------------


def test_a_file_of_another_tables_receipts_is_one_line(tmp_path: Path) -> None:
    """Issue 29, item 11: "audit --receipts with many receipts of another table prints the
    path twice per line, 21 lines; print it once, and one summary line for a run of the
    same finding"."""
    from receipting import OTHER_KEY as GOLDEN_OTHER
    from receipting import golden, lines_of, receipts_of, write_log, write_table_pub

    data = golden("peer2peer-2p")
    others = tmp_path / "others.receipts.jsonl"
    others.write_bytes(lines_of(receipts_of(data), key=GOLDEN_OTHER))
    log, pub = write_log(tmp_path, data), write_table_pub(tmp_path)
    code, out = invoke("audit", str(log), "--table-key", str(pub), "--receipts", str(others))
    assert code == 1
    (line,) = (line for line in out.splitlines() if line.startswith("RECEIPT_INVALID"))
    assert line.count(str(others)) == 1
    assert f"{others}: 20 lines (1 to 20): not a receipt of the pinned table key" in line
    assert line.endswith("; 152 more lines not shown, none of them a receipt")
    assert "0 receipts from 1 file checked" in out


def test_a_file_of_another_games_receipts_is_one_line(tmp_path: Path) -> None:
    """Issue 29, item 11, for the other file-wide finding: every receipt of another game is
    a finding (OTHER_GAME is not capped), but the text prints the run once."""
    from receipting import golden, write_log, write_receipts, write_table_pub

    log, pub = write_log(tmp_path, golden("table-3p-signed")), write_table_pub(tmp_path)
    seat0, _ = write_receipts(tmp_path, golden("peer2peer-2p"))
    code, out = invoke("audit", str(log), "--table-key", str(pub), "--receipts", str(seat0))
    assert code == 1
    (line,) = (line for line in out.splitlines() if line.startswith("OTHER_GAME"))
    assert line.count(str(seat0)) == 1
    assert f"{seat0}: 82 lines (1 to 82): a receipt of game " in line
    assert "82 findings, 0 of them evidence against the table" in out


@settings(max_examples=15, deadline=None)  # each example re-signs a 176-line log
@given(
    times=st.lists(st.integers(0, 10_000), min_size=175, max_size=175),
    refusals=st.lists(st.tuples(st.integers(0, 175), st.integers(0, 10_001)), max_size=12),
)
def test_stale_heads_agree_with_a_search_of_every_later_record(
    tmp_path_factory: pytest.TempPathFactory,
    times: list[int],
    refusals: list[tuple[int, int]],
) -> None:
    """The audit keeps the earliest record after each refused seq in bounded memory (a
    stack of groups); in a table-signed log whose times run any way, it finds exactly the
    refusals that a search of every later record finds."""
    from receipting import TABLE_KEY as GOLDEN_KEY
    from receipting import TABLE_PUB as GOLDEN_PUB
    from receipting import golden

    values = [json.loads(line) for line in golden("peer2peer-2p").splitlines()]
    for value, t_ms in zip(values[1:], times, strict=True):
        value["body"]["t_ms"] = t_ms
    lines = reseal(values, 1, key=GOLDEN_KEY)
    game = str(values[0]["body"]["game"])
    made = [
        refused_receipt(game, 0, 10**6, b"{}", t_ms, "BAD_MOVE_TEXT", seq, body_hash(lines[seq]))
        for seq, t_ms in refusals
    ]
    folder = tmp_path_factory.mktemp("stale")
    log = _write(folder / "game.jsonl", lines)
    receipts = _write(folder / "seat0.jsonl", [seal_receipt(r, GOLDEN_KEY) for r in made])
    report = gather_evidence(log, GOLDEN_PUB, [receipts])
    stale = [f.line for f in report.findings if f.code is EvidenceCode.STALE_HEAD]
    later = [json.loads(line)["body"]["t_ms"] for line in lines]
    expected = [
        number
        for number, (seq, t_ms) in enumerate(refusals, 1)
        if any(t < t_ms for t in later[seq + 1 :])
    ]
    assert stale == expected


def _players_edit(lines: list[bytes], edit: int, at: int, nonce: int) -> bytes:
    """The log's bytes after one edit that needs no table key: what a player, or anyone
    holding the log, can do to it (``at`` picks the line, ``nonce`` a signature's nonce)."""
    number = at % len(lines)
    value = json.loads(lines[number])
    sigs = value.get("sigs", {})  # an earlier edit's junk line has none
    edited = list(lines)
    if edit == 0 and sigs.get("accepts"):  # an acceptance set to null
        edited[number] = _edited(lines[number], lambda v: v["sigs"]["accepts"].__setitem__(0, None))
    elif edit == 1 and "player" in sigs:  # a player signs its move again
        record = parse_record(value["body"])
        seat = value["body"]["player"]
        message = pae(SUBMISSION, statement_bytes_of(record), record.v)
        again = _another_signature(bytes([70 + seat]) * 32, message, nonce).hex()
        edited[number] = _edited(lines[number], lambda v: v["sigs"].update(player=again))
    elif edit == 2 and "player" in sigs:  # a player's signature garbled
        edited[number] = _edited(lines[number], lambda v: v["sigs"].update(player="0" * 128))
    elif edit == 3:  # cut short, after a whole line
        edited = edited[: number + 1]
    elif edit == 4:  # torn: the last line cut mid-way
        data = b"".join(line + b"\n" for line in edited[:number])
        return data + lines[number][: 1 + nonce % len(lines[number])]
    elif edit == 5:  # a line repeated, or junk after the end
        edited.insert(number + 1, lines[number] if nonce % 2 else b'{"junk":1}')
    return b"".join(line + b"\n" for line in edited)


@settings(max_examples=40, deadline=None)
@given(
    edits=st.lists(
        st.tuples(st.integers(0, 5), st.integers(0, 100), st.integers(1, 2**64)),
        min_size=1,
        max_size=3,
    )
)
def test_no_edit_without_the_table_key_makes_evidence(
    tmp_path_factory: pytest.TempPathFactory, honest: Match, edits: list[tuple[int, int, int]]
) -> None:
    """Issue 28: "evidence is only ever what the table itself signed". Whatever a player
    does to the honest log without the table's key (acceptances nulled, its moves signed
    again, signatures garbled, lines cut, torn, repeated, junk added), audited as the log
    against the honest copy or the other way round, with every honest receipt (v3, and the
    same as v2 receipts), nothing is evidence against the table."""
    folder = tmp_path_factory.mktemp("edits")
    lines = list(honest.lines)
    for edit, at, nonce in edits:
        data = _players_edit(lines, edit, at, nonce)
        if edit == 4:
            break  # a torn line ends the file: nothing to edit after it
        lines = data.splitlines()
    edited = folder / "edited.jsonl"
    edited.write_bytes(data)
    original = _write(folder / "honest.jsonl", honest.lines)
    given = [*honest.receipts[0], *honest.receipts[1], honest.refusal]
    seqs = [parse_receipt(json.loads(receipt)["body"]).seq for receipt in given]
    as_v2 = [_v2(receipt, honest.lines[seq]) for receipt, seq in zip(given, seqs, strict=True)]
    receipts = _write(folder / "receipts.jsonl", [*given, *as_v2])  # v3 and v2, mixed
    for log, copy in ((edited, original), (original, edited)):
        report = gather_evidence(log, TABLE_PUB, [receipts], [copy])
        assert not [finding for finding in report.findings if finding.is_evidence], edits


@settings(max_examples=20, deadline=None)
@given(at=st.integers(0, 100), shift=st.integers(1, 10**6))
def test_any_body_the_table_signs_twice_is_a_fork_either_way_round(
    tmp_path_factory: pytest.TempPathFactory, honest: Match, at: int, shift: int
) -> None:
    """Issue 28, point 1: "Bodies that differ at one seq, each with a valid table
    signature, are a FORK". A dishonest table re-dates any one record of the honest log
    and re-signs the history from there: whichever of the two is audited and whichever is
    the copy, the audit finds the fork at that seq, naming the member that differs."""
    number = at % len(honest.lines)  # a 0-based index: seq
    values = [json.loads(line) for line in honest.lines]
    values[number]["body"]["t_ms"] += shift
    forked = reseal(values, number, key=TABLE_KEY)
    folder = tmp_path_factory.mktemp("fork")
    original = _write(folder / "honest.jsonl", honest.lines)
    other = _write(folder / "forked.jsonl", forked)
    for log, copy in ((original, other), (other, original)):
        forks = [
            finding
            for finding in gather_evidence(log, TABLE_PUB, (), [copy]).findings
            if finding.code is EvidenceCode.FORK
        ]
        assert [(fork.seq, fork.members) for fork in forks] == [(number, ("t_ms",))]
