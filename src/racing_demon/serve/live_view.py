"""What everyone at a served table sees after each record, and what a person's seat may
play now (docs/protocol.md, ``piles`` and ``moves``).

A page does not judge moves (it holds no engine): the server shows it the table. The
piles are the viewer's (``viewer.frames.table_piles``: the same ids and values), cut to
what a player at a real table sees (``public_piles``): a demon's top card and its count,
a waste's last three cards and its count, a stock's count; work piles and foundations are
face up. One ``piles`` message per record, the same bytes for everyone, carries the piles
that changed since the record before; a connection that syncs gets every pile at once.
A person's seat then gets its legal moves (``game.engine.legal_moves``) as move text:
advice, since the table still judges every submission.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, replace
from typing import Any, Final

from racing_demon.game.engine import advance_clock, legal_moves
from racing_demon.game.state import Phase, Seat, State
from racing_demon.serve import protocol
from racing_demon.serve.audience import Audience
from racing_demon.serve.seats import Peer
from racing_demon.viewer.frames import foundation_value

WASTE_SHOWN: Final = 3  # a waste's cards anyone sees: the last turn's three, fanned


def seat_piles(number: int, seat: Seat) -> dict[str, Any]:
    """Seat ``number``'s piles as anyone at the table sees them, by the viewer's ids
    (``viewer.frames.table_piles``): its demon's top card and its waste's last
    ``WASTE_SHOWN`` cards, each with its count ``n``; its stock a count only; its work
    piles whole."""
    name = f"s{number}."
    demon, waste = seat.demon, seat.waste
    piles: dict[str, Any] = {
        name + "demon": {"cards": [demon[-1].face] if demon else [], "n": len(demon)}
    }
    for index, pile in enumerate(seat.work, 1):
        piles[f"{name}w{index}"] = {"cards": [card.face for card in pile]}
    piles[name + "stock"] = {"n": len(seat.stock)}
    piles[name + "waste"] = {
        "cards": [card.face for card in waste[-WASTE_SHOWN:]],
        "n": len(waste),
    }
    return piles


def public_piles(state: State | None) -> dict[str, Any]:
    """Every pile of the table after a record (None: before the first deal, no pile), as
    anyone at the table sees it: each seat's (``seat_piles``), then the foundations whole,
    as the viewer's frames hold them."""
    if state is None:
        return {}
    piles: dict[str, Any] = {}
    for number, seat in enumerate(state.seats):
        piles.update(seat_piles(number, seat))
    for index, foundation in enumerate(state.foundations, 1):
        piles[f"f{index}"] = foundation_value(foundation)
    return piles


def changed_piles(
    before: State | None, shown: Mapping[str, Any], state: State | None
) -> dict[str, Any] | None:
    """The piles of ``state`` whose value differs from ``shown`` (the public piles of
    ``before``); None when a pile vanished or nothing was shown. Positions share every
    seat and foundation a record did not touch, so only the others are looked at."""
    if before is None or state is None or len(before.seats) != len(state.seats):
        return None
    if len(state.foundations) < len(before.foundations):
        return None
    changed: dict[str, Any] = {}
    for number, (old, new) in enumerate(zip(before.seats, state.seats, strict=True)):
        if new is not old:
            for pile, value in seat_piles(number, new).items():
                if shown.get(pile) != value:
                    changed[pile] = value
    for index, foundation in enumerate(state.foundations):
        if index < len(before.foundations) and foundation is before.foundations[index]:
            continue
        value = foundation_value(foundation)
        if shown.get(f"f{index + 1}") != value:
            changed[f"f{index + 1}"] = value
    return changed


def seat_moves(state: State | None, seat: int) -> list[str]:
    """Every move ``seat`` may submit in ``state``, as move text, in ``legal_moves``'s
    order; none before the first deal (and the engine's none once the hand is over, while
    play has not started, or while a call leaves the seat nothing to play)."""
    return [] if state is None else [str(move) for move in legal_moves(state, seat)]


