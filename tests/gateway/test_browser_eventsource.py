"""A browser ``EventSource`` on a run, in headless Chromium (issue 14 item 2): with
``?unnamed=1`` ``onmessage`` receives every event; after the run it reconnects once with its
``Last-Event-ID``, gets ``204`` and stops for good (WHATWG HTML: a status other than 200 fails
the connection). The gateway is a real uvicorn on port 0 serving the embedded demo route; the
page comes from another loopback origin (CORS)."""

from __future__ import annotations

import http.server
import io
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gateway.app import create_app
from gateway.config import Settings
from gateway.server import build_server

PAGE = """<!doctype html><title>EventSource</title><pre id=out>waiting</pre><script>
const gateway = new URLSearchParams(location.search).get('gateway');
window.opens = 0; window.types = []; window.errors = 0;
(async () => {
  const input = {threadId: 'es-t', runId: 'es-r', messages: [{id: 'u1', role: 'user',
    content: 'Weather in Paris?'}], tools: [], context: [], state: null, forwardedProps: {}};
  const created = await fetch(gateway + '/api/v1/agent/runs', {method: 'POST',
    headers: {'content-type': 'application/json'}, body: JSON.stringify({route: 'demo', input})});
  window.created = created.status;
  const source = new EventSource(gateway + '/api/v1/agent/runs/es-t/events?runId=es-r&unnamed=1');
  window.source = source;
  source.onopen = () => { window.opens += 1; };
  source.onmessage = (event) => { window.types.push(JSON.parse(event.data).type);
    document.getElementById('out').textContent = window.types.join('\\n'); };
  source.onerror = () => { window.errors += 1; };
})();
</script>"""


@pytest.fixture
def page_site() -> Iterator[str]:
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = PAGE.encode()
            self.send_response(200)
            self.send_header("content-type", "text/html")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    site = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=site.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{site.server_address[1]}"
    finally:
        site.shutdown()
        site.server_close()


@pytest.fixture
def gateway_url(tmp_path: Path, page_site: str) -> Iterator[str]:
    settings = Settings(
        config=None, database_url=f"sqlite:///{tmp_path}/runs.db", cors_origins=page_site
    )
    srv = build_server(create_app(settings), "127.0.0.1", 0, out=io.StringIO(), log_level="warning")
    thread = threading.Thread(target=srv.run, name="gateway-browser", daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while srv.bound_port is None and thread.is_alive() and time.monotonic() < deadline:
        time.sleep(0.02)
    assert srv.bound_port is not None, "uvicorn did not start"
    try:
        yield f"http://127.0.0.1:{srv.bound_port}"
    finally:
        srv.should_exit = True
        thread.join(30)


@pytest.mark.timeout(120)
async def test_eventsource_hears_every_event_and_stops_after_the_run(
    browser_page: Any, artifacts: Path, page_site: str, gateway_url: str
) -> None:
    page = browser_page
    await page.goto(f"{page_site}/?gateway={gateway_url}")
    await page.wait_for_function("window.types.includes('RUN_FINISHED')", timeout=30_000)
    # the stream closed after the terminal event: the browser reconnects (its retry delay),
    # with Last-Event-ID, gets 204 and closes the source for good
    await page.wait_for_function("window.source.readyState === 2", timeout=30_000)
    await page.wait_for_timeout(4_000)  # longer than a reconnection delay: nothing more
    state = await page.evaluate(
        "({created, opens, errors, types, ready: window.source.readyState})"
    )
    await page.screenshot(path=str(artifacts / "eventsource.png"))
    assert state["created"] == 201, page.console_lines
    assert state["opens"] == 1 and state["ready"] == 2
    types = state["types"]
    assert types[0] == "RUN_STARTED" and types[-1] == "RUN_FINISHED"
    assert types.count("RUN_FINISHED") == 1  # nothing twice
    assert "TEXT_MESSAGE_CONTENT" in types or "TOOL_CALL_ARGS" in types
