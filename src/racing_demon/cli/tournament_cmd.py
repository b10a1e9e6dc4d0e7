"""``racing-demon tournament``: publish a duplicate tournament's terms, contribute to one,
plan it, check a plan (docs/tournament.md). ``tournament score`` is
``tournament_score_cmd``'s."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from racing_demon.cli.options import (
    force_option,
    json_option,
    private_key_from,
    rules_option,
    secret_option,
)
from racing_demon.cli.output import OutputWriter, checked_output, inputs_of, note_input
from racing_demon.cli.tournament_score_cmd import score_command
from racing_demon.cli.tournament_simulate_cmd import simulate_command
from racing_demon.files import Output, shown_name
from racing_demon.game.duplicate import MAX_NAME_BYTES, MAX_TABLES, Shape
from racing_demon.game.rules import MAX_HANDS, Rules
from racing_demon.log.keys import key_id
from racing_demon.outcomes import ExitCode
from racing_demon.printing import printable
from racing_demon.profiles import CUSTOM_SUFFIX, differences_from_builtin
from racing_demon.tournament import plan as plan_module
from racing_demon.tournament.contribute import (
    Terms,
    contribution_document,
    sign_contribution,
    unsigned_contribution,
)
from racing_demon.tournament.plan import (
    Plan,
    PlanCode,
    PlanError,
    check_plan,
    contributions_summary,
    load_contribution,
    load_plan,
    load_terms,
    make_plan,
    make_terms,
)
from racing_demon.tournament.sheets import render_sheets
from racing_demon.wording import plural

CHECK_FORMAT = "racing-demon/tournament-check/v1"
PLAN_REPORT_FORMAT = "racing-demon/tournament-plan-report/v1"


def _name(ctx: click.Context, param: click.Parameter, value: str) -> str:
    # A byte that is not UTF-8 reaches here as a lone surrogate, which no JSON file holds.
    unencodable = any("\ud800" <= character <= "\udfff" for character in value)
    if not value or unencodable or len(value.encode("utf-8")) > MAX_NAME_BYTES:
        raise click.BadParameter(f"a name is 1 to {MAX_NAME_BYTES} bytes of UTF-8", ctx, param)
    return value


_Command = TypeVar("_Command", bound=Callable[..., Any])


def _terms_options(command: _Command) -> _Command:
    """The terms `commit` publishes and `plan` is held to: the organiser's secret, the
    tournament's name and shape, and its rules (one spelling for both commands)."""
    for option in reversed(
        (
            secret_option("The organiser's secret, as `seed new -o FILE` wrote it.", required=True),
            click.option("--name", required=True, callback=_name, help="The tournament's name."),
            click.option(
                "--tables",
                required=True,
                type=click.IntRange(1, MAX_TABLES),
                help="How many tables.",
            ),
            click.option(
                "--seats", required=True, type=click.IntRange(2, 52), help="Seats at every table."
            ),
            click.option(
                "--hands",
                required=True,
                type=click.IntRange(1, MAX_HANDS),
                help="Hands every table plays.",
            ),
            rules_option,
        )
    ):
        command = option(command)
    return command


@click.group(
    short_help="Plan, check, simulate and score duplicate tournaments.",
    epilog="""\b
Examples:
  racing-demon seed new -o secret.txt
  racing-demon tournament commit --secret file:secret.txt --name "Club cup" \\
      --tables 4 --seats 4 --hands 3 -o cup.json    # publish cup.json
  racing-demon tournament contribute cup.json --by alice --key alice.key \\
      -o alice.json
  racing-demon tournament plan --secret file:secret.txt --name "Club cup" \\
      --tables 4 --seats 4 --hands 3 --contribution alice.json \\
      -o plan.json --sheets sheets.html
  racing-demon tournament check plan.json
  racing-demon tournament check plan.json --secret file:secret.txt
""",
)
def tournament() -> None:
    """Duplicate tournaments: every table plays the same packs, dealt from one
    committed secret (racing-demon docs tournament).

    The organiser commits to a secret and publishes the terms (the name, the
    shape, the rules and the commitment), collects contributions that sign
    them, and writes the plan: which pack each seat of each table plays in
    each hand, and the checksum of the whole deal set. Every table's log names
    the plan; the secret is revealed once every table has finished.
    """


