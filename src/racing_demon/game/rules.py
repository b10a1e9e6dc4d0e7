"""Rules: a frozen configuration read from a profile document.

A profile is data (docs/rules.md describes every field and why each built-in
profile sets it as it does). The engine reads only a ``Rules`` value, so a
variant is a different document, never a subclass. Validation against the JSON
Schema happens at the edge (``profiles.py``); ``from_document`` only converts.
"""

from __future__ import annotations

import enum
import hashlib
import json
from dataclasses import dataclass
from typing import Any, Final

PROFILE_FORMAT = "racing-demon/rules/v1"
DEMON_CARDS = 13
# Every match ends after this many hands, whatever its profile: a profile with only a
# target, or a tie for the lead played on, could otherwise never end, and a log of such a
# match would cost its verifier without bound. The schemas' ``max_hands`` and every
# record's ``hand`` have the same maximum. Why 500: the final record lists every hand's
# scores, and for 16 seats with the widest scores the profile schema allows ("-130", 520)
# 500 hands take about 42 KB, well inside the 64 KiB a line may hold; 1,000 would not fit.
MAX_HANDS = 500


class StallTrigger(enum.StrEnum):
    """When a stall shift becomes due without an agreement."""

    TABLE_STUCK = "table_stuck"  # every player is stuck (docs/rules.md, "Stuck")
    FULL_PASS = "full_pass"  # every player has turned through their whole stock with no play


FULL_PASS: Final = StallTrigger.FULL_PASS  # read on every record: see state.ENDED


class Blocked(enum.StrEnum):
    """After how many stall shifts with no play in between a stuck table is blocked."""

    FULL_CYCLE = "full_cycle"  # as many as the longest stock and waste: every grouping tried
    ONE_SHIFT = "one_shift"  # one: stuck again after a shift, the deal is over


class Resignation(enum.StrEnum):
    """What a seat's resignation does."""

    ENDS_MATCH = "ends_match"  # the hand and the match end, against the resigning seat
    REFUSED = "refused"  # the rules have no resignation: a resign move is refused


class LeadTie(enum.StrEnum):
    """What a tie for the lead does when the match would otherwise end."""

    SHARE = "share"  # equal highest totals share the victory
    PLAY_ON = "play_on"  # another hand is played


@dataclass(frozen=True, slots=True)
class Rules:
    name: str
    version: int
    title: str
    source: str
    min_players: int
    max_players: int
    work_piles: int
    turn_count: int
    slide_under: bool
    tie_window_ms: int | None
    call_allowed: bool
    call_grace_ms: int
    end_on_empty_demon: bool
    stall_trigger: StallTrigger
    stall_by_agreement: bool
    countdown_ms: int
    no_centre_ms: int | None
    idle_abandon_ms: int | None
    points_per_foundation_card: int
    points_per_demon_card: int
    target: int | None
    max_hands: int | None
    lead_tie: LeadTie
    # Fields a profile may leave out, and which are then left out of its document (so that
    # a document written before they existed keeps its digest): these are their defaults.
    blocked_after: Blocked = Blocked.FULL_CYCLE
    resignation: Resignation = Resignation.ENDS_MATCH

    def digest(self) -> str:
        """SHA-256 of the canonical profile document (sorted keys, no spaces)."""
        text = json.dumps(self.to_document(), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(text.encode()).hexdigest()

    @classmethod
    def from_document(cls, doc: dict[str, Any]) -> Rules:
        """Build from a profile document already validated against its schema."""
        return cls(
            name=doc["name"],
            version=doc["version"],
            title=doc["title"],
            source=doc["source"],
            min_players=doc["players"]["min"],
            max_players=doc["players"]["max"],
            work_piles=doc["layout"]["work_piles"],
            turn_count=doc["stock"]["turn"],
            slide_under=doc["work"]["slide_under"],
            tie_window_ms=doc["foundations"]["tie_window_ms"],
            call_allowed=doc["end"]["call_allowed"],
            call_grace_ms=doc["end"]["call_grace_ms"],
            end_on_empty_demon=doc["end"]["on_empty_demon"],
            stall_trigger=StallTrigger(doc["stall"]["trigger"]),
            stall_by_agreement=doc["stall"]["by_agreement"],
            countdown_ms=doc["time"]["countdown_ms"],
            no_centre_ms=doc["time"]["no_centre_ms"],
            idle_abandon_ms=doc["time"]["idle_abandon_ms"],
            points_per_foundation_card=doc["scoring"]["per_foundation_card"],
            points_per_demon_card=doc["scoring"]["per_demon_card"],
            target=doc["match"]["target"],
            max_hands=doc["match"]["max_hands"],
            lead_tie=LeadTie(doc["match"]["lead_tie"]),
            blocked_after=Blocked(doc["stall"].get("blocked_after", Blocked.FULL_CYCLE)),
            resignation=Resignation(doc["end"].get("resign", Resignation.ENDS_MATCH)),
        )

    def to_document(self) -> dict[str, Any]:
        """The profile document; ``Rules.from_document(r.to_document()) == r``. A field with
        a default is written only when it differs from the default."""
        document: dict[str, Any] = {
            "format": PROFILE_FORMAT,
            "name": self.name,
            "version": self.version,
            "title": self.title,
            "source": self.source,
            "players": {"min": self.min_players, "max": self.max_players},
            "layout": {"demon_cards": DEMON_CARDS, "work_piles": self.work_piles},
            "stock": {"turn": self.turn_count},
            "work": {"slide_under": self.slide_under},
            "foundations": {"tie_window_ms": self.tie_window_ms},
            "end": {
                "call_allowed": self.call_allowed,
                "call_grace_ms": self.call_grace_ms,
                "on_empty_demon": self.end_on_empty_demon,
            },
            "stall": {
                "trigger": self.stall_trigger.value,
                "by_agreement": self.stall_by_agreement,
            },
            "time": {
                "countdown_ms": self.countdown_ms,
                "no_centre_ms": self.no_centre_ms,
                "idle_abandon_ms": self.idle_abandon_ms,
            },
            "scoring": {
                "per_foundation_card": self.points_per_foundation_card,
                "per_demon_card": self.points_per_demon_card,
            },
            "match": {
                "target": self.target,
                "max_hands": self.max_hands,
                "lead_tie": self.lead_tie.value,
            },
        }
        if self.blocked_after is not Blocked.FULL_CYCLE:
            document["stall"]["blocked_after"] = self.blocked_after.value
        if self.resignation is not Resignation.ENDS_MATCH:
            document["end"]["resign"] = self.resignation.value
        return document
