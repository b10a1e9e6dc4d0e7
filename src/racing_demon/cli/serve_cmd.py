"""``racing-demon serve``: tables over WebSockets, every game archived and verified; the use
case is ``racing_demon.serve_run.run_serve``. The web stack is the ``serve`` extra: this
module imports it only when the server starts, so ``--help`` needs none of it."""

from __future__ import annotations

from pathlib import Path

import click

from racing_demon.cli.use_cases import echo
from racing_demon.outcomes import ExitCode

SERVE_EXTRA = "pip install 'racing-demon[serve]'"
# The modules the serve extra installs, as an ImportError names them.
_EXTRA_MODULES = frozenset({"aiohttp", "multidict", "yarl", "aiosignal", "frozenlist"})


@click.command(
    short_help="Host tables for people and bots over WebSockets.",
    epilog="""\b
Examples:
  racing-demon serve
  racing-demon serve --port 0 --data /srv/racing-demon
  racing-demon serve --signing-key table.key --data games
  racing-demon serve --host 0.0.0.0 --port 8080   # behind a TLS proxy only
  racing-demon serve --drain 10   # SIGTERM: play on 10 s, every player told
""",
)
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="The address to listen on. Anything but loopback needs a TLS proxy in front "
    "(a warning says so).",
)
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=8080,
    show_default=True,
    help="The port to listen on; 0 lets the system choose a free one (printed).",
)
@click.option(
    "--data",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("racing-demon-data"),
    show_default=True,
    metavar="DIR",
    help="The data folder: the table key, the logs, each seat's receipts, the journal "
    "and the index. Made (mode 0700) if missing.",
)
@click.option(
    "--signing-key",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    metavar="KEY",
    help="The table's private key (PEM, as keygen writes it). Without it the data "
    "folder's table.key is used, made on the first start.",
)
@click.option(
    "--drain",
    type=click.IntRange(0, 3600),
    default=30,
    show_default=True,
    metavar="SECONDS",
    help="On SIGTERM (a restart or deploy), how long the tables play on before the server "
    "stops, every player told when; the lobby makes no table meanwhile. 0: stop at once. "
    "Give a service manager's stop timeout more than this.",
)
def serve(host: str, port: int, data: Path, signing_key: Path | None, drain: int) -> None:
    """Serve tables where people and bots play Racing Demon over WebSockets, as
    `racing-demon docs protocol` describes, until Ctrl-C or SIGTERM.

    People play in a browser: open the printed address for the lobby, where the page
    makes and keeps the player's key, then play at the table page, which checks every
    record and keeps the player's copy of the log and receipts (`racing-demon docs
    playing`).

    The lobby (HTTP and JSON under /api/tables) creates tables of 2 to 8 seats, each a
    person's or a bot's, and gives seats to players who bring their own Ed25519 key; a
    table starts when every seat is filled. Every record is on disk (one shared journal,
    synced in batches) before any receipt naming it is sent. Every finished game is
    verified as it ends and listed at /games, with its log, each seat's receipts and
    its `view` page; `racing-demon verify DIR/logs --table-key DIR/table.pub` checks
    them all again.

    The first line of standard output is `listening on http://HOST:PORT`. Stopped, the
    server finishes what it was writing; the tables that were playing resume on the
    next start with the same --data, their clocks paused meanwhile. SIGTERM is a
    planned stop: every connection is told, and play goes on for --drain seconds
    first. Ctrl-C (SIGINT), or a second signal, stops at once.

    Exit 0 after a clean stop; 2 when the data folder, the key or the address cannot be
    used, or the serve extra is missing.
    """
    try:
        from racing_demon.report.serve import serve_reporter
        from racing_demon.serve_run import ServeRun, run_serve
    except ImportError as error:
        if (error.name or "").split(".")[0] not in _EXTRA_MODULES:
            raise
        click.echo(
            f"racing-demon serve needs the web server it is built on ({error.name} is "
            f"missing): {SERVE_EXTRA}",
            err=True,
        )
        raise SystemExit(ExitCode.UNUSABLE) from None
    run = ServeRun(host=host, port=port, data=data, signing_key=signing_key, drain_s=drain)
    code = run_serve(run, serve_reporter(echo))
    if code:
        raise SystemExit(code)
