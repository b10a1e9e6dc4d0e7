"""``racing-demon rules``: list the profiles, or print one."""

from __future__ import annotations

import json

import click

from racing_demon.cli.options import json_option
from racing_demon.profiles import (
    BUILT_IN,
    CUSTOM_SUFFIX,
    ProfileError,
    builtin_named,
    differences_from_builtin,
    load_rules,
)
from racing_demon.report.documents import rules_document
from racing_demon.report.text import rules_listing


@click.command(
    short_help="List the rule profiles, or print one.",
    epilog="""\b
Examples:
  racing-demon rules
  racing-demon rules peer2peer
  racing-demon rules my-variant.json   # validate a profile document
  racing-demon rules --json            # every profile, with its digest
""",
)
@click.argument("profile", required=False)
@json_option
def rules(profile: str | None, as_json: bool) -> None:
    """List the built-in rule profiles, or print PROFILE as its JSON document.

    PROFILE is a built-in name or a .json file, which is validated first. With --json,
    one document either way: every built-in profile, or PROFILE alone, each with its
    digest (what --rules SHA256 pins) and its whole profile document.
    """
    try:
        profiles = [load_rules(name) for name in (BUILT_IN if profile is None else [profile])]
    except ProfileError as error:
        raise click.BadParameter(str(error), param_hint="PROFILE") from error
    chosen = profiles[0]
    if profile is not None and chosen.name in BUILT_IN and builtin_named(chosen) is None:
        # Valid, but no table writes a log with it (RESERVED_RULES_NAME): say so now.
        changed = "; ".join(differences_from_builtin(chosen) or ())
        click.echo(
            f"note: these rules are named like the built-in profile {chosen.name!r} but are "
            f"not it ({changed}): a table refuses to write a log with them "
            f"(RESERVED_RULES_NAME); name them {chosen.name + CUSTOM_SUFFIX!r}",
            err=True,
        )
    if as_json:
        click.echo(json.dumps(rules_document(profiles), indent=2, ensure_ascii=False))
    elif profile is None:
        click.echo(rules_listing(profiles))
    else:
        click.echo(json.dumps(profiles[0].to_document(), indent=2))
