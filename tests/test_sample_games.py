"""The sample-game corpus: every game gets the verdict, reason code, acceptances, audit
evidence and exit codes its manifest promises, from the command line; the folder holds
exactly what the manifest lists; scripts/regen_sample_games.py regenerates every byte of it
but the format v1 games, which it keeps byte for byte.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import replace
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from racing_demon.evidence import EVIDENCE
from racing_demon.log.receipts import parse_receipt, record_reference, seal_receipt
from racing_demon.log.records import FORMAT_VERSION
from racing_demon.schema import schema_errors

from conftest import invoke, load_script, log_bodies

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "sample_games"
TABLE_PUB = str(SAMPLES / "table.pub")
MANIFEST: dict[str, Any] = json.loads((SAMPLES / "manifest.json").read_text(encoding="utf-8"))
GAMES: list[dict[str, Any]] = MANIFEST["games"]
# Issue 4, item 6: what the valid games must show between them.
REQUIRED = {
    "bounced_race",
    "tie",
    "stall_shift",
    "blocked_hand",
    "hold_off_call",
    "demon_empty",
    "no_centre",
    "resignation",
    "several_hands_to_100",
    "shared_victory",
}


TOURNAMENT = SAMPLES / "tournament"
TOURNAMENT_LOGS = [f"table-{table}.jsonl" for table in range(1, 5)]
TOURNAMENT_FILES = {"plan.json", "sheets.html", "standings.json", "standings.html"}
TOURNAMENT_FILES |= set(TOURNAMENT_LOGS)
TOURNAMENT_RECEIPTS = {
    log: [log.replace(".jsonl", f".seat{seat}.receipts.jsonl") for seat in range(4)]
    for log in TOURNAMENT_LOGS
}
TOURNAMENT_FILES |= {name for names in TOURNAMENT_RECEIPTS.values() for name in names}


@cache
def regen() -> ModuleType:
    return load_script("regen_sample_games")


def by_file(category: str | None = None) -> list[Any]:
    return [
        pytest.param(game, id=game["file"])
        for game in GAMES
        if category is None or game["category"] == category
    ]


def test_the_manifest_follows_its_schema() -> None:
    assert schema_errors("sample-games-manifest", MANIFEST) == []


def test_the_schema_keeps_format_1_and_requirements_to_their_categories() -> None:
    """A format v1 log outside v1/ is a downgrade, described by the verify --require answer
    that refuses it; no other game carries one."""
    (downgrade,) = (game for game in GAMES if game["category"] == "downgraded")
    tampered = next(game for game in GAMES if game["category"] == "tampered")

    def errors(game: dict[str, Any], **changes: Any) -> list[str]:
        return schema_errors("sample-games-manifest", {**MANIFEST, "games": [{**game, **changes}]})

    assert errors(downgrade) == []
    assert errors(downgrade, require=None) != []
    assert errors(tampered, format=1) != []
    assert errors(tampered, require=downgrade["require"]) != []


def test_every_file_is_listed_and_every_listed_file_is_there() -> None:
    listed = {"manifest.json", "README.md", MANIFEST["table_key"]["file"]}
    valid = {g["file"] for g in GAMES if g["category"] == "valid"}
    v1 = {g["file"] for g in GAMES if g["category"] == "v1"}
    for game in GAMES:
        listed |= {game["file"], *([game["claim"]] if game["claim"] else [])}
        listed |= {*game["receipts"], *game["against"]}
        assert set(game["derived_from"]) <= (v1 if game["category"] == "v1" else valid)
        assert set(game["against"]) <= valid
    listed |= {f"tournament/{name}" for name in TOURNAMENT_FILES}
    on_disk = {
        path.relative_to(SAMPLES).as_posix() for path in SAMPLES.rglob("*") if path.is_file()
    }
    assert on_disk == listed
    assert len({game["file"] for game in GAMES}) == len(GAMES)


def test_every_profile_and_player_count_has_a_valid_game() -> None:
    valid = {(g["profile"], g["players"]["count"]) for g in GAMES if g["category"] == "valid"}
    assert valid >= {(p, n) for p in ("table", "peer2peer", "nertz") for n in (2, 3, 4)}
    assert {g["players"]["keyed"] for g in GAMES if g["category"] == "valid"} == {True, False}


def test_expected_codes_are_the_documented_ones() -> None:
    """Each expected code is in docs/log-format.md §7's table, under the expected step."""
    docs = (ROOT / "docs" / "log-format.md").read_text(encoding="utf-8")
    steps = {
        code: int(step) for step, code in re.findall(r"^\| (\d+) \| `([A-Z_]+)` \|", docs, re.M)
    }
    for game in GAMES:
        expected = game["expected"]
        if expected["code"] is not None:
            assert steps[expected["code"]] == expected["step"], game["file"]
        if game["require"] is not None:  # checked once every step held
            assert f"| after 10 | `{game['require']['code']}` |" in docs, game["file"]


