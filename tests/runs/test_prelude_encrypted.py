"""The ``?replay=snapshot`` prelude keeps every REASONING_ENCRYPTED_VALUE stored before the cut
(issue 11 kind 5: what a provider needs back is never dropped).

The property: for random legal AG-UI 1.0 streams of reasoning messages, text messages and tool
calls (interleaved) carrying encrypted values (``subtype`` "message" before, between and after
the reasoning content, ``subtype`` "tool-call" while the arguments stream and after the call
ended), the real ``@ag-ui/client`` 1.0.0 builds the same messages, ``encryptedValue`` included,
from the prelude + tail of every cut as from the whole stream. Expected messages are the real
client's own (``tests/harness``), never the gateway's.

Items close in the order they opened, and a text message's first content comes with its
start: the prelude re-opens what is open after the snapshot, so an item still open at the cut
while a later-opened one is closed ends up after it in the client's list, and a text message
whose history part began (at its first content) after another item's start is filed after it
(ordering limits of the prelude and of RunFold's parts, with or without encrypted values, not
covered here); values and results may still come after later items.
"""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from real_clients import replay, require_harness

from agui_codecs import get_decoder

from .agui_rules import verify
from .helpers import resumed_stream, sse, wires

pytestmark = pytest.mark.timeout(600)

Event = dict[str, Any]
PRIOR = [{"id": "u1", "role": "user", "content": "hi"}]
TEXT = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), min_size=1, max_size=6)
BLOB = st.text("abc+/=", min_size=1, max_size=8)


CLOSERS = frozenset({"TEXT_MESSAGE_END", "TOOL_CALL_END", "REASONING_MESSAGE_END"})


def _type(step: Any) -> str:
    return str(step[-1]["type"] if isinstance(step, list) else step["type"])


def _value(subtype: str, entity: str, blob: str) -> Event:
    return {
        "type": "REASONING_ENCRYPTED_VALUE",
        "subtype": subtype,
        "entityId": entity,
        "encryptedValue": blob,
    }


def _with_values(
    draw: st.DrawFn, body: list[Event], subtype: str, entity: str, *, last: int
) -> list[Event]:
    """``body`` with 0-2 encrypted values for ``entity`` inserted after its opener (index 0)
    and at most at position ``last`` (e.g. before the END that closes a reasoning message)."""
    out = list(body)
    for n in range(draw(st.integers(0, 2))):
        at = draw(st.integers(1, min(last, len(out))))
        out.insert(at, _value(subtype, entity, f"{entity}-{n}-" + draw(BLOB)))
        last += 1
    return out


def _reasoning(draw: st.DrawFn, n: int) -> list[Event | list[Event]]:
    mid = f"r{n}"
    body: list[Event] = [
        {"type": "REASONING_START", "messageId": mid},
        {"type": "REASONING_MESSAGE_START", "messageId": mid, "role": "reasoning"},
    ]
    body += [
        {"type": "REASONING_MESSAGE_CONTENT", "messageId": mid, "delta": d}
        for d in draw(st.lists(TEXT, max_size=3))
    ]
    # values go between START and END (a held one lands just before END); after END too
    with_values = _with_values(draw, body[1:], "message", mid, last=len(body) - 1)
    tail: list[Event] = [{"type": "REASONING_MESSAGE_END", "messageId": mid}]
    if draw(st.booleans()):
        tail.append(_value("message", mid, f"{mid}-late-" + draw(BLOB)))
    opener = [body[0], with_values.pop(0)]  # one step: the span and its message open together
    return [opener, *with_values, *tail, {"type": "REASONING_END", "messageId": mid}]


def _text(draw: st.DrawFn, n: int) -> list[Event | list[Event]]:
    mid = f"m{n}"
    deltas = draw(st.lists(TEXT, min_size=1, max_size=3))
    content = [{"type": "TEXT_MESSAGE_CONTENT", "messageId": mid, "delta": d} for d in deltas]
    start = {"type": "TEXT_MESSAGE_START", "messageId": mid, "role": "assistant"}
    # one step: its start and first content (the history part begins at the content)
    return [[start, content[0]], *content[1:], {"type": "TEXT_MESSAGE_END", "messageId": mid}]


def _tool(draw: st.DrawFn, n: int, parent: str | None) -> list[Event]:
    cid = f"c{n}"
    start: Event = {"type": "TOOL_CALL_START", "toolCallId": cid, "toolCallName": "weather"}
    if parent is not None:
        start["parentMessageId"] = parent
    args = draw(st.lists(st.sampled_from(['{"city"', ': "Paris"', "}", " "]), max_size=3))
    body: list[Event] = [
        start,
        *({"type": "TOOL_CALL_ARGS", "toolCallId": cid, "delta": a} for a in args),
        {"type": "TOOL_CALL_END", "toolCallId": cid},
    ]
    body = _with_values(draw, body, "tool-call", cid, last=len(body))
    if draw(st.booleans()):
        result = {"type": "TOOL_CALL_RESULT", "messageId": f"res{n}", "toolCallId": cid}
        body.append({**result, "content": draw(TEXT)})
    return body


