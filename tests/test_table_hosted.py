"""The table as a server hosts it (issue 31, "The Table changes" of the serve design):
every line handed to the server as it is written (``on_line``), the final record held so
the seats can accept it over the network (``hold_final``, ``final_body``), the genesis body
the seats co-sign before the table exists (``Table.genesis_body``), and the time its
timers sleep until (``deadline``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from racing_demon.game.deal import MatchSeed, commitment
from racing_demon.game.state import EndReason
from racing_demon.log.canonical import canonical_bytes
from racing_demon.log.keys import raw_public_bytes
from racing_demon.log.records import (
    ACCEPT,
    ENTROPY,
    ENTROPY_VERSION,
    FORMAT_VERSION,
    entropy_statement,
)
from racing_demon.log.signing import sign
from racing_demon.profiles import load_rules
from racing_demon.table import PlayerInfo, PlayerSigner, RevealError, Table, player_signer
from racing_demon.testing.randomplay import play_on, word_chooser
from racing_demon.verify import Settings, Verdict, verify_log

SECRET = bytes(range(32))
TABLE_KEY = Ed25519PrivateKey.from_private_bytes(bytes(range(1, 33)))
PLAYER_KEYS = [Ed25519PrivateKey.from_private_bytes(bytes([seat + 60] * 32)) for seat in range(2)]
GAME = "0123456789abcdef0123456789abcdef"
PLAYERS = [
    PlayerInfo(f"p{seat}", f"b{seat}", raw_public_bytes(key.public_key()))
    for seat, key in enumerate(PLAYER_KEYS)
]
SETTINGS = Settings(table_key=raw_public_bytes(TABLE_KEY.public_key()))


def _file_lines(path: Path) -> list[bytes]:
    return path.read_bytes().splitlines()


class _Seats:
    """The seats' signers as a server runs them: each answers with what its player sent
    over the network, gathered before the table asks (None: not answered)."""

    def __init__(self) -> None:
        self.accepts: list[str | None] = [None, None]
        self.asked: list[bytes] = []

    def signer(self, seat: int) -> PlayerSigner:
        sign_all = player_signer(PLAYER_KEYS[seat])

        def answer(kind: str, message: bytes, version: int) -> str | None:
            if kind == ACCEPT:
                self.asked.append(message)
                return self.accepts[seat]
            return sign_all(kind, message, version)

        return answer


def _hosted(path: Path, seats: _Seats, lines: list[bytes]) -> Table:
    return Table.create(
        path,
        load_rules("peer2peer"),
        PLAYERS,
        TABLE_KEY,
        SECRET,
        None,
        player_signers=[seats.signer(seat) for seat in range(2)],
        game_id=GAME,
        durable=False,
        on_line=lines.append,
        hold_final=True,
    )


def test_a_held_final_is_written_by_reveal_with_the_acceptances_gathered_after_final_body(
    tmp_path: Path,
) -> None:
    """Design: "Table.final_body() (the canonical body bytes the held final record will have,
    at the table's clock) and Table.reveal() writes it, asking the signers (which by then
    return the acceptances the seats sent, or None)"."""
    path, seats, lines = tmp_path / "g.jsonl", _Seats(), list[bytes]()
    table = _hosted(path, seats, lines)
    play_on(table, word_chooser(MatchSeed(SECRET)), player_keys=PLAYER_KEYS)
    assert table.played_out and not table.finished
    assert verify_log(path, SETTINGS).verdict is Verdict.UNFINISHED  # nothing revealed yet
    body = table.final_body()
    # The seats answer over the network: seat 0 accepts the body it was sent, seat 1 declines.
    seats.accepts[0] = sign(PLAYER_KEYS[0], ACCEPT, body, FORMAT_VERSION)
    table.reveal()
    assert table.finished and seats.asked == [body, body]
    final = _file_lines(path)[-1]
    assert final.startswith(b'{"body":' + body + b',"sigs":')
    report = verify_log(path, SETTINGS)
    assert report.verdict is Verdict.VERIFIED and report.accepted_by == (0,)


def test_final_body_is_refused_when_no_final_record_is_held(tmp_path: Path) -> None:
    """A body is only sent for a final record the table holds."""
    table = _hosted(tmp_path / "g.jsonl", _Seats(), [])
    with pytest.raises(RevealError, match="not played out"):
        table.final_body()
    table.close()


