"""Writing a log: records sealed into signed lines, chained, each on disk before the next.

``seal`` is the one function that turns a record into a line; ``LogWriter`` appends sealed
records to a file, chaining each to the line before it.
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from typing import Any, BinaryIO

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from racing_demon.errors import RacingDemonError
from racing_demon.game.flow import Seen
from racing_demon.log.canonical import CanonicalError, canonical_bytes
from racing_demon.log.records import (
    FORMAT_VERSION,
    SEEN_WINDOW,
    Payload,
    Record,
    body_hash,
    chain_hash,
    line_bytes,
    record_body,
)
from racing_demon.log.signing import sign


def seal(record: Record, table_key: Ed25519PrivateKey, sigs: Mapping[str, Any]) -> bytes:
    """The line (without its newline) that holds ``record``, signed by the table, with the
    players' signatures ``sigs`` it carries."""
    body = record_body(record)
    body_bytes = canonical_bytes(body)
    signature = sign(table_key, record.kind.value, body_bytes, record.v)
    return signed_line(body, body_bytes, {**sigs, "table": signature})


def signed_line(body: Mapping[str, Any], body_bytes: bytes, sigs: Mapping[str, Any]) -> bytes:
    """``line_bytes(body, sigs)`` for a body whose canonical bytes ``body_bytes`` were made
    to sign it: the line is built around them, not encoded a second time (canonical form
    sorts "body" before "sigs"). A ``sigs`` outside the data model is refused as
    ``line_bytes`` refuses it, its path named within the line."""
    try:
        sigs_bytes = canonical_bytes(sigs)
    except CanonicalError:
        return line_bytes(body, sigs)
    return b'{"body":%b,"sigs":%b}' % (body_bytes, sigs_bytes)


class LogWriterError(RacingDemonError, OSError):
    """The writer failed before: it writes nothing more until the log is recovered."""


class LogWriter:
    """Appends chained, table-signed records; each is on disk before ``append`` returns."""

    def __init__(
        self,
        file: BinaryIO,
        game: str,
        key: Ed25519PrivateKey,
        *,
        seq: int = 0,
        t_ms: int = 0,
        recent_hashes: Iterable[str] = (),
        head_body: str | None = None,
        durable: bool = True,
        on_append: Callable[[bytes], None] | None = None,
        version: int = FORMAT_VERSION,
    ) -> None:
        """A writer at the end of a log of ``seq`` records whose last lines hash to
        ``recent_hashes`` (oldest first, the last line's last), the last one's body to
        ``head_body`` (``body_hash``), writing records of format ``version`` (a log goes on
        in the format it began in).

        ``durable=False`` flushes each record but does not fsync it (simulations, or a
        server whose ``on_append`` makes each line durable elsewhere: its journal).
        ``on_append`` is called with each line (without its newline) once it is written
        and flushed, before ``append`` returns.
        """
        self._file = file
        self._durable = durable
        self._on_append = on_append
        self._game = game
        self._key = key
        self.version = version
        self.seq = seq
        self.t_ms = t_ms
        self._recent = deque(recent_hashes, maxlen=SEEN_WINDOW)
        self.head_body = head_body  # a v3 receipt names the head by it
        self._failed: str | None = None

    @property
    def head(self) -> Seen | None:
        """The last record written, as a client that has seen it names it."""
        return Seen(seq=self.seq - 1, hash=self._recent[-1]) if self._recent else None

    def hash_of(self, seq: int) -> str | None:
        """The chain hash of record ``seq``, if it is one of the last ``SEEN_WINDOW``."""
        index = seq - (self.seq - len(self._recent))
        return self._recent[index] if 0 <= index < len(self._recent) else None

    def next_body(self, t_ms: int, payload: Payload) -> bytes:
        """The canonical body that ``append(t_ms, payload, ...)`` would write next: what
        players sign before the table writes it (their acceptance of the final record)."""
        return canonical_bytes(record_body(self._next(t_ms, payload)))

    def _next(self, t_ms: int, payload: Payload) -> Record:
        prev = self._recent[-1] if self._recent else None
        return Record(
            game=self._game, seq=self.seq, t_ms=t_ms, prev=prev, payload=payload, v=self.version
        )

    def append(self, t_ms: int, payload: Payload, sigs: Mapping[str, Any]) -> tuple[Record, bytes]:
        """Write ``payload`` as the next record at ``t_ms``; returns the record and its line
        (without the newline)."""
        if self._failed is not None:
            raise LogWriterError(
                f"the log writer failed earlier ({self._failed}): recover the log and resume"
            )
        record = self._next(t_ms, payload)
        line = seal(record, self._key, sigs)
        try:
            self._file.write(line + b"\n")
            self._file.flush()
            if self._durable:
                os.fsync(self._file.fileno())
        except OSError as error:
            # A partial write may have left a torn line: appending after it would bury it in
            # the middle of the log, where recovery must refuse to cut.
            self._failed = error.strerror or str(error)
            raise
        self._recent.append(chain_hash(line))
        self.head_body = body_hash(line)
        self.t_ms = t_ms
        self.seq += 1
        if self._on_append is not None:
            self._on_append(line)
        return record, line

    def close(self) -> None:
        self._file.close()
