"""A served submission's own work, replayed for an instruction count (docs/serving.md §7,
"Where a submission's CPU goes"): what the server does per submission less the web stack,
the journal and the event loop.

    python bench/serve_submit_bench.py record FRAMES [--count 400]
    valgrind --tool=callgrind python bench/serve_submit_bench.py replay FRAMES --count N [--live K]

``record`` plays a keyed four-seat nertz table with the hard bot at every seat (its
client's moves signed with fixed keys, 60 ms apart) and writes each seat's frame, as a
client sends it, to FRAMES. ``replay`` creates the same table (fixed table key, secret and
game id, so the same records and hashes) and feeds it the first N frames: each through
``parse_client_message`` and ``Table.submit``, every line it writes through the
``Audience`` to four peers that encode their frames as the server's do, each receipt to
its seat. It prints a SHA-256 of the log and of every frame sent, to show that a change
kept the bytes. Instructions per submission: (count at N - count at 0) / N.

``--live K`` adds what a browser's page is sent (issue 32): after each record its
``piles`` to every peer and the ``moves`` of the first K seats (a person's seat with a
live connection), as the host sends them (``serve.live_view.LiveView``).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from racing_demon.game.engine import advance_clock
from racing_demon.log.keys import raw_public_bytes
from racing_demon.profiles import load_rules
from racing_demon.serve import protocol
from racing_demon.serve.audience import Audience
from racing_demon.serve.live_view import LiveView
from racing_demon.serve.protocol import ServeCode
from racing_demon.sim.bots import HARD, choose_move, stream_chooser
from racing_demon.table import PlayerInfo, SubmissionError, Table, player_signer, sign_submission

SEATS = 4
TABLE_KEY = Ed25519PrivateKey.from_private_bytes(bytes([7]) * 32)
KEYS = [Ed25519PrivateKey.from_private_bytes(bytes([30 + seat]) * 32) for seat in range(SEATS)]
GAME = "ab" * 16
SECRET = bytes(range(32))
STEP_MS = 60


# The server's frame encoding; before protocol.encode existed (to replay that code) its peer
# called json.dumps so, which writes the same bytes.
encode = getattr(protocol, "encode", None) or (
    lambda message: json.dumps(message, separators=(",", ":"))
)


class Peer:
    """A connection's frames, as the server's peer makes them (``protocol.encode``), hashed."""

    def __init__(self, seat: int, digest: Any) -> None:
        self.seat = seat
        self._digest = digest

    def send(self, message: Mapping[str, object]) -> None:
        self._digest.update(encode(message).encode())

    def send_encoded(self, message: Mapping[str, object], text: str) -> None:
        self._digest.update(text.encode())

    def send_all(self, messages: Sequence[Mapping[str, object]]) -> None:
        for message in messages:
            self.send(message)

    def close(self, reason: ServeCode) -> None:
        pass


def new_table(folder: Path, audience: Audience | None, live: LiveView | None = None) -> Table:
    sent = [0]

    def on_record(line: bytes, state: Any) -> None:
        if audience is not None:
            audience.record(sent[0], protocol.record(line))
        if live is not None:
            live.show(sent[0], state, new_hand=b'"kind":"hand_start"' in line)
            live.advise()
        sent[0] += 1

    players = [
        PlayerInfo(f"p{seat}", f"b{seat}", raw_public_bytes(key.public_key()))
        for seat, key in enumerate(KEYS)
    ]
    return Table.create(
        folder / f"{GAME}.jsonl",
        load_rules("nertz"),
        players,
        TABLE_KEY,
        SECRET,
        None,
        player_signers=[player_signer(key) for key in KEYS],
        game_id=GAME,
        durable=False,
        on_record=on_record,
    )


def submit(table: Table, seat: int, t_ms: int, frame: str) -> bytes | None:
    message = protocol.parse_client_message(frame)
    assert isinstance(message, protocol.ClientSubmit)
    try:
        outcome = table.submit(seat, message.move, t_ms, message.n, message.signature, message.seen)
    except SubmissionError as refusal:
        return refusal.receipt
    return outcome.receipt


def record(frames: Path, count: int, folder: Path) -> None:
    table = new_table(folder, None)
    choose = stream_chooser(word * 2654435761 % 2**32 for word in range(10**9))
    t_ms, made = 1000, 0
    with frames.open("w") as out:
        while made < count and not table.played_out:
            for seat in range(SEATS):
                t_ms += STEP_MS
                state = table.state
                view = advance_clock(state, t_ms) if t_ms > state.clock_ms else state
                move = choose_move(view, seat, HARD, choose)
                if move is None:
                    continue
                text, n, seen = str(move), table.next_n(seat), table.head
                made += 1
                frame = encode(
                    {
                        "type": "submit",
                        "ref": f"r{made}",
                        "n": n,
                        "move": text,
                        "seen": {"seq": seen.seq, "hash": seen.hash},
                        "signature": sign_submission(
                            KEYS[seat], GAME, view.hand, seat, n, text, seen
                        ),
                    }
                )
                out.write(json.dumps([seat, t_ms, frame]) + "\n")
                submit(table, seat, t_ms, frame)
    print(f"{made} frames recorded", file=sys.stderr)


def replay(frames: Path, count: int, folder: Path, live: int | None = None) -> None:
    sent = hashlib.sha256()
    audience = Audience()
    peers = [Peer(seat, sent) for seat in range(SEATS)]
    for peer in peers:
        audience.syncing(peer)
        audience.join(peer, 0)
    view = None if live is None else LiveView(audience, range(live), lambda: 0)
    table = new_table(folder, audience, view)
    with frames.open() as lines:
        entries = [json.loads(line) for line, _ in zip(lines, range(count), strict=False)]
    for seat, t_ms, frame in entries:
        receipt = submit(table, seat, t_ms, frame)
        if receipt is not None:
            ref = json.loads(frame)["ref"]
            audience.to_seat(seat, protocol.receipt(ref=ref, receipt=receipt))
    log = hashlib.sha256((folder / f"{GAME}.jsonl").read_bytes()).hexdigest()
    print(f"{len(entries)} replayed; frames {sent.hexdigest()}; log {log}", file=sys.stderr)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("mode", choices=("record", "replay"))
    parser.add_argument("frames", type=Path)
    parser.add_argument("--count", type=int, default=400)
    parser.add_argument("--live", type=int, default=None, metavar="K")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="racing-demon-submit-bench-") as directory:
        if options.mode == "record":
            record(options.frames, options.count, Path(directory))
        else:
            replay(options.frames, options.count, Path(directory), options.live)


if __name__ == "__main__":
    main()
