"""Regenerate sample_games/: valid and disputed games, their manifest, README and table key.

Usage: ``python scripts/regen_sample_games.py [--check | --search]``. With ``--check``
nothing is written and the exit status is 1 if any file in sample_games/ differs from what
would be generated, is missing, or is not generated at all. ``--search`` looks for new
simulation seeds (after a change to the bots, the table or the engine made a seed lose its
scenario) and prints them, writing nothing: paste them into ``GAMES``.

This script owns the whole folder; never edit a file there by hand. Every log is written by
a real ``Table``: the valid games are simulated matches (``racing_demon.sim.simulate``: bots on
virtual clocks, deterministic from a text seed), the README's game is the golden table log
(``scripts/regen_golden_logs.py``, byte for byte), and the endings the bots never reach (a
resignation, three minutes of shuffling with no card to the centre, five silent minutes) are
scripted through the table API:
the simulation's log is cut after a record, ``Table.resume`` continues it, and then one
scripted submission (``resign``) or only the clock (``Table.advance``) follows. The disputed
games change one thing in a valid one, as a dishonest table or a damaged copy would: raw
bytes or lines, or a record edited and the log re-chained and re-signed with the table's own
key (``seal``, as tests/test_verify.py does). No record is ever written by hand.

For each valid game the script asserts the scenarios the manifest says it covers (counting
record kinds, bounce reasons and end reasons, and replaying it to find a seat that held off
calling), so the corpus cannot silently lose coverage; the expected verdicts and reason codes
are the ones docs/log-format.md §7 gives for each defect, and tests/test_sample_games.py
checks them against ``racing-demon verify`` and ``racing-demon audit``.

**Test fixtures.** Every private key below (and in regen_golden_logs.py) is published here on
purpose so that anyone can regenerate the corpus: anything signed with them proves nothing.
Never use them for a real table or player.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import sys
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import ModuleType
from typing import Any, Final, Literal

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from racing_demon.audit import audit_hands
from racing_demon.game.flow import RecordKind, Submission
from racing_demon.game.moves import Move, Zone
from racing_demon.game.rules import Rules
from racing_demon.game.state import Phase, State
from racing_demon.log.records import line_bytes
from racing_demon.profiles import builtin_document, rules_from_document
from racing_demon.replay import replay
from racing_demon.sim.bots import BOTS
from racing_demon.sim.simulate import SimulationSeed, simulate
from racing_demon.table import Table, sign_submission
from racing_demon.testing.tamper import reseal

ROOT = Path(__file__).resolve().parents[1]
SAMPLE_DIR = ROOT / "sample_games"
FORMAT: Final = "racing-demon/sample-games-manifest/v1"


def _load_golden() -> ModuleType:
    path = Path(__file__).resolve().parent / "regen_golden_logs.py"
    spec = importlib.util.spec_from_file_location("regen_golden_logs", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


golden = _load_golden()

# -- test fixtures: published on purpose; never use them for anything real -------------------
TABLE_KEY: Final[Ed25519PrivateKey] = golden.TABLE_KEY  # bytes(range(32)); table.pub is its half
PLAYER_KEYS: Final[list[Ed25519PrivateKey]] = golden.PLAYER_KEYS  # seat s: bytes([0x50 + s]) * 32
OTHER_TABLE_KEY: Final = Ed25519PrivateKey.from_private_bytes(bytes(range(32, 64)))  # another table

# -- the scenarios the valid games cover (issue 4, item 6) ------------------------------------
SCENARIOS: Final = {
    "bounced_race": "a card that lost a race to the same foundation, bounced FOUNDATION_TAKEN",
    "tie": "two cards on one foundation level in the same millisecond (table's tie rule)",
    "stall_shift": "a stall shift recorded by the table",
    "agreement": "players agreeing to a stall shift (table)",
    "blocked_hand": "a hand ended as blocked: the stall cycle came round with no play",
    "hold_off_call": "a seat with an empty demon pile sends a card to the centre, not a call",
    "call": "a hand ended by a call",
    "demon_empty": "a hand that ended by itself when a demon pile emptied (nertz)",
    "no_centre": "a hand ended after three minutes of shuffling with no card to the centre "
    "(peer2peer)",
    "abandoned": "a silent table: five minutes with no action at all abandon the match, "
    "with no winner (peer2peer)",
    "resignation": "a seat resigns: the match ends against it (peer2peer)",
    "several_hands_to_100": "a match that goes several hands until a total reaches 100",
    "shared_victory": "equal highest totals: the winners share the victory",
}
REQUIRED: Final = frozenset(SCENARIOS) - {"agreement", "call"}  # what the corpus must cover


class CorpusError(RuntimeError):
    """The corpus cannot be generated as specified (a seed lost its scenario)."""


# -- valid games ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Ending:
    """An end the bots never play, scripted through the real table: the simulated log is cut
    after ``cut`` records, ``Table.resume`` continues it, and then either every player stays
    idle while the table's clock runs on (``idle``), or the seat with the most demon cards
    left resigns 1.5 s after the last record (``resign``)."""

    what: Literal["idle", "resign"]
    cut: int


@dataclass(frozen=True, slots=True)
class Game:
    """A simulated match (or the golden table game) through a real table."""

    file: str
    profile: str
    bots: tuple[str, ...]
    keyed: bool
    covers: tuple[str, ...]
    scenario: str
    seed: str  # the simulation seed: found by --search, below max_records
    changes: Mapping[str, int] = field(default_factory=dict)  # a rules variant, "match.max_hands"
    ending: Ending | None = None
    max_records: int = 300  # --search keeps the files small
    golden: str | None = None  # rendered by regen_golden_logs.py instead
    table_key: Ed25519PrivateKey = TABLE_KEY

    @property
    def players(self) -> int:
        return len(self.bots)

    @property
    def rules(self) -> Rules:
        document = builtin_document(self.profile)
        for path, value in self.changes.items():
            section, key = path.split(".")
            document[section][key] = value
        return rules_from_document(document)

    @property
    def origin(self) -> str:
        if self.golden is not None:
            return f"scripts/regen_golden_logs.py: the golden log {self.golden} (random players)"
        text = (
            f"racing_demon.sim.simulate, seed {self.seed!r}, bots {','.join(self.bots)}"
            + (", players sign" if self.keyed else "")
            + ("" if self.table_key is TABLE_KEY else ", signed by another fixture table key")
        )
        if self.ending is not None:
            then = {
                "idle": "every player stays idle while the table's clock runs on",
                "resign": "the seat with the most demon cards left resigns",
            }[self.ending.what]
            text += f"; cut after record {self.ending.cut - 1}, Table.resume, then {then}"
        return text


ONE_HAND: Final = {"match.max_hands": 1}
GOLDEN_PROFILE, GOLDEN_TARGET, GOLDEN_SEATS, GOLDEN_KEYED = golden.GAMES[golden.SAMPLE]
P2P_3P: Final = "valid/peer2peer-3p-hold-off.jsonl"  # unkeyed: the base of most tampered games
P2P_2P: Final = "valid/peer2peer-2p-blocked-shared-victory.jsonl"
P2P_4P: Final = "valid/peer2peer-4p-no-centre-signed.jsonl"  # keyed: the base of signed defects

# Seeds found by ``--search`` (the first seed from "<profile>-<n>p 0" on whose game covers the
# scenarios within max_records); regeneration asserts that each still covers them.
GAMES: Final = (
    Game(
        f"{golden.SAMPLE}.jsonl",
        GOLDEN_PROFILE,
        ("random",) * GOLDEN_SEATS,
        keyed=GOLDEN_KEYED,
        covers=("tie", "stall_shift", "call"),
        scenario="The README's game: random players race, with same-instant ties and stall "
        "shifts, until a call",
        seed="",
        changes={"match.target": GOLDEN_TARGET},
        golden=golden.SAMPLE,
    ),
    Game(
        "valid/table-2p-to-100.jsonl",
        "table",
        ("normal", "hard"),
        keyed=False,
        covers=("several_hands_to_100", "bounced_race", "agreement", "stall_shift", "call"),
        scenario="A whole match to 100 over several hands, with agreed stall shifts and lost "
        "races along the way",
        seed="table-2p 7",
        max_records=1100,
    ),
    Game(
        "valid/table-4p-tie-signed.jsonl",
        "table",
        ("easy", "normal", "hard", "hard"),
        keyed=True,
        covers=("tie", "bounced_race", "call"),
        scenario="Four bots race: two cards land on one level in the same tick and both stay "
        "(a tie record); later cards lose their races",
        seed="table-4p 0",
        changes=ONE_HAND,
    ),
    Game(
        P2P_2P,
        "peer2peer",
        ("normal", "hard"),
        keyed=False,
        covers=("stall_shift", "blocked_hand", "shared_victory"),
        scenario="Nobody can play: stall shifts until the cycle comes round, the hand ends "
        "blocked, and the two equal scores share the victory",
        seed="peer2peer-2p 24",
    ),
    Game(
        P2P_3P,
        "peer2peer",
        ("normal", "normal", "hard"),
        keyed=False,
        covers=("hold_off_call", "call"),
        scenario="A bot empties its demon pile but holds off calling while it can still send "
        "cards to the centre, then calls",
        seed="peer2peer-3p 44",
        max_records=90,
    ),
    Game(
        P2P_4P,
        "peer2peer",
        ("easy", "normal", "hard", "hard"),
        keyed=True,
        covers=("no_centre",),
        scenario="The players stop sending; three minutes after the last card reached the "
        "centre the table ends the hand (no_centre)",
        seed="peer2peer-4p 1",
        ending=Ending("idle", cut=60),
    ),
    Game(
        "valid/nertz-2p-stall-shifts.jsonl",
        "nertz",
        ("normal", "hard"),
        keyed=False,
        covers=("stall_shift", "demon_empty"),
        scenario="Both players pass through their stocks with no play: the table shifts by "
        "itself, play resumes, and a demon pile empties (automatic end)",
        seed="nertz-2p 107",
        changes=ONE_HAND,
        max_records=170,
    ),
    Game(
        "valid/peer2peer-3p-resigned-signed.jsonl",
        "peer2peer",
        ("easy", "normal", "hard"),
        keyed=True,
        covers=("resignation",),
        scenario="The seat furthest behind resigns mid-deal (a signed resign move): the match "
        "ends against it and the others' scores decide",
        seed="peer2peer-3p 0",
        ending=Ending("resign", cut=80),
    ),
    Game(
        "valid/peer2peer-2p-abandoned.jsonl",
        "peer2peer",
        ("normal", "hard"),
        keyed=False,
        covers=("abandoned",),
        scenario="A card reaches the centre and then nothing at all happens: after five "
        "minutes the match is abandoned, with no winner",
        seed="peer2peer-2p 3",
        ending=Ending("idle", cut=40),
    ),
    Game(
        "valid/nertz-3p-demon-empty-signed.jsonl",
        "nertz",
        ("easy", "normal", "hard"),
        keyed=True,
        covers=("demon_empty", "bounced_race"),
        scenario="Three bots race; a lost race is bounced, and the hand ends the moment a "
        "demon pile empties",
        seed="nertz-3p 1",
        changes=ONE_HAND,
    ),
    Game(
        "valid/nertz-4p-demon-empty-signed.jsonl",
        "nertz",
        ("easy", "normal", "hard", "hard"),
        keyed=True,
        covers=("demon_empty", "bounced_race"),
        scenario="Four bots race for the foundations; the hand ends the moment a demon pile "
        "empties (nertz has no call)",
        seed="nertz-4p 16",
        changes=ONE_HAND,
        max_records=140,
    ),
)
GAME_BY_FILE: Final = {game.file: game for game in GAMES}
CLAIM_GAME: Final = Game(
    "disputed/wrong-claim.jsonl",
    "table",
    ("normal", "hard"),
    keyed=False,
    covers=(),
    scenario="",
    seed="table-2p 9",
    changes={"match.max_hands": 2},
)


def render_game(game: Game) -> bytes:
    """The game's log, as its table writes it."""
    if game.golden is not None:
        data: bytes = golden.render(game.golden)
        return data
    bots = [BOTS[name] for name in game.bots]
    keys = PLAYER_KEYS[: game.players] if game.keyed else None
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "game.jsonl"
        simulate(path, game.rules, bots, game.seed, game.table_key, player_keys=keys)
        if game.ending is not None:
            _script_the_end(path, game, game.ending)
        return path.read_bytes()


