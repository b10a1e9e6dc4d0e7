"""libsodium checks the signature equation: its verdicts are today's, cryptography's.

``verify_raw`` used to end in cryptography's (OpenSSL's) check and now ends in libsodium's
(PyNaCl). The reference kept here is the old path: the same strict checks, then bare
cryptography. Every input below, from the speccheck vectors, from Wycheproof-style cases
built with the small edwards25519 of tests/test_signing.py, and from hypothesis's valid and
mutated signatures, gets the same answer (code and message) from both; where the strict
checks let an input through to the equation, libsodium, cryptography and a pure-Python
cofactorless equation agree on it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from unittest import mock

import pytest
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from hypothesis import given, settings
from hypothesis import strategies as st
from test_signing import (
    BASE,
    IDENTITY,
    PRIVATE,
    PUBLIC,
    SPECCHECK,
    SPECCHECK_VERDICTS,
    L,
    P,
    Point,
    add,
    code_of,
    decode,
    encode,
    flip,
    lenient_accepts,
    mul,
    non_canonical_encodings,
)

from racing_demon.log import signing
from racing_demon.log.keys import raw_public_bytes
from racing_demon.log.signing import (
    SMALL_ORDER_ENCODINGS,
    SignatureCheck,
    SignatureCode,
    verify_raw,
)

# -- the reference: verify_raw as it was ------------------------------------------------------


def cryptography_holds(key: bytes, message: bytes, signature: bytes) -> bool:
    """Bare cryptography, as verify_raw called it before libsodium."""
    try:
        Ed25519PublicKey.from_public_bytes(key).verify(signature, message)
    except InvalidSignature:
        return False
    return True


def today(key: bytes, message: bytes, signature: bytes) -> SignatureCheck | None:
    """The strict checks, then cryptography's equation."""
    with mock.patch.object(signing, "_equation_holds", cryptography_holds):
        return verify_raw(key, message, signature)


def reaches_the_equation(key: bytes, signature: bytes) -> bool:
    """Whether the strict checks let (key, signature) through to the equation."""
    with mock.patch.object(signing, "_equation_holds", lambda *_: True):
        return verify_raw(key, b"", signature) is None


def cofactorless_holds(key: bytes, message: bytes, signature: bytes) -> bool:
    """RFC 8032's equation without the cofactor, in pure Python: [S]B - [k]A encodes as R."""
    a = decode(key)
    assert a is not None
    s = int.from_bytes(signature[32:], "little")
    k = int.from_bytes(hashlib.sha512(signature[:32] + key + message).digest(), "little") % L
    negated = ((-a[0]) % P, a[1], a[2], (-a[3]) % P)
    return encode(add(mul(s, BASE), mul(k, negated))) == signature[:32]


def assert_same(key: bytes, message: bytes, signature: bytes) -> SignatureCheck | None:
    """Today's answer, which verify_raw must give too, and the equations' agreement."""
    expected = today(key, message, signature)
    assert verify_raw(key, message, signature) == expected
    if len(key) == 32 and len(signature) == 64 and reaches_the_equation(key, signature):
        holds = cryptography_holds(key, message, signature)
        assert signing._libsodium_equation(key, message, signature) is holds
        assert signing._openssl_equation(key, message, signature) is holds  # the fallback
        assert (expected is None) is holds
    return expected


# -- which equation verify_raw uses ------------------------------------------------------------


def test_verify_raw_uses_libsodium_here() -> None:
    """This PyNaCl's libsodium answered the probes as OpenSSL does; if a newer one does not,
    verify_raw falls back to cryptography (same verdicts, old speed) and this test says so."""
    assert signing._chosen_equation() is signing._libsodium_equation


def test_the_probes_are_speccheck_cases_3_4_5() -> None:
    cases = [tuple(bytes.fromhex(text) for text in SPECCHECK[case]) for case in (3, 4, 5)]
    assert [probe[:3] for probe in signing._PROBES] == cases
    assert [probe[3] for probe in signing._PROBES] == [True, False, False]
    for message, key, signature, holds in signing._PROBES:
        assert reaches_the_equation(key, signature)
        assert cryptography_holds(key, message, signature) is holds
        assert cofactorless_holds(key, message, signature) is holds


