"""``racing-demon view``: one self-contained HTML page that replays a log and re-verifies it
in the browser."""

from __future__ import annotations

from pathlib import Path

import click

from racing_demon.cli.options import (
    dealer_secret_option,
    force_option,
    limits_options,
    pinned_rules_option,
    table_key_option,
)
from racing_demon.cli.output import (
    OutputWriter,
    checked_output,
    claim_stdin_log,
    inputs_of,
    named_log,
)
from racing_demon.files import STDIN
from racing_demon.log.reader import Limits
from racing_demon.outcomes import ExitCode
from racing_demon.printing import printable
from racing_demon.report.verify import finding_text
from racing_demon.verify import Settings, Verdict
from racing_demon.viewer import page_parts
from racing_demon.viewer.model import verified_page_data
from racing_demon.wording import plural

_PIECE = 1 << 20


@click.command(
    short_help="Write an HTML page that replays a log and re-verifies it.",
    epilog="""\b
Examples:
  racing-demon view game.jsonl --table-key table.pub -o game.html
  racing-demon view sample_games/disputed/changed-byte.jsonl \\
      --table-key sample_games/table.pub -o changed-byte.html
  racing-demon view unfinished.jsonl --table-key table.pub \\
      --secret file:secret.txt -o unfinished.html
  racing-demon view game.jsonl --table-key table.pub --rules table \\
      -o game.html --force
  racing-demon view game.jsonl -o - > game.html   # no key: an unpinned page
  racing-demon view - --table-key table.pub -o game.html < game.jsonl
""",
)
@click.argument(
    "log",
    type=click.Path(allow_dash=True),
    is_eager=True,  # LOG - claims standard input before --secret stdin reads it
    callback=claim_stdin_log,
)
@table_key_option(required=False)
@pinned_rules_option
@dealer_secret_option("The dealer secret (64 hex), for a log with no final record yet.")
@limits_options
@click.option(
    "-o",
    "--out",
    "out",
    required=True,
    metavar="FILE",
    help="The HTML page to write; - writes it to standard output. An existing FILE is "
    "kept unless --force.",
)
@force_option("Replace an existing FILE (never the log or a key read).")
@click.pass_context
def view(
    ctx: click.Context,
    log: str,
    table_key: bytes | None,
    rules: str | None,
    secret: bytes | None,
    limits: Limits,
    out: str,
    force: bool,
) -> None:
    """Write one HTML file that shows LOG: the table after every record (slider, keys,
    play at 1x, 4x or 16x, a deep link per record such as game.html#seq=120), each record
    in words, the audit of every hand and a chart of the running totals, and the verdict
    of `racing-demon verify` on the log, as of now, with the failing record marked.

    The page needs no network and opens from file://. It holds the log's bytes and checks
    them again in the browser (canonical lines, hash chain, the table's and players'
    signatures, the revealed secret, entropy and packs); a reader can drop their own copy
    of the table's public key on it. --table-key embeds the key the page checks the
    table's signatures with until then.

    A LOG of - is the log on standard input (at most --max-file-bytes).

    A page is written for a log that verifies and for one that does not alike: exit 0
    when the page was written, whatever the verdict it shows (printed on standard error);
    2 when LOG cannot be read, FILE cannot be written or exists, or an option is wrong.
    """
    named = [] if log == STDIN else [Path(log)]
    output = checked_output(
        out, replace=force, inputs=[*named, *inputs_of(ctx)], param_hint="--out"
    )
    settings = Settings(table_key=table_key, seed=secret, limits=limits, rules=rules)
    source = named_log(log, limits)
    try:
        report, data = verified_page_data(source, settings)
    except OSError as error:
        click.echo(f"cannot read {printable(str(source))}: {error.strerror or error}", err=True)
        raise SystemExit(ExitCode.UNUSABLE) from error
    written = 0
    with OutputWriter(output, "--out") as writer:
        for part in page_parts(data):
            # A megabyte at a time: the data's part is most of the page, and encoding it
            # whole would hold it twice.
            for start in range(0, len(part), _PIECE):
                encoded = part[start : start + _PIECE].encode("utf-8")
                writer.write(encoded)
                written += len(encoded)
    summary = f"{report.verdict.value}"
    if report.finding is not None:
        summary += f": {finding_text(report.finding)}"
    replay = data["replay"]
    click.echo(
        f"wrote {printable(output.shown)} ({plural(written, 'byte')}): "
        f"{plural(replay['records'], 'record')}, {replay['replayed']:,} replayed; "
        f"verdict {summary}",
        err=True,
    )
    if replay["secret"] == "missing" and replay["records"]:
        click.echo(
            "no table to show: the log has no final record to reveal the dealer secret; "
            "give it with --secret SOURCE",
            err=True,
        )
    if report.verdict is Verdict.UNPINNED:
        click.echo(
            "no --table-key: the page checks no table signature until its reader drops the "
            "table's public key on it",
            err=True,
        )