def _script_the_end(path: Path, game: Game, ending: Ending) -> None:
    """Cut the simulated log after ``ending.cut`` records; a table resumes it and ends it."""
    lines = path.read_bytes().splitlines(keepends=True)
    first_end = next(i for i, line in enumerate(lines) if b'"kind":"hand_end"' in line)
    if ending.cut >= first_end:
        raise CorpusError(f"{game.file}: the first hand ends before record {ending.cut}")
    path.write_bytes(b"".join(lines[: ending.cut]))
    secret = SimulationSeed.from_text(game.seed).dealer_secret
    table = Table.resume(path, game.table_key, secret)
    if ending.what == "idle":
        table.advance(table.t_ms + 10 * 60_000)  # nobody sends anything for ten minutes
    else:
        demons = [len(seat.demon) for seat in table.state.seats]
        seat = demons.index(max(demons))
        text, n, t_ms = f"{seat} resign", table.next_n(seat), table.t_ms + 1500
        signature = None
        if game.keyed:
            signature = sign_submission(
                PLAYER_KEYS[seat], table.game, table.state.hand, seat, n, text
            )
        table.submit(seat, text, t_ms, n, signature)
    if not table.finished:
        raise CorpusError(f"{game.file}: the scripted {ending.what} did not end the match")


def scenario_tags(data: bytes) -> set[str]:
    """The scenarios a (valid) log shows, from its records and a replay."""
    bodies = [json.loads(line)["body"] for line in data.splitlines()]
    kinds = {body["kind"] for body in bodies}
    ends = [body["reason"] for body in bodies if body["kind"] == "hand_end"]
    final = bodies[-1]
    tags = {
        tag
        for tag, shown in {
            "bounced_race": any(body.get("reason") == "FOUNDATION_TAKEN" for body in bodies),
            "tie": "tie" in kinds,
            "stall_shift": "stall" in kinds,
            "agreement": "agree" in kinds,
            "blocked_hand": "blocked" in ends,
            "call": "call" in ends,
            "demon_empty": "demon_empty" in ends,
            "no_centre": "no_centre" in ends,
            "abandoned": "abandoned" in ends and final.get("reason") == "abandoned",
            "resignation": "resign" in kinds
            and ends[-1] == "resigned"
            and final.get("reason") == "resigned",
            "several_hands_to_100": len(ends) >= 3
            and bodies[0]["rules"]["match"]["target"] == 100
            and max(final["totals"]) >= 100,
            "shared_victory": len(final.get("winners", ())) >= 2,
        }.items()
        if shown
    }
    if final["kind"] == "final" and _holds_off(data, bytes.fromhex(final["secret"])):
        tags.add("hold_off_call")
    return tags


