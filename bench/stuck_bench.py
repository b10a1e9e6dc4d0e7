"""The stuck search at its cap, and verifying a log made to be slow, in one run.

Two figures for issue 12 (items 9 and 10). The cost of one stuck check at the cap
(``stall.STUCK_SEARCH_CAP``): the median time of ``progress_witness`` on a fresh seat
whose search runs to the cap, for crafted seats of five work piles; the worst is reported.
And the verification cost per record of a signed log crafted so that every record pays
for such a search, at 1x, 2x, 4x and 8x its length (target: per record at 8x within 1.2x
of 1x), the lengths timed interleaved in the same rounds.

The log: two seats at the table profile with five work piles, turning one card, one hand.
Colluding, seat 0 sends every card below six to the centre and keeps its sixes to kings in
four runs, a pile left empty; seat 1 digs its sixes to kings out and sends them after, so
every foundation is complete and seat 0 has nothing to play. Then seat 0 moves a six into
the empty pile and back, again and again: each record makes a new seat, whose search would
meet 475,136 arrangements without a play (the cap stops it at 256), while seat 1, which
keeps its aces, can still play, so no stall is due. Seat 1 resigns to end the match. The
whole search that the cap cuts short is timed once, beside the capped one.
"""

from __future__ import annotations

import itertools
import statistics
import sys
import tempfile
import time
from collections import deque
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from racing_demon.game import stall
from racing_demon.game.cards import KING, Card
from racing_demon.game.engine import legal_moves
from racing_demon.game.moves import Move, MoveKind, Place, Zone
from racing_demon.game.rules import Rules
from racing_demon.game.stall import STUCK_SEARCH_CAP, progress_witness
from racing_demon.game.state import Seat, State
from racing_demon.profiles import builtin_document, rules_from_document
from racing_demon.table import PlayerInfo, Table
from racing_demon.verify import Settings, Verdict, verify_log

import crafted

TABLE_KEY = Ed25519PrivateKey.from_private_bytes(bytes(range(32)))  # the golden logs' fixture
SECRET = bytes(32)
KEPT = 6  # seat 0 keeps its sixes to kings in its work piles
LENGTHS = (1, 2, 4, 8)
_IDLE_ROUNDS = 120  # rounds of only turning the stock after which a deal is given up


def slow_rules(slide_under: bool = False) -> Rules:
    document = builtin_document("table")
    document["name"] = "slow-stall"
    document["layout"]["work_piles"] = 5
    document["stock"]["turn"] = 1  # every card of the stock can be had in turn
    document["work"]["slide_under"] = slide_under
    document["match"] = {"target": None, "max_hands": 1, "lead_tie": "share"}
    del document["end"]["resign"]  # the crafted log ends with a resignation
    return rules_from_document(document)


def _kept(card: Card) -> bool:
    return card.rank >= KEPT


def _zone(place: Place | None) -> Zone | None:
    return None if place is None else place.zone


def _cycle(moves: list[Move]) -> Move | None:
    return next((move for move in moves if move.kind in (MoveKind.TURN, MoveKind.RECYCLE)), None)


def _next_move(state: State, player: int) -> Move | None:
    """The plan's next move for ``player``: a card to the centre first, else (seat 0) a
    kept card or the demon top to the work piles, else the next card of the stock."""
    moves = legal_moves(state, player)
    plays = [move for move in moves if move.kind is MoveKind.PLAY]
    centre = [move for move in plays if _zone(move.target) is Zone.FOUNDATION]
    if player == 1:  # its kept ranks to the centre, digging through its demon for them
        mine = [move for move in centre if _kept(move.cards[0])]
        mine += [
            move
            for move in plays
            if _zone(move.source) is Zone.DEMON and _zone(move.target) is Zone.WORK
        ]
        return mine[0] if mine else _cycle(moves)
    centre += [move for move in plays if _zone(move.target) is Zone.NEW_FOUNDATION]
    low = [move for move in centre if not _kept(move.cards[0])]
    if low:
        return low[0]
    seat = state.seats[0]
    empty = {index for index, pile in enumerate(seat.work) if not pile}
    to_work = [move for move in plays if _zone(move.target) is Zone.WORK]

    def onto_a_card(move: Move) -> bool:
        assert move.target is not None
        return move.target.index not in empty

    demon = [move for move in to_work if _zone(move.source) is Zone.DEMON]
    # Into an empty pile only what needs one (a king, a kept card) or while two are free.
    roomy = len(empty) > 1 or (bool(seat.demon) and _kept(seat.demon[-1]))
    choice = [move for move in demon if onto_a_card(move)] or [move for move in demon if roomy]
    if choice:
        return choice[0]
    for move in to_work:  # a pile based on a kept card below a king joins its run
        if (
            _zone(move.source) is Zone.WORK
            and onto_a_card(move)
            and move.source is not None
            and len(move.cards) == len(seat.work[move.source.index])
            and move.cards[0].rank != KING
        ):
            return move
    waste = [move for move in to_work if _zone(move.source) is Zone.WASTE and _kept(move.cards[0])]
    choice = [move for move in waste if onto_a_card(move)]
    choice += [move for move in waste if move.cards[0].rank == KING]
    return choice[0] if choice else _cycle(moves)


