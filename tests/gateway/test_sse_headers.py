"""SSEResponse's header lines are starlette's, line for line, whether shared or not (issue 13
item 5: the lines are tuples shared between responses)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from hypothesis import given
from hypothesis import strategies as st
from starlette.responses import StreamingResponse

from gateway import sse_response
from gateway.sse_response import SSE_HEADERS, SSEResponse

_names = st.sampled_from(
    ["content-type", "Content-Type", "x-vercel-ai-ui-message-stream", "x-workflow-run-id", "X-A"]
)
_values = st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=20)


async def _empty() -> AsyncIterator[bytes]:
    return
    yield b""  # pragma: no cover


def _starlette(headers: dict[str, str] | None) -> list[tuple[bytes, bytes]]:
    return StreamingResponse(
        _empty(), headers={**SSE_HEADERS, **(headers or {})}, media_type="text/event-stream"
    ).raw_headers


@given(headers=st.one_of(st.none(), st.dictionaries(_names, _values, max_size=4)))
def test_the_header_lines_are_starlettes(headers: dict[str, str] | None) -> None:
    response = SSEResponse(_empty(), headers=headers)
    assert response.raw_headers == _starlette(headers)


def test_past_the_shared_bound_lines_are_kept_per_response(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(sse_response, "_SHARED_HEADERS", {})
    monkeypatch.setattr(sse_response, "_SHARED_MAX", 2)
    monkeypatch.setattr(sse_response, "_SHAREABLE", frozenset({b"x-a", b"content-type"}))
    first = SSEResponse(_empty(), headers={"x-a": "1"}).raw_headers
    again = SSEResponse(_empty(), headers={"x-a": "1"}).raw_headers
    assert again == first == _starlette({"x-a": "1"})
    assert len(sse_response._SHARED_HEADERS) == 2
    assert again[0] is first[0]  # shared (the first lines)
    other = SSEResponse(_empty(), headers={"x-a": "2"}).raw_headers
    assert other == _starlette({"x-a": "2"})
    assert len(sse_response._SHARED_HEADERS) == 2


def test_lines_naming_a_run_are_not_shared_and_leave_room_for_the_constant_ones(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(sse_response, "_SHARED_HEADERS", {})
    for n in range(2 * sse_response._SHARED_MAX):  # many streams, each naming its run
        headers = {"x-agui-run-id": f"run-{n}", "x-workflow-run-id": f"wrun-{n}"}
        assert SSEResponse(_empty(), headers=headers).raw_headers == _starlette(headers)
    assert all(name in sse_response._shareable() for name, _ in sse_response._SHARED_HEADERS)
    ai_sdk = {"x-vercel-ai-ui-message-stream": "v1"}
    first = SSEResponse(_empty(), headers=ai_sdk).raw_headers
    again = SSEResponse(_empty(), headers=ai_sdk).raw_headers
    assert again == first == _starlette(ai_sdk)
    assert all(a is b for a, b in zip(again, first, strict=True))  # every line shared
