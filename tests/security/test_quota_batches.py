"""The storage quota over the pipeline's batches (issue 15 §3, issue 13: one call per chunk):
:func:`gateway.quota.capped` hands the pump exactly the events the per-event rule lets
through, as wire dicts, however the events are split into batches, then
``StorageQuotaExceeded`` where that rule stops. The rule, from ``gateway/quota.py``'s
docstring: an event passes while the JSON bytes of the events so far, content deltas counted
twice, stay within the share."""

from __future__ import annotations

from collections.abc import AsyncIterator

import orjson
import pytest
from ag_ui.core import (
    CustomEvent,
    Event,
    TextMessageContentEvent,
    TextMessageEndEvent,
    TextMessageStartEvent,
    ToolCallArgsEvent,
)
from hypothesis import given
from hypothesis import strategies as st

from agui_codecs.events import event_to_wire
from gateway.quota import StorageQuotaExceeded, capped

_FOLDED = {"TEXT_MESSAGE_CONTENT", "REASONING_MESSAGE_CONTENT", "TOOL_CALL_ARGS"}


def _event(kind: int, n: int) -> Event:
    if kind == 0:
        return TextMessageContentEvent(message_id="m", delta="é" * (n % 7 + 1))
    if kind == 1:
        return ToolCallArgsEvent(tool_call_id="c", delta=f'{{"k":{n}}}')
    if kind == 2:
        return TextMessageStartEvent(message_id=f"m{n}", role="assistant")
    if kind == 3:
        return TextMessageEndEvent(message_id=f"m{n}")
    return CustomEvent(name="x", value={"n": n, "s": "ü" * (n % 5)})


def _allowed(events: list[Event], share: int) -> tuple[list[dict[str, object]], bool]:
    """The reference: the rule applied event by event; (what passes, whether it stopped)."""
    used = 0
    out = []
    for event in events:
        wire = event_to_wire(event)
        size = len(orjson.dumps(wire))
        used += 2 * size if wire["type"] in _FOLDED else size
        if used > share:
            return out, True
        out.append(wire)
    return out, False


async def _batches(batches: list[list[Event]]) -> AsyncIterator[list[Event]]:
    for batch in batches:
        yield batch


@given(
    plan=st.lists(st.lists(st.integers(0, 4), max_size=5), max_size=8),
    share=st.integers(0, 2500),
)
async def test_capped_batches_pass_what_the_per_event_rule_passes(
    plan: list[list[int]], share: int
) -> None:
    n = 0
    batches: list[list[Event]] = []
    for kinds in plan:
        batch = []
        for kind in kinds:
            n += 1
            batch.append(_event(kind, n))
        batches.append(batch)
    expected, stops = _allowed([e for b in batches for e in b], share)
    got: list[dict[str, object]] = []
    stopped = False
    try:
        async for out in capped(_batches(batches), share):
            got += out
    except StorageQuotaExceeded:
        stopped = True
    assert got == expected
    assert stopped == stops


async def test_closing_capped_closes_the_batches() -> None:
    closed = False

    async def source() -> AsyncIterator[list[Event]]:
        nonlocal closed
        try:
            yield [_event(0, 1)]
            yield [_event(0, 2), _event(0, 3)]
        finally:
            closed = True

    out = capped(source(), 10)  # the first delta (2 x its size) already passes 10 bytes
    with pytest.raises(StorageQuotaExceeded):
        await anext(out)
    assert closed
