"""The table: what it writes, what it refuses to write, and races at one millisecond."""

from __future__ import annotations

import io
import json
import random
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

import racing_demon.table as table_api
from racing_demon.game.engine import legal_moves
from racing_demon.game.flow import RecordKind, Seen
from racing_demon.game.moves import MoveKind
from racing_demon.log.canonical import canonical_bytes
from racing_demon.log.keys import raw_public_bytes
from racing_demon.log.reader import read_lines
from racing_demon.log.records import body_hash, chain_hash
from racing_demon.log.signing import sign, verify
from racing_demon.profiles import BUILT_IN, load_rules
from racing_demon.schema import schema_errors
from racing_demon.table import (
    PlayerInfo,
    SubmissionCode,
    SubmissionError,
    Table,
    TableCode,
    TableError,
    player_signer,
    sign_submission,
)
from racing_demon.testing.randomplay import play_match

SECRET = bytes(range(32))
TABLE_KEY = Ed25519PrivateKey.from_private_bytes(bytes(range(1, 33)))
PLAYER_KEYS = [Ed25519PrivateKey.from_private_bytes(bytes([seat + 40] * 32)) for seat in range(4)]


def entropy(seats: int) -> list[bytes]:
    return [bytes([seat + 1]) * 16 for seat in range(seats)]


def keyed_table(path: Path, profile: str = "table", seats: int = 2) -> Table:
    keys = PLAYER_KEYS[:seats]
    players = [
        PlayerInfo(f"p{seat}", f"b{seat}", raw_public_bytes(k.public_key()))
        for seat, k in enumerate(keys)
    ]
    return Table.create(
        path,
        load_rules(profile),
        players,
        TABLE_KEY,
        SECRET,
        None,
        player_signers=[player_signer(key) for key in keys],
    )


def records(path: Path) -> list[dict[str, object]]:
    with path.open("rb") as stream:
        return [line.value for line in read_lines(stream)]


@pytest.mark.slow
@pytest.mark.parametrize("profile", BUILT_IN)
def test_a_whole_match_writes_a_sound_signed_chain(tmp_path: Path, profile: str) -> None:
    path = tmp_path / "game.jsonl"
    table = play_match(
        path,
        load_rules(profile),
        TABLE_KEY,
        SECRET,
        entropy(3),
        random.Random(3).choice,
        player_keys=PLAYER_KEYS[:3],
    )
    assert table.finished  # a finished table has closed its file
    raw = path.read_bytes()
    assert raw.endswith(b"\n")
    lines = raw.split(b"\n")[:-1]
    values = records(path)  # strict, canonical reading of every line
    assert len(values) == len(lines)
    table_public = raw_public_bytes(TABLE_KEY.public_key())
    for seq, value in enumerate(values):
        assert schema_errors("log-record", value) == []
        body = value["body"]
        assert isinstance(body, dict)
        assert body["seq"] == seq
        assert body.get("prev") == (chain_hash(lines[seq - 1]) if seq else None)
        sigs = value["sigs"]
        assert isinstance(sigs, dict)
        message = canonical_bytes(body)
        assert verify(table_public, body["kind"], message, sigs["table"], body["v"]) is None
    kinds = [value["body"]["kind"] for value in values]  # type: ignore[index]
    assert kinds[0] == "genesis" and kinds[1] == "hand_start" and kinds[-1] == "final"
    assert kinds.count("final") == 1
    final = values[-1]["body"]
    assert isinstance(final, dict)
    assert final["records"] == len(values) - 1
    assert final["secret"] == SECRET.hex()
    assert final["totals"] == list(table.match.totals)


@pytest.mark.slow
@pytest.mark.parametrize(("profile", "kind"), [("table", "tie"), ("nertz", "bounce")])
def test_races_at_one_millisecond_tie_or_bounce(tmp_path: Path, profile: str, kind: str) -> None:
    # Same-millisecond races: the table's tie rule keeps both cards; elsewhere the later
    # card lost its race.
    path = tmp_path / "game.jsonl"
    rules = load_rules(profile)
    play_match(path, rules, TABLE_KEY, SECRET, entropy(4), random.Random(5).choice).close()
    bodies = [value["body"] for value in records(path)]
    assert any(body["kind"] == kind for body in bodies)  # type: ignore[index]
    if kind == "bounce":
        reasons = {body.get("reason") for body in bodies}  # type: ignore[union-attr]
        assert "FOUNDATION_TAKEN" in reasons


def test_submissions_are_checked_before_anything_is_written(tmp_path: Path) -> None:
    path = tmp_path / "game.jsonl"
    with keyed_table(path) as table:
        check_refusals(path, table)