def _holds_off(data: bytes, secret: bytes) -> bool:
    """Whether a seat with an empty demon pile, free to call, sent a card to the centre."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "game.jsonl"
        path.write_bytes(data)
        before: State | None = None
        for snapshot in replay(path, secret):
            event = None if snapshot.record is None else snapshot.record.payload
            if (
                before is not None
                and isinstance(event, Submission)
                and event.kind in (RecordKind.MOVE, RecordKind.TIE)
                and before.rules.call_allowed
                and before.phase is Phase.PLAYING
                and not before.seats[event.seat].demon
            ):
                target = Move.parse(event.move).target
                if target is not None and target.zone in (Zone.FOUNDATION, Zone.NEW_FOUNDATION):
                    return True
            before = snapshot.state
    return False


def check_covers(game: Game, data: bytes) -> None:
    missing = set(game.covers) - scenario_tags(data)
    if missing:
        raise CorpusError(
            f"{game.file}: seed {game.seed!r} no longer shows {', '.join(sorted(missing))}; "
            "run scripts/regen_sample_games.py --search for a new seed"
        )


# -- disputed and tampered games ----------------------------------------------------------------

Value = dict[str, Any]


@dataclass(frozen=True, slots=True)
class Expected:
    """What ``racing-demon verify`` and ``audit`` must say (docs/log-format.md §7)."""

    verdict: Literal["verified", "does_not_verify", "unfinished"] = "verified"
    code: str | None = None
    step: int | None = None
    line: int | None = None
    rule: str | None = None
    wrong_claims: tuple[int, ...] = ()

    def document(self) -> dict[str, Any]:
        verified = self.verdict == "verified"
        return {
            "verdict": self.verdict,
            "exit_code": 0 if verified else 1,
            "step": self.step,
            "code": self.code,
            "line": self.line,
            "rule": self.rule,
            "audit_exit_code": 0 if verified and not self.wrong_claims else 1,
            "wrong_claims": list(self.wrong_claims),
        }


# docs/log-format.md §7: the step of each code the disputed games expect.
STEP_OF: Final = {
    "SEQ_MISMATCH": 4,
    "PREV_MISMATCH": 4,
    "GAME_ID_MISMATCH": 4,
    "UNFINISHED": 4,
    "WRONG_TABLE_KEY": 5,
    "BAD_TABLE_SIGNATURE": 5,
    "BAD_PLAYER_SIGNATURE": 5,
    "SECRET_MISMATCH": 6,
    "ILLEGAL_MOVE": 8,
    "WRONGLY_BOUNCED": 8,
    "SCORE_MISMATCH": 9,
}


def refused(code: str, line: int | None, rule: str | None = None) -> Expected:
    """A log the verifier refuses with ``code`` at ``line`` (1-based); ``rule`` is the
    engine's or the signature check's code under it."""
    verdict: Literal["does_not_verify", "unfinished"] = (
        "unfinished" if code == "UNFINISHED" else "does_not_verify"
    )
    return Expected(verdict, code, STEP_OF[code], line, rule)


Defect = Callable[[Sequence[bytes]], tuple[bytes, str, Expected]]


@dataclass(frozen=True, slots=True)
class Tampered:
    """A valid game with one defect: ``make`` gets the bases' bytes and returns the file,
    its one-line scenario and what the verifier must say."""

    file: str
    bases: tuple[str, ...]
    make: Defect


def values_of(data: bytes) -> list[Value]:
    return [json.loads(line) for line in data.splitlines()]


def joined(lines: Sequence[bytes]) -> bytes:
    return b"".join(line + b"\n" for line in lines)


def seal(values: list[Value], start: int) -> bytes:
    """The log with ``values[start:]`` re-numbered, re-chained and re-signed by the table, as
    a dishonest table holding its key would write it."""
    return joined(reseal(values, start, key=TABLE_KEY))


def first(
    values: Sequence[Value], kind: str, where: Callable[[Value], bool] = bool, start: int = 0
) -> int:
    """The index of the first record of ``kind`` from ``start`` whose body satisfies
    ``where``."""
    return next(
        index
        for index in range(start, len(values))
        if values[index]["body"]["kind"] == kind and where(values[index]["body"])
    )


def _middle(values: Sequence[Value]) -> int:
    return len(values) // 2


def _to_centre(body: Value) -> bool:
    target = Move.parse(body["move"]).target
    return target is not None and target.zone is Zone.FOUNDATION and body["n"] > 0


def changed_byte(bases: Sequence[bytes]) -> tuple[bytes, str, Expected]:
    (data,) = bases
    values = values_of(data)
    index = first(values, "move", lambda body: " turn " in body["move"], _middle(values))
    text = values[index]["body"]["move"]
    at = text.index(" turn ") + len(" turn ") + 1  # the suit of the first card turned
    new = "CDHS"[("CDHS".index(text[at]) + 1) % 4]
    lines = data.splitlines()
    offset = lines[index].index(b'"move":"') + len(b'"move":"') + at  # ASCII, no escapes
    lines[index] = lines[index][:offset] + new.encode() + lines[index][offset + 1 :]
    scenario = (
        f"One byte changed: the turn {text!r} on line {index + 1} reads "
        f"{text[:at] + new + text[at + 1 :]!r}; the table's signature no longer verifies"
    )
    expected = refused("BAD_TABLE_SIGNATURE", index + 1, "BAD_SIGNATURE")
    return joined(lines), scenario, expected


def removed_record(bases: Sequence[bytes]) -> tuple[bytes, str, Expected]:
    (data,) = bases
    lines = data.splitlines()
    index = _middle(values_of(data))
    del lines[index]
    scenario = f"Line {index + 1} (seq {index}) removed: the next line's seq is one ahead"
    return joined(lines), scenario, refused("SEQ_MISMATCH", index + 1)


def duplicated_record(bases: Sequence[bytes]) -> tuple[bytes, str, Expected]:
    (data,) = bases
    lines = data.splitlines()
    index = _middle(values_of(data))
    lines.insert(index + 1, lines[index])
    scenario = f"Line {index + 1} (seq {index}) repeated right after itself"
    return joined(lines), scenario, refused("SEQ_MISMATCH", index + 2)


def swapped_records(bases: Sequence[bytes]) -> tuple[bytes, str, Expected]:
    (data,) = bases
    lines = data.splitlines()
    index = _middle(values_of(data))
    lines[index], lines[index + 1] = lines[index + 1], lines[index]
    scenario = f"Lines {index + 1} and {index + 2} swapped"
    return joined(lines), scenario, refused("SEQ_MISMATCH", index + 1)


def truncated(bases: Sequence[bytes]) -> tuple[bytes, str, Expected]:
    (data,) = bases
    lines = data.splitlines()
    keep = _middle(values_of(data))
    scenario = (
        f"The log cut after line {keep} of {len(lines)}, at a record boundary: no final "
        "record, so the game is unfinished, never verified"
    )
    return joined(lines[:keep]), scenario, refused("UNFINISHED", None)


def _splice(bases: Sequence[bytes]) -> tuple[list[Value], int, str]:
    ours, theirs = values_of(bases[0]), values_of(bases[1])
    index = first(ours, "move", start=_middle(ours))
    index = next(i for i in range(index, len(ours)) if theirs[i]["body"]["kind"] == "move")
    spliced = [*ours[:index], theirs[index], *ours[index + 1 :]]
    return spliced, index, theirs[index]["body"]["move"]


def spliced_record(bases: Sequence[bytes]) -> tuple[bytes, str, Expected]:
    values, index, move = _splice(bases)
    lines = [line_bytes(value["body"], value["sigs"]) for value in values]
    scenario = (
        f"Line {index + 1} replaced by line {index + 1} of another game of the same table "
        f"({move!r}, validly signed): its prev is not this chain's"
    )
    return joined(lines), scenario, refused("PREV_MISMATCH", index + 1)


def spliced_record_rechained(bases: Sequence[bytes]) -> tuple[bytes, str, Expected]:
    values, index, move = _splice(bases)
    scenario = (
        f"Line {index + 1} taken from another game ({move!r}) and the log re-chained and "
        "re-signed by the table: the record names the other game"
    )
    expected = refused("GAME_ID_MISMATCH", index + 1)
    return seal(values, index), scenario, expected


def _single_card_to_work(body: Value) -> bool:
    words = body["move"].split(" ")
    return ">w" in words[1] and len(words) == 3 and not words[2].startswith("A")


def illegal_move_re_signed(bases: Sequence[bytes]) -> tuple[bytes, str, Expected]:
    (data,) = bases
    values = values_of(data)
    index = first(values, "move", _single_card_to_work, _middle(values))
    body = values[index]["body"]
    player, action, card = body["move"].split(" ")
    body["move"] = f"{player} {action.split('>')[0]}>f+ {card}"
    scenario = (
        f"The table logs an illegal move as accepted and re-signs the log: seat {player} "
        f"starts a foundation with {card} ({body['move']!r}, line {index + 1})"
    )
    expected = refused("ILLEGAL_MOVE", index + 1, "NOT_AN_ACE")
    return seal(values, index), scenario, expected


def forged_move(bases: Sequence[bytes]) -> tuple[bytes, str, Expected]:
    (data,) = bases
    values = values_of(data)
    index = first(values, "move", lambda body: body["player"] == 1 and body["n"] > 0)
    body = values[index]["body"]
    values[index]["sigs"]["player"] = sign_submission(
        PLAYER_KEYS[0], body["game"], body["hand"], 1, body["n"], body["move"]
    )
    scenario = (
        f"A move in seat 1's name ({body['move']!r}, line {index + 1}) signed with seat 0's "
        "key, and the log re-signed by the table"
    )
    expected = refused("BAD_PLAYER_SIGNATURE", index + 1, "BAD_SIGNATURE")
    return seal(values, index), scenario, expected


def wrongly_bounced(bases: Sequence[bytes]) -> tuple[bytes, str, Expected]:
    (data,) = bases
    values = values_of(data)
    index = first(values, "move", _to_centre, _middle(values) // 2)
    body = values[index]["body"]
    body.update(kind="bounce", reason="FOUNDATION_TAKEN")
    scenario = (
        f"A legal card to the centre ({body['move']!r}, line {index + 1}) logged as a lost "
        "race (bounce FOUNDATION_TAKEN) and the log re-signed; the player's signature holds"
    )
    return seal(values, index), scenario, refused("WRONGLY_BOUNCED", index + 1)


def inflated_score(bases: Sequence[bytes]) -> tuple[bytes, str, Expected]:
    (data,) = bases
    values = values_of(data)
    index = first(values, "hand_end")
    scores = values[index]["body"]["scores"]
    final = values[-1]["body"]
    seat = min(range(len(scores)), key=lambda s: (final["totals"][s], s))  # the last seat
    scores[seat] += 10
    final["hands"][0][seat] += 10
    final["totals"][seat] += 10
    best = max(final["totals"])
    final["winners"] = [s for s, total in enumerate(final["totals"]) if total == best]
    scenario = (
        f"Seat {seat}'s hand score raised by 10 on the hand_end record (line {index + 1}) and "
        "in the final record, and the log re-signed"
    )
    return seal(values, index), scenario, refused("SCORE_MISMATCH", index + 1)


def wrong_secret(bases: Sequence[bytes]) -> tuple[bytes, str, Expected]:
    (data,) = bases
    values = values_of(data)
    values[-1]["body"]["secret"] = hashlib.sha256(b"not the dealer secret").hexdigest()
    scenario = (
        "The final record reveals a secret that does not open the genesis commitment, "
        "re-signed by the table"
    )
    line = len(values)
    return seal(values, line - 1), scenario, refused("SECRET_MISMATCH", line)


def wrong_table_key(bases: Sequence[bytes]) -> tuple[bytes, str, Expected]:
    game = replace(GAME_BY_FILE[P2P_3P], table_key=OTHER_TABLE_KEY)
    scenario = (
        f"The game of {P2P_3P} played at another table, signed throughout by that table's key "
        "(a second fixture key), checked against table.pub"
    )
    return render_game(game), scenario, refused("WRONG_TABLE_KEY", 1)


TAMPERED: Final = (
    Tampered("disputed/changed-byte.jsonl", (P2P_3P,), changed_byte),
    Tampered("disputed/removed-record.jsonl", (P2P_3P,), removed_record),
    Tampered("disputed/duplicated-record.jsonl", (P2P_3P,), duplicated_record),
    Tampered("disputed/swapped-records.jsonl", (P2P_3P,), swapped_records),
    Tampered("disputed/truncated.jsonl", (P2P_3P,), truncated),
    Tampered("disputed/spliced-record.jsonl", (P2P_3P, P2P_2P), spliced_record),
    Tampered("disputed/spliced-record-rechained.jsonl", (P2P_3P, P2P_2P), spliced_record_rechained),
    Tampered("disputed/illegal-move-re-signed.jsonl", (P2P_3P,), illegal_move_re_signed),
    Tampered("disputed/forged-move-signed-by-another-player.jsonl", (P2P_4P,), forged_move),
    Tampered("disputed/legal-move-wrongly-bounced.jsonl", (P2P_4P,), wrongly_bounced),
    Tampered("disputed/inflated-score.jsonl", (P2P_3P,), inflated_score),
    Tampered("disputed/wrong-secret.jsonl", (P2P_3P,), wrong_secret),
    Tampered("disputed/wrong-table-key.jsonl", (P2P_3P,), wrong_table_key),
)


def claims_for(data: bytes) -> tuple[list[dict[str, int]], str, Expected]:
    """A player's claims about the claim game: all hold but one, seat 1's hand-2 score."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "game.jsonl"
        path.write_bytes(data)
        hands = audit_hands(path, bytes.fromhex(values_of(data)[-1]["body"]["secret"]))
    one, two = hands[0].seats, hands[1].seats
    claims = [
        {"seat": 0, "hand": 1, "score": one[0].score},
        {"seat": 0, "hand": 1, "placed": len(one[0].placed)},
        {"seat": 1, "hand": 2, "score": two[1].score + 5},  # the wrong one
        {"seat": 1, "hand": 2, "demon_left": len(two[1].demon_left)},
        {"seat": 1, "total": two[1].total},
    ]
    scenario = (
        f"A valid match disputed with a claim file: seat 1 claims {two[1].score + 5} in hand 2, "
        f"the log shows {two[1].score}; its other claims hold"
    )
    return claims, scenario, Expected(wrong_claims=(2,))


