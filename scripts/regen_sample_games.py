"""Regenerate sample_games/: valid and disputed games, their manifest, README and table key.

Usage: ``python scripts/regen_sample_games.py [--check | --search]``. With ``--check``
nothing is written and the exit status is 1 if any file in sample_games/ differs from what
would be generated, is missing, or is not generated at all. ``--search`` looks for new
simulation seeds (after a change to the bots, the table or the engine made a seed lose its
scenario) and prints them, writing nothing: paste them into ``GAMES``.

This script owns the whole folder; never edit a file there by hand. It writes every file but
those in ``sample_games/v1/``: the games racing-demon 0.1.0 wrote in log format v1, kept byte
for byte. It never writes them; it lists them in the manifest (category ``v1``) from their
frozen record, ``scripts/sample_games_v1.json`` (every file's SHA-256 and the entry, with the
expected verdict, that release's manifest gave it), and stops unless each is unchanged and
still gets that verdict. Every other log is format v4 (but one disputed game, a keyed game
its table re-expressed as v1: ``Downgrade``), written by a real ``Table``: the valid
games are simulated matches (``racing_demon.sim.simulate``: bots on virtual clocks,
deterministic from a text seed), the README's game is the golden table log
(``scripts/regen_golden_logs.py``, byte for byte), and the endings the bots never reach (a
resignation, three minutes of shuffling with no card to the centre, five silent minutes) are
scripted through the table API: the simulation's log is cut after a record, ``Table.resume``
continues it, and then one scripted submission (``resign``) or only the clock
(``Table.advance``) follows.

The disputed games involve no bots: each is a declared list of edits (``DISPUTED``; the edit
kinds are racing_demon.testing.tamper's) at explicit line numbers of a checked-in valid file,
changing one thing as a dishonest table or a damaged copy would: lines removed, repeated,
swapped, cut or taken from another game, or fields of a record set, with or without the log
then re-chained and re-signed by a key (``reseal``, which tests/tampering.py uses too).
Each edit checks that its line holds the record it expects, so a valid game that changed
stops the regeneration at the edit instead of editing another record. A table that rewrites
history live (``Reseal(players=...)``) has its players' clients sign the submissions over
the history they were shown. Some disputes are ones only the players' receipts show (a
dropped, delayed or forked history, category ``receipts``): their receipts files are those
the valid base kept (simulate writes each seat's; ``Game.receipts`` keeps them beside the
log), or those the table gave for the disputed log's own records (``SeatReceipts``), and
the manifest says which evidence ``racing-demon audit`` finds with them. A downgrade
(category ``downgraded``) verifies, and the manifest says which ``verify --require``
guarantees refuse it (``require``; checked here too). ``DECLINED`` games
are a keyed valid game resumed before its final record with one seat's client declining to
accept the result. The claim game is a simulated valid match and its claim file a declared
list (``CLAIMS``), checked by an audit. No record is ever written by hand.

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
import contextlib
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
from racing_demon.game.deal import commitment
from racing_demon.game.duplicate import Shape
from racing_demon.game.engine import legal_moves
from racing_demon.game.flow import RecordKind, Seen, Submission
from racing_demon.game.moves import Move, Zone
from racing_demon.game.rules import Rules
from racing_demon.game.state import Phase, State
from racing_demon.log.canonical import canonical_bytes
from racing_demon.log.keys import key_id, raw_public_bytes
from racing_demon.log.receipts import (
    RECEIPT_VERSION,
    REFUSED,
    SubmissionCode,
    logged_receipt,
    record_reference,
    refused_receipt,
    seal_receipt,
    statement_bytes_of,
)
from racing_demon.log.records import (
    FORMAT_VERSION,
    Lag,
    Pause,
    PauseCause,
    chain_hash,
    parse_record,
    submission_statement,
)
from racing_demon.profiles import builtin_document, custom_variant, rules_from_document
from racing_demon.replay import replay
from racing_demon.report.standings_html import standings_page
from racing_demon.report.tournament import standings_document
from racing_demon.sim.bots import BOTS
from racing_demon.sim.simulate import Simulation, SimulationSeed, receipt_paths, simulate
from racing_demon.table import (
    PlayerSigner,
    SubmissionError,
    Table,
    player_signer,
    sign_submission,
)
from racing_demon.testing.tamper import (
    CoSign,
    Downgrade,
    DropAcceptance,
    Duplicate,
    Edit,
    EditError,
    Remove,
    Reseal,
    SetFields,
    SetRules,
    SignSubmission,
    Splice,
    Swap,
    Truncate,
    apply_edits,
)
from racing_demon.tournament.contribute import sign_contribution
from racing_demon.tournament.plan import Plan, make_plan, make_terms
from racing_demon.tournament.score import score_tournament
from racing_demon.tournament.sheets import render_sheets
from racing_demon.tournament.simulate import simulate_tournament, table_log
from racing_demon.verify import Settings, Verdict, VerifyCode, verify_log
from racing_demon.verify.assurance import Requirement, unmet

ROOT = Path(__file__).resolve().parents[1]
SAMPLE_DIR = ROOT / "sample_games"
FORMAT: Final = "racing-demon/sample-games-manifest/v3"
LOG_FORMAT: Final = FORMAT_VERSION  # every log this script writes; the v1 games are format 1
V1_DIR: Final = "v1"  # sample_games/v1/: the games racing-demon 0.1.0 wrote, never rewritten
V1_FROZEN: Final = Path(__file__).resolve().parent / "sample_games_v1.json"


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
    "notes": "a table resumed after a crash logs the pause, and then the round trips the "
    "server measured (notes, from format v3 on)",
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
    left resigns 1.5 s after the last record (``resign``), the table having logged what a
    server's logs as it resumes after a crash: the pause, then the seats' round trips."""

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
    # Keep each seat's receipts as simulate wrote them (receipt_files), beside the log:
    # a whole simulation only, the receipts its players' clients kept.
    receipts: bool = False

    def __post_init__(self) -> None:
        if self.receipts and (self.ending is not None or self.golden is not None):
            raise ValueError(f"{self.file}: only a whole simulation keeps its receipts")

    @property
    def players(self) -> int:
        return len(self.bots)

    @property
    def receipt_files(self) -> tuple[str, ...]:
        return receipt_files(self.file, self.players) if self.receipts else ()

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
N4P: Final = "valid/nertz-4p-demon-empty-signed.jsonl"  # keyed, with its receipts: a drop

