"""How to verify: the pinned table key and rules, the checks to skip, the reading limits."""

from __future__ import annotations

import enum
import hashlib
import re
from dataclasses import dataclass
from typing import NamedTuple

from racing_demon.errors import RacingDemonError
from racing_demon.log.reader import DEFAULT_LIMITS, Limits
from racing_demon.log.signing import EquationCheck, check_public_key
from racing_demon.verify.assurance import Requirement

_DIGEST = re.compile(r"[0-9a-f]{64}")


class Equations(enum.StrEnum):
    """Who checks the Ed25519 group equation of each signature (docs/log-format.md §5).

    ``BY_HOST`` is for a host that checks every equation itself and takes this verifier's
    other checks from it: the browser page, whose Web Crypto checks the equations while the
    engine judges the rest (``racing_demon.verify.in_page``). It is no CLI option: a
    verdict that took the equations as holding must never be one flag away.
    """

    CHECKED = "checked"
    BY_HOST = "by_host"


class FailedEquation(NamedTuple):
    """A signature whose group equation the host found not to hold: the signer's raw public
    key, the 64 signature bytes (R || S) and the SHA-256 of the message it was checked over."""

    key: bytes
    signature: bytes
    message_sha256: bytes


class SettingsError(RacingDemonError, ValueError):
    """Settings that contradict each other, or a table key that cannot be pinned."""


@dataclass(frozen=True, slots=True)
class Settings:
    """How to verify. ``table_key`` is the pinned table's raw 32-byte public key, and
    ``rules`` the pinned rules' digest (``Rules.digest()``, 64 lowercase hex): a log of
    other rules is refused (``WRONG_RULES``).

    ``fast`` checks the table's signatures on the genesis and the final record only (the
    chain binds every other line to the final one) and no player signature on a record.
    Without ``table_key`` the verdict is at best UNPINNED, which ``unsafe_unpinned``
    accepts: nothing then proves that the table wrote the log. A log that lacks one of
    ``required`` does not verify (``REQUIREMENT_UNMET``). ``equations`` says who checks
    the signatures' group equations (``Equations``), and with ``BY_HOST``,
    ``failed_equations`` are those the host found not to hold (``equation_check``); every
    other check of step 5 runs either way.
    """

    table_key: bytes | None = None
    fast: bool = False
    seed: bytes | None = None  # the dealer secret, when known from elsewhere
    game_id: str | None = None
    unsafe_unpinned: bool = False
    limits: Limits = DEFAULT_LIMITS
    rules: str | None = None
    required: tuple[Requirement, ...] = ()
    equations: Equations = Equations.CHECKED
    failed_equations: frozenset[FailedEquation] = frozenset()

    def __post_init__(self) -> None:
        if self.failed_equations and self.equations is not Equations.BY_HOST:
            raise SettingsError("failed equations are a host's answers: equations=BY_HOST")
        if self.rules is not None and not _DIGEST.fullmatch(self.rules):
            raise SettingsError(f"pinned rules: {self.rules!r} is not a digest (64 lowercase hex)")
        if self.table_key is None:
            return
        if self.unsafe_unpinned:
            raise SettingsError("a pinned table key and unsafe_unpinned contradict each other")
        problem = check_public_key(self.table_key)
        if problem is not None:
            raise SettingsError(f"table key: {problem}")

    def equation_check(self) -> EquationCheck | None:
        """Who answers each signature's group equation (``signing.verify``'s ``equation``):
        None, the verifier itself; with ``BY_HOST``, the host: an equation fails exactly
        where it is one of ``failed_equations``, so the first failure is found in the order
        of the steps, as ``verify`` finds it, and the equations the host did not name are
        taken as holding."""
        if self.equations is Equations.CHECKED:
            return None
        failed: dict[tuple[bytes, bytes], set[bytes]] = {}
        for key, signature, digest in self.failed_equations:
            failed.setdefault((key, signature), set()).add(digest)

        def holds(key: bytes, message: bytes, signature: bytes) -> bool:
            digests = failed.get((key, signature))
            return digests is None or hashlib.sha256(message).digest() not in digests

        return holds
