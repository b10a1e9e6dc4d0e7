"""The README's promises stay true: its first section's commands and its library example."""

from __future__ import annotations

import contextlib
import io
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

README = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")


def test_first_section_holds_exactly_the_two_commands() -> None:
    first_section = README.split("\n## ", 1)[0]
    blocks = re.findall(r"```sh\n(.*?)```", first_section, flags=re.DOTALL)
    assert len(blocks) == 1
    commands = blocks[0].strip().splitlines()
    assert len(commands) == 2
    assert commands[0].startswith("pip install . && racing-demon ")
    assert commands[1] == "pip install -e '.[test]' && python -m pytest"


def test_library_example_runs_and_prints_what_it_says() -> None:
    block = re.search(r"```python\n(.*?)```", README, flags=re.DOTALL)
    assert block is not None
    code = block.group(1)
    expected = [line.removeprefix("# ") for line in code.splitlines() if line.startswith("# ")]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "README.md", "exec"), {})
    assert out.getvalue().splitlines() == expected


@pytest.mark.slow
def test_the_tournament_walkthrough_runs_as_printed(tmp_path: Path) -> None:
    """Issue 19: "an organiser can plan, run, verify and score a tournament from the
    README's instructions alone": the section's commands, run as printed in a new folder."""
    section = README.split("\n## A duplicate tournament", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```sh\n(.*?)```", section, flags=re.DOTALL)
    assert block is not None
    python = shlex.quote(sys.executable)
    script = f'set -euo pipefail\nracing-demon() {{ {python} -m racing_demon "$@"; }}\n'
    done = subprocess.run(
        ["bash", "-c", script + block.group(1)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "4 of 4 scored from 4 logs" in done.stdout
    assert (tmp_path / "standings.html").is_file() and (tmp_path / "sheets.html").is_file()
    assert sorted(path.name for path in (tmp_path / "logs").iterdir()) == [
        f"table-{table}.jsonl" for table in range(1, 5)
    ]
