"""Tampering with logs, for tests and corpus generation only.

``reseal`` re-numbers, re-chains and re-signs record values from an index on, as a dishonest
table holding its key would; the edits below describe a disputed log declaratively, as
explicit changes at explicit line numbers of a valid one, and ``apply_edits`` makes it
(re-signing through ``reseal``). Each edit first checks that its line holds what it expects,
so an edit of a base that changed stops with a message instead of editing another record.

Nothing here checks what it signs: it signs whatever it is given with the key it is given,
bodies the log-record schema refuses included (the hostile tests need those, which is why it
is built on the log's primitives and not on ``parse_record`` and the writer). A real log is
written by ``racing_demon.log.writer`` only.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from racing_demon.errors import RacingDemonError
from racing_demon.game.flow import SUBMISSION_KINDS, RecordKind, Submission
from racing_demon.game.rules import Rules
from racing_demon.log.canonical import canonical_bytes
from racing_demon.log.records import (
    ACCEPT,
    SUBMISSION,
    chain_hash,
    line_bytes,
    parse_record,
    statement_of,
)
from racing_demon.log.signing import sign

Value = dict[str, Any]  # one line as json.loads reads it: {"body": {...}, "sigs": {...}}


def reseal(
    values: Sequence[Value],
    start: int = 0,
    *,
    key: Ed25519PrivateKey,
    renumber: bool = False,
    forged: Collection[int] = frozenset(),
    forged_key: Ed25519PrivateKey | None = None,
    keep_seq: bool = False,
    repoint_seen: bool = True,
    repoint_lost_to: bool = True,
    keep_accepts: bool = False,
    player_keys: Sequence[Ed25519PrivateKey] | None = None,
) -> list[bytes]:
    """The lines of ``values`` (without newlines), with ``values[start:]`` re-numbered
    (``seq`` is the index, unless ``keep_seq``), re-chained (``prev`` is the hash of the line
    before) and signed by ``key`` as the table; the players' signatures stay as they are.
    A format-v2 submission's ``seen`` is pointed at the new place and hash of the line it
    named (or of the last one kept before it, if that line is gone) unless ``repoint_seen``
    is false, as a table rewriting history would: its player's signature, over the old
    ``seen``, then fails. A format-v4 bounce's ``lost_to``, the table's own word, is
    repointed so too, unless ``repoint_lost_to`` is false. The players' acceptances of a
    re-signed final record are dropped (unless ``keep_accepts``), since a table cannot
    make them again. The values are edited in place to match their lines, so a test may
    edit them further and reseal again.

    ``renumber`` also renumbers every seat's submissions (``n``), as a table hiding a dropped
    or invented submission of an unkeyed player would; the lines at the ``forged`` indices
    are signed with ``forged_key`` instead.

    With ``player_keys`` (one per seat) every re-sealed submission that carries a player's
    signature is signed again by its seat's key over its statement as it now reads (its
    ``seen`` repointed): the history a table made up as it went and showed its players
    live, which their clients signed as they played on it; the seats that had accepted the
    final record accept it again as it now reads. A statement that did not change gets the
    signature it had (Ed25519 signatures are deterministic).
    """
    if forged and forged_key is None:
        raise ValueError("forged lines need a forged_key to sign them")
    lines: list[bytes] = []
    submitted: dict[int, int] = {}
    placed: dict[int, int] = {}  # a line's seq before this reseal -> its index now
    for index, value in enumerate(values):
        body, sigs = value["body"], value["sigs"]
        if isinstance(body.get("seq"), int):
            placed.setdefault(body["seq"], index)
        counted = renumber and body["kind"] in SUBMISSION_KINDS
        if index >= start:
            if not keep_seq:
                body["seq"] = index
            if index:
                body["prev"] = chain_hash(lines[-1])
            if counted:
                body["n"] = submitted.get(body["player"], 0)
            seen = body.get("seen")
            if repoint_seen and isinstance(seen, dict) and isinstance(seen.get("seq"), int):
                _repoint(seen, placed, lines)
            lost_to = body.get("lost_to")  # the table's own word: a rewriting table repoints it
            if (
                repoint_lost_to
                and isinstance(lost_to, dict)
                and isinstance(lost_to.get("seq"), int)
            ):
                _repoint(lost_to, placed, lines)
            if player_keys is not None and "player" in sigs:
                _sign_as_player(value, player_keys)
            if player_keys is not None and isinstance(sigs.get("accepts"), list):
                message = canonical_bytes(body)
                sigs["accepts"] = [
                    None if old is None else sign(key, ACCEPT, message, body["v"])
                    for key, old in zip(player_keys, sigs["accepts"], strict=True)
                ]
            elif not keep_accepts:
                sigs.pop("accepts", None)
            signer = forged_key if index in forged and forged_key is not None else key
            sigs["table"] = sign(signer, body["kind"], canonical_bytes(body), body["v"])
        if counted:
            submitted[body["player"]] = submitted.get(body["player"], 0) + 1
        lines.append(line_bytes(body, sigs))
    return lines


def _sign_as_player(value: Value, player_keys: Sequence[Ed25519PrivateKey]) -> None:
    """``value``'s player signature made again by its seat's key over its statement."""
    record = parse_record(value["body"])
    if not isinstance(record.payload, Submission):
        raise ValueError(f"record {record.seq} is a {record.kind} record, not a submission")
    statement = statement_of(record.game, record.payload)
    key = player_keys[record.payload.seat]
    value["sigs"]["player"] = sign(key, SUBMISSION, canonical_bytes(statement), record.v)


def _repoint(seen: Value, placed: Mapping[int, int], lines: Sequence[bytes]) -> None:
    """Point ``seen`` at where the line it named now is, or the last line kept before it."""
    old = seen["seq"]
    while old >= 0 and placed.get(old, len(lines)) >= len(lines):
        old -= 1
    if old >= 0:
        seen["seq"] = placed[old]
        seen["hash"] = chain_hash(lines[placed[old]])


# -- declarative edits ---------------------------------------------------------------------
#
# Lines are numbered from 1, as the verifier's findings number them, in the log as the edits
# before have left it. Every edit but ``Reseal`` names the body fields its line must hold
# (``expect``, e.g. ``{"kind": "move", "move": "0 turn 2C KS JD"}``) and checks them first.


class EditError(RacingDemonError, ValueError):
    """An edit did not find at its line what it expects: the log it edits is not the one
    its line numbers were written for."""


@dataclass(frozen=True, slots=True)
class _Context:
    table_key: Ed25519PrivateKey
    read: Callable[[str], bytes] | None  # another log's bytes, by name (for Splice)


_MISSING = object()


def _value(lines: Sequence[bytes], line: int, expect: Mapping[str, Any], of: str = "") -> Value:
    """Line ``line`` (1-based) as a fresh value, after checking that its body holds the
    ``expect`` fields."""
    where = f"line {line}" + (f" of {of}" if of else "")
    if not 1 <= line <= len(lines):
        raise EditError(f"{where} does not exist: the log has {len(lines)} lines")
    value: Value = json.loads(lines[line - 1])
    body = value["body"]
    wrong = [name for name, want in expect.items() if body.get(name, _MISSING) != want]
    if wrong:
        wants = ", ".join(f"{name}={want!r}" for name, want in expect.items())
        found = ", ".join(
            f"{name}={body[name]!r}" if name in body else f"no {name}"
            for name in ("kind", *(name for name in wrong if name != "kind"))
        )
        raise EditError(f"{where} should hold {wants}; it holds {found}")
    return value


@dataclass(frozen=True, slots=True)
class Remove:
    """Line ``line`` removed."""

    line: int
    expect: Mapping[str, Any]

    def apply(self, lines: list[bytes], context: _Context) -> list[bytes]:
        _value(lines, self.line, self.expect)
        return lines[: self.line - 1] + lines[self.line :]

    def __str__(self) -> str:
        return f"line {self.line} removed"


@dataclass(frozen=True, slots=True)
class Duplicate:
    """Line ``line`` repeated right after itself."""

    line: int
    expect: Mapping[str, Any]

    def apply(self, lines: list[bytes], context: _Context) -> list[bytes]:
        _value(lines, self.line, self.expect)
        return lines[: self.line] + lines[self.line - 1 :]

    def __str__(self) -> str:
        return f"line {self.line} repeated after itself"


@dataclass(frozen=True, slots=True)
class Swap:
    """Lines ``line`` and ``line + 1`` swapped."""

    line: int
    expect: Mapping[str, Any]

    def apply(self, lines: list[bytes], context: _Context) -> list[bytes]:
        _value(lines, self.line, self.expect)
        _value(lines, self.line + 1, {})
        at = self.line - 1
        return [*lines[:at], lines[at + 1], lines[at], *lines[at + 2 :]]

    def __str__(self) -> str:
        return f"lines {self.line} and {self.line + 1} swapped"


@dataclass(frozen=True, slots=True)
class Truncate:
    """The log cut after line ``after``."""

    after: int
    expect: Mapping[str, Any]

    def apply(self, lines: list[bytes], context: _Context) -> list[bytes]:
        _value(lines, self.after, self.expect)
        return lines[: self.after]

    def __str__(self) -> str:
        return f"cut after line {self.after}"


@dataclass(frozen=True, slots=True)
class Splice:
    """Line ``line`` replaced, byte for byte, by the same line of the log ``source``."""

    line: int
    expect: Mapping[str, Any]
    source: str
    source_expect: Mapping[str, Any]

    def apply(self, lines: list[bytes], context: _Context) -> list[bytes]:
        _value(lines, self.line, self.expect)
        if context.read is None:
            raise ValueError("a Splice needs apply_edits(read=...) to read its source")
        theirs = context.read(self.source).splitlines()
        _value(theirs, self.line, self.source_expect, self.source)
        return [*lines[: self.line - 1], theirs[self.line - 1], *lines[self.line :]]

    def __str__(self) -> str:
        return f"line {self.line} replaced by line {self.line} of {self.source}"


@dataclass(frozen=True, slots=True)
class SetFields:
    """Fields of line ``line``'s body set to ``fields``, and no signature renewed: the line
    a damaged copy would hold, until a ``Reseal`` after it renews the table's signature."""

    line: int
    expect: Mapping[str, Any]
    fields: Mapping[str, Any]

    def apply(self, lines: list[bytes], context: _Context) -> list[bytes]:
        value = _value(lines, self.line, self.expect)
        value["body"].update(self.fields)
        return _replaced(lines, self.line, line_bytes(value["body"], value["sigs"]))

    def __str__(self) -> str:
        changes = ", ".join(f"{name} set to {value!r}" for name, value in self.fields.items())
        return f"line {self.line}: {changes}"