def _planned(state: State) -> bool:
    seat = state.seats[0]
    kept = [card for pile in seat.work for card in pile]
    return (
        not (seat.demon or seat.stock or seat.waste)
        and all(map(_kept, kept))
        and len(kept) == 4 * (KING - KEPT + 1)
        and all(foundation.complete for foundation in state.foundations)
    )


def _entropy(number: int) -> list[bytes]:
    return [f"slow stall {number:06d} seat {seat}".encode() for seat in range(2)]


def _set_up(path: Path, first_deal: int) -> tuple[Table, int, int]:
    """A table whose seat 0 is at the planned position, the time of its last record, and
    the number of its deal: deals are tried from ``first_deal`` on until the plan reaches
    its position before it runs idle."""
    rules = slow_rules()
    players = [PlayerInfo("Ada", "red", None), PlayerInfo("Bert", "blue", None)]
    for number in range(first_deal, first_deal + 1000):
        entropy = _entropy(number)
        path.unlink(missing_ok=True)
        table = Table.create(path, rules, players, TABLE_KEY, SECRET, entropy, durable=False)
        t_ms, idle = table.t_ms, 0
        while idle <= _IDLE_ROUNDS and not table.finished:
            idle += 1
            for player in (0, 1):
                move = _next_move(table.state, player)
                if move is not None and not table.finished:
                    t_ms += 1
                    table.submit(player, str(move), t_ms, table.next_n(player))
                    if move.kind not in (MoveKind.TURN, MoveKind.RECYCLE):
                        idle = 0
            if _planned(table.state):
                return table, t_ms, number
        table.close()
    raise RuntimeError(f"no deal from {first_deal} on fits the plan")


def slow_log(path: Path, slow_records: int, first_deal: int = 0) -> tuple[State, int]:
    """Write the crafted log with ``slow_records`` rearrangements at the planned position;
    return that position and the number of the deal that reached it."""
    table, t_ms, deal = _set_up(path, first_deal)
    planned = table.state
    seat = planned.seats[0]
    empty = next(index for index, pile in enumerate(seat.work) if not pile)
    full = next(index for index, pile in enumerate(seat.work) if pile)
    six = seat.work[full][-1].face
    out, back = f"0 w{full + 1}>w{empty + 1} {six}", f"0 w{empty + 1}>w{full + 1} {six}"
    for text in itertools.islice(itertools.cycle((out, back)), slow_records):
        t_ms += 1
        table.submit(0, text, t_ms, table.next_n(0))
    table.submit(1, "1 resign", t_ms + 1, table.next_n(1))
    assert table.finished
    return planned, deal


def _crafted_seats(planned: State) -> list[tuple[str, State]]:
    """Seats whose searches run to the cap: the slow log's, and the tests' shape
    (``crafted.EXPLOSIVE_WORK``) without and with slide-under."""
    work = tuple(
        tuple(Card.from_face(face, 0) for face in pile.split()) for pile in crafted.EXPLOSIVE_WORK
    )
    seat = Seat((), work, (), ())  # no aces in reach and no foundation: nothing plays
    return [
        ("the slow log's seat", planned),
        ("the tests' seat", State(slow_rules(), 1, (seat,), (), turned_since_play=(0,))),
        (
            "the tests' seat, slide-under",
            State(slow_rules(slide_under=True), 1, (seat,), (), turned_since_play=(0,)),
        ),
    ]


