"""A submission sent again (issue 35, point 1): "A submission is identified by its seat and
number ... Sent again — after a timeout, a reconnect, a reload — it gets the byte-identical
receipt it got the first time and never a second record." On the hosted table, without a
network: the same frame twice, the same number signed otherwise, and the same frame after
the table resumed from its log, with and without its receipt on file."""

from __future__ import annotations

import asyncio
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from racing_demon.game.flow import Seen
from racing_demon.log.receipts import receipt_again
from racing_demon.log.records import ACCEPT, ENTROPY, ENTROPY_VERSION, FORMAT_VERSION
from racing_demon.log.signing import sign
from racing_demon.outcomes import ExitCode
from racing_demon.serve.host import HostedTable
from racing_demon.serve.protocol import ClientSubmit
from racing_demon.serve.receipt_desk import LoggedSubmissions
from racing_demon.table import sign_submission
from racing_demon.verify import Verdict, verify_log
from serve.hosting import (
    GAME,
    PERSON_KEY,
    SETTINGS,
    Server,
    bot,
    person,
    quick_rules,
    run,
    until,
)
from serve.test_host import FakePeer

SAMPLES = Path(__file__).parents[2] / "sample_games"
SAMPLE_TABLE_KEY = Ed25519PrivateKey.from_private_bytes(bytes(range(32)))  # table.pub's
FIRST_MOVE = "0 turn AS 2S 3S"  # a guess: logged as a move, or bounced; logged either way


def seen_of(peer: FakePeer) -> Seen:
    line = peer.lines()[-1]
    return Seen(seq=json.loads(line)["body"]["seq"], hash=hashlib.sha256(line).hexdigest())


def submission(ref: str, n: int, move: str, seen: Seen, key: Ed25519PrivateKey) -> ClientSubmit:
    return ClientSubmit(
        ref=ref,
        n=n,
        move=move,
        seen_seq=seen.seq,
        seen_hash=seen.hash,
        signature=sign_submission(key, GAME, 1, 0, n, move, seen),
    )


async def receipt_of(table: HostedTable, peer: FakePeer, message: ClientSubmit) -> str:
    await table.submit(0, message)
    answer = peer.of("receipt")[-1]
    assert answer["ref"] == message.ref
    return str(answer["receipt"])


async def dealt(server: Server, peer: FakePeer) -> tuple[asyncio.Task[None], asyncio.Task[None]]:
    """Seat 0's ``peer`` attached, the table running, and its first pack in: the group
    commit's task and the table's."""
    committer = asyncio.create_task(server.journal.group_commit())
    await server.table.attach(peer, 0)
    playing = asyncio.create_task(server.table.run())
    await sign_in(server.table, peer)
    return committer, playing


async def sign_in(table: HostedTable, peer: FakePeer) -> None:
    """Answer the starting requests as seat 0, until its first pack."""
    while True:
        message = await peer.inbox.get()
        if message["type"] == "commitment":
            statement = message["statement"].encode()
            table.entropy(0, sign(PERSON_KEY, ENTROPY, statement, ENTROPY_VERSION))
        elif message["type"] == "genesis":
            table.cosign(0, sign(PERSON_KEY, "genesis", message["body"].encode(), FORMAT_VERSION))
        elif message["type"] == "pack":
            return


async def finish(table: HostedTable, peer: FakePeer, n: int) -> None:
    """Resign as seat 0 and accept the final record."""
    await table.submit(0, submission("end", n, "0 resign", seen_of(peer), PERSON_KEY))
    while True:
        message = await peer.inbox.get()
        if message["type"] == "final":
            table.accept(0, sign(PERSON_KEY, ACCEPT, message["body"].encode(), FORMAT_VERSION))
        elif message["type"] == "ended":
            return


def seat0_records(log: Path) -> list[dict[str, Any]]:
    bodies = [json.loads(line)["body"] for line in log.read_bytes().splitlines()]
    return [body for body in bodies if body.get("player") == 0 and "n" in body]


def test_the_same_submission_sent_again_gets_the_same_receipt_bytes_and_no_second_record(
    tmp_path: Path,
) -> None:
    """Issue 35: "Sent again ... it gets the byte-identical receipt it got the first time
    and never a second record." docs/protocol.md §10: the same number signed otherwise is
    another submission, refused WRONG_NUMBER as before."""
    server = Server(tmp_path, [person(), bot(1)], quick_rules())
    peer = FakePeer(server.journal, seat=0)
    answers: dict[str, str] = {}

    async def main() -> None:
        committer, playing = await dealt(server, peer)
        first = submission("a", 0, FIRST_MOVE, seen_of(peer), PERSON_KEY)
        answers["first"] = await receipt_of(server.table, peer, first)
        answers["again"] = await receipt_of(server.table, peer, first)
        answers["other ref"] = await receipt_of(
            server.table, peer, ClientSubmit(**{**vars_of(first), "ref": "a-again"})
        )
        other = submission("b", 0, "0 resign", seen_of(peer), PERSON_KEY)
        answers["signed otherwise"] = await receipt_of(server.table, peer, other)
        await finish(server.table, peer, 1)
        await playing
        committer.cancel()

    run(main)
    assert answers["again"] == answers["first"] == answers["other ref"]
    body = json.loads(answers["signed otherwise"])["body"]
    assert (body["outcome"], body["reason"], body["n"]) == ("refused", "WRONG_NUMBER", 0)
    assert [body["n"] for body in seat0_records(server.log)] == [0, 1]
    assert verify_log(server.log, SETTINGS).verdict is Verdict.VERIFIED
    # The receipts file holds each receipt once: an answer sent again is not a new one.
    held = server.receipts(0).read_text().splitlines()
    assert held.count(answers["first"]) == 1
    assert server.audit() is ExitCode.OK


