"""Random players at a real table, for golden logs, tests and fuzzing.

Every move goes through ``Table.submit``, exactly as a server would send it. In each
round one or two seats choose a move from the same snapshot of the table and submit it
at the same millisecond, so real races happen: the later card is bounced
(``FOUNDATION_TAKEN``), or under the table's tie rule both stay. ``choose`` supplies
every choice, so this module has no randomness of its own.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from racing_demon.game.deal import MatchSeed, uniform_below, word_stream
from racing_demon.game.engine import is_progress, legal_moves
from racing_demon.game.moves import Move, MoveKind
from racing_demon.game.rules import Rules
from racing_demon.game.state import State
from racing_demon.log.keys import raw_public_bytes
from racing_demon.table import PlayerInfo, Table, player_signer, sign_submission
from racing_demon.testing.playout import STEP_MS, Choose

CHOICE_SEAT = 2**32 - 1  # a seat no table has: its word stream only chooses moves


def word_chooser(seed: MatchSeed, hand: int = 1) -> Choose:
    """Unbiased choices drawn from the deal word stream (docs/deal-spec.md), so golden files
    depend on this project's own spec, not on a language's random number generator."""
    words = word_stream(seed, hand, CHOICE_SEAT)

    def choose(options: Sequence[Any]) -> Any:
        return options[uniform_below(len(options), words)] if len(options) > 1 else options[0]

    return choose


NAMES = ("Ada", "Bert", "Cleo", "Dev", "Eli", "Fay", "Gus", "Hal")
BACKS = ("red", "blue", "green", "black", "gold", "grey", "white", "violet")


def play_match(
    path: Path,
    rules: Rules,
    table_key: Ed25519PrivateKey,
    dealer_secret: bytes,
    entropy: Sequence[bytes],
    choose: Choose,
    *,
    player_keys: Sequence[Ed25519PrivateKey] | None = None,
    game_id: str | None = None,
    max_rounds: int = 20000,
    after_round: Callable[[Table], None] | None = None,
) -> Table:
    """Play a whole match with random players and return the (finished) table.

    With ``player_keys`` every seat signs its entropy (so ``entropy`` only counts the
    seats), its genesis, its submissions and the result; ``play_on`` says what
    ``after_round`` sees.
    """
    seats = len(entropy)
    keys = list(player_keys) if player_keys is not None else None
    players = [
        PlayerInfo(
            NAMES[seat % len(NAMES)],
            BACKS[seat % len(BACKS)],
            None if keys is None else raw_public_bytes(keys[seat].public_key()),
        )
        for seat in range(seats)
    ]
    signers = None if keys is None else [player_signer(key) for key in keys]
    if game_id is None:
        game_id = _game_id(rules, dealer_secret, entropy, players)
    table = Table.create(
        path,
        rules,
        players,
        table_key,
        dealer_secret,
        entropy if keys is None else None,
        player_signers=signers,
        game_id=game_id,
    )
    return play_on(table, choose, player_keys=keys, max_rounds=max_rounds, after_round=after_round)


def _game_id(
    rules: Rules, secret: bytes, entropy: Sequence[bytes], players: Sequence[PlayerInfo]
) -> str:
    """A game id that follows from the match's inputs, so that a test match, whose keyed
    seats' entropy answers its game id (docs/deal-spec.md), is dealt the same every run."""
    digest = hashlib.sha256(rules.digest().encode() + secret)
    for contribution in entropy:
        digest.update(contribution)
    for player in players:
        digest.update(player.key or b"-")
    return digest.hexdigest()[:32]


def play_on(
    table: Table,
    choose: Choose,
    *,
    player_keys: Sequence[Ed25519PrivateKey] | None = None,
    max_rounds: int = 20000,
    after_round: Callable[[Table], None] | None = None,
) -> Table:
    """Play rounds at ``table`` from its last record's time until the match ends (until
    it is played out, for a tournament's table that holds its final record).

    ``after_round`` sees the table after every round: each record it counts is on disk.
    """
    seats = len(table.players)
    t_ms = table.t_ms
    for _ in range(max_rounds):
        t_ms += choose(STEP_MS)
        table.advance(t_ms)
        if table.played_out:  # a tournament's table holds its final record
            break
        snapshot, seen = table.state, table.head
        racers = [choose(range(seats))]
        if choose((1, 1, 2)) == 2:  # a second, different seat races from the same snapshot
            racers.append((racers[0] + 1 + choose(range(seats - 1))) % seats)
        for player in racers:
            move = _choose_move(snapshot, player, choose)
            if move is None or table.played_out or table.state.hand != snapshot.hand:
                continue  # a racer whose hand ended under it has nothing to send
            text = str(move)
            n = table.next_n(player)
            signature = None
            if player_keys is not None:
                signature = sign_submission(
                    player_keys[player],
                    table.game,
                    snapshot.hand,
                    player,
                    n,
                    text,
                    seen,
                    table.version,
                )
            table.submit(player, text, t_ms, n, signature, seen)
        if after_round is not None:
            after_round(table)
    return table


def _choose_move(snapshot: State, seat: int, choose: Choose) -> Move | None:
    moves = [
        m for m in legal_moves(snapshot, seat) if m.kind not in (MoveKind.RESIGN, MoveKind.AGREE)
    ]
    plays = [m for m in moves if is_progress(m) or m.kind is MoveKind.CALL]
    if plays and choose(("play", "play", "play", "other")) == "play":
        moves = plays
    return choose(moves) if moves else None
