"""``StoreGuard.push`` lets a delta (TEXT_MESSAGE_CONTENT, REASONING_MESSAGE_CONTENT,
TOOL_CALL_ARGS) of an item open in an active run out without stepping the verifier (issue 13:
per-event cost); this holds it to the general path (the same guard with that shortcut off):
for any sequence of openers, deltas, closers, chunks, run and subagent events over a few ids
(some never opened, some closed, some not strings), tags (absent, null, another owner's) and
phases (announced, not started, after the terminal event), the same events come out (the
input dict itself where the general path lets it out) and the guard is left in the same state
(verifier, repairs, violation, openers, chunk lanes)."""

from __future__ import annotations

import copy
import importlib
from typing import Any
from unittest import mock

from hypothesis import example, given, settings
from hypothesis import strategies as st

from agui_codecs.core import StoreGuard
from agui_codecs.transitions import LIFECYCLES

# (``agui_codecs.core.guard`` as an attribute is a function the package exports)
guard_module = importlib.import_module("agui_codecs.core.guard")
DELTAS = sorted(t for lc in LIFECYCLES for t in lc.continuers)
CONTENT = [lc for lc in LIFECYCLES if lc.continuers]
CHUNKS = ["REASONING_MESSAGE_CHUNK", "TEXT_MESSAGE_CHUNK", "TOOL_CALL_CHUNK"]
TYPES = sorted(
    {lc.opener for lc in LIFECYCLES}
    | {t for lc in LIFECYCLES for t in lc.closers}
    | {"RUN_STARTED", "RUN_FINISHED", "RUN_ERROR", "MESSAGES_SNAPSHOT", "CUSTOM"}
)
IDS = st.sampled_from(["a", "a", "b", 1])
TAGS = st.sampled_from(["absent", "absent", "absent", "absent", None, "s1", "s2", 7])


@st.composite
def wire_events(draw: st.DrawFn) -> dict[str, Any]:
    # mostly openers, deltas and closers of the delta kinds over two ids, so that many deltas
    # are of an item opened before (and many of those of one since closed, of another kind,
    # or opened by another owner)
    pick = draw(st.integers(0, 9))
    if pick < 7:
        lc = draw(st.sampled_from(CONTENT))
        etype = draw(st.sampled_from([lc.opener, *lc.continuers, *lc.continuers, *lc.closers]))
        ev: dict[str, Any] = {"type": etype}
        if draw(st.integers(0, 9)):
            ev[lc.id_field] = draw(IDS)
    else:
        etype = draw(st.sampled_from(CHUNKS if pick < 8 else TYPES))
        ev = {"type": etype}
        for key in ("messageId", "toolCallId", "stepName", "parentMessageId", "name"):
            if draw(st.integers(0, 3)):
                ev[key] = draw(IDS)
    if etype in DELTAS or etype in CHUNKS:
        ev["delta"] = draw(st.sampled_from(["x", "", 3]))
    if etype == "TEXT_MESSAGE_START":
        ev["role"] = "assistant"
    if etype == "TOOL_CALL_START":
        ev["toolCallName"] = "f"
    tag = draw(TAGS)
    if tag != "absent":
        ev["subagentRunId"] = tag
    if etype == "MESSAGES_SNAPSHOT":
        ev["messages"] = [
            {"id": draw(IDS), "role": "assistant", "subagentRunId": draw(TAGS)}
            for _ in range(draw(st.integers(0, 2)))
        ]
    return ev


def state(guard: StoreGuard) -> Any:
    v = guard.verifier
    return (
        v.phase,
        {kind: list(ids) for kind, ids in v.open.items()},
        {bucket: dict(owners) for bucket, owners in v.owners.items()},
        set(v.closed_subagents),
        dict(guard.repairs),
        guard.violation,
        guard._openers,
        guard._seen,
        guard._closed,
        guard._announced,
        guard._chunk_opened,
        {k: (lane.kind, lane.entity, lane.fields) for k, lane in guard._chunks.lanes.items()},
        guard._chunks.resumed,
        guard._chunks._closed_by_chunk,
    )