# -- the manifest and the README ----------------------------------------------------------------


def _entry(
    game: Game,
    file: str,
    category: str,
    scenario: str,
    expected: Expected,
    *,
    derived_from: Sequence[str] = (),
    claim: str | None = None,
    origin: str | None = None,
) -> dict[str, Any]:
    return {
        "file": file,
        "category": category,
        "profile": game.profile,
        "rules_changes": dict(game.changes),
        "players": {"count": game.players, "keyed": game.keyed},
        "scenario": scenario,
        "covers": list(game.covers) if category == "valid" else [],
        "origin": origin or game.origin,
        "derived_from": list(derived_from),
        "claim": claim,
        "expected": expected.document(),
    }


def outputs() -> dict[str, bytes]:
    """Every file of sample_games/, by path relative to it."""
    files: dict[str, bytes] = {}
    entries: list[dict[str, Any]] = []
    for game in GAMES:
        data = render_game(game)
        check_covers(game, data)
        files[game.file] = data
        entries.append(_entry(game, game.file, "valid", game.scenario, Expected()))
    covered = {tag for game in GAMES for tag in game.covers}
    if not covered >= REQUIRED:
        raise CorpusError(f"no game covers {', '.join(sorted(REQUIRED - covered))}")
    for tampered in TAMPERED:
        data, scenario, expected = tampered.make([files[base] for base in tampered.bases])
        files[tampered.file] = data
        base = GAME_BY_FILE[tampered.bases[0]]
        origin = f"{tampered.make.__name__}() in scripts/regen_sample_games.py"
        entries.append(
            _entry(
                base,
                tampered.file,
                "tampered",
                scenario,
                expected,
                derived_from=tampered.bases,
                origin=origin,
            )
        )
    data = render_game(CLAIM_GAME)
    claims, scenario, expected = claims_for(data)
    claim_file = CLAIM_GAME.file.removesuffix(".jsonl") + ".claim.json"
    files[CLAIM_GAME.file] = data
    rows = ",\n".join(f"    {json.dumps(claim)}" for claim in claims)  # one claim a line
    files[claim_file] = f'{{\n  "claims": [\n{rows}\n  ]\n}}\n'.encode()
    entries.append(
        _entry(CLAIM_GAME, CLAIM_GAME.file, "claim", scenario, expected, claim=claim_file)
    )
    files["table.pub"] = golden.table_public_pem()
    manifest = {
        "format": FORMAT,
        "regenerate": "python scripts/regen_sample_games.py",
        "table_key": {
            "file": "table.pub",
            "description": "The public key of the fixture table key that signed every game "
            "but disputed/wrong-table-key.jsonl (SubjectPublicKeyInfo PEM): pin it with "
            "--table-key",
        },
        "scenarios": SCENARIOS,
        "games": entries,
    }
    files["manifest.json"] = (json.dumps(manifest, indent=2, ensure_ascii=False) + "\n").encode()
    files["README.md"] = readme(manifest).encode()
    return dict(sorted(files.items()))


