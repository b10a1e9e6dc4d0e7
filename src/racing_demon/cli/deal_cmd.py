"""``racing-demon deal``: print the layout a seed deals."""

from __future__ import annotations

import json

import click

from racing_demon.cli.options import json_option, rules_option
from racing_demon.game.deal import MatchSeed, deal_hand
from racing_demon.game.rules import Rules
from racing_demon.report.text import deal_document, deal_text


@click.command(
    epilog="""\b
Examples:
  racing-demon deal --seed demo --players 2
  racing-demon deal --seed "final 2026" --players 4 --hand 3 \\
      --rules nertz --json
"""
)
@click.option("--seed", required=True, help="A plain seed string (reproducible deals).")
@click.option(
    "--players", type=click.IntRange(2, 16), required=True, help="Number of seats at the table."
)
@click.option("--hand", type=click.IntRange(1, 2**32 - 1), default=1, show_default=True)
@rules_option
@json_option
def deal(seed: str, players: int, hand: int, rules: Rules, as_json: bool) -> None:
    """Print each seat's layout for one hand dealt from SEED.

    Every pack is derived from the seed by the published algorithm, so anyone
    can regenerate the same deal (racing-demon docs deal-spec).
    """
    try:
        match_seed = MatchSeed.from_plain(seed)
        state, packs = deal_hand(rules, match_seed, hand, players)
    except ValueError as error:
        raise click.UsageError(str(error)) from error
    label = json.dumps(seed, ensure_ascii=False)
    if as_json:
        document = deal_document(state, seed, packs)
        click.echo(json.dumps(document, indent=2, ensure_ascii=False))
    else:
        click.echo(deal_text(state, label, packs))