def test_the_valid_games_cover_every_scenario() -> None:
    covered = {tag for game in GAMES if game["category"] == "valid" for tag in game["covers"]}
    assert covered >= REQUIRED
    assert set(MANIFEST["scenarios"]) >= covered
    assert frozenset(REQUIRED) <= regen().REQUIRED


@pytest.mark.parametrize("game", by_file("valid"))
def test_a_valid_game_shows_the_scenarios_it_covers(game: dict[str, Any]) -> None:
    tags = regen().scenario_tags((SAMPLES / game["file"]).read_bytes())
    assert set(game["covers"]) <= tags


@pytest.mark.parametrize("game", by_file())
def test_verify(game: dict[str, Any]) -> None:
    expected = game["expected"]
    code, out = invoke("verify", str(SAMPLES / game["file"]), "--table-key", TABLE_PUB, "--json")
    (report,) = json.loads(out)["reports"]
    finding = report["finding"] or {}
    assert code == report["exit_code"] == expected["exit_code"], out
    assert report["verdict"] == expected["verdict"], out
    assert (report["step"] or {}).get("number") == expected["step"], out
    assert finding.get("code") == expected["code"], out
    assert finding.get("line") == expected["line"], out
    assert finding.get("rule") == expected["rule"], out
    assert report["format_version"] == game["format"], out
    if expected["step"] is None or expected["step"] > 5:  # step 5 says which seats sign
        assert report["keyed"] is game["players"]["keyed"], out
    assert report["accepted_by"] == expected["accepted_by"], out


@pytest.mark.parametrize(
    "game", [pytest.param(game, id=game["file"]) for game in GAMES if game["require"]]
)
def test_verify_with_the_requirements_it_lacks(game: dict[str, Any]) -> None:
    """Issue 28, point 6: "`verify --require GUARANTEE` (repeatable ...) refuses with exit 1
    a log that lacks one, so an archive can refuse a downgraded (re-expressed as unkeyed v1)
    log." The game verifies without them (test_verify); with each alone, and with them all,
    verify refuses it with the code its entry gives, naming each requirement."""
    require = game["require"]
    log = str(SAMPLES / game["file"])
    for name in require["guarantees"]:
        code, out = invoke("verify", log, "--table-key", TABLE_PUB, "--require", name, "--json")
        (report,) = json.loads(out)["reports"]
        assert code == report["exit_code"] == require["exit_code"], out
        assert report["verdict"] == require["verdict"], out
        assert report["finding"]["code"] == require["code"], out
        assert report["finding"]["message"].startswith(f"--require {name}: "), out
    every = [arg for name in require["guarantees"] for arg in ("--require", name)]
    code, out = invoke("verify", log, "--table-key", TABLE_PUB, *every, "-v")
    assert code == require["exit_code"], out
    for name in require["guarantees"]:
        assert f"{require['code']}: --require {name}: " in out, out


