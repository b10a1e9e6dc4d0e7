"""Scoring a duplicate tournament from its verified logs (docs/tournament-scoring.md).

Two layers. The pure core, ``score``, takes typed per-table results (who sat where, and
each hand's scores) and compares every result on a pack with every other result on that
pack, as matchpoints. The collecting layer, ``score_tournament``, turns a plan and a
folder of logs into those results: it verifies every log with the batch verifier (the
table's key and the plan's rules pinned), checks each against the plan, and names every
log it cannot score with the table, hand and seat it concerns.
"""

from __future__ import annotations

import bisect
import contextlib
import dataclasses
import enum
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

from racing_demon.batch import iter_verified, iter_verified_on_dask
from racing_demon.files import open_regular, shown_name
from racing_demon.game.deal import check_reveal
from racing_demon.game.duplicate import Shape
from racing_demon.game.flow import FlowCode, HandStart
from racing_demon.log.reader import (
    DEFAULT_LIMITS,
    Limits,
    ReadError,
    iter_raw_lines,
    read_canonical_line,
)
from racing_demon.log.records import Genesis, Record, parse_record
from racing_demon.outcomes import ExitCode
from racing_demon.replay import find_secret
from racing_demon.report.text import Verbosity, printable
from racing_demon.report.verify import finding_document
from racing_demon.schema import record_errors
from racing_demon.tournament.plan import (
    Plan,
    PlanCode,
    PlanError,
    check_plan,
    contributions_summary,
)
from racing_demon.verify import Finding, Report, Settings, Verdict, VerifyCode
from racing_demon.verify.step01_framing import NOT_A_LOG
from racing_demon.wording import plural

# -- the pure core ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TableResult:
    """What one table's verified log scores: the players in seat order, and the scores of
    the hands it played, ``hands[h - 1][seat]`` (fewer than the plan's when the match
    ended early)."""

    table: int
    players: tuple[str, ...]
    hands: tuple[tuple[int, ...], ...]
    log: str


@dataclass(frozen=True, slots=True)
class Result:
    """One result on a pack: the hand score of the seat that played it, and its
    matchpoints against the other results on the pack."""

    table: int
    seat: int
    player: str
    score: int
    matchpoints: int  # 2 per result beaten, 1 per tie
    factored: Fraction  # on the field's top (Neuberg); the matchpoints when the pack is full
    log: str


def _top_of(results: int) -> int:
    """The most matchpoints a result on a pack of ``results`` results can earn: 2 for each
    other result."""
    return 2 * max(0, results - 1)


@dataclass(frozen=True, slots=True)
class PackRecord:
    """Every result on pack ``index`` of ``hand`` (pack ``number`` for people), the best
    score first, then in table order."""

    hand: int
    index: int
    number: int
    results: tuple[Result, ...]

    @property
    def top(self) -> int:
        """The most matchpoints a result on this pack can earn."""
        return _top_of(len(self.results))


@dataclass(frozen=True, slots=True)
class Entry:
    """One player's line of the standings: a seat of a scored table."""

    table: int
    seat: int
    player: str
    log: str
    raw_total: int  # the sum of the player's hand scores
    packs: int  # the packs the player's results are on (one a hand played)
    matchpoints: Fraction  # the sum of the player's factored matchpoints
    top: int  # packs times the field's top
    rank: int  # from 1; players sharing a rank have the same one
    shared: bool

    @property
    def percentage(self) -> Fraction | None:
        """The duplicate score: matchpoints as a share of the top, in percent; None when
        no pack had two results, so nothing could be compared."""
        return None if self.top == 0 else 100 * self.matchpoints / self.top

    @property
    def rank_label(self) -> str:
        """The rank as the standings show it: ``=3`` for a rank shared, as in bridge."""
        return f"={self.rank}" if self.shared else str(self.rank)


@dataclass(frozen=True, slots=True)
class Scores:
    """The standings of the scored tables, and every pack's results."""

    shape: Shape
    field: int  # the results on the most played pack: every factored top is 2(field - 1)
    entries: tuple[Entry, ...]  # in standings order
    packs: tuple[PackRecord, ...]  # by pack number

    @property
    def top(self) -> int:
        """A full pack's top, which every factored result is on."""
        return _top_of(self.field)


