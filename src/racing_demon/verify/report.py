"""What verification reports: the verdict, the numbered steps, the reason codes, the finding.

Steps 1 to 6 run in the order of their numbers; steps 7 to 10 record by record, in the
order docs/log-format.md §7 gives for each kind of record. Each reason code belongs to one
step.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from racing_demon.errors import RacingDemonError
from racing_demon.game.flow import FlowCode, Submission
from racing_demon.log.reader import ReadCode
from racing_demon.log.records import Record


class Verdict(enum.StrEnum):
    VERIFIED = "verified"
    DOES_NOT_VERIFY = "does_not_verify"
    UNFINISHED = "unfinished"  # a prefix of a log, without its final record: a crash, say
    UNREADABLE = "unreadable"  # the file could not be opened or read at all
    UNPINNED = "unpinned"  # everything held but the table's signatures, with no key to check


class Step(enum.IntEnum):
    """The verification steps (docs/log-format.md §7); each has a module ``stepNN_*``."""

    FRAMING = 1
    CANONICAL = 2
    SCHEMA = 3
    CHAIN = 4
    SIGNATURES = 5
    SECRET = 6
    PACKS = 7
    REPLAY = 8
    SCORES = 9
    FINAL = 10

    @property
    def title(self) -> str:
        return _STEP_TITLES[self]


_STEP_TITLES = {
    Step.FRAMING: "framing and strict JSON",
    Step.CANONICAL: "canonical form",
    Step.SCHEMA: "schema",
    Step.CHAIN: "chain",
    Step.SIGNATURES: "signatures",
    Step.SECRET: "secret",
    Step.PACKS: "rules and packs",
    Step.REPLAY: "replay",
    Step.SCORES: "scores",
    Step.FINAL: "final record",
}


class VerifyCode(enum.StrEnum):
    """The verifier's own reason codes. Steps 1 and 2 report the reader's ``ReadCode``, and
    the match flow's refusals (steps 7 to 10) its ``FlowCode``."""

    UNREADABLE = "UNREADABLE"
    # (3) schema
    SCHEMA = "SCHEMA"
    # (4) chain
    GENESIS_MISSING = "GENESIS_MISSING"
    GENESIS_REPEATED = "GENESIS_REPEATED"
    SEQ_MISMATCH = "SEQ_MISMATCH"
    PREV_MISMATCH = "PREV_MISMATCH"
    GAME_ID_MISMATCH = "GAME_ID_MISMATCH"
    WRONG_GAME = "WRONG_GAME"
    TIME_BACKWARDS = "TIME_BACKWARDS"
    VERSION_MISMATCH = "VERSION_MISMATCH"
    SEEN_OUT_OF_RANGE = "SEEN_OUT_OF_RANGE"
    SEEN_MISMATCH = "SEEN_MISMATCH"
    AFTER_FINAL = "AFTER_FINAL"
    UNFINISHED = "UNFINISHED"
    RECORD_COUNT = "RECORD_COUNT"
    FILE_CHANGED = "FILE_CHANGED"
    # (5) signatures
    WRONG_TABLE_KEY = "WRONG_TABLE_KEY"
    BAD_TABLE_SIGNATURE = "BAD_TABLE_SIGNATURE"
    WEAK_PLAYER_KEY = "WEAK_PLAYER_KEY"
    DUPLICATE_PLAYER_KEY = "DUPLICATE_PLAYER_KEY"
    MIXED_PLAYER_KEYS = "MIXED_PLAYER_KEYS"
    BAD_GENESIS_COSIGNATURE = "BAD_GENESIS_COSIGNATURE"
    BAD_PLAYER_SIGNATURE = "BAD_PLAYER_SIGNATURE"
    MISSING_PLAYER_SIGNATURE = "MISSING_PLAYER_SIGNATURE"
    UNEXPECTED_SIGNATURE = "UNEXPECTED_SIGNATURE"
    SUBMISSION_GAP = "SUBMISSION_GAP"
    ENTROPY_NOT_BOUND = "ENTROPY_NOT_BOUND"
    BAD_ACCEPTANCE = "BAD_ACCEPTANCE"
    # (6) secret
    SECRET_MISMATCH = "SECRET_MISMATCH"
    SEED_MISMATCH = "SEED_MISMATCH"
    # (7) rules and packs
    BAD_RULES = "BAD_RULES"
    RULES_MISMATCH = "RULES_MISMATCH"
    RESERVED_RULES_NAME = "RESERVED_RULES_NAME"
    WRONG_RULES = "WRONG_RULES"
    BAD_SEATS = "BAD_SEATS"
    BAD_TOURNAMENT = "BAD_TOURNAMENT"
    # (8) replay: what the match flow does not judge
    LAG_SEATS = "LAG_SEATS"
    LOST_TO_MISMATCH = "LOST_TO_MISMATCH"
    # after the steps, only with --require (verify.assurance)
    REQUIREMENT_UNMET = "REQUIREMENT_UNMET"