@pytest.mark.parametrize("game", by_file("downgraded"))
def test_a_downgrade_deals_and_scores_as_its_keyed_base(game: dict[str, Any]) -> None:
    """The downgraded log is the base's game, not another: the same seats' entropy and
    commitment, the same moves and the same result, in a weaker form (format v1, no key)."""
    ours = log_bodies(SAMPLES / game["file"])
    (base_file,) = game["derived_from"]
    base = log_bodies(SAMPLES / base_file)
    assert (ours[0]["v"], base[0]["v"]) == (1, FORMAT_VERSION)
    assert [p["key"] for p in ours[0]["players"]] == [None] * game["players"]["count"]
    assert all(p["key"] for p in base[0]["players"])
    for field in ("commitment", "entropy", "game", "rules"):
        assert ours[0][field] == base[0][field]
    assert [b.get("move") for b in ours] == [b.get("move") for b in base]
    for field in ("hands", "totals", "winners", "secret"):
        assert ours[-1][field] == base[-1][field]


def audit_args(game: dict[str, Any]) -> list[str]:
    """``racing-demon audit``'s arguments for ``game``: its claim, receipts and copies."""
    args = ["audit", str(SAMPLES / game["file"]), "--table-key", TABLE_PUB, "--json"]
    if game["claim"] is not None:
        args += ["--claim", str(SAMPLES / game["claim"])]
    for file in game["receipts"]:
        args += ["--receipts", str(SAMPLES / file)]
    for file in game["against"]:
        args += ["--against", str(SAMPLES / file)]
    return args


@pytest.mark.parametrize("game", by_file())
def test_audit(game: dict[str, Any]) -> None:
    expected = game["expected"]
    code, out = invoke(*audit_args(game))
    assert code == expected["audit_exit_code"], out
    document = json.loads(out)
    assert schema_errors("audit-report", document) == []
    evidence = document["evidence"]
    assert sorted({item["code"] for item in evidence}) == expected["audit_evidence"], out
    if expected["audit_evidence"]:
        # Evidence against the table where a code is one; LAST_LINE_CHANGED is a finding
        # that is none (issue 28, point 2).
        against = set(expected["audit_evidence"]) & {code.value for code in EVIDENCE}
        assert any(item["evidence"] for item in evidence) is bool(against), out
        assert {item["file"] for item in evidence} <= {
            str(SAMPLES / file) for file in (*game["receipts"], *game["against"])
        }
    if expected["verdict"] != "verified":  # audit shows the verifier's report and stops
        assert document["verification"]["verdict"] == expected["verdict"]
        assert document["verification"]["finding"]["code"] == expected["code"]
        assert (document["hands"], document["claims"]) == ([], [])
        return
    assert document["verification"]["verdict"] == "verified"
    assert document["verification"]["accepted_by"] == expected["accepted_by"]
    wrong = [index for index, check in enumerate(document["claims"]) if not check["holds"]]
    assert wrong == expected["wrong_claims"]
    if game["claim"] is not None:
        claims = json.loads((SAMPLES / game["claim"]).read_text(encoding="utf-8"))["claims"]
        assert [check["claim"] for check in document["claims"]] == claims
        for index in wrong:
            assert "is wrong: the log shows" in document["claims"][index]["message"]


@pytest.mark.parametrize("game", by_file("receipts"))
def test_the_log_of_a_receipt_dispute_shows_nothing_alone(game: dict[str, Any]) -> None:
    """The defect is one only the receipts and copies show: without them, the audit of a
    log that verifies finds nothing."""
    if game["expected"]["verdict"] != "verified":
        pytest.skip("the log alone is refused")
    code, out = invoke("audit", str(SAMPLES / game["file"]), "--table-key", TABLE_PUB)
    assert code == 0, out


@pytest.mark.parametrize("game", by_file("unaccepted"))
def test_a_result_not_accepted_differs_from_its_base_in_the_acceptances_only(
    game: dict[str, Any],
) -> None:
    ours = (SAMPLES / game["file"]).read_bytes().splitlines()
    base = (SAMPLES / game["derived_from"][0]).read_bytes().splitlines()
    assert ours[:-1] == base[:-1]
    final, base_final = json.loads(ours[-1]), json.loads(base[-1])
    assert final["body"] == base_final["body"]
    assert final["sigs"]["table"] == base_final["sigs"]["table"]
    accepts = final["sigs"]["accepts"]
    assert [seat for seat, sig in enumerate(accepts) if sig] == game["expected"]["accepted_by"]
    assert [sig for sig in accepts if sig] == [
        sig for seat, sig in enumerate(base_final["sigs"]["accepts"]) if accepts[seat]
    ]


