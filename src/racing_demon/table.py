"""The live table a game server embeds: submissions in, signed records out.

The table deals every hand from the committed seed, takes submissions
``(seat, move, t_ms)`` in arrival order, checks each with the engine, records it as
accepted or bounced, applies the profile's stall, time and end rules, scores hands and
the match, and appends a signed record for each event (docs/log-format.md §6). Every
record is flushed and fsynced before ``submit`` returns, so after a crash the file holds
a prefix of complete records (``durable=False`` skips the fsync, for simulations only).
"""

from __future__ import annotations

import io
import secrets
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from racing_demon.errors import RacingDemonError
from racing_demon.files import open_regular
from racing_demon.game.deal import MatchSeed, commitment
from racing_demon.game.flow import MatchEnd, MatchFlow, RecordKind, Submission
from racing_demon.game.moves import Move
from racing_demon.game.rules import Rules
from racing_demon.game.scoring import Match
from racing_demon.game.state import State
from racing_demon.log.canonical import canonical_bytes
from racing_demon.log.keys import key_id, raw_public_bytes
from racing_demon.log.reader import DEFAULT_LIMITS, Limits, iter_raw_lines
from racing_demon.log.records import (
    SUBMISSION,
    Final,
    Genesis,
    Record,
    SeatEntry,
    chain_hash,
    record_body,
    submission_statement,
)
from racing_demon.log.signing import sign, verify
from racing_demon.log.writer import LogWriter, seal
from racing_demon.replay import replay
from racing_demon.verify import Settings, Verdict, verify_log, verify_stream
from racing_demon.verify.report import VerifyCode

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


class TableError(RacingDemonError, ValueError):
    """A match that the table cannot start: nothing is written."""


class SubmissionError(RacingDemonError, ValueError):
    """A submission the table cannot log at all (nothing is written)."""


class ResumeError(RacingDemonError, ValueError):
    """A log that a table cannot continue."""


def _check_genesis(
    genesis: Record, sigs: dict[str, Any], table_key: Ed25519PrivateKey, dealer_secret: bytes
) -> None:
    """TableError, before the table writes a byte, unless the genesis would pass every
    check that the verifier makes of it (schema, keys, co-signatures, the reveal, rules and
    seats): the table never writes a log that its own verifier refuses."""
    settings = Settings(table_key=raw_public_bytes(table_key.public_key()), seed=dealer_secret)
    line = seal(genesis, table_key, sigs) + b"\n"
    report = verify_stream(io.BytesIO(line), settings, "the genesis")
    finding = report.finding
    if finding is None or finding.code is not VerifyCode.UNFINISHED:
        assert finding is not None  # a genesis alone cannot be a whole match
        where = "" if finding.seat is None else f"seat {finding.seat}: "
        raise TableError(f"the log would not verify: {where}{finding.code}: {finding.message}")


