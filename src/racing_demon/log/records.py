"""Log records as typed values: parsed once from a body, written back by one writer.

A line is the canonical JSON of ``{"body": {...}, "sigs": {...}}`` (docs/log-format.md §6).
Every body has the chain's fields (``v``, ``game``, ``seq``, ``prev`` but on the genesis,
``t_ms``, ``kind``); the rest is the record's payload: the genesis, or one event of the
match flow (``racing_demon.game.flow``), or the final record. ``parse_record`` reads a body
that its schema (schemas/log-record.schema.json) admitted, and ``record_body`` writes one;
a test proves the two agree with the schema over the whole corpus.

The table signs ``pae(kind, canonical(body), v)`` for every record; a player with a key
signs the submission ``{game, hand, move, n, player}`` (and in format v2 ``seen``, the last
record it had seen) before the table orders it, because a player cannot know the record's
place in the chain (seq, prev) or whether its move lands. In format v2 each keyed player's
entropy contribution is its signature over the dealer's commitment, and players may accept
the final record by signing it. The log calls a seat index ``player``; the typed values
call it ``seat``.

Records and events are frozen dataclasses whose fields are given by name, so that no
call site can swap two adjacent ints. The genesis's parts (a seat's entry, the tournament
tag) are named tuples built by name: other modules read them as plain pairs and rows.
"""

from __future__ import annotations

import enum
import hashlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

from racing_demon.game.deal import Dealer, MatchSeed
from racing_demon.game.duplicate import DuplicateDeal, Shape
from racing_demon.game.flow import (
    Event,
    FinalReason,
    HandEnd,
    HandStart,
    MatchEnd,
    RecordKind,
    Seen,
    Stall,
    Submission,
)
from racing_demon.game.state import EndReason
from racing_demon.log.canonical import canonical_bytes

FORMAT_VERSION = 4  # what the table writes; the verifier reads every version in VERSIONS
VERSIONS = (1, 2, 3, 4)
NOTE_VERSION = 3  # the first format with records the match flow does not judge (NOTE_KINDS)
LOST_TO_VERSION = 4  # the first format whose bounces name the record they lost a race to
# The formats a table continues after a restart: a server upgraded mid-match goes on writing
# the format its log began in (v1 has no ``seen`` and no acceptances, which a table needs).
TABLE_VERSIONS = (2, 3, 4)
# The signature kinds of what players sign beside the records (docs/log-format.md §5-§6).
SUBMISSION = "submission"  # a player's own statement of a move
ENTROPY = "entropy"  # a player's contribution to the deal, answering the commitment (v2)
ACCEPT = "accept"  # a player's acceptance of the final record (v2)
ENTROPY_VERSION = 2  # an entropy contribution is a statement of format v2 in every version
# How far back a v2 submission may name the record its player had seen: a verifier keeps
# this many line hashes, so its memory stays flat, and a client that has fallen further
# behind the records the table publishes must catch up before it moves.
SEEN_WINDOW = 4096


class SeatEntry(NamedTuple):
    """One seat as the genesis lists it: who sits there, their pack's back, their key."""

    seat: int
    name: str
    back: str
    key: str | None  # hex of the raw Ed25519 public key, when the player signs


class TournamentTag(NamedTuple):
    """The duplicate tournament a table's match belongs to, as its genesis names it
    (docs/tournament.md): its packs are the plan's, not the seats' own."""

    name: str
    table: int  # from 1
    tables: int
    hands: int
    entropy: str  # the plan's entropy digest, hex
    plan: str  # the plan's commitment (``Plan.digest``), hex


@dataclass(frozen=True, slots=True, kw_only=True)
class Genesis:
    """The first record: the rules, the seats, the keys and the dealer's commitment."""

    software: str
    rules: Mapping[str, Any]  # the rules document as the log holds it (read-only)
    rules_sha256: str
    players: tuple[SeatEntry, ...]
    table_key: str  # the key id of the table's public key
    commitment: str
    entropy: tuple[str, ...]  # each seat's contribution, hex
    tournament: TournamentTag | None = None  # a duplicate tournament's table

    @property
    def kind(self) -> RecordKind:
        return RecordKind.GENESIS

    def dealer(self, secret: bytes) -> Dealer:
        """What deals this match once ``secret`` (the one the commitment hides) is known:
        the table's and the verifier's, replay's and a resumed table's alike.

        A single match deals from the secret and every seat's entropy (docs/deal-spec.md,
        step 3). A tournament's table deals the plan's packs from the secret and the
        tournament's own entropy digest, rotated for its table (docs/tournament.md): the
        seats' entropy does not feed it. Raises ValueError for values that deal nothing
        (step 7 of the verifier refuses those first, with its codes).
        """
        tag = self.tournament
        if tag is None:
            return MatchSeed.from_secret(secret, [bytes.fromhex(part) for part in self.entropy])
        shape = Shape(tag.name, tag.tables, len(self.players), tag.hands)
        return DuplicateDeal(shape, shape.seed(secret, bytes.fromhex(tag.entropy)), tag.table)