def seat_of(shape: Shape, table: int, index: int) -> int:
    """The seat of ``table`` that plays pack ``index`` of every hand (the rotation,
    ``Shape.pack_index``, read the other way)."""
    shape.pack_index(table, 0)  # a table of the tournament
    if not 0 <= index < shape.seats:
        raise ValueError(f"no pack {index} in a hand of this tournament")
    # k = (s + t - 1) mod S, so s = (k - t + 1) mod S: one step, not a search of the seats.
    return (index - table + 1) % shape.seats


def score(shape: Shape, results: Iterable[TableResult]) -> Scores:
    """Compare every result on a pack with the others on it, and rank the players.

    On a pack with ``n`` results each result earns 2 matchpoints for every result it
    beats and 1 for every tie: the top is 2(n - 1). A pack with fewer results than the
    most played pack (``field`` results) is factored up to the field's top by Neuberg's
    formula, ``(MP + 1) * field / n - 1``, as duplicate bridge's scorers do for a board
    played fewer times; a lone result gets an average. A player's percentage is the sum
    of their factored matchpoints over the sum of their tops. Players are ranked by
    percentage, then by raw total, both higher first; players equal on both share a rank.
    Raises ValueError for results that do not fit ``shape``.
    """
    tables = sorted(results, key=lambda result: result.table)
    _check_results(shape, tables)
    played = [
        (
            hand,
            index,
            [
                (result, seat_of(shape, result.table, index))
                for result in tables
                if len(result.hands) >= hand
            ],
        )
        for hand in range(1, shape.hands + 1)
        for index in range(shape.seats)
    ]
    field = max((len(on_pack) for _, _, on_pack in played), default=0)
    packs = tuple(
        PackRecord(hand, index, shape.pack_number(hand, index), _compared(hand, on_pack, field))
        for hand, index, on_pack in played
    )
    return Scores(shape, field, _ranked(_entries(tables, packs, field)), packs)


def _check_results(shape: Shape, tables: Sequence[TableResult]) -> None:
    seen: set[int] = set()
    for result in tables:
        shape.pack_index(result.table, 0)  # a table of the tournament
        if result.table in seen:
            raise ValueError(f"two results for table {result.table}")
        seen.add(result.table)
        if len(result.players) != shape.seats:
            raise ValueError(
                f"table {result.table} lists {plural(len(result.players), 'player')}, "
                f"not {shape.seats}"
            )
        if len(result.hands) > shape.hands:
            raise ValueError(
                f"table {result.table} has {plural(len(result.hands), 'hand')}, "
                f"not at most {shape.hands}"
            )
        for number, scores in enumerate(result.hands, 1):
            if len(scores) != shape.seats:
                raise ValueError(
                    f"table {result.table}, hand {number}: {len(scores)} scores, not {shape.seats}"
                )


def _compared(
    hand: int, on_pack: Sequence[tuple[TableResult, int]], field: int
) -> tuple[Result, ...]:
    scores = [result.hands[hand - 1][seat] for result, seat in on_pack]
    # Counted in the sorted scores, not against every other result: a pack of a
    # 4096-table tournament has 4096 results, and comparing each with each took seconds.
    ordered = sorted(scores)
    compared = []
    for (result, seat), own in zip(on_pack, scores, strict=True):
        beaten = bisect.bisect_left(ordered, own)  # the results below it
        tied = bisect.bisect_right(ordered, own) - beaten - 1  # not with itself
        matchpoints = 2 * beaten + tied
        compared.append(
            Result(
                result.table,
                seat,
                result.players[seat],
                own,
                matchpoints,
                _factored(matchpoints, len(scores), field),
                result.log,
            )
        )
    return tuple(sorted(compared, key=lambda result: (-result.score, result.table)))


def _factored(matchpoints: int, results: int, field: int) -> Fraction:
    """Neuberg's formula on the 2-per-beat scale: the matchpoints a result on a pack of
    ``results`` results would be worth on a pack of ``field``. It keeps an average an
    average (``results - 1`` becomes ``field - 1``) and a top short of the full top, since
    fewer comparisons say less."""
    if results == field:
        return Fraction(matchpoints)
    return Fraction((matchpoints + 1) * field, results) - 1