@dataclass(frozen=True, slots=True)
class Shown:
    """The table as the last ``piles`` message left it: after record ``seq``."""

    seq: int
    state: State | None
    piles: dict[str, Any]


def piles_message(shown: Shown, changed: Mapping[str, Any], full: bool) -> dict[str, Any]:
    state = shown.state
    return protocol.piles(
        seq=shown.seq,
        hand=None if state is None else state.hand,
        phase=None if state is None else str(state.phase),
        clock_ms=0 if state is None else state.clock_ms,  # the genesis is written at 0
        full=full,
        changed=changed,
    )


class LiveView:
    """A table's ``piles`` to everyone and ``moves`` to its people's connected seats, as
    its records are sent (``show`` then ``advise``, after a ``hand_start``'s packs), and to
    a connection that synced (``attach``, after its pack). Before play starts (a profile's
    countdown) a seat has no move: its moves are sent again when play starts, for the
    last record shown."""

    def __init__(
        self, audience: Audience, people: Collection[int], now_ms: Callable[[], int]
    ) -> None:
        self._audience = audience
        self._people = frozenset(people)
        self._now_ms = now_ms  # the table's clock
        self._shown: Shown | None = None
        self._opening: asyncio.TimerHandle | None = None

    def resumed(self, seq: int, state: State) -> None:
        """A table resumed with every record sent: the table after the last one, which a
        connection that syncs is shown (nothing is sent now)."""
        self._shown = Shown(seq, state, public_piles(state))

    def show(self, seq: int, state: State | None, *, new_hand: bool) -> None:
        """Record ``seq`` was sent (``state``: the table after it; ``new_hand``: it is a
        ``hand_start``): its ``piles`` to everyone who asked for it. Every pile when it
        starts a hand, when one vanished, or when nothing was shown before."""
        self._stop_opening()
        before = self._shown
        changed = None
        if before is not None and not new_hand:
            changed = changed_piles(before.state, before.piles, state)
        if before is None or changed is None:
            shown = Shown(seq, state, public_piles(state))
            message = piles_message(shown, shown.piles, True)
        else:
            shown = Shown(seq, state, {**before.piles, **changed})
            message = piles_message(shown, changed, False)
        self._shown = shown
        self._audience.record(seq, message)

    def advise(self) -> None:
        """Each connected person's seat its ``moves`` for the table shown last."""
        shown = self._shown
        if shown is None:
            return
        for seat in sorted({seat for seat in self._audience.seats() if seat in self._people}):
            self._audience.to_seat(seat, self._moves(shown, seat))
        state = shown.state
        if state is not None and state.phase is Phase.PLAYING:
            wait_ms = state.play_start_ms - state.clock_ms
            if wait_ms > 0 and self._opening is None:
                delay_s = max(0, state.play_start_ms - self._now_ms()) / 1000
                self._opening = asyncio.get_running_loop().call_later(delay_s, self._open)

    def attach(self, peer: Peer) -> None:
        """A connection caught up: every pile of the table shown last and, to a person's
        seat, its moves (nothing before the first record)."""
        shown = self._shown
        if shown is None:
            return
        peer.send(piles_message(shown, shown.piles, True))
        seat = peer.seat
        if seat is not None and seat in self._people:
            peer.send(self._moves(shown, seat))

    def close(self) -> None:
        self._stop_opening()

    def _moves(self, shown: Shown, seat: int) -> dict[str, Any]:
        return protocol.moves(seq=shown.seq, moves=seat_moves(shown.state, seat))

    def _open(self) -> None:
        """Play starts: the last record's table at that time, and every seat's moves."""
        self._opening = None
        shown = self._shown
        if shown is None or shown.state is None:
            return
        state = shown.state
        self._shown = replace(shown, state=advance_clock(state, state.play_start_ms))
        self.advise()

    def _stop_opening(self) -> None:
        if self._opening is not None:
            self._opening.cancel()
            self._opening = None
