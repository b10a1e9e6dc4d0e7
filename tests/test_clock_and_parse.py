"""The replay's clock and move texts: nothing is rebuilt or re-parsed that did not change.

Issue 33, point 1: "No new State for the clock alone: ``advance_clock`` builds a State
through ``_derive`` on every record (6%); advance the clock without rebuilding what did not
change", and "Moves parsed once: ``Move.parse`` (7%) from a bounded cache keyed by the move
text, owned by the verification, not global". ``play_at`` judges and applies a move at its
record's time; it is compared here with what the engine did before, the clock moved first
(a State that differs only in its clock) and the move checked and applied on that, at every
position of random playouts and at every record of every golden and sample log. The moves'
cache (``MoveTexts``) is bounded, made by each verification for itself, and gives the
verdicts the plain parse gives even when a log names more texts than it keeps.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from pathlib import Path

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from racing_demon.game.deal import MatchSeed, derive_pack
from racing_demon.game.engine import (
    Violation,
    advance_clock,
    apply_move,
    check_move,
    legal_moves,
    play_at,
)
from racing_demon.game.flow import (
    FlowCode,
    FlowRefusal,
    MatchFlow,
    RecordKind,
    Submission,
    judge_move,
)
from racing_demon.game.moves import MOVE_TEXTS_KEPT, Move, MoveKind, MoveTexts
from racing_demon.game.state import State, next_deadline
from racing_demon.log.records import Final, Genesis, Record, event_of, parse_record
from racing_demon.profiles import builtin_document, rules_from_document
from racing_demon.schema import record_errors
from racing_demon.testing.playout import playout
from racing_demon.verify import Settings, verify_log

from conftest import dealt_hands

ROOT = Path(__file__).resolve().parents[1]
GOLDEN_LOGS = sorted((ROOT / "tests" / "golden" / "logs").glob("*.jsonl"))
SAMPLE_LOGS = sorted(
    path
    for path in (ROOT / "sample_games").rglob("*.jsonl")
    if not path.name.endswith(".receipts.jsonl")
)


# -- the reference: the clock moved first, as a State of its own ---------------------


def reference_play_at(state: State, move: Move, t_ms: int) -> tuple[State, Violation | None]:
    """What the flow did before ``play_at``: a State at ``t_ms`` (``advance_clock``), then
    the move checked and, if legal, applied on it."""
    state = advance_clock(state, t_ms)
    violation = check_move(state, move)
    return (state if violation is not None else apply_move(state, move)), violation


def reference_submission(
    flow: MatchFlow,
    hand: State,
    event: Submission,
    t_ms: int,
    parse_move: Callable[[str], Move],
) -> State:
    """``MatchFlow._submission`` before ``play_at``, verbatim but for its first line: the
    clock moved there before (in ``MatchFlow.play``), a State of its own."""
    state = advance_clock(hand, t_ms)
    try:
        move = Move.parse(event.move)
    except ValueError as error:
        raise FlowRefusal(FlowCode.BAD_MOVE_TEXT, str(error)) from None
    if move.seat != event.seat:
        raise FlowRefusal(
            FlowCode.PLAYER_MISMATCH,
            "the move is not the record's player's",
            expected=event.seat,
            found=move.seat,
        )
    if move.seat >= state.players:
        raise FlowRefusal(
            FlowCode.PLAYER_MISMATCH,
            f"there is no seat {move.seat}: the table submits only its seats' moves",
            expected=f"a seat below {state.players}",
            found=move.seat,
        )
    wanted, violation = judge_move(state, move)
    if event.kind is RecordKind.BOUNCE:
        if violation is None:
            raise FlowRefusal(FlowCode.WRONGLY_BOUNCED, "the table refused a legal move")
        if violation.code != event.reason:
            raise FlowRefusal(
                FlowCode.BOUNCE_REASON_MISMATCH,
                "the move was refused for another reason: "
                + violation.message.removeprefix(f"{move}: "),
                rule=violation.code,
                expected=violation.code,
                found=event.reason,
            )
        return state
    if violation is not None:
        raise FlowRefusal(
            FlowCode.ILLEGAL_MOVE,
            violation.message.removeprefix(f"{move}: "),
            rule=violation.code,
            expected=violation.expected,
            found=violation.found,
        )
    if event.kind is not wanted:
        raise FlowRefusal(
            FlowCode.KIND_MISMATCH,
            "an accepted move recorded as another kind",
            expected=wanted,
            found=event.kind,
        )
    return apply_move(state, move)


def same_outcome(
    fast: tuple[State, Violation | None], reference: tuple[State, Violation | None]
) -> None:
    assert fast[1] == reference[1]
    assert fast[0] == reference[0]
    assert fast[0].to_text() == reference[0].to_text()


# -- play_at against the clock moved first, over random playouts -----------------------


def times_to_try(state: State, rng: random.Random) -> list[int]:
    """The same instant, the next millisecond, a random later time, and both sides of the
    next deadline and of the start of play (where the clock changes what is legal)."""
    now = state.clock_ms
    times = rng.sample([now, now + 1, now + rng.choice((5, 250, 30_000, 200_000, 400_000))], 2)
    deadline = next_deadline(state)
    if deadline is not None:
        times += [t for t in (deadline[0] - 1, deadline[0], deadline[0] + 1) if t >= now]
    times += [t for t in (state.play_start_ms - 1, state.play_start_ms) if t >= now]
    return times


def moves_to_try(state: State, later: State, rng: random.Random) -> list[Move]:
    """One seat's legal moves here, another's legal moves at a later position (most of them
    illegal here), the moves that end or stop a hand, and a seat the table does not have."""
    seat = rng.randrange(state.players)
    moves = legal_moves(state, seat) + legal_moves(later, rng.randrange(state.players))
    moves = rng.sample(moves, min(len(moves), 5))
    moves += [Move(seat, kind) for kind in (MoveKind.CALL, MoveKind.AGREE, MoveKind.RESIGN)]
    moves.append(Move(state.players, MoveKind.RECYCLE))
    return moves


def check_play_at_over_a_playout(dealt: State, choices: int) -> None:
    """ "Advance the clock without rebuilding what did not change" (issue 33, point 1): a
    move judged and applied at its time is what the State rebuilt at that time gave."""
    rng = random.Random(choices)
    positions = [dealt] + [step.after for step in playout(dealt, rng.choice, max_steps=60)]
    for index, state in enumerate(positions):
        later = positions[min(index + rng.randrange(1, 4), len(positions) - 1)]
        for t_ms in times_to_try(state, rng):
            for move in moves_to_try(state, later, rng):
                same_outcome(play_at(state, move, t_ms), reference_play_at(state, move, t_ms))


@settings(max_examples=10, deadline=None)
@given(dealt_hands(), st.integers(0, 2**32))
def test_play_at_is_the_clock_moved_then_the_move_over_random_playouts(
    dealt: State, choices: int
) -> None:
    check_play_at_over_a_playout(dealt, choices)


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(dealt_hands(), st.integers(0, 2**32))
def test_play_at_is_the_clock_moved_then_the_move_over_many_random_playouts(
    dealt: State, choices: int
) -> None:
    check_play_at_over_a_playout(dealt, choices)


def test_play_at_refuses_time_running_backwards_as_advance_clock_does() -> None:
    state = advance_clock(dealt_position(), 5_000)
    move = Move(0, MoveKind.RECYCLE)
    with pytest.raises(ValueError, match="time runs backwards: 4999 ms after 5000 ms"):
        play_at(state, move, 4_999)


def dealt_position() -> State:
    rules = rules_from_document(builtin_document("table"))
    seed = MatchSeed.from_plain("clock and parse")
    return State.deal(rules, [derive_pack(seed, 1, seat) for seat in range(3)], 1, 0)


# -- the flow against the clock moved first, over every golden and sample log ----------


def log_records(path: Path) -> Iterator[Record]:
    """The log's records, up to the first line that is not one (a damaged sample)."""
    for raw in path.read_bytes().splitlines():
        try:
            value = orjson.loads(raw)
        except orjson.JSONDecodeError:
            return
        if record_errors(value):
            return
        yield parse_record(value["body"])


