"""``racing-demon verify``: check signed game logs and replay every move."""

from __future__ import annotations

import contextlib
import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TextIO

import click

from racing_demon.batch import (
    ClusterError,
    OnDone,
    collect_logs,
    dask_distributed,
    verify_many,
    verify_on_dask,
)
from racing_demon.cli.options import json_option, limits_options, seed_option, table_key_option
from racing_demon.log.reader import Limits
from racing_demon.verify import Settings
from racing_demon.verify_report import (
    batch_text,
    report_line,
    report_text,
    verification_document,
)

_GAME_ID = re.compile(r"[0-9a-f]{32}")


def _game_id(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    if value is not None and not _GAME_ID.fullmatch(value):
        raise click.BadParameter(
            f"expected 32 lowercase hex characters, got {len(value)} characters", ctx, param
        )
    return value


def _scheduler(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """Refuse ``--scheduler`` at once, before any work, when Dask is not installed."""
    if value is not None:
        try:
            dask_distributed()
        except ClusterError as error:
            raise click.BadParameter(str(error), ctx, param) from error
    return value


class _ClusterFailed(click.ClickException):
    """The cluster could not verify: like unreadable input, exit 2."""

    exit_code = 2


@click.command(
    epilog="""\b
Examples:
  racing-demon verify game.jsonl --table-key table.pub
  racing-demon verify game.jsonl --table-key table.pub --seed SECRET --json
  racing-demon verify logs/*.jsonl --table-key table.pub --fast
  racing-demon verify archive/ --table-key table.pub --report results.jsonl
  racing-demon verify archive/ --table-key table.pub --scheduler tcp://dask-host:8786
  racing-demon verify big.jsonl --table-key table.pub --max-file-bytes 1G --max-records 5000000
"""
)
@click.argument("logs", metavar="LOG...", nargs=-1, required=True, type=click.Path(path_type=Path))
@table_key_option(required=False)
@json_option
@click.option(
    "--fast",
    is_flag=True,
    help="Check the table's signatures on the genesis and the final record only (the chain "
    "binds the rest to them) and no player's signature on a move; replay everything.",
)
@seed_option("The dealer secret (64 hex) the log must reveal; it also replays an unfinished log.")
@click.option(
    "--game-id", metavar="ID", callback=_game_id, help="The game id (32 hex) the log must carry."
)
@click.option(
    "--unsafe-unpinned",
    is_flag=True,
    help="Without --table-key, accept a log whose table signatures cannot be checked: "
    "anyone could have written it.",
)
@limits_options
@click.option(
    "--jobs",
    type=click.IntRange(min=1),
    metavar="N",
    help="Verify N logs at once in N processes (default: every core); 1 verifies in this "
    "process, one log after another.",
)
@click.option(
    "--scheduler",
    metavar="ADDRESS",
    callback=_scheduler,
    help="Verify on the Dask cluster whose scheduler is at ADDRESS (tcp://host:8786), not "
    "here. This machine reads the logs and sends their bytes: the workers need racing-demon, "
    "not the files. Needs pip install 'racing-demon[dask]'.",
)
@click.option(
    "--report",
    "report_file",
    type=click.File("w", encoding="utf-8", lazy=False),
    metavar="FILE",
    help="Also write one JSON line per log to FILE, in the order of the logs "
    "(schemas/verification-report-line.schema.json).",
)
def verify(
    logs: tuple[Path, ...],
    table_key: bytes | None,
    as_json: bool,
    fast: bool,
    seed: bytes | None,
    game_id: str | None,
    unsafe_unpinned: bool,
    limits: Limits,
    jobs: int | None,
    scheduler: str | None,
    report_file: TextIO | None,
) -> None:
    """Verify each LOG: framing, schema, canonical bytes, hash chain, signatures, the
    dealer's reveal and every pack, then replay every move through the rules engine and
    recompute the scores (docs/log-format.md §7).

    A LOG that is a folder stands for every *.jsonl file under it, recursively, in sorted
    order; a folder with none is reported unreadable. Several logs are verified in
    parallel (--jobs, or --scheduler), with a progress bar on a terminal; each gets one
    line (and its finding under it), then a summary counts the verdicts and their reasons
    (docs/batch-verification.md).

    Exit 0 when every log verifies; 1 when one does not, is unfinished, or is unpinned
    without --unsafe-unpinned; 2 when a file cannot be read or an option is wrong.
    """
    if table_key is not None and unsafe_unpinned:
        raise click.UsageError("--unsafe-unpinned contradicts --table-key: give one or the other")
    if jobs is not None and scheduler is not None:
        raise click.UsageError(
            "--jobs counts processes on this machine: with --scheduler, the cluster's workers do"
        )
    settings = Settings(
        table_key=table_key,
        fast=fast,
        seed=seed,
        game_id=game_id,
        unsafe_unpinned=unsafe_unpinned,
        limits=limits,
    )
    paths = collect_logs(logs)
    with _progress(len(paths)) as on_done:
        try:
            if scheduler is not None:
                reports = verify_on_dask(paths, settings, scheduler, on_done)
            else:
                reports = verify_many(paths, settings, jobs, on_done)
        except ClusterError as error:
            raise _ClusterFailed(str(error)) from error
    if report_file is not None:
        report_file.writelines(report_line(report) + "\n" for report in reports)
    if as_json:
        click.echo(json.dumps(verification_document(reports), indent=2))
    elif len(paths) == 1 and paths == list(logs):
        click.echo(report_text(reports[0]))  # one log named: its whole report
    else:
        click.echo(batch_text(reports))
    code = max(report.exit_code for report in reports)
    if code:
        raise SystemExit(code)


@contextlib.contextmanager
def _progress(total: int) -> Iterator[OnDone | None]:
    """A progress bar on standard error, only if it is a terminal and there is a batch."""
    if total < 2 or not sys.stderr.isatty():
        yield None
        return
    with click.progressbar(length=total, label="verifying", file=sys.stderr, show_pos=True) as bar:
        yield lambda _report: bar.update(1)
