"""``racing-demon audit``: the dispute view of a verified log."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from racing_demon.audit import audit_hands, check_claims
from racing_demon.cli.options import (
    json_option,
    limits_options,
    pinned_rules_option,
    table_key_option,
)
from racing_demon.files import read_regular
from racing_demon.log.reader import Limits
from racing_demon.outcomes import ExitCode, exit_code_of
from racing_demon.replay import find_secret
from racing_demon.report.audit import audit_document, audit_text
from racing_demon.report.text import printable
from racing_demon.report.verify import report_document, report_text
from racing_demon.schema import schema_errors
from racing_demon.verify import Settings, Verdict, verify_log


def _claims(ctx: click.Context, param: click.Parameter, value: Path | None) -> list[Any]:
    if value is None:
        return []
    shown = printable(str(value))
    try:
        document = json.loads(read_regular(value).decode("utf-8"))
    except OSError as error:
        raise click.BadParameter(f"cannot read {shown}: {error.strerror}", ctx, param) from error
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise click.BadParameter(f"{shown} is not JSON: {error}", ctx, param) from error
    problems = schema_errors("audit-claims", document)
    if problems:
        raise click.BadParameter(f"{shown}: " + "; ".join(problems), ctx, param)
    claims: list[Any] = document["claims"]
    return claims


@click.command(
    epilog="""\b
Examples:
  racing-demon audit game.jsonl --table-key table.pub
  racing-demon audit game.jsonl --table-key table.pub --claim my-claim.json --json
  racing-demon audit game.jsonl --table-key table.pub --rules table

\b
A claim file (schemas/audit-claims.schema.json):
  {"claims": [{"seat": 0, "hand": 1, "score": 18},
              {"seat": 0, "hand": 1, "placed": 24},
              {"seat": 1, "hand": 2, "demon_left": 3},
              {"seat": 1, "total": 105}]}
"""
)
@click.argument("log", type=click.Path(path_type=Path))
@table_key_option(required=True)
@pinned_rules_option
@click.option(
    "--claim",
    "claims",
    metavar="FILE",
    type=click.Path(path_type=Path),
    callback=_claims,
    help="Scores or card counts a player asserts, to check against the log.",
)
@json_option
@limits_options
def audit(
    log: Path,
    table_key: bytes,
    rules: str | None,
    claims: list[Any],
    as_json: bool,
    limits: Limits,
) -> None:
    """Verify LOG (against the pinned rules too, with --rules), then show per hand and
    per seat the cards each seat placed in the centre (sorted by back, with the record that
    placed each), the demon cards left and their penalty, and the hand score recomputed
    beside the one the log claims, with the running total; with --claim, which claims are
    wrong and the records that show it.

    Exit 0 when the log verifies and every claim holds; 1 when the log does not verify
    or a claim is wrong; 2 when a file cannot be read or an option is wrong.
    """
    report = verify_log(log, Settings(table_key=table_key, limits=limits, rules=rules))
    if report.verdict is not Verdict.VERIFIED:
        if as_json:
            click.echo(json.dumps(report_document(report), indent=2))
        else:
            click.echo(report_text(report))
        raise SystemExit(exit_code_of(report))
    try:
        secret = find_secret(log, limits)  # verified: the final record reveals the secret
        assert secret is not None
        hands = audit_hands(log, secret, limits)
    except OSError as error:  # replaced since it was verified
        click.echo(f"cannot read {printable(str(log))}: {error.strerror or error}", err=True)
        raise SystemExit(ExitCode.UNUSABLE) from error
    checks = check_claims(hands, claims, final_seq=(report.records or 1) - 1)
    if as_json:
        document = audit_document(hands, checks, report_document(report))
        click.echo(json.dumps(document, indent=2, ensure_ascii=False))
    else:
        click.echo(report_text(report))
        click.echo(audit_text(hands, checks))
    if not all(check.holds for check in checks):
        raise SystemExit(ExitCode.NO)
