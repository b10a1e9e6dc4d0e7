"""One sentence for every reason code the package gives, in one catalogue.

``racing-demon explain CODE``, ``racing-demon explain --help`` and docs/reason-codes.md
(scripts/regen_reason_codes.py) are all written from this module, so a code is explained
the same way everywhere. Each sentence says what the check that gives the code found,
as the check is written (the verifier's steps, the match flow, the engine, the table).

A code's name is unique only within its family: ``FLOAT`` is the reader's code for a line
and the canonical encoder's for a value, ``TIME_BACKWARDS`` the verifier's for a record and
the table's for a submission. So the catalogue is kept per family (one enum each), and a
name is answered for every family that uses it.
"""

from __future__ import annotations

import difflib
import enum
from collections.abc import Mapping
from typing import Final, NamedTuple

from racing_demon.evidence import EvidenceCode
from racing_demon.game.engine import ViolationCode
from racing_demon.game.flow import FlowCode
from racing_demon.log.canonical import CanonicalCode
from racing_demon.log.reader import ReadCode
from racing_demon.log.receipts import ReceiptCode, SubmissionCode
from racing_demon.log.signing import SignatureCode
from racing_demon.serve.journal import JournalCode
from racing_demon.serve.protocol import ServeCode
from racing_demon.table import TableCode
from racing_demon.tournament.plan import PlanCode
from racing_demon.tournament.score import TournamentCode
from racing_demon.verify.report import VerifyCode
from racing_demon.verify.step01_framing import FileCode


class Family(NamedTuple):
    """The codes of one enum: who gives them, and where they are specified."""

    codes: type[enum.StrEnum]
    title: str  # who gives these codes, and when
    topic: str  # the guide that specifies the checks (docs/TOPIC.md) ...
    section: str | None  # ... and its section, if one
    sentences: Mapping[enum.StrEnum, str]

    @property
    def doc(self) -> str:
        """Where the checks are specified, as the repository's guides name a file."""
        return f"docs/{self.topic}.md" + ("" if self.section is None else f" §{self.section}")

    @property
    def command(self) -> str:
        """The command that prints that place of the guides shipped with the package."""
        return f"racing-demon docs {self.topic}" + (
            "" if self.section is None else f" {self.section}"
        )


class Explanation(NamedTuple):
    code: str
    family: Family
    sentence: str


_READ: Final[Mapping[enum.StrEnum, str]] = {
    ReadCode.BOM: "The file starts with a UTF-8 byte-order mark, which a log must not have.",
    ReadCode.CR: "A line holds a carriage return (CR): every line ends with a single LF.",
    ReadCode.NUL: "A line holds a NUL byte.",
    ReadCode.NOT_UTF8: (
        "A line is not valid UTF-8: a stray byte, an overlong form or an encoded surrogate."
    ),
    ReadCode.EMPTY_LINE: "A line is empty, or holds only spaces and tabs.",
    ReadCode.LINE_TOO_LONG: (
        "A line is longer than the reader's line limit (64 KiB unless --max-line-bytes "
        "says otherwise)."
    ),
    ReadCode.FILE_TOO_LARGE: (
        "The file is larger than the reader's file limit (64 MiB unless --max-file-bytes "
        "says otherwise)."
    ),
    ReadCode.TOO_MANY_RECORDS: (
        "The file holds more lines than the reader's record limit (1,000,000 unless "
        "--max-records says otherwise)."
    ),
    ReadCode.TORN_LINE: (
        "The last line has no terminating newline, as a crash in the middle of a write "
        "leaves it; `racing-demon recover LOG` repairs such a file once no table writes it."
    ),
    ReadCode.BAD_JSON: (
        "A line is not one JSON value: a syntax error, trailing bytes or two values on one line."
    ),
    ReadCode.DUPLICATE_KEY: "A JSON object repeats a key, at any depth.",
    ReadCode.NAN_OR_INFINITY: "A line holds NaN, Infinity or -Infinity, which JSON does not have.",
    ReadCode.FLOAT: (
        "A number has a fraction or an exponent (1.0, 1e5): a log holds integers only."
    ),
    ReadCode.NEGATIVE_ZERO: "A line holds the integer -0.",
    ReadCode.INT_RANGE: (
        "An integer lies beyond 2^53 - 1 in magnitude, where JSON readers stop being exact."
    ),
    ReadCode.TOO_DEEP: (
        "Arrays and objects nest deeper than 32 levels (the top-level object is level 1)."
    ),
    ReadCode.NOT_OBJECT: "A line's JSON value is not an object.",
    ReadCode.NOT_CANONICAL: (
        "A line is valid JSON but not the canonical RFC 8785 bytes of its value (member "
        "order, spacing, escapes), or holds a value outside the data model."
    ),
}