def cofactored_holds(key: bytes, message: bytes, signature: bytes) -> bool:
    """The cofactored equation, which a version of libsodium's own tests expects."""
    return lenient_accepts(key, message, signature)


@pytest.mark.parametrize(
    ("candidate", "chosen"),
    [
        (signing._libsodium_equation, signing._libsodium_equation),
        (cryptography_holds, cryptography_holds),
        (cofactored_holds, signing._openssl_equation),
        (lambda *_: False, signing._openssl_equation),  # e.g. prime-order keys only
        (lambda *_: True, signing._openssl_equation),
    ],
    ids=["libsodium", "cryptography", "cofactored", "refuses-case-3", "accepts-all"],
)
def test_an_equation_is_used_only_if_it_answers_the_probes_as_openssl(
    candidate: Callable[[bytes, bytes, bytes], bool], chosen: Callable[[bytes, bytes, bytes], bool]
) -> None:
    assert signing._choose_equation(candidate) is chosen


def test_the_fallback_answers_the_probes() -> None:
    for message, key, signature, holds in signing._PROBES:
        assert signing._openssl_equation(key, message, signature) is holds


# -- the speccheck vectors ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("case", "expected"), list(enumerate(SPECCHECK_VERDICTS)), ids=lambda value: str(value)
)
def test_speccheck_verdicts_are_todays(case: int, expected: SignatureCode | None) -> None:
    message, key, signature = (bytes.fromhex(text) for text in SPECCHECK[case])
    assert code_of(assert_same(key, message, signature)) is expected


# -- Wycheproof-style cases, built ---------------------------------------------------------------

T8_ENCODING = bytes.fromhex("26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05")
T8 = decode(T8_ENCODING)  # a point of order 8
assert T8 is not None and T8_ENCODING in SMALL_ORDER_ENCODINGS


