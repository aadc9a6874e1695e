"""Debian's chromium, headless, driven by selenium through Debian's chromium-driver: one browser per
test module (a start costs about a second), against a real server."""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

from selenium import webdriver
from selenium.common.exceptions import StaleElementReferenceException, WebDriverException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webelement import WebElement

# Review copies go to a temporary folder; the README's pictures are refreshed on purpose with
# HAUSBOX_SCREENSHOTS=docs/screenshots (a plain test run leaves the checkout clean).
SCREENSHOTS = Path(os.environ.get("HAUSBOX_SCREENSHOTS") or Path(tempfile.gettempdir()) / "hausbox-screenshots").absolute()


def driver_path() -> str | None:
    return shutil.which("chromedriver") or next((p for p in ("/usr/bin/chromedriver", "/usr/lib/chromium/chromedriver") if Path(p).exists()), None)


def chromium_path() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


class Browser:
    def __init__(self, width: int = 1280, height: int = 900):
        options = webdriver.ChromeOptions()
        options.binary_location = chromium_path() or ""
        for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", f"--window-size={width},{height}",
                         "--disable-extensions", "--no-first-run", "--force-color-profile=srgb", "--hide-scrollbars"):
            options.add_argument(argument)
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        # Debian's driver, never one selenium would download (no network needed, the packaged pair matches).
        self.driver = webdriver.Chrome(service=Service(executable_path=driver_path()), options=options)
        self.driver.set_page_load_timeout(20)
        self.base_url = ""
        self.console: list[dict[str, Any]] = []

    def open(self, base_url: str, path: str = "/") -> None:
        self.base_url = base_url
        self.driver.get(base_url + path)

    def go(self, path: str) -> None:
        """A page change the way a user makes it: through the console's own router."""
        self.driver.execute_script("history.pushState(null, '', arguments[0]); dispatchEvent(new PopStateEvent('popstate'))", path)

    def quit(self) -> None:
        self.driver.quit()

    # ---- finding things ----------------------------------------------------------------------------
    def find(self, css: str, timeout: float = 5.0) -> WebElement:
        return self.wait(lambda: self.first(css), timeout, f"no element {css!r}")

    def first(self, css: str) -> WebElement | None:
        found = self.driver.find_elements(By.CSS_SELECTOR, css)
        return found[0] if found and found[0].is_displayed() else None

    def all(self, css: str) -> list[WebElement]:
        return self.driver.find_elements(By.CSS_SELECTOR, css)

    def text(self, css: str) -> str:
        element = self.first(css)
        return element.text if element else ""

    def wait(self, predicate: Callable[[], Any], timeout: float = 5.0, what: str = "condition") -> Any:
        deadline = time.monotonic() + timeout
        while True:
            try:
                value = predicate()
            except (StaleElementReferenceException, WebDriverException):
                value = None  # the page redrew the element between finding and reading it
            if value:
                return value
            if time.monotonic() > deadline:
                raise AssertionError(f"{what} not met within {timeout} s; page: {self.driver.current_url}\n{self.page_text()[:1500]}\nlogs: {self.logs()}")
            time.sleep(0.03)

    def ready(self, timeout: float = 8.0) -> None:
        """The page's data is drawn (main.js sets data-state once the page module has rendered)."""
        self.wait(lambda: self.driver.execute_script("return document.getElementById('app').dataset.state") == "ready", timeout, "page ready")

    def at(self, path: str, timeout: float = 8.0) -> None:
        """On page ``path``, its data drawn: after an action whose outcome is a page change (waiting
        for "ready" alone could see the page that was there before the action)."""
        self.wait(lambda: self.driver.execute_script("return location.pathname") == path, timeout, f"at {path}")
        self.ready(timeout)

    def page_text(self) -> str:
        try:
            return self.driver.find_element(By.TAG_NAME, "body").text
        except WebDriverException:
            return ""

    # ---- acting --------------------------------------------------------------------------------------
    def fill(self, css: str, value: str) -> None:
        element = self.find(css)
        element.clear()
        element.send_keys(value)

    def click(self, css: str) -> None:
        """A real click (by the driver, not a script), with the element scrolled to the middle of
        the window first, as a person would: the sticky header covers the top. A live page may
        render the element again between finding and clicking it (a WebSocket event after the
        answer that changed it): then the new one is found and clicked."""
        for attempt in range(3):
            element = self.find(css)
            try:
                self.driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", element)
                element.click()
                return
            except StaleElementReferenceException:
                if attempt == 2:
                    raise

    def logs(self) -> list[dict[str, Any]]:
        """The browser console's messages since the last call (errors, CSP violations)."""
        self.console += self.driver.get_log("browser")
        return self.console

    def errors(self) -> list[str]:
        return [entry["message"] for entry in self.logs() if entry["level"] == "SEVERE"]

    def screenshot(self, name: str) -> Path:
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        path = SCREENSHOTS / f"{name}.png"
        self.driver.save_screenshot(str(path))
        return path

    def session(self) -> dict[str, Any] | None:
        return self.driver.execute_script("return JSON.parse(localStorage.getItem('hausbox.session'))")
