"""Logs to tamper with, and the tampering a dishonest table can do, for the verifier's tests.

Logs are played by random players at a real ``Table`` (cached: each is played once per
run). ``seal`` re-chains and re-signs edited records with the table's own key (the one
helper, ``racing_demon.testing.tamper.reseal``), so that a tampered log gets past the chain
and the signatures and a later step has to catch it.
"""

from __future__ import annotations

import functools
import io
import json
import random
import tempfile
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from racing_demon.game.rules import Rules
from racing_demon.log.keys import public_pem, raw_public_bytes
from racing_demon.log.reader import ReadCode
from racing_demon.log.records import LOST_TO_VERSION
from racing_demon.outcomes import exit_code_of
from racing_demon.profiles import builtin_document, custom_variant, load_rules, rules_from_document
from racing_demon.testing.randomplay import play_match
from racing_demon.testing.tamper import reseal
from racing_demon.verify import Finding, Report, Settings, Step, Verdict, VerifyCode, verify_log

TABLE_KEY = Ed25519PrivateKey.from_private_bytes(bytes([1]) * 32)
TABLE_PUB = raw_public_bytes(TABLE_KEY)
OTHER_KEY = Ed25519PrivateKey.from_private_bytes(bytes([2]) * 32)
PLAYER_KEYS = [Ed25519PrivateKey.from_private_bytes(bytes([10 + seat]) * 32) for seat in range(4)]
SECRET = bytes([7]) * 32
PINNED = Settings(table_key=TABLE_PUB)

Value = dict[str, Any]


def one_hand(profile: str) -> Rules:
    """A variant of a built-in profile whose match is one hand: short logs."""
    document = builtin_document(profile)
    document["match"]["max_hands"] = 1
    return custom_variant(rules_from_document(document))


@cache
def _played(profile: str, players: int, seed: int, keyed: bool) -> tuple[bytes, ...]:
    name, _, variant = profile.partition("/")
    with tempfile.TemporaryDirectory() as directory:
        log = Path(directory) / "game.jsonl"
        play_match(
            log,
            one_hand(name) if variant else load_rules(name),
            TABLE_KEY,
            SECRET,
            [bytes([seat]) * 16 for seat in range(players)],
            random.Random(seed).choice,
            player_keys=PLAYER_KEYS[:players] if keyed else None,
        )
        return tuple(log.read_bytes().splitlines())


# Chosen for size and variety: ties, stalls, calls and a HAND_OVER bounce (table);
# FOUNDATION_TAKEN bounces and demon_empty ends (nertz); one short hand (peer2peer); one
# blocked hand (a one-hand variant of table).
LOGS = {
    "table": ("table", 2, 6),
    "nertz": ("nertz", 2, 8),
    "peer2peer": ("peer2peer", 3, 3),
    "short": ("peer2peer", 2, 2),
    "blocked": ("table/one-hand", 2, 4),
}


def lines_of(name: str, keyed: bool = False) -> list[bytes]:
    return list(_played(*LOGS[name], keyed))


def values_of(name: str, keyed: bool = False) -> list[Value]:
    return [json.loads(line) for line in lines_of(name, keyed)]


def as_format(values: list[Value], version: int) -> list[Value]:
    """``values`` (in place, to be sealed again) as a log of format ``version``: what
    that format has not goes (a bounce's ``lost_to`` before v4; each submission's
    ``seen`` and the final record's acceptances in v1). Only an unkeyed log stays valid:
    its players signed the newest format."""
    for value in values:
        value["body"]["v"] = version
        if version < LOST_TO_VERSION:
            value["body"].pop("lost_to", None)
        if version == 1:
            value["body"].pop("seen", None)
            value["sigs"].pop("accepts", None)
    return values


def retitled(values: list[Value]) -> list[Value]:
    """``values`` (in place, to be sealed again) with the genesis's rules document given
    another title and the digest that follows: custom rules that keep the built-in
    profile's name and play exactly as it does."""
    genesis = values[0]["body"]
    genesis["rules"]["title"] = "House rules"
    genesis["rules_sha256"] = rules_from_document(genesis["rules"]).digest()
    return values


def write(tmp_path: Path, lines: list[bytes], name: str = "game.jsonl") -> Path:
    path = tmp_path / name
    path.write_bytes(b"".join(line + b"\n" for line in lines))
    return path


# The one re-chain/re-sign helper (racing_demon.testing.tamper.reseal), signing as this
# module's table, with OTHER_KEY for the ``forged`` lines.
seal = functools.partial(reseal, key=TABLE_KEY, forged_key=OTHER_KEY)


def verify_lines(tmp_path: Path, lines: list[bytes], settings: Settings = PINNED) -> Report:
    return verify_log(write(tmp_path, lines), settings)


def first(
    values: list[Value], kinds: str | frozenset[str], where: Callable[[Value], bool] = bool
) -> int:
    """The index of the first record of one of ``kinds`` whose body satisfies ``where``."""
    kinds = frozenset({kinds}) if isinstance(kinds, str) else kinds
    return next(
        index
        for index, value in enumerate(values)
        if value["body"]["kind"] in kinds and where(value["body"])
    )


def stream_of(lines: list[bytes]) -> io.BytesIO:
    return io.BytesIO(b"".join(line + b"\n" for line in lines))


def assert_fails(
    report: Report, step: Step, code: VerifyCode | ReadCode, line: int | None
) -> Finding:
    assert (report.verdict, report.step) == (Verdict.DOES_NOT_VERIFY, step), report
    assert report.finding is not None
    assert (report.finding.code, report.finding.line) == (code, line), report.finding
    assert exit_code_of(report) == 1
    return report.finding


def write_public_key(path: Path, key: Ed25519PrivateKey = TABLE_KEY) -> Path:
    """``key``'s public half as an SPKI PEM file at ``path``."""
    path.write_bytes(public_pem(key))
    return path


# Two changes of a log where a signature's group equation fails and another check fails
# too, after it in verify's order (docs/log-format.md §7): each edits the lines in place and
# returns the index of the line whose table signature no longer holds. For the engine
# page, which must order a failure of the host's equations as verify does.
def renumbered_unsigned(lines: list[bytes]) -> int:
    """A submission's ``n`` changed and not signed again: its table's equation fails, and
    so does its number (SUBMISSION_GAP), a later check on the same line."""
    index = next(i for i, line in enumerate(lines) if b'"n":0' in line)
    lines[index] = lines[index].replace(b'"n":0', b'"n":1', 1)
    return index


def cut_with_a_forged_table_signature(lines: list[bytes]) -> int:
    """No final record (UNFINISHED, found at the end of the file) and a table signature on
    the last line that does not hold, found on its line before that."""
    del lines[-1]
    value = json.loads(lines[-1])
    value["sigs"]["table"] = value["sigs"]["table"][:-2] + (
        "00" if value["sigs"]["table"][-2:] != "00" else "01"
    )
    lines[-1] = json.dumps(value, separators=(",", ":"), sort_keys=True).encode()
    return len(lines) - 1


EQUATION_FIRST: tuple[Callable[[list[bytes]], int], ...] = (
    renumbered_unsigned,
    cut_with_a_forged_table_signature,
)
