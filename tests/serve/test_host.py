"""The hosted table on the event loop, without a network (issue 31, "Play", "Bots",
"Durability"): fake peers, and a fake journal with the real one's interface that makes
tickets durable only when the test (or its group-commit stand-in) says so."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import threading
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from racing_demon.game.cards import Card
from racing_demon.game.deal import commitment, pack_digest
from racing_demon.game.flow import Seen
from racing_demon.log.canonical import canonical_bytes
from racing_demon.log.keys import raw_public_bytes
from racing_demon.log.records import (
    ACCEPT,
    ENTROPY,
    ENTROPY_VERSION,
    FORMAT_VERSION,
    entropy_statement,
)
from racing_demon.log.signing import sign
from racing_demon.outcomes import ExitCode
from racing_demon.schema import schema_errors
from racing_demon.serve import host, protocol, sent_log
from racing_demon.serve.audience import Audience
from racing_demon.serve.host import HostedTable, SeatKind, SeatSpec, TableState
from racing_demon.serve.protocol import SERVER_SCHEMA, ClientSubmit, ServeCode, ServeError
from racing_demon.table import SubmissionError, sign_submission
from racing_demon.verify import Verdict, verify_log
from serve.hosting import (
    GAME,
    OTHER_KEY,
    PERSON_KEY,
    SECRET,
    SETTINGS,
    FakeJournal,
    Server,
    applied,
    bot,
    person,
    public_tables,
    quick_rules,
    run,
    until,
)


class FakePeer:
    """A connection: what it was sent, each record and receipt checked durable as it
    arrives."""

    def __init__(self, journal: FakeJournal, seat: int | None = None) -> None:
        self.seat = seat
        self.journal = journal
        self.messages: list[dict[str, Any]] = []
        self.inbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.undurable: list[dict[str, Any]] = []
        self.closed: ServeCode | None = None

    def send(self, message: Mapping[str, object]) -> None:
        message = dict(message)
        # Issue 31: "every message with a schema": each one the table sends has it.
        assert schema_errors(SERVER_SCHEMA, message) == [], message
        if message["type"] == "record":
            line = str(message["line"]).encode()
            if not self.journal.is_durable(None, line):
                self.undurable.append(message)
        elif message["type"] == "receipt":
            line = str(message["receipt"]).encode()
            if not self.journal.is_durable(self.seat, line):
                self.undurable.append(message)
        self.messages.append(message)
        self.inbox.put_nowait(message)

    def send_encoded(self, message: Mapping[str, object], text: str) -> None:
        # A record encoded once for every peer: the frame a peer sends is its own encoding.
        assert text == protocol.encode(message), (text, message)
        self.send(message)

    def send_all(self, messages: Sequence[Mapping[str, object]]) -> None:
        for message in messages:
            self.send(message)

    def close(self, reason: ServeCode) -> None:
        self.closed = reason

    def of(self, kind: str) -> list[dict[str, Any]]:
        return [message for message in self.messages if message["type"] == kind]

    def lines(self) -> list[bytes]:
        return [message["line"].encode() for message in self.of("record")]


def test_two_bots_play_a_match_to_the_end_and_nothing_is_sent_before_it_is_durable(
    tmp_path: Path,
) -> None:
    """Issue 31: "Bots: any seat can be one of the project's bots, played by the server
    through the same Table API as people"; "every record is fsynced before any receipt
    naming it is sent". The log verifies, every receipt audits, and every record a peer
    got was durable when it got it."""
    server = Server(tmp_path, [bot(0), bot(1)], quick_rules())
    spectator = FakePeer(server.journal)

    async def main() -> None:
        committer = asyncio.create_task(server.journal.group_commit())
        await server.table.attach(spectator, 0)
        await server.table.run()
        committer.cancel()

    run(main)
    assert server.states == [
        TableState.STARTING,
        TableState.PLAYING,
        TableState.ACCEPTING,
        TableState.FINISHED,
    ]
    report = verify_log(server.log, SETTINGS)
    assert report.verdict is Verdict.VERIFIED and report.accepted_by == (0, 1)
    file_lines = server.log.read_bytes().splitlines()
    assert spectator.lines() == file_lines and spectator.undurable == []
    assert spectator.of("ended") == [
        {"type": "ended", "verdict": "verified", "log": f"/games/{GAME}.jsonl"}
    ]
    assert server.audit() is ExitCode.OK
    journaled = [line for _, seat, line in server.journal.entries if seat is None]
    assert journaled == file_lines
    for seat in (0, 1):
        receipts = [line for _, s, line in server.journal.entries if s == seat]
        assert receipts == server.receipts(seat).read_bytes().splitlines() and receipts
    # Issue 32 design §1: "piles — to every connection ... right after each record
    # message"; "moves — to a person's seat only (never a bot's, never a spectator)".
    kinds = [message["type"] for message in spectator.messages]
    assert kinds.count("record") == kinds.count("piles") == len(file_lines)
    assert all(kinds[at + 1] == "piles" for at, kind in enumerate(kinds) if kind == "record")
    assert [message["seq"] for message in spectator.of("piles")] == list(range(len(file_lines)))
    assert list(applied(spectator.of("piles")).values()) == public_tables(server.log)
    assert spectator.of("moves") == []


def test_no_record_reaches_a_peer_before_the_journal_makes_it_durable(tmp_path: Path) -> None:
    """Design: "nothing is sent to any client before durable(ticket) of what it names": the
    table has written its genesis and first deal, and its bots have moved, but while the
    journal holds every ticket no peer has a record or a receipt."""
    server = Server(tmp_path, [bot(0), bot(1)], quick_rules())
    spectator = FakePeer(server.journal)

    async def main() -> None:
        await server.table.attach(spectator, 0)
        task = asyncio.create_task(server.table.run())
        await until(lambda: server.log.exists() and len(server.journal.entries) >= 4)
        await asyncio.sleep(0.05)
        assert spectator.of("record") == [] and len(server.log.read_bytes().splitlines()) >= 2
        server.journal.release()
        await until(lambda: len(spectator.of("record")) >= 2)
        committer = asyncio.create_task(server.journal.group_commit())
        await server.table.stop()
        await task
        committer.cancel()

    run(main)
    assert spectator.undurable == []
    assert spectator.lines() == server.log.read_bytes().splitlines()[: len(spectator.lines())]


class PersonClient:
    """A keyed person's client, scripted: signs what it is asked, then submits a guessed
    turn (logged, as a move or a bounce), a wrong number, a move signed with another key,
    and its resignation (the match ends); it accepts the result."""

    def __init__(self, table: HostedTable, peer: FakePeer) -> None:
        self.table = table
        self.peer = peer
        self.receipts: list[dict[str, Any]] = []
        self.refused_at_start: list[ServeCode] = []

    def seen(self) -> Seen:
        line = self.peer.lines()[-1]
        return Seen(seq=json.loads(line)["body"]["seq"], hash=hashlib.sha256(line).hexdigest())

    async def submit(
        self, ref: str, n: int, move: str, key: Ed25519PrivateKey = PERSON_KEY
    ) -> dict[str, Any]:
        seen = self.seen()
        signature = sign_submission(key, GAME, 1, 0, n, move, seen)
        await self.table.submit(
            0,
            ClientSubmit(
                ref=ref, n=n, move=move, seen_seq=seen.seq, seen_hash=seen.hash, signature=signature
            ),
        )
        receipt = self.peer.of("receipt")[-1]
        assert receipt["ref"] == ref
        return dict(json.loads(receipt["receipt"])["body"])

    def refused_entropy(self, signature: str) -> None:
        with pytest.raises(ServeError) as refusal:
            self.table.entropy(0, signature)
        self.refused_at_start.append(refusal.value.code)

    async def play(self) -> None:
        while True:
            message = await self.peer.inbox.get()
            if message["type"] == "commitment":
                statement = canonical_bytes(entropy_statement(GAME, 0, commitment(SECRET)))
                assert message["statement"].encode() == statement
                self.refused_entropy(sign(OTHER_KEY, ENTROPY, statement, 2))
                self.table.entropy(0, sign(PERSON_KEY, ENTROPY, statement, ENTROPY_VERSION))
                self.refused_entropy(sign(PERSON_KEY, ENTROPY, statement, 2))
            elif message["type"] == "genesis":
                body = message["body"].encode()
                assert raw_public_bytes(PERSON_KEY.public_key()).hex().encode() in body
                self.table.cosign(0, sign(PERSON_KEY, "genesis", body, FORMAT_VERSION))
            elif message["type"] == "record" and b'"hand_start"' in message["line"].encode():
                self.receipts.append(await self.submit("a", 0, "0 turn AS 2S 3S"))
                self.receipts.append(await self.submit("b", 5, "0 resign"))
                self.receipts.append(await self.submit("c", 1, "0 resign", OTHER_KEY))
                self.receipts.append(await self.submit("d", 1, "0 resign"))
            elif message["type"] == "final":
                self.table.accept(
                    0, sign(PERSON_KEY, ACCEPT, message["body"].encode(), FORMAT_VERSION)
                )
            elif message["type"] == "ended":
                return


def test_a_keyed_person_signs_submits_and_is_refused_through_the_hosted_table(
    tmp_path: Path,
) -> None:
    """Issue 31: "each keyed seat's client sends its entropy signature, then its genesis
    co-signature; ... the client sends each move signed with its seen; the server answers
    every submission with its receipt (accepted, bounced, refused). At the end it asks each
    seat for its acceptance." A signature of another key is BAD_SIGNATURE, a replayed
    entropy NOT_ASKED; refusals come back as receipts with their code, and audit."""
    server = Server(tmp_path, [person(), bot(1)], quick_rules())
    peer = FakePeer(server.journal, seat=0)
    client = PersonClient(server.table, peer)

    async def main() -> None:
        committer = asyncio.create_task(server.journal.group_commit())
        await server.table.attach(peer, 0)
        playing = asyncio.create_task(client.play())
        await server.table.run()
        await playing
        committer.cancel()

    run(main)
    assert client.refused_at_start == [ServeCode.BAD_SIGNATURE, ServeCode.NOT_ASKED]
    outcomes = [(r["outcome"], r.get("reason")) for r in client.receipts]
    assert outcomes[0][0] in ("move", "bounce")
    assert outcomes[1:] == [
        ("refused", "WRONG_NUMBER"),
        ("refused", "BAD_SIGNATURE"),
        ("resign", None),
    ]
    report = verify_log(server.log, SETTINGS)
    assert report.verdict is Verdict.VERIFIED and report.accepted_by == (0, 1)
    assert peer.undurable == [] and peer.lines() == server.log.read_bytes().splitlines()
    assert server.audit() is ExitCode.OK
    assert len(server.receipts(0).read_bytes().splitlines()) == 4
    # docs/protocol.md §5, step 4: right after the hand_start, the seat gets its own pack,
    # which its hand_start digest vouches for.
    (pack,) = peer.of("pack")
    hand_start = json.loads(server.log.read_bytes().splitlines()[1])["body"]
    cards = [Card.from_face(face, 0) for face in pack["cards"]]
    assert pack["hand"] == 1 and pack_digest(1, 0, cards) == hand_start["packs"][0]
    kinds = [message["type"] for message in peer.messages]
    assert kinds.index("pack") == kinds.index("record", kinds.index("record") + 1) + 1
    # Issue 32 design §1: after each piles, the person's seat gets every move it may make.
    piles, moves = peer.of("piles"), peer.of("moves")
    seqs = list(range(len(peer.lines())))
    assert [m["seq"] for m in moves] == [m["seq"] for m in piles] == seqs
    assert moves[1]["moves"] and "0 resign" in moves[1]["moves"]  # dealt: its moves
    assert moves[-1]["moves"] == []  # the match is over
    assert list(applied(piles).values()) == public_tables(server.log)


def test_the_timer_abandons_an_idle_table_and_a_silent_seat_declines(tmp_path: Path) -> None:
    """Issue 31: "A client that disconnects, stalls ... does not stall its table: the
    profile's time rules apply (idle abandon ...)". Nobody moves; the timer ends the match
    at the idle deadline; the seats do not answer the final body, so nobody accepts."""
    server = Server(tmp_path, [person(), person(OTHER_KEY, "Sam")], quick_rules(200))
    peers = [FakePeer(server.journal, seat) for seat in (0, 1)]

    async def answer(peer: FakePeer, key: Ed25519PrivateKey) -> None:
        while True:
            message = await peer.inbox.get()
            assert peer.seat is not None
            if message["type"] == "commitment":
                statement = message["statement"].encode()
                server.table.entropy(peer.seat, sign(key, ENTROPY, statement, ENTROPY_VERSION))
            elif message["type"] == "genesis":
                body = message["body"].encode()
                server.table.cosign(peer.seat, sign(key, "genesis", body, FORMAT_VERSION))
            elif message["type"] == "final":
                server.table.accept(peer.seat, None)
            elif message["type"] == "ended":
                return

    async def main() -> None:
        committer = asyncio.create_task(server.journal.group_commit())
        for peer in peers:
            await server.table.attach(peer, 0)
        clients = [
            asyncio.create_task(answer(p, k))
            for p, k in zip(peers, (PERSON_KEY, OTHER_KEY), strict=True)
        ]
        await server.table.run()
        await asyncio.gather(*clients)
        committer.cancel()

    run(main)
    report = verify_log(server.log, SETTINGS)
    assert report.verdict is Verdict.VERIFIED and report.accepted_by == ()
    final = json.loads(server.log.read_bytes().splitlines()[-1])["body"]
    assert final["kind"] == "final" and final["reason"] == "abandoned"
    # Seat 0 was told when seat 1 connected.
    assert peers[0].of("seat") == [{"type": "seat", "seat": 1, "connected": True}]


def test_a_seat_that_does_not_sign_in_time_cancels_the_table_and_nothing_is_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Design: "cancelled (a seat did not sign within 60 s while starting: nothing
    written)"; the minute is shortened here."""
    monkeypatch.setattr(host, "START_TIMEOUT_S", 0.05)
    server = Server(tmp_path, [person(), bot(1)], quick_rules())
    spectator = FakePeer(server.journal)

    async def main() -> None:
        await server.table.attach(spectator, 0)
        await server.table.run()

    run(main)
    assert server.states == [TableState.STARTING, TableState.CANCELLED]
    assert not server.log.exists() and server.journal.entries == []
    assert [m["code"] for m in spectator.of("error")] == ["TABLE_CLOSED"]
    assert spectator.closed is ServeCode.TABLE_CLOSED


