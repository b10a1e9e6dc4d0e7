"""SIGKILL at random moments: the server killed mid-match and started again on its data
folder, the clients reconnect and catch up, the match ends, and no receipt a client got
before a kill names a record the log lost.

Issue 31: "Killed at any moment (SIGKILL), the server loses no record whose receipt was
sent: on restart every unfinished table resumes (`Table.resume`), clients reconnect and
catch up from the last `seq` they hold, and `audit --receipts` of every seat's receipts
against the log is clean." Issue 35: "1,000 random `kill -9` runs lose 0 acknowledged
submissions (bounded in count and time in a slow test; fewer runs in the default test
run)": the default run kills twice, the slow run 60 times, and
``scripts/serve_kill_trials.py --kills 1000`` makes the thousand (tests/serve/kill_runs.py).
"""

from __future__ import annotations

import asyncio
import secrets
from pathlib import Path

import pytest

from .kill_runs import kill_runs
from .server import needs_server, running_server

pytestmark = [needs_server]


def killed(tmp_path: Path, kills: int) -> None:
    seed = secrets.randbits(32)
    with running_server(tmp_path) as server:
        tally = asyncio.run(kill_runs(server, tmp_path, seed, kills))
    restarts = sorted(tally.restart_s)
    print(
        f"seed {seed}: {tally.kills} kills in {tally.matches} matches, "
        f"{tally.receipts_checked} receipts held before a kill found in the logs; "
        f"restart (start to listening) median {restarts[len(restarts) // 2]:.2f} s, "
        f"max {restarts[-1]:.2f} s"
    )
    assert tally.kills == kills, seed


def test_killed_twice_mid_match_the_server_loses_no_acknowledged_record(tmp_path: Path) -> None:
    killed(tmp_path, 2)


@pytest.mark.slow
def test_killed_sixty_times_the_server_loses_no_acknowledged_record(tmp_path: Path) -> None:
    killed(tmp_path, 60)
