"""The reporters of the tournament's use cases (``racing_demon.tournament.organise``,
``.simulate.run_simulate``, ``.score_run.run_score``), chosen by name as check-jsonschema
chooses its reporters (``tournament_reporter_named``; issue 30, point 2).

``text`` prints what people read: the plan's and the terms' summaries, each table as it
plays, the standings (``report.standings``); ``json`` prints one document on standard
output instead (``check --json``, ``plan --json``, ``simulate --json``, ``score --json``),
with the same notes on standard error. Each is given where to print,
``echo(text, to_stderr)``, as the batch's reporters are (``report.batch``).
"""

from __future__ import annotations

import abc
import json
from pathlib import Path
from typing import Any

from racing_demon.files import Output, shown_name
from racing_demon.game.rules import Rules
from racing_demon.log.keys import key_id
from racing_demon.printing import printable
from racing_demon.profiles import CUSTOM_SUFFIX, differences_from_builtin
from racing_demon.report.batch import Echo, print_echo
from racing_demon.report.simulation import simulated_table
from racing_demon.report.standings import standings_document, standings_json, standings_text
from racing_demon.report.standings_html import standings_page, viewer_links
from racing_demon.report.text import Verbosity
from racing_demon.sim.simulate import Simulation
from racing_demon.tournament.contribute import Contribution, Terms
from racing_demon.tournament.organise import PlanCheck
from racing_demon.tournament.plan import Plan, contributions_summary
from racing_demon.tournament.score import Standings
from racing_demon.tournament.simulate import SimulateRun, TournamentSimulation
from racing_demon.wording import plural

# The standings' printers were this module's first, and are documented from here
# (docs/tournament-scoring.md, "In a program").
__all__ = [
    "CHECK_FORMAT",
    "PLAN_REPORT_FORMAT",
    "REPORTERS",
    "TOURNAMENT_SIMULATION_FORMAT",
    "JsonTournamentReporter",
    "TextTournamentReporter",
    "TournamentReporter",
    "report_standings",
    "standings_document",
    "standings_text",
    "tournament_reporter_named",
    "why_custom",
]

CHECK_FORMAT = "racing-demon/tournament-check/v1"
PLAN_REPORT_FORMAT = "racing-demon/tournament-plan-report/v1"
TOURNAMENT_SIMULATION_FORMAT = "racing-demon/tournament-simulation-report/v1"


def why_custom(rules: Rules, hands: int) -> str | None:
    """Why a tournament's rules are a custom variant of a built-in profile (the changes
    that make every table play exactly its hands, and any the organiser's own profile
    made), or None when they are a built-in profile or none's variant."""
    differences = differences_from_builtin(rules)
    if not differences:
        return None
    base = rules.name.removesuffix(CUSTOM_SUFFIX)
    lines = [
        f"rules {printable(rules.name)}, not {base}: every table of a tournament plays exactly "
        f"{plural(hands, 'hand')} (no target; a tie for the lead shares the win), "
        f"so the rules differ from the built-in {base}:",
        *(f"  {printable(difference)}" for difference in differences),
    ]
    return "\n".join(lines)


def plan_summary(plan: Plan) -> str:
    """A plan's figures, as ``plan`` and ``check`` print them."""
    shape = plan.shape
    lines = [
        f"tournament   {printable(shape.name)}: {plural(shape.tables, 'table')} of "
        f"{plural(shape.seats, 'seat')}, {plural(shape.hands, 'hand')}, "
        f"rules {printable(plan.rules.name)}",
        printable(contributions_summary(plan)),
        f"commitment C {plan.commitment}",
        f"entropy    E {plan.entropy.hex()}",
        f"deal set   D {plan.deal_set}   publish with the plan, before play",
        f"plan       P {plan.digest}   every table's log names it",
    ]
    return "\n".join(lines)


def terms_summary(terms: Terms) -> str:
    """The published terms, as ``commit`` and ``contribute`` print them."""
    shape = terms.shape
    return "\n".join(
        [
            f"tournament   {printable(shape.name)}: {plural(shape.tables, 'table')} of "
            f"{shape.seats} seats, {plural(shape.hands, 'hand')}, rules "
            f"{printable(terms.rules.name)} sha256 {terms.rules.digest()}",
            f"commitment C {terms.commitment}",
        ]
    )