def test_a_stopped_table_resumes_from_its_log_and_a_peer_catches_up_from_its_seq(
    tmp_path: Path,
) -> None:
    """Issue 31: "Ctrl-C stops it cleanly (tables resume on the next start)", and "clients
    reconnect and catch up from the last seq they hold". A peer that held the first ten
    records gets the rest, each once, from the log file and then live."""
    server = Server(tmp_path, [bot(0), bot(1)], quick_rules())
    first = FakePeer(server.journal)

    async def before() -> None:
        committer = asyncio.create_task(server.journal.group_commit())
        await server.table.attach(first, 0)
        task = asyncio.create_task(server.table.run())
        await until(lambda: len(first.of("record")) >= 20)
        await server.table.stop()
        await task
        committer.cancel()

    run(before)
    assert server.states[-1] is TableState.PLAYING
    assert first.closed is ServeCode.SERVER_STOPPING and first.of("error")[-1]["code"] == (
        "SERVER_STOPPING"
    )
    held = first.lines()
    assert held == server.log.read_bytes().splitlines()  # stop sends what it wrote, durable
    again = Server(tmp_path, [bot(0), bot(1)], quick_rules())
    again.states = []
    back = FakePeer(again.journal)

    async def after() -> None:
        committer = asyncio.create_task(again.journal.group_commit())
        table = again.table
        running = asyncio.create_task(table.run())
        await until(lambda: table.state is TableState.PLAYING)
        await table.attach(back, 10)
        await running
        committer.cancel()

    run(after)
    lines = again.log.read_bytes().splitlines()
    assert lines[: len(held)] == held and back.lines() == lines[10:]
    # Issue 32 design §1: "once as a full frame after a sync's catch-up": the resumed
    # table shows the peer every pile after the last record it sent, then a delta after
    # each record.
    tables = public_tables(again.log)
    assert applied(first.of("piles")) == dict(enumerate(tables[: len(held)]))
    caught_up = back.of("piles")[0]
    assert caught_up["full"] and caught_up["seq"] >= len(held) - 1
    assert applied(back.of("piles")) == {
        seq: table for seq, table in enumerate(tables) if seq >= caught_up["seq"]
    }
    report = verify_log(again.log, SETTINGS)
    assert report.verdict is Verdict.VERIFIED and report.accepted_by == (0, 1)
    assert again.audit() is ExitCode.OK


