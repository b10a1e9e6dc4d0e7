"""The play protocol of ``racing-demon serve``, version 1 (docs/protocol.md).

What a client sends is read here, once, into typed values (``parse_client_message``); the
host and the WebSocket handler never read a client's raw JSON. What the server sends is
built here as plain dicts shaped as schemas/serve-server-message.schema.json says, one
builder per message type, so that every message of a type has the same members.

The standard library and the package's file-format layer only: no web stack here.
"""

from __future__ import annotations

import enum
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from racing_demon.errors import RacingDemonError
from racing_demon.game.flow import Seen
from racing_demon.log.reader import ReadCode, ReadError, parse_line
from racing_demon.printing import printable
from racing_demon.schema import checked_errors

PROTOCOL_VERSION: Final = 1
MAX_FRAME_BYTES: Final = 4 * 1024  # a client's text frame, in UTF-8 bytes
MAX_REF_CHARS: Final = 64
CLIENT_SCHEMA: Final = "serve-client-message"
SERVER_SCHEMA: Final = "serve-server-message"
LOBBY_SCHEMA: Final = "serve-lobby"

# A refusal quotes the client's own value back; past this it is cut, so that a message
# the server logs stays short whatever the client sent.
_MAX_QUOTED_CHARS: Final = 200


class ServeCode(enum.StrEnum):
    """Why the server refused what a client sent (an ``error`` message on the WebSocket,
    an ``{"error": ...}`` body in the lobby). The values are stable reason codes."""

    # A frame, in the order parse_client_message checks it.
    TOO_LARGE = "TOO_LARGE"
    BAD_JSON = "BAD_JSON"
    NOT_OBJECT = "NOT_OBJECT"
    UNKNOWN_TYPE = "UNKNOWN_TYPE"
    BAD_MESSAGE = "BAD_MESSAGE"
    # A connection.
    RATE_LIMITED = "RATE_LIMITED"
    NOT_SYNCED = "NOT_SYNCED"
    SPECTATOR = "SPECTATOR"
    NOT_ASKED = "NOT_ASKED"
    BAD_SIGNATURE = "BAD_SIGNATURE"
    FORK = "FORK"  # a sync's hash is not the log's: the connection is closed
    SLOW_READER = "SLOW_READER"
    REPLACED = "REPLACED"
    SERVER_STOPPING = "SERVER_STOPPING"
    # The lobby, and the WebSocket upgrade.
    BAD_REQUEST = "BAD_REQUEST"
    NO_SUCH_TABLE = "NO_SUCH_TABLE"
    NO_SUCH_SEAT = "NO_SUCH_SEAT"
    SEAT_TAKEN = "SEAT_TAKEN"
    BAD_KEY = "BAD_KEY"
    BAD_TOKEN = "BAD_TOKEN"
    BAD_ORIGIN = "BAD_ORIGIN"
    TABLE_CLOSED = "TABLE_CLOSED"


