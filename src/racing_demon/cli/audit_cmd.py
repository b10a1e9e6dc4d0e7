"""``racing-demon audit``: the dispute view of a verified log, and the evidence that
players' receipts and other copies of the log give against the table; the use case is
``racing_demon.audit_run.run_audit``."""

from __future__ import annotations

from pathlib import Path

import click

from racing_demon.audit_run import (
    AuditRun,
    AuditUnreadable,
    Claim,
    ClaimsError,
    read_claims,
    run_audit,
)
from racing_demon.cli.options import (
    json_option,
    limits_options,
    pinned_rules_option,
    table_key_option,
)
from racing_demon.cli.output import named_log
from racing_demon.cli.style import verbosity
from racing_demon.cli.use_cases import echo
from racing_demon.log.reader import Limits
from racing_demon.outcomes import ExitCode
from racing_demon.report.audit import audit_reporter_named


def _claims(ctx: click.Context, param: click.Parameter, value: Path | None) -> list[Claim]:
    try:
        return [] if value is None else read_claims(value)
    except ClaimsError as error:
        raise click.BadParameter(str(error), ctx, param) from error


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
    claims: list[Claim],
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
    run = AuditRun(
        log=named_log(log, limits),
        table_key=table_key,
        rules=rules,
        claims=claims,
        receipts=receipts,
        against=against,
        limits=limits,
    )
    reporter = audit_reporter_named("json" if as_json else "text", verbosity(), echo)
    try:
        code = run_audit(run, reporter)
    except AuditUnreadable as error:
        click.echo(str(error), err=True)
        raise SystemExit(ExitCode.UNUSABLE) from error
    if code is not ExitCode.OK:
        raise SystemExit(code)
