"""Entropy contributions to a duplicate tournament: the statement a contributor signs, the
signing, the check, and the contribution file handed to the organiser (docs/tournament.md,
step 2).

A signed contribution is the contributor's Ed25519 signature over the canonical bytes of
``{"commitment": C, "contributor": by, "tournament": name}``, as a log's keyed seat signs
its entropy statement (docs/deal-spec.md, "Order of play"): it cannot exist before the
organiser's commitment ``C``, so an organiser who ground secrets after seeing it would
need a commitment no contribution signs. An unsigned contribution is 32 random bytes that
nothing ties to a moment: the organiser's word.
"""

from __future__ import annotations

import dataclasses
import secrets
from dataclasses import dataclass
from typing import Any, Final

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from racing_demon.log.canonical import canonical_bytes
from racing_demon.log.keys import raw_public_bytes
from racing_demon.log.signing import SignatureCheck, sign, verify

CONTRIBUTION_FORMAT: Final = "racing-demon/tournament-contribution/v1"
UNSIGNED_BYTES: Final = 32

# The kind and log format version of the signature: the same PAE type as a log's keyed
# entropy, whose statement has other members ({commitment, game, player}), so neither
# signature can pass for the other.
_KIND: Final = "entropy"
_VERSION: Final = 2


@dataclass(frozen=True, slots=True)
class Contribution:
    """One entropy contribution, collected after the commitment was published. With a
    ``key``, ``entropy`` is that contributor's Ed25519 signature over the tournament's
    entropy statement (docs/tournament.md, step 2), which proves it came after the
    commitment; without one it is the organiser's word."""

    by: str
    entropy: bytes = dataclasses.field(repr=False)
    key: bytes | None = None

    def __str__(self) -> str:
        signed = "signed" if self.key is not None else "unsigned"
        return f"{self.by} ({signed}, {len(self.entropy)} bytes)"


def statement(name: str, commitment: str, by: str) -> dict[str, Any]:
    """What a contributor signs: the tournament, the organiser's commitment and its own
    name, which must therefore all exist first."""
    return {"commitment": commitment, "contributor": by, "tournament": name}


def statement_bytes(name: str, commitment: str, by: str) -> bytes:
    """The exact bytes a contributor signs (RFC 8785, under PAE when signed)."""
    return canonical_bytes(statement(name, commitment, by))


def sign_contribution(
    private_key: Ed25519PrivateKey, name: str, commitment: str, by: str
) -> Contribution:
    """``by``'s signed contribution to tournament ``name`` whose organiser committed to
    ``commitment``. Ed25519 is deterministic: asking twice gives the same contribution."""
    signature = sign(private_key, _KIND, statement_bytes(name, commitment, by), _VERSION)
    return Contribution(by, bytes.fromhex(signature), raw_public_bytes(private_key))


def unsigned_contribution(by: str) -> Contribution:
    """An unsigned contribution: 32 bytes from the operating system's CSPRNG."""
    return Contribution(by, secrets.token_bytes(UNSIGNED_BYTES))


def check_contribution(
    contribution: Contribution, name: str, commitment: str
) -> SignatureCheck | None:
    """None if a signed ``contribution`` is its key's signature over its statement for
    this tournament and commitment, else why not. An unsigned one has nothing to check."""
    if contribution.key is None:
        return None
    return verify(
        contribution.key,
        _KIND,
        statement_bytes(name, commitment, contribution.by),
        contribution.entropy.hex(),
        _VERSION,
    )


def contribution_document(contribution: Contribution, name: str, commitment: str) -> dict[str, Any]:
    """The file a contributor hands the organiser (schemas/tournament-contribution)."""
    return {
        "format": CONTRIBUTION_FORMAT,
        "tournament": name,
        "commitment": commitment,
        "by": contribution.by,
        "entropy": contribution.entropy.hex(),
        "key": None if contribution.key is None else contribution.key.hex(),
    }
