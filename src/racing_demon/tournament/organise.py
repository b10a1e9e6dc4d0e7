"""The organiser's use cases: ``run_commit``, ``run_contribute``, ``run_plan`` and
``run_check`` do what ``racing-demon tournament commit``, ``contribute``, ``plan`` and
``check`` do, for any caller (the command line, a server), without click (issue 30,
point 2; docs/tournament.md).

Each takes its settings as one frozen value and a reporter, checks every output before
any work, writes the files through the caller's ``open_output`` and returns what it made.
The reporter (text or JSON, chosen by name in ``racing_demon.report.tournament``) decides
every word printed; this module decides what is read, checked and written. A setting that
cannot be used is a ``TournamentUsageError`` naming its option (the command line's exit 2).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from racing_demon.files import Output
from racing_demon.game.duplicate import Shape
from racing_demon.game.rules import Rules
from racing_demon.outcomes import ExitCode
from racing_demon.tournament import plan as plan_module
from racing_demon.tournament.contribute import (
    Contribution,
    Terms,
    contribution_document,
    sign_contribution,
    unsigned_contribution,
)
from racing_demon.tournament.outputs import (
    OpenOutput,
    TournamentUsageError,
    checked_output,
    plain_output,
    write_output,
)
from racing_demon.tournament.plan import (
    Plan,
    PlanCode,
    PlanError,
    check_plan,
    load_contribution,
    load_plan,
    load_terms,
    make_plan,
    make_terms,
)
from racing_demon.tournament.sheets import render_sheets


@dataclass(frozen=True, kw_only=True)
class CommitRun:
    """``tournament commit``'s settings: the terms to publish, and where."""

    secret: bytes  # the organiser's
    shape: Shape
    rules: Rules
    out: str = "-"  # the commitment file ("-": standard output)
    replace: bool = False  # --force
    inputs: Sequence[Path] = ()  # the files read (the secret, a profile): never replaced


@dataclass(frozen=True, kw_only=True)
class ContributeRun:
    """``tournament contribute``'s settings. ``signing_key`` is asked for only once the
    terms and the output check (the command line prompts for a passphrase then); without
    it the contribution is unsigned."""

    terms_file: Path
    by: str
    signing_key: Callable[[], Ed25519PrivateKey] | None = None
    out: str = "-"
    replace: bool = False
    inputs: Sequence[Path] = ()


@dataclass(frozen=True, kw_only=True)
class PlanRun:
    """``tournament plan``'s settings: the terms again, the contributions to them, and
    where the plan (and its sheets) go."""

    secret: bytes
    shape: Shape
    rules: Rules
    contributions: Sequence[Path]
    out: str
    sheets: str | None = None
    replace: bool = False
    inputs: Sequence[Path] = ()  # the contributions, the secret, a profile


@dataclass(frozen=True, kw_only=True)
class CheckRun:
    """``tournament check``'s settings: the plan, and the revealed secret once there is one."""

    plan_file: Path
    secret: bytes | None = None
    sheets: str | None = None  # write the sheets of a plan that checks
    replace: bool = False
    inputs: Sequence[Path] = ()


@dataclass(frozen=True)
class PlanCheck:
    """What ``run_check`` found: the plan that checks, or why it does not."""

    plan_file: Path
    secret_checked: bool
    plan: Plan | None
    error: PlanError | None

    @property
    def exit_code(self) -> ExitCode:
        """0 the plan checks; 2 it cannot be read; else 1."""
        if self.error is None:
            return ExitCode.OK
        return ExitCode.UNUSABLE if self.error.code is PlanCode.UNREADABLE else ExitCode.NO


class OrganiserReporter(Protocol):
    """What the organiser's use cases print: ``racing_demon.report.tournament`` has the
    text and JSON ones."""

    @property
    def whole_document(self) -> bool:
        """Whether it prints one document on standard output (where no plan can go too)."""

    def committed(self, terms: Terms, output: Output) -> None:
        """The terms, once written to ``output``."""

    def contributed(self, contribution: Contribution, terms: Terms, output: Output) -> None:
        """A contribution to ``terms``, once written to ``output``."""

    def plan_made(self, plan: Plan) -> None:
        """A plan, made and not yet written (why its rules differ from a built-in's)."""

    def planned(self, plan: Plan, output: Output, sheets: Output | None) -> None:
        """A plan, once written to ``output`` (and its sheets to ``sheets``)."""

    def checked(self, check: PlanCheck) -> None:
        """A plan checked, or refused."""