@dataclass(frozen=True, slots=True, kw_only=True)
class Final:
    """The last record: the match's end, the dealer's revealed secret, the record count."""

    end: MatchEnd
    secret: str  # hex
    records: int  # how many records come before this one

    @property
    def kind(self) -> RecordKind:
        return RecordKind.FINAL


class PauseCause(enum.StrEnum):
    """Why a table stopped before it resumed (a ``pause`` record's ``cause``)."""

    PLANNED = "planned"  # the server stopped cleanly when asked (SIGTERM, or SIGINT)
    CRASH = "crash"  # anything else: a kill, a fault, a power cut, a failed journal


@dataclass(frozen=True, slots=True, kw_only=True)
class Pause:
    """(v3) The table resumed after it was down. The table's clock did not run meanwhile:
    the record's ``t_ms`` goes on from the record before it, so no timed rule counted the
    time the server was down. ``down_ms`` is that time by the server's wall clock: its
    word, which nothing in the log can check."""

    cause: PauseCause
    down_ms: int

    @property
    def kind(self) -> RecordKind:
        return RecordKind.PAUSE


@dataclass(frozen=True, slots=True, kw_only=True)
class Lag:
    """(v3) Each seat's round trips, in ms, measured by the server since its last ``lag``
    record (oldest first; none for a seat it measured nothing for): what anyone judging a
    race can weigh. The server's word, like the receive times."""

    rtt_ms: tuple[tuple[int, ...], ...]  # one tuple per seat, in seat order

    @property
    def kind(self) -> RecordKind:
        return RecordKind.LAG


Note = Pause | Lag  # what the log tells beside the match
NOTE_KINDS = frozenset({RecordKind.PAUSE, RecordKind.LAG})
Payload = Genesis | HandStart | Submission | Stall | HandEnd | Final | Pause | Lag


@dataclass(frozen=True, slots=True, kw_only=True)
class Record:
    """One record: its place in the chain and what it tells."""

    game: str
    seq: int
    t_ms: int
    prev: str | None  # the previous line's hash; None on the genesis
    payload: Payload
    v: int = FORMAT_VERSION  # the log format

    @property
    def kind(self) -> RecordKind:
        return self.payload.kind


class Signatures(NamedTuple):
    """A line's ``sigs`` (docs/log-format.md §6), each signature as 128 hex characters.

    Built by name (tests/test_records.py holds every call in the package to it). A named
    tuple, since one is made for every line: with this and ``RecordLine`` as frozen
    dataclasses, ``verify --fast`` cost 4.5% more instructions than before either existed,
    against 2.8% as named tuples (tests/golden/logs/nertz-4p-signed.jsonl)."""

    table: str  # the table's, over the body: on every line
    player: str | None = None  # a keyed seat's, over its submission's statement
    players: tuple[str, ...] | None = None  # the genesis's co-signatures, one per seat
    accepts: tuple[str | None, ...] | None = None  # (v2) the final record's, null or not


# -- reading -------------------------------------------------------------------------


def parse_record(body: Mapping[str, Any]) -> Record:
    """The typed record of a body that the log-record schema admitted."""
    payload = _PARSERS[body["kind"]](body)
    return Record(
        game=body["game"],
        seq=body["seq"],
        t_ms=body["t_ms"],
        prev=body.get("prev"),
        payload=payload,
        v=body["v"],
    )


def parse_signatures(sigs: Mapping[str, Any]) -> Signatures:
    """The typed ``sigs`` of a line that its schema (a record's or a receipt's) admitted."""
    players = sigs.get("players")
    accepts = sigs.get("accepts")
    return Signatures(
        table=sigs["table"],
        player=sigs.get("player"),
        players=None if players is None else tuple(players),
        accepts=None if accepts is None else tuple(accepts),
    )


