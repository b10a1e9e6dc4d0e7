"""``racing-demon view``: one self-contained HTML page that replays a log and re-verifies it
in the browser; the use case is ``racing_demon.viewer.write.write_view``."""

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
from racing_demon.cli.use_cases import echo
from racing_demon.files import STDIN
from racing_demon.log.reader import Limits
from racing_demon.report.view import view_reporter_named
from racing_demon.verify import Settings
from racing_demon.viewer.write import ViewRun, write_view


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
  racing-demon runtime install      # once, then:
  racing-demon view game.jsonl --table-key table.pub --engine -o game.html
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
@click.option(
    "--engine",
    is_flag=True,
    help="Inline the browser runtime and this package's verifier (about 18 MB more), so "
    "the page replays every move and score itself; needs `racing-demon runtime install`.",
)
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
    engine: bool,
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

    With --engine the page also replays every move and recomputes every score in
    the browser, with this package's own verifier running on Pyodide (CPython in
    WebAssembly), inlined: one file of about 19 MB that still opens from file://.
    Its verdict is set beside the Python verifier's, loudly where they differ. It
    needs the runtime installed (racing-demon runtime install); without it, exit 2.

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
    run = ViewRun(log=named_log(log, limits), settings=settings, output=output, engine=engine)
    code = write_view(run, view_reporter_named("text", echo), open_output=OutputWriter)
    if code:
        raise SystemExit(code)