def test_submissions_before_the_deal_are_not_asked_and_join_fills_a_free_seat(
    tmp_path: Path,
) -> None:
    """The lobby's join fills a free person's seat; a table waits for every seat, and a
    submission before the deal is NOT_ASKED."""
    free = SeatSpec(kind=SeatKind.PERSON)
    server = Server(tmp_path, [free, bot(1)], quick_rules())
    table = server.table
    submission = ClientSubmit(
        ref="r", n=0, move="0 resign", seen_seq=0, seen_hash="0" * 64, signature="0" * 128
    )

    async def main() -> None:
        with pytest.raises(ServeError) as early:
            await table.submit(0, submission)
        assert early.value.code is ServeCode.NOT_ASKED and early.value.ref == "r"
        with pytest.raises(ServeError) as bots:  # docs/protocol.md §3: "or a bot's"
            table.join(1, "x", raw_public_bytes(PERSON_KEY.public_key()))
        assert bots.value.code is ServeCode.NO_SUCH_SEAT
        table.join(0, "Pat", raw_public_bytes(PERSON_KEY.public_key()))
        with pytest.raises(ServeError) as closed:
            table.join(0, "Sam", raw_public_bytes(OTHER_KEY.public_key()))
        assert closed.value.code is ServeCode.SEAT_TAKEN
        assert table.welcome(0)["seats"][0] == {
            "seat": 0,
            "name": "Pat",
            "kind": "person",
            "key": raw_public_bytes(PERSON_KEY.public_key()).hex(),
        }

    run(main)


