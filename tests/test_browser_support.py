"""The browser the page tests use is real: headless system Chromium runs the page's script.

``tests/support/browser.py`` gives the ``browser_page`` fixture; this checks that JavaScript
runs, that the fetch API reaches a loopback server of the test, and that a screenshot is kept.
"""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

PAGE = b"""<!doctype html><title>t</title><p id=out>before</p>
<script>fetch('/data').then(r => r.text()).then(t => {
  document.getElementById('out').textContent = 'got ' + t; });</script>"""


@pytest.fixture
def loopback_site() -> Iterator[str]:
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = PAGE if self.path == "/" else b"42"
            self.send_response(200)
            self.send_header("content-type", "text/html" if self.path == "/" else "text/plain")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


async def test_headless_chromium_runs_the_page_script(
    browser_page: Any, artifacts: Path, loopback_site: str
) -> None:
    await browser_page.goto(loopback_site)
    await browser_page.wait_for_function("document.getElementById('out').textContent !== 'before'")
    assert await browser_page.inner_text("#out") == "got 42"
    shot = artifacts / "page.png"
    await browser_page.screenshot(path=str(shot))
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
