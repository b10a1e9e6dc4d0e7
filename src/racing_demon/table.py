"""The live table a game server embeds: submissions in, signed records out.

The table deals every hand from the committed seed, takes submissions
``(player, move, t_ms)`` in arrival order, checks each with the engine, records it as
accepted or bounced, applies the profile's stall, time and end rules, scores hands and
the match, and appends a signed record for each event (docs/log-format.md §6). Every
record is flushed and fsynced before ``submit`` returns, so after a crash the file holds
a prefix of complete records (``durable=False`` skips the fsync, for simulations only).
"""

from __future__ import annotations

import io
import os
import secrets
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path
from typing import Any, BinaryIO

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from racing_demon.files import open_regular
from racing_demon.game.deal import MatchSeed, commitment, deal_hand, pack_digest
from racing_demon.game.engine import (
    StallOutcome,
    advance_clock,
    apply_move,
    apply_stall,
    check_move,
    check_stall,
    is_tie,
    stall_outcome,
)
from racing_demon.game.moves import Move
from racing_demon.game.rules import Rules
from racing_demon.game.scoring import Match, score_hand
from racing_demon.game.state import Phase, State, next_deadline
from racing_demon.log.canonical import canonical_bytes
from racing_demon.log.keys import key_id, raw_public_bytes
from racing_demon.log.reader import DEFAULT_LIMITS, Limits, iter_raw_lines
from racing_demon.log.records import (
    FORMAT_VERSION,
    PLAYER_KINDS,
    SUBMISSION,
    RecordKind,
    accepted_kind,
    chain_hash,
    line_bytes,
    submission,
)
from racing_demon.log.signing import sign, verify
from racing_demon.replay import Snapshot, replay
from racing_demon.report.verify import finding_text
from racing_demon.verify import Code as VerifyCode
from racing_demon.verify import Settings, Verdict, verify_log, verify_stream

PlayerSigner = Callable[[bytes], str]  # canonical genesis body -> signature (kind "genesis")


@dataclass(frozen=True, slots=True)
class PlayerInfo:
    name: str
    back: str
    key: bytes | None = None  # the raw 32-byte Ed25519 public key, if the player signs


@dataclass(frozen=True, slots=True)
class Outcome:
    """What the table made of a submission: the record it wrote."""

    kind: RecordKind
    reason: str | None  # the engine's refusal code for a bounce
    seq: int


class SubmissionError(ValueError):
    """A submission the table cannot log at all (nothing is written)."""


class ResumeError(ValueError):
    """A log that a table cannot continue."""


def _body(
    game: str, seq: int, prev: str | None, kind: RecordKind, t_ms: int, fields: dict[str, Any]
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "v": FORMAT_VERSION,
        "game": game,
        "seq": seq,
        "t_ms": t_ms,
        "kind": kind.value,
        **fields,
    }
    if prev is not None:
        body["prev"] = prev
    return body


def _check_genesis(
    game: str,
    genesis: dict[str, Any],
    sigs: dict[str, Any],
    table_key: Ed25519PrivateKey,
    dealer_secret: bytes,
) -> None:
    """ValueError, before the table writes a byte, unless the genesis would pass every
    check that the verifier makes of it (schema, keys, co-signatures, the reveal, rules and
    seats): the table never writes a log that its own verifier refuses."""
    body = _body(game, 0, None, RecordKind.GENESIS, 0, genesis)
    signed = {**sigs, "table": sign(table_key, RecordKind.GENESIS.value, canonical_bytes(body))}
    settings = Settings(table_key=raw_public_bytes(table_key.public_key()), seed=dealer_secret)
    line = line_bytes(body, signed) + b"\n"
    report = verify_stream(io.BytesIO(line), settings, "the genesis")
    finding = report.finding
    if finding is None or finding.code is not VerifyCode.UNFINISHED:
        assert finding is not None  # a genesis alone cannot be a whole match
        raise ValueError(f"the log would not verify: {finding_text(finding)}")