_CANONICAL: Final[Mapping[enum.StrEnum, str]] = {
    CanonicalCode.UNSUPPORTED_TYPE: (
        "A value is of a type the data model does not have: only null, booleans, integers, "
        "strings, arrays and objects."
    ),
    CanonicalCode.FLOAT: "A value is a float: the data model holds integers only.",
    CanonicalCode.INT_RANGE: "An integer lies beyond 2^53 - 1 in magnitude.",
    CanonicalCode.LONE_SURROGATE: (
        "A string holds a lone surrogate code point, which has no UTF-8 form."
    ),
    CanonicalCode.KEY_NOT_STR: "An object key is not a string.",
    CanonicalCode.KEY_NOT_PRINTABLE_ASCII: (
        "An object key holds a character outside printable ASCII (0x20 to 0x7E)."
    ),
    CanonicalCode.TOO_DEEP: "The value nests arrays and objects deeper than 32 levels.",
}

_SIGNATURE: Final[Mapping[enum.StrEnum, str]] = {
    SignatureCode.BAD_SIGNATURE_ENCODING: (
        "The signature is not exactly 128 lowercase hex characters."
    ),
    SignatureCode.BAD_KIND: "The signed kind is not 1 to 32 characters of a-z and underscore.",
    SignatureCode.NON_CANONICAL_KEY: (
        "The public key is not a canonical encoding: not 32 bytes, y not below p, or x zero "
        "with the sign bit set."
    ),
    SignatureCode.KEY_NOT_ON_CURVE: (
        "The public key's 32 bytes decode to no point of the Ed25519 curve."
    ),
    SignatureCode.WEAK_KEY: (
        "The public key is one of the 8 small-order points, for which a signature proves nothing."
    ),
    SignatureCode.NON_CANONICAL_R: "The signature's R half is not a canonical point encoding.",
    SignatureCode.SMALL_ORDER_R: "The signature's R half is one of the 8 small-order points.",
    SignatureCode.NON_CANONICAL_S: (
        "The signature's S half is not below the group order L, so it is not the one "
        "canonical form."
    ),
    SignatureCode.BAD_SIGNATURE: (
        "The signature does not verify: the key did not sign these exact bytes as this kind "
        "and format version."
    ),
}