def test_on_line_sees_exactly_the_lines_of_the_file(tmp_path: Path) -> None:
    """Design: "LogWriter(..., on_append=...): called with each line (no newline) after it is
    written and flushed": the journal gets every byte the log file holds, in order."""
    path, lines = tmp_path / "g.jsonl", list[bytes]()
    seen_on_disk: list[bool] = []

    def on_line(line: bytes) -> None:
        seen_on_disk.append(_file_lines(path)[-1] == line)  # flushed before the callback
        lines.append(line)

    table = Table.create(
        path,
        load_rules("peer2peer"),
        PLAYERS,
        TABLE_KEY,
        SECRET,
        None,
        player_signers=[player_signer(key) for key in PLAYER_KEYS],
        game_id=GAME,
        durable=False,
        on_line=on_line,
        hold_final=True,
    )
    play_on(table, word_chooser(MatchSeed(SECRET)), player_keys=PLAYER_KEYS)
    table.reveal()
    assert lines == _file_lines(path) and all(seen_on_disk) and len(lines) == table.records


def test_a_resumed_table_holds_its_final_and_hands_on_only_the_lines_it_writes(
    tmp_path: Path,
) -> None:
    """Design: "Table.resume(..., on_line=..., hold_final=True)": a server that restarts
    resumes the table as it created it."""
    path, lines = tmp_path / "g.jsonl", list[bytes]()
    table = _hosted(path, _Seats(), lines)
    rounds = 0

    def stop_early(table: Table) -> None:
        nonlocal rounds
        rounds += 1
        if rounds == 40:
            raise KeyboardInterrupt  # the server dies mid-hand

    with pytest.raises(KeyboardInterrupt):
        play_on(
            table, word_chooser(MatchSeed(SECRET)), player_keys=PLAYER_KEYS, after_round=stop_early
        )
    table.close()
    before = _file_lines(path)
    assert before == lines
    after: list[bytes] = []
    seats = _Seats()
    resumed = Table.resume(
        path,
        TABLE_KEY,
        SECRET,
        player_signers=[seats.signer(seat) for seat in range(2)],
        durable=False,
        on_line=after.append,
        hold_final=True,
    )
    play_on(resumed, word_chooser(MatchSeed(SECRET), 2), player_keys=PLAYER_KEYS)
    assert resumed.played_out and not resumed.finished
    body = resumed.final_body()
    seats.accepts = [sign(key, ACCEPT, body, FORMAT_VERSION) for key in PLAYER_KEYS]
    resumed.reveal()
    assert _file_lines(path) == before + after
    report = verify_log(path, SETTINGS)
    assert report.verdict is Verdict.VERIFIED and report.accepted_by == (0, 1)


def test_the_genesis_body_is_what_create_writes_and_the_seats_cosign(tmp_path: Path) -> None:
    """Design: a server asks each seat's entropy, then its co-signature of the genesis body,
    over the network, before it creates the table: ``Table.genesis_body`` is that body."""
    promise = commitment(SECRET)
    entropy = [
        sign(key, ENTROPY, canonical_bytes(entropy_statement(GAME, seat, promise)), ENTROPY_VERSION)
        for seat, key in enumerate(PLAYER_KEYS)
    ]
    body = Table.genesis_body(
        load_rules("peer2peer"),
        PLAYERS,
        TABLE_KEY,
        SECRET,
        [bytes.fromhex(signature) for signature in entropy],
        GAME,
    )
    path = tmp_path / "g.jsonl"
    with Table.create(
        path,
        load_rules("peer2peer"),
        PLAYERS,
        TABLE_KEY,
        SECRET,
        None,
        player_signers=[player_signer(key) for key in PLAYER_KEYS],
        game_id=GAME,
    ):
        pass
    genesis = _file_lines(path)[0]
    assert genesis.startswith(b'{"body":' + body + b',"sigs":')


def test_the_deadline_is_when_a_time_rule_next_ends_the_hand(tmp_path: Path) -> None:
    """Design: "Table.deadline (public): the table time (ms) at which the next time rule
    fires ... or None": advancing to it ends the hand by that rule; once played out, None."""
    table = _hosted(tmp_path / "g.jsonl", _Seats(), [])
    rules = load_rules("peer2peer")
    assert rules.idle_abandon_ms is not None
    # Nobody has acted: the idle rule is the next to fire, after the countdown.
    assert table.deadline == rules.countdown_ms + rules.idle_abandon_ms == table.abandons_at
    table.advance(table.deadline - 1)
    assert not table.played_out
    table.advance(table.deadline)
    assert table.played_out and table.match.hands[-1].reason is EndReason.ABANDONED
    assert table.deadline is None
    table.close()
