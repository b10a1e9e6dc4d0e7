"""A headless Chromium for the viewer's browser tests and its benchmark: the system's
chromium through the system's ChromeDriver, driven by selenium (the test extra). No
browser is ever downloaded.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from selenium import webdriver
from selenium.webdriver.chrome.service import Service

# Chromium's own network chatter is refused on a closed network, and as root it needs
# --no-sandbox; each driver gets a profile folder of its own so that runs stay independent.
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


def find_chromium() -> tuple[str, str] | None:
    """The browser and its driver (``RD_CHROMIUM``, ``RD_CHROMEDRIVER`` or the PATH's
    chromium and chromedriver), or None when either is missing."""
    binary = _find("RD_CHROMIUM", "chromium", "chromium-browser")
    driver = _find("RD_CHROMEDRIVER", "chromedriver")
    return None if binary is None or driver is None else (binary, driver)


def headless_chromium(found: tuple[str, str], profile: Path) -> webdriver.Chrome:
    """A WebDriver session on a new headless Chromium with its profile in ``profile``."""
    binary, driver = found
    options = webdriver.ChromeOptions()
    options.binary_location = binary
    for flag in (*CHROMIUM_FLAGS, f"--user-data-dir={profile}"):
        options.add_argument(flag)
    return webdriver.Chrome(options=options, service=Service(driver))
