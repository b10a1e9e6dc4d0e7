"""Issue 35, point 3: "Restarts and deploys lose no table." A table a server of an older
format (v2) left unfinished is resumed by this one and played to its end in v2
(docs/log-format.md §8): its bots sign in v2, its seats accept in v2, and no note is
written, since a v2 log has none."""

from __future__ import annotations

import asyncio
import hashlib
import json
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from racing_demon.game.flow import RecordKind, Submission
from racing_demon.log.canonical import canonical_bytes
from racing_demon.log.records import line_bytes, parse_record, statement_of
from racing_demon.log.signing import sign
from racing_demon.outcomes import ExitCode
from racing_demon.serve.host import TableState
from racing_demon.testing.tamper import reseal
from racing_demon.verify import Verdict, verify_log
from serve.hosting import SETTINGS, TABLE_KEY, Server, bot, quick_rules, run, until

BOT_KEYS = [Ed25519PrivateKey.from_private_bytes(bytes([20 + seat]) * 32) for seat in (0, 1)]


def as_v2(server: Server) -> None:
    """The table's log and the receipts it gave, as a v2 server would have written them:
    every record of format v2, signed as v2 by the table and the bots, and each receipt
    naming the v2 record by its body."""
    values = [json.loads(line) for line in server.log.read_bytes().splitlines()]
    assert {value["body"]["kind"] for value in values}.isdisjoint({"pause", "lag"})
    for value in values:
        value["body"]["v"] = 2
        value["body"].pop("lost_to", None)  # a v4 bounce's: v2 has none
    genesis = values[0]
    genesis["sigs"]["players"] = [
        sign(key, RecordKind.GENESIS.value, canonical_bytes(genesis["body"]), 2) for key in BOT_KEYS
    ]
    lines = reseal(values, key=TABLE_KEY, player_keys=BOT_KEYS)
    server.log.write_bytes(b"".join(line + b"\n" for line in lines))
    for seat in (0, 1):
        receipts = [json.loads(line) for line in server.receipts(seat).read_bytes().splitlines()]
        server.receipts(seat).write_bytes(b"".join(_renamed(r, values) + b"\n" for r in receipts))


def _renamed(receipt: dict[str, Any], values: list[dict[str, Any]]) -> bytes:
    """``receipt`` of the v3 run as the v2 table gave it: the record it names by its v2
    body, and, for a logged submission, the statement as the v2 record holds it (its
    ``seen`` names the v2 history)."""
    body = receipt["body"]
    named = values[body["seq"]]["body"]
    body["record"] = _sha256(canonical_bytes(named))
    if body["outcome"] != "refused":
        record = parse_record(named)
        assert isinstance(record.payload, Submission)
        body["submission"] = _sha256(canonical_bytes(statement_of(record.game, record.payload)))
    return line_bytes(body, {"table": sign(TABLE_KEY, "receipt", canonical_bytes(body), 2)})


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def test_a_v2_table_left_unfinished_is_resumed_and_played_to_its_end_in_v2(
    tmp_path: Path,
) -> None:
    first = Server(tmp_path, [bot(0), bot(1)], quick_rules())

    async def play_a_while() -> None:
        committer = asyncio.create_task(first.journal.group_commit())
        task = asyncio.create_task(first.table.run())
        await until(lambda: first.log.exists() and len(first.log.read_bytes().splitlines()) >= 20)
        await first.table.stop()
        await task
        committer.cancel()

    run(play_a_while)
    as_v2(first)
    held = first.log.read_bytes()
    again = Server(tmp_path, [bot(0), bot(1)], quick_rules())

    async def play_on() -> None:
        committer = asyncio.create_task(again.journal.group_commit())
        await again.table.run()
        committer.cancel()

    run(play_on)
    assert again.states[-1] is TableState.FINISHED
    data = again.log.read_bytes()
    assert data.startswith(held) and len(data) > len(held)
    bodies = [json.loads(line)["body"] for line in data.splitlines()]
    assert {body["v"] for body in bodies} == {2}
    assert "pause" not in {body["kind"] for body in bodies}  # v2 has no notes
    report = verify_log(again.log, SETTINGS)
    assert report.verdict is Verdict.VERIFIED, report.finding
    assert report.format_version == 2 and report.accepted_by == (0, 1)
    assert again.audit() is ExitCode.OK  # the receipts of both runs, against the log