@st.composite
def encrypted_streams(draw: st.DrawFn) -> list[Event]:
    """A legal AG-UI 1.0 run: 1-5 reasoning / text / tool items, each item's events in order,
    the items' events interleaved at random (a call's parent is a text message started
    before it, or none), items closing in the order they opened."""
    items: list[list[Any]] = []  # an item's steps: an event, or events sent together
    texts: list[str] = []
    for n in range(draw(st.integers(1, 5))):
        kind = draw(st.sampled_from(["reasoning", "text", "tool"]))
        if kind == "reasoning":
            items.append(_reasoning(draw, n))
        elif kind == "text":
            items.append(_text(draw, n))
            texts.append(f"m{n}")
        else:
            parent = draw(st.sampled_from([None, *texts])) if texts else None
            items.append(_tool(draw, n, parent))
    merged: list[Event] = []
    pending = [list(item) for item in items]
    started = 0  # items start in order, so a call's parent text has started before it
    closed = 0  # items close in the order they started (see the module docstring)
    while any(pending):
        ready = [
            i
            for i in range(started)
            if pending[i] and (_type(pending[i][0]) not in CLOSERS or i == closed)
        ]
        if started < len(pending):
            ready.append(started)
        index = draw(st.sampled_from(ready))
        started = max(started, index + 1)
        step = pending[index].pop(0)
        events = step if isinstance(step, list) else [step]
        closed += sum(e["type"] in CLOSERS for e in events)
        merged += events
    return [
        {"type": "RUN_STARTED", "threadId": "t", "runId": "r"},
        *merged,
        {"type": "RUN_FINISHED", "threadId": "t", "runId": "r"},
    ]


def assert_rejoins_build_the_same_messages(runs: list[list[Event]]) -> None:
    """For each run and each cut: the resumed stream passes verify, and the real
    ``@ag-ui/client`` 1.0.0 builds from it the messages it builds from the whole stream."""
    require_harness()
    jobs: list[tuple[str, str, bytes]] = []
    for n, events in enumerate(runs):
        full = [events[0], {"type": "MESSAGES_SNAPSHOT", "messages": PRIOR}, *events[1:]]
        jobs.append((f"{n}-full", "agui", sse(full)))
        for cut in range(1, len(events) + 1):
            stream = resumed_stream(events, cut, PRIOR)
            verify(stream)
            jobs.append((f"{n}-cut-{cut}", "agui", sse(stream)))
    results = replay(jobs)
    for n, events in enumerate(runs):
        whole = results[f"{n}-full"]
        assert whole["accepted"], (whole["error"], events)
        for cut in range(1, len(events) + 1):
            result = results[f"{n}-cut-{cut}"]
            assert result["accepted"], (n, cut, result["error"], events)
            assert result["messages"] == whole["messages"], (n, cut, events)


@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(runs=st.lists(encrypted_streams(), min_size=6, max_size=6))
def test_real_client_keeps_every_encrypted_value_after_a_rejoin_at_any_cut(
    runs: list[list[Event]],
) -> None:
    assert_rejoins_build_the_same_messages(runs)


def test_a_value_held_until_the_end_survives_a_cut_before_the_end() -> None:
    """The decoders' case (``RunBuilder.hold_reasoning_encrypted``): the value comes after the
    content and before REASONING_MESSAGE_END; a cut between the two re-opens the message with
    its content and then the value."""
    events = [
        {"type": "RUN_STARTED", "threadId": "t", "runId": "r"},
        {"type": "REASONING_START", "messageId": "r1"},
        {"type": "REASONING_MESSAGE_START", "messageId": "r1", "role": "reasoning"},
        {"type": "REASONING_MESSAGE_CONTENT", "messageId": "r1", "delta": "Thinking"},
        _value("message", "r1", "sig"),
        {"type": "REASONING_MESSAGE_END", "messageId": "r1"},
        {"type": "REASONING_END", "messageId": "r1"},
        {"type": "RUN_FINISHED", "threadId": "t", "runId": "r"},
    ]
    stream = resumed_stream(events, 5)
    assert stream[2:6] == [
        {"type": "REASONING_START", "messageId": "r1"},
        {"type": "REASONING_MESSAGE_START", "messageId": "r1", "role": "reasoning"},
        {"type": "REASONING_MESSAGE_CONTENT", "messageId": "r1", "delta": "Thinking"},
        _value("message", "r1", "sig"),
    ]
    assert_rejoins_build_the_same_messages([events])


def _chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
    choice = {"index": 0, "delta": delta, "finish_reason": finish}
    chunk = {"id": "ds", "object": "chat.completion.chunk", "model": "m", "choices": [choice]}
    return b"data: " + orjson.dumps(chunk) + b"\n\n"


@st.composite
def deepseek_runs(draw: st.DrawFn) -> list[Event]:
    """The AG-UI wire events the openai-chat decoder makes of a random DeepSeek thinking-mode
    stream (``reasoning_content`` and ``content`` pieces in random order, then ``tool_calls``,
    the order of the "Thinking Mode" guide's replies): each reasoning message carries the
    ``reasoning_content`` mark, held until it ends. (A call before the text stays open past
    the text's end: the ordering limit of the module docstring.)"""
    items: list[tuple[str, Any]] = [
        ("reasoning_content", t) for t in draw(st.lists(TEXT, min_size=1, max_size=3))
    ]
    for text in draw(st.lists(TEXT, max_size=2)):
        items.insert(draw(st.integers(0, len(items))), ("content", text))
    for n in range(draw(st.integers(0, 2))):
        call = {"index": n, "id": f"call_{n}", "type": "function"}
        call["function"] = {"name": "get_weather", "arguments": f'{{"n": {n}}}'}
        items.append(("tool_calls", [call]))
    body = b"".join(_chunk({key: value}) for key, value in items)
    body += _chunk({}, "stop") + b"data: [DONE]\n\n"
    decoder = get_decoder("openai-chat", thread_id="t", run_id="r")
    return wires(decoder.feed(body) + decoder.close())


@settings(max_examples=3, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(runs=st.lists(deepseek_runs(), min_size=6, max_size=6))
def test_the_reasoning_content_mark_survives_a_rejoin_at_any_cut(runs: list[list[Event]]) -> None:
    assert all(any(e["type"] == "REASONING_ENCRYPTED_VALUE" for e in run) for run in runs)
    assert_rejoins_build_the_same_messages(runs)
