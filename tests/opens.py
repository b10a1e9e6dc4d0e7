"""Counting the files a command opens (issue 30, point 1: "each command opens each log file
once (a test counts the opens with an audit hook, `sys.addaudithook`)").

An audit hook cannot be removed and would outlive the test, so the commands run in a child
process, all of a test's commands in one child: each run's opens are counted apart, to read
and to write or append, for every file, with the run's exit status. A run is the command
line's arguments, or Python code that reads ``arguments``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import racing_demon

COMMAND_LINE = "from racing_demon.cli import main; main.main(arguments, prog_name='racing-demon')"

_CHILD = """
import json, os, sys
runs_file, tally = sys.argv[1:]
opened = {"read": {}, "write": {}}

def hook(event, args):
    if event == "open" and isinstance(args[0], (str, bytes, os.PathLike)):
        flags = args[2] if isinstance(args[2], int) else os.O_RDONLY
        kind = "read" if flags & os.O_ACCMODE == os.O_RDONLY else "write"
        path = os.path.realpath(os.fsdecode(args[0]))
        opened[kind][path] = opened[kind].get(path, 0) + 1

with open(runs_file) as file:
    runs = json.load(file)
sys.addaudithook(hook)
results = []
for run in runs:
    opened["read"], opened["write"] = {}, {}
    status = 0
    try:
        exec(run["code"], {"arguments": run["arguments"]})
    except SystemExit as leaving:
        status = leaving.code
    results.append({"status": status, **opened})
with open(tally, "w") as file:
    json.dump(results, file)
"""


@dataclass(frozen=True)
class Opened:
    """What one run opened: each file's opens to read, and to write or append."""

    status: int
    read: dict[str, int]
    write: dict[str, int]

    def reads(self, path: Path) -> int:
        return self.read.get(os.path.realpath(path), 0)

    def writes(self, path: Path) -> int:
        return self.write.get(os.path.realpath(path), 0)


def count_opens(
    tmp_path: Path,
    runs: Sequence[Sequence[str]],
    *,
    code: str = COMMAND_LINE,
    cwd: Path | None = None,
) -> list[Opened]:
    """Each of ``runs`` (its ``arguments``) run by ``code`` in one child process, in order:
    what each opened."""
    runs_file, tally = tmp_path / "runs.json", tmp_path / "tally.json"
    runs_file.write_text(json.dumps([{"code": code, "arguments": list(run)} for run in runs]))
    # The child imports the racing_demon this test imported.
    package = Path(racing_demon.__file__).parents[1]
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join([str(package), *sys.path])}
    subprocess.run(
        [sys.executable, "-c", _CHILD, str(runs_file), str(tally)],
        check=True,
        capture_output=True,
        env=environment,
        cwd=cwd,
    )
    return [Opened(**result) for result in json.loads(tally.read_text())]


def opens_of(
    tmp_path: Path, *arguments: str, code: str = COMMAND_LINE, cwd: Path | None = None
) -> Opened:
    """What one run opened (``count_opens`` of one)."""
    (opened,) = count_opens(tmp_path, [arguments], code=code, cwd=cwd)
    return opened
