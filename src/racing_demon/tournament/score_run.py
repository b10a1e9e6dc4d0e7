"""The scoring use case: ``run_score`` does what ``racing-demon tournament score`` does,
for any caller (the command line, a server), without click (issue 30, point 2).

One call reads the plan, lists the logs its LOGS stand for, checks the page's output,
verifies and scores every log (``tournament.score.score_tournament``), writes the page and
hands the standings to a ``StandingsReporter``. The reporter (text or JSON, chosen by name
in ``racing_demon.report.tournament``) decides every word printed and the page's HTML;
this module decides what is read and written. Settings that contradict each other, or a
page that cannot be written, are a ``TournamentUsageError``; a plan or LOGS that cannot be
read, or workers that cannot verify, a ``CannotScore`` (the command line's exit 2 each).
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import BrokenExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from racing_demon.batch import ClusterError
from racing_demon.errors import RacingDemonError
from racing_demon.files import Output
from racing_demon.log.reader import DEFAULT_LIMITS, Limits
from racing_demon.printing import printable
from racing_demon.tournament.outputs import (
    OpenOutput,
    TournamentUsageError,
    checked_output,
    plain_output,
    write_output,
)
from racing_demon.tournament.plan import PlanError, load_plan
from racing_demon.tournament.score import NoLogToScore, Standings, logs_to_score, score_tournament


class CannotScore(RacingDemonError):
    """The plan or a LOGS cannot be read, or the workers could not verify the logs: the
    message, safe to print, names which."""


@dataclass(frozen=True, kw_only=True)
class ScoreRun:
    """``tournament score``'s settings."""

    plan_file: Path
    logs: Sequence[Path]  # LOGS...: folders of logs, or logs
    table_key: bytes  # the table's raw public key, pinned for every log
    html: str | None = None  # the standings page ("-": standard output)
    replace: bool = False  # --force: replace an existing page
    inputs: Sequence[Path] = ()  # the other files read (the plan, the key): never the page
    limits: Limits = DEFAULT_LIMITS
    jobs: int | None = None  # processes here; None: every core
    scheduler: str | None = None  # a Dask scheduler's address: verify there, not here


class StandingsReporter(Protocol):
    """What ``run_score`` prints: ``racing_demon.report.tournament`` has the text and JSON
    ones."""

    @property
    def whole_document(self) -> bool:
        """Whether it prints one document on standard output (where no page can go too)."""

    def page(self, standings: Standings, at: Path | None) -> bytes:
        """The standings page to write at ``at`` (None: standard output)."""

    def page_written(self, output: Output, size: int) -> None:
        """The page, once written: ``size`` bytes."""

    def scored(self, standings: Standings) -> None:
        """The standings, unless the page went to standard output alone."""


def run_score(
    run: ScoreRun, reporter: StandingsReporter, open_output: OpenOutput = plain_output
) -> Standings:
    """Score the tournament of ``run.plan_file`` from its logs, write the page, report the
    standings and return them (``Standings.exit_code``). Raises TournamentUsageError and
    CannotScore (docs above) before anything is reported."""
    if run.jobs is not None and run.scheduler is not None:
        raise TournamentUsageError(
            "--jobs counts processes on this machine: with --scheduler, the cluster's workers do"
        )
    try:
        plan = load_plan(run.plan_file)
        paths = logs_to_score(run.logs)
    except PlanError as error:
        raise CannotScore(
            f"PLAN {printable(str(run.plan_file))}: {printable(str(error))}"
        ) from error
    except NoLogToScore as error:
        raise CannotScore(
            f"LOGS {printable(str(error.named))}: {printable(error.reason)}"
        ) from error
    page = _page_output(run, paths, reporter)
    try:
        standings = score_tournament(
            plan,
            paths,
            run.table_key,
            limits=run.limits,
            jobs=run.jobs,
            scheduler=run.scheduler,
        )
    except (ClusterError, BrokenExecutor) as error:
        raise CannotScore(f"the logs could not be verified: {error}") from error
    if page is not None:
        data = reporter.page(standings, page.path)
        write_output(open_output, page, "--html", data)
        reporter.page_written(page, len(data))
    if page is None or not page.is_stdout:  # the page alone on standard output
        reporter.scored(standings)
    return standings


def _page_output(run: ScoreRun, logs: list[Path], reporter: StandingsReporter) -> Output | None:
    """Where the page goes, refused before any log is verified."""
    if run.html is None:
        return None
    output = checked_output(
        run.html, replace=run.replace, inputs=[*logs, *run.inputs], option="--html"
    )
    if output.is_stdout and reporter.whole_document:
        # The page and the JSON in one stream: neither could be read.
        raise TournamentUsageError("--json already goes to standard output", "--html")
    return output