tournament.add_command(simulate_command)
tournament.add_command(score_command, name="score")


@tournament.command(
    short_help="Write the plan and its printable sheets.",
    epilog="""\b
Examples:
  racing-demon tournament plan --secret file:secret.txt --name "Club cup" \\
      --tables 4 --seats 4 --hands 3 --contribution alice.json \\
      --contribution bob.json -o plan.json --sheets sheets.html
  racing-demon tournament plan --secret env:CUP_SECRET --name Cup \\
      --tables 16 --seats 3 --hands 2 --rules nertz \\
      --contribution org.json -o plan.json
""",
)
@_terms_options
@click.option(
    "--contribution",
    "contributions",
    metavar="FILE",
    multiple=True,
    required=True,
    type=click.Path(path_type=Path),
    help="An entropy contribution (as `tournament contribute` writes it), made to the "
    "terms `tournament commit` published, the same as this plan's; repeat for each, in "
    "any order (the plan lists them in the canonical order).",
)
@click.option(
    "-o",
    "--out",
    "out",
    required=True,
    metavar="FILE",
    help="The plan file to write (- for standard output).",
)
@click.option(
    "--sheets", metavar="FILE", help="Also write the printable sheets: one HTML page per table."
)
@force_option("Replace an existing FILE (never an input).")
@json_option
@click.pass_context
def plan(
    ctx: click.Context,
    secret: bytes,
    name: str,
    tables: int,
    seats: int,
    hands: int,
    rules: Rules,
    contributions: tuple[Path, ...],
    out: str,
    sheets: str | None,
    force: bool,
    as_json: bool,
) -> None:
    """Write the plan of a duplicate tournament: the shape, the rules every table
    plays (exactly HANDS hands, no target), the commitment, the contributions,
    the entropy digest, the deal-set checksum, the schedule of packs and the
    plan's own commitment, which every table's log names.

    The options must repeat the terms published with `tournament commit`:
    every contribution answers them. Publish the plan before play. The
    secret stays private until every table has finished. Exit 0 when
    written, 2 when an input cannot be used (a contribution to other terms,
    or whose signature does not verify) or an output exists.
    """
    for path in contributions:
        note_input(ctx, path)
    inputs = inputs_of(ctx)
    output = checked_output(out, replace=force, inputs=inputs, param_hint="--out")
    if output.is_stdout and as_json:
        # The plan and the report in one stream: neither could be read.
        raise click.BadParameter("--json already goes to standard output", param_hint="--out")
    sheets_output = _sheets_output(sheets, output, force, inputs)
    shape = Shape(name, tables, seats, hands)
    try:
        terms = make_terms(secret, shape, rules)
    except PlanError as error:
        raise click.BadParameter(printable(str(error)), param_hint="--seats") from error
    collected = []
    for path in contributions:
        try:
            collected.append(load_contribution(path, terms))
        except PlanError as error:
            raise click.BadParameter(
                f"{printable(str(path))}: {printable(str(error))}", param_hint="--contribution"
            ) from error
    try:
        made = make_plan(secret, shape, rules, tuple(collected))
    except PlanError as error:
        hint = "--seats" if error.member == "$.seats" else "--contribution"
        raise click.BadParameter(printable(str(error)), param_hint=hint) from error
    why_custom = _why_custom(made.rules, made.shape.hands)
    if why_custom is not None:
        # A note, whatever the output: --rules nertz writing nertz-custom must say why.
        click.echo(why_custom, err=True)
    document = made.to_document()
    data = (json.dumps(document, indent=2, ensure_ascii=False) + "\n").encode("utf-8")
    if len(data) > plan_module.MAX_PLAN_BYTES:
        # load_plan reads no more (UNREADABLE): a plan nobody could check or score.
        raise click.BadParameter(
            f"the plan file would be {len(data)} bytes; a plan is read up to "
            f"{plan_module.MAX_PLAN_BYTES} bytes: plan fewer tables, seats or hands",
            param_hint="--tables",
        )
    with OutputWriter(output, "--out") as writer:
        writer.write(data)
    if sheets_output is not None:
        _write_sheets(made, sheets_output)
    if as_json:
        document = _plan_report(made, output, sheets_output)
        click.echo(json.dumps(document, indent=2, ensure_ascii=False))
        return
    to_stderr = output.is_stdout
    click.echo(f"wrote {printable(output.shown)}", err=to_stderr)
    click.echo(_summary(made, document["plan"]), err=to_stderr)
    if sheets_output is not None:
        click.echo(f"sheets {printable(sheets_output.shown)}", err=to_stderr)