class BrokenDisk(OSError):
    """What the journal raises once its write or sync failed (JournalError is an OSError)."""


def test_a_failed_journal_stops_the_table_and_acknowledges_nothing_more(
    tmp_path: Path,
) -> None:
    """Issue 31: "nothing acknowledged is ever lost": once the journal cannot make a line
    durable, no record or receipt after it reaches anyone, and the table stops (to resume
    from its log after recovery) instead of playing on."""
    server = Server(tmp_path, [bot(0), bot(1)], quick_rules())
    journal = server.journal
    spectator = FakePeer(journal)
    durable = journal.durable

    async def failing(ticket: int) -> None:
        if ticket > 6:
            raise BrokenDisk("fdatasync failed")
        await durable(ticket)

    journal.durable = failing  # type: ignore[method-assign]

    async def main() -> None:
        committer = asyncio.create_task(journal.group_commit())
        await server.table.attach(spectator, 0)
        with pytest.raises(BrokenDisk):
            await server.table.run()
        committer.cancel()

    run(main)
    assert spectator.undurable == []
    lines = spectator.lines()
    assert lines and all(journal.entries.index((GAME, None, line)) < 6 for line in lines)
    assert server.states[-1] is TableState.PLAYING  # not finished: it resumes later
    assert spectator.closed is ServeCode.SERVER_STOPPING  # nobody waits on a dead table


