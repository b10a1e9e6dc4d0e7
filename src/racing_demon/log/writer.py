"""Writing a log: records sealed into signed lines, chained, each on disk before the next.

``seal`` is the one function that turns a record into a line; ``LogWriter`` appends sealed
records to a file, chaining each to the line before it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any, BinaryIO

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from racing_demon.errors import RacingDemonError
from racing_demon.log.canonical import canonical_bytes
from racing_demon.log.records import Payload, Record, chain_hash, line_bytes, record_body
from racing_demon.log.signing import sign


def seal(record: Record, table_key: Ed25519PrivateKey, sigs: Mapping[str, Any]) -> bytes:
    """The line (without its newline) that holds ``record``, signed by the table, with the
    players' signatures ``sigs`` it carries."""
    body = record_body(record)
    signed = {**sigs, "table": sign(table_key, record.kind.value, canonical_bytes(body))}
    return line_bytes(body, signed)


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
        prev: str | None = None,
        durable: bool = True,
    ) -> None:
        """A writer at the end of a log of ``seq`` records whose last line hashes to ``prev``.

        ``durable=False`` flushes each record but does not fsync it (simulations only).
        """
        self._file = file
        self._durable = durable
        self._game = game
        self._key = key
        self.seq = seq
        self.t_ms = t_ms
        self._prev = prev
        self._failed: str | None = None

    def append(self, t_ms: int, payload: Payload, sigs: Mapping[str, Any]) -> int:
        """Write ``payload`` as the next record at ``t_ms``; returns its seq."""
        if self._failed is not None:
            raise LogWriterError(
                f"the log writer failed earlier ({self._failed}): recover the log and resume"
            )
        line = seal(Record(self._game, self.seq, t_ms, self._prev, payload), self._key, sigs)
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
        self._prev = chain_hash(line)
        self.t_ms = t_ms
        self.seq += 1
        return self.seq - 1

    def close(self) -> None:
        self._file.close()
