"""A table's start: the genesis of a new match, checked as the verifier will check it, and
the match rebuilt from its log for a table that resumes after a crash."""

from __future__ import annotations

import io
import secrets
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib.metadata import version
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from racing_demon.game.deal import commitment
from racing_demon.game.flow import MatchFlow, RecordKind, Submission
from racing_demon.game.race import Races
from racing_demon.game.rules import Rules
from racing_demon.log.canonical import canonical_bytes
from racing_demon.log.keys import key_id, raw_public_bytes
from racing_demon.log.reader import Limits, Line
from racing_demon.log.records import (
    ENTROPY,
    SEEN_WINDOW,
    TABLE_VERSIONS,
    Genesis,
    Record,
    SeatEntry,
    TournamentTag,
    chain_hash,
    entropy_statement,
    record_body,
)
from racing_demon.log.writer import seal
from racing_demon.table.errors import ResumeError, TableCode, TableError
from racing_demon.table.players import PlayerInfo, PlayerSigner, ask
from racing_demon.verify import Report, Settings, Verdict, verify_log, verify_stream
from racing_demon.verify.report import VerifyCode
from racing_demon.wording import plural


def new_genesis(
    rules: Rules,
    players: Sequence[PlayerInfo],
    table_key: Ed25519PrivateKey,
    dealer_secret: bytes,
    entropy: Sequence[bytes] | None,
    player_signers: Sequence[PlayerSigner] | None,
    game_id: str | None,
    tournament: TournamentTag | None,
) -> tuple[Record, dict[str, Any]]:
    """The genesis record of a new match (``Table.create``'s) and its signatures: each
    keyed seat's co-signature, asked of its signer. TableError, before anything is
    written, for players that mix keys, a signer count or entropy that does not fit them, a
    seat that declines to sign, or a genesis the verifier would refuse."""
    keyed = [player.key is not None for player in players]
    if any(keyed) and not all(keyed):
        raise TableError("either every player signs with a key or none does", TableCode.MIXED_KEYS)
    if all(keyed) != (player_signers is not None and len(player_signers) == len(players)):
        raise TableError(
            "keyed players sign for themselves: one signer per player", TableCode.SIGNER_COUNT
        )
    game = game_id or secrets.token_hex(16)
    promise = commitment(dealer_secret)
    if player_signers is not None:
        if entropy is not None:
            raise TableError(
                "a keyed player's entropy is its signature over the commitment: "
                "the table asks its signer, so pass entropy=None",
                TableCode.ENTROPY_GIVEN,
            )
        entropy = [
            bytes.fromhex(ask(signer, seat, ENTROPY, entropy_statement(game, seat, promise)))
            for seat, signer in enumerate(player_signers)
        ]
    if entropy is None or len(entropy) != len(players):
        raise TableError(
            f"{plural(len(players), 'player')} need {plural(len(players), 'entropy contribution')}",
            TableCode.ENTROPY_COUNT,
        )
    genesis = _genesis(rules, players, table_key, promise, entropy, game, tournament)
    sigs: dict[str, Any] = {}
    if player_signers is not None:
        body = record_body(genesis)
        sigs["players"] = [
            ask(signer, seat, RecordKind.GENESIS.value, body)
            for seat, signer in enumerate(player_signers)
        ]
    check_genesis(genesis, sigs, table_key, dealer_secret)
    return genesis, sigs


def genesis_body(
    rules: Rules,
    players: Sequence[PlayerInfo],
    table_key: Ed25519PrivateKey,
    dealer_secret: bytes,
    entropy: Sequence[bytes],
    game_id: str,
    tournament: TournamentTag | None = None,
) -> bytes:
    """The canonical body bytes of the genesis ``new_genesis`` makes of these arguments
    (``Table.genesis_body``)."""
    genesis = _genesis(
        rules, players, table_key, commitment(dealer_secret), entropy, game_id, tournament
    )
    return canonical_bytes(record_body(genesis))