def _why_custom(rules: Rules, hands: int) -> str | None:
    """Why a tournament's rules are a custom variant of a built-in profile (the changes
    that make every table play exactly its hands, and any the organiser's own profile
    made), or None when they are a built-in profile or none's variant."""
    differences = differences_from_builtin(rules)
    if not differences:
        return None
    base = rules.name.removesuffix(CUSTOM_SUFFIX)
    lines = [
        f"rules {printable(rules.name)}, not {base}: every table of a tournament plays exactly "
        f"{plural(hands, 'hand')} (no target; a tie for the lead shares the win), "
        f"so the rules differ from the built-in {base}:",
        *(f"  {printable(difference)}" for difference in differences),
    ]
    return "\n".join(lines)


def _sheets_output(
    sheets: str | None, plan_output: Output, force: bool, inputs: list[Path]
) -> Output | None:
    if sheets is None:
        return None
    output = checked_output(sheets, replace=force, inputs=inputs, param_hint="--sheets")
    if output.path is not None and output.path == plan_output.path:
        raise click.BadParameter("the sheets and the plan need two files", param_hint="--sheets")
    if output.is_stdout and plan_output.is_stdout:
        raise click.BadParameter("the plan already goes to standard output", param_hint="--sheets")
    return output


def _write_sheets(plan: Plan, output: Output) -> None:
    with OutputWriter(output, "--sheets") as writer:
        writer.write(render_sheets(plan).encode("utf-8"))


def _summary(plan: Plan, digest: str) -> str:
    shape = plan.shape
    lines = [
        f"tournament   {printable(shape.name)}: {plural(shape.tables, 'table')} of "
        f"{plural(shape.seats, 'seat')}, {plural(shape.hands, 'hand')}, "
        f"rules {printable(plan.rules.name)}",
        printable(contributions_summary(plan)),
        f"commitment C {plan.commitment}",
        f"entropy    E {plan.entropy.hex()}",
        f"deal set   D {plan.deal_set}   publish with the plan, before play",
        f"plan       P {digest}   every table's log names it",
    ]
    return "\n".join(lines)


@tournament.command(
    short_help="Check a plan; with --secret, its deal set too.",
    epilog="""\b
Examples:
  racing-demon tournament check plan.json            # before play
  racing-demon tournament check plan.json --json
  racing-demon tournament check plan.json --secret file:secret.txt  # after
  racing-demon tournament check plan.json --sheets sheets.html
""",
)
@click.argument("plan_file", metavar="PLAN", type=click.Path(path_type=Path))
@secret_option("The revealed secret: it must open the commitment and deal the published deal set.")
@json_option
@click.option("--sheets", metavar="FILE", help="Write the printable sheets of a plan that checks.")
@force_option("Replace an existing sheets FILE.")
@click.pass_context
def check(
    ctx: click.Context,
    plan_file: Path,
    secret: bytes | None,
    as_json: bool,
    sheets: str | None,
    force: bool,
) -> None:
    """Check a plan from the file alone: strict JSON, the schema, the rules and
    their digest, every signed contribution (over the plan's terms) and their
    canonical order, the entropy digest, the schedule (the rotation) and the
    plan's commitment. With the revealed --secret, also that it opens the
    commitment and deals the published deal set. The report counts the
    unsigned contributions and, for an older plan, names what no
    contribution binds.

    Exit 0 when the plan checks, 1 when it does not (the reason code and the
    member are printed), 2 when PLAN cannot be read or an option is wrong.
    """
    note_input(ctx, plan_file)
    sheets_output = None
    if sheets is not None:
        sheets_output = checked_output(
            sheets, replace=force, inputs=inputs_of(ctx), param_hint="--sheets"
        )
    try:
        loaded = load_plan(plan_file)
        check_plan(loaded, secret)
    except PlanError as error:
        code = ExitCode.UNUSABLE if error.code is PlanCode.UNREADABLE else ExitCode.NO
        if as_json:
            click.echo(json.dumps(_check_document(plan_file, secret, None, error), indent=2))
        else:
            click.echo(f"{printable(str(plan_file))}: {printable(str(error))}", err=True)
        raise SystemExit(code) from error
    if sheets_output is not None:
        _write_sheets(loaded, sheets_output)
    if as_json:
        click.echo(json.dumps(_check_document(plan_file, secret, loaded, None), indent=2))
        return
    click.echo(f"ok: {printable(str(plan_file))} checks")
    click.echo(_summary(loaded, loaded.digest))
    if secret is None:
        click.echo(
            "not checked: the deal set D, which needs the secret (check again with --secret "
            "once every table has finished)"
        )
    else:
        click.echo("the secret opens C and deals D: the published deal set is the one played")


