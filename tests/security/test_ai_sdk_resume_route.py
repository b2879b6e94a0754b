"""The AI SDK resume URL on the run's own route answers 200 with the active run (issue 15 §2:
the route is checked; the refusal on another route is in ``test_isolation.py``)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx
import orjson
import pytest
from authapp import BACKENDS, auth_app
from gwtest import GatedStream, chunk, sse

pytestmark = pytest.mark.timeout(120)

CHAT = {
    "id": "c1",
    "messages": [{"id": "u1", "role": "user", "parts": [{"type": "text", "text": "hi"}]}],
}


def chunks(body: bytes) -> list[dict[str, object]]:
    out = []
    for block in body.decode().split("\n\n"):
        if block.startswith("data: ") and block != "data: [DONE]":
            out.append(orjson.loads(block[6:]))
    return out


@pytest.mark.parametrize(("store_kind", "broker_kind"), BACKENDS)
async def test_resume_on_the_runs_route_answers_200_with_the_active_run(
    tmp_path: Path, store_kind: str, broker_kind: str
) -> None:
    gate = asyncio.Event()
    stream = GatedStream(
        [
            sse(chunk({"role": "assistant", "content": "hel"})),
            gate,
            sse(chunk({"content": "lo"}), chunk({}, "stop"), "[DONE]"),
        ]
    )

    def upstream(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers={"content-type": "text/event-stream"}, stream=stream)

    async with auth_app(tmp_path, store_kind, broker_kind, upstream=upstream) as gw:
        key = await gw.key("acme")
        posted = asyncio.create_task(gw.request("POST", "/v1/ai-sdk/gpt", CHAT, key=key))
        for _ in range(1000):  # the run is recorded and its upstream has started
            if stream.sent:
                break
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.1)
        other = await gw.request("GET", "/v1/ai-sdk/claude/c1/stream", key=key)
        resumed = asyncio.create_task(gw.request("GET", "/v1/ai-sdk/gpt/c1/stream", key=key))
        await asyncio.sleep(0.2)
        assert not resumed.done()  # streaming the active run, live
        gate.set()
        live, again = await posted, await resumed
    assert other.status == 204  # another route never resumes this chat's run
    assert live.status == again.status == 200
    assert again.body.endswith(b"data: [DONE]\n\n")
    first, replayed = chunks(live.body), chunks(again.body)
    assert replayed[0]["type"] == "start" and replayed[0]["messageId"] == first[0]["messageId"]
    text = "".join(str(c.get("delta", "")) for c in replayed if c["type"] == "text-delta")
    assert text == "hello"  # from the run's first chunk, then live
    assert [c["type"] for c in replayed] == [c["type"] for c in first]
