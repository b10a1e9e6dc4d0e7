"""Who sits at the table: a seat's player, its signer, and the signatures a player makes
(docs/log-format.md §5)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from racing_demon.game.flow import Seen
from racing_demon.log.canonical import canonical_bytes
from racing_demon.log.records import (
    ACCEPT,
    FORMAT_VERSION,
    SUBMISSION,
    statement_version,
    submission_statement,
)
from racing_demon.log.signing import SIGNATURE_HEX, sign, verify
from racing_demon.table.errors import TableCode, TableError

# A seat's signer: signs the bytes of a statement of a kind (docs/log-format.md §5) for its
# player under the PAE of a format version, or declines with None. The table asks it to
# co-sign the genesis, for its entropy (its signature over the commitment) and for its
# acceptance of the final record, each in the version the table signs it under (a resumed
# table's log may be of an older format than the newest).
PlayerSigner = Callable[[str, bytes, int], str | None]


def player_signer(private_key: Ed25519PrivateKey) -> PlayerSigner:
    """The signer of a player whose client signs whatever the table asks (simulations,
    tests, a client that accepts every result)."""

    def signer(kind: str, message: bytes, version: int) -> str:
        return sign(private_key, kind, message, version)

    return signer


@dataclass(frozen=True, slots=True)
class PlayerInfo:
    name: str
    back: str
    key: bytes | None = None  # the raw 32-byte Ed25519 public key, if the player signs


def ask(signer: PlayerSigner, seat: int, kind: str, statement: Mapping[str, Any]) -> str:
    """Seat ``seat``'s signature of ``statement`` as a ``kind`` at a new table (the newest
    format's); TableError if it declines."""
    signature = signer(kind, canonical_bytes(statement), statement_version(kind))
    if not isinstance(signature, str) or not SIGNATURE_HEX.fullmatch(signature):
        raise TableError(f"seat {seat} did not sign the {kind} statement", TableCode.NOT_SIGNED)
    return signature


def sign_submission(
    private_key: Ed25519PrivateKey,
    game: str,
    hand: int,
    seat: int,
    n: int,
    move_text: str,
    seen: Seen,
    version: int = FORMAT_VERSION,
) -> str:
    """A player's signature over its seat's submission (kind ``submission``), made having
    seen record ``seen``, at a table writing format ``version``."""
    statement = submission_statement(game, hand, seat, n, move_text, seen)
    return sign(private_key, SUBMISSION, canonical_bytes(statement), version)


def acceptances(
    players: Sequence[PlayerInfo], signers: Sequence[PlayerSigner], body: bytes, version: int
) -> list[str | None]:
    """Each keyed seat's acceptance of the final record of format ``version`` whose
    canonical body is ``body``, asked of its signer before the record is written; a seat
    that declines, fails to answer (its signer raises: a timeout, say) or answers with
    anything but a good signature, is listed as not accepting (null): no seat can keep the
    match from ending."""
    accepts: list[str | None] = []
    for player, signer in zip(players, signers, strict=True):
        try:
            signature = signer(ACCEPT, body, version)
        except Exception:  # any failure of a seat's client is a "no"
            signature = None
        assert player.key is not None  # a keyed game: every seat lists its key
        good = isinstance(signature, str) and (
            verify(player.key, ACCEPT, body, signature, version) is None
        )
        accepts.append(signature if good else None)
    return accepts
