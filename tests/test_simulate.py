"""Simulated matches: real races and ties, determinism, logs that verify, and the command.

Matches are short (a low match target, as in tests/test_verify.py) and their seeds are
pinned: a simulation is deterministic, so each test sees the same match every run.
"""

from __future__ import annotations

import hmac
import io
import json
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import replace
from functools import cache
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from click.testing import CliRunner
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from racing_demon.cli import main, progress
from racing_demon.game.deal import commitment
from racing_demon.game.rules import Rules
from racing_demon.game.scoring import Match
from racing_demon.log.keys import raw_public_bytes, save_key_pair
from racing_demon.profiles import (
    BUILT_IN,
    builtin_document,
    custom_variant,
    load_rules,
    rules_from_document,
)
from racing_demon.report.simulation import REPORTERS, simulation_reporter_named, summary_text
from racing_demon.sim.bots import BOTS, EASY, HARD, NORMAL, BotProfile
from racing_demon.sim.run import SimulationRun, SimulationUsageError, run_simulation
from racing_demon.sim.simulate import (
    TICK_MS,
    Latency,
    Simulation,
    SimulationError,
    SimulationSeed,
    simulate,
)
from racing_demon.verify import Settings, Verdict, VerifyCode, verify_log

from conftest import invoke, log_bodies

TABLE_KEY = Ed25519PrivateKey.from_private_bytes(bytes([3]) * 32)
TABLE_PUB = raw_public_bytes(TABLE_KEY)
PLAYER_KEYS = [Ed25519PrivateKey.from_private_bytes(bytes([60 + seat]) * 32) for seat in range(4)]
MIX = (EASY, NORMAL, HARD, HARD)
LOST_RACE = "FOUNDATION_TAKEN"
AFTER_A_CALL = "HAND_OVER"
# A move sent before a stall shift reached its sender names a stock the shift has changed.
OVERTAKEN_BY_A_SHIFT = {"CARD_MISMATCH", "STOCK_NOT_EMPTY", "STOCK_EMPTY", "EMPTY_PILE"}


def short(profile: str, target: int = 30) -> Rules:
    """A built-in profile with a low match target (peer2peer: its one deal)."""
    document = builtin_document(profile)
    if document["match"]["target"] is not None:
        document["match"]["target"] = target
    return custom_variant(rules_from_document(document))


@cache
def played(
    profile: str, bots: tuple[BotProfile, ...], seed: str, target: int = 30, keyed: bool = False
) -> tuple[Simulation, bytes]:
    """A simulated match and its log's bytes (the file itself is gone)."""
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "game.jsonl"
        simulation = simulate(
            path,
            short(profile, target),
            bots,
            seed,
            TABLE_KEY,
            player_keys=PLAYER_KEYS[: len(bots)] if keyed else None,
        )
        return simulation, path.read_bytes()


def bodies(log: bytes) -> list[dict[str, Any]]:
    return [json.loads(line)["body"] for line in log.splitlines()]


def verdict(tmp_path: Path, log: bytes) -> Verdict:
    path = tmp_path / "game.jsonl"
    path.write_bytes(log)
    return verify_log(path, Settings(table_key=TABLE_PUB)).verdict


# --- every simulated log verifies ------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("players", [2, 3, 4])
@pytest.mark.parametrize("profile", BUILT_IN)
def test_every_simulated_log_verifies(tmp_path: Path, profile: str, players: int) -> None:
    simulation, log = played(profile, MIX[:players], f"verify {players}", keyed=players == 3)
    assert verdict(tmp_path, log) is Verdict.VERIFIED
    final = bodies(log)[-1]
    assert final["kind"] == "final"
    assert final["totals"] == list(simulation.match.totals)
    assert final["winners"] == list(simulation.match.winners)
    assert simulation.tally.records == len(log.splitlines())


@pytest.mark.slow
def test_a_whole_match_to_100_with_four_players_verifies(tmp_path: Path) -> None:
    simulation, log = played("table", MIX, "to 100", target=100)
    assert max(simulation.match.totals) >= 100
    assert len(simulation.match.hands) >= 5
    assert verdict(tmp_path, log) is Verdict.VERIFIED


