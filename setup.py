"""Build hook: ``RACING_DEMON_USE_MYPYC=1`` compiles the hot modules with mypyc.

Everything else about the package lives in pyproject.toml; without the variable this file adds
nothing and the wheel is pure Python.
"""

from __future__ import annotations

import os

from setuptools import setup

# The verifier's hot path: the rules core, reading, records, the driver and its steps. Left
# out: game/state.py, because the stall search keeps weak references to its Seat values and a
# mypyc class takes none; everything past verification (reports, CLI, tournament, viewer),
# where compiling gains little and tests instrument more.
COMPILED = [
    "src/racing_demon/game/cards.py",
    "src/racing_demon/game/deal.py",
    "src/racing_demon/game/duplicate.py",
    "src/racing_demon/game/engine.py",
    "src/racing_demon/game/flow.py",
    "src/racing_demon/game/moves.py",
    "src/racing_demon/game/rules.py",
    "src/racing_demon/game/scoring.py",
    "src/racing_demon/game/stall.py",
    "src/racing_demon/game/stuck.py",
    "src/racing_demon/log/canonical.py",
    "src/racing_demon/log/reader.py",
    "src/racing_demon/log/records.py",
    "src/racing_demon/verify/driver.py",
    "src/racing_demon/verify/step01_framing.py",
    "src/racing_demon/verify/step02_canonical.py",
    "src/racing_demon/verify/step03_schema.py",
    "src/racing_demon/verify/step04_chain.py",
    "src/racing_demon/verify/step05_signatures.py",
    "src/racing_demon/verify/step06_secret.py",
    "src/racing_demon/verify/step07_rules.py",
    "src/racing_demon/verify/step08_replay.py",
    "src/racing_demon/verify/step09_scores.py",
    "src/racing_demon/verify/step10_final.py",
]

if os.environ.get("RACING_DEMON_USE_MYPYC") == "1":
    try:
        from mypyc.build import mypycify
    except ImportError as missing:
        # Fail rather than build a pure wheel that was asked to be compiled.
        raise SystemExit(
            "RACING_DEMON_USE_MYPYC=1 needs mypy where the wheel is built: pip install . asks"
            " for it; with --no-build-isolation, install mypy first"
        ) from missing
    ext_modules = mypycify(COMPILED, opt_level="3", debug_level="0")
else:
    ext_modules = []

setup(ext_modules=ext_modules)