async def _signs_in(table: HostedTable, peer: FakePeer, key: Ed25519PrivateKey) -> None:
    """A person's client that signs its entropy and the genesis, and nothing more."""
    assert peer.seat is not None
    while True:
        message = await peer.inbox.get()
        if message["type"] == "commitment":
            statement = message["statement"].encode()
            table.entropy(peer.seat, sign(key, ENTROPY, statement, ENTROPY_VERSION))
        elif message["type"] == "genesis":
            table.cosign(peer.seat, sign(key, "genesis", message["body"].encode(), FORMAT_VERSION))


def test_a_submission_that_comes_while_the_server_stops_is_refused_not_a_crash(
    tmp_path: Path,
) -> None:
    """Issue 31: "nothing a client sends can crash the server". A seat's frame read after
    the table stopped (Ctrl-C: its log file closed, its connections being closed) is
    answered SERVER_STOPPING; it wrote nothing to the closed files."""
    server = Server(tmp_path, [person(), bot(1)], quick_rules())
    peer = FakePeer(server.journal, seat=0)
    submission = ClientSubmit(
        ref="late", n=0, move="0 resign", seen_seq=0, seen_hash="0" * 64, signature="0" * 128
    )

    async def main() -> None:
        committer = asyncio.create_task(server.journal.group_commit())
        await server.table.attach(peer, 0)
        client = asyncio.create_task(_signs_in(server.table, peer, PERSON_KEY))
        running = asyncio.create_task(server.table.run())
        await until(lambda: len(peer.of("record")) >= 2)
        await server.table.stop()
        await running
        with pytest.raises(ServeError) as late:
            await server.table.submit(0, submission)
        assert late.value.code is ServeCode.SERVER_STOPPING and late.value.ref == "late"
        client.cancel()
        committer.cancel()

    run(main)
    assert verify_log(server.log, SETTINGS).verdict is Verdict.UNFINISHED


