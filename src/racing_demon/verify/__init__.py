"""The verifier: replay a signed log and say whether it holds (docs/log-format.md §7).

Ten numbered steps in one fail-closed order, each failure a stable code:

1. framing and strict JSON, 2. schema, 3. canonical form, 4. chain, 5. signatures,
6. secret, 7. rules and packs, 8. replay, 9. scores, 10. final record.

Memory does not grow with the log. Pass one streams the file through steps 1-5 and keeps
only the genesis, the final record, one submission counter per seat and a digest of the
bytes read; step 6 needs no more. Steps 7-10 need the dealer secret that only the final
record reveals, so the verifier first reads ahead at the last line: when that guess is the
secret the final record turns out to reveal, pass one replays too, holding back the first
replay failure until steps 1-6 have held for the whole file. Otherwise (a log that changed
or was still being written when read ahead) pass two streams the same open file again
through steps 7-10. Either way the first failure in step order is the answer, and the
report says how many records were not replayed.

``verify_log`` and ``verify_stream`` return a ``Report``; nothing a log holds makes them
raise.
"""

from __future__ import annotations

import enum
import gc
import hashlib
import itertools
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, NoReturn

from racing_demon.files import open_regular
from racing_demon.game.deal import MatchSeed, check_reveal, derive_pack, pack_digest
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
from racing_demon.game.state import EndReason, Phase, State
from racing_demon.log.canonical import canonical_bytes_of_read
from racing_demon.log.keys import key_id
from racing_demon.log.reader import (
    DEFAULT_LIMITS,
    Limits,
    Line,
    ReadCode,
    ReadError,
    iter_raw_lines,
    parse_read_line,
    read_canonical_line,
    read_lines,
)
from racing_demon.log.records import (
    PLAYER_KINDS,
    SUBMISSION,
    RecordKind,
    accepted_kind,
    body_bytes,
    chain_hash,
    submission_of,
)
from racing_demon.log.signing import check_public_key, verify
from racing_demon.profiles import ProfileError, rules_from_document
from racing_demon.schema import record_errors


class Verdict(enum.StrEnum):
    VERIFIED = "verified"
    DOES_NOT_VERIFY = "does_not_verify"
    UNFINISHED = "unfinished"  # a prefix of a log, without its final record: a crash, say
    UNREADABLE = "unreadable"  # the file could not be opened or read at all
    UNPINNED = "unpinned"  # everything held but the table's signatures, with no key to check


class Step(enum.IntEnum):
    FRAMING = 1
    SCHEMA = 2
    CANONICAL = 3
    CHAIN = 4
    SIGNATURES = 5
    SECRET = 6
    PACKS = 7
    REPLAY = 8
    SCORES = 9
    FINAL = 10

    @property
    def title(self) -> str:
        return _STEP_TITLES[self]


_STEP_TITLES = {
    Step.FRAMING: "framing and strict JSON",
    Step.SCHEMA: "schema",
    Step.CANONICAL: "canonical form",
    Step.CHAIN: "chain",
    Step.SIGNATURES: "signatures",
    Step.SECRET: "secret",
    Step.PACKS: "rules and packs",
    Step.REPLAY: "replay",
    Step.SCORES: "scores",
    Step.FINAL: "final record",
}


class Code(enum.StrEnum):
    """The verifier's reason codes; steps 1 and 3 report the reader's ``ReadCode``."""

    UNREADABLE = "UNREADABLE"
    SCHEMA = "SCHEMA"
    # (4) chain
    GENESIS_MISSING = "GENESIS_MISSING"
    GENESIS_REPEATED = "GENESIS_REPEATED"
    SEQ_MISMATCH = "SEQ_MISMATCH"
    PREV_MISMATCH = "PREV_MISMATCH"
    GAME_ID_MISMATCH = "GAME_ID_MISMATCH"
    WRONG_GAME = "WRONG_GAME"
    TIME_BACKWARDS = "TIME_BACKWARDS"
    AFTER_FINAL = "AFTER_FINAL"
    UNFINISHED = "UNFINISHED"
    RECORD_COUNT = "RECORD_COUNT"
    FILE_CHANGED = "FILE_CHANGED"
    # (5) signatures
    WRONG_TABLE_KEY = "WRONG_TABLE_KEY"
    BAD_TABLE_SIGNATURE = "BAD_TABLE_SIGNATURE"
    WEAK_PLAYER_KEY = "WEAK_PLAYER_KEY"
    DUPLICATE_PLAYER_KEY = "DUPLICATE_PLAYER_KEY"
    MIXED_PLAYER_KEYS = "MIXED_PLAYER_KEYS"
    BAD_GENESIS_COSIGNATURE = "BAD_GENESIS_COSIGNATURE"
    BAD_PLAYER_SIGNATURE = "BAD_PLAYER_SIGNATURE"
    MISSING_PLAYER_SIGNATURE = "MISSING_PLAYER_SIGNATURE"
    UNEXPECTED_SIGNATURE = "UNEXPECTED_SIGNATURE"
    SUBMISSION_GAP = "SUBMISSION_GAP"
    # (6) secret
    SECRET_MISMATCH = "SECRET_MISMATCH"
    SEED_MISMATCH = "SEED_MISMATCH"
    # (7) rules and packs
    BAD_RULES = "BAD_RULES"
    RULES_MISMATCH = "RULES_MISMATCH"
    BAD_SEATS = "BAD_SEATS"
    PACK_MISMATCH = "PACK_MISMATCH"
    # (8) replay
    HAND_OUT_OF_ORDER = "HAND_OUT_OF_ORDER"
    BAD_MOVE_TEXT = "BAD_MOVE_TEXT"
    PLAYER_MISMATCH = "PLAYER_MISMATCH"
    ILLEGAL_MOVE = "ILLEGAL_MOVE"
    KIND_MISMATCH = "KIND_MISMATCH"
    WRONGLY_BOUNCED = "WRONGLY_BOUNCED"
    BOUNCE_REASON_MISMATCH = "BOUNCE_REASON_MISMATCH"
    UNJUSTIFIED_STALL = "UNJUSTIFIED_STALL"
    MISSING_STALL = "MISSING_STALL"
    UNJUSTIFIED_HAND_END = "UNJUSTIFIED_HAND_END"
    # (9) scores
    SCORE_MISMATCH = "SCORE_MISMATCH"
    WINNERS_MISMATCH = "WINNERS_MISMATCH"
    # (10) final record
    HAND_NOT_ENDED = "HAND_NOT_ENDED"
    MATCH_NOT_OVER = "MATCH_NOT_OVER"
    FINAL_MISMATCH = "FINAL_MISMATCH"