# --- determinism and the seed --------------------------------------------------------------


def test_the_same_seed_bots_and_keys_give_the_same_bytes(tmp_path: Path) -> None:
    def run(name: str, seed: str, bots: Sequence[BotProfile] = MIX[:3]) -> bytes:
        path = tmp_path / name
        simulate(path, short("table", 20), bots, seed, TABLE_KEY, player_keys=PLAYER_KEYS[:3])
        return path.read_bytes()

    first = run("a.jsonl", "same")
    assert run("b.jsonl", "same") == first
    assert run("c.jsonl", "other") != first
    assert run("d.jsonl", "same", (HARD, HARD, HARD)) != first


def _hkdf_expand(prk: bytes, label: str, length: int) -> bytes:
    """RFC 5869 HKDF-Expand, written out, as an independent check of the derivation."""
    output, block, counter = b"", b"", 1
    while len(output) < length:
        block = hmac.digest(prk, block + label.encode() + bytes([counter]), "sha256")
        output += block
        counter += 1
    return output[:length]


def test_the_seed_derives_the_secret_the_entropy_and_the_game_id() -> None:
    prk = hmac.digest(b"racing-demon/simulate/v1", b"cup final", "sha256")
    derived = SimulationSeed.from_text("cup final")
    assert derived.dealer_secret == _hkdf_expand(prk, "dealer secret", 32)
    assert derived.entropy(2) == [_hkdf_expand(prk, f"entropy {s}", 16) for s in range(2)]
    assert derived.game_id == _hkdf_expand(prk, "game id", 16).hex()
    assert "cup final" in repr(derived) and prk.hex() not in repr(derived)


def test_the_log_commits_to_and_reveals_the_derived_secret() -> None:
    simulation, log = played("table", MIX[:2], "verify 2")
    derived = SimulationSeed.from_text("verify 2")
    records = bodies(log)
    assert records[0]["commitment"] == commitment(derived.dealer_secret)
    assert records[0]["entropy"] == [e.hex() for e in derived.entropy(2)]
    assert records[0]["game"] == derived.game_id == simulation.game
    assert records[-1]["secret"] == derived.dealer_secret.hex()


def test_default_latencies_come_from_the_seed() -> None:
    simulation, _ = played("table", MIX[:2], "verify 2")
    derived = SimulationSeed.from_text("verify 2")
    assert [seat.latency for seat in simulation.seats] == [derived.latency(s) for s in range(2)]
    for seat in simulation.seats:
        assert 20 <= seat.latency.mean_ms <= 120
        assert seat.latency.jitter_ms == seat.latency.mean_ms // 4


# --- races, ties, and honest bounces ----------------------------------------------------


def _lands(move: str) -> tuple[str, str] | None:
    """(foundation, face) of a move to an existing foundation."""
    found = re.fullmatch(r"\d+ \w+>(f\d+) (\w\w)", move)
    return None if found is None else (found[1], found[2])


def test_races_for_one_foundation_bounce_the_later_card() -> None:
    simulation, log = played("table", (HARD,) * 4, "seed 0", target=40)
    assert simulation.tally.bounces.get(LOST_RACE, 0) >= 5
    records = bodies(log)
    # The loser did not see the winner's card yet (its view lags by its mean latency) and
    # its own card took its latency to arrive, then waited for the tick.
    lags = simulation.seats
    reach = max(s.latency.mean_ms for s in lags) + max(
        s.latency.mean_ms + s.latency.jitter_ms for s in lags
    )
    for index, record in enumerate(records):
        if record["kind"] != "bounce" or record["reason"] != LOST_RACE:
            continue
        target = _lands(record["move"])
        assert target is not None
        # The same level was reached a moment earlier by another seat's card.
        winners = [
            earlier
            for earlier in records[:index]
            if earlier["kind"] in ("move", "tie")
            and earlier["hand"] == record["hand"]
            and earlier["player"] != record["player"]
            and _lands(earlier["move"]) == target
            and record["t_ms"] - earlier["t_ms"] <= reach + TICK_MS
        ]
        assert winners, record