def test_the_v1_games_are_kept_byte_for_byte_with_their_verdicts() -> None:
    """sample_games/v1/ is the corpus racing-demon 0.1.0 wrote in format v1, as the frozen
    record of it says: every file with its SHA-256, every game listed with the expected
    verdict that release's manifest gave it."""
    frozen = json.loads(regen().V1_FROZEN.read_text(encoding="utf-8"))
    v1 = SAMPLES / "v1"
    on_disk = {path.relative_to(v1).as_posix() for path in v1.rglob("*") if path.is_file()}
    assert on_disk == set(frozen["sha256"])
    for name, digest in frozen["sha256"].items():
        assert hashlib.sha256((v1 / name).read_bytes()).hexdigest() == digest, name
    listed = {game["file"]: game for game in GAMES if game["category"] == "v1"}
    assert list(listed) == [f"v1/{old['file']}" for old in frozen["games"]]
    for old in frozen["games"]:
        expected = listed[f"v1/{old['file']}"]["expected"]
        assert {key: expected[key] for key in old["expected"]} == old["expected"]
        assert (expected["audit_evidence"], expected["accepted_by"]) == ([], None)


def test_the_raw_defects_change_only_what_they_say() -> None:
    def lines(file: str) -> list[bytes]:
        return (SAMPLES / file).read_bytes().splitlines()

    games = {game["file"].removeprefix("disputed/"): game for game in GAMES}
    for name, game in games.items():
        if not name.endswith(".jsonl") or not game["derived_from"]:
            continue
        ours, base = lines(game["file"]), lines(game["derived_from"][0])
        if name == "changed-byte.jsonl":
            differ = [a != b for a, b in zip(b"\n".join(ours), b"\n".join(base), strict=True)]
            assert sum(differ) == 1
        elif name == "removed-record.jsonl":
            assert len(ours) == len(base) - 1 and set(ours) < set(base)
        elif name == "duplicated-record.jsonl":
            assert len(ours) == len(base) + 1 and set(ours) == set(base)
        elif name == "swapped-records.jsonl":
            assert sorted(ours) == sorted(base) and ours != base
        elif name == "truncated.jsonl":
            assert ours == base[: len(ours)] and len(ours) < len(base)


@pytest.mark.slow
def test_regeneration_is_byte_identical() -> None:
    script = regen()
    assert script.stale(SAMPLES, script.outputs()) == []


def test_the_readme_game_is_the_golden_table_game() -> None:
    golden = regen().golden
    assert (SAMPLES / f"{golden.SAMPLE}.jsonl").read_bytes() == golden.path_for(
        golden.SAMPLE
    ).read_bytes()


def test_a_seed_that_lost_its_scenario_stops_the_regeneration() -> None:
    script = regen()
    game = script.GAME_BY_FILE["valid/peer2peer-3p-hold-off.jsonl"]
    lost = script.replace(game, seed="peer2peer-3p 0")  # its bots never hold off the call
    with pytest.raises(script.CorpusError, match="no longer shows hold_off_call; run"):
        script.check_covers(lost, script.render_game(lost))


# -- the duplicate tournament (issue 19) ---------------------------------------------------


def test_the_sample_tournament_plan_checks_and_its_deal_set_is_the_revealed_secrets(
    tmp_path: Path,
) -> None:
    code, output = invoke("tournament", "check", str(TOURNAMENT / "plan.json"))
    assert code == 0, output
    # "Anyone can regenerate the plan from the revealed secret": the secret every final
    # record reveals deals the deal set the plan published before play.
    secrets = {log_bodies(TOURNAMENT / log)[-1]["secret"] for log in TOURNAMENT_LOGS}
    assert len(secrets) == 1
    secret = tmp_path / "revealed.txt"
    secret.write_text(secrets.pop() + "\n")
    code, output = invoke(
        "tournament", "check", str(TOURNAMENT / "plan.json"), "--secret", f"file:{secret}"
    )
    assert code == 0, output


