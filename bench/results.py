"""How every bench hands its result on: the JSON on standard output, and in a file too
when ``--json-out`` names one (bench/run.py gathers them so)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def publish(result: dict[str, Any], json_out: Path | None) -> None:
    text = json.dumps(result, indent=2)
    print(text)
    if json_out:
        json_out.parent.mkdir(parents=True, exist_ok=True)
        json_out.write_text(text + "\n")
