"""Ed25519 signatures over exact bytes, bound to a record kind, and verified strictly.

A signature covers ``pae(kind, body)``, the pre-authentication encoding of DSSE v1, so a
signature made for one record kind or format version never verifies for another.

Verification refuses what a lenient verifier would let through: any text form but one,
non-canonical point encodings, the eight small-order points as key or as R, and S >= L.
The cheap structural checks run before the signature equation, in the order of the
``SignatureCode`` members below; the first that fails is the answer (docs/log-format.md).
The equation is libsodium's (through PyNaCl), faster than cryptography's and, after these
checks, of the same answers: both are cofactorless, which a probe at first use confirms, or
cryptography's check is used instead (``_choose_equation``). cryptography signs. Both are
imported only when an equation is checked or a signature made: a host that checks the
equations itself (the browser page, where neither library exists) runs every other check
here on the standard library alone, and takes the host's answer for each equation
(``equation=``, ``EquationCheck``).
"""

from __future__ import annotations

import enum
import functools
import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import (
        Ed25519PrivateKey,
        Ed25519PublicKey,
    )

FORMAT_VERSIONS = (1, 2, 3, 4)  # the log formats whose signatures this module makes and checks

_P = 2**255 - 19  # the field prime
_L = 2**252 + 27742317777372353535851937790883648493  # the prime order of the base point
_D = -121665 * pow(121666, -1, _P) % _P  # the curve constant d of -x^2 + y^2 = 1 + d x^2 y^2
_Y_MASK = (1 << 255) - 1  # an encoding is y (255 bits, little-endian) plus x's sign bit on top

_WHY_NOT_CANONICAL = "y >= p, or x = 0 with the sign bit set"

_KIND = re.compile(r"[a-z_]{1,32}")
SIGNATURE_HEX = re.compile(r"[0-9a-f]{128}")  # the one text form of a signature

# The eight points of order dividing 8 (the whole torsion subgroup, which is cyclic of
# order 8), canonically encoded: the identity, the point of order 2, two of order 4 and
# four of order 8. Computed as the multiples of L*P for a curve point P whose L*P has
# order 8 (libsodium blocks the same list); tests/test_signing.py derives them again.
SMALL_ORDER_ENCODINGS = frozenset(
    bytes.fromhex(text)
    for text in (
        "0100000000000000000000000000000000000000000000000000000000000000",  # order 1
        "ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",  # order 2
        "0000000000000000000000000000000000000000000000000000000000000000",  # order 4
        "0000000000000000000000000000000000000000000000000000000000000080",  # order 4
        "26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05",  # order 8
        "26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc85",  # order 8
        "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a",  # order 8
        "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac03fa",  # order 8
    )
)


class SignatureCode(enum.StrEnum):
    """Stable reason codes for every refused signature, in the order they are checked."""

    BAD_SIGNATURE_ENCODING = "BAD_SIGNATURE_ENCODING"
    BAD_KIND = "BAD_KIND"
    NON_CANONICAL_KEY = "NON_CANONICAL_KEY"
    KEY_NOT_ON_CURVE = "KEY_NOT_ON_CURVE"
    WEAK_KEY = "WEAK_KEY"
    NON_CANONICAL_R = "NON_CANONICAL_R"
    SMALL_ORDER_R = "SMALL_ORDER_R"
    NON_CANONICAL_S = "NON_CANONICAL_S"
    BAD_SIGNATURE = "BAD_SIGNATURE"


# (raw public key, message, R || S): does the signature's group equation hold?
EquationCheck = Callable[[bytes, bytes, bytes], bool]


@dataclass(frozen=True, slots=True)
class SignatureCheck:
    """Why a signature or a public key was refused."""

    code: SignatureCode
    message: str

    def __str__(self) -> str:
        return f"{self.code}: {self.message}"


def payload_type(kind: str, version: int) -> str:
    """The DSSE payload type of a ``kind`` statement in log format ``version``."""
    return f"application/vnd.racing-demon.log.v{version}.{kind}"


def pae(kind: str, body: bytes, version: int = 1) -> bytes:
    """The exact bytes signed for a ``kind`` statement of log format ``version``: DSSE v1's
    pre-authentication encoding, whose type binds both.

    Raises ``ValueError`` for a kind that is not 1-32 lowercase ASCII letters or ``_``, or a
    version this module does not know.
    """
    return b"%b%d %b" % (_pae_prefix(kind, version), len(body), body)


# A log signs a few kinds in one or two versions, thousands of times: each prefix is
# checked and built once (typed, so that a bool is not taken for the version 1).
@functools.lru_cache(maxsize=64, typed=True)
def _pae_prefix(kind: str, version: int) -> bytes:
    """``pae(kind, body, version)`` up to the body's length."""
    if not _KIND.fullmatch(kind):
        raise ValueError(f"record kind {kind!r} is not 1-32 lowercase ASCII letters or '_'")
    if version not in FORMAT_VERSIONS:
        raise ValueError(f"log format version {version} is not one of {FORMAT_VERSIONS}")
    type_bytes = payload_type(kind, version).encode("ascii")
    return b"DSSEv1 %d %b " % (len(type_bytes), type_bytes)


