"""The deal use case: ``run_deal`` does what ``racing-demon deal`` does, for any caller
(the command line, a server), without click.

One call derives the packs of one hand by the published algorithm, from one source: a
plain seed; a dealer secret and every seat's entropy, exactly as a match committed to
that secret deals; or a log's genesis and the secret its final record reveals. It hands
the ``Dealt`` hand to a ``DealReporter`` (text or JSON, chosen by name in
``racing_demon.report.deal``), which decides every word printed, and returns the exit
code: 0, or 2 when the log cannot be read or dealt from.

What the caller gets wrong (no source or two, a secret that opens no commitment, a hand
the log never dealt) is a ``UsageProblem``. A deal names the commitment of a secret,
never the secret.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from racing_demon.files import STDIN, LogFile, read_standard_input, shown_name
from racing_demon.game.cards import Card
from racing_demon.game.deal import Dealer, MatchSeed, check_reveal, commitment
from racing_demon.game.rules import Rules
from racing_demon.game.state import State
from racing_demon.log.reader import DEFAULT_LIMITS, ReadError
from racing_demon.log.records import Genesis
from racing_demon.outcomes import ExitCode
from racing_demon.printing import printable
from racing_demon.profiles import DEFAULT_PROFILE, ProfileError, load_rules, rules_from_document
from racing_demon.replay import genesis_and_secret, hands_dealt
from racing_demon.usage import SECRET_SOURCES, UsageProblem
from racing_demon.wording import plural

Packs = tuple[tuple[Card, ...], ...]


@dataclass(frozen=True, kw_only=True)
class DealRun:
    """What to deal: ``racing-demon deal``'s options but the reporter's. Give one source:
    ``seed``, ``secret`` with ``entropy``, or ``log`` (with ``secret`` for a log that has
    no final record yet)."""

    seed: str | None = None  # a plain seed
    secret: bytes | None = None  # a dealer secret
    entropy: tuple[bytes, ...] = ()  # each seat's contribution, in seat order
    log: LogFile | str | None = None  # a log, or its name: "-" is standard input
    # How a log named "-" is read, once the settings are known to hold (the command line
    # claims standard input first); None: sys.stdin.
    read_stdin: Callable[[], LogFile] | None = None
    players: int | None = None  # with a seed; the entropy and the log give it
    hand: int = 1
    past_end: bool = False  # with a log: deal a hand it never played, from its seed
    rules: Rules | None = None  # None: the default profile (a log gives its own)


@dataclass(frozen=True)
class Dealt:
    """The hand dealt: the laid-out state and every seat's pack, and what it was derived
    from: the plain ``seed``, or the ``commitment`` to the secret (and the log's
    ``game``)."""

    state: State
    packs: Packs
    seed: str | None = None
    commitment: str | None = None
    game: str | None = None


class DealReporter(Protocol):
    """What a deal prints: ``racing_demon.report.deal`` has the text and JSON ones."""

    def dealt(self, dealt: Dealt) -> None:
        """The hand dealt."""

    def note(self, message: str) -> None:
        """A warning beside the deal (standard error's line)."""

    def failed(self, message: str) -> None:
        """Why the log cannot be dealt from (standard error's line)."""


def run_deal(run: DealRun, reporter: DealReporter) -> ExitCode:
    """Deal the hand ``run`` asks for to ``reporter`` and return the exit code (module
    docs). Raises UsageProblem before anything is dealt."""
    seed, secret, entropy, log = run.seed, run.secret, run.entropy, run.log
    sources = [name for name, given in (("--seed", seed), ("--log", log)) if given is not None]
    if secret is not None and log is None:
        sources.append("--secret")
    if len(sources) != 1:
        raise UsageProblem(
            f"give one of --seed TEXT, --secret SOURCE with --entropy HEX, or --log LOG; "
            f"got {' and '.join(sources) if sources else 'none'}"
        )
    if entropy and secret is None:
        raise UsageProblem("--entropy goes with --secret SOURCE: the secret it mixes with")
    players = run.players
    try:
        if log is not None:
            if run.rules is not None or players is not None or entropy:
                raise UsageProblem("--log gives the rules, seats and entropy: give none")
            return _deal_log(_log_file(log, run), secret, run.hand, run.past_end, reporter)
        if run.past_end:
            raise UsageProblem("--past-end goes with --log: the log's last hand")
        if seed is not None:
            if players is None:
                raise UsageProblem("Missing option '--players' (with --seed).")
            dealer: Dealer = MatchSeed.from_plain(seed)
        else:
            assert secret is not None  # the one source left
            if not entropy:
                raise UsageProblem(
                    "give every seat's --entropy HEX, in seat order: the deal mixes them in"
                )
            if players is not None and players != len(entropy):
                given = plural(len(entropy), "seat's", "seats'")
                raise UsageProblem(f"--players {players}, but {given} --entropy: one per seat")
            players = len(entropy)
            dealer = MatchSeed.from_secret(secret, entropy)
        rules = load_rules(DEFAULT_PROFILE) if run.rules is None else run.rules
        state, packs = _dealt(rules, dealer, run.hand, players)
    except ValueError as error:
        raise UsageProblem(str(error)) from error
    if seed is not None:
        reporter.dealt(Dealt(state, packs, seed=seed))
    else:
        assert secret is not None
        reporter.dealt(Dealt(state, packs, commitment=commitment(secret)))
    return ExitCode.OK


def _dealt(rules: Rules, dealer: Dealer, hand: int, players: int) -> tuple[State, Packs]:
    """The hand ``dealer`` deals ``players`` seats: the laid-out state and the packs."""
    packs = tuple(dealer.pack(hand, seat) for seat in range(players))
    return State.deal(rules, packs, hand, 0), packs


def _log_file(log: LogFile | str, run: DealRun) -> LogFile:
    if log != STDIN:
        return Path(log) if isinstance(log, str) else log
    if run.read_stdin is not None:
        return run.read_stdin()
    return read_standard_input(sys.stdin.buffer, DEFAULT_LIMITS.max_file_bytes)


def _deal_log(
    named: LogFile, secret: bytes | None, hand: int, past_end: bool, reporter: DealReporter
) -> ExitCode:
    shown = printable(shown_name(named))
    try:
        record, revealed = genesis_and_secret(named, DEFAULT_LIMITS)
        dealt = hands_dealt(named, DEFAULT_LIMITS)
    except OSError as error:
        reporter.failed(f"cannot read {shown}: {error.strerror or error}")
        return ExitCode.UNUSABLE
    except (ReadError, ValueError) as error:
        reporter.failed(f"cannot deal from {shown}: {printable(str(error))}")
        return ExitCode.UNUSABLE
    genesis = record.payload
    assert isinstance(genesis, Genesis)  # genesis_and_secret returns the genesis record
    if revealed is not None and secret is not None and revealed != secret:
        raise UsageProblem("differs from the secret the log's final record reveals", "--secret")
    secret = revealed or secret
    if secret is None:
        raise UsageProblem(
            f"{shown} has no final record yet: give the dealer secret, --secret SOURCE "
            f"({SECRET_SOURCES})"
        )
    if not check_reveal(secret, genesis.commitment):
        raise UsageProblem(
            f"does not open the commitment of {shown}'s genesis ({genesis.commitment})",
            "--secret",
        )
    if hand > dealt:
        if not past_end:
            raise UsageProblem(
                f"{shown} dealt {_hands(dealt)}: hand {hand} was never played (--past-end "
                "deals it from the log's seed anyway)",
                "--hand",
            )
        reporter.note(
            f"hand {hand} is past the end of {shown}, which dealt {_hands(dealt)}: dealt from "
            "its seed, never played"
        )
    try:
        rules = rules_from_document(genesis.rules)
        state, packs = _dealt(rules, genesis.dealer(secret), hand, len(genesis.players))
    except (ProfileError, ValueError) as error:
        reporter.failed(f"cannot deal from {shown}: {printable(str(error))}")
        return ExitCode.UNUSABLE
    reporter.dealt(Dealt(state, packs, commitment=genesis.commitment, game=record.game))
    return ExitCode.OK


def _hands(count: int) -> str:
    """``no hand yet``, ``hand 1 only``, ``3 hands (1 to 3)``."""
    if count == 0:
        return "no hand yet"
    return "hand 1 only" if count == 1 else f"{plural(count, 'hand')} (1 to {count})"
