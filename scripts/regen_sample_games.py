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
scripted submission (``resign``) or only the clock (``Table.advance``) follows.

The disputed games involve no bots: each is a declared list of edits (``DISPUTED``; the edit
kinds are racing_demon.testing.tamper's) at explicit line numbers of a checked-in valid file,
changing one thing as a dishonest table or a damaged copy would: lines removed, repeated,
swapped, cut or taken from another game, or fields of a record set, with or without the log
then re-chained and re-signed by a key (``reseal``, which tests/tampering.py uses too).
Each edit checks that its line holds the record it expects, so a valid game that changed
stops the regeneration at the edit instead of editing another record. The claim game is a
simulated valid match and its claim file a declared list (``CLAIMS``), checked by an audit.
No record is ever written by hand.

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

from racing_demon.audit import audit_hands, check_claims
from racing_demon.game.flow import RecordKind, Submission
from racing_demon.game.moves import Move, Zone
from racing_demon.game.rules import Rules
from racing_demon.game.state import Phase, State
from racing_demon.log.keys import key_id, raw_public_bytes
from racing_demon.profiles import builtin_document, custom_variant, rules_from_document
from racing_demon.replay import replay
from racing_demon.sim.bots import BOTS
from racing_demon.sim.simulate import SimulationSeed, simulate
from racing_demon.table import Table, sign_submission
from racing_demon.testing.tamper import (
    Duplicate,
    Edit,
    EditError,
    Remove,
    Reseal,
    SetFields,
    SignSubmission,
    Splice,
    Swap,
    Truncate,
    apply_edits,
)

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

    @property
    def players(self) -> int:
        return len(self.bots)

    @property
    def rules(self) -> Rules:
        document = builtin_document(self.profile)
        for path, value in self.changes.items():
            section, key = path.split(".")
            document[section][key] = value
        return custom_variant(rules_from_document(document))

    @property
    def origin(self) -> str:
        if self.golden is not None:
            return f"scripts/regen_golden_logs.py: the golden log {self.golden} (random players)"
        text = f"racing_demon.sim.simulate, seed {self.seed!r}, bots {','.join(self.bots)}" + (
            ", players sign" if self.keyed else ""
        )
        if self.ending is not None:
            then = {
                "idle": "every player stays idle while the table's clock runs on",
                "resign": "the seat with the most demon cards left resigns",
            }[self.ending.what]
            text += f"; cut after record {self.ending.cut - 1}, Table.resume, then {then}"
        return text


ONE_HAND: Final = {"match.max_hands": 1}
GOLDEN_PROFILE, GOLDEN_TARGET, GOLDEN_SEATS, GOLDEN_KEYED, _ = golden.GAMES[golden.SAMPLE]
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


def render_game(game: Game, table_key: Ed25519PrivateKey = TABLE_KEY) -> bytes:
    """The game's log, as its table (whose key is ``table_key``) writes it."""
    if game.golden is not None:
        data: bytes = golden.render(game.golden)
        return data
    bots = [BOTS[name] for name in game.bots]
    keys = PLAYER_KEYS[: game.players] if game.keyed else None
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "game.jsonl"
        simulate(path, game.rules, bots, game.seed, table_key, player_keys=keys)
        if game.ending is not None:
            _script_the_end(path, game, game.ending, table_key)
        return path.read_bytes()


def _script_the_end(path: Path, game: Game, ending: Ending, table_key: Ed25519PrivateKey) -> None:
    """Cut the simulated log after ``ending.cut`` records; a table resumes it and ends it."""
    lines = path.read_bytes().splitlines(keepends=True)
    first_end = next(i for i, line in enumerate(lines) if b'"kind":"hand_end"' in line)
    if ending.cut >= first_end:
        raise CorpusError(f"{game.file}: the first hand ends before record {ending.cut}")
    path.write_bytes(b"".join(lines[: ending.cut]))
    secret = SimulationSeed.from_text(game.seed).dealer_secret
    table = Table.resume(path, table_key, secret)
    if ending.what == "idle":
        table.advance(table.t_ms + 10 * 60_000)  # nobody sends anything for ten minutes
    else:
        demons = [len(seat.demon) for seat in table.state.seats]
        seat = demons.index(max(demons))
        text, n, t_ms = f"{seat} resign", table.next_n(seat), table.t_ms + 1500
        signature, seen = None, table.head
        if game.keyed:
            signature = sign_submission(
                PLAYER_KEYS[seat], table.game, table.state.hand, seat, n, text, seen
            )
        table.submit(seat, text, t_ms, n, signature, seen)
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


# -- disputed games: declared edits of the checked-in valid games -------------------------------


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


@dataclass(frozen=True, slots=True)
class Disputed:
    """A valid game with one defect: ``edits`` (racing_demon.testing.tamper) of the valid
    file ``base``, each at an explicit line, and what the verifier must say of the result."""

    file: str
    base: str
    edits: tuple[Edit, ...]
    scenario: str
    expected: Expected

    @property
    def derived_from(self) -> tuple[str, ...]:
        return (self.base, *(edit.source for edit in self.edits if isinstance(edit, Splice)))

    @property
    def origin(self) -> str:
        return f"DISPUTED in scripts/regen_sample_games.py: {'; '.join(map(str, self.edits))}"


def checked_in(file: str) -> bytes:
    """A valid game's bytes as sample_games/ holds them."""
    try:
        return (SAMPLE_DIR / file).read_bytes()
    except FileNotFoundError:
        raise CorpusError(f"{file} is missing: run scripts/regen_sample_games.py") from None


def disputed_log(entry: Disputed, read: Callable[[str], bytes]) -> bytes:
    """``entry``'s file: its edits applied to its base as ``read`` gives the valid files."""
    try:
        return apply_edits(read(entry.base), entry.edits, table_key=TABLE_KEY, read=read)
    except EditError as error:
        raise CorpusError(
            f"{entry.file} (from {entry.base}): {error}; find lines that show the scenario "
            "again and update DISPUTED"
        ) from None


# Where the defects go: the lines the corpus's searches once picked, now written down. Each
# edit names what its line holds, so a base that changed stops the regeneration at that edit.
MIDDLE: Final = 42  # P2P_3P's middle line (of 82): seat 0 turns three cards from its stock
TURN: Final = {"kind": "move", "move": "0 turn 2C KS JD"}
SPLICED: Final = {"kind": "move", "move": "1 waste>f+ AS"}  # P2P_2P's line 42
ILLEGAL: Final = 45  # P2P_3P: seat 2 puts the 3S from its waste on a work pile
FORGED: Final = 15  # P2P_4P: seat 1's second submission
BOUNCED: Final = 16  # P2P_4P: a card to the centre
HAND_END, FINAL = 81, 82  # P2P_3P's only hand_end, and its final record
OTHER_SECRET: Final = hashlib.sha256(b"not the dealer secret").hexdigest()
TABLE_KEY_ID: Final = key_id(raw_public_bytes(TABLE_KEY))
OTHER_TABLE_KEY_ID: Final = key_id(raw_public_bytes(OTHER_TABLE_KEY))

DISPUTED: Final = (
    Disputed(
        "disputed/changed-byte.jsonl",
        P2P_3P,
        (SetFields(MIDDLE, TURN, {"move": "0 turn 2D KS JD"}),),  # the C of 2C: one byte
        f"One byte changed: the turn {TURN['move']!r} on line {MIDDLE} reads "
        "'0 turn 2D KS JD'; the table's signature no longer verifies",
        refused("BAD_TABLE_SIGNATURE", MIDDLE, "BAD_SIGNATURE"),
    ),
    Disputed(
        "disputed/removed-record.jsonl",
        P2P_3P,
        (Remove(MIDDLE, TURN),),
        f"Line {MIDDLE} (seq {MIDDLE - 1}) removed: the next line's seq is one ahead",
        refused("SEQ_MISMATCH", MIDDLE),
    ),
    Disputed(
        "disputed/duplicated-record.jsonl",
        P2P_3P,
        (Duplicate(MIDDLE, TURN),),
        f"Line {MIDDLE} (seq {MIDDLE - 1}) repeated right after itself",
        refused("SEQ_MISMATCH", MIDDLE + 1),
    ),
    Disputed(
        "disputed/swapped-records.jsonl",
        P2P_3P,
        (Swap(MIDDLE, TURN),),
        f"Lines {MIDDLE} and {MIDDLE + 1} swapped",
        refused("SEQ_MISMATCH", MIDDLE),
    ),
    Disputed(
        "disputed/truncated.jsonl",
        P2P_3P,
        (Truncate(MIDDLE - 1, {"kind": "move", "move": "2 w4>f3 3D"}),),
        f"The log cut after line {MIDDLE - 1} of {FINAL}, at a record boundary: no final record, "
        "so the game is unfinished, never verified",
        refused("UNFINISHED", None),
    ),
    Disputed(
        "disputed/spliced-record.jsonl",
        P2P_3P,
        (Splice(MIDDLE, TURN, P2P_2P, SPLICED),),
        f"Line {MIDDLE} replaced by line {MIDDLE} of another game of the same table "
        f"({SPLICED['move']!r}, validly signed): its prev is not this chain's",
        refused("PREV_MISMATCH", MIDDLE),
    ),
    Disputed(
        "disputed/spliced-record-rechained.jsonl",
        P2P_3P,
        (Splice(MIDDLE, TURN, P2P_2P, SPLICED), Reseal(MIDDLE)),
        f"Line {MIDDLE} taken from another game ({SPLICED['move']!r}) and the log re-chained and "
        "re-signed by the table: the record names the other game",
        refused("GAME_ID_MISMATCH", MIDDLE),
    ),
    Disputed(
        "disputed/illegal-move-re-signed.jsonl",
        P2P_3P,
        (
            SetFields(
                ILLEGAL, {"kind": "move", "move": "2 waste>w2 3S"}, {"move": "2 waste>f+ 3S"}
            ),
            Reseal(ILLEGAL),
        ),
        "The table logs an illegal move as accepted and re-signs the log: seat 2 starts a "
        f"foundation with 3S ('2 waste>f+ 3S', line {ILLEGAL})",
        refused("ILLEGAL_MOVE", ILLEGAL, "NOT_AN_ACE"),
    ),
    Disputed(
        "disputed/forged-move-signed-by-another-player.jsonl",
        P2P_4P,
        (
            SignSubmission(FORGED, {"kind": "move", "move": "1 demon>w3 7C"}, PLAYER_KEYS[0]),
            Reseal(FORGED),
        ),
        f"A move in seat 1's name ('1 demon>w3 7C', line {FORGED}) signed with seat 0's key, "
        "and the log re-signed by the table",
        refused("BAD_PLAYER_SIGNATURE", FORGED, "BAD_SIGNATURE"),
    ),
    Disputed(
        "disputed/legal-move-wrongly-bounced.jsonl",
        P2P_4P,
        (
            SetFields(
                BOUNCED,
                {"kind": "move", "move": "3 waste>f1 2D"},
                {"kind": "bounce", "reason": "FOUNDATION_TAKEN"},
            ),
            Reseal(BOUNCED),
        ),
        f"A legal card to the centre ('3 waste>f1 2D', line {BOUNCED}) logged as a lost race "
        "(bounce FOUNDATION_TAKEN) and the log re-signed; the player's signature holds",
        refused("WRONGLY_BOUNCED", BOUNCED),
    ),
    Disputed(
        "disputed/inflated-score.jsonl",
        P2P_3P,
        (
            SetFields(
                HAND_END, {"kind": "hand_end", "scores": [-14, -16, 11]}, {"scores": [-14, -6, 11]}
            ),
            SetFields(
                FINAL,
                {
                    "kind": "final",
                    "hands": [[-14, -16, 11]],
                    "totals": [-14, -16, 11],
                    "winners": [2],
                },
                {"hands": [[-14, -6, 11]], "totals": [-14, -6, 11]},  # seat 2 still wins
            ),
            Reseal(HAND_END),
        ),
        f"Seat 1's hand score raised by 10 on the hand_end record (line {HAND_END}) and in the "
        "final record, and the log re-signed",
        refused("SCORE_MISMATCH", HAND_END),
    ),
    Disputed(
        "disputed/wrong-secret.jsonl",
        P2P_3P,
        (SetFields(FINAL, {"kind": "final"}, {"secret": OTHER_SECRET}), Reseal(FINAL)),
        "The final record reveals a secret that does not open the genesis commitment, "
        "re-signed by the table",
        refused("SECRET_MISMATCH", FINAL),
    ),
    # The table's key takes no part in play: the base re-signed throughout by another key,
    # its genesis naming that key, is byte for byte the game played at that other table
    # (tests/test_corpus_edits.py plays it there to check), so no bots are needed here.
    Disputed(
        "disputed/wrong-table-key.jsonl",
        P2P_3P,
        (
            SetFields(
                1, {"kind": "genesis", "table_key": TABLE_KEY_ID}, {"table_key": OTHER_TABLE_KEY_ID}
            ),
            Reseal(1, OTHER_TABLE_KEY),
        ),
        f"The game of {P2P_3P} played at another table, signed throughout by that table's key "
        "(a second fixture key), checked against table.pub",
        refused("WRONG_TABLE_KEY", 1),
    ),
)

# The claim game is a valid match (simulated like the valid games, and compared by --check);
# its dispute is the claim file: every claim holds but the one WRONG_CLAIM says.
CLAIMS: Final = (
    {"seat": 0, "hand": 1, "score": 13},
    {"seat": 0, "hand": 1, "placed": 13},
    {"seat": 1, "hand": 2, "score": 13},
    {"seat": 1, "hand": 2, "demon_left": 0},
    {"seat": 1, "total": 2},
)
WRONG_CLAIM, LOG_SHOWS = 2, 8  # seat 1's hand-2 score: the log shows 8


def claim_file(data: bytes) -> tuple[bytes, str, Expected]:
    """The claim file about the claim game, checked: ``CLAIMS`` are wrong where the log shows
    otherwise, and only ``WRONG_CLAIM`` is."""
    final = json.loads(data.splitlines()[-1])["body"]
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "game.jsonl"
        path.write_bytes(data)
        hands = audit_hands(path, bytes.fromhex(final["secret"]))
    checks = check_claims(hands, CLAIMS, final["seq"])
    wrong = {index: check.expected for index, check in enumerate(checks) if not check.holds}
    if wrong != {WRONG_CLAIM: LOG_SHOWS}:
        raise CorpusError(
            f"{CLAIM_GAME.file}: expected only claim {WRONG_CLAIM} wrong (the log showing "
            f"{LOG_SHOWS}), found {wrong or 'none'} (claim: what the log shows): update CLAIMS"
        )
    rows = ",\n".join(f"    {json.dumps(claim)}" for claim in CLAIMS)  # one claim a line
    claimed = CLAIMS[WRONG_CLAIM]["score"]
    scenario = (
        f"A valid match disputed with a claim file: seat 1 claims {claimed} in hand 2, the log "
        f"shows {LOG_SHOWS}; its other claims hold"
    )
    return (
        f'{{\n  "claims": [\n{rows}\n  ]\n}}\n'.encode(),
        scenario,
        Expected(wrong_claims=(WRONG_CLAIM,)),
    )


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


def outputs(*, bases_on_disk: bool = True) -> dict[str, bytes]:
    """Every file of sample_games/, by path relative to it.

    The disputed games are edits of the valid files as they are on disk (``--check`` proves
    separately that those are what the simulation gives), or, with ``bases_on_disk=False``,
    as this run simulates them (when writing, so that the folder stays consistent).
    """
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
    read = checked_in if bases_on_disk else files.__getitem__
    for entry in DISPUTED:
        files[entry.file] = disputed_log(entry, read)
        entries.append(
            _entry(
                GAME_BY_FILE[entry.base],
                entry.file,
                "tampered",
                entry.scenario,
                entry.expected,
                derived_from=entry.derived_from,
                origin=entry.origin,
            )
        )
    data = render_game(CLAIM_GAME)
    claim_file_name = CLAIM_GAME.file.removesuffix(".jsonl") + ".claim.json"
    files[CLAIM_GAME.file] = data
    files[claim_file_name], scenario, expected = claim_file(data)
    entries.append(
        _entry(CLAIM_GAME, CLAIM_GAME.file, "claim", scenario, expected, claim=claim_file_name)
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
        "The disputed games change one thing in a valid game (`derived from`), by edits at",
        "explicit lines of its checked-in file, declared in the script: lines removed,",
        "repeated, swapped, cut or taken from another game, or a record edited, as a damaged",
        "copy would, or edited and the log re-chained and re-signed with the table's own key,",
        "as a dishonest table would. Each edit checks that its line holds the record it",
        "expects. Simulation seeds, bots and each game's edits are in `manifest.json`",
        "(`origin`). The script asserts that every valid game still shows the scenarios it",
        "covers.",
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
        files = outputs(bases_on_disk=args.check)
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
