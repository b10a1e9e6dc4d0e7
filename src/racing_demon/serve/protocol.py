"""The play protocol of ``racing-demon serve``, version 1: the host's minimal stand-in.

The protocol helper's module (docs/protocol.md, the schemas) replaces this one at the merge;
it keeps these names and signatures: ``ServeCode``, ``ServeError``, the typed client
messages and ``parse_client_message``, and one builder per server message. Here the client
messages are checked by hand, field by field, without the schemas.
"""

from __future__ import annotations

import enum
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from racing_demon.errors import RacingDemonError
from racing_demon.game.flow import Seen

PROTOCOL_VERSION: Final = 1
MAX_FRAME_BYTES: Final = 16 * 1024
MAX_REF_CHARS: Final = 64
_SIGNATURE = re.compile(r"[0-9a-f]{128}")
_HASH = re.compile(r"[0-9a-f]{64}")


class ServeCode(enum.StrEnum):
    """Why the server refused what a client sent."""

    TOO_LARGE = "TOO_LARGE"
    BAD_JSON = "BAD_JSON"
    NOT_OBJECT = "NOT_OBJECT"
    UNKNOWN_TYPE = "UNKNOWN_TYPE"
    BAD_MESSAGE = "BAD_MESSAGE"
    RATE_LIMITED = "RATE_LIMITED"
    NOT_SYNCED = "NOT_SYNCED"
    SPECTATOR = "SPECTATOR"
    NOT_ASKED = "NOT_ASKED"
    BAD_SIGNATURE = "BAD_SIGNATURE"
    SLOW_READER = "SLOW_READER"
    SERVER_STOPPING = "SERVER_STOPPING"
    BAD_REQUEST = "BAD_REQUEST"
    NO_SUCH_TABLE = "NO_SUCH_TABLE"
    NO_SUCH_SEAT = "NO_SUCH_SEAT"
    SEAT_TAKEN = "SEAT_TAKEN"
    BAD_KEY = "BAD_KEY"
    BAD_TOKEN = "BAD_TOKEN"
    BAD_ORIGIN = "BAD_ORIGIN"
    TABLE_CLOSED = "TABLE_CLOSED"