class ServeError(RacingDemonError, ValueError):
    """A client's message or request the server refuses, with its code and, when the
    client gave one, the ``ref`` the error message echoes."""

    def __init__(self, message: str, code: ServeCode, ref: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.ref = ref

    def __str__(self) -> str:
        return f"{self.code}: {self.message}"


# -- what a client sends ---------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class ClientSync:
    """``sync``: send me every record from ``from_seq`` on (the first seq I lack);
    ``held_hash``, the chain hash of record ``from_seq - 1`` as I hold it (a fork check)."""

    from_seq: int
    held_hash: str | None = None
    ref: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ClientEntropy:
    """``entropy``: my seat's signature (kind ``entropy``) of the commitment statement."""

    signature: str
    ref: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ClientCosign:
    """``cosign``: my seat's signature (kind ``genesis``) of the genesis body."""

    signature: str
    ref: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ClientSubmit:
    """``submit``: my seat's ``n``-th submission, signed (kind ``submission``) over its
    statement, with the last record I had seen."""

    ref: str
    n: int
    move: str
    seen_seq: int
    seen_hash: str
    signature: str

    @property
    def seen(self) -> Seen:
        return Seen(seq=self.seen_seq, hash=self.seen_hash)


@dataclass(frozen=True, slots=True, kw_only=True)
class ClientAccept:
    """``accept``: my seat's signature (kind ``accept``) of the final body, or None: I
    decline."""

    signature: str | None
    ref: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ClientPong:
    """``pong``: the answer to the server's ``ping`` that named ``nonce``."""

    nonce: str
    ref: str | None = None


ClientMessage = ClientSync | ClientEntropy | ClientCosign | ClientSubmit | ClientAccept | ClientPong

CLIENT_TYPES: Final = ("sync", "entropy", "cosign", "submit", "accept", "pong")


def _quoted(text: str) -> str:
    shown = printable(text)
    return shown if len(shown) <= _MAX_QUOTED_CHARS else shown[:_MAX_QUOTED_CHARS] + "..."


def _ref_of(value: Mapping[str, Any]) -> str | None:
    """The client's ``ref`` when it is one the schema allows, for the error to echo."""
    ref = value.get("ref")
    return ref if isinstance(ref, str) and 1 <= len(ref) <= MAX_REF_CHARS else None


def parse_client_message(text: str) -> ClientMessage:
    """The typed message of one text frame, or ServeError.

    Checked in this order, the first failure the answer: TOO_LARGE (more than 4 KiB of
    UTF-8), BAD_JSON (not one strict JSON value: the log reader's rules, so no duplicate
    key, float, NaN, -0, integer beyond 2^53 - 1 or nesting beyond 32, the reader's code
    named in the message), NOT_OBJECT, UNKNOWN_TYPE (no ``type``, or not one of
    CLIENT_TYPES), BAD_MESSAGE (the message's schema, the first failing path named).
    """
    raw = text.encode("utf-8", "surrogatepass")  # a lone surrogate: NOT_UTF8, so BAD_JSON
    if len(raw) > MAX_FRAME_BYTES:
        raise ServeError(
            f"frame of {len(raw)} bytes, over the {MAX_FRAME_BYTES}-byte limit",
            ServeCode.TOO_LARGE,
        )
    try:
        value = parse_line(1, raw)
    except ReadError as error:
        if error.code is ReadCode.NOT_OBJECT:
            raise ServeError(
                f"{error.message}: a message is a JSON object", ServeCode.NOT_OBJECT
            ) from None
        raise ServeError(f"{error.code}: {_quoted(error.message)}", ServeCode.BAD_JSON) from None
    ref = _ref_of(value)
    kind = value.get("type")
    if not isinstance(kind, str) or kind not in CLIENT_TYPES:
        found = "no type" if kind is None else f"type {_quoted(repr(kind))}"
        raise ServeError(
            f"{found}; a client sends {', '.join(CLIENT_TYPES)}", ServeCode.UNKNOWN_TYPE, ref
        )
    if errors := checked_errors(CLIENT_SCHEMA, value):
        raise ServeError(f"{kind}: {_quoted(errors[0])}", ServeCode.BAD_MESSAGE, ref)
    return _typed(kind, value, ref)


def _typed(kind: str, value: Mapping[str, Any], ref: str | None) -> ClientMessage:
    """The value of a message its schema passed."""
    if kind == "sync":
        return ClientSync(from_seq=value["from"], held_hash=value.get("hash"), ref=ref)
    if kind == "entropy":
        return ClientEntropy(signature=value["signature"], ref=ref)
    if kind == "cosign":
        return ClientCosign(signature=value["signature"], ref=ref)
    if kind == "submit":
        seen = value["seen"]
        return ClientSubmit(
            ref=value["ref"],
            n=value["n"],
            move=value["move"],
            seen_seq=seen["seq"],
            seen_hash=seen["hash"],
            signature=value["signature"],
        )
    if kind == "pong":
        return ClientPong(nonce=value["nonce"], ref=ref)
    return ClientAccept(signature=value["signature"], ref=ref)


# -- what the server sends --------------------------------------------------------------

# json.dumps with these separators, its other options the defaults (ASCII escapes), built
# once: dumps builds an encoder on every call that passes an option.
_ENCODER: Final = json.JSONEncoder(separators=(",", ":"))


def encode(message: Mapping[str, object]) -> str:
    """The text frame that carries ``message``: compact JSON, non-ASCII escaped."""
    return _ENCODER.encode(message)


def _text(data: bytes | str) -> str:
    """Canonical bytes (a line, a body, a statement) as the JSON string that carries them:
    canonical JSON is UTF-8, so the string's UTF-8 is those bytes exactly."""
    return data.decode("utf-8") if isinstance(data, bytes) else data


def welcome(
    *,
    game: str,
    seat: int | None,
    table_key: str,
    seats: Sequence[Mapping[str, object]],
    rules: Mapping[str, object],
    state: str,
) -> dict[str, Any]:
    """The first message on every connection: who the client is at which table.

    ``seats``: one ``{"seat", "name", "kind", "key"}`` per seat, in seat order (``name``
    and ``key`` null while the seat is free); ``table_key``: the table's raw Ed25519
    public key, 64 hex; ``seat``: None for a spectator.
    """
    return {
        "type": "welcome",
        "protocol": PROTOCOL_VERSION,
        "game": game,
        "seat": seat,
        "table_key": table_key,
        "seats": [dict(entry) for entry in seats],
        "rules": dict(rules),
        "state": state,
    }


def record(line: bytes | str) -> dict[str, Any]:
    """One log record, its line exactly as the log holds it, without the newline."""
    return {"type": "record", "line": _text(line)}


def commitment(*, game: str, commitment: str, statement: bytes | str) -> dict[str, Any]:
    """Asks the seat for its entropy: its signature of ``statement``, the canonical
    entropy statement ``{"commitment", "game", "player"}``."""
    return {
        "type": "commitment",
        "game": game,
        "commitment": commitment,
        "statement": _text(statement),
    }


def genesis(body: bytes | str) -> dict[str, Any]:
    """Asks the seat to co-sign the genesis body (its canonical bytes)."""
    return {"type": "genesis", "body": _text(body)}


def pack(*, hand: int, faces: Sequence[str]) -> dict[str, Any]:
    """The seat's own pack for ``hand``, ``p[0..51]`` as faces (``5H``, ``TS``), which the
    client checks against the pack digest of the hand's ``hand_start`` record: without it a
    person's client could not see its own cards. Sent to that seat only."""
    return {"type": "pack", "hand": hand, "cards": list(faces)}


def piles(
    *,
    seq: int,
    hand: int | None,
    phase: str | None,
    clock_ms: int,
    full: bool,
    changed: Mapping[str, object],
) -> dict[str, Any]:
    """The table after record ``seq`` as anyone at it sees it (``serve.live_view``): the
    piles that changed since the last ``piles`` (every pile when ``full``), by id."""
    return {
        "type": "piles",
        "seq": seq,
        "hand": hand,
        "phase": phase,
        "clock_ms": clock_ms,
        "full": full,
        "set": dict(changed),
    }


def moves(*, seq: int, moves: Sequence[str]) -> dict[str, Any]:
    """Every move the seat may submit after record ``seq``, as move text: advice (the
    table judges each submission). To a person's seat only."""
    return {"type": "moves", "seq": seq, "moves": list(moves)}


def receipt(*, ref: str, receipt: bytes | str) -> dict[str, Any]:
    """The table-signed receipt line answering the submission ``ref``."""
    return {"type": "receipt", "ref": ref, "receipt": _text(receipt)}


def final(body: bytes | str) -> dict[str, Any]:
    """Asks the seat to accept the final record's body (its canonical bytes)."""
    return {"type": "final", "body": _text(body)}


def ended(*, verdict: str, log: str, receipts: str | None = None) -> dict[str, Any]:
    """The game is archived and verified: the verdict and where to download the log and,
    for a seat, its receipts."""
    message: dict[str, Any] = {"type": "ended", "verdict": verdict, "log": log}
    if receipts is not None:
        message["receipts"] = receipts
    return message


def seat(*, seat: int, connected: bool) -> dict[str, Any]:
    """Another seat's client connected or went away."""
    return {"type": "seat", "seat": seat, "connected": connected}


def ping(*, nonce: str) -> dict[str, Any]:
    """To a seat's connection: answer ``pong`` with ``nonce`` (its round trip, measured on
    the server's clock: ``serve.round_trips``)."""
    return {"type": "ping", "nonce": nonce}


def stopping(*, in_ms: int) -> dict[str, Any]:
    """The server stops in ``in_ms`` milliseconds, a planned stop (``serve --drain``): play
    goes on until then, and every table resumes when the server is back."""
    return {"type": "stopping", "in_ms": in_ms}


def error_message(code: enum.StrEnum, message: str, ref: str | None = None) -> dict[str, Any]:
    """A protocol error (a ServeCode, or a SubmissionCode), echoing the client's ``ref``."""
    error: dict[str, Any] = {"type": "error", "code": str(code), "message": message}
    if ref is not None:
        error["ref"] = ref
    return error


def error_of(refusal: ServeError) -> dict[str, Any]:
    """The ``error`` message that answers ``refusal``."""
    return error_message(refusal.code, refusal.message, refusal.ref)


# The HTTP status each lobby code is sent with (docs/protocol.md §3); a client goes by the
# code, the status is for people reading the server's logs.
LOBBY_STATUS: Final[Mapping[ServeCode, int]] = {
    ServeCode.BAD_REQUEST: 400,
    ServeCode.BAD_KEY: 400,
    ServeCode.BAD_TOKEN: 403,
    ServeCode.BAD_ORIGIN: 403,
    ServeCode.NO_SUCH_TABLE: 404,
    ServeCode.NO_SUCH_SEAT: 404,
    ServeCode.SEAT_TAKEN: 409,
    ServeCode.TABLE_CLOSED: 409,
    ServeCode.SERVER_STOPPING: 503,
}


def lobby_error(code: ServeCode, message: str) -> dict[str, Any]:
    """The body of a refused lobby request, sent with the status ``LOBBY_STATUS[code]``."""
    return {"error": {"code": str(code), "message": message}}