def plan_figures(plan: Plan) -> dict[str, Any]:
    """A plan's figures, as ``check --json`` and ``plan --json`` give them."""
    shape = plan.shape
    return {
        "name": shape.name,
        "tables": shape.tables,
        "seats": shape.seats,
        "hands": shape.hands,
        "rules": plan.rules.name,
        "rules_sha256": plan.rules.digest(),
        "commitment": plan.commitment,
        "contributions": len(plan.contributions),
        "signed": len(plan.contributions) - plan.unsigned,
        "unsigned": plan.unsigned,
        "unbound": list(plan.unbound),
        "entropy": plan.entropy.hex(),
        "deal_set": plan.deal_set,
        "plan": plan.digest,
    }


def check_document(check: PlanCheck) -> dict[str, Any]:
    """``check --json`` (schemas/tournament-check.schema.json)."""
    error = check.error
    return {
        "format": CHECK_FORMAT,
        "plan_file": shown_name(check.plan_file),
        "ok": error is None,
        "secret_checked": check.secret_checked,
        "code": None if error is None else str(error.code),
        "message": None if error is None else printable(f"{error.member}: {error.message}"),
        "tournament": None if check.plan is None else plan_figures(check.plan),
    }


def plan_report(plan: Plan, output: Output, sheets: Output | None) -> dict[str, Any]:
    """``plan --json`` (schemas/tournament-plan-report.schema.json)."""
    return {
        "format": PLAN_REPORT_FORMAT,
        "plan_file": shown_name(output.shown),
        "sheets": None if sheets is None else shown_name(sheets.shown),
        "tournament": plan_figures(plan),
    }


def simulation_report(run: SimulateRun, played: TournamentSimulation) -> dict[str, Any]:
    """``tournament simulate --json`` (schemas/tournament-simulation-report.schema.json)."""
    return {
        "format": TOURNAMENT_SIMULATION_FORMAT,
        "plan_file": shown_name(run.plan_file),
        "plan": played.plan.digest,
        "out": shown_name(run.out),
        "table_key": shown_name(run.table_pub),
        "tables": [
            {
                "table": number,
                **simulated_table(table),
                "receipts": [shown_name(path) for path in table.receipts],
            }
            for number, table in enumerate(played.tables, start=1)
        ],
    }


def table_line(simulation: Simulation) -> str:
    """One simulated table, as it plays out."""
    totals = " ".join(f"{total:>5}" for total in simulation.match.totals)
    return (
        f"{printable(simulation.path.name):<16} {plural(simulation.match.played, 'hand')}, "
        f"totals {totals}, {plural(simulation.tally.submissions, 'submission')}"
    )


class TournamentReporter(abc.ABC):
    """What both reporters share: the notes on standard error (the terms and contributions
    written, why the rules are custom, the page written), the standings page, and where
    to print."""

    whole_document = False

    def __init__(self, verbosity: Verbosity = Verbosity.NORMAL, echo: Echo = print_echo) -> None:
        self.verbosity = verbosity
        self._echo = echo

    def committed(self, terms: Terms, output: Output) -> None:
        self._echo(f"wrote {printable(output.shown)}", True)
        self._echo(terms_summary(terms), True)
        note = why_custom(terms.rules, terms.shape.hands)
        if note is not None:  # as the plan says it: --rules nertz writes nertz-custom
            self._echo(note, True)
        self._echo("publish it before collecting any contribution", True)

    def contributed(self, contribution: Contribution, terms: Terms, output: Output) -> None:
        key = contribution.key
        how = "unsigned" if key is None else f"signed by key {key_id(key)}"
        by, shown = printable(contribution.by), printable(output.shown)
        self._echo(f"contribution by {by} ({how}) written to {shown}", True)
        self._echo(terms_summary(terms), True)

    def plan_made(self, plan: Plan) -> None:
        note = why_custom(plan.rules, plan.shape.hands)
        if note is not None:
            # A note, whatever the output: --rules nertz writing nertz-custom must say why.
            self._echo(note, True)

    def page(self, standings: Standings, at: Path | None) -> bytes:
        return standings_page(standings, viewer_links(standings, at)).encode("utf-8")

    def page_written(self, output: Output, size: int) -> None:
        if not output.is_stdout and self.verbosity is not Verbosity.QUIET:
            # On standard error, out of the way of the standings or the JSON.
            self._echo(f"wrote {printable(output.shown)} ({plural(size, 'byte')})", True)

    def scored(self, standings: Standings) -> None:
        self._echo(self.standings(standings), False)

    @abc.abstractmethod
    def standings(self, standings: Standings) -> str:
        """The standings as this reporter prints them."""

    @abc.abstractmethod
    def planned(self, plan: Plan, output: Output, sheets: Output | None) -> None:
        """A plan, once written."""

    @abc.abstractmethod
    def checked(self, check: PlanCheck) -> None:
        """A plan checked, or refused."""

    @abc.abstractmethod
    def table_played(self, simulation: Simulation) -> None:
        """A simulated table, once it has played out."""

    @abc.abstractmethod
    def simulated(self, run: SimulateRun, played: TournamentSimulation) -> None:
        """Every simulated table, once the secret is revealed."""