def torsion_of_order(order: int) -> Point:
    """A point of exactly this order (1, 2, 4 or 8): a multiple of the order-8 point."""
    assert T8 is not None
    return mul(8 // order, T8)


def hram(r: bytes, key: bytes, message: bytes) -> int:
    return int.from_bytes(hashlib.sha512(r + key + message).digest(), "little") % L


def scalar_signature(
    secret: int, key_torsion: Point, message: bytes, nonce: int, r_torsion: Point = IDENTITY
) -> tuple[bytes, bytes]:
    """(key, R || S) for the key [secret]B + key_torsion and R = [nonce]B + r_torsion, signed
    as an honest signer of [secret]B would: S = nonce + k * secret mod L."""
    key = encode(add(mul(secret, BASE), key_torsion))
    r = encode(add(mul(nonce, BASE), r_torsion))
    s = (nonce + hram(r, key, message) * secret) % L
    return key, r + s.to_bytes(32, "little")


def with_s(signature: bytes, s: int) -> bytes:
    return signature[:32] + s.to_bytes(32, "little")


@dataclass(frozen=True)
class Case:
    name: str
    key: bytes
    message: bytes
    signature: bytes
    expected: SignatureCode | None


def mixed_key_cases() -> list[Case]:
    """A key [a]B + T signs honestly for [a]B: R' = R - [k]T, so the cofactorless equation
    holds exactly when [k]T is the identity, and the cofactored one always."""
    found = []
    for order in (2, 4, 8):
        torsion = torsion_of_order(order)
        kinds: dict[bool, Case] = {}
        for nonce in range(1, 200):
            message = b"mixed %d %d" % (order, nonce)
            key, signature = scalar_signature(0x1234567 + order, torsion, message, nonce)
            holds = hram(signature[:32], key, message) % order == 0
            expected = None if holds else SignatureCode.BAD_SIGNATURE
            kinds.setdefault(
                holds, Case(f"mixed-key-order-{order}-{holds}", key, message, signature, expected)
            )
            if len(kinds) == 2:
                break
        assert all(lenient_accepts(c.key, c.message, c.signature) for c in kinds.values())
        found += kinds.values()
    return found


def torsion_r_cases() -> list[Case]:
    """R with a torsion component: under a prime-order key R' has none, so R' != R and only
    a cofactored verifier accepts; under a mixed-order key the two components can cancel."""
    found = []
    for order in (2, 4, 8):
        message = b"torsion R %d" % order
        key, signature = scalar_signature(0xABCDEF, IDENTITY, message, 77, torsion_of_order(order))
        assert lenient_accepts(key, message, signature)
        found.append(
            Case(f"torsion-r-order-{order}", key, message, signature, SignatureCode.BAD_SIGNATURE)
        )
    assert T8 is not None
    for nonce in range(
        1, 400
    ):  # R = [n]B + T8, key [a]B + T8: R - R' = [1 + k]T8, 0 if k = 7 mod 8
        message = b"cancel %d" % nonce
        key, signature = scalar_signature(0x5EED, T8, message, nonce, T8)
        if hram(signature[:32], key, message) % 8 == 7:
            found.append(Case("torsion-r-cancels-mixed-key", key, message, signature, None))
            break
    else:
        raise AssertionError("no nonce made [k]T8 = -T8")
    return found


def scalar_cases() -> list[Case]:
    """S at the edges of [0, L): only S < L reaches the equation."""
    message = b"scalars"
    valid = bytes.fromhex(signing.sign(PRIVATE, "move", message))
    body = signing.pae("move", message)
    s = int.from_bytes(valid[32:], "little")
    edges = {
        "s-valid": (s, None),
        "s-plus-l": (s + L, SignatureCode.NON_CANONICAL_S),
        "s-zero": (0, SignatureCode.BAD_SIGNATURE),
        "s-one": (1, SignatureCode.BAD_SIGNATURE),
        "s-2^252": (2**252, SignatureCode.BAD_SIGNATURE),  # top byte 0x10, yet below L
        "s-l-minus-1": (L - 1, SignatureCode.BAD_SIGNATURE),
        "s-l": (L, SignatureCode.NON_CANONICAL_S),
        "s-l-plus-1": (L + 1, SignatureCode.NON_CANONICAL_S),
        "s-2^253-1": (2**253 - 1, SignatureCode.NON_CANONICAL_S),
        "s-2^255": (2**255, SignatureCode.NON_CANONICAL_S),
        "s-2^256-1": (2**256 - 1, SignatureCode.NON_CANONICAL_S),
    }
    return [
        Case(name, PUBLIC, body, with_s(valid, value), code)
        for name, (value, code) in edges.items()
    ]


def encoding_cases() -> list[Case]:
    """Non-canonical, small-order and off-curve keys and R, around a valid signature."""
    message = signing.pae("move", b"encodings")
    valid = bytes.fromhex(signing.sign(PRIVATE, "move", b"encodings"))
    r, s = valid[:32], valid[32:]
    found = []
    for y in range(19):  # y + p < 2^255 only for these y
        for bit in (0, 1):
            high = (y + P | bit << 255).to_bytes(32, "little")
            found.append(
                Case(f"key-y{y}+p-{bit}", high, message, valid, SignatureCode.NON_CANONICAL_KEY)
            )
            found.append(
                Case(f"r-y{y}+p-{bit}", PUBLIC, message, high + s, SignatureCode.NON_CANONICAL_R)
            )
    for y in (1, P - 1):  # x = 0 with the sign bit set
        signed = (y | 1 << 255).to_bytes(32, "little")
        found.append(
            Case(f"key-x0-signed-{y % 8}", signed, message, valid, SignatureCode.NON_CANONICAL_KEY)
        )
        found.append(
            Case(f"r-x0-signed-{y % 8}", PUBLIC, message, signed + s, SignatureCode.NON_CANONICAL_R)
        )
    for point in sorted(SMALL_ORDER_ENCODINGS):
        found.append(
            Case(f"key-small-{point.hex()}", point, message, valid, SignatureCode.WEAK_KEY)
        )
        found.append(
            Case(
                f"r-small-{point.hex()}",
                PUBLIC,
                message,
                point + s,
                SignatureCode.SMALL_ORDER_R,
            )
        )
    for other in sorted(
        {other for point in SMALL_ORDER_ENCODINGS for other in non_canonical_encodings(point)}
    ):
        found.append(
            Case(f"key-nc-{other.hex()}", other, message, valid, SignatureCode.NON_CANONICAL_KEY)
        )
        found.append(
            Case(f"r-nc-{other.hex()}", PUBLIC, message, other + s, SignatureCode.NON_CANONICAL_R)
        )
    off_curve = (2).to_bytes(32, "little")
    found.append(Case("key-off-curve", off_curve, message, valid, SignatureCode.KEY_NOT_ON_CURVE))
    found.append(Case("r-off-curve", PUBLIC, message, off_curve + s, SignatureCode.BAD_SIGNATURE))
    found.append(Case("r-negated", PUBLIC, message, flip(r, 255) + s, SignatureCode.BAD_SIGNATURE))
    a = decode(PUBLIC)
    assert a is not None and T8 is not None
    found.append(
        Case("key-plus-t8", encode(add(a, T8)), message, valid, SignatureCode.BAD_SIGNATURE)
    )
    return found


def binding_cases() -> list[Case]:
    """Wrong message, wrong key, and the empty message."""
    message = signing.pae("move", b"binding")
    valid = PRIVATE.sign(message)
    other = raw_public_bytes(Ed25519PrivateKey.from_private_bytes(bytes(32)))
    empty = PRIVATE.sign(b"")
    return [
        Case("valid", PUBLIC, message, valid, None),
        Case("wrong-message", PUBLIC, message + b" ", valid, SignatureCode.BAD_SIGNATURE),
        Case("wrong-key", other, message, valid, SignatureCode.BAD_SIGNATURE),
        Case("empty-message", PUBLIC, b"", empty, None),
        Case("long-message", PUBLIC, b"x" * 100_000, PRIVATE.sign(b"x" * 100_000), None),
        Case("short-signature", PUBLIC, message, valid[:63], SignatureCode.BAD_SIGNATURE_ENCODING),
        Case(
            "long-signature", PUBLIC, message, valid + b"\0", SignatureCode.BAD_SIGNATURE_ENCODING
        ),
        Case("short-key", PUBLIC[:31], message, valid, SignatureCode.NON_CANONICAL_KEY),
    ]


CASES = mixed_key_cases() + torsion_r_cases() + scalar_cases() + encoding_cases() + binding_cases()


def test_the_built_cases_cover_acceptance_and_every_code() -> None:
    codes = {case.expected for case in CASES}
    assert codes == {None, *SignatureCode} - {SignatureCode.BAD_KIND}  # no kind in verify_raw
    assert len({case.name for case in CASES}) == len(CASES)


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.name)
def test_built_cases_get_todays_verdicts(case: Case) -> None:
    assert code_of(assert_same(case.key, case.message, case.signature)) is case.expected


