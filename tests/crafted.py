"""Valid signed logs shaped to be slow to verify, written by the real table.

Issue 12 (items 8 and 10): a log may bring any rules its schema allows, so an adversary
picks the shape that costs the verifier most per byte. Three shapes, each with one size
knob, each a whole match that verifies as VERIFIED with ``TABLE_KEY``:

- ``hands``: hands that end two milliseconds after they start (a seat turns its stock,
  and ``no_centre_ms`` is 1) in a match with a target nobody reaches, so every hand is a
  hand_start, a turn and a hand_end;
- ``records``: one long hand of stock turns and recycles, nobody playing a card;
- ``stalls``: a table that keeps shifting, every seat agreeing to a stall shift again and
  again: each agreement leaves the table to the stuck search, and each shift is a record.

Each match ends with seat 0 resigning, so the size is exactly what was asked for. Keys,
secret and entropy are fixtures published here on purpose: never use them for real.
Used by tests/test_hostile.py and bench/crafted_bench.py.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from racing_demon.game.engine import legal_moves
from racing_demon.game.moves import MoveKind
from racing_demon.game.rules import MAX_HANDS, Rules
from racing_demon.log.keys import raw_public_bytes
from racing_demon.profiles import builtin_document, rules_from_document
from racing_demon.table import PlayerInfo, Table, player_signer, sign_submission

TABLE_KEY = Ed25519PrivateKey.from_private_bytes(bytes([0xC0]) * 32)
PLAYER_KEYS = [Ed25519PrivateKey.from_private_bytes(bytes([0xC1 + seat]) * 32) for seat in (0, 1)]
SECRET = bytes([0x5E]) * 32
SEATS = 2

# Five work piles that make the stuck search explode: four runs from king to six, each
# colour twice, and an empty pile. Any tail goes into the empty pile and back onto its twin
# run, so breadth first there are 475,136 arrangements, and none plays a card.
EXPLOSIVE_WORK = (
    "KS QH JC TD 9S 8H 7C 6D",
    "KC QD JS TH 9C 8D 7S 6H",
    "KH QS JD TC 9H 8S 7D 6C",
    "KD QC JH TS 9D 8C 7H 6S",
    "",
)


def resigning_table() -> dict[str, object]:
    """The table profile, but with a resignation that ends the match (which the table rules
    do not have): every shape ends with one, so its size is exactly the one asked for."""
    document = builtin_document("table")
    document["name"] = "crafted-table"
    del document["end"]["resign"]
    return document


def hands_rules() -> Rules:
    """Hands that end at once (once the table acts, no card to the centre within 1 ms) in a
    match that has only a target, out of reach: the table profile with two changes."""
    document = resigning_table()
    document["name"] = "crafted-hands"
    document["time"]["no_centre_ms"] = 1
    document["match"]["target"] = 100000
    return rules_from_document(document)


def _table(path: Path, rules: Rules) -> Table:
    players = [
        PlayerInfo(f"p{seat}", f"b{seat}", raw_public_bytes(key.public_key()))
        for seat, key in enumerate(PLAYER_KEYS)
    ]
    return Table.create(
        path,
        rules,
        players,
        TABLE_KEY,
        SECRET,
        None,  # each keyed seat's entropy is its signature over the commitment
        player_signers=[player_signer(key) for key in PLAYER_KEYS],
        game_id=hashlib.sha256(path.stem.encode()).hexdigest()[:32],
        durable=False,
    )


def _submit(table: Table, player: int, kind: MoveKind, t_ms: int) -> None:
    """The seat's one legal move of ``kind`` (turn, recycle, agree, resign), signed."""
    move = next(m for m in legal_moves(table.state, player) if m.kind is kind)
    text = str(move)
    n = table.next_n(player)
    seen = table.head
    signature = sign_submission(
        PLAYER_KEYS[player], table.game, table.state.hand, player, n, text, seen
    )
    table.submit(player, text, t_ms, n, signature, seen)


def _turn(table: Table, player: int, t_ms: int) -> None:
    kinds = {move.kind for move in legal_moves(table.state, player)}
    _submit(table, player, MoveKind.TURN if MoveKind.TURN in kinds else MoveKind.RECYCLE, t_ms)


def _quick_hand(table: Table, start_ms: int) -> int:
    """Seat 0 turns its stock a millisecond into the hand; the no-centre rule ends the hand
    a millisecond later, and the next one starts then: its start is returned."""
    _submit(table, 0, MoveKind.TURN, start_ms + 1)
    table.advance(start_ms + 2)
    return start_ms + 2


def write_hands(path: Path, hands: int) -> Path:
    """A match of ``hands`` hands, each a hand_start, a turn and a hand_end (the last one
    resigned)."""
    with _table(path, hands_rules()) as table:
        start_ms = 0
        for _ in range(hands - 1):
            start_ms = _quick_hand(table, start_ms)
        _submit(table, 0, MoveKind.RESIGN, start_ms)
    return path


def write_capped(path: Path) -> Path:
    """A match that only the cap on hands ends: ``MAX_HANDS`` hands, nobody resigning."""
    with _table(path, hands_rules()) as table:
        start_ms = 0
        while not table.finished:
            start_ms = _quick_hand(table, start_ms)
        assert table.match.played == MAX_HANDS
    return path


def write_records(path: Path, turns: int) -> Path:
    """One hand of ``turns`` stock turns and recycles by both seats in turn."""
    with _table(path, rules_from_document(resigning_table())) as table:
        for t_ms in range(turns):
            _turn(table, t_ms % SEATS, t_ms)
        _submit(table, 0, MoveKind.RESIGN, turns)
    return path


def write_stalls(path: Path, shifts: int) -> Path:
    """One hand of ``shifts`` stall shifts, each agreed by every seat (the table profile)."""
    with _table(path, rules_from_document(resigning_table())) as table:
        for shift in range(shifts):
            for player in range(SEATS):
                _submit(table, player, MoveKind.AGREE, shift)
        _submit(table, 0, MoveKind.RESIGN, shifts)
    return path


# shape: (writer, its size at 1x, what the size counts)
SHAPES: dict[str, tuple[Callable[[Path, int], Path], int, str]] = {
    "hands": (write_hands, 62, "hands"),
    "records": (write_records, 500, "records in one hand"),
    "stalls": (write_stalls, 150, "stall shifts"),
}
