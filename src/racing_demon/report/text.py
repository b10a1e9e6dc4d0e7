"""Reporters: what the commands print, as text for people and as JSON for programs.

Text may carry ANSI colour (red suits, verdicts, the failing record); the CLI strips it
when output is not a terminal or colour is off (``cli.style``). JSON documents are
described by the schemas in ``schemas/``.
"""

from __future__ import annotations

import enum
import json
from collections.abc import Sequence
from typing import Any

from racing_demon.game.cards import Card
from racing_demon.game.deal import DEAL_ALGORITHM, pack_digest
from racing_demon.game.flow import RecordKind, Submission
from racing_demon.game.race import Race
from racing_demon.game.rules import Rules
from racing_demon.game.state import Pile, Seat, State
from racing_demon.log.reader import ReadCode, ReadError
from racing_demon.log.records import Genesis, Record
from racing_demon.printing import printable
from racing_demon.profiles import ProfileError, differences_from_builtin, rules_from_document
from racing_demon.replay import ReplayError
from racing_demon.wording import plural

DEAL_FORMAT = "racing-demon/deal-report/v1"
SEED_FORMAT = "racing-demon/seed-report/v1"
SEED_SHOWN = 60  # characters of a plain seed a header shows; the JSON holds it whole
_RED = "\x1b[31m"
RESET = "\x1b[0m"


class Verbosity(enum.IntEnum):
    """How much a text report says: the verdict lines only (``-q``), the usual report, or
    every check and every problem found (``-v``)."""

    QUIET = 0
    NORMAL = 1
    VERBOSE = 2


class Colour(enum.StrEnum):
    """The ANSI colours the reports use: one meaning each, on every command."""

    GOOD = "\x1b[1;32m"  # bold green: verified, a claim that holds
    BAD = "\x1b[1;31m"  # bold red: does not verify, unreadable, a claim that is wrong
    WARN = "\x1b[1;33m"  # bold yellow: unfinished, unpinned: no verdict on the whole
    PLACE = "\x1b[1m"  # bold: where a check failed (line, seq, seat, move)


def paint(text: str, colour: Colour) -> str:
    """``text`` in ``colour``, reset after it."""
    return f"{colour}{text}{RESET}"


def show_card(card: Card) -> str:
    """``10♥`` in red, ``K♠`` plain; padded to three columns so piles line up."""
    text = card.display().rjust(3)
    return f"{_RED}{text}{RESET}" if card.is_red else text


def show_pile(cards: Sequence[Card]) -> str:
    return " ".join(show_card(card) for card in cards) if cards else "  -"


def top_first(pile: Pile) -> list[str]:
    return [card.face for card in reversed(pile)]


def shown_seed(seed: str) -> str:
    """A plain seed as a header shows it: quoted, printable, and cut after
    ``SEED_SHOWN`` characters, so a long seed cannot push the report off the screen."""
    if len(seed) <= SEED_SHOWN:
        return printable(json.dumps(seed, ensure_ascii=False))
    cut = printable(json.dumps(seed[:SEED_SHOWN], ensure_ascii=False))
    return f"{cut}… ({len(seed):,} characters)"


def deal_source(
    seed: str | None = None, commitment: str | None = None, game: str | None = None
) -> str:
    """What a deal was derived from, as its header names it: a plain seed, or the
    commitment to a dealer secret (and the game of the log it came from)."""
    if seed is not None:
        return f"seed {shown_seed(seed)}"
    game_part = "" if game is None else f"game {printable(game)} · "
    return f"{game_part}commitment {commitment}"