def _genesis(
    rules: Rules,
    players: Sequence[PlayerInfo],
    table_key: Ed25519PrivateKey,
    promise: str,
    entropy: Sequence[bytes],
    game: str,
    tournament: TournamentTag | None,
) -> Record:
    return Record(
        game=game,
        seq=0,
        t_ms=0,
        prev=None,
        payload=Genesis(
            software=f"racing-demon {version('racing-demon')}",
            rules=rules.to_document(),
            rules_sha256=rules.digest(),
            players=tuple(
                SeatEntry(seat=seat, name=player.name, back=player.back, key=_hex(player.key))
                for seat, player in enumerate(players)
            ),
            table_key=key_id(raw_public_bytes(table_key.public_key())),
            commitment=promise,
            entropy=tuple(contribution.hex() for contribution in entropy),
            tournament=tournament,
        ),
    )


def check_genesis(
    genesis: Record, sigs: dict[str, Any], table_key: Ed25519PrivateKey, dealer_secret: bytes
) -> None:
    """TableError, before the table writes a byte, unless the genesis would pass every
    check that the verifier makes of it (schema, keys, co-signatures, entropy, the reveal,
    rules and seats): the table never writes a log that its own verifier refuses."""
    settings = Settings(table_key=raw_public_bytes(table_key.public_key()), seed=dealer_secret)
    line = seal(genesis, table_key, sigs) + b"\n"
    report = verify_stream(io.BytesIO(line), settings, "the genesis")
    finding = report.finding
    if finding is None or finding.code is not VerifyCode.UNFINISHED:
        assert finding is not None  # a genesis alone cannot be a whole match
        where = "" if finding.seat is None else f"seat {finding.seat}: "
        raise TableError(
            f"the log would not verify: {where}{finding.code}: {finding.message}",
            TableCode.WOULD_NOT_VERIFY,
        )


def _hex(key: bytes | None) -> str | None:
    return None if key is None else key.hex()


@dataclass
class Rebuild:
    """The match rebuilt from its log on verification's pass (a ``PassVisitor``), for a
    table that resumes: read with the verdict, the log is opened once. Once the pass holds,
    ``flow`` is the match after the log's last record, ``last`` that record, ``genesis``
    the match's, ``next_n`` each seat's next ``n``, and ``recent`` the hashes of the last
    lines (as many as a submission may name)."""

    flow: MatchFlow | None = None
    genesis: Genesis | None = None
    last: Record | None = None
    next_n: list[int] = field(default_factory=list)
    recent: deque[str] = field(default_factory=lambda: deque(maxlen=SEEN_WINDOW))
    races: Races = field(default_factory=Races)

    def visit(self, line: Line, record: Record, flow: MatchFlow) -> None:
        payload, line_hash = record.payload, chain_hash(line.raw)
        if isinstance(payload, Genesis):  # the pass replays again from the genesis
            self.genesis, self.next_n = payload, [0] * len(payload.players)
            self.recent.clear()
        elif isinstance(payload, Submission):
            self.next_n[payload.seat] = payload.n + 1
        self.races.follow(record.seq, line_hash, payload, flow.state)
        self.flow, self.last = flow, record
        self.recent.append(line_hash)

    def end(self, report: Report) -> None:
        """Nothing to do: the caller reads the verdict, and what was rebuilt if it holds."""


def rebuild(path: Path, table_key: bytes, dealer_secret: bytes, limits: Limits) -> Rebuild:
    """The match logged at ``path`` rebuilt to its last record, for ``Table.resume``; the
    log must verify as unfinished under the table's key (raw) and dealer secret, every
    record replayed, in a format a table writes (``TABLE_VERSIONS``). ResumeError if not."""
    settings = Settings(table_key=table_key, seed=dealer_secret, limits=limits)
    rebuilt = Rebuild()
    report = verify_log(path, settings, visitors=(rebuilt,))  # the one time it is read
    if report.verdict is Verdict.VERIFIED:
        raise ResumeError(f"{path}: the match is over: nothing to resume")
    finding = report.finding
    assert finding is not None  # any verdict but VERIFIED names what it found
    if finding.code is not VerifyCode.UNFINISHED:
        where = "" if finding.line is None else f"line {finding.line}: "
        raise ResumeError(f"{path}: {report.verdict}: {where}{finding.code}: {finding.message}")
    # Unfinished and every record replayed: the pass rebuilt the match to its last.
    assert rebuilt.last is not None
    if rebuilt.last.v not in TABLE_VERSIONS:
        raise ResumeError(
            f"{path}: a log of format v{rebuilt.last.v}: a table continues logs of format "
            f"v{TABLE_VERSIONS[0]} to v{TABLE_VERSIONS[-1]} (v1 has no seen and no acceptances)"
        )
    return rebuilt
