"""What a server embedding the table meets (issue 29, "The library a server embeds"): the
receipts it keeps for its seats, a clock moved back, ending a match before its target, and
a log that already exists."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from racing_demon.game.engine import legal_moves
from racing_demon.log.keys import public_pem, raw_public_bytes
from racing_demon.log.receipt_files import ReceiptFileError, ReceiptFiles, receipts_path
from racing_demon.profiles import load_rules
from racing_demon.table import PlayerInfo, SubmissionError, Table, TableCode, TableError
from racing_demon.verify import Settings, Verdict, verify_log

from conftest import invoke

SECRET = bytes(range(32))
TABLE_KEY = Ed25519PrivateKey.from_private_bytes(bytes(range(1, 33)))
PLAYERS = [PlayerInfo("ann", "red"), PlayerInfo("bob", "blue")]
ENTROPY = [bytes([1]) * 16, bytes([2]) * 16]


def _table(path: Path, profile: str = "peer2peer") -> Table:
    return Table.create(path, load_rules(profile), PLAYERS, TABLE_KEY, SECRET, ENTROPY)


def _play(table: Table, receipts: ReceiptFiles | None, kept: list[bytes]) -> None:
    """The README's arrivals: a move, a call too early, another's move, a resignation;
    every receipt a seat gets is kept (in ``receipts``, and in ``kept`` as it came)."""
    table.advance(3000)
    first = str(legal_moves(table.state, 0)[0])
    arrivals = [(0, first, 3000), (1, "1 call", 3100), (1, first, 3200), (1, "1 resign", 3300)]
    for seat, move, t_ms in arrivals:
        try:
            receipt = table.submit(seat, move, t_ms, table.next_n(seat)).receipt
        except SubmissionError as refused:
            assert refused.receipt is not None
            receipt = refused.receipt
        kept.append(receipt)
        if receipts is not None:
            receipts.keep(seat, receipt)


def _audit(log: Path, *receipts: Path) -> tuple[int, str]:
    pub = log.with_name("table.pub")
    pub.write_bytes(public_pem(TABLE_KEY))
    files = [option for path in receipts for option in ("--receipts", str(path))]
    return invoke("audit", str(log), "--table-key", str(pub), *files)


def test_receipts_kept_with_receipt_files_audit_clean(tmp_path: Path) -> None:
    """Issue 29, item 21: "Outcome.receipt has no trailing newline though the README calls
    it 'one signed JSON line'; written as it comes, the last receipt fails audit as torn.
    Give the server a one-call way to keep a seat's receipts in the format audit
    --receipts reads"."""
    log = tmp_path / "game.jsonl"
    kept: list[bytes] = []
    with _table(log) as table, ReceiptFiles(log) as receipts:
        _play(table, receipts, kept)
        assert table.finished
    seat0, seat1 = receipts_path(log, 0), receipts_path(log, 1)
    assert (seat0.name, seat1.name) == ("game.seat0.receipts.jsonl", "game.seat1.receipts.jsonl")
    assert seat1.read_bytes() == b"".join(receipt + b"\n" for receipt in kept[1:])
    code, out = _audit(log, seat0, seat1)
    assert code == 0, out
    assert "TORN_LINE" not in out and "MALFORMED" not in out

    # What the issue saw: the receipts written as they come, without the newline.
    raw = tmp_path / "raw.receipts.jsonl"
    raw.write_bytes(b"\n".join(kept[1:]))
    code, out = _audit(log, raw)
    assert code != 0 and "TORN_LINE" in out