def _genesis(body: Mapping[str, Any]) -> Genesis:
    return Genesis(
        software=body["software"],
        rules=body["rules"],
        rules_sha256=body["rules_sha256"],
        players=tuple(
            SeatEntry(seat=entry["seat"], name=entry["name"], back=entry["back"], key=entry["key"])
            for entry in body["players"]
        ),
        table_key=body["table_key"],
        commitment=body["commitment"],
        entropy=tuple(body["entropy"]),
        tournament=_tournament(body.get("tournament")),
    )


def _tournament(member: Mapping[str, Any] | None) -> TournamentTag | None:
    if member is None:
        return None
    return TournamentTag(
        name=member["name"],
        table=member["table"],
        tables=member["tables"],
        hands=member["hands"],
        entropy=member["entropy"],
        plan=member["plan"],
    )


def _submission(body: Mapping[str, Any]) -> Submission:
    seen, lost_to = body.get("seen"), body.get("lost_to")
    return Submission(
        kind=_KINDS[body["kind"]],
        hand=body["hand"],
        seat=body["player"],
        n=body["n"],
        move=body["move"],
        reason=body.get("reason"),
        seen=None if seen is None else Seen(seq=seen["seq"], hash=seen["hash"]),
        lost_to=None if lost_to is None else Seen(seq=lost_to["seq"], hash=lost_to["hash"]),
    )


def _final(body: Mapping[str, Any]) -> Final:
    end = MatchEnd(
        reason=FinalReason(body["reason"]),
        hands=tuple(tuple(hand) for hand in body["hands"]),
        totals=tuple(body["totals"]),
        winners=tuple(body["winners"]),
    )
    return Final(end=end, secret=body["secret"], records=body["records"])


_KINDS = {kind.value: kind for kind in RecordKind}  # RecordKind(...) costs ten times more
_PARSERS: dict[str, Callable[[Mapping[str, Any]], Payload]] = {
    RecordKind.GENESIS: _genesis,
    RecordKind.HAND_START: lambda body: HandStart(hand=body["hand"], packs=tuple(body["packs"])),
    RecordKind.STALL: lambda body: Stall(hand=body["hand"]),
    RecordKind.HAND_END: lambda body: HandEnd(
        hand=body["hand"], reason=EndReason(body["reason"]), scores=tuple(body["scores"])
    ),
    RecordKind.FINAL: _final,
    RecordKind.PAUSE: lambda body: Pause(cause=PauseCause(body["cause"]), down_ms=body["down_ms"]),
    RecordKind.LAG: lambda body: Lag(rtt_ms=tuple(tuple(seat) for seat in body["rtt_ms"])),
    **{
        kind: _submission
        for kind in (
            RecordKind.MOVE,
            RecordKind.TIE,
            RecordKind.CALL,
            RecordKind.AGREE,
            RecordKind.RESIGN,
            RecordKind.BOUNCE,
        )
    },
}


# -- writing -------------------------------------------------------------------------


def record_body(record: Record) -> dict[str, Any]:
    """The body that the log holds for ``record``: the one place a body is written."""
    body: dict[str, Any] = {
        "v": record.v,
        "game": record.game,
        "seq": record.seq,
        "t_ms": record.t_ms,
        "kind": record.kind.value,
        **payload_fields(record.payload),
    }
    if record.prev is not None:
        body["prev"] = record.prev
    return body


def payload_fields(payload: Payload) -> dict[str, Any]:
    """The body's fields that hold ``payload``."""
    if isinstance(payload, Submission):
        fields: dict[str, Any] = {
            "hand": payload.hand,
            "player": payload.seat,
            "n": payload.n,
            "move": payload.move,
        }
        if payload.reason is not None:
            fields["reason"] = payload.reason
        if payload.seen is not None:
            fields["seen"] = _seen_fields(payload.seen)
        if payload.lost_to is not None:
            fields["lost_to"] = _seen_fields(payload.lost_to)
        return fields
    if isinstance(payload, HandStart):
        return {"hand": payload.hand, "packs": list(payload.packs)}
    if isinstance(payload, Stall):
        return {"hand": payload.hand}
    if isinstance(payload, HandEnd):
        return {"hand": payload.hand, "reason": payload.reason.value, "scores": [*payload.scores]}
    if isinstance(payload, Pause):
        return {"cause": payload.cause.value, "down_ms": payload.down_ms}
    if isinstance(payload, Lag):
        return {"rtt_ms": [list(seat) for seat in payload.rtt_ms]}
    if isinstance(payload, Final):
        end = payload.end
        return {
            "reason": end.reason.value,
            "hands": [list(hand) for hand in end.hands],
            "totals": list(end.totals),
            "winners": list(end.winners),
            "secret": payload.secret,
            "records": payload.records,
        }
    fields = {
        "software": payload.software,
        "rules": payload.rules,
        "rules_sha256": payload.rules_sha256,
        "players": [
            {"seat": entry.seat, "name": entry.name, "back": entry.back, "key": entry.key}
            for entry in payload.players
        ],
        "table_key": payload.table_key,
        "commitment": payload.commitment,
        "entropy": list(payload.entropy),
    }
    tag = payload.tournament
    if tag is not None:  # a single match's genesis has no such member
        fields["tournament"] = tag._asdict()
    return fields


