"""``racing-demon replay``: show the table as it stood after any record of a log."""

from __future__ import annotations

from pathlib import Path

import click

from racing_demon.cli.options import dealer_secret_option, limits_options
from racing_demon.log.reader import Limits, ReadError
from racing_demon.log.records import Record
from racing_demon.outcomes import ExitCode
from racing_demon.replay import ReplayError, find_secret, replay
from racing_demon.report.text import next_text, printable, table_text


@click.command(
    epilog="""\b
Examples:
  racing-demon replay sample_games/table-3p-signed.jsonl
  racing-demon replay game.jsonl --at 120
  racing-demon replay unfinished.jsonl --secret file:secret.txt
"""
)
@click.argument("log", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--at", "at_seq", type=click.IntRange(0), help="Record to stop after [default: last]."
)
@dealer_secret_option("The dealer secret (64 hex), for a log with no final record yet.")
@limits_options
def replay_command(log: Path, at_seq: int | None, secret: bytes | None, limits: Limits) -> None:
    """Print the table after record AT: every seat's demon top and count, work piles,
    waste top, stock count; the foundations; and whose move came next.

    This rebuilds the table through the match flow, up to the first record the flow
    refuses (`racing-demon verify` says why the log does not verify).
    """
    chosen = None
    following: Record | ReplayError | None = None
    try:
        secret = secret or find_secret(log, limits)
        if secret is None:
            raise click.UsageError("the log has no final record: give --secret SOURCE")
        for snapshot in replay(log, secret, limits):
            if chosen is not None and at_seq is not None:
                following = snapshot.record
                break
            if at_seq is None or snapshot.seq == at_seq:
                chosen = (snapshot.state, snapshot.record, snapshot.names)
    except ReplayError as error:
        if chosen is None or at_seq is None:
            click.echo(f"cannot replay {printable(str(log))}: {printable(str(error))}", err=True)
            raise SystemExit(ExitCode.NO) from error
        following = error  # the record after the one shown is the first refused
    except OSError as error:
        click.echo(f"cannot read {printable(str(log))}: {error.strerror or error}", err=True)
        raise SystemExit(ExitCode.UNUSABLE) from error
    except (ReadError, ValueError) as error:
        click.echo(f"cannot replay {printable(str(log))}: {printable(str(error))}", err=True)
        raise SystemExit(ExitCode.NO) from error
    if chosen is None:
        raise click.UsageError(f"the log has no record {at_seq}")
    state, record, names = chosen
    assert record is not None  # every snapshot replay yields holds its record
    if state is None:
        raise click.UsageError(f"record {record.seq} comes before the first hand")
    click.echo(table_text(state, names, record))
    click.echo(next_text(following, names))