def _entries(
    tables: Sequence[TableResult], packs: Sequence[PackRecord], field: int
) -> Iterator[Entry]:
    earned: dict[tuple[int, int], Fraction] = {}
    for pack in packs:
        for on_pack in pack.results:
            key = (on_pack.table, on_pack.seat)
            earned[key] = earned.get(key, Fraction(0)) + on_pack.factored
    full_top = _top_of(field)
    for result in tables:
        for seat, player in enumerate(result.players):
            yield Entry(
                result.table,
                seat,
                player,
                result.log,
                sum(scores[seat] for scores in result.hands),
                len(result.hands),
                earned.get((result.table, seat), Fraction(0)),
                len(result.hands) * full_top,
                rank=0,
                shared=False,
            )


def _ranked(entries: Iterable[Entry]) -> tuple[Entry, ...]:
    """The standings order: percentage, then raw total, both higher first (no percentage
    comes after every percentage), then by table and seat, which ranks nobody."""

    def merit(entry: Entry) -> tuple[bool, Fraction, int]:
        percentage = entry.percentage
        return (percentage is not None, percentage or Fraction(0), entry.raw_total)

    ordered = sorted(entries, key=lambda entry: (entry.table, entry.seat))
    ordered.sort(key=merit, reverse=True)
    alike = Counter(merit(entry) for entry in ordered)
    ranked: list[Entry] = []
    for position, entry in enumerate(ordered):
        rank = position + 1
        if ranked and merit(entry) == merit(ordered[position - 1]):
            rank = ranked[-1].rank
        ranked.append(dataclasses.replace(entry, rank=rank, shared=alike[merit(entry)] > 1))
    return tuple(ranked)


# -- the collecting layer -----------------------------------------------------------------


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
    LOG_CHANGED = "LOG_CHANGED"  # the genesis read after verifying is not the verified one
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
    if scheduler is not None:
        reports = iter_verified_on_dask(logs, settings, scheduler)
    else:
        reports = iter_verified(logs, settings, jobs)
    problems: list[Problem] = []
    claims: list[_Claim] = []
    with contextlib.closing(reports):
        for path, report in zip(logs, reports, strict=True):
            outcome = _checked(plan, path, report, limits)
            if isinstance(outcome, _Claim):
                claims.append(outcome)
            else:
                problems.append(outcome)
    results, table_problems = _by_table(plan.shape, claims)
    secret = _revealed_secret(plan, results, limits)
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


def _checked(plan: Plan, path: Path, report: Report, limits: Limits) -> _Claim | Problem:
    """The log's claim on a table of the plan, or why it has none (the first check that
    fails, in the order docs/tournament-scoring.md gives)."""
    log = shown_name(path)  # as the report names it: valid UTF-8 in JSON
    if report.verdict is Verdict.UNREADABLE:
        assert report.finding is not None
        return Problem(TournamentCode.UNREADABLE, report.finding.message, log=log)
    read = read_genesis(path, limits)
    if read is None:
        if report.verdict is Verdict.VERIFIED:
            return Problem(TournamentCode.LOG_CHANGED, "the genesis can no longer be read", log=log)
        return _not_verified(None, log, report, limits, path)
    game, genesis = read
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
        return _Claim(table, log, _not_verified(table, log, report, limits, path), None, False)
    mismatch = _genesis_mismatch(plan, table, genesis)
    if mismatch is None and game != report.game:
        mismatch = Problem(
            TournamentCode.LOG_CHANGED,
            f"the log verified as game {report.game}, and now holds game {game}",
        )
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
    return _Claim(table, log, short, result)


def _not_verified(
    table: int | None, log: str, report: Report, limits: Limits, path: Path
) -> Problem:
    finding = report.finding
    assert finding is not None
    if report.verdict is Verdict.UNFINISHED:
        return Problem(
            TournamentCode.UNFINISHED,
            "the log has no final record: the table has not revealed the secret, or it "
            f"stopped ({finding.code})",
            table=table,
            hand=hand_at(path, None, limits),  # the hand it stopped in
            log=log,
            finding=finding,
        )
    code = {
        FlowCode.PACK_MISMATCH: TournamentCode.PACK_OUT_OF_PLAN,
        VerifyCode.WRONG_RULES: TournamentCode.WRONG_RULES,
    }.get(finding.code, TournamentCode.NOT_VERIFIED)
    hand = None if finding.line is None else hand_at(path, finding.line, limits)
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


