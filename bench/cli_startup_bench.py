"""The command line's start: ``racing-demon --help`` and ``--version`` against importing click.

    python bench/cli_startup_bench.py [--rounds 21] [--json-out FILE]

Each is a fresh interpreter, as a shell starts one: ``python -m racing_demon --help``,
``python -m racing_demon --version`` and ``python -c "import click"``, run in interleaved
rounds whose order rotates from round to round. A figure is the CPU time (user + system)
of the child process, from ``resource.getrusage(RUSAGE_CHILDREN)``; a ratio is the median
of the rounds' own ratios, so a machine whose load drifts moves both sides alike.

Target: each costs at most 1.5x importing click (``help_vs_click``, ``version_vs_click``):
the group lists its commands from a table and imports a command's module only when that
command runs (src/racing_demon/cli/__init__.py), so the verifier, the simulator, the
tournaments and the schemas are not paid for by a command that needs none of them. The
cost of ``verify --help`` (one command's module and what it stands on) is reported without
a target.
"""

from __future__ import annotations

import argparse
import platform
import resource
import statistics
import subprocess
import sys
from pathlib import Path

from results import publish

TARGET = 1.5

_COMMANDS = {
    "click": [sys.executable, "-c", "import click"],
    "help": [sys.executable, "-m", "racing_demon", "--help"],
    "version": [sys.executable, "-m", "racing_demon", "--version"],
    "verify_help": [sys.executable, "-m", "racing_demon", "verify", "--help"],
}


def _cpu_seconds(command: list[str]) -> float:
    """The CPU time of one run of ``command``, which must succeed."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def measure(rounds: int = 21) -> dict[str, float]:
    """Milliseconds of CPU per run of each (medians), and each command's ratio to click."""
    order = list(_COMMANDS)
    seconds: dict[str, list[float]] = {name: [] for name in order}
    for name in order:  # a first run of each warms the file cache, and is not counted
        _cpu_seconds(_COMMANDS[name])
    for round_ in range(rounds):
        turn = round_ % len(order)
        for name in order[turn:] + order[:turn]:
            seconds[name].append(_cpu_seconds(_COMMANDS[name]))

    def ratio(name: str) -> float:
        return statistics.median(
            mine / click for mine, click in zip(seconds[name], seconds["click"], strict=True)
        )

    return {
        "rounds": float(rounds),
        **{f"{name}_cpu_ms": statistics.median(seconds[name]) * 1e3 for name in order},
        "help_vs_click": ratio("help"),
        "version_vs_click": ratio("version"),
        "verify_help_vs_click": ratio("verify_help"),
    }


def summary(figures: dict[str, float]) -> str:
    return (
        f"racing-demon --help {figures['help_cpu_ms']:.0f} ms CPU, --version "
        f"{figures['version_cpu_ms']:.0f} ms, import click {figures['click_cpu_ms']:.0f} ms: "
        f"ratios {figures['help_vs_click']:.2f} and {figures['version_vs_click']:.2f} "
        f"(target <= {TARGET}); verify --help {figures['verify_help_cpu_ms']:.0f} ms "
        f"({figures['verify_help_vs_click']:.2f}, no target)"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=21, help="interleaved rounds (default 21)")
    parser.add_argument("--json-out", type=Path, help="also write the JSON result here")
    args = parser.parse_args()
    figures = measure(args.rounds)
    result = {
        "machine": {"python": platform.python_version(), "platform": platform.platform()},
        "startup": figures,
        "target": TARGET,
        "met": max(figures["help_vs_click"], figures["version_vs_click"]) <= TARGET,
    }
    print(summary(figures))
    publish(result, args.json_out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
