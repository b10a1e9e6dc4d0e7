"""The server's durable point: the shared journal, its group commit and its recovery.

Issue 31, "Durability and faults": "Every record is fsynced before any receipt naming it is
sent; many tables share fsyncs (group commit ...)", "one shared append-only journal with one
`fdatasync` per batch", "(with each table's log file, the verifiable artefact, written from
it and rebuilt from it after a crash)", and "Killed at any moment (SIGKILL), the server loses
no record whose receipt was sent".
"""

from __future__ import annotations

import asyncio
import errno
import hashlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Coroutine
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from receipting import GOLDEN, TABLE_KEY, TABLE_PUB, golden

from racing_demon.audit_run import AuditRun, audit_log
from racing_demon.game.flow import Submission
from racing_demon.log.receipts import logged_receipt, seal_receipt, statement_bytes_of
from racing_demon.log.records import parse_record
from racing_demon.replay import find_secret
from racing_demon.serve.data import DataFolder
from racing_demon.serve.journal import (
    Journal,
    JournalCode,
    JournalError,
    JournalRecoveryError,
    recover_folder,
)
from racing_demon.verify import Settings, Verdict, verify_log

CHILD = Path(__file__).resolve().parent / "journal_child.py"
NAME = "peer2peer-2p"


def run(coroutine: Coroutine[Any, Any, None]) -> None:
    asyncio.run(coroutine)


def lines_of(name: str) -> list[bytes]:
    return golden(name).splitlines()


def game_of(name: str) -> str:
    game = json.loads(lines_of(name)[0])["body"]["game"]
    assert isinstance(game, str)
    return game


@cache
def receipts_by_seat(name: str) -> dict[int, list[bytes]]:
    """Every receipt the table sent for the golden log ``name``, by seat, in order."""
    by_seat: dict[int, list[bytes]] = {}
    for line in lines_of(name):
        record = parse_record(json.loads(line)["body"])
        if isinstance(record.payload, Submission):
            receipt = logged_receipt(record, line, statement_bytes_of(record))
            by_seat.setdefault(receipt.seat, []).append(seal_receipt(receipt, TABLE_KEY))
    return by_seat


def folder_at(tmp_path: Path) -> DataFolder:
    folder = DataFolder(tmp_path / "data")
    any_game = "0" * 32
    logs, receipts = folder.log_path(any_game).parent, folder.receipts_path(any_game, 0).parent
    for path in (folder.journal_dir, logs, receipts):
        path.mkdir(parents=True, exist_ok=True)
    return folder


def write_segment(folder: DataFolder, number: int, entries: list[bytes]) -> Path:
    """A segment as the journal writes one (docs/serving.md, "The journal")."""
    path = folder.journal_dir / f"{number:012d}.journal"
    path.write_bytes(b"".join(entries))
    return path


def log_entry(game: str, line: bytes) -> bytes:
    return b"L %s %s\n" % (game.encode(), line)


def receipt_entry(game: str, seat: int, line: bytes) -> bytes:
    return b"R %s %d %s\n" % (game.encode(), seat, line)


def settings_for(name: str) -> Settings:
    # The secret of the finished golden log lets the verifier replay an unfinished prefix.
    return Settings(table_key=TABLE_PUB, seed=find_secret(GOLDEN / f"{name}.jsonl"))


def snapshot(folder: DataFolder) -> dict[Path, bytes]:
    """Every file under the data folder (the journal's parent), with its bytes."""
    root = folder.journal_dir.parent
    return {path: path.read_bytes() for path in root.rglob("*") if path.is_file()}


class HeldSync:
    """``os.fdatasync`` whose first call waits until released: what the journal queues
    meanwhile must go into the next batch."""

    def __init__(self, real: Callable[[int], None]) -> None:
        self.real = real
        self.entered = threading.Event()
        self.release = threading.Event()
        self.calls = 0

    def __call__(self, fd: int) -> None:
        self.calls += 1
        if self.calls == 1:
            self.entered.set()
            assert self.release.wait(30)
        self.real(fd)


# -- group commit -----------------------------------------------------------------------