# Seeds found by ``--search`` (the first seed from "<profile>-<n>p 0" on whose game covers the
# scenarios within max_records); regeneration asserts that each still covers them.
GAMES: Final = (
    Game(
        f"{golden.SAMPLE}.jsonl",
        GOLDEN_PROFILE,
        ("random",) * GOLDEN_SEATS,
        keyed=GOLDEN_KEYED,
        covers=("tie", "stall_shift", "call", "blocked_hand"),
        scenario="The README's game: random players race over two hands, with same-instant "
        "ties and stall shifts; the first ends with a call, the second blocked",
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
        seed="table-4p 5",
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
        receipts=True,
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
        covers=("resignation", "notes"),
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
        seed="nertz-3p 4",
        changes=ONE_HAND,
    ),
    Game(
        N4P,
        "nertz",
        ("easy", "normal", "hard", "hard"),
        keyed=True,
        covers=("demon_empty", "bounced_race"),
        scenario="Four bots race for the foundations; the hand ends the moment a demon pile "
        "empties (nertz has no call)",
        # Kept from format v1 (it still covers its scenarios, in more records now): its
        # seat 3's last submission is one a table can drop and still write a log that
        # verifies, keyed as it is (disputed/dropped-last-submission.jsonl).
        seed="nertz-4p 16",
        changes=ONE_HAND,
        max_records=260,
        receipts=True,
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


def receipt_files(file: str, seats: int) -> tuple[str, ...]:
    """Where each seat's receipts for the log ``file`` are kept: simulate's names for them
    (``<log stem>.seat<N>.receipts.jsonl``, beside the log)."""
    return tuple(path.as_posix() for path in receipt_paths(Path(file), seats))


def render_game(game: Game, table_key: Ed25519PrivateKey = TABLE_KEY) -> bytes:
    """The game's log, as its table (whose key is ``table_key``) writes it."""
    return simulated(game, table_key)[0]


def simulated(
    game: Game, table_key: Ed25519PrivateKey = TABLE_KEY
) -> tuple[bytes, tuple[bytes, ...]]:
    """The game's log, as its table (whose key is ``table_key``) writes it, and each seat's
    receipts file as simulate kept it, for a game that keeps them (``Game.receipts``)."""
    if game.golden is not None:
        data: bytes = golden.render(game.golden)
        return data, ()
    bots = [BOTS[name] for name in game.bots]
    keys = PLAYER_KEYS[: game.players] if game.keyed else None
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "game.jsonl"
        simulation = simulate(path, game.rules, bots, game.seed, table_key, player_keys=keys)
        if game.ending is not None:
            _script_the_end(path, game, game.ending, table_key)
        kept = tuple(receipt.read_bytes() for receipt in simulation.receipts)
        return path.read_bytes(), kept if game.receipts else ()


def receipts_of(
    data: bytes,
    seat: int,
    table_key: Ed25519PrivateKey = TABLE_KEY,
    *,
    answered: Sequence[int] = (),
    base: bytes = b"",
) -> bytes:
    """Seat ``seat``'s receipts file for the log ``data``: the receipt its table gives for
    each of the seat's logged submissions (``logged_receipt``, sealed with ``table_key``),
    in the order of their numbers; but for the submissions at lines ``answered`` of the log
    ``base``, whose receipts are made from ``base`` (and replace any of the same number)."""
    receipts: dict[int, bytes] = {}

    def receipt(line: bytes) -> bool:
        record = parse_record(json.loads(line)["body"])
        if not isinstance(record.payload, Submission) or record.payload.seat != seat:
            return False
        made = logged_receipt(record, line, statement_bytes_of(record))
        receipts[record.payload.n] = seal_receipt(made, table_key) + b"\n"
        return True

    for line in data.splitlines():
        receipt(line)
    for number in answered:
        if not receipt(base.splitlines()[number - 1]):
            raise CorpusError(f"line {number} answered is no submission of seat {seat}")
    return b"".join(receipts[n] for n in sorted(receipts))


def refusals_of(
    base: bytes, refusals: Sequence[Refusal], table_key: Ed25519PrivateKey = TABLE_KEY
) -> bytes:
    """A receipts file of the ``refusals`` the table signed, about the log ``base``."""
    lines = base.splitlines()
    made: list[bytes] = []
    for refusal in refusals:
        named = lines[refusal.seq]
        head = parse_record(json.loads(named)["body"])
        if refusal.line is not None:
            record = parse_record(json.loads(lines[refusal.line - 1])["body"])
            event = record.payload
            if not isinstance(event, Submission):
                raise CorpusError(f"line {refusal.line} refused is no submission")
            seat, n, statement, t_ms = event.seat, event.n, statement_bytes_of(record), record.t_ms
        else:
            seat, t_ms = refusal.seat, head.t_ms + refusal.after_ms
            before = [parse_record(json.loads(line)["body"]) for line in lines[: refusal.seq + 1]]
            n = sum(isinstance(r.payload, Submission) and r.payload.seat == seat for r in before)
            hand = sum(r.kind is RecordKind.HAND_START for r in before)
            seen = Seen(seq=refusal.seq, hash=chain_hash(named))
            statement = canonical_bytes(
                submission_statement(head.game, hand, seat, n, refusal.move, seen)
            )
        receipt = refused_receipt(
            head.game,
            seat,
            n,
            statement,
            t_ms,
            refusal.reason,
            refusal.seq,
            record_reference(named, refusal.v),
            refusal.v,
        )
        made.append(seal_receipt(receipt, table_key) + b"\n")
    return b"".join(made)


def check_receipts(game: Game, data: bytes, kept: Sequence[bytes]) -> None:
    """Every logged receipt simulate kept for a seat is the one ``receipts_of`` makes from
    the log: the receipts made from a log for the disputes are the table's own."""
    for seat, receipts in enumerate(kept):
        logged = b"".join(
            line + b"\n"
            for line in receipts.splitlines()
            if json.loads(line)["body"]["outcome"] != REFUSED
        )
        if logged != receipts_of(data, seat):
            raise CorpusError(
                f"{game.file}: seat {seat}'s receipts are not the table's receipts of its log"
            )


def _script_the_end(path: Path, game: Game, ending: Ending, table_key: Ed25519PrivateKey) -> None:
    """Cut the simulated log after ``ending.cut`` records; a table resumes it and ends it."""
    lines = path.read_bytes().splitlines(keepends=True)
    first_end = next(i for i, line in enumerate(lines) if b'"kind":"hand_end"' in line)
    if ending.cut >= first_end:
        raise CorpusError(f"{game.file}: the first hand ends before record {ending.cut}")
    path.write_bytes(b"".join(lines[: ending.cut]))
    secret = SimulationSeed.from_text(game.seed).dealer_secret
    signers = [player_signer(key) for key in PLAYER_KEYS[: game.players]] if game.keyed else None
    table = Table.resume(path, table_key, secret, player_signers=signers)
    if ending.what == "idle":
        table.advance(table.t_ms + 10 * 60_000)  # nobody sends anything for ten minutes
    else:
        table.note(Pause(cause=PauseCause.CRASH, down_ms=4_200), table.t_ms)
        round_trips = ((38, 41, 40), (152, 160), (75,), (60, 62))[: game.players]
        table.note(Lag(rtt_ms=round_trips), table.t_ms + 2_000)
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
            "notes": {"pause", "lag"} <= kinds,
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
    """What ``racing-demon verify`` and ``audit`` must say (docs/log-format.md §7, §10).

    ``accepted_by`` is what ``verify --json`` lists: the seats whose acceptance of the final
    record verified, for a keyed log of format v2 or later (none when it is refused past its
    genesis), else None.
    ``audit_evidence`` is the codes of what ``audit`` finds comparing the game's receipts
    and copies with its log (evidence.EvidenceCode), each once, sorted.
    """

    verdict: Literal["verified", "does_not_verify", "unfinished"] = "verified"
    code: str | None = None
    step: int | None = None
    line: int | None = None
    rule: str | None = None
    wrong_claims: tuple[int, ...] = ()
    audit_evidence: tuple[str, ...] = ()
    accepted_by: tuple[int, ...] | None = None

    def with_evidence(self, *codes: str) -> Expected:
        """These expectations, with the audit finding ``codes``."""
        return replace(self, audit_evidence=codes)

    def document(self) -> dict[str, Any]:
        verified = self.verdict == "verified"
        return {
            "verdict": self.verdict,
            "exit_code": 0 if verified else 1,
            "step": self.step,
            "code": self.code,
            "line": self.line,
            "rule": self.rule,
            "audit_exit_code": 0
            if verified and not self.wrong_claims and not self.audit_evidence
            else 1,
            "wrong_claims": list(self.wrong_claims),
            "audit_evidence": sorted(self.audit_evidence),
            "accepted_by": None if self.accepted_by is None else list(self.accepted_by),
        }


def verified(game: Game, accepted_by: tuple[int, ...] | None = None) -> Expected:
    """A log that verifies: a keyed game's seats all accept its result, unless
    ``accepted_by`` names the ones that do."""
    if accepted_by is None and game.keyed:
        accepted_by = tuple(range(game.players))
    return Expected(accepted_by=accepted_by)


# docs/log-format.md §7: the step of each code the disputed games expect.
STEP_OF: Final = {
    "SEQ_MISMATCH": 4,
    "PREV_MISMATCH": 4,
    "GAME_ID_MISMATCH": 4,
    "UNFINISHED": 4,
    "WRONG_TABLE_KEY": 5,
    "BAD_TABLE_SIGNATURE": 5,
    "BAD_PLAYER_SIGNATURE": 5,
    "ENTROPY_NOT_BOUND": 5,
    "SECRET_MISMATCH": 6,
    "RESERVED_RULES_NAME": 7,
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
class Refusal:
    """A refusal receipt the table signed (``reason``), naming as the log's end the base's
    record ``seq`` (the head the table said it had; named as receipts of version ``v`` name
    a record). The refused submission is the one at the base's line ``line`` (its seat,
    number, statement and arrival time: a submission the table then dropped), or, with
    ``line`` None, seat ``seat``'s ``move`` arriving ``after_ms`` after record ``seq``,
    having seen it, numbered as the seat's next."""

    reason: str
    seq: int
    line: int | None = None
    seat: int = 0
    move: str = ""
    after_ms: int = 0
    v: int = RECEIPT_VERSION


@dataclass(frozen=True, slots=True)
class SeatReceipts:
    """Seat ``seat``'s receipts file, for a dispute settled by receipts.

    ``of="base"``: the file the valid base keeps, the receipts its client was given in the
    honest match. ``of="log"``: the receipts the table gave, live, for the disputed log's
    own records (``receipts_of``), written beside it; but for the submissions at the base's
    lines ``answered``, which the table answered on arrival as the honest match logged
    them, and then dropped or held back: their receipts are the base's. ``of="refused"``:
    the ``refusals`` only (``refusals_of``), written beside the disputed log."""

    seat: int
    of: Literal["base", "log", "refused"] = "base"
    answered: tuple[int, ...] = ()
    refusals: tuple[Refusal, ...] = ()


@dataclass(frozen=True, slots=True)
class Disputed:
    """A valid game with one defect: ``edits`` (racing_demon.testing.tamper) of the valid
    file ``base``, each at an explicit line, and what the verifier must say of the result.

    With ``receipts`` (and ``against``: other copies of the log, valid files) the defect is
    one the log alone may not show, and ``audit`` compares them with it (category
    ``receipts``). With ``require`` the log verifies, and only an archive requiring those
    guarantees refuses it (category ``downgraded``)."""

    file: str
    base: str
    edits: tuple[Edit, ...]
    scenario: str
    expected: Expected
    receipts: tuple[SeatReceipts, ...] = ()
    against: tuple[str, ...] = ()
    # A log that verifies but lacks these guarantees (verify --require names, category
    # ``downgraded``): verify --require refuses it for each, REQUIREMENT_UNMET.
    require: tuple[Requirement, ...] = ()

    @property
    def category(self) -> str:
        if self.require:
            return "downgraded"
        return "receipts" if self.receipts or self.against else "tampered"

    @property
    def derived_from(self) -> tuple[str, ...]:
        sources = (edit.source for edit in self.edits if isinstance(edit, Splice))
        return tuple(dict.fromkeys((self.base, *sources, *self.against)))

    @property
    def origin(self) -> str:
        return f"DISPUTED in scripts/regen_sample_games.py: {'; '.join(map(str, self.edits))}"

    def receipt_file(self, receipts: SeatReceipts) -> str:
        """Where ``receipts`` are: beside the base, or beside this game's log."""
        base = GAME_BY_FILE[self.base]
        if receipts.of == "base":
            if not base.receipts:
                raise CorpusError(f"{self.file}: {self.base} keeps no receipts")
            return base.receipt_files[receipts.seat]
        return receipt_files(self.file, base.players)[receipts.seat]

    @property
    def receipt_files(self) -> tuple[str, ...]:
        return tuple(self.receipt_file(receipts) for receipts in self.receipts)


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
FORGED: Final = 11  # P2P_4P: seat 1's second submission
BOUNCED: Final = 20  # P2P_4P: a card to the centre
HAND_END, FINAL = 81, 82  # P2P_3P's only hand_end, and its final record
OTHER_SECRET: Final = hashlib.sha256(b"not the dealer secret").hexdigest()
TABLE_KEY_ID: Final = key_id(raw_public_bytes(TABLE_KEY))
OTHER_TABLE_KEY_ID: Final = key_id(raw_public_bytes(OTHER_TABLE_KEY))
P2P_DIGEST: Final = Rules.from_document(builtin_document("peer2peer")).digest()
RICHER: Final = {"scoring.per_foundation_card": 10, "scoring.per_demon_card": 0}
# P2P_4P's dealer secret and commitment, and a secret the table ground for after seeing
# the entropy (its commitment published in their place).
P2P_4P_SECRET: Final = SimulationSeed.from_text(GAME_BY_FILE[P2P_4P].seed).dealer_secret
GROUND_SECRET: Final = hashlib.sha256(b"a dealer secret ground after the entropy").digest()
P2P_4P_FINAL: Final = 62
P2P_4P_KEYS: Final = tuple(PLAYER_KEYS[:4])
N4P_KEYS: Final = tuple(PLAYER_KEYS[:4])
DROPPED: Final = 256  # N4P: seat 3's last submission, a turn of its stock
DROPPED_BODY: Final = {"kind": "move", "player": 3, "move": "3 turn 2S KS AC"}
N4P_FINAL: Final = 259
# Seat 3's last submission cut out and the log re-sealed, its numbers and signatures whole:
# the drop both the dropped-submission and the old-head cases make.
DROP_LAST_SUBMISSION: Final = (
    Remove(DROPPED, DROPPED_BODY),
    SetFields(
        N4P_FINAL - 1,
        {"kind": "final", "records": N4P_FINAL - 1},
        {"records": N4P_FINAL - 2},
    ),
    Reseal(DROPPED, players=N4P_KEYS),
)
HELD: Final = 111  # N4P: seat 0 starts a foundation with its AH; seat 3's AH comes 4 later
HELD_FROM_MS: Final = 27160
HELD_BODY: Final = {"kind": "move", "player": 0, "move": "0 waste>f+ AH", "t_ms": HELD_FROM_MS}
HELD_BY: Final = 5  # records it is held back by
HELD_TO_MS: Final = 28730  # the time of the fifth record after it
RACE: Final = 78  # P2P_3P: seat 1's last submission, then 120 ms later seat 2's 6S to f5
RACE_FIRST: Final = {"kind": "move", "player": 1, "move": "1 turn AH 2C 4S", "t_ms": 31740}
RACE_SECOND: Final = {"kind": "move", "player": 2, "move": "2 w3>f5 6S", "t_ms": 31860}

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
            SignSubmission(FORGED, {"kind": "move", "move": "1 w1>f+ AH"}, PLAYER_KEYS[0]),
            Reseal(FORGED),
        ),
        f"A move in seat 1's name ('1 w1>f+ AH', line {FORGED}) signed with seat 0's key, "
        "and the log re-signed by the table",
        refused("BAD_PLAYER_SIGNATURE", FORGED, "BAD_SIGNATURE"),
    ),
    Disputed(
        "disputed/legal-move-wrongly-bounced.jsonl",
        P2P_4P,
        (
            SetFields(
                BOUNCED,
                {"kind": "move", "move": "3 w2>f1 3C"},
                {"kind": "bounce", "reason": "FOUNDATION_TAKEN"},
            ),
            Reseal(BOUNCED, players=P2P_4P_KEYS),
        ),
        f"A legal card to the centre ('3 w2>f1 3C', line {BOUNCED}) logged as a lost race "
        "(bounce FOUNDATION_TAKEN), the players signing on from it and the table re-signing "
        "the log; the player's signature holds",
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
    # Issue 15's attacks, as format v2 refuses them or as the players' receipts prove them.
    Disputed(
        "disputed/reserved-rules-name.jsonl",
        P2P_3P,
        (SetRules(1, {"kind": "genesis", "rules_sha256": P2P_DIGEST}, RICHER), Reseal(1)),
        "The genesis's rules are named peer2peer but score 10 a card in the centre and "
        "nothing for the demon (rules_sha256 their own digest), re-signed by the table: a "
        "built-in profile's name is reserved for it",
        refused("RESERVED_RULES_NAME", 1),
    ),
    Disputed(
        "disputed/entropy-not-bound.jsonl",
        P2P_4P,
        (
            SetFields(
                1,
                {"kind": "genesis", "commitment": commitment(P2P_4P_SECRET)},
                {"commitment": commitment(GROUND_SECRET)},
            ),
            CoSign(1, {"kind": "genesis"}, P2P_4P_KEYS),
            SetFields(
                P2P_4P_FINAL,
                {"kind": "final", "secret": P2P_4P_SECRET.hex()},
                {"secret": GROUND_SECRET.hex()},
            ),
            Reseal(1, players=P2P_4P_KEYS),
        ),
        "The dealer ground its secret after seeing the entropy: the genesis commits to another "
        "secret (revealed in the final record) than the one the players' contributions "
        "answered; the players co-sign it and sign their moves, the table re-signs the log",
        refused("ENTROPY_NOT_BOUND", 1, "BAD_SIGNATURE"),
    ),
    Disputed(
        "disputed/dropped-last-submission.jsonl",
        N4P,
        DROP_LAST_SUBMISSION,
        f"The table drops seat 3's last submission ({DROPPED_BODY['move']!r}, line {DROPPED}): "
        "no gap in its numbers, every player's signature holds and every seat accepts the "
        "result, the log verifies; seat 3's receipt for it proves the drop",
        verified(GAME_BY_FILE[N4P]).with_evidence("DROPPED", "FORK"),
        receipts=(SeatReceipts(3),),
    ),
    Disputed(
        "disputed/delayed-submission.jsonl",
        N4P,
        (
            *(Swap(HELD + step, HELD_BODY) for step in range(HELD_BY)),
            SetFields(HELD + HELD_BY, HELD_BODY, {"t_ms": HELD_TO_MS}),
            Reseal(HELD, players=N4P_KEYS),
        ),
        f"The table holds seat 0's ace ({HELD_BODY['move']!r}, line {HELD}) back "
        f"{HELD_TO_MS - HELD_FROM_MS} ms, behind {HELD_BY} other moves (seat 3's ace "
        "among them), and the players sign on from what they are shown: the log verifies; "
        "seat 0's receipt says when the ace arrived",
        verified(GAME_BY_FILE[N4P]).with_evidence("DELAYED", "FORK"),
        receipts=(SeatReceipts(0, "log", answered=(HELD,)),),
    ),
    Disputed(
        "disputed/forked-history.jsonl",
        P2P_3P,
        (
            Swap(RACE, RACE_FIRST),
            SetFields(RACE + 1, RACE_FIRST, {"t_ms": RACE_SECOND["t_ms"]}),
            Reseal(RACE),
        ),
        f"The table told seat 1 its {RACE_FIRST['move']!r} was logged as seq {RACE - 1}, and "
        f"seat 2 that its {RACE_SECOND['move']!r} was: two histories of one (unkeyed) game; it "
        "publishes seat 2's, which verifies. Their receipts, and a copy of the other "
        "history, prove the fork",
        Expected().with_evidence("DELAYED", "FORK"),
        receipts=(SeatReceipts(1), SeatReceipts(2, of="log")),
        against=(P2P_3P,),
    ),
    Disputed(
        "disputed/refused-behind-an-old-head.jsonl",
        N4P,
        DROP_LAST_SUBMISSION,
        f"The table drops seat 3's last submission ({DROPPED_BODY['move']!r}, line {DROPPED}) "
        "with a signed refusal, WRONG_NUMBER, saying the log ended at seq 1: the log "
        "verifies, and the refusal names a number the log cannot disprove; but the log holds "
        "records after seq 1 written long before the refusal's time, so the table named an "
        "old head",
        verified(GAME_BY_FILE[N4P]).with_evidence("STALE_HEAD"),
        receipts=(SeatReceipts(3, of="refused", refusals=(Refusal("WRONG_NUMBER", 1, DROPPED),)),),
    ),
    Disputed(
        "disputed/downgraded-to-unkeyed-v1.jsonl",
        P2P_4P,
        (Downgrade({"kind": "genesis", "v": LOG_FORMAT}),),
        "The table re-expresses its keyed v4 game as an unkeyed format v1 log, re-signed by "
        "its key: the players' keys, signatures and acceptances gone, their entropy kept as "
        "plain bytes. Same deal, same scores: it verifies, as a format v1 log the table "
        "signed alone; only an archive that requires what the game proved (keyed, "
        "v2_or_later, deal_bound) refuses it",
        Expected(),
        require=(Requirement.KEYED, Requirement.V2_OR_LATER, Requirement.DEAL_BOUND),
    ),
    Disputed(
        "disputed/acceptance-dropped.jsonl",
        N4P,
        (DropAcceptance(N4P_FINAL, {"kind": "final"}, 1),),
        "Someone holding the log sets seat 1's acceptance of the final record to null (the "
        "log still verifies, seat 1 listed as not accepting). Seat 0's old (v2) receipt of a "
        "MATCH_OVER refusal names the final record by the hash of its whole line, "
        "acceptances included: it no longer matches, but that is no evidence of a fork (a "
        "v3 receipt names the body, and would match)",
        verified(GAME_BY_FILE[N4P], (0, 2, 3)).with_evidence("LAST_LINE_CHANGED"),
        receipts=(
            SeatReceipts(
                0,
                of="refused",
                refusals=(
                    Refusal("MATCH_OVER", N4P_FINAL - 1, move="0 call", after_ms=2_000, v=2),
                ),
            ),
        ),
    ),
)


@dataclass(frozen=True, slots=True)
class Declined:
    """A keyed valid game whose result a seat does not accept: ``base`` (a checked-in valid
    file) cut before its final record, ``Table.resume`` continues it asking every seat's
    client to accept the final record, and seat ``seat``'s declines (its ``accepts`` entry
    is null)."""

    file: str
    base: str
    seat: int
    scenario: str

    @property
    def origin(self) -> str:
        return (
            f"DECLINED in scripts/regen_sample_games.py: {self.base} cut before its final "
            f"record, Table.resume with seat {self.seat}'s client declining to accept it"
        )

    def expected(self) -> Expected:
        game = GAME_BY_FILE[self.base]
        return verified(game, tuple(s for s in range(game.players) if s != self.seat))


def _declines(kind: str, message: bytes, version: int) -> str | None:
    """The signer of a client that signs nothing: asked to accept the result, it declines."""
    return None


def declined_log(entry: Declined, read: Callable[[str], bytes]) -> bytes:
    """``entry``'s file, from its base as ``read`` gives the valid files."""
    game = GAME_BY_FILE[entry.base]
    lines = read(entry.base).splitlines(keepends=True)
    if not game.keyed or json.loads(lines[-1])["body"]["kind"] != RecordKind.FINAL:
        raise CorpusError(f"{entry.file}: {entry.base} is no finished keyed game")
    signers: list[PlayerSigner] = [player_signer(key) for key in PLAYER_KEYS[: game.players]]
    signers[entry.seat] = _declines
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "game.jsonl"
        path.write_bytes(b"".join(lines[:-1]))
        secret = SimulationSeed.from_text(game.seed).dealer_secret
        table = Table.resume(path, TABLE_KEY, secret, player_signers=signers)
        if not table.finished:
            raise CorpusError(f"{entry.file}: the resumed table did not end the match")
        return path.read_bytes()


DECLINED: Final = (
    Declined(
        "disputed/result-not-accepted.jsonl",
        "valid/table-4p-tie-signed.jsonl",
        1,
        "Seat 1 does not accept the result: its client, asked to sign the final record, "
        "declines (its acceptance is null); the log verifies, accepted by the other seats",
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


# The manifest lists the games in this order of their categories (and each as declared).
CATEGORIES: Final = ("valid", "tampered", "claim", "receipts", "unaccepted", "downgraded", "v1")


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
    receipts: Sequence[str] = (),
    against: Sequence[str] = (),
    require: Sequence[Requirement] = (),
    log_format: int = LOG_FORMAT,
    keyed: bool | None = None,
) -> dict[str, Any]:
    """A game's manifest entry; ``log_format`` and ``keyed`` are its log's when they are
    not ``game``'s (a downgraded log: format 1, unkeyed)."""
    keyed = game.keyed if keyed is None else keyed
    if keyed and expected.verdict != "verified":
        # A keyed log refused: verify lists no seat's acceptance.
        expected = replace(expected, accepted_by=())
    return {
        "file": file,
        "category": category,
        "format": log_format,
        "profile": game.profile,
        "rules_changes": dict(game.changes),
        "players": {"count": game.players, "keyed": keyed},
        "scenario": scenario,
        "covers": list(game.covers) if category == "valid" else [],
        "origin": origin or game.origin,
        "derived_from": list(derived_from),
        "claim": claim,
        "receipts": list(receipts),
        "against": list(against),
        "expected": expected.document(),
        "require": None
        if not require
        else {
            "guarantees": list(require),
            "verdict": "does_not_verify",
            "exit_code": 1,
            "code": REQUIREMENT_UNMET,
        },
    }


# -- the format v1 games: frozen ---------------------------------------------------------------


def v1_games() -> tuple[list[dict[str, Any]], dict[str, bytes]]:
    """The games racing-demon 0.1.0 wrote in format v1, as sample_games/v1/ holds them, and
    their manifest entries (category ``v1``), from the frozen record of them
    (``V1_FROZEN``). Never written, only checked: each file has the SHA-256 it was frozen
    with, and the verifier still gives the verdict, code, step, line and rule its entry
    expects."""
    frozen = json.loads(V1_FROZEN.read_text(encoding="utf-8"))
    files: dict[str, bytes] = {}
    for name, digest in frozen["sha256"].items():
        path = SAMPLE_DIR / V1_DIR / name
        data = path.read_bytes() if path.is_file() else None
        if data is None or hashlib.sha256(data).hexdigest() != digest:
            raise CorpusError(
                f"{V1_DIR}/{name} is {'missing' if data is None else 'changed'}: the v1 games "
                "are kept byte for byte (restore it from git)"
            )
        files[f"{V1_DIR}/{name}"] = data
    entries = []
    for old in frozen["games"]:
        entry = _v1_entry(old, frozen["software"])
        check_verdict(entry, files[entry["file"]])
        entries.append(entry)
    return entries, files


def _v1_entry(old: Mapping[str, Any], software: str) -> dict[str, Any]:
    def moved(file: str) -> str:
        return f"{V1_DIR}/{file}"

    return {
        "file": moved(old["file"]),
        "category": "v1",
        "format": 1,
        "profile": old["profile"],
        "rules_changes": old["rules_changes"],
        "players": old["players"],
        "scenario": old["scenario"],
        "covers": old["covers"],
        "origin": f"{software}, log format v1 ({old['category']}): {old['origin']}",
        "derived_from": [moved(file) for file in old["derived_from"]],
        "claim": None if old["claim"] is None else moved(old["claim"]),
        "receipts": [],
        "against": [],
        "expected": {**old["expected"], "audit_evidence": [], "accepted_by": None},
        "require": None,
    }


def check_verdict(entry: Mapping[str, Any], data: bytes) -> None:
    """The verifier gives ``entry``'s log (``data``) the verdict its entry expects."""
    expected = entry["expected"]
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "game.jsonl"
        path.write_bytes(data)
        report = verify_log(path, Settings(raw_public_bytes(TABLE_KEY)))
    finding = report.finding
    found = (
        report.verdict.value,
        None if report.step is None else report.step.value,
        None if finding is None else finding.code,
        None if finding is None else finding.line,
        None if finding is None else finding.rule,
    )
    wanted = tuple(expected[key] for key in ("verdict", "step", "code", "line", "rule"))
    if found != wanted:
        raise CorpusError(
            f"{entry['file']}: the verifier says {found} (verdict, step, code, line, rule), "
            f"its entry expects {wanted}"
        )


REQUIREMENT_UNMET: Final = VerifyCode.REQUIREMENT_UNMET.value


def check_unmet(entry: Disputed, data: bytes) -> None:
    """``entry``'s log (``data``) verifies, and lacks every guarantee it must lack."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "game.jsonl"
        path.write_bytes(data)
        report = verify_log(path, Settings(raw_public_bytes(TABLE_KEY)))
    missing = {requirement for requirement, _ in unmet(report, entry.require)}
    if report.verdict is not Verdict.VERIFIED or missing != set(entry.require):
        raise CorpusError(
            f"{entry.file}: {report.verdict}, lacking {sorted(missing)}; it must verify and "
            f"lack {sorted(entry.require)}"
        )


def outputs(*, bases_on_disk: bool = True) -> dict[str, bytes]:
    """Every file of sample_games/, by path relative to it.

    The disputed games are edits of the valid files as they are on disk (``--check`` proves
    separately that those are what the simulation gives), or, with ``bases_on_disk=False``,
    as this run simulates them (when writing, so that the folder stays consistent). The v1
    games are read from disk, never made (``v1_games``).
    """
    files: dict[str, bytes] = {}
    entries: list[dict[str, Any]] = []
    for game in GAMES:
        data, kept = simulated(game)
        check_covers(game, data)
        check_receipts(game, data, kept)
        files[game.file] = data
        files.update(zip(game.receipt_files, kept, strict=True))
        entries.append(
            _entry(
                game,
                game.file,
                "valid",
                game.scenario,
                verified(game),
                receipts=game.receipt_files,
            )
        )
    covered = {tag for game in GAMES for tag in game.covers}
    if not covered >= REQUIRED:
        raise CorpusError(f"no game covers {', '.join(sorted(REQUIRED - covered))}")
    read = checked_in if bases_on_disk else files.__getitem__
    for entry in DISPUTED:
        base = GAME_BY_FILE[entry.base]
        data = files[entry.file] = disputed_log(entry, read)
        for receipts, file in zip(entry.receipts, entry.receipt_files, strict=True):
            if receipts.of == "log":
                files[file] = receipts_of(
                    data, receipts.seat, answered=receipts.answered, base=read(entry.base)
                )
            elif receipts.of == "refused":
                files[file] = refusals_of(read(entry.base), receipts.refusals)
        genesis = json.loads(data.splitlines()[0])["body"]
        if entry.require:
            check_unmet(entry, data)
        entries.append(
            _entry(
                base,
                entry.file,
                entry.category,
                entry.scenario,
                entry.expected,
                derived_from=entry.derived_from,
                origin=entry.origin,
                receipts=entry.receipt_files,
                against=entry.against,
                require=entry.require,
                log_format=genesis["v"],
                keyed=any(player["key"] is not None for player in genesis["players"]),
            )
        )
    for declined in DECLINED:
        files[declined.file] = declined_log(declined, read)
        entries.append(
            _entry(
                GAME_BY_FILE[declined.base],
                declined.file,
                "unaccepted",
                declined.scenario,
                declined.expected(),
                derived_from=(declined.base,),
                origin=declined.origin,
            )
        )
    data = render_game(CLAIM_GAME)
    claim_file_name = CLAIM_GAME.file.removesuffix(".jsonl") + ".claim.json"
    files[CLAIM_GAME.file] = data
    files[claim_file_name], scenario, expected = claim_file(data)
    entries.append(
        _entry(CLAIM_GAME, CLAIM_GAME.file, "claim", scenario, expected, claim=claim_file_name)
    )
    v1_entries, v1_files = v1_games()
    entries += v1_entries
    files.update(v1_files)
    files["table.pub"] = golden.table_public_pem()
    files.update(tournament_files())
    entries.sort(key=lambda entry: CATEGORIES.index(entry["category"]))
    manifest = {
        "format": FORMAT,
        "regenerate": "python scripts/regen_sample_games.py",
        "table_key": {
            "file": "table.pub",
            "description": "The public key of the fixture table key that signed every game "
            "but disputed/wrong-table-key.jsonl and v1/disputed/wrong-table-key.jsonl "
            "(SubjectPublicKeyInfo PEM): pin it with --table-key",
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


def _accepted(entry: Mapping[str, Any]) -> str:
    accepted = entry["expected"]["accepted_by"]
    if accepted is None:
        return "-"
    if accepted == list(range(entry["players"]["count"])):
        return "every seat"
    return "seats " + ", ".join(map(str, accepted)) if accepted else "no seat"


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
    if expected["audit_evidence"]:
        audit += ": " + ", ".join(f"`{code}`" for code in expected["audit_evidence"])
    return verdict, code, audit


def _files(files: Sequence[str]) -> str:
    return ", ".join(f"`{file}`" for file in files) or "-"


def audit_command(entry: Mapping[str, Any]) -> list[str]:
    """The ``racing-demon audit`` command that checks ``entry``'s receipts and copies, as
    the lines of a shell block."""
    parts = [
        f"racing-demon audit sample_games/{entry['file']}",
        "--table-key sample_games/table.pub",
        *(f"--receipts sample_games/{file}" for file in entry["receipts"]),
        *(f"--against sample_games/{file}" for file in entry["against"]),
    ]
    return [parts[0] + " \\", *(f"    {part} \\" for part in parts[1:-1]), f"    {parts[-1]}"]


def readme(manifest: Mapping[str, Any]) -> str:
    """sample_games/README.md: what the folder holds, and the manifest as tables."""
    games = manifest["games"]
    valid = [e for e in games if e["category"] == "valid"]
    disputed = [e for e in games if e["category"] in ("tampered", "claim")]
    receipted = [e for e in games if e["category"] in ("receipts", "unaccepted")]
    downgraded = [e for e in games if e["category"] == "downgraded"]
    v1 = [e for e in games if e["category"] == "v1"]
    keeping = [e for e in valid if e["receipts"]]
    lines = [
        "# sample_games",
        "",
        "Signed game logs for trying the verifier, and the cases its tests check: valid",
        "matches of every profile, games with one defect each, disputes that players'",
        "receipts settle, a downgrade that only `verify --require` refuses, and the games",
        "an earlier release wrote in log format v1. Every file here but those in `v1/` is",
        "written by `scripts/regen_sample_games.py` (this README's tables too, from",
        "`manifest.json`); never edit one by hand:",
        "`python scripts/regen_sample_games.py --check` fails when a file differs. `v1/` is",
        "kept byte for byte: the script never writes it, and checks that every file there is",
        "unchanged and still gets its verdict. `manifest.json` (schema:",
        "`schemas/sample-games-manifest.schema.json`) says for every game what",
        "`racing-demon verify` and `racing-demon audit` must answer;",
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
        "racing-demon verify sample_games/v1/table-3p-signed.jsonl \\",
        "    --table-key sample_games/table.pub",
        "```",
        "",
        "**The keys are test fixtures.** The private keys that signed these games are published",
        "in `scripts/regen_sample_games.py` and `scripts/regen_golden_logs.py` on purpose, so",
        "that anyone can regenerate the corpus: anything signed with them proves nothing, and",
        "they must never sign for a real table or player. `table.pub` is the public half of the",
        "fixture table key; `disputed/wrong-table-key.jsonl` (and its v1 twin) is signed by a",
        "second fixture key.",
        "",
        "**How the games are made.** Every game outside `v1/` is in log format v4 (but the",
        "downgrade below, which a table re-expressed as v1)",
        "(docs/log-format.md): a keyed seat's entropy is its signature over the dealer's",
        "commitment, every submission names the record its player had seen, and keyed seats",
        "accept the final record. Valid games are simulated matches",
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
        "Verdicts and exit codes are docs/log-format.md §7's, the audit's evidence §10's;",
        "every game is checked against `table.pub`. `accepted by` is what `verify --json`",
        "lists as `accepted_by`: the seats that signed the final record of a keyed v4 log.",
        "",
        "## Valid games",
        "",
        "| file | profile | players | scenario | covers | verify | accepted by |",
        "|---|---|---|---|---|---|---|",
    ]
    for entry in valid:
        verdict, _, _ = _outcome(entry)
        covers = ", ".join(entry["covers"])
        lines.append(
            f"| `{entry['file']}` | {_rules(entry)} | {_players(entry)} | {entry['scenario']} "
            f"| {covers} | {verdict} | {_accepted(entry)} |"
        )
    lines += [
        "",
        "`audit` exits 0 on every valid game. "
        + " and ".join(f"`{entry['file']}`" for entry in keeping)
        + " keep each seat's receipts as its client kept them in the simulation"
        " (`<log>.seat<N>.receipts.jsonl`, beside the log): `audit --receipts` with all of"
        " them exits 0. Scenarios:",
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
        bases = _files(entry["derived_from"])
        if entry["claim"] is not None:
            bases = f"claim file `{entry['claim']}`"
        lines.append(
            f"| `{entry['file']}` | {bases} | {entry['scenario']} | {verdict} | {code} | {audit} |"
        )
    lines += [
        "",
        "## Disputes the receipts settle",
        "",
        "A player's client keeps the receipt the table signs for each of its submissions",
        "(docs/log-format.md §9): the seq and the hash of the body of the record it was",
        "logged as, and when it arrived; a refused one, the record the log ended at. `audit",
        "--receipts` checks every receipt against the log, and `--against` another copy of",
        "it; where they disagree and the table signed both sides, the audit prints the",
        "evidence, one line each, and exits 1: `DROPPED` (a receipted submission the finished",
        "log does not hold), `DELAYED` (held at another seq or time than its receipt says),",
        "`FORK` (a receipt, another receipt or a copy naming a seq with another record than",
        "the log's: two histories), `RECEIPT_MISMATCH`, `REFUSAL_UNFOUNDED`, `STALE_HEAD` (a",
        "refusal naming a head the log had already moved past). What others could have made",
        "is a finding but no evidence: `LAST_LINE_CHANGED` (an old v2 receipt naming the",
        "final record by its whole line, after someone dropped an acceptance). In a keyed",
        "game every submission names, signed, the record its player had seen, so a history",
        "rewritten after the fact is refused by the log alone; the drop and the delay below",
        "are made up live instead, the players' clients signing on from the history the",
        "table shows them and accepting its result: the log verifies, and only the receipt",
        "shows what the table did. In an unkeyed game the table can also rewrite the past",
        "(the fork below).",
        "",
        "```sh",
    ]
    for entry in [*keeping[:1], *(e for e in receipted if e["receipts"] or e["against"])]:
        lines += audit_command(entry)
    lines += [
        "```",
        "",
        "| file | derived from | scenario | verify | accepted by | audit with | audit |",
        "|---|---|---|---|---|---|---|",
    ]
    for entry in receipted:
        verdict, code, audit = _outcome(entry)
        with_ = _files([*entry["receipts"], *(f"--against {f}" for f in entry["against"])])
        lines.append(
            f"| `{entry['file']}` | {_files(entry['derived_from'])} | {entry['scenario']} "
            f"| {verdict} | {_accepted(entry)} | {with_} | {audit} |"
        )
    lines += [
        "",
        "## A downgrade only a requirement refuses",
        "",
        "A table holding its key can re-express a keyed v4 game it wrote as an unkeyed",
        "format v1 log: the players' keys, signatures and acceptances dropped, their entropy",
        "kept as plain bytes, every line re-signed. The log deals the same packs to the same",
        "scores and verifies, as a v1 log the table signed alone: its report says which",
        "guarantees it lacks, but a plain `verify` cannot tell it from a game that never had",
        "them. An archive that requires them (`verify --require NAME`, repeatable) refuses",
        "it, exit 1, `REQUIREMENT_UNMET`, naming each one it lacks and why:",
        "",
        "```sh",
    ]
    for entry in downgraded:
        required = " ".join(f"--require {name}" for name in entry["require"]["guarantees"])
        lines += [
            f"racing-demon verify sample_games/{entry['file']} \\",
            "    --table-key sample_games/table.pub -v \\",
            f"    {required}",
        ]
    lines += [
        "```",
        "",
        "| file | derived from | scenario | verify | verify --require | audit |",
        "|---|---|---|---|---|---|",
    ]
    for entry in downgraded:
        verdict, _, audit = _outcome(entry)
        require = entry["require"]
        refused = require["verdict"].upper().replace("_", " ")
        names = ", ".join(f"`{name}`" for name in require["guarantees"])
        lines.append(
            f"| `{entry['file']}` | {_files(entry['derived_from'])} | {entry['scenario']} "
            f"| {verdict}, format v{entry['format']} | each of {names}: {refused} "
            f"({require['exit_code']}), `{require['code']}` | {audit} |"
        )
    lines += [
        "",
        "## Format v1 games",
        "",
        "Written by racing-demon 0.1.0 in format v1, the games this folder held before format",
        "v2, kept in `v1/` byte for byte (paths as they were, under `v1/`). They still verify",
        "(or are refused) exactly as then, and a verified one's report says which guarantees",
        "of format v2 and later it lacks (`not proved: format v1: ...`: entropy not bound to the",
        "commitment, submissions that do not name the history their players saw, no",
        "acceptance of the result). A v1 log's rules named like a built-in profile but",
        "altered are reported as custom, not refused.",
        "",
        "| file | scenario | verify | reason code | audit |",
        "|---|---|---|---|---|",
    ]
    for entry in v1:
        verdict, code, audit = _outcome(entry)
        lines.append(f"| `{entry['file']}` | {entry['scenario']} | {verdict} | {code} | {audit} |")
    shape = TOURNAMENT_SHAPE
    lines += [
        "",
        "## A duplicate tournament",
        "",
        f"`{TOURNAMENT_DIR}/` is the {shape.name!r}: {shape.tables} tables of {shape.seats} "
        f"seats, {shape.hands} hands of {TOURNAMENT_PROFILE}, every table",
        "dealt the same packs from one committed secret (docs/tournament.md) and played by",
        f"bots of mixed speeds ({', '.join(TOURNAMENT_BOTS)} at seats 0 to {shape.seats - 1}), "
        "so each pack",
        "meets another speed at each table. `plan.json` is the plan published before play",
        "(four captains' signed contributions), `sheets.html` its printable table sheets,",
        "`table-N.jsonl` each table's signed log (every seat signs; the secret is revealed",
        "in every final record once all tables had played), `table-N.seatS.receipts.jsonl`",
        "the receipts each seat's client kept, and `standings.json` and",
        "`standings.html` what `tournament score` makes of them. One move was in flight",
        f"when table {HELD_TABLE}'s last hand ended: seat {HELD_SEAT}'s client sent it "
        f"{HELD_AFTER_MS} ms after the last",
        "`hand_end`, while the table held its final record for the reveal, and the table",
        "refused it `FINAL_HELD`, naming that `hand_end`; the refusal is in",
        f"`table-{HELD_TABLE}.seat{HELD_SEAT}.receipts.jsonl`, and the audit with it judges it "
        "founded (all agree):",
        "",
        "```sh",
        "cd sample_games/tournament",
        "racing-demon tournament check plan.json",
        "racing-demon tournament score plan.json . --table-key ../table.pub",
        "racing-demon tournament score plan.json . --table-key ../table.pub --json",
        f"racing-demon audit table-{HELD_TABLE}.jsonl --table-key ../table.pub \\",
        f"    --receipts table-{HELD_TABLE}.seat{HELD_SEAT}.receipts.jsonl",
        "```",
        "",
        "The organiser's secret and every key of the tournament are fixtures in",
        "`scripts/regen_sample_games.py` too.",
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


# -- the duplicate tournament (issue 19) -------------------------------------------------------

TOURNAMENT_DIR: Final = "tournament"
TOURNAMENT_SHAPE: Final = Shape("Sample cup", tables=4, seats=4, hands=3)
TOURNAMENT_PROFILE: Final = "nertz"
# Every table seats one easy, two normal and one hard bot; the rotation hands each pack to
# a different bot speed at each table, which is what the matchpoints then compare.
TOURNAMENT_BOTS: Final = ("easy", "normal", "hard", "normal")
TOURNAMENT_SEED: Final = "sample cup"
# Test fixtures, published on purpose: the organiser's secret, one signing captain per table
# (their contributions are signatures over the published terms), and each seat's key.
ORGANISER_SECRET: Final = bytes(range(64, 96))
CAPTAIN_KEYS: Final = tuple(
    Ed25519PrivateKey.from_private_bytes(hashlib.sha256(b"sample cup captain %d" % t).digest())
    for t in range(1, TOURNAMENT_SHAPE.tables + 1)
)
TOURNAMENT_PLAYER_KEYS: Final = tuple(
    tuple(
        Ed25519PrivateKey.from_private_bytes(
            hashlib.sha256(b"sample cup table %d seat %d" % (t, s)).digest()
        )
        for s in range(TOURNAMENT_SHAPE.seats)
    )
    for t in range(1, TOURNAMENT_SHAPE.tables + 1)
)


def tournament_plan() -> Plan:
    """The sample cup's plan: every captain's signed contribution to its terms."""
    rules = rules_from_document(builtin_document(TOURNAMENT_PROFILE))
    terms = make_terms(ORGANISER_SECRET, TOURNAMENT_SHAPE, rules)
    contributions = tuple(
        sign_contribution(key, terms, f"captain of table {t}")
        for t, key in enumerate(CAPTAIN_KEYS, 1)
    )
    return make_plan(ORGANISER_SECRET, TOURNAMENT_SHAPE, rules, contributions)


# A move in flight when the last hand ends (issue 28, point 3): after table HELD_TABLE has
# played out and before the reveal, seat HELD_SEAT's client sends the move it chose in the
# last position of play it saw, HELD_AFTER_MS after the last hand_end; the table, holding
# its final record, refuses it FINAL_HELD, and the client keeps that receipt too.
HELD_TABLE: Final = 2
HELD_SEAT: Final = 1
HELD_AFTER_MS: Final = 150


def submit_after_the_last_hand(simulation: Simulation) -> None:
    """Seat ``HELD_SEAT``'s move in flight at the held table ``simulation`` (see
    ``HELD_TABLE``), through the real table: refused FINAL_HELD, its receipt appended to
    the seat's receipts file. Nothing is logged: the log is checked unchanged."""
    log = simulation.path
    before = log.read_bytes()
    lines = before.splitlines()
    seen, state = None, None
    for snapshot in replay(log, ORGANISER_SECRET):
        record = snapshot.record
        now = None if snapshot.flow is None else snapshot.flow.state
        if record is not None and now is not None and now.phase is Phase.PLAYING:
            seen, state = Seen(record.seq, chain_hash(lines[record.seq])), now
    if seen is None or state is None or not legal_moves(state, HELD_SEAT):
        raise CorpusError(f"{log.name}: seat {HELD_SEAT} had no move in the last hand")
    text = str(legal_moves(state, HELD_SEAT)[0])
    key = TOURNAMENT_PLAYER_KEYS[HELD_TABLE - 1][HELD_SEAT]
    with Table.resume(log, TABLE_KEY, ORGANISER_SECRET) as table:
        if not table.played_out or table.finished:
            raise CorpusError(f"{log.name} is not held at its end")
        n = table.next_n(HELD_SEAT)
        signature = sign_submission(key, table.game, state.hand, HELD_SEAT, n, text, seen)
        try:
            table.submit(HELD_SEAT, text, table.t_ms + HELD_AFTER_MS, n, signature, seen)
        except SubmissionError as refused:
            if refused.code is not SubmissionCode.FINAL_HELD or refused.receipt is None:
                raise CorpusError(f"{log.name}: the table refused with {refused.code}") from None
            with simulation.receipts[HELD_SEAT].open("ab") as kept:
                kept.write(refused.receipt + b"\n")
        else:
            raise CorpusError(f"{log.name}: the table took a move after its last hand")
    if log.read_bytes() != before:
        raise CorpusError(f"{log.name}: the refused move changed the log")


def tournament_files() -> dict[str, bytes]:
    """sample_games/tournament/: the plan and its sheets, every table's log as bots played
    it with the receipts each seat's client kept (a FINAL_HELD refusal among them:
    ``submit_after_the_last_hand``), and the standings ``racing-demon tournament score
    plan.json .`` prints there (as JSON and as the HTML page), which
    tests/test_sample_games.py checks."""
    plan = tournament_plan()
    bots = [BOTS[name] for name in TOURNAMENT_BOTS]
    with tempfile.TemporaryDirectory() as temporary:
        folder = Path(temporary)
        held_log = table_log(folder, plan, HELD_TABLE)

        def on_table(simulation: Simulation) -> None:
            if simulation.path == held_log:
                submit_after_the_last_hand(simulation)

        played = simulate_tournament(
            folder,
            plan,
            ORGANISER_SECRET,
            bots,
            TOURNAMENT_SEED,
            TABLE_KEY,
            player_keys=TOURNAMENT_PLAYER_KEYS,
            on_table=on_table,
        )
        files = {
            f"{TOURNAMENT_DIR}/{path.name}": path.read_bytes()
            for path in sorted(folder.glob("*.jsonl"))
        }
        # Scored from inside the folder, so the standings name each log as "table-N.jsonl".
        logs = [Path(log.name) for log in played.logs]
        with contextlib.chdir(folder):
            standings = score_tournament(
                plan, logs, raw_public_bytes(TABLE_KEY.public_key()), jobs=1
            )
    if standings.problems:
        raise CorpusError(f"the sample tournament does not score: {standings.problems[0]}")
    document = plan.to_document()
    prefix = TOURNAMENT_DIR + "/"
    plan_json = json.dumps(document, indent=2, ensure_ascii=False)
    files[prefix + "plan.json"] = (plan_json + "\n").encode()
    files[prefix + "sheets.html"] = render_sheets(plan).encode()
    standings_json = json.dumps(standings_document(standings), indent=2, ensure_ascii=False)
    files[prefix + "standings.json"] = (standings_json + "\n").encode()
    files[prefix + "standings.html"] = standings_page(standings).encode()
    return files


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
        if name.startswith(f"{V1_DIR}/"):
            continue  # kept byte for byte, never written (v1_games read and checked them)
        path = SAMPLE_DIR / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    for folder in sorted(SAMPLE_DIR.rglob("*"), reverse=True):
        if folder.is_dir() and not any(folder.iterdir()):
            folder.rmdir()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
