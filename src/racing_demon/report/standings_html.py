"""The standings page: one self-contained HTML file with the standings, every problem, and
a hand record per pack (docs/tournament-scoring.md, "The standings page").

The page has no script and loads nothing (its Content-Security-Policy forbids every load);
everything a log or a file name brings onto it is escaped, so a player's name cannot add
markup. The same standings and links give the same bytes.
"""

from __future__ import annotations

import html
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from urllib.parse import quote

from racing_demon.game.cards import Card
from racing_demon.game.deal import derive_pack
from racing_demon.game.state import Seat
from racing_demon.printing import printable
from racing_demon.report.standings import STANDINGS_FORMAT, where
from racing_demon.tournament.matchpoints import Entry, PackRecord
from racing_demon.tournament.score import Problem, Standings
from racing_demon.wording import plural

_CSS = """
body { font: 15px/1.4 system-ui, sans-serif; margin: 2em auto; max-width: 62em; color: #111; }
h1 { font-size: 1.6em; margin-bottom: 0.2em; }
h2 { font-size: 1.25em; margin-top: 1.6em; border-bottom: 1px solid #999; }
h3 { font-size: 1.05em; margin: 1.2em 0 0.3em; }
table { border-collapse: collapse; margin: 0.4em 0; }
th, td { padding: 0.15em 0.6em; border-bottom: 1px solid #ddd; text-align: left; }
td.n, th.n { text-align: right; font-variant-numeric: tabular-nums; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: 0.1em 1em; }
dl.facts dt { font-weight: 600; }
code { font-size: 0.9em; word-break: break-all; }
.red { color: #c00; }
.problem td { background: #fff3f0; }
.kept td { background: #fffbe6; }
.layout { font-family: ui-monospace, monospace; margin: 0.3em 0; }
section.pack { break-inside: avoid; }
@media print { body { margin: 0; max-width: none; } a { color: inherit; } }
"""
_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src 'none'"


def _text(value: object) -> str:
    """Anything shown on the page, made printable and escaped for HTML."""
    return html.escape(printable(str(value)), quote=True)


def viewer_links(standings: Standings, page: Path | None) -> dict[str, str]:
    """For every scored log with a viewer page beside it (``<log stem>.html``, as
    ``racing-demon view`` writes one), the link to it from ``page`` (relative; from the
    working folder when the page goes to standard output)."""
    folder = Path.cwd() if page is None else page.resolve().parent
    links = {}
    for entry in standings.scores.entries:
        viewer = Path(entry.log).with_suffix(".html")
        if entry.log not in links and viewer.is_file():
            relative = os.path.relpath(viewer.resolve(), folder)
            links[entry.log] = quote(Path(relative).as_posix())
    return links


def standings_page(standings: Standings, links: Mapping[str, str] | None = None) -> str:
    """The page for ``standings``; ``links`` maps a log to the href of its viewer page."""
    plan, scores = standings.plan, standings.scores
    shape = plan.shape
    links = links or {}
    checked = (
        "checked against the revealed secret"
        if standings.secret is not None
        else "not checked: no scored log revealed the secret"
    )
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{_CSP}">',
        f'<meta name="generator" content="{STANDINGS_FORMAT}">',
        f"<title>{_text(shape.name)}: standings</title>",
        f"<style>{_CSS}</style>",
        "</head>",
        "<body>",
        f"<h1>{_text(shape.name)}</h1>",
        '<dl class="facts">',
        f"<dt>Size</dt><dd>{plural(shape.tables, 'table')} of {plural(shape.seats, 'seat')}, "
        f"{plural(shape.hands, 'hand')}</dd>",
        f"<dt>Rules</dt><dd>{_text(plan.rules.name)} <code>{plan.rules.digest()}</code></dd>",
        f"<dt>Plan</dt><dd><code>{plan.digest}</code></dd>",
        f"<dt>Commitment</dt><dd><code>{plan.commitment}</code></dd>",
        f"<dt>Deal set</dt><dd><code>{plan.deal_set}</code> ({checked})</dd>",
        f"<dt>Logs</dt><dd>{plural(standings.logs, 'log')} read, "
        f"{plural(len({entry.table for entry in scores.entries}), 'table')} scored</dd>",
        "</dl>",
    ]
    if standings.problems:
        parts += _problems(standings.problems)
    parts += _standings(scores.entries, scores.top, links)
    parts.append("<h2>Hand records</h2>")
    for pack in scores.packs:
        parts += _pack(standings, pack, links)
    parts += ["</body>", "</html>", ""]
    return "\n".join(parts)


