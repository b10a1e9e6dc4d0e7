"""The verifier's driver: stream a log through the numbered steps, fail closed.

Memory does not grow with the log. Pass one streams the file through steps 1-5 and keeps
only the genesis, the final record, one submission counter per seat and a digest of the
lines' hashes; step 6 needs no more. Steps 7-10 need the dealer secret that only the final
record reveals, so the driver first reads ahead at the last line: when that guess is the
secret the final record turns out to reveal, pass one replays too, holding back the first
replay failure until steps 1-6 have held for the whole file. Otherwise (a log that changed
or was still being written when read ahead) pass two streams the same open file again
through steps 7-10. Either way the answer is the first failure: of steps 1-5, the first
failing line's; then step 6; then of steps 7-10, the first failing record's, in the order
docs/log-format.md §7 gives for each kind of record. The report says how many records
were not replayed.

Readers of the log ride on this pass instead of reading the file again: a ``PassVisitor``
sees every record replayed, a ``LineVisitor`` every line of the table-signed chain (the
audit's evidence, ``racing_demon.verify.table_chain``). Pass one hands it each line steps
1-5 accept; from the first line they refuse, the same open file is read once more from its
start through the chain's checks alone, never changing the verdict.
"""

from __future__ import annotations

import hashlib
import itertools
import os
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import BinaryIO, NoReturn, Protocol

from racing_demon.files import LogFile, open_log, shown_name
from racing_demon.game.flow import MatchFlow, RecordKind, Submission
from racing_demon.game.moves import MoveTexts
from racing_demon.game.race import Races
from racing_demon.log.reader import (
    Line,
    ReadError,
    RecordLine,
    canonical_value,
    iter_raw_lines,
    parse_read_line,
)
from racing_demon.log.records import (
    SEEN_WINDOW,
    Final,
    Genesis,
    Record,
    chain_hash,
    parse_record,
)
from racing_demon.log.signing import EquationCheck
from racing_demon.schema import record_errors
from racing_demon.verify import (
    step01_framing,
    step02_canonical,
    step03_schema,
    step04_chain,
    step05_signatures,
    step06_secret,
    step07_rules,
    step08_replay,
    table_chain,
)
from racing_demon.verify.assurance import with_requirements
from racing_demon.verify.report import Finding, Report, Step, StepFailed, Verdict, VerifyCode
from racing_demon.verify.settings import Settings

_COUNT_CHUNK = 64 * 1024


class PassVisitor(Protocol):
    """A reader of the log that rides on verification's one pass instead of reading the
    file itself: it sees every record the replay (steps 7-10) accepted, in order, and then
    the report. A record reaches it only once steps 1-5 accepted its line; the verdict on
    the whole file comes with ``end``."""

    def visit(self, line: Line, record: Record, flow: MatchFlow) -> None:
        """``line``'s ``record`` replayed: ``flow`` is the match after it. When pass one's
        guess at the secret proves wrong, pass two replays again from the genesis (seq 0)."""

    def end(self, report: Report) -> None:
        """The pass is over and ``report`` is its verdict, whatever the visits were."""


class LineVisitor(Protocol):
    """A reader of the log's table-signed chain (docs/log-format.md §10) that rides on
    verification's pass: it sees each line of the chain, in order from line 1, then the
    first line that is not of it, if any. Verification must pin the table's key and check
    its every signature (not ``--fast``)."""

    def chained(self, line: Line, record: Record) -> None:
        """``line`` (read as ``record``) extends the chain."""

    def unchained(self, broken: table_chain.ChainBroken) -> None:
        """The chain stops before ``broken.line``, for the reason ``broken`` gives."""


def verify_log(
    path: LogFile,
    settings: Settings,
    *,
    visitors: Sequence[PassVisitor] = (),
    line_visitors: Sequence[LineVisitor] = (),
) -> Report:
    """Verify the log at ``path`` (or read from standard input): UNREADABLE if it cannot
    be opened or read. The report's source is ``shown_name(path)``, valid UTF-8. Each of
    ``visitors`` sees the pass (``PassVisitor``), and its ``end`` the report; each of
    ``line_visitors`` the table-signed chain (``LineVisitor``)."""
    source = shown_name(path)
    try:
        # Two passes need the same bytes twice, which a pipe or a device cannot give, and
        # opening a pipe would wait for a writer.
        with open_log(path) as stream:
            return verify_stream(
                stream, settings, source, visitors=visitors, line_visitors=line_visitors
            )
    except OSError as error:
        return _ended(visitors, _unreadable(source, settings, error.strerror or str(error)))