def test_cards_landing_in_one_tick_tie_under_table_only() -> None:
    simulation, log = played("table", (HARD,) * 4, "seed 1", target=40)
    assert simulation.ties >= 1
    ties = [record for record in bodies(log) if record["kind"] == "tie"]
    assert all(record["t_ms"] % TICK_MS == 0 for record in ties)
    for profile in ("peer2peer", "nertz"):
        other, _ = played(profile, (HARD,) * 4, "seed 1", target=40)
        assert other.ties == 0


def test_the_table_takes_arrivals_at_the_end_of_its_tick() -> None:
    _, log = played("nertz", MIX, "verify 4")
    player_records = [record for record in bodies(log) if "player" in record]
    assert player_records
    assert all(record["t_ms"] % TICK_MS == 0 for record in player_records)


@pytest.mark.parametrize(
    ("profile", "bots", "seed"),
    [
        ("table", (EASY, EASY), "seed 4"),
        ("table", (EASY, EASY), "seed 1"),
        ("nertz", (NORMAL, NORMAL), "seed 7"),
        ("table", (HARD,) * 4, "seed 0"),
    ],
)
def test_bots_never_cheat(profile: str, bots: tuple[BotProfile, ...], seed: str) -> None:
    """Every bounce is a lost race, a move overtaken by a call, or a move sent before a
    stall shift reached its sender (the shift recorded just before it)."""
    simulation, log = played(profile, bots, seed)
    records = bodies(log)
    reach = 2 * max(seat.latency.mean_ms + seat.latency.jitter_ms for seat in simulation.seats)
    for index, record in enumerate(records):
        if record["kind"] != "bounce" or record["reason"] in (LOST_RACE, AFTER_A_CALL):
            continue
        assert record["reason"] in OVERTAKEN_BY_A_SHIFT, record
        assert any(
            earlier["kind"] == "stall"
            and earlier["hand"] == record["hand"]
            and record["t_ms"] - earlier["t_ms"] <= reach + TICK_MS
            for earlier in records[:index]
        ), record


def test_stall_shifts_and_blocked_hands_happen_with_two_slow_players() -> None:
    simulation, log = played("table", (EASY, EASY), "seed 4")
    assert simulation.stall_shifts >= 5
    assert simulation.blocked == 1
    assert [r["reason"] for r in bodies(log) if r["kind"] == "hand_end"].count("blocked") == 1


# --- clocks and latency -------------------------------------------------------------------


def test_each_speed_acts_at_its_pace_over_many_actions() -> None:
    paces: dict[str, list[float]] = {name: [] for name in BOTS}
    for seed in ("seed 0", "seed 1"):
        simulation, _ = played("table", MIX, seed, target=60)
        for seat in simulation.seats:
            assert seat.actions > 100
            paces[seat.bot.name].append(seat.mean_action_ms)
    assert all(1900 <= pace <= 2100 for pace in paces["easy"]), paces  # "about every 2 s"
    assert all(1250 <= pace <= 1550 for pace in paces["normal"]), paces  # "a little faster"
    assert all(600 <= pace <= 800 for pace in paces["hard"]), paces  # "roughly every 0.7 s"


def test_the_report_counts_what_the_log_holds() -> None:
    simulation, log = played("table", MIX, "seed 0")
    records = bodies(log)
    for number, seat in enumerate(simulation.seats):
        sent = [r for r in records if r.get("player") == number and "move" in r]
        assert len(sent) + seat.stale == seat.actions
    assert simulation.tally.submissions == sum(1 for r in records if "move" in r)
    assert simulation.virtual_ms == records[-1]["t_ms"]


def test_latency_draws_stay_in_their_band() -> None:
    words = SimulationSeed.from_text("band").words("network", 0)
    latency = Latency(80, 20)
    draws = [latency.draw(words) for _ in range(3000)]
    assert min(draws) >= 60 and max(draws) <= 100
    assert sum(draws) / len(draws) == pytest.approx(80, rel=0.02)
    assert Latency(50).draw(words) == 50
    assert str(latency) == "80±20 ms"
    with pytest.raises(ValueError, match="jitter"):
        Latency(10, 11)