def check_refusals(path: Path, table: Table) -> None:
    move = str(next(m for m in legal_moves(table.state, 0) if m.kind is MoveKind.TURN))
    seen = table.head
    good = sign_submission(PLAYER_KEYS[0], table.game, 1, 0, 0, move, seen)
    elsewhere = Seen(seq=seen.seq, hash="0" * 64)  # a record of another history
    before = path.read_bytes()
    W = SubmissionCode
    refusals = [
        ((0, move, 5, 1, good, seen), "next submission is 0", W.WRONG_NUMBER),
        ((0, move, 5, 0, None, seen), "signature is missing", W.MISSING_SIGNATURE),
        ((0, move, 5, 0, good, None), "seen is missing", W.SEEN_MISSING),
        ((0, move, 5, 0, good, elsewhere), "not one of the last", W.SEEN_UNKNOWN),
        (
            (0, move, 5, 0, good, Seen(seq=seen.seq + 1, hash=seen.hash)),
            "not one of the last",
            W.SEEN_UNKNOWN,
        ),
        (
            (0, move, 5, 0, sign_submission(PLAYER_KEYS[1], table.game, 1, 0, 0, move, seen), seen),
            "does not verify",
            W.BAD_SIGNATURE,
        ),
        (
            (0, move, 5, 0, sign_submission(PLAYER_KEYS[0], "0" * 32, 1, 0, 0, move, seen), seen),
            "does not verify",
            W.BAD_SIGNATURE,
        ),
        ((1, move, 5, 0, good, seen), "not a move of seat 1", W.NOT_ITS_MOVE),
        ((0, "0 jump", 5, 0, good, seen), "unknown action", W.BAD_MOVE_TEXT),
        ((7, move, 5, 0, good, seen), "no seat 7", W.NO_SUCH_SEAT),
    ]
    for args, message, code in refusals:
        with pytest.raises(SubmissionError, match=message) as refused:
            table.submit(*args)
        assert refused.value.code is code
        receipt = refused.value.receipt
        if args[0] >= len(table.players):
            assert receipt is None  # nobody sits there to keep it
            continue
        assert receipt is not None
        body = json.loads(receipt)["body"]
        assert (body["outcome"], body["reason"], body["player"], body["n"]) == (
            "refused",
            code.value,
            args[0],
            args[3],
        )
        head_body = body_hash(before.splitlines()[-1])  # a v3 receipt names the head's body
        assert (body["seq"], body["record"]) == (table.head.seq, head_body)
    assert path.read_bytes() == before
    outcome = table.submit(0, move, 5, 0, good, seen)
    assert (outcome.kind, outcome.reason) == (RecordKind.MOVE, None)
    with pytest.raises(TableError, match="backwards") as clock:
        table.advance(4)  # issue 29, item 23: nothing was submitted
    assert clock.value.code is TableCode.CLOCK_BACKWARDS
    with pytest.raises(SubmissionError, match="backwards") as backwards:
        table.submit(0, move, 4, 1, good, table.head)
    assert backwards.value.code is SubmissionCode.TIME_BACKWARDS
    assert backwards.value.receipt is not None


def test_an_illegal_submission_is_recorded_as_bounced_and_nothing_moves(tmp_path: Path) -> None:
    path = tmp_path / "game.jsonl"
    players = [PlayerInfo("a", "red"), PlayerInfo("b", "blue")]
    with Table.create(path, load_rules("table"), players, TABLE_KEY, SECRET, entropy(2)) as table:
        state = table.state
        outcome = table.submit(0, "0 recycle", 10, 0)
        assert (outcome.kind, outcome.reason) == (RecordKind.BOUNCE, "STOCK_NOT_EMPTY")
        assert table.state.seats == state.seats
    assert records(path)[-1]["body"]["reason"] == "STOCK_NOT_EMPTY"  # type: ignore[index]


def test_unkeyed_players_send_no_signature(tmp_path: Path) -> None:
    players = [PlayerInfo("a", "r"), PlayerInfo("b", "g")]
    path = tmp_path / "g.jsonl"
    rules = load_rules("nertz")
    with (
        Table.create(path, rules, players, TABLE_KEY, SECRET, entropy(2)) as table,
        pytest.raises(SubmissionError, match="no key"),
    ):
        table.submit(0, "0 recycle", 1, 0, "ab" * 64)