def verify_stream(
    stream: BinaryIO,
    settings: Settings,
    source: str = "<stream>",
    *,
    visitors: Sequence[PassVisitor] = (),
    line_visitors: Sequence[LineVisitor] = (),
) -> Report:
    """Verify the log in seekable binary ``stream``, read twice from its start; each of
    ``visitors`` sees the pass (``PassVisitor``), and its ``end`` the report; each of
    ``line_visitors`` the table-signed chain (``LineVisitor``)."""
    if line_visitors and (settings.table_key is None or settings.fast):
        raise ValueError("the table-signed chain needs the table's key and all its signatures")
    try:
        if not stream.seekable():
            return _ended(
                visitors, _unreadable(source, settings, "the stream cannot be read twice")
            )
        report = _Verification(
            settings, source, visitors=tuple(visitors), line_visitors=tuple(line_visitors)
        ).run(stream)
    except OSError as error:
        report = _unreadable(source, settings, error.strerror or str(error))
    return _ended(visitors, report)


def _ended(visitors: Sequence[PassVisitor], report: Report) -> Report:
    for visitor in visitors:
        visitor.end(report)
    return report


def _unreadable(source: str, settings: Settings, why: str) -> Report:
    return unreadable_report(source, settings, f"cannot read {source}: {why}")


def unreadable_report(source: str, settings: Settings, words: str) -> Report:
    """The report of a log that could not be read at all, ``words`` saying why."""
    return Report(
        source,
        Verdict.UNREADABLE,
        finding=Finding(VerifyCode.UNREADABLE, words),
        fast=settings.fast,
        pinned=settings.table_key is not None,
        unsafe_unpinned=settings.unsafe_unpinned,
    )


@dataclass
class _Verification:
    """One log's verification: the passes, and what they keep between lines."""

    settings: Settings
    source: str
    visitors: tuple[PassVisitor, ...] = ()
    line_visitors: tuple[LineVisitor, ...] = ()
    # What pass one keeps: bounded whatever the length of the log.
    genesis: Record | None = None
    player_keys: step05_signatures.PlayerKeys = ()
    final: Record | None = None
    final_line: int | None = None
    lines: int = 0  # complete lines read
    records: int | None = 0
    torn: ReadError | None = None
    # What shows pass two reads the bytes pass one checked: SHA-256 over the lines' chain
    # hashes, in order. Each line is hashed once, for the chain; a line changed, added,
    # removed or cut elsewhere changes a chain hash, so this digest too.
    digest: bytes = b""
    recent_hashes: deque[str] = field(
        default_factory=lambda: deque(maxlen=SEEN_WINDOW)
    )  # the chain hashes of the last lines, the previous line's last
    last_t_ms: int = 0
    submissions: dict[int, int] = field(default_factory=dict)
    accepted_by: tuple[int, ...] = ()
    # Pass one replays too when it knows the secret ahead (steps 7-10 as it goes); their
    # first failure waits until steps 1-6 have held for the whole file.
    flow: MatchFlow | None = None
    replay_failed: StepFailed | None = None
    replayed: int = 0
    moves: MoveTexts = field(default_factory=MoveTexts)  # this verification's, both passes'
    races: Races = field(default_factory=Races)  # pass one's replay's (a v4 log's bounces)
    equation: EquationCheck | None = field(init=False)  # settings.equation_check(), made once

    def __post_init__(self) -> None:
        self.equation = self.settings.equation_check()

    def run(self, stream: BinaryIO) -> Report:
        try:
            secret = self.settings.seed
            if secret is None:
                secret = self._read_ahead_secret(stream)
            self._first_pass(stream, secret)
            if self.final is None:
                if self.genesis is not None and self.settings.seed is not None:
                    step06_secret.check_given_secret(self.genesis, self.settings.seed)
                    self._replayed_in_pass_one()  # the prefix replays, so far as it goes
                return self._report(Verdict.UNFINISHED, self._unfinished(), self._where_cut())
            assert self.genesis is not None and self.final_line is not None
            revealed = step06_secret.check_secret(
                self.genesis, self.final, self.final_line, self.settings.seed
            )
            if secret == revealed:
                self._replayed_in_pass_one()
            else:
                self._second_pass(stream, revealed)
        except StepFailed as failed:
            if failed.step <= Step.SECRET:
                self.replayed = 0  # a replay counts only once steps 1-6 hold
            return self._report(Verdict.DOES_NOT_VERIFY, failed.finding, failed.step)
        verdict = Verdict.VERIFIED if self.settings.table_key is not None else Verdict.UNPINNED
        return with_requirements(self._report(verdict), self.settings.required)

    # -- findings and reports -------------------------------------------------------

    def _unfinished(self) -> Finding:
        if self.torn is not None:
            return Finding(self.torn.code, self.torn.message, line=self.torn.line)
        if self.lines == 0:
            return Finding(VerifyCode.UNFINISHED, "the file is empty: no genesis, no final record")
        return Finding(VerifyCode.UNFINISHED, f"no final record after line {self.lines}")

    def _where_cut(self) -> Step:
        return Step.FRAMING if self.torn is not None else Step.CHAIN

    def _report(
        self, verdict: Verdict, finding: Finding | None = None, step: Step | None = None
    ) -> Report:
        genesis = None if self.genesis is None else self.genesis.payload
        assert genesis is None or isinstance(genesis, Genesis)
        final = self.final.payload if self.final is not None and finding is None else None
        assert final is None or isinstance(final, Final)
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
            game=None if self.genesis is None else self.genesis.game,
            profile=None if genesis is None else _profile_name(genesis),
            format_version=None if self.genesis is None else self.genesis.v,
            keyed=genesis is not None and all(entry.key for entry in genesis.players),
            seats=0 if genesis is None else len(genesis.players),
            accepted_by=self.accepted_by if finding is None else (),
            rules=None
            if genesis is None
            else step07_rules.describe_rules(genesis, self.settings.rules),
            tournament_plan=None
            if genesis is None or genesis.tournament is None
            else genesis.tournament.plan,
            hands=() if final is None else final.end.hands,
            totals=() if final is None else final.end.totals,
            winners=() if final is None else final.end.winners,
            final_reason=None if final is None else final.end.reason.value,
        )

    # -- pass one: steps 1-5 --------------------------------------------------------

    def _first_pass(self, stream: BinaryIO, secret: bytes | None) -> None:
        digest = hashlib.sha256()
        settings = self.settings
        limits = settings.limits
        # A Line only for those who read one: verification alone needs each line's record.
        lines_seen = bool(self.visitors or self.line_visitors)
        try:
            for number, raw in iter_raw_lines(stream, limits):  # (1)
                value = canonical_value(number, raw, limits)  # (1) and (2)
                self.lines = self.records = number
                read = step03_schema.check_value(number, raw, value)
                record = read.record
                step04_chain.check_chain(
                    number,
                    record,
                    genesis=self.genesis,
                    final_line=self.final_line,
                    recent_hashes=self.recent_hashes,
                    last_t_ms=self.last_t_ms,
                    wanted_game=settings.game_id,
                )
                if number == 1:
                    self.genesis = record
                elif record.kind is RecordKind.FINAL:
                    self.final, self.final_line = record, number
                payload = record.payload
                seat = payload.seat if isinstance(payload, Submission) else -1
                self.player_keys = step05_signatures.check_signatures(
                    read,
                    table_key=settings.table_key,
                    fast=settings.fast,
                    player_keys=self.player_keys,
                    next_n=self.submissions.get(seat, 0),
                    equation=self.equation,
                )
                if seat >= 0:
                    self.submissions[seat] = self.submissions.get(seat, 0) + 1
                elif record is self.final:
                    accepts = read.sigs.accepts or ()
                    self.accepted_by = tuple(s for s, sig in enumerate(accepts) if sig is not None)
                line_hash = chain_hash(raw)
                self.recent_hashes.append(line_hash)
                digest.update(line_hash.encode())
                self.last_t_ms = record.t_ms
                line = Line(number, raw, value) if lines_seen else None
                if self.line_visitors:
                    assert line is not None
                    for visitor in self.line_visitors:
                        visitor.chained(line, record)
                if secret is not None and self.replay_failed is None:
                    self._replay_ahead(read, line, secret)
        except ReadError as error:
            first = error.line == 1
            log = not first or step01_framing.starts_as_log(stream)
            if log and step01_framing.is_torn_tail(error, self.final is not None):
                # What a crash mid-write leaves: the complete lines before it are a prefix.
                self.torn = error
                self.records = error.line
                self._chain_from(stream, error.line or self.lines + 1)
            else:
                self.records = self._count_rest(stream, error.line or self.lines + 1, error)
                self._chain_from(stream, error.line or self.lines + 1)
                if step02_canonical.is_canonical_failure(error):
                    failed = step02_canonical.canonical_failure(error)
                else:
                    failed = step01_framing.framing_failure(error)
                raise (failed if log else step01_framing.not_a_log(failed)) from None
        except StepFailed as failed:
            self.records = self._count_rest(stream, self.lines, None)
            self._chain_from(stream, self.lines)
            first_record = self.lines == 1 and failed.step is Step.SCHEMA
            if first_record and not step01_framing.starts_as_log(stream):
                raise step01_framing.not_a_log(failed) from None
            raise
        self.digest = digest.digest()

    def _chain_from(self, stream: BinaryIO, first: int) -> None:
        """The table-signed chain from line ``first``, the first that steps 1-5 refused,
        for the line visitors: the file read again from its start (the reader's limits
        count from there), skipping the lines they accepted."""
        if not self.line_visitors:
            return
        key = self.settings.table_key
        assert key is not None  # verify_stream's condition for line visitors
        genesis, finished = self.genesis, self.final_line is not None and self.final_line < first
        previous = self.recent_hashes[-1] if first > 1 else ""
        stream.seek(0)
        try:
            for number, raw in iter_raw_lines(stream, self.settings.limits):
                if number < first:
                    continue
                if finished:
                    raise table_chain.after_final(number)
                line, record = table_chain.table_signed(
                    number,
                    raw,
                    table_key=key,
                    limits=self.settings.limits,
                    genesis=genesis,
                    previous_hash=previous,
                )
                genesis = genesis or record
                for visitor in self.line_visitors:
                    visitor.chained(line, record)
                previous, finished = chain_hash(raw), record.kind is RecordKind.FINAL
        except ReadError as error:
            broken = table_chain.read_error(error)
        except table_chain.ChainBroken as refused:
            broken = refused
        else:
            return
        for visitor in self.line_visitors:
            visitor.unchained(broken)

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
            value = canonical_value(0, last, limits)
        except ReadError:
            return None
        if record_errors(value):
            return None
        final = parse_record(value["body"]).payload
        return bytes.fromhex(final.secret) if isinstance(final, Final) else None

    def _replay_ahead(self, read: RecordLine, line: Line | None, secret: bytes) -> None:
        """Steps 7-10 on ``read``; ``line`` is the same line for the visitors, if any."""
        record = read.record
        try:
            if self.flow is None:
                assert self.genesis is not None
                self.flow = step07_rules.load_rules(self.genesis, secret, self.settings.rules)
            self.flow = step08_replay.replay_record(
                self.flow, read.number, record, self.moves, self.races, self.recent_hashes[-1]
            )
            self.replayed = read.number
        except StepFailed as failed:
            self.replay_failed = failed
            return
        if self.visitors:
            assert line is not None
            self._visit(line, record, self.flow)

    def _visit(self, line: Line, record: Record, flow: MatchFlow) -> None:
        for visitor in self.visitors:
            visitor.visit(line, record, flow)

    def _replayed_in_pass_one(self) -> None:
        """Steps 1-6 held: what pass one's replay found is the verdict."""
        if self.replay_failed is not None:
            raise self.replay_failed

    def _count_rest(self, stream: BinaryIO, counted: int, error: ReadError | None) -> int | None:
        """``counted`` lines plus those after the stream's position, within the limits."""
        limits = self.settings.limits
        if error is not None and error.code in step01_framing.LIMIT_CODES:
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

    # -- pass two: steps 7-10 -------------------------------------------------------

    def _second_pass(self, stream: BinaryIO, secret: bytes) -> None:
        assert self.genesis is not None
        self.replayed = 0
        flow = step07_rules.load_rules(self.genesis, secret, self.settings.rules)
        races = Races()
        stream.seek(0)
        digest = hashlib.sha256()
        limits = self.settings.limits
        try:
            # Only the lines pass one checked: a log still being written grows meanwhile.
            # They were canonical then; if a byte changed since, the digest says so.
            for number, raw in itertools.islice(iter_raw_lines(stream, limits), self.lines):
                line_hash = chain_hash(raw)
                digest.update(line_hash.encode())
                value = parse_read_line(number, raw, limits)
                # Pass one proved each line's schema: parsing is all that is left.
                record = parse_record(value["body"])
                flow = step08_replay.replay_record(
                    flow, number, record, self.moves, races, line_hash
                )
                self.replayed = number
                if self.visitors:
                    self._visit(Line(number, raw, value), record, flow)
        except ReadError:
            self._changed()
        except StepFailed:
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
                digest.update(chain_hash(raw).encode())
        except ReadError:
            return False
        return digest.digest() == self.digest

    def _changed(self) -> NoReturn:
        raise StepFailed(
            Step.CHAIN,
            Finding(
                VerifyCode.FILE_CHANGED, "the file changed between the two passes of verification"
            ),
        )


def _profile_name(genesis: Genesis) -> str | None:
    # The genesis schema leaves the rules document to step 7, so its name may be anything.
    name = genesis.rules.get("name")
    return name if isinstance(name, str) else None