def test_a_fixed_latency_and_tick_are_used(tmp_path: Path) -> None:
    path = tmp_path / "game.jsonl"
    lags = [Latency(30), Latency(200, 50)]
    simulation = simulate(path, short("table", 15), MIX[:2], "lag", TABLE_KEY, latencies=lags)
    assert [seat.latency for seat in simulation.seats] == lags
    for output in (path, *simulation.receipts):
        output.unlink()
    simulate(path, short("table", 15), MIX[:2], "lag", TABLE_KEY, latencies=lags, tick_ms=1)
    times = [r["t_ms"] for r in log_bodies(path) if "player" in r]
    assert any(t % TICK_MS for t in times)  # every millisecond is its own instant


# --- refusals, failure, durability ------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"bots": (EASY,) * 5, "rules": "nertz"}, "2 to 4 players, not 5"),
        ({"player_keys": PLAYER_KEYS[:1]}, "2 bots but 1 player key"),
        ({"latencies": [Latency(10)]}, "2 bots but 1 latency"),
        ({"tick_ms": 0}, "at least 1 ms"),
        ({"seed": ""}, "non-empty"),
    ],
)
def test_inputs_that_do_not_fit_are_refused(
    tmp_path: Path, kwargs: dict[str, Any], message: str
) -> None:
    arguments: dict[str, Any] = {"bots": MIX[:2], "rules": "table", "seed": "x", **kwargs}
    rules = short(arguments.pop("rules"))
    bots, seed = arguments.pop("bots"), arguments.pop("seed")
    path = tmp_path / "game.jsonl"
    with pytest.raises(ValueError, match=message):
        simulate(path, rules, bots, seed, TABLE_KEY, **arguments)
    assert not path.exists()


def test_a_match_that_does_not_end_leaves_an_unfinished_log(tmp_path: Path) -> None:
    path = tmp_path / "game.jsonl"
    with pytest.raises(SimulationError, match="did not end within 200 events"):
        simulate(path, short("table"), MIX[:2], "x", TABLE_KEY, max_events=200)
    report = verify_log(path, Settings(table_key=TABLE_PUB))
    assert report.finding is not None and report.finding.code is VerifyCode.UNFINISHED


def test_a_simulation_skips_the_fsync_unless_durable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    synced: list[int] = []
    real_fsync = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: synced.append(fd) or real_fsync(fd))
    fast = simulate(tmp_path / "fast.jsonl", short("table", 10), MIX[:2], "x", TABLE_KEY)
    assert synced == []
    durable = simulate(
        tmp_path / "durable.jsonl", short("table", 10), MIX[:2], "x", TABLE_KEY, durable=True
    )
    assert len(synced) == durable.tally.records == fast.tally.records
    assert (tmp_path / "fast.jsonl").read_bytes() == (tmp_path / "durable.jsonl").read_bytes()


# --- the command ------------------------------------------------------------------------------


@pytest.fixture
def keys(tmp_path: Path) -> Path:
    """table.key/.pub and seat0..3.key/.pub in tmp_path/keys (test fixtures)."""
    directory = tmp_path / "keys"
    directory.mkdir()
    save_key_pair(TABLE_KEY, directory, "table")
    for seat, key in enumerate(PLAYER_KEYS):
        save_key_pair(key, directory, f"seat{seat}")
    return directory


def run(*args: object) -> Any:
    return CliRunner().invoke(main, ["simulate", *map(str, args)])


def test_a_profile_file_under_a_built_in_name_is_refused_before_any_play(
    tmp_path: Path, keys: Path
) -> None:
    """Issue 29's closing words: "one line and a non-zero exit for every failure". A profile
    file named `table` with another target gave a traceback (the table refusing its genesis,
    RESERVED_RULES_NAME); item 14: say what differs from the built-in profile."""
    document = builtin_document("table")
    document["match"]["target"] = 20
    profile = tmp_path / "short.json"
    profile.write_text(json.dumps(document))
    out = tmp_path / "game.jsonl"
    result = run("--rules", profile, "--players", 2, "--seed", "s",
                 "--signing-key", keys / "table.key", "--out", out)  # fmt: skip
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert (
        "Error: Invalid value for --rules: the rules are named like the built-in profile "
        "'table' but are not it (match.target: 20 (table: 100)): a built-in name is reserved "
        "for that very profile; name them 'table-custom'\n"
    ) in result.stderr
    assert not out.exists()


