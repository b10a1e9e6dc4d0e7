"""Scoring a duplicate tournament from its verified logs (docs/tournament-scoring.md): the
use case a command or a server calls.

``score_tournament`` turns a plan and a folder of logs into standings: it verifies every
log with the batch verifier (the table's key and the plan's rules pinned), checks each
against the plan, names every log it cannot score with the table, hand and seat it
concerns, and scores the tables that hold with the matchpoints of ``tournament.matchpoints``.
The standings are printed by ``report.tournament`` (text, JSON) and
``report.standings_html`` (the page).
"""

from __future__ import annotations

import contextlib
import dataclasses
import enum
import functools
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from racing_demon.batch import DEFAULT_SCHEDULER_TIMEOUT, collect_logs
from racing_demon.batch.dask import on_dask
from racing_demon.batch.local import no_logs_report, run_here
from racing_demon.errors import RacingDemonError
from racing_demon.files import open_regular, shown_name
from racing_demon.game.duplicate import Shape
from racing_demon.game.flow import FlowCode, HandStart, MatchFlow
from racing_demon.log.reader import (
    DEFAULT_LIMITS,
    Limits,
    Line,
    ReadError,
    iter_raw_lines,
    read_canonical_line,
)
from racing_demon.log.records import Final, Genesis, Record, parse_record
from racing_demon.outcomes import ExitCode
from racing_demon.replay import LogSource, reading
from racing_demon.schema import record_errors
from racing_demon.tournament.matchpoints import Scores, TableResult, score
from racing_demon.tournament.plan import (
    Plan,
    PlanCode,
    PlanError,
    check_plan,
)
from racing_demon.verify import (
    Finding,
    Report,
    Settings,
    Verdict,
    VerifyCode,
    unreadable_report,
    verify_stream,
)
from racing_demon.verify.step01_framing import NOT_A_LOG
from racing_demon.wording import plural


class TournamentCode(enum.StrEnum):
    """Why a log, a table or the plan could not be scored as planned
    (docs/tournament-scoring.md, "What is not scored")."""

    MISSING_TABLE = "MISSING_TABLE"  # no log claims a table of the plan
    DUPLICATE_TABLE = "DUPLICATE_TABLE"  # two verified logs or more claim one table
    UNREADABLE = "UNREADABLE"
    NOT_A_TOURNAMENT_LOG = "NOT_A_TOURNAMENT_LOG"  # its genesis names no tournament
    OTHER_TOURNAMENT = "OTHER_TOURNAMENT"  # it names another tournament or plan
    TABLE_NOT_IN_PLAN = "TABLE_NOT_IN_PLAN"
    UNFINISHED = "UNFINISHED"  # no final record yet: the table has not revealed
    NOT_VERIFIED = "NOT_VERIFIED"
    PACK_OUT_OF_PLAN = "PACK_OUT_OF_PLAN"  # a hand_start names a pack the plan does not deal
    WRONG_RULES = "WRONG_RULES"
    WRONG_SHAPE = "WRONG_SHAPE"  # its tournament has other tables or hands than the plan
    WRONG_SEATS = "WRONG_SEATS"
    WRONG_COMMITMENT = "WRONG_COMMITMENT"
    WRONG_ENTROPY = "WRONG_ENTROPY"
    # No longer given (the genesis is the verified pass's own); kept for older standings.
    LOG_CHANGED = "LOG_CHANGED"
    SHORT_MATCH = "SHORT_MATCH"  # verified, but fewer hands than planned: those played count
    DEAL_SET_MISMATCH = "DEAL_SET_MISMATCH"  # the plan's checksum is not what the secret deals


@dataclass(frozen=True, slots=True)
class Problem:
    """One thing the organiser must see: what, and which table, hand, seat and log."""

    code: TournamentCode
    message: str
    table: int | None = None
    hand: int | None = None
    seat: int | None = None
    log: str | None = None
    finding: Finding | None = None  # the verifier's, when the log does not verify
    excluded: bool = True  # the log scores nothing (a short match's hands still count)