@pytest.mark.parametrize(
    "case",
    [case for case in CASES if case.name.startswith(("mixed", "torsion", "s-valid", "s-2^252"))],
    ids=lambda case: case.name,
)
def test_both_libraries_use_the_cofactorless_equation(case: Case) -> None:
    assert reaches_the_equation(case.key, case.signature)
    holds = cofactorless_holds(case.key, case.message, case.signature)
    assert holds is (case.expected is None)
    assert signing._libsodium_equation(case.key, case.message, case.signature) is holds


def test_verify_raw_with_the_fallback_gives_todays_answers() -> None:
    cases = [case for case in CASES if len(case.key) == 32 and len(case.signature) == 64]
    with mock.patch.object(signing, "_equation_holds", signing._openssl_equation):
        answers = [verify_raw(case.key, case.message, case.signature) for case in cases]
    assert answers == [today(case.key, case.message, case.signature) for case in cases]
    assert [code_of(answer) for answer in answers] == [case.expected for case in cases]


# -- hypothesis: random valid signatures, mutated ----------------------------------------------

TORSION_POINTS = [decode(point) for point in sorted(SMALL_ORDER_ENCODINGS)]
MUTATIONS = [
    "flip-signature",
    "flip-key",
    "flip-message",
    "extend-message",
    "other-key",
    "r-plus-torsion",
    "key-plus-torsion",
    "s-plus-l",
    "random-s",
    "random-r",
    "random-key",
    "small-order-r",
    "small-order-key",
    "high-y-r",
    "high-y-key",
    "resize-signature",
    "resize-key",
]


def plus_torsion(encoding: bytes, index: int) -> bytes:
    point, torsion = decode(encoding), TORSION_POINTS[index]
    if point is None or torsion is None:
        return encoding
    return encode(add(point, torsion))