def _whole_search(state: State) -> tuple[int, float]:
    """The arrangements of seat 0 that the cap cuts short, and the seconds it takes to
    search them all, each checked as the engine checks one (seat 0 has no movers)."""
    seat = state.seats[0]
    slide_under = state.rules.slide_under
    to_centre = stall._centre_keys(state.foundations)
    first = tuple(tuple(card.index for card in pile) for pile in seat.work)
    frontier, seen = deque([first]), {tuple(sorted(first))}
    tops: dict[int, None] = {}
    start = time.perf_counter()
    for work in itertools.chain([first], stall._arrangements(frontier, seen, slide_under)):
        tops.update(dict.fromkeys(pile[-1] for pile in work if pile))
        heads = [pile[0] for pile in work if pile] if slide_under else []
        exposed = [pile[-1] for pile in work if pile]
        assert stall._place((), exposed, len(work), heads) is None
        assert not any(pile and pile[-1] in to_centre for pile in work)
    return len(seen), time.perf_counter() - start


def _capped_check_ms(state: State, repeats: int) -> float:
    """The median time of one stuck check of seat 0, from a fresh (unsearched) seat."""
    times = []
    for _ in range(repeats):
        seat = state.seats[0]
        fresh = Seat(seat.demon, seat.work, seat.stock, seat.waste)
        question = replace(state, seats=(fresh, *state.seats[1:]))
        start = time.perf_counter()
        witness = progress_witness(question, 0)
        times.append(time.perf_counter() - start)
        assert witness is None
        search = stall.SEARCHES.get(fresh)
        assert search is not None and search.examined == STUCK_SEARCH_CAP
    return statistics.median(times) * 1e3


def _seconds(run: Callable[[], None]) -> float:
    start = time.perf_counter()
    run()
    return time.perf_counter() - start


def measure(slow_records: int = 200, rounds: int = 5, repeats: int = 30) -> dict[str, float]:
    """The worst capped check, and verification per record of the slow log by length."""
    with tempfile.TemporaryDirectory() as folder:
        paths = {k: Path(folder) / f"slow-{k}x.jsonl" for k in (0, *LENGTHS)}
        planned, deal = slow_log(paths[0], 0)
        for k in LENGTHS:
            slow_log(paths[k], k * slow_records, deal)  # the same deal and plan in every log
        checks = {name: _capped_check_ms(state, repeats) for name, state in _crafted_seats(planned)}
        arrangements, whole_s = _whole_search(planned)
        raw_key = TABLE_KEY.public_key().public_bytes_raw()
        records = {k: len(path.read_bytes().splitlines()) for k, path in paths.items()}

        def verifier(path: Path) -> Callable[[], None]:
            def run() -> None:
                assert verify_log(path, Settings(table_key=raw_key)).verdict is Verdict.VERIFIED

            return run

        runs = {k: verifier(path) for k, path in paths.items()}
        for run in runs.values():
            run()  # warm
        times: dict[int, list[float]] = {k: [] for k in runs}
        order = list(runs)
        for round_ in range(rounds):
            turn = round_ % len(order)
            for k in order[turn:] + order[:turn]:
                times[k].append(_seconds(runs[k]))
    per_record = {k: [t / records[k] * 1e6 for t in times[k]] for k in LENGTHS}
    # The set-up's records cost less than the slow ones: the slow part alone is the
    # difference from the log without it.
    slow_part = {
        k: [
            (t - t0) / (records[k] - records[0]) * 1e6
            for t, t0 in zip(times[k], times[0], strict=True)
        ]
        for k in LENGTHS
    }
    median = statistics.median
    result = {
        "cap_arrangements": float(STUCK_SEARCH_CAP),
        "capped_check_worst_ms": max(checks.values()),
        "slow_seat_arrangements": float(arrangements),
        "slow_seat_whole_search_s": whole_s,
        "setup_records": float(records[0]),
        "slow_records_1x": float(records[1] - records[0]),
    }
    for name, ms in checks.items():
        result[f"capped_check_ms[{name}]"] = ms
    for k in LENGTHS:
        result[f"records_{k}x"] = float(records[k])
        result[f"us_per_record_{k}x"] = median(per_record[k])
        result[f"us_per_slow_record_{k}x"] = median(slow_part[k])
    result["per_record_8x_vs_1x"] = median(
        a / b for a, b in zip(per_record[8], per_record[1], strict=True)
    )
    result["per_slow_record_8x_vs_1x"] = median(
        a / b for a, b in zip(slow_part[8], slow_part[1], strict=True)
    )
    return result


if __name__ == "__main__":
    for name, value in measure().items():
        print(f"{name:52s} {value:10.3f}")
