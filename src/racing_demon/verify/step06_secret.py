"""Step 6, secret: the secret the final record reveals opens the genesis commitment
(docs/deal-spec.md), and is the one given, if one was. For a log with no final record, a
secret given stands in for the reveal, and must open the commitment too.

A secret given is never quoted, not even when it is wrong: it may be the one still to be
revealed, and reports are shared. A mismatch names its commitment instead, beside the
genesis commitment it fails to match."""

from __future__ import annotations

from racing_demon.game.deal import SECRET_BYTES, check_reveal, commitment
from racing_demon.log.records import Final, Genesis, Record
from racing_demon.verify.report import Step, VerifyCode, failure


def check_secret(genesis: Record, final: Record, final_line: int, given: bytes | None) -> bytes:
    """The revealed secret, once it opens the commitment and matches ``given``."""
    assert isinstance(genesis.payload, Genesis) and isinstance(final.payload, Final)
    revealed = final.payload.secret
    if not check_reveal(bytes.fromhex(revealed), genesis.payload.commitment):
        raise failure(
            Step.SECRET,
            VerifyCode.SECRET_MISMATCH,
            "the revealed secret does not open the genesis commitment",
            line=final_line,
            record=final,
        )
    if given is not None and given.hex() != revealed:
        raise failure(
            Step.SECRET,
            VerifyCode.SEED_MISMATCH,
            "the revealed secret is not the one given (expected: the commitment of the "
            "secret given; found: the genesis commitment, which the revealed secret opens)",
            line=final_line,
            record=final,
            expected=_commitment_of(given),
            found=genesis.payload.commitment,
        )
    return bytes.fromhex(revealed)


def check_given_secret(genesis: Record, given: bytes) -> None:
    """For an unfinished log: the secret given opens the genesis commitment."""
    assert isinstance(genesis.payload, Genesis)
    if not check_reveal(given, genesis.payload.commitment):
        raise failure(
            Step.SECRET,
            VerifyCode.SEED_MISMATCH,
            "the secret given does not open the genesis commitment (expected: the "
            "commitment of the secret given; found: the genesis commitment)",
            line=1,
            record=genesis,
            expected=_commitment_of(given),
            found=genesis.payload.commitment,
        )


def _commitment_of(given: bytes) -> str | None:
    """What names a secret given in a report: its commitment (none for a secret of the
    wrong length, which the command line never passes)."""
    return commitment(given) if len(given) == SECRET_BYTES else None
