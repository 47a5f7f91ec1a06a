"""Headless Chromium for the browser tests.

The tests drive the machine's own Chromium through Playwright (no browser download). When
either is missing they skip and say what to install; CI installs Debian's ``chromium``.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

#: Flags for a closed network: no background requests, no sandbox when running as root.
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run",
                 "--disable-quic"]


def chromium_path() -> str | None:
    """``$ACCORDKIT_CHROMIUM``, else the first Chromium found on PATH."""
    if os.environ.get("ACCORDKIT_CHROMIUM"):
        return os.environ["ACCORDKIT_CHROMIUM"]
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


@pytest.fixture(scope="module")
def browser() -> Iterator:
    """A headless Chromium for one test module (skips with the reason).

    Module scope, not session: Playwright's sync API keeps an asyncio loop running in the
    main thread while it is open, and code under test elsewhere (``ak.judge``) rightly
    refuses ``asyncio.run`` inside a running loop.
    """
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("playwright is not installed (it is in accordkit's dev extra: "
                    "`make setup`)")
    path = chromium_path()
    if path is None:
        pytest.skip("no Chromium on this machine: install it (Debian: `apt-get install -y "
                    "chromium`) or set ACCORDKIT_CHROMIUM to its path")
    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=path, args=CHROMIUM_ARGS)
        try:
            yield b
        finally:
            b.close()


class PageVisit:
    """One page opened in the browser: console messages and failed requests it caused."""

    def __init__(self, browser, url: str, *, viewport=(1280, 900)) -> None:
        self.page = browser.new_page(viewport={"width": viewport[0], "height": viewport[1]})
        self.console: list[tuple[str, str]] = []
        self.failed: list[str] = []
        self.page.on("console", lambda m: self.console.append((m.type, m.text)))
        self.page.on("pageerror", lambda e: self.console.append(("pageerror", str(e))))
        self.page.on("requestfailed", lambda r: self.failed.append(r.url))
        self.page.goto(url, wait_until="load")

    @property
    def errors(self) -> list[tuple[str, str]]:
        return [m for m in self.console if m[0] in ("error", "pageerror")]

    def screenshot(self, path: Path) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.page.screenshot(path=str(path), full_page=True)
        return path

    def close(self) -> None:
        self.page.close()


@pytest.fixture
def visit(browser):
    """Open pages in the shared browser; each is closed after the test."""
    pages: list[PageVisit] = []

    def _open(url: str, **kw) -> PageVisit:
        pages.append(PageVisit(browser, url, **kw))
        return pages[-1]

    yield _open
    for p in pages:
        p.close()
