"""Simulated matches per profile and table size: speed, bounces, stall shifts, blocked hands.

    python bench/sim_bench.py [--matches 20] [--min-hands 100] [--json-out sim.json]

For every built-in profile, with 2 players (normal, hard) and 4 players (easy, normal,
hard, hard), plays ``--matches`` whole matches (seeds ``bench <profile> <players> <i>``),
more if they hold fewer than ``--min-hands`` hands (peer2peer's match is one deal), and
reports: simulated hands per second of wall clock (no fsync, as the simulator runs by
default), the share of submissions bounced (and of those lost races), ties, stall shifts
per hand, the share of hands with at least one stall shift, and the share of blocked hands.
Then the cost of ``--durable`` (fsync every record) on one configuration. Prints a table,
then the same figures as JSON. Figures vary with the machine; the shares do not (the
simulation is deterministic).
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from racing_demon.profiles import BUILT_IN, load_rules
from racing_demon.sim.bots import BOTS
from racing_demon.sim.simulate import simulate

TABLE_KEY = Ed25519PrivateKey.from_private_bytes(bytes([9]) * 32)  # a benchmark fixture
LINE_UP = {2: ("normal", "hard"), 4: ("easy", "normal", "hard", "hard")}


def measure(
    profile: str, players: int, matches: int, min_hands: int = 0, *, durable: bool = False
) -> dict[str, Any]:
    rules = load_rules(profile)
    bots = [BOTS[name] for name in LINE_UP[players]]
    seconds = 0.0
    hands = submissions = bounced = lost = ties = shifts = shifted_hands = blocked = 0
    virtual_ms = 0
    ends: Counter[str] = Counter()
    number = 0
    with tempfile.TemporaryDirectory() as directory:
        while number < matches or hands < min_hands:
            path = Path(directory) / f"{number}.jsonl"
            start = time.perf_counter()
            result = simulate(
                path, rules, bots, f"bench {profile} {players} {number}", TABLE_KEY, durable=durable
            )
            seconds += time.perf_counter() - start
            hands += len(result.match.hands)
            submissions += result.tally.submissions
            bounced += result.bounced
            lost += result.tally.bounces.get("FOUNDATION_TAKEN", 0)
            ties += result.ties
            shifts += result.stall_shifts
            blocked += result.blocked
            virtual_ms += result.virtual_ms
            ends.update(hand.reason.value for hand in result.match.hands)
            shifted_hands += _hands_with_a_shift(path)
            number += 1
    return {
        "profile": profile,
        "players": players,
        "bots": list(LINE_UP[players]),
        "matches": number,
        "hands": hands,
        "hands_per_second": round(hands / seconds, 1),
        "simulated_seconds_per_hand": round(virtual_ms / hands / 1000, 1),
        "submissions": submissions,
        "bounced_share": round(bounced / submissions, 4),
        "lost_race_share": round(lost / submissions, 4),
        "ties": ties,
        "stall_shifts_per_hand": round(shifts / hands, 2),
        "hands_with_a_stall_shift": round(shifted_hands / hands, 3),
        "blocked_share": round(blocked / hands, 3),
        "hand_ends": dict(sorted(ends.items())),
    }


def _hands_with_a_shift(path: Path) -> int:
    hands = set()
    for line in path.read_bytes().splitlines():
        body = json.loads(line)["body"]
        if body["kind"] == "stall":
            hands.add(body["hand"])
    return len(hands)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matches", type=int, default=20, help="matches per configuration")
    parser.add_argument("--min-hands", type=int, default=100, help="hands per configuration")
    parser.add_argument("--json-out", type=Path, help="also write the JSON result here")
    args = parser.parse_args()
    rows = [
        measure(profile, players, args.matches, args.min_hands)
        for profile in BUILT_IN
        for players in LINE_UP
    ]
    header = (
        f"{'profile':<10} {'seats':>5} {'matches':>7} {'hands':>6} {'hands/s':>8} "
        f"{'sim s/hand':>10} {'bounced':>8} {'lost race':>9} {'ties':>5} {'shifts/hand':>11} "
        f"{'hands shifted':>13} {'blocked':>8}"
    )
    print(header)
    for row in rows:
        print(
            f"{row['profile']:<10} {row['players']:>5} {row['matches']:>7} {row['hands']:>6} "
            f"{row['hands_per_second']:>8} {row['simulated_seconds_per_hand']:>10} "
            f"{row['bounced_share']:>8.2%} {row['lost_race_share']:>9.2%} {row['ties']:>5} "
            f"{row['stall_shifts_per_hand']:>11} {row['hands_with_a_stall_shift']:>13.1%} "
            f"{row['blocked_share']:>8.1%}"
        )
    durable_matches = max(1, args.matches // 4)
    fast = measure("table", 4, durable_matches)
    durable = measure("table", 4, durable_matches, durable=True)
    ratio = round(fast["hands_per_second"] / durable["hands_per_second"], 2)
    print(
        f"\ntable, 4 seats, {durable_matches} matches: {fast['hands_per_second']} hands/s "
        f"without fsync, {durable['hands_per_second']} with --durable ({ratio}x)"
    )
    result = {
        "python": platform.python_version(),
        "machine": platform.machine(),
        "configurations": rows,
        "durable": {
            "profile": "table",
            "players": 4,
            "matches": durable_matches,
            "hands_per_second": durable["hands_per_second"],
            "without_fsync_hands_per_second": fast["hands_per_second"],
            "speedup_without_fsync": ratio,
        },
    }
    print(json.dumps(result, indent=2))
    if args.json_out is not None:
        args.json_out.parent.mkdir(parents=True, exist_ok=True)
        args.json_out.write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
