"""SSEResponse under ASGI spec 2.3 (what uvicorn reports): the response watches
``http.disconnect`` itself (one watcher task, no anyio task group). A client that leaves at
any point ends the response normally with the source closed; what was sent before is a prefix
of the source, in order, once; a cancellation from elsewhere (server shutdown) still propagates.

Expected behaviour from the ASGI HTTP spec (``http.disconnect``: "sent to the application if
receive is called after a response has been sent or after the HTTP connection has been
closed") and starlette 1.x ``StreamingResponse.__call__`` (a disconnect ends the response
without an exception under spec < 2.4)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gateway.sse_response import SSEResponse

SCOPE: dict[str, Any] = {
    "type": "http",
    "asgi": {"version": "3.0", "spec_version": "2.3"},
    "http_version": "1.1",
    "method": "GET",
    "path": "/",
    "headers": [],
}


class _Source:
    """``total`` chunks, then (``endless``) a wait that never ends; records its close."""

    def __init__(self, total: int, endless: bool) -> None:
        self.total, self.endless = total, endless
        self.closed = False

    async def chunks(self) -> AsyncIterator[bytes]:
        try:
            for i in range(self.total):
                yield f"data: {i}\n\n".encode()
            if self.endless:
                await asyncio.Event().wait()
        finally:
            self.closed = True


async def _serve(source: _Source, leave_after: int) -> tuple[list[bytes], bool]:
    """Run one response; the client disconnects after ``leave_after`` body chunks (or at the
    end). Returns the body chunks received and whether the final empty body was sent."""
    gone = asyncio.Event()
    body: list[bytes] = []
    ended = False

    async def receive() -> dict[str, Any]:
        await gone.wait()
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        nonlocal ended
        if message["type"] != "http.response.body":
            return
        # A body sent after the disconnect, before the response saw it (its source had the
        # chunk ready, so the response's task did not wait), is allowed: under spec < 2.4 a
        # send on a closed connection is a no-op (ASGI HTTP spec, "Response Body"). The
        # response stops at its next wait, at the latest (an endless source ends by the leave).
        if message.get("more_body"):
            if message["body"]:
                body.append(message["body"])
        else:
            ended = True
        if sum(chunk.count(b"\n\n") for chunk in body) >= leave_after:
            gone.set()

    if leave_after == 0:
        gone.set()
    response = SSEResponse(source.chunks(), keepalive_seconds=60)
    await asyncio.wait_for(response(dict(SCOPE), receive, send), timeout=10)
    return body, ended


@settings(max_examples=40, deadline=None)
@given(
    total=st.integers(min_value=0, max_value=20),
    leave_after=st.integers(min_value=0, max_value=25),
    endless=st.booleans(),
)
def test_disconnect_at_any_point_ends_the_response_with_the_source_closed(
    total: int, leave_after: int, endless: bool
) -> None:
    async def main() -> None:
        source = _Source(total, endless)
        before = asyncio.all_tasks()
        if endless and leave_after > total:
            leave_after_ = total  # an endless source needs the client to leave to end
        else:
            leave_after_ = leave_after
        body, ended = await _serve(source, leave_after_)
        assert source.closed
        events = b"".join(body).split(b"\n\n")[:-1]
        assert events == [f"data: {i}".encode() for i in range(len(events))]  # a prefix, once
        if not endless and leave_after_ > total:
            assert len(events) == total and ended  # the client stayed: all of it, then the end
        elif leave_after_ > 0:
            assert len(events) >= leave_after_  # the client left only once it had these
        await asyncio.sleep(0)
        assert asyncio.all_tasks() - before == set()  # no watcher or producer left behind

    asyncio.run(main())


async def test_cancellation_from_elsewhere_propagates() -> None:
    source = _Source(1, endless=True)
    sent = asyncio.Event()

    async def receive() -> dict[str, Any]:
        await asyncio.Event().wait()  # the client never leaves
        raise AssertionError

    async def send(message: dict[str, Any]) -> None:
        if message.get("body"):
            sent.set()

    task = asyncio.create_task(SSEResponse(source.chunks())(dict(SCOPE), receive, send))
    await sent.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert source.closed