@pytest.mark.parametrize("log", TOURNAMENT_LOGS)
def test_every_table_of_the_sample_tournament_verifies_alone(log: str) -> None:
    code, output = invoke("verify", str(TOURNAMENT / log), "--table-key", TABLE_PUB)
    assert code == 0 and "VERIFIED" in output, output
    genesis = log_bodies(TOURNAMENT / log)[0]
    plan = json.loads((TOURNAMENT / "plan.json").read_text(encoding="utf-8"))
    assert genesis["tournament"]["table"] == int(log.removesuffix(".jsonl").split("-")[1])
    assert genesis["tournament"]["plan"] == plan["plan"]


@pytest.mark.parametrize("log", TOURNAMENT_LOGS)
def test_every_table_of_the_sample_tournament_audits_clean_with_its_receipts(log: str) -> None:
    """Issue 28, point 3: "`tournament simulate` keeps receipts like `simulate` does, so
    the sample tournament's audit with its receipts is clean"."""
    receipts = [f"--receipts={TOURNAMENT / name}" for name in TOURNAMENT_RECEIPTS[log]]
    code, output = invoke("audit", str(TOURNAMENT / log), "--table-key", TABLE_PUB, *receipts)
    assert code == 0, output
    assert re.search(r"receipts: \d+ receipts from 4 files .*: all agree", output), output


def held_refusals() -> list[tuple[str, str, bytes]]:
    """Every FINAL_HELD refusal the sample tournament's seats kept: (log, receipts file,
    receipt line)."""
    return [
        (log, name, line)
        for log, names in TOURNAMENT_RECEIPTS.items()
        for name in names
        for line in (TOURNAMENT / name).read_bytes().splitlines()
        if json.loads(line)["body"].get("reason") == "FINAL_HELD"
    ]


def test_a_move_in_flight_after_the_last_hand_is_refused_final_held_and_founded(
    tmp_path: Path,
) -> None:
    """Issue 28, point 3: "Any move in flight when the last hand ends triggers it. Give
    that state its own reason (played out, final held) that the audit judges founded
    exactly when the named record is the last `hand_end` and the next is the final". The
    sample tournament holds one such refusal, kept in its seat's receipts: it names the
    table's last hand_end, the audit with it finds nothing, and the same refusal naming an
    earlier hand_end is REFUSAL_UNFOUNDED."""
    (held,) = held_refusals()
    log, name, line = held
    receipt = parse_receipt(json.loads(line)["body"])
    lines = (TOURNAMENT / log).read_bytes().splitlines()
    hand_end, final = (json.loads(raw)["body"] for raw in lines[-2:])
    assert (hand_end["kind"], final["kind"]) == ("hand_end", "final")
    assert (receipt.outcome, receipt.seq) == ("refused", hand_end["seq"])
    assert receipt.record == record_reference(lines[-2], receipt.v)
    assert receipt.t_ms > hand_end["t_ms"] and receipt.n == final_n(lines, receipt.seat)

    def audited(receipts: Path) -> dict[str, Any]:
        args = ["audit", str(TOURNAMENT / log), "--table-key", TABLE_PUB, "--json"]
        code, out = invoke(*args, "--receipts", str(receipts))
        document: dict[str, Any] = json.loads(out)
        assert code == (1 if document["evidence"] else 0), out
        return document

    founded = audited(TOURNAMENT / name)
    assert founded["receipts"]["read"] == len((TOURNAMENT / name).read_bytes().splitlines())
    assert founded["evidence"] == []
    # The table's fixture key re-signs it naming the first hand's end: not played out then.
    first_end = next(raw for raw in lines if json.loads(raw)["body"]["kind"] == "hand_end")
    early = replace(
        receipt,
        seq=json.loads(first_end)["body"]["seq"],
        record=record_reference(first_end, receipt.v),
    )
    forged = tmp_path / name
    forged.write_bytes(seal_receipt(early, regen().TABLE_KEY) + b"\n")
    codes = {item["code"] for item in audited(forged)["evidence"]}
    assert "REFUSAL_UNFOUNDED" in codes


