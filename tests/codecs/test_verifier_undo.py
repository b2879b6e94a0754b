"""``AguiVerifier.step(event, apply_faulty=False)`` (the normalizer's and the store guard's
step) returns the finding of applying the event and leaves the state as that step leaves it
when it finds nothing, untouched when it finds a fault: for any sequence of openers, closers,
deltas, run events, snapshots and results over a few ids, tags, parents and step names, with
a history of owners seeded first. An opener or closer in an active run saves only what it can
change instead of copying the whole state (issue 13); this holds it to the full copy."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from agui_codecs.transitions import LIFECYCLES, AguiVerifier

IDS = st.sampled_from(["a", "b", "c"])
TAGS = st.sampled_from([None, "s1", "s2"])
TYPES = sorted(
    {lc.opener for lc in LIFECYCLES}
    | {t for lc in LIFECYCLES for t in lc.continuers | lc.closers}
    | {"RUN_STARTED", "RUN_FINISHED", "RUN_ERROR", "MESSAGES_SNAPSHOT", "TOOL_CALL_RESULT", "RAW"}
)


@st.composite
def wire_events(draw: st.DrawFn) -> dict[str, Any]:
    etype = draw(st.sampled_from(TYPES))
    ev: dict[str, Any] = {"type": etype}
    for key in ("messageId", "toolCallId", "stepName", "parentMessageId", "name"):
        if draw(st.integers(0, 2)):
            ev[key] = draw(IDS)
    tag = draw(st.sampled_from(["absent", None, "s1", "s2", "a"]))
    if tag != "absent":
        ev["subagentRunId"] = tag
    if etype in ("MESSAGES_SNAPSHOT", "RUN_STARTED") and draw(st.booleans()):
        messages = [
            {"id": draw(IDS), "role": draw(st.sampled_from(["assistant", "reasoning", "tool"]))}
            for _ in range(draw(st.integers(0, 3)))
        ]
        if etype == "RUN_STARTED":
            ev["input"] = {"messages": messages}
        else:
            ev["messages"] = messages
    return ev


def state(v: AguiVerifier) -> Any:
    return (
        v.phase,
        {kind: list(ids) for kind, ids in v.open.items()},  # in order: open_ids reads it
        {bucket: dict(owners) for bucket, owners in v.owners.items()},
        set(v.closed_subagents),
    )


@settings(max_examples=500)
@given(
    history=st.lists(st.tuples(st.sampled_from(["message", "toolCall", "reasoning"]), IDS, TAGS)),
    events=st.lists(wire_events(), max_size=16),
    started=st.booleans(),
)
def test_a_faulty_step_is_undone_exactly(
    history: list[tuple[str, str, str | None]], events: list[dict[str, Any]], started: bool
) -> None:
    verifier = AguiVerifier()
    if started:
        assert verifier.step({"type": "RUN_STARTED"}, apply_faulty=False) is None
    for bucket, eid, tag in history:  # owners of the thread's earlier entities
        verifier.step(
            {"type": "MESSAGES_SNAPSHOT", "messages": [_message(bucket, eid, tag)]},
            apply_faulty=False,
        )
    for event in events:
        before = state(verifier)
        reference = copy.deepcopy(verifier)
        expected = reference.step(event)  # applied as far as it goes
        found = verifier.step(event, apply_faulty=False)
        assert found == expected
        assert state(verifier) == (before if found is not None else state(reference))


def _message(bucket: str, eid: str, tag: str | None) -> dict[str, Any]:
    if bucket == "toolCall":
        return {"id": f"m-{eid}", "role": "assistant", "toolCalls": [{"id": eid}]}
    message: dict[str, Any] = {"id": eid, "role": "reasoning" if bucket == "reasoning" else "user"}
    if tag is not None:
        message["subagentRunId"] = tag
    return message
