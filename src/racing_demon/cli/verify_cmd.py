"""``racing-demon verify``: check signed game logs and replay every move."""

from __future__ import annotations

import json
import re
from pathlib import Path

import click

from racing_demon.cli.options import json_option, limits_options, seed_option, table_key_option
from racing_demon.log.reader import Limits
from racing_demon.verify import Settings, verify_log
from racing_demon.verify_report import report_text, verification_document

_GAME_ID = re.compile(r"[0-9a-f]{32}")


def _game_id(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    if value is not None and not _GAME_ID.fullmatch(value):
        raise click.BadParameter(
            f"expected 32 lowercase hex characters, got {len(value)} characters", ctx, param
        )
    return value


@click.command(
    epilog="""\b
Examples:
  racing-demon verify game.jsonl --table-key table.pub
  racing-demon verify game.jsonl --table-key table.pub --seed SECRET --json
  racing-demon verify logs/*.jsonl --table-key table.pub --fast
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
def verify(
    logs: tuple[Path, ...],
    table_key: bytes | None,
    as_json: bool,
    fast: bool,
    seed: bytes | None,
    game_id: str | None,
    unsafe_unpinned: bool,
    limits: Limits,
) -> None:
    """Verify each LOG: framing, schema, canonical bytes, hash chain, signatures, the
    dealer's reveal and every pack, then replay every move through the rules engine and
    recompute the scores (docs/log-format.md §7).

    Exit 0 when every log verifies; 1 when one does not, is unfinished, or is unpinned
    without --unsafe-unpinned; 2 when a file cannot be read or an option is wrong.
    """
    if table_key is not None and unsafe_unpinned:
        raise click.UsageError("--unsafe-unpinned contradicts --table-key: give one or the other")
    settings = Settings(
        table_key=table_key,
        fast=fast,
        seed=seed,
        game_id=game_id,
        unsafe_unpinned=unsafe_unpinned,
        limits=limits,
    )
    reports = [verify_log(path, settings) for path in logs]
    if as_json:
        click.echo(json.dumps(verification_document(reports), indent=2))
    else:
        click.echo("\n\n".join(report_text(report) for report in reports))
    code = max(report.exit_code for report in reports)
    if code:
        raise SystemExit(code)
