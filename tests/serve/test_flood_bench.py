"""bench/serve_bench.py --flood measures what it says: a seat that floods.

Its flooding seat once signed its entropy contribution in the log's format instead of the
entropy statement's own (docs/log-format.md §5), was refused with BAD_SIGNATURE, and the
measured window opened without it: the 50-table figure was of a flood of 0 frames a second.
Nothing failed, so nothing showed it; this small run would have.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench" / "serve_bench.py"


@pytest.mark.slow
def test_the_flooding_seat_floods_in_the_measured_window(tmp_path: Path) -> None:
    figures = tmp_path / "flood.json"
    small = ["--tables", "1", "--seconds", "2", "--flood", "200", "--light"]
    done = subprocess.run(
        [sys.executable, BENCH, *small, "--data-parent", tmp_path, "--json-out", figures],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    quiet, flooded = json.loads(figures.read_text())["runs"]
    assert not quiet["flood"] and "flood_frames_per_s" not in quiet
    assert flooded["flood"] and flooded["flood_frames_per_s"] > 0, flooded
    assert flooded["flood_errors"] == 0 and not flooded["flood_closed_early"], flooded
    # Numbered past anything logged, each frame is refused by the table or the rate limit
    # (10 a second, bursts of 20), always with a receipt. Whether the burst's WRONG_NUMBERs
    # fall in the window depends on when it opens; once in debt the seat gets none for seconds.
    reasons = flooded["flood_reasons"]
    assert set(reasons) <= {"WRONG_NUMBER", "RATE_LIMITED"}
    assert reasons["RATE_LIMITED"] > reasons.get("WRONG_NUMBER", 0)
