"""Helpers for the SSEResponse timing tests (``tests/gateway/test_sse_keepalive_races.py``,
``tests/gateway/test_sse_cancellation.py``): an ASGI scope of a given spec version, a
``receive`` that never returns, and a ``send`` recorder that checks what a server relies on
(ASGI HTTP spec, "Response Body": no two sends at once, nothing after ``more_body: False``)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

__all__ = ["Held", "Recorder", "never", "scope"]


def scope(spec: str) -> dict[str, Any]:
    """An HTTP scope whose ASGI ``spec_version`` is ``spec`` (``"2.3"``: the response watches
    ``http.disconnect`` itself; ``"2.4"``: a disconnect shows as a failing send)."""
    return {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": spec},
        "http_version": "1.1",
        "method": "GET",
        "path": "/",
        "headers": [],
    }


async def never() -> dict[str, Any]:
    """A ``receive`` that never returns (the client stays)."""
    await asyncio.Event().wait()
    raise AssertionError


class Recorder:
    """An ASGI ``send`` that checks that sends never overlap and nothing follows the end."""

    def __init__(self) -> None:
        self.messages: list[dict[str, Any]] = []
        self.in_send = 0
        self.overlaps = 0
        self.after_end = 0
        self.ended = False

    async def enter(self, message: dict[str, Any]) -> None:
        if self.ended:
            self.after_end += 1
        self.in_send += 1
        if self.in_send > 1:
            self.overlaps += 1
        self.messages.append(message)
        if message["type"] == "http.response.body" and not message.get("more_body", False):
            self.ended = True

    def leave(self) -> None:
        self.in_send -= 1

    def bodies(self) -> list[bytes]:
        return [m["body"] for m in self.messages if m["type"] == "http.response.body"]


class Held:
    """A source that yields ``data: 0`` and then waits for ever (a live stream gone silent);
    ``closed`` tells whether its ``finally`` ran (the response closed it)."""

    def __init__(self) -> None:
        self.closed = False

    async def chunks(self) -> AsyncIterator[bytes]:
        try:
            yield b"data: 0\n\n"
            await asyncio.Event().wait()
            yield b"data: never\n\n"
        finally:
            self.closed = True
