"""The standings of a scored tournament, for people and for programs: the text
``tournament score`` prints, and its ``--json`` document (docs/tournament-scoring.md,
"Output"). The page is ``report.standings_html``'s; the reporters that print them, chosen
by name, are ``report.tournament``'s.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

from racing_demon.printing import printable
from racing_demon.report.text import Verbosity
from racing_demon.report_document import finding_document
from racing_demon.tournament.matchpoints import PackRecord
from racing_demon.tournament.plan import contributions_summary
from racing_demon.tournament.score import Problem, Standings
from racing_demon.wording import plural

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


def standings_json(standings: Standings, verbosity: Verbosity = Verbosity.NORMAL) -> str:
    """The ``--json`` document as printed; every verbosity prints all of it."""
    return json.dumps(standings_document(standings), indent=2)