class FullDisk:
    """A receipts file on a full disk."""

    def write(self, data: bytes) -> int:
        raise OSError(28, "No space left on device")

    def flush(self) -> None:
        pass

    def close(self) -> None:
        pass


def test_a_receipts_file_that_cannot_be_written_stops_the_table_not_the_connection(
    tmp_path: Path,
) -> None:
    """Issue 31: "nothing acknowledged is ever lost", and an exception may not escape to
    the connection: a receipt that cannot be written to the seat's receipts file is never
    sent; the table stops (SERVER_STOPPING) to resume from its log, as for a log file."""
    server = Server(tmp_path, [person(), bot(1)], quick_rules())
    peer = FakePeer(server.journal, seat=0)
    submission = ClientSubmit(
        ref="full", n=0, move="0 resign", seen_seq=0, seen_hash="0" * 64, signature="0" * 128
    )

    async def main() -> None:
        committer = asyncio.create_task(server.journal.group_commit())
        await server.table.attach(peer, 0)
        client = asyncio.create_task(_signs_in(server.table, peer, PERSON_KEY))
        running = asyncio.create_task(server.table.run())
        await until(lambda: len(peer.of("record")) >= 2)
        files = server.table._receipts._files
        files[0].close()
        files[0] = FullDisk()  # type: ignore[call-overload]
        with pytest.raises(ServeError) as full:
            await server.table.submit(0, submission)
        assert full.value.code is ServeCode.SERVER_STOPPING
        with pytest.raises(OSError):
            await running
        client.cancel()
        committer.cancel()

    run(main)
    assert peer.of("receipt") == []
    assert peer.closed is ServeCode.SERVER_STOPPING  # not left connected to a dead table


def test_a_seat_that_connects_again_replaces_its_first_connection(tmp_path: Path) -> None:
    """A seat connecting twice (docs/protocol.md §10): the newer connection, once it syncs,
    replaces the first, which gets an ``error`` REPLACED and is closed; the seat's messages
    then go to the newer one only, and the other seats are not told it came and went."""
    server = Server(tmp_path, [person(), person(OTHER_KEY, "Sam")], quick_rules())
    first, second = FakePeer(server.journal, 0), FakePeer(server.journal, 0)
    other = FakePeer(server.journal, 1)

    async def main() -> None:
        committer = asyncio.create_task(server.journal.group_commit())
        running = asyncio.create_task(server.table.run())
        await server.table.attach(other, 0)
        await server.table.attach(first, 0)
        await server.table.attach(second, 0)
        await until(lambda: bool(second.of("commitment")))
        await server.table.stop()
        await running
        committer.cancel()

    run(main)
    assert first.closed is ServeCode.REPLACED
    assert [m["code"] for m in first.of("error")] == ["REPLACED"]
    assert first.of("commitment") == [] and len(second.of("commitment")) == 1
    assert other.of("seat") == [{"type": "seat", "seat": 0, "connected": True}]