_VERIFY: Final[Mapping[enum.StrEnum, str]] = {
    VerifyCode.UNREADABLE: (
        "The file cannot be opened or read at all (missing, a directory, no permission), so "
        "nothing about its contents is known."
    ),
    VerifyCode.SCHEMA: (
        "A line breaks the log-record schema (log-record.schema.json); the finding names "
        "the first error, its path, and how many others there are."
    ),
    VerifyCode.GENESIS_MISSING: "The first line is not a genesis record.",
    VerifyCode.GENESIS_REPEATED: "A genesis record appears after the first line.",
    VerifyCode.SEQ_MISMATCH: (
        "A record's seq is not its line's index from 0: a record was removed, repeated or moved."
    ),
    VerifyCode.PREV_MISMATCH: (
        "A record's prev is not the SHA-256 of the line before it: a line was changed or "
        "spliced in."
    ),
    VerifyCode.GAME_ID_MISMATCH: "A record names another game id than the genesis.",
    VerifyCode.WRONG_GAME: "The genesis is not of the game that --game-id names.",
    VerifyCode.TIME_BACKWARDS: "A record's t_ms is lower than the t_ms of the record before it.",
    VerifyCode.VERSION_MISMATCH: "A record's format version v is not the genesis's.",
    VerifyCode.SEEN_OUT_OF_RANGE: (
        "A v2 submission's seen.seq is not one of the 4,096 records before it."
    ),
    VerifyCode.SEEN_MISMATCH: (
        "The line a v2 submission's seen.seq names does not hash to its seen.hash: its "
        "player was shown another history."
    ),
    VerifyCode.AFTER_FINAL: "A record follows the final record, which must be the last line.",
    VerifyCode.UNFINISHED: (
        "The log has no final record (an empty file included) and everything before it "
        "holds, as a table still playing, or one that stopped, leaves it."
    ),
    VerifyCode.RECORD_COUNT: (
        "The final record's records count is not its own seq, the number of lines before it."
    ),
    VerifyCode.FILE_CHANGED: (
        "The file's bytes differ between the verifier's first pass and a second one: "
        "something wrote to it while it was verified."
    ),
    VerifyCode.WRONG_TABLE_KEY: (
        "The genesis table_key is not the key id of the table key pinned with --table-key."
    ),
    VerifyCode.BAD_TABLE_SIGNATURE: (
        "A record's table signature (sigs.table) does not verify under the pinned table key; "
        "the rule gives the signature code."
    ),
    VerifyCode.WEAK_PLAYER_KEY: (
        "A player key the genesis lists is not canonical, not on the curve, or of small order."
    ),
    VerifyCode.DUPLICATE_PLAYER_KEY: "Two seats list one key, or a seat lists the table's key.",
    VerifyCode.MIXED_PLAYER_KEYS: (
        "Some seats of the genesis list a key and others do not: every seat has one, or none."
    ),
    VerifyCode.BAD_GENESIS_COSIGNATURE: (
        "The genesis co-signatures (sigs.players) are not one per seat, or one is not its "
        "seat's signature of the genesis body."
    ),
    VerifyCode.BAD_PLAYER_SIGNATURE: (
        "A submission's player signature (sigs.player) does not verify over its statement "
        "under the seat's key."
    ),
    VerifyCode.MISSING_PLAYER_SIGNATURE: (
        "A submission record of a seat that lists a key carries no player signature."
    ),
    VerifyCode.UNEXPECTED_SIGNATURE: (
        "A signature where none belongs: sigs.player on an unkeyed seat's record or on no "
        "submission, sigs.players off the genesis or without keys, or sigs.accepts off a "
        "keyed log's final record (format v2 on)."
    ),
    VerifyCode.SUBMISSION_GAP: (
        "A seat's submission numbers n do not run 0, 1, 2 and on without a gap, as a table "
        "that drops a submission leaves them."
    ),
    VerifyCode.ENTROPY_NOT_BOUND: (
        "In a keyed game (format v2 on), a seat's entropy is not its signature over the game "
        "id and the dealer's commitment."
    ),
    VerifyCode.BAD_ACCEPTANCE: (
        "The final record's acceptances (sigs.accepts) are not one entry per seat, or an "
        "entry is not its seat's signature of the final body."
    ),
    VerifyCode.SECRET_MISMATCH: (
        "The secret the final record reveals does not open the genesis commitment."
    ),
    VerifyCode.SEED_MISMATCH: (
        "The dealer secret given to the verifier is not the one the final record reveals, "
        "or, for an unfinished log, does not open the genesis commitment."
    ),
    VerifyCode.BAD_RULES: "The genesis rules are not a valid rules profile document.",
    VerifyCode.RULES_MISMATCH: (
        "The genesis rules_sha256 is not the digest of the rules document it carries."
    ),
    VerifyCode.RESERVED_RULES_NAME: (
        "A log's rules (format v2 on) carry a built-in profile's name (table, peer2peer, "
        "nertz) without being that profile, digest for digest."
    ),
    VerifyCode.WRONG_RULES: "The log's rules digest is not that of the rules pinned with --rules.",
    VerifyCode.BAD_SEATS: (
        "The genesis seats a number of players its profile does not allow, does not list "
        "its seats from 0 in order, or lacks one entropy contribution per seat."
    ),
    VerifyCode.BAD_TOURNAMENT: (
        "A tournament table's genesis names a table outside 1 to tables, rules that do not "
        "play exactly the tournament's hands (no target, a shared lead tie), or a tournament "
        "no plan can have."
    ),
    VerifyCode.LAG_SEATS: (
        "A lag record (format v3) does not list one seat's round trips for each seat."
    ),
    VerifyCode.LOST_TO_MISMATCH: (
        "A bounce (format v4) names another record as the one it lost its race to than the "
        "replay finds (the first card on the foundation level, or the record by which a seat "
        "ended the hand), or names one when it lost no race, or none when it lost one."
    ),
    VerifyCode.REQUIREMENT_UNMET: (
        "Every check held, but the log lacks a guarantee or form that --require asked for "
        "(deal_bound, keyed, v2_or_later, ...); the message names it and why it is missing."
    ),
}

_FLOW: Final[Mapping[enum.StrEnum, str]] = {
    FlowCode.HAND_OUT_OF_ORDER: (
        "A record is out of its hand: a hand not numbered next, one started before the last "
        "ended or after the match was over, or a record outside the hand in play."
    ),
    FlowCode.PACK_MISMATCH: (
        "A hand_start does not give one pack digest per seat, or one is not the pack the "
        "dealer secret deals that seat (at a tournament's table, the pack the plan deals it)."
    ),
    FlowCode.BAD_MOVE_TEXT: "A submission record's move text does not parse as a move.",
    FlowCode.PLAYER_MISMATCH: (
        "A move's seat is not the record's player, or is no seat at the table."
    ),
    FlowCode.ILLEGAL_MOVE: (
        "The table accepted a move the engine refuses; the rule gives the engine's code."
    ),
    FlowCode.KIND_MISMATCH: (
        "An accepted move is recorded as the wrong kind, a move for a tie or a tie for a move."
    ),
    FlowCode.WRONGLY_BOUNCED: "The table bounced a move that was legal when it arrived.",
    FlowCode.BOUNCE_REASON_MISMATCH: (
        "A bounce's reason is not the code the engine gives that move; the rule gives the engine's."
    ),
    FlowCode.UNJUSTIFIED_STALL: (
        "A stall record where no stall shift was due, or where the stall cycle was complete "
        "and a blocked hand_end was due instead."
    ),
    FlowCode.MISSING_STALL: (
        "A stall was due after the previous record, but the log goes on with something "
        "other than that stall or the blocked hand_end."
    ),
    FlowCode.UNJUSTIFIED_HAND_END: (
        "A hand_end where the hand had not ended, or had ended for another reason than the "
        "one recorded."
    ),
    FlowCode.SCORE_MISMATCH: (
        "A hand's scores, or the final record's hands or totals, are not the ones the cards score."
    ),
    FlowCode.WINNERS_MISMATCH: (
        "The final record names other winners than the profile's match rule."
    ),
    FlowCode.HAND_NOT_ENDED: "The final record comes before the last hand's hand_end.",
    FlowCode.MATCH_NOT_OVER: (
        "The final record comes where the profile's match rule does not end the match."
    ),
    FlowCode.FINAL_MISMATCH: (
        "The final record's reason (complete, resigned, abandoned) is not the one the last "
        "hand's end gives."
    ),
}

