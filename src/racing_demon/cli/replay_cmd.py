"""``racing-demon replay``: show the table as it stood after any record of a log; the use
case is ``racing_demon.replay_run.run_replay``."""

from __future__ import annotations

import click

from racing_demon.cli.options import dealer_secret_option, json_option, limits_options
from racing_demon.cli.output import claim_stdin_log, named_log
from racing_demon.cli.use_cases import echo, usage_problems
from racing_demon.log.reader import Limits
from racing_demon.replay_run import ReplayRun, run_replay
from racing_demon.report.replay import replay_reporter_named


@click.command(
    short_help="Show the table after any record of a log.",
    epilog="""\b
Examples:
  racing-demon replay sample_games/table-3p-signed.jsonl
  racing-demon replay game.jsonl --at 120
  # a log with no final record yet:
  racing-demon replay unfinished.jsonl --secret file:secret.txt
  # the log on standard input:
  racing-demon replay - --at 40 < game.jsonl
""",
)
@click.argument(
    "log",
    # Not exists=True: click's message would show a name that is not UTF-8 with U+FFFD,
    # where every other message spells it \xHH; a missing file is "cannot read LOG".
    type=click.Path(allow_dash=True),
    is_eager=True,  # LOG - claims standard input before --secret stdin reads it
    callback=claim_stdin_log,
)
@click.option(
    "--at", "at_seq", type=click.IntRange(0), help="Record to stop after [default: last]."
)
@dealer_secret_option("The dealer secret (64 hex), for a log with no final record yet.")
@limits_options
@json_option
def replay_command(
    log: str, at_seq: int | None, secret: bytes | None, limits: Limits, as_json: bool
) -> None:
    """Print the table after record AT: every seat's demon top and count, work piles,
    waste top, stock count; the foundations; and whose move came next. Record 0, the
    genesis, shows the seats and their keys, the rules and the commitment (text only:
    no table is dealt yet, and it needs no secret).

    This rebuilds the table through the match flow, up to the first record the flow
    refuses (`racing-demon verify` says why the log does not verify): without --at, the
    table just before that record is shown, with the refusal, and the exit code is 1.
    A LOG of - is the log on standard input (at most --max-file-bytes).
    """
    run = ReplayRun(log=named_log(log, limits), at_seq=at_seq, secret=secret, limits=limits)
    reporter = replay_reporter_named("json" if as_json else "text", echo)
    with usage_problems():
        code = run_replay(run, reporter)
    if code:
        raise SystemExit(code)