@dataclass(frozen=True, slots=True)
class DropAcceptance:
    """Seat ``seat``'s acceptance of the final record at line ``line`` set to null: what
    anyone holding the log can do (the log still verifies, that seat listed as not
    accepting), since the table's signature covers the body, not the acceptances."""

    line: int
    expect: Mapping[str, Any]
    seat: int

    def apply(self, lines: list[bytes], context: _Context) -> list[bytes]:
        value = _value(lines, self.line, self.expect)
        accepts = value["sigs"].get("accepts")
        if not isinstance(accepts, list) or not 0 <= self.seat < len(accepts):
            raise EditError(f"line {self.line} has no acceptance of seat {self.seat}")
        accepts[self.seat] = None
        return _replaced(lines, self.line, line_bytes(value["body"], value["sigs"]))

    def __str__(self) -> str:
        return f"line {self.line}: seat {self.seat}'s acceptance set to null"


@dataclass(frozen=True, slots=True)
class SignSubmission:
    """Line ``line``'s player signature replaced by ``key``'s (another seat's, say) over the
    statement a player signs for that submission (``submission_statement``)."""

    line: int
    expect: Mapping[str, Any]
    key: Ed25519PrivateKey

    def apply(self, lines: list[bytes], context: _Context) -> list[bytes]:
        value = _value(lines, self.line, self.expect)
        record = parse_record(value["body"])
        if not isinstance(record.payload, Submission):
            raise EditError(f"line {self.line} holds a {record.kind} record, not a submission")
        statement = statement_of(record.game, record.payload)
        value["sigs"]["player"] = sign(self.key, SUBMISSION, canonical_bytes(statement), record.v)
        return _replaced(lines, self.line, line_bytes(value["body"], value["sigs"]))

    def __str__(self) -> str:
        return f"line {self.line}: the player's signature made with another key"


