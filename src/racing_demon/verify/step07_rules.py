"""Step 7, rules and packs: the genesis's rules document is a valid profile whose digest
it states, not one under a built-in profile's reserved name that is not that profile (in a
format-2 log), the rules that ``--rules`` pinned if any; it seats as many players as the
profile allows, listed by seat with one entropy contribution each; and every hand deals the
packs the seed gives (the pack digests of each ``hand_start``, which the match flow checks
as the hand starts: ``FLOW_CODES``). A tournament table's genesis (docs/tournament.md)
must also be a table of its tournament playing exactly its hands, and its packs are the
plan's: ``Genesis.dealer`` derives them from the secret and the genesis alone.

The checks run in this order: the document (``BAD_RULES``), its digest
(``RULES_MISMATCH``), the reserved name (``RESERVED_RULES_NAME``), the pinned rules
(``WRONG_RULES``), the number of seats, the seat numbers, the number of contributions
(``BAD_SEATS``); then for a tournament's table, its number, the rules' hands, target and
lead tie, the tournament's shape (``BAD_TOURNAMENT``).
"""

from __future__ import annotations

from typing import Final, NoReturn

from racing_demon.game.flow import FlowCode, MatchFlow, listed
from racing_demon.game.rules import LeadTie
from racing_demon.log.records import Genesis, Record
from racing_demon.profiles import (
    BUILT_IN,
    ProfileError,
    builtin_digest,
    builtin_named,
    differences_from_builtin,
    rules_from_document,
)
from racing_demon.verify.report import RulesFacts, Step, VerifyCode, failure
from racing_demon.wording import plural

# Annotated: mypyc checks the verify package's import cycle in an order that cannot infer it.
FLOW_CODES: Final[frozenset[FlowCode]] = frozenset({FlowCode.PACK_MISMATCH})
RESERVED_FROM_VERSION = 2  # format v1 logs may use a built-in name for other rules


def load_rules(genesis: Record, secret: bytes, pinned: str | None = None) -> MatchFlow:
    """The match the genesis sets up, dealt from ``secret`` and the seats' entropy;
    ``pinned``: the digest of the only rules accepted (``Settings.rules``)."""
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
    digest = rules.digest()
    if digest != setup.rules_sha256:
        fail(
            VerifyCode.RULES_MISMATCH,
            "rules_sha256 is not the digest of the rules",
            digest,
            setup.rules_sha256,
        )
    if (
        genesis.v >= RESERVED_FROM_VERSION
        and rules.name in BUILT_IN
        and builtin_named(rules) is None
    ):
        fail(
            VerifyCode.RESERVED_RULES_NAME,
            f"the rules are named like the built-in profile {rules.name!r} but are not it: "
            f"a format-{genesis.v} log may use a built-in name only for that very profile",
            builtin_digest(rules.name),
            digest,
        )
    if pinned is not None and digest != pinned:
        fail(
            VerifyCode.WRONG_RULES,
            f"the rules ({rules.name!r} version {rules.version}) are not the pinned ones",
            pinned,
            digest,
        )
    seats = len(setup.players)
    if not rules.min_players <= seats <= rules.max_players:
        fail(
            VerifyCode.BAD_SEATS,
            f"profile {rules.name!r} seats {rules.min_players} to {rules.max_players}",
            f"{rules.min_players}-{rules.max_players} players",
            plural(seats, "player"),
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
    tag = setup.tournament
    if tag is not None:
        if not 1 <= tag.table <= tag.tables:
            fail(
                VerifyCode.BAD_TOURNAMENT,
                f"table {tag.table} is not a table of tournament {tag.name!r}",
                f"a table from 1 to {tag.tables}",
                tag.table,
            )
        # Every table plays every planned pack, and no more: exactly the tournament's
        # hands, so no target may end a match early and a tie for the lead may not play
        # on past the plan's last hand (tournament_rules).
        if (
            rules.max_hands != tag.hands
            or rules.target is not None
            or rules.lead_tie is not LeadTie.SHARE
        ):
            fail(
                VerifyCode.BAD_TOURNAMENT,
                f"a table of tournament {tag.name!r} plays exactly {plural(tag.hands, 'hand')}, "
                "with no target, and a tie for the lead shares",
                f"max_hands {tag.hands}, target none, lead_tie share",
                f"max_hands {_or_none(rules.max_hands)}, target {_or_none(rules.target)}, "
                f"lead_tie {rules.lead_tie}",
            )
    try:
        dealer = setup.dealer(secret)
    except ValueError as error:  # a tournament that no plan can have (a name too long)
        fail(VerifyCode.BAD_TOURNAMENT, str(error))
    return MatchFlow.begin(rules, dealer, seats)


def describe_rules(setup: Genesis, pinned: str | None) -> RulesFacts:
    """What a report says of the rules the genesis declares, whatever its verdict: the
    document's name and version, its digest when it is a valid profile, whether it is a
    built-in profile exactly, whether rules were pinned, and the built-in name it uses
    without being that profile."""
    document = setup.rules
    name = document.get("name")
    version = document.get("version")
    differences: tuple[str, ...] = ()
    try:
        rules = rules_from_document(document)
    except ProfileError:
        digest = builtin = None
    else:
        digest, builtin = rules.digest(), builtin_named(rules)
        differences = differences_from_builtin(rules) or ()
    name = name if isinstance(name, str) else None
    return RulesFacts(
        name=name,
        version=version if type(version) is int else None,
        sha256=digest,
        builtin=builtin is not None,
        pinned=pinned is not None,
        named_like=name if name in BUILT_IN and builtin is None else None,
        differences=differences,
    )


def _or_none(value: int | None) -> str:
    """A limit as the documents write it in words: a number, or none (never Python's None)."""
    return "none" if value is None else str(value)
