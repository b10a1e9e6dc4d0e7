"""Seeded, verifiable deals: every pack of every hand derived from one match seed.

The algorithm is specified in docs/deal-spec.md, precisely enough to re-implement
it elsewhere (e.g. in a browser with Web Crypto); this module follows it step by
step and the step numbers in the comments refer to that document.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import secrets
import struct
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Final, Protocol

from racing_demon.game.cards import PACK_SIZE, Card, canonical_pack
from racing_demon.game.rules import Rules
from racing_demon.game.state import State

DEAL_ALGORITHM: Final = "racing-demon/deal/v1"

SECRET_BYTES: Final = 32
MIN_CONTRIBUTION_BYTES: Final = 16
MAX_CONTRIBUTION_BYTES: Final = 64
U32_LIMIT: Final = 1 << 32

_COMMIT_LABEL: Final = b"racing-demon/commit/v1"
_MATCH_SALT: Final = b"racing-demon/match-seed/v1"
_PLAIN_SALT: Final = b"racing-demon/plain-seed/v1"
_PACK_LABEL: Final = b"racing-demon/pack/v1"

_PRK_BYTES: Final = 32
_BLOCK_BYTES: Final = 224
_U32: Final = struct.Struct(">I")
_HAND_SEAT: Final = struct.Struct(">II")
_BLOCK_WORDS: Final = struct.Struct(f">{_BLOCK_BYTES // 4}I")
_HASH_BYTES: Final = 32  # SHA-256's output
_HASH_BLOCK_BYTES: Final = 64  # SHA-256's block: RFC 2104 pads a key to this
_INNER_PAD: Final = bytes(byte ^ 0x36 for byte in range(256))  # translate() tables: key XOR ipad
_OUTER_PAD: Final = bytes(byte ^ 0x5C for byte in range(256))  # and key XOR opad
_COUNTERS: Final = tuple(bytes((counter,)) for counter in range(256))  # RFC 5869's octet i


def _lp(data: bytes) -> bytes:
    """Length-prefix ``data`` so that concatenations of fields cannot be ambiguous."""
    return _U32.pack(len(data)) + data


# Step 4: info = lp(DEAL_ALGORITHM) || u32(hand) || u32(seat) || u32(block), packed in one call.
_BLOCK_INFO_PREFIX: Final = _lp(DEAL_ALGORITHM.encode())
_BLOCK_INFO: Final = struct.Struct(f">{len(_BLOCK_INFO_PREFIX)}sIII")

# The one-block shortcut of derive_pack: the 52-card shuffle draws 51 words, for n = 52 down
# to 2. A word w is rejected for n <= 52 only if w >= 2**32 - (2**32 % n) >= 2**32 - 51, so
# its top three bytes are FF FF FF. If that pattern occurs nowhere in the first 51 words of
# block 0 (aligned or not), no word is rejected and that block suffices; a stray match just
# takes the general path, word by word.
_SHORTCUT_WORDS: Final = struct.Struct(f">{PACK_SIZE - 1}I")
_REJECTABLE_WORD_PREFIX: Final = b"\xff\xff\xff"


def new_secret() -> bytes:
    """A fresh dealer secret (step 1): 32 bytes from the operating system's CSPRNG."""
    return secrets.token_bytes(SECRET_BYTES)


def _check_secret(secret: bytes) -> None:
    if len(secret) != SECRET_BYTES:
        raise ValueError(f"dealer secret must be {SECRET_BYTES} bytes, got {len(secret)}")


def commitment(secret: bytes) -> str:
    """The dealer's published commitment to ``secret``, as lowercase hex (step 1)."""
    _check_secret(secret)
    return hashlib.sha256(_lp(_COMMIT_LABEL) + _lp(secret)).hexdigest()


def check_reveal(secret: bytes, commitment_hex: str) -> bool:
    """Whether a revealed ``secret`` opens ``commitment_hex``; a wrong-length secret does not."""
    if len(secret) != SECRET_BYTES:
        return False
    # Constant time, so a verifier service does not leak how much of a guess was right.
    return hmac.compare_digest(commitment(secret).encode(), commitment_hex.lower().encode())


def _hkdf_extract(salt: bytes, ikm: bytes) -> bytes:
    # RFC 5869 section 2.2: HKDF-Extract is exactly HMAC-SHA256 keyed with the salt.
    return hmac.digest(salt, ikm, "sha256")