_ENGINE: Final[Mapping[enum.StrEnum, str]] = {
    ViolationCode.NOT_A_SEAT: "The move names a seat that is not at the table.",
    ViolationCode.HAND_OVER: (
        "The hand has ended, or a seat called and only a card already in motion may still land."
    ),
    ViolationCode.TOO_EARLY: "Play has not started: the profile's countdown has not ended.",
    ViolationCode.NO_SUCH_PILE: (
        "The move names a pile that does not exist, such as w6 or a foundation not yet started."
    ),
    ViolationCode.EMPTY_PILE: "The pile the move takes from is empty.",
    ViolationCode.CARD_MISMATCH: (
        "The cards the move names are not the ones its source offers, or a turn names "
        "another packet than the stock's."
    ),
    ViolationCode.ONE_CARD_ONLY: (
        "The move takes several cards where one only may go: from the demon or the waste, "
        "to a foundation, or under a work pile."
    ),
    ViolationCode.SAME_PILE: "The move puts a work pile onto or under itself.",
    ViolationCode.NOT_AN_ACE: "A new foundation (f+) is started with a card that is not an ace.",
    ViolationCode.ACE_STARTS_NEW: (
        "An ace is played onto a foundation, but an ace always starts a new one (f+)."
    ),
    ViolationCode.WRONG_SUIT: "A card is played onto a foundation of another suit.",
    ViolationCode.NOT_NEXT_RANK: (
        "A card is played onto a foundation that does not want its rank yet (too high)."
    ),
    ViolationCode.FOUNDATION_TAKEN: (
        "A lost race: the foundation already holds this card's rank because another card "
        "got there first, and the card stays where it was."
    ),
    ViolationCode.NOT_ONE_LOWER: (
        "The card put onto a work pile is not one rank lower than the pile's exposed card."
    ),
    ViolationCode.NOT_ONE_HIGHER: (
        "The card slid under a work pile is not one rank higher than the pile's head."
    ),
    ViolationCode.SAME_COLOUR: (
        "The rank is right but the colour is that of the card it joins: work piles "
        "alternate red and black."
    ),
    ViolationCode.UNDER_NOT_ALLOWED: "The profile does not let a card slide under a work pile.",
    ViolationCode.UNDER_EMPTY_PILE: "A card is slid under an empty work pile.",
    ViolationCode.STOCK_EMPTY: "A turn with no card left in the stock.",
    ViolationCode.STOCK_NOT_EMPTY: "A recycle while the stock still holds cards.",
    ViolationCode.WASTE_EMPTY: "A recycle with no card on the waste.",
    ViolationCode.CALL_NOT_ALLOWED: "A call under a profile that has no call.",
    ViolationCode.DEMON_NOT_EMPTY: "A call while the seat's demon pile still holds cards.",
    ViolationCode.AGREEMENT_NOT_ALLOWED: (
        "An agreement to a stall shift under a profile that has no stall by agreement."
    ),
    ViolationCode.ALREADY_AGREED: "The seat has already agreed to this stall shift.",
    ViolationCode.RESIGN_NOT_ALLOWED: (
        "A resignation under a profile that refuses it (end.resign is refused)."
    ),
    ViolationCode.STALL_NOT_DUE: (
        "A stall shift while a seat can still play, or has not turned through its whole "
        "stock since the last play."
    ),
}

