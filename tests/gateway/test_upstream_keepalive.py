"""After the run ended (OpenAI's ``[DONE]``) the rest of the upstream body is read, within a
bound, so the HTTP/1.1 connection returns to httpx's pool for the next run instead of being
closed (issue 13: a TCP connect per run otherwise); a body that goes on does not hold the run."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import httpx
import orjson
import pytest

from agui_codecs import get_decoder
from gateway import upstream as upstream_module
from gateway.config import RouteConfig
from gateway.upstream import Upstream

ROUTE = RouteConfig(
    name="r",
    protocol="openai-chat",
    upstream_url="http://upstream.test/v1",
    model="gpt-4o-mini",
    auth={"type": "none"},
)
BODY = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "hi"}], "stream": True}


def frame(obj: Any) -> bytes:
    return b"data: " + orjson.dumps(obj) + b"\n\n"


STREAM = [
    frame({"choices": [{"index": 0, "delta": {"role": "assistant", "content": "Hi"}}]}),
    frame({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}),
    b"data: [DONE]\n\n",
]


class Body(httpx.AsyncByteStream):
    """The response body: ``parts``, then ``tail`` (awaited forever when ``endless``)."""

    def __init__(self, parts: list[bytes], *, tail: list[bytes], endless: bool = False) -> None:
        self.parts, self.tail, self.endless = parts, tail, endless
        self.exhausted = False
        self.closed = False

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for part in self.parts:
            yield part
        for part in self.tail:
            yield part
        if self.endless:
            await asyncio.Event().wait()
        self.exhausted = True

    async def aclose(self) -> None:
        self.closed = True


async def run(body: Body) -> list[str]:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers={"content-type": "text/event-stream"}, stream=body)

    async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as client:
        upstream = Upstream(client)
        types = []
        async for batch in upstream.events(ROUTE, BODY, get_decoder("openai-chat")):
            types += [str(event.type.value) for event in batch]
        return types


async def test_the_body_after_done_is_read_to_its_end() -> None:
    body = Body(STREAM, tail=[b": trailing comment\n\n"])
    types = await run(body)
    assert types[-1] == "RUN_FINISHED"
    assert body.exhausted  # read to EOF: httpx may reuse the connection


async def test_a_body_that_goes_on_after_done_does_not_hold_the_run(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(upstream_module, "DRAIN_SECONDS", 0.05)
    body = Body(STREAM, tail=[b": more\n\n"], endless=True)
    types = await asyncio.wait_for(run(body), 5)
    assert types[-1] == "RUN_FINISHED"
    assert types.count("RUN_FINISHED") == 1
    assert not body.exhausted and body.closed


async def test_draining_stops_after_its_byte_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(upstream_module, "DRAIN_BYTES", 10)
    body = Body(STREAM, tail=[b": " + b"x" * 20 + b"\n\n", b": never read\n\n"])
    types = await run(body)
    assert types[-1] == "RUN_FINISHED"
    assert not body.exhausted and body.closed
