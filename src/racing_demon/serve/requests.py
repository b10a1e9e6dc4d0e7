"""What a served table asks its seats to sign over the network, one round at a time: each
seat's entropy, then its co-signature of the genesis, and at the end its acceptance of the
final record. A bot's answer is signed at once with the key the server keeps for it."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from racing_demon.log.records import statement_version
from racing_demon.log.signing import sign, verify
from racing_demon.serve.protocol import ServeCode, ServeError
from racing_demon.table import PlayerSigner


class Request:
    """One round: every seat signs its ``signed`` bytes as a ``kind``, at a table writing
    format ``version``; ``message(seat)`` is the message that asks it (sent again when the
    seat reconnects)."""

    def __init__(
        self,
        kind: str,
        signed: Sequence[bytes],
        message: Callable[[int], dict[str, Any]],
        version: int,
    ) -> None:
        self.kind = kind
        self.signed = signed
        self._pae_version = statement_version(kind, version)
        self.message = message
        self.answers: list[str | None] = [None] * len(signed)
        self.answered = [False] * len(signed)
        self._came = asyncio.Event()

    def waits_for(self, seat: int) -> bool:
        return not self.answered[seat]

    def sign_for(self, seat: int, key: Ed25519PrivateKey) -> None:
        """A bot's answer, made at once."""
        self._take(seat, sign(key, self.kind, self.signed[seat], self._pae_version))

    def answer(self, kind: str, seat: int, key: bytes, signature: str | None) -> None:
        """A person's answer (None declines). ServeError NOT_ASKED (another kind, or
        answered already: a replay), BAD_SIGNATURE (not under ``key`` over the bytes sent:
        the request stays open)."""
        if kind != self.kind or self.answered[seat]:
            raise ServeError(
                f"the table does not ask seat {seat} for its {kind} now", ServeCode.NOT_ASKED
            )
        if signature is not None:
            problem = verify(key, kind, self.signed[seat], signature, self._pae_version)
            if problem is not None:
                raise ServeError(
                    f"seat {seat}'s {kind} signature does not verify: {problem}",
                    ServeCode.BAD_SIGNATURE,
                )
        self._take(seat, signature)

    def _take(self, seat: int, signature: str | None) -> None:
        self.answers[seat], self.answered[seat] = signature, True
        self._came.set()

    async def gathered(self, timeout_s: float) -> bool:
        """Whether every seat answered within ``timeout_s``."""
        try:
            async with asyncio.timeout(timeout_s):
                while not all(self.answered):
                    await self._came.wait()
                    self._came.clear()
        except TimeoutError:
            return False
        return True


def answered_signers(signed: Mapping[str, list[str | None]], seats: int) -> list[PlayerSigner]:
    """The seats' signers as a table asks them: the answers gathered over the network
    (``signed``: by kind, one per seat; None: not answered) before the table asks."""

    def signer(seat: int) -> PlayerSigner:
        def answer(kind: str, message: bytes, version: int) -> str | None:
            # Asked over the network before: each answer was checked in its version then.
            answers = signed.get(kind)
            return None if answers is None else answers[seat]

        return answer

    return [signer(seat) for seat in range(seats)]