@dataclass(frozen=True, slots=True)
class Finding:
    """The first check that failed, and where."""

    code: Code | ReadCode
    message: str
    line: int | None = None  # 1-based
    seq: int | None = None
    player: int | None = None
    move: str | None = None
    rule: str | None = None  # the engine's Violation code, or the SignatureCode
    expected: str | None = None
    found: str | None = None


@dataclass(frozen=True, slots=True)
class Report:
    """What verifying one log found; ``exit_code`` is the command line's contract."""

    source: str
    verdict: Verdict
    step: Step | None = None  # the failing step
    finding: Finding | None = None
    records: int | None = None  # lines in the file; None when a limit stopped the count
    not_replayed: int | None = None
    fast: bool = False
    pinned: bool = True  # whether a table key was given, so table signatures could count
    unsafe_unpinned: bool = False
    game: str | None = None
    profile: str | None = None
    # Set only when the whole match replayed and scored as its final record says:
    hands: tuple[tuple[int, ...], ...] = ()
    totals: tuple[int, ...] = ()
    winners: tuple[int, ...] = ()
    final_reason: str | None = None

    @property
    def exit_code(self) -> int:
        if self.verdict is Verdict.VERIFIED:
            return 0
        if self.verdict is Verdict.UNPINNED:
            return 0 if self.unsafe_unpinned else 1
        return 2 if self.verdict is Verdict.UNREADABLE else 1


@dataclass(frozen=True, slots=True)
class Settings:
    """How to verify. ``table_key`` is the pinned table's raw 32-byte public key.

    ``fast`` checks the table's signatures on the genesis and the final record only (the
    chain binds every other line to the final one) and no player signature on a record.
    Without ``table_key`` the verdict is at best UNPINNED, which ``unsafe_unpinned``
    accepts: nothing then proves that the table wrote the log.
    """

    table_key: bytes | None = None
    fast: bool = False
    seed: bytes | None = None  # the dealer secret, when known from elsewhere
    game_id: str | None = None
    unsafe_unpinned: bool = False
    limits: Limits = DEFAULT_LIMITS

    def __post_init__(self) -> None:
        if self.table_key is None:
            return
        if self.unsafe_unpinned:
            raise ValueError("a pinned table key and unsafe_unpinned contradict each other")
        problem = check_public_key(self.table_key)
        if problem is not None:
            raise ValueError(f"table key: {problem}")


def verify_log(path: Path, settings: Settings) -> Report:
    """Verify the log at ``path``: UNREADABLE if it cannot be opened or read."""
    try:
        # Two passes need the same bytes twice, which a pipe or a device cannot give, and
        # opening a pipe would wait for a writer.
        with open_regular(path) as stream:
            return verify_stream(stream, settings, str(path))
    except OSError as error:
        return _unreadable(str(path), settings, error.strerror or str(error))


def verify_stream(stream: BinaryIO, settings: Settings, source: str = "<stream>") -> Report:
    """Verify the log in seekable binary ``stream``, read twice from its start."""
    try:
        if not stream.seekable():
            return _unreadable(source, settings, "the stream cannot be read twice")
        return _Verification(settings, source).run(stream)
    except OSError as error:
        return _unreadable(source, settings, error.strerror or str(error))


def _unreadable(source: str, settings: Settings, why: str) -> Report:
    return Report(
        source,
        Verdict.UNREADABLE,
        finding=Finding(Code.UNREADABLE, f"cannot read {source}: {why}"),
        fast=settings.fast,
        pinned=settings.table_key is not None,
        unsafe_unpinned=settings.unsafe_unpinned,
    )


class _Failed(Exception):
    def __init__(self, step: Step, finding: Finding) -> None:
        super().__init__(step, finding)
        self.step = step
        self.finding = finding


