"""The command line: thin click commands over the library."""

from __future__ import annotations

from importlib.metadata import version

import click

from racing_demon.cli.audit_cmd import audit
from racing_demon.cli.deal_cmd import deal
from racing_demon.cli.keygen_cmd import keygen
from racing_demon.cli.recover_cmd import recover
from racing_demon.cli.replay_cmd import replay_command
from racing_demon.cli.rules_cmd import rules
from racing_demon.cli.seed_cmd import seed
from racing_demon.cli.simulate_cmd import simulate_command
from racing_demon.cli.verify_cmd import verify


@click.group(
    context_settings={"help_option_names": ["-h", "--help"]},
    epilog="""\b
Examples:
  racing-demon rules
  racing-demon deal --seed demo --players 3
  racing-demon keygen table
  racing-demon seed new
  racing-demon verify game.jsonl --table-key table.pub
""",
)
@click.version_option(version("racing-demon"), prog_name="racing-demon")
def main() -> None:
    """Racing Demon (Nerts, Pounce): verify signed game logs, replay and audit them, and
    deal packs from seeds that anybody can regenerate."""


main.add_command(audit)
main.add_command(deal)
main.add_command(keygen)
main.add_command(recover)
main.add_command(rules)
main.add_command(seed)
main.add_command(verify)
main.add_command(replay_command, name="replay")
main.add_command(simulate_command, name="simulate")