def _revealed_secret(plan: Plan, results: Sequence[TableResult], limits: Limits) -> bytes | None:
    """The organiser's secret, as the first scored log reveals it: it verified, so its
    secret opens its commitment, which is the plan's; read again, so checked again."""
    for result in results:
        try:
            secret = find_secret(Path(result.log), limits)
        except (OSError, ValueError, ReadError):
            continue
        if secret is not None and check_reveal(secret, plan.commitment):
            return secret
    return None


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


# -- reading a log's genesis and hands ----------------------------------------------------


def _record(number: int, raw: bytes, limits: Limits) -> Record | None:
    """Line ``number`` as a record, or None when it is not one."""
    try:
        value = read_canonical_line(number, raw, limits).value
    except ReadError:
        return None
    if record_errors(value):
        return None
    return parse_record(value["body"])


def read_genesis(path: Path, limits: Limits = DEFAULT_LIMITS) -> tuple[str, Genesis] | None:
    """The game id and genesis of the log at ``path``, or None when its first line is no
    genesis (or the file cannot be read)."""
    try:
        with open_regular(path) as stream:
            for number, raw in iter_raw_lines(stream, limits):
                record = _record(number, raw, limits)
                if record is None or not isinstance(record.payload, Genesis):
                    return None
                return record.game, record.payload
    except (OSError, ReadError):
        return None
    return None


def hand_at(path: Path, line: int | None, limits: Limits = DEFAULT_LIMITS) -> int | None:
    """The hand that line ``line`` of the log belongs to (None: its last line): the last
    hand started at or before it; None before the first hand, and where the lines stop
    being records."""
    hand = None
    try:
        with open_regular(path) as stream:
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


# -- text and JSON --------------------------------------------------------------------------

STANDINGS_FORMAT = "racing-demon/tournament-standings/v1"


def _hundredths(value: Fraction) -> float:
    """A matchpoint sum or a percentage as reports print it; ranks use the exact value."""
    return round(float(value), 2)


def where(problem: Problem) -> str:
    """``table 3, hand 2, seat 1``: what a problem concerns, or ``tournament``."""
    parts = [
        f"{name} {value}"
        for name, value in (
            ("table", problem.table),
            ("hand", problem.hand),
            ("seat", problem.seat),
        )
        if value is not None
    ]
    return ", ".join(parts) or "tournament"


def standings_text(standings: Standings, verbosity: Verbosity = Verbosity.NORMAL) -> str:
    """The tournament, its problems, then the standings, for people; with ``QUIET`` the
    tournament's line and the problems only, with ``VERBOSE`` every pack's results too."""
    plan, scores = standings.plan, standings.scores
    shape = plan.shape
    scored = len({entry.table for entry in scores.entries})
    lines = [
        f"tournament {printable(shape.name)} · {plural(shape.tables, 'table')} of "
        f"{plural(shape.seats, 'seat')} · {plural(shape.hands, 'hand')} · {scored:,} of "
        f"{shape.tables:,} scored from {plural(standings.logs, 'log')}",
        f"plan {plan.digest} · rules {printable(plan.rules.name)} sha256 {plan.rules.digest()}",
        "deal set "
        + plan.deal_set
        + (
            " · not checked: no scored log revealed the secret"
            if standings.secret is None
            else " · checked against the revealed secret"
        ),
        printable(contributions_summary(plan)),
    ]
    problems = []
    for problem in standings.problems:
        log = "" if problem.log is None else f"{printable(problem.log)}: "
        counted = "" if problem.excluded else " (still scored)"
        problems.append(
            f"  {where(problem)}: {problem.code}: {log}{printable(problem.message)}{counted}"
        )
    if verbosity is Verbosity.QUIET:
        return "\n".join([lines[0], *problems])
    if problems:
        lines += ["", f"problems ({len(problems)})", *problems]
    # With fewer than two results on every pack there is nothing to compare: no top.
    top = f"a pack's top is {scores.top}" if scores.top else "no pack has two results to compare"
    lines += [
        "",
        f"standings: 2 matchpoints per result beaten, 1 per tie; {top}",
        f"{'rank':>5}  {'player':<20} {'table':>5} {'seat':>4} {'raw':>6} "
        f"{'matchpoints':>11} {'top':>5} {'percent':>8}",
    ]
    for entry in scores.entries:
        percentage = entry.percentage
        percent = "-" if percentage is None else f"{_hundredths(percentage):.2f}%"
        lines.append(
            f"{entry.rank_label:>5}  {printable(entry.player):<20} {entry.table:>5} "
            f"{entry.seat:>4} {entry.raw_total:>6} {_hundredths(entry.matchpoints):>11.2f} "
            f"{entry.top:>5} {percent:>8}"
        )
    if not scores.entries:
        lines.append("  no table scored")
    if verbosity is Verbosity.VERBOSE:
        lines += _packs_text(scores.packs)
    return "\n".join(lines)


