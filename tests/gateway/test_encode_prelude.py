"""A snapshot prelude goes out as one chunk (issue 13 item 6: what is available together is one
write; since the SSE response writes each chunk of its source as it comes, the join is the
encoder loop's, :func:`gateway.encoding.encode_run_events`).

Reference: the encoder's own frames, one ``encode_wire`` per prelude event, only the last one
with the prelude's cursor as its SSE ``id`` (``docs/runs.md`` §1: prelude events are not stored
as such; the client then holds everything up to that cursor)."""

from __future__ import annotations

import asyncio

from hypothesis import given, settings
from hypothesis import strategies as st

from agui_codecs.encoders.agui import AguiEncoder
from agui_codecs.encoders.ai_sdk import AiSdkEncoder
from gateway.encoding import encode_run_events
from gateway.types import Cursor


def _prelude(texts: list[str]) -> list[dict[str, object]]:
    """A snapshot prelude: RUN_STARTED, then the text so far as chunks (``gateway/runs/prelude.py``)."""
    return [
        {"type": "RUN_STARTED", "threadId": "t", "runId": "r"},
        *(
            {"type": "TEXT_MESSAGE_CHUNK", "messageId": f"m{i}", "role": "assistant", "delta": t}
            for i, t in enumerate(texts)
        ),
    ]


async def _chunks(wire: str, prelude: list[dict[str, object]], cursor: Cursor) -> list[bytes]:
    encoder = AguiEncoder() if wire == "agui" else AiSdkEncoder(message_id="m")
    return [
        chunk
        async for chunk in encode_run_events(None, encoder, prelude=prelude, prelude_cursor=cursor)
    ]


@settings(max_examples=30, deadline=None)
@given(
    texts=st.lists(st.text(min_size=1, max_size=20), min_size=1, max_size=12),
    wire=st.sampled_from(["agui", "ai-sdk"]),
)
def test_the_prelude_is_one_chunk_of_the_encoders_frames(texts: list[str], wire: str) -> None:
    prelude = _prelude(texts)
    cursor = Cursor(1, 7)
    chunks = asyncio.run(_chunks(wire, prelude, cursor))
    reference = AguiEncoder() if wire == "agui" else AiSdkEncoder(message_id="m")
    last = len(prelude) - 1
    frames = [
        reference.encode_wire(event, id=str(cursor) if i == last else None)
        for i, event in enumerate(prelude)
    ]
    tail = reference.close()
    assert chunks[0] == b"".join(frames)  # the whole prelude, in order, one chunk
    assert chunks[1:] == ([tail] if tail else [])  # then only the encoder's own end
