"""A player's client for `racing-demon serve`, written from the protocol alone (protocol
version 1, docs/protocol.md), with the `websockets`
library: a second implementation of the wire, beside the server's aiohttp.

The client trusts nothing the table sends. It keeps its own copy of the log, line by line,
and refuses a line that does not extend the table-signed chain (framing, canonical bytes,
schema, the table's signature under the key the welcome named, seq, prev, game:
``verify.table_chain.table_signed``, the audit's own check); it signs its entropy only for
a statement naming its game, its seat and the one commitment the table published; it
co-signs a genesis only with its key at its seat, that commitment, its own entropy and the
rules it expects; it keeps every receipt after checking the table's signature and that the
receipt names the statement it signed; and it accepts the final record only when replaying
its copy with the revealed secret gives exactly that record (the verifier's pass, and the
match flow's own end of the match). Written out, the copy and the receipts are what
``racing-demon audit LOG --receipts ... --against COPY`` reads.

The checks are plain functions and a ``Copy`` class, tested in-process against logs the
package's own ``Table`` writes (tests/serve/test_player.py); ``Player`` puts them on a
WebSocket. A test or bench helper, not part of the package.

A seat's view of the cards (docs/protocol.md §5, ``pack``): the table sends each seat its
own pack after each ``hand_start`` and after a reconnect's catch-up; the client checks it
against that hand's digest and plays from its ``SeatView``: its own piles from its pack
and its own moves, the centre from every record (a move's text names its cards), the
other seats' piles only as counts (their faces are stand-ins). Nothing here reads the
server's data folder: the dealer's secret is known only when the final record reveals it.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import enum
import hashlib
import io
import itertools
import json
import secrets
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidStatus

from racing_demon.game.cards import Card, canonical_pack
from racing_demon.game.deal import check_reveal, pack_digest, uniform_below
from racing_demon.game.engine import advance_clock, apply_move, check_move, legal_moves
from racing_demon.game.flow import (
    HandEnd,
    HandStart,
    MatchEnd,
    RecordKind,
    Seen,
    Stall,
    Submission,
)
from racing_demon.game.moves import Move
from racing_demon.game.rules import Rules
from racing_demon.game.stall import apply_stall
from racing_demon.game.state import State
from racing_demon.log.canonical import canonical_bytes
from racing_demon.log.keys import key_id, raw_public_bytes
from racing_demon.log.reader import DEFAULT_LIMITS, Limits, ReadError
from racing_demon.log.receipts import (
    Receipt,
    ReceiptLine,
    check_receipt_line,
    record_reference,
    submission_hash,
)
from racing_demon.log.records import (
    ACCEPT,
    ENTROPY,
    ENTROPY_VERSION,
    FORMAT_VERSION,
    Final,
    Genesis,
    Record,
    chain_hash,
    entropy_statement,
    parse_record,
    record_body,
    submission_statement,
)
from racing_demon.log.signing import sign
from racing_demon.profiles import ProfileError, rules_from_document
from racing_demon.sim.bots import BotProfile, choose_move
from racing_demon.table import sign_submission
from racing_demon.table.start import Rebuild
from racing_demon.verify import Settings, verify_stream
from racing_demon.verify.report import VerifyCode
from racing_demon.verify.table_chain import ChainBroken, table_signed

PROTOCOL = 1
GENESIS_KIND = "genesis"  # the kind a seat co-signs the genesis body with
FINAL_KIND = "final"
# New submissions a second at most: under the server's 10 (docs/protocol.md §9), with room
# for a submission sent again each second and the other messages.
SEND_RATE = 8.0
SEND_BURST = 10.0


class ClientCode(enum.StrEnum):
    """Why this client refuses to sign or keep what the table sent (besides the copy's
    line checks, whose codes are the reader's and the verifier's)."""

    NOT_CANONICAL = "NOT_CANONICAL"  # a statement or body that is not canonical JSON
    WRONG_GAME = "WRONG_GAME"
    WRONG_SEAT = "WRONG_SEAT"
    WRONG_COMMITMENT = "WRONG_COMMITMENT"  # not the commitment this seat answered
    SECOND_COMMITMENT = "SECOND_COMMITMENT"  # another commitment for a game already answered
    NOT_A_GENESIS = "NOT_A_GENESIS"
    KEY_MISSING = "KEY_MISSING"  # the genesis lists another key (or none) at this seat
    ENTROPY_MISSING = "ENTROPY_MISSING"  # the genesis lists other entropy at this seat
    WRONG_RULES = "WRONG_RULES"
    WRONG_TABLE_KEY = "WRONG_TABLE_KEY"
    AFTER_FINAL = "AFTER_FINAL"
    NOT_THE_NEXT_FINAL = "NOT_THE_NEXT_FINAL"  # the final body does not follow the copy
    SECRET_MISMATCH = "SECRET_MISMATCH"
    COPY_DOES_NOT_REPLAY = "COPY_DOES_NOT_REPLAY"
    SCORES_DIFFER = "SCORES_DIFFER"
    RECEIPT_REFUSED = "RECEIPT_REFUSED"  # bad table signature, or not this seat's statement
    PACK_MISMATCH = "PACK_MISMATCH"  # a pack whose digest is not its hand_start's, or changed
    POSITION_DIFFERS = "POSITION_DIFFERS"  # the table logged a move of this seat it cannot make
    PROTOCOL = "PROTOCOL"  # a server message off the protocol


class ClientRefusal(Exception):
    """What the client refused, with the code that says why."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


def _canonical(text: str, what: str) -> tuple[bytes, dict[str, Any]]:
    """The bytes of ``text`` and its value, refused unless it is canonical JSON of an object."""
    raw = text.encode("utf-8")
    try:
        value = json.loads(raw)
        canonical = canonical_bytes(value)
    except ValueError as error:
        raise ClientRefusal(ClientCode.NOT_CANONICAL, f"{what}: {error}") from None
    if canonical != raw or not isinstance(value, dict):
        raise ClientRefusal(ClientCode.NOT_CANONICAL, f"{what} is not canonical JSON")
    return raw, value


# -- the copy ------------------------------------------------------------------------


