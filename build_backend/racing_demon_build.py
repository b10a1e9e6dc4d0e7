"""The PEP 517 backend: setuptools' own, asking for mypy only when the build compiles.

``RACING_DEMON_USE_MYPYC=1 pip install .`` compiles the hot modules with mypyc (setup.py
lists them), so pip's isolated build environment needs mypy then, and only then: a plain
``pip install .`` stays pure Python, downloads no mypy and needs no C compiler.
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path

from setuptools import build_meta as _setuptools
from setuptools.build_meta import *  # noqa: F403  (the rest of the hooks, unchanged)

# mypyc ships inside the mypy distribution. mypy type-checks what it compiles as strictly as
# CI does, so it sees the runtime dependencies' types too (and the stubs CI uses).
MYPYC_REQUIREMENTS = ["mypy>=1.10", "types-jsonschema"]


VARIABLE = "RACING_DEMON_USE_MYPYC"


def get_requires_for_build_wheel(
    config_settings: dict[str, str | list[str]] | None = None,
) -> list[str]:
    compiling = os.environ.get(VARIABLE) == "1"
    # setuptools runs setup.py to collect its own requirements; it runs there without the
    # variable, as mypy is not installed yet (this hook is what asks for it).
    variable = os.environ.pop(VARIABLE, None)
    try:
        requires = _setuptools.get_requires_for_build_wheel(config_settings)
    finally:
        if variable is not None:
            os.environ[VARIABLE] = variable
    if not compiling:
        return requires
    project = tomllib.loads(Path("pyproject.toml").read_text(encoding="utf-8"))["project"]
    return [*requires, *MYPYC_REQUIREMENTS, *project["dependencies"]]