class TextTournamentReporter(TournamentReporter):
    """Lines for people: the plan's summary (on standard error when the plan itself goes
    to standard output), a line per table as it plays, the standings' text."""

    def standings(self, standings: Standings) -> str:
        return standings_text(standings, self.verbosity)

    def planned(self, plan: Plan, output: Output, sheets: Output | None) -> None:
        to_stderr = output.is_stdout
        self._echo(f"wrote {printable(output.shown)}", to_stderr)
        self._echo(plan_summary(plan), to_stderr)
        if sheets is not None:
            self._echo(f"sheets {printable(sheets.shown)}", to_stderr)

    def checked(self, check: PlanCheck) -> None:
        shown = printable(str(check.plan_file))
        if check.error is not None:
            self._echo(f"{shown}: {printable(str(check.error))}", True)
            return
        assert check.plan is not None
        self._echo(f"ok: {shown} checks", False)
        self._echo(plan_summary(check.plan), False)
        if not check.secret_checked:
            self._echo(
                "not checked: the deal set D, which needs the secret (check again with "
                "--secret once every table has finished)",
                False,
            )
        else:
            self._echo(
                "the secret opens C and deals D: the published deal set is the one played", False
            )

    def table_played(self, simulation: Simulation) -> None:
        self._echo(table_line(simulation), False)

    def simulated(self, run: SimulateRun, played: TournamentSimulation) -> None:
        if run.receipts:  # their names follow the logs': docs/tournament.md
            self._echo(
                "kept each seat's receipts beside its table's log "
                "(table-T.seatN.receipts.jsonl: audit LOG --receipts ...)",
                False,
            )
        self._echo(
            f"revealed the secret in every table's final record; score with:\n"
            f"  racing-demon tournament score {printable(str(run.plan_file))} "
            f"{printable(str(run.out))} --table-key {printable(run.table_pub)}",
            False,
        )


class JsonTournamentReporter(TournamentReporter):
    """One document on standard output, whatever the verbosity; a simulated table's line
    is progress on standard error."""

    whole_document = True

    def standings(self, standings: Standings) -> str:
        return standings_json(standings, self.verbosity)

    def planned(self, plan: Plan, output: Output, sheets: Output | None) -> None:
        document = plan_report(plan, output, sheets)
        self._echo(json.dumps(document, indent=2, ensure_ascii=False), False)

    def checked(self, check: PlanCheck) -> None:
        self._echo(json.dumps(check_document(check), indent=2), False)

    def table_played(self, simulation: Simulation) -> None:
        self._echo(table_line(simulation), True)

    def simulated(self, run: SimulateRun, played: TournamentSimulation) -> None:
        document = simulation_report(run, played)
        self._echo(json.dumps(document, indent=2, ensure_ascii=False), False)


REPORTERS: dict[str, type[TournamentReporter]] = {
    "text": TextTournamentReporter,
    "json": JsonTournamentReporter,
}


def tournament_reporter_named(
    name: str, verbosity: Verbosity = Verbosity.NORMAL, echo: Echo = print_echo
) -> TournamentReporter:
    """The reporter called ``name`` (a key of ``REPORTERS``); KeyError for another."""
    return REPORTERS[name](verbosity, echo)


def report_standings(
    standings: Standings, reporter: str, verbosity: Verbosity = Verbosity.NORMAL
) -> str:
    """``standings`` as the reporter named ``reporter`` (``text`` or ``json``) writes them."""
    return tournament_reporter_named(reporter, verbosity).standings(standings)