class Copy:
    """The client's own copy of the log: each line kept only if it extends the chain that
    the table's key signs (``table_signed``), and nothing after the final record."""

    def __init__(
        self, table_key: bytes, limits: Limits = DEFAULT_LIMITS, *, checked: bool = True
    ) -> None:
        self.table_key = table_key
        self.limits = limits
        self.checked = checked  # False: lines kept unchecked (a benchmark's many clients)
        self.lines: list[bytes] = []
        self.records: list[Record] = []
        self._hand: int | None = None
        self._next_n: dict[int, int] = {}

    def add(self, line: bytes) -> Record:
        """Keep ``line`` (a record's bytes, no newline) as the next line; ClientRefusal,
        keeping nothing, when it does not extend the chain."""
        number = len(self.lines) + 1
        if self.finished:
            raise ClientRefusal(ClientCode.AFTER_FINAL, f"line {number}: a record after the final")
        if not self.checked:
            record = parse_record(json.loads(line)["body"])
        else:
            record = self._checked(number, line)
        self.lines.append(line)
        self.records.append(record)
        payload = record.payload
        if isinstance(payload, HandStart):
            self._hand = payload.hand
        elif isinstance(payload, Submission):
            self._next_n[payload.seat] = payload.n + 1
        return record

    def _checked(self, number: int, line: bytes) -> Record:
        try:
            _, record = table_signed(
                number,
                line,
                table_key=self.table_key,
                limits=self.limits,
                genesis=self.records[0] if self.records else None,
                previous_hash=chain_hash(self.lines[-1]) if self.lines else "",
            )
        except (ReadError, ChainBroken) as error:
            raise ClientRefusal(str(error.code), str(error)) from None
        return record

    @property
    def genesis(self) -> Genesis | None:
        if not self.records:
            return None
        payload = self.records[0].payload
        return payload if isinstance(payload, Genesis) else None

    @property
    def head(self) -> Seen | None:
        """The last record kept, as a submission names what its player had seen."""
        if not self.lines:
            return None
        return Seen(seq=len(self.lines) - 1, hash=chain_hash(self.lines[-1]))

    @property
    def hand(self) -> int | None:
        """The hand in play (the last one dealt), or None before the first deal."""
        return self._hand

    @property
    def finished(self) -> bool:
        return bool(self.records) and isinstance(self.records[-1].payload, Final)

    def next_n(self, seat: int) -> int:
        """The seat's next submission number as the copy shows it."""
        return self._next_n.get(seat, 0)

    def data(self) -> bytes:
        return b"".join(line + b"\n" for line in self.lines)


# -- the seat's view of the cards --------------------------------------------------------


def checked_pack(copy: Copy, seat: int, hand: int, faces: Sequence[str]) -> tuple[Card, ...]:
    """The ``pack`` message's cards, refused unless their digest (docs/deal-spec.md step 8)
    is ``packs[seat]`` of the copy's ``hand_start`` of that hand."""
    started = next(
        (
            record.payload
            for record in reversed(copy.records)
            if isinstance(record.payload, HandStart) and record.payload.hand == hand
        ),
        None,
    )
    if started is None:
        raise ClientRefusal(ClientCode.PROTOCOL, f"a pack for hand {hand} before its hand_start")
    try:
        cards = tuple(Card.from_face(face, seat) for face in faces)
        digest = pack_digest(hand, seat, cards)
    except ValueError as error:
        raise ClientRefusal(ClientCode.PACK_MISMATCH, f"hand {hand}: {error}") from None
    if digest != started.packs[seat]:
        raise ClientRefusal(
            ClientCode.PACK_MISMATCH, f"hand {hand}: the pack is not the one hand_start names"
        )
    return cards


class SeatView:
    """The hand in play as one seat's client can know it, from its own packs and its copy.

    Its own piles are exact: dealt from its pack, changed by its own moves and the stall
    shifts. The centre and the hand's clock, phase and stall bookkeeping are exact too:
    every accepted move's text names its cards, so another seat's move is applied as the
    engine applies it (``apply_move``: the table judged it already). The other seats'
    piles start as stand-ins of the right sizes (their own cards in the canonical order)
    and keep the right sizes (a play takes from a pile by count and puts the named cards
    where they go), which is all a seat's legal moves and the package's bots read of them.
    """

    def __init__(self, rules: Rules, seat: int, seats: int) -> None:
        self.rules, self.seat, self.seats = rules, seat, seats
        self.state: State | None = None  # None between hands, or before the pack came
        self._applied = 1  # records taken into account (the genesis is not a hand's)

    def follow(self, records: Sequence[Record], packs: Mapping[int, Sequence[Card]]) -> None:
        """Take in the copy's new records; stops before a hand whose pack has not come."""
        while self._applied < len(records):
            record = records[self._applied]
            payload = record.payload
            if isinstance(payload, HandStart):
                pack = packs.get(payload.hand)
                if pack is None:
                    return  # the pack follows its hand_start (and a reconnect's catch-up)
                dealt = [
                    pack if seat == self.seat else canonical_pack(seat)
                    for seat in range(self.seats)
                ]
                self.state = State.deal(self.rules, dealt, payload.hand, record.t_ms)
            elif isinstance(payload, HandEnd) or self.state is None:
                self.state = None
            elif isinstance(payload, Stall):
                self.state = _shifted(advance_clock(self.state, record.t_ms))
            elif isinstance(payload, Submission):
                self.state = self._submitted(advance_clock(self.state, record.t_ms), payload)
            self._applied += 1

    def _submitted(self, state: State, submission: Submission) -> State:
        if submission.kind is RecordKind.BOUNCE:
            return state  # a bounce changes nothing but the clock
        move = Move.parse(submission.move)
        if submission.seat == self.seat:
            violation = check_move(state, move)
            if violation is not None:  # this seat's own cards: the table and it disagree
                raise ClientRefusal(
                    ClientCode.POSITION_DIFFERS, f"the table logged {move}: {violation}"
                )
        return apply_move(state, move)


def _shifted(state: State) -> State:
    """A ``stall`` record's shift. The record says it was a shift, not the blocked end;
    the stand-ins could make the engine's stuck test answer otherwise, so it is asked
    with no failed shift behind it (``apply_stall`` then shifts) and the count restored."""
    shifted = apply_stall(dataclasses.replace(state, shifts_since_play=0))
    return dataclasses.replace(shifted, shifts_since_play=state.shifts_since_play + 1)


# -- what the client signs -------------------------------------------------------------


def entropy_answer(
    key: Ed25519PrivateKey,
    statement: str,
    *,
    game: str,
    seat: int,
    commitment: str,
    answered: dict[str, str],
) -> str:
    """This seat's entropy: its signature (kind ``entropy``) over the table's statement,
    refused unless the statement is canonical and names this game, this seat and
    ``commitment`` (the one the message published), and unless this client has answered
    no other commitment for the game (``answered``: game -> commitment, updated)."""
    raw, value = _canonical(statement, "the entropy statement")
    expected = entropy_statement(game, seat, commitment)
    if value.get("game") != game:
        raise ClientRefusal(ClientCode.WRONG_GAME, f"statement names game {value.get('game')!r}")
    if value.get("player") != seat:
        raise ClientRefusal(ClientCode.WRONG_SEAT, f"statement names seat {value.get('player')!r}")
    if value != expected:
        raise ClientRefusal(
            ClientCode.WRONG_COMMITMENT, "the statement is not over the published commitment"
        )
    earlier = answered.setdefault(game, commitment)
    if earlier != commitment:
        raise ClientRefusal(
            ClientCode.SECOND_COMMITMENT,
            f"game {game} asked again with commitment {commitment} after {earlier}",
        )
    return sign(key, ENTROPY, raw, ENTROPY_VERSION)


