"""The table a served page is shown, and a person's moves (issue 32: "The others' piles
and the centre update live"; design §1 ``piles`` and ``moves``, §2 "live_view unit tests
(redaction: no hidden card in any message; a delta applied in order equals the full
frame)"). Matches are played by the package's ``Table`` with random legal moves; the
position after each record is the one ``on_record`` hands over."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from racing_demon.game.cards import canonical_pack
from racing_demon.game.deal import MatchSeed
from racing_demon.game.engine import advance_clock, legal_moves
from racing_demon.game.rules import Rules
from racing_demon.game.state import State
from racing_demon.log.keys import raw_public_bytes
from racing_demon.profiles import builtin_document, load_rules, rules_from_document
from racing_demon.schema import schema_errors
from racing_demon.serve import protocol
from racing_demon.serve.audience import Audience
from racing_demon.serve.live_view import LiveView, public_piles, seat_moves
from racing_demon.serve.protocol import SERVER_SCHEMA, ServeCode
from racing_demon.table import PlayerInfo, Table, player_signer
from racing_demon.testing.randomplay import play_on, word_chooser
from racing_demon.verify import Settings
from racing_demon.viewer import viewer_data

from .hosting import applied

SECRET = bytes(range(40, 72))
TABLE_KEY = Ed25519PrivateKey.from_private_bytes(bytes([3]) * 32)
KEYS = [Ed25519PrivateKey.from_private_bytes(bytes([30 + seat]) * 32) for seat in range(3)]
GAME = "1f0000000000000000000000000000e2"
SETTINGS = Settings(table_key=raw_public_bytes(TABLE_KEY.public_key()))

Played = tuple[Path, list[tuple[bytes, State | None]]]


def _one_hand(profile: str) -> Rules:
    document = builtin_document(profile)
    document["name"] = f"{profile}-one-hand"
    document["match"]["target"] = None
    document["match"]["max_hands"] = 1
    return rules_from_document(document)


def _play(folder: Path, profile: str) -> Played:
    """A one-hand match of three seats at ``profile``, every line and the position after
    it."""
    path = folder / f"{profile}.jsonl"
    seen: list[tuple[bytes, State | None]] = []
    players = [
        PlayerInfo(f"p{seat}", f"b{seat}", raw_public_bytes(key.public_key()))
        for seat, key in enumerate(KEYS)
    ]
    table = Table.create(
        path,
        _one_hand(profile),
        players,
        TABLE_KEY,
        SECRET,
        None,
        player_signers=[player_signer(key) for key in KEYS],
        game_id=GAME,
        durable=False,
        on_record=lambda line, state: seen.append((line, state)),
    )
    play_on(table, word_chooser(MatchSeed(SECRET)), player_keys=KEYS)
    table.close()
    return path, seen


@pytest.fixture(scope="module", params=["nertz", "peer2peer"])
def played(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Played:
    return _play(tmp_path_factory.mktemp("played"), request.param)


def _shown_by_hand(piles: Mapping[str, Any]) -> dict[str, Any]:
    """The redaction, written out again: a demon's top card, a waste's last three, and
    their counts; a stock's count; everything else whole."""
    shown: dict[str, Any] = {}
    for pile, value in piles.items():
        if pile.endswith(".demon"):
            shown[pile] = {"cards": value["cards"][-1:], "n": len(value["cards"])}
        elif pile.endswith(".waste"):
            shown[pile] = {"cards": value["cards"][-3:], "n": len(value["cards"])}
        else:
            shown[pile] = value
    return shown


def test_on_record_gives_the_table_after_each_record_as_the_view_page_frames_it(
    played: Played,
) -> None:
    """Design §1: "Built from the table's state at the moment the table writes the record
    (on_line: the state is already the state after that record)"; "Pile ids and values are
    the viewer frames'". Every line of the file is handed over once, and the public piles
    of the position given with it are the view page's frame of that record, redacted."""
    path, seen = played
    assert [line for line, _ in seen] == path.read_bytes().splitlines()
    frames = viewer_data(path, SETTINGS)["frames"]["list"]
    assert len(frames) == len(seen)
    piles: dict[str, Any] = {}
    for frame, (_, state) in zip(frames, seen, strict=True):
        piles = dict(frame["set"]) if frame["full"] else {**piles, **frame["set"]}
        assert public_piles(state) == _shown_by_hand(piles)
        assert (frame["hand"], frame["phase"]) == (
            (None, None) if state is None else (state.hand, str(state.phase))
        )
        if state is not None:
            assert frame["clock_ms"] == state.clock_ms


