"""Step 5, signatures: the table's on every record (on the genesis and the final record
only with ``--fast``), the players' co-signatures of the genesis, in format v2 their
entropy contributions (each its signature over the dealer's commitment), each keyed
player's signature on its own submissions, numbered without gaps, and in format v2 the
players' acceptances of the final record.

Every signature is checked under its record's format version (docs/log-format.md §5). On
the genesis the checks run in this order: the table key pinned, the table's signature,
then the players' keys (mixed: every seat lists a key or none does; weak; duplicate of the
table's or another seat's), then the co-signatures, then (v2) the entropy contributions.
On every other record: the table's signature, no co-signatures, on a submission its
player's signature (unless ``--fast``) then its number, and on the final record the
acceptances.

``equation`` answers each group equation where a host checks them itself
(``Equations.BY_HOST``); every other check runs here either way.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple, NoReturn

from racing_demon.game.flow import RecordKind, Submission
from racing_demon.log.canonical import canonical_bytes_of_read
from racing_demon.log.reader import RecordLine
from racing_demon.log.records import (
    ACCEPT,
    ENTROPY,
    SUBMISSION,
    Genesis,
    Record,
    Signatures,
    body_bytes,
    entropy_statement,
    statement_of,
)
from racing_demon.log.signing import EquationCheck, check_public_key, key_id, verify
from racing_demon.verify.report import Step, VerifyCode, failure
from racing_demon.wording import plural

PlayerKeys = tuple[bytes | None, ...]  # each seat's raw public key, as the genesis lists it
_Fail = Callable[..., NoReturn]


def check_signatures(
    line: RecordLine,
    *,
    table_key: bytes | None,
    fast: bool,
    player_keys: PlayerKeys,
    next_n: int,
    equation: EquationCheck | None = None,
) -> PlayerKeys:
    """Check line ``line``'s signatures; the players' keys, once the genesis gives them.

    ``next_n`` is the number the record's seat's next submission must carry; ``equation``
    as for ``signing.verify``: the host's answers, or None to check each equation here.
    """
    record, sigs = line.record, line.sigs
    payload = record.payload

    def fail(code: VerifyCode, message: str, **context: Any) -> NoReturn:
        raise failure(Step.SIGNATURES, code, message, line=line.number, record=record, **context)

    kind = record.kind
    genesis = payload if isinstance(payload, Genesis) else None
    if genesis is not None and table_key is not None:
        pinned = key_id(table_key)
        if genesis.table_key != pinned:
            fail(
                VerifyCode.WRONG_TABLE_KEY,
                "the log names another table key than the one pinned",
                expected=pinned,
                found=genesis.table_key,
            )
    version = record.v
    if table_key is not None and (not fast or genesis is not None or kind is RecordKind.FINAL):
        problem = verify(
            table_key, kind, body_bytes(line.raw), sigs.table, version, equation=equation
        )
        if problem is not None:
            fail(
                VerifyCode.BAD_TABLE_SIGNATURE,
                f"the table's signature: {problem.message}",
                rule=problem.code,
            )
    if genesis is not None:
        player_keys = _check_player_keys(
            genesis, body_bytes(line.raw), sigs, version, fail, equation
        )
        if version >= 2 and any(player_keys):
            _check_entropy(record.game, genesis, player_keys, fail, equation)
    elif sigs.players is not None:
        fail(VerifyCode.UNEXPECTED_SIGNATURE, "players co-sign the genesis only")
    if isinstance(payload, Submission):
        _check_submission(record, payload, sigs, player_keys, fast, next_n, fail, equation)
    elif sigs.player is not None:
        fail(
            VerifyCode.UNEXPECTED_SIGNATURE,
            f"a player's signature on a {kind} record, which no player submits",
        )
    if sigs.accepts is not None:
        _check_acceptances(line, sigs.accepts, player_keys, fail, equation)
    return player_keys


def _check_player_keys(
    genesis: Genesis,
    message: bytes,
    sigs: Signatures,
    version: int,
    fail: _Fail,
    equation: EquationCheck | None,
) -> PlayerKeys:
    keys = tuple(
        None if entry.key is None else bytes.fromhex(entry.key) for entry in genesis.players
    )
    listed = [key for key in keys if key is not None]
    if listed and len(listed) != len(keys):
        fail(
            VerifyCode.MIXED_PLAYER_KEYS,
            "either every player lists a key or none does",
            expected=plural(len(keys), "key"),
            found=plural(len(listed), "key"),
        )
    for seat, key in enumerate(keys):
        problem = None if key is None else check_public_key(key)
        if problem is not None:
            fail(
                VerifyCode.WEAK_PLAYER_KEY,
                f"seat {seat}'s key: {problem.message}",
                seat=seat,
                rule=problem.code,
            )
    ids = [key_id(key) for key in listed]
    for seat, this in enumerate(ids):
        if this == genesis.table_key or this in ids[:seat]:
            fail(
                VerifyCode.DUPLICATE_PLAYER_KEY,
                f"seat {seat}'s key is also the table's or another seat's",
                seat=seat,
            )
    cosigned = sigs.players
    if not listed:
        if cosigned is not None:
            fail(
                VerifyCode.UNEXPECTED_SIGNATURE,
                "genesis co-signatures, but no player lists a key",
            )
        return keys
    if cosigned is None or len(cosigned) != len(keys):
        fail(
            VerifyCode.BAD_GENESIS_COSIGNATURE,
            "every keyed player co-signs the genesis",
            expected=plural(len(keys), "signature"),
            found=plural(0 if cosigned is None else len(cosigned), "signature"),
        )
    for seat, (key, signature) in enumerate(zip(listed, cosigned, strict=True)):
        signed = _Signed(seat, key, RecordKind.GENESIS, message, signature, version, equation)
        _check_seat(signed, VerifyCode.BAD_GENESIS_COSIGNATURE, "co-signature", fail)
    return keys


class _Signed(NamedTuple):
    """What seat ``seat`` signed with ``key``, as a ``kind`` of log format ``version``;
    ``equation``: who answers its group equation (``signing.verify``'s)."""

    seat: int
    key: bytes
    kind: str
    message: bytes
    signature: str
    version: int
    equation: EquationCheck | None


def _check_seat(signed: _Signed, code: VerifyCode, what: str, fail: _Fail) -> None:
    problem = verify(
        signed.key,
        signed.kind,
        signed.message,
        signed.signature,
        signed.version,
        equation=signed.equation,
    )
    if problem is not None:
        fail(
            code,
            f"seat {signed.seat}'s {what}: {problem.message}",
            seat=signed.seat,
            rule=problem.code,
        )


def _check_entropy(
    game: str,
    genesis: Genesis,
    player_keys: PlayerKeys,
    fail: _Fail,
    equation: EquationCheck | None,
) -> None:
    """Format v2: each keyed seat's contribution is its signature over the commitment, so
    it was made after the commitment was published (step 7 counts the contributions)."""
    # A count other than one per seat is step 7's BAD_SEATS: check the pairs there are.
    for seat, (key, contribution) in enumerate(zip(player_keys, genesis.entropy, strict=False)):
        assert key is not None  # every seat lists a key, or none does
        statement = canonical_bytes_of_read(entropy_statement(game, seat, genesis.commitment))
        signed = _Signed(seat, key, ENTROPY, statement, contribution, 2, equation)
        _check_seat(
            signed,
            VerifyCode.ENTROPY_NOT_BOUND,
            "entropy as a signature over this game's commitment",
            fail,
        )


def _check_acceptances(
    line: RecordLine,
    accepts: tuple[str | None, ...],
    player_keys: PlayerKeys,
    fail: _Fail,
    equation: EquationCheck | None,
) -> None:
    """Format v2: the seats that accept the result sign the final record's body."""
    record = line.record
    if record.kind is not RecordKind.FINAL or record.v < 2 or not any(player_keys):
        fail(
            VerifyCode.UNEXPECTED_SIGNATURE,
            "acceptances belong on the final record of a keyed game of format v2",
        )
    if len(accepts) != len(player_keys):
        fail(
            VerifyCode.BAD_ACCEPTANCE,
            "one acceptance entry per seat, a signature or null",
            expected=plural(len(player_keys), "entry", "entries"),
            found=plural(len(accepts), "entry", "entries"),
        )
    message = body_bytes(line.raw)
    for seat, (key, signature) in enumerate(zip(player_keys, accepts, strict=True)):
        if signature is None:
            continue
        assert key is not None  # any() above: every seat lists a key
        signed = _Signed(seat, key, ACCEPT, message, signature, record.v, equation)
        _check_seat(signed, VerifyCode.BAD_ACCEPTANCE, "acceptance of the final record", fail)


def _check_submission(
    record: Record,
    event: Submission,
    sigs: Signatures,
    player_keys: PlayerKeys,
    fast: bool,
    next_n: int,
    fail: _Fail,
    equation: EquationCheck | None,
) -> None:
    seat = event.seat
    # A seat the genesis does not list has no key; the replay refuses the record.
    key = player_keys[seat] if seat < len(player_keys) else None
    signature = sigs.player
    if key is None:
        if signature is not None:
            fail(
                VerifyCode.UNEXPECTED_SIGNATURE,
                f"seat {seat} lists no key, so its moves carry no signature",
            )
    elif signature is None:
        fail(
            VerifyCode.MISSING_PLAYER_SIGNATURE,
            f"seat {seat} lists a key: its submission must carry its signature",
        )
    elif not fast:
        statement = canonical_bytes_of_read(statement_of(record.game, event))
        signed = _Signed(seat, key, SUBMISSION, statement, signature, record.v, equation)
        _check_seat(signed, VerifyCode.BAD_PLAYER_SIGNATURE, "signature", fail)
    if event.n != next_n:
        fail(
            VerifyCode.SUBMISSION_GAP,
            f"seat {seat}'s submissions must be numbered without gaps",
            expected=next_n,
            found=event.n,
        )
