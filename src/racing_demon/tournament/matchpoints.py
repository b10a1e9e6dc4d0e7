"""Matchpoints: the pure core of scoring a duplicate tournament (docs/tournament-scoring.md,
"Matchpoints" and "Ranks and tie-breaks").

``score`` takes typed per-table results (who sat where, and each hand's scores) and
compares every result on a pack with every other result on that pack: no file, no
verification, so a director's own results (a table scored by hand) can be scored with it.
Reading and checking the tables' logs is ``tournament.score``'s job.
"""

from __future__ import annotations

import bisect
import dataclasses
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from fractions import Fraction

from racing_demon.game.duplicate import Shape
from racing_demon.wording import plural


@dataclass(frozen=True, slots=True)
class TableResult:
    """What one table's verified log scores: the players in seat order, and the scores of
    the hands it played, ``hands[h - 1][seat]`` (fewer than the plan's when the match
    ended early)."""

    table: int
    players: tuple[str, ...]
    hands: tuple[tuple[int, ...], ...]
    log: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Result:
    """One result on a pack: the hand score of the seat that played it, and its
    matchpoints against the other results on the pack."""

    table: int
    seat: int
    player: str
    score: int
    matchpoints: int  # 2 per result beaten, 1 per tie
    factored: Fraction  # on the field's top (Neuberg); the matchpoints when the pack is full
    log: str


def _top_of(results: int) -> int:
    """The most matchpoints a result on a pack of ``results`` results can earn: 2 for each
    other result."""
    return 2 * max(0, results - 1)


@dataclass(frozen=True, slots=True, kw_only=True)
class PackRecord:
    """Every result on pack ``index`` of ``hand`` (pack ``number`` for people), the best
    score first, then in table order."""

    hand: int
    index: int
    number: int
    results: tuple[Result, ...]

    @property
    def top(self) -> int:
        """The most matchpoints a result on this pack can earn."""
        return _top_of(len(self.results))


@dataclass(frozen=True, slots=True, kw_only=True)
class Entry:
    """One player's line of the standings: a seat of a scored table."""

    table: int
    seat: int
    player: str
    log: str
    raw_total: int  # the sum of the player's hand scores
    packs: int  # the packs the player's results are on (one a hand played)
    matchpoints: Fraction  # the sum of the player's factored matchpoints
    top: int  # packs times the field's top
    rank: int  # from 1; players sharing a rank have the same one
    shared: bool

    @property
    def percentage(self) -> Fraction | None:
        """The duplicate score: matchpoints as a share of the top, in percent; None when
        no pack had two results, so nothing could be compared."""
        return None if self.top == 0 else 100 * self.matchpoints / self.top

    @property
    def rank_label(self) -> str:
        """The rank as the standings show it: ``=3`` for a rank shared, as in bridge."""
        return f"={self.rank}" if self.shared else str(self.rank)


@dataclass(frozen=True, slots=True)
class Scores:
    """The standings of the scored tables, and every pack's results."""

    shape: Shape
    field: int  # the results on the most played pack: every factored top is 2(field - 1)
    entries: tuple[Entry, ...]  # in standings order
    packs: tuple[PackRecord, ...]  # by pack number

    @property
    def top(self) -> int:
        """A full pack's top, which every factored result is on."""
        return _top_of(self.field)


def seat_of(shape: Shape, table: int, index: int) -> int:
    """The seat of ``table`` that plays pack ``index`` of every hand (the rotation,
    ``Shape.pack_index``, read the other way)."""
    shape.pack_index(table, 0)  # a table of the tournament
    if not 0 <= index < shape.seats:
        raise ValueError(f"no pack {index} in a hand of this tournament")
    # k = (s + t - 1) mod S, so s = (k - t + 1) mod S: one step, not a search of the seats.
    return (index - table + 1) % shape.seats


def score(shape: Shape, results: Iterable[TableResult]) -> Scores:
    """Compare every result on a pack with the others on it, and rank the players.

    On a pack with ``n`` results each result earns 2 matchpoints for every result it
    beats and 1 for every tie: the top is 2(n - 1). A pack with fewer results than the
    most played pack (``field`` results) is factored up to the field's top by Neuberg's
    formula, ``(MP + 1) * field / n - 1``, as duplicate bridge's scorers do for a board
    played fewer times; a lone result gets an average. A player's percentage is the sum
    of their factored matchpoints over the sum of their tops. Players are ranked by
    percentage, then by raw total, both higher first; players equal on both share a rank.
    Raises ValueError for results that do not fit ``shape``.
    """
    tables = sorted(results, key=lambda result: result.table)
    _check_results(shape, tables)
    played = [
        (
            hand,
            index,
            [
                (result, seat_of(shape, result.table, index))
                for result in tables
                if len(result.hands) >= hand
            ],
        )
        for hand in range(1, shape.hands + 1)
        for index in range(shape.seats)
    ]
    field = max((len(on_pack) for _, _, on_pack in played), default=0)
    packs = tuple(
        PackRecord(
            hand=hand,
            index=index,
            number=shape.pack_number(hand, index),
            results=_compared(hand, on_pack, field),
        )
        for hand, index, on_pack in played
    )
    return Scores(shape, field, _ranked(_entries(tables, packs, field)), packs)


def _check_results(shape: Shape, tables: Sequence[TableResult]) -> None:
    seen: set[int] = set()
    for result in tables:
        shape.pack_index(result.table, 0)  # a table of the tournament
        if result.table in seen:
            raise ValueError(f"two results for table {result.table}")
        seen.add(result.table)
        if len(result.players) != shape.seats:
            raise ValueError(
                f"table {result.table} lists {plural(len(result.players), 'player')}, "
                f"not {shape.seats}"
            )
        if len(result.hands) > shape.hands:
            raise ValueError(
                f"table {result.table} has {plural(len(result.hands), 'hand')}, "
                f"not at most {shape.hands}"
            )
        for number, scores in enumerate(result.hands, 1):
            if len(scores) != shape.seats:
                raise ValueError(
                    f"table {result.table}, hand {number}: {len(scores)} scores, not {shape.seats}"
                )


def _compared(
    hand: int, on_pack: Sequence[tuple[TableResult, int]], field: int
) -> tuple[Result, ...]:
    scores = [result.hands[hand - 1][seat] for result, seat in on_pack]
    # Counted in the sorted scores, not against every other result: a pack of a
    # 4096-table tournament has 4096 results, and comparing each with each took seconds.
    ordered = sorted(scores)
    compared = []
    for (result, seat), own in zip(on_pack, scores, strict=True):
        beaten = bisect.bisect_left(ordered, own)  # the results below it
        tied = bisect.bisect_right(ordered, own) - beaten - 1  # not with itself
        matchpoints = 2 * beaten + tied
        compared.append(
            Result(
                table=result.table,
                seat=seat,
                player=result.players[seat],
                score=own,
                matchpoints=matchpoints,
                factored=_factored(matchpoints, len(scores), field),
                log=result.log,
            )
        )
    return tuple(sorted(compared, key=lambda result: (-result.score, result.table)))


def _factored(matchpoints: int, results: int, field: int) -> Fraction:
    """Neuberg's formula on the 2-per-beat scale: the matchpoints a result on a pack of
    ``results`` results would be worth on a pack of ``field``. It keeps an average an
    average (``results - 1`` becomes ``field - 1``) and a top short of the full top, since
    fewer comparisons say less."""
    if results == field:
        return Fraction(matchpoints)
    return Fraction((matchpoints + 1) * field, results) - 1


def _entries(
    tables: Sequence[TableResult], packs: Sequence[PackRecord], field: int
) -> Iterator[Entry]:
    earned: dict[tuple[int, int], Fraction] = {}
    for pack in packs:
        for on_pack in pack.results:
            key = (on_pack.table, on_pack.seat)
            earned[key] = earned.get(key, Fraction(0)) + on_pack.factored
    full_top = _top_of(field)
    for result in tables:
        for seat, player in enumerate(result.players):
            yield Entry(
                table=result.table,
                seat=seat,
                player=player,
                log=result.log,
                raw_total=sum(scores[seat] for scores in result.hands),
                packs=len(result.hands),
                matchpoints=earned.get((result.table, seat), Fraction(0)),
                top=len(result.hands) * full_top,
                rank=0,
                shared=False,
            )


def _ranked(entries: Iterable[Entry]) -> tuple[Entry, ...]:
    """The standings order: percentage, then raw total, both higher first (no percentage
    comes after every percentage), then by table and seat, which ranks nobody."""

    def merit(entry: Entry) -> tuple[bool, Fraction, int]:
        percentage = entry.percentage
        return (percentage is not None, percentage or Fraction(0), entry.raw_total)

    ordered = sorted(entries, key=lambda entry: (entry.table, entry.seat))
    ordered.sort(key=merit, reverse=True)
    alike = Counter(merit(entry) for entry in ordered)
    ranked: list[Entry] = []
    for position, entry in enumerate(ordered):
        rank = position + 1
        if ranked and merit(entry) == merit(ordered[position - 1]):
            rank = ranked[-1].rank
        ranked.append(dataclasses.replace(entry, rank=rank, shared=alike[merit(entry)] > 1))
    return tuple(ranked)


__all__ = [
    "Entry",
    "PackRecord",
    "Result",
    "Scores",
    "TableResult",
    "score",
    "seat_of",
]