def _problems(problems: Sequence[Problem]) -> list[str]:
    rows = [
        f'<tr class="{"problem" if problem.excluded else "kept"}"><td>{_text(where(problem))}'
        f"</td><td>{_text(problem.code)}</td><td>{_text(problem.log or '')}</td>"
        f"<td>{_text(problem.message)}"
        + ("" if problem.excluded else " (still scored)")
        + "</td></tr>"
        for problem in problems
    ]
    return [
        f"<h2>Problems ({len(problems)})</h2>",
        "<table>",
        "<tr><th>Where</th><th>Code</th><th>Log</th><th>What</th></tr>",
        *rows,
        "</table>",
    ]


def _player(player: str, log: str, links: Mapping[str, str]) -> str:
    name = _text(player)
    href = links.get(log)
    return name if href is None else f'<a href="{html.escape(href, quote=True)}">{name}</a>'


def _standings(entries: Sequence[Entry], top: int, links: Mapping[str, str]) -> list[str]:
    rows = []
    for entry in entries:
        percentage = entry.percentage
        percent = "-" if percentage is None else f"{float(percentage):.2f}%"
        rows.append(
            f'<tr><td class="n">{entry.rank_label}</td>'
            f"<td>{_player(entry.player, entry.log, links)}</td>"
            f'<td class="n">{entry.table}</td><td class="n">{entry.seat}</td>'
            f'<td class="n">{entry.raw_total}</td>'
            f'<td class="n">{float(entry.matchpoints):.2f}</td><td class="n">{entry.top}</td>'
            f'<td class="n">{percent}</td></tr>'
        )
    return [
        "<h2>Standings</h2>",
        "<p>2 matchpoints for every result beaten on the same pack, 1 for every tie; "
        + (f"a pack's top is {top}." if top else "no pack has two results to compare.")
        + " Ranked by percentage, then raw total; equal on both is a shared rank (=).</p>",
        "<table>",
        '<tr><th class="n">Rank</th><th>Player</th><th class="n">Table</th>'
        '<th class="n">Seat</th><th class="n">Raw</th><th class="n">Matchpoints</th>'
        '<th class="n">Top</th><th class="n">Percent</th></tr>',
        *rows,
        "</table>",
    ]


def _cards(cards: Iterable[Card]) -> str:
    shown = [
        f'<span class="red">{_text(card.display())}</span>'
        if card.is_red
        else _text(card.display())
        for card in cards
    ]
    return " ".join(shown) or "-"


def _layout(standings: Standings, pack: PackRecord) -> list[str]:
    """The pack as it was laid out (docs/deal-spec.md, "Layout"), once the secret is out."""
    plan, secret = standings.plan, standings.secret
    if secret is None:
        return ["<p>The layout is shown once a scored log reveals the secret.</p>"]
    shape = plan.shape
    cards = derive_pack(shape.seed(secret, plan.entropy), pack.hand, pack.index)
    seat = Seat.deal(cards, plan.rules.work_piles)
    work = " &nbsp; ".join(f"w{number} {_cards(pile)}" for number, pile in enumerate(seat.work, 1))
    return [
        '<div class="layout">',
        f"demon (top first): {_cards(reversed(seat.demon))}<br>",
        f"work: {work}<br>",
        f"stock (top first): {_cards(reversed(seat.stock))}",
        "</div>",
    ]


def _pack(standings: Standings, pack: PackRecord, links: Mapping[str, str]) -> list[str]:
    parts = [
        f'<section class="pack" id="pack-{pack.number}">',
        f"<h3>Pack {pack.number}: hand {pack.hand}, pack index {pack.index}</h3>",
        *_layout(standings, pack),
    ]
    if not pack.results:
        return [*parts, "<p>No result: no table that played it is scored.</p>", "</section>"]
    rows = [
        f"<tr><td>{_player(result.player, result.log, links)}</td>"
        f'<td class="n">{result.table}</td><td class="n">{result.seat}</td>'
        f'<td class="n">{result.score}</td><td class="n">{result.matchpoints}</td>'
        f'<td class="n">{float(result.factored):.2f}</td></tr>'
        for result in pack.results
    ]
    return [
        *parts,
        f"<p>{plural(len(pack.results), 'result')}; top {pack.top}.</p>",
        "<table>",
        '<tr><th>Player</th><th class="n">Table</th><th class="n">Seat</th>'
        '<th class="n">Score</th><th class="n">Matchpoints</th><th class="n">Factored</th></tr>',
        *rows,
        "</table>",
        "</section>",
    ]