def test_a_catch_up_reads_the_log_off_the_event_loop_a_few_records_at_a_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Review of issue 31 ("slow readers are dropped rather than buffered without bound";
    the loop never waits for the disk in the hot path): a peer that syncs from 0 at a table
    with many records gets them all, in order, read from the log file by a worker thread a
    few at a time, only the bytes it lacks, and then the live ones."""
    monkeypatch.setattr(sent_log, "CATCH_UP_LINES", 7)
    reads: list[tuple[bool, int, int]] = []
    read_lines = sent_log.read_lines

    def recorded(path: Path, start: int, end: int) -> list[bytes]:
        reads.append((threading.current_thread() is threading.main_thread(), start, end))
        return read_lines(path, start, end)

    monkeypatch.setattr(sent_log, "read_lines", recorded)
    server = Server(tmp_path, [bot(0), bot(1)], quick_rules())
    early, late = FakePeer(server.journal), FakePeer(server.journal)
    batches: list[int] = []
    send_all = late.send_all

    def counted(messages: Sequence[Mapping[str, object]]) -> None:
        batches.append(len(messages))
        send_all(messages)

    late.send_all = counted  # type: ignore[method-assign]

    async def main() -> None:
        committer = asyncio.create_task(server.journal.group_commit())
        await server.table.attach(early, 0)
        running = asyncio.create_task(server.table.run())
        await until(lambda: len(early.of("record")) >= 30)
        await server.table.attach(late, 3)
        await running
        committer.cancel()

    run(main)
    lines = server.log.read_bytes().splitlines()
    assert late.lines() == lines[3:] and early.lines() == lines
    assert batches and max(batches) <= 7 and sum(batches) >= 27
    assert not any(on_loop for on_loop, _, _ in reads)
    assert reads[0][1] == sum(len(line) + 1 for line in lines[:3])


def test_a_table_whose_seats_are_not_taken_in_time_is_cancelled(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Review of issue 31 ("a client that ... floods does not stall ... the server"): the
    server holds a bounded number of open tables, so a waiting table nobody joins is
    cancelled after a while (30 minutes, shortened here) instead of holding its place for
    ever; whoever watched it hears TABLE_CLOSED, and nothing was written."""
    monkeypatch.setattr(host, "WAITING_TIMEOUT_S", 0.05)
    server = Server(tmp_path, [SeatSpec(kind=SeatKind.PERSON), bot(1)], quick_rules())
    spectator = FakePeer(server.journal)

    async def main() -> None:
        await server.table.attach(spectator, 0)
        await server.table.run()

    run(main)
    assert server.states == [TableState.CANCELLED]
    assert spectator.closed is ServeCode.TABLE_CLOSED and not server.log.exists()


def test_a_connection_still_catching_up_does_not_replace_a_newer_one(tmp_path: Path) -> None:
    """A seat has one connection, the one that synced last (docs/protocol.md §10): an
    older connection whose catch-up from the log file ends after a newer one synced is the
    one replaced, not the newer."""
    server = Server(tmp_path, [person(), bot(1)], quick_rules())
    older, newer = FakePeer(server.journal, 0), FakePeer(server.journal, 0)

    async def main() -> None:
        committer = asyncio.create_task(server.journal.group_commit())
        signer = FakePeer(server.journal, 0)
        await server.table.attach(signer, 0)
        client = asyncio.create_task(_signs_in(server.table, signer, PERSON_KEY))
        running = asyncio.create_task(server.table.run())
        await until(lambda: len(signer.of("record")) >= 2)
        catching_up = asyncio.create_task(server.table.attach(older, 0))
        await asyncio.sleep(0)  # the older one's catch-up is reading the log file
        await server.table.attach(newer, 10**6)
        await catching_up
        await server.table.stop()
        await running
        client.cancel()
        committer.cancel()

    run(main)
    assert older.closed is ServeCode.REPLACED and newer.closed is ServeCode.SERVER_STOPPING


def _two_persons(folder: Path) -> tuple[Server, list[FakePeer]]:
    """A table of two keyed persons in ``folder`` (a resumed one when it holds their
    table's log), and a peer for each seat."""
    server = Server(folder, [person(), person(OTHER_KEY, "Sam")], quick_rules())
    return server, [FakePeer(server.journal, seat) for seat in (0, 1)]


def _play_then_stop(
    server: Server,
    peers: list[FakePeer],
    done: Callable[[], bool],
    meanwhile: Callable[[], Awaitable[None]] | None = None,
) -> None:
    """Both persons sign in and the table plays until ``done`` holds and ``meanwhile`` has
    run, then stops as for a restart: the table is left for a resume to find."""

    async def play() -> None:
        committer = asyncio.create_task(server.journal.group_commit())
        signers = []
        for peer, key in zip(peers, (PERSON_KEY, OTHER_KEY), strict=True):
            await server.table.attach(peer, 0)
            signers.append(asyncio.create_task(_signs_in(server.table, peer, key)))
        running = asyncio.create_task(server.table.run())
        await until(done)
        if meanwhile is not None:
            await meanwhile()
        await server.table.stop()
        await running
        for task in (*signers, committer):
            task.cancel()

    run(play)


