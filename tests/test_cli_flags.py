"""Issue 16, points 1-4 and 11: one meaning per option name, the dealer secret never on the
command line, deal previews from a secret or a log, key paths, and bounded plain seeds
(docs/command-line.md, "Option names" to "Key files")."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from racing_demon.cli import main
from racing_demon.game.deal import commitment
from racing_demon.log.keys import save_key_pair
from racing_demon.schema import schema_errors
from racing_demon.sim.simulate import SimulationSeed

from conftest import log_bodies

REPO = Path(__file__).parent.parent
TOURNAMENT_LOG = REPO / "sample_games" / "tournament" / "table-1.jsonl"
SEED = "flags"
SECRET = SimulationSeed.from_text(SEED).dealer_secret
SOURCES = "file:PATH, env:VAR or stdin"
DEPRECATED_SEED = (
    "racing-demon: --seed SECRET is deprecated and will be removed in the next release: "
    "give --secret file:PATH, env:VAR or stdin\n"
)
DEPRECATED_TABLE_KEY = (
    "racing-demon: --table-key KEY for the private key is deprecated and will be removed in "
    "the next release: give --signing-key KEY\n"
)


def run(*args: object, input: str | None = None, env: dict[str, str] | None = None) -> Result:
    result = CliRunner().invoke(main, [str(arg) for arg in args], input=input, env=env)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder with table.key/.pub and game.jsonl, two hands simulated from SEED."""
    folder = tmp_path_factory.mktemp("played")
    save_key_pair(Ed25519PrivateKey.from_private_bytes(bytes([16]) * 32), folder, "table")
    result = run(
        "simulate", "--players", 2, "--seed", SEED, "--hands", 2, "--no-receipts",
        "--signing-key", folder / "table.key", "--out", folder / "game.jsonl",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    genesis = log_bodies(folder / "game.jsonl")[0]
    assert genesis["commitment"] == commitment(SECRET)  # the secret the tests give
    return folder


@pytest.fixture
def secret_file(tmp_path: Path) -> Path:
    path = tmp_path / "secret.txt"
    path.write_text(SECRET.hex() + "\n")
    return path


@pytest.fixture
def unfinished(played: Path, tmp_path: Path) -> Path:
    """The played log without its final record: it reveals no secret."""
    lines = (played / "game.jsonl").read_bytes().splitlines(keepends=True)
    path = tmp_path / "unfinished.jsonl"
    path.write_bytes(b"".join(lines[:-1]))
    return path


def digests(log: Path) -> dict[int, list[str]]:
    """Every hand_start's pack digests, by hand."""
    return {b["hand"]: b["packs"] for b in log_bodies(log) if b["kind"] == "hand_start"}


def dealt_digests(result: Result) -> list[str]:
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert schema_errors("deal-report", document) == []
    return [seat["pack_digest"] for seat in document["seats"]]


# -- 1. one meaning per option name ---------------------------------------------------------


def test_the_deprecated_seed_secret_still_verifies_with_one_line_on_stderr(played: Path) -> None:
    log, pub = played / "game.jsonl", played / "table.pub"
    result = run("verify", log, "--table-key", pub, "--seed", SECRET.hex())
    assert result.exit_code == 0, result.output
    assert result.stderr == DEPRECATED_SEED


def test_secret_and_the_deprecated_seed_together_are_refused(
    played: Path, secret_file: Path
) -> None:
    result = run(
        "verify", played / "game.jsonl", "--seed", SECRET.hex(), "--secret", f"file:{secret_file}"
    )
    assert result.exit_code == 2
    assert "give --secret, not also the deprecated --seed" in result.output


@pytest.mark.parametrize("command", ["verify", "replay", "recover", "view"])
def test_help_offers_the_secret_source_and_hides_the_old_spelling(command: str) -> None:
    result = run(command, "--help")
    assert result.exit_code == 0
    assert "--secret SOURCE" in result.stdout and SOURCES in " ".join(result.stdout.split())
    assert "--seed" not in result.stdout


@pytest.mark.parametrize(
    "command",
    [["verify"], ["audit"], ["recover"], ["view"], ["tournament", "score"]],
)
def test_table_key_is_the_public_key_everywhere(command: list[str]) -> None:
    result = run(*command, "--help")
    assert result.exit_code == 0
    assert "--table-key PUB" in result.stdout and "public key" in " ".join(result.stdout.split())


@pytest.mark.parametrize("command", [["simulate"], ["tournament", "simulate"]])
def test_the_private_key_is_the_signing_key(command: list[str]) -> None:
    result = run(*command, "--help")
    assert result.exit_code == 0
    assert "--signing-key KEY" in result.stdout
    assert "private key" in " ".join(result.stdout.split())
    assert "--table-key" not in result.stdout.split("Examples:")[0]


def test_simulate_with_the_deprecated_table_key_still_signs(played: Path, tmp_path: Path) -> None:
    out = tmp_path / "old.jsonl"
    result = run(
        "simulate", "--players", 2, "--seed", SEED, "--hands", 1, "--no-receipts",
        "--table-key", played / "table.key", "--out", out,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert result.stderr == DEPRECATED_TABLE_KEY
    assert run("verify", out, "--table-key", played / "table.pub").exit_code == 0


def test_simulate_needs_one_signing_key(played: Path, tmp_path: Path) -> None:
    base = ["simulate", "--players", 2, "--seed", SEED, "--out", tmp_path / "x.jsonl"]
    result = run(*base)
    assert result.exit_code == 2 and "Missing option '--signing-key'" in result.output
    key = played / "table.key"
    result = run(*base, "--signing-key", key, "--table-key", key)
    assert result.exit_code == 2
    assert "give --signing-key, not also the deprecated --table-key" in result.output
    assert not (tmp_path / "x.jsonl").exists()


# -- 2. the dealer secret from a file, the environment or standard input ---------------------


def test_verify_reads_the_secret_from_a_file_the_environment_or_stdin(
    played: Path, secret_file: Path
) -> None:
    log, pub = played / "game.jsonl", played / "table.pub"
    for source, extra in (
        (f"file:{secret_file}", {}),
        ("env:DEALER_SECRET", {"env": {"DEALER_SECRET": SECRET.hex().upper()}}),
        ("stdin", {"input": SECRET.hex() + "\n"}),
    ):
        result = run("verify", log, "--table-key", pub, "--secret", source, **extra)  # type: ignore[arg-type]
        assert result.exit_code == 0, (source, result.output)
        assert result.stderr == ""
    wrong = run("verify", log, "--table-key", pub, "--secret", "env:S", env={"S": "ab" * 32})
    assert wrong.exit_code == 1  # the secret is read; it is not the log's


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("a" * 63, "expected 64 hex characters (0-9, a-f), got 63"),
        ("a" * 63 + "g", "expected 64 hex characters (0-9, a-f), got 'g' at position 64"),
    ],
)
def test_a_secret_that_is_not_64_hex_says_what_is_wrong(
    played: Path, value: str, message: str
) -> None:
    result = run("replay", played / "game.jsonl", "--secret", "env:S", env={"S": value})
    assert result.exit_code == 2
    assert f"$S holds no secret: {message}" in result.output
    result = run("replay", played / "game.jsonl", "--seed", value)
    assert result.exit_code == 2 and message in result.output


