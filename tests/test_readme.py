"""The README's promises stay true: its first section's commands and its library example."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

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