def _document_bytes(document: dict[str, Any]) -> bytes:
    return (json.dumps(document, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def _terms(secret: bytes, shape: Shape, rules: Rules) -> Terms:
    try:
        return make_terms(secret, shape, rules)
    except PlanError as error:
        raise TournamentUsageError(str(error), "--seats") from error


def run_commit(
    run: CommitRun, reporter: OrganiserReporter, open_output: OpenOutput = plain_output
) -> Terms:
    """Write the terms ``run`` gives (docs/tournament.md, "Commit"), report them and
    return them. Raises TournamentUsageError before anything is written."""
    output = checked_output(run.out, replace=run.replace, inputs=run.inputs, option="--out")
    terms = _terms(run.secret, run.shape, run.rules)
    write_output(open_output, output, "--out", _document_bytes(terms.to_document()))
    reporter.committed(terms, output)
    return terms


def run_contribute(
    run: ContributeRun, reporter: OrganiserReporter, open_output: OpenOutput = plain_output
) -> Contribution:
    """Write a contribution to the terms in ``run.terms_file``, signed with
    ``run.signing_key`` when there is one, report it and return it. Raises
    TournamentUsageError before anything is written."""
    try:
        terms = load_terms(run.terms_file)
    except PlanError as error:
        raise TournamentUsageError(f"{run.terms_file}: {error}", "COMMITMENT") from error
    output = checked_output(run.out, replace=run.replace, inputs=run.inputs, option="--out")
    if run.signing_key is None:
        contribution = unsigned_contribution(run.by)
    else:
        contribution = sign_contribution(run.signing_key(), terms, run.by)
    document = contribution_document(contribution, terms)
    write_output(open_output, output, "--out", _document_bytes(document))
    reporter.contributed(contribution, terms, output)
    return contribution


def run_plan(
    run: PlanRun, reporter: OrganiserReporter, open_output: OpenOutput = plain_output
) -> Plan:
    """Make the plan of ``run``'s terms and contributions, write it (and its sheets),
    report it and return it. Raises TournamentUsageError before anything is written."""
    output = checked_output(run.out, replace=run.replace, inputs=run.inputs, option="--out")
    if output.is_stdout and reporter.whole_document:
        # The plan and the report in one stream: neither could be read.
        raise TournamentUsageError("--json already goes to standard output", "--out")
    sheets = _sheets_output(run, output)
    terms = _terms(run.secret, run.shape, run.rules)
    collected = []
    for path in run.contributions:
        try:
            collected.append(load_contribution(path, terms))
        except PlanError as error:
            raise TournamentUsageError(f"{path}: {error}", "--contribution") from error
    try:
        made = make_plan(run.secret, run.shape, run.rules, tuple(collected))
    except PlanError as error:
        hint = "--seats" if error.member == "$.seats" else "--contribution"
        raise TournamentUsageError(str(error), hint) from error
    reporter.plan_made(made)
    data = _document_bytes(made.to_document())
    bound = plan_module.MAX_PLAN_BYTES  # read now: tests lower it to stand for a large plan
    if len(data) > bound:
        # load_plan reads no more (UNREADABLE): a plan nobody could check or score.
        raise TournamentUsageError(
            f"the plan file would be {len(data)} bytes; a plan is read up to "
            f"{bound} bytes: plan fewer tables, seats or hands",
            "--tables",
        )
    write_output(open_output, output, "--out", data)
    if sheets is not None:
        write_output(open_output, sheets, "--sheets", render_sheets(made).encode("utf-8"))
    reporter.planned(made, output, sheets)
    return made


def _sheets_output(run: PlanRun, plan_output: Output) -> Output | None:
    if run.sheets is None:
        return None
    output = checked_output(run.sheets, replace=run.replace, inputs=run.inputs, option="--sheets")
    if output.path is not None and output.path == plan_output.path:
        raise TournamentUsageError("the sheets and the plan need two files", "--sheets")
    if output.is_stdout and plan_output.is_stdout:
        raise TournamentUsageError("the plan already goes to standard output", "--sheets")
    return output


def run_check(
    run: CheckRun, reporter: OrganiserReporter, open_output: OpenOutput = plain_output
) -> PlanCheck:
    """Check the plan in ``run.plan_file`` (with the revealed secret, its deal set too),
    write its sheets when it checks and they are asked for, report it and return what
    was found (``PlanCheck.exit_code``). Raises TournamentUsageError for a sheets file
    that cannot be written, before the plan is read."""
    sheets = None
    if run.sheets is not None:
        sheets = checked_output(
            run.sheets, replace=run.replace, inputs=run.inputs, option="--sheets"
        )
    secret_checked = run.secret is not None
    try:
        loaded = load_plan(run.plan_file)
        check_plan(loaded, run.secret)
    except PlanError as error:
        refused = PlanCheck(run.plan_file, secret_checked, None, error)
        reporter.checked(refused)
        return refused
    if sheets is not None:
        write_output(open_output, sheets, "--sheets", render_sheets(loaded).encode("utf-8"))
    checked = PlanCheck(run.plan_file, secret_checked, loaded, None)
    reporter.checked(checked)
    return checked