def _genesis_value(lines: Sequence[bytes], line: int, expect: Mapping[str, Any]) -> Value:
    value = _value(lines, line, expect)
    kind = value["body"].get("kind")
    if kind != RecordKind.GENESIS:
        raise EditError(f"line {line} holds a {kind} record, not a genesis")
    return value


@dataclass(frozen=True, slots=True)
class SetRules:
    """Fields of the rules document in line ``line``'s genesis set by dotted path
    (``{"scoring.per_foundation_card": 10}``), and its ``rules_sha256`` set to the altered
    document's digest, as a table declaring rules of its own would write them (the name
    left as it is unless ``changes`` sets it); no signature renewed."""

    line: int
    expect: Mapping[str, Any]
    changes: Mapping[str, Any]

    def apply(self, lines: list[bytes], context: _Context) -> list[bytes]:
        value = _genesis_value(lines, self.line, self.expect)
        body = value["body"]
        document = copy.deepcopy(body["rules"])
        for path, new in self.changes.items():
            *sections, name = path.split(".")
            where = document
            for section in sections:
                where = where[section]
            if name not in where:
                raise EditError(f"line {self.line}: the rules document has no {path}")
            where[name] = new
        body["rules"] = document
        body["rules_sha256"] = Rules.from_document(document).digest()
        return _replaced(lines, self.line, line_bytes(body, value["sigs"]))

    def __str__(self) -> str:
        changes = ", ".join(f"{path} set to {value!r}" for path, value in self.changes.items())
        return f"line {self.line}: rules {changes}, rules_sha256 set to their digest"


