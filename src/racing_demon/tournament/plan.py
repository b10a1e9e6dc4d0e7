"""The tournament plan: making it, checking it and reading it from a file, with the codes a
plan is refused with (docs/tournament.md, "Checking a plan").

The plan itself, the document every table of a duplicate tournament deals from, is
``racing_demon.tournament.plan_document``'s ``Plan``; this module names it too, so that a
program imports everything about plans from here.
"""

from __future__ import annotations

import enum
import itertools
from pathlib import Path
from typing import Any, Final

from racing_demon.errors import RacingDemonError
from racing_demon.files import read_regular
from racing_demon.game.deal import SECRET_BYTES, check_reveal, commitment
from racing_demon.game.duplicate import Shape, entropy_digest
from racing_demon.game.rules import Rules
from racing_demon.log.canonical import CanonicalError, canonical_bytes
from racing_demon.log.reader import ReadError, parse_line
from racing_demon.profiles import (
    BUILT_IN,
    CUSTOM_SUFFIX,
    ProfileError,
    builtin_named,
    differences_from_builtin,
    rules_from_document,
)
from racing_demon.schema import checked_errors
from racing_demon.tournament.contribute import (
    CONTRIBUTION_FORMAT_V1,
    STATEMENT_V1,
    STATEMENT_V2,
    Contribution,
    Terms,
    canonical_order,
    check_contribution,
)
from racing_demon.tournament.plan_document import (
    PLAN_FORMAT,
    PLAN_FORMATS,
    Plan,
    contributions_summary,
    tournament_rules,
)
from racing_demon.wording import plural

__all__ = [
    "MAX_PLAN_BYTES",
    "PLAN_FORMAT",
    "Contribution",
    "Plan",
    "PlanCode",
    "PlanError",
    "Terms",
    "check_plan",
    "contributions_summary",
    "load_contribution",
    "load_plan",
    "load_terms",
    "make_plan",
    "make_terms",
    "plan_from_document",
    "tournament_rules",
]

# A plan of 64 tables of 4 seats and 3 hands is about 31 KB; this bounds what is read.
MAX_PLAN_BYTES: Final = 64 * 1024 * 1024
# One contribution from every player of the largest tournament the schema allows at 16
# seats, and a bound on the signatures a plan check verifies (about 4 s of them).
MAX_CONTRIBUTIONS: Final = 65536
SMALL_CONTRIBUTION_BYTES: Final = 64 * 1024


class PlanCode(enum.StrEnum):
    """Why a plan is refused, in the order ``load_plan`` and ``check_plan`` check
    (docs/tournament.md, "Checking a plan"). The values are stable reason codes."""

    UNREADABLE = "UNREADABLE"  # the file cannot be read
    NOT_JSON = "NOT_JSON"  # not strict JSON (duplicate keys, fractions, lone surrogates...)
    BAD_SCHEMA = "BAD_SCHEMA"  # schemas/tournament-plan.schema.json refuses it
    BAD_SHAPE = "BAD_SHAPE"  # the name is over 256 bytes of UTF-8
    BAD_RULES = "BAD_RULES"  # not a valid profile, not a tournament's, or not for this many seats
    RULES_DIGEST_MISMATCH = "RULES_DIGEST_MISMATCH"
    BAD_CONTRIBUTION = "BAD_CONTRIBUTION"  # a signature that does not verify, a repeat
    CONTRIBUTION_ORDER = "CONTRIBUTION_ORDER"  # not in the canonical order (format v2)
    ENTROPY_MISMATCH = "ENTROPY_MISMATCH"
    SCHEDULE_MISMATCH = "SCHEDULE_MISMATCH"
    PLAN_MISMATCH = "PLAN_MISMATCH"
    # Only with the revealed secret:
    SECRET_MISMATCH = "SECRET_MISMATCH"
    DEAL_SET_MISMATCH = "DEAL_SET_MISMATCH"