def sign(private_key: Ed25519PrivateKey, kind: str, body: bytes, version: int = 1) -> str:
    """The signature of ``pae(kind, body, version)`` as 128 lowercase hex characters."""
    return private_key.sign(pae(kind, body, version)).hex()


def verify(
    public_key_raw: bytes,
    kind: str,
    body: bytes,
    signature_hex: str,
    version: int = 1,
    *,
    equation: EquationCheck | None = None,
) -> SignatureCheck | None:
    """None if ``signature_hex`` is a valid signature of ``pae(kind, body, version)``, else
    why not. ``equation`` answers whether the group equation holds, when a host checks the
    equations itself; None: this module checks it (PyNaCl, or cryptography)."""
    signature = _signature_bytes(signature_hex)
    if signature is None:
        return SignatureCheck(
            SignatureCode.BAD_SIGNATURE_ENCODING,
            "a signature is exactly 128 lowercase hex characters, "
            f"found {_describe_text(signature_hex)}",
        )
    if not _KIND.fullmatch(kind):
        return SignatureCheck(
            SignatureCode.BAD_KIND,
            f"record kind {kind!r} is not 1-32 lowercase ASCII letters or '_'",
        )
    return verify_raw(public_key_raw, pae(kind, body, version), signature, equation=equation)


def _signature_bytes(text: str) -> bytes | None:
    """The 64 bytes ``text`` spells if it is a signature's one text form (``SIGNATURE_HEX``)."""
    if len(text) != 128:
        return None
    try:
        signature = bytes.fromhex(text)
    except ValueError:
        return None
    # fromhex also reads upper case and spaces: only the one form spells its bytes back.
    return signature if signature.hex() == text else None


def verify_raw(
    public_key_raw: bytes,
    message: bytes,
    signature: bytes,
    *,
    equation: EquationCheck | None = None,
) -> SignatureCheck | None:
    """The strict checks of ``verify`` on a raw message and a 64-byte signature (R || S),
    the group equation answered by ``equation`` as for ``verify``."""
    if len(signature) != 64:
        return SignatureCheck(
            SignatureCode.BAD_SIGNATURE_ENCODING,
            f"a signature is exactly 64 bytes, found {len(signature)}",
        )
    problem = check_public_key(public_key_raw)
    if problem is not None:
        return problem
    r, s = signature[:32], signature[32:]
    if not _is_canonical(r):
        return SignatureCheck(
            SignatureCode.NON_CANONICAL_R,
            f"R {r.hex()} is not a canonical point encoding ({_WHY_NOT_CANONICAL})",
        )
    if r in SMALL_ORDER_ENCODINGS:
        return SignatureCheck(SignatureCode.SMALL_ORDER_R, f"R {r.hex()} is a point of small order")
    if int.from_bytes(s, "little") >= _L:
        return SignatureCheck(
            SignatureCode.NON_CANONICAL_S,
            "S is not below the group order L (another signature's S + L?)",
        )
    holds = _equation_holds if equation is None else equation
    if not holds(public_key_raw, message, signature):
        return SignatureCheck(
            SignatureCode.BAD_SIGNATURE, "the signature does not verify for this key and message"
        )
    return None


def key_id(public_key_raw: bytes) -> str:
    """The key id: lowercase hex SHA-256 of the 32-byte raw public key (64 characters)."""
    if len(public_key_raw) != 32:
        raise ValueError(f"a raw Ed25519 public key is 32 bytes, found {len(public_key_raw)}")
    return hashlib.sha256(public_key_raw).hexdigest()


def check_public_key(raw: bytes) -> SignatureCheck | None:
    """None if ``raw`` is a usable Ed25519 public key (RFC 8032 encoding), else why not."""
    if len(raw) != 32:  # checked before the cache, so no large input is ever kept
        return SignatureCheck(
            SignatureCode.NON_CANONICAL_KEY, f"a public key is 32 bytes, found {len(raw)}"
        )
    return _check_key_point(raw)


# The curve check costs a modular exponentiation, about one signature check's time in pure
# Python; a log names few keys and verifies each many times, so each verdict is kept.
@functools.lru_cache(maxsize=1024)
def _check_key_point(raw: bytes) -> SignatureCheck | None:
    if not _is_canonical(raw):
        return SignatureCheck(
            SignatureCode.NON_CANONICAL_KEY,
            f"public key {raw.hex()} is not a canonical point encoding ({_WHY_NOT_CANONICAL})",
        )
    if not _has_x(int.from_bytes(raw, "little") & _Y_MASK):
        return SignatureCheck(
            SignatureCode.KEY_NOT_ON_CURVE, f"public key {raw.hex()} is not a point of the curve"
        )
    if raw in SMALL_ORDER_ENCODINGS:
        return SignatureCheck(
            SignatureCode.WEAK_KEY,
            f"public key {raw.hex()} is a point of small order: signatures under it can be forged",
        )
    return None


