"""Duplicate deals: every table of a tournament plays the same packs, rotated by seat.

A tournament is dealt from one organiser's secret, committed to before any entropy is
collected, exactly like a single match's dealer secret (docs/deal-spec.md, step 1). The
derivation is specified in docs/tournament.md ("The derivation"); the step numbers
in the comments refer to it. This module is pure: the plan file, its contributions and its
signatures are ``racing_demon.tournament``'s.
"""

from __future__ import annotations

import hashlib
import hmac
import struct
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from racing_demon.game.cards import Card
from racing_demon.game.deal import (
    MAX_CONTRIBUTION_BYTES,
    MIN_CONTRIBUTION_BYTES,
    SECRET_BYTES,
    MatchSeed,
    derive_pack,
)
from racing_demon.game.rules import MAX_HANDS

TOURNAMENT_ALGORITHM: Final = "racing-demon/tournament/v1"
MAX_TABLES: Final = 4096
MAX_NAME_BYTES: Final = 256

_ENTROPY_LABEL: Final = b"racing-demon/tournament-entropy/v1"
_SEED_SALT: Final = b"racing-demon/tournament-seed/v1"
_DEAL_SET_LABEL: Final = b"racing-demon/deal-set/v1"
_U32: Final = struct.Struct(">I")
_ENTROPY_BYTES: Final = 32


def _lp(data: bytes) -> bytes:
    return _U32.pack(len(data)) + data


def entropy_digest(contributions: Sequence[bytes]) -> bytes:
    """Step 2: the 32-byte digest of every contribution, in the plan's order."""
    if not contributions:
        raise ValueError("a tournament needs at least one entropy contribution")
    for number, contribution in enumerate(contributions, 1):
        if not MIN_CONTRIBUTION_BYTES <= len(contribution) <= MAX_CONTRIBUTION_BYTES:
            raise ValueError(
                f"contribution {number} is {len(contribution)} bytes: expected "
                f"{MIN_CONTRIBUTION_BYTES} to {MAX_CONTRIBUTION_BYTES}"
            )
    parts = [_lp(_ENTROPY_LABEL), _U32.pack(len(contributions)), *map(_lp, contributions)]
    return hashlib.sha256(b"".join(parts)).digest()


@dataclass(frozen=True, slots=True)
class Shape:
    """A tournament's name and size: ``tables`` tables (numbered from 1) of ``seats``
    seats (from 0), each playing ``hands`` hands (from 1)."""

    name: str
    tables: int
    seats: int
    hands: int

    def __post_init__(self) -> None:
        encoded = self.name.encode("utf-8", "surrogatepass")
        if not self.name or len(encoded) > MAX_NAME_BYTES:
            raise ValueError(f"a tournament name is 1 to {MAX_NAME_BYTES} bytes of UTF-8")
        if not 1 <= self.tables <= MAX_TABLES:
            raise ValueError(f"a tournament has 1 to {MAX_TABLES} tables, not {self.tables}")
        if not 2 <= self.seats <= 52:
            raise ValueError(f"a duplicate table seats 2 to 52 players, not {self.seats}")
        if not 1 <= self.hands <= MAX_HANDS:
            raise ValueError(f"a tournament plays 1 to {MAX_HANDS} hands, not {self.hands}")

    def _encoded(self) -> bytes:
        return _lp(self.name.encode("utf-8")) + struct.pack(
            ">III", self.tables, self.seats, self.hands
        )

    def seed(self, secret: bytes, entropy: bytes) -> MatchSeed:
        """Step 3: the tournament's PRK, from the organiser's secret and the entropy digest."""
        if len(secret) != SECRET_BYTES:
            raise ValueError(f"the organiser's secret is {SECRET_BYTES} bytes, got {len(secret)}")
        if len(entropy) != _ENTROPY_BYTES:
            raise ValueError(f"the entropy digest is {_ENTROPY_BYTES} bytes, got {len(entropy)}")
        # HKDF-Extract (RFC 5869 section 2.2) is HMAC-SHA256 keyed with the salt.
        prk = hmac.digest(_SEED_SALT, _lp(secret) + self._encoded() + entropy, "sha256")
        return MatchSeed(prk, self.seats)

    def pack_index(self, table: int, seat: int) -> int:
        """Step 5: which of a hand's packs (0 .. seats-1) ``seat`` of ``table`` plays."""
        self._check_table_seat(table, seat)
        return (seat + table - 1) % self.seats

    def pack_number(self, hand: int, index: int) -> int:
        """The pack's number for people, 1 .. hands * seats, like a duplicate board's."""
        if not 1 <= hand <= self.hands or not 0 <= index < self.seats:
            raise ValueError(f"no pack {index} in hand {hand} of this tournament")
        return (hand - 1) * self.seats + index + 1

    def deal_set(self, seed: MatchSeed) -> str:
        """Step 6: the checksum of every pack of every hand, published before play."""
        digest = hashlib.sha256(_lp(_DEAL_SET_LABEL) + self._encoded())
        for hand in range(1, self.hands + 1):
            for index in range(self.seats):
                digest.update(bytes(card.index for card in derive_pack(seed, hand, index)))
        return digest.hexdigest()

    def _check_table_seat(self, table: int, seat: int) -> None:
        if not 1 <= table <= self.tables:
            raise ValueError(f"table {table} is outside 1..{self.tables}")
        if not 0 <= seat < self.seats:
            raise ValueError(f"seat {seat} is outside 0..{self.seats - 1}")


@dataclass(frozen=True, slots=True)
class DuplicateDeal:
    """What deals one table of a tournament: at ``seat`` in ``hand`` the planned pack of
    that hand, its cards owned by the seat (step 5)."""

    shape: Shape
    seed: MatchSeed  # the tournament's (its repr hides the key)
    table: int

    def __post_init__(self) -> None:
        self.shape.pack_index(self.table, 0)  # a table of the tournament

    def pack(self, hand: int, seat: int) -> tuple[Card, ...]:
        if not 1 <= hand <= self.shape.hands:
            raise ValueError(f"hand {hand} is outside the tournament's 1..{self.shape.hands}")
        return derive_pack(self.seed, hand, self.shape.pack_index(self.table, seat), seat)