def _players(entry: Mapping[str, Any]) -> str:
    players = entry["players"]
    return f"{players['count']}" + (", signed" if players["keyed"] else "")


def _rules(entry: Mapping[str, Any]) -> str:
    changes = ", ".join(f"{k.split('.')[1]} {v}" for k, v in entry["rules_changes"].items())
    return f"{entry['profile']}" + (f" ({changes})" if changes else "")


def _outcome(entry: Mapping[str, Any]) -> tuple[str, str, str]:
    expected = entry["expected"]
    verdict = f"{expected['verdict'].upper().replace('_', ' ')} ({expected['exit_code']})"
    code = "-"
    if expected["code"] is not None:
        where = [f"step {expected['step']}"]
        if expected["line"] is not None:
            where.append(f"line {expected['line']}")
        rule = f": {expected['rule']}" if expected["rule"] else ""
        code = f"`{expected['code']}`{rule} ({', '.join(where)})"
    audit = f"exit {expected['audit_exit_code']}"
    if expected["wrong_claims"]:
        audit += ", claim " + ", ".join(f"#{i}" for i in expected["wrong_claims"]) + " wrong"
    return verdict, code, audit


def readme(manifest: Mapping[str, Any]) -> str:
    """sample_games/README.md: what the folder holds, and the manifest as two tables."""
    valid = [e for e in manifest["games"] if e["category"] == "valid"]
    disputed = [e for e in manifest["games"] if e["category"] != "valid"]
    lines = [
        "# sample_games",
        "",
        "Signed game logs for trying the verifier, and the cases its tests check: valid",
        "matches of every profile, and games with one defect each. Every file here is written",
        "by `scripts/regen_sample_games.py` (this README's tables too, from `manifest.json`);",
        "never edit one by hand: `python scripts/regen_sample_games.py --check` fails when a",
        "file differs. `manifest.json` (schema: `schemas/sample-games-manifest.schema.json`)",
        "says for every game what `racing-demon verify` and `racing-demon audit` must answer;",
        "`tests/test_sample_games.py` runs them all through the command line.",
        "",
        "```sh",
        "racing-demon verify sample_games/table-3p-signed.jsonl --table-key sample_games/table.pub",
        "racing-demon verify sample_games/disputed/illegal-move-re-signed.jsonl \\",
        "    --table-key sample_games/table.pub",
        "racing-demon audit sample_games/disputed/wrong-claim.jsonl \\",
        "    --table-key sample_games/table.pub \\",
        "    --claim sample_games/disputed/wrong-claim.claim.json",
        "racing-demon replay sample_games/valid/peer2peer-3p-resigned-signed.jsonl --at 50",
        "```",
        "",
        "**The keys are test fixtures.** The private keys that signed these games are published",
        "in `scripts/regen_sample_games.py` and `scripts/regen_golden_logs.py` on purpose, so",
        "that anyone can regenerate the corpus: anything signed with them proves nothing, and",
        "they must never sign for a real table or player. `table.pub` is the public half of the",
        "fixture table key; `disputed/wrong-table-key.jsonl` is signed by a second fixture key.",
        "",
        "**How the games are made.** Valid games are simulated matches",
        "(`racing_demon.sim.simulate`: bots racing through a real table in virtual time,",
        "byte-identical from their seed), or",
        "the golden table game of `scripts/regen_golden_logs.py`. Bots never resign and never",
        "fall silent, so those endings (a resignation; three minutes of shuffling with no card",
        "to the centre; five minutes with nothing at all) are scripted through the table API:",
        "the simulated log is cut after a record, `Table.resume` continues it, and a signed",
        "`resign` submission or only the table's clock follows.",
        "The disputed games change one thing in a valid game (`derived from`): raw bytes or",
        "lines, or a record edited and the log re-chained and re-signed with the table's own",
        "key, as a dishonest table would. Simulation seeds, bots and each defect are in",
        "`manifest.json` (`origin`). The script asserts that every valid game still shows the",
        "scenarios it covers.",
        "",
        "Verdicts and exit codes are docs/log-format.md §7's; every game is checked against",
        "`table.pub`.",
        "",
        "## Valid games",
        "",
        "| file | profile | players | scenario | covers | verify |",
        "|---|---|---|---|---|---|",
    ]
    for entry in valid:
        verdict, _, _ = _outcome(entry)
        covers = ", ".join(entry["covers"])
        lines.append(
            f"| `{entry['file']}` | {_rules(entry)} | {_players(entry)} | {entry['scenario']} "
            f"| {covers} | {verdict} |"
        )
    lines += [
        "",
        "`audit` exits 0 on every valid game. Scenarios:",
        "",
        *(f"- `{tag}`: {text}" for tag, text in manifest["scenarios"].items()),
        "",
        "## Disputed and tampered games",
        "",
        "| file | derived from | scenario | verify | reason code | audit |",
        "|---|---|---|---|---|---|",
    ]
    for entry in disputed:
        verdict, code, audit = _outcome(entry)
        bases = ", ".join(f"`{base}`" for base in entry["derived_from"]) or "-"
        if entry["claim"] is not None:
            bases = f"claim file `{entry['claim']}`"
        lines.append(
            f"| `{entry['file']}` | {bases} | {entry['scenario']} | {verdict} | {code} | {audit} |"
        )
    lines += [
        "",
        f"`{manifest['table_key']['file']}`: {manifest['table_key']['description']}.",
        "",
    ]
    return "\n".join(lines)