class _Writer:
    """Appends chained, table-signed records; each is on disk before append returns."""

    def __init__(
        self,
        file: BinaryIO,
        game: str,
        key: Ed25519PrivateKey,
        *,
        seq: int = 0,
        t_ms: int = 0,
        prev: str | None = None,
        durable: bool = True,
    ) -> None:
        """A writer at the end of a log of ``seq`` records whose last line hashes to ``prev``.

        ``durable=False`` flushes each record but does not fsync it (see ``Table.create``).
        """
        self._file = file
        self._durable = durable
        self._game = game
        self._key = key
        self.seq = seq
        self.t_ms = t_ms
        self._prev = prev
        self._failed: str | None = None

    def append(
        self, kind: RecordKind, t_ms: int, fields: dict[str, Any], sigs: dict[str, Any]
    ) -> int:
        if self._failed is not None:
            raise OSError(
                f"the log writer failed earlier ({self._failed}): recover the log and resume"
            )
        body = _body(self._game, self.seq, self._prev, kind, t_ms, fields)
        signed = {**sigs, "table": sign(self._key, kind.value, canonical_bytes(body))}
        line = line_bytes(body, signed)
        try:
            self._file.write(line + b"\n")
            self._file.flush()
            if self._durable:
                os.fsync(self._file.fileno())
        except OSError as error:
            # A partial write may have left a torn line: appending after it would bury it in
            # the middle of the log, where recovery must refuse to cut.
            self._failed = error.strerror or str(error)
            raise
        self._prev = chain_hash(line)
        self.t_ms = t_ms
        self.seq += 1
        return self.seq - 1

    def close(self) -> None:
        self._file.close()