def test_genesis_refusals(tmp_path: Path) -> None:
    rules = load_rules("table")
    keys = PLAYER_KEYS[:2]
    players = [PlayerInfo("a", "r", raw_public_bytes(k.public_key())) for k in keys]
    wrong = [lambda kind, message, version, key=key: sign(key, "move", message, 2) for key in keys]
    with pytest.raises(ValueError, match="BAD_GENESIS_COSIGNATURE"):
        Table.create(
            tmp_path / "a.jsonl", rules, players, TABLE_KEY, SECRET, None, player_signers=wrong
        )
    declining = [player_signer(keys[0]), lambda kind, message, version: None]
    with pytest.raises(ValueError, match="seat 1 did not sign the entropy statement"):
        Table.create(
            tmp_path / "a.jsonl", rules, players, TABLE_KEY, SECRET, None, player_signers=declining
        )
    signers = [player_signer(key) for key in keys]
    with pytest.raises(ValueError, match="pass entropy=None"):
        Table.create(
            tmp_path / "a.jsonl",
            rules,
            players,
            TABLE_KEY,
            SECRET,
            entropy(2),
            player_signers=signers,
        )
    with pytest.raises(ValueError, match="one signer per player"):
        Table.create(tmp_path / "b.jsonl", rules, players, TABLE_KEY, SECRET, entropy(2))
    with pytest.raises(ValueError, match="every player signs"):
        Table.create(
            tmp_path / "c.jsonl",
            rules,
            [players[0], PlayerInfo("b", "g")],
            TABLE_KEY,
            SECRET,
            entropy(2),
        )
    with pytest.raises(ValueError, match="entropy"):
        unkeyed = [PlayerInfo("a", "r"), PlayerInfo("b", "g")]
        Table.create(tmp_path / "d.jsonl", rules, unkeyed, TABLE_KEY, SECRET, entropy(3))
    existing = tmp_path / "e.jsonl"
    existing.write_bytes(b"keep me\n")
    with pytest.raises(TableError, match="a log is never overwritten") as exists:
        keyed_table(existing)
    assert exists.value.code is TableCode.LOG_EXISTS
    assert existing.read_bytes() == b"keep me\n"


# The table writes nothing its own verifier refuses: everything the verifier checks of a
# genesis is checked before the first byte, and a failed create leaves no file behind.
@pytest.mark.parametrize(
    ("players", "profile", "why"),
    [
        ([PlayerInfo("", "red"), PlayerInfo("b", "blue")], "table", "name"),
        ([PlayerInfo("a", ""), PlayerInfo("b", "blue")], "table", "back"),
        ([PlayerInfo("a" * 65, "red"), PlayerInfo("b", "blue")], "table", "name"),
        ([PlayerInfo("a", "red")], "table", "entropy"),  # one player
        ([PlayerInfo(f"p{seat}", f"b{seat}") for seat in range(5)], "nertz", "BAD_SEATS"),
        ([PlayerInfo("a", "r", bytes(32)), PlayerInfo("b", "g", bytes(32))], "table", "KEY"),
    ],
    ids=["empty name", "empty back", "long name", "one player", "too many seats", "weak key"],
)
def test_a_genesis_the_verifier_would_refuse_is_never_written(
    tmp_path: Path, players: list[PlayerInfo], profile: str, why: str
) -> None:
    path = tmp_path / "game.jsonl"
    signers = None
    if players[0].key is not None:
        signers = [lambda kind, message, version: "00" * 64 for _ in players]
    with pytest.raises(ValueError, match=why):
        Table.create(
            path,
            load_rules(profile),
            players,
            TABLE_KEY,
            SECRET,
            None if signers else entropy(len(players)),
            player_signers=signers,
        )
    assert not path.exists()
    keyed_table(path).close()  # the retry is not refused for a file left behind
    assert path.exists()


def test_a_create_that_fails_after_the_genesis_leaves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "game.jsonl"

    def disk_full(self: Table, t_ms: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(Table, "_record_due", disk_full)
    with pytest.raises(OSError, match="No space"):
        keyed_table(path)
    assert not path.exists()


def test_every_acknowledged_record_is_whole_on_disk(tmp_path: Path) -> None:
    path = tmp_path / "game.jsonl"
    with keyed_table(path, "nertz") as table:
        submit_and_read_back(path, table)


def submit_and_read_back(path: Path, table: Table) -> None:
    rng = random.Random(1)
    t_ms = 0
    for _ in range(60):
        t_ms += 50
        table.advance(t_ms)
        moves = legal_moves(table.state, 0)
        if not moves:
            continue
        move = str(rng.choice(moves))
        n, seen = table.next_n(0), table.head
        table.submit(
            0,
            move,
            t_ms,
            n,
            sign_submission(PLAYER_KEYS[0], table.game, table.state.hand, 0, n, move, seen),
            seen,
        )
        raw = path.read_bytes()
        assert raw.endswith(b"\n")
        assert len(list(read_lines(io.BytesIO(raw)))) == raw.count(b"\n")


def test_the_table_package_names_the_api_the_module_did() -> None:
    """Issue 30, point 3: "One job per module": table.py became the package table/, and a
    game server still imports the whole table API from ``racing_demon.table``."""
    assert sorted(table_api.__all__) == [
        "Outcome",
        "PlayerInfo",
        "PlayerSigner",
        "ResumeError",
        "RevealError",
        "SubmissionCode",
        "SubmissionError",
        "Table",
        "TableCode",
        "TableError",
        "player_signer",
        "sign_submission",
    ]
    assert all(hasattr(table_api, name) for name in table_api.__all__)
