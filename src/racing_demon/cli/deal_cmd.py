"""``racing-demon deal``: print the layout a plain seed, a committed dealer secret or a
log's genesis deals."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from racing_demon.cli.options import (
    SECRET_SOURCES,
    hex_problem,
    json_option,
    plain_seed,
    rules_option,
    secret_option,
)
from racing_demon.cli.output import claim_stdin_log, named_log
from racing_demon.files import shown_name
from racing_demon.game.cards import Card
from racing_demon.game.deal import (
    MAX_CONTRIBUTION_BYTES,
    MIN_CONTRIBUTION_BYTES,
    Dealer,
    MatchSeed,
    check_reveal,
    commitment,
)
from racing_demon.game.rules import Rules
from racing_demon.game.state import State
from racing_demon.log.reader import DEFAULT_LIMITS, ReadError
from racing_demon.log.records import Genesis
from racing_demon.outcomes import ExitCode
from racing_demon.printing import printable
from racing_demon.profiles import ProfileError, rules_from_document
from racing_demon.replay import genesis_and_secret, hands_dealt
from racing_demon.report.text import deal_document, deal_source, deal_text
from racing_demon.wording import plural

Packs = tuple[tuple[Card, ...], ...]


def _entropy(
    ctx: click.Context, param: click.Parameter, values: tuple[str, ...]
) -> tuple[bytes, ...]:
    """Each seat's contribution, 16 to 64 bytes in hex (either case), in seat order."""
    shortest, longest = 2 * MIN_CONTRIBUTION_BYTES, 2 * MAX_CONTRIBUTION_BYTES
    contributions = []
    for seat, value in enumerate(values):
        if shortest <= len(value) <= longest and len(value) % 2 == 0:
            problem = hex_problem(value, len(value))
        else:
            problem = (
                f"expected an even number of hex characters, {shortest} to {longest}, "
                f"got {len(value)}"
            )
        if problem is not None:
            raise click.BadParameter(f"seat {seat}'s contribution: {problem}", ctx, param)
        contributions.append(bytes.fromhex(value))
    return tuple(contributions)


@click.command(
    epilog=f"""\b
Examples:
  racing-demon deal --seed demo --players 2
  racing-demon deal --seed "final 2026" --players 4 --hand 3 --rules nertz
  racing-demon deal --secret file:secret.txt --entropy E0 --entropy E1 --json
  racing-demon deal --log game.jsonl --hand 3
  racing-demon deal --log unfinished.jsonl --secret file:secret.txt
\b
E0, E1: each seat's contribution ({2 * MIN_CONTRIBUTION_BYTES} to \
{2 * MAX_CONTRIBUTION_BYTES} hex), as the genesis lists them.

\b
More:
  racing-demon docs deal-spec   # the derivation, to re-implement it
"""
)
@click.option(
    "--seed", callback=plain_seed, help="A plain seed string (reproducible deals, no secret)."
)
@secret_option("The dealer secret: deal as a match committed to it does.")
@click.option(
    "--entropy",
    "entropy",
    metavar="HEX",
    multiple=True,
    callback=_entropy,
    help="A seat's contribution, with --secret: once per seat, in seat order.",
)
@click.option(
    "--log",
    "log",
    metavar="LOG",
    type=click.Path(dir_okay=False, path_type=Path),
    is_eager=True,  # --log - claims standard input before --secret stdin reads it
    callback=claim_stdin_log,
    help="Deal as LOG's genesis does: its rules, seats and entropy, and the secret its "
    "final record reveals (or --secret, for a log with no final record yet); - reads "
    "it from standard input.",
)
@click.option(
    "--players",
    type=click.IntRange(2, 16),
    help="Number of seats at the table (with --seed; --entropy and --log give it).",
)
@click.option("--hand", type=click.IntRange(1, 2**32 - 1), default=1, show_default=True)
@click.option(
    "--past-end",
    is_flag=True,
    help="With --log, deal a --hand past the last one the log dealt, from its seed: a hand "
    "the match never played (without it, such a --hand is refused).",
)
@rules_option
@json_option
@click.pass_context
def deal(
    ctx: click.Context,
    seed: str | None,
    secret: bytes | None,
    entropy: tuple[bytes, ...],
    log: Path | None,
    players: int | None,
    hand: int,
    past_end: bool,
    rules: Rules,
    as_json: bool,
) -> None:
    """Print each seat's layout for one hand.

    Every pack is derived by the published algorithm, so anyone can regenerate the
    same deal: from a plain --seed; from a dealer --secret and every seat's --entropy,
    exactly as a match committed to that secret deals (the game id does not enter the
    deal); or from a --log, as its table dealt it. The header names the commitment of
    a secret's deal, never the secret.
    """
    sources = [name for name, given in (("--seed", seed), ("--log", log)) if given is not None]
    if secret is not None and log is None:
        sources.append("--secret")
    if len(sources) != 1:
        raise click.UsageError(
            f"give one of --seed TEXT, --secret SOURCE with --entropy HEX, or --log LOG; "
            f"got {' and '.join(sources) if sources else 'none'}"
        )
    if entropy and secret is None:
        raise click.UsageError("--entropy goes with --secret SOURCE: the secret it mixes with")
    rules_given = ctx.get_parameter_source("rules") is not click.core.ParameterSource.DEFAULT
    try:
        if log is not None:
            if rules_given or players is not None or entropy:
                raise click.UsageError("--log gives the rules, seats and entropy: give none")
            _deal_log(log, secret, hand, past_end, as_json)
            return
        if past_end:
            raise click.UsageError("--past-end goes with --log: the log's last hand")
        if seed is not None:
            if players is None:
                raise click.UsageError("Missing option '--players' (with --seed).")
            dealer: Dealer = MatchSeed.from_plain(seed)
        else:
            assert secret is not None  # the one source left
            if not entropy:
                raise click.UsageError(
                    "give every seat's --entropy HEX, in seat order: the deal mixes them in"
                )
            if players is not None and players != len(entropy):
                given = plural(len(entropy), "seat's", "seats'")
                raise click.UsageError(f"--players {players}, but {given} --entropy: one per seat")
            players = len(entropy)
            dealer = MatchSeed.from_secret(secret, entropy)
        state, packs = _dealt(rules, dealer, hand, players)
    except ValueError as error:
        raise click.UsageError(str(error)) from error
    if seed is not None:
        document = deal_document(state, packs, seed=seed)
        source = deal_source(seed=seed)
    else:
        assert secret is not None
        document = deal_document(state, packs, commitment=commitment(secret))
        source = deal_source(commitment=commitment(secret))
    _show(document, state, source, packs, as_json)