def _ev(etype: str, eid: Any, tag: Any = "absent", **extra: Any) -> dict[str, Any]:
    field = "toolCallId" if etype.startswith("TOOL_CALL") else "messageId"
    ev = {"type": etype, field: eid, **extra}
    if tag != "absent":
        ev["subagentRunId"] = tag
    return ev


@settings(max_examples=1000)
@example("announce", [_ev("TEXT_MESSAGE_START", "a"), _ev("TEXT_MESSAGE_CONTENT", "a", "s1")])
@example("announce", [_ev("TOOL_CALL_START", "a", "s1"), _ev("TOOL_CALL_ARGS", "a", "s2")])
@example("started", [_ev("TOOL_CALL_START", "a", "s1"), _ev("TOOL_CALL_ARGS", "a", "s1")])
@example(
    "announce", [_ev("REASONING_MESSAGE_START", "a"), _ev("REASONING_MESSAGE_CONTENT", "a", None)]
)
@example(
    "announce",
    [
        _ev("TEXT_MESSAGE_START", "b"),
        _ev("TEXT_MESSAGE_CHUNK", "a", delta="x"),
        _ev("TEXT_MESSAGE_CONTENT", "b", delta="y"),
    ],
)
@example(
    "started",
    [
        _ev("TEXT_MESSAGE_START", "a"),
        _ev("TEXT_MESSAGE_END", "a"),
        _ev("TEXT_MESSAGE_CONTENT", "a"),
    ],
)
@example("none", [_ev("TEXT_MESSAGE_START", "a"), _ev("REASONING_MESSAGE_CONTENT", "a")])
@example(
    "announce",
    [_ev("TOOL_CALL_START", "a"), {"type": "RUN_FINISHED"}, _ev("TOOL_CALL_ARGS", "a")],
)
@example(  # the upstream's RUN_ERROR leaves the verifier's items open
    "announce",
    [
        _ev("TOOL_CALL_START", "a"),
        {"type": "RUN_ERROR", "message": "m"},
        _ev("TOOL_CALL_ARGS", "a"),
    ],
)
@given(start=st.sampled_from(["announce", "started", "none"]), events=st.lists(wire_events()))
def test_the_delta_shortcut_changes_nothing(start: str, events: list[dict[str, Any]]) -> None:
    fast = StoreGuard(thread_id="t", run_id="r")
    general = StoreGuard(thread_id="t", run_id="r")
    for guard in (fast, general):
        if start == "announce":
            guard.announce()
        elif start == "started":
            guard.push({"type": "RUN_STARTED", "threadId": "t", "runId": "r"})
    for event in events:
        twin = copy.deepcopy(event)
        out = fast.push(event)
        with mock.patch.dict(guard_module._OPEN_CONTENT, clear=True):
            expected = general.push(twin)
        assert out == expected
        assert [e is event for e in out] == [e is twin for e in expected]
        assert state(fast) == state(general)


def test_a_delta_of_an_open_item_comes_out_as_it_came() -> None:
    guard = StoreGuard(thread_id="t", run_id="r")
    guard.announce()
    guard.push({"type": "TOOL_CALL_START", "toolCallId": "c", "toolCallName": "f"})
    delta = {"type": "TOOL_CALL_ARGS", "toolCallId": "c", "delta": "{"}
    out = guard.push(delta)
    assert out == [delta] and out[0] is delta
    assert guard.push({"type": "TOOL_CALL_ARGS", "toolCallId": "d", "delta": "{"})[-1] == {
        "type": "RUN_ERROR",
        "message": "agui/verify/tool-args-without-start: TOOL_CALL_ARGS: no open tool-call "
        "with id 'd'",
        "code": "UPSTREAM_PROTOCOL_ERROR",
        "metadata": {
            "rule": "agui/verify/tool-args-without-start",
            "eventType": "TOOL_CALL_ARGS",
            "ids": ["d"],
        },
    }