@dataclass(frozen=True, slots=True)
class Standings:
    """A tournament scored: the plan, the scores of the tables that count, every problem,
    and the organiser's secret once a scored log revealed it (for the hand records)."""

    plan: Plan
    scores: Scores
    problems: tuple[Problem, ...]
    secret: bytes | None
    logs: int  # how many logs were read

    @property
    def exit_code(self) -> ExitCode:
        """0 every planned table scored; 2 a log could not be read; else 1."""
        if any(problem.code is TournamentCode.UNREADABLE for problem in self.problems):
            return ExitCode.UNUSABLE
        return ExitCode.NO if self.problems else ExitCode.OK


@dataclass(frozen=True, slots=True)
class _Claim:
    """A log that names this tournament's plan and one of its tables."""

    table: int
    log: str
    problem: Problem | None
    result: TableResult | None
    verified: bool = True  # under the table's key: the table signed the whole log
    secret: bytes | None = None  # what its final record revealed, once it verified


class NoLogToScore(RacingDemonError, ValueError):
    """A LOGS that yields no log to read: refused before any log is verified, since
    scoring nothing from it would read as "0 of N tables scored from 1 log"."""

    def __init__(self, named: Path, reason: str) -> None:
        super().__init__(f"{named}: {reason}")
        self.named = named
        self.reason = reason


def logs_to_score(named: Sequence[Path]) -> list[Path]:
    """The logs ``named`` stands for (``batch.collect_logs``: every ``*.jsonl`` file under
    a folder, or a log named itself); NoLogToScore for the first of ``named`` that is
    missing or cannot be opened, or is a folder that cannot be listed or holds no log."""
    for path in named:
        reason = _why_no_log(path)
        if reason is not None:
            raise NoLogToScore(path, reason)
    return collect_logs(named)


def _why_no_log(named: Path) -> str | None:
    if named.is_dir():
        try:
            os.listdir(named)
        except OSError as error:
            return f"cannot list it: {error.strerror or error}"
        if collect_logs([named]) == [named]:
            return "no log (*.jsonl) under this folder"
        return None
    try:
        open_regular(named).close()
    except OSError as error:
        return f"cannot read it: {error.strerror or error}"
    return None


def score_tournament(
    plan: Plan,
    logs: Sequence[Path],
    table_key: bytes,
    *,
    limits: Limits = DEFAULT_LIMITS,
    jobs: int | None = None,
    scheduler: str | None = None,
) -> Standings:
    """Verify ``logs`` (on ``jobs`` processes here, or on the Dask cluster at
    ``scheduler``) with ``table_key`` and the plan's rules pinned, check each against
    ``plan``, and score the tables that hold.

    Every log that cannot be scored, and every table of the plan no log scores, is a
    ``Problem``; a table two logs claim scores neither. Raises what the batch verifier
    raises (``ClusterError``, a broken pool).
    """
    logs = _distinct(logs)
    settings = Settings(table_key=table_key, limits=limits, rules=plan.rules.digest())
    read = functools.partial(read_table_log, settings=settings)
    if scheduler is not None:
        table_logs = on_dask(read, logs, scheduler, DEFAULT_SCHEDULER_TIMEOUT)
    else:
        table_logs = run_here(read, logs, jobs)
    problems: list[Problem] = []
    claims: list[_Claim] = []
    with contextlib.closing(table_logs):
        for path, table_log in zip(logs, table_logs, strict=True):
            outcome = _checked(plan, path, table_log)
            if isinstance(outcome, _Claim):
                claims.append(outcome)
            else:
                problems.append(outcome)
    results, table_problems = _by_table(plan.shape, claims)
    secret = _revealed_secret(results, claims)
    plan_problems = [] if secret is None else _deal_set_problems(plan, secret)
    ordered = sorted(
        [*table_problems, *problems],
        key=lambda problem: (problem.table is None, problem.table or 0),
    )
    # A path that could not be read (missing, say) is a problem, not a log read.
    unread = sum(problem.code is TournamentCode.UNREADABLE for problem in problems)
    return Standings(
        plan, score(plan.shape, results), (*plan_problems, *ordered), secret, len(logs) - unread
    )


