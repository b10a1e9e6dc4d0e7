"""A served table's receipts: each one written to its seat's receipts file, journaled, and
sent to the submission's connection once it is durable (``ReceiptDesk``); and a submission
sent again known and answered with its receipt again (``LoggedSubmissions``).

A submission is its seat and number ``n`` (docs/protocol.md §10, "Sending again"): the
table logs each seat's numbers in order from 0, so the record a logged one became is
found by position. A submission sent again carries the signature it was first sent with
(the client resends the frame unchanged), and a seat's Ed25519 signature is a function of
the statement it signs, so the same signature over the same number is the same
submission. The desk answers it with its receipt again, made from the record
(``log.receipts.receipt_again``: the same bytes), and the table never sees it; a number
already logged under another signature is something else, which the table judges
(``WRONG_NUMBER``).

Kept per seat: each logged number's record ``seq`` and signature (64 bytes), and whether
its receipt is in the seat's receipts file (after a crash the record may be durable and
its receipt not). About 100 bytes a submission: a few hundred KiB for a long game.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import BinaryIO

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from racing_demon.log.receipts import LOGGED_OUTCOMES, receipt_again
from racing_demon.serve import protocol
from racing_demon.serve.audience import Audience
from racing_demon.serve.data import open_to_append
from racing_demon.serve.outbox import Outbox
from racing_demon.serve.protocol import ServeCode, ServeError
from racing_demon.serve.seats import TableJournal, TablePaths
from racing_demon.serve.sent_log import SentLog


@dataclass(slots=True)
class _SeatBook:
    seqs: list[int] = field(default_factory=list)  # by n: the record it was logged as
    signatures: list[bytes] = field(default_factory=list)  # by n: as the seat signed it
    receipted: list[bool] = field(default_factory=list)  # by n: its receipt is on file


class LoggedSubmissions:
    """Each seat's logged submissions, by number."""

    def __init__(self, seats: int) -> None:
        self._books = [_SeatBook() for _ in range(seats)]

    def logged(
        self, seat: int, n: int, seq: int, signature: str | None, *, receipted: bool = True
    ) -> None:
        """Seat ``seat``'s submission ``n`` was logged as record ``seq`` (``n`` the seat's
        next number: the table refuses any other), its receipt written if ``receipted``."""
        book = self._books[seat]
        if n != len(book.seqs):
            raise ValueError(f"seat {seat} logged number {n}, after {len(book.seqs)} numbers")
        book.seqs.append(seq)
        book.signatures.append(b"" if signature is None else bytes.fromhex(signature))
        book.receipted.append(receipted)

    def find(self, seat: int, n: int, signature: str) -> int | None:
        """The record seat ``seat``'s submission ``n`` was logged as, if it was logged
        with this ``signature``; None for a number not logged yet, and for a logged number
        signed otherwise (another submission)."""
        if not 0 <= seat < len(self._books):
            return None
        book = self._books[seat]
        if not 0 <= n < len(book.seqs):
            return None
        try:
            same = bytes.fromhex(signature) == book.signatures[n]
        except ValueError:  # not hex: the message's schema lets none through, but be sure
            return None
        return book.seqs[n] if same else None

    def receipted(self, seat: int, n: int) -> bool:
        """Whether the receipt of logged submission ``n`` is in the seat's receipts file."""
        return self._books[seat].receipted[n]

    def mark_receipted(self, seat: int, n: int) -> None:
        self._books[seat].receipted[n] = True

    @classmethod
    def of_log(
        cls, seats: int, lines: Iterable[bytes], receipts: Sequence[Iterable[bytes]]
    ) -> LoggedSubmissions:
        """The book of a table resumed from its log ``lines`` (durable, in order), each
        seat's receipts file's lines in ``receipts``: a logged number whose receipt is not
        on file (the crash came between the two) is marked so."""
        book = cls(seats)
        for seq, line in enumerate(lines):
            if b'"player"' not in line or b'"n"' not in line:  # no submission: no parse
                continue
            body_and_sigs = json.loads(line)
            body = body_and_sigs["body"]
            if body["kind"] in LOGGED_OUTCOMES:
                signature = body_and_sigs["sigs"].get("player")
                book.logged(body["player"], body["n"], seq, signature, receipted=False)
        for seat, seat_lines in enumerate(receipts):
            for line in seat_lines:
                try:
                    receipt = json.loads(line)["body"]
                except (ValueError, KeyError, TypeError):  # a torn line the crash left
                    continue
                if receipt["outcome"] in LOGGED_OUTCOMES and receipt["n"] < len(
                    book._books[seat].seqs
                ):
                    book.mark_receipted(seat, receipt["n"])
        return book