class PlanError(RacingDemonError, ValueError):
    """A refused plan: ``str()`` reads ``SCHEDULE_MISMATCH: $.schedule[1]: ...``, naming
    the member (a JSON path into the plan file) and what was expected."""

    def __init__(self, code: PlanCode, member: str, message: str) -> None:
        super().__init__(f"{code}: {member}: {message}")
        self.code = code
        self.member = member
        self.message = message


def make_terms(secret: bytes, shape: Shape, rules: Rules) -> Terms:
    """The terms an organiser publishes before collecting contributions: ``shape``, the
    rules every table plays (``rules`` made ``tournament_rules``) and the commitment to
    ``secret``. PlanError BAD_RULES for rules that do not seat ``shape.seats`` players."""
    if len(secret) != SECRET_BYTES:
        raise ValueError(f"the organiser's secret is {SECRET_BYTES} bytes, got {len(secret)}")
    played = tournament_rules(rules, shape.hands)
    _check_rules(shape, played)
    return Terms(shape, played, commitment(secret))


def make_plan(
    secret: bytes,
    shape: Shape,
    rules: Rules,
    contributions: tuple[Contribution, ...],
) -> Plan:
    """The plan that ``secret`` and ``contributions`` deal for a tournament of ``shape``
    played under ``rules`` (made ``tournament_rules`` here), its contributions in the
    canonical order. PlanError (BAD_RULES, BAD_CONTRIBUTION) for rules that do not seat
    ``shape.seats`` players, a signed contribution that does not sign these terms
    (``make_terms``), or a repeated one."""
    terms = make_terms(secret, shape, rules)
    if not contributions:
        raise PlanError(
            PlanCode.BAD_CONTRIBUTION, "$.contributions", "a tournament needs a contribution"
        )
    ordered = canonical_order(contributions)
    entropy = entropy_digest([contribution.entropy for contribution in ordered])
    plan = Plan(
        shape,
        terms.rules,
        terms.commitment,
        ordered,
        shape.deal_set(shape.seed(secret, entropy)),
    )
    _check_value(plan)
    return plan


def check_plan(plan: Plan, secret: bytes | None = None) -> None:
    """PlanError unless ``plan`` holds together: its rules are a tournament's for its
    seats and every signed contribution answers its commitment; with the revealed
    ``secret``, also that the secret opens the commitment (SECRET_MISMATCH) and that the
    published deal-set checksum is the one the secret deals (DEAL_SET_MISMATCH): the
    organiser published the deals it then played."""
    _check_value(plan)
    if secret is None:
        return
    if not check_reveal(secret, plan.commitment):
        raise PlanError(
            PlanCode.SECRET_MISMATCH,
            "$.commitment",
            f"the secret does not open the commitment {plan.commitment}",
        )
    shape = plan.shape
    dealt = shape.deal_set(shape.seed(secret, plan.entropy))
    if dealt != plan.deal_set:
        raise PlanError(
            PlanCode.DEAL_SET_MISMATCH,
            "$.deal_set",
            f"the secret deals the set {dealt}, not the published {plan.deal_set}",
        )


def _check_value(plan: Plan) -> None:
    """The checks a plan's own values allow (BAD_RULES, then BAD_CONTRIBUTION and
    CONTRIBUTION_ORDER)."""
    _check_rules(plan.shape, plan.rules)
    _check_contributions(plan)


