"""The optional compiled build. Issue 33, point 4: "`RACING_DEMON_USE_MYPYC=1 pip install .`
builds the hot modules ... with mypyc; plain `pip install .` stays pure Python and needs no C
compiler", and "`.ci/run` builds it once, asserts the compiled modules are loaded (their
`__file__` ends in `.so`)". .ci/run sets RACING_DEMON_EXPECT_COMPILED=1 when it runs these
tests against that build; the pure run checks the build's recipe and the pickling it needs.
"""

from __future__ import annotations

import ast
import importlib
import json
import os
import pickle
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from racing_demon.log.reader import Limits
from racing_demon.verify.settings import Settings

ROOT = Path(__file__).resolve().parents[1]
VARIABLE = "RACING_DEMON_USE_MYPYC"


def compiled_paths() -> list[str]:
    """The files setup.py hands to mypyc (its ``COMPILED`` list), read without running it."""
    tree = ast.parse((ROOT / "setup.py").read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(target, ast.Name) and target.id == "COMPILED" for target in node.targets
        ):
            value = ast.literal_eval(node.value)
            assert isinstance(value, list)
            return [str(path) for path in value]
    raise AssertionError("setup.py has no COMPILED list")


def module_name(path: str) -> str:
    return path.removeprefix("src/").removesuffix(".py").replace("/", ".")


def build_requirements(compiling: bool) -> list[str]:
    """What the in-tree build backend asks pip to install before building a wheel, asked as
    pip asks it: in a process of its own, from the project's root."""
    environment = {key: value for key, value in os.environ.items() if key != VARIABLE}
    if compiling:
        environment[VARIABLE] = "1"
    environment["PYTHONPATH"] = str(ROOT / "build_backend")
    hook = (
        "import json, racing_demon_build as backend;"
        "print(json.dumps(backend.get_requires_for_build_wheel()))"
    )
    done = subprocess.run(
        [sys.executable, "-W", "ignore", "-c", hook],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
        check=True,
    )
    requirements = json.loads(done.stdout.splitlines()[-1])
    assert isinstance(requirements, list)
    return [str(requirement) for requirement in requirements]


def test_every_file_the_build_compiles_is_a_module_of_the_package() -> None:
    paths = compiled_paths()
    assert paths, "the compiled build compiles nothing"
    for path in paths:
        assert (ROOT / path).is_file(), f"setup.py compiles {path}, which does not exist"
        assert path.startswith("src/racing_demon/")


@pytest.mark.slow  # runs setuptools' build hooks in a child process
def test_a_plain_build_asks_for_no_mypy_and_a_compiled_one_does() -> None:
    """Plain `pip install .` needs no mypy (nor a C compiler); with the variable set, pip's
    isolated build gets mypy and what it type-checks against (the runtime dependencies)."""
    pytest.importorskip("setuptools", reason="the backend runs where setuptools is installed")
    plain = build_requirements(compiling=False)
    assert not [requirement for requirement in plain if requirement.startswith("mypy")]
    compiled = build_requirements(compiling=True)
    assert [requirement for requirement in compiled if requirement.startswith("mypy")]
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert set(project["dependencies"]) <= set(compiled)


def test_settings_with_their_limits_survive_pickling() -> None:
    """ "`Limits`/`Settings` stop unpickling, which breaks `verify --jobs`": the settings go to
    every worker process, so they round-trip through pickle in either build."""
    settings = Settings(fast=True, limits=Limits(max_records=5, max_depth=7))
    restored = pickle.loads(pickle.dumps(settings))
    assert restored == settings
    assert restored.limits == Limits(max_records=5, max_depth=7)


@pytest.mark.skipif(
    os.environ.get("RACING_DEMON_EXPECT_COMPILED") != "1",
    reason="runs against the compiled build (.ci/run sets RACING_DEMON_EXPECT_COMPILED=1)",
)
def test_the_compiled_modules_are_the_ones_imported() -> None:
    source = ROOT / "src"
    for path in compiled_paths():
        module = importlib.import_module(module_name(path))
        where = Path(module.__file__ or "")
        assert where.suffix == ".so", f"{module.__name__} is not compiled: {where}"
        assert not where.is_relative_to(source), f"{module.__name__} comes from the src tree"
