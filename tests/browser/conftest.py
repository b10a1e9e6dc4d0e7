"""A real headless Chromium for the viewer's tests, driven through its system ChromeDriver.

`.ci/run` installs Debian's chromium and chromium-driver and runs these tests with
``python -m pytest -m browser``. On a machine without them the tests are skipped with the
command that installs them, except under CI (``CI`` set), where a missing browser fails
the run: CI never passes by skipping the browser.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# What a test run writes for a reviewer to look at (a screenshot, say); never committed.
ARTIFACTS = Path(os.environ.get("RD_ARTIFACTS", ROOT / "build" / "browser"))

# Chromium's own network chatter is refused on a closed network, and as root it needs
# --no-sandbox; a fresh profile per session keeps runs independent.
CHROMIUM_FLAGS = (
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--window-size=1280,900",
)


def _find(variable: str, *names: str) -> str | None:
    chosen = os.environ.get(variable)
    if chosen:
        return chosen if Path(chosen).exists() else None
    for name in names:
        found = shutil.which(name)
        if found:
            return found
    return None


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    for item in items:
        if here in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.browser)


@pytest.fixture(scope="session")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    """A Selenium WebDriver on headless Chromium, shared by the session's tests."""
    webdriver = pytest.importorskip("selenium.webdriver")
    from selenium.webdriver.chrome.service import Service

    binary = _find("RD_CHROMIUM", "chromium", "chromium-browser")
    driver_path = _find("RD_CHROMEDRIVER", "chromedriver")
    if binary is None or driver_path is None:
        missing = "apt-get install chromium chromium-driver (Debian's browser and its driver)"
        if os.environ.get("CI"):
            pytest.fail(f"the browser tests need a browser under CI: {missing}")
        pytest.skip(missing)
    options = webdriver.ChromeOptions()
    options.binary_location = binary
    for flag in CHROMIUM_FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={tmp_path_factory.mktemp('chromium-profile')}")
    driver = webdriver.Chrome(options=options, service=Service(driver_path))
    try:
        yield driver
    finally:
        driver.quit()


@pytest.fixture(scope="session")
def artifacts() -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS
