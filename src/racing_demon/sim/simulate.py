"""Simulated matches: bots on their own clocks, a network with latency, a real table.

Time is virtual: integer milliseconds on a heap of events, never the wall clock, so a whole
match runs in seconds and the same inputs always give the same log (docs/simulation.md).

* A bot wakes on its own clock and decides (``bots.choose_move``) on the table as it
  sees it: as the table stood one mean latency ago (the way down). Its next wake-up is
  ``BotProfile.pause_ms`` later. Once it has sent a move it decides again only when that
  move can show in its view, as a client waits for the table to confirm its move.
* A submission reaches the table after the seat's one-way latency (``Latency``: a mean
  with uniform jitter). The table takes its inbox every ``TICK_MS`` (a server loop):
  what arrived during a tick is taken at the tick's end, in arrival order, arrivals in one
  millisecond in the order of a draw from the seeded stream (fair to every seat); at one
  instant every arrival goes before any decision. Each goes through ``Table.advance`` and
  ``Table.submit`` with the time the table takes it, exactly as a server would send it:
  two bots that saw the same foundation race for it and the later card is bounced
  (``FOUNDATION_TAKEN``), or under ``table`` both stay when they land in the same tick
  (the tie rule: the same millisecond in the log).
* A submission for a hand that ended while it travelled is dropped before the table (a
  server refuses a message for a finished hand; the table could not log it under the new
  hand, whose number the player did not sign). ``SeatReport.stale`` counts them.

Every draw comes from ``SimulationSeed``: the dealer secret, the entropy, the game id and
one word stream per purpose and seat, all derived from the simulation's text seed with
HKDF-SHA256. A simulation is reproducible by design, so whoever knows its seed can predict
its deals: right for simulations, never for real play. A simulated table of a duplicate
tournament takes the organiser's secret instead, deals the plan's packs, and holds its
final record as a real tournament table does, until ``reveal_held``.
"""

from __future__ import annotations

import contextlib
import heapq
import hmac
import json
from collections import Counter, deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO, Final

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.kdf.hkdf import HKDFExpand

from racing_demon.errors import RacingDemonError
from racing_demon.files import open_regular
from racing_demon.game.deal import SECRET_BYTES, MatchSeed, uniform_below, word_stream
from racing_demon.game.engine import advance_clock
from racing_demon.game.flow import SUBMISSION_KINDS, RecordKind, Seen, Submission
from racing_demon.game.rules import Rules
from racing_demon.game.scoring import Match
from racing_demon.game.state import EndReason, State
from racing_demon.log.keys import raw_public_bytes
from racing_demon.log.receipts import RECEIPTS_SUFFIX
from racing_demon.log.records import TournamentTag, parse_record
from racing_demon.sim.bots import BotProfile, choose_move, stream_chooser
from racing_demon.table import PlayerInfo, Table, player_signer, sign_submission
from racing_demon.wording import plural

SIMULATION_FORMAT: Final = "racing-demon/simulate/v1"
ENTROPY_BYTES: Final = 16
NAMES: Final = ("Ada", "Bert", "Cleo", "Dev", "Eli", "Fay", "Gus", "Hal")
BACKS: Final = ("red", "blue", "green", "black", "gold", "grey", "white", "violet")
TICK_MS: Final = 10
"""The table takes its inbox every 10 ms (a 100 Hz server loop), stamping what arrived with
the tick's end: cards that land in one tick are the same instant to the table."""
MAX_EVENTS: Final = 5_000_000
"""A match of these bots ends long before this many events; reaching it means a bug."""

_ARRIVAL: Final = 0  # at one instant, every arrival is taken before any decision
_WAKE: Final = 1


class SimulationError(RacingDemonError, RuntimeError):
    """A simulated match that does not end: a bug in the bots or the simulator."""