def genesis_answer(
    key: Ed25519PrivateKey,
    body: str,
    *,
    game: str,
    seat: int,
    commitment: str,
    entropy: str,
    rules_digest: str | None,
    table_key: bytes,
) -> str:
    """This seat's co-signature of the genesis (kind ``genesis``), refused unless the body
    is the canonical genesis of this game, listing this client's key at its seat, the
    commitment it answered, its own entropy, the table key of the welcome and (when
    ``rules_digest`` is given) the rules this client expects."""
    raw, value = _canonical(body, "the genesis body")
    if value.get("kind") != GENESIS_KIND or value.get("seq") != 0:
        raise ClientRefusal(ClientCode.NOT_A_GENESIS, "the body is not a genesis record")
    if value.get("game") != game:
        raise ClientRefusal(ClientCode.WRONG_GAME, f"genesis of game {value.get('game')!r}")
    players = value.get("players")
    mine = players[seat] if isinstance(players, list) and 0 <= seat < len(players) else None
    own_key = raw_public_bytes(key).hex()
    if not isinstance(mine, dict) or mine.get("seat") != seat or mine.get("key") != own_key:
        raise ClientRefusal(ClientCode.KEY_MISSING, f"seat {seat} does not list this client's key")
    if value.get("commitment") != commitment:
        raise ClientRefusal(ClientCode.WRONG_COMMITMENT, "not the commitment this seat answered")
    contributions = value.get("entropy")
    if not isinstance(contributions, list) or seat >= len(contributions):
        raise ClientRefusal(ClientCode.ENTROPY_MISSING, f"no entropy at seat {seat}")
    if contributions[seat] != entropy:
        raise ClientRefusal(ClientCode.ENTROPY_MISSING, f"seat {seat}'s entropy is not its own")
    if value.get("table_key") != key_id(table_key):
        raise ClientRefusal(ClientCode.WRONG_TABLE_KEY, "the genesis names another table key")
    try:
        digest = rules_from_document(value.get("rules")).digest()
    except ProfileError as error:
        raise ClientRefusal(ClientCode.WRONG_RULES, str(error)) from None
    if digest != value.get("rules_sha256") or (rules_digest not in (None, digest)):
        raise ClientRefusal(ClientCode.WRONG_RULES, f"rules {digest}, expected {rules_digest}")
    return sign(key, GENESIS_KIND, raw, FORMAT_VERSION)


def final_answer(key: Ed25519PrivateKey, copy: Copy, body: str) -> str:
    """This seat's acceptance (kind ``accept``) of the final record, refused unless it is
    exactly the record that the copy, replayed with the secret it reveals, makes next:
    the same game, seq, prev and record count, a secret that opens the commitment, and
    the match flow's own end of the match (reason, hand scores, totals, winners)."""
    raw, value = _canonical(body, "the final body")
    genesis, head = copy.genesis, copy.head
    if genesis is None or head is None or value.get("kind") != FINAL_KIND:
        raise ClientRefusal(ClientCode.NOT_THE_NEXT_FINAL, "no genesis in the copy, or no final")
    last = copy.records[-1]
    if (
        value.get("game") != last.game
        or value.get("seq") != head.seq + 1
        or value.get("prev") != head.hash
        or value.get("records") != len(copy.lines)
        or not isinstance(value.get("t_ms"), int)
        or value["t_ms"] < last.t_ms
    ):
        raise ClientRefusal(
            ClientCode.NOT_THE_NEXT_FINAL,
            f"the final body does not follow record {head.seq} of the copy",
        )
    try:
        secret = bytes.fromhex(value["secret"])
    except (KeyError, TypeError, ValueError):
        raise ClientRefusal(ClientCode.SECRET_MISMATCH, "no secret in hex") from None
    if not check_reveal(secret, genesis.commitment):
        raise ClientRefusal(ClientCode.SECRET_MISMATCH, "the secret does not open the commitment")
    rebuilt = Rebuild()
    report = verify_stream(
        io.BytesIO(copy.data()),
        Settings(table_key=copy.table_key, seed=secret, limits=copy.limits),
        "the copy",
        visitors=(rebuilt,),
    )
    finding = report.finding
    if finding is None or finding.code is not VerifyCode.UNFINISHED or rebuilt.flow is None:
        why = "verified as finished" if finding is None else f"{finding.code}: {finding.message}"
        raise ClientRefusal(ClientCode.COPY_DOES_NOT_REPLAY, f"the copy with the secret: {why}")
    end = rebuilt.flow.due()
    if not isinstance(end, MatchEnd):
        raise ClientRefusal(ClientCode.SCORES_DIFFER, "the copy's match is not over")
    expected = Record(
        game=last.game,
        seq=head.seq + 1,
        t_ms=value["t_ms"],
        prev=head.hash,
        payload=Final(end=end, secret=secret.hex(), records=len(copy.lines)),
    )
    if record_body(expected) != value:
        raise ClientRefusal(
            ClientCode.SCORES_DIFFER,
            f"the copy scores {list(end.totals)}, winners {list(end.winners)}; the table's "
            f"final says {value.get('totals')}, winners {value.get('winners')}",
        )
    return sign(key, ACCEPT, raw, FORMAT_VERSION)


