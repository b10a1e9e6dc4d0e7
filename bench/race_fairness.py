"""Who wins the races under plain arrival order, when one player's round trip is longer
(issue 35, point 4: "two equally fast bots at 20 ms and 150 ms round trip ... report the
split under plain arrival order").

    python bench/race_fairness.py [--matches 300] [--fast-rtt-ms 20] [--slow-rtt-ms 150]
                                  [--profile nertz] [--bot hard] [--windows-ms 50 130 200]
                                  [--json-out FILE]

Each match is a simulation (racing_demon.sim: virtual time, a real table; docs/simulation.md)
of two bots of the same profile, one seat with the fast round trip and one with the slow,
the fast seat alternating between seat 0 and seat 1 from match to match (so that the
table's order among arrivals of one millisecond favours neither). A bot sees the table one
way's latency late and its submission lands one way's latency later, so its round trip is
twice the one-way latency the simulator takes.

A **contested play** is a card bounced ``FOUNDATION_TAKEN``: another card reached that
foundation level first (``replay.Snapshot.lost_to`` names it). Its winner is the seat of the
record that placed that card. The bench counts the contested plays each seat won, with a
95 % Wilson interval for the fast seat's share, the time between the two records (the
arrival gap, on the table's clock), and how many were decided by less than the two round
trips' difference. A loss to one's own card is not a race and is not counted.

What it shows is the cost of arrival order to the slow seat, not a fairness mode: the
mode the issue describes (a draw among plays that arrive within a window) is not built.
To size one, the bench also **projects** the fast seat's share onto the same contests
under two rules a table could adopt, each with a window W (``--windows-ms``):

- *window*: two plays whose arrivals are at most W apart are settled by a fair draw (each
  wins half of such contests), a wider gap by arrival order;
- *window on round-trip-corrected arrivals*: the same, with each arrival moved back by its
  seat's round trip (as the table would measure it with its own pings), so that a play
  counts from when its seat could first have seen the card it answers.

A projection keeps the simulated arrivals as they were (no bot adapts to a held receipt),
and each draw counts as half a win: it sizes W, it does not test a mode.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from results import publish  # noqa: E402

from racing_demon.game.flow import Submission  # noqa: E402
from racing_demon.log.keys import generate_private_key  # noqa: E402
from racing_demon.profiles import builtin_document, rules_from_document  # noqa: E402
from racing_demon.replay import find_secret, replay  # noqa: E402
from racing_demon.sim.bots import BOTS  # noqa: E402
from racing_demon.sim.simulate import Latency, simulate  # noqa: E402


def races(path: Path) -> list[tuple[int, int, int]]:
    """Every contested play of the log: (winner seat, loser seat, arrival gap in ms)."""
    placed_by: dict[int, tuple[int, int]] = {}  # seq -> (seat, t_ms)
    found = []
    with path.open("rb") as stream:
        for snapshot in replay(stream, find_secret(path)):
            record = snapshot.record
            if record is None or not isinstance(record.payload, Submission):
                continue
            seat = record.payload.seat
            placed_by[record.seq] = (seat, record.t_ms)
            lost = snapshot.lost_to
            if lost is not None:
                winner, won_at = placed_by[lost.seq]
                if winner != seat:
                    found.append((winner, seat, record.t_ms - won_at))
    return found


def projected_share(contests: list[tuple[bool, int]], window: int, correction: int) -> float | None:
    """The fast seat's expected share of ``contests`` (each: the fast seat won it by arrival
    order, the arrival gap in ms) if plays at most ``window`` ms apart were settled by a fair
    draw, after the slow seat's arrivals are moved ``correction`` ms earlier (the two round
    trips' difference, or 0 for plain arrivals)."""
    if not contests:
        return None
    expected = 0.0
    for fast_won, gap_ms in contests:
        # The slow play's arrival relative to the fast one's: after it when the fast won.
        slow_after_fast = (gap_ms if fast_won else -gap_ms) - correction
        if abs(slow_after_fast) <= window:
            expected += 0.5
        else:
            expected += slow_after_fast > 0
    return round(expected / len(contests), 3)