def _distinct(logs: Sequence[Path]) -> list[Path]:
    """``logs`` with each file once, first named first: a folder and a log in it, or one
    file named twice or through a link, is one log, not two claiming its table (which
    would score neither). Copies are other files, and still two logs."""
    seen: set[tuple[int, int] | str] = set()
    distinct = []
    for path in logs:
        key: tuple[int, int] | str
        try:
            status = path.stat()
            key = (status.st_dev, status.st_ino)
        except OSError:  # reported as unreadable, once per name
            key = str(path)
        if key not in seen:
            seen.add(key)
            distinct.append(path)
    return distinct


def _checked(plan: Plan, path: Path, table_log: TableLog) -> _Claim | Problem:
    """The log's claim on a table of the plan, or why it has none (the first check that
    fails, in the order docs/tournament-scoring.md gives)."""
    log = shown_name(path)  # as the report names it: valid UTF-8 in JSON
    report = table_log.report
    if report.verdict is Verdict.UNREADABLE:
        assert report.finding is not None
        return Problem(TournamentCode.UNREADABLE, report.finding.message, log=log)
    read = table_log.genesis
    if read is None:
        # A verified log's genesis is the pass's first record: only another has none.
        return _not_verified(None, log, table_log)
    _, genesis = read
    tag = genesis.tournament
    if tag is None:
        return Problem(
            TournamentCode.NOT_A_TOURNAMENT_LOG,
            "its genesis names no tournament: a match of its own",
            log=log,
        )
    shape = plan.shape
    if tag.name != shape.name or tag.plan != plan.digest:
        return Problem(
            TournamentCode.OTHER_TOURNAMENT,
            f"it is table {tag.table} of tournament {tag.name!r} with plan {tag.plan}, not "
            f"of {shape.name!r} with plan {plan.digest}",
            log=log,
        )
    table = tag.table
    if not 1 <= table <= shape.tables:
        return Problem(
            TournamentCode.TABLE_NOT_IN_PLAN,
            f"it claims table {table}; the plan has tables 1 to {shape.tables}",
            table=table,
            log=log,
        )
    if report.verdict is not Verdict.VERIFIED:
        return _Claim(table, log, _not_verified(table, log, table_log), None, False)
    mismatch = _genesis_mismatch(plan, table, genesis)
    if mismatch is not None:
        problem = dataclasses.replace(mismatch, table=table, log=log)
        return _Claim(table, log, problem, None)
    result = TableResult(table, tuple(entry.name for entry in genesis.players), report.hands, log)
    short = None
    if len(report.hands) < shape.hands:
        short = Problem(
            TournamentCode.SHORT_MATCH,
            f"the match ended ({report.final_reason}) after {len(report.hands)} of "
            f"{plural(shape.hands, 'hand')}: the hands played are scored, the packs of the others "
            "have one result fewer",
            table=table,
            hand=len(report.hands) + 1,
            log=log,
            excluded=False,
        )
    return _Claim(table, log, short, result, secret=table_log.secret)


def _not_verified(table: int | None, log: str, table_log: TableLog) -> Problem:
    report = table_log.report
    finding = report.finding
    assert finding is not None
    if report.verdict is Verdict.UNFINISHED:
        return Problem(
            TournamentCode.UNFINISHED,
            "the log has no final record: the table has not revealed the secret, or it "
            f"stopped ({finding.code})",
            table=table,
            hand=table_log.hand,  # the hand it stopped in
            log=log,
            finding=finding,
        )
    code = {
        FlowCode.PACK_MISMATCH: TournamentCode.PACK_OUT_OF_PLAN,
        VerifyCode.WRONG_RULES: TournamentCode.WRONG_RULES,
    }.get(finding.code, TournamentCode.NOT_VERIFIED)
    hand = table_log.hand
    what = "it is not a log" if finding.rule == NOT_A_LOG else "it does not verify"
    return Problem(
        code,
        f"{what}: {finding.code}: {finding.message}",
        table=table,
        hand=hand,
        seat=finding.seat,
        log=log,
        finding=finding,
    )


