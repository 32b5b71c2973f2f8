"""Headless Chromium driven by Selenium, from Debian's ``chromium`` and ``chromium-driver``
(``scripts/setup.sh`` installs them). Missing, the console tests fail and say so."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from selenium import webdriver
from selenium.webdriver.chrome.service import Service

CHROMIUM = "/usr/bin/chromium"
DRIVER = "/usr/bin/chromedriver"
INSTALL = "apt-get install chromium chromium-driver (or: make setup)"


@contextmanager
def chromium() -> Iterator[webdriver.Chrome]:
    """A headless Chromium at 1400×1000 on a profile of its own, removed after;
    AssertionError naming the install when missing."""
    for binary in (CHROMIUM, DRIVER):
        assert Path(binary).exists() or shutil.which(Path(binary).name), (
            f"{binary} is missing: the console tests need a real browser; {INSTALL}"
        )
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for argument in (
        "--headless=new",
        "--no-sandbox",  # as root in a container
        "--disable-dev-shm-usage",
        "--disable-gpu",
        "--window-size=1400,1000",
        "--no-first-run",
        "--disable-extensions",
    ):
        options.add_argument(argument)
    profile = tempfile.mkdtemp(prefix="kyma-chromium-")
    options.add_argument(f"--user-data-dir={profile}")
    try:
        driver = webdriver.Chrome(options=options, service=Service(executable_path=DRIVER))
        try:
            driver.set_script_timeout(30)
            yield driver
        finally:
            driver.quit()
    finally:
        shutil.rmtree(profile, ignore_errors=True)


def screenshot(driver: webdriver.Chrome, name: str) -> Path:
    """The page now, as a PNG in a temporary folder (its path goes in the failure)."""
    folder = Path(tempfile.mkdtemp(prefix="kyma-console-failure-"))
    path = folder / f"{name}.png"
    driver.save_screenshot(str(path))
    (folder / f"{name}.html").write_text(driver.page_source)
    return path
