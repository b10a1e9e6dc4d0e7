"""What the hosted-table tests share: a quick match's rules and seats, and the fakes
of the journal (tickets durable only once released, as the real one's after its
fdatasync) and of the data folder's paths."""

from __future__ import annotations

import asyncio
import copy
from collections.abc import Callable, Coroutine, Mapping, Sequence
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from racing_demon.audit_run import AuditRun, audit_log
from racing_demon.game.rules import Rules
from racing_demon.log.keys import raw_public_bytes
from racing_demon.outcomes import ExitCode
from racing_demon.profiles import builtin_document, rules_from_document
from racing_demon.serve.host import HostedTable, SeatKind, SeatSpec, TableSpec, TableState
from racing_demon.serve.notes import Notes
from racing_demon.serve.round_trips import RoundTrips
from racing_demon.sim.bots import BotProfile
from racing_demon.verify import Settings, verify_log
from racing_demon.viewer import viewer_data

GAME = "5e7e0000000000000000000000000031"
SECRET = bytes(range(100, 132))
TABLE_KEY = Ed25519PrivateKey.from_private_bytes(bytes([7]) * 32)
TABLE_PUB = raw_public_bytes(TABLE_KEY.public_key())
PERSON_KEY = Ed25519PrivateKey.from_private_bytes(bytes([8]) * 32)
OTHER_KEY = Ed25519PrivateKey.from_private_bytes(bytes([9]) * 32)
QUICK = BotProfile(name="quick", play_ms=1, turn_ms=1, jitter_percent=0, hold_off=False)
SETTINGS = Settings(table_key=TABLE_PUB)


def quick_rules(idle_abandon_ms: int | None = None) -> Rules:
    """peer2peer's one-deal match, with no countdown (and a short idle abandon)."""
    document = copy.deepcopy(builtin_document("peer2peer"))
    document["name"] = "served-quick"
    document["time"]["countdown_ms"] = 0
    if idle_abandon_ms is not None:
        document["time"]["idle_abandon_ms"] = idle_abandon_ms
    return rules_from_document(document)


def bot(seat: int) -> SeatSpec:
    key = Ed25519PrivateKey.from_private_bytes(bytes([20 + seat]) * 32)
    return SeatSpec.bot_seat(f"bot {seat}", QUICK, key)


def person(key: Ed25519PrivateKey = PERSON_KEY, name: str = "Pat") -> SeatSpec:
    return SeatSpec(kind=SeatKind.PERSON, name=name, key=raw_public_bytes(key.public_key()))


class FakeJournal:
    """The journal's interface (serve/journal.py): tickets in order, durable only once
    released, by ``release`` or, with ``batch_ms``, every few milliseconds as group commit
    would."""

    def __init__(self) -> None:
        self.entries: list[tuple[str, int | None, bytes]] = []  # (game, seat or None, line)
        self.released = 0
        self._moved = asyncio.Event()

    def log_line(self, game: str, line: bytes) -> int:
        self.entries.append((game, None, line))
        return len(self.entries)

    def receipt(self, game: str, seat: int, line: bytes) -> int:
        self.entries.append((game, seat, line))
        return len(self.entries)

    async def durable(self, ticket: int) -> None:
        while ticket > self.released:
            self._moved.clear()
            await self._moved.wait()

    def release(self) -> None:
        self.released = len(self.entries)
        self._moved.set()

    def is_durable(self, seat: int | None, line: bytes) -> bool:
        return any(entry[1:] == (seat, line) for entry in self.entries[: self.released])

    async def group_commit(self, batch_ms: float = 2.0) -> None:
        while True:
            await asyncio.sleep(batch_ms / 1000)
            self.release()


class FakePaths:
    def __init__(self, root: Path) -> None:
        self.root = root

    def log_path(self, game: str) -> Path:
        return self.root / f"{game}.jsonl"

    def receipts_path(self, game: str, seat: int) -> Path:
        return self.root / f"{game}.seat{seat}.receipts.jsonl"


class Server:
    """A hosted table with its fakes, and what its callbacks saw."""

    def __init__(self, root: Path, seats: Sequence[SeatSpec], rules: Rules) -> None:
        self.journal = FakeJournal()
        self.paths = FakePaths(root)
        self.states: list[TableState] = []
        self.notes = Notes(RoundTrips())  # a crash is what resumes a table here
        self.spec = TableSpec(
            game=GAME, name="test", rules=rules, seats=tuple(seats), secret=SECRET
        )
        self.table = self.hosted()

    def hosted(self) -> HostedTable:
        return HostedTable(
            self.spec,
            table_key=TABLE_KEY,
            journal=self.journal,
            paths=self.paths,
            on_state=self._on_state,
            on_finished=self._on_finished,
            notes=self.notes,
        )

    def _on_state(self, game: str, state: TableState) -> None:
        assert game == GAME
        self.states.append(state)

    async def _on_finished(self, game: str) -> str:
        return str(verify_log(self.paths.log_path(game), SETTINGS).verdict)

    @property
    def log(self) -> Path:
        return self.paths.log_path(GAME)

    def receipts(self, seat: int) -> Path:
        return self.paths.receipts_path(GAME, seat)

    def audit(self) -> ExitCode:
        seats = len(self.spec.seats)
        run = AuditRun(
            log=self.log, table_key=TABLE_PUB, receipts=[self.receipts(s) for s in range(seats)]
        )
        return audit_log(run).exit_code


def run(main: Callable[[], Coroutine[Any, Any, None]]) -> None:
    asyncio.run(asyncio.wait_for(main(), 60))


async def until(check: Callable[[], bool]) -> None:
    while not check():
        await asyncio.sleep(0.001)


def public_tables(log: Path) -> list[dict[str, Any]]:
    """The table after each record of ``log`` (a finished, verified log) as the view page
    frames it, with what nobody at a table sees cut out as docs/protocol.md says (a
    demon's top card, a waste's last three, their counts; a stock's count): what a served
    page is shown, computed the viewer's way."""
    tables: list[dict[str, Any]] = []
    piles: dict[str, Any] = {}
    for frame in viewer_data(log, SETTINGS)["frames"]["list"]:
        piles = dict(frame["set"]) if frame["full"] else {**piles, **frame["set"]}
        tables.append(
            {
                pile: {"cards": value["cards"][-shown:], "n": len(value["cards"])}
                if (shown := {"demon": 1, "waste": 3}.get(pile.split(".")[-1]))
                else value
                for pile, value in piles.items()
            }
        )
    return tables


def applied(messages: Sequence[Mapping[str, Any]]) -> dict[int, dict[str, Any]]:
    """``piles`` messages applied in order, as a client does: the table it holds after
    each seq."""
    held: dict[str, Any] = {}
    tables = {}
    for message in messages:
        held = dict(message["set"]) if message["full"] else {**held, **message["set"]}
        tables[message["seq"]] = held
    return tables