def _dealt(rules: Rules, dealer: Dealer, hand: int, players: int) -> tuple[State, Packs]:
    """The hand ``dealer`` deals ``players`` seats: the laid-out state and the packs."""
    packs = tuple(dealer.pack(hand, seat) for seat in range(players))
    return State.deal(rules, packs, hand, 0), packs


def _deal_log(log: Path, secret: bytes | None, hand: int, past_end: bool, as_json: bool) -> None:
    # --log - is the log on standard input, as LOG - is in verify, replay and audit.
    named = named_log(str(log), DEFAULT_LIMITS)
    shown = printable(shown_name(named))
    try:
        record, revealed = genesis_and_secret(named, DEFAULT_LIMITS)
        dealt = hands_dealt(named, DEFAULT_LIMITS)
    except OSError as error:
        click.echo(f"cannot read {shown}: {error.strerror or error}", err=True)
        raise SystemExit(ExitCode.UNUSABLE) from error
    except (ReadError, ValueError) as error:
        click.echo(f"cannot deal from {shown}: {printable(str(error))}", err=True)
        raise SystemExit(ExitCode.UNUSABLE) from error
    genesis = record.payload
    assert isinstance(genesis, Genesis)  # genesis_and_secret returns the genesis record
    if revealed is not None and secret is not None and revealed != secret:
        raise click.BadParameter(
            "differs from the secret the log's final record reveals", param_hint="--secret"
        )
    secret = revealed or secret
    if secret is None:
        raise click.UsageError(
            f"{shown} has no final record yet: give the dealer secret, --secret SOURCE "
            f"({SECRET_SOURCES})"
        )
    if not check_reveal(secret, genesis.commitment):
        raise click.BadParameter(
            f"does not open the commitment of {shown}'s genesis ({genesis.commitment})",
            param_hint="--secret",
        )
    if hand > dealt:
        if not past_end:
            raise click.BadParameter(
                f"{shown} dealt {_hands(dealt)}: hand {hand} was never played (--past-end "
                "deals it from the log's seed anyway)",
                param_hint="--hand",
            )
        click.echo(
            f"hand {hand} is past the end of {shown}, which dealt {_hands(dealt)}: dealt from "
            "its seed, never played",
            err=True,
        )
    try:
        rules = rules_from_document(genesis.rules)
        state, packs = _dealt(rules, genesis.dealer(secret), hand, len(genesis.players))
    except (ProfileError, ValueError) as error:
        click.echo(f"cannot deal from {shown}: {printable(str(error))}", err=True)
        raise SystemExit(ExitCode.UNUSABLE) from error
    document = deal_document(state, packs, commitment=genesis.commitment, game=record.game)
    source = deal_source(commitment=genesis.commitment, game=record.game)
    _show(document, state, source, packs, as_json)


def _hands(count: int) -> str:
    """``no hand yet``, ``hand 1 only``, ``3 hands (1 to 3)``."""
    if count == 0:
        return "no hand yet"
    return "hand 1 only" if count == 1 else f"{plural(count, 'hand')} (1 to {count})"


def _show(document: dict[str, Any], state: State, source: str, packs: Packs, as_json: bool) -> None:
    if as_json:
        click.echo(json.dumps(document, indent=2, ensure_ascii=False))
    else:
        click.echo(deal_text(state, source, packs))
