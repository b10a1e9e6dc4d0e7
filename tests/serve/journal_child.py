"""A child process that writes tables' lines as the server does, for the SIGKILL test.

Usage: ``python journal_child.py DATA SEGMENT_BYTES PLAN...``. Each PLAN file holds one
game's writes in order, a line each: ``L <log line>`` or ``R <seat> <receipt line>``. For
each, the child writes the line to the game's own file (flushed, not synced), journals it,
awaits ``durable`` and only then prints what it acknowledged (``L GAME SEQ`` or
``R GAME SEAT INDEX``), the games running concurrently on one event loop. It prints
``ready`` once the journal started and ``closing`` before it closes the journal.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import BinaryIO

from racing_demon.serve.data import DataFolder
from racing_demon.serve.journal import Journal


def _say(text: str) -> None:
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


async def _play(journal: Journal, folder: DataFolder, plan: Path) -> None:
    game = plan.stem
    seq = 0
    receipts: dict[int, BinaryIO] = {}
    sent: dict[int, int] = {}
    with folder.log_path(game).open("ab") as log:
        for entry in plan.read_bytes().splitlines():
            kind, _, rest = entry.partition(b" ")
            if kind == b"L":
                log.write(rest + b"\n")
                log.flush()
                await journal.durable(journal.log_line(game, rest))
                _say(f"L {game} {seq}")
                seq += 1
                continue
            seat_text, _, line = rest.partition(b" ")
            seat = int(seat_text)
            if seat not in receipts:
                receipts[seat] = folder.receipts_path(game, seat).open("ab")
            receipts[seat].write(line + b"\n")
            receipts[seat].flush()
            await journal.durable(journal.receipt(game, seat, line))
            _say(f"R {game} {seat} {sent.get(seat, 0)}")
            sent[seat] = sent.get(seat, 0) + 1
    for file in receipts.values():
        file.close()


async def _main(root: Path, segment_bytes: int, plans: list[Path]) -> None:
    folder = DataFolder(root)
    for game in (plan.stem for plan in plans):
        folder.log_path(game).parent.mkdir(parents=True, exist_ok=True)
        folder.receipts_path(game, 0).parent.mkdir(parents=True, exist_ok=True)
    journal = Journal(folder, segment_bytes=segment_bytes)
    await journal.start()
    _say("ready")
    await asyncio.gather(*(_play(journal, folder, plan) for plan in plans))
    _say("closing")
    await journal.close()


if __name__ == "__main__":
    asyncio.run(_main(Path(sys.argv[1]), int(sys.argv[2]), [Path(p) for p in sys.argv[3:]]))