def vars_of(message: ClientSubmit) -> dict[str, Any]:
    return {name: getattr(message, name) for name in ClientSubmit.__dataclass_fields__}


TORN = b'{"body":{"game":"5e7e'  # a receipts file's last line, cut by a crash


@pytest.mark.parametrize(("receipt_on_file", "torn"), [(True, False), (False, False), (True, True)])
def test_a_submission_sent_again_after_a_restart_gets_the_same_receipt_bytes(
    tmp_path: Path, receipt_on_file: bool, torn: bool
) -> None:
    """Issue 35: "Sent again — after a timeout, a reconnect, a reload —" and after the
    server restarted: the resumed table knows the submission from its log. After a crash
    that kept the record and lost its receipt (cut from the receipts file here), the
    receipt is made again, written to the file and sent. A torn last line (which journal
    recovery leaves as evidence) neither stops the table from resuming nor is glued to the
    next receipt: it stays a line of its own."""
    server = Server(tmp_path, [person(), bot(1)], quick_rules())
    peer = FakePeer(server.journal, seat=0)
    first: dict[str, Any] = {}

    async def before() -> None:
        committer, playing = await dealt(server, peer)
        message = submission("a", 0, FIRST_MOVE, seen_of(peer), PERSON_KEY)
        first["message"], first["receipt"] = message, await receipt_of(server.table, peer, message)
        await server.table.stop()
        await playing
        committer.cancel()

    run(before)
    receipts = server.receipts(0)
    if not receipt_on_file:
        kept = [line for line in receipts.read_text().splitlines() if line != first["receipt"]]
        receipts.write_text("".join(line + "\n" for line in kept))
    if torn:
        receipts.write_bytes(receipts.read_bytes() + TORN)
    again = Server(tmp_path, [person(), bot(1)], quick_rules())
    back = FakePeer(again.journal, seat=0)
    answered: list[str] = []

    async def after() -> None:
        committer = asyncio.create_task(again.journal.group_commit())
        table = again.table
        running = asyncio.create_task(table.run())
        await until(lambda: table.state.value == "playing")
        await table.attach(back, 0)
        await until(lambda: bool(back.of("pack")))
        answered.append(await receipt_of(table, back, first["message"]))
        await finish(table, back, 1)
        await running
        committer.cancel()

    run(after)
    assert answered == [first["receipt"]]
    # Journaled again only when the file had lost it, and then durable before it was sent.
    journaled = [line.decode() for _, seat, line in again.journal.entries if seat == 0]
    assert journaled.count(first["receipt"]) == (0 if receipt_on_file else 1)
    if not receipt_on_file:
        assert [m for m in back.undurable if m["type"] == "receipt"] == []
    assert [body["n"] for body in seat0_records(again.log)] == [0, 1]
    assert receipts.read_text().splitlines().count(first["receipt"]) == 1
    if torn:
        assert TORN in receipts.read_bytes().splitlines()
    else:
        assert again.audit() is ExitCode.OK


def test_receipt_again_makes_the_receipt_the_table_gave_from_the_record_alone() -> None:
    """Every field of a logged submission's receipt comes from its record, and Ed25519
    signs deterministically: a sample game's receipts, made again from its log's lines."""
    log = SAMPLES / "valid" / "nertz-4p-demon-empty-signed.jsonl"
    lines = log.read_bytes().splitlines()
    made = 0
    for seat in range(4):
        receipts = log.with_name(f"{log.stem}.seat{seat}.receipts.jsonl")
        for receipt in receipts.read_bytes().splitlines():
            body = json.loads(receipt)["body"]
            if body["outcome"] != "refused":
                assert receipt_again(lines[body["seq"]], SAMPLE_TABLE_KEY) == receipt
                made += 1
    assert made > 100


def test_the_book_knows_a_number_only_with_the_signature_it_was_logged_with() -> None:
    book = LoggedSubmissions(2)
    book.logged(1, 0, 5, "ab" * 64)
    assert book.find(1, 0, "ab" * 64) == 5
    assert book.find(1, 0, "cd" * 64) is None  # another submission with a used number
    assert book.find(1, 1, "ab" * 64) is None  # not logged yet
    assert book.find(0, 0, "ab" * 64) is None and book.find(7, 0, "ab" * 64) is None
    with pytest.raises(ValueError, match="after 1 numbers"):
        book.logged(1, 2, 9, "ab" * 64)
