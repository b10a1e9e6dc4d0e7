"""A simulated duplicate tournament: bots play every table of a plan, and the organiser's
secret is revealed only once every table has played out (docs/tournament.md, "Running a
simulated tournament"); ``racing-demon tournament simulate`` is its command."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from racing_demon.cli import main
from racing_demon.game.duplicate import Shape
from racing_demon.log.keys import load_public_key, raw_public_bytes, save_key_pair
from racing_demon.log.reader import read_lines
from racing_demon.profiles import load_rules
from racing_demon.sim.bots import BOTS
from racing_demon.sim.simulate import Simulation
from racing_demon.tournament.plan import Contribution, Plan, make_plan
from racing_demon.tournament.simulate import simulate_tournament, table_log
from racing_demon.verify import Settings, Verdict, VerifyCode, verify_log

from tampering import TABLE_KEY, TABLE_PUB

SECRET = bytes(range(7, 39))
SHAPE = Shape("Simulated cup", tables=3, seats=3, hands=2)
MIXED = (BOTS["easy"], BOTS["normal"], BOTS["hard"])
SETTINGS = Settings(table_key=TABLE_PUB)


def a_plan(shape: Shape = SHAPE) -> Plan:
    return make_plan(SECRET, shape, load_rules("nertz"), (Contribution("club", b"c" * 32),))


def kinds(log: Path) -> list[str]:
    with log.open("rb") as stream:
        return [line.value["body"]["kind"] for line in read_lines(stream)]


def test_every_table_is_played_and_verifies_once_the_secret_is_revealed(tmp_path: Path) -> None:
    plan = a_plan()
    result = simulate_tournament(tmp_path, plan, SECRET, MIXED, "cup", TABLE_KEY)
    assert result.logs == tuple(table_log(tmp_path, plan, t) for t in (1, 2, 3))
    for log in result.logs:
        report = verify_log(log, SETTINGS)
        assert report.verdict is Verdict.VERIFIED, report.finding
        assert len(report.hands) == SHAPE.hands  # "every table plays exactly H hands"


def test_the_secret_is_revealed_only_once_every_table_has_played_out(tmp_path: Path) -> None:
    # "A tournament table must not reveal the organiser's secret before every table has
    # finished": while a table plays, every table before it holds its final record.
    plan = a_plan()
    seen: list[list[str]] = []

    def on_table(simulation: Simulation) -> None:
        assert simulation.held
        played = [table_log(tmp_path, plan, t) for t in range(1, len(seen) + 2)]
        seen.append([kinds(log)[-1] for log in played])
        for log in played:
            assert verify_log(log, SETTINGS).finding.code is VerifyCode.UNFINISHED  # type: ignore[union-attr]

    simulate_tournament(tmp_path, plan, SECRET, MIXED, "cup", TABLE_KEY, on_table=on_table)
    assert [set(last) for last in seen] == [{"hand_end"}] * 3
    assert {kinds(table_log(tmp_path, plan, t))[-1] for t in (1, 2, 3)} == {"final"}


@pytest.mark.slow
def test_the_same_inputs_give_the_same_logs(tmp_path: Path) -> None:
    plan = a_plan()
    first = simulate_tournament(tmp_path / "a", plan, SECRET, MIXED, "cup", TABLE_KEY)
    second = simulate_tournament(tmp_path / "b", plan, SECRET, MIXED, "cup", TABLE_KEY)
    assert [log.read_bytes() for log in first.logs] == [log.read_bytes() for log in second.logs]


# Slow (issue 29, item 27: the quick run stays under 3 CPU-minutes):
# a whole tournament played.
@pytest.mark.slow
def test_every_player_of_the_tournament_has_a_name_of_their_own(tmp_path: Path) -> None:
    plan = a_plan(Shape("Big cup", tables=4, seats=3, hands=1))
    result = simulate_tournament(tmp_path, plan, SECRET, MIXED, "cup", TABLE_KEY)
    names = [seat.name for table in result.tables for seat in table.seats]
    assert len(set(names)) == len(names) == 12
    assert names[0] == "Ada (easy)" and names[8] == "Ada 2 (hard)"


# Slow (issue 29, item 27: the quick run stays under 3 CPU-minutes):
# a whole tournament played.
@pytest.mark.slow
def test_bots_per_seat_of_every_table(tmp_path: Path) -> None:
    plan = a_plan()
    bots = [BOTS[name] for name in ("easy", "easy", "hard") * 2 + ("normal",) * 3]
    result = simulate_tournament(tmp_path, plan, SECRET, bots, "cup", TABLE_KEY)
    speeds = [[seat.bot.name for seat in table.seats] for table in result.tables]
    assert speeds == [["easy", "easy", "hard"], ["easy", "easy", "hard"], ["normal"] * 3]


def test_refusals_write_nothing(tmp_path: Path) -> None:
    plan = a_plan()
    with pytest.raises(ValueError, match="does not open the plan's commitment"):
        simulate_tournament(tmp_path, plan, bytes(32), MIXED, "cup", TABLE_KEY)
    with pytest.raises(ValueError, match="give 3 bots"):
        simulate_tournament(tmp_path, plan, SECRET, MIXED[:2], "cup", TABLE_KEY)
    table_log(tmp_path, plan, 3).write_text("a user's file\n")
    with pytest.raises(FileExistsError):
        simulate_tournament(tmp_path, plan, SECRET, MIXED, "cup", TABLE_KEY)
    assert sorted(path.name for path in tmp_path.iterdir()) == ["table-3.jsonl"]
    assert table_log(tmp_path, plan, 3).read_text() == "a user's file\n"


# -- the command ------------------------------------------------------------------------


@pytest.fixture
def organiser(tmp_path: Path) -> Path:
    """A folder with the organiser's secret, the table's keys and a plan."""
    (tmp_path / "secret.txt").write_text(SECRET.hex() + "\n")
    save_key_pair(Ed25519PrivateKey.from_private_bytes(bytes(range(32))), tmp_path, "table")
    (tmp_path / "plan.json").write_text(json.dumps(a_plan().to_document()))
    return tmp_path


def run(folder: Path, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(
        main,
        [
            "tournament",
            "simulate",
            str(folder / "plan.json"),
            "--secret",
            f"file:{folder / 'secret.txt'}",
            "--signing-key",
            str(folder / "table.key"),
            *args,
        ],
    )
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.output


def test_the_command_plays_every_table_and_says_how_to_score(organiser: Path) -> None:
    logs = organiser / "logs"
    code, output = run(organiser, "--bots", "easy,normal,hard", "--seed", "cup", "--out", str(logs))
    assert code == 0, output
    assert sorted(path.name for path in logs.glob("table-?.jsonl")) == [
        f"table-{t}.jsonl" for t in (1, 2, 3)
    ]
    # The hint names the table's public key, beside the private one.
    assert f"--table-key {organiser / 'table.pub'}" in output
    key = raw_public_bytes(load_public_key(organiser / "table.pub"))
    for log in logs.glob("table-?.jsonl"):
        assert verify_log(log, Settings(table_key=key)).verdict is Verdict.VERIFIED


def test_the_command_refuses_what_it_cannot_use(organiser: Path) -> None:
    logs = organiser / "logs"
    code, output = run(organiser, "--bots", "easy,hard", "--seed", "cup", "--out", str(logs))
    assert code == 2 and "2 bots" in output
    logs.mkdir()
    (logs / "table-2.jsonl").write_text("kept\n")
    code, output = run(organiser, "--seed", "cup", "--out", str(logs))
    assert code == 2 and "never overwritten" in output
    assert sorted(path.name for path in logs.iterdir()) == ["table-2.jsonl"]
    (organiser / "secret.txt").write_text("00" * 32 + "\n")
    code, output = run(organiser, "--seed", "cup", "--out", str(organiser / "other"))
    assert code == 2 and "SECRET_MISMATCH" in output
    (organiser / "plan.json").write_text("{}")
    code, output = run(organiser, "--seed", "cup", "--out", str(organiser / "other"))
    assert code == 2 and "BAD_SCHEMA" in output


# -- receipts (issue 28, point 3: "`tournament simulate` keeps receipts like `simulate` does,
# so the sample tournament's audit with its receipts is clean") ----------------------------


def test_the_command_keeps_every_seats_receipts_and_each_table_audits_clean(
    organiser: Path,
) -> None:
    logs = organiser / "logs"
    code, output = run(organiser, "--seed", "cup", "--out", str(logs))
    assert code == 0, output
    assert "kept each seat's receipts" in output and "audit LOG --receipts" in output
    expected = {f"table-{t}.seat{s}.receipts.jsonl" for t in (1, 2, 3) for s in range(SHAPE.seats)}
    assert {path.name for path in logs.glob("*.receipts.jsonl")} == expected
    for table in (1, 2, 3):
        receipts = [str(logs / f"table-{table}.seat{s}.receipts.jsonl") for s in range(3)]
        assert all(Path(kept).stat().st_size > 0 for kept in receipts)
        args = ["audit", str(logs / f"table-{table}.jsonl"), "--table-key"]
        args += [str(organiser / "table.pub"), *(f"--receipts={kept}" for kept in receipts)]
        audited = CliRunner().invoke(main, args)
        assert audited.exit_code == 0, audited.output
        assert "receipt" in audited.output
    # The receipts sit beside the logs, and score does not take them for logs.
    pub = str(organiser / "table.pub")
    args = ["tournament", "score", str(organiser / "plan.json"), str(logs), "--table-key", pub]
    scored = CliRunner().invoke(main, [*args, "--jobs", "1"])
    assert scored.exit_code == 0, scored.output


def test_no_receipts_keeps_none_and_an_existing_receipts_file_is_kept(organiser: Path) -> None:
    logs = organiser / "logs"
    code, output = run(organiser, "--seed", "cup", "--out", str(logs), "--no-receipts")
    assert code == 0, output
    assert not list(logs.glob("*.receipts.jsonl")) and "kept each seat's" not in output
    other = organiser / "other"
    other.mkdir()
    (other / "table-2.seat1.receipts.jsonl").write_text("a client's receipts\n")
    code, output = run(organiser, "--seed", "cup", "--out", str(other))
    assert code == 2 and "never overwritten" in output
    assert [path.name for path in other.iterdir()] == ["table-2.seat1.receipts.jsonl"]
    with pytest.raises(FileExistsError):
        simulate_tournament(other, a_plan(), SECRET, MIXED, "cup", TABLE_KEY)
    assert [path.name for path in other.iterdir()] == ["table-2.seat1.receipts.jsonl"]