def wilson(wins: int, total: int, z: float = 1.96) -> tuple[float, float]:
    """The 95 % Wilson score interval of a share ``wins / total``."""
    if total == 0:
        return (0.0, 1.0)
    share = wins / total
    centre = (share + z * z / (2 * total)) / (1 + z * z / total)
    half = z * math.sqrt(share * (1 - share) / total + z * z / (4 * total * total))
    return (centre - half / (1 + z * z / total), centre + half / (1 + z * z / total))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--matches", type=int, default=300)
    parser.add_argument("--fast-rtt-ms", type=int, default=20)
    parser.add_argument("--slow-rtt-ms", type=int, default=150)
    parser.add_argument("--profile", default="nertz")
    parser.add_argument("--bot", default="hard", choices=sorted(BOTS))
    parser.add_argument(
        "--windows-ms",
        type=int,
        nargs="+",
        default=[50, 130, 200],
        metavar="W",
        help="the windows W to project a draw-within-W rule onto (ms)",
    )
    parser.add_argument("--json-out", type=Path)
    options = parser.parse_args()
    rules = rules_from_document(builtin_document(options.profile))
    bot = BOTS[options.bot]
    fast, slow = Latency(options.fast_rtt_ms // 2), Latency(options.slow_rtt_ms // 2)
    spread = options.slow_rtt_ms - options.fast_rtt_ms
    table_key = generate_private_key()
    fast_wins = slow_wins = within_spread = 0
    gaps: list[int] = []
    contests: list[tuple[bool, int]] = []  # (the fast seat won, arrival gap in ms)
    started = time.monotonic()
    with tempfile.TemporaryDirectory() as folder:
        for match in range(options.matches):
            fast_seat = match % 2
            latencies = [fast, slow] if fast_seat == 0 else [slow, fast]
            path = Path(folder) / f"match{match}.jsonl"
            seed = f"race-fairness-{match}"
            simulate(path, rules, [bot, bot], seed, table_key, latencies=latencies, receipts=False)
            for winner, _, gap_ms in races(path):
                fast_wins += winner == fast_seat
                slow_wins += winner != fast_seat
                within_spread += gap_ms < spread
                gaps.append(gap_ms)
                contests.append((winner == fast_seat, gap_ms))
            path.unlink()
    contested = fast_wins + slow_wins
    low, high = wilson(fast_wins, contested)
    result: dict[str, Any] = {
        "bench": "race_fairness",
        "order": "plain arrival",
        "profile": options.profile,
        "bot": options.bot,
        "matches": options.matches,
        "fast_rtt_ms": options.fast_rtt_ms,
        "slow_rtt_ms": options.slow_rtt_ms,
        "contested_plays": contested,
        "fast_wins": fast_wins,
        "slow_wins": slow_wins,
        "fast_share": round(fast_wins / contested, 3) if contested else None,
        "fast_share_95": [round(low, 3), round(high, 3)],
        "gap_ms_median": statistics.median(gaps) if gaps else None,
        "gap_ms_deciles": statistics.quantiles(gaps, n=10) if len(gaps) > 1 else None,
        "decided_within_rtt_spread": within_spread,
        "projected_fast_share": {
            f"{rule}, W={window} ms": projected_share(contests, window, spread if shift else 0)
            for rule, shift in (("window", False), ("window on corrected arrivals", True))
            for window in options.windows_ms
        },
        "seconds": round(time.monotonic() - started, 1),
    }
    print(
        f"{contested} contested plays in {options.matches} matches: the "
        f"{options.fast_rtt_ms} ms seat won {fast_wins} ({result['fast_share']}, 95 % "
        f"{low:.3f}-{high:.3f}), the {options.slow_rtt_ms} ms seat {slow_wins}; "
        f"{within_spread} decided by less than the {spread} ms spread",
        file=sys.stderr,
    )
    for rule, share in result["projected_fast_share"].items():
        print(f"  projected, a draw within a {rule}: the fast seat's {share}", file=sys.stderr)
    publish(result, options.json_out)


if __name__ == "__main__":
    main()