def _check_rules(shape: Shape, rules: Rules) -> None:
    if not rules.min_players <= shape.seats <= rules.max_players:
        raise PlanError(
            PlanCode.BAD_RULES,
            "$.seats",
            f"profile {rules.name!r} seats {rules.min_players} to {rules.max_players} "
            f"players, not {shape.seats}",
        )
    if rules.name in BUILT_IN and builtin_named(rules) is None:
        # Checked first: the tournament check below would rename them, and then refuse
        # rules whose target, hands and lead tie are exactly what it asks for.
        changed = "; ".join(differences_from_builtin(rules) or ())
        raise PlanError(
            PlanCode.BAD_RULES,
            "$.rules.name",
            f"the rules are named like the built-in profile {rules.name!r} but are not it "
            f"({changed}): a built-in name is reserved for that very profile; name them "
            f"{rules.name + CUSTOM_SUFFIX!r}",
        )
    if tournament_rules(rules, shape.hands) != rules:
        raise PlanError(
            PlanCode.BAD_RULES,
            "$.rules",
            f"a tournament table plays exactly {plural(shape.hands, 'hand')}: the rules must "
            f"have no target, max_hands {shape.hands} and lead_tie share (found target "
            f"{'none' if rules.target is None else rules.target}, max_hands "
            f"{'none' if rules.max_hands is None else rules.max_hands}, lead_tie {rules.lead_tie})",
        )


def _check_contributions(plan: Plan) -> None:
    if len(plan.contributions) > MAX_CONTRIBUTIONS:
        raise PlanError(
            PlanCode.BAD_CONTRIBUTION,
            "$.contributions",
            f"a plan lists at most {MAX_CONTRIBUTIONS} contributions, not "
            f"{len(plan.contributions)}",
        )
    names: set[str] = set()
    entropies: set[bytes] = set()
    terms = plan.terms
    for index, contribution in enumerate(plan.contributions):
        member = f"$.contributions[{index}]"
        if contribution.by in names:
            raise PlanError(
                PlanCode.BAD_CONTRIBUTION, member, f"{contribution.by!r} contributes twice"
            )
        if contribution.entropy in entropies:
            raise PlanError(
                PlanCode.BAD_CONTRIBUTION,
                member,
                f"{contribution.by!r} repeats an earlier contribution's entropy",
            )
        names.add(contribution.by)
        entropies.add(contribution.entropy)
        _check_signature(contribution, terms, plan.version, member)
    if plan.version >= STATEMENT_V2:
        _check_order(plan.contributions)


def _check_order(contributions: tuple[Contribution, ...]) -> None:
    """CONTRIBUTION_ORDER unless the contributions are in the canonical order (step 2),
    naming the first one out of place."""
    for index, (before, after) in enumerate(itertools.pairwise(contributions)):
        if before.entropy > after.entropy:
            raise PlanError(
                PlanCode.CONTRIBUTION_ORDER,
                f"$.contributions[{index + 1}]",
                f"{after.by!r} is listed after {before.by!r}, whose entropy sorts after its "
                "own: a plan lists its contributions by their entropy bytes, ascending",
            )


def _check_signature(contribution: Contribution, terms: Terms, version: int, member: str) -> None:
    """BAD_CONTRIBUTION unless a signed contribution signs ``terms`` (an unsigned one is
    the organiser's word: nothing to check)."""
    problem = check_contribution(contribution, terms, version)
    if problem is not None:
        signed = (
            "this tournament and commitment"
            if version == STATEMENT_V1
            else "this tournament's name, shape, rules and commitment"
        )
        raise PlanError(
            PlanCode.BAD_CONTRIBUTION,
            member,
            f"{contribution.by!r}'s signature is not its statement of {signed}: {problem}",
        )


def _read_json(path: Path, max_bytes: int) -> dict[str, Any]:
    """The JSON object in file ``path``, read strictly (docs/log-format.md §2's rules: no
    duplicate keys, fractions, NaN or lone surrogates); PlanError UNREADABLE, NOT_JSON."""
    try:
        raw = read_regular(path, max_bytes)
    except OSError as error:
        raise PlanError(
            PlanCode.UNREADABLE, "$", f"cannot read {path}: {error.strerror or error}"
        ) from error
    try:
        document = parse_line(1, raw)
        canonical_bytes(document)  # the data model the digests are computed over
    except ReadError as error:
        raise PlanError(PlanCode.NOT_JSON, "$", f"{error.code}: {error.message}") from error
    except CanonicalError as error:
        raise PlanError(PlanCode.NOT_JSON, error.path, f"{error.code}: {error.message}") from error
    return document


def load_plan(path: Path) -> Plan:
    """The plan in file ``path``, every member checked (``plan_from_document``); PlanError
    UNREADABLE, NOT_JSON or a later code otherwise."""
    return plan_from_document(_read_json(path, MAX_PLAN_BYTES))


def load_terms(path: Path) -> Terms:
    """The terms in the commitment file ``path`` (``racing-demon tournament commit`` writes
    it); PlanError UNREADABLE, NOT_JSON, BAD_SCHEMA, BAD_SHAPE, BAD_RULES or
    RULES_DIGEST_MISMATCH, as for a plan."""
    document = _read_json(path, SMALL_CONTRIBUTION_BYTES)
    _check_schema("tournament-commitment", document)
    shape = _shape(document)
    rules = _rules(document["rules"])
    _check_rules(shape, rules)
    _check_rules_digest(rules, document["rules_sha256"])
    return Terms(shape, rules, document["commitment"])


def load_contribution(path: Path, terms: Terms) -> Contribution:
    """The contribution in file ``path`` (``racing-demon tournament contribute`` writes
    it) to the tournament of ``terms``; PlanError UNREADABLE, NOT_JSON, BAD_SCHEMA, or
    BAD_CONTRIBUTION for a file made for other terms (naming the member that differs), one
    made for a plan of format v1, or one whose signature does not verify."""
    document = _read_json(path, SMALL_CONTRIBUTION_BYTES)
    if document.get("format") == CONTRIBUTION_FORMAT_V1:
        raise PlanError(
            PlanCode.BAD_CONTRIBUTION,
            "$.format",
            f"{CONTRIBUTION_FORMAT_V1} signs only the name and the commitment, not the shape "
            f"and the rules: the contributor should contribute again to the commitment file",
        )
    _check_schema("tournament-contribution", document)
    stated = terms.to_document()
    for member, wanted in (
        ("tournament", stated["name"]),
        ("tables", stated["tables"]),
        ("seats", stated["seats"]),
        ("hands", stated["hands"]),
        ("rules_sha256", stated["rules_sha256"]),
        ("commitment", stated["commitment"]),
    ):
        if document[member] != wanted:
            raise PlanError(
                PlanCode.BAD_CONTRIBUTION,
                f"$.{member}",
                f"{document['by']!r} contributed to {member} {document[member]!r}, not {wanted!r}",
            )
    key = document["key"]
    contribution = Contribution(
        document["by"],
        bytes.fromhex(document["entropy"]),
        None if key is None else bytes.fromhex(key),
    )
    _check_signature(contribution, terms, STATEMENT_V2, "$.entropy")
    return contribution


def _check_schema(schema: str, document: dict[str, Any]) -> None:
    # jsonschema-rs passes a valid plan in milliseconds; jsonschema, which explains a
    # refusal, takes about ten seconds a megabyte, and a 4096-table plan is megabytes.
    problems = checked_errors(schema, document)
    if problems:
        member, _, why = problems[0].partition(": ")
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise PlanError(PlanCode.BAD_SCHEMA, member, why + more)


def _shape(document: dict[str, Any]) -> Shape:
    try:
        return Shape(document["name"], document["tables"], document["seats"], document["hands"])
    except ValueError as error:
        # The schema bounds the numbers as Shape does: only the name's bytes are left.
        raise PlanError(PlanCode.BAD_SHAPE, "$.name", str(error)) from error


def _check_rules_digest(rules: Rules, stated: str) -> None:
    if stated != rules.digest():
        raise PlanError(
            PlanCode.RULES_DIGEST_MISMATCH,
            "$.rules_sha256",
            f"the rules' digest is {rules.digest()}, not {stated}",
        )


def plan_from_document(document: dict[str, Any]) -> Plan:
    """The plan a parsed plan file holds, or PlanError naming the first member refused,
    in this order: canonical JSON data (NOT_JSON), the schema, the shape, the rules, the
    rules' digest, the contributions (and, format v2, their order), the entropy digest,
    the schedule, the plan digest. The deal-set checksum needs the secret
    (``check_plan``)."""
    try:
        canonical_bytes(document)
    except CanonicalError as error:
        raise PlanError(PlanCode.NOT_JSON, error.path, f"{error.code}: {error.message}") from error
    _check_schema("tournament-plan", document)
    shape = _shape(document)
    rules = _rules(document["rules"])
    _check_rules(shape, rules)
    _check_rules_digest(rules, document["rules_sha256"])
    contributions = tuple(
        Contribution(
            item["by"],
            bytes.fromhex(item["entropy"]),
            None if item["key"] is None else bytes.fromhex(item["key"]),
        )
        for item in document["contributions"]
    )
    plan = Plan(
        shape,
        rules,
        document["commitment"],
        contributions,
        document["deal_set"],
        PLAN_FORMATS[document["format"]],
    )
    _check_contributions(plan)
    if plan.entropy.hex() != document["entropy"]:
        raise PlanError(
            PlanCode.ENTROPY_MISMATCH,
            "$.entropy",
            f"the contributions give {plan.entropy.hex()}, not {document['entropy']}",
        )
    _check_schedule(plan, document["schedule"])
    if plan.digest != document["plan"]:
        raise PlanError(
            PlanCode.PLAN_MISMATCH,
            "$.plan",
            f"the plan's body gives the commitment {plan.digest}, not {document['plan']}",
        )
    return plan


def _rules(document: dict[str, Any]) -> Rules:
    try:
        rules = rules_from_document(document)
    except ProfileError as error:
        problems = str(error).replace(":\n  ", ": ").replace("\n  ", "; ")
        raise PlanError(PlanCode.BAD_RULES, "$.rules", problems) from error
    if rules.to_document() != document:
        # The plan's digest and every genesis hold the rules' own document: one form only.
        raise PlanError(
            PlanCode.BAD_RULES,
            "$.rules",
            "not the rules' own document (a member in another form, such as a default "
            "written out): write it as `racing-demon rules` prints it",
        )
    return rules


def _check_schedule(plan: Plan, schedule: list[dict[str, Any]]) -> None:
    """SCHEDULE_MISMATCH unless ``schedule`` is the rotation (step 5), table by table."""
    shape = plan.shape
    if len(schedule) != shape.tables:
        raise PlanError(
            PlanCode.SCHEDULE_MISMATCH,
            "$.schedule",
            f"{plural(len(schedule), 'table')} scheduled for a tournament of {shape.tables:,}",
        )
    for index, entry in enumerate(schedule):
        table = index + 1
        member = f"$.schedule[{index}]"
        if entry["table"] != table:
            raise PlanError(
                PlanCode.SCHEDULE_MISMATCH,
                f"{member}.table",
                f"table {entry['table']} listed where table {table} belongs",
            )
        hands = entry["hands"]
        if len(hands) != shape.hands:
            raise PlanError(
                PlanCode.SCHEDULE_MISMATCH,
                f"{member}.hands",
                f"table {table}: {plural(len(hands), 'hand')} scheduled, not {shape.hands}",
            )
        for offset, scheduled in enumerate(hands):
            hand = offset + 1
            where = f"{member}.hands[{offset}]"
            expected = list(plan.packs(table, hand))
            if scheduled["hand"] != hand:
                raise PlanError(
                    PlanCode.SCHEDULE_MISMATCH,
                    f"{where}.hand",
                    f"table {table}: hand {scheduled['hand']} listed where hand {hand} belongs",
                )
            if scheduled["packs"] != expected:
                raise PlanError(
                    PlanCode.SCHEDULE_MISMATCH,
                    f"{where}.packs",
                    f"table {table} hand {hand}: packs {scheduled['packs']} where the "
                    f"rotation gives {expected} (seat order)",
                )
