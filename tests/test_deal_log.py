"""``deal --log``: the hands a log dealt, and no other unless asked."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from racing_demon.cli import main
from racing_demon.replay import hands_dealt

from conftest import log_bodies

LOG = Path(__file__).resolve().parents[1] / "sample_games" / "table-3p-signed.jsonl"


def test_the_log_dealt_as_many_hands_as_it_started() -> None:
    started = [body for body in log_bodies(LOG) if body["kind"] == "hand_start"]
    assert hands_dealt(LOG) == len(started) == 2


def test_a_hand_past_the_end_of_the_log_is_refused() -> None:
    """Issue 29, item 6: "`deal --log LOG --hand 99` deals a hand the match never played,
    exit 0: refuse with the number of hands the log has"."""
    result = CliRunner().invoke(main, ["deal", "--log", str(LOG), "--hand", "3"])
    assert result.exit_code == 2 and result.stdout == ""
    assert "dealt 2 hands (1 to 2): hand 3 was never played" in result.stderr
    assert "--past-end" in result.stderr
    assert CliRunner().invoke(main, ["deal", "--log", str(LOG), "--hand", "2"]).exit_code == 0


def test_past_end_deals_it_from_the_seed_and_says_so() -> None:
    """'(or say clearly that it is a hand past the end, dealt from the seed)'"""
    result = CliRunner().invoke(
        main, ["deal", "--log", "-", "--hand", "99", "--past-end", "--json"],
        input=LOG.read_bytes(),
    )  # fmt: skip
    assert result.exit_code == 0
    assert json.loads(result.stdout)["hand"] == 99
    assert result.stderr == (
        "hand 99 is past the end of <stdin>, which dealt 2 hands (1 to 2): dealt from its "
        "seed, never played\n"
    )


def test_past_end_goes_with_a_log() -> None:
    result = CliRunner().invoke(main, ["deal", "--seed", "x", "--players", "2", "--past-end"])
    assert result.exit_code == 2 and "--past-end goes with --log" in result.stderr
