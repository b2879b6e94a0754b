"""The wire form of events: the fast paths (delta dicts, the wire view) equal the SDK's own
serialization."""

from __future__ import annotations

import math
from typing import Any

import orjson
import pytest
from ag_ui.core import (
    Event,
    ReasoningMessageContentEvent,
    TextMessageContentEvent,
    ToolCallArgsEvent,
)
from event_strategies import events
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from agui_codecs.events import (
    delta_factory,
    event_json,
    event_to_wire,
    new_event,
    parse_event,
    wire_view,
)

OPTIONAL = st.fixed_dictionaries(
    {},
    optional={
        "timestamp": st.integers(0, 2**40),
        "raw_event": st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
        "metadata": st.dictionaries(st.text(max_size=3), st.text(max_size=3), max_size=2),
        "subagent_run_id": st.text(max_size=5),
    },
)


@given(text=st.text(), mid=st.text(min_size=1), extra=OPTIONAL)
def test_delta_fast_path_equals_model_dump(text: str, mid: str, extra: dict[str, Any]) -> None:
    for event in (
        TextMessageContentEvent(message_id=mid, delta=text, **extra),
        ReasoningMessageContentEvent(message_id=mid, delta=text, **extra),
        ToolCallArgsEvent(tool_call_id=mid, delta=text, **extra),
    ):
        assert event_to_wire(event) == event.model_dump(mode="json", by_alias=True)
        assert event_to_wire(parse_event(event_to_wire(event))) == event_to_wire(event)
        if not extra:  # event_json's fast path (the others: test_event_json_equals_...)
            assert event_json(event) == orjson.dumps(event.model_dump(mode="json", by_alias=True))


SURROGATE_TEXT = st.text(
    alphabet=st.sampled_from(["a", "\u00e9", "\U0001f600", "\ud83c", "\udf89"])
)


@given(text=SURROGATE_TEXT, mid=SURROGATE_TEXT.filter(bool))
def test_delta_json_with_lone_surrogates_raises_as_the_dump(text: str, mid: str) -> None:
    """Lone surrogates too (a provider's split pair before it is joined): ``event_json`` of a
    delta gives the bytes of the dumped ``model_dump``, or raises ``JSONEncodeError`` as that
    does."""
    for event in (
        TextMessageContentEvent(message_id=mid, delta=text),
        ToolCallArgsEvent(tool_call_id=mid, delta=text),
    ):
        try:
            expected = orjson.dumps(event.model_dump(mode="json", by_alias=True))
        except orjson.JSONEncodeError:
            with pytest.raises(orjson.JSONEncodeError):
                event_json(event)
            continue
        assert event_json(event) == expected


PLAIN = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()
    | st.sampled_from([math.inf, -math.inf, math.nan])
    | st.text(max_size=3),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3)
    ),
    max_leaves=6,
)
"""Values ``model_dump`` may or may not pass through as they are (non-finite floats become
``null`` in JSON mode), for the metadata and raw events of :func:`test_every_event_equals_model_dump`."""


EXOTIC = st.sampled_from(
    [
        math.nan,
        -math.inf,
        2**70,
        b"bytes",
        (1, "a"),
        "lone \ud800 surrogate",
        {1: "int key"},
        type("Sub", (str,), {})("str subclass"),
        TextMessageContentEvent(message_id="m", delta="nested model"),
    ]
)
"""Values orjson renders differently from ``model_dump(mode="json")``, or not at all."""


@given(
    event=events(),
    metadata=st.none() | st.dictionaries(st.text(max_size=3), PLAIN | EXOTIC, max_size=3),
    raw=PLAIN | EXOTIC,
)
def test_every_event_equals_model_dump(event: Event, metadata: Any, raw: Any) -> None:
    """``event_to_wire`` (its delta path, its JSON round trip, and the ``model_dump``
    fallback) equals the SDK's JSON-mode ``model_dump``, keys in the same order, for every event
    type, with arbitrary plain and non-plain metadata and raw events (values orjson renders
    otherwise or not at all among them); the dict it returns shares no container with the
    event."""
    for e in (event, event.model_copy(update={"metadata": metadata, "raw_event": raw})):
        wire, dump = event_to_wire(e), e.model_dump(mode="json", by_alias=True)
        assert wire == dump and list(wire) == list(dump)
        for key in ("metadata", "rawEvent"):
            if isinstance(wire.get(key), (dict, list)):
                wire[key].clear()
        assert e.model_dump(mode="json", by_alias=True) == dump


def test_optional_fields_are_omitted_not_null() -> None:
    wire = event_to_wire(TextMessageContentEvent(message_id="m", delta="x"))
    assert wire == {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "x"}


@given(event=events())
def test_wire_view_reads_as_the_wire_dict(event: Event) -> None:
    """The view equals ``event_to_wire`` (keys in order, values) for every event type, and
    answers lookups of absent keys as the dict would."""
    wire, view = event_to_wire(event), wire_view(event)
    assert list(view) == list(wire) and len(view) == len(wire)
    assert dict(view) == wire
    for key in [*wire, "metadata", "timestamp", "rawEvent", "nope", "message_id"]:
        assert (key in view) == (key in wire), key
        assert view.get(key, "absent") == wire.get(key, "absent"), key
        if key not in wire:
            with pytest.raises(KeyError):
                view[key]


@given(
    event=events(),
    metadata=st.none() | st.dictionaries(st.text(max_size=3), PLAIN | EXOTIC, max_size=3),
    raw=PLAIN | EXOTIC,
)
def test_event_json_equals_dumped_model_dump(event: Event, metadata: Any, raw: Any) -> None:
    """``event_json`` (its shared-fields fast path with nested ``ag_ui`` models, and the
    ``event_to_wire`` fallback) gives the bytes of ``orjson.dumps`` of the SDK's JSON-mode
    ``model_dump`` for every event type, or raises as that does."""
    for e in (event, event.model_copy(update={"metadata": metadata, "raw_event": raw})):
        try:
            expected: bytes | type[Exception] = orjson.dumps(
                e.model_dump(mode="json", by_alias=True)
            )
        except (orjson.JSONEncodeError, ValueError) as exc:
            expected = type(exc)
        if isinstance(expected, bytes):
            assert event_json(e) == expected
        else:
            with pytest.raises(Exception):  # noqa: B017 - whichever the slow path raises
                event_json(e)


@given(
    cls=st.sampled_from([TextMessageContentEvent, ReasoningMessageContentEvent, ToolCallArgsEvent]),
    ident=st.text(max_size=4) | st.integers() | st.none(),
    delta=st.text(max_size=4) | st.integers() | st.none() | st.binary(max_size=2),
)
def test_new_event_is_the_constructor(cls: type[Event], ident: Any, delta: Any) -> None:
    """``new_event(cls, fields)`` gives what ``cls(**fields)`` gives (equal, same fields set),
    or raises the same validation error."""
    key = "tool_call_id" if cls is ToolCallArgsEvent else "message_id"
    fields = {key: ident, "delta": delta}
    try:
        expected = cls(**fields)
    except ValidationError as exc:
        with pytest.raises(ValidationError) as info:
            new_event(cls, fields)
        assert info.value.errors() == exc.errors()
        with pytest.raises(ValidationError) as info:
            delta_factory(cls)(fields)
        assert info.value.errors() == exc.errors()
        return
    for got in (new_event(cls, fields), delta_factory(cls)(fields)):
        assert type(got) is cls and got == expected
        assert got.model_fields_set == expected.model_fields_set
        assert event_to_wire(got) == event_to_wire(expected)