_SUBMISSION: Final[Mapping[enum.StrEnum, str]] = {
    SubmissionCode.TIME_BACKWARDS: (
        "The submission's arrival time is earlier than the time the table's clock has "
        "already reached."
    ),
    SubmissionCode.MATCH_OVER: "The match is over: the log holds its final record.",
    SubmissionCode.FINAL_HELD: (
        "A tournament's table has played its last hand and holds its final record until the "
        "organiser reveals the secret: nothing more is logged."
    ),
    SubmissionCode.NO_SUCH_SEAT: (
        "The submission names a seat that is not at the table, so it gets no receipt: "
        "nobody sits there to keep one."
    ),
    SubmissionCode.WRONG_NUMBER: "The submission's number n is not the seat's next one.",
    SubmissionCode.BAD_MOVE_TEXT: "The submission's move text does not parse as a move.",
    SubmissionCode.NOT_ITS_MOVE: "The move names another seat than the one that submitted it.",
    SubmissionCode.SEEN_MISSING: (
        "A keyed seat's submission does not name the last record its client had seen."
    ),
    SubmissionCode.SEEN_UNKNOWN: (
        "The record a submission says its client had seen is not one of the last 4,096 "
        "records of this log with that hash."
    ),
    SubmissionCode.UNEXPECTED_SIGNATURE: (
        "A seat that lists no key sent a signature with its submission."
    ),
    SubmissionCode.MISSING_SIGNATURE: "A keyed seat's submission carries no signature.",
    SubmissionCode.BAD_SIGNATURE: (
        "A keyed seat's signature does not verify over the statement of its submission."
    ),
    SubmissionCode.RATE_LIMITED: (
        "A live table's server refused the submission before judging it, its connection "
        "sending faster than 10 messages a second (a burst of 20 allowed): nothing was "
        "logged, the seat's next number is unchanged, and it may be sent again."
    ),
}

_TABLE: Final[Mapping[enum.StrEnum, str]] = {
    TableCode.LOG_EXISTS: (
        "Table.create was given a file that exists: a log is never overwritten, so name a new "
        "file, or continue that match with Table.resume."
    ),
    TableCode.MIXED_KEYS: "Some players list a key and some do not: all sign or none does.",
    TableCode.SIGNER_COUNT: "Keyed players need one signer each, and unkeyed players none.",
    TableCode.ENTROPY_GIVEN: (
        "Entropy was given for keyed players, whose entropy is their signature over the "
        "commitment, which the table asks their signers for."
    ),
    TableCode.ENTROPY_COUNT: (
        "The table was given another number of entropy contributions than it has players."
    ),
    TableCode.NOT_SIGNED: (
        "A keyed seat's signer declined to sign its entropy statement or the genesis."
    ),
    TableCode.WOULD_NOT_VERIFY: (
        "The genesis the table would write fails a check the verifier makes of it; the "
        "message gives the verifier's code."
    ),
    TableCode.CLOCK_BACKWARDS: (
        "Table.advance or Table.abandon was given a time earlier than the table's clock."
    ),
    TableCode.PLAYED_OUT: "Table.abandon was called on a match that is already over.",
    TableCode.NO_IDLE_RULE: (
        "Table.abandon under rules with no idle time (time.idle_abandon_ms), such as the "
        "table and Nertz rules, whose match ends only at its target or hand limit."
    ),
    TableCode.NOT_IDLE: (
        "Table.abandon before the rules' idle time has passed since the last action, or "
        "while the hand in play ends by another rule first."
    ),
}

_RECEIPT: Final[Mapping[enum.StrEnum, str]] = {
    ReceiptCode.MALFORMED: (
        "A line of a receipts file fails the framing, strict JSON or canonical-form checks "
        "of a log line; the rule gives the reader's code."
    ),
    ReceiptCode.SCHEMA: (
        "A line of a receipts file breaks the receipt schema (receipt.schema.json)."
    ),
    ReceiptCode.BAD_TABLE_SIGNATURE: (
        "A receipt's table signature does not verify under the pinned table key; the rule "
        "gives the signature code."
    ),
}

