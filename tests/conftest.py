"""Shared test helpers: build small positions by naming only the cards that matter."""

from __future__ import annotations

import importlib.util
import json
import os
import resource
import sys
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from racing_demon.game.cards import Card, canonical_pack
from racing_demon.game.deal import MatchSeed, derive_pack
from racing_demon.game.engine import Violation, apply_move, check_move
from racing_demon.game.moves import Move
from racing_demon.game.rules import Rules
from racing_demon.game.scoring import HandScore
from racing_demon.game.state import Foundation, Pile, Seat, State
from racing_demon.profiles import BUILT_IN, builtin_document, load_rules, rules_from_document

from tampering import write_public_key

settings.register_profile(
    "ci", max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile(
    "dev", max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile("ci" if os.environ.get("CI") else "dev")


@dataclass(frozen=True)
class S:
    """One seat of a test position. Faces are space-separated, in engine orientation:
    demon, stock and waste bottom first (top last); each work pile head first.

    Cards of the seat's pack that are named nowhere (here or on a foundation) go to
    ``rest``: the bottom of the stock (default) or the bottom of the demon pile.
    """

    demon: str = ""
    work: Sequence[str] = ("", "", "", "")
    stock: str = ""
    waste: str = ""
    rest: str = "stock"


def cards(faces: str, owner: int) -> Pile:
    return tuple(Card.from_face(face, owner) for face in faces.split())


def build(
    profile: str | Rules,
    *seats: S,
    foundations: Sequence[str] = (),
    clock: int | None = None,
    **fields: object,
) -> State:
    """A sound position at ``clock`` (default: when play starts).

    Seats as given; foundations as cards with owners (``AH@0 2H@1``, a tied level is
    ``3H@0,3H@1``); the rest of every pack where ``S.rest`` says.
    """
    rules = load_rules(profile) if isinstance(profile, str) else profile
    clock = rules.countdown_ms if clock is None else clock  # default: the instant play starts
    built_foundations = tuple(_foundation(text) for text in foundations)
    placed = {card for foundation in built_foundations for card in foundation.cards()}
    built_seats = tuple(_seat(spec, number, placed) for number, spec in enumerate(seats))
    state = State(
        rules=rules,
        hand=1,
        seats=built_seats,
        foundations=built_foundations,
        clock_ms=clock,
        last_centre_ms=rules.countdown_ms,
        last_action_ms=rules.countdown_ms,
        turned_since_play=(0,) * len(seats),
    )
    state = replace(state, **fields)  # type: ignore[arg-type]
    problems = state.problems()
    assert not problems, problems
    return state


def _foundation(text: str) -> Foundation:
    """A foundation whose top level was reached at 0 ms."""
    levels = tuple(tuple(Card.parse(card) for card in level.split(",")) for level in text.split())
    return Foundation(levels[0][0].suit, levels, 0)


def _seat(spec: S, owner: int, placed: set[Card]) -> Seat:
    demon = cards(spec.demon, owner)
    work = tuple(cards(pile, owner) for pile in spec.work)
    stock = cards(spec.stock, owner)
    waste = cards(spec.waste, owner)
    named = set(demon) | set(stock) | set(waste) | placed
    named.update(card for pile in work for card in pile)
    rest = tuple(card for card in canonical_pack(owner) if card not in named)
    if spec.rest == "stock":
        stock = rest + stock
    else:
        demon = rest + demon
    return Seat(demon=demon, work=work, stock=stock, waste=waste)


def refused(state: State, text: str) -> Violation:
    """Check that the move is refused and return the refusal."""
    violation = check_move(state, Move.parse(text))
    assert violation is not None, f"{text} was accepted"
    return violation


def play(state: State, *texts: str) -> State:
    """Apply legal moves in order, checking each."""
    for text in texts:
        move = Move.parse(text)
        violation = check_move(state, move)
        assert violation is None, str(violation)
        state = apply_move(state, move)
    return state


def invoke(*args: str) -> tuple[int, str]:
    """Run the command line in-process; return the exit code and the output."""
    from click.testing import CliRunner

    from racing_demon.cli import main

    result = CliRunner().invoke(main, list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.output


def log_bodies(path: Path) -> list[dict[str, Any]]:
    """The record bodies of a log, parsed plainly (no checks)."""
    return [json.loads(line)["body"] for line in path.read_bytes().splitlines()]


@pytest.fixture
def pub(tmp_path: Path) -> Path:
    """The log-tampering tests' table key (tests/tampering.py) as a PEM file."""
    return write_public_key(tmp_path / "table.pub")


def load_script(name: str) -> ModuleType:
    """A fresh module of ``scripts/<name>.py`` (fresh, so a test may change its globals)."""
    path = Path(__file__).resolve().parents[1] / "scripts" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up while it executes
    spec.loader.exec_module(module)
    return module


# Hypothesis strategies shared by the property tests over random playouts.


@st.composite
def profiles(draw: st.DrawFn) -> Rules:
    """A built-in profile, with any of the Nertz rules' variant knobs and a few more turned."""
    document = builtin_document(draw(st.sampled_from(BUILT_IN)))
    if draw(st.booleans()):
        document["layout"]["work_piles"] = 5
    if draw(st.booleans()):
        document["stock"]["turn"] = 1
    if draw(st.booleans()):
        document["work"]["slide_under"] = not document["work"]["slide_under"]
    document["foundations"]["tie_window_ms"] = draw(st.sampled_from([None, 0, 5, 300]))
    return rules_from_document(document)


@st.composite
def dealt_hands(draw: st.DrawFn) -> State:
    rules = draw(profiles())
    players = draw(st.integers(rules.min_players, min(rules.max_players, 4)))
    seed = MatchSeed.from_plain(f"playout {draw(st.integers(0, 2**32))}")
    packs = [derive_pack(seed, 1, seat) for seat in range(players)]
    return State.deal(rules, packs, hand=1, start_ms=0)


class Reads:
    """How many times something was read."""

    count = 0


@pytest.fixture
def hand_score_reads(monkeypatch: pytest.MonkeyPatch) -> Reads:
    """Counts every read of any hand's scores (``HandScore.scores``): the work a match
    does for its totals, counted rather than timed."""
    reads = Reads()
    scores = HandScore.scores

    def counted(self: HandScore) -> tuple[int, ...]:
        reads.count += 1
        return scores.__get__(self)

    monkeypatch.setattr(HandScore, "scores", property(counted))
    return reads


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """The CPU time the run cost, the commands it started included: the figure the README
    states for the quick run (`python -m pytest`, kept under 3 CPU-minutes as the suite
    grows: mark what is slow). A figure to read, never a failure."""
    spent = sum(
        usage.ru_utime + usage.ru_stime
        for usage in map(resource.getrusage, (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
    )
    terminalreporter.write_line(
        f"CPU time of this run: {spent:.0f} s ({spent / 60:.1f} CPU-minutes, user + system)"
    )