def test_the_secret_itself_is_refused_where_its_source_belongs(played: Path) -> None:
    result = run("verify", played / "game.jsonl", "--secret", SECRET.hex())
    assert result.exit_code == 2
    assert "never the secret itself" in result.output
    assert SECRET.hex() not in result.output


def test_replay_of_an_unfinished_log_takes_the_secret_from_a_file(
    unfinished: Path, secret_file: Path
) -> None:
    result = run("replay", unfinished)
    assert result.exit_code == 2 and "give the dealer secret, --secret SOURCE" in result.output
    result = run("replay", unfinished, "--secret", f"file:{secret_file}")
    assert result.exit_code == 0, result.output


def test_seed_check_reads_the_secret_and_accepts_uppercase(secret_file: Path) -> None:
    published = commitment(SECRET).upper()
    result = run("seed", "check", published, "--secret", f"file:{secret_file}")
    assert result.exit_code == 0 and result.stdout == "ok: the secret matches the commitment\n"
    other = commitment(bytes(32))
    result = run("seed", "check", other, "--secret", f"file:{secret_file}")
    assert result.exit_code == 1 and "MISMATCH" in result.output


def test_seed_check_in_the_old_order_still_works_with_one_line_on_stderr() -> None:
    result = run("seed", "check", SECRET.hex().upper(), commitment(SECRET))
    assert result.exit_code == 0, result.output
    assert result.stderr == (
        "racing-demon: seed check SECRET COMMITMENT is deprecated and will be removed in the "
        "next release: give seed check COMMITMENT --secret SOURCE (SOURCE is file:PATH, "
        "env:VAR or stdin)\n"
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([commitment(SECRET)], "give --secret SOURCE (file:PATH, env:VAR or stdin)"),
        (["ab" * 31, "--secret", "env:S"], "expected 64 hex characters (0-9, a-f), got 62"),
        (["a", "b", "c"], "give one COMMITMENT (and --secret SOURCE), got 3 arguments"),
        ([SECRET.hex(), commitment(SECRET), "--secret", "env:S"], "give the secret once"),
    ],
)
def test_seed_check_misuse_exits_2(args: list[str], message: str) -> None:
    result = run("seed", "check", *args, env={"S": SECRET.hex()})
    assert result.exit_code == 2
    assert message in result.output


