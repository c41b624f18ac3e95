"""A headless system Chromium (through playwright) for the report's browser tests."""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_llmjudge.reporting.html import write_report

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def chromium_path() -> str | None:
    found = shutil.which("chromium")
    if found:
        return found
    return "/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None


@pytest.fixture(scope="module")  # playwright holds the running event loop while it lives
def browser() -> Iterator[Browser]:
    executable = chromium_path()
    if executable is None:
        pytest.skip("no chromium browser installed (apt-get install chromium)")
    sync_api = pytest.importorskip("playwright.sync_api")
    playwright = sync_api.sync_playwright().start()
    try:
        launched = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        yield launched
        launched.close()
    finally:
        playwright.stop()


@dataclass
class OpenedReport:
    page: Page
    problems: list[str] = field(default_factory=list)  # console errors and uncaught page errors


@pytest.fixture
def open_report(browser: Browser, tmp_path: Path) -> Iterator[Callable[..., OpenedReport]]:
    """Write a report, open it from a file:// URL and wait for its case rows."""
    pages: list[Page] = []

    def opener(results: dict[str, Any], baseline: dict[str, Any] | None = None) -> OpenedReport:
        path = write_report(results, tmp_path / f"report-{len(pages)}.html", baseline)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        pages.append(page)
        opened = OpenedReport(page)
        page.on(
            "console",
            lambda message: (
                opened.problems.append(f"console: {message.text}") if message.type == "error" else None
            ),
        )
        page.on("pageerror", lambda error: opened.problems.append(f"page error: {error}"))
        page.goto(path.as_uri(), wait_until="load")
        page.wait_for_selector("body[data-ready]", timeout=10_000)
        return opened

    yield opener
    for page in pages:
        page.close()