def _libsodium_equation(public_key_raw: bytes, message: bytes, signature: bytes) -> bool:
    """libsodium's check. The key must be 32 bytes and the signature 64, as verify_raw's
    checks make sure: PyNaCl checks neither, and would read past a short key."""
    from nacl.bindings import crypto_sign_open
    from nacl.exceptions import BadSignatureError

    try:
        crypto_sign_open(signature + message, public_key_raw)
    except BadSignatureError:
        return False
    return True


def _openssl_equation(public_key_raw: bytes, message: bytes, signature: bytes) -> bool:
    """cryptography's (OpenSSL's) check: the equation of the log formats' first verifier."""
    from cryptography.exceptions import InvalidSignature

    try:
        _public_key(public_key_raw).verify(signature, message)
    except InvalidSignature:
        return False
    return True


# A log names a few keys and checks each on many records; only a key that passed
# check_public_key reaches here.
@functools.lru_cache(maxsize=64)
def _public_key(raw: bytes) -> Ed25519PublicKey:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    return Ed25519PublicKey.from_public_bytes(raw)


# Speccheck cases 3, 4 and 5 (tests/vectors/ed25519-speccheck-cases.json) as (message, key,
# R || S, holds), all under one mixed-order key: case 3 passes both equations, 4 and 5 only
# a cofactored one. All three pass every check before the equation, and they tell the
# cofactorless equation from the cofactored one that a version of libsodium's own tests
# expects (cases 4 and 5 accepted) and from one that insists on prime-order keys.
_KEY_3_4_5 = "cdb267ce40c5cd45306fa5d2f29731459387dbf9eb933b7bd5aed9a765b88d4d"
_PROBES = tuple(
    (bytes.fromhex(message), bytes.fromhex(_KEY_3_4_5), bytes.fromhex(signature), holds)
    for message, signature, holds in (
        (
            "9bd9f44f4dcc75bd531b56b2cd280b0bb38fc1cd6d1230e14861d861de092e79",
            "9046a64750444938de19f227bb80485e92b83fdb4b6506c160484c016cc1852f"
            "87909e14428a7a1d62e9f22f3d3ad7802db02eb2e688b6c52fcd6648a98bd009",
            True,
        ),
        (
            "e47d62c63f830dc7a6851a0b1f33ae4bb2f507fb6cffec4011eaccd55b53f56c",
            "160a1cb0dc9c0258cd0a7d23e94d8fa878bcb1925f2c64246b2dee1796bed512"
            "5ec6bc982a269b723e0668e540911a9a6a58921d6925e434ab10aa7940551a09",
            False,
        ),
        (
            "e47d62c63f830dc7a6851a0b1f33ae4bb2f507fb6cffec4011eaccd55b53f56c",
            "21122a84e0b5fca4052f5b1235c80a537878b38f3142356b2c2384ebad4668b7"
            "e40bc836dac0f71076f9abe3a53f9c03c1ceeeddb658d0030494ace586687405",
            False,
        ),
    )
)


def _choose_equation(candidate: EquationCheck) -> EquationCheck:
    """``candidate`` if it answers the probes as OpenSSL does, else OpenSSL's own check: so
    the verdicts never depend on which libsodium PyNaCl was built with."""
    if all(candidate(key, message, rs) is holds for message, key, rs, holds in _PROBES):
        return candidate
    return _openssl_equation


@functools.cache
def _chosen_equation() -> EquationCheck:
    """The equation, chosen once, at its first use: not at import, which would need both
    libraries where no equation is checked."""
    return _choose_equation(_libsodium_equation)


def _equation_holds(public_key_raw: bytes, message: bytes, signature: bytes) -> bool:
    return _chosen_equation()(public_key_raw, message, signature)


def _is_canonical(encoding: bytes) -> bool:
    """y < p, and no sign bit on x = 0 (the points with y = 1 or y = p - 1)."""
    value = int.from_bytes(encoding, "little")
    y = value & _Y_MASK
    signed = value >> 255 == 1
    return y < _P and not (signed and y in (1, _P - 1))


def _has_x(y: int) -> bool:
    """Whether some x puts (x, y) on the curve: x^2 = (y^2 - 1) / (d y^2 + 1) is a square.

    Euler's criterion on u * v, which is a square exactly when u / v is (v is never 0, as d
    is not a square). A result of 0 means x = 0.
    """
    u = (y * y - 1) % _P
    v = (_D * y * y + 1) % _P
    return pow(u * v, (_P - 1) // 2, _P) in (0, 1)


def _describe_text(text: str) -> str:
    """A bounded description of a rejected signature text, for messages."""
    shown = text if len(text) <= 20 else text[:20] + "..."
    return f"{len(text)} characters ({shown!r})"