class Table:
    """One match at one table. Create it with ``Table.create``."""

    def __init__(
        self,
        writer: _Writer,
        rules: Rules,
        players: Sequence[PlayerInfo],
        game: str,
        seed: MatchSeed,
        secret: bytes,
    ) -> None:
        self._writer = writer
        self._rules = rules
        self._players = tuple(players)
        self._game = game
        self._seed = seed
        self._secret = secret
        self._next_n = [0] * len(players)
        self._match = Match(rules, len(players))
        self._state: State | None = None
        self.finished = False

    @classmethod
    def create(
        cls,
        path: Path,
        rules: Rules,
        players: Sequence[PlayerInfo],
        table_key: Ed25519PrivateKey,
        dealer_secret: bytes,
        entropy: Sequence[bytes],
        *,
        player_signers: Sequence[PlayerSigner] | None = None,
        game_id: str | None = None,
        durable: bool = True,
    ) -> Table:
        """Write the genesis (co-signed by every keyed player) and deal the first hand.

        Refuses an existing file: a log is never overwritten. ``durable=False`` flushes every
        record but skips the fsync, so a crash may lose records the table acknowledged: for
        simulations and benchmarks only, never for a table that players rely on.
        """
        if len(entropy) != len(players):
            raise ValueError(f"{len(players)} players but {len(entropy)} entropy contributions")
        keyed = [player.key is not None for player in players]
        if any(keyed) and not all(keyed):
            raise ValueError("either every player signs with a key or none does")
        if all(keyed) != (player_signers is not None and len(player_signers) == len(players)):
            raise ValueError("keyed players co-sign the genesis: one signer per player")
        game = game_id or secrets.token_hex(16)
        seed = MatchSeed.from_secret(dealer_secret, entropy)
        genesis: dict[str, Any] = {
            "software": f"racing-demon {version('racing-demon')}",
            "rules": rules.to_document(),
            "rules_sha256": rules.digest(),
            "players": [
                {
                    "seat": seat,
                    "name": player.name,
                    "back": player.back,
                    "key": None if player.key is None else player.key.hex(),
                }
                for seat, player in enumerate(players)
            ],
            "table_key": key_id(raw_public_bytes(table_key.public_key())),
            "commitment": commitment(dealer_secret),
            "entropy": [contribution.hex() for contribution in entropy],
        }
        sigs: dict[str, Any] = {}
        if player_signers is not None:
            message = canonical_bytes(_body(game, 0, None, RecordKind.GENESIS, 0, genesis))
            cosigned = [signer(message) for signer in player_signers]
            for seat, (player, signature) in enumerate(zip(players, cosigned, strict=True)):
                assert player.key is not None
                problem = verify(player.key, RecordKind.GENESIS.value, message, signature)
                if problem is not None:
                    raise ValueError(f"seat {seat} did not co-sign the genesis: {problem}")
            sigs["players"] = cosigned
        _check_genesis(game, genesis, sigs, table_key, dealer_secret)
        file = path.open("xb")
        try:
            writer = _Writer(file, game, table_key, durable=durable)
            writer.append(RecordKind.GENESIS, 0, genesis, sigs)
            table = cls(writer, rules, players, game, seed, dealer_secret)
            table._start_hand(0)
        except BaseException:
            # The file is this call's own (opened exclusively): a failed create leaves
            # nothing behind, so the same create can be tried again.
            file.close()
            path.unlink(missing_ok=True)
            raise
        return table

    @classmethod
    def resume(
        cls,
        path: Path,
        table_key: Ed25519PrivateKey,
        dealer_secret: bytes,
        *,
        limits: Limits = DEFAULT_LIMITS,
    ) -> Table:
        """Continue the unfinished match logged at ``path`` after a crash.

        The log must verify as unfinished under this table's key and dealer secret, every
        record replayed; a torn last line must be removed first (``racing-demon recover``).
        The table then writes what the crash cut short (a due stall shift, the hand's end,
        the next deal or the final record) and takes submissions again. Raises ResumeError.
        """
        settings = Settings(
            table_key=raw_public_bytes(table_key.public_key()), seed=dealer_secret, limits=limits
        )
        report = verify_log(path, settings)
        if report.verdict is Verdict.VERIFIED:
            raise ResumeError(f"{path}: the match is over: nothing to resume")
        finding = report.finding
        assert finding is not None  # any verdict but VERIFIED names what it found
        if finding.code is not VerifyCode.UNFINISHED:
            where = "" if finding.line is None else f"line {finding.line}: "
            raise ResumeError(f"{path}: {report.verdict}: {where}{finding.code}: {finding.message}")
        snapshot, genesis, next_n, last_line = _rebuild(path, dealer_secret, limits)
        players = [
            PlayerInfo(
                player["name"],
                player["back"],
                None if player["key"] is None else bytes.fromhex(player["key"]),
            )
            for player in genesis["players"]
        ]
        writer = _Writer(
            path.open("ab"),
            genesis["game"],
            table_key,
            seq=snapshot.seq + 1,
            t_ms=snapshot.body["t_ms"],
            prev=chain_hash(last_line),
        )
        seed = MatchSeed.from_secret(dealer_secret, [bytes.fromhex(e) for e in genesis["entropy"]])
        assert snapshot.rules is not None and snapshot.match is not None
        table = cls(writer, snapshot.rules, players, genesis["game"], seed, dealer_secret)
        table._next_n = next_n
        table._match = snapshot.match
        table._state = snapshot.state
        t_ms = writer.t_ms
        last_kind = snapshot.body["kind"]
        if last_kind == RecordKind.GENESIS:
            table._start_hand(t_ms)
        elif last_kind == RecordKind.HAND_END:
            table._after_hand(t_ms)
        else:
            table._settle(t_ms)
        return table

    @property
    def game(self) -> str:
        return self._game

    @property
    def players(self) -> tuple[PlayerInfo, ...]:
        return self._players

    @property
    def state(self) -> State:
        """The current hand's position (after the match, its last hand)."""
        assert self._state is not None
        return self._state

    @property
    def match(self) -> Match:
        return self._match

    @property
    def records(self) -> int:
        """How many records are on disk: each was fsynced (only flushed if not ``durable``)
        before the call that wrote it returned."""
        return self._writer.seq

    @property
    def t_ms(self) -> int:
        """The time of the last record written."""
        return self._writer.t_ms

    def next_n(self, player: int) -> int:
        """The number the player's next submission must carry."""
        return self._next_n[player]

    def advance(self, t_ms: int) -> None:
        """Move the clock to ``t_ms``: end every hand whose deadline came first."""
        if t_ms < self._writer.t_ms:
            raise SubmissionError(f"time runs backwards: {t_ms} ms after {self._writer.t_ms} ms")
        while not self.finished:
            deadline = next_deadline(self.state)
            if deadline is None or deadline[0] > t_ms:
                self._state = advance_clock(self.state, t_ms)
                return
            self._state = advance_clock(self.state, deadline[0])
            self._end_hand(deadline[0])

    def submit(
        self, player: int, move_text: str, t_ms: int, n: int, signature: str | None = None
    ) -> Outcome:
        """Check one submission, record it as accepted or bounced, and apply what follows."""
        self.advance(t_ms)
        if self.finished:
            raise SubmissionError("the match is over")
        if not 0 <= player < len(self._players):
            raise SubmissionError(f"there is no seat {player}")
        if n != self._next_n[player]:
            raise SubmissionError(f"seat {player}'s next submission is {self._next_n[player]}")
        try:
            move = Move.parse(move_text)
        except ValueError as error:
            raise SubmissionError(str(error)) from error
        if move.player != player:
            raise SubmissionError(f"{move_text!r} is not a move of seat {player}")
        sigs = self._player_sigs(player, move_text, n, signature)
        state = self.state  # advance() brought it to t_ms
        fields = {"hand": state.hand, "player": player, "n": n, "move": move_text}
        violation = check_move(state, move)
        self._next_n[player] += 1
        if violation is not None:
            self._state = state
            fields["reason"] = violation.code.value
            seq = self._writer.append(RecordKind.BOUNCE, t_ms, fields, sigs)
            return Outcome(RecordKind.BOUNCE, violation.code.value, seq)
        kind = accepted_kind(move, is_tie(state, move))
        self._state = apply_move(state, move)
        seq = self._writer.append(kind, t_ms, fields, sigs)
        self._settle(t_ms)
        return Outcome(kind, None, seq)

    def close(self) -> None:
        """Stop writing (a match left unfinished stays a valid, unfinished prefix)."""
        self._writer.close()

    def __enter__(self) -> Table:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- internals ---------------------------------------------------------------

    def _player_sigs(
        self, player: int, move_text: str, n: int, signature: str | None
    ) -> dict[str, Any]:
        key = self._players[player].key
        if key is None:
            if signature is not None:
                raise SubmissionError(f"seat {player} has no key: its moves are not signed")
            return {}
        if signature is None:
            raise SubmissionError(f"seat {player} signs its moves: the signature is missing")
        statement = submission(self._game, self.state.hand, player, n, move_text)
        problem = verify(key, SUBMISSION, canonical_bytes(statement), signature)
        if problem is not None:
            raise SubmissionError(f"seat {player}'s signature does not verify: {problem}")
        return {"player": signature}

    def _start_hand(self, t_ms: int) -> None:
        hand = self._match.played + 1
        self._state, packs = deal_hand(self._rules, self._seed, hand, len(self._players), t_ms)
        digests = [pack_digest(hand, seat, pack) for seat, pack in enumerate(packs)]
        self._writer.append(RecordKind.HAND_START, t_ms, {"hand": hand, "packs": digests}, {})
        self._settle(t_ms)

    def _settle(self, t_ms: int) -> None:
        """Apply what the last event made due: stall shifts, and the end of the hand."""
        while self.state.phase is Phase.PLAYING and check_stall(self.state) is None:
            outcome = stall_outcome(self.state)
            self._state = apply_stall(self.state)
            if outcome is StallOutcome.SHIFT:
                self._writer.append(RecordKind.STALL, t_ms, {"hand": self.state.hand}, {})
        if self.state.phase is Phase.ENDED:
            self._end_hand(t_ms)

    def _end_hand(self, t_ms: int) -> None:
        hand = score_hand(self.state)
        fields = {"hand": hand.hand, "reason": hand.reason.value, "scores": list(hand.scores)}
        self._writer.append(RecordKind.HAND_END, t_ms, fields, {})
        self._match = self._match.record(hand)
        self._after_hand(t_ms)

    def _after_hand(self, t_ms: int) -> None:
        """Deal the next hand, or end the match with the final record."""
        if not self._match.over:
            self._start_hand(t_ms)
            return
        match = self._match
        reason = "abandoned" if match.abandoned else "complete"
        if match.resigned is not None:
            reason = "resigned"
        final = {
            "reason": reason,
            "hands": [list(scored.scores) for scored in match.hands],
            "totals": list(match.totals),
            "winners": list(match.winners),
            "secret": self._secret.hex(),
            "records": self._writer.seq,
        }
        self._writer.append(RecordKind.FINAL, t_ms, final, {})
        self.finished = True
        self._writer.close()


def sign_submission(
    private_key: Ed25519PrivateKey, game: str, hand: int, player: int, n: int, move_text: str
) -> str:
    """A player's signature over its submission (kind ``submission``)."""
    statement = submission(game, hand, player, n, move_text)
    return sign(private_key, SUBMISSION, canonical_bytes(statement))


def _rebuild(
    path: Path, secret: bytes, limits: Limits
) -> tuple[Snapshot, dict[str, Any], list[int], bytes]:
    """The table after the log's last record, the genesis body, each seat's next ``n``, and
    the last line."""
    snapshot: Snapshot | None = None
    genesis: dict[str, Any] = {}
    next_n: list[int] = []
    for snapshot in replay(path, secret, limits):
        body = snapshot.body
        if body["kind"] == RecordKind.GENESIS:
            genesis = body
            next_n = [0] * len(body["players"])
        elif body["kind"] in PLAYER_KINDS:
            next_n[body["player"]] = body["n"] + 1
    assert snapshot is not None  # the log verified, so it has a genesis
    with open_regular(path) as stream:
        ((_, last_line),) = deque(iter_raw_lines(stream, limits), maxlen=1)
    return snapshot, genesis, next_n, last_line