def test_a_resumed_seat_file_is_appended_to_and_a_torn_last_line_is_ended_first(
    tmp_path: Path,
) -> None:
    """Issue 29, item 21: a receipts file is kept "in the format audit --receipts reads":
    a second ReceiptFiles (a resumed table) appends, and a line a crash left torn is ended
    so that the receipts after it still count; it is never cut or replaced."""
    log = tmp_path / "game.jsonl"
    kept: list[bytes] = []
    with _table(log) as table:
        _play(table, None, kept)
    path = receipts_path(log, 1)
    path.write_bytes(kept[1] + b"\n" + kept[2][:40])  # a crash cut the second write short
    with ReceiptFiles(log, durable=False) as receipts:
        receipts.keep(1, kept[2])
        receipts.keep(1, kept[3])
    assert path.read_bytes() == kept[1] + b"\n" + kept[2][:40] + b"\n" + kept[2] + b"\n" + (
        kept[3] + b"\n"
    )
    code, out = _audit(log, path)
    assert code == 1
    # The torn line stays, refused on its own line; the three whole receipts all count.
    assert f"{path.name}:2: not a receipt of the pinned table key: MALFORMED (BAD_JSON)" in out
    assert "receipts: 3 receipts from 1 file" in out
    assert "1 finding, no evidence against the table" in out


def test_keep_refuses_what_is_not_one_line_and_a_file_whose_write_failed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 29, item 21: a receipt with its newline already added would leave an empty
    line, which ends a receipts file for its reader."""
    log = tmp_path / "game.jsonl"
    with ReceiptFiles(log, durable=False) as receipts:
        for bad in (b"", b'{"body":{}}\n', b"a\rb"):
            with pytest.raises(ValueError, match="one non-empty line"):
                receipts.keep(0, bad)
        assert not receipts.path(0).exists()

        def full(descriptor: int, data: object) -> int:
            raise OSError(28, "No space left on device")

        monkeypatch.setattr(os, "write", full)
        with pytest.raises(OSError, match="No space"):
            receipts.keep(0, b"{}")
        monkeypatch.undo()
        with pytest.raises(ReceiptFileError, match="earlier write failed"):
            receipts.keep(0, b"{}")


def test_advance_backwards_is_a_table_error_with_its_own_code(tmp_path: Path) -> None:
    """Issue 29, item 23: "Table.advance with a time earlier than the last raises
    SubmissionError though nothing was submitted: a TableError with a code of its own"."""
    log = tmp_path / "game.jsonl"
    with _table(log, "table") as table:
        table.advance(500)
        before = log.read_bytes()
        with pytest.raises(TableError, match="backwards: 400 ms after 500 ms") as backwards:
            table.advance(400)
        assert not isinstance(backwards.value, SubmissionError)
        assert backwards.value.code is TableCode.CLOCK_BACKWARDS
        # A submission arriving before the clock is still refused with a receipt.
        with pytest.raises(SubmissionError) as refused:
            table.submit(0, "0 turn", 400, 0)
        assert refused.value.code == "TIME_BACKWARDS" and refused.value.receipt is not None
    assert log.read_bytes() == before
    code, out = invoke("explain", "CLOCK_BACKWARDS")
    assert code == 0 and "clock" in out


def test_an_existing_log_is_refused_by_name_and_left_as_it_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 29, item 25: "Re-running the README's Table example gives a bare
    FileExistsError: a TableError naming the path ('a log is never overwritten')"."""
    log = tmp_path / "game.jsonl"
    _table(log).close()
    before = log.read_bytes()
    with pytest.raises(TableError) as refused:
        _table(log)
    assert refused.value.code is TableCode.LOG_EXISTS
    assert str(log) in str(refused.value) and "a log is never overwritten" in str(refused.value)
    assert log.read_bytes() == before
    # Refused before any keyed seat is asked to sign for a match that cannot be logged.
    asked: list[str] = []
    keys = [Ed25519PrivateKey.from_private_bytes(bytes([seat + 40] * 32)) for seat in (0, 1)]

    def signer(kind: str, message: bytes, version: int) -> str | None:
        asked.append(kind)
        return None

    keyed = [
        PlayerInfo(player.name, player.back, raw_public_bytes(key))
        for player, key in zip(PLAYERS, keys, strict=True)
    ]
    with pytest.raises(TableError) as again:
        Table.create(
            log, load_rules("table"), keyed, TABLE_KEY, SECRET, None, player_signers=[signer] * 2
        )
    assert again.value.code is TableCode.LOG_EXISTS and asked == []
    # A file made after that first look is refused as it is opened, with no traceback of
    # the FileExistsError under the TableError.
    monkeypatch.setattr(os.path, "lexists", lambda path: False)
    with pytest.raises(TableError) as raced:
        _table(log)
    assert raced.value.code is TableCode.LOG_EXISTS and str(log) in str(raced.value)
    assert raced.value.__suppress_context__
    assert log.read_bytes() == before