def test_the_corpus_holds_a_case_for_each_code_issue_28_added() -> None:
    """Issue 28, "Done when": "the sample corpus gains a disputed case for each new code":
    STALE_HEAD and LAST_LINE_CHANGED from the audit, REQUIREMENT_UNMET from verify
    --require (a downgraded log), and a FINAL_HELD refusal kept in the sample tournament."""
    evidence = {code for game in GAMES for code in game["expected"]["audit_evidence"]}
    assert {"STALE_HEAD", "LAST_LINE_CHANGED"} <= evidence
    downgrades = [game for game in GAMES if game["category"] == "downgraded"]
    assert {game["require"]["code"] for game in downgrades} == {"REQUIREMENT_UNMET"}
    assert {"keyed", "v2_or_later", "deal_bound"} <= {
        name for game in downgrades for name in game["require"]["guarantees"]
    }
    assert held_refusals()


def final_n(lines: list[bytes], seat: int) -> int:
    """Seat ``seat``'s next submission number after the log ``lines``."""
    bodies = [json.loads(raw)["body"] for raw in lines]
    return sum(body.get("player") == seat and "n" in body for body in bodies)


def test_the_sample_tournament_scores_as_its_standings_say(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(TOURNAMENT)
    code, output = invoke(
        "tournament", "score", "plan.json", ".", "--table-key", TABLE_PUB, "--json"
    )
    assert code == 0, output
    expected = json.loads((TOURNAMENT / "standings.json").read_text(encoding="utf-8"))
    assert json.loads(output) == expected
    assert schema_errors("tournament-standings", expected) == []
    assert expected["problems"] == [] and len(expected["standings"]) == 16


def test_the_sample_standings_are_the_matchpoints_of_the_logged_hand_scores() -> None:
    """Recomputed here from the final records alone, as docs/tournament-scoring.md says:
    seat s of table t plays pack (s + t - 1) mod S of each hand; on each pack every result
    scores 2 matchpoints per result it beats and 1 per result it ties; a player's
    percentage is their matchpoints over their tops; rank by percentage, then raw total."""
    plan = json.loads((TOURNAMENT / "plan.json").read_text(encoding="utf-8"))
    tables, seats, hands = plan["tables"], plan["seats"], plan["hands"]
    scores = {  # (table, seat) -> the seat's score in each hand
        (table, seat): [hand[seat] for hand in final["hands"]]
        for table in range(1, tables + 1)
        for final in [log_bodies(TOURNAMENT / f"table-{table}.jsonl")[-1]]
        for seat in range(seats)
    }
    matchpoints = dict.fromkeys(scores, 0)
    for hand in range(hands):
        for pack in range(seats):
            players = [(t, (pack - t + 1) % seats) for t in range(1, tables + 1)]
            for player in players:
                mine = scores[player][hand]
                others = [scores[other][hand] for other in players if other != player]
                matchpoints[player] += 2 * sum(mine > o for o in others) + sum(
                    mine == o for o in others
                )
    top = 2 * (tables - 1) * hands
    order = sorted(scores, key=lambda p: (-matchpoints[p], -sum(scores[p]), p[0], p[1]))
    standings = json.loads((TOURNAMENT / "standings.json").read_text(encoding="utf-8"))
    listed = standings["standings"]
    assert [(e["table"], e["seat"]) for e in listed] == order
    for entry in listed:
        player = (entry["table"], entry["seat"])
        assert entry["matchpoints"] == matchpoints[player] and entry["top"] == top
        assert entry["raw_total"] == sum(scores[player])
        assert entry["percentage"] == round(100 * matchpoints[player] / top, 2)
    # The bots of mixed speeds do not all score alike: the duplicate score separates them.
    assert len({entry["percentage"] for entry in listed}) > 4