def _hidden_shuffled(state: State) -> State:
    """``state`` with every card nobody sees put in another order: each demon under its
    top card, each waste under its last three, each stock."""
    seats = []
    for seat in state.seats:
        demon, waste = seat.demon, seat.waste
        seats.append(
            dataclasses.replace(
                seat,
                demon=demon[:-1][::-1] + demon[-1:] if demon else demon,
                waste=waste[:-3][::-1] + waste[-3:] if waste else waste,
                stock=seat.stock[::-1],
            )
        )
    return dataclasses.replace(state, seats=tuple(seats))


def test_no_hidden_card_reaches_a_piles_message(played: Played) -> None:
    """Design §1: "except what nobody at a table sees: a demon is {cards: [top], n}, a
    waste {cards: [its last three], n}, a stock {n}". Whatever order the hidden cards are
    in, every message is the same bytes: none of them is in it."""
    _, seen = played
    changed = 0
    for seq, (_, state) in enumerate(seen):
        if state is None:
            continue
        other = _hidden_shuffled(state)
        changed += other != state
        if seq % 16 == 1:  # the schema's shapes (every message the host sends is checked)
            message = protocol.piles(
                seq=seq, hand=1, phase="playing", clock_ms=0, full=True, changed={}
            )
            message["set"] = public_piles(other)
            assert schema_errors(SERVER_SCHEMA, message) == []
        assert protocol.encode(public_piles(other)) == protocol.encode(public_piles(state))
        for number, seat in enumerate(state.seats):
            assert set(public_piles(state)[f"s{number}.stock"]) == {"n"}
            assert public_piles(state)[f"s{number}.demon"]["n"] == len(seat.demon)
    assert changed > len(seen) // 2  # the shuffles did hide something to leak


class FakePeer:
    """A connection: every message, each checked against the server's schema."""

    def __init__(self, seat: int | None) -> None:
        self.seat = seat
        self.messages: list[dict[str, Any]] = []

    def send(self, message: Mapping[str, object]) -> None:
        assert schema_errors(SERVER_SCHEMA, dict(message)) == [], message
        self.messages.append(dict(message))

    def send_encoded(self, message: Mapping[str, object], text: str) -> None:
        assert text == protocol.encode(message)
        self.send(message)

    def send_all(self, messages: Sequence[Mapping[str, object]]) -> None:
        for message in messages:
            self.send(message)

    def close(self, reason: ServeCode) -> None:
        pass

    def of(self, kind: str) -> list[dict[str, Any]]:
        return [message for message in self.messages if message["type"] == kind]


def test_deltas_applied_in_order_are_the_full_table_and_people_get_their_legal_moves(
    played: Played,
) -> None:
    """Design §1: "piles — to every connection ... the same bytes for everyone"; "set: the
    piles that changed since the previous piles this connection got (all of them when full
    is true, which it is on the first after a sync, at every hand_start)"; "moves — to a
    person's seat only (never a bot's, never a spectator) ...
    racing_demon.game.engine.legal_moves(state, seat), in that order". Seats 0 and 2 are
    people's (seat 2 connects halfway through), seat 1 a bot's; a spectator watches."""
    _, seen = played
    starts = {seq for seq, (line, _) in enumerate(seen) if b'"kind":"hand_start"' in line}
    spectator, person, late = FakePeer(None), FakePeer(0), FakePeer(2)

    async def main() -> None:
        audience = Audience()
        view = LiveView(audience, [0, 2], lambda: 0)
        for peer in (spectator, person):
            audience.join(peer, 0)
        for seq, (_, state) in enumerate(seen):
            if seq == len(seen) // 2:
                audience.join(late, seq)
                view.attach(late)
            view.show(seq, state, new_hand=seq in starts)
            view.advise()
        view.close()

    asyncio.run(main())
    assert person.of("piles") == spectator.of("piles")
    tables = applied(spectator.of("piles"))
    assert tables == {seq: public_piles(state) for seq, (_, state) in enumerate(seen)}
    fulls = {message["seq"] for message in spectator.of("piles") if message["full"]}
    assert starts | {0} <= fulls
    assert spectator.of("moves") == []
    for peer in (person, late):
        assert peer.seat is not None
        moves = {message["seq"]: message["moves"] for message in peer.of("moves")}
        first = min(moves)
        assert list(moves) == list(range(first, len(seen)))
        for seq, listed in moves.items():
            state = seen[seq][1]
            expected = [] if state is None else [str(m) for m in legal_moves(state, peer.seat)]
            assert listed == expected == seat_moves(state, peer.seat)
        assert any(moves.values())
    # The late seat's first piles holds every pile: the table as it stood when it came.
    first = late.of("piles")[0]
    assert first["full"] and first["set"] == tables[first["seq"]]
    assert applied(late.of("piles"))[len(seen) - 1] == tables[len(seen) - 1]


