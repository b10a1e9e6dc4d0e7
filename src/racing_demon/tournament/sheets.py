"""The printable table sheets of a tournament plan: one HTML file, one printed page per
table, for the director to hand out before play (docs/tournament.md, "The sheets").

Each page names the tournament and the table, carries the three published checksums (the
organiser's commitment C, the deal set D and the plan P) so that anyone at the table can
compare them with the published plan, and lists for every seat the pack it plays in each
hand, with blanks for the players' names and the hand scores. The file loads nothing: its
style is inline and its policy forbids every load, so it prints the same offline.
"""

from __future__ import annotations

from html import escape
from typing import Final

from racing_demon.tournament.plan import Plan
from racing_demon.wording import plural

_STYLE: Final = """
@page { size: A4 landscape; margin: 12mm; }
body { font: 11pt/1.35 system-ui, sans-serif; color: #000; margin: 0; }
.sheet { break-after: page; page-break-after: always; padding: 4mm 0; }
.sheet:last-child { break-after: auto; page-break-after: auto; }
h1 { font-size: 18pt; margin: 0 0 1mm; }
h2 { font-size: 14pt; margin: 0 0 3mm; font-weight: normal; }
dl { display: grid; grid-template-columns: max-content 1fr; gap: 0.5mm 4mm; margin: 0 0 4mm; }
dt { font-weight: bold; }
dd { margin: 0; font-family: ui-monospace, monospace; font-size: 9pt; overflow-wrap: anywhere; }
table { border-collapse: collapse; width: 100%; }
th, td { border: 1px solid #000; padding: 1.5mm 2mm; text-align: center; }
td.name { width: 30%; }
td.score, td.total { min-width: 14mm; }
td.pack { font-weight: bold; }
p.note { font-size: 9pt; margin: 3mm 0 0; }
@media screen {
  body { margin: 1em auto; max-width: 60em; }
  .sheet { border-bottom: 2px dashed #888; }
}
"""

# Nothing loads: no script, no image, no font, no network (the style is inline).
_POLICY: Final = "default-src 'none'; style-src 'unsafe-inline'"


def render_sheets(plan: Plan) -> str:
    """The HTML of every table's sheet, one page each, every text escaped."""
    shape = plan.shape
    name = escape(shape.name)
    digest = plan.digest  # computed once: it hashes the whole plan
    pages = "\n".join(_sheet(plan, table, digest) for table in range(1, shape.tables + 1))
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{_POLICY}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{name}: table sheets</title>
<style>{_STYLE}</style>
</head>
<body>
{pages}
</body>
</html>
"""


def _sheet(plan: Plan, table: int, digest: str) -> str:
    shape = plan.shape
    hands = range(1, shape.hands + 1)
    head = "".join(f'<th colspan="2">Hand {hand}</th>' for hand in hands)
    sub = "".join("<th>Pack</th><th>Score</th>" for _ in hands)
    packs = {hand: plan.packs(table, hand) for hand in hands}
    rows = []
    for seat in range(shape.seats):
        cells = "".join(
            f'<td class="pack">{packs[hand][seat]}</td><td class="score"></td>' for hand in hands
        )
        rows.append(
            f'<tr><th scope="row">{seat}</th><td class="name"></td>{cells}'
            '<td class="total"></td></tr>'
        )
    body = "\n".join(rows)
    size = f"{plural(shape.seats, 'seat')} · {plural(shape.hands, 'hand')}"
    return f"""<section class="sheet" id="table-{table}">
<h1>{escape(shape.name)}</h1>
<h2>Table {table} of {shape.tables} · {size} ·
rules {escape(plan.rules.name)}</h2>
<dl>
<dt>Commitment C</dt><dd>{plan.commitment}</dd>
<dt>Deal set D</dt><dd>{plan.deal_set}</dd>
<dt>Plan P</dt><dd>{digest}</dd>
</dl>
<table>
<thead>
<tr><th rowspan="2">Seat</th><th rowspan="2">Player</th>{head}<th rowspan="2">Total</th></tr>
<tr>{sub}</tr>
</thead>
<tbody>
{body}
</tbody>
</table>
<p class="note">Each seat plays the numbered pack of each hand; every table plays the same
packs. Check C, D and P against the published plan: the table's log names P, and after
the last table finishes the organiser reveals the secret that opens C and deals D.</p>
</section>"""