def replayed(path: Path) -> list[tuple[object, ...]]:
    """What the flow makes of every record: the hand in play, the stall due and whether
    the hand is open after it, or the refusal that stops the replay."""
    records = list(log_records(path))
    if not records or not isinstance(records[-1].payload, Final):
        return []
    genesis = records[0].payload
    assert isinstance(genesis, Genesis)
    secret = bytes.fromhex(records[-1].payload.secret)
    flow = MatchFlow.begin(
        rules_from_document(genesis.rules), genesis.dealer(secret), len(genesis.players)
    )
    moves = MoveTexts()
    seen: list[tuple[object, ...]] = []
    for record in records[1:]:
        event = event_of(record.payload)
        if event is None:
            continue  # a note (format v3): the match flow does not see it
        try:
            flow = flow.play(event, record.t_ms, moves.parse)
        except FlowRefusal as refusal:
            seen.append(("refused", refusal.code, refusal.message, refusal.expected, refusal.found))
            break
        except ValueError as error:  # time running backwards, which step 4 refuses first
            seen.append(("raised", str(error)))
            break
        text = None if flow.state is None else flow.state.to_text()
        seen.append(("played", text, flow.stall_due, flow.hand_open, flow.finished))
    return seen


@pytest.mark.parametrize(
    "path",
    # The golden logs in the quick run; the whole sample corpus behind -m slow.
    [*GOLDEN_LOGS, *(pytest.param(path, marks=pytest.mark.slow) for path in SAMPLE_LOGS)],
    ids=lambda path: path.stem,
)
def test_the_flow_replays_every_log_as_with_the_clock_moved_first(
    path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every record of every golden and sample log leaves the hand as the flow did when it
    built a State at each record's time first, and every refusal is the same one."""
    fast = replayed(path)
    monkeypatch.setattr(MatchFlow, "_submission", reference_submission)
    assert fast == replayed(path)


def test_the_logs_compared_replay_to_their_last_record() -> None:
    """The comparison above is not vacuous: each golden log replays to its last record."""
    for path in GOLDEN_LOGS:
        assert len(replayed(path)) == len(list(log_records(path))) - 1


@pytest.mark.parametrize(
    ("name", "code"),
    [
        ("illegal-move-re-signed", FlowCode.ILLEGAL_MOVE),
        ("legal-move-wrongly-bounced", FlowCode.WRONGLY_BOUNCED),
        ("inflated-score", FlowCode.SCORE_MISMATCH),
    ],
)
def test_the_logs_compared_include_refusals(name: str, code: FlowCode) -> None:
    """A re-signed cheat is compared up to the refusal the verifier reports for it."""
    path = ROOT / "sample_games" / "disputed" / f"{name}.jsonl"
    assert replayed(path)[-1][:2] == ("refused", code)


# -- the moves' cache: bounded, one per verification, the plain parse's answers --------


def test_move_texts_keep_at_most_their_bound_and_parse_as_move_parse() -> None:
    """ "A bounded cache keyed by the move text" (issue 33, point 1)."""
    texts = MoveTexts(kept=8)
    faces = ["AH", "2H", "3H", "4H", "5H", "6H", "7H", "8H", "9H", "TH", "JH", "QH", "KH"]
    wanted = [f"{seat} waste>f1 {face}" for seat in range(4) for face in faces]
    for text in wanted + wanted:
        assert texts.parse(text) == Move.parse(text)
    info = texts.parse.cache_info()
    assert info.maxsize == 8
    assert info.currsize == 8
    assert info.misses == 2 * len(wanted)  # each text pushed out before it came again
    again = wanted[-1]
    assert texts.parse(again) is texts.parse(again)  # a text kept is parsed once


@pytest.mark.parametrize(
    "text", ["", "0", "x turn AH", "00 recycle", "0  recycle", "0 fly", "0 demon>f9x AH", "0 turn"]
)
def test_a_bad_move_text_is_refused_as_move_parse_refuses_it_every_time(text: str) -> None:
    """Refusals of bad move texts are word for word the plain parse's, and never kept."""
    texts = MoveTexts()
    with pytest.raises(ValueError) as plain:
        Move.parse(text)
    for _ in range(2):
        with pytest.raises(ValueError) as cached:
            texts.parse(text)
        assert str(cached.value) == str(plain.value)
    assert texts.parse.cache_info().currsize == 0


class MadeMoveTexts:
    """Every ``MoveTexts`` made while a test runs, and the bound they are made with."""

    def __init__(self) -> None:
        self.made: list[MoveTexts] = []
        self.kept = MOVE_TEXTS_KEPT


@pytest.fixture
def move_texts(monkeypatch: pytest.MonkeyPatch) -> MadeMoveTexts:
    recorder = MadeMoveTexts()
    plain_init = MoveTexts.__init__

    def recording_init(self: MoveTexts, kept: int = MOVE_TEXTS_KEPT) -> None:
        plain_init(self, recorder.kept)
        recorder.made.append(self)

    monkeypatch.setattr(MoveTexts, "__init__", recording_init)
    return recorder


FAST = Settings(fast=True, unsafe_unpinned=True)


def distinct_move_texts(path: Path) -> int:
    bodies = (orjson.loads(raw)["body"] for raw in path.read_bytes().splitlines())
    return len({body["move"] for body in bodies if "move" in body})


def test_each_verification_parses_with_its_own_move_texts(
    move_texts: MadeMoveTexts,
) -> None:
    """ "Owned by the verification, not global": two verifications of the same log share
    nothing, so the second parses every distinct text again."""
    path = GOLDEN_LOGS[0]
    first, second = verify_log(path, FAST), verify_log(path, FAST)
    assert first == second
    assert len(move_texts.made) == 2
    assert move_texts.made[0] is not move_texts.made[1]
    for made in move_texts.made:
        assert made.parse.cache_info().misses == distinct_move_texts(path)
        assert made.parse.cache_info().hits > 0


@pytest.mark.parametrize("path", GOLDEN_LOGS, ids=lambda path: path.stem)
def test_a_log_of_more_move_texts_than_kept_verifies_the_same(
    path: Path, move_texts: MadeMoveTexts
) -> None:
    """A bound far below the log's distinct texts changes nothing in the report."""
    plain = verify_log(path, FAST)
    move_texts.kept = 4
    assert verify_log(path, FAST) == plain
    made = move_texts.made[-1]
    assert distinct_move_texts(path) > 4
    assert made.parse.cache_info().currsize == 4