def deal_text(state: State, source: str, packs: Sequence[Pile]) -> str:
    """Every seat's layout, each pile listed from its top (the stock in turning order);
    ``source`` is ``deal_source``'s."""
    rules = state.rules
    lines = [
        f"hand {state.hand} · profile {rules.name} · {source} · "
        f"{plural(state.players, 'player')} · {DEAL_ALGORITHM}",
    ]
    for number, seat in enumerate(state.seats):
        lines += [
            "",
            f"seat {number}   pack digest {pack_digest(state.hand, number, packs[number])}",
            f"  demon  {show_pile(seat.demon[::-1])}   (top first, the rest face down)",
            "  work   "
            + "   ".join(f"w{index + 1} {show_pile(pile)}" for index, pile in enumerate(seat.work)),
            f"  stock  {plural(len(seat.stock), 'card')} in turning order, packets of "
            f"{rules.turn_count}:",
            *_packets(seat.stock[::-1], rules.turn_count),
        ]
    return "\n".join(lines)


def _packets(cards: Pile, size: int, per_line: int = 18) -> list[str]:
    packets = [show_pile(cards[start : start + size]) for start in range(0, len(cards), size)]
    step = per_line // size
    return ["         " + " | ".join(packets[i : i + step]) for i in range(0, len(packets), step)]


def deal_document(
    state: State,
    packs: Sequence[Pile],
    *,
    seed: str | None = None,
    commitment: str | None = None,
    game: str | None = None,
) -> dict[str, Any]:
    """The ``deal`` command's JSON (schemas/deal-report.schema.json): from a plain
    ``seed``, or from the secret behind ``commitment`` (in ``game``, for a log's deal)."""
    source = (
        {"seed": seed}
        if seed is not None
        else {"commitment": commitment, **({} if game is None else {"game": game})}
    )
    return {
        "format": DEAL_FORMAT,
        "algorithm": DEAL_ALGORITHM,
        "profile": state.rules.name,
        **source,
        "hand": state.hand,
        "players": state.players,
        "seats": [
            _seat_document(number, seat, state.hand, packs[number])
            for number, seat in enumerate(state.seats)
        ],
    }


def _seat_document(number: int, seat: Seat, hand: int, pack: Pile) -> dict[str, Any]:
    return {
        "seat": number,
        "pack": [card.face for card in pack],
        "pack_digest": pack_digest(hand, number, pack),
        "demon": top_first(seat.demon),
        "work": [top_first(pile) for pile in seat.work],
        "stock": top_first(seat.stock),
    }


def seed_document(secret_hex: str, commitment_hex: str) -> dict[str, Any]:
    """``seed new --json`` (schemas/seed-report.schema.json)."""
    return {"format": SEED_FORMAT, "secret": secret_hex, "commitment": commitment_hex}


def table_text(
    state: State, names: Sequence[str], record: Record, lost_to: Race | None = None
) -> str:
    """The table after ``record`` (``replay``): every seat and the centre; a bounce that
    lost a race (``lost_to``) names the record that won it."""
    event = _event_text(record, lost_to)
    lines = [
        f"after record {record.seq} at {record.t_ms} ms, hand {state.hand} ({state.phase}): "
        f"{event}",
        "centre:",
    ]
    for index, foundation in enumerate(state.foundations):
        top = foundation.levels[-1]
        aside = "  (complete, set aside)" if foundation.complete else ""
        lines.append(
            f"  f{index + 1:<3}{' '.join(show_card(card) for card in top)}"
            f"  {plural(foundation.rank, 'card')}{aside}"
        )
    if not state.foundations:
        lines.append("  (empty)")
    for number, seat in enumerate(state.seats):
        demon = f"{show_card(seat.demon[-1])} ({len(seat.demon)} left)" if seat.demon else "empty"
        waste = show_card(seat.waste[-1]) if seat.waste else "  -"
        lines += [
            f"seat {number} {printable(names[number])}: demon {demon}, "
            f"waste {waste} ({len(seat.waste)}), stock {len(seat.stock)}",
            "  " + "   ".join(f"w{i + 1} {show_pile(pile)}" for i, pile in enumerate(seat.work)),
        ]
    return "\n".join(lines)