def test_many_records_share_one_fdatasync(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 31: "many tables share fsyncs (group commit: a record waits at most a few
    milliseconds for the next batch) so that the disk's fsync rate, not one fsync per
    record, bounds the throughput." 199 lines queued while one batch syncs go to disk
    under one more fdatasync, and log_line never waits for the disk."""
    held = HeldSync(os.fdatasync)
    monkeypatch.setattr(os, "fdatasync", held)
    games = [f"{table:032x}" for table in range(1, 41)]

    folder = folder_at(tmp_path)
    for game in games:  # lines are journaled after their files are written
        folder.log_path(game).touch()
        for seat in range(4):
            folder.receipts_path(game, seat).touch()

    async def scenario() -> None:
        journal = Journal(folder)
        await journal.start()
        first = journal.log_line(games[0], b'{"first":true}')
        assert held.entered.wait(30)  # the writer is inside the first batch's sync
        tickets = [
            journal.log_line(games[n % 40], b'{"n":%d}' % n)
            if n % 3
            else journal.receipt(games[n % 40], n % 4, b'{"r":%d}' % n)
            for n in range(199)
        ]
        held.release.set()
        await asyncio.gather(*(journal.durable(t) for t in [first, *tickets]))
        assert (journal.stats.records, journal.stats.batches) == (200, 2)
        assert journal.stats.records_per_sync == 100
        # The last batch held 199: a lone entry waits for that much company at most
        # max_wait_ms, then goes alone.
        await journal.durable(journal.log_line(games[0], b'{"alone":true}'))
        assert (journal.stats.records, journal.stats.batches) == (201, 3)
        await journal.close()

    run(scenario())
    assert held.calls == 3


def test_tickets_resolve_in_ticket_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """serve-design: the writer resolves "every ticket in it (on the loop, in ticket
    order)": waiters that began waiting in reverse order still wake in ticket order, within
    a batch and across batches."""
    held = HeldSync(os.fdatasync)
    monkeypatch.setattr(os, "fdatasync", held)
    game = "a" * 32
    woke: list[int] = []

    async def wait(journal: Journal, ticket: int) -> None:
        await journal.durable(ticket)
        woke.append(ticket)

    folder = folder_at(tmp_path)
    folder.log_path(game).touch()

    async def scenario() -> None:
        journal = Journal(folder)
        await journal.start()
        tickets = [journal.log_line(game, b"{}")]
        assert held.entered.wait(30)
        tickets += [journal.log_line(game, b"{}") for _ in range(30)]
        waiting = [asyncio.create_task(wait(journal, t)) for t in reversed(tickets)]
        await asyncio.sleep(0)  # every task now waits
        held.release.set()
        await asyncio.gather(*waiting)
        await journal.durable(tickets[0])  # a durable ticket returns at once
        await journal.close()

    run(scenario())
    assert woke == sorted(woke) and len(woke) == 31


def test_the_disk_is_touched_by_the_writer_thread_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 31: a client "does not stall its table or the server": log_line, receipt and
    durable never write or sync on the event loop's thread; the writer does."""
    loop_thread = threading.get_ident()
    threads: list[int] = []
    real_write, real_sync = os.write, os.fdatasync

    def write(fd: int, data: bytes) -> int:
        threads.append(threading.get_ident())
        return real_write(fd, data)

    def sync(fd: int) -> None:
        threads.append(threading.get_ident())
        real_sync(fd)

    game = "b" * 32
    folder = folder_at(tmp_path)
    folder.log_path(game).touch()
    folder.receipts_path(game, 1).touch()

    async def scenario() -> None:
        journal = Journal(folder)
        await journal.start()
        monkeypatch.setattr(os, "write", write)
        monkeypatch.setattr(os, "fdatasync", sync)
        for _ in range(20):
            await journal.durable(journal.log_line(game, b"{}"))
            await journal.durable(journal.receipt(game, 1, b"{}"))
        await journal.close()

    run(scenario())
    assert len(threads) >= 2 * 40
    assert loop_thread not in threads


# -- failure -----------------------------------------------------------------------------


