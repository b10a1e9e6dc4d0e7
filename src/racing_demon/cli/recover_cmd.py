"""``racing-demon recover``: remove the torn last line a crash left in a log."""

from __future__ import annotations

import json
from pathlib import Path

import click

from racing_demon.cli.options import (
    dealer_secret_option,
    json_option,
    limits_options,
    table_key_option,
)
from racing_demon.files import STDIN
from racing_demon.log.reader import Limits
from racing_demon.outcomes import ExitCode, exit_code_of
from racing_demon.printing import printable
from racing_demon.recover import Action, RecoveryError, recover_log
from racing_demon.report.documents import recover_document
from racing_demon.report.verify import report_text
from racing_demon.report_document import report_document
from racing_demon.verify import Settings, Verdict
from racing_demon.wording import plural


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
    settings = Settings(table_key=table_key, seed=secret, limits=limits)
    try:
        recovery = recover_log(Path(log), settings, dry_run=dry_run, allow_empty=allow_empty)
    except RecoveryError as error:
        click.echo(f"cannot recover: {printable(str(error))}", err=True)
        raise SystemExit(ExitCode.UNUSABLE) from error
    report = recovery.report
    if as_json:
        document = recover_document(
            recovery, report_document(report), signatures_checked=table_key is not None
        )
        click.echo(json.dumps(document, indent=2, ensure_ascii=False))
        raise SystemExit(exit_code_of(recovery))
    kept = "no complete record" if not report.records else plural(report.records, "complete record")
    unchecked = "" if table_key is not None else " (signatures not checked: no --table-key)"
    shown = printable(str(Path(log)))
    if recovery.action is Action.REMOVED_TORN_LINE and not recovery.kept_bytes:
        verb = "would cut" if dry_run else "cut"
        click.echo(
            f"{shown}: {verb} its only line, {plural(recovery.torn_bytes, 'byte')} of a torn "
            f"genesis (--allow-empty): the file {'would be' if dry_run else 'is'} empty"
        )
    elif recovery.action is Action.REMOVED_TORN_LINE:
        verb = "would remove" if dry_run else "removed"
        click.echo(
            f"{shown}: {verb} a torn last line of {plural(recovery.torn_bytes, 'byte')}; "
            f"kept {kept} ({plural(recovery.kept_bytes, 'byte')}), an unfinished log{unchecked}"
        )
    elif recovery.action is Action.RESTORED_NEWLINE:
        verb = "would restore" if dry_run else "restored"
        click.echo(
            f"{shown}: {verb} the newline after the last record, which had lost only that: "
            f"it is a complete record and was kept; {kept}, {report.verdict}{unchecked}"
        )
    elif recovery.action is Action.NOTHING_TO_DO and not recovery.kept_bytes:
        click.echo(f"{shown}: the file is empty: nothing to recover")
    elif recovery.action is Action.REFUSED_ONLY_LINE:
        them = "it" if recovery.torn_bytes == 1 else "them"
        click.echo(
            f"{shown}: refused, nothing changed: its only line is torn, "
            f"{plural(recovery.torn_bytes, 'byte')} of a first record (the genesis) a crash "
            f"cut short; cutting {them} would leave the file empty, and what the table began "
            f"to write (the seats, keys and rules) lost: give --allow-empty to cut {them}"
        )
    elif recovery.action is Action.NOTHING_TO_DO:
        click.echo(
            f"{shown}: nothing to recover: it ends with a complete record; "
            f"{kept}, {report.verdict}{unchecked}"
        )
    elif recovery.action is Action.REFUSED_FINAL:
        click.echo(
            f"{shown}: refused, nothing changed: its last line, "
            f"{plural(recovery.torn_bytes, 'byte')}, is a damaged final record, the one that "
            "reveals the secret and the scores: keep the file as evidence and find an intact copy"
        )
    elif report.verdict in (Verdict.VERIFIED, Verdict.UNPINNED):
        # The records before the tail make a whole match: a table writes nothing after its
        # final record, so the tail is no crash's debris.
        click.echo(
            f"{shown}: refused, nothing changed: the log ends with its final record "
            f"(line {report.records}), and what follows it ({plural(recovery.torn_bytes, 'byte')}) "
            "is no torn record (a table writes nothing after its final record): keep the file "
            "as evidence"
        )
        click.echo(report_text(report))
    else:
        click.echo(f"{shown}: refused, nothing changed: the log does not verify")
        click.echo(report_text(report))
    raise SystemExit(exit_code_of(recovery))
