"""Rebuild the table from a log, record by record, for ``replay`` and ``audit``.

This applies records; it does not judge them. A record the engine cannot apply stops
the replay with ``ReplayError`` (run ``racing-demon verify`` for the verdict and its
reason). The deal needs the dealer secret: the final record reveals it, or the caller
passes one for a log that has no final record yet.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from racing_demon.files import open_regular
from racing_demon.game.cards import Card
from racing_demon.game.deal import MatchSeed, deal_hand
from racing_demon.game.engine import advance_clock, apply_move, apply_stall, check_move
from racing_demon.game.moves import Move, Zone
from racing_demon.game.rules import Rules
from racing_demon.game.scoring import HandScore, Match, score_hand
from racing_demon.game.state import Phase, State
from racing_demon.log.reader import DEFAULT_LIMITS, Limits, read_lines
from racing_demon.log.records import PLAYER_KINDS, RecordKind
from racing_demon.profiles import rules_from_document
from racing_demon.schema import record_errors


class ReplayError(ValueError):
    """The log cannot be replayed past this record."""

    def __init__(self, seq: int, message: str) -> None:
        super().__init__(f"record {seq}: {message}")
        self.seq = seq


@dataclass
class Snapshot:
    """The table as it stood after one record (mutable: the replay updates it in place)."""

    seq: int = -1
    body: dict[str, Any] = field(default_factory=dict)
    rules: Rules | None = None
    names: tuple[str, ...] = ()
    state: State | None = None
    match: Match | None = None
    placed: dict[Card, int] = field(default_factory=dict)  # centre card -> seq that placed it
    hands: list[tuple[HandScore, dict[Card, int]]] = field(default_factory=list)


def find_secret(path: Path, limits: Limits = DEFAULT_LIMITS) -> bytes | None:
    """The secret the final record reveals, or None when the log has no final record."""
    with open_regular(path) as stream:
        for line in read_lines(stream, limits):
            _check_record(line.number, line.value)
            body = line.value["body"]
            if body["kind"] == RecordKind.FINAL:
                return bytes.fromhex(body["secret"])
    return None


def _check_record(number: int, value: dict[str, Any]) -> None:
    problems = record_errors(value)
    if problems:
        raise ReplayError(number - 1, f"not a log record: {problems[0]}")


def replay(path: Path, secret: bytes, limits: Limits = DEFAULT_LIMITS) -> Iterator[Snapshot]:
    """Yield the table after every record, in order (the same object, updated)."""
    snapshot = Snapshot()
    seed: MatchSeed | None = None
    with open_regular(path) as stream:
        for line in read_lines(stream, limits):
            _check_record(line.number, line.value)
            body = line.value["body"]
            snapshot.seq, snapshot.body = body["seq"], body
            try:
                seed = _step(snapshot, body, seed, secret)
            except ReplayError:
                raise
            except (LookupError, ValueError) as error:  # records that fit no real game
                raise ReplayError(body["seq"], str(error)) from error
            yield snapshot


def _step(
    snapshot: Snapshot, body: dict[str, Any], seed: MatchSeed | None, secret: bytes
) -> MatchSeed | None:
    """Apply one record; returns the match seed once the genesis has given it."""
    kind = body["kind"]
    if kind == RecordKind.GENESIS:
        snapshot.rules = rules_from_document(body["rules"])
        snapshot.names = tuple(player["name"] for player in body["players"])
        snapshot.match = Match(snapshot.rules, len(snapshot.names))
        return MatchSeed.from_secret(secret, [bytes.fromhex(e) for e in body["entropy"]])
    if kind == RecordKind.HAND_START:
        if snapshot.rules is None or seed is None:
            raise ReplayError(body["seq"], "a hand starts before the genesis")
        snapshot.state, _ = deal_hand(
            snapshot.rules, seed, body["hand"], len(snapshot.names), body["t_ms"]
        )
        snapshot.placed = {}
    elif kind != RecordKind.FINAL:
        _apply(snapshot, body)
    return seed


def _apply(snapshot: Snapshot, body: dict[str, Any]) -> None:
    seq = body["seq"]
    if snapshot.state is None or snapshot.match is None:
        raise ReplayError(seq, f"a {body['kind']} record outside a hand")
    kind = body["kind"]
    if kind in PLAYER_KINDS and not 0 <= body["player"] < len(snapshot.names):
        raise ReplayError(seq, f"there is no seat {body['player']} at this table")
    state = advance_clock(snapshot.state, body["t_ms"])
    if kind in PLAYER_KINDS and kind != RecordKind.BOUNCE:
        move = Move.parse(body["move"])
        violation = check_move(state, move)
        if violation is not None:
            raise ReplayError(seq, f"{move} cannot be applied: {violation}")
        state = apply_move(state, move)
        if move.target is not None and move.target.zone in (Zone.FOUNDATION, Zone.NEW_FOUNDATION):
            snapshot.placed[move.cards[0]] = seq
    elif kind == RecordKind.STALL or (
        kind == RecordKind.HAND_END and body["reason"] == "blocked" and state.phase is Phase.PLAYING
    ):
        state = apply_stall(state)
    if kind == RecordKind.HAND_END:
        if state.phase is not Phase.ENDED:
            raise ReplayError(seq, "the log ends a hand the engine has not ended")
        hand = score_hand(state)
        snapshot.match = snapshot.match.record(hand)
        snapshot.hands.append((hand, dict(snapshot.placed)))
    snapshot.state = state