def check_receipt(
    copy: Copy, number: int, line: bytes, *, game: str, seat: int, n: int, statement: bytes
) -> Receipt:
    """The receipt ``line`` (the ``number``-th this seat kept) for the submission this
    client sent (``n``, the canonical ``statement`` it signed): refused unless the table
    signed it and it names this game, seat, number and statement.

    A submission carries no hand: the table reads it in the hand in play when it arrives,
    so a move signed just before the next ``hand_start`` is refused (its signature fails)
    by a receipt naming the statement in the new hand (docs/log-format.md §9). The table
    sent that ``hand_start`` before the receipt, so the copy holds it: a refusal may name
    the statement with the copy's hand instead."""
    checked = check_receipt_line(number, line, copy.table_key, copy.limits)
    if not isinstance(checked, ReceiptLine):
        raise ClientRefusal(ClientCode.RECEIPT_REFUSED, str(checked))
    receipt = checked.receipt
    if (receipt.game, receipt.seat, receipt.n) != (game, seat, n):
        raise ClientRefusal(
            ClientCode.RECEIPT_REFUSED,
            f"a receipt for game {receipt.game} seat {receipt.seat} n {receipt.n}",
        )
    named = {submission_hash(statement)}
    if not receipt.logged and copy.hand is not None:
        as_read = {**json.loads(statement), "hand": copy.hand}
        named.add(submission_hash(canonical_bytes(as_read)))
    if receipt.submission not in named:
        raise ClientRefusal(
            ClientCode.RECEIPT_REFUSED,
            f"the receipt names another statement ({receipt.outcome} {receipt.reason}; "
            f"signed in hand {json.loads(statement).get('hand')}, the copy at hand {copy.hand})",
        )
    return receipt


# -- strategies --------------------------------------------------------------------------


@dataclass(frozen=True)
class Turn:
    """What a strategy sees: its seat, the copy, and the hand in play at the table's clock
    as this client guesses it (None between hands, or before its pack came)."""

    seat: int
    copy: Copy
    state: State | None


Strategy = Callable[[Turn], str | None]


def _secure_choice(options: Sequence[Move], /) -> Move:
    return options[secrets.randbelow(len(options))]


def bot_strategy(bot: BotProfile) -> Strategy:
    """Play as the package's bot does (``sim.bots.choose_move``), choices from ``secrets``."""

    def strategy(turn: Turn) -> str | None:
        if turn.state is None:
            return None
        move = choose_move(turn.state, turn.seat, bot, _secure_choice)
        return None if move is None else str(move)

    return strategy


def scripted(moves: Sequence[str]) -> Strategy:
    """Send ``moves`` in order, one per turn, then nothing."""
    queue = iter(moves)

    def strategy(turn: Turn) -> str | None:
        return next(queue, None)

    return strategy


def secure_words() -> Iterator[int]:
    """32-bit words from ``secrets``, for a bot's pauses (``BotProfile.pause_ms``)."""
    while True:
        yield secrets.randbits(32)


def bot_pause(bot: BotProfile) -> Callable[[str | None], float]:
    """The bot's pause after a decision, in seconds."""
    words = secure_words()
    return lambda move: bot.pause_ms(None if move is None else Move.parse(move), words) / 1000