class ReceiptDesk:
    """One table's receipts, from the table's answer to the seat's connection."""

    def __init__(
        self,
        game: str,
        seats: int,
        *,
        table_key: Ed25519PrivateKey,
        journal: TableJournal,
        outbox: Outbox,
        audience: Audience,
        sent: SentLog,
        on_failure: Callable[[BaseException], None],
    ) -> None:
        self._game, self._seats, self._key = game, seats, table_key
        self._journal, self._outbox, self._audience = journal, outbox, audience
        self._sent, self._on_failure = sent, on_failure
        self._files: list[BinaryIO] = []
        self.book = LoggedSubmissions(seats)
        self.latest_t_ms = 0  # a resumed table's: the latest time a receipt on file gave

    def open(self, paths: TablePaths, log_lines: Sequence[bytes] | None = None) -> None:
        """Open each seat's receipts file to append to; for a resumed table, first learn
        its logged submissions from its durable ``log_lines`` and the files."""
        if log_lines is not None:
            on_file = [
                path.read_bytes().splitlines() if path.exists() else []
                for path in (paths.receipts_path(self._game, seat) for seat in range(self._seats))
            ]
            self.book = LoggedSubmissions.of_log(self._seats, log_lines, on_file)
            times = (_t_ms(line) for lines in on_file for line in lines)
            self.latest_t_ms = max(times, default=0)
        for seat in range(self._seats):  # appended to: a resumed table's hold some
            path = paths.receipts_path(self._game, seat)
            file = open_to_append(path)
            if file.tell() and not path.read_bytes().endswith(b"\n"):
                # A torn last line (journal recovery leaves it, as evidence) stays a line of
                # its own, which readers refuse alone: the next receipt is not glued to it.
                file.write(b"\n")
                file.flush()
            self._files.append(file)

    def close(self) -> None:
        for file in self._files:
            file.close()

    def send(self, seat: int, ref: str | None, receipt: bytes) -> asyncio.Future[None]:
        """Write ``receipt`` to the seat's receipts file, journal it, and send it (to
        ``ref``) once it is durable: the future is done then."""
        file = self._files[seat]
        try:
            file.write(receipt + b"\n")
            file.flush()
        except OSError as error:  # the table writes nothing more (it resumes)
            self._on_failure(error)
            raise ServeError("the table stopped", ServeCode.SERVER_STOPPING, ref) from error
        done = asyncio.get_running_loop().create_future()

        def deliver() -> None:
            if ref is not None:
                self._audience.to_seat(seat, protocol.receipt(ref=ref, receipt=receipt))

        self._outbox.queue(lambda: self._journal.receipt(self._game, seat, receipt), deliver, done)
        return done

    def again(self, seat: int, ref: str | None, n: int, seq: int) -> asyncio.Future[None]:
        """The receipt of seat ``seat``'s submission ``n``, logged as record ``seq``, sent
        again (docs/protocol.md §10): the same bytes, made again from the record once it
        is sent (durable). After a crash that kept the record and lost its receipt, the
        receipt is written and journaled first, as any receipt is."""
        if not self.book.receipted(seat, n):  # a resumed table's: the record is sent
            self.book.mark_receipted(seat, n)
            return self.send(seat, ref, receipt_again(self._sent.line(seq), self._key))
        done = asyncio.get_running_loop().create_future()

        def deliver() -> None:
            if ref is not None:
                receipt = receipt_again(self._sent.line(seq), self._key)
                self._audience.to_seat(seat, protocol.receipt(ref=ref, receipt=receipt))

        self._outbox.after(deliver, done)
        return done


def _t_ms(line: bytes) -> int:
    """A receipt line's time; 0 for a torn line the crash left."""
    try:
        t_ms = json.loads(line)["body"]["t_ms"]
    except (ValueError, KeyError, TypeError):
        return 0
    return t_ms if isinstance(t_ms, int) else 0
