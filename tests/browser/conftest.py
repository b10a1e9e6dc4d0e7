"""A real headless Chromium for the viewer's tests, driven through its system ChromeDriver.

`.ci/run` installs Debian's chromium and chromium-driver and runs these tests with
``python -m pytest -m browser``. On a machine without them the tests are skipped with the
command that installs them, except under CI (``CI`` set), where a missing browser fails
the run: CI never passes by skipping the browser.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
# What a test run writes for a reviewer to look at (a screenshot, say); never committed.
ARTIFACTS = Path(os.environ.get("RD_ARTIFACTS", ROOT / "build" / "browser"))


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    for item in items:
        if here in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.browser)


@pytest.fixture(scope="session")
def chromium() -> tuple[str, str]:
    """The system's Chromium and its ChromeDriver: skipped without them, failed under CI."""
    pytest.importorskip("selenium.webdriver")
    from racing_demon.testing.browser import find_chromium

    found = find_chromium()
    if found is None:
        missing = "apt-get install chromium chromium-driver (Debian's browser and its driver)"
        if os.environ.get("CI"):
            pytest.fail(f"the browser tests need a browser under CI: {missing}")
        pytest.skip(missing)
    return found


@contextmanager
def opened_browser(chromium: tuple[str, str], profile: Path) -> Iterator[Any]:
    """A Selenium WebDriver on a new headless Chromium with its profile in ``profile``,
    quit on the way out."""
    from racing_demon.testing.browser import headless_chromium

    driver = headless_chromium(chromium, profile)
    try:
        yield driver
    finally:
        driver.quit()


@pytest.fixture(scope="module")
def browser(chromium: tuple[str, str], tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """A headless Chromium of each test module's own: a page with the engine holds a Pyodide
    of some 400 MiB (a play page loads one in a worker), and a browser shared by the whole
    session crashed its tab ("tab crashed") in a later module about one run in two, failing
    every test after it. A module whose tests each play at a table takes one per test
    (``fresh_browser``)."""
    with opened_browser(chromium, tmp_path_factory.mktemp("chromium-profile")) as driver:
        yield driver


@pytest.fixture
def fresh_browser(chromium: tuple[str, str], tmp_path: Path) -> Iterator[Any]:
    """A headless Chromium of the test's own. A renderer that had played a whole game with
    the engine crashed its tab ("tab crashed", a renderer crash with WebAssembly loaded) when a
    later test in the same browser left a play page (test_play_page.py: CI's run and 2 of
    15 runs here, always at that test's first navigation after the game); in a browser of
    its own, or with no game played before it, that test never crashed (24 runs)."""
    with opened_browser(chromium, tmp_path / "chromium-profile") as driver:
        yield driver


@pytest.fixture(scope="session")
def artifacts() -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS
