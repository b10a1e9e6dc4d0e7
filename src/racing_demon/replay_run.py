"""The replay use case: ``run_replay`` does what ``racing-demon replay`` does, for any
caller (the command line, a server), without click.

One call rebuilds the table as it stood after record ``at_seq`` (the last when None)
through the match flow, up to the first record the flow refuses, and hands what it
shows to a ``ReplayReporter``: the genesis (``at_seq`` 0), or a ``Replayed`` table with
what followed it. The reporter (text or JSON, chosen by name in
``racing_demon.report.replay``) decides every word of the table; this module decides
what is read and shown, and returns the exit code: 0, or 1 when the log does not replay
to its end or cannot be replayed at all, 2 when it cannot be read.

What the caller gets wrong (a secret that opens no commitment, none for a log without a
final record, a record the log does not have) is a ``UsageProblem``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from racing_demon.files import InMemoryLog, LogFile, open_log
from racing_demon.game.deal import check_reveal
from racing_demon.game.flow import FlowCode, MatchFlow, RecordKind
from racing_demon.game.race import Race
from racing_demon.game.state import State
from racing_demon.log.reader import DEFAULT_LIMITS, Limits, Line, ReadCode, ReadError
from racing_demon.log.records import Final, Genesis, Record, chain_hash
from racing_demon.outcomes import ExitCode
from racing_demon.printing import printable
from racing_demon.replay import (
    EmptyLogError,
    ReplayError,
    Snapshot,
    follow,
    genesis_and_secret,
    refusal_words,
    replay,
)
from racing_demon.usage import SECRET_SOURCES, UsageProblem
from racing_demon.verify import Report, Settings, Verdict, verify_stream

Chosen = tuple[State | None, Record | None, tuple[str, ...], Race | None]


@dataclass(frozen=True, kw_only=True)
class ReplayRun:
    """What to replay: ``racing-demon replay``'s options but the reporter's."""

    log: LogFile
    at_seq: int | None = None  # the record to stop after; None: the last
    secret: bytes | None = None  # the dealer secret, for a log with no final record yet
    limits: Limits = DEFAULT_LIMITS


@dataclass(frozen=True)
class Replayed:
    """The table after ``record`` (``state`` None before the first hand is dealt), the
    seats' ``names``, the race the record's bounce lost, and what followed it: the next
    record, the first one refused, a torn last line, or nothing."""

    source: LogFile
    state: State | None
    names: tuple[str, ...]
    record: Record
    lost_to: Race | None
    following: Record | ReplayError | ReadError | None
    following_lost_to: Race | None


class ReplayReporter(Protocol):
    """What a replay prints: ``racing_demon.report.replay`` has the text and JSON ones."""

    @property
    def shows_genesis(self) -> bool:
        """Whether it shows a genesis, before any table is dealt (text does; JSON
        describes a table only)."""

    def genesis(self, record: Record) -> None:
        """The genesis record, asked for as record 0."""

    def replayed(self, replayed: Replayed) -> None:
        """The table asked for and what followed it."""

    def failed(self, message: str) -> None:
        """Why the log cannot be replayed or read (standard error's line)."""


@dataclass
class _Pick:
    """The table after record ``at_seq`` (the last when None) and what followed it."""

    at_seq: int | None
    chosen: Chosen | None = None
    following: Record | ReplayError | ReadError | None = None
    following_lost_to: Race | None = None
    last_seq: int = 0

    def see(self, snapshot: Snapshot) -> bool:
        """Take ``snapshot``, the next table; True once nothing after it is needed."""
        self.last_seq = snapshot.seq
        if self.chosen is not None and self.at_seq is not None:
            self.following, self.following_lost_to = snapshot.record, snapshot.lost_to
            return True
        if self.at_seq is None or snapshot.seq == self.at_seq:
            self.chosen = (snapshot.state, snapshot.record, snapshot.names, snapshot.lost_to)
        return False


@dataclass
class _PickVisitor:
    """The pick taken on verification's pass (a ``PassVisitor``). When the whole log
    verifies, it is what ``replay`` would show, and the genesis and the secret are the
    first and last records'; when the flow refused a record (steps 1-6 held), the replay
    stops there too, with the same words (``refused``): either way the log is read once."""

    pick: _Pick
    snapshot: Snapshot = field(default_factory=Snapshot)
    genesis: Record | None = None
    last: Record | None = None
    done: bool = False
    whole: bool = False  # the pass replayed the whole log and it held
    refused: ReplayError | None = None  # the record the flow refused, right after ``last``

    def visit(self, line: Line, record: Record, flow: MatchFlow) -> None:
        if record.seq == 0:  # the pass replays again from the genesis
            self.pick, self.snapshot, self.done = _Pick(self.pick.at_seq), Snapshot(), False
            self.genesis = record
        self.last = record
        if not self.done:
            follow(self.snapshot, record, flow, chain_hash(line.raw))
            self.done = self.pick.see(self.snapshot)

    def end(self, report: Report) -> None:
        self.whole = report.verdict in (Verdict.VERIFIED, Verdict.UNPINNED)
        finding = report.finding
        if (
            finding is not None
            and isinstance(finding.code, FlowCode)  # steps 7-10: the flow's refusal
            and self.last is not None
            and finding.seq == self.last.seq + 1
        ):
            words = refusal_words(finding.code, finding.rule, finding.move, finding.message)
            self.refused = ReplayError(finding.seq, words)

    def replayed(self) -> bool:
        """Whether the pass replayed all that ``replay`` shows of this log."""
        return self.genesis is not None and (self.whole or self.refused is not None)

    def revealed(self) -> bytes | None:
        final = None if self.last is None else self.last.payload
        return bytes.fromhex(final.secret) if isinstance(final, Final) else None


def run_replay(run: ReplayRun, reporter: ReplayReporter) -> ExitCode:
    """Show the table ``run`` asks for to ``reporter`` and return the exit code (module
    docs). Without ``at_seq``, a log that does not replay to its end shows the table just
    before the first record refused, with the refusal, and exits 1. Raises UsageProblem."""
    at_seq, secret, limits, source = run.at_seq, run.secret, run.limits, run.log
    pick = _Pick(at_seq)
    shown = printable(str(source))
    try:
        with open_log(source) as stream:  # the one time the log is opened
            visitor = _PickVisitor(_Pick(at_seq))
            verify_stream(stream, Settings(seed=secret, limits=limits), visitors=(visitor,))
            if visitor.replayed():
                # Nothing more to read: what replay shows is taken, to the end or the refusal.
                assert visitor.genesis is not None
                genesis_record, revealed = visitor.genesis, visitor.revealed()
                pick = visitor.pick
            else:
                in_file = not isinstance(source, InMemoryLog)
                genesis_record, revealed = genesis_and_secret(stream, limits, in_file=in_file)
            genesis = genesis_record.payload
            assert isinstance(genesis, Genesis)  # genesis_and_secret returns the genesis
            if secret is not None and not check_reveal(secret, genesis.commitment):
                # As deal --log does: a secret that opens no commitment replayed as far as
                # a PACK_MISMATCH at record 1, "the pack is not the one the seed deals".
                raise UsageProblem(
                    f"does not open the commitment of {shown}'s genesis ({genesis.commitment})",
                    "--secret",
                )
            if at_seq == 0:
                _show_genesis(genesis_record, reporter)
                return ExitCode.OK
            if visitor.refused is not None and not visitor.done:
                raise visitor.refused
            if not visitor.replayed():
                secret = secret or revealed
                if secret is None:
                    raise UsageProblem(
                        "the log has no final record: give the dealer secret, --secret SOURCE "
                        f"({SECRET_SOURCES})"
                    )
                # Replay goes on past what verification refuses at steps 1-6 (a signature,
                # the chain, the secret), which the pass does not: it replays the same open
                # file.
                for snapshot in replay(stream, secret, limits):
                    if pick.see(snapshot):
                        break
    except EmptyLogError as error:
        reporter.failed(f"cannot replay {shown}: {error}")
        return ExitCode.NO
    except ReplayError as error:
        if pick.chosen is None:  # the record asked for, or the genesis, is past the refusal
            reporter.failed(f"cannot replay {shown}: {printable(str(error))}")
            return ExitCode.NO
        pick.following = error  # the record after the one shown is the first refused
    except OSError as error:
        reporter.failed(f"cannot read {shown}: {error.strerror or error}")
        return ExitCode.UNUSABLE
    except ReadError as error:
        if pick.chosen is None:
            reporter.failed(f"cannot replay {shown}: {printable(str(error))}")
            return ExitCode.NO
        if error.code is ReadCode.TORN_LINE:
            pick.following = error  # a crash cut the last line short: the log is unfinished
        else:  # a line that cannot be read stops the replay as a refused record does
            pick.following = ReplayError((error.line or 1) - 1, f"{error.code}: {error.message}")
    except ValueError as error:
        reporter.failed(f"cannot replay {shown}: {printable(str(error))}")
        return ExitCode.NO
    chosen, following, following_lost_to = pick.chosen, pick.following, pick.following_lost_to
    if chosen is None:
        raise UsageProblem(f"the log has no record {at_seq}: its last is record {pick.last_seq}")
    state, record, names, lost_to = chosen
    assert record is not None  # every snapshot replay yields holds its record
    refused = isinstance(following, ReplayError) and at_seq is None
    if state is None and (record.kind is not RecordKind.GENESIS or not reporter.shows_genesis):
        if isinstance(following, ReplayError):
            # --json describes a table, and the refusal came before the first was dealt.
            reporter.failed(f"cannot replay {shown}: {printable(str(following))}")
            return ExitCode.NO
        raise UsageProblem(f"record {record.seq} comes before the first hand")
    reporter.replayed(Replayed(source, state, names, record, lost_to, following, following_lost_to))
    # The log does not replay to its end: what is shown is the last table it reached.
    return ExitCode.NO if refused else ExitCode.OK


def _show_genesis(record: Record, reporter: ReplayReporter) -> None:
    if not reporter.shows_genesis:
        raise UsageProblem(
            "--at 0 --json: the genesis deals no table yet, and replay --json describes "
            "a table; --at 0 shows the genesis as text"
        )
    reporter.genesis(record)
