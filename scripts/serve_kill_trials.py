"""Kill ``racing-demon serve`` with SIGKILL, again and again, while keyed players play on,
and check that no acknowledged submission was lost (issue 35, point 3: "1,000 random
`kill -9` runs lose 0 acknowledged submissions").

Usage: ``python scripts/serve_kill_trials.py [--kills 1000] [--seed S] [--keep DIR]``

The runs are tests/serve/kill_runs.py's: matches one after another, each through up to
eight kills at random moments, each checked as it ends (every receipt a client held before
a kill names the record its log holds; the log, the receipts and the copies verify and
audit clean). A failed check stops the run with its assertion (exit 1). Progress goes to
standard error, the summary to standard output. The slow test makes 60 of these kills.
"""

from __future__ import annotations

import argparse
import asyncio
import secrets
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.serve.kill_runs import KillTally, kill_runs  # noqa: E402
from tests.serve.server import running_server  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kills", type=int, default=1000, help="SIGKILLs in all")
    parser.add_argument("--seed", type=int, default=None, help="when to kill (default: random)")
    parser.add_argument("--keep", type=Path, help="keep the data folder and downloads here")
    options = parser.parse_args()
    seed = secrets.randbits(32) if options.seed is None else options.seed
    began = time.monotonic()

    def progress(tally: KillTally) -> None:
        print(
            f"{tally.kills} kills, {tally.matches} matches, {time.monotonic() - began:.0f} s",
            file=sys.stderr,
        )

    with tempfile.TemporaryDirectory() as scratch:
        folder = options.keep or Path(scratch)
        with running_server(folder) as server:
            tally = asyncio.run(kill_runs(server, folder, seed, options.kills, progress))
    restarts = sorted(tally.restart_s)
    print(
        f"seed {seed}: {tally.kills} SIGKILLs in {tally.matches} matches "
        f"({time.monotonic() - began:.0f} s); 0 acknowledged submissions lost: every match "
        f"verified and audited clean, {tally.receipts_checked} receipts held at a match's last "
        f"kill each found in its log; restart to listening: median "
        f"{restarts[len(restarts) // 2]:.2f} s, p95 {restarts[int(len(restarts) * 0.95)]:.2f} s, "
        f"max {restarts[-1]:.2f} s"
    )


if __name__ == "__main__":
    main()
