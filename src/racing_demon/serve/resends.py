"""Which submissions a served table has logged, so that one sent again is known.

A submission is its seat and number ``n`` (docs/protocol.md §10, "Sending again"): the
table logs each seat's numbers in order from 0, so the record a logged one became is
found by position. A submission sent again carries the signature it was first sent with
(the client resends the frame unchanged), and a seat's Ed25519 signature is a function of
the statement it signs, so the same signature over the same number is the same
submission. The host answers it with its receipt again, and never logs it twice; a number
already logged under another signature is something else and is judged as one
(``WRONG_NUMBER``).

Kept per seat: each logged number's record ``seq`` and signature (64 bytes), and whether
its receipt is in the seat's receipts file (after a crash the record may be durable and
its receipt not). About 100 bytes a submission: a few hundred KiB for a long game.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from racing_demon.log.receipts import LOGGED_OUTCOMES


@dataclass(slots=True)
class _SeatBook:
    seqs: list[int] = field(default_factory=list)  # by n: the record it was logged as
    signatures: list[bytes] = field(default_factory=list)  # by n: as the seat signed it
    receipted: list[bool] = field(default_factory=list)  # by n: its receipt is on file


class LoggedSubmissions:
    """Each seat's logged submissions, by number."""

    def __init__(self, seats: int) -> None:
        self._books = [_SeatBook() for _ in range(seats)]

    def logged(self, seat: int, n: int, seq: int, signature: str | None) -> None:
        """Seat ``seat``'s submission ``n`` was logged as record ``seq`` (``n`` the seat's
        next number: the table refuses any other), its receipt written."""
        book = self._books[seat]
        if n != len(book.seqs):
            raise ValueError(f"seat {seat} logged number {n}, after {len(book.seqs)} numbers")
        book.seqs.append(seq)
        book.signatures.append(b"" if signature is None else bytes.fromhex(signature))
        book.receipted.append(True)

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
                book.logged(body["player"], body["n"], seq, body_and_sigs["sigs"].get("player"))
                book._books[body["player"]].receipted[-1] = False
        for seat, seat_lines in enumerate(receipts):
            for line in seat_lines:
                receipt = json.loads(line)["body"]
                if receipt["outcome"] in LOGGED_OUTCOMES and receipt["n"] < len(
                    book._books[seat].seqs
                ):
                    book.mark_receipted(seat, receipt["n"])
        return book