@pytest.mark.parametrize("profile", ["table", "nertz"])
def test_rules_without_an_idle_time_allow_no_abandonment(tmp_path: Path, profile: str) -> None:
    """Issue 29, item 24: "With the table and nertz rules a server has no documented way to
    end a match before the target": their rules have none; the call says so, writes
    nothing, and close() leaves an unfinished log whose every record replays with the
    secret."""
    log = tmp_path / "game.jsonl"
    with _table(log, profile) as table:
        table.advance(3_600_000)
        before = log.read_bytes()
        with pytest.raises(TableError, match="define no idle time") as refused:
            table.abandon(3_600_000)
        assert refused.value.code is TableCode.NO_IDLE_RULE
        assert table.abandons_at is None and not table.played_out
    assert log.read_bytes() == before
    report = verify_log(
        log, Settings(table_key=raw_public_bytes(TABLE_KEY.public_key()), seed=SECRET)
    )
    assert report.verdict is Verdict.UNFINISHED and report.not_replayed == 0


def test_peer2peer_abandons_after_its_idle_time_and_not_before(tmp_path: Path) -> None:
    """Issue 29, item 24: "give the server the call the rules allow (abandon after the idle
    time, for example)": the peer2peer rules abandon a match after five minutes in which
    nothing happens (docs/rules.md §4)."""
    log = tmp_path / "game.jsonl"
    with _table(log) as table:
        assert table.abandons_at == 3000 + 300_000  # silent since the countdown's end
        table.advance(3000)
        to_centre = next(m for m in legal_moves(table.state, 1) if ">f" in str(m))
        table.submit(1, str(to_centre), 4000, 0)
        assert table.abandons_at == 4000 + 300_000
        before = log.read_bytes()
        with pytest.raises(TableError, match="abandon it at 304000 ms") as early:
            table.abandon(303_999)
        assert early.value.code is TableCode.NOT_IDLE
        assert log.read_bytes() == before
        with pytest.raises(TableError) as backwards:
            table.abandon(3999)
        assert backwards.value.code is TableCode.CLOCK_BACKWARDS
        table.abandon(304_000)
        assert table.finished
        with pytest.raises(TableError) as over:
            table.abandon(400_000)
        assert over.value.code is TableCode.PLAYED_OUT
    final = json.loads(log.read_bytes().splitlines()[-1])["body"]
    assert (final["kind"], final["reason"], final["t_ms"]) == ("final", "abandoned", 304_000)
    assert final["winners"] == []  # an abandoned match has no result
    report = verify_log(log, Settings(table_key=raw_public_bytes(TABLE_KEY.public_key())))
    assert report.verdict is Verdict.VERIFIED and report.final_reason == "abandoned"


def test_a_table_that_still_acts_is_not_abandoned_the_hand_ends_by_its_own_rule(
    tmp_path: Path,
) -> None:
    """Issue 29, item 24: abandonment is only for a table where nothing happens; once a
    player acts off the centre, the peer2peer rules end the deal after three minutes of
    shuffling, with a score (docs/rules.md §4), and abandon says so."""
    with _table(tmp_path / "game.jsonl") as table:
        table.advance(3000)
        off_centre = next(m for m in legal_moves(table.state, 0) if "turn" in str(m))
        table.submit(0, str(off_centre), 4000, 0)
        assert table.abandons_at is None
        with pytest.raises(TableError, match="ends by another rule first") as refused:
            table.abandon(400_000)
        assert refused.value.code is TableCode.NOT_IDLE and not table.played_out
