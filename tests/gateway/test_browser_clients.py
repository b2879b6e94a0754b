"""The stock clients in a real browser (issue 14, "Tests in a real browser"): pages bundled at
test time from the pinned ``@ag-ui/client`` 1.0.0 and ``ai`` 7 (the pages of ``examples/``,
esbuild), in headless Chromium, against a live gateway (uvicorn, port 0) whose upstream is a
scripted OpenAI Chat endpoint the test holds at a gate and that records disconnects.

* a run, the page reloaded mid-stream (the connection cut), the reloaded page loads the history
  and resumes: its final messages equal those of an uninterrupted run, nothing twice, and the
  upstream was called once per run (``HttpAgent`` re-join; ``ai`` ``resumeStream``);
* a connection cut mid-stream (a proxy drops it): ``HttpAgent``'s app calls ``runAgent`` again
  with the same ``runId`` and ends with the same messages;
* Stop in the ``ai`` chat (``stop()`` + ``DELETE .../stream``) and in the ``HttpAgent`` page
  (``abortRun()`` + the cancel endpoint) cancels the upstream request: the scripted upstream
  sees the gateway hang up.

Each final page is kept as a screenshot in ``artifacts``.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from browser_gateway import (
    CuttableProxy,
    Script,
    ScriptedUpstream,
    bundle,
    serve_gateway,
    serve_pages,
)

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "replicas"))  # durable_support

from durable_support import chat_events

pytestmark = pytest.mark.timeout(180)

TURN = chat_events(
    text=["The ", "weather ", "in ", "Paris ", "is ", "sunny."],
    tool=("c1", "weather", ['{"ci', 'ty": ', '"Paris"}']),
)
GATE_AT = 4  # the upstream stops after the role chunk and three text deltas


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("pages")
    bundle("agui-httpagent", folder)
    bundle("ai-chat", folder)
    return folder


@pytest.fixture
def live(pages: Path, tmp_path: Path) -> Iterator[tuple[ScriptedUpstream, str, str]]:
    """(upstream, gateway URL, page site origin)."""
    with ScriptedUpstream() as upstream, serve_pages(pages) as site:
        with serve_gateway(tmp_path, upstream.base_url, cors_origin=site) as gateway:
            yield upstream, gateway, site


def normalized(value: Any, ids: dict[str, str] | None = None) -> Any:
    """``value`` with every id (``id``, ``toolCallId``, ``messageId``) replaced by its order of
    first appearance and the gateway's run names (``metadata``) left out: two runs of one
    script compare equal when their messages have the same shape and content."""
    ids = {} if ids is None else ids
    if isinstance(value, list):
        return [normalized(v, ids) for v in value]
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for key, item in value.items():
            if key == "metadata":
                continue
            if key in ("id", "toolCallId", "messageId") and isinstance(item, str):
                out[key] = ids.setdefault(item, f"id{len(ids)}")
            else:
                out[key] = normalized(item, ids)
        return out
    return value


async def wait_for(page: Any, condition: str, timeout_ms: int = 30_000) -> None:
    try:
        await page.wait_for_function(condition, timeout=timeout_ms)
    except Exception as exc:
        raise AssertionError(f"{condition!r} not reached: {page.console_lines}") from exc


async def opened(script: Script) -> None:
    assert await asyncio.to_thread(script.reached.wait, 20), "the upstream was not called"


async def test_httpagent_reloaded_mid_run_rejoins_and_ends_with_the_uninterrupted_messages(
    browser_page: Any, artifacts: Path, live: tuple[ScriptedUpstream, str, str]
) -> None:
    upstream, gateway, site = live
    page = browser_page
    # an uninterrupted run
    upstream.queue(Script(TURN))
    await page.goto(f"{site}/agui-httpagent/index.html?gateway={gateway}&thread=whole")
    await page.evaluate(
        "async () => { await window.app.ready; await window.app.send('hi', 'r1'); }"
    )
    assert await page.evaluate("window.app.error") is None, page.console_lines
    whole = await page.evaluate("window.app.messages()")
    await page.screenshot(path=str(artifacts / "httpagent-uninterrupted.png"))
    # the same run, the page reloaded while the upstream is held mid-stream
    held = upstream.queue(Script(TURN, gate_at=GATE_AT))
    await page.goto(f"{site}/agui-httpagent/index.html?gateway={gateway}&thread=cut")
    await page.evaluate("async () => { await window.app.ready; window.app.send('hi', 'r1'); }")
    await opened(held)
    await wait_for(page, "document.getElementById('status').textContent === 'ready'", 5_000)
    await asyncio.sleep(0.5)  # the first deltas reach the page
    await page.reload()  # the connection is cut; the run goes on upstream
    await page.evaluate("async () => { await window.app.ready; window.app.resume(); }")
    await asyncio.sleep(0.5)  # re-joined: the prelude is in, the tail is live
    held.gate.set()
    await wait_for(page, "window.app.done")
    resumed = await page.evaluate("window.app.messages()")
    await page.screenshot(path=str(artifacts / "httpagent-reloaded.png"))
    assert len(upstream.requests) == 2  # one upstream call per run: the re-join spent nothing
    assert not held.disconnected.is_set()  # GATEWAY_ON_DISCONNECT=continue
    assert normalized(resumed) == normalized(whole)
    assert len({m["id"] for m in resumed}) == len(resumed)  # nothing twice
    assert any(m.get("toolCalls") for m in resumed)


async def test_httpagent_cut_mid_run_rejoins_in_the_page_and_ends_with_the_same_messages(
    browser_page: Any, artifacts: Path, live: tuple[ScriptedUpstream, str, str]
) -> None:
    """The connection is cut mid-stream (a proxy between page and gateway drops it):
    ``runAgent`` rejects, the app calls it again with the same ``runId`` (README "From the
    frontend") and the re-join completes the messages it held, nothing twice."""
    upstream, gateway, site = live
    page = browser_page
    upstream.queue(Script(TURN))
    await page.goto(f"{site}/agui-httpagent/index.html?gateway={gateway}&thread=whole")
    await page.evaluate(
        "async () => { await window.app.ready; await window.app.send('hi', 'r1'); }"
    )
    whole = await page.evaluate("window.app.messages()")
    held = upstream.queue(Script(TURN, gate_at=GATE_AT))
    host, port = gateway.removeprefix("http://").split(":")
    with CuttableProxy((host, int(port))) as proxy:
        await page.goto(f"{site}/agui-httpagent/index.html?gateway={proxy.url}&thread=cut")
        await page.evaluate("async () => { await window.app.ready; window.app.send('hi', 'r1'); }")
        await opened(held)
        await wait_for(page, "window.app.messages().some(m => m.role === 'assistant')")
        proxy.cut()
        await wait_for(page, "window.app.cuts > 0")
        await asyncio.sleep(1.5)  # the app retried and re-joined
        held.gate.set()
        await wait_for(page, "window.app.done")
    resumed = await page.evaluate("window.app.messages()")
    await page.screenshot(path=str(artifacts / "httpagent-cut.png"))
    assert len(upstream.requests) == 2
    assert normalized(resumed) == normalized(whole)
    assert len({m["id"] for m in resumed}) == len(resumed)


async def test_ai_chat_reloaded_mid_run_resumes_with_the_uninterrupted_messages(
    browser_page: Any, artifacts: Path, live: tuple[ScriptedUpstream, str, str]
) -> None:
    upstream, gateway, site = live
    page = browser_page
    upstream.queue(Script(TURN))
    await page.goto(f"{site}/ai-chat/index.html?gateway={gateway}&thread=whole")
    await page.evaluate("async () => { await window.app.ready; await window.app.send('hi'); }")
    assert await page.evaluate("window.app.error") is None, page.console_lines
    whole = await page.evaluate("window.app.messages()")
    await page.screenshot(path=str(artifacts / "chat-uninterrupted.png"))
    held = upstream.queue(Script(TURN, gate_at=GATE_AT))
    url = f"{site}/ai-chat/index.html?gateway={gateway}&thread=cut"
    await page.goto(url)
    await page.evaluate("async () => { await window.app.ready; window.app.send('hi'); }")
    await opened(held)
    await asyncio.sleep(0.5)
    await page.goto(url + "&resume=1")  # reload with useChat({ resume: true })
    await wait_for(page, "window.app.chat !== null")  # resumeStream() is under way
    await asyncio.sleep(0.5)
    held.gate.set()
    await wait_for(page, "window.app.done || window.app.error !== null")
    assert await page.evaluate("window.app.error") is None, page.console_lines
    resumed = await page.evaluate("window.app.messages()")
    await page.screenshot(path=str(artifacts / "chat-reloaded.png"))
    assert len(upstream.requests) == 2
    assert normalized(resumed) == normalized(whole)
    assistant = resumed[-1]
    assert assistant["role"] == "assistant"
    texts = [p["text"] for p in assistant["parts"] if p["type"] == "text"]
    assert "".join(texts) == "The weather in Paris is sunny."  # nothing twice
    assert assistant["metadata"]["threadId"] == "cut"


async def test_stop_in_the_ai_chat_cancels_the_upstream_request(
    browser_page: Any, artifacts: Path, live: tuple[ScriptedUpstream, str, str]
) -> None:
    upstream, gateway, site = live
    page = browser_page
    held = upstream.queue(Script(TURN, gate_at=GATE_AT))  # never opened
    await page.goto(f"{site}/ai-chat/index.html?gateway={gateway}&thread=stop")
    await page.evaluate("async () => { await window.app.ready; window.app.send('hi'); }")
    await opened(held)
    await page.evaluate("async () => { await window.app.stop(); }")
    assert await page.evaluate("window.app.stopped") == 200, page.console_lines
    disconnected = await asyncio.to_thread(held.disconnected.wait, 15)
    await page.screenshot(path=str(artifacts / "chat-stopped.png"))
    assert disconnected, "the upstream request was not cancelled"
    runs = await page.evaluate(
        "async (url) => (await fetch(url)).json()",
        f"{gateway}/api/v1/agent/runs?threadId=stop",
    )
    assert [r["status"] for r in runs["runs"]] == ["cancelled"]
    assert runs["runs"][0]["error"]["code"] == "RUN_CANCELED"


async def test_stop_in_the_httpagent_page_cancels_the_upstream_request(
    browser_page: Any, artifacts: Path, live: tuple[ScriptedUpstream, str, str]
) -> None:
    upstream, gateway, site = live
    page = browser_page
    held = upstream.queue(Script(TURN, gate_at=GATE_AT))  # never opened
    await page.goto(f"{site}/agui-httpagent/index.html?gateway={gateway}&thread=stop")
    await page.evaluate("async () => { await window.app.ready; window.app.send('hi', 'r1'); }")
    await opened(held)
    await page.evaluate("async () => { await window.app.stop('r1'); }")
    assert await page.evaluate("window.app.stopped") == 200, page.console_lines
    disconnected = await asyncio.to_thread(held.disconnected.wait, 15)
    await page.screenshot(path=str(artifacts / "httpagent-stopped.png"))
    assert disconnected, "the upstream request was not cancelled"
    runs = await page.evaluate(
        "async (url) => (await fetch(url)).json()",
        f"{gateway}/api/v1/agent/runs?threadId=stop",
    )
    assert [(r["runId"], r["status"]) for r in runs["runs"]] == [("r1", "cancelled")]
