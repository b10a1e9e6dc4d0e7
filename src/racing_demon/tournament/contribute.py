"""Entropy contributions to a duplicate tournament: the terms the organiser publishes, the
statement a contributor signs, the signing, the check, and the files handed between them
(docs/tournament.md, steps 1 and 2).

Before collecting anything the organiser publishes the tournament's **terms**: its name and
shape, the rules every table plays and the commitment ``C`` to the secret, which is
everything the deal depends on besides the secret and the contributions. A signed
contribution is the contributor's Ed25519 signature over the canonical bytes of a statement
of those terms, as a log's keyed seat signs its entropy statement (docs/deal-spec.md,
"Order of play"): it cannot exist before them, so an organiser who changed the secret, the
shape or the rules after seeing it would need terms no contribution signs. An unsigned
contribution is 32 random bytes that nothing ties to a moment: the organiser's word.

Plans of format v1 had contributors sign only ``{commitment, contributor, tournament}``;
their statements are still checked (``STATEMENT_V1``), and their plans say what that left
unbound.
"""

from __future__ import annotations

import dataclasses
import secrets
from dataclasses import dataclass
from typing import Any, Final

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from racing_demon.game.duplicate import TOURNAMENT_ALGORITHM, Shape
from racing_demon.game.rules import Rules
from racing_demon.log.canonical import canonical_bytes
from racing_demon.log.keys import raw_public_bytes
from racing_demon.log.signing import SignatureCheck, sign, verify

CONTRIBUTION_FORMAT: Final = "racing-demon/tournament-contribution/v2"
CONTRIBUTION_FORMAT_V1: Final = "racing-demon/tournament-contribution/v1"
TERMS_FORMAT: Final = "racing-demon/tournament-commitment/v1"
UNSIGNED_BYTES: Final = 32
# The statement versions: 1 names the tournament and the commitment only (plans of format
# v1); 2 adds the shape and the rules' digest (plans of format v2 and later).
STATEMENT_V1: Final = 1
STATEMENT_V2: Final = 2

# The kind and log format version of the signature: the same PAE type as a log's keyed
# entropy, whose statement has other members ({commitment, game, player}), so neither
# signature can pass for the other.
_KIND: Final = "entropy"
_VERSION: Final = 2


@dataclass(frozen=True, slots=True)
class Contribution:
    """One entropy contribution, collected after the terms were published. With a ``key``,
    ``entropy`` is that contributor's Ed25519 signature over the tournament's entropy
    statement (docs/tournament.md, step 2), which proves it came after the terms; without
    one it is the organiser's word."""

    by: str
    entropy: bytes = dataclasses.field(repr=False)
    key: bytes | None = None

    def __str__(self) -> str:
        signed = "signed" if self.key is not None else "unsigned"
        return f"{self.by} ({signed}, {len(self.entropy)} bytes)"


def canonical_order(contributions: tuple[Contribution, ...]) -> tuple[Contribution, ...]:
    """``contributions`` in the one order a plan lists and hashes them (docs/tournament.md,
    step 2): by their entropy bytes, compared as unsigned byte strings (a prefix first).
    Nobody signs an order, so a plan may not choose one."""
    return tuple(sorted(contributions, key=lambda contribution: contribution.entropy))


@dataclass(frozen=True, slots=True)
class Terms:
    """What the organiser publishes before any contribution: the tournament's name and
    shape, the rules every table plays (``tournament_rules``), and the commitment ``C`` to
    the secret. Every pack follows from these, the secret and the contributions."""

    shape: Shape
    rules: Rules
    commitment: str

    def statement(self, by: str, version: int = STATEMENT_V2) -> dict[str, Any]:
        """What ``by`` signs: the terms and its own name, which must all exist first."""
        stated: dict[str, Any] = {
            "commitment": self.commitment,
            "contributor": by,
            "tournament": self.shape.name,
        }
        if version >= STATEMENT_V2:
            shape = self.shape
            stated |= {
                "tables": shape.tables,
                "seats": shape.seats,
                "hands": shape.hands,
                "rules_sha256": self.rules.digest(),
            }
        return stated

    def statement_bytes(self, by: str, version: int = STATEMENT_V2) -> bytes:
        """The exact bytes ``by`` signs (RFC 8785, under PAE when signed)."""
        return canonical_bytes(self.statement(by, version))

    def to_document(self) -> dict[str, Any]:
        """The commitment file the organiser publishes (schemas/tournament-commitment)."""
        shape = self.shape
        return {
            "format": TERMS_FORMAT,
            "algorithm": TOURNAMENT_ALGORITHM,
            "name": shape.name,
            "tables": shape.tables,
            "seats": shape.seats,
            "hands": shape.hands,
            "rules": self.rules.to_document(),
            "rules_sha256": self.rules.digest(),
            "commitment": self.commitment,
        }


def sign_contribution(private_key: Ed25519PrivateKey, terms: Terms, by: str) -> Contribution:
    """``by``'s signed contribution to the tournament of ``terms``. Ed25519 is
    deterministic: asking twice gives the same contribution."""
    signature = sign(private_key, _KIND, terms.statement_bytes(by), _VERSION)
    return Contribution(by, bytes.fromhex(signature), raw_public_bytes(private_key))


def unsigned_contribution(by: str) -> Contribution:
    """An unsigned contribution: 32 bytes from the operating system's CSPRNG."""
    return Contribution(by, secrets.token_bytes(UNSIGNED_BYTES))


def check_contribution(
    contribution: Contribution, terms: Terms, version: int = STATEMENT_V2
) -> SignatureCheck | None:
    """None if a signed ``contribution`` is its key's signature over its statement of
    ``terms`` (of statement ``version``), else why not. An unsigned one has nothing to
    check."""
    if contribution.key is None:
        return None
    return verify(
        contribution.key,
        _KIND,
        terms.statement_bytes(contribution.by, version),
        contribution.entropy.hex(),
        _VERSION,
    )


def contribution_document(contribution: Contribution, terms: Terms) -> dict[str, Any]:
    """The file a contributor hands the organiser (schemas/tournament-contribution): the
    terms it answers, so that the organiser's plan can be checked against them."""
    shape = terms.shape
    return {
        "format": CONTRIBUTION_FORMAT,
        "tournament": shape.name,
        "tables": shape.tables,
        "seats": shape.seats,
        "hands": shape.hands,
        "rules_sha256": terms.rules.digest(),
        "commitment": terms.commitment,
        "by": contribution.by,
        "entropy": contribution.entropy.hex(),
        "key": None if contribution.key is None else contribution.key.hex(),
    }
