"""``racing-demon rules``: list the profiles, or print one."""

from __future__ import annotations

import json

import click

from racing_demon.profiles import BUILT_IN, ProfileError, load_rules
from racing_demon.report.text import rules_listing


@click.command(
    short_help="List the rule profiles, or print one.",
    epilog="""\b
Examples:
  racing-demon rules
  racing-demon rules peer2peer
  racing-demon rules my-variant.json   # validate a profile document
""",
)
@click.argument("profile", required=False)
def rules(profile: str | None) -> None:
    """List the built-in rule profiles, or print PROFILE as its JSON document.

    PROFILE is a built-in name or a .json file, which is validated first.
    """
    if profile is None:
        click.echo(rules_listing([load_rules(name) for name in BUILT_IN]))
        return
    try:
        document = load_rules(profile).to_document()
    except ProfileError as error:
        raise click.BadParameter(str(error), param_hint="PROFILE") from error
    click.echo(json.dumps(document, indent=2))
