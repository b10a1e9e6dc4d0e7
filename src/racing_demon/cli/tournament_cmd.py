"""``racing-demon tournament``: the group of a duplicate tournament's commands
(docs/tournament.md). Each subcommand has its own module, ``tournament_<name>_cmd``:
options, one settings value and one call of its use case in ``racing_demon.tournament``."""

from __future__ import annotations

import click

from racing_demon.cli.tournament_check_cmd import check_command
from racing_demon.cli.tournament_commit_cmd import commit_command
from racing_demon.cli.tournament_contribute_cmd import contribute_command
from racing_demon.cli.tournament_plan_cmd import plan_command
from racing_demon.cli.tournament_score_cmd import score_command
from racing_demon.cli.tournament_simulate_cmd import simulate_command


@click.group(
    short_help="Plan, check, simulate and score duplicate tournaments.",
    epilog="""\b
Examples:
  racing-demon seed new -o secret.txt
  racing-demon tournament commit --secret file:secret.txt --name "Club cup" \\
      --tables 4 --seats 4 --hands 3 -o cup.json    # publish cup.json
  racing-demon tournament contribute cup.json --by alice --key alice.key \\
      -o alice.json
  racing-demon tournament plan --secret file:secret.txt --name "Club cup" \\
      --tables 4 --seats 4 --hands 3 --contribution alice.json \\
      -o plan.json --sheets sheets.html
  racing-demon tournament check plan.json
  racing-demon tournament check plan.json --secret file:secret.txt
""",
)
def tournament() -> None:
    """Duplicate tournaments: every table plays the same packs, dealt from one
    committed secret (racing-demon docs tournament).

    The organiser commits to a secret and publishes the terms (the name, the
    shape, the rules and the commitment), collects contributions that sign
    them, and writes the plan: which pack each seat of each table plays in
    each hand, and the checksum of the whole deal set. Every table's log names
    the plan; the secret is revealed once every table has finished.
    """


for command in (
    simulate_command,
    score_command,
    plan_command,
    check_command,
    commit_command,
    contribute_command,
):
    tournament.add_command(command)
