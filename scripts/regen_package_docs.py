"""Copy the README and docs/*.md into the package, src/racing_demon/docs/.

Usage: ``python scripts/regen_package_docs.py [--check]``. ``racing-demon docs`` prints
these copies (racing_demon.manual), so that an installed package carries its own
documentation. The repository's files are the ones to edit; this script copies them and
removes a copy whose original is gone. With ``--check`` nothing is written and the exit
status is 1 if any copy differs, is missing or is stale.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGED = ROOT / "src" / "racing_demon" / "docs"


def originals() -> dict[str, bytes]:
    """Each shipped guide's file name in the package, and its bytes in the repository."""
    files = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    return {path.name: path.read_bytes() for path in files}


def differences() -> list[str]:
    """What the package's copies lack or hold besides the originals, one line each."""
    wanted = originals()
    present = {path.name: path.read_bytes() for path in PACKAGED.glob("*.md")}
    found = [f"{name}: missing" for name in sorted(wanted.keys() - present.keys())]
    found += [f"{name}: stale (no original)" for name in sorted(present.keys() - wanted.keys())]
    found += [
        f"{name}: differs from the original"
        for name in sorted(wanted.keys() & present.keys())
        if wanted[name] != present[name]
    ]
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only compare; exit 1 on a change")
    args = parser.parse_args()
    if args.check:
        found = differences()
        for line in found:
            print(f"src/racing_demon/docs/{line}", file=sys.stderr)
        if found:
            print("run: python scripts/regen_package_docs.py", file=sys.stderr)
        return 1 if found else 0
    wanted = originals()
    PACKAGED.mkdir(exist_ok=True)
    for stale in PACKAGED.glob("*.md"):
        if stale.name not in wanted:
            stale.unlink()
    for name, data in wanted.items():
        target = PACKAGED / name
        if not target.is_file() or target.read_bytes() != data:
            target.write_bytes(data)
    return 0


if __name__ == "__main__":
    sys.exit(main())