def test_a_failed_sync_fails_every_waiter_and_refuses_more(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 31: "nothing acknowledged is ever lost": when fdatasync fails, no ticket of
    that batch or after it is acknowledged (durable raises FAILED), the journal takes no
    more lines, close says it failed; a ticket made durable before still is."""
    game = "c" * 32
    folder = folder_at(tmp_path)
    folder.log_path(game).touch()

    def broken(fd: int) -> None:
        raise OSError(errno.EIO, "Input/output error")

    async def scenario() -> None:
        journal = Journal(folder)
        await journal.start()
        before = journal.log_line(game, b"{}")
        await journal.durable(before)
        monkeypatch.setattr(os, "fdatasync", broken)
        tickets = [journal.log_line(game, b"{}") for _ in range(5)]
        outcomes = await asyncio.gather(
            *(journal.durable(t) for t in tickets), return_exceptions=True
        )
        assert all(isinstance(o, JournalError) for o in outcomes), outcomes
        assert {o.code for o in outcomes if isinstance(o, JournalError)} == {JournalCode.FAILED}
        assert "Input/output error" in str(outcomes[0])
        with pytest.raises(JournalError) as refused:
            journal.log_line(game, b"{}")
        assert refused.value.code is JournalCode.FAILED
        with pytest.raises(JournalError) as refused:
            await journal.durable(tickets[-1])
        assert refused.value.code is JournalCode.FAILED
        await journal.durable(before)  # on disk before the failure: still acknowledged
        with pytest.raises(JournalError) as closing:
            await journal.close()
        assert closing.value.code is JournalCode.FAILED

    run(scenario())


def test_start_refuses_segments_not_recovered(tmp_path: Path) -> None:
    """serve-design: recover_folder runs "at start, before any table resumes"; a journal
    started over segments of an earlier run would never apply them (NOT_RECOVERED)."""
    folder = folder_at(tmp_path)
    write_segment(folder, 7, [log_entry(game_of(NAME), lines_of(NAME)[0])])

    async def scenario() -> None:
        with pytest.raises(JournalError) as refused:
            await Journal(folder).start()
        assert refused.value.code is JournalCode.NOT_RECOVERED
        assert "000000000007.journal" in str(refused.value)

    run(scenario())


def test_lines_must_be_one_line_of_a_game(tmp_path: Path) -> None:
    """Issue 31: "no name or path from a client ever reaches the filesystem": the journal
    takes game ids only, and one line each (an entry is one line of the journal)."""

    async def scenario() -> None:
        journal = Journal(folder_at(tmp_path))
        with pytest.raises(JournalError) as early:
            journal.log_line("d" * 32, b"{}")
        assert early.value.code is JournalCode.CLOSED
        await journal.start()
        for game, line in (("../etc/passwd", b"{}"), ("D" * 32, b"{}"), ("d" * 32, b"{}\n{}")):
            with pytest.raises(ValueError):
                journal.log_line(game, line)
        with pytest.raises(ValueError):
            journal.receipt("d" * 32, -1, b"{}")
        await journal.close()
        with pytest.raises(JournalError) as late:
            journal.log_line("d" * 32, b"{}")
        assert late.value.code is JournalCode.CLOSED

    run(scenario())


# -- rotation ----------------------------------------------------------------------------


def test_rotation_syncs_the_files_a_segment_names_then_deletes_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """serve-design: "Rotation: past segment_bytes, the writer fsyncs every log and
    receipts file the old segments name (open by path, os.fsync), then deletes those
    segments." Close does the same for the last segment."""
    game = game_of(NAME)
    folder = folder_at(tmp_path)
    synced: list[str] = []
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        synced.append(os.readlink(f"/proc/self/fd/{fd}"))
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    receipt = receipts_by_seat(NAME)[0][0]

    async def scenario() -> None:
        journal = Journal(folder, segment_bytes=1)  # every batch fills its segment
        await journal.start()
        with folder.log_path(game).open("ab") as log:
            for line in lines_of(NAME)[:5]:
                log.write(line + b"\n")
                log.flush()
                await journal.durable(journal.log_line(game, line))
        folder.receipts_path(game, 0).write_bytes(receipt + b"\n")
        await journal.durable(journal.receipt(game, 0, receipt))
        await journal.close()

    run(scenario())
    # Six batches, six segments retired as they filled (close retires the seventh, empty):
    # each synced the one file it named.
    assert synced.count(str(folder.log_path(game))) == 5
    assert synced.count(str(folder.receipts_path(game, 0))) == 1
    assert list(folder.journal_dir.iterdir()) == []
    assert folder.log_path(game).read_bytes() == b"".join(
        line + b"\n" for line in lines_of(NAME)[:5]
    )


# -- recovery ----------------------------------------------------------------------------


def test_recovery_appends_the_lines_a_log_file_lost(tmp_path: Path) -> None:
    """serve-design: "each game's journaled log lines (by their seq) are made present in
    logs/GAME.jsonl ... a missing line is appended", then the segments are deleted; the
    log verifies as unfinished with every record replayed."""
    folder = folder_at(tmp_path)
    game, lines = game_of(NAME), lines_of(NAME)
    folder.log_path(game).write_bytes(b"".join(line + b"\n" for line in lines[:20]))
    write_segment(folder, 1, [log_entry(game, line) for line in lines[:25]])
    write_segment(folder, 2, [log_entry(game, line) for line in lines[25:40]])

    recovery = recover_folder(folder)

    assert folder.log_path(game).read_bytes() == b"".join(line + b"\n" for line in lines[:40])
    assert (recovery.games, recovery.lines_appended, recovery.segments_removed) == ((game,), 20, 2)
    assert (recovery.torn_tails_cut, recovery.torn_tails_left) == (0, ())
    assert list(folder.journal_dir.iterdir()) == []
    report = verify_log(folder.log_path(game), settings_for(NAME))
    assert (report.verdict, report.records, report.not_replayed) == (Verdict.UNFINISHED, 40, 0)


def test_recovery_rebuilds_a_missing_log_from_seq_0(tmp_path: Path) -> None:
    """Issue 31: "each table's log file ... rebuilt from it after a crash": a log whose
    file never reached the disk is written whole from the journal."""
    folder = folder_at(tmp_path)
    game, lines = game_of(NAME), lines_of(NAME)
    write_segment(folder, 1, [log_entry(game, line) for line in lines])

    recovery = recover_folder(folder)

    assert folder.log_path(game).read_bytes() == golden(NAME)
    assert recovery.lines_appended == len(lines)
    assert verify_log(folder.log_path(game), settings_for(NAME)).verdict is Verdict.VERIFIED


def test_a_torn_tail_is_cut_only_when_the_journal_holds_its_seq(tmp_path: Path) -> None:
    """serve-design: "a torn tail (bytes after the last \\n) is cut only if the journal
    holds that seq's line"; one it does not hold was never acknowledged: it is left (and
    named) for `recover` to judge."""
    folder = folder_at(tmp_path)
    game, lines = game_of(NAME), lines_of(NAME)
    torn = b"".join(line + b"\n" for line in lines[:10]) + lines[10][:37]
    folder.log_path(game).write_bytes(torn)
    write_segment(folder, 1, [log_entry(game, line) for line in lines[:12]])

    recovery = recover_folder(folder)

    assert folder.log_path(game).read_bytes() == b"".join(line + b"\n" for line in lines[:12])
    assert (recovery.torn_tails_cut, recovery.lines_appended) == (1, 2)

    folder.log_path(game).write_bytes(torn)
    write_segment(folder, 1, [log_entry(game, line) for line in lines[:10]])
    recovery = recover_folder(folder)
    assert folder.log_path(game).read_bytes() == torn
    assert recovery.torn_tails_left == (folder.log_path(game),)
    assert (recovery.torn_tails_cut, recovery.lines_appended) == (0, 0)


@pytest.mark.parametrize("where", ["middle", "torn tail", "journal"])
def test_a_fork_is_refused_and_nothing_changes(tmp_path: Path, where: str) -> None:
    """serve-design: "a line that differs from the journal's at the same seq is a fork:
    refuse (raise, name game and seq), never overwrite" -- and nothing at all changes, in
    any file or segment."""
    folder = folder_at(tmp_path)
    game, lines = game_of(NAME), lines_of(NAME)
    other = lines_of("nertz-4p-signed")
    if where == "middle":
        kept, seq = [*lines[:6], other[6], *lines[7:9]], 6
        folder.log_path(game).write_bytes(b"".join(line + b"\n" for line in kept))
    elif where == "journal":  # two lines journaled at one seq
        seq = 11
        forked = lines[11].replace(b'"seq":11', b'"seq":11,"x":1')
        write_segment(folder, 3, [log_entry(game, forked)])
    else:
        seq = 9
        folder.log_path(game).write_bytes(
            b"".join(line + b"\n" for line in lines[:9]) + lines[9][:30] + b"X" * 10
        )
    write_segment(folder, 1, [log_entry(game, line) for line in lines[:12]])
    receipts = receipts_by_seat(NAME)[1]
    write_segment(folder, 2, [receipt_entry(game, 1, receipts[0])])
    before = snapshot(folder)

    with pytest.raises(JournalRecoveryError) as refused:
        recover_folder(folder)

    assert (refused.value.code, refused.value.game, refused.value.seq) == (
        JournalCode.FORK,
        game,
        seq,
    )
    assert f"seq {seq} of game {game}" in str(refused.value)
    assert snapshot(folder) == before


def test_a_gap_between_the_file_and_the_journal_is_refused(tmp_path: Path) -> None:
    """Recovery never invents a record: seqs the log file lacks and the journal does not
    hold are a gap (GAP, naming the first missing seq), and nothing changes."""
    folder = folder_at(tmp_path)
    game, lines = game_of(NAME), lines_of(NAME)
    folder.log_path(game).write_bytes(b"".join(line + b"\n" for line in lines[:3]))
    write_segment(folder, 1, [log_entry(game, line) for line in lines[5:9]])
    before = snapshot(folder)

    with pytest.raises(JournalRecoveryError) as refused:
        recover_folder(folder)

    assert (refused.value.code, refused.value.seq) == (JournalCode.GAP, 3)
    assert snapshot(folder) == before


def test_recovery_appends_journaled_receipts_a_seat_file_lacks(tmp_path: Path) -> None:
    """serve-design: "Journaled receipts missing from the seat's receipts file are
    appended"; a torn receipt the journal holds is cut and written whole."""
    folder = folder_at(tmp_path)
    game = game_of(NAME)
    seat0, seat1 = receipts_by_seat(NAME)[0], receipts_by_seat(NAME)[1]
    folder.receipts_path(game, 0).write_bytes(seat0[0] + b"\n" + seat0[1][:50])
    write_segment(
        folder,
        1,
        [receipt_entry(game, 0, line) for line in seat0[:4]]
        + [receipt_entry(game, 1, line) for line in seat1[:3]],
    )

    recovery = recover_folder(folder)

    assert folder.receipts_path(game, 0).read_bytes() == b"".join(r + b"\n" for r in seat0[:4])
    assert folder.receipts_path(game, 1).read_bytes() == b"".join(r + b"\n" for r in seat1[:3])
    assert (recovery.receipts_appended, recovery.torn_tails_cut) == (3 + 3, 1)


def test_a_torn_receipt_the_journal_does_not_hold_stays(tmp_path: Path) -> None:
    """A torn receipt that begins no journaled receipt was never sent: it stays, as
    ReceiptFiles keeps one (ended with a newline before anything is appended after it),
    and is named for the audit to judge."""
    folder = folder_at(tmp_path)
    game = game_of(NAME)
    receipts = receipts_by_seat(NAME)[0]
    path = folder.receipts_path(game, 0)
    path.write_bytes(receipts[0] + b"\n" + b'{"body":{"garbled')
    write_segment(folder, 1, [receipt_entry(game, 0, line) for line in receipts[:3]])

    recovery = recover_folder(folder)

    assert path.read_bytes() == b"".join(
        [receipts[0], b"\n", b'{"body":{"garbled', b"\n", receipts[1], b"\n", receipts[2], b"\n"]
    )
    assert (recovery.torn_tails_left, recovery.receipts_appended) == ((path,), 2)


def test_a_second_recovery_over_the_same_segments_changes_nothing(tmp_path: Path) -> None:
    """Recovery killed before it deleted the segments runs again at the next start: applying
    the same journal twice leaves the files as the first run left them."""
    folder = folder_at(tmp_path)
    game, lines = game_of(NAME), lines_of(NAME)
    receipts = receipts_by_seat(NAME)[0]
    folder.log_path(game).write_bytes(lines[0] + b"\n" + lines[1][:10])
    entries = [log_entry(game, line) for line in lines[:30]]
    entries += [receipt_entry(game, 0, line) for line in receipts[:5]]
    write_segment(folder, 1, entries)
    recover_folder(folder)
    after = snapshot(folder)

    write_segment(folder, 1, entries)
    again = recover_folder(folder)

    assert snapshot(folder) == after
    assert (again.lines_appended, again.receipts_appended, again.torn_tails_cut) == (0, 0, 0)
    assert again.segments_removed == 1


def test_a_torn_journal_tail_was_never_acknowledged(tmp_path: Path) -> None:
    """The writer killed mid-write leaves part of an entry after the segment's last
    newline: its batch was never synced, so no ticket in it was acknowledged; it is ignored."""
    folder = folder_at(tmp_path)
    game, lines = game_of(NAME), lines_of(NAME)
    write_segment(
        folder, 1, [log_entry(game, line) for line in lines[:4]] + [log_entry(game, lines[4])[:90]]
    )

    recovery = recover_folder(folder)

    assert folder.log_path(game).read_bytes() == b"".join(line + b"\n" for line in lines[:4])
    assert recovery.journal_bytes_ignored == 90


def test_a_damaged_journal_entry_is_refused(tmp_path: Path) -> None:
    """A complete entry that is not one (not a record of its game, no seq, unknown kind) is
    no torn tail: BAD_ENTRY, naming the segment and entry, and nothing changes."""
    folder = folder_at(tmp_path)
    game, lines = game_of(NAME), lines_of(NAME)
    for bad in (
        b"X %s {}\n" % game.encode(),
        log_entry("e" * 32, lines[1]),
        b"L %s {\n" % (b"f" * 32),
    ):
        write_segment(folder, 3, [log_entry(game, lines[0]), bad])
        before = snapshot(folder)
        with pytest.raises(JournalRecoveryError) as refused:
            recover_folder(folder)
        assert refused.value.code is JournalCode.BAD_ENTRY
        assert "000000000003.journal entry 2" in str(refused.value)
        assert snapshot(folder) == before


# -- SIGKILL -----------------------------------------------------------------------------


def seeded(seed: str, *labels: object) -> int:
    """A number drawn from SHA-256 of the seed and labels (never Python's random)."""
    text = ":".join(str(part) for part in (seed, *labels)).encode()
    return int.from_bytes(hashlib.sha256(text).digest()[:8], "big")


def write_plan(directory: Path, name: str) -> Path:
    """The golden log's writes in the order a table makes them: each submission's log line,
    then its receipt."""
    receipts = receipts_by_seat(name)
    sent = dict.fromkeys(receipts, 0)
    entries = []
    for line in lines_of(name):
        entries.append(b"L " + line)
        record = parse_record(json.loads(line)["body"])
        if isinstance(record.payload, Submission):
            seat = record.payload.seat
            entries.append(b"R %d %s" % (seat, receipts[seat][sent[seat]]))
            sent[seat] += 1
    path = directory / f"{game_of(name)}.plan"
    path.write_bytes(b"\n".join(entries) + b"\n")
    return path


def kill_trial(tmp_path: Path, trial: int, names: tuple[str, ...]) -> None:
    root = tmp_path / f"trial{trial}"
    root.mkdir()
    plans = [write_plan(tmp_path, name) for name in names]
    rotate = trial % 2 == 1  # odd trials rotate small segments; even ones lose the page cache
    segment_bytes = 16 << 10 if rotate else 64 << 20
    child = subprocess.Popen(
        [sys.executable, str(CHILD), str(root), str(segment_bytes), *map(str, plans)],
        stdout=subprocess.PIPE,
    )
    assert child.stdout is not None
    try:
        assert child.stdout.readline() == b"ready\n"
        time.sleep(0.01 + seeded("journal-kill", trial) % 400 / 1000)
        child.send_signal(signal.SIGKILL)
        out, _ = child.communicate(timeout=60)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    said = out.decode().splitlines()
    acked_lines: dict[str, int] = {}
    acked_receipts: dict[tuple[str, int], int] = {}
    for words in (text.split() for text in said):
        if words[0] == "L":
            acked_lines[words[1]] = int(words[2]) + 1
        elif words[0] == "R":
            acked_receipts[words[1], int(words[2])] = int(words[3]) + 1
    folder = DataFolder(root)
    if not rotate and "closing" not in said:
        # The power failed too: each file keeps a random prefix of what it was sent, at
        # least nothing the journal has not (nothing of it was synced but the journal).
        for name in names:
            game = game_of(name)
            end = sum(len(line) + 1 for line in lines_of(name)[: acked_lines.get(game, 0)])
            with folder.log_path(game).open("r+b") as file:
                file.truncate(seeded("journal-loss", trial, game) % (end + 1))
            for seat, receipts in receipts_by_seat(name).items():
                path = folder.receipts_path(game, seat)
                if path.exists():
                    end = sum(len(r) + 1 for r in receipts[: acked_receipts.get((game, seat), 0)])
                    with path.open("r+b") as file:
                        file.truncate(seeded("journal-loss", trial, game, seat) % (end + 1))

    recovery = recover_folder(folder)

    assert recovery.torn_tails_left == ()
    assert list(folder.journal_dir.iterdir()) == []
    for name in names:
        game, lines = game_of(name), lines_of(name)
        held = folder.log_path(game).read_bytes().splitlines(keepends=True)
        assert len(held) >= acked_lines.get(game, 0), (trial, name)
        assert b"".join(held) == b"".join(line + b"\n" for line in lines[: len(held)])
        report = verify_log(folder.log_path(game), settings_for(name))
        expected = Verdict.VERIFIED if len(held) == len(lines) else Verdict.UNFINISHED
        assert (report.verdict, report.not_replayed) == (expected, 0), (trial, name, report)
        kept_files = []
        for seat, receipts in receipts_by_seat(name).items():
            path = folder.receipts_path(game, seat)
            kept = path.read_bytes().splitlines() if path.exists() else []
            assert len(kept) >= acked_receipts.get((game, seat), 0), (trial, name, seat)
            assert kept == receipts[: len(kept)]
            kept_files += [path] if kept else []
        if kept_files:  # audit --receipts: every receipt agrees with the recovered log
            audit = audit_log(
                AuditRun(log=folder.log_path(game), table_key=TABLE_PUB, receipts=kept_files)
            )
            assert audit.evidence is not None and audit.evidence.findings == (), (trial, name)
            assert audit.evidence.receipts == sum(
                len(path.read_bytes().splitlines()) for path in kept_files
            )


def test_sigkill_loses_no_acknowledged_line(tmp_path: Path) -> None:
    """Issue 31: "Killed at any moment (SIGKILL), the server loses no record whose receipt
    was sent". A child writes three tables' lines and receipts through the journal and
    says each one only after durable(); killed at a random moment (and, in even trials, its
    files losing what was never synced), recover_folder leaves every acknowledged line and
    receipt in its file, each log verifies as unfinished with every record replayed, and
    "`audit --receipts` of every seat's receipts against the log is clean"."""
    for trial in range(3):
        kill_trial(tmp_path, trial, ("peer2peer-2p", "nertz-4p-signed"))


@pytest.mark.slow
def test_sigkill_at_twenty_random_moments(tmp_path: Path) -> None:
    """Issue 31: "Killed at any moment (SIGKILL), the server loses no record whose receipt
    was sent": twenty trials over three golden logs at once."""
    for trial in range(3, 23):
        kill_trial(tmp_path, trial, ("peer2peer-2p", "nertz-4p-signed", "table-3p-signed"))