def _genesis_mismatch(plan: Plan, table: int, genesis: Genesis) -> Problem | None:
    """How a verified genesis that names the plan differs from what the plan says its
    table's genesis holds: any difference deals packs the plan does not, or plays rules
    it does not."""
    shape = plan.shape
    tag = genesis.tournament
    assert tag is not None
    expected = plan.tag(table)
    if (tag.tables, tag.hands) != (expected.tables, expected.hands):
        return Problem(
            TournamentCode.WRONG_SHAPE,
            f"its tournament has {plural(tag.tables, 'table')} of {plural(tag.hands, 'hand')}; "
            "the plan "
            f"{expected.tables} of {expected.hands}: no pack it dealt is the plan's",
        )
    if len(genesis.players) != shape.seats:
        return Problem(
            TournamentCode.WRONG_SEATS,
            f"it seats {plural(len(genesis.players), 'player')}; the plan {shape.seats}",
        )
    if genesis.rules_sha256 != plan.rules.digest():
        return Problem(
            TournamentCode.WRONG_RULES,
            f"its rules are sha256 {genesis.rules_sha256}; the plan's {plan.rules.digest()}",
        )
    if genesis.commitment != plan.commitment:
        return Problem(
            TournamentCode.WRONG_COMMITMENT,
            f"its commitment is {genesis.commitment}; the plan's {plan.commitment}: another "
            "secret dealt it",
        )
    if tag.entropy != expected.entropy:
        return Problem(
            TournamentCode.WRONG_ENTROPY,
            f"its entropy digest is {tag.entropy}; the plan's {expected.entropy}: no pack "
            "it dealt is the plan's",
        )
    return None


def _by_table(shape: Shape, claims: Sequence[_Claim]) -> tuple[list[TableResult], list[Problem]]:
    """The results of the tables exactly one verified log claims, and the problems of the
    tables: each claim's own, two verified claims on one table, no claim at all."""
    results: list[TableResult] = []
    problems: list[Problem] = []
    by_table: dict[int, list[_Claim]] = {}
    for claim in claims:
        by_table.setdefault(claim.table, []).append(claim)
    for table in range(1, shape.tables + 1):
        mine = by_table.get(table, [])
        problems += [claim.problem for claim in mine if claim.problem is not None]
        # Only a log the table signed whole can be its match: one that does not verify (a
        # damaged or cut copy, a forgery) is named, but knocks out no verified log.
        signed = [claim for claim in mine if claim.verified]
        if not mine:
            problems.append(
                Problem(TournamentCode.MISSING_TABLE, "no log claims this table", table=table)
            )
        elif len(signed) > 1:
            logs = ", ".join(claim.log for claim in signed)
            problems += [
                Problem(
                    TournamentCode.DUPLICATE_TABLE,
                    f"{len(signed)} verified logs claim this table ({logs}): none of them "
                    "scores until only one is left",
                    table=table,
                    log=claim.log,
                )
                for claim in signed
            ]
        elif signed and signed[0].result is not None:
            results.append(signed[0].result)
    return results, problems


def _revealed_secret(results: Sequence[TableResult], claims: Sequence[_Claim]) -> bytes | None:
    """The organiser's secret, as the first scored log revealed it on its verifying pass:
    it verified, so the secret opens its commitment, which is the plan's."""
    revealed = {claim.log: claim.secret for claim in claims if claim.result is not None}
    return next((secret for r in results if (secret := revealed.get(r.log)) is not None), None)


def _deal_set_problems(plan: Plan, secret: bytes) -> list[Problem]:
    """The plan's published deal-set checksum against the deal set the revealed secret
    deals (``check_plan``, docs/tournament.md step 6): a false checksum is the organiser's
    lie, and the secret opens the commitment (``_revealed_secret`` made sure)."""
    try:
        check_plan(plan, secret)
    except PlanError as error:
        if error.code is not PlanCode.DEAL_SET_MISMATCH:
            raise  # load_plan or make_plan made the plan: nothing else can fail here
        return [Problem(TournamentCode.DEAL_SET_MISMATCH, error.message, excluded=False)]
    return []


# -- reading a log once: its verdict, genesis, hands and secret -------------------------


@dataclass(frozen=True, slots=True)
class TableLog:
    """What scoring needs of one log, read on its one opening: the verifier's ``report``;
    the ``genesis`` (game id and genesis) when the first line is one; for a log that did
    not verify, the ``hand`` it stopped in (``hand_at`` the finding's line, or its last
    line when unfinished); and for one that did, the ``secret`` its final record revealed."""

    report: Report
    genesis: tuple[str, Genesis] | None = None
    hand: int | None = None
    secret: bytes | None = None