def _packs_text(packs: Sequence[PackRecord]) -> list[str]:
    """Every pack's results, best first, as the standings page's hand records list them."""
    lines = ["", f"packs ({len(packs)})"]
    for pack in packs:
        results = plural(len(pack.results), "result")
        lines.append(f"  pack {pack.number} (hand {pack.hand}): {results}, top {pack.top}")
        lines += [
            f"    {printable(result.player):<20} table {result.table:>3} seat {result.seat:>2} "
            f"score {result.score:>4} matchpoints {result.matchpoints:>3} "
            f"factored {_hundredths(result.factored):.2f}"
            for result in pack.results
        ]
    return lines


def standings_document(standings: Standings) -> dict[str, Any]:
    """The ``--json`` document (schemas/tournament-standings.schema.json)."""
    plan, scores = standings.plan, standings.scores
    shape = plan.shape
    return {
        "format": STANDINGS_FORMAT,
        "tournament": {
            "name": shape.name,
            "tables": shape.tables,
            "seats": shape.seats,
            "hands": shape.hands,
            "plan": plan.digest,
            "commitment": plan.commitment,
            "contributions": len(plan.contributions),
            "unsigned": plan.unsigned,
            "unbound": list(plan.unbound),
            "entropy": plan.entropy.hex(),
            "deal_set": plan.deal_set,
            "rules": {"name": plan.rules.name, "sha256": plan.rules.digest()},
        },
        "logs": standings.logs,
        "secret_revealed": standings.secret is not None,
        "field": scores.field,
        "top": scores.top,
        "standings": [
            {
                "rank": entry.rank,
                "shared": entry.shared,
                "player": entry.player,
                "table": entry.table,
                "seat": entry.seat,
                "log": entry.log,
                "raw_total": entry.raw_total,
                "packs": entry.packs,
                "matchpoints": _hundredths(entry.matchpoints),
                "top": entry.top,
                "percentage": None if entry.percentage is None else _hundredths(entry.percentage),
            }
            for entry in scores.entries
        ],
        "packs": [
            {
                "number": pack.number,
                "hand": pack.hand,
                "index": pack.index,
                "top": pack.top,
                "results": [
                    {
                        "table": result.table,
                        "seat": result.seat,
                        "player": result.player,
                        "score": result.score,
                        "matchpoints": result.matchpoints,
                        "factored": _hundredths(result.factored),
                        "log": result.log,
                    }
                    for result in pack.results
                ],
            }
            for pack in scores.packs
        ],
        "problems": [
            {
                "code": problem.code.value,
                "message": problem.message,
                "table": problem.table,
                "hand": problem.hand,
                "seat": problem.seat,
                "log": problem.log,
                "excluded": problem.excluded,
                "finding": None if problem.finding is None else finding_document(problem.finding),
            }
            for problem in standings.problems
        ],
        "exit_code": int(standings.exit_code),
    }


__all__ = [
    "Entry",
    "PackRecord",
    "Problem",
    "Result",
    "Scores",
    "Standings",
    "TableResult",
    "TournamentCode",
    "hand_at",
    "read_genesis",
    "score",
    "score_tournament",
    "seat_of",
    "standings_document",
    "standings_text",
    "where",
]
