"""``racing-demon recover``: remove the torn last line a crash left in a log; the use case
is ``racing_demon.recover_run.run_recover``."""

from __future__ import annotations

from pathlib import Path

import click

from racing_demon.cli.options import (
    dealer_secret_option,
    json_option,
    limits_options,
    table_key_option,
)
from racing_demon.cli.use_cases import echo
from racing_demon.files import STDIN
from racing_demon.log.reader import Limits
from racing_demon.recover_run import RecoverRun, run_recover
from racing_demon.report.recover import recover_reporter_named
from racing_demon.verify import Settings


@click.command(
    short_help="Remove the torn last line a crash left in a log.",
    epilog="""\b
Examples:
  racing-demon recover game.jsonl --table-key table.pub --secret stdin
  racing-demon recover game.jsonl --table-key table.pub --dry-run
""",
)
@click.argument("log", type=click.Path())  # a str: Path("./-") would be "-"
@table_key_option(required=False)
@dealer_secret_option("The dealer secret (64 hex): the kept records are also replayed.")
@click.option("--dry-run", is_flag=True, help="Say what would be removed; change nothing.")
@click.option(
    "--allow-empty",
    is_flag=True,
    help="Cut a torn line even when it is the file's only line (a genesis a crash cut "
    "short), leaving LOG empty.",
)
@limits_options
@json_option
def recover(
    log: str,
    table_key: bytes | None,
    secret: bytes | None,
    dry_run: bool,
    allow_empty: bool,
    limits: Limits,
    as_json: bool,
) -> None:
    """Remove a torn last line from LOG: the bytes of a record that a crash cut off before
    the table acknowledged it. The complete records before it must verify as an unfinished
    log (with --table-key, their signatures too); if anything before the end is damaged,
    nothing is changed. The table can then resume the match from the recovered log.

    Run it only when no table is writing LOG.

    A last line that has lost only its newline (editors drop it) is a complete record,
    not a torn one: its newline is restored, and nothing is cut. A damaged last line that
    names itself the final record is never cut either. A file that is not a log (its
    first bytes are not a record's) is never changed, and a torn line that is the
    file's only line is cut only with --allow-empty.

    Exit 0 when LOG ends with a complete record (now or already) or is empty; 1 when the
    records before the end do not verify, the tail is a damaged final record, or the torn
    line is the only line and --allow-empty was not given (nothing changed); 2 when LOG
    is not a log, or cannot be read or changed.
    """
    if log == STDIN:
        # verify, replay and audit read a log from - ; recover changes a file in place.
        raise click.BadParameter(
            "recover repairs a file in place, and standard input is none: give the log's "
            "path (a file named - is ./-)",
            param_hint="LOG",
        )
    run = RecoverRun(
        log=Path(log),
        settings=Settings(table_key=table_key, seed=secret, limits=limits),
        dry_run=dry_run,
        allow_empty=allow_empty,
    )
    code = run_recover(run, recover_reporter_named("json" if as_json else "text", echo))
    if code:
        raise SystemExit(code)