# -- searching for seeds ------------------------------------------------------------------------


def candidates(game: Game) -> Iterator[str]:
    for number in range(1000):
        yield f"{game.profile}-{game.players}p {number}"


def search(games: Sequence[Game]) -> int:
    """Print, for each simulated game, the first seed that covers its scenarios."""
    for game in games:
        if game.golden is not None:
            continue
        for seed in candidates(game):
            trial = replace(game, seed=seed)
            try:
                data = render_game(trial)
            except CorpusError:
                continue
            if len(data.splitlines()) <= game.max_records and set(game.covers) <= scenario_tags(
                data
            ):
                print(f"{game.file}: seed={seed!r}", flush=True)
                break
        else:
            print(f"{game.file}: no seed found", file=sys.stderr)
            return 1
    return 0


# -- writing and checking -----------------------------------------------------------------------


def on_disk(folder: Path) -> set[str]:
    return {path.relative_to(folder).as_posix() for path in folder.rglob("*") if path.is_file()}


def stale(folder: Path, files: Mapping[str, bytes]) -> list[str]:
    """The files that differ from ``files``, are missing, or should not be there."""
    differ = [
        name
        for name, data in files.items()
        if not (folder / name).is_file() or (folder / name).read_bytes() != data
    ]
    return sorted([*differ, *(on_disk(folder) - set(files))]) if folder.is_dir() else sorted(files)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--check", action="store_true", help="compare only; exit 1 on a diff")
    mode.add_argument("--search", action="store_true", help="print seeds for the valid games")
    args = parser.parse_args(argv)
    if args.search:
        return search([*GAMES, CLAIM_GAME])
    try:
        files = outputs()
    except CorpusError as error:
        print(f"cannot regenerate sample_games/: {error}", file=sys.stderr)
        return 1
    if args.check:
        differ = stale(SAMPLE_DIR, files)
        if differ:
            print(f"stale sample games: {', '.join(differ)}", file=sys.stderr)
            return 1
        return 0
    for extra in on_disk(SAMPLE_DIR) - set(files) if SAMPLE_DIR.is_dir() else ():
        (SAMPLE_DIR / extra).unlink()
    for name, data in files.items():
        path = SAMPLE_DIR / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    for folder in sorted(SAMPLE_DIR.rglob("*"), reverse=True):
        if folder.is_dir() and not any(folder.iterdir()):
            folder.rmdir()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