def _resume_then_stop(server: Server, attach: tuple[FakePeer, int] | None = None) -> None:
    """``server``'s table resumed from its log until it plays, ``attach``'s peer joined
    then from its ``seq``, and stopped again."""

    async def resume() -> None:
        committer = asyncio.create_task(server.journal.group_commit())
        running = asyncio.create_task(server.table.run())
        await until(lambda: server.table.state is TableState.PLAYING)
        if attach is not None:
            await server.table.attach(*attach)
        await server.table.stop()
        await running
        committer.cancel()

    run(resume)


def test_a_resumed_table_shows_a_reconnecting_seat_its_piles_and_moves_at_once(
    tmp_path: Path,
) -> None:
    """Issue 32 design §1: piles "once as a full frame after a sync's catch-up", moves
    "after a sync's catch-up". After a restart nobody has moved yet, so no record comes:
    a seat that reconnects is still shown the table after the last record and its moves.
    Then comes the record the resume wrote: the pause (docs/log-format.md §6, "Notes")."""
    server, peers = _two_persons(tmp_path)
    _play_then_stop(server, peers, lambda: len(peers[0].of("moves")) >= 2)
    dealt = peers[0].of("moves")[-1]
    assert dealt["seq"] == 1 and dealt["moves"]  # after the hand_start: its moves
    again, _ = _two_persons(tmp_path)
    back = FakePeer(again.journal, seat=0)
    _resume_then_stop(again, (back, 2))  # it holds both records
    (pause,) = back.of("record")  # the resume's own, sent once durable
    assert json.loads(pause["line"])["body"] == {
        **json.loads(pause["line"])["body"],
        "kind": "pause",
        "cause": "crash",
        "seq": 2,
    }
    assert [m["type"] for m in back.messages if m["type"] != "error"] == [
        *("pack", "piles", "moves"),
        *("record", "piles", "moves"),  # a pause changes no pile
    ]
    shown, unchanged = back.of("piles")
    assert (unchanged["seq"], unchanged["full"], unchanged["set"]) == (2, False, {})
    assert shown["full"] and shown["seq"] == 1
    assert shown == {**peers[0].of("piles")[-1], "full": True}  # the hand_start's: full
    assert back.of("moves") == [dealt, {**dealt, "seq": 2}]


def test_a_connection_that_ends_its_catch_up_after_the_table_stopped_is_closed_too() -> None:
    """docs/protocol.md §10: "When the server stops (Ctrl-C) it closes every connection
    (`SERVER_STOPPING`)". A spectator still catching up from the log when its table stopped
    was left open (CI saw its socket wait 60 s): it is closed, with the error, as it joins."""
    audience = Audience()
    peer = FakePeer(FakeJournal())
    audience.syncing(peer)
    audience.close_all(ServeCode.SERVER_STOPPING, "the server is stopping")
    assert audience.join(peer, 0) is False
    assert peer.closed is ServeCode.SERVER_STOPPING
    assert peer.messages[-1]["code"] == "SERVER_STOPPING"
    assert audience.each() == []


def test_a_resumed_table_dates_its_pause_no_earlier_than_its_last_refusal(
    tmp_path: Path,
) -> None:
    """docs/log-format.md §6: "a resumed table's time goes on from its last record's `t_ms`
    (or from the latest receipt it gave after that record, a refusal's, so that no later
    record seems older than a refusal)": else the pause would read, beside the refusal's
    receipt, as a table that had named an old head (STALE_HEAD)."""
    server, peers = _two_persons(tmp_path)
    wrong = ClientSubmit(
        ref="wrong", n=7, move="0 resign", seen_seq=0, seen_hash="0" * 64, signature="0" * 128
    )

    async def refused() -> None:
        await asyncio.sleep(0.2)  # the refusal comes well after the last record
        with contextlib.suppress(SubmissionError, ServeError):
            await server.table.submit(0, wrong)
        await until(lambda: len(peers[0].of("receipt")) >= 1)

    _play_then_stop(server, peers, lambda: len(peers[0].of("moves")) >= 1, refused)
    refusal = json.loads(peers[0].of("receipt")[0]["receipt"])["body"]
    assert refusal["outcome"] == "refused"
    last = json.loads(server.log.read_bytes().splitlines()[-1])["body"]
    assert refusal["t_ms"] > last["t_ms"]
    again, _ = _two_persons(tmp_path)
    _resume_then_stop(again)
    pause = json.loads(again.log.read_bytes().splitlines()[-1])["body"]
    assert pause["kind"] == "pause" and pause["t_ms"] >= refusal["t_ms"]