@dataclass(frozen=True, slots=True)
class Finding:
    """The first check that failed, and where."""

    code: VerifyCode | ReadCode | FlowCode
    message: str
    line: int | None = None  # 1-based
    seq: int | None = None
    seat: int | None = None  # the JSON report names it "player" (docs/glossary.md)
    move: str | None = None
    rule: str | None = None  # the engine's Violation code, the SignatureCode, or NOT_A_LOG
    expected: str | None = None
    found: str | None = None
    # Every problem, when the check found more than one on the line (the schema's errors):
    # ``message`` names the first and counts the rest, ``verify -v`` lists them all.
    problems: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class RulesFacts:
    """The rules a log's genesis declares, as every report shows them."""

    name: str | None  # the document's name (None when it has no string name)
    version: int | None
    sha256: str | None  # Rules.digest() of the document; None when it is no valid profile
    builtin: bool  # the document is a built-in profile, digest for digest
    pinned: bool  # the expected rules were pinned (Settings.rules)
    named_like: str | None = None  # the built-in profile whose name it uses, not being it
    # What custom rules named after a built-in profile (``table``, ``table-custom``) change
    # in it, a field a line (``profiles.differences_from_builtin``): why they are custom.
    differences: tuple[str, ...] = ()

    @property
    def note(self) -> str | None:
        if self.named_like is None:
            return None
        return f"named like the built-in profile {self.named_like}, but not it"


@dataclass(frozen=True, slots=True)
class Report:
    """What verifying one log found (``racing_demon.outcomes`` gives its exit code)."""

    source: str
    verdict: Verdict
    step: Step | None = None  # the failing step
    finding: Finding | None = None
    records: int | None = None  # lines in the file; None when a limit stopped the count
    not_replayed: int | None = None
    fast: bool = False
    pinned: bool = True  # whether a table key was given, so table signatures could count
    unsafe_unpinned: bool = False
    game: str | None = None
    profile: str | None = None
    format_version: int | None = None  # the genesis's ``v``, once its schema held
    keyed: bool = False  # every seat lists a key (checked in step 5)
    seats: int = 0  # the seats the genesis lists
    # The seats whose acceptance of the final record verified (format v2, keyed):
    accepted_by: tuple[int, ...] = ()
    rules: RulesFacts | None = None  # once the genesis was read
    tournament_plan: str | None = None  # the plan a tournament table's genesis names, hex
    # Set only when the whole match replayed and scored as its final record says:
    hands: tuple[tuple[int, ...], ...] = ()
    totals: tuple[int, ...] = ()
    winners: tuple[int, ...] = ()
    final_reason: str | None = None


class StepFailed(RacingDemonError):
    """A step's check failed: the first failure in step order is the verdict."""

    def __init__(self, step: Step, finding: Finding) -> None:
        super().__init__(step, finding)
        self.step = step
        self.finding = finding


def failure(
    step: Step,
    code: VerifyCode | FlowCode,
    message: str,
    *,
    line: int | None,
    record: Record | None,
    seat: int | None = None,
    rule: object = None,
    expected: object = None,
    found: object = None,
    problems: tuple[str, ...] = (),
) -> StepFailed:
    """The failure of ``step`` at line ``line``, whose ``record`` (once its schema held)
    names the seq, and for a submission the seat and the move."""
    seq = move = None
    if record is not None:
        seq = record.seq
        if isinstance(record.payload, Submission):
            seat, move = record.payload.seat, record.payload.move
    return StepFailed(
        step,
        Finding(
            code,
            message,
            line=line,
            seq=seq,
            seat=seat,
            move=move,
            rule=None if rule is None else str(rule),
            expected=None if expected is None else str(expected),
            found=None if found is None else str(found),
            problems=problems,
        ),
    )
