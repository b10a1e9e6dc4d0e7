"""The frames a viewer page embeds: the table after each replayed record, as the piles that
changed since the record before, and every pile every so often (docs/viewer.md). The piles
are named as the page names them (``s0.demon``, ``s0.w1``, ``f1``…).
"""

from __future__ import annotations

from typing import Any

from racing_demon.game.flow import RecordKind
from racing_demon.game.state import Foundation, State
from racing_demon.log.records import Record
from racing_demon.viewer.page import Packer, json_text

KEYFRAME_EVERY = 64


def table_piles(state: State) -> dict[str, Any]:
    """Every pile by its id (``s0.demon``, ``s0.w1``, ``f1``…), as the data holds it."""
    piles: dict[str, Any] = {}
    for number, seat in enumerate(state.seats):
        piles[f"s{number}.demon"] = {"cards": [card.face for card in seat.demon]}
        for index, pile in enumerate(seat.work):
            piles[f"s{number}.w{index + 1}"] = {"cards": [card.face for card in pile]}
        piles[f"s{number}.stock"] = {"n": len(seat.stock)}
        piles[f"s{number}.waste"] = {"cards": [card.face for card in seat.waste]}
    for index, foundation in enumerate(state.foundations):
        piles[f"f{index + 1}"] = foundation_value(foundation)
    return piles


def foundation_value(foundation: Foundation) -> dict[str, Any]:
    return {
        "suit": foundation.suit.letter,
        "levels": [[str(card) for card in level] for level in foundation.levels],
        "complete": foundation.complete,
    }


class Frames:
    """The table after each record, as the piles that changed since the record before, and
    every pile every so often, so that a page can show any record without applying every
    delta from the start. Each frame is written to ``packer`` as it comes: only the table
    before it is kept."""

    def __init__(self, packer: Packer) -> None:
        self.count = 0
        self._packer = packer
        self._piles: dict[str, Any] = {}

    def add(self, record: Record, state: State | None) -> None:
        index = self.count
        piles = {} if state is None else table_piles(state)
        before = self._piles
        full = (
            index % KEYFRAME_EVERY == 0
            or record.kind is RecordKind.HAND_START
            or not before.keys() <= piles.keys()  # a pile vanished: only a full frame says so
        )
        changed = (
            piles
            if full
            else {pile: value for pile, value in piles.items() if before.get(pile) != value}
        )
        frame = {
            "hand": None if state is None else state.hand,
            "phase": None if state is None else str(state.phase),
            "clock_ms": record.t_ms if state is None else state.clock_ms,
            "set": changed,
            "full": full,
        }
        self._packer.write(("," if index else "") + json_text(frame))
        self.count += 1
        self._piles = piles