def test_moves_come_again_when_the_countdown_ends() -> None:
    """Design §1: moves are "empty ... while the seat may not play"; a seat must not be
    left with an empty list once play starts (peer2peer counts down 3 s after a deal):
    when play starts it gets the moves of the table as it stands then, for the same seq."""
    rules = load_rules("peer2peer")
    state = State.deal(rules, [canonical_pack(seat) for seat in range(2)], 1, 1000)
    assert state.play_start_ms > state.clock_ms and seat_moves(state, 0) == []
    peer = FakePeer(0)

    async def main() -> None:
        audience = Audience()
        # The table's clock 60 ms before play starts: the timer sleeps until then.
        view = LiveView(audience, [0], lambda: state.play_start_ms - 60)
        audience.join(peer, 0)
        view.show(1, state, new_hand=True)
        view.advise()
        await asyncio.sleep(0.01)
        assert [m["moves"] for m in peer.of("moves")] == [[]]
        await asyncio.sleep(0.2)
        view.close()

    asyncio.run(main())
    opened = advance_clock(state, state.play_start_ms)
    assert [(m["seq"], m["moves"]) for m in peer.of("moves")] == [
        (1, []),
        (1, [str(move) for move in legal_moves(opened, 0)]),
    ]
    assert peer.of("moves")[1]["moves"]


def test_a_connection_before_any_record_is_shown_nothing_and_the_genesis_is_an_empty_table() -> (
    None
):
    """Design §1: "hand/phase null before the first deal": the genesis's piles are empty,
    its moves too; before the genesis nothing is sent."""
    peer = FakePeer(0)

    async def main() -> None:
        audience = Audience()
        view = LiveView(audience, [0], lambda: 0)
        audience.join(peer, 0)
        view.attach(peer)
        assert peer.messages == [] or all(m["type"] == "seat" for m in peer.messages)
        view.show(0, None, new_hand=False)
        view.advise()

    asyncio.run(main())
    assert peer.of("piles") == [
        {
            "type": "piles",
            "seq": 0,
            "hand": None,
            "phase": None,
            "clock_ms": 0,
            "full": True,
            "set": {},
        }
    ]
    assert peer.of("moves") == [{"type": "moves", "seq": 0, "moves": []}]


def test_the_piles_example_of_the_design_is_what_the_builder_makes() -> None:
    """The message shapes the client and page engineers write against (design §1)."""
    message = protocol.piles(
        seq=12,
        hand=1,
        phase="playing",
        clock_ms=5120,
        full=False,
        changed={
            "s0.demon": {"cards": ["7H"], "n": 11},
            "f2": {"suit": "H", "levels": [["AH@0"], ["2H@1"]], "complete": False},
        },
    )
    design = (
        '{"type": "piles", "seq": 12, "hand": 1, "phase": "playing", "clock_ms": 5120, '
        '"full": false, "set": {"s0.demon": {"cards": ["7H"], "n": 11}, "f2": {"suit": "H", '
        '"levels": [["AH@0"], ["2H@1"]], "complete": false}}}'
    )
    assert message == json.loads(design)
    moves = protocol.moves(seq=12, moves=["0 turn 4C 9H KD", "0 demon>f2 3H", "0 w1>w3 9S"])
    assert moves == json.loads(
        '{"type": "moves", "seq": 12, "moves": ["0 turn 4C 9H KD", "0 demon>f2 3H", "0 w1>w3 9S"]}'
    )
    for built in (message, moves):
        assert schema_errors(SERVER_SCHEMA, built) == []
