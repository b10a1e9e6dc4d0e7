"""Step 8, replay: every record is one the match flow (``racing_demon.game.flow``) allows
where it stands, and does to the match what the flow does.

For each record, in this order: a stall that was due is recorded at once (MISSING_STALL);
a ``hand_start`` deals the next hand, with the packs the seed gives (step 7); a final
record ends a match that is over (steps 9 and 10); any other record belongs to the hand
in play (HAND_OUT_OF_ORDER), whose clock moves to the record's time; then a stall must be
due, a ``hand_end`` must end the hand for its reason with its scores (step 9), and a
submission's move must parse, be its seat's, and be judged as the record says: legal and
of that kind, or bounced for that reason. The verification owns the ``MoveTexts`` that
parses its moves, so each text is parsed once per verification and nothing is kept after.

A note (format v3: a ``pause`` or a ``lag`` record) is no event of the match: the flow does
not see it and the hand's clock does not move to its time. A ``lag`` record must list one
seat's round trips for each seat (LAG_SEATS); a ``pause`` has nothing more to check.

In format v4, once the flow has judged a bounce, the record it names as the one the bounce
lost its race to (``lost_to``) must be the one the replay finds (``racing_demon.game.race``),
and a bounce that lost no race names none (LOST_TO_MISMATCH). The replay follows each hand's
races for it (``Races``, one per verification pass), and only in a v4 log.
"""

from __future__ import annotations

from racing_demon.game.flow import (
    FlowCode,
    FlowRefusal,
    MatchFlow,
    RecordKind,
    Seen,
    Submission,
)
from racing_demon.game.moves import MoveTexts
from racing_demon.game.race import Race, Races
from racing_demon.log.records import LOST_TO_VERSION, Lag, Record, event_of
from racing_demon.verify import step07_rules, step09_scores, step10_final
from racing_demon.verify.report import Step, VerifyCode, failure

_STEP_OF = {
    **{code: Step.REPLAY for code in FlowCode},
    **{code: Step.PACKS for code in step07_rules.FLOW_CODES},
    **{code: Step.SCORES for code in step09_scores.FLOW_CODES},
    **{code: Step.FINAL for code in step10_final.FLOW_CODES},
}


def replay_record(
    flow: MatchFlow, number: int, record: Record, moves: MoveTexts, races: Races, line_hash: str
) -> MatchFlow:
    """The match after line ``number``'s ``record`` (its line hashing to ``line_hash``), or
    the failure that names its rule; ``moves``: the verification's parsed move texts;
    ``races``: the pass's, which a v4 record updates."""
    payload = record.payload
    event = event_of(payload)
    if event is None:
        if isinstance(payload, Lag) and len(payload.rtt_ms) != flow.seats:
            raise failure(
                Step.REPLAY,
                VerifyCode.LAG_SEATS,
                "a lag record lists round trips for another number of seats",
                line=number,
                record=record,
                expected=flow.seats,
                found=len(payload.rtt_ms),
            )
        return flow  # the genesis set the match up (step 7); a note is not the match's
    try:
        after = flow.play(event, record.t_ms, moves.parse)
    except FlowRefusal as refusal:
        raise failure(
            _STEP_OF[refusal.code],
            refusal.code,
            refusal.message,
            line=number,
            record=record,
            seat=refusal.seat,
            rule=refusal.rule,
            expected=refusal.expected,
            found=refusal.found,
        ) from None
    if record.v >= LOST_TO_VERSION:
        race = races.follow(record.seq, line_hash, event, after.state, moves.parse)
        if isinstance(event, Submission) and event.kind is RecordKind.BOUNCE:
            _check_lost_to(event, race, number, record)
    return after


def _check_lost_to(bounce: Submission, race: Race | None, number: int, record: Record) -> None:
    """A bounce of format v4 must name the race it lost, and only that one."""
    expected = None if race is None else race.record
    if bounce.lost_to != expected:
        raise failure(
            Step.REPLAY,
            VerifyCode.LOST_TO_MISMATCH,
            _mismatch(expected, bounce.lost_to),
            line=number,
            record=record,
            seat=bounce.seat,
            expected=_named(expected),
            found=_named(bounce.lost_to),
        )


def _mismatch(expected: Seen | None, found: Seen | None) -> str:
    if expected is None:
        return "the bounce lost no race, yet names a record it lost one to"
    if found is None:
        return "the bounce lost a race, yet names no record it lost it to"
    return "the bounce names another record as the one it lost its race to"


def _named(record: Seen | None) -> str:
    return "none" if record is None else f"record {record.seq}, line hash {record.hash}"