@dataclass(frozen=True, slots=True)
class SimulationSeed:
    """Every value a simulation draws, derived from one text seed.

    ``prk = HMAC-SHA256(key="racing-demon/simulate/v1", seed as UTF-8)`` (HKDF-Extract), and
    each value is ``HKDF-Expand(prk, label)``: the dealer secret (label ``dealer secret``,
    32 bytes), each seat's entropy (``entropy <seat>``, 16 bytes), the game id (``game id``,
    16 bytes as hex), and for each purpose the PRK of a word stream (``stream <purpose>``)
    that ``deal.word_stream`` expands per seat, exactly as it expands a pack.
    """

    text: str
    prk: bytes = field(repr=False)

    @classmethod
    def from_text(cls, text: str) -> SimulationSeed:
        if not text:
            raise ValueError("the simulation seed must be a non-empty string")
        try:
            ikm = text.encode("utf-8")
        except UnicodeEncodeError as error:
            raise ValueError(f"simulation seed {text!r} cannot be encoded as UTF-8") from error
        return cls(text, hmac.digest(SIMULATION_FORMAT.encode(), ikm, "sha256"))

    def _expand(self, label: str, length: int) -> bytes:
        return HKDFExpand(hashes.SHA256(), length, label.encode()).derive(self.prk)

    @property
    def dealer_secret(self) -> bytes:
        return self._expand("dealer secret", SECRET_BYTES)

    def entropy(self, seats: int) -> list[bytes]:
        return [self._expand(f"entropy {seat}", ENTROPY_BYTES) for seat in range(seats)]

    @property
    def game_id(self) -> str:
        return self._expand("game id", 16).hex()

    def words(self, purpose: str, seat: int) -> Iterator[int]:
        """The stream of 32-bit words for one purpose and one seat: ``strategy`` (a bot's
        choices), ``clock`` (its pauses), ``network`` (its latency draws), ``latency`` (its
        default latency) and ``order`` (seat 0: who goes first within a millisecond)."""
        return word_stream(MatchSeed(self._expand(f"stream {purpose}", 32)), 1, seat)

    def latency(self, seat: int) -> Latency:
        """The seat's default latency: a mean of 20 to 120 ms, jitter a quarter of it."""
        mean = 20 + uniform_below(101, self.words("latency", seat))
        return Latency(mean, mean // 4)


@dataclass(frozen=True, slots=True)
class Latency:
    """One seat's network delay. A submission takes ``mean_ms ± jitter_ms`` (uniform) to
    reach the table; the bot's view of the table lags by ``mean_ms``."""

    mean_ms: int
    jitter_ms: int = 0

    def __post_init__(self) -> None:
        if not 0 <= self.jitter_ms <= self.mean_ms:
            raise ValueError(
                f"a jitter of {self.jitter_ms} ms does not fit a latency of {self.mean_ms} ms "
                "(0 up to the latency)"
            )

    def draw(self, words: Iterator[int]) -> int:
        if not self.jitter_ms:
            return self.mean_ms
        return self.mean_ms - self.jitter_ms + uniform_below(2 * self.jitter_ms + 1, words)

    def __str__(self) -> str:
        return f"{self.mean_ms}±{self.jitter_ms} ms"


@dataclass(frozen=True, slots=True, kw_only=True)
class SeatReport:
    """What one bot did: its submissions, its idle looks, and its stale submissions."""

    name: str
    bot: BotProfile
    latency: Latency
    actions: int  # submissions sent
    action_pause_ms: int  # the pauses that followed them, summed
    idle: int  # wake-ups that found nothing worth doing
    stale: int  # submissions dropped: their hand ended while they travelled

    @property
    def mean_action_ms(self) -> float:
        """The bot's mean interval between actions while it had something to do."""
        return self.action_pause_ms / self.actions if self.actions else 0.0


@dataclass(frozen=True, slots=True, kw_only=True)
class Tally:
    """What the log holds, counted from the log itself."""

    records: int
    kinds: Mapping[str, int]  # record kind -> count
    bounces: Mapping[str, int]  # reason code -> count

    @property
    def submissions(self) -> int:
        return sum(self.kinds.get(kind.value, 0) for kind in SUBMISSION_KINDS)


@dataclass(frozen=True, slots=True)
class Simulation:
    """A finished simulated match and what happened in it."""

    path: Path
    seed: str
    game: str
    rules: Rules
    seats: tuple[SeatReport, ...]
    match: Match
    virtual_ms: int
    tally: Tally
    receipts: tuple[Path, ...] = ()  # each seat's receipts file, when kept
    # A tournament's table: played out, its final record held back (``reveal_held``).
    held: bool = False

    @property
    def bounced(self) -> int:
        return self.tally.kinds.get(RecordKind.BOUNCE.value, 0)

    @property
    def ties(self) -> int:
        return self.tally.kinds.get(RecordKind.TIE.value, 0)

    @property
    def stall_shifts(self) -> int:
        return self.tally.kinds.get(RecordKind.STALL.value, 0)

    @property
    def blocked(self) -> int:
        return sum(hand.reason is EndReason.BLOCKED for hand in self.match.hands)


@dataclass(frozen=True, slots=True, kw_only=True)
class _Arrival:
    seat: int
    hand: int
    n: int
    text: str
    signature: str | None
    seen: Seen  # the last record the seat had seen when it sent this


@dataclass(frozen=True, slots=True)
class _Wake:
    seat: int


# time the table takes it, phase, time it arrived, a fair draw, a counter, the event
_Entry = tuple[int, int, int, int, int, _Arrival | _Wake]


def simulate(
    path: Path,
    rules: Rules,
    bots: Sequence[BotProfile],
    seed: str,
    table_key: Ed25519PrivateKey,
    *,
    player_keys: Sequence[Ed25519PrivateKey] | None = None,
    latencies: Sequence[Latency] | None = None,
    tick_ms: int = TICK_MS,
    durable: bool = False,
    on_hand: Callable[[Match], None] | None = None,
    max_events: int = MAX_EVENTS,
    receipts: bool = True,
    tournament: TournamentTag | None = None,
    dealer_secret: bytes | None = None,
    names: Sequence[str] | None = None,
) -> Simulation:
    """Play a whole match of ``bots`` at a new table logging to ``path``.

    ``latencies`` default to each seat's draw from the seed (``SimulationSeed.latency``).
    With ``player_keys`` every seat co-signs the genesis and signs its submissions. The
    table skips the fsync of every record unless ``durable`` (a simulation can be run
    again). ``on_hand`` sees the match after every hand. With ``receipts`` each seat's
    client keeps the table's receipts in ``receipt_paths(path, seats)``, created like the
    log: never over an existing file. Raises ValueError for inputs that do not fit,
    FileExistsError for an output that exists, and SimulationError if the match does not
    end within ``max_events``.

    With ``tournament`` (``Plan.tag(table)``) the match is that table of a duplicate
    tournament, ``rules`` the plan's and ``dealer_secret`` (then required) the organiser's
    secret: the table deals the plan's packs and, once played out, holds the final record
    (``Simulation.held``), which ``reveal_held`` writes once every table has played.
    ``dealer_secret`` without ``tournament`` replaces the secret derived from ``seed``.
    ``names`` are the seats' names (default: a name and the bot's speed, the same at
    every table; a tournament's tables need names that tell their players apart).
    """
    seats = len(bots)
    if not rules.min_players <= seats <= rules.max_players:
        raise ValueError(
            f"profile {rules.name!r} is for {rules.min_players} to {rules.max_players} "
            f"players, not {seats}"
        )
    if player_keys is not None and len(player_keys) != seats:
        raise ValueError(f"{plural(seats, 'bot')} but {plural(len(player_keys), 'player key')}")
    if latencies is not None and len(latencies) != seats:
        raise ValueError(
            f"{plural(seats, 'bot')} but {plural(len(latencies), 'latency', 'latencies')}"
        )
    if tick_ms < 1:
        raise ValueError(f"the table's tick is at least 1 ms, not {tick_ms}")
    if tournament is not None and dealer_secret is None:
        raise ValueError("a tournament's table deals from the organiser's secret: give it")
    derived = SimulationSeed.from_text(seed)
    latency = tuple(latencies or (derived.latency(seat) for seat in range(seats)))
    if names is None:
        names = [f"{NAMES[seat % len(NAMES)]} ({bot.name})" for seat, bot in enumerate(bots)]
    elif len(names) != seats:
        raise ValueError(f"{plural(seats, 'bot')} but {plural(len(names), 'name')}")
    keys = list(player_keys) if player_keys is not None else None
    players = [
        PlayerInfo(
            names[seat],
            BACKS[seat % len(BACKS)],
            None if keys is None else raw_public_bytes(keys[seat]),
        )
        for seat in range(seats)
    ]
    signers = None if keys is None else [player_signer(key) for key in keys]
    kept_in = receipt_paths(path, seats) if receipts else ()
    with contextlib.ExitStack() as outputs:
        kept: list[BinaryIO] = []
        try:
            for receipt in kept_in:
                kept.append(outputs.enter_context(receipt.open("xb")))
            table = Table.create(
                path,
                rules,
                players,
                table_key,
                derived.dealer_secret if dealer_secret is None else dealer_secret,
                derived.entropy(seats) if keys is None else None,
                player_signers=signers,
                game_id=derived.game_id,
                durable=durable,
                tournament=tournament,
            )
        except BaseException:
            for receipt in kept_in[: len(kept)]:  # this call's own new files: no log, none
                receipt.unlink(missing_ok=True)
            raise
        try:
            loop = _Loop(table, bots, latency, derived, keys, tick_ms, kept)
            loop.run(on_hand, max_events)
        finally:
            if not table.finished:
                # A failed simulation, or a tournament table holding its final record,
                # leaves a valid, unfinished prefix.
                table.close()
    return Simulation(
        path=path,
        seed=seed,
        game=table.game,
        rules=rules,
        seats=tuple(
            SeatReport(
                name=names[seat],
                bot=bots[seat],
                latency=latency[seat],
                actions=loop.actions[seat],
                action_pause_ms=loop.action_pause_ms[seat],
                idle=loop.idle[seat],
                stale=loop.stale[seat],
            )
            for seat in range(seats)
        ),
        match=table.match,
        virtual_ms=table.t_ms,
        tally=tally(path),
        receipts=kept_in,
        held=not table.finished,
    )


def reveal_held(
    path: Path,
    table_key: Ed25519PrivateKey,
    dealer_secret: bytes,
    *,
    player_keys: Sequence[Ed25519PrivateKey] | None = None,
) -> None:
    """Write the final record that a simulated tournament table held (``Simulation.held``),
    revealing the organiser's ``dealer_secret``: the table resumes from its log, and every
    keyed seat accepts the result, as ``simulate``'s bots do."""
    signers = None if player_keys is None else [player_signer(key) for key in player_keys]
    with Table.resume(path, table_key, dealer_secret, player_signers=signers) as table:
        table.reveal()


def receipt_paths(log: Path, seats: int) -> tuple[Path, ...]:
    """Where each seat's client keeps the receipts of a simulated match logged at ``log``:
    ``<log stem>.seat<N>.receipts.jsonl`` beside it."""
    return tuple(log.with_name(f"{log.stem}.seat{seat}{RECEIPTS_SUFFIX}") for seat in range(seats))


class _Loop:
    """The event heap of one simulation, the views the bots see, and their bookkeeping."""

    def __init__(
        self,
        table: Table,
        bots: Sequence[BotProfile],
        latency: Sequence[Latency],
        derived: SimulationSeed,
        keys: Sequence[Ed25519PrivateKey] | None,
        tick_ms: int,
        receipts: Sequence[BinaryIO],
    ) -> None:
        seats = len(bots)
        self._table = table
        self._receipts = receipts  # each seat's, or none
        self._tick_ms = tick_ms
        self._bots = bots
        self._latency = latency
        self._keys = keys
        self._choosers = [stream_chooser(derived.words("strategy", s)) for s in range(seats)]
        self._clocks = [derived.words("clock", seat) for seat in range(seats)]
        self._network = [derived.words("network", seat) for seat in range(seats)]
        self._order = derived.words("order", 0)
        self._heap: list[_Entry] = []
        self._counter = 0
        # The table after every change, as long as some seat's view may still show it.
        self._snapshots: deque[tuple[int, State, Seen]] = deque(
            [(table.t_ms, table.state, table.head)]
        )
        self._records = table.records
        self._oldest_view = max(lag.mean_ms for lag in latency)
        self._visible_at: list[int | None] = [None] * seats  # when the own move shows
        self.actions = [0] * seats
        self.action_pause_ms = [0] * seats
        self.idle = [0] * seats
        self.stale = [0] * seats
        for seat in range(seats):  # nobody starts on the same instant as a signal
            self._wake_at(bots[seat].pause_ms(None, self._clocks[seat]), seat)

    def _wake_at(self, t_ms: int, seat: int) -> None:
        heapq.heappush(self._heap, (t_ms, _WAKE, t_ms, seat, self._counter, _Wake(seat)))
        self._counter += 1

    def _send(self, landing_ms: int, arrival: _Arrival) -> int:
        """The table takes what arrived during a tick at the tick's end, in arrival order;
        arrivals at one millisecond in the order of a draw, fair to every seat."""
        taken_ms = -(-landing_ms // self._tick_ms) * self._tick_ms
        entry = (taken_ms, _ARRIVAL, landing_ms, next(self._order), self._counter, arrival)
        heapq.heappush(self._heap, entry)
        self._counter += 1
        return taken_ms

    def run(self, on_hand: Callable[[Match], None] | None, max_events: int) -> None:
        table = self._table
        hands = 0
        for _ in range(max_events):
            t_ms, *_, event = heapq.heappop(self._heap)
            table.advance(t_ms)  # a hand whose deadline passed ends first
            if not table.played_out:
                if isinstance(event, _Arrival):
                    self._arrive(event, t_ms)
                else:
                    self._wake(event.seat, t_ms)
            if table.records != self._records:
                self._records = table.records
                self._snapshots.append((t_ms, table.state, table.head))
            if on_hand is not None and table.match.played > hands:
                hands = table.match.played
                on_hand(table.match)
            if table.played_out:
                return
        raise SimulationError(f"the match did not end within {max_events} events")

    def _arrive(self, arrival: _Arrival, t_ms: int) -> None:
        table = self._table
        if arrival.hand != table.state.hand:
            self.stale[arrival.seat] += 1
            return
        outcome = table.submit(
            arrival.seat, arrival.text, t_ms, arrival.n, arrival.signature, arrival.seen
        )
        if self._receipts:
            self._receipts[arrival.seat].write(outcome.receipt + b"\n")

    def _view(self, seat: int, t_ms: int) -> tuple[State, Seen]:
        """The table as the seat sees it at ``t_ms``: as it stood one mean latency ago, and
        the last record it had seen then."""
        snapshots = self._snapshots
        while len(snapshots) > 1 and snapshots[1][0] <= t_ms - self._oldest_view:
            snapshots.popleft()  # no seat will ever look this far back again
        seen_ms = t_ms - self._latency[seat].mean_ms
        for changed_ms, state, seen in reversed(snapshots):
            if changed_ms <= seen_ms:
                if seen_ms > state.clock_ms:
                    return advance_clock(state, seen_ms), seen
                return state, seen
        _, state, seen = snapshots[0]  # the match started less than a latency ago
        return state, seen

    def _wake(self, seat: int, t_ms: int) -> None:
        visible_at = self._visible_at[seat]
        if visible_at is not None and t_ms < visible_at:
            self._wake_at(visible_at, seat)  # look again once it shows
            return
        table = self._table
        bot = self._bots[seat]
        state, seen = self._view(seat, t_ms)
        move = choose_move(state, seat, bot, self._choosers[seat])
        pause = bot.pause_ms(move, self._clocks[seat])
        if move is None:
            self.idle[seat] += 1
        else:
            text = str(move)
            n = table.next_n(seat)
            signature = None
            if self._keys is not None:
                signature = sign_submission(
                    self._keys[seat], table.game, state.hand, seat, n, text, seen, table.version
                )
            latency = self._latency[seat]
            landing = t_ms + latency.draw(self._network[seat])
            taken = self._send(
                landing,
                _Arrival(
                    seat=seat, hand=state.hand, n=n, text=text, signature=signature, seen=seen
                ),
            )
            self._visible_at[seat] = taken + latency.mean_ms
            self.actions[seat] += 1
            self.action_pause_ms[seat] += pause
        self._wake_at(t_ms + pause, seat)


def tally(path: Path) -> Tally:
    """Count the records of a log by kind, and its bounces by reason."""
    kinds: Counter[str] = Counter()
    bounces: Counter[str] = Counter()
    with open_regular(path) as stream:
        for line in stream:
            record = parse_record(json.loads(line)["body"])
            kinds[record.kind.value] += 1
            if isinstance(record.payload, Submission) and record.payload.reason is not None:
                bounces[record.payload.reason] += 1
    return Tally(records=sum(kinds.values()), kinds=dict(kinds), bounces=dict(bounces))