def steady_pause(ms: int) -> Callable[[str | None], float]:
    """About ``ms`` between looks (±25%), a human's pace."""
    words = secure_words()
    return lambda move: (ms * 3 // 4 + uniform_below(ms // 2 + 1, words)) / 1000


# -- the lobby (HTTP + JSON) --------------------------------------------------------------

_NO_PROXY = urllib.request.build_opener(urllib.request.ProxyHandler({}))


class LobbyError(Exception):
    def __init__(self, status: int, body: Any) -> None:
        super().__init__(f"HTTP {status}: {body}")
        self.status = status
        self.body = body

    @property
    def code(self) -> str | None:
        error = self.body.get("error") if isinstance(self.body, dict) else None
        return error.get("code") if isinstance(error, dict) else None


def http(
    base: str, method: str, path: str, body: object = None, timeout: float = 10.0
) -> tuple[int, bytes]:
    """One HTTP request to the server (never through a proxy): status and body bytes."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(base + path, data=data, method=method)
    if data is not None:
        request.add_header("Content-Type", "application/json")
    try:
        with _NO_PROXY.open(request, timeout=timeout) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        with error:
            return error.code, error.read()


def api(base: str, method: str, path: str, body: object = None) -> Any:
    """A lobby call's JSON answer; LobbyError for a 4xx or 5xx."""
    status, data = http(base, method, path, body)
    try:
        value = json.loads(data) if data else None
    except ValueError:
        value = data.decode("utf-8", "replace")
    if status >= 400:
        raise LobbyError(status, value)
    return value


def create_table(
    base: str,
    seats: Sequence[Mapping[str, Any]],
    *,
    name: str = "test table",
    profile: str | None = None,
    rules: Mapping[str, Any] | None = None,
) -> str:
    """Create a table (``POST /api/tables``); its game id."""
    body: dict[str, Any] = {"name": name, "seats": list(seats)}
    if rules is not None:
        body["rules"] = dict(rules)
    else:
        body["profile"] = profile or "nertz"
    answer = api(base, "POST", "/api/tables", body)
    game = answer["game"]
    assert isinstance(game, str)
    return game


@dataclass
class Seat:
    """A joined seat: its game, number, token and the key only this client holds."""

    game: str
    seat: int
    token: str
    key: Ed25519PrivateKey
    ws: str


def join(base: str, game: str, seat: int, name: str, key: Ed25519PrivateKey | None = None) -> Seat:
    """Join seat ``seat`` with a fresh Ed25519 key (or ``key``): the key's public half only
    goes to the server."""
    key = key or Ed25519PrivateKey.generate()
    answer = api(
        base,
        "POST",
        f"/api/tables/{game}/seats/{seat}",
        {"name": name, "key": raw_public_bytes(key).hex()},
    )
    return Seat(game=game, seat=seat, token=answer["token"], key=key, ws=answer["ws"])


def ws_url(base: str, path: str) -> str:
    return "ws" + base.removeprefix("http") + path


# -- the player on the wire ----------------------------------------------------------------


@dataclass(frozen=True)
class Answer:
    """The server's answer to a submission: a receipt, or a protocol error."""

    receipt: Receipt | None
    error: Mapping[str, Any] | None
    seconds: float  # from send to answer
    at: float = field(default_factory=time.monotonic)  # when it came


@dataclass
class _Pending:
    future: asyncio.Future[Answer]
    n: int
    statement: bytes
    sent: float


@dataclass
class Player:
    """One seat's client (or a spectator's, with ``seat=None``): keeps its copy and
    receipts, answers the table's requests after checking them, plays by ``strategy``."""

    base: str
    game: str
    seat: int | None = None
    token: str | None = None
    key: Ed25519PrivateKey | None = None
    out_dir: Path | None = None
    rules_digest: str | None = None
    strategy: Strategy | None = None
    pause: Callable[[str | None], float] = field(default_factory=lambda: steady_pause(250))
    accept_final: bool = True
    reconnect: bool = True
    check_copy: bool = True  # False only where many clients share one CPU (the benchmark)
    timeout: float = 10.0  # per submission, per connect
    # docs/protocol.md §10, "Sending again": with a value, a submission unanswered this
    # many seconds is sent again, unchanged, and again after each reconnect, until its
    # receipt comes (or ``timeout``); without, it fails with its connection.
    resend_s: float | None = None

    copy: Copy | None = None
    welcome: dict[str, Any] | None = None
    receipts: list[bytes] = field(default_factory=list)
    answers: list[Answer] = field(default_factory=list)
    unclaimed: list[Receipt] = field(default_factory=list)  # receipts of frames sent raw
    errors: list[dict[str, Any]] = field(default_factory=list)
    problems: list[ClientRefusal] = field(default_factory=list)
    ended: dict[str, Any] | None = None
    accepted: bool | None = None  # whether this seat accepted the final record
    connects: int = 0
    packs_received: int = 0  # pack messages, a reconnect's included
    timeouts: int = 0  # submissions the strategy sent that got no answer in time
    syncs: list[int] = field(default_factory=list)  # every sync.from this client sent
    last_frame: str = ""  # the last submission, as sent
    # The table as the server shows it (``piles``) and the moves it advises (``moves``),
    # each checked against this seat's own position when ``check_copy``.
    table: dict[str, Any] = field(default_factory=dict)
    advice: list[str] = field(default_factory=list)
    advice_checked: int = 0  # moves messages compared with this seat's own legal moves
    shown_checked: int = 0  # piles messages compared with this seat's own position
    view_problems: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._ws: ClientConnection | None = None
        self._pending: dict[str, _Pending] = {}
        self._refs = itertools.count()
        self._answered: dict[str, str] = {}
        self._held: set[bytes] = set()  # every receipt line kept: one sent again comes twice
        self._reconnected = asyncio.Event()
        self.resent = 0  # submit frames sent again
        self.synced_at: list[float] = []  # time.monotonic() of each connection's sync
        self.repeated = 0  # receipts that came again, the same bytes as one held
        # Each planned stop announced: (time.monotonic() it came, the in_ms it said).
        self.stopping: list[tuple[float, int]] = []
        self._entropy: str | None = None
        self._commitment: str | None = None
        self._logged_n = -1
        self._last_record_at = time.monotonic()
        self.packs: dict[int, tuple[Card, ...]] = {}  # this seat's pack of each hand
        self._view: SeatView | None = None
        self._send_credit, self._credit_at = float(SEND_BURST), time.monotonic()
        self._done = asyncio.Event()
        self._records = asyncio.Event()  # set at every record, for whoever waits on one
        self._copy_file: BinaryIO | None = None
        self._receipts_file: BinaryIO | None = None
        self._mover: asyncio.Task[None] | None = None
        self._final_body: str | None = None  # a final asked before its records came

    # -- files --

    @classmethod
    def for_seat(cls, base: str, seat: Seat, **options: Any) -> Player:
        return cls(base, seat.game, seat.seat, seat.token, seat.key, **options)

    @property
    def copy_path(self) -> Path | None:
        return None if self.out_dir is None else self.out_dir / "copy.jsonl"

    @property
    def receipts_path(self) -> Path | None:
        if self.out_dir is None or self.seat is None:
            return None
        return self.out_dir / f"seat{self.seat}.receipts.jsonl"

    def _append(self, which: str, line: bytes) -> None:
        if self.out_dir is None:
            return
        self.out_dir.mkdir(parents=True, exist_ok=True)
        if which == "copy":
            if self._copy_file is None:
                assert self.copy_path is not None
                self._copy_file = self.copy_path.open("ab")
            file = self._copy_file
        else:
            if self._receipts_file is None:
                assert self.receipts_path is not None
                self._receipts_file = self.receipts_path.open("ab")
            file = self._receipts_file
        file.write(line + b"\n")
        file.flush()

    def close_files(self) -> None:
        for file in (self._copy_file, self._receipts_file):
            if file is not None:
                file.close()
        self._copy_file = self._receipts_file = None

    # -- connection --

    @property
    def url(self) -> str:
        path = f"/ws/{self.game}"
        if self.seat is not None:
            path += f"?seat={self.seat}&token={self.token}"
        return ws_url(self.base, path)

    @property
    def connected(self) -> bool:
        return self._ws is not None

    @property
    def done(self) -> bool:
        return self._done.is_set()

    async def connect(self) -> ClientConnection:
        """Open the WebSocket and sync from the next seq this client lacks."""
        ws = await connect(self.url, proxy=None, open_timeout=self.timeout, max_size=1 << 20)
        self.connects += 1
        copy = self.copy
        start = 0 if copy is None else len(copy.lines)
        self.syncs.append(start)
        sync: dict[str, Any] = {"type": "sync", "from": start}
        if copy is not None and start:  # the last record held: a fork is the server's to report
            sync["hash"] = hashlib.sha256(copy.lines[-1]).hexdigest()
        await ws.send(json.dumps(sync))
        self.synced_at.append(time.monotonic())
        self._ws = ws
        self._reconnected.set()
        return ws

    async def drop(self) -> None:
        """Close the socket as a lost connection would (``run`` reconnects)."""
        ws = self._ws
        if ws is not None:
            await ws.close()

    async def send_raw(self, frame: str | bytes) -> None:
        """Send any frame as it is (a hostile client's)."""
        assert self._ws is not None
        await self._ws.send(frame)

    async def run(self, deadline: float) -> None:
        """Play until the game ends, this client refuses what the table sent, or
        ``deadline`` (``time.monotonic()``) passes (TimeoutError); reconnecting after a
        lost connection until then."""
        if self.strategy is not None:
            self.start_moving(self.strategy, self.pause)
        try:
            while not self.done:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(f"seat {self.seat}: the game did not end in time")
                try:
                    ws = await asyncio.wait_for(self.connect(), left)
                except (OSError, InvalidHandshake, TimeoutError, ConnectionClosed) as failed:
                    if not self.reconnect:
                        raise
                    gone = isinstance(failed, InvalidStatus) and failed.response.status_code == 404
                    if not (gone and await self._ended_from_archive()):
                        await asyncio.sleep(0.2)
                    continue
                try:
                    await asyncio.wait_for(self._read(ws), max(deadline - time.monotonic(), 0))
                except ConnectionClosed:
                    pass
                finally:
                    self._ws = None
                    if self.resend_s is None:  # else each is sent again once reconnected
                        self._fail_pending("connection lost")
                    await ws.close()
                if not self.reconnect and not self.done:
                    return
            if self.ended is not None and self.resend_s is not None:
                await self._receipts_from_archive()
        finally:
            await self.stop_moving()
            self.close_files()

    async def _ended_from_archive(self) -> bool:
        """docs/protocol.md §4: "A finished game has no play connection any more
        (NO_SUCH_TABLE): a client that missed its ``ended`` finds the game in GET /api/games
        and downloads its log and receipts from there". Whether it found the game archived:
        then the records this copy lacks are taken from the archive's log, each checked as
        any record, and the end is the archive's."""
        if self.copy is None:
            return False
        status, data = await asyncio.to_thread(http, self.base, "GET", "/api/games")
        if status != 200:
            return False
        games = json.loads(data)["games"]
        archived = next((entry for entry in games if entry["game"] == self.game), None)
        if archived is None:
            return False  # unknown here, or finished and not archived yet
        log = f"/games/{self.game}.jsonl"
        status, data = await asyncio.to_thread(http, self.base, "GET", log)
        if status != 200:
            return False
        ended: dict[str, Any] = {"type": "ended", "verdict": archived["verdict"], "log": log}
        if self.seat is not None:
            ended["receipts"] = f"/games/{self.game}/seat{self.seat}.receipts.jsonl"
        try:
            for line in data.splitlines()[len(self.copy.lines) :]:
                self._handle({"type": "record", "line": line.decode("utf-8")})
            self._handle(ended)
        except ClientRefusal as refusal:  # as a refused message on the connection
            self.problems.append(refusal)
            self._done.set()
        return True

    async def _receipts_from_archive(self) -> None:
        """docs/protocol.md §4: a receipt the game's end left unanswered (its answer lost,
        then the table closed) is in the archive's receipts file of this seat, which
        ``ended`` names. Each line is checked as any receipt is; those of this seat's
        logged submissions that this client lacks are kept, and answer what still waits."""
        path, copy = self.ended.get("receipts") if self.ended else None, self.copy
        if not isinstance(path, str) or copy is None or self.seat is None:
            return
        status, data = await asyncio.to_thread(http, self.base, "GET", path)
        if status != 200:
            return
        waiting = {submission_hash(p.statement): p for p in self._pending.values()}
        for line in data.splitlines():
            checked = check_receipt_line(len(self.receipts) + 1, line, copy.table_key)
            if line in self._held or not isinstance(checked, ReceiptLine):
                continue
            receipt = checked.receipt
            if receipt.seat != self.seat or not receipt.logged or receipt.seq >= len(copy.lines):
                continue
            if record_reference(copy.lines[receipt.seq], receipt.v) != receipt.record:
                raise ClientRefusal(ClientCode.RECEIPT_REFUSED, f"archive receipt {receipt.seq}")
            self._held.add(line)
            self.receipts.append(line)
            self._append("receipts", line)
            pending = waiting.get(receipt.submission)
            if pending is not None and not pending.future.done():
                answer = Answer(receipt, None, time.perf_counter() - pending.sent)
                self.answers.append(answer)
                pending.future.set_result(answer)

    def start_moving(self, strategy: Strategy, pause: Callable[[str | None], float]) -> None:
        """From now on play by ``strategy``, looking again ``pause`` seconds after each look."""
        self.strategy, self.pause = strategy, pause
        if self._mover is None:
            self._mover = asyncio.get_running_loop().create_task(self._move_loop())

    async def stop_moving(self) -> None:
        """Stop playing by the strategy (this client's own submissions go on)."""
        mover, self._mover = self._mover, None
        if mover is not None:
            mover.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await mover

    async def _read(self, ws: ClientConnection) -> None:
        async for frame in ws:
            try:
                try:
                    message = json.loads(frame)
                except ValueError:
                    raise ClientRefusal(ClientCode.PROTOCOL, f"not JSON: {frame!r:.80}") from None
                self._handle(message)
            except ClientRefusal as refusal:
                self.problems.append(refusal)
                self._done.set()
            if self.done:
                await ws.close()
                return

    def _fail_pending(self, why: str) -> None:
        for pending in self._pending.values():
            if not pending.future.done():
                pending.future.set_exception(ConnectionError(why))
                pending.future.exception()  # whoever still waits gets it; nobody else must
        self._pending.clear()

    # -- messages --

    def _handle(self, message: dict[str, Any]) -> None:
        kind = message.get("type")
        handler = getattr(self, f"_on_{kind}", None)
        if handler is None:
            raise ClientRefusal(ClientCode.PROTOCOL, f"unknown message type {kind!r}")
        try:
            handler(message)
        except (KeyError, TypeError, ValueError, AttributeError) as error:
            # A message without its fields, or fields of the wrong type.
            raise ClientRefusal(ClientCode.PROTOCOL, f"{kind}: {error!r}") from None

    def _on_welcome(self, message: dict[str, Any]) -> None:
        if message.get("protocol") != PROTOCOL or message.get("game") != self.game:
            raise ClientRefusal(ClientCode.PROTOCOL, f"welcome {message!r:.200}")
        if message.get("seat") != self.seat:
            raise ClientRefusal(ClientCode.WRONG_SEAT, f"welcomed at seat {message.get('seat')}")
        table_key = bytes.fromhex(message["table_key"])
        if self.copy is None:
            self.copy = Copy(table_key, checked=self.check_copy)
        elif self.copy.table_key != table_key:
            raise ClientRefusal(ClientCode.WRONG_TABLE_KEY, "another table key than before")
        self.welcome = message

    def _on_record(self, message: dict[str, Any]) -> None:
        assert self.copy is not None, "a record before the welcome"
        line = message["line"].encode("utf-8")
        self.copy.add(line)
        self._append("copy", line)
        self._last_record_at = time.monotonic()
        self._records.set()
        final = self._final_body
        if final is not None and json.loads(final).get("seq") == len(self.copy.lines):
            self._answer_final(final)

    def _on_commitment(self, message: dict[str, Any]) -> None:
        assert self.key is not None and self.seat is not None
        commitment = message["commitment"]
        signature = entropy_answer(
            self.key,
            message["statement"],
            game=self.game,
            seat=self.seat,
            commitment=commitment,
            answered=self._answered,
        )
        self._entropy, self._commitment = signature, commitment
        self._send({"type": "entropy", "signature": signature})

    def _on_genesis(self, message: dict[str, Any]) -> None:
        assert self.key is not None and self.seat is not None and self.copy is not None
        if self._entropy is None or self._commitment is None:
            raise ClientRefusal(ClientCode.ENTROPY_MISSING, "a genesis before any commitment")
        signature = genesis_answer(
            self.key,
            message["body"],
            game=self.game,
            seat=self.seat,
            commitment=self._commitment,
            entropy=self._entropy,
            rules_digest=self.rules_digest,
            table_key=self.copy.table_key,
        )
        self._send({"type": "cosign", "signature": signature})

    def _on_pack(self, message: dict[str, Any]) -> None:
        assert self.copy is not None
        if self.seat is None:
            raise ClientRefusal(ClientCode.PROTOCOL, "a pack sent to a spectator")
        hand = message["hand"]
        cards = checked_pack(self.copy, self.seat, hand, message["cards"])
        self.packs_received += 1
        if self.packs.setdefault(hand, cards) != cards:
            raise ClientRefusal(ClientCode.PACK_MISMATCH, f"hand {hand}: another pack than before")

    def _on_receipt(self, message: dict[str, Any]) -> None:
        assert self.copy is not None and self.seat is not None
        line = message["receipt"].encode("utf-8")
        if line in self._held:  # the answer to a frame sent again: the same bytes, kept once
            self.repeated += 1
            return
        self._held.add(line)
        pending = self._pending.pop(message.get("ref") or "", None)
        if pending is None:
            # A frame sent raw (send_raw): the table signed it all the same, and it is
            # evidence like any other receipt.
            checked = check_receipt_line(len(self.receipts) + 1, line, self.copy.table_key)
            if not isinstance(checked, ReceiptLine) or checked.receipt.seat != self.seat:
                raise ClientRefusal(ClientCode.RECEIPT_REFUSED, f"{checked}")
            self.receipts.append(line)
            self.unclaimed.append(checked.receipt)
            if checked.receipt.logged:
                self._logged_n = max(self._logged_n, checked.receipt.n)
            self._append("receipts", line)
            return
        receipt = check_receipt(
            self.copy,
            len(self.receipts) + 1,
            line,
            game=self.game,
            seat=self.seat,
            n=pending.n,
            statement=pending.statement,
        )
        self.receipts.append(line)
        self._append("receipts", line)
        if receipt.logged:
            self._logged_n = max(self._logged_n, receipt.n)
        answer = Answer(receipt, None, time.perf_counter() - pending.sent)
        self.answers.append(answer)
        if not pending.future.done():
            pending.future.set_result(answer)

    def _on_final(self, message: dict[str, Any]) -> None:
        assert self.copy is not None
        body = message["body"]
        with contextlib.suppress(ValueError, AttributeError, TypeError):
            if json.loads(body).get("seq") > len(self.copy.lines):
                self._final_body = body  # records still on their way: answer once they came
                return
        self._answer_final(body)

    def _answer_final(self, body: str) -> None:
        assert self.key is not None and self.copy is not None
        self._final_body = None
        signature: str | None = None
        if self.accept_final:
            try:
                signature = final_answer(self.key, self.copy, body)
            except ClientRefusal as refusal:
                self.problems.append(refusal)
        self.accepted = signature is not None
        self._send({"type": "accept", "signature": signature})

    def _on_ended(self, message: dict[str, Any]) -> None:
        self.ended = message
        self._done.set()

    def _on_seat(self, message: dict[str, Any]) -> None:
        pass  # another seat came or went: nothing this client keeps

    def _on_ping(self, message: dict[str, Any]) -> None:
        self._send({"type": "pong", "nonce": message["nonce"]})  # the server times it

    def _on_stopping(self, message: dict[str, Any]) -> None:
        in_ms = message["in_ms"]
        if not isinstance(in_ms, int) or in_ms < 0:
            raise ValueError(f"in_ms {in_ms!r}")
        self.stopping.append((time.monotonic(), in_ms))

    def _on_piles(self, message: dict[str, Any]) -> None:
        self.table = {**({} if message["full"] else self.table), **message["set"]}
        if self.check_copy and self.seat is not None:
            self._check_shown(message["seq"])

    def _on_moves(self, message: dict[str, Any]) -> None:
        if self.seat is None:
            raise ClientRefusal(ClientCode.PROTOCOL, "moves sent to a spectator")
        self.advice = list(message["moves"])
        if self.check_copy:
            self._check_advice(message["seq"])

    def _on_error(self, message: dict[str, Any]) -> None:
        self.errors.append(message)
        pending = self._pending.pop(message.get("ref") or "", None)
        if pending is not None and not pending.future.done():
            answer = Answer(None, message, time.perf_counter() - pending.sent)
            self.answers.append(answer)
            pending.future.set_result(answer)

    def _send(self, message: Mapping[str, Any]) -> None:
        ws = self._ws
        assert ws is not None
        task = asyncio.get_running_loop().create_task(ws.send(json.dumps(message)))
        task.add_done_callback(_ignore_closed)

    # -- playing --

    def next_n(self) -> int:
        assert self.copy is not None and self.seat is not None
        return max(self.copy.next_n(self.seat), self._logged_n + 1)

    def _seat_view(self) -> SeatView | None:
        """This seat's ``SeatView``, up to the copy's last record (None before the genesis,
        for a spectator, or once the copy and the view disagree)."""
        copy = self.copy
        if copy is None or copy.genesis is None or self.seat is None:
            return None
        if self._view is None:
            genesis = copy.genesis
            rules = rules_from_document(genesis.rules)
            self._view = SeatView(rules, self.seat, len(genesis.players))
        try:
            self._view.follow(copy.records, self.packs)
        except ClientRefusal as refusal:
            self.problems.append(refusal)
            self._done.set()
            return None
        return self._view

    def _view_at(self, seq: int) -> tuple[bool, State | None]:
        """Whether this seat's position after record ``seq`` is known (the copy ends
        there), and that position (None between hands)."""
        view = self._seat_view()
        if view is None or self.copy is None or seq != len(self.copy.lines) - 1:
            return False, None
        return True, view.state

    def _check_advice(self, seq: int) -> None:
        """docs/protocol.md, ``moves``: exactly the engine's legal moves of this seat in
        its own position after ``seq`` (or, for a countdown's second ``moves``, once play
        starts)."""
        known, state = self._view_at(seq)
        if not known:
            return
        assert self.seat is not None
        expected = [] if state is None else [str(m) for m in legal_moves(state, self.seat)]
        if self.advice != expected and state is not None:
            opened = advance_clock(state, max(state.clock_ms, state.play_start_ms))
            expected = [str(m) for m in legal_moves(opened, self.seat)]
        self.advice_checked += 1
        if self.advice != expected:
            self.view_problems.append(f"moves at {seq}: {self.advice} != {expected}")

    def _check_shown(self, seq: int) -> None:
        """docs/protocol.md, ``piles``: this seat's own piles as its pack and moves make
        them (a demon's top and count, a waste's last three), the foundations as every
        record makes them, and the other seats' piles of the sizes the records give."""
        known, state = self._view_at(seq)
        if not known or state is None:
            return
        self.shown_checked += 1
        own = self.seat
        for number, seat in enumerate(state.seats):
            piles = {
                "demon": seat.demon,
                "stock": seat.stock,
                "waste": seat.waste,
                **{f"w{i + 1}": pile for i, pile in enumerate(seat.work)},
            }
            for name, pile in piles.items():
                shown = self.table.get(f"s{number}.{name}")
                faces = [card.face for card in pile]
                cut = {"demon": 1, "waste": 3}.get(name)
                if name == "stock":
                    expected: Any = {"n": len(pile)}
                elif cut is not None:
                    expected = {"cards": faces[-cut:], "n": len(pile)}
                else:
                    expected = {"cards": faces}
                if number != own:  # stand-ins: only the sizes are this seat's to know
                    shown = (
                        None if shown is None else len(shown.get("cards", [])) + shown.get("n", 0)
                    )
                    expected = len(expected.get("cards", [])) + expected.get("n", 0)
                if shown != expected:
                    self.view_problems.append(f"piles at {seq}: s{number}.{name} {shown}")
        for index, foundation in enumerate(state.foundations):
            levels = [[str(card) for card in level] for level in foundation.levels]
            shown = self.table.get(f"f{index + 1}", {}).get("levels")
            if shown != levels:
                self.view_problems.append(f"piles at {seq}: f{index + 1} {shown} != {levels}")

    def position(self) -> State | None:
        """The hand in play as this seat knows it (``SeatView``), at the table's clock as
        this client guesses it (the last record's time plus the time since it came)."""
        copy = self.copy
        view = self._seat_view()
        if view is None or copy is None:
            return None
        state = view.state
        if state is None:
            return None
        since = int((time.monotonic() - self._last_record_at) * 1000)
        return advance_clock(state, max(copy.records[-1].t_ms + since, state.clock_ms))

    async def _paced(self) -> None:
        """Wait for a turn to send: the server refuses a connection's submissions past 10
        a second (bursts of 20, docs/protocol.md §9), so this client keeps its new ones
        under that, with room for those it sends again and its other messages."""
        now = time.monotonic()
        self._send_credit = min(SEND_BURST, self._send_credit + (now - self._credit_at) * SEND_RATE)
        self._credit_at = now
        if self._send_credit < 1:
            await asyncio.sleep((1 - self._send_credit) / SEND_RATE)
            self._send_credit, self._credit_at = 1.0, time.monotonic()
        self._send_credit -= 1

    async def wait_pack(self, timeout: float) -> None:
        """Until this seat holds its pack of the hand in play and sees its position."""
        deadline = time.monotonic() + timeout
        while self.position() is None:
            if time.monotonic() > deadline or self.done:
                raise TimeoutError(f"seat {self.seat}: no position (no pack) in time")
            await asyncio.sleep(0.02)

    async def wait_records(self, count: int, timeout: float) -> None:
        """Until the copy holds ``count`` records (TimeoutError after ``timeout`` s)."""
        deadline = time.monotonic() + timeout
        while self.copy is None or len(self.copy.lines) < count:
            self._records.clear()
            left = deadline - time.monotonic()
            if left <= 0 or self.done:
                raise TimeoutError(
                    f"seat {self.seat}: {count} records not reached "
                    f"(done: {self.done}, problems: {self.problems})"
                )
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._records.wait(), min(left, 0.5))

    async def submit(
        self,
        move: str,
        *,
        n: int | None = None,
        seen: Seen | None = None,
        signature: str | None = None,
        statement_seat: int | None = None,
    ) -> Answer:
        """Sign and send ``move`` (``n``, ``seen``: by default the next number and the copy's
        head) and wait for the answer. ``signature``/``statement_seat`` let a test send
        what an honest client would not."""
        await self._paced()  # before the clock starts: the answer's time is the server's
        copy, ws = self.copy, self._ws
        assert copy is not None and self.key is not None and self.seat is not None
        if ws is None:
            raise ConnectionError("not connected")
        seen = seen or copy.head
        hand = copy.hand
        assert seen is not None and hand is not None, "nothing to move in before the first deal"
        n = self.next_n() if n is None else n
        seat = self.seat if statement_seat is None else statement_seat
        statement = canonical_bytes(submission_statement(self.game, hand, seat, n, move, seen))
        if signature is None:
            signature = sign_submission(self.key, self.game, hand, seat, n, move, seen)
        ref = f"s{self.seat}-{next(self._refs)}"
        future: asyncio.Future[Answer] = asyncio.get_running_loop().create_future()
        self._pending[ref] = _Pending(future, n, statement, time.perf_counter())
        message = {
            "type": "submit",
            "ref": ref,
            "n": n,
            "move": move,
            "seen": {"seq": seen.seq, "hash": seen.hash},
            "signature": signature,
        }
        self.last_frame = json.dumps(message)
        try:
            if self.resend_s is None:
                await ws.send(self.last_frame)
                return await asyncio.wait_for(future, self.timeout)
            return await self._until_answered(self.last_frame, future)
        finally:
            self._pending.pop(ref, None)

    async def _until_answered(self, frame: str, future: asyncio.Future[Answer]) -> Answer:
        """Send ``frame``, and again every ``resend_s`` and after each reconnect, until
        its answer comes (TimeoutError after ``timeout``)."""
        assert self.resend_s is not None
        deadline = time.monotonic() + self.timeout
        first = True
        while True:
            ws = self._ws
            if ws is not None:
                with contextlib.suppress(ConnectionClosed):
                    await ws.send(frame)
                    self.resent += 0 if first else 1
                    first = False
            self._reconnected.clear()
            reconnected = asyncio.ensure_future(self._reconnected.wait())
            await asyncio.wait(
                {future, reconnected}, timeout=self.resend_s, return_when="FIRST_COMPLETED"
            )
            reconnected.cancel()
            if future.done():
                return future.result()
            if time.monotonic() > deadline:
                raise TimeoutError(f"seat {self.seat}: no receipt in {self.timeout} s")

    async def _move_loop(self) -> None:
        assert self.seat is not None
        move: str | None = None
        while not self.done:
            await asyncio.sleep(self.pause(move))
            copy, strategy = self.copy, self.strategy
            move = None
            if copy is None or not self.connected or copy.hand is None or copy.finished:
                continue
            assert strategy is not None
            move = strategy(Turn(self.seat, copy, self.position()))
            if move is not None:
                try:
                    await self.submit(move)
                except TimeoutError:
                    self.timeouts += 1
                except (ConnectionError, ConnectionClosed):
                    pass  # run() reconnects; the copy tells what became of the move


def _ignore_closed(task: asyncio.Task[None]) -> None:
    """A message sent as the connection closed is lost with it: ``run`` reconnects."""
    if not task.cancelled():
        task.exception()