_EVIDENCE: Final[Mapping[enum.StrEnum, str]] = {
    EvidenceCode.FORK: (
        "The table signed two histories of one game: a receipt and a log line, or two "
        "receipts, name one seq by different records (v3 receipts by the record's body "
        "hash), or two copies hold two table-signed bodies at one seq (the members that "
        "differ are named)."
    ),
    EvidenceCode.DELAYED: (
        "The submission is in the log, but at another seq or t_ms than its receipt says: "
        "a delay or a reorder."
    ),
    EvidenceCode.DROPPED: (
        "A submission its receipt says was logged is not in the finished log, or its number "
        "holds another statement."
    ),
    EvidenceCode.RECEIPT_MISMATCH: (
        "The receipt names a log line by its hash but misdescribes it: another seat, "
        "number, statement, outcome or reason."
    ),
    EvidenceCode.REFUSAL_UNFOUNDED: (
        "The table refused a submission for a reason its own log disproves: MATCH_OVER "
        "naming a record other than the final one, FINAL_HELD naming a record other than "
        "the last hand_end followed by the final record (a v2 receipt's MATCH_OVER at a "
        "tournament's table is held to that rule: its table had no FINAL_HELD), or "
        "WRONG_NUMBER for the seat's next number."
    ),
    EvidenceCode.STALE_HEAD: (
        "A refusal says the log ended at seq k at time t, but a record after k in the log "
        "was written before t (its t_ms is less than t), so the table hid its real head; a "
        "record of the same millisecond is no evidence (it may have come after the "
        "refusal), nor is a tournament's held final record (dated at the reveal)."
    ),
    EvidenceCode.RECEIPT_INVALID: (
        "A line of a receipts file is not a receipt signed by the pinned table key (the "
        "rule gives the receipt code), which is no evidence against the table."
    ),
    EvidenceCode.OTHER_GAME: "A receipt, or a copy of the log, is of another game.",
    EvidenceCode.NOT_YET_LOGGED: (
        "The receipt points past the end of an unfinished log, so its record may still come."
    ),
    EvidenceCode.UNCHECKED: (
        "The receipt points past the line where the log stops being a chain the table "
        "signed, so it cannot be checked."
    ),
    EvidenceCode.COPY_INVALID: (
        "A copy of the log fails the verifier's steps 1-5 where it differs from the log, "
        "or after an earlier line where it did (the rule gives the verifier's code): a "
        "damaged copy, no evidence against the table."
    ),
    EvidenceCode.LAST_LINE_CHANGED: (
        "A v2 receipt names a record by the hash of its whole line, signatures included, "
        "and the log's last line hashes otherwise: nothing the table signed fixes that "
        "line's signatures (an acceptance set to null changes it), so this is no evidence "
        "of a fork (v3 receipts name the record's body instead)."
    ),
}

_PLAN: Final[Mapping[enum.StrEnum, str]] = {
    PlanCode.UNREADABLE: (
        "The plan file cannot be read: missing, not a regular file, or over 64 MiB."
    ),
    PlanCode.NOT_JSON: (
        "The plan is not strict JSON (a duplicate key, a fraction, NaN, -0, an integer "
        "beyond 2^53 - 1, a lone surrogate), or not an object."
    ),
    PlanCode.BAD_SCHEMA: (
        "The plan breaks the tournament-plan schema (tournament-plan.schema.json)."
    ),
    PlanCode.BAD_SHAPE: "The tournament's name is over 256 bytes of UTF-8.",
    PlanCode.BAD_RULES: (
        "The plan's rules are no valid profile, are not in a profile document's own form, "
        "do not seat the plan's players, or are not a tournament's rules."
    ),
    PlanCode.RULES_DIGEST_MISMATCH: "The plan's rules_sha256 is not the digest of its rules.",
    PlanCode.BAD_CONTRIBUTION: (
        "The plan lists over 65,536 contributions, a contributor or an entropy twice, or a "
        "signed contribution that is not its key's signature over the plan's terms (its "
        "name and commitment, and from format v2 its tables, seats, hands and rules)."
    ),
    PlanCode.CONTRIBUTION_ORDER: (
        "The plan (format v2) does not list its contributions in the canonical order, by "
        "their entropy bytes ascending: an order nobody signed would let the organiser "
        "choose among the deal sets of every order."
    ),
    PlanCode.ENTROPY_MISMATCH: "The plan's entropy is not the digest E of its contributions.",
    PlanCode.SCHEDULE_MISMATCH: (
        "The plan's schedule is not the rotation: a table or hand missing or out of order, "
        "or a seat given another pack."
    ),
    PlanCode.PLAN_MISMATCH: "The plan's plan member is not the commitment P of its body.",
    PlanCode.SECRET_MISMATCH: "The revealed secret does not open the plan's commitment C.",
    PlanCode.DEAL_SET_MISMATCH: (
        "The revealed secret deals another deal set than the checksum D the plan published."
    ),
}

