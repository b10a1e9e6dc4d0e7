"""The report of a simulated match (``racing-demon simulate``): text, and JSON, and the
reporters of ``racing_demon.sim.run.run_simulation`` that print them, chosen by name."""

from __future__ import annotations

import abc
import json
from collections.abc import Sequence
from typing import Any

from racing_demon.files import shown_name
from racing_demon.game.scoring import Match
from racing_demon.printing import printable
from racing_demon.report.echo import Echo, print_echo
from racing_demon.report.text import shown_seed
from racing_demon.sim.simulate import SeatReport, Simulation
from racing_demon.wording import plural

SIMULATION_FORMAT = "racing-demon/simulation-report/v1"
_HAND_ROWS = 14


def summary_text(result: Simulation, public_key: str) -> str:
    """One screen: who played, every hand's scores, totals, winners and what happened."""
    match, seats, tally = result.match, result.seats, result.tally
    lines = [
        f"{result.rules.name} · {plural(len(seats), 'player')} · seed {shown_seed(result.seed)} · "
        f"game {result.game}",
        "",
        "seat  player             latency     actions  idle",
    ]
    for number, seat in enumerate(seats):
        lines.append(
            f"{number:<5} {printable(seat.name):<18} {seat.latency!s:<11} {seat.actions:>7} "
            f"{seat.idle:>5}"
        )
    header = "".join(f"{'seat ' + str(number):>9}" for number in range(len(seats)))
    lines += ["", f"hand  ended by       {header}"]
    rows = []
    for hand in match.hands:
        ended = hand.reason.value + ("" if hand.ended_by is None else f" {hand.ended_by}")
        scores = "".join(f"{score:>9}" for score in hand.scores)
        rows.append(f"{hand.hand:<5} {ended:<15}{scores}")
    if len(rows) > _HAND_ROWS:  # one screen: the first hands and the last
        half = _HAND_ROWS // 2
        rows = [*rows[:half], f"…     {plural(len(rows) - 2 * half, 'more hand')}", *rows[-half:]]
    lines += rows
    lines.append(f"{'total':<21}" + "".join(f"{total:>9}" for total in match.totals))
    lines += ["", _winners_text(match, seats)]
    stale = sum(seat.stale for seat in seats)
    bounces = ", ".join(f"{code} {count}" for code, count in sorted(tally.bounces.items()))
    lines.append(
        f"{plural(tally.submissions, 'submission')}: {result.bounced:,} bounced"
        + (f" ({bounces})" if bounces else "")
        + f", {plural(result.ties, 'tie')}, {stale:,} dropped as stale"
    )
    lines.append(
        f"{plural(result.stall_shifts, 'stall shift')}, {result.blocked:,} blocked of "
        f"{plural(match.played, 'hand')}, {_duration(result.virtual_ms)} of simulated play"
    )
    log = printable(str(result.path))
    kept = ""
    if result.receipts:  # their names follow the log's: docs/simulation.md
        seats_receipts = plural(len(result.receipts), "seat's", "seats'")
        kept = f" and {seats_receipts} receipts ({printable(result.path.stem)}.seatN"
        kept += ".receipts.jsonl: audit --receipts)"
    lines += [
        "",
        f"wrote {log} ({plural(tally.records, 'record')}){kept}; check it with:",
        f"  racing-demon verify {log} --table-key {printable(public_key)}",
    ]
    return "\n".join(lines)


def _winners_text(match: Match, seats: Sequence[SeatReport]) -> str:
    winners = match.winners
    if not winners:
        return "no winner: the match was abandoned"
    best = match.totals[winners[0]]
    names = ", ".join(f"seat {seat} {printable(seats[seat].name)}" for seat in winners)
    shared = " (shared)" if len(winners) > 1 else ""
    return f"winner{'s' if len(winners) > 1 else ''}{shared}: {names} with {best}"


def _duration(ms: int) -> str:
    seconds = ms // 1000
    return f"{seconds // 60}m {seconds % 60:02d}s"


def simulation_document(result: Simulation, public_key: str) -> dict[str, Any]:
    """``simulate --json`` (schemas/simulation-report.schema.json): what ``summary_text``
    shows, every hand included."""
    match, tally = result.match, result.tally
    return {
        "format": SIMULATION_FORMAT,
        **simulated_table(result),
        "rules": result.rules.name,
        "seed": result.seed,
        "seats": [
            {
                "seat": number,
                "name": seat.name,
                "bot": seat.bot.name,
                "latency": {"mean_ms": seat.latency.mean_ms, "jitter_ms": seat.latency.jitter_ms},
                "actions": seat.actions,
                "idle": seat.idle,
                "stale": seat.stale,
            }
            for number, seat in enumerate(result.seats)
        ],
        "hands": [
            {
                "hand": hand.hand,
                "reason": hand.reason.value,
                "ended_by": hand.ended_by,
                "scores": list(hand.scores),
            }
            for hand in match.hands
        ],
        "winners": list(match.winners),
        "bounced": result.bounced,
        "bounces": dict(sorted(tally.bounces.items())),
        "ties": result.ties,
        "stall_shifts": result.stall_shifts,
        "blocked": result.blocked,
        "virtual_ms": result.virtual_ms,
        "receipts": [shown_name(path) for path in result.receipts],
        "table_key": shown_name(public_key),
    }


def simulated_table(result: Simulation) -> dict[str, Any]:
    """The figures of one simulated table that ``simulate --json`` and ``tournament
    simulate --json`` share."""
    return {
        "log": shown_name(result.path),
        "game": result.game,
        "records": result.tally.records,
        "submissions": result.tally.submissions,
        "played": result.match.played,
        "totals": list(result.match.totals),
    }


class Reporter(abc.ABC):
    """Prints a simulated match where its ``echo`` says."""

    whole_document = False

    def __init__(self, echo: Echo = print_echo) -> None:
        self._echo = echo

    @abc.abstractmethod
    def played(self, result: Simulation, public_key: str, *, to_stderr: bool) -> None:
        """The match played, once its log is written."""


class TextReporter(Reporter):
    """The one-screen summary (``summary_text``)."""

    def played(self, result: Simulation, public_key: str, *, to_stderr: bool) -> None:
        self._echo(summary_text(result, public_key), to_stderr)


class JsonReporter(Reporter):
    """The JSON document (``simulation_document``), every hand included."""

    whole_document = True

    def played(self, result: Simulation, public_key: str, *, to_stderr: bool) -> None:
        document = simulation_document(result, public_key)
        self._echo(json.dumps(document, indent=2, ensure_ascii=False), to_stderr)


REPORTERS: dict[str, type[Reporter]] = {"text": TextReporter, "json": JsonReporter}


def simulation_reporter_named(name: str, echo: Echo = print_echo) -> Reporter:
    """The reporter called ``name`` (a key of ``REPORTERS``); KeyError for another."""
    return REPORTERS[name](echo)