def test_simulate_writes_a_log_that_verifies_and_summarises_it(tmp_path: Path, keys: Path) -> None:
    out = tmp_path / "cup.jsonl"
    result = run(
        "--players", 3, "--bots", "easy,normal,hard", "--seed", "cup", "--hands", 2,
        "--signing-key", keys / "table.key", "--player-keys", keys, "--out", out,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert result.stderr == ""  # no progress bar when standard error is not a terminal
    summary = result.stdout
    for expected in ("hand  ended by", "total", "winner", "bounced", "ties", "stall shifts"):
        assert expected in summary
    assert "blocked of" in summary and "Ada (easy)" in summary and "Cleo (hard)" in summary
    assert f"racing-demon verify {out} --table-key {keys / 'table.pub'}" in summary
    assert len(summary.splitlines()) <= 25  # one screen
    records = log_bodies(out)
    assert records[0]["rules"]["match"]["max_hands"] == 2
    assert records[0]["rules"]["name"] == "table-custom"  # no longer the built-in profile
    assert 1 <= sum(r["kind"] == "hand_end" for r in records) <= 2
    assert all(player["key"] for player in records[0]["players"])
    code, report = invoke("verify", str(out), "--table-key", str(keys / "table.pub"))
    assert code == 0, report
    assert f"rules table-custom version 2 · custom · sha256 {records[0]['rules_sha256']}" in report


def test_the_summary_fits_one_screen_however_many_hands() -> None:
    simulation, _ = played("table", MIX, "seed 0")
    hands = simulation.match.hands * 9
    # The same hands renumbered, in a match that only its number of hands ends.
    match = Match(replace(simulation.rules, target=None, max_hands=len(hands)), len(MIX))
    for number, scored in enumerate(hands, start=1):
        match = match.record(replace(scored, hand=number))
    many = replace(simulation, match=match)
    text = summary_text(many, "table.pub")
    assert len(text.splitlines()) <= 32
    assert f"…     {len(many.match.hands) - 14} more hands" in text
    hand_rows = [line for line in text.splitlines() if " call " in line]
    assert len(hand_rows) == 14
    assert all(len(row) == len(hand_rows[0]) for row in hand_rows)  # columns line up


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_terminal_gets_a_progress_bar(
    tmp_path: Path, keys: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    terminal = _Terminal()
    monkeypatch.setattr(progress, "sys", SimpleNamespace(stderr=terminal))
    result = run(
        "--players", 2, "--seed", "bar", "--signing-key", keys / "table.key",
        "--out", tmp_path / "game.jsonl",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "simulating" in terminal.getvalue()
    assert "100%" in terminal.getvalue()


def test_simulate_is_reproducible_from_the_command_line(tmp_path: Path, keys: Path) -> None:
    args = ["--rules", "nertz", "--players", 2, "--bots", "hard", "--seed", "again", "--hands", 2]
    key = ["--signing-key", keys / "table.key"]
    assert run(*args, *key, "--out", tmp_path / "a.jsonl").exit_code == 0
    assert run(*args, *key, "--out", tmp_path / "b.jsonl").exit_code == 0
    assert (tmp_path / "a.jsonl").read_bytes() == (tmp_path / "b.jsonl").read_bytes()


def test_simulate_never_overwrites_a_log(tmp_path: Path, keys: Path) -> None:
    out = tmp_path / "game.jsonl"
    out.write_text("precious\n")
    result = run("--players", 2, "--seed", "s", "--signing-key", keys / "table.key", "--out", out)
    assert result.exit_code == 2
    assert "exists: a log or receipts file is never overwritten" in result.output
    assert out.read_text() == "precious\n"


def test_simulate_reads_an_encrypted_table_key(tmp_path: Path) -> None:
    save_key_pair(TABLE_KEY, tmp_path, "locked", passphrase=b"open sesame")
    secret = tmp_path / "pass.txt"
    secret.write_text("open sesame\n")
    base = ["--players", 2, "--seed", "s", "--hands", 1, "--signing-key", tmp_path / "locked.key"]
    refused = run(*base, "--out", tmp_path / "a.jsonl")
    assert refused.exit_code == 2 and "a passphrase is needed" in refused.output
    done = run(*base, "--passphrase-file", secret, "--out", tmp_path / "b.jsonl")
    assert done.exit_code == 0, done.output


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--bots", "easy,wizard"], "unknown bot 'wizard'"),
        (["--bots", "easy,hard,hard"], "3 bots for 2 players"),
        (["--rules", "nertz", "--players", "5"], "2 to 4 players"),
        (["--seed", ""], "non-empty"),
        (["--latency", "fast"], "MEAN or MEAN/JITTER"),
        (["--latency", "10/20"], "above the mean"),
        (["--latency", "10,20,30"], "3 latencies for 2 players"),
        (["--hands", "0"], "--hands"),
        (["--tick", "0"], "--tick"),
        (["--signing-key", "{keys}/table.pub"], "that is a public key"),
        (["--signing-key", "{keys}/none.key"], "no key file"),
        (["--player-keys", "{keys}", "--players", "4", "--bots", "hard"], None),
        (["--passphrase-file", "{keys}/table.pub", "--ask-passphrase"], "not both"),
    ],
)
def test_misuse_exits_2_with_a_message(
    tmp_path: Path, keys: Path, args: list[str], message: str | None
) -> None:
    (keys / "seat3.key").unlink()
    base = {"--players": "2", "--seed": "s", "--signing-key": str(keys / "table.key")}
    for flag in args[::2]:
        base.pop(flag, None)
    argv = [part.format(keys=keys) for pair in base.items() for part in pair]
    argv += [arg.format(keys=keys) for arg in args]
    code, output = invoke("simulate", *argv, "--out", str(tmp_path / "game.jsonl"))
    assert code == 2, output
    assert "Traceback" not in output
    expected = message or f"racing-demon keygen seat3 --dir {keys}"
    assert expected in output
    assert not (tmp_path / "game.jsonl").exists()


def test_simulate_help_has_examples() -> None:
    code, output = invoke("simulate", "--help")
    assert code == 0
    assert "Examples:" in output and "--player-keys" in output and "--durable" in output
    code, output = invoke("--help")
    assert "simulate" in output


# --- the use case, without click ---------------------------------------------------------------


class _Printed:
    """An ``echo`` that keeps what each stream got."""

    def __init__(self) -> None:
        self.out = self.err = ""

    def __call__(self, text: str, to_stderr: bool) -> None:
        if to_stderr:
            self.err += text + "\n"
        else:
            self.out += text + "\n"


def test_a_simulation_run_in_the_library_prints_and_writes_what_the_command_does(
    tmp_path: Path, keys: Path
) -> None:
    """Issue 30, point 2: "Move the use cases down ... text and JSON reporters chosen by
    name ... a game server can call every use case without click". The use case, given its
    keys in memory, writes the log and receipts the command writes and prints its words."""
    args = ["--players", 3, "--bots", "easy,normal,hard", "--seed", "cup", "--hands", 2]
    by_command = tmp_path / "cli" / "cup.jsonl"
    by_command.parent.mkdir()
    for name in REPORTERS:
        printed = _Printed()
        here = tmp_path / name / "cup.jsonl"
        here.parent.mkdir()
        run_here = SimulationRun(
            rules=load_rules("table"),
            players=3,
            bots=(EASY, NORMAL, HARD),
            seed="cup",
            table_key=lambda: TABLE_KEY,
            public_key="table.pub",
            player_keys=lambda seats: PLAYER_KEYS[:seats],
            hands=2,
            out=str(here),
        )
        played = run_simulation(run_here, simulation_reporter_named(name, printed))
        command = run(*args, "--signing-key", keys / "table.key", "--player-keys", keys,
                      "--out", by_command, *(["--json"] if name == "json" else []))  # fmt: skip
        assert (command.exit_code, printed.err, command.stderr) == (0, "", "")
        assert played.path == here and played.match.played <= 2
        shown = printed.out.replace(str(here.parent), str(by_command.parent))
        assert shown == command.stdout.replace(str(keys / "table.pub"), "table.pub")
        written = sorted(path.name for path in here.parent.iterdir())
        assert written == ["cup.jsonl", *(f"cup.seat{seat}.receipts.jsonl" for seat in range(3))]
        for path in here.parent.iterdir():
            assert path.read_bytes() == (by_command.parent / path.name).read_bytes()
            (by_command.parent / path.name).unlink()


def test_a_simulation_that_cannot_be_played_is_refused_before_any_key_is_asked_for(
    tmp_path: Path,
) -> None:
    """The checks the command made are the use case's: a server meets them too, as a
    SimulationUsageError naming the option (the command line's exit 2), and the key
    sources (a passphrase prompt on the command line) are never asked."""
    (tmp_path / "game.seat1.receipts.jsonl").write_text("precious\n")

    def no_key() -> Ed25519PrivateKey:
        raise AssertionError("the key was asked for")

    base = SimulationRun(
        rules=load_rules("nertz"),
        players=2,
        bots=(EASY,),
        seed="s",
        table_key=no_key,
        out=str(tmp_path / "game.jsonl"),
    )
    refusals = [
        (replace(base, bots=(EASY, EASY, EASY)), "--bots", "3 bots for 2 players"),
        (replace(base, players=5), "--players", "profile 'nertz' is for 2 to 4 players"),
        (replace(base, hands=0), "--hands", "a match has 1 to"),
        (replace(base, out="-", receipts=True), "--out", "--out - has none"),
        (base, "--out", "game.seat1.receipts.jsonl exists"),
    ]
    for refused, option, message in refusals:
        with pytest.raises(SimulationUsageError, match=re.escape(message)) as error:
            run_simulation(refused, simulation_reporter_named("text", _Printed()))
        assert error.value.option == option
    with pytest.raises(SimulationUsageError, match="--json would print") as error:
        run_simulation(replace(base, out="-"), simulation_reporter_named("json", _Printed()))
    assert error.value.option is None
    assert sorted(path.name for path in tmp_path.iterdir()) == ["game.seat1.receipts.jsonl"]


def test_a_server_calls_the_batch_and_the_simulation_without_click(tmp_path: Path) -> None:
    """Issue 30, point 2: "a game server can call every use case without click". In a
    process where click cannot be imported, the simulation writes a log and the batch
    verifies it, each through the library alone."""
    script = f"""
import sys
sys.modules["click"] = None  # any import of click now fails
from pathlib import Path
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from racing_demon.batch import BatchRun, run_batch
from racing_demon.log.keys import raw_public_bytes
from racing_demon.profiles import load_rules
from racing_demon.report.batch import reporter_named
from racing_demon.report.simulation import simulation_reporter_named
from racing_demon.sim.bots import HARD
from racing_demon.sim.run import SimulationRun, run_simulation
from racing_demon.verify import Settings

key = Ed25519PrivateKey.from_private_bytes(bytes([3]) * 32)
log = Path({str(tmp_path / "game.jsonl")!r})
played = SimulationRun(rules=load_rules("table"), players=2, bots=(HARD,), seed="server",
                       table_key=lambda: key, hands=1, out=str(log))
print("simulated", run_simulation(played, simulation_reporter_named("json")).match.played)
verified = BatchRun(logs=[str(log)], settings=Settings(table_key=raw_public_bytes(key)),
                    report=str(log.with_name("report.jsonl")))
print("verified", int(run_batch(verified, reporter_named("json"))))
assert "click" not in {{name.split(".")[0] for name in sys.modules if sys.modules[name]}}
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[-1] == "verified 0" and "simulated 1" in lines
    document = json.loads(done.stdout[: done.stdout.index("simulated 1")])
    assert document["format"] == "racing-demon/simulation-report/v1" and document["played"] == 1
    report = json.loads((tmp_path / "report.jsonl").read_text())
    assert report["verdict"] == "verified"
    assert sorted(path.name for path in tmp_path.iterdir()) == [
        "game.jsonl",
        "game.seat0.receipts.jsonl",
        "game.seat1.receipts.jsonl",
        "report.jsonl",
    ]