@dataclass(frozen=True, slots=True)
class MatchSeed:
    """The 32-byte pseudorandom key (HKDF PRK) from which every pack of a match is derived."""

    # Kept out of repr: until the dealer reveals, the PRK predicts every deal of the match.
    prk: bytes = field(repr=False)
    # A committed seed mixes one contribution per seat, so it deals exactly that many seats;
    # a plain seed deals any number (None).
    seats: int | None = None

    def __post_init__(self) -> None:
        if len(self.prk) != _PRK_BYTES:
            raise ValueError(f"match seed must be {_PRK_BYTES} bytes, got {len(self.prk)}")

    @classmethod
    def from_secret(cls, secret: bytes, contributions: Sequence[bytes]) -> MatchSeed:
        """Combine the dealer secret with every seat's entropy, in seat order (step 3)."""
        _check_secret(secret)
        if not contributions:
            raise ValueError("need one entropy contribution per seat, got none")
        for seat, contribution in enumerate(contributions):
            if not MIN_CONTRIBUTION_BYTES <= len(contribution) <= MAX_CONTRIBUTION_BYTES:
                raise ValueError(
                    f"seat {seat}'s contribution is {len(contribution)} bytes: "
                    f"expected {MIN_CONTRIBUTION_BYTES} to {MAX_CONTRIBUTION_BYTES}"
                )
        ikm = b"".join([_lp(secret), _U32.pack(len(contributions)), *map(_lp, contributions)])
        return cls(_hkdf_extract(_MATCH_SALT, ikm), len(contributions))

    def pack(self, hand: int, seat: int) -> tuple[Card, ...]:
        """The pack ``seat`` is dealt in ``hand``: its own stream's (steps 4-6)."""
        return derive_pack(self, hand, seat)

    @classmethod
    def from_plain(cls, text: str) -> MatchSeed:
        """A reproducible seed from a plain string, for tournaments and tests (step 3)."""
        if not text:
            raise ValueError("plain seed must be a non-empty string")
        try:
            ikm = text.encode("utf-8")
        except UnicodeEncodeError as error:
            raise ValueError(f"plain seed {text!r} cannot be encoded as UTF-8") from error
        return cls(_hkdf_extract(_PLAIN_SALT, ikm))


class Dealer(Protocol):
    """What deals a match: the pack each seat gets in each hand. A single match's
    ``MatchSeed`` deals each seat its own stream; a duplicate tournament's table
    (``racing_demon.game.duplicate``) deals the planned stream at each seat."""

    def pack(self, hand: int, seat: int) -> tuple[Card, ...]: ...


def _check_hand_seat(hand: int, seat: int) -> None:
    if not 1 <= hand < U32_LIMIT:
        raise ValueError(f"hand {hand} is outside 1..2**32-1")
    if not 0 <= seat < U32_LIMIT:
        raise ValueError(f"seat {seat} is outside 0..2**32-1")


