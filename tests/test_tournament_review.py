"""Defects a review of the duplicate tournament found, each pinned by the test that showed
it (docs/tournament.md, docs/tournament-scoring.md)."""

from __future__ import annotations

import pytest

from racing_demon.game.duplicate import Shape
from racing_demon.profiles import load_rules
from racing_demon.tournament.plan import Contribution, Plan, make_plan

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
