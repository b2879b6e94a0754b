"""A real browser for the tests: Debian's Chromium, headless, driven by Playwright.

Playwright drives the system browser (``/usr/bin/chromium``, Debian package ``chromium``, or
``$GATEWAY_CHROMIUM``); no browser is downloaded. Outside CI a test needing it skips with one
reason when Chromium or the ``playwright`` package is missing; under ``CI=true`` it fails
(``.ci/run`` installs Chromium when it is absent, ``make test`` installs Playwright with the dev
extras).

Screenshots and other artifacts go to ``$GATEWAY_TEST_ARTIFACTS`` or ``build/test-artifacts/``
(ignored by git; CI keeps the folder of its copy).

Use::

    async def test_page(browser_page, artifacts):
        await browser_page.goto(url)
        ...
        await browser_page.screenshot(path=artifacts / "page.png")

``browser_page`` is a Playwright ``async_api.Page`` in a fresh context (no shared storage).
Console messages and page errors are kept on ``browser_page.console_lines`` for assertions and
for the failure report.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from corpus import require_service

ROOT = Path(__file__).resolve().parents[2]


def chromium_path() -> str | None:
    """The system Chromium's executable, or None when there is none."""
    configured = os.environ.get("GATEWAY_CHROMIUM")
    if configured:
        return configured if Path(configured).is_file() else None
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    return None


def require_browser() -> str:
    """Skip (locally) or fail (``CI=true``) when Chromium or Playwright is missing."""
    path = chromium_path()
    require_service(path is not None, "Chromium is not installed (Debian package `chromium`)")
    try:
        import playwright.async_api  # noqa: F401
    except ImportError:
        require_service(False, "the playwright package is missing (`make test` installs it)")
    assert path is not None
    return path


def artifacts_dir() -> Path:
    """Folder for screenshots and captures kept after the run."""
    folder = Path(os.environ.get("GATEWAY_TEST_ARTIFACTS") or ROOT / "build" / "test-artifacts")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@pytest.fixture
def artifacts(request: pytest.FixtureRequest) -> Path:
    """A per-test folder under :func:`artifacts_dir`."""
    name = request.node.name.replace("/", "_").replace("[", "_").replace("]", "")
    folder = artifacts_dir() / name
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@pytest.fixture
async def browser_page() -> AsyncIterator[Any]:
    """A page of a headless system Chromium (Playwright async API)."""
    executable = require_browser()
    from playwright.async_api import async_playwright

    async with async_playwright() as pw:
        browser = await pw.chromium.launch(
            executable_path=executable, headless=True, args=["--no-sandbox"]
        )
        try:
            context = await browser.new_context()
            page = await context.new_page()
            lines: list[str] = []
            page.on("console", lambda msg: lines.append(f"console.{msg.type}: {msg.text}"))
            page.on("pageerror", lambda exc: lines.append(f"pageerror: {exc}"))
            page.console_lines = lines
            yield page
        finally:
            await browser.close()