def _hkdf_expand(prk: bytes, info: bytes, length: int) -> bytes:
    """RFC 5869 section 2.3: T(i) = HMAC-SHA256(PRK, T(i-1) || info || i), the first
    ``length`` bytes of T(1) || T(2) || ...

    On the standard library alone, so that the game runs wherever Python does (the browser
    page's Pyodide has no cryptography). HMAC (RFC 2104) is spelled out: the key's inner and
    outer hashes are started once and copied for each T(i), which halves the cost of calling
    hmac.digest seven times for a block, each setting the key up afresh (bench/deal_bench.py).
    """
    if not 0 < length <= 255 * _HASH_BYTES or len(prk) > _HASH_BLOCK_BYTES:
        raise ValueError(f"HKDF-Expand of {length} bytes under a {len(prk)}-byte key")
    key = prk.ljust(_HASH_BLOCK_BYTES, b"\0")
    inner = hashlib.sha256(key.translate(_INNER_PAD))
    outer = hashlib.sha256(key.translate(_OUTER_PAD))
    blocks = []
    block = b""
    for counter in range(1, -(-length // _HASH_BYTES) + 1):
        inner_hash = inner.copy()
        inner_hash.update(block + info + _COUNTERS[counter])
        outer_hash = outer.copy()
        outer_hash.update(inner_hash.digest())
        block = outer_hash.digest()
        blocks.append(block)
    return b"".join(blocks)[:length]


def _expand_block(prk: bytes, hand: int, seat: int, block: int) -> bytes:
    """B(block) of the byte stream for (hand, seat): 224 bytes of HKDF-Expand (step 4)."""
    info = _BLOCK_INFO.pack(_BLOCK_INFO_PREFIX, hand, seat, block)
    return _hkdf_expand(prk, info, _BLOCK_BYTES)


def _words(prk: bytes, hand: int, seat: int) -> Iterator[int]:
    # The block counter is a u32 in the info string, hence the bound.
    for block in range(U32_LIMIT):
        yield from _BLOCK_WORDS.unpack(_expand_block(prk, hand, seat, block))


def word_stream(seed: MatchSeed, hand: int, seat: int) -> Iterator[int]:
    """The unbounded stream of 32-bit words for one pack (step 4)."""
    _check_hand_seat(hand, seat)
    return _words(seed.prk, hand, seat)


def uniform_below(n: int, words: Iterator[int]) -> int:
    """An unbiased integer in ``0..n-1`` drawn from 32-bit ``words`` by rejection (step 5).

    Consumes words until one is accepted. The deal only needs ``2 <= n <= 52``; any ``n`` up
    to 2**32 works the same way.
    """
    if not 2 <= n <= U32_LIMIT:
        raise ValueError(f"n = {n} is outside 2..2**32")
    # The largest multiple of n that fits in 32 bits: words at or above it would favour
    # the low residues, so they are skipped.
    limit = U32_LIMIT - U32_LIMIT % n
    for word in words:
        if word < limit:
            return word % n
    raise ValueError("word stream ran out before yielding an acceptable word")


def shuffle_indices(n: int, words: Iterator[int]) -> list[int]:
    """Descending Fisher-Yates shuffle of ``0..n-1`` driven by ``words`` (step 6)."""
    if n < 1:
        raise ValueError(f"cannot shuffle {n} items")
    order = list(range(n))
    for i in range(n - 1, 0, -1):
        j = uniform_below(i + 1, words)
        order[i], order[j] = order[j], order[i]
    return order


@functools.lru_cache(maxsize=64)
def _cards_of(seat: int) -> tuple[Card, ...]:
    # Cards are immutable, so every pack of a seat can share these objects; building 52 fresh
    # Cards would cost more than the whole shuffle.
    return canonical_pack(seat)


def derive_pack(
    seed: MatchSeed, hand: int, seat: int, owner: int | None = None
) -> tuple[Card, ...]:
    """The shuffled pack ``p[0..51]`` of ``seat`` in ``hand`` (steps 4-6), its cards owned
    by ``owner`` (default ``seat``: a duplicate deal plays one seat's stream at another).

    Layout (step 7, applied by the engine): ``p[0..12]`` is the demon with ``p[12]`` on top,
    then one card per work pile, then the stock with ``p[13 + W]`` on top.
    """
    _check_hand_seat(hand, seat)
    cards = _cards_of(seat if owner is None else owner)
    block = _expand_block(seed.prk, hand, seat, 0)
    if block.find(_REJECTABLE_WORD_PREFIX, 0, _SHORTCUT_WORDS.size) >= 0:
        # About one pack in 80,000: a word might be rejected, so follow the spec word by word.
        order = shuffle_indices(PACK_SIZE, _words(seed.prk, hand, seat))
        return tuple([cards[index] for index in order])
    # No word is rejected, so each draw of step 5 is one word mod n: step 6, word by word.
    words = _SHORTCUT_WORDS.unpack_from(block)
    pack = list(cards)
    for i, word in zip(range(PACK_SIZE - 1, 0, -1), words, strict=True):
        j = word % (i + 1)
        pack[i], pack[j] = pack[j], pack[i]
    return tuple(pack)


def deal_hand(
    rules: Rules, seed: MatchSeed, hand: int, players: int, start_ms: int = 0
) -> tuple[State, tuple[tuple[Card, ...], ...]]:
    """Deal ``hand`` for ``players`` seats: the packs (in seat order) and the laid-out state."""
    if seed.seats is not None and seed.seats != players:
        raise ValueError(
            f"the match seed mixes entropy from {seed.seats} seats: it cannot deal {players}"
        )
    packs = tuple(seed.pack(hand, seat) for seat in range(players))
    return State.deal(rules, packs, hand, start_ms), packs


def pack_digest(hand: int, seat: int, pack: Sequence[Card]) -> str:
    """SHA-256 fingerprint of a dealt pack for logs, as lowercase hex (step 8)."""
    _check_hand_seat(hand, seat)
    if len(pack) != PACK_SIZE:
        raise ValueError(f"a pack has {PACK_SIZE} cards, got {len(pack)}")
    indices = bytes(card.index for card in pack)
    if len(set(indices)) != PACK_SIZE:
        raise ValueError("pack repeats a card")
    if any(card.owner != seat for card in pack):
        raise ValueError(f"pack contains cards not owned by seat {seat}")
    return hashlib.sha256(_lp(_PACK_LABEL) + _HAND_SEAT.pack(hand, seat) + indices).hexdigest()
