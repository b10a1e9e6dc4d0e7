"""A table resumed after an upgrade goes on in its log's own format (docs/log-format.md §8:
"A table resumes a log of format v2, v3 or v4 and goes on in that format (`Table.version`),
whatever the newest is, so a server upgraded while a match was played loses no table"):
every record, the players' signatures and their acceptances are made in the version the
genesis began, and a v2 log gets no note (§6)."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from racing_demon.game.engine import legal_moves
from racing_demon.game.flow import RecordKind
from racing_demon.log.canonical import canonical_bytes
from racing_demon.log.receipts import SubmissionCode
from racing_demon.log.records import FORMAT_VERSION, Pause, PauseCause
from racing_demon.log.signing import sign
from racing_demon.table import ResumeError, SubmissionError, Table, player_signer, sign_submission
from racing_demon.testing.randomplay import play_on
from racing_demon.verify import Settings, Verdict, verify_log

from tampering import PLAYER_KEYS, SECRET, TABLE_KEY, TABLE_PUB, as_format, seal, values_of, write

KEYS = PLAYER_KEYS[:2]  # tampering's "table" match has two seats


def unfinished(tmp_path: Path, version: int, keyed: bool = True) -> Path:
    """The first half of a match, no final record, as a table of format ``version`` wrote
    it (its keyed seats' signatures made in that format): what a server upgraded mid-match
    finds in its data folder."""
    values = values_of("table", keyed)
    kept = as_format(values[: len(values) // 2], version)
    genesis = kept[0]
    if keyed:  # the seats co-signed the genesis in its own format
        body = canonical_bytes(genesis["body"])
        genesis["sigs"]["players"] = [
            sign(key, RecordKind.GENESIS.value, body, version) for key in KEYS
        ]
    return write(tmp_path, seal(kept, player_keys=KEYS if keyed else None))


def bodies(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line)["body"] for line in path.read_bytes().splitlines()]


@pytest.mark.parametrize("version", [2, 3, FORMAT_VERSION])
def test_a_resumed_match_goes_on_in_its_own_format_to_a_verified_end(
    tmp_path: Path, version: int
) -> None:
    path = unfinished(tmp_path, version)
    kept = len(bodies(path))
    signers = [player_signer(key) for key in KEYS]  # each signs in the version asked

    with Table.resume(path, TABLE_KEY, SECRET, player_signers=signers) as table:
        assert table.version == version
        play_on(table, random.Random(version).choice, player_keys=KEYS)

    assert table.finished
    written = bodies(path)
    assert len(written) > kept + 1  # the match was played on, not only ended
    assert {body["v"] for body in written} == {version}
    report = verify_log(path, Settings(table_key=TABLE_PUB))
    assert report.verdict is Verdict.VERIFIED, report.finding
    assert report.format_version == version
    assert report.accepted_by == (0, 1)  # each seat's acceptance made in the log's format


def test_a_v2_match_resumed_gets_no_note(tmp_path: Path) -> None:
    """§6: "pause" and "lag" are format v3's; a v2 log cannot hold them."""
    with Table.resume(unfinished(tmp_path, 2), TABLE_KEY, SECRET) as table:
        before = table.records
        written = table.note(Pause(cause=PauseCause.CRASH, down_ms=1200), table.now)
        assert written is False
        assert table.records == before


def test_a_submission_signed_in_another_format_is_refused(tmp_path: Path) -> None:
    """A signature binds its format version (§5): a client signing in v3 at a table that
    goes on in v2 signs another statement than the one the log holds."""
    path = unfinished(tmp_path, 2)
    with Table.resume(path, TABLE_KEY, SECRET) as table:
        seat, seen, hand = 0, table.head, table.state.hand
        text = str(next(iter(legal_moves(table.state, seat))))
        n = table.next_n(seat)

        def signed(version: int) -> str:
            return sign_submission(KEYS[seat], table.game, hand, seat, n, text, seen, version)

        with pytest.raises(SubmissionError) as refused:
            table.submit(seat, text, table.now, n, signed(3), seen)
        assert refused.value.code is SubmissionCode.BAD_SIGNATURE
        assert refused.value.receipt is not None  # the player keeps the refusal
        outcome = table.submit(seat, text, table.now, n, signed(2), seen)
        logged = bodies(path)[outcome.seq]
        assert (logged["player"], logged["n"], logged["v"]) == (seat, n, 2)


def test_a_v1_log_is_not_resumed(tmp_path: Path) -> None:
    """A v1 log has no ``seen`` and no acceptances, which a table writes: it is verified,
    never continued."""
    with pytest.raises(ResumeError, match="format v1: a table continues logs of format v2"):
        Table.resume(unfinished(tmp_path, 1, keyed=False), TABLE_KEY, SECRET)


def test_a_resumed_table_names_a_race_won_before_the_restart(tmp_path: Path) -> None:
    """§6, `lost_to`: "the winner may be any earlier record of the hand": a table resumed
    between the winning record and the bounce rebuilds the hand's races from its log and
    names the same winner as the table that was not stopped."""
    values = values_of("nertz")
    at = next(
        index
        for index, value in enumerate(values)
        if value["body"]["kind"] == "bounce" and "lost_to" in value["body"]
    )
    bounce = values[at]["body"]
    path = write(tmp_path, seal(values[:at]))
    with Table.resume(path, TABLE_KEY, SECRET) as table:
        seat, n = bounce["player"], bounce["n"]
        assert table.next_n(seat) == n and table.records == at  # nothing was due
        outcome = table.submit(seat, bounce["move"], bounce["t_ms"], n)
        assert (outcome.kind, outcome.reason) == ("bounce", "FOUNDATION_TAKEN")
        assert bodies(path)[outcome.seq]["lost_to"] == bounce["lost_to"]