def _check_document(
    path: Path, secret: bytes | None, plan: Plan | None, error: PlanError | None
) -> dict[str, Any]:
    """``check --json`` (schemas/tournament-check.schema.json)."""
    figures = None if plan is None else _figures(plan)
    return {
        "format": CHECK_FORMAT,
        "plan_file": shown_name(path),
        "ok": error is None,
        "secret_checked": secret is not None,
        "code": None if error is None else str(error.code),
        "message": None if error is None else printable(f"{error.member}: {error.message}"),
        "tournament": figures,
    }


def _figures(plan: Plan) -> dict[str, Any]:
    """A plan's figures, as ``check --json`` and ``plan --json`` give them."""
    shape = plan.shape
    return {
        "name": shape.name,
        "tables": shape.tables,
        "seats": shape.seats,
        "hands": shape.hands,
        "rules": plan.rules.name,
        "rules_sha256": plan.rules.digest(),
        "commitment": plan.commitment,
        "contributions": len(plan.contributions),
        "signed": len(plan.contributions) - plan.unsigned,
        "unsigned": plan.unsigned,
        "unbound": list(plan.unbound),
        "entropy": plan.entropy.hex(),
        "deal_set": plan.deal_set,
        "plan": plan.digest,
    }


def _plan_report(plan: Plan, output: Output, sheets: Output | None) -> dict[str, Any]:
    """``plan --json`` (schemas/tournament-plan-report.schema.json)."""
    return {
        "format": PLAN_REPORT_FORMAT,
        "plan_file": shown_name(output.shown),
        "sheets": None if sheets is None else shown_name(sheets.shown),
        "tournament": _figures(plan),
    }


@tournament.command(
    short_help="Publish a tournament's terms: its shape, rules and commitment.",
    epilog="""\b
Examples:
  racing-demon tournament commit --secret file:secret.txt --name "Club cup" \\
      --tables 4 --seats 4 --hands 3 -o cup.json
  racing-demon tournament commit --secret env:CUP_SECRET --name Cup \\
      --tables 16 --seats 3 --hands 2 --rules nertz -o cup.json
""",
)
@_terms_options
@click.option(
    "-o",
    "--out",
    "out",
    default="-",
    show_default=True,
    metavar="FILE",
    help="The commitment file to write (- for standard output).",
)
@force_option("Replace an existing FILE (never the secret or a profile it read).")
@click.pass_context
def commit(
    ctx: click.Context,
    secret: bytes,
    name: str,
    tables: int,
    seats: int,
    hands: int,
    rules: Rules,
    out: str,
    force: bool,
) -> None:
    """Write the commitment file: the tournament's name and shape, the rules
    every table plays (exactly HANDS hands, no target) and the commitment C
    to the secret. Everything the deal depends on besides the secret and the
    contributions.

    Publish it before collecting any contribution: each contributor signs
    these terms, so the plan cannot change them afterwards. Exit 0 when
    written, 2 when an option cannot be used or FILE exists.
    """
    output = checked_output(out, replace=force, inputs=inputs_of(ctx), param_hint="--out")
    try:
        terms = make_terms(secret, Shape(name, tables, seats, hands), rules)
    except PlanError as error:
        raise click.BadParameter(printable(str(error)), param_hint="--seats") from error
    document = terms.to_document()
    with OutputWriter(output, "--out") as writer:
        writer.write((json.dumps(document, indent=2, ensure_ascii=False) + "\n").encode("utf-8"))
    click.echo(f"wrote {printable(output.shown)}", err=True)
    click.echo(_terms_summary(terms), err=True)
    why_custom = _why_custom(terms.rules, hands)
    if why_custom is not None:  # as the plan says it: --rules nertz writes nertz-custom
        click.echo(why_custom, err=True)
    click.echo("publish it before collecting any contribution", err=True)


