"""The run inspector in a real browser (headless system Chromium, ``tests/support/browser.py``)
against a live gateway whose AG-UI upstream the test paces (``live_gateway.py``): a live run
appears, grows and ends on the page; a stored violation is highlighted with the kit's rule; a
resume from a cursor shows only the later events; with auth on the page asks for a key.
Screenshots go to the test's ``artifacts`` folder (``build/test-artifacts/<test>/``)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import orjson
from live_gateway import LiveGateway, frame, live_gateway


def expect(locator: Any) -> Any:
    """Playwright's ``expect`` (imported late: without Playwright the browser fixture skips, or
    fails under CI, with its own reason)."""
    from playwright.async_api import expect as playwright_expect

    return playwright_expect(locator)


# The page's Content-Security-Policy forbids eval, so waits are locator assertions (Playwright's
# `expect`, run by its own injected script), never `wait_for_function` with a string.

RESULT = {"id": "A-1001", "status": "paid", "internal": "x"}


def live_script(gates: list[asyncio.Event], thread_id: str, run_id: str) -> list[Any]:
    ids = {"threadId": thread_id, "runId": run_id}
    return [
        frame({"type": "RUN_STARTED", **ids}),
        frame({"type": "TEXT_MESSAGE_START", "messageId": "m1", "role": "assistant"}),
        frame({"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": "Hello"}),
        gates[0],
        frame({"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": " world"}),
        frame({"type": "TEXT_MESSAGE_END", "messageId": "m1"}),
        frame({"type": "TOOL_CALL_START", "toolCallId": "c1", "toolCallName": "get_order"}),
        frame({"type": "TOOL_CALL_ARGS", "toolCallId": "c1", "delta": '{"id": '}),
        frame({"type": "TOOL_CALL_ARGS", "toolCallId": "c1", "delta": '"A-1001"}'}),
        frame({"type": "TOOL_CALL_END", "toolCallId": "c1"}),
        frame(
            {
                "type": "TOOL_CALL_RESULT",
                "messageId": "tr1",
                "toolCallId": "c1",
                "content": orjson.dumps(RESULT).decode(),
            }
        ),
        frame({"type": "STATE_SNAPSHOT", "snapshot": {"count": 1}}),
        frame({"type": "STATE_DELTA", "delta": [{"op": "replace", "path": "/count", "value": 2}]}),
        gates[1],
        frame(
            {
                "type": "RUN_FINISHED",
                **ids,
                "usage": [{"inputTokens": 12, "outputTokens": 7, "model": "agent-model"}],
            }
        ),
    ]


def bad_script(thread_id: str, run_id: str) -> list[Any]:
    ids = {"threadId": thread_id, "runId": run_id}
    return [
        frame({"type": "RUN_STARTED", **ids}),
        # no TEXT_MESSAGE_START: the gateway's normalizer repairs it (text-start-synthesized)
        frame({"type": "TEXT_MESSAGE_CONTENT", "messageId": "m9", "delta": "orphan"}),
        frame({"type": "STATE_SNAPSHOT", "snapshot": {"a": 1}}),
        # a patch that does not apply: legal AG-UI, stored as sent, the client keeps its state
        frame({"type": "STATE_DELTA", "delta": [{"op": "replace", "path": "/b/c", "value": 2}]}),
        frame({"type": "RUN_FINISHED", **ids}),
    ]


async def open_run(page: Any, gw: LiveGateway, thread_id: str, run_id: str) -> None:
    await page.goto(f"{gw.base}/inspect")
    await page.click(f'#threads li[data-thread-id="{thread_id}"]')
    await page.click(f'#runs li[data-run-id="{run_id}"]')


async def ended(page: Any) -> None:
    await expect(page.locator("#stream-status")).to_have_text("ended", timeout=15_000)


async def text_of(page: Any, selector: str) -> str:
    return str(await page.inner_text(selector))


async def test_a_live_run_appears_grows_and_ends(
    browser_page: Any, artifacts: Path, tmp_path: Path
) -> None:
    page = browser_page
    gates = [asyncio.Event(), asyncio.Event()]
    async with live_gateway(tmp_path) as gw:
        await page.goto(f"{gw.base}/inspect")
        await gw.start("t-live", "r-live", live_script(gates, "t-live", "r-live"))
        await page.click('#threads li[data-thread-id="t-live"]', timeout=10_000)
        await page.click('#runs li[data-run-id="r-live"]')
        message = '.msg[data-id="m1"] .text'
        await expect(page.locator(message)).to_have_text("Hello")
        assert await page.locator(f"{message}.open").count() == 1  # still streaming
        assert "running" in await text_of(page, '#runs li[data-run-id="r-live"]')
        await page.screenshot(path=str(artifacts / "1-live-growing.png"), full_page=True)

        gates[0].set()
        await expect(page.locator('.tool[data-id="c1"] .result')).to_contain_text("A-1001")
        assert await text_of(page, message) == "Hello world"
        args = await text_of(page, '.tool[data-id="c1"] .args')
        assert orjson.loads(args) == {"id": "A-1001"}
        # the gateway's ui_hints compiled a surface: a card with the referenced fields only
        surface = page.locator(".surface")
        await surface.wait_for()
        assert "A-1001" in await surface.inner_text() and "paid" in await surface.inner_text()
        assert "internal" not in await surface.inner_text()
        await expect(page.locator("#state")).to_contain_text('"count": 2')
        assert await page.inner_text("#stream-status") == "live"

        gates[1].set()
        await ended(page)
        assert "RUN_FINISHED: success" in await text_of(page, "#run-outcome")
        assert "12 in / 7 out" in await text_of(page, "#run-usage")
        await expect(page.locator("#run-verdict")).to_contain_text("accepted")
        await expect(page.locator('#runs li[data-run-id="r-live"]')).to_contain_text("completed")
        rows = page.locator("#timeline tbody tr")
        types = [await r.get_attribute("data-type") for r in await rows.all()]
        assert types[0] == "RUN_STARTED" and types[-1] == "RUN_FINISHED"
        assert "ACTIVITY_SNAPSHOT" in types
        assert await page.locator("#timeline tr.violation-error").count() == 0
        assert await page.locator("#timeline td.kit .ok").count() == len(types)
        await page.screenshot(path=str(artifacts / "2-ended.png"), full_page=True)
    assert not [line for line in page.console_lines if "pageerror" in line], page.console_lines


async def test_a_kept_violation_is_highlighted_with_the_kits_rule(
    browser_page: Any, artifacts: Path, tmp_path: Path
) -> None:
    page = browser_page
    async with live_gateway(tmp_path) as gw:
        await gw.start("t-bad", "r-bad", bad_script("t-bad", "r-bad"))
        await gw.wait_ended("t-bad", "r-bad")
        await open_run(page, gw, "t-bad", "r-bad")
        flagged = page.locator("#timeline tr.violation-warning")
        await flagged.first.wait_for()
        assert await flagged.count() == 1
        assert await flagged.get_attribute("data-type") == "STATE_DELTA"
        finding = flagged.locator(".finding")
        assert await finding.get_attribute("data-rule") == "agui/hygiene/state-patch-failed"
        assert "does not apply" in (await finding.get_attribute("title") or "")
        assert await page.inner_text("#state") == '{\n  "a": 1\n}'
        # what the gateway repaired on the way in is on its terminal event
        assert "text-start-synthesized" in await text_of(page, "#run-outcome")
        assert await text_of(page, '.msg[data-id="m9"] .text') == "orphan"
        await page.screenshot(path=str(artifacts / "violation.png"), full_page=True)


async def test_resume_from_a_cursor_shows_only_the_later_events(
    browser_page: Any, artifacts: Path, tmp_path: Path
) -> None:
    page = browser_page
    async with live_gateway(tmp_path) as gw:
        gates = [asyncio.Event(), asyncio.Event()]
        for gate in gates:
            gate.set()
        await gw.start("t-res", "r-res", live_script(gates, "t-res", "r-res"))
        await gw.wait_ended("t-res", "r-res")
        await open_run(page, gw, "t-res", "r-res")
        await ended(page)
        rows = page.locator("#timeline tbody tr")
        cursors = [await r.get_attribute("data-cursor") for r in await rows.all()]
        assert len(cursors) > 6 and len(set(cursors)) == len(cursors)
        pick = 4
        await rows.nth(pick).locator("button.resume").click()
        await expect(rows).to_have_count(len(cursors) - pick - 1)
        await ended(page)
        resumed = [await r.get_attribute("data-cursor") for r in await rows.all()]
        assert resumed == cursors[pick + 1 :]
        assert await page.locator(".msg").count() == 0  # the text ended before the cursor
        await page.screenshot(path=str(artifacts / "resumed.png"), full_page=True)


async def test_with_auth_on_the_page_asks_for_a_key_and_keeps_it(
    browser_page: Any, artifacts: Path, tmp_path: Path
) -> None:
    page = browser_page
    async with live_gateway(tmp_path, auth="required") as gw:
        key = await gw.key("acme")
        gates = [asyncio.Event(), asyncio.Event()]
        for gate in gates:
            gate.set()
        await gw.start("t-auth", "r-auth", live_script(gates, "t-auth", "r-auth"), key=key)
        await gw.wait_ended("t-auth", "r-auth", key=key)
        await page.goto(f"{gw.base}/inspect")
        await page.locator("#key-form").wait_for()
        assert await page.locator("#threads li").count() == 0
        await page.screenshot(path=str(artifacts / "asks-for-key.png"))
        await page.fill("#key", key)
        await page.click("#key-save")
        await page.click('#threads li[data-thread-id="t-auth"]', timeout=10_000)
        await page.click('#runs li[data-run-id="r-auth"]')
        await ended(page)
        assert await text_of(page, '.msg[data-id="m1"] .text') == "Hello world"
        stored = await page.evaluate("Object.keys(sessionStorage)")
        assert stored == ["agui-gateway-inspector-key"]
        await page.reload()  # the key is kept for the tab's session
        await page.locator('#threads li[data-thread-id="t-auth"]').wait_for()
        assert await page.locator("#key-form").is_hidden()


async def test_a_dropped_stream_goes_on_with_a_fresh_token_after_the_last_cursor(
    browser_page: Any, artifacts: Path, tmp_path: Path
) -> None:
    # the EventSource's own reconnect reuses its URL, whose scoped token has expired by then
    # (401 closes it, WHATWG HTML "fail the connection"): the page mints a new one
    page = browser_page
    gates = [asyncio.Event(), asyncio.Event()]
    async with live_gateway(tmp_path, auth="required", token_ttl_seconds=1) as gw:
        key = await gw.key("acme")
        await gw.start("t-drop", "r-drop", live_script(gates, "t-drop", "r-drop"), key=key)
        requests: list[str] = []
        page.on("request", lambda request: requests.append(request.url))
        await page.goto(f"{gw.base}/inspect")
        await page.fill("#key", key)
        await page.click("#key-save")
        await page.click('#threads li[data-thread-id="t-drop"]', timeout=10_000)
        await page.click('#runs li[data-run-id="r-drop"]')
        await expect(page.locator('.msg[data-id="m1"] .text')).to_have_text("Hello")
        await asyncio.sleep(1.2)  # the first token has expired
        for connection in list(gw.server.server_state.connections):
            connection.transport.close()  # the network drops every connection
        await expect(page.locator("#stream-status")).not_to_have_text("live", timeout=10_000)
        gates[0].set()
        gates[1].set()
        await ended(page)
        assert await text_of(page, '.msg[data-id="m1"] .text') == "Hello world"
        rows = page.locator("#timeline tbody tr")
        cursors = [await r.get_attribute("data-cursor") for r in await rows.all()]
        assert len(set(cursors)) == len(cursors)  # nothing twice
        minted = [url for url in requests if "/token?" in url]
        assert len(minted) >= 2
        assert not [url for url in requests if key in url]  # the key never goes in a URL
        await page.screenshot(path=str(artifacts / "reconnected.png"), full_page=True)