class Table:
    """One match at one table. Create it with ``Table.create``.

    The table writes what the match flow (``racing_demon.game.flow``) makes of each
    submission, then every record the flow makes due, so that it writes exactly the log
    that the verifier, judging with the same flow, accepts.
    """

    def __init__(
        self,
        writer: LogWriter,
        flow: MatchFlow,
        players: Sequence[PlayerInfo],
        game: str,
        secret: bytes,
    ) -> None:
        self._writer = writer
        self._flow = flow
        self._players = tuple(players)
        self._game = game
        self._secret = secret
        self._next_n = [0] * len(players)

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
            raise TableError(f"{len(players)} players but {len(entropy)} entropy contributions")
        keyed = [player.key is not None for player in players]
        if any(keyed) and not all(keyed):
            raise TableError("either every player signs with a key or none does")
        if all(keyed) != (player_signers is not None and len(player_signers) == len(players)):
            raise TableError("keyed players co-sign the genesis: one signer per player")
        game = game_id or secrets.token_hex(16)
        genesis = Record(
            game,
            0,
            0,
            None,
            Genesis(
                software=f"racing-demon {version('racing-demon')}",
                rules=rules.to_document(),
                rules_sha256=rules.digest(),
                players=tuple(
                    SeatEntry(seat, player.name, player.back, _hex(player.key))
                    for seat, player in enumerate(players)
                ),
                table_key=key_id(raw_public_bytes(table_key.public_key())),
                commitment=commitment(dealer_secret),
                entropy=tuple(contribution.hex() for contribution in entropy),
            ),
        )
        sigs: dict[str, Any] = {}
        if player_signers is not None:
            message = canonical_bytes(record_body(genesis))
            cosigned = [signer(message) for signer in player_signers]
            for seat, (player, signature) in enumerate(zip(players, cosigned, strict=True)):
                assert player.key is not None
                problem = verify(player.key, RecordKind.GENESIS.value, message, signature)
                if problem is not None:
                    raise TableError(f"seat {seat} did not co-sign the genesis: {problem}")
            sigs["players"] = cosigned
        _check_genesis(genesis, sigs, table_key, dealer_secret)
        seed = MatchSeed.from_secret(dealer_secret, entropy)
        file = path.open("xb")
        try:
            writer = LogWriter(file, game, table_key, durable=durable)
            writer.append(0, genesis.payload, sigs)
            flow = MatchFlow.begin(rules, seed, len(players))
            table = cls(writer, flow, players, game, dealer_secret)
            table._record_due(0)
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
        flow, genesis, last, next_n, last_line = _rebuild(path, dealer_secret, limits)
        players = [
            PlayerInfo(
                entry.name, entry.back, None if entry.key is None else bytes.fromhex(entry.key)
            )
            for entry in genesis.players
        ]
        writer = LogWriter(
            path.open("ab"),
            last.game,
            table_key,
            seq=last.seq + 1,
            t_ms=last.t_ms,
            prev=chain_hash(last_line),
        )
        table = cls(writer, flow, players, last.game, dealer_secret)
        table._next_n = next_n
        table._record_due(writer.t_ms)
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
        state = self._flow.state
        assert state is not None  # the first hand is dealt as the table is created
        return state

    @property
    def match(self) -> Match:
        return self._flow.match

    @property
    def finished(self) -> bool:
        """Whether the final record is written."""
        return self._flow.finished

    @property
    def records(self) -> int:
        """How many records are on disk: each was fsynced (only flushed if not ``durable``)
        before the call that wrote it returned."""
        return self._writer.seq

    @property
    def t_ms(self) -> int:
        """The time of the last record written."""
        return self._writer.t_ms

    def next_n(self, seat: int) -> int:
        """The number the seat's next submission must carry."""
        return self._next_n[seat]

    def advance(self, t_ms: int) -> None:
        """Move the clock to ``t_ms``: end every hand whose deadline came first."""
        if t_ms < self._writer.t_ms:
            raise SubmissionError(f"time runs backwards: {t_ms} ms after {self._writer.t_ms} ms")
        while not self.finished:
            deadline = self._flow.deadline()
            if deadline is None or deadline > t_ms:
                self._flow = self._flow.at(t_ms)
                return
            self._flow = self._flow.at(deadline)
            self._record_due(deadline)

    def submit(
        self, seat: int, move_text: str, t_ms: int, n: int, signature: str | None = None
    ) -> Outcome:
        """Check one submission, record it as accepted or bounced, and apply what follows."""
        self.advance(t_ms)
        if self.finished:
            raise SubmissionError("the match is over")
        if not 0 <= seat < len(self._players):
            raise SubmissionError(f"there is no seat {seat}")
        if n != self._next_n[seat]:
            raise SubmissionError(f"seat {seat}'s next submission is {self._next_n[seat]}")
        try:
            move = Move.parse(move_text)
        except ValueError as error:
            raise SubmissionError(str(error)) from error
        if move.seat != seat:
            raise SubmissionError(f"{move_text!r} is not a move of seat {seat}")
        sigs = self._player_sigs(seat, move_text, n, signature)
        event, self._flow = self._flow.submit(seat, n, move, move_text)
        self._next_n[seat] += 1
        seq = self._writer.append(t_ms, event, sigs)
        self._record_due(t_ms)
        return Outcome(event.kind, event.reason, seq)

    def close(self) -> None:
        """Stop writing (a match left unfinished stays a valid, unfinished prefix)."""
        self._writer.close()

    def __enter__(self) -> Table:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- internals ---------------------------------------------------------------

    def _player_sigs(
        self, seat: int, move_text: str, n: int, signature: str | None
    ) -> dict[str, Any]:
        key = self._players[seat].key
        if key is None:
            if signature is not None:
                raise SubmissionError(f"seat {seat} has no key: its moves are not signed")
            return {}
        if signature is None:
            raise SubmissionError(f"seat {seat} signs its moves: the signature is missing")
        statement = submission_statement(self._game, self.state.hand, seat, n, move_text)
        problem = verify(key, SUBMISSION, canonical_bytes(statement), signature)
        if problem is not None:
            raise SubmissionError(f"seat {seat}'s signature does not verify: {problem}")
        return {"player": signature}

    def _record_due(self, t_ms: int) -> None:
        """Write every record the flow makes due at ``t_ms``: stall shifts, the hand's end,
        the next deal, the final record."""
        while (event := self._flow.due()) is not None:
            self._flow = self._flow.play(event, t_ms)
            if isinstance(event, MatchEnd):
                final = Final(event, self._secret.hex(), self._writer.seq)
                self._writer.append(t_ms, final, {})
                self._writer.close()
                return
            self._writer.append(t_ms, event, {})


def _hex(key: bytes | None) -> str | None:
    return None if key is None else key.hex()


def sign_submission(
    private_key: Ed25519PrivateKey, game: str, hand: int, seat: int, n: int, move_text: str
) -> str:
    """A player's signature over its seat's submission (kind ``submission``)."""
    statement = submission_statement(game, hand, seat, n, move_text)
    return sign(private_key, SUBMISSION, canonical_bytes(statement))


def _rebuild(
    path: Path, secret: bytes, limits: Limits
) -> tuple[MatchFlow, Genesis, Record, list[int], bytes]:
    """The match after the log's last record, the genesis, that last record, each seat's
    next ``n``, and the last line."""
    genesis: Genesis | None = None
    flow: MatchFlow | None = None
    last: Record | None = None
    next_n: list[int] = []
    for snapshot in replay(path, secret, limits):
        last, flow = snapshot.record, snapshot.flow
        assert last is not None  # every snapshot replay yields holds its record
        payload = last.payload
        if isinstance(payload, Genesis):
            genesis = payload
            next_n = [0] * len(payload.players)
        elif isinstance(payload, Submission):
            next_n[payload.seat] = payload.n + 1
    assert genesis is not None and flow is not None and last is not None  # it verified
    with open_regular(path) as stream:
        ((_, last_line),) = deque(iter_raw_lines(stream, limits), maxlen=1)
    return flow, genesis, last, next_n, last_line
