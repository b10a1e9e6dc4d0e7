"""Tests for racing_demon.game.deal against docs/deal-spec.md.

The reference implementation below is written straight from the spec with different building
blocks (cryptography's HMAC and one-shot HKDF, int.from_bytes, plain loops, its own card
names), so agreeing with it is evidence that deal.py follows the spec, not just itself.
"""

from __future__ import annotations

import ast
import hashlib
import itertools
import json
import re
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives import hmac as crypto_hmac
from cryptography.hazmat.primitives.kdf.hkdf import HKDF, HKDFExpand
from hypothesis import example, given
from hypothesis import strategies as st

from racing_demon.game import deal
from racing_demon.game.cards import Card, canonical_pack
from racing_demon.game.deal import (
    DEAL_ALGORITHM,
    MatchSeed,
    check_reveal,
    commitment,
    derive_pack,
    new_secret,
    pack_digest,
    shuffle_indices,
    uniform_below,
    word_stream,
)

from conftest import load_script

ROOT = Path(__file__).resolve().parents[1]
KAT_PATH = ROOT / "tests" / "vectors" / "deal-kat.json"
TWO_32 = 1 << 32
MAX_WORD = TWO_32 - 1

# --- Reference implementation, from docs/deal-spec.md only -------------------------------


def ref_lp(data: bytes) -> bytes:
    return len(data).to_bytes(4, "big") + data


PLAIN_SALT = b"racing-demon/plain-seed/v1"
MATCH_SALT = b"racing-demon/match-seed/v1"


def ref_plain_inputs(text: str) -> tuple[bytes, bytes]:
    """(salt, IKM) of a plain seed."""
    return PLAIN_SALT, text.encode("utf-8")


def ref_match_inputs(secret: bytes, contributions: Sequence[bytes]) -> tuple[bytes, bytes]:
    """(salt, IKM) of a committed match seed."""
    ikm = ref_lp(secret) + len(contributions).to_bytes(4, "big")
    for contribution in contributions:
        ikm += ref_lp(contribution)
    return MATCH_SALT, ikm


def ref_extract(salt: bytes, ikm: bytes) -> bytes:
    mac = crypto_hmac.HMAC(salt, hashes.SHA256())
    mac.update(ikm)
    return mac.finalize()


def ref_info(hand: int, seat: int, block: int) -> bytes:
    return (
        ref_lp(b"racing-demon/deal/v1")
        + hand.to_bytes(4, "big")
        + seat.to_bytes(4, "big")
        + block.to_bytes(4, "big")
    )


def ref_block(salt: bytes, ikm: bytes, hand: int, seat: int, block: int) -> bytes:
    # One-shot HKDF = Expand(Extract(salt, IKM)), the route a Web Crypto port would take.
    return HKDF(hashes.SHA256(), 224, salt, ref_info(hand, seat, block)).derive(ikm)


def ref_words(salt: bytes, ikm: bytes, hand: int, seat: int) -> Iterator[int]:
    for block in itertools.count():
        data = ref_block(salt, ikm, hand, seat, block)
        for offset in range(0, len(data), 4):
            yield int.from_bytes(data[offset : offset + 4], "big")


def ref_uniform(n: int, words: Iterator[int]) -> int:
    while True:
        word = next(words)
        if word < TWO_32 - TWO_32 % n:
            return word % n


def ref_shuffle(n: int, words: Iterator[int]) -> list[int]:
    a = list(range(n))
    i = n - 1
    while i >= 1:
        j = ref_uniform(i + 1, words)
        a[i], a[j] = a[j], a[i]
        i -= 1
    return a