def _event_text(record: Record, lost_to: Race | None) -> str:
    payload = record.payload
    if not isinstance(payload, Submission):
        return printable(record.kind)
    event = printable(payload.move)
    if payload.reason is None:
        return event
    bounced = f"bounced: {printable(payload.reason)}"
    if lost_to is not None:
        seq, seat, card = lost_to.seq, lost_to.seat, lost_to.card
        if card is None:
            bounced += f", lost the race to record {seq}: seat {seat} ended the hand"
        else:
            bounced += f", lost the race to record {seq}, seat {seat}'s {card.display()}"
    return f"{event} ({bounced})"


def next_text(
    record: Record | ReplayError | ReadError | None,
    names: Sequence[str],
    shown: Record,
    lost_to: Race | None = None,
) -> str:
    """What follows ``shown``: the next record (``lost_to`` as for ``table_text``), the
    first one the replay refuses, a torn last line, or nothing: the match's end, or an
    unfinished log."""
    if record is None:
        if shown.kind is RecordKind.FINAL:
            return "next: nothing (the final record ends the match)"
        return (
            f"next: nothing yet: the log is unfinished (no final record after record {shown.seq})"
        )
    if isinstance(record, ReadError):  # replay reads past a record only to a torn last line
        assert record.code is ReadCode.TORN_LINE
        return (
            f"next: nothing yet: the log is unfinished (line {record.line} is torn, as a "
            "crash mid-write leaves it; racing-demon recover repairs the file)"
        )
    if isinstance(record, ReplayError):
        return f"next: {printable(str(record))} (the replay stops here)"
    payload = record.payload
    if not isinstance(payload, Submission):
        return f"next: record {record.seq} ({record.kind})"
    who = f", seat {payload.seat} {printable(names[payload.seat])}"
    return f"next: record {record.seq} ({record.kind}{who}): {_event_text(record, lost_to)}"


def rules_listing(profiles: Sequence[Rules]) -> str:
    width = max(len(rules.name) for rules in profiles)
    return "\n".join(
        f"{rules.name.ljust(width)}  {rules.min_players}-{rules.max_players} players  "
        f"{rules.title} ({rules.source})"
        for rules in profiles
    )


def genesis_text(record: Record) -> str:
    """The genesis (``replay --at 0``): the game, the rules and what is custom in them,
    every seat with its key, the table's key and the dealer's commitment. Everything is
    the log's own word, escaped: nothing is dealt before the first hand."""
    genesis = record.payload
    assert isinstance(genesis, Genesis)
    game = printable(record.game)
    lines = [f"record {record.seq}, the genesis, at {record.t_ms} ms: game {game}"]
    try:
        rules: Rules | None = rules_from_document(genesis.rules)
    except (ProfileError, ValueError, TypeError, LookupError):
        rules = None
    if rules is None:
        lines.append(f"rules: not a valid profile (sha256 {printable(genesis.rules_sha256)})")
    else:
        changes = differences_from_builtin(rules)
        kind = "built-in" if changes == () else "custom"
        lines.append(
            f"rules {printable(rules.name)} version {rules.version} · {kind} · "
            f"{rules.min_players}-{rules.max_players} players · sha256 "
            f"{printable(genesis.rules_sha256)}"
        )
        lines += [f"  {printable(change)}" for change in changes or ()]
    for entry in genesis.players:
        key = "no key (the table's word)" if entry.key is None else f"key {printable(entry.key)}"
        lines.append(f"seat {entry.seat} {printable(entry.name)}: {key}")
    lines.append(f"table key id {printable(genesis.table_key)}")
    lines.append(f"commitment {printable(genesis.commitment)}")
    if genesis.tournament is not None:
        tag = genesis.tournament
        lines.append(
            f"tournament {printable(tag.name)}: table {tag.table} of {tag.tables}, "
            f"{plural(tag.hands, 'hand')}"
        )
    return "\n".join(lines)
