"""``racing-demon audit``: the dispute view of a verified log, and the evidence that
players' receipts and other copies of the log give against the table."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from racing_demon.audit import ClaimCheck, HandAudit, audit_hands, check_claims
from racing_demon.cli.options import (
    json_option,
    limits_options,
    pinned_rules_option,
    table_key_option,
)
from racing_demon.cli.output import named_log
from racing_demon.cli.style import verbosity
from racing_demon.evidence import gather_evidence
from racing_demon.files import read_regular
from racing_demon.log.reader import Limits
from racing_demon.outcomes import ExitCode, audit_exit_code
from racing_demon.printing import printable
from racing_demon.replay import find_secret
from racing_demon.report.audit import audit_document, audit_text, evidence_text
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
    short_help="Audit a log: every hand's score, claims, receipts, copies.",
    epilog="""\b
Examples:
  racing-demon audit game.jsonl --table-key table.pub
  racing-demon audit game.jsonl --table-key table.pub --claim mine.json --json
  racing-demon audit game.jsonl --table-key table.pub --rules table
  racing-demon audit - --table-key table.pub < game.jsonl
  racing-demon audit game.jsonl --table-key table.pub \\
      --receipts seat0.receipts.jsonl --receipts seat1.receipts.jsonl \\
      --against copy.jsonl

\b
A claim file (racing-demon docs audit-claims.schema.json):
  {"claims": [{"seat": 0, "hand": 1, "score": 18},
              {"seat": 0, "hand": 1, "placed": 24},
              {"seat": 1, "hand": 2, "demon_left": 3},
              {"seat": 1, "total": 105}]}

\b
A receipts file holds the table's signed receipts, one a line
(racing-demon docs receipt.schema.json; racing-demon docs log-format 9).
""",
)
@click.argument("log", type=click.Path(allow_dash=True))
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
@click.option(
    "--receipts",
    "receipts",
    metavar="FILE",
    multiple=True,
    type=click.Path(path_type=Path),
    help="A file of the table's receipts (a player's), to check against the log; repeatable.",
)
@click.option(
    "--against",
    "against",
    metavar="LOG2",
    multiple=True,
    type=click.Path(path_type=Path),
    help="Another copy of the log: where the two differ, the table may have signed two "
    "histories; repeatable.",
)
@json_option
@limits_options
def audit(
    log: str,
    table_key: bytes,
    rules: str | None,
    claims: list[Any],
    receipts: tuple[Path, ...],
    against: tuple[Path, ...],
    as_json: bool,
    limits: Limits,
) -> None:
    """Verify LOG (against the pinned rules too, with --rules), then show per hand and
    per seat the cards each seat placed in the centre (sorted by back, with the record that
    placed each), the demon cards left and their penalty, and the hand score recomputed
    beside the one the log claims, with the running total; with --claim, which claims are
    wrong and the records that show it; with --receipts and --against, every receipt and
    copy that disagrees with the log, and whether that is evidence against the table
    (FORK, DELAYED, DROPPED, RECEIPT_MISMATCH, REFUSAL_UNFOUNDED, STALE_HEAD: things the
    table signed that cannot all be true; racing-demon explain CODE says each).

    Exit 0 when the log verifies, every claim holds and every receipt and copy agrees;
    1 when the log does not verify, a claim is wrong, or a receipt or copy disagrees or
    is invalid; 2 when a file cannot be read or an option is wrong. A LOG of - is the
    log on standard input (at most --max-file-bytes).
    """
    source = named_log(log, limits)
    report = verify_log(source, Settings(table_key=table_key, limits=limits, rules=rules))
    hands: tuple[HandAudit, ...] = ()
    checks: tuple[ClaimCheck, ...] = ()
    evidence = None
    try:
        if report.verdict is not Verdict.UNREADABLE and (receipts or against):
            evidence = gather_evidence(source, table_key, receipts, against, limits)
        if report.verdict is Verdict.VERIFIED:
            secret = find_secret(source, limits)  # verified: the final record reveals it
            assert secret is not None
            hands = audit_hands(source, secret, limits)
            checks = check_claims(hands, claims, final_seq=(report.records or 1) - 1)
    except OSError as error:  # a receipts file or copy unreadable, or the log replaced
        shown = printable(str(error.filename or source))
        click.echo(f"cannot read {shown}: {error.strerror or error}", err=True)
        raise SystemExit(ExitCode.UNUSABLE) from error
    if as_json:
        document = audit_document(hands, checks, report_document(report), evidence)
        click.echo(json.dumps(document, indent=2, ensure_ascii=False))
    else:
        click.echo(report_text(report, verbosity()))
        hands_text = audit_text(hands, checks, verbosity())
        if hands_text:  # nothing when there are no hands, or -q and no claims
            click.echo(hands_text)
        if evidence is not None:
            click.echo(evidence_text(evidence, verbosity()))
    code = audit_exit_code(report, all(check.holds for check in checks), evidence)
    if code is not ExitCode.OK:
        raise SystemExit(code)