# Codes for a file beyond the reader's limits: the rest is never read, not even to count it.
_LIMIT_CODES = frozenset(
    {ReadCode.FILE_TOO_LARGE, ReadCode.TOO_MANY_RECORDS, ReadCode.LINE_TOO_LONG}
)
_COUNT_CHUNK = 64 * 1024
_RECORD_KINDS = {kind.value: kind for kind in RecordKind}  # RecordKind(...) costs ten times more
# CPython keeps freed tuples, lists and dicts on free lists that only a full collection
# empties, and over a long log they fill up to a few MB: the resident peak crept with the
# log's length (bench/memory_bench.py). A full collection every so many records keeps it
# flat for about 1 us per record.
_TRIM_EVERY = 8192


@dataclass
class _Replay:
    """Pass two's position: the hand in play and the match so far."""

    rules: Rules
    seed: MatchSeed
    match: Match
    state: State | None = None  # the current or last hand; None before the first
    hand_open: bool = False  # between a hand_start and its hand_end
    stall_due: StallOutcome | None = None  # what the next record must be, if a stall is due


@dataclass
class _Verification:
    """One log's verification: the passes, and what they keep between lines."""

    settings: Settings
    source: str
    # What pass one keeps: bounded whatever the length of the log.
    genesis: Line | None = None
    player_keys: tuple[bytes | None, ...] = ()
    final: Line | None = None
    lines: int = 0  # complete lines read
    records: int | None = 0
    torn: ReadError | None = None
    digest: bytes = b""
    previous_hash: str = ""
    last_t_ms: int = 0
    submissions: dict[int, int] = field(default_factory=dict)
    # Pass one replays too when it knows the secret ahead (steps 7-10 as it goes); their
    # first failure waits until steps 1-6 have held for the whole file.
    replay: _Replay | None = None
    replay_failed: _Failed | None = None
    replayed: int = 0
    # The line being checked, for findings; ``body`` only once its schema holds.
    current: Line | None = None
    body: Mapping[str, Any] | None = None

    def run(self, stream: BinaryIO) -> Report:
        try:
            secret = self.settings.seed
            if secret is None:
                secret = self._read_ahead_secret(stream)
            self._first_pass(stream, secret)
            if self.final is None:
                if self.genesis is not None and self.settings.seed is not None:
                    self._check_seed_opens()
                    self._replayed_in_pass_one()  # the prefix replays, so far as it goes
                return self._report(Verdict.UNFINISHED, self._unfinished(), self._where_cut())
            self._check_secret()
            if secret == bytes.fromhex(self.final.value["body"]["secret"]):
                self._replayed_in_pass_one()
            else:
                self._second_pass(stream)
        except _Failed as failed:
            if failed.step <= Step.SECRET:
                self.replayed = 0  # a replay counts only once steps 1-6 hold
            return self._report(Verdict.DOES_NOT_VERIFY, failed.finding, failed.step)
        if self.settings.table_key is None:
            return self._report(Verdict.UNPINNED)
        return self._report(Verdict.VERIFIED)

    # -- findings and reports -------------------------------------------------------

    def _fail(
        self,
        step: Step,
        code: Code,
        message: str,
        *,
        line: Line | None = None,
        player: int | None = None,
        rule: str | None = None,
        expected: object = None,
        found: object = None,
    ) -> NoReturn:
        line = line or self.current
        body = self.body if line is self.current else _body_of(line)
        seq = move = None
        if body is not None:
            seq = body["seq"]
            if body["kind"] in PLAYER_KINDS:
                player, move = body["player"], body["move"]
        raise _Failed(
            step,
            Finding(
                code,
                message,
                line=None if line is None else line.number,
                seq=seq,
                player=player,
                move=move,
                rule=None if rule is None else str(rule),
                expected=None if expected is None else str(expected),
                found=None if found is None else str(found),
            ),
        )

    def _unfinished(self) -> Finding:
        if self.torn is not None:
            return Finding(ReadCode.TORN_LINE, self.torn.message, line=self.torn.line)
        if self.lines == 0:
            return Finding(Code.UNFINISHED, "the file is empty: no genesis, no final record")
        return Finding(Code.UNFINISHED, f"no final record after line {self.lines}")

    def _where_cut(self) -> Step:
        return Step.FRAMING if self.torn is not None else Step.CHAIN

    def _report(
        self, verdict: Verdict, finding: Finding | None = None, step: Step | None = None
    ) -> Report:
        genesis = _body_of(self.genesis)
        final = _body_of(self.final) if finding is None else None
        return Report(
            self.source,
            verdict,
            step=step,
            finding=finding,
            records=self.records,
            not_replayed=None if self.records is None else self.records - self.replayed,
            fast=self.settings.fast,
            pinned=self.settings.table_key is not None,
            unsafe_unpinned=self.settings.unsafe_unpinned,
            game=None if genesis is None else genesis["game"],
            profile=None if genesis is None else _profile_name(genesis["rules"]),
            hands=() if final is None else tuple(tuple(hand) for hand in final["hands"]),
            totals=() if final is None else tuple(final["totals"]),
            winners=() if final is None else tuple(final["winners"]),
            final_reason=None if final is None else final["reason"],
        )

    # -- pass one: steps 1-5 --------------------------------------------------------

    def _first_pass(self, stream: BinaryIO, secret: bytes | None) -> None:
        digest = hashlib.sha256()
        try:
            for line in read_lines(stream, self.settings.limits):  # (1) and (3)
                self.lines = self.records = line.number
                digest.update(line.raw + b"\n")
                self._check_schema(line)
                self._check_chain(line)
                self._check_signatures(line)
                self.previous_hash = chain_hash(line.raw)
                self.last_t_ms = line.value["body"]["t_ms"]
                if secret is not None and self.replay_failed is None:
                    self._replay_ahead(line, secret)
                if line.number % _TRIM_EVERY == 0:
                    gc.collect()
        except ReadError as error:
            if error.code is ReadCode.TORN_LINE and self.final is None:
                # What a crash mid-write leaves: the complete lines before it are a prefix.
                self.torn = error
                self.records = error.line
            else:
                self.records = self._count_rest(stream, error.line or self.lines + 1, error)
                step = Step.CANONICAL if error.code is ReadCode.NOT_CANONICAL else Step.FRAMING
                raise _Failed(step, Finding(error.code, error.message, line=error.line)) from None
        except _Failed:
            self.records = self._count_rest(stream, self.lines, None)
            raise
        self.digest = digest.digest()

    def _read_ahead_secret(self, stream: BinaryIO) -> bytes | None:
        """The secret the last line reveals, read before pass one so that it can replay.

        Only a guess: pass one checks that line like every other, and unless the final
        record it finds reveals this very secret, a second pass replays the log.
        """
        limits = self.settings.limits
        end = stream.seek(0, os.SEEK_END)
        start = max(0, end - limits.max_line_bytes - 2)
        stream.seek(start)
        tail = stream.read(end - start)
        stream.seek(0)
        _, newline, last = tail.removesuffix(b"\n").rpartition(b"\n")
        if not tail.endswith(b"\n") or (start > 0 and not newline):
            return None
        try:
            value = read_canonical_line(0, last, limits).value
        except ReadError:
            return None
        if record_errors(value) or value["body"]["kind"] != RecordKind.FINAL:
            return None
        return bytes.fromhex(value["body"]["secret"])

    def _replay_ahead(self, line: Line, secret: bytes) -> None:
        try:
            if self.replay is None:
                self.replay = self._load_rules(secret)
            self.current, self.body = line, line.value["body"]
            self._replay(self.replay, line.value["body"])
            self.replayed = line.number
        except _Failed as failed:
            self.replay_failed = failed

    def _replayed_in_pass_one(self) -> None:
        """Steps 1-6 held: what pass one's replay found is the verdict."""
        if self.replay_failed is not None:
            raise self.replay_failed

    def _count_rest(self, stream: BinaryIO, counted: int, error: ReadError | None) -> int | None:
        """``counted`` lines plus those after the stream's position, within the limits."""
        limits = self.settings.limits
        if error is not None and error.code in _LIMIT_CODES:
            return None  # counting would read what the limit refused to read
        size = stream.tell()
        open_tail = False
        while chunk := stream.read(_COUNT_CHUNK):
            size += len(chunk)
            if size > limits.max_file_bytes:
                return None
            counted += chunk.count(b"\n")
            open_tail = not chunk.endswith(b"\n")
        counted += open_tail
        return counted if counted <= limits.max_records else None

    def _check_schema(self, line: Line) -> None:  # (2)
        self.current, self.body = line, None
        problems = record_errors(line.value)
        if problems:
            more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
            self._fail(Step.SCHEMA, Code.SCHEMA, problems[0] + more)
        self.body = line.value["body"]

    def _check_chain(self, line: Line) -> None:  # (4)
        body = line.value["body"]
        index = line.number - 1
        if self.final is not None:
            self._fail(
                Step.CHAIN,
                Code.AFTER_FINAL,
                f"a record after the final record on line {self.final.number}",
            )
        if index == 0:
            if body["kind"] != RecordKind.GENESIS:
                self._fail(
                    Step.CHAIN,
                    Code.GENESIS_MISSING,
                    "the first record is not the genesis",
                    expected=RecordKind.GENESIS,
                    found=body["kind"],
                )
            wanted = self.settings.game_id
            if wanted is not None and body["game"] != wanted:
                self._fail(
                    Step.CHAIN,
                    Code.WRONG_GAME,
                    "this log is of another game",
                    expected=wanted,
                    found=body["game"],
                )
            self.genesis = line
            return
        assert self.genesis is not None  # else line 1 failed
        genesis = self.genesis.value["body"]
        if body["kind"] == RecordKind.GENESIS:
            self._fail(Step.CHAIN, Code.GENESIS_REPEATED, "a second genesis record")
        if body["seq"] != index:
            self._fail(
                Step.CHAIN,
                Code.SEQ_MISMATCH,
                "seq is not the line's index: a record removed, repeated or moved",
                expected=index,
                found=body["seq"],
            )
        if body["prev"] != self.previous_hash:
            self._fail(
                Step.CHAIN,
                Code.PREV_MISMATCH,
                "prev is not the hash of the previous line",
                expected=self.previous_hash,
                found=body["prev"],
            )
        if body["game"] != genesis["game"]:
            self._fail(
                Step.CHAIN,
                Code.GAME_ID_MISMATCH,
                "a record of another game",
                expected=genesis["game"],
                found=body["game"],
            )
        if body["t_ms"] < self.last_t_ms:
            self._fail(
                Step.CHAIN,
                Code.TIME_BACKWARDS,
                "time runs backwards",
                expected=f">= {self.last_t_ms} ms",
                found=f"{body['t_ms']} ms",
            )
        if body["kind"] == RecordKind.FINAL:
            if body["records"] != body["seq"]:
                self._fail(
                    Step.CHAIN,
                    Code.RECORD_COUNT,
                    "the final record miscounts the records before it",
                    expected=body["seq"],
                    found=body["records"],
                )
            self.final = line

    def _check_signatures(self, line: Line) -> None:  # (5)
        body, sigs = line.value["body"], line.value["sigs"]
        kind = body["kind"]
        if kind == RecordKind.GENESIS:
            self._check_table_key(body)
        table_key = self.settings.table_key
        checked = not self.settings.fast or kind in (RecordKind.GENESIS, RecordKind.FINAL)
        if table_key is not None and checked:
            problem = verify(table_key, kind, body_bytes(line.raw), sigs["table"])
            if problem is not None:
                self._fail(
                    Step.SIGNATURES,
                    Code.BAD_TABLE_SIGNATURE,
                    f"the table's signature: {problem.message}",
                    rule=problem.code,
                )
        if kind == RecordKind.GENESIS:
            self._check_player_keys(body, body_bytes(line.raw), sigs)
        elif "players" in sigs:
            self._fail(
                Step.SIGNATURES,
                Code.UNEXPECTED_SIGNATURE,
                "players co-sign the genesis only",
            )
        if kind in PLAYER_KINDS:
            self._check_submission(body, sigs)
        elif "player" in sigs:
            self._fail(
                Step.SIGNATURES,
                Code.UNEXPECTED_SIGNATURE,
                f"a player's signature on a {kind} record, which no player submits",
            )

    def _check_table_key(self, genesis: Mapping[str, Any]) -> None:
        if self.settings.table_key is None:
            return
        pinned = key_id(self.settings.table_key)
        if genesis["table_key"] != pinned:
            self._fail(
                Step.SIGNATURES,
                Code.WRONG_TABLE_KEY,
                "the log names another table key than the one pinned",
                expected=pinned,
                found=genesis["table_key"],
            )

    def _check_player_keys(
        self, genesis: Mapping[str, Any], message: bytes, sigs: Mapping[str, Any]
    ) -> None:
        keys = tuple(
            None if player["key"] is None else bytes.fromhex(player["key"])
            for player in genesis["players"]
        )
        listed = [key for key in keys if key is not None]
        if listed and len(listed) != len(keys):
            self._fail(
                Step.SIGNATURES,
                Code.MIXED_PLAYER_KEYS,
                "either every player lists a key or none does",
                expected=f"{len(keys)} keys",
                found=f"{len(listed)} keys",
            )
        for seat, key in enumerate(keys):
            problem = None if key is None else check_public_key(key)
            if problem is not None:
                self._fail(
                    Step.SIGNATURES,
                    Code.WEAK_PLAYER_KEY,
                    f"seat {seat}'s key: {problem.message}",
                    player=seat,
                    rule=problem.code,
                )
        ids = [key_id(key) for key in listed]
        for seat, this in enumerate(ids):
            if this == genesis["table_key"] or this in ids[:seat]:
                self._fail(
                    Step.SIGNATURES,
                    Code.DUPLICATE_PLAYER_KEY,
                    f"seat {seat}'s key is also the table's or another seat's",
                    player=seat,
                )
        self.player_keys = keys
        cosigned = sigs.get("players")
        if not listed:
            if cosigned is not None:
                self._fail(
                    Step.SIGNATURES,
                    Code.UNEXPECTED_SIGNATURE,
                    "genesis co-signatures, but no player lists a key",
                )
            return
        if cosigned is None or len(cosigned) != len(keys):
            self._fail(
                Step.SIGNATURES,
                Code.BAD_GENESIS_COSIGNATURE,
                "every keyed player co-signs the genesis",
                expected=f"{len(keys)} signatures",
                found=f"{0 if cosigned is None else len(cosigned)} signatures",
            )
        for seat, (key, signature) in enumerate(zip(listed, cosigned, strict=True)):
            problem = verify(key, RecordKind.GENESIS, message, signature)
            if problem is not None:
                self._fail(
                    Step.SIGNATURES,
                    Code.BAD_GENESIS_COSIGNATURE,
                    f"seat {seat}'s co-signature: {problem.message}",
                    player=seat,
                    rule=problem.code,
                )

    def _check_submission(self, body: Mapping[str, Any], sigs: Mapping[str, Any]) -> None:
        player = body["player"]
        # A seat the genesis does not list has no key; the replay refuses the record.
        key = self.player_keys[player] if player < len(self.player_keys) else None
        signature = sigs.get("player")
        if key is None:
            if signature is not None:
                self._fail(
                    Step.SIGNATURES,
                    Code.UNEXPECTED_SIGNATURE,
                    f"seat {player} lists no key, so its moves carry no signature",
                )
        elif signature is None:
            self._fail(
                Step.SIGNATURES,
                Code.MISSING_PLAYER_SIGNATURE,
                f"seat {player} lists a key: its submission must carry its signature",
            )
        elif not self.settings.fast:
            statement = canonical_bytes_of_read(submission_of(body))
            problem = verify(key, SUBMISSION, statement, signature)
            if problem is not None:
                self._fail(
                    Step.SIGNATURES,
                    Code.BAD_PLAYER_SIGNATURE,
                    f"seat {player}'s signature: {problem.message}",
                    rule=problem.code,
                )
        expected = self.submissions.get(player, 0)
        if body["n"] != expected:
            self._fail(
                Step.SIGNATURES,
                Code.SUBMISSION_GAP,
                f"seat {player}'s submissions must be numbered without gaps",
                expected=expected,
                found=body["n"],
            )
        self.submissions[player] = expected + 1

    # -- step 6 ---------------------------------------------------------------------

    def _check_secret(self) -> None:
        assert self.genesis is not None and self.final is not None
        self.current, self.body = self.final, _body_of(self.final)
        revealed = self.final.value["body"]["secret"]
        if not check_reveal(bytes.fromhex(revealed), self.genesis.value["body"]["commitment"]):
            self._fail(
                Step.SECRET,
                Code.SECRET_MISMATCH,
                "the revealed secret does not open the genesis commitment",
            )
        seed = self.settings.seed
        if seed is not None and seed.hex() != revealed:
            self._fail(
                Step.SECRET,
                Code.SEED_MISMATCH,
                "the revealed secret is not the one given",
                expected=seed.hex(),
                found=revealed,
            )

    def _check_seed_opens(self) -> None:
        """For an unfinished log: the secret given stands in for the missing reveal."""
        assert self.genesis is not None and self.settings.seed is not None
        self.current, self.body = self.genesis, _body_of(self.genesis)
        if not check_reveal(self.settings.seed, self.genesis.value["body"]["commitment"]):
            self._fail(
                Step.SECRET,
                Code.SEED_MISMATCH,
                "the secret given does not open the genesis commitment",
            )

    # -- pass two: steps 7-10 -------------------------------------------------------

    def _second_pass(self, stream: BinaryIO) -> None:
        assert self.final is not None
        self.replayed = 0
        replay = self._load_rules(bytes.fromhex(self.final.value["body"]["secret"]))
        stream.seek(0)
        digest = hashlib.sha256()
        limits = self.settings.limits
        try:
            # Only the lines pass one checked: a log still being written grows meanwhile.
            # They were canonical then; if a byte changed since, the digest says so.
            for number, raw in itertools.islice(iter_raw_lines(stream, limits), self.lines):
                digest.update(raw + b"\n")
                line = Line(number, raw, parse_read_line(number, raw, limits))
                self.current, self.body = line, line.value["body"]
                self._replay(replay, line.value["body"])
                self.replayed = line.number
                if number % _TRIM_EVERY == 0:
                    gc.collect()
        except ReadError:
            self._changed()
        except _Failed:
            # A verdict on bytes that pass one did not check would name the wrong record.
            if not self._same_lines(stream):
                self._changed()
            raise
        except (LookupError, TypeError, ValueError):
            # Pass one proved every line well formed, so either the file changed since, or
            # this is a bug, which must not be reported as a verdict.
            if self._same_lines(stream):
                raise
            self._changed()
        if digest.digest() != self.digest:
            self._changed()

    def _same_lines(self, stream: BinaryIO) -> bool:
        stream.seek(0)
        digest = hashlib.sha256()
        try:
            for _, raw in itertools.islice(
                iter_raw_lines(stream, self.settings.limits), self.lines
            ):
                digest.update(raw + b"\n")
        except ReadError:
            return False
        return digest.digest() == self.digest

    def _changed(self) -> NoReturn:
        raise _Failed(
            Step.CHAIN,
            Finding(Code.FILE_CHANGED, "the file changed between the two passes of verification"),
        )

    def _load_rules(self, secret: bytes) -> _Replay:  # (7), the rules
        assert self.genesis is not None
        genesis = self.genesis.value["body"]
        self.current, self.body = self.genesis, genesis
        try:
            rules = rules_from_document(genesis["rules"])
        except ProfileError as error:
            self._fail(Step.PACKS, Code.BAD_RULES, str(error))
        if rules.digest() != genesis["rules_sha256"]:
            self._fail(
                Step.PACKS,
                Code.RULES_MISMATCH,
                "rules_sha256 is not the digest of the rules",
                expected=rules.digest(),
                found=genesis["rules_sha256"],
            )
        players, entropy = genesis["players"], genesis["entropy"]
        if not rules.min_players <= len(players) <= rules.max_players:
            self._fail(
                Step.PACKS,
                Code.BAD_SEATS,
                f"profile {rules.name!r} seats {rules.min_players} to {rules.max_players}",
                expected=f"{rules.min_players}-{rules.max_players} players",
                found=f"{len(players)} players",
            )
        seats = [player["seat"] for player in players]
        if seats != list(range(len(players))):
            self._fail(
                Step.PACKS,
                Code.BAD_SEATS,
                "players are listed by seat, from 0",
                expected=_listed(range(len(players))),
                found=_listed(seats),
            )
        if len(entropy) != len(players):
            self._fail(
                Step.PACKS,
                Code.BAD_SEATS,
                "one entropy contribution per seat",
                expected=len(players),
                found=len(entropy),
            )
        seed = MatchSeed.from_secret(secret, [bytes.fromhex(part) for part in entropy])
        return _Replay(rules, seed, Match(rules, len(players)))

    def _replay(self, replay: _Replay, body: Mapping[str, Any]) -> None:  # (8)
        kind = _RECORD_KINDS[body["kind"]]  # the schema admits only these
        if kind is RecordKind.GENESIS:
            return
        self._check_due_stall(replay, kind, body)
        if kind is RecordKind.HAND_START:
            self._start_hand(replay, body)
            self._note_due_stall(replay)
            return
        if kind is RecordKind.FINAL:
            self._check_final(replay.match, body, replay.hand_open)
            return
        if replay.state is None or not replay.hand_open:
            self._fail(Step.REPLAY, Code.HAND_OUT_OF_ORDER, f"a {kind} record outside a hand")
        if body["hand"] != replay.state.hand:
            self._fail(
                Step.REPLAY,
                Code.HAND_OUT_OF_ORDER,
                f"a {kind} record of another hand",
                expected=replay.state.hand,
                found=body["hand"],
            )
        state = advance_clock(replay.state, body["t_ms"])
        if kind is RecordKind.STALL:
            replay.state = self._stall(state)
        elif kind is RecordKind.HAND_END:
            self._end_hand(replay, state, body)
            replay.stall_due = None
            return
        else:
            replay.state = self._move(state, kind, body)
        self._note_due_stall(replay)

    def _note_due_stall(self, replay: _Replay) -> None:
        """A table records a due stall at once (docs/log-format.md §6): remember it."""
        state = replay.state
        due = state is not None and state.phase is Phase.PLAYING and check_stall(state) is None
        replay.stall_due = stall_outcome(state) if due and state is not None else None

    def _check_due_stall(self, replay: _Replay, kind: RecordKind, body: Mapping[str, Any]) -> None:
        due = replay.stall_due
        blocked_end = kind is RecordKind.HAND_END and body.get("reason") == EndReason.BLOCKED
        # A stall or a blocked end is judged on its own (UNJUSTIFIED_STALL or
        # UNJUSTIFIED_HAND_END when it is not the one due); anything else skipped it.
        if due is not None and kind is not RecordKind.STALL and not blocked_end:
            expected = "stall" if due is StallOutcome.SHIFT else "hand_end (blocked)"
            self._fail(
                Step.REPLAY,
                Code.MISSING_STALL,
                f"a stall was due after the previous record, but the log goes on with a {kind}",
                expected=expected,
                found=str(kind),
            )

    def _start_hand(self, replay: _Replay, body: Mapping[str, Any]) -> None:
        hand, match = body["hand"], replay.match
        if replay.hand_open or match.over or hand != match.played + 1:
            why = (
                f"hand {match.played} has not ended"
                if replay.hand_open
                else f"the match was over after hand {match.played}"
                if match.over
                else "hands are numbered 1, 2, ..."
            )
            self._fail(
                Step.REPLAY,
                Code.HAND_OUT_OF_ORDER,
                f"hand {hand} cannot start: {why}",
                expected=None if match.over or replay.hand_open else match.played + 1,
                found=hand,
            )
        digests = body["packs"]
        if len(digests) != match.players:
            self._fail(
                Step.PACKS,
                Code.PACK_MISMATCH,
                f"hand {hand}: one pack digest per seat",
                expected=match.players,
                found=len(digests),
            )
        packs = []
        for seat, recorded in enumerate(digests):
            pack = derive_pack(replay.seed, hand, seat)
            derived = pack_digest(hand, seat, pack)
            if derived != recorded:
                self._fail(
                    Step.PACKS,
                    Code.PACK_MISMATCH,
                    f"hand {hand}, seat {seat}: the pack is not the one the seed deals",
                    player=seat,
                    expected=derived,
                    found=recorded,
                )
            packs.append(pack)
        replay.state = State.deal(replay.rules, packs, hand, body["t_ms"])
        replay.hand_open = True

    def _move(self, state: State, kind: RecordKind, body: Mapping[str, Any]) -> State:
        try:
            move = Move.parse(body["move"])
        except ValueError as error:
            self._fail(Step.REPLAY, Code.BAD_MOVE_TEXT, str(error))
        if move.player != body["player"]:
            self._fail(
                Step.REPLAY,
                Code.PLAYER_MISMATCH,
                "the move is not the record's player's",
                expected=body["player"],
                found=move.player,
            )
        if move.player >= state.players:
            self._fail(
                Step.REPLAY,
                Code.PLAYER_MISMATCH,
                f"there is no seat {move.player}: the table submits only its seats' moves",
                expected=f"a seat below {state.players}",
                found=move.player,
            )
        violation = check_move(state, move)
        if kind is RecordKind.BOUNCE:
            if violation is None:
                self._fail(Step.REPLAY, Code.WRONGLY_BOUNCED, "the table refused a legal move")
            if violation.code != body["reason"]:
                self._fail(
                    Step.REPLAY,
                    Code.BOUNCE_REASON_MISMATCH,
                    "the move was refused for another reason: "
                    + violation.message.removeprefix(f"{move}: "),
                    rule=violation.code,
                    expected=violation.code,
                    found=body["reason"],
                )
            return state
        if violation is not None:
            self._fail(
                Step.REPLAY,
                Code.ILLEGAL_MOVE,
                violation.message.removeprefix(f"{move}: "),  # the finding names the move
                rule=violation.code,
                expected=violation.expected,
                found=violation.found,
            )
        wanted = accepted_kind(move, is_tie(state, move))
        if kind is not wanted:
            self._fail(
                Step.REPLAY,
                Code.KIND_MISMATCH,
                "an accepted move recorded as another kind",
                expected=wanted,
                found=kind,
            )
        return apply_move(state, move)

    def _stall(self, state: State) -> State:
        violation = check_stall(state)
        if violation is not None:
            self._fail(Step.REPLAY, Code.UNJUSTIFIED_STALL, violation.message, rule=violation.code)
        if stall_outcome(state) is StallOutcome.BLOCKED:
            self._fail(
                Step.REPLAY,
                Code.UNJUSTIFIED_STALL,
                "the stall cycle is complete: the hand is blocked, which a hand_end records",
                expected=RecordKind.HAND_END,
                found=RecordKind.STALL,
            )
        return apply_stall(state)

    def _end_hand(self, replay: _Replay, state: State, body: Mapping[str, Any]) -> None:
        reason = body["reason"]
        if reason == EndReason.BLOCKED and state.phase is not Phase.ENDED:
            # A blocked end replaces the stall that found the cycle complete.
            violation = check_stall(state)
            if violation is not None:
                self._fail(
                    Step.REPLAY,
                    Code.UNJUSTIFIED_HAND_END,
                    violation.message,
                    rule=violation.code,
                    expected="no stall due",
                    found=reason,
                )
            if stall_outcome(state) is not StallOutcome.BLOCKED:
                self._fail(
                    Step.REPLAY,
                    Code.UNJUSTIFIED_HAND_END,
                    "a stall shift was due, not the blocked end: the cycle is not complete",
                    expected=RecordKind.STALL,
                    found=reason,
                )
            state = apply_stall(state)
        if state.phase is not Phase.ENDED or state.end_reason != reason:
            self._fail(
                Step.REPLAY,
                Code.UNJUSTIFIED_HAND_END,
                "the hand did not end, or not for that reason",
                expected=state.end_reason or f"the hand still {state.phase}",
                found=reason,
            )
        scored = score_hand(state)  # (9)
        if list(scored.scores) != body["scores"]:
            self._fail(
                Step.SCORES,
                Code.SCORE_MISMATCH,
                f"hand {state.hand} does not score as recorded",
                expected=_listed(scored.scores),
                found=_listed(body["scores"]),
            )
        replay.state = state
        # The cards behind each hand's score would make memory grow with the log.
        replay.match = replay.match.record(scored.without_cards())
        replay.hand_open = False

    def _check_final(self, match: Match, body: Mapping[str, Any], hand_open: bool) -> None:
        if hand_open:  # (10)
            self._fail(
                Step.FINAL,
                Code.HAND_NOT_ENDED,
                f"hand {match.played + 1} has no hand_end before the final record",
            )
        if not match.over:
            self._fail(
                Step.FINAL,
                Code.MATCH_NOT_OVER,
                "the profile's match rule does not end the match here",
                expected="another hand",
                found=RecordKind.FINAL,
            )
        hands = [list(hand.scores) for hand in match.hands]  # (9)
        if body["hands"] != hands:
            self._fail(
                Step.SCORES,
                Code.SCORE_MISMATCH,
                "the final record's hand scores are not the hands'",
                expected=" / ".join(map(_listed, hands)),
                found=" / ".join(map(_listed, body["hands"])),
            )
        if body["totals"] != list(match.totals):
            self._fail(
                Step.SCORES,
                Code.SCORE_MISMATCH,
                "the final record's totals are not the sums of the hands",
                expected=_listed(match.totals),
                found=_listed(body["totals"]),
            )
        if body["winners"] != list(match.winners):
            self._fail(
                Step.SCORES,
                Code.WINNERS_MISMATCH,
                "the final record names other winners than the match rule",
                expected=_listed(match.winners) or "none",
                found=_listed(body["winners"]) or "none",
            )
        reason = "complete"  # (10)
        if match.abandoned:
            reason = "abandoned"
        elif match.resigned is not None:
            reason = "resigned"
        if body["reason"] != reason:
            self._fail(
                Step.FINAL,
                Code.FINAL_MISMATCH,
                "the final record gives another reason than the last hand's end",
                expected=reason,
                found=body["reason"],
            )


def _body_of(line: Line | None) -> Mapping[str, Any] | None:
    return None if line is None else line.value["body"]


def _profile_name(document: Mapping[str, Any]) -> str | None:
    # The genesis schema leaves the rules document to step 7, so its name may be anything.
    name = document.get("name")
    return name if isinstance(name, str) else None


def _listed(values: Iterable[object]) -> str:
    return ", ".join(map(str, values))