def test_seed_new_writes_the_secret_to_a_private_file(tmp_path: Path) -> None:
    path = tmp_path / "secret.txt"
    result = run("seed", "new", "-o", path)
    assert result.exit_code == 0
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    published = result.stdout.split("commitment")[1].split()[0]
    assert run("seed", "check", published, "--secret", f"file:{path}").exit_code == 0


def test_uppercase_game_ids_and_digests_are_accepted(played: Path) -> None:
    log, pub = played / "game.jsonl", played / "table.pub"
    genesis = log_bodies(log)[0]
    result = run(
        "verify", log, "--table-key", pub, "--game-id", genesis["game"].upper(),
        "--rules", genesis["rules_sha256"].upper(),
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    result = run("verify", log, "--game-id", "ab" * 15)
    assert result.exit_code == 2
    assert "expected 32 hex characters (0-9, a-f), got 30" in result.output


# -- 3. previewing the deal of a committed match, or of a log --------------------------------


def test_deal_from_the_secret_and_the_entropy_is_the_match_deal(
    played: Path, secret_file: Path
) -> None:
    log = played / "game.jsonl"
    entropy = log_bodies(log)[0]["entropy"]
    for hand, packs in digests(log).items():
        args: list[Any] = ["deal", "--secret", f"file:{secret_file}", "--hand", hand, "--json"]
        for contribution in entropy:
            args += ["--entropy", contribution.upper()]
        assert dealt_digests(run(*args)) == packs
    text = run(
        "deal",
        "--secret",
        f"file:{secret_file}",
        *(arg for e in entropy for arg in ("--entropy", e)),
    )
    assert text.exit_code == 0
    assert text.stdout.startswith(f"hand 1 · profile table · commitment {commitment(SECRET)} · ")
    assert SECRET.hex() not in text.stdout


def test_deal_from_a_log_is_the_log_deal(played: Path) -> None:
    log = played / "game.jsonl"
    genesis = log_bodies(log)[0]
    for hand, packs in digests(log).items():
        result = run("deal", "--log", log, "--hand", hand, "--json")
        assert dealt_digests(result) == packs
        document = json.loads(result.stdout)
        assert document["commitment"] == genesis["commitment"]
        assert document["game"] == genesis["game"] and "seed" not in document
    text = run("deal", "--log", log).stdout
    assert f"game {genesis['game']} · commitment {genesis['commitment']}" in text.splitlines()[0]


def test_deal_from_a_tournament_log_deals_the_plan_packs() -> None:
    for hand, packs in digests(TOURNAMENT_LOG).items():
        assert (
            dealt_digests(run("deal", "--log", TOURNAMENT_LOG, "--hand", hand, "--json")) == packs
        )


def test_deal_from_an_unfinished_log_needs_the_secret(unfinished: Path, secret_file: Path) -> None:
    result = run("deal", "--log", unfinished)
    assert (
        result.exit_code == 2 and "has no final record yet: give the dealer secret" in result.output
    )
    result = run("deal", "--log", unfinished, "--secret", "env:S", env={"S": "ab" * 32})
    assert result.exit_code == 2
    assert "does not open the commitment of" in result.output
    result = run("deal", "--log", unfinished, "--secret", f"file:{secret_file}", "--json")
    assert dealt_digests(result) == digests(unfinished)[1]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([], "give one of --seed TEXT, --secret SOURCE with --entropy HEX, or --log LOG; got none"),
        (["--seed", "x", "--log", "g.jsonl"], "got --seed and --log"),
        (["--seed", "x"], "Missing option '--players' (with --seed)."),
        (["--secret", "env:S"], "give every seat's --entropy HEX, in seat order"),
        (["--seed", "x", "--players", "2", "--entropy", "ab" * 16], "--entropy goes with --secret"),
        (["--secret", "env:S", "--entropy", "abc"], "seat 0's contribution: expected an even"),
        (["--secret", "env:S", "--entropy", "zz" * 16], "got 'z' at position 1"),
        (
            ["--secret", "env:S", "--entropy", "ab" * 16, "--entropy", "cd" * 16, "--players", "3"],
            "--players 3, but 2 seats' --entropy",
        ),
        (["--log", "g.jsonl", "--players", "2"], "--log gives the rules, seats and entropy"),
    ],
)
def test_deal_misuse_exits_2(args: list[str], message: str) -> None:
    result = run("deal", *args, env={"S": SECRET.hex()})
    assert result.exit_code == 2
    assert message in result.output