class ServeError(RacingDemonError, ValueError):
    """A client's message or request the server refuses, with its code and the client's
    ``ref``, if it gave one."""

    def __init__(self, message: str, code: ServeCode, ref: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.ref = ref


@dataclass(frozen=True, slots=True, kw_only=True)
class ClientSync:
    from_seq: int
    ref: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ClientEntropy:
    signature: str
    ref: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ClientCosign:
    signature: str
    ref: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ClientSubmit:
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
    signature: str | None
    ref: str | None = None


ClientMessage = ClientSync | ClientEntropy | ClientCosign | ClientSubmit | ClientAccept


def _reject_constant(name: str) -> None:
    raise ValueError(f"{name} is not JSON")


def parse_client_message(text: str) -> ClientMessage:
    """The typed message of one text frame, or ServeError."""
    raw = text.encode("utf-8", "surrogatepass")
    if len(raw) > MAX_FRAME_BYTES:
        raise ServeError(f"frame of {len(raw)} bytes", ServeCode.TOO_LARGE)
    try:
        value = json.loads(text, parse_constant=_reject_constant)
    except ValueError as error:
        raise ServeError(f"not JSON: {error}", ServeCode.BAD_JSON) from None
    if not isinstance(value, dict):
        raise ServeError("a message is a JSON object", ServeCode.NOT_OBJECT)
    ref = value.get("ref")
    ref = ref if isinstance(ref, str) and 1 <= len(ref) <= MAX_REF_CHARS else None
    kind = value.get("type")
    try:
        return _typed(kind, value, ref)
    except (KeyError, TypeError) as error:
        raise ServeError(f"{kind}: {error}", ServeCode.BAD_MESSAGE, ref) from None


def _field(value: Mapping[str, Any], name: str, kind: type) -> Any:
    found = value[name]
    if not isinstance(found, kind) or isinstance(found, bool) != (kind is bool):
        raise TypeError(f"{name} is not a {kind.__name__}")
    return found


def _seq(value: Mapping[str, Any], name: str) -> int:
    number: int = _field(value, name, int)
    if number < 0:
        raise TypeError(f"{name} is negative")
    return number


def _signature(value: Mapping[str, Any]) -> str:
    signature: str = _field(value, "signature", str)
    if not _SIGNATURE.fullmatch(signature):
        raise TypeError("signature is not 128 lowercase hex")
    return signature


def _typed(kind: object, value: Mapping[str, Any], ref: str | None) -> ClientMessage:
    if kind == "sync":
        return ClientSync(from_seq=_seq(value, "from"), ref=ref)
    if kind == "entropy":
        return ClientEntropy(signature=_signature(value), ref=ref)
    if kind == "cosign":
        return ClientCosign(signature=_signature(value), ref=ref)
    if kind == "accept":
        declined = value.get("signature", "") is None
        return ClientAccept(signature=None if declined else _signature(value), ref=ref)
    if kind == "submit":
        if ref is None:
            raise TypeError("ref is not a string of 1 to 64 characters")
        seen = _field(value, "seen", dict)
        seen_hash: str = _field(seen, "hash", str)
        if not _HASH.fullmatch(seen_hash):
            raise TypeError("seen.hash is not 64 lowercase hex")
        return ClientSubmit(
            ref=ref,
            n=_seq(value, "n"),
            move=_field(value, "move", str),
            seen_seq=_seq(seen, "seq"),
            seen_hash=seen_hash,
            signature=_signature(value),
        )
    raise ServeError(f"unknown type {kind!r}", ServeCode.UNKNOWN_TYPE, ref)


def _text(data: bytes | str) -> str:
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
    return {"type": "record", "line": _text(line)}


def commitment(*, game: str, commitment: str, statement: bytes | str) -> dict[str, Any]:
    return {
        "type": "commitment",
        "game": game,
        "commitment": commitment,
        "statement": _text(statement),
    }


def genesis(body: bytes | str) -> dict[str, Any]:
    return {"type": "genesis", "body": _text(body)}


def pack(*, hand: int, faces: Sequence[str]) -> dict[str, Any]:
    return {"type": "pack", "hand": hand, "cards": list(faces)}


def receipt(*, ref: str, receipt: bytes | str) -> dict[str, Any]:
    return {"type": "receipt", "ref": ref, "receipt": _text(receipt)}


def final(body: bytes | str) -> dict[str, Any]:
    return {"type": "final", "body": _text(body)}


def ended(*, verdict: str, log: str, receipts: str | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"type": "ended", "verdict": verdict, "log": log}
    if receipts is not None:
        message["receipts"] = receipts
    return message


def seat(*, seat: int, connected: bool) -> dict[str, Any]:
    return {"type": "seat", "seat": seat, "connected": connected}


def error_message(code: enum.StrEnum, message: str, ref: str | None = None) -> dict[str, Any]:
    error: dict[str, Any] = {"type": "error", "code": str(code), "message": message}
    if ref is not None:
        error["ref"] = ref
    return error


def error_of(refusal: ServeError) -> dict[str, Any]:
    return error_message(refusal.code, refusal.message, refusal.ref)


LOBBY_STATUS: Final[Mapping[ServeCode, int]] = {
    ServeCode.BAD_REQUEST: 400,
    ServeCode.BAD_KEY: 400,
    ServeCode.BAD_TOKEN: 403,
    ServeCode.BAD_ORIGIN: 403,
    ServeCode.NO_SUCH_TABLE: 404,
    ServeCode.NO_SUCH_SEAT: 404,
    ServeCode.SEAT_TAKEN: 409,
    ServeCode.TABLE_CLOSED: 409,
}


def lobby_error(code: ServeCode, message: str) -> dict[str, Any]:
    return {"error": {"code": str(code), "message": message}}
