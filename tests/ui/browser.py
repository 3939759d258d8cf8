"""Real Chromium for the UI tests: Debian's ``chromium`` driven by Playwright for Python (no browser download)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

CHROMIUM = "/usr/bin/chromium"
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def chromium_path() -> str:
    path = CHROMIUM if Path(CHROMIUM).exists() else shutil.which("chromium")
    assert path, "the browser tests need Debian's chromium: apt-get install -y chromium (see docs/ui.md)"
    return path


@contextmanager
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        instance = playwright.chromium.launch(executable_path=chromium_path(), headless=True, args=ARGS)
        try:
            yield instance
        finally:
            instance.close()


def log_in(page: Any, base_url: str, user: str, password: str) -> None:
    """The simple auth manager's login form, as a person fills it in."""
    page.goto(f"{base_url}/auth/login/")
    page.get_by_label("Username").fill(user)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(lambda url: "/auth/login" not in url, timeout=60_000)