# -- 4. keygen takes a path, and refuses what names no key -----------------------------------


@pytest.mark.parametrize(
    ("name", "private", "public"),
    [
        ("keys/table", "keys/table.key", "keys/table.pub"),
        ("table.key", "table.key", "table.pub"),
        ("table.pub", "table.key", "table.pub"),
        ("../up", "../up.key", "../up.pub"),
    ],
)
def test_keygen_takes_a_path(tmp_path: Path, name: str, private: str, public: str) -> None:
    work = tmp_path / "work"
    (work / "keys").mkdir(parents=True)
    result = run("keygen", name, "--dir", work)
    assert result.exit_code == 0, result.output
    assert (work / private).is_file() and (work / public).is_file()
    assert len([path for path in tmp_path.rglob("*") if path.is_file()]) == 2  # no table.key.key
    assert f"private  {work / private}" in result.stdout


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("", "the key name is empty"),
        (".", "key name '.' names a folder, not a key"),
        ("..", "key name '..' names a folder, not a key"),
        ("keys/..", "names a folder, not a key"),
        (".key", "names a folder, not a key"),
        ("keys/", "key name 'keys/' ends with /: give a file name in that folder"),
        ("keys", "is a folder: give a key name in it"),
        ("missing/table", "no folder"),
        ("a\\b", "separate folders with /"),
    ],
)
def test_keygen_refuses_what_is_not_a_key_name(tmp_path: Path, name: str, message: str) -> None:
    (tmp_path / "keys").mkdir()
    result = run("keygen", name, "--dir", tmp_path)
    assert result.exit_code == 2
    assert message in result.output
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["keys"]


def test_keygen_refuses_a_whole_path_with_dir(tmp_path: Path) -> None:
    result = run("keygen", tmp_path / "table", "--dir", tmp_path)
    assert result.exit_code == 2 and "is a whole path: give it, or --dir, not both" in result.output
    result = run("keygen", tmp_path / "table")
    assert result.exit_code == 0 and (tmp_path / "table.key").is_file()


# -- 11. a plain seed is bounded, and a header shows a bounded part of it ---------------------


def test_a_long_plain_seed_is_refused_with_the_limit(played: Path, tmp_path: Path) -> None:
    long = "x" * 100_000
    result = run("deal", "--seed", long, "--players", 2)
    assert result.exit_code == 2
    assert "a seed is at most 1,000 characters, got 100,000" in result.output
    result = run(
        "simulate", "--players", 2, "--seed", long, "--signing-key", played / "table.key",
        "--out", tmp_path / "long.jsonl",
    )  # fmt: skip
    assert result.exit_code == 2
    assert "a seed is at most 1,000 characters, got 100,000" in result.output
    assert not (tmp_path / "long.jsonl").exists()


def test_the_header_shows_a_bounded_prefix_of_the_seed() -> None:
    seed = "y" * 1000
    result = run("deal", "--seed", seed, "--players", 2)
    assert result.exit_code == 0
    header = result.stdout.splitlines()[0]
    assert f'seed "{"y" * 60}"… (1,000 characters) · 2 players' in header
    assert len(header) < 160
    document = json.loads(run("deal", "--seed", seed, "--players", 2, "--json").stdout)
    assert document["seed"] == seed  # the JSON holds it whole


@pytest.mark.parametrize("command", [("simulate",), ("tournament", "simulate")])
def test_help_says_the_signing_key_is_required(command: tuple[str, ...]) -> None:
    result = CliRunner().invoke(main, [*command, "--help"], terminal_width=80)
    words = " ".join(result.output.split())
    assert "--signing-key KEY" in words and "it signs" in words
    assert words.split("--signing-key KEY", 1)[1].split("--", 1)[0].rstrip().endswith("[required]")
