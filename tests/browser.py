"""Debian's chromium driven by Playwright, for tests of the web pages."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from playwright.sync_api import Locator, Page, sync_playwright

CHROMIUM = "/usr/bin/chromium"
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]


@contextmanager
def browser_page() -> Iterator[Page]:
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        try:
            page = browser.new_page()
            page.set_default_timeout(15000)
            yield page
        finally:
            browser.close()


def log_in(page: Page, base_url: str, username: str, password: str, *, then: str = "/connect/") -> None:
    """Log in through the form, asking to come back to ``then`` (without it, / chooses the page)."""
    page.goto(f"{base_url}/login/?next={then}")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Log in").click()


def menu_link(page: Page, name: str) -> Locator:
    """A link of the main menu, unfolding the menu first on a narrow screen (where it is folded)."""
    toggle = page.locator("label.menu-button")
    if toggle.is_visible() and not page.locator("#menu-toggle").is_checked():
        toggle.click()
    return page.get_by_role("navigation", name="Main").get_by_role("link", name=name, exact=True)