def _terms_summary(terms: Terms) -> str:
    shape = terms.shape
    return "\n".join(
        [
            f"tournament   {printable(shape.name)}: {plural(shape.tables, 'table')} of "
            f"{shape.seats} seats, {plural(shape.hands, 'hand')}, rules "
            f"{printable(terms.rules.name)} sha256 {terms.rules.digest()}",
            f"commitment C {terms.commitment}",
        ]
    )


@tournament.command(
    short_help="Make an entropy contribution to a tournament.",
    epilog="""\b
Examples:
  racing-demon tournament contribute cup.json --by alice --key alice.key \\
      -o alice.json
  racing-demon tournament contribute cup.json --by organiser \\
      -o organiser.json   # unsigned
""",
)
@click.argument("terms_file", metavar="COMMITMENT", type=click.Path(path_type=Path))
@click.option("--by", required=True, callback=_name, help="Your name, as the plan will list it.")
@click.option(
    "--key",
    type=click.Path(path_type=Path),
    help="Sign with this private key (NAME.key, as keygen writes it); without it the "
    "contribution is 32 random bytes, unsigned: the organiser's word.",
)
@click.option(
    "--passphrase-file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Decrypt the key with the passphrase in FILE.",
)
@click.option("--ask-passphrase", is_flag=True, help="Decrypt the key; prompt for the passphrase.")
@click.option(
    "-o",
    "--out",
    "out",
    default="-",
    show_default=True,
    metavar="FILE",
    help="The contribution file to write (- for standard output).",
)
@force_option("Replace an existing FILE.")
def contribute(
    terms_file: Path,
    by: str,
    key: Path | None,
    passphrase_file: Path | None,
    ask_passphrase: bool,
    out: str,
    force: bool,
) -> None:
    """Make an entropy contribution to the tournament whose organiser
    published the commitment file COMMITMENT (`tournament commit` writes it),
    and hand the file to the organiser.

    With --key it is your Ed25519 signature over the tournament's terms (its
    name, tables, seats, hands, rules and commitment C) and your name: it
    proves the contribution came after them, so the organiser could not have
    chosen the secret, the shape or the rules knowing it. Signing is
    deterministic: the same terms give the same contribution. Exit 0 when
    written, 2 when COMMITMENT, an option or the key cannot be used.
    """
    if key is None and (passphrase_file is not None or ask_passphrase):
        raise click.UsageError("a passphrase decrypts --key: give --key too")
    if passphrase_file is not None and ask_passphrase:
        raise click.UsageError("give --passphrase-file or --ask-passphrase, not both")
    try:
        terms = load_terms(terms_file)
    except PlanError as error:
        raise click.BadParameter(
            f"{printable(str(terms_file))}: {printable(str(error))}", param_hint="COMMITMENT"
        ) from error
    inputs = [path for path in (terms_file, key, passphrase_file) if path is not None]
    output = checked_output(out, replace=force, inputs=inputs, param_hint="--out")
    if key is None:
        contribution = unsigned_contribution(by)
    else:
        private = private_key_from(key, passphrase_file, ask_passphrase, "--key")
        contribution = sign_contribution(private, terms, by)
    document = contribution_document(contribution, terms)
    with OutputWriter(output, "--out") as writer:
        writer.write((json.dumps(document, indent=2, ensure_ascii=False) + "\n").encode("utf-8"))
    how = "unsigned" if contribution.key is None else f"signed by key {key_id(contribution.key)}"
    click.echo(
        f"contribution by {printable(by)} ({how}) written to {printable(output.shown)}",
        err=True,
    )
    click.echo(_terms_summary(terms), err=True)
