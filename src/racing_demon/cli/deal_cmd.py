"""``racing-demon deal``: print the layout a plain seed, a committed dealer secret or a
log's genesis deals; the use case is ``racing_demon.deal_run.run_deal``."""

from __future__ import annotations

from pathlib import Path

import click

from racing_demon.cli.options import (
    hex_problem,
    json_option,
    plain_seed,
    rules_option,
    secret_option,
)
from racing_demon.cli.output import claim_stdin_log, log_from_stdin
from racing_demon.cli.use_cases import echo, usage_problems
from racing_demon.deal_run import DealRun, run_deal
from racing_demon.game.deal import MAX_CONTRIBUTION_BYTES, MIN_CONTRIBUTION_BYTES
from racing_demon.game.rules import Rules
from racing_demon.log.reader import DEFAULT_LIMITS
from racing_demon.report.deal import deal_reporter_named


def _entropy(
    ctx: click.Context, param: click.Parameter, values: tuple[str, ...]
) -> tuple[bytes, ...]:
    """Each seat's contribution, 16 to 64 bytes in hex (either case), in seat order."""
    shortest, longest = 2 * MIN_CONTRIBUTION_BYTES, 2 * MAX_CONTRIBUTION_BYTES
    contributions = []
    for seat, value in enumerate(values):
        if shortest <= len(value) <= longest and len(value) % 2 == 0:
            problem = hex_problem(value, len(value))
        else:
            problem = (
                f"expected an even number of hex characters, {shortest} to {longest}, "
                f"got {len(value)}"
            )
        if problem is not None:
            raise click.BadParameter(f"seat {seat}'s contribution: {problem}", ctx, param)
        contributions.append(bytes.fromhex(value))
    return tuple(contributions)


@click.command(
    epilog=f"""\b
Examples:
  racing-demon deal --seed demo --players 2
  racing-demon deal --seed "final 2026" --players 4 --hand 3 --rules nertz
  racing-demon deal --secret file:secret.txt --entropy E0 --entropy E1 --json
  racing-demon deal --log game.jsonl --hand 3
  racing-demon deal --log unfinished.jsonl --secret file:secret.txt
\b
E0, E1: each seat's contribution ({2 * MIN_CONTRIBUTION_BYTES} to \
{2 * MAX_CONTRIBUTION_BYTES} hex), as the genesis lists them.

\b
More:
  racing-demon docs deal-spec   # the derivation, to re-implement it
"""
)
@click.option(
    "--seed", callback=plain_seed, help="A plain seed string (reproducible deals, no secret)."
)
@secret_option("The dealer secret: deal as a match committed to it does.")
@click.option(
    "--entropy",
    "entropy",
    metavar="HEX",
    multiple=True,
    callback=_entropy,
    help="A seat's contribution, with --secret: once per seat, in seat order.",
)
@click.option(
    "--log",
    "log",
    metavar="LOG",
    type=click.Path(dir_okay=False, path_type=Path),
    is_eager=True,  # --log - claims standard input before --secret stdin reads it
    callback=claim_stdin_log,
    help="Deal as LOG's genesis does: its rules, seats and entropy, and the secret its "
    "final record reveals (or --secret, for a log with no final record yet); - reads "
    "it from standard input.",
)
@click.option(
    "--players",
    type=click.IntRange(2, 16),
    help="Number of seats at the table (with --seed; --entropy and --log give it).",
)
@click.option("--hand", type=click.IntRange(1, 2**32 - 1), default=1, show_default=True)
@click.option(
    "--past-end",
    is_flag=True,
    help="With --log, deal a --hand past the last one the log dealt, from its seed: a hand "
    "the match never played (without it, such a --hand is refused).",
)
@rules_option
@json_option
@click.pass_context
def deal(
    ctx: click.Context,
    seed: str | None,
    secret: bytes | None,
    entropy: tuple[bytes, ...],
    log: Path | None,
    players: int | None,
    hand: int,
    past_end: bool,
    rules: Rules,
    as_json: bool,
) -> None:
    """Print each seat's layout for one hand.

    Every pack is derived by the published algorithm, so anyone can regenerate the
    same deal: from a plain --seed; from a dealer --secret and every seat's --entropy,
    exactly as a match committed to that secret deals (the game id does not enter the
    deal); or from a --log, as its table dealt it. The header names the commitment of
    a secret's deal, never the secret.
    """
    rules_given = ctx.get_parameter_source("rules") is not click.core.ParameterSource.DEFAULT
    run = DealRun(
        seed=seed,
        secret=secret,
        entropy=entropy,
        # --log - is the log on standard input, as LOG - is in verify, replay and audit.
        log=None if log is None else str(log),
        read_stdin=lambda: log_from_stdin(DEFAULT_LIMITS),
        players=players,
        hand=hand,
        past_end=past_end,
        rules=rules if rules_given else None,
    )
    reporter = deal_reporter_named("json" if as_json else "text", echo)
    with usage_problems():
        code = run_deal(run, reporter)
    if code:
        raise SystemExit(code)
