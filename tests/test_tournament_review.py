"""Defects a review of the duplicate tournament found, each pinned by the test that showed
it (docs/tournament.md, docs/tournament-scoring.md)."""

from __future__ import annotations

import copy
import random
from pathlib import Path
from typing import Any

import pytest
from test_tournament_score import cup, folder, played

import racing_demon.schema
from racing_demon.batch import collect_logs
from racing_demon.game.duplicate import Shape
from racing_demon.profiles import load_rules
from racing_demon.schema import schema_errors
from racing_demon.tournament import plan as plan_module
from racing_demon.tournament.matchpoints import TableResult, score, seat_of
from racing_demon.tournament.plan import (
    MAX_CONTRIBUTIONS,
    Contribution,
    Plan,
    PlanCode,
    PlanError,
    make_plan,
    plan_from_document,
)
from racing_demon.tournament.score import TournamentCode, score_tournament

from conftest import invoke
from tampering import TABLE_PUB

SECRET = bytes(range(32))
CONTRIBUTIONS = (Contribution("club", b"review draw 0001"),)


def test_the_plan_commitment_is_hashed_once_however_many_tables_ask(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """'The plan's commitment (step 7) ... every table's genesis names it': it hashes the
    whole schedule, so a plan computes it once; scoring asks for it (and for each table's
    tag) once per log, which made scoring quadratic in the tables."""
    plan = make_plan(SECRET, Shape("review", 12, 4, 2), load_rules("table"), CONTRIBUTIONS)
    bodies = 0
    body = Plan.body

    def counted(self: Plan) -> dict[str, object]:
        nonlocal bodies
        bodies += 1
        return body(self)

    monkeypatch.setattr(Plan, "body", counted)
    digest = plan.digest
    tags = [plan.tag(table) for table in range(1, 13)]
    assert {tag.plan for tag in tags} == {digest}
    assert plan.to_document()["plan"] == digest
    assert bodies <= 2  # the digest's, and the document's own body


def test_a_valid_plan_is_checked_without_interpreting_its_schema(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """'load_plan checks a plan file ... BAD_SCHEMA: schemas/tournament-plan.schema.json
    refuses it': jsonschema interprets the schema for every pack number of the schedule
    (20 s for a plan of 4096 tables of 8 seats and 10 hands, every time it is checked or
    scored); jsonschema-rs passes a valid plan, and jsonschema only explains a refusal."""
    plan = make_plan(SECRET, Shape("review", 6, 3, 2), load_rules("table"), CONTRIBUTIONS)
    document = plan.to_document()

    validator = racing_demon.schema._validator

    def interpreted(name: str) -> object:
        assert name != "tournament-plan", "jsonschema interpreted the plan's schema"
        return validator(name)

    monkeypatch.setattr(racing_demon.schema, "_validator", interpreted)
    assert plan_from_document(document) == plan


@pytest.mark.parametrize(
    ("member", "value"),
    [
        (("schedule", 2, "hands", 1, "packs", 0), True),  # true is not the integer 1
        (("schedule", 2, "hands", 1, "packs", 0), "1"),
        (("schedule", 0, "table"), 0),
        (("schedule", 1, "extra"), 1),
        (("schedule",), []),
        (("contributions", 0, "key"), "00"),
        (("tables",), 4097),
        (("name",), ""),
    ],
)
def test_the_hot_path_plan_check_refuses_what_jsonschema_refuses(
    member: tuple[str | int, ...], value: object
) -> None:
    """The fast path's differential test: a plan jsonschema-rs passes is one the
    schema passes, and each mutation here is refused as BAD_SCHEMA with jsonschema's
    explanation."""
    plan = make_plan(SECRET, Shape("review", 3, 2, 2), load_rules("table"), CONTRIBUTIONS)
    document = copy.deepcopy(plan.to_document())
    *path, last = member
    target: Any = document
    for step in path:
        target = target[step]
    target[last] = value
    assert schema_errors("tournament-plan", document)
    with pytest.raises(PlanError) as refused:
        plan_from_document(document)
    assert refused.value.code is PlanCode.BAD_SCHEMA


def test_tournament_plan_never_writes_a_plan_too_large_to_be_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """'UNREADABLE: the file cannot be read (... over 64 MiB)': the schema allows 4096
    tables of 500 hands, and 1300 tables of 2 seats and 500 hands already write 71 MB, a
    plan that `tournament check` and `score` refuse. The command refuses to write it (exit
    2, nothing written); the bound is lowered here so a small plan stands for a large one."""
    secret = tmp_path / "secret.txt"
    secret.write_text(SECRET.hex() + "\n")
    terms, contribution = tmp_path / "terms.json", tmp_path / "organiser.json"
    code, output = invoke(
        "tournament", "commit", "--secret", f"file:{secret}", "--name", "Big cup",
        "--tables", "6", "--seats", "4", "--hands", "3", "-o", str(terms),
    )  # fmt: skip
    assert code == 0, output
    code, output = invoke(
        "tournament", "contribute", str(terms), "--by", "organiser", "-o", str(contribution)
    )
    assert code == 0, output
    monkeypatch.setattr(plan_module, "MAX_PLAN_BYTES", 4000)
    out, sheets = tmp_path / "plan.json", tmp_path / "sheets.html"
    code, output = invoke(
        "tournament", "plan", "--secret", f"file:{secret}", "--name", "Big cup",
        "--tables", "6", "--seats", "4", "--hands", "3", "--contribution", str(contribution),
        "-o", str(out), "--sheets", str(sheets),
    )  # fmt: skip
    assert code == 2, output
    assert "a plan is read up to 4000 bytes" in output
    assert not out.exists() and not sheets.exists()


class _Counted(int):
    """A hand score that counts how often it is compared."""

    comparisons = 0

    def __lt__(self, other: object) -> bool:
        _Counted.comparisons += 1
        return int(self) < int(other)  # type: ignore[call-overload]


def _naive_matchpoints(scores: list[int], own: int) -> int:
    """docs/tournament-scoring.md as written: 2 per result beaten, 1 per tie."""
    return 2 * sum(other < own for other in scores) + sum(other == own for other in scores) - 1


def test_matchpoints_are_counted_without_comparing_every_result_with_every_other() -> None:
    """'2 matchpoints for every result beaten on the same pack, 1 for every tie': on a pack
    of n results that is n(n - 1) comparisons done one by one, 27 s for 4096 tables of 4
    seats and 3 hands; counted in the sorted scores it is n log n, with the same answer."""
    rng = random.Random(19)
    tables = 200
    shape = Shape("review", tables, 3, 2)
    results = [
        TableResult(
            table,
            tuple(f"p{table}.{seat}" for seat in range(3)),
            tuple(tuple(_Counted(rng.randint(-5, 5)) for _ in range(3)) for _ in range(2)),
            f"t{table}.jsonl",
        )
        for table in range(1, tables + 1)
    ]
    _Counted.comparisons = 0
    scores = score(shape, results)
    assert _Counted.comparisons < tables * tables  # one by one: 6 packs of n(n - 1) = 39800
    for pack in scores.packs:
        on_pack = [result.score for result in pack.results]
        assert len(on_pack) == tables
        for result in pack.results:
            assert result.matchpoints == _naive_matchpoints(on_pack, result.score)
            assert result.seat == seat_of(shape, result.table, pack.index)
            assert shape.pack_index(result.table, result.seat) == pack.index


def test_score_refuses_the_page_and_the_json_both_on_standard_output() -> None:
    """'--json' is a document with a schema, and '--html FILE' writes the page to standard
    output with '-': both at once wrote the page and then the JSON into one stream that no
    reader can take apart. Exit 2 (bad usage), as `tournament plan` refuses the plan and
    its sheets both on standard output."""
    folder = Path(__file__).parent.parent / "sample_games"
    code, output = invoke(
        "tournament", "score", str(folder / "tournament" / "plan.json"),
        str(folder / "tournament"), "--table-key", str(folder / "table.pub"),
        "--json", "--html", "-", "--jobs", "1",
    )  # fmt: skip
    assert code == 2, output
    assert "--json already goes to standard output" in output
    assert "<!DOCTYPE html>" not in output


def test_one_log_named_twice_is_one_log_not_two_claims_on_its_table(tmp_path: Path) -> None:
    """'DUPLICATE_TABLE: two logs or more claim it ... all of them' excluded: `score
    plan.json logs/ logs/table-1.jsonl`, or a link to a log beside it, named one file twice
    and excluded its table as claimed by two logs (the same path listed twice). A copy is
    another file, and still a duplicate."""
    paths = folder(tmp_path, t1=played(1), t2=played(2), t3=played(3))
    (tmp_path / "logs" / "link.jsonl").symlink_to(paths[0])
    named = [*collect_logs([tmp_path / "logs"]), paths[0]]
    standings = score_tournament(cup(), named, TABLE_PUB, jobs=1)
    assert standings.problems == ()
    assert standings.exit_code == 0
    assert standings.logs == 3
    assert {entry.table for entry in standings.scores.entries} == {1, 2, 3}

    (tmp_path / "logs" / "copy.jsonl").write_bytes(played(1))
    standings = score_tournament(cup(), collect_logs([tmp_path / "logs"]), TABLE_PUB, jobs=1)
    assert {problem.code for problem in standings.problems} == {TournamentCode.DUPLICATE_TABLE}


def test_a_plan_lists_a_bounded_number_of_contributions() -> None:
    """docs/tournament.md, "Checking a plan": `BAD_CONTRIBUTION` for "more than 65,536
    contributions", which bounds the signatures a check verifies."""
    too_many = tuple(
        Contribution(f"c{i}", i.to_bytes(16, "big")) for i in range(MAX_CONTRIBUTIONS + 1)
    )
    with pytest.raises(PlanError) as refused:
        make_plan(bytes(32), Shape("Big", 1, 2, 1), load_rules("table"), too_many)
    assert refused.value.code is PlanCode.BAD_CONTRIBUTION
    assert refused.value.member == "$.contributions"
