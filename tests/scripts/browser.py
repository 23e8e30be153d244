"""A headless Chromium driven by Selenium, for the tests of the HTML pages tcbench writes.

Debian's ``chromium`` and ``chromium-driver`` packages (/usr/bin/chromium, /usr/bin/chromedriver)
are used as installed: Selenium is given both paths, so it never looks for or downloads a browser
of its own (Selenium Manager is not run). The browser starts headless with a fixed viewport
(1280 x 900 CSS pixels unless asked otherwise), no sandbox when running as root (Chromium
refuses to start as root with it), and no network use beyond the file:// pages it opens.

``browser`` is a pytest fixture (one browser per test module); ``screenshot`` saves a PNG under
the build folder (``build/test-artifacts/screenshots/``, or $TCBENCH_ARTIFACTS/screenshots), which
CI keeps as an artefact. Without Chromium the tests skip, naming why; with TCBENCH_REQUIRE_BROWSER=1
(CI) they fail instead.

Use it from a test module with ``from browser import browser, screenshot  # noqa: F401``.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
CHROMIUM = ("/usr/bin/chromium", "/usr/bin/chromium-browser")
CHROMEDRIVER = ("/usr/bin/chromedriver",)
WIDTH, HEIGHT = 1280, 900


class BrowserUnavailable(Exception):
    """Chromium or its driver is missing or does not start; the message says why."""


def _first(paths: tuple[str, ...], name: str) -> str:
    for path in paths:
        if os.access(path, os.X_OK):
            return path
    found = shutil.which(name)
    if found:
        return found
    raise BrowserUnavailable(f"{name} is not installed (apt-get install chromium chromium-driver)")


def start(width: int = WIDTH, height: int = HEIGHT):
    """A headless Chromium whose viewport is exactly width x height CSS pixels."""
    try:
        from selenium import webdriver
        from selenium.common.exceptions import WebDriverException
        from selenium.webdriver.chrome.service import Service
    except ImportError as exc:
        raise BrowserUnavailable(f"selenium is not installed ({exc})") from None
    options = webdriver.ChromeOptions()
    options.binary_location = _first(CHROMIUM, "chromium")
    for arg in ("--headless=new", "--disable-gpu", "--disable-dev-shm-usage",
                "--no-first-run", "--disable-extensions", "--hide-scrollbars",
                f"--window-size={width},{height}", "--force-device-scale-factor=1"):
        options.add_argument(arg)
    if os.geteuid() == 0:
        options.add_argument("--no-sandbox")
    service = Service(executable_path=_first(CHROMEDRIVER, "chromedriver"))
    try:
        driver = webdriver.Chrome(service=service, options=options)
    except WebDriverException as exc:
        why = str(exc.msg or exc).strip()[:300]
        raise BrowserUnavailable(f"Chromium did not start: {why}") from None
    # The window size includes no browser chrome in headless mode, but pin the viewport anyway.
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                           {"width": width, "height": height, "deviceScaleFactor": 1,
                            "mobile": False})
    return driver


def artifacts() -> Path:
    base = Path(os.environ.get("TCBENCH_ARTIFACTS") or REPO / "build" / "test-artifacts")
    folder = base / "screenshots"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def screenshot(driver, name: str, full_page: bool = False, max_height: int = 12000) -> Path:
    """Save what the browser shows as artifacts()/NAME.png; ``full_page`` captures the whole
    page (up to ``max_height`` pixels) instead of the viewport."""
    path = artifacts() / f"{name}.png"
    if full_page:
        size = driver.execute_script("return [document.documentElement.scrollWidth, "
                                     "document.documentElement.scrollHeight]")
        width = driver.execute_script("return window.innerWidth")
        driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                               {"width": width, "height": min(int(size[1]), max_height),
                                "deviceScaleFactor": 1, "mobile": False})
        try:
            driver.save_screenshot(str(path))
        finally:
            driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                                   {"width": width, "height": HEIGHT, "deviceScaleFactor": 1,
                                    "mobile": False})
    else:
        driver.save_screenshot(str(path))
    return path


@pytest.fixture(scope="module")
def browser():
    """A headless Chromium for the module's tests; skips (fails in CI) without one."""
    try:
        driver = start()
    except BrowserUnavailable as exc:
        if os.environ.get("TCBENCH_REQUIRE_BROWSER") == "1":
            pytest.fail(f"no browser and TCBENCH_REQUIRE_BROWSER=1: {exc}")
        pytest.skip(f"no headless Chromium: {exc}")
    try:
        yield driver
    finally:
        driver.quit()