def ref_face(index: int) -> str:
    return "A23456789TJQK"[index % 13] + "CDHS"[index // 13]


def ref_pack(salt: bytes, ikm: bytes, hand: int, seat: int) -> list[str]:
    order = ref_shuffle(52, ref_words(salt, ikm, hand, seat))
    return [f"{ref_face(index)}@{seat}" for index in order]


def ref_digest(hand: int, seat: int, faces: Sequence[str]) -> str:
    indices = bytes("CDHS".index(face[1]) * 13 + "A23456789TJQK".index(face[0]) for face in faces)
    message = ref_lp(b"racing-demon/pack/v1") + hand.to_bytes(4, "big") + seat.to_bytes(4, "big")
    return hashlib.sha256(message + indices).hexdigest()


def ref_commitment(secret: bytes) -> str:
    return hashlib.sha256(ref_lp(b"racing-demon/commit/v1") + ref_lp(secret)).hexdigest()


def faces(pack: Sequence[Card]) -> list[str]:
    return [card.face for card in pack]


@pytest.fixture(scope="module")
def kat() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(KAT_PATH.read_text(encoding="utf-8"))
    return data


# --- (a) RFC 5869's test vectors for the primitives deal.py uses --------------------------

# RFC 5869 appendix A, the three SHA-256 cases: (IKM, salt, info, L, PRK, OKM).
RFC5869_SHA256 = {
    "A.1 basic": (
        "0b" * 22,
        "000102030405060708090a0b0c",
        "f0f1f2f3f4f5f6f7f8f9",
        42,
        "077709362c2e32df0ddc3f0dc47bba6390b6c73bb50f9c3122ec844ad7c2b3e5",
        "3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865",
    ),
    "A.2 longer inputs and output": (
        bytes(range(0x00, 0x50)).hex(),
        bytes(range(0x60, 0xB0)).hex(),
        bytes(range(0xB0, 0x100)).hex(),
        82,
        "06a6b88c5853361a06104c9ceb35b45cef760014904671014a193f40c15fc244",
        "b11e398dc80327a1c8e7f78c596a49344f012eda2d4efad8a050cc4c19afa97c"
        "59045a99cac7827271cb41c65e590e09da3275600c2f09b8367793a9aca3db71"
        "cc30c58179ec3e87c14c01d5c1f3434f1d87",
    ),
    "A.3 empty salt and info": (
        "0b" * 22,
        "",
        "",
        42,
        "19ef24a32c717b167f33a91d6f648bdf96596776afdb6377ac434c1c293ccb04",
        "8da4e775a563c18f715f802a063c5a31b8a11f5c5ee1879ec3454e5f3c738d2d9d201395faa4b61a96c8",
    ),
}


@pytest.mark.parametrize(
    ("ikm", "salt", "info", "length", "prk", "okm"),
    RFC5869_SHA256.values(),
    ids=RFC5869_SHA256.keys(),
)
def test_rfc5869_vectors(ikm: str, salt: str, info: str, length: int, prk: str, okm: str) -> None:
    assert deal._hkdf_extract(bytes.fromhex(salt), bytes.fromhex(ikm)).hex() == prk
    assert deal._hkdf_expand(bytes.fromhex(prk), bytes.fromhex(info), length).hex() == okm


@given(
    prk=st.binary(min_size=32, max_size=64),
    info=st.binary(max_size=80),
    length=st.integers(min_value=1, max_value=700) | st.sampled_from([224, 255 * 32]),
)
@example(prk=bytes(32), info=b"", length=1)
def test_the_standard_library_expand_is_cryptography_s(
    prk: bytes, info: bytes, length: int
) -> None:
    """Issue 34, point 1: "the deal's HKDF moves from `cryptography` to `hashlib`/`hmac`
    (RFC 5869)": the same bytes as cryptography's HKDFExpand (a test dependency now), for
    keys of a hash's length up to a SHA-256 block and outputs up to RFC 5869's 255 hashes."""
    expected = HKDFExpand(hashes.SHA256(), length, info).derive(prk)
    assert deal._hkdf_expand(prk, info, length) == expected


@pytest.mark.parametrize(("prk_bytes", "length"), [(32, 0), (32, 255 * 32 + 1), (65, 32)])
def test_an_expand_out_of_its_range_is_refused(prk_bytes: int, length: int) -> None:
    """RFC 5869 §2.3: L <= 255 * HashLen; a key longer than a SHA-256 block is never a
    deal's PRK (32 bytes), so it is refused rather than hashed down."""
    with pytest.raises(ValueError, match="HKDF-Expand"):
        deal._hkdf_expand(bytes(prk_bytes), b"", length)


def test_expand_block_is_rfc5869_expand_with_the_spec_info() -> None:
    # RFC 5869 section 2.3 written out: T(i) = HMAC(PRK, T(i-1) || info || i).
    prk = MatchSeed.from_plain("demo").prk
    info = ref_info(7, 3, 2)
    okm, previous = b"", b""
    for counter in range(1, 8):
        mac = crypto_hmac.HMAC(prk, hashes.SHA256())
        mac.update(previous + info + bytes([counter]))
        previous = mac.finalize()
        okm += previous
    assert deal._expand_block(prk, 7, 3, 2) == okm


# --- (b) agreement with the reference implementation -------------------------------------

PLAIN_SEEDS = ("demo", "a", "tournament 2024 / round 3", "café ♠", "x" * 300)
MATCH_INPUTS = (
    (bytes(range(32)), (b"\x00" * 16,)),
    (bytes(range(100, 132)), (bytes(range(64)), b"sixteen bytes!!!", b"\xff" * 40)),
)


def all_seed_inputs() -> list[tuple[MatchSeed, tuple[bytes, bytes]]]:
    seeds = [(MatchSeed.from_plain(text), ref_plain_inputs(text)) for text in PLAIN_SEEDS]
    seeds += [
        (MatchSeed.from_secret(secret, contributions), ref_match_inputs(secret, contributions))
        for secret, contributions in MATCH_INPUTS
    ]
    return seeds


def test_prk_is_hkdf_extract_of_the_spec_inputs() -> None:
    for seed, (salt, ikm) in all_seed_inputs():
        assert seed.prk == ref_extract(salt, ikm)


def test_derive_pack_agrees_with_reference() -> None:
    cases = 0
    for seed, (salt, ikm) in all_seed_inputs():
        for hand, seat in itertools.product((1, 2, 3, 10, 99, 1000, 65536, MAX_WORD), range(6)):
            expected = ref_pack(salt, ikm, hand, seat)
            assert [str(card) for card in derive_pack(seed, hand, seat)] == expected
            cases += 1
    assert cases == 7 * 8 * 6


def test_word_stream_agrees_with_reference_across_blocks() -> None:
    for seed, (salt, ikm) in all_seed_inputs():
        ours = list(itertools.islice(word_stream(seed, 4, 1), 3 * 56 + 5))
        theirs = list(itertools.islice(ref_words(salt, ikm, 4, 1), 3 * 56 + 5))
        assert ours == theirs


def test_pack_digest_agrees_with_reference() -> None:
    seed = MatchSeed.from_plain("demo")
    for hand, seat in [(1, 0), (2, 5), (MAX_WORD, MAX_WORD)]:
        pack = derive_pack(seed, hand, seat)
        assert pack_digest(hand, seat, pack) == ref_digest(hand, seat, faces(pack))


# --- (c) known-answer vectors -------------------------------------------------------------


def test_kat_file_is_what_the_script_generates() -> None:
    regen = load_script("regen_deal_vectors")
    assert KAT_PATH.read_text(encoding="utf-8") == regen.render(regen.build_vectors())


def test_regen_check_fails_on_a_stale_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    regen = load_script("regen_deal_vectors")
    stale = tmp_path / "deal-kat.json"
    stale.write_text(KAT_PATH.read_text(encoding="utf-8").replace("QC", "KC", 1))
    monkeypatch.setattr(regen, "VECTORS_PATH", stale)
    assert regen.main(["--check"]) == 1
    assert regen.main([]) == 0
    assert regen.main(["--check"]) == 0


def check_seed_vectors(entry: dict[str, Any], seed: MatchSeed, salt: bytes, ikm: bytes) -> None:
    assert entry["prk"] == seed.prk.hex() == ref_extract(salt, ikm).hex()
    for case in entry["words"]:
        hand, seat, expected = case["hand"], case["seat"], case["first_words"]
        assert list(itertools.islice(ref_words(salt, ikm, hand, seat), 8)) == expected
        assert list(itertools.islice(word_stream(seed, hand, seat), 8)) == expected
    for case in entry["packs"]:
        hand, seat = case["hand"], case["seat"]
        assert [f"{face}@{seat}" for face in case["faces"]] == ref_pack(salt, ikm, hand, seat)
        pack = derive_pack(seed, hand, seat)
        assert faces(pack) == case["faces"]
        assert pack_digest(hand, seat, pack) == case["digest"]
        assert ref_digest(hand, seat, case["faces"]) == case["digest"]
        assert case["words_consumed"] == 51 + len(case["rejected_words"])


def test_kat_plain_seeds_against_reference(kat: dict[str, Any]) -> None:
    assert kat["algorithm"] == DEAL_ALGORITHM
    for entry in kat["plain_seeds"]:
        salt, ikm = ref_plain_inputs(entry["seed"])
        check_seed_vectors(entry, MatchSeed.from_plain(entry["seed"]), salt, ikm)


def test_kat_match_seed_against_reference(kat: dict[str, Any]) -> None:
    (entry,) = kat["match_seeds"]
    secret = bytes.fromhex(entry["secret"])
    contributions = [bytes.fromhex(text) for text in entry["contributions"]]
    assert entry["commitment"] == ref_commitment(secret) == commitment(secret)
    salt, ikm = ref_match_inputs(secret, contributions)
    check_seed_vectors(entry, MatchSeed.from_secret(secret, contributions), salt, ikm)


def test_kat_includes_a_real_rejection(kat: dict[str, Any]) -> None:
    rejecting = [
        (entry["seed"], pack)
        for entry in kat["plain_seeds"]
        for pack in entry["packs"]
        if pack["rejected_words"]
    ]
    assert len(rejecting) == 1
    seed_text, pack = rejecting[0]
    (rejection,) = pack["rejected_words"]
    n, word = rejection["n"], rejection["word"]
    assert word >= TWO_32 - TWO_32 % n
    seed = MatchSeed.from_plain(seed_text)
    stream = list(itertools.islice(word_stream(seed, pack["hand"], pack["seat"]), 56))
    position = rejection["position"]
    assert stream[position] == word
    order = [Card.from_face(face, 0).index for face in pack["faces"]]
    assert shuffle_indices(52, iter(stream)) == order
    # Dropping the word by hand gives the same pack, so it really was skipped; using it, as
    # plain ``w mod n`` would, gives a different pack.
    assert modulo_only_shuffle(stream[:position] + stream[position + 1 :]) == order
    assert modulo_only_shuffle(stream) != order


def modulo_only_shuffle(words: Sequence[int]) -> list[int]:
    """Fisher-Yates with ``j = w mod n`` and no rejection: the biased shortcut."""
    a = list(range(52))
    for i, word in zip(range(51, 0, -1), words, strict=False):
        j = word % (i + 1)
        a[i], a[j] = a[j], a[i]
    return a


def test_kat_crafted_shuffles(kat: dict[str, Any]) -> None:
    assert len(kat["shuffles"]) >= 5
    for case in kat["shuffles"]:
        n, words = case["n"], case["words"]
        assert ref_shuffle(n, iter(words)) == case["expected"]
        stream = iter(words)
        assert shuffle_indices(n, stream) == case["expected"]
        assert len(words) - len(list(stream)) == case["words_consumed"]


def test_worked_example_in_the_spec_is_current() -> None:
    spec = (ROOT / "docs" / "deal-spec.md").read_text(encoding="utf-8")
    seed = MatchSeed.from_plain("demo")
    pack = derive_pack(seed, 1, 0)
    assert seed.prk.hex() in spec
    assert pack_digest(1, 0, pack) in spec
    assert commitment(bytes(range(32))) in spec
    words = list(itertools.islice(word_stream(seed, 1, 0), 8))
    assert ", ".join(map(str, words)) in re.sub(r"\s+", " ", spec)
    assert " ".join(faces(pack)[:26]) in spec
    assert " ".join(faces(pack)[26:]) in spec


# --- (d) the rejection path ---------------------------------------------------------------


def test_uniform_below_skips_a_rejected_word() -> None:
    words = iter([MAX_WORD, 7, 99])
    assert uniform_below(3, words) == 7 % 3
    assert next(words) == 99  # exactly the rejected word and the accepted one were consumed


def test_uniform_below_limits() -> None:
    limit_52 = TWO_32 - TWO_32 % 52
    assert limit_52 == 4294967248
    assert uniform_below(52, iter([limit_52 - 1])) == 51
    assert uniform_below(52, iter([limit_52, 5])) == 5
    assert uniform_below(52, iter([MAX_WORD, limit_52, limit_52 + 1, 0])) == 0
    # Powers of two divide 2^32: nothing is rejected.
    assert uniform_below(2, iter([MAX_WORD])) == 1
    assert uniform_below(32, iter([MAX_WORD])) == 31


def test_uniform_below_reports_an_exhausted_stream() -> None:
    with pytest.raises(ValueError, match="ran out"):
        uniform_below(3, iter([MAX_WORD]))


def test_crafted_shuffles_by_hand() -> None:
    # n = 3: MAX_WORD is rejected, 1 gives j = 1 (swap positions 2 and 1), then n = 2 takes
    # MAX_WORD (accepted: 2 divides 2^32) giving j = 1, no swap.
    assert shuffle_indices(3, iter([MAX_WORD, 1, MAX_WORD])) == [0, 2, 1]
    # Without the rejection, MAX_WORD % 3 = 0 would swap positions 2 and 0.
    assert shuffle_indices(3, iter([0, 1])) == [2, 1, 0]
    assert shuffle_indices(1, iter([])) == [0]
    assert shuffle_indices(4, iter([3, 2, 1])) == [0, 1, 2, 3]
    assert shuffle_indices(4, iter([0, 0, 0])) == [1, 2, 3, 0]


@pytest.mark.pure_python  # forges deal._expand_block, called natively when compiled
def test_rejections_spill_into_the_next_block(monkeypatch: pytest.MonkeyPatch) -> None:
    # Make block 0 all 0xFF: every word is rejected for n = 52, so the whole shuffle must come
    # from block 1 onwards, fetched lazily; the fast path must notice and step aside.
    seed = MatchSeed.from_plain("spill")
    real_block = deal._expand_block

    def forged(prk: bytes, hand: int, seat: int, block: int) -> bytes:
        return b"\xff" * 224 if block == 0 else real_block(prk, hand, seat, block)

    monkeypatch.setattr(deal, "_expand_block", forged)
    salt, ikm = ref_plain_inputs("spill")
    later_words = itertools.islice(ref_words(salt, ikm, 5, 2), 56, None)
    expected = ref_shuffle(52, later_words)
    assert [card.index for card in derive_pack(seed, 5, 2)] == expected
    monkeypatch.undo()
    assert [card.index for card in derive_pack(seed, 5, 2)] != expected


def test_fast_path_premise_every_rejectable_word_starts_with_three_ff_bytes() -> None:
    for n in range(2, 53):
        assert TWO_32 - TWO_32 % n >= 0xFFFFFF00


# Words that a forged block 0 may hold beyond plain random ones: rejected for some n, or with
# FF FF FF bytes alone or across two words, which send derive_pack past its one-block shortcut.
SPECIAL_WORDS = (MAX_WORD, TWO_32 - 52, 0xFFFFFF00, 0x00FFFFFF, 0x0000FFFF, 0xFFFF0000, 0xFF000000)


@st.composite
def block_words(draw: st.DrawFn) -> list[int]:
    words = draw(st.lists(st.integers(0, MAX_WORD), min_size=56, max_size=56))
    for position in draw(st.lists(st.integers(0, 55), max_size=3)):
        words[position] = draw(st.sampled_from(SPECIAL_WORDS))
    return words


def plain_words_with(changes: dict[int, int]) -> list[int]:
    words = [0x12345678 + 0x01010101 * k for k in range(56)]
    for position, word in changes.items():
        words[position] = word
    return words


@pytest.mark.pure_python  # forges deal._expand_block, called natively when compiled
@given(block_words())
@example(plain_words_with({}))  # the shortcut
@example(plain_words_with({9: 0x0000FFFF, 10: 0xFF000000}))  # FF FF FF across words 9 and 10
@example(plain_words_with({50: 0xFFFFFF00}))  # FF FF FF, accepted (n = 2)
@example(plain_words_with({50: 0x0000FFFF, 51: 0xFF000000}))  # ends past word 50: shortcut
@example(plain_words_with({51: MAX_WORD, 55: MAX_WORD}))  # words never drawn: the shortcut
@example(plain_words_with({0: TWO_32 - 48}))  # rejected for n = 52
@example(plain_words_with(dict.fromkeys(range(51), MAX_WORD)))  # into block 1
def test_the_one_block_shortcut_agrees_with_the_general_path(words: list[int]) -> None:
    # derive_pack shuffles from block 0 alone when no FF FF FF in its first 51 words lets a
    # word be rejected; otherwise it takes shuffle_indices over the lazy stream. Either way
    # the pack is the reference's over the same stream (block 0 forged, later ones real).
    block = b"".join(word.to_bytes(4, "big") for word in words)
    seed = MatchSeed.from_plain("shortcut")
    real_block, real_shuffle = deal._expand_block, deal.shuffle_indices
    general: list[int] = []

    def forged(prk: bytes, hand: int, seat: int, index: int) -> bytes:
        return block if index == 0 else real_block(prk, hand, seat, index)

    def counted(n: int, stream: Iterator[int]) -> list[int]:
        general.append(n)
        return real_shuffle(n, stream)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(deal, "_expand_block", forged)
        patch.setattr(deal, "shuffle_indices", counted)
        pack = derive_pack(seed, 5, 2)
    salt, ikm = ref_plain_inputs("shortcut")
    stream = itertools.chain(words, itertools.islice(ref_words(salt, ikm, 5, 2), 56, None))
    assert [card.index for card in pack] == ref_shuffle(52, stream)
    assert general == ([52] if b"\xff\xff\xff" in block[:204] else [])


# --- (e) packs are permutations and depend on every input ---------------------------------


def test_packs_are_permutations_with_the_right_owner() -> None:
    seed = MatchSeed.from_plain("permutations")
    for hand, seat in itertools.product(range(1, 30), range(5)):
        pack = derive_pack(seed, hand, seat)
        assert len(pack) == 52
        assert sorted(card.index for card in pack) == list(range(52))
        assert {card.owner for card in pack} == {seat}


def test_packs_differ_between_hands_seats_and_seeds() -> None:
    packs = {
        (text, hand, seat): faces(derive_pack(MatchSeed.from_plain(text), hand, seat))
        for text in ("one", "two", "One")
        for hand in (1, 2, 3)
        for seat in (0, 1, 2)
    }
    distinct = {tuple(order) for order in packs.values()}
    assert len(distinct) == len(packs)
    # The order is not the canonical one.
    assert all(order != faces(canonical_pack(0)) for order in packs.values())


def test_match_seed_depends_on_every_input() -> None:
    secret = bytes(range(32))
    base = (b"a" * 16, b"b" * 16)
    seeds = {
        MatchSeed.from_secret(secret, base).prk,
        MatchSeed.from_secret(bytes(range(1, 33)), base).prk,
        MatchSeed.from_secret(secret, (b"b" * 16, b"a" * 16)).prk,  # seat order matters
        MatchSeed.from_secret(secret, (b"a" * 16, b"b" * 17)).prk,
        MatchSeed.from_secret(secret, (b"a" * 16,)).prk,
        MatchSeed.from_plain("a" * 16).prk,
    }
    assert len(seeds) == 6


def test_derive_pack_is_deterministic() -> None:
    first = derive_pack(MatchSeed.from_plain("again"), 3, 1)
    assert derive_pack(MatchSeed.from_plain("again"), 3, 1) == first


# --- (f) input validation -----------------------------------------------------------------


@pytest.mark.parametrize("length", [0, 16, 31, 33, 64])
def test_secret_must_be_32_bytes(length: int) -> None:
    with pytest.raises(ValueError, match="dealer secret must be 32 bytes"):
        MatchSeed.from_secret(bytes(length), [bytes(16)])
    with pytest.raises(ValueError, match="dealer secret must be 32 bytes"):
        commitment(bytes(length))


@pytest.mark.parametrize("length", [0, 15, 65, 128])
def test_contribution_length_is_checked(length: int) -> None:
    with pytest.raises(ValueError, match=rf"seat 1's contribution is {length} bytes"):
        MatchSeed.from_secret(bytes(32), [bytes(16), bytes(length)])


def test_contribution_length_bounds_are_inclusive() -> None:
    MatchSeed.from_secret(bytes(32), [bytes(16), bytes(64)])


def test_contributions_are_required() -> None:
    with pytest.raises(ValueError, match="got none"):
        MatchSeed.from_secret(bytes(32), [])


def test_plain_seed_must_be_non_empty_text() -> None:
    with pytest.raises(ValueError, match="non-empty"):
        MatchSeed.from_plain("")
    with pytest.raises(ValueError, match="UTF-8"):
        MatchSeed.from_plain("\ud800")


def test_match_seed_must_be_32_bytes() -> None:
    with pytest.raises(ValueError, match="32 bytes, got 31"):
        MatchSeed(bytes(31))


@pytest.mark.parametrize(
    ("hand", "seat", "message"),
    [
        (0, 0, "hand 0"),
        (-1, 0, "hand -1"),
        (TWO_32, 0, "hand 4294967296"),
        (1, -1, "seat -1"),
        (1, TWO_32, "seat 4294967296"),
    ],
)
def test_hand_and_seat_ranges(hand: int, seat: int, message: str) -> None:
    seed = MatchSeed.from_plain("ranges")
    with pytest.raises(ValueError, match=message):
        derive_pack(seed, hand, seat)
    with pytest.raises(ValueError, match=message):
        word_stream(seed, hand, seat)  # checked eagerly, not on the first word
    with pytest.raises(ValueError, match=message):
        pack_digest(hand, seat, canonical_pack(max(seat, 0)))


@pytest.mark.parametrize("n", [-1, 0, 1, TWO_32 + 1])
def test_uniform_below_range(n: int) -> None:
    with pytest.raises(ValueError, match=re.escape("outside 2..2**32")):
        uniform_below(n, iter([0]))


def test_shuffle_indices_needs_an_item() -> None:
    with pytest.raises(ValueError, match="cannot shuffle 0 items"):
        shuffle_indices(0, iter([]))


def test_pack_digest_rejects_a_malformed_pack() -> None:
    pack = derive_pack(MatchSeed.from_plain("digest"), 1, 2)
    with pytest.raises(ValueError, match="52 cards, got 51"):
        pack_digest(1, 2, pack[:51])
    with pytest.raises(ValueError, match="repeats a card"):
        pack_digest(1, 2, (*pack[:51], pack[0]))
    with pytest.raises(ValueError, match="not owned by seat 3"):
        pack_digest(1, 3, pack)


# --- (g) commitment and reveal ------------------------------------------------------------


def test_commit_reveal_round_trip() -> None:
    secret = new_secret()
    assert len(secret) == 32
    published = commitment(secret)
    assert re.fullmatch(r"[0-9a-f]{64}", published)
    assert published == ref_commitment(secret)
    assert check_reveal(secret, published)
    assert check_reveal(secret, published.upper())


def test_a_wrong_secret_is_refused() -> None:
    secret = bytes(range(32))
    published = commitment(secret)
    assert not check_reveal(bytes(range(1, 33)), published)
    assert not check_reveal(secret[:31], published)
    assert not check_reveal(secret + b"\x00", published)
    assert not check_reveal(secret, published[:-1])
    assert not check_reveal(secret, "")


def test_new_secrets_differ() -> None:
    assert new_secret() != new_secret()


def test_match_seed_repr_hides_the_key() -> None:
    seed = MatchSeed.from_plain("hidden")
    assert seed.prk.hex() not in repr(seed)
    assert str(list(seed.prk)) not in repr(seed)
    assert repr(seed.prk) not in repr(seed)


# --- (h) no use of Python's random module anywhere in the package -------------------------


def imports_random(source: str) -> bool:
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        else:
            continue
        if any(name == "random" or name.startswith("random.") for name in names):
            return True
    return False


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("import random", True),
        ("import os, random as r", True),
        ("from random import shuffle", True),
        ("def f():\n    import random\n", True),
        ("import secrets", False),
        ("from racing_demon import randomness", False),
        ("import randomx", False),
    ],
)
def test_imports_random_detector(source: str, expected: bool) -> None:
    assert imports_random(source) is expected


def test_package_never_imports_random() -> None:
    package = ROOT / "src" / "racing_demon"
    modules = sorted(package.rglob("*.py"))
    assert package / "game" / "deal.py" in modules
    offenders = [
        str(path.relative_to(ROOT))
        for path in modules
        if imports_random(path.read_text(encoding="utf-8"))
    ]
    assert offenders == []


# --- (i) properties -----------------------------------------------------------------------


@given(
    text=st.text(min_size=1, max_size=40),
    hand=st.integers(1, MAX_WORD),
    seat=st.integers(0, MAX_WORD),
)
def test_any_seed_gives_a_stable_permutation(text: str, hand: int, seat: int) -> None:
    seed = MatchSeed.from_plain(text)
    pack = derive_pack(seed, hand, seat)
    assert [str(card) for card in pack] == ref_pack(*ref_plain_inputs(text), hand, seat)
    assert sorted(card.index for card in pack) == list(range(52))
    assert all(card.owner == seat for card in pack)
    digest = pack_digest(hand, seat, pack)
    assert re.fullmatch(r"[0-9a-f]{64}", digest)
    again = derive_pack(MatchSeed.from_plain(text), hand, seat)
    assert pack_digest(hand, seat, again) == digest
    # The digest covers the order: exchanging two cards changes it.
    swapped = (pack[1], pack[0], *pack[2:])
    assert pack_digest(hand, seat, swapped) != digest


def test_a_committed_seed_deals_exactly_its_contributors() -> None:
    from racing_demon.game.deal import deal_hand
    from racing_demon.profiles import load_rules

    seed = MatchSeed.from_secret(bytes(32), [bytes(16), bytes(range(16))])
    assert seed.seats == 2
    state, packs = deal_hand(load_rules("table"), seed, hand=1, players=2)
    assert [pack[0].owner for pack in packs] == [0, 1]
    assert state.players == 2
    with pytest.raises(ValueError, match="entropy from 2 seats: it cannot deal 3"):
        deal_hand(load_rules("table"), seed, hand=1, players=3)
    assert MatchSeed.from_plain("any").seats is None
