""":class:`gateway.upstream_ids.UpstreamIds` reads only the fields that can hold an id or a model
(the per-class field plan, issue 13): it must remap exactly what reading every field remaps.

The reference below is the rule applied to every field of every model, as it was before the
plan; both run over the same events (every id drawn acceptable or refused, models nested in
``raw_event``, ``metadata`` with a ``messageId``, a MESSAGES_SNAPSHOT, an outcome with pending
tool calls) and must give equal events, equal mappings and equal new mappings.
"""

from __future__ import annotations

from typing import Any

from ag_ui.core import (
    AssistantMessage,
    CustomEvent,
    FunctionCall,
    MessagesSnapshotEvent,
    RunFinishedEvent,
    RunStartedEvent,
    TextMessageContentEvent,
    TextMessageStartEvent,
    ToolCall,
    ToolCallArgsEvent,
    ToolCallResultEvent,
    ToolCallStartEvent,
    ToolMessage,
    UserMessage,
)
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from gateway.upstream_ids import _ID_LIST_FIELDS, ID_FIELDS, UpstreamIds

good = st.text(st.characters(min_codepoint=97, max_codepoint=122), min_size=1, max_size=6)
ids = st.one_of(good, good.map(lambda s: s + "\x00"), st.just("x" * 300))


class _EveryField(UpstreamIds):
    """The rule on every field (the code before the field plan)."""

    def _model(self, model: BaseModel) -> BaseModel:
        update: dict[str, Any] = {}
        for name in type(model).model_fields:
            value = getattr(model, name)
            if value is None:
                continue
            if name in ID_FIELDS and isinstance(value, str):
                fixed: Any = self.fix(value)
            elif name == "metadata" and isinstance(value, dict):
                fixed = self._metadata(value)
            elif name in _ID_LIST_FIELDS and isinstance(value, list):
                fixed = [self.fix(v) if isinstance(v, str) else v for v in value]
            elif isinstance(value, BaseModel):
                fixed = self._model(value)
            elif isinstance(value, list) and value and isinstance(value[0], BaseModel):
                fixed = [self._model(v) if isinstance(v, BaseModel) else v for v in value]
            else:
                continue
            if fixed is not value and fixed != value:
                update[name] = fixed
        return model.model_copy(update=update) if update else model


@st.composite
def events(draw: st.DrawFn) -> list[Any]:
    m, c, o = draw(ids), draw(ids), draw(ids)
    meta = draw(st.sampled_from([None, {"messageId": m}, {"other": c}]))
    raw = draw(
        st.sampled_from(
            [None, {"id": c}, ToolCall(id=c, function=FunctionCall(name="f", arguments="{}"))]
        )
    )
    out: list[Any] = [
        RunStartedEvent(thread_id="t", run_id="r", metadata=meta),
        TextMessageStartEvent(message_id=m, raw_event=raw),
        TextMessageContentEvent(message_id=m, delta=draw(ids), metadata=meta),
        ToolCallStartEvent(tool_call_id=c, tool_call_name=draw(ids), parent_message_id=m),
        ToolCallArgsEvent(tool_call_id=c, delta="{}", raw_event=raw),
        ToolCallResultEvent(message_id=o, tool_call_id=c, content=draw(ids)),
        CustomEvent(name=draw(ids), value=draw(st.sampled_from([1, {"id": m}, [raw]]))),
        MessagesSnapshotEvent(
            messages=[
                UserMessage(id=o, content=draw(ids)),
                AssistantMessage(
                    id=m,
                    tool_calls=[ToolCall(id=c, function=FunctionCall(name="f", arguments="{}"))],
                ),
                ToolMessage(id=o, tool_call_id=c, content="r"),
            ]
        ),
        RunFinishedEvent(
            thread_id="t", run_id="r", outcome={"type": "success", "pendingToolCallIds": [c, m]}
        ),
    ]
    return draw(st.permutations(out))


@settings(max_examples=300, deadline=None)
@given(batch=events())
def test_the_field_plan_remaps_what_every_field_remaps(batch: list[Any]) -> None:
    planned, every = UpstreamIds(), _EveryField()
    for event in batch:
        fast, slow = planned.process(event), every.process(event)
        assert type(fast) is type(slow)
        assert fast.model_dump() == slow.model_dump()
        assert (fast is event) == (slow is event)  # unchanged events are passed as they are
    assert planned.remapped == every.remapped
    assert planned.take_new() == every.take_new()