def read_table_log(path: Path, settings: Settings) -> TableLog:
    """Open the log at ``path`` once and verify it under ``settings``: a log that verifies
    is read no more, its genesis and secret taken on the verifier's pass; of one that does
    not, the same open file is read again for its genesis and the hand it stopped in (the
    pass stops at the first fault, before the line that holds them). Picklable, for the
    batch's processes and a Dask worker. A folder is "no logs found under DIR" and a file
    that cannot be opened UNREADABLE, as ``batch.verify_named`` reports them."""
    source = shown_name(path)
    if path.is_dir():
        return TableLog(no_logs_report(source, settings))
    try:
        stream = open_regular(path)
    except OSError as error:
        why = error.strerror or str(error)
        return TableLog(unreadable_report(source, settings, f"cannot read {source}: {why}"))
    with stream:
        verified = _VerifiedTable()
        report = verify_stream(stream, settings, source, visitors=(verified,))
        finding = report.finding
        if finding is None:  # verified (or, with no table key pinned, unpinned)
            assert verified.genesis is not None  # every record was replayed, the genesis first
            return TableLog(report, verified.genesis, secret=verified.secret)
        if report.verdict is Verdict.UNREADABLE:
            return TableLog(report)
        if report.verdict is Verdict.UNFINISHED:
            hand = hand_at(stream, None, settings.limits)
        else:
            hand = None if finding.line is None else hand_at(stream, finding.line, settings.limits)
        return TableLog(report, read_genesis(stream, settings.limits), hand)


@dataclass
class _VerifiedTable:
    """The genesis and the revealed secret, seen on the verifier's pass (a ``PassVisitor``)."""

    genesis: tuple[str, Genesis] | None = None
    secret: bytes | None = None
    _last: Record | None = field(default=None, repr=False)

    def visit(self, line: Line, record: Record, flow: MatchFlow) -> None:
        if isinstance(record.payload, Genesis):  # the pass replays again from the genesis
            self.genesis = record.game, record.payload
        self._last = record

    def end(self, report: Report) -> None:
        final = None if self._last is None else self._last.payload
        self.secret = bytes.fromhex(final.secret) if isinstance(final, Final) else None


def _record(number: int, raw: bytes, limits: Limits) -> Record | None:
    """Line ``number`` as a record, or None when it is not one."""
    try:
        value = read_canonical_line(number, raw, limits).value
    except ReadError:
        return None
    if record_errors(value):
        return None
    return parse_record(value["body"])


def read_genesis(log: LogSource, limits: Limits = DEFAULT_LIMITS) -> tuple[str, Genesis] | None:
    """The game id and genesis of ``log`` (a path, or a stream read from its start), or
    None when its first line is no genesis (or the file cannot be read)."""
    try:
        with reading(log) as stream:
            for number, raw in iter_raw_lines(stream, limits):
                record = _record(number, raw, limits)
                if record is None or not isinstance(record.payload, Genesis):
                    return None
                return record.game, record.payload
    except (OSError, ReadError):
        return None
    return None


def hand_at(log: LogSource, line: int | None, limits: Limits = DEFAULT_LIMITS) -> int | None:
    """The hand that line ``line`` of ``log`` (a path, or a stream read from its start)
    belongs to (None: its last line): the last hand started at or before it; None before
    the first hand, and where the lines stop being records."""
    hand = None
    try:
        with reading(log) as stream:
            for number, raw in iter_raw_lines(stream, limits):
                record = _record(number, raw, limits)
                if record is None:
                    break
                if isinstance(record.payload, HandStart):
                    hand = record.payload.hand
                if line is not None and number >= line:
                    break
    except (OSError, ReadError):
        pass
    return hand


# ``score``, ``Scores`` and ``TableResult`` are named here too: docs/tournament-scoring.md
# documented them as this module's before the matchpoints had a module of their own.
__all__ = [
    "NoLogToScore",
    "Problem",
    "Scores",
    "Standings",
    "TableLog",
    "TableResult",
    "TournamentCode",
    "hand_at",
    "logs_to_score",
    "read_genesis",
    "read_table_log",
    "score",
    "score_tournament",
]
