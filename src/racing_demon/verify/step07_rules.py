"""Step 7, rules and packs: the genesis's rules document is a valid profile whose digest
it states, it seats as many players as the profile allows, listed by seat with one entropy
contribution each; and every hand deals the packs the seed gives (the pack digests of each
``hand_start``, which the match flow checks as the hand starts: ``FLOW_CODES``).

The checks run in this order: the document, its digest, the number of seats, the seat
numbers, the number of contributions.
"""

from __future__ import annotations

from typing import NoReturn

from racing_demon.game.deal import MatchSeed
from racing_demon.game.flow import FlowCode, MatchFlow, listed
from racing_demon.log.records import Genesis, Record
from racing_demon.profiles import ProfileError, rules_from_document
from racing_demon.verify.report import Step, VerifyCode, failure

FLOW_CODES = frozenset({FlowCode.PACK_MISMATCH})


def load_rules(genesis: Record, secret: bytes) -> MatchFlow:
    """The match the genesis sets up, dealt from ``secret`` and the seats' entropy."""
    setup = genesis.payload
    assert isinstance(setup, Genesis)

    def fail(
        code: VerifyCode, message: str, expected: object = None, found: object = None
    ) -> NoReturn:
        raise failure(
            Step.PACKS, code, message, line=1, record=genesis, expected=expected, found=found
        )

    try:
        rules = rules_from_document(setup.rules)
    except ProfileError as error:
        raise failure(
            Step.PACKS, VerifyCode.BAD_RULES, str(error), line=1, record=genesis
        ) from None
    if rules.digest() != setup.rules_sha256:
        fail(
            VerifyCode.RULES_MISMATCH,
            "rules_sha256 is not the digest of the rules",
            rules.digest(),
            setup.rules_sha256,
        )
    seats = len(setup.players)
    if not rules.min_players <= seats <= rules.max_players:
        fail(
            VerifyCode.BAD_SEATS,
            f"profile {rules.name!r} seats {rules.min_players} to {rules.max_players}",
            f"{rules.min_players}-{rules.max_players} players",
            f"{seats} players",
        )
    numbers = [entry.seat for entry in setup.players]
    if numbers != list(range(seats)):
        fail(
            VerifyCode.BAD_SEATS,
            "players are listed by seat, from 0",
            listed(range(seats)),
            listed(numbers),
        )
    if len(setup.entropy) != seats:
        fail(
            VerifyCode.BAD_SEATS,
            "one entropy contribution per seat",
            seats,
            len(setup.entropy),
        )
    seed = MatchSeed.from_secret(secret, [bytes.fromhex(part) for part in setup.entropy])
    return MatchFlow.begin(rules, seed, seats)