@dataclass(frozen=True, slots=True)
class CoSign:
    """Line ``line``'s genesis co-signed again, seat by seat, by ``keys`` over its body as
    it now is: the players co-signing a genesis that the table changed (their entropy, a
    signature over the commitment they were shown, left as it is)."""

    line: int
    expect: Mapping[str, Any]
    keys: tuple[Ed25519PrivateKey, ...]

    def apply(self, lines: list[bytes], context: _Context) -> list[bytes]:
        value = _genesis_value(lines, self.line, self.expect)
        body, message = value["body"], canonical_bytes(value["body"])
        value["sigs"]["players"] = [
            sign(key, RecordKind.GENESIS, message, body["v"]) for key in self.keys
        ]
        return _replaced(lines, self.line, line_bytes(body, value["sigs"]))

    def __str__(self) -> str:
        return f"line {self.line}: the genesis co-signed again by {len(self.keys)} players' keys"


@dataclass(frozen=True, slots=True)
class Reseal:
    """Lines ``line`` to the end re-numbered, re-chained and re-signed (``reseal``) by
    ``key``, or by the table's key when it is None: a history rewritten after the fact,
    whose players' signatures over the records they had seen then fail. With ``players``
    (every seat's key) it is a history the table made up live instead, as its players were
    shown it: their clients sign their submissions over it (``reseal``'s ``player_keys``)."""

    line: int
    key: Ed25519PrivateKey | None = None
    players: tuple[Ed25519PrivateKey, ...] = ()

    def apply(self, lines: list[bytes], context: _Context) -> list[bytes]:
        _value(lines, self.line, {})
        key = context.table_key if self.key is None else self.key
        return reseal(
            [json.loads(line) for line in lines],
            self.line - 1,
            key=key,
            player_keys=self.players or None,
        )

    def __str__(self) -> str:
        by = "the table" if self.key is None else "another key"
        live = ", its players signing the history they were shown" if self.players else ""
        return f"re-chained and re-signed by {by} from line {self.line} on{live}"


@dataclass(frozen=True, slots=True)
class Downgrade:
    """The whole log re-expressed as an unkeyed log of format v1 and re-signed by ``key``
    (the table's when None): what a table holding its key can make of any keyed v2 log it
    wrote. Every record's ``v`` becomes 1; what v1 has not goes (the players' keys in the
    genesis, their signatures, each submission's ``seen``, the final record's
    acceptances); the seats' entropy stays, as plain bytes, so the log deals the same
    packs and scores alike, and verifies: only what it no longer proves tells it apart.
    Line 1 must be the genesis holding ``expect``."""

    expect: Mapping[str, Any]
    key: Ed25519PrivateKey | None = None

    def apply(self, lines: list[bytes], context: _Context) -> list[bytes]:
        _genesis_value(lines, 1, self.expect)
        values = [json.loads(line) for line in lines]
        for value in values:
            value["body"]["v"] = 1
            value["body"].pop("seen", None)
            value["body"].pop("lost_to", None)
            for signature in ("player", "players", "accepts"):
                value["sigs"].pop(signature, None)
        for entry in values[0]["body"]["players"]:
            entry["key"] = None
        key = context.table_key if self.key is None else self.key
        return reseal(values, key=key)

    def __str__(self) -> str:
        by = "the table" if self.key is None else "another key"
        return (
            "every line re-expressed as unkeyed format v1 (v 1; the players' keys, "
            f"signatures, seen and acceptances gone) and re-signed by {by}"
        )


Edit = (
    Remove
    | Duplicate
    | Swap
    | Truncate
    | Splice
    | SetFields
    | DropAcceptance
    | SetRules
    | SignSubmission
    | CoSign
    | Reseal
    | Downgrade
)


def _replaced(lines: list[bytes], line: int, new: bytes) -> list[bytes]:
    return [*lines[: line - 1], new, *lines[line:]]


def apply_edits(
    base: bytes,
    edits: Sequence[Edit],
    *,
    table_key: Ed25519PrivateKey,
    read: Callable[[str], bytes] | None = None,
) -> bytes:
    """The log ``base`` (its bytes) with ``edits`` applied in order; each edit's line
    numbers (1-based) are those of the log as the edits before it left it. ``table_key``
    re-signs for ``Reseal``; ``read`` gives a ``Splice`` its source's bytes.

    Raises ``EditError`` naming the edit whose line does not hold what it expects.
    """
    context = _Context(table_key, read)
    lines = base.splitlines()
    for number, edit in enumerate(edits, 1):
        try:
            lines = edit.apply(lines, context)
        except EditError as error:
            raise EditError(f"edit {number} ({edit}): {error}") from None
    return b"".join(line + b"\n" for line in lines)