_TOURNAMENT: Final[Mapping[enum.StrEnum, str]] = {
    TournamentCode.MISSING_TABLE: "No log claims this table of the plan.",
    TournamentCode.DUPLICATE_TABLE: (
        "Two logs or more that verify claim one table, so none of them is scored."
    ),
    TournamentCode.UNREADABLE: "The log cannot be read.",
    TournamentCode.NOT_A_TOURNAMENT_LOG: (
        "The log's genesis names no tournament: it is a match of its own."
    ),
    TournamentCode.OTHER_TOURNAMENT: (
        "The log's genesis names another tournament's name or plan commitment."
    ),
    TournamentCode.TABLE_NOT_IN_PLAN: "The log claims a table outside 1 to the plan's tables.",
    TournamentCode.UNFINISHED: (
        "The log has no final record: the table has not revealed the secret yet, or it stopped."
    ),
    TournamentCode.NOT_VERIFIED: (
        "The log does not verify, for another reason than a pack or rules outside the plan; "
        "the verifier's finding says which."
    ),
    TournamentCode.PACK_OUT_OF_PLAN: (
        "The log does not verify because a hand_start names a pack the plan does not deal "
        "that seat."
    ),
    TournamentCode.WRONG_RULES: "The log's rules are not the plan's.",
    TournamentCode.WRONG_SHAPE: (
        "The log verifies, but its tournament has other tables or hands than the plan."
    ),
    TournamentCode.WRONG_SEATS: (
        "The log verifies, but seats another number of players than the plan."
    ),
    TournamentCode.WRONG_COMMITMENT: (
        "The log verifies, but names another commitment than the plan's: another secret dealt it."
    ),
    TournamentCode.WRONG_ENTROPY: (
        "The log verifies, but names another entropy digest than the plan's, so no pack it "
        "dealt is the plan's."
    ),
    TournamentCode.LOG_CHANGED: (
        "No longer given, since scoring takes a verified log's genesis on the verifying "
        "pass and never reads it again; standings written before named a log whose genesis, "
        "read again after verifying, was another game's."
    ),
    TournamentCode.SHORT_MATCH: (
        "The log verifies, but its match ended before the plan's last hand; the hands "
        "played still count."
    ),
    TournamentCode.DEAL_SET_MISMATCH: (
        "The plan's deal-set checksum D is not what the revealed secret deals: the "
        "organiser published one deal set and played another."
    ),
}

_SERVE: Final[Mapping[enum.StrEnum, str]] = {
    ServeCode.TOO_LARGE: (
        "A client's WebSocket frame holds more than 4 KiB of UTF-8: it is not read, and the "
        "connection is closed."
    ),
    ServeCode.BAD_JSON: (
        "A client's frame is not one strict JSON value, read by the log reader's rules (no "
        "duplicate key, float, NaN, -0, integer beyond 2^53 - 1 or nesting beyond 32 levels), "
        "or a binary frame: the connection is closed."
    ),
    ServeCode.NOT_OBJECT: "A client's frame is JSON but not an object: the connection is closed.",
    ServeCode.UNKNOWN_TYPE: (
        "A client's message has no type, or one that is not sync, entropy, cosign, submit "
        "or accept: the connection is closed."
    ),
    ServeCode.BAD_MESSAGE: (
        "A client's message breaks its type's schema (a member missing, extra or of the "
        "wrong form), named by its path: the connection is closed."
    ),
    ServeCode.RATE_LIMITED: (
        "A connection sent more than 10 messages a second sustained (a burst of 20 "
        "allowed): a submission gets a refused receipt with this code, any other message "
        "this error; far beyond that the connection is closed."
    ),
    ServeCode.NOT_SYNCED: "A client sent a message before its connection's sync.",
    ServeCode.FORK: (
        "A client's sync named, as the last record it holds, a record the table's log does not "
        "hold at that seq (another line, or none): two histories of one game, reported and not "
        "papered over, the connection closed."
    ),
    ServeCode.SPECTATOR: (
        "A spectator's connection sent a message only a seat sends (entropy, cosign, "
        "submit, accept)."
    ),
    ServeCode.NOT_ASKED: (
        "A seat sent entropy, a co-signature or an acceptance when the table was not "
        "asking that seat for it (not yet, no longer, or already answered)."
    ),
    ServeCode.BAD_SIGNATURE: (
        "A seat's entropy, co-signature or acceptance does not verify under the seat's key "
        "over the bytes the server asked it to sign."
    ),
    ServeCode.SLOW_READER: (
        "The server closed a connection whose client did not read its messages fast "
        "enough (2,000 messages waiting), rather than hold them without bound."
    ),
    ServeCode.REPLACED: (
        "The server closed a seat's connection because the seat connected again (and "
        "synced): a seat has one connection, the newest."
    ),
    ServeCode.SERVER_STOPPING: (
        "The server is stopping: the connection closes and the table resumes when the "
        "server starts again, and during a planned stop (SIGTERM, serve --drain) the "
        "lobby refuses new tables and joins until then."
    ),
    ServeCode.BAD_REQUEST: (
        "A lobby request's body is not the JSON its endpoint takes (see the lobby schema), "
        "or names a profile, rules or bot the server does not have."
    ),
    ServeCode.NO_SUCH_TABLE: "A request names a game the server has no table for.",
    ServeCode.NO_SUCH_SEAT: "A request names a seat the table does not have.",
    ServeCode.SEAT_TAKEN: "A join asks for a seat another player or a bot already holds.",
    ServeCode.BAD_KEY: (
        "A join's public key is not a usable Ed25519 key: not 64 lowercase hex characters, "
        "not a canonical curve point, or a small-order point."
    ),
    ServeCode.BAD_TOKEN: (
        "A WebSocket upgrade for a seat carries no token, or not the token the seat's join "
        "returned."
    ),
    ServeCode.BAD_ORIGIN: (
        "A WebSocket upgrade carries an Origin header that is not the server's own origin, "
        "or a request to a server listening on loopback names another host (a page that "
        "reached it by DNS rebinding)."
    ),
    ServeCode.TABLE_CLOSED: (
        "The table no longer takes what was asked: a join once it has started, finished or "
        "been cancelled, a connection once it has been cancelled, a submission once it has "
        "finished; or a new table while the server holds as many open tables as it takes."
    ),
}