@st.composite
def signed_inputs(draw: st.DrawFn) -> tuple[bytes, bytes, bytes]:
    """A valid (key, message, signature) from a random key, then up to three mutations."""
    private = Ed25519PrivateKey.from_private_bytes(draw(st.binary(min_size=32, max_size=32)))
    message = draw(st.binary(max_size=300))
    key, signature = raw_public_bytes(private), private.sign(message)
    for mutation in draw(st.lists(st.sampled_from(MUTATIONS), max_size=3)):
        r, s = signature[:32], signature[32:]
        if mutation == "flip-signature" and signature:
            signature = flip(signature, draw(st.integers(0, len(signature) * 8 - 1)))
        elif mutation == "flip-key" and key:
            key = flip(key, draw(st.integers(0, len(key) * 8 - 1)))
        elif mutation == "flip-message" and message:
            message = flip(message, draw(st.integers(0, len(message) * 8 - 1)))
        elif mutation == "extend-message":
            message += draw(st.binary(min_size=1, max_size=4))
        elif mutation == "other-key":
            other = Ed25519PrivateKey.from_private_bytes(draw(st.binary(min_size=32, max_size=32)))
            key = raw_public_bytes(other)
        elif mutation == "r-plus-torsion" and len(signature) == 64:
            signature = plus_torsion(r, draw(st.integers(0, 7))) + s
        elif mutation == "key-plus-torsion" and len(key) == 32:
            key = plus_torsion(key, draw(st.integers(0, 7)))
        elif mutation == "s-plus-l" and len(signature) == 64:
            total = int.from_bytes(s, "little") + L
            signature = r + (total % 2**256).to_bytes(32, "little")
        elif mutation == "random-s":
            signature = r + draw(st.binary(min_size=32, max_size=32))
        elif mutation == "random-r":
            signature = draw(st.binary(min_size=32, max_size=32)) + s
        elif mutation == "random-key":
            key = draw(st.binary(min_size=32, max_size=32))
        elif mutation == "small-order-r":
            signature = draw(st.sampled_from(sorted(SMALL_ORDER_ENCODINGS))) + s
        elif mutation == "small-order-key":
            key = draw(st.sampled_from(sorted(SMALL_ORDER_ENCODINGS)))
        elif mutation == "high-y-r":
            signature = (draw(st.integers(0, 18)) + P).to_bytes(32, "little") + s
        elif mutation == "high-y-key":
            key = (draw(st.integers(0, 18)) + P).to_bytes(32, "little")
        elif mutation == "resize-signature":
            signature = signature[: draw(st.integers(0, 70))] + b"\x01" * draw(st.integers(0, 2))
        elif mutation == "resize-key":
            key = key[: draw(st.integers(0, 33))] + b"\x01" * draw(st.integers(0, 2))
    return key, message, signature


@settings(max_examples=400)
@given(signed_inputs())
def test_random_and_mutated_signatures_get_todays_verdicts(
    inputs: tuple[bytes, bytes, bytes],
) -> None:
    assert_same(*inputs)


@pytest.mark.slow
@settings(max_examples=5000)
@given(signed_inputs())
def test_many_random_and_mutated_signatures_get_todays_verdicts(
    inputs: tuple[bytes, bytes, bytes],
) -> None:
    assert_same(*inputs)


@settings(max_examples=60)
@given(
    secret=st.integers(1, L - 1),
    nonce=st.integers(1, L - 1),
    key_torsion=st.integers(0, 7),
    r_torsion=st.integers(0, 7),
    message=st.binary(max_size=64),
)
def test_signatures_under_mixed_order_keys_and_torsion_r_get_todays_verdicts(
    secret: int, nonce: int, key_torsion: int, r_torsion: int, message: bytes
) -> None:
    """Honest signatures for [a]B under [a]B + T, with R = [r]B + T': they pass the
    cofactored equation always, the cofactorless one when T' + [k]T is the identity."""
    key_t, r_t = TORSION_POINTS[key_torsion], TORSION_POINTS[r_torsion]
    assert key_t is not None and r_t is not None
    key, signature = scalar_signature(secret, key_t, message, nonce, r_t)
    assert lenient_accepts(key, message, signature)
    result = assert_same(key, message, signature)
    if reaches_the_equation(key, signature):
        assert (result is None) is cofactorless_holds(key, message, signature)
