"""Step 6, secret: the secret the final record reveals opens the genesis commitment
(docs/deal-spec.md), and is the one given, if one was. For a log with no final record, a
secret given stands in for the reveal, and must open the commitment too."""

from __future__ import annotations

from racing_demon.game.deal import check_reveal
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
            "the revealed secret is not the one given",
            line=final_line,
            record=final,
            expected=given.hex(),
            found=revealed,
        )
    return bytes.fromhex(revealed)


def check_given_secret(genesis: Record, given: bytes) -> None:
    """For an unfinished log: the secret given opens the genesis commitment."""
    assert isinstance(genesis.payload, Genesis)
    if not check_reveal(given, genesis.payload.commitment):
        raise failure(
            Step.SECRET,
            VerifyCode.SEED_MISMATCH,
            "the secret given does not open the genesis commitment",
            line=1,
            record=genesis,
        )