_JOURNAL: Final[Mapping[enum.StrEnum, str]] = {
    JournalCode.FAILED: (
        "A write or sync of the server's journal failed: no line after it is acknowledged, "
        "and the journal takes nothing more until the server restarts and recovers."
    ),
    JournalCode.CLOSED: "A line was handed to a journal that is not started, or closed.",
    JournalCode.NOT_RECOVERED: "The journal was started over segments not yet recovered.",
    JournalCode.BAD_ENTRY: (
        "A complete entry of a journal segment is not one: an unknown kind, no game id or "
        "seat, or a log line that is not a record of its game with a seq."
    ),
    JournalCode.FORK: (
        "A log file holds another line at a seq than the journal (or the journal two "
        "lines at one seq): recovery never overwrites it, and changes nothing."
    ),
    JournalCode.GAP: (
        "Records between the log file's last line and the first seq the journal holds are "
        "in neither: recovery never invents one, and changes nothing."
    ),
}

FAMILIES: Final = (
    Family(
        ReadCode,
        "Reading a log or receipts file (verify steps 1, 2)",
        "log-format",
        "1",
        _READ,
    ),
    Family(
        CanonicalCode,
        "A value outside the data model (NOT_CANONICAL's rule)",
        "log-format",
        "3",
        _CANONICAL,
    ),
    Family(
        FileCode,
        "A file that is not a log (the rule of a failure on its line 1)",
        "log-format",
        "7",
        {
            FileCode.NOT_A_LOG: (
                "The file's first line does not begin as every record does, with "
                '{"body":{, so it is not a log but notes, random bytes or another document '
                "(the failure keeps the reader's or the schema's code)."
            )
        },
    ),
    Family(
        SignatureCode,
        "A refused signature or public key",
        "log-format",
        "5",
        _SIGNATURE,
    ),
    Family(
        VerifyCode,
        "The verifier's checks (verify steps 3 to 7)",
        "log-format",
        "7",
        _VERIFY,
    ),
    Family(
        FlowCode,
        "The match flow (verify steps 7 to 10)",
        "log-format",
        "7",
        _FLOW,
    ),
    Family(
        ViolationCode,
        "The engine's refusal of a move (a bounce's reason)",
        "rules",
        "3",
        _ENGINE,
    ),
    Family(
        SubmissionCode,
        "The table's refusal of a submission it does not log",
        "log-format",
        "9",
        _SUBMISSION,
    ),
    Family(
        TableCode,
        "The table's refusal of a call as a whole (nothing is written)",
        "rules",
        "11",
        _TABLE,
    ),
    Family(
        ReceiptCode,
        "A line of a receipts file that is no receipt",
        "log-format",
        "9",
        _RECEIPT,
    ),
    Family(
        EvidenceCode,
        "Audit: receipts and copies against the log",
        "log-format",
        "10",
        _EVIDENCE,
    ),
    Family(
        PlanCode,
        "A refused tournament plan",
        "tournament",
        None,
        _PLAN,
    ),
    Family(
        TournamentCode,
        "Tournament scoring: what is not scored as planned",
        "tournament-scoring",
        None,
        _TOURNAMENT,
    ),
    Family(
        ServeCode,
        "The server's refusal of a client's message or lobby request",
        "protocol",
        "8",
        _SERVE,
    ),
    Family(
        JournalCode,
        "The server's journal: what it refuses to take or to recover",
        "serving",
        "5",
        _JOURNAL,
    ),
)


def explanations() -> tuple[Explanation, ...]:
    """Every code of every family, in the families' order and each enum's own."""
    return tuple(
        Explanation(code.value, family, family.sentences[code])
        for family in FAMILIES
        for code in family.codes
    )


def explain(name: str) -> tuple[Explanation, ...]:
    """The code ``name`` (any case) in every family that has it; empty when none does."""
    wanted = name.strip().upper()
    return tuple(entry for entry in explanations() if entry.code == wanted)


def close_codes(name: str) -> list[str]:
    """The codes whose names are nearest ``name``, closest first, for a mistyped code."""
    names = list(dict.fromkeys(entry.code for entry in explanations()))
    return difflib.get_close_matches(name.strip().upper(), names, n=3, cutoff=0.6)
