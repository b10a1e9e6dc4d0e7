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
from racing_demon.cli.output import OutputWriter, checked_output, inputs_of
from racing_demon.log.reader import Limits
from racing_demon.outcomes import ExitCode
from racing_demon.report.text import printable
from racing_demon.report.verify import finding_text
from racing_demon.verify import Settings, Verdict, verify_log
from racing_demon.viewer import render_page, viewer_data
from racing_demon.wording import plural


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
""",
)
@click.argument("log", type=click.Path(path_type=Path))
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
    log: Path,
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

    A page is written for a log that verifies and for one that does not alike: exit 0
    when the page was written, whatever the verdict it shows (printed on standard error);
    2 when LOG cannot be read, FILE cannot be written or exists, or an option is wrong.
    """
    output = checked_output(out, replace=force, inputs=[log, *inputs_of(ctx)], param_hint="--out")
    settings = Settings(table_key=table_key, seed=secret, limits=limits, rules=rules)
    report = verify_log(log, settings)
    try:
        data = viewer_data(log, settings, report)
    except OSError as error:
        click.echo(f"cannot read {printable(str(log))}: {error.strerror or error}", err=True)
        raise SystemExit(ExitCode.UNUSABLE) from error
    page = render_page(data).encode("utf-8")
    with OutputWriter(output, "--out") as writer:
        writer.write(page)
    summary = f"{report.verdict.value}"
    if report.finding is not None:
        summary += f": {finding_text(report.finding)}"
    replayed = len(data["frames"]["list"])
    click.echo(
        f"wrote {printable(output.shown)} ({plural(len(page), 'byte')}): "
        f"{plural(len(data['records']), 'record')}, {replayed:,} replayed; verdict {summary}",
        err=True,
    )
    if report.verdict is Verdict.UNPINNED:
        click.echo(
            "no --table-key: the page checks no table signature until its reader drops the "
            "table's public key on it",
            err=True,
        )