def event_of(payload: Payload) -> Event | None:
    """The match-flow event a record tells (the final record's is the match's end); the
    genesis tells none (it sets the match up), nor does a note (a pause, the round trips):
    the match does not see them."""
    if isinstance(payload, Final):
        return payload.end
    if isinstance(payload, (Submission, HandStart, Stall, HandEnd)):  # most are submissions
        return payload
    return None


def submission_statement(
    game: str, hand: int, seat: int, n: int, move: str, seen: Seen | None = None
) -> dict[str, Any]:
    """What a player signs: its seat's n-th submission of this game, before the table
    orders it (so without its kind, which the table decides), and in format v2 the last
    record it had seen."""
    statement: dict[str, Any] = {"game": game, "hand": hand, "move": move, "n": n, "player": seat}
    if seen is not None:
        statement["seen"] = _seen_fields(seen)
    return statement


def statement_of(game: str, submission: Submission) -> dict[str, Any]:
    """The statement the player of ``submission`` signed."""
    return submission_statement(
        game, submission.hand, submission.seat, submission.n, submission.move, submission.seen
    )


def statement_version(kind: str, version: int = FORMAT_VERSION) -> int:
    """The format version whose PAE (docs/log-format.md §5) a player at a table writing
    format ``version`` signs a ``kind`` statement under: the log's, but for an entropy
    contribution, which is signed before the genesis exists and is format v2's in every
    version that has one (so a keyed seat's contribution, and the deal, are the same)."""
    return ENTROPY_VERSION if kind == ENTROPY else version


def entropy_statement(game: str, seat: int, commitment: str) -> dict[str, Any]:
    """What a keyed player signs, in format v2, to make its entropy contribution: the
    dealer's commitment for this game, which must therefore exist first."""
    return {"commitment": commitment, "game": game, "player": seat}


def _seen_fields(seen: Seen) -> dict[str, Any]:
    return {"hash": seen.hash, "seq": seen.seq}


def line_bytes(body: Mapping[str, Any], sigs: Mapping[str, Any]) -> bytes:
    """One log line, without its newline."""
    return canonical_bytes({"body": body, "sigs": sigs})


_BODY_START = b'{"body":'
_SIGS_START = b',"sigs":'
# How every record line begins: canonical form sorts "body" before "sigs", and the body is
# an object. A line that begins otherwise fails steps 1-3, whatever follows.
RECORD_START = _BODY_START + b"{"
_UTF8_BOM = b"\xef\xbb\xbf"


def could_start_record(raw: bytes) -> bool:
    """Whether ``raw`` begins as a record line does, or, shorter than RECORD_START, as far
    as it goes: what a write cut short can leave. Random bytes, notes or another JSON
    document do not. A UTF-8 byte order mark before it is let pass: that is a log an
    editor saved, which the reader refuses as such (``BOM``)."""
    raw = raw.removeprefix(_UTF8_BOM)
    return raw[: len(RECORD_START)] == RECORD_START[: len(raw)]


def body_bytes(line: bytes) -> bytes:
    """The canonical bytes of a canonical line's body, cut from the line, not re-encoded.

    A canonical record is ``{"body":BODY,"sigs":SIGS}`` (keys sorted) and SIGS holds only
    hex strings, so the last ``,"sigs":`` is the one that ends BODY, whatever BODY holds.
    """
    return line[len(_BODY_START) : line.rindex(_SIGS_START)]


def chain_hash(line: bytes) -> str:
    """What the next record's ``prev`` holds: SHA-256 of the line's bytes, without the newline."""
    return hashlib.sha256(line).hexdigest()


def body_hash(line: bytes) -> str:
    """SHA-256 hex of a canonical line's body bytes: what the table signed, which nobody
    else can change (a v3 receipt names a record so, docs/log-format.md §9)."""
    return hashlib.sha256(body_bytes(line)).hexdigest()
